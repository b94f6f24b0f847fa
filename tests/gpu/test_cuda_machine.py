"""Machine(backend="cuda"): the Machine's API run on a GPU. Without one it says why;
the operations it records become a Program whose run on the model (standing in
for the GPU here) must leave what the model's own Machine leaves; on a GPU the
both_engines fixture compares the two machines byte for byte."""
import shutil
import subprocess

import numpy as np
import pytest

import ptxasync as pa
import ptxasync.cuda as pc
import machine_scenarios as sc
from ptxasync.cuda import machine as cm, runner
from ptxasync.cuda.fixtures import compare_machines

gpu = pytest.mark.skipif(not pc.available(), reason=f"no GPU: {pc.why_unavailable()}")
SCENARIOS = [(sc.tile_load, {"smem_bytes": 16 * 1024}), (sc.store_and_reduce, {"smem_bytes": 16 * 1024}),
             (sc.bulk_and_cp_async, {"smem_bytes": 16 * 1024}), (sc.cluster, {"ctas": 4, "smem_bytes": 8192})]
IDS = [f.__name__ for f, _ in SCENARIOS]


@pytest.mark.skipif(pc.available(), reason="a GPU is here")
def test_without_a_gpu_the_cuda_backend_says_why():
    with pytest.raises(pc.Unavailable, match=r"Machine\(backend='cuda'\) runs every operation on a GPU.*: "):
        pa.Machine(backend="cuda")


def test_reasons_name_what_is_missing(monkeypatch):
    for reason in ("cuda-bindings is not installed (No module named 'cuda')", "cuInit failed: CUDA_ERROR_NO_DEVICE"):
        monkeypatch.setattr(cm, "why_unavailable", lambda r=reason: r)
        with pytest.raises(pc.Unavailable, match=reason.split(" (")[0]):
            pa.Machine(backend="cuda", ctas=2)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend must be 'model' or 'cuda'"):
        pa.Machine(backend="gpu")


@pytest.fixture
def fake_gpu(monkeypatch):
    """Machine(backend="cuda") with the model in the GPU's place (at addresses of its own)."""
    monkeypatch.setattr(cm, "why_unavailable", lambda: None)

    def run(prog):
        r = runner.run_model(prog, [0x7F0000000000 + (i << 24) for i in range(len(prog.buffers))])
        r.engine = "gpu"
        return r
    monkeypatch.setattr(cm, "run_gpu", run)


@pytest.mark.parametrize("fn,kw", SCENARIOS, ids=IDS)
def test_recorded_program_leaves_what_the_model_leaves(fake_gpu, fn, kw):
    model = pa.Machine(**kw)
    out_m = fn(model)
    model.run()
    cuda = pa.Machine(backend="cuda", **kw)
    assert isinstance(cuda, pa.Machine) and cuda.backend == "cuda"
    out_g = fn(cuda)
    cuda.run()
    assert compare_machines(model, cuda) == []
    assert out_m == out_g
    assert cuda.pending == 0


def test_memories_before_the_first_operation_are_the_initial_state(fake_gpu):
    m = pa.Machine(backend="cuda", smem_bytes=8192)
    m.smem[0x800:0x810] = 7                      # before any operation: the initial state
    m.cta(0).write(0x810, np.full(16, 9, np.uint8))
    m.smem[0x820:0x830] = 5                      # after one: overwritten by the next run
    r = m.cta(0).read(np.uint8, 48, 0x800)
    assert (r[:16] == 7).all() and (r[16:32] == 9).all() and (r[32:] == 0).all()


def test_addresses_outside_the_buffers_and_the_window_are_refused(fake_gpu):
    m = pa.Machine(backend="cuda", smem_bytes=8192)
    g = m.alloc(256)
    with pytest.raises(ValueError, match="in no registered buffer"):
        m.cp_async(0x800, g.address + 256, 16)
    m.cp_async(0x200, g.address, 16)             # below the dynamic shared memory
    with pytest.raises(ValueError, match="below the dynamic shared memory at 0x400"):
        m.run()
    with pytest.raises(NotImplementedError, match="does not run replay"):
        m.replay(None)


def test_a_fault_raises_the_models_exception(fake_gpu):
    m = pa.Machine(backend="cuda", smem_bytes=16 * 1024)
    with pytest.raises(pa.IllegalInstruction):
        sc.tile_load(m, coords=(3, 8))           # 6 bytes: not a multiple of 16


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
@pytest.mark.parametrize("fn,kw", SCENARIOS, ids=IDS)
def test_generated_kernels_assemble_and_pass_the_checker(fake_gpu, tmp_path, fn, kw):
    from ptxasync import ptx
    from ptxasync.cuda.ptxgen import generate
    m = pa.Machine(backend="cuda", **kw)
    fn(m)
    text, _ = generate(m.program())
    assert [(d.severity, d.line, d.message) for d in ptx.check(text)] == []
    (tmp_path / "k.ptx").write_text(text)
    out = subprocess.run(["ptxas", "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("fn,kw", SCENARIOS, ids=IDS)
def test_both_engines_fixture_with_machines(both_engines, fn, kw):
    both = both_engines(fn, **kw)
    if both.gpu is not None:
        assert both.model_out == both.gpu_out


def test_engine_fixture_makes_machines(engine):
    if engine.name == "cuda":
        m = engine.machine(smem_bytes=16 * 1024)
        assert sc.tile_load(m) == sc.tile_load(pa.Machine(smem_bytes=16 * 1024))
    else:
        assert engine.machine(ctas=2).nctas == 2


@gpu
def test_gpu_machine_reads_back_the_gpus_bytes():
    m = pa.Machine(backend="cuda", smem_bytes=16 * 1024)
    sc.tile_load(m, swizzle="NONE")
    tensor = m._buffers[0].array
    got = m.cta(0).read(np.uint16, (8, 16), 0x800)
    assert (got == tensor[8:16, 16:32]).all()
    assert m.result.engine == "gpu" and m.result.cluster_size == 1


def test_every_public_method_says_what_it_does():
    import inspect
    missing = []
    for cls in (cm.CudaMachine, cm.CudaMbarrier):
        for name, f in vars(cls).items():
            target = f.fget if isinstance(f, property) else f
            if not name.startswith("_") and inspect.isfunction(target) and not target.__doc__:
                missing.append(f"{cls.__name__}.{name}")
    assert not missing, missing
