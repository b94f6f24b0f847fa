"""pytest fixtures that run a test on both engines (``ptxasync.cuda``).

In a conftest.py: ``from ptxasync.cuda.fixtures import engine, both_engines``.

- ``engine``: parametrised over ``"model"`` and ``"cuda"``; ``engine(prog)`` runs a
  Program on that engine and returns its Result (a fault raises the model's
  exception). The ``cuda`` run is skipped, naming why, where no GPU can be used.
- ``both_engines``: ``both_engines(prog)`` runs the program on the model and, where a
  GPU can be used, on the GPU too, and asserts that every byte agrees (the
  difference named otherwise); it returns the Diff, or the model's Result
  when there is no GPU (the test then still checks the model alone).
"""
import pytest

from . import available, why_unavailable
from .runner import assert_same, run_gpu, run_model

__all__ = ["engine", "both_engines"]


@pytest.fixture(params=["model", "cuda"])
def engine(request):
    """A function running a Program on the model or on the GPU."""
    if request.param == "cuda" and not available():
        pytest.skip(f"no GPU for the cuda engine: {why_unavailable()}")

    def run(prog):
        r = run_gpu(prog) if request.param == "cuda" else run_model(prog)
        r.raise_verdict()
        return r
    run.name = request.param
    return run


@pytest.fixture
def both_engines():
    """A function asserting that the model and the GPU agree on a Program."""
    def check(prog):
        if not available():
            r = run_model(prog)
            return r
        return assert_same(prog)
    return check
