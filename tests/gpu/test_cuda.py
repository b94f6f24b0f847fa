"""ptxasync.cuda: the GPU as a second engine.

Without a GPU: importing works and says why it cannot run, the PTX it would run
assembles (where ptxas is installed), the model side of a run and the diff's
naming of a difference are checked here. With a GPU (tests marked so, skipped
with the reason otherwise): encode and run diffs, a fault and the recovery
after it, and stored cases run again.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import ptxasync.cuda as pc
from ptxasync import _core
from ptxasync.cuda import _driver, runner
from ptxasync.cuda.program import Program
from ptxasync.cuda.ptxgen import generate
from ptxasync.cuda.worker import _recv, _send

from testpaths import DATA  # noqa: E402
gpu = pytest.mark.skipif(not pc.available(), reason=f"no GPU: {pc.why_unavailable()}")


def tile_program(swizzle="NONE", coords=(16, 8), dst=2048):
    prog = Program(smem_bytes=16 * 1024)
    tensor = np.arange(64 * 64, dtype=np.uint16).reshape(64, 64)
    g = prog.register(tensor)
    tm = prog.tensor_map_tiled(g, dtype="u16", global_dim=(64, 64), global_strides=(128,), box_dim=(16, 8),
                               swizzle=swizzle)
    prog.mbarrier_init(1024, 1)
    prog.mbarrier_arrive_expect_tx(1024, 256)
    prog.cp_async_bulk_tensor_load(tm, coords, dst, 1024)
    prog.mbarrier_wait(1024, 0)
    return prog, tensor


def every_kind_program():
    """One program with every operation kind the generator writes."""
    p = Program(smem_bytes=32 * 1024)
    g = p.register(np.arange(64 * 64, dtype=np.uint16))
    out = p.alloc(8192)
    tm = p.tensor_map_tiled(g, dtype="u16", global_dim=(64, 64), global_strides=(128,), box_dim=(16, 8),
                            swizzle="32B")
    im = p.tensor_map_im2col(g, dtype="u16", global_dim=(8, 4, 4, 4), global_strides=(16, 64, 256),
                             pixel_box_lower=(-1, -1), pixel_box_upper=(0, 0), channels_per_pixel=8,
                             pixels_per_column=8)
    p.mbarrier_init(1024, 1)
    p.mbarrier_arrive_expect_tx(1024, 256)
    p.cp_async_bulk_tensor_load(tm, (16, 8), 2048, 1024)
    p.mbarrier_wait(1024, 0)
    p.mbarrier_arrive_expect_tx(1024, 128)
    p.cp_async_bulk_tensor_load(im, (0, 0, 0, 0), 4096, 1024, dst_space="shared::cluster", load_mode="im2col",
                                im2col_offsets=(1, 1))
    p.mbarrier_wait(1024, 1)
    p.cp_async_bulk_tensor_store(tm, (0, 0), 2048)
    p.cp_reduce_async_bulk_tensor("add", tm, (0, 16), 2048)
    p.cp_async_bulk_commit_group()
    p.cp_async_bulk_wait_group(0, read=True)
    p.cp_reduce_async_bulk("add", "f16", out + 16, 2048, 64, noftz=True)
    p.cp_reduce_async_bulk("and", "b32", out + 128, 2048, 64)
    p.cp_async_bulk(out + 256, 2048, 64, dst_space="global", src_space="shared::cta")
    p.cp_async_bulk_commit_group()
    p.cp_async_bulk_wait_group(0)
    p.mbarrier_init(1032, 1)
    p.mbarrier_arrive_expect_tx(1032, 64)
    p.cp_async_bulk(8192, out + 0, 64, mbar=1032)
    p.mbarrier_wait(1032, 0)
    p.cp_async(9000, out + 20, 4, src_size=2)
    p.cp_async(9008, out + 32, 16, cache="cg", ignore_src=True, prefetch=128)
    p.cp_async_commit_group()
    p.cp_async_wait_group(0)
    p.mbarrier_expect_tx(1032, 5)
    p.mbarrier_complete_tx(1032, 5)
    p.mbarrier_arrive(1032, 1)
    p.cp_async_wait_all()
    return p


# --- without a GPU ----------------------------------------------------------------------

def test_import_always_works_and_says_why():
    if pc.available():
        assert pc.why_unavailable() is None
        return
    why = pc.why_unavailable()
    assert isinstance(why, str) and why
    with pytest.raises(pc.Unavailable, match="cuda|CUDA|GPU"):
        pc.run(tile_program()[0])
    with pytest.raises(pc.Unavailable):
        pc.encode_diff(dtype=0, global_address=0x10000, global_dim=[64], global_strides=[], box_dim=[16])


def _fresh_state(monkeypatch):
    monkeypatch.setattr(_driver, "_state", {"driver": None, "reason": None, "tried": False})


def test_reason_without_cuda_bindings(monkeypatch):
    _fresh_state(monkeypatch)
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)     # import fails
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", None)
    assert "cuda-bindings is not installed" in _driver.why_unavailable()
    assert "pip install 'cuda-bindings>=12.8'" in _driver.why_unavailable()


class _FakeErr:
    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, _FakeErr) and other.name == self.name

    __hash__ = None


def _fake_driver(monkeypatch, cu_init):
    import types
    fake = types.ModuleType("cuda.bindings.driver")
    fake.CUresult = types.SimpleNamespace(CUDA_SUCCESS=_FakeErr("CUDA_SUCCESS"))
    fake.cuInit = cu_init
    pkg = types.ModuleType("cuda.bindings")
    pkg.driver = fake
    monkeypatch.setitem(sys.modules, "cuda.bindings", pkg)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", fake)


def test_reason_no_device(monkeypatch):
    _fresh_state(monkeypatch)
    _fake_driver(monkeypatch, lambda flags: (_FakeErr("CUDA_ERROR_NO_DEVICE"),))
    why = _driver.why_unavailable()
    assert "CUDA_ERROR_NO_DEVICE" in why and "no CUDA-capable GPU" in why


def test_reason_driver_library_missing(monkeypatch):
    _fresh_state(monkeypatch)

    class DynamicLibNotFoundError(RuntimeError):
        pass

    def cu_init(flags):
        raise DynamicLibNotFoundError('"cuda" is an NVIDIA driver library')
    _fake_driver(monkeypatch, cu_init)
    why = _driver.why_unavailable()
    assert "could not be loaded" in why and "DynamicLibNotFoundError" in why


def test_worker_frames_round_trip():
    import io
    buf = io.BytesIO()
    msg = {"op": "run", "buffers": [(b"\x00\xff" * 5, 10)], "maps": [("tiled", 0, 128, {"dtype": 1})]}
    _send(buf, msg)
    _send(buf, {"x": 1})
    buf.seek(0)
    assert _recv(buf) == msg and _recv(buf) == {"x": 1}
    with pytest.raises(EOFError):
        _recv(buf)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
def test_generated_ptx_assembles_for_sm_90a(tmp_path):
    ptx, slots = generate(every_kind_program())
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    out = subprocess.run(["ptxas", "-arch=sm_90a", str(src), "-o", str(tmp_path / "k.cubin")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    # one slot per arrive and per wait, one probe per mbarrier
    assert [k for k, _ in slots].count("probe") == 2
    assert [k for k, _ in slots].count("wait") == 3


def test_generated_ptx_passes_the_ptx_checker():
    """The core's PTX checker accepts what the generator writes, as ptxas does
    (test_generated_ptx_assembles_for_sm_90a): no error and no warning."""
    from ptxasync import ptx
    text, _ = generate(every_kind_program())
    assert [(d.severity, d.line, d.message) for d in ptx.check(text)] == []


def test_ptx_names_each_form():
    ptx, _ = generate(every_kind_program())
    for form in ("cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes",
                 "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes",
                 "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
                 "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group",
                 "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16",
                 "cp.async.bulk.global.shared::cta.bulk_group", "cp.async.bulk.wait_group.read 0",
                 "cp.async.cg.shared.global.L2::128B", "mbarrier.try_wait.parity.shared::cta.b64",
                 "fence.proxy.async.shared::cta", ".param .align 64 .b8 p_tm1[128]", "cvta.param.u64"):
        assert form in ptx, form


def test_program_refuses_what_it_cannot_generate():
    p, _ = tile_program()
    p.ops[2].kw["thread"] = 1
    with pytest.raises(NotImplementedError, match="thread 0 of each CTA"):
        generate(p)
    q = Program(smem_bytes=4096)
    with pytest.raises(ValueError, match="outside the dynamic shared memory"):
        q.write_smem(512, b"x")
    with pytest.raises(ValueError, match="multiple of 16"):
        Program(smem_bytes=100)


def test_model_run_of_a_tile_load():
    prog, tensor = tile_program()
    r = runner.run_model(prog)
    assert r.verdict is None and r.issued == 4
    off = 2048 - prog.smem_base
    got = np.frombuffer(r.smem[off:off + 256], dtype=np.uint16).reshape(8, 16)
    assert (got == tensor[8:16, 16:32]).all()           # box rows, NumPy order, no swizzle
    assert r.smem[off + 256] == 0xA5                     # past the box: the fill
    assert r.waits == {3: True}
    assert r.probes == {1024: 1}                         # phase 0 completed
    # the arrive's state word (golden R9): before it, phase 0 (bit 63 clear), pending 1
    s = r.states[1]
    assert s >> 63 == 0 and ((1 << 20) - ((s >> 43) & 0xFFFFF)) & 0xFFFFF == 1


def test_model_verdict_of_a_misaligned_load():
    prog, _ = tile_program(coords=(3, 8))                # 6 bytes: not a multiple of 16
    r = runner.run_model(prog)
    assert r.verdict == "IllegalInstruction" and r.issued == 2
    with pytest.raises(_core.IllegalInstruction):
        r.raise_verdict()


def _fake_gpu(prog, model, smem_flip=None, buf_flip=None):
    g = runner.Result("gpu")
    g.encode, g.addresses, g.smem_base = model.encode, model.addresses, model.smem_base
    g.issued, g.states, g.waits, g.probes = model.issued, dict(model.states), dict(model.waits), dict(model.probes)
    smem = bytearray(model.smem)
    if smem_flip is not None:
        smem[smem_flip - prog.smem_base] ^= 0xFF
    g.smem = bytes(smem)
    g.buffers = [bytearray(b) for b in model.buffers]
    if buf_flip is not None:
        g.buffers[buf_flip[0]][buf_flip[1]] ^= 0xFF
    g.buffers = [bytes(b) for b in g.buffers]
    return g


def test_diff_names_shared_address_and_tensor_coordinate():
    prog, _ = tile_program()
    m = runner.run_model(prog)
    assert runner.Diff(prog, _fake_gpu(prog, m), m).same
    # element row 2, column 3 of the box: 2048 + 2 * (2 * 16 + 3) = 0x846; tensor (16 + 3, 8 + 2)
    d = runner.Diff(prog, _fake_gpu(prog, m, smem_flip=0x846), m)
    assert not d.same
    msg = str(d)
    assert "shared address 0x846" in msg and "tensor coordinate (19, 10)" in msg and "box element (3, 2)" in msg


def test_diff_swizzled_load_names_the_element():
    prog, _ = tile_program(swizzle="32B")
    m = runner.run_model(prog)
    # 32B swizzle: 16-byte chunk c of the 32-byte row at line l goes to c ^ ((addr >> 7) & 1);
    # address 0x810 (line 0 of 0x800, chunk 1) holds box row 0, elements 8..15
    d = runner.Diff(prog, _fake_gpu(prog, m, smem_flip=0x810), m)
    assert "shared address 0x810" in str(d) and "box element (8, 0)" in str(d)


def test_diff_of_a_store_names_the_tensor_coordinate():
    prog = Program(smem_bytes=4096)
    g = prog.register(np.zeros((8, 32), dtype=np.uint32))
    tm = prog.tensor_map_tiled(g, dtype="u32", global_dim=(32, 8), global_strides=(128,), box_dim=(8, 2))
    prog.write_smem(2048, np.arange(16, dtype=np.uint32))
    prog.cp_async_bulk_tensor_store(tm, (8, 4), 2048)
    prog.cp_async_bulk_commit_group()
    prog.cp_async_bulk_wait_group(0)
    m = runner.run_model(prog)
    assert np.frombuffer(m.buffers[0], dtype=np.uint32).reshape(8, 32)[5, 8:16].tolist() == list(range(8, 16))
    # element (x 10, y 5): byte 5 * 128 + 10 * 4 = 680
    d = runner.Diff(prog, _fake_gpu(prog, m, buf_flip=(0, 682)), m)
    assert "first at byte 682" in str(d) and "tensor coordinate (10, 5)" in str(d) and "byte 2" in str(d)


def test_diff_of_verdicts_and_states():
    prog, _ = tile_program()
    m = runner.run_model(prog)
    g = _fake_gpu(prog, m)
    g.verdict, g.message = "IllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION"
    assert "verdict: GPU IllegalInstruction" in str(runner.Diff(prog, g, m))
    g = _fake_gpu(prog, m)
    g.probes[1024] ^= 1
    assert "mbarrier at 0x400 after the program" in str(runner.Diff(prog, g, m))
    g = _fake_gpu(prog, m)
    g.states[1] ^= 1 << 43
    assert "operation 1: arrive state" in str(runner.Diff(prog, g, m))
    g = _fake_gpu(prog, m)
    g.states[1] ^= 0xFFFF              # bits 0-31 are not barrier state (golden R9)
    assert runner.Diff(prog, g, m).same


def test_engine_fixture(engine):
    prog, tensor = tile_program()
    r = engine(prog)
    off = 2048 - prog.smem_base
    assert (np.frombuffer(r.smem[off:off + 256], dtype=np.uint16).reshape(8, 16) == tensor[8:16, 16:32]).all()


def test_engine_fixture_raises_the_models_fault(engine):
    with pytest.raises(_core.IllegalInstruction):
        engine(tile_program(coords=(3, 8))[0])


def test_both_engines_fixture(both_engines):
    prog, tensor = tile_program(swizzle="64B")
    both_engines(prog)


def test_golden_record_without_gpu_exits_2(capsys):
    if pc.available():
        pytest.skip("a GPU is available here")
    from ptxasync.cli import main
    assert main(["golden", "record", "-o", "x.jsonl.gz", os.path.join(DATA, "cp_async.jsonl.gz")]) == 2
    assert "no GPU can be used here" in capsys.readouterr().err


def test_gpu_recorded_cases_replay_on_the_model():
    """Cases recorded through ptxasync.cuda on an H100 replay through the golden runner."""
    from ptxasync.golden import check_file
    path = os.path.join(DATA, "gpu_h100.jsonl.gz")
    results, failures = check_file(path)
    assert not failures, failures[:3]
    assert set(results) == {"encode_errors", "tile_load", "im2col_load", "tile_store", "tensor_reduce",
                            "bulk_copy", "bulk_reduce", "cp_async"}
    for fam, r in results.items():
        assert r["passed"] >= 20 and r["failed"] == 0 and r["unsupported"] == 0, (fam, r)
    with gzip.open(path, "rt") as f:
        case = json.loads(f.readline())
    assert case["recorded_on"]["gpu"].startswith("NVIDIA H100") and case["recorded_on"]["compute_capability"] == "9.0"


# --- with a GPU ---------------------------------------------------------------------------

@gpu
def test_gpu_encode_diff():
    d = pc.encode_diff("tiled", dtype=9, global_address=0x7F0000010000, global_dim=[64, 32], global_strides=[128],
                       box_dim=[64, 8], swizzle=3)
    assert d.same, str(d)
    d = pc.encode_diff("tiled", dtype=9, global_address=0x7F0000010008, global_dim=[64, 32], global_strides=[128],
                       box_dim=[64, 8])
    assert d.same and d.driver[1] is None          # both reject the misaligned address
    d = pc.encode_diff("im2col", dtype=6, global_address=0x7F0000010000, global_dim=[16, 8, 8, 2],
                       global_strides=[32, 256, 2048], pixel_box_lower=[-1, -1], pixel_box_upper=[0, 0],
                       channels_per_pixel=16, pixels_per_column=32)
    assert d.same, str(d)
    d = pc.encode_diff("tiled", dtype=1, global_address=0x7F0000010000, global_dim=[12], global_strides=[],
                       box_dim=[8])
    assert d.same and d.driver[1] is not None       # rank 1: no strides


@gpu
@pytest.mark.parametrize("swizzle", ["NONE", "32B", "64B", "128B"])
def test_gpu_tile_load_diff(swizzle):
    box = {"NONE": 16, "32B": 16, "64B": 32, "128B": 64}[swizzle]
    prog = Program(smem_bytes=32 * 1024)
    g = prog.register(np.random.default_rng(1).integers(0, 1 << 16, (40, 70), dtype=np.uint16))
    tm = prog.tensor_map_tiled(g, dtype="u16", global_dim=(70, 40), global_strides=(140,), box_dim=(box, 8),
                               swizzle=swizzle)
    prog.mbarrier_init(1024, 1)
    for k, (coords, dst) in enumerate([((0, 0), 2048), ((64, 36), 4096 + 256), ((-8, -3), 8192)]):
        prog.mbarrier_arrive_expect_tx(1024, box * 2 * 8)
        prog.cp_async_bulk_tensor_load(tm, coords, dst, 1024)
        prog.mbarrier_wait(1024, k & 1)
    assert pc.diff(prog).same


@gpu
def test_gpu_store_and_reduce_diff():
    prog = Program(smem_bytes=8192)
    g = prog.register(np.random.default_rng(2).integers(0, 1 << 32, (9, 30), dtype=np.uint32))
    tm = prog.tensor_map_tiled(g, dtype="u32", global_dim=(30, 9), global_strides=(120,), box_dim=(8, 4))
    prog.write_smem(2048, np.random.default_rng(3).integers(0, 1 << 32, 64, dtype=np.uint32))
    prog.cp_async_bulk_tensor_store(tm, (24, 0), 2048)
    prog.cp_reduce_async_bulk_tensor("add", tm, (0, 6), 2048)
    prog.cp_reduce_async_bulk_tensor("xor", tm, (8, 2), 2048 + 128)
    prog.cp_async_bulk_commit_group()
    prog.cp_async_bulk_wait_group(0)
    assert pc.diff(prog).same


@gpu
def test_gpu_fault_is_the_models_exception_and_the_next_run_works():
    with pytest.raises(_core.IllegalInstruction, match="CUDA_ERROR_ILLEGAL_INSTRUCTION"):
        pc.run(tile_program(coords=(3, 8))[0])
    d = pc.diff(tile_program(coords=(3, 8))[0])
    assert d.same and d.gpu.verdict == "IllegalInstruction"
    assert pc.diff(tile_program()[0]).same
    assert pc.diff(every_kind_program()).same


@gpu
def test_gpu_timeout_is_a_deadlock():
    prog, _ = tile_program()
    prog.ops[1].args = (1024, 512)        # expects more bytes than the load brings
    d = pc.diff(prog)
    assert d.gpu.verdict == "Deadlock" and d.same


@gpu
def test_gpu_rerecords_stored_cases(tmp_path):
    from ptxasync.cuda import record
    from ptxasync.golden import check_file
    files = [os.path.join(DATA, f"{f}.jsonl.gz") for f in ("tile_load", "tile_store", "encode_errors", "cp_async")]
    out = str(tmp_path / "r.jsonl.gz")
    tally = record.rerecord(files, out=out, limit=4)
    for fam, c in tally.fam.items():
        assert c["stored_differs"] == 0 and c["model_differs"] == 0, (fam, tally.notes)
    results, failures = check_file(out)
    assert not failures
