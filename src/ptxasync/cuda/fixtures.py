"""pytest fixtures that run a test on both engines (``ptxasync.cuda``).

In a conftest.py: ``from ptxasync.cuda.fixtures import engine, both_engines``.

- ``engine``: parametrised over ``"model"`` and ``"cuda"``; ``engine(prog)`` runs a
  Program on that engine and returns its Result (a fault raises the model's
  exception), and ``engine.machine(**kw)`` makes a Machine of that backend. The
  ``cuda`` run is skipped, naming why, where no GPU can be used.
- ``both_engines``: ``both_engines(prog)`` runs a Program on the model and, where a
  GPU can be used, on the GPU too, and asserts that every byte agrees (the
  difference named otherwise); it returns the Diff, or the model's Result when
  there is no GPU. ``both_engines(fn, **machine_kw)`` calls ``fn(machine)`` on
  ``Machine(**machine_kw)`` and, with a GPU, on ``Machine(backend="cuda",
  **machine_kw)``, runs both to the end and asserts that every CTA's shared
  memory (from 0x400; the mbarrier objects compared by what the test reads of
  them) and every registered buffer agree; it returns ``Both(model, gpu,
  model_out, gpu_out)`` (``gpu`` None without a GPU: the test then checks the
  model alone).
"""
from collections import namedtuple

import numpy as np
import pytest

from . import available, why_unavailable
from .program import SMEM_BASE, Program
from .runner import assert_same, run_gpu, run_model

__all__ = ["engine", "both_engines", "Both", "compare_machines"]

Both = namedtuple("Both", "model gpu model_out gpu_out")


@pytest.fixture(params=["model", "cuda"])
def engine(request):
    """A function running a Program on the model or on the GPU."""
    if request.param == "cuda" and not available():
        pytest.skip(f"no GPU for the cuda engine: {why_unavailable()}")

    def run(prog):
        r = run_gpu(prog) if request.param == "cuda" else run_model(prog)
        r.raise_verdict()
        return r

    def machine(**kw):
        from ..machine import Machine
        return Machine(backend=request.param, **kw)
    run.name = request.param
    run.machine = machine
    return run


def compare_machines(model, gpu):
    """The differences between a model Machine and a Machine(backend="cuda") that ran
    the same operations: every CTA's shared memory from 0x400 (the GPU's mbarrier
    objects' 8 bytes aside) and every registered buffer, the first byte of each."""
    problems = []
    bars = gpu.mbarrier_addresses()
    for k in range(model.nctas):
        a, b = model.cta(k).smem, gpu.cta(k).smem
        care = np.zeros(len(a), dtype=bool)
        care[SMEM_BASE:] = True
        for addr in bars:
            rank, off = (addr >> 24, addr & 0xFFFFFF) if model.nctas > 1 else (0, addr)
            if rank == k:
                care[off:off + 8] = False
        bad = np.nonzero(care & (a != b))[0]
        if len(bad):
            j = int(bad[0])
            problems.append(f"CTA {k} shared memory: {len(bad)} bytes differ; first at offset 0x{j:x}: "
                            f"model 0x{a[j]:02x}, GPU 0x{b[j]:02x}")
    if len(model._buffers) != len(gpu._buffers):
        problems.append(f"{len(model._buffers)} buffers on the model, {len(gpu._buffers)} on the GPU")
    for i, (x, y) in enumerate(zip(model._buffers, gpu._buffers)):
        bad = np.nonzero(x.bytes != y.bytes)[0]
        if len(bad):
            j = int(bad[0])
            problems.append(f"global buffer {i}: {len(bad)} bytes differ; first at byte {j}: "
                            f"model 0x{x.bytes[j]:02x}, GPU 0x{y.bytes[j]:02x}")
    return problems


@pytest.fixture
def both_engines():
    """A function asserting that the model and the GPU agree on a Program or on
    what a function does with a Machine."""
    def check(what, **machine_kw):
        if isinstance(what, Program):
            if machine_kw:
                raise TypeError("a Program carries its own layout: no Machine arguments")
            if not available():
                return run_model(what)
            return assert_same(what)
        from ..machine import Machine
        model = Machine(**machine_kw)
        out_m = what(model)
        model.run()
        if not available():
            return Both(model, None, out_m, None)
        gpu = Machine(backend="cuda", **machine_kw)
        out_g = what(gpu)
        gpu.run()
        problems = compare_machines(model, gpu)
        if problems:
            raise AssertionError("the model and the GPU differ:\n  " + "\n  ".join(problems))
        return Both(model, gpu, out_m, out_g)
    return check
