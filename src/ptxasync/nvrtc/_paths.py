"""Where the pip wheels put the headers a CUDA C++ kernel includes, found without importing
them (``importlib.util.find_spec`` reads the package's location only).

- ``nvidia-cuda-cccl``: libcu++ (``<cuda/ptx>``, ``<cuda/barrier>``, ``<cuda/std/...>``), CUB,
  Thrust. CUDA 13 wheels put it under ``nvidia/cu13/include/cccl``, CUDA 12 ones under
  ``nvidia/cuda_cccl/include``.
- ``nvidia-cuda-nvrtc`` / ``nvidia-cuda-runtime``: ``nvidia/cu13/include`` (CUDA 13) or
  ``nvidia/cuda_runtime/include`` (CUDA 12), where ``cuda_fp16.h`` and friends are when the
  runtime wheel is installed.
- ``nvidia-cutlass``: CuTe and CUTLASS, ``cutlass_library/source/include``.
"""
import importlib.util
import os

__all__ = ["include_paths", "cccl_include", "cutlass_include"]

# in search order: a CUDA 13 layout first, then CUDA 12's
_CCCL = ("cu13/include/cccl", "cuda_cccl/include")
_CUDA = ("cu13/include", "cuda_runtime/include", "cuda_nvrtc/include")


def _locations(package):
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return []
    if spec is None or spec.submodule_search_locations is None:
        return []
    return list(spec.submodule_search_locations)


def _first(package, subdirs):
    for base in _locations(package):
        for sub in subdirs:
            path = os.path.join(base, sub)
            if os.path.isdir(path):
                return path
    return None


def cccl_include():
    """The libcu++/CUB/Thrust include folder of the installed ``nvidia-cuda-cccl``, or None."""
    return _first("nvidia", _CCCL)


def cutlass_include():
    """The CuTe/CUTLASS include folder of the installed ``nvidia-cutlass``, or None."""
    return _first("cutlass_library", ("source/include",))


def include_paths():
    """Every include folder found, in the order ``-I`` takes them: CCCL (it must come before
    anything else that carries a ``cuda/`` folder), the CUDA headers, CuTe/CUTLASS."""
    out = []
    for path in (cccl_include(), *(_first("nvidia", (s,)) for s in _CUDA), cutlass_include()):
        if path and path not in out:
            out.append(path)
    return out
