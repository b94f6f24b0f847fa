"""ptxasync.cuda: the real GPU as a second engine (``pip install ".[cuda]"`` in the repository).

Built on NVIDIA's cuda-bindings (``cuda.bindings.driver``) and the driver's PTX
JIT; no compiler is needed. Importing this module always works;
``available()`` says whether a GPU can be used and ``why_unavailable()`` why not
(cuda-bindings missing, no driver library, CUDA_ERROR_NO_DEVICE, ...).

- ``encode_diff(kind, **params)``: cuTensorMapEncode* through the driver and the
  model, same verdict and same 128 bytes.
- ``Program``: one CTA's data and operations (the Machine's method names);
  ``run(prog)`` runs it on the GPU (a fault raises the model's exception);
  ``diff(prog)`` runs it on both and names the first differing byte.
- ``Machine(backend="cuda")`` (``CudaMachine``): the Machine's API with every
  operation run on the GPU and its memories read back.
- ``record``: GPU runs written as golden-format cases (``ptxasync golden record``).
"""
from ._driver import CudaError, Unavailable, why_unavailable
from .encode import EncodeDiff, encode_diff
from .program import SMEM_BASE, Program
from .machine import CudaMachine
from .runner import Diff, Result, assert_same, diff, gpu_info, run_gpu, run_model

__all__ = ["available", "why_unavailable", "Unavailable", "CudaError", "Program", "SMEM_BASE", "run",
           "run_gpu", "run_model", "diff", "assert_same", "Diff", "Result", "encode_diff", "EncodeDiff",
           "gpu_info", "CudaMachine"]


def available():
    """True when cuda-bindings, the driver and a GPU are all there."""
    return why_unavailable() is None


def run(prog):
    """Run ``prog`` on the GPU and return its Result; a fault or a wait that
    timed out raises the model's exception for it (IllegalInstruction,
    IllegalAddress, MisalignedAddress, Deadlock), as Machine would."""
    r = run_gpu(prog)
    r.raise_verdict()
    return r
