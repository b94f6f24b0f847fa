"""Cluster programs through ptxasync.cuda: st.async, .multicast::cluster copies
(cp.async.bulk and cp.async.bulk.tensor), CTA-to-CTA bulk copies and
reductions, launched as one cluster (cuLaunchKernelEx). The generated PTX is
checked here with ptxas and the PTX checker, the model's run against NumPy;
on a GPU the two engines are diffed byte for byte."""
import shutil
import subprocess

import numpy as np
import pytest

import ptxasync.cuda as pc
from cluster_programs import BAR, REGION, at, cluster_setup, cta_to_cta_program, every_cluster_program, \
    multicast_bulk_program, multicast_tile_program, st_async_program
from ptxasync.cuda import Program, runner
from ptxasync.cuda.ptxgen import generate

gpu = pytest.mark.skipif(not pc.available(), reason=f"no GPU: {pc.why_unavailable()}")
PROGRAMS = every_cluster_program()


def _region(r, rank, off, n):
    o = REGION + off - 0x400
    return np.frombuffer(r.smem_ctas[rank][o:o + n], dtype=np.uint8)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
@pytest.mark.parametrize("name,prog", PROGRAMS, ids=[n for n, _ in PROGRAMS])
def test_cluster_ptx_assembles_for_sm_90a(tmp_path, name, prog):
    text, _ = generate(prog)
    src = tmp_path / "k.ptx"
    src.write_text(text)
    out = subprocess.run(["ptxas", "-arch=sm_90a", str(src), "-o", str(tmp_path / "k.cubin")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("name,prog", PROGRAMS, ids=[n for n, _ in PROGRAMS])
def test_cluster_ptx_passes_the_ptx_checker(name, prog):
    from ptxasync import ptx
    text, _ = generate(prog)
    assert [(d.severity, d.line, d.message) for d in ptx.check(text)] == []


def test_cluster_ptx_names_each_form():
    text = "\n".join(generate(p)[0] for _, p in PROGRAMS)
    for form in ("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32",
                 "st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.v2.f64",
                 "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.s32",
                 "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
                 "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster",
                 "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes",
                 "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32",
                 "mapa.shared::cluster.u32", "barrier.cluster.arrive.aligned;", "barrier.cluster.wait.aligned;",
                 "mov.u32 %rank, %cluster_ctarank;"):
        assert form in text, form


def test_each_cta_issues_its_own_operations():
    prog = multicast_tile_program(ctas=4, issuer=1)
    text, _ = generate(prog)
    # the multicast is in CTA 1's block, the waits in the blocks of the CTAs of the mask
    load = text.index(".multicast::cluster")
    block = text.rfind("setp.ne.u32", 0, load)
    assert ", %rank, 1;" in text[block:load]


def test_model_st_async_lands_in_the_destination_cta():
    prog = st_async_program("u32", 2, ctas=4, issuer=3, dst=1, seed=5)
    r = runner.run_model(prog)
    assert r.verdict is None and r.probes[at(1, BAR)] == 1
    stores = [op for op in prog.ops if op.name == "st_async"]
    for k, op in enumerate(stores):
        assert _region(r, 1, 16 * k, 8).tobytes() == bytes(op.args[1])
    # the issuer's own and the other CTAs' regions keep their fill
    for rank in (0, 2, 3):
        assert (_region(r, rank, 0, 32) == prog.smem_ctas[rank][REGION - 0x400]).all()


@pytest.mark.parametrize("mask", [0b0001, 0b1010, 0b1111, 0b0000])
def test_model_multicast_tile_load_reaches_each_cta_of_the_mask(mask):
    prog = multicast_tile_program(mask=mask, swizzle="NONE", issuer=2)
    tensor = prog.buffers[0].data.reshape(32, 64)
    r = runner.run_model(prog)
    assert r.verdict is None
    for rank in range(4):
        got = _region(r, rank, 0, 128).reshape(4, 32)
        if mask >> rank & 1:
            assert (got == tensor[5:9, 32:64]).all()
            assert r.probes[at(rank, BAR)] == 1
        else:
            assert (got == 0x11 * (rank + 1)).all()


def test_model_multicast_bulk_copy():
    prog = multicast_bulk_program(mask=0b1001, issuer=2)
    src = prog.buffers[0].data[48:48 + 96]
    r = runner.run_model(prog)
    assert r.verdict is None
    for rank in range(4):
        got = _region(r, rank, 32, 96)
        assert (got == src).all() == bool(0b1001 >> rank & 1)


def test_model_cta_to_cta_copy_and_reduce():
    prog = cta_to_cta_program(ctas=4, issuer=2, dst=0, size=64, seed=3)
    r = runner.run_model(prog)
    src = prog.smem_ctas[2][REGION - 0x400 + 128:REGION - 0x400 + 192]
    assert (_region(r, 0, 64, 64) == src).all()
    prog = cta_to_cta_program(reduce=("add", "u32"), seed=4)
    r = runner.run_model(prog)
    a = prog.smem_ctas[1][REGION - 0x400 + 64:REGION - 0x400 + 128].view(np.uint32)
    b = prog.smem_ctas[0][REGION - 0x400 + 128:REGION - 0x400 + 192].view(np.uint32)
    assert (_region(r, 1, 64, 64).view(np.uint32) == a + b).all()


def test_program_refuses_what_a_cluster_launch_cannot_do():
    with pytest.raises(ValueError, match="cluster of 1 to 8"):
        Program(ctas=9)
    prog = Program(smem_bytes=4096, ctas=2)
    with pytest.raises(ValueError, match="names CTA 3"):
        prog.write_smem(at(3, REGION), b"x")
    cluster_setup(prog, [0, 0])
    prog.cp_async_bulk(at(1, REGION), at(1, REGION + 64), 16, at(1, BAR), cta=0, dst_space="shared::cluster",
                       src_space="shared::cta")            # the source is in CTA 1, the issuer is CTA 0
    with pytest.raises(ValueError, match="shared::cta source .* is in CTA 1"):
        generate(prog)
    prog.ops[-1].kw["cta"] = 2
    with pytest.raises(ValueError, match="outside the cluster of 2"):
        generate(prog)


@gpu
@pytest.mark.parametrize("name,prog", PROGRAMS, ids=[n for n, _ in PROGRAMS])
def test_gpu_cluster_programs_agree_with_the_model(name, prog):
    d = pc.diff(prog)
    assert d.same, str(d)


@gpu
def test_gpu_wait_timeout_in_one_cta_of_a_cluster_is_a_deadlock():
    prog = Program(smem_bytes=4096, ctas=2)
    cluster_setup(prog, [0, 64])        # CTA 1 expects 64 bytes nobody sends
    prog.mbarrier_wait(at(1, BAR), 0)
    d = pc.diff(prog)
    assert d.gpu.verdict == "Deadlock" and d.model.verdict == "Deadlock", str(d)
