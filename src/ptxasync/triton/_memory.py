"""Host memory as the model's global memory, in place: every array a launch is given (a CPU torch
tensor, a NumPy array, Triton's ``TensorWrapper``, an allocator's buffer) is registered on the
Machine at its own host address, so a pointer the kernel computes, a tensor map's base and a
pointer stored in memory all mean the same bytes on the model as in the process, with no copy and
no translation. Overlapping arrays (views of one tensor, an argument passed twice) become one
registration covering their union.
"""
from __future__ import annotations

import ctypes

import numpy as np


def _torch_tensor(obj):
    t = type(obj)
    return t.__module__.startswith("torch") and hasattr(obj, "data_ptr") and hasattr(obj, "untyped_storage")


def unwrap(obj):
    """Triton's ``TensorWrapper`` (``reinterpret``) stands for its base tensor, the driver's
    ``HostArray`` for its NumPy array."""
    base = getattr(obj, "base", None)
    if type(obj).__name__ in ("TensorWrapper", "HostArray") and base is not None:
        return base
    return obj


def address_of(obj):
    """The host address a pointer argument stands for (0 for None)."""
    if obj is None:
        return 0
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
        return int(obj)
    obj = unwrap(obj)
    if isinstance(obj, np.ndarray):
        return obj.__array_interface__["data"][0]
    if hasattr(obj, "data_ptr"):
        p = obj.data_ptr()
        if not isinstance(p, int):
            raise TypeError(f"{type(obj).__name__}.data_ptr() gave {type(p).__name__}, not an int")
        return p
    raise TypeError(f"a pointer argument must be a CPU torch tensor, a NumPy array, an object with "
                    f"data_ptr(), an int address or None; got {type(obj).__name__}")


def span_of(obj):
    """(low, high) host byte range the array covers, or None (an int, None, an empty array)."""
    if obj is None or isinstance(obj, (int, np.integer)):
        return None
    obj = unwrap(obj)
    if isinstance(obj, np.ndarray):
        if obj.size == 0:
            return None
        lo, hi = np.byte_bounds(obj) if hasattr(np, "byte_bounds") else np.lib.array_utils.byte_bounds(obj)
        return lo, hi
    if _torch_tensor(obj):
        if obj.device.type != "cpu":
            raise ValueError(f"a tensor on device {obj.device} was passed: the model runs on host memory, "
                             "give CPU tensors (tensor.cpu())")
        if obj.numel() == 0:
            return None
        es = obj.element_size()
        p = obj.data_ptr()
        lo = sum(min(0, (n - 1) * s) for n, s in zip(obj.shape, obj.stride()))
        hi = sum(max(0, (n - 1) * s) for n, s in zip(obj.shape, obj.stride()))
        return p + lo * es, p + (hi + 1) * es
    if hasattr(obj, "data_ptr"):
        nbytes = getattr(obj, "nbytes", None)
        if nbytes is None:
            raise TypeError(f"{type(obj).__name__} has data_ptr() but no nbytes: the driver cannot tell "
                            "how much memory it covers; pass a torch tensor or a NumPy array")
        p = obj.data_ptr()
        return (p, p + int(nbytes)) if nbytes else None
    raise TypeError(f"cannot register {type(obj).__name__} as global memory")


class HostMemory:
    """The arrays of one launch, merged into disjoint spans and registered on a Machine."""

    def __init__(self):
        self._spans = []        # (low, high)
        self._owners = []       # keep every array alive while the machine can reach it

    def add(self, obj):
        s = span_of(obj)
        if s is not None:
            self._spans.append(s)
            self._owners.append(obj)

    def merged(self):
        out = []
        for lo, hi in sorted(self._spans):
            if out and lo < out[-1][1]:
                out[-1][1] = max(out[-1][1], hi)
            else:
                out.append([lo, hi])
        return out

    def register(self, machine):
        """Register every span at its host address; returns the GlobalBuffers."""
        bufs = []
        for lo, hi in self.merged():
            raw = np.ctypeslib.as_array((ctypes.c_uint8 * (hi - lo)).from_address(lo))
            bufs.append(machine.register(raw, address=lo, align=1))
        return bufs

    def contains(self, address):
        return any(lo <= address < hi for lo, hi in self._spans)
