"""NumPy arrays as kernel arguments. Triton's binder types each argument with
``native_specialize_impl``, which takes anything with ``data_ptr()`` and ``dtype`` as a pointer
and refuses an ``ndarray`` (it has neither). The binder looks the function up in
``triton.runtime.jit`` when it is built, so a wrapper put there types an ndarray as the pointer
to its element type (16-byte alignment specialised as for a tensor) and hands everything else to
Triton's own function unchanged. It answers for an ndarray only while the model's driver is the
active one: under another driver an ndarray is refused as Triton refuses it.
"""
from __future__ import annotations

import numpy as np


class _ArrayPointer:
    """An ndarray seen as Triton sees a tensor: its data pointer and dtype."""
    __slots__ = ("dtype", "_ptr")

    def __init__(self, a):
        self.dtype = a.dtype
        self._ptr = a.__array_interface__["data"][0]

    def data_ptr(self):
        return self._ptr


class HostArray:
    """A NumPy array where Triton wants a tensor-like object (a ``TensorDescriptor``'s base):
    ``data_ptr()``, ``dtype``, ``shape``; the driver registers ``base``, the array itself."""

    def __init__(self, array):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"HostArray wraps a NumPy array, not {type(array).__name__}")
        self.base = array
        self.dtype = _TensorLikeDtype(array.dtype)
        self.shape = array.shape

    def data_ptr(self):
        return self.base.__array_interface__["data"][0]

    def stride(self):
        es = self.base.itemsize
        for s in self.base.strides:
            if s % es:
                raise ValueError(f"stride {s} bytes is not a whole number of {es}-byte elements")
        return tuple(s // es for s in self.base.strides)


class _TensorLikeDtype:
    """A NumPy dtype with the two attributes Triton asks of a torch dtype."""

    def __init__(self, dt):
        self._dt = np.dtype(dt)
        self.itemsize = self._dt.itemsize
        self.is_floating_point = self._dt.kind == "f" or self._dt.name in ("bfloat16",) or \
            self._dt.name.startswith("float8")

    def __str__(self):
        return self._dt.name

    def __repr__(self):
        return f"dtype({self._dt.name})"


def descriptor(array, block_shape, padding="zero", round_f32_to_tf32=False):
    """``TensorDescriptor.from_tensor`` for a NumPy array (Triton's wants a torch tensor)."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    h = HostArray(array)
    return TensorDescriptor(h, list(h.shape), list(h.stride()), list(block_shape), padding, round_f32_to_tf32)


def _make(native, is_ours):
    def specialize_impl(backend, arg, is_const, specialize, align):
        if type(arg) is np.ndarray and is_ours():
            return native(backend, _ArrayPointer(arg), is_const, specialize, align)
        return native(backend, arg, is_const, specialize, align)
    specialize_impl.native = native
    return specialize_impl


def install(is_ours):
    import triton.runtime.jit as jit
    if not hasattr(jit.native_specialize_impl, "native"):
        jit.native_specialize_impl = _make(jit.native_specialize_impl, is_ours)


def uninstall():
    import triton.runtime.jit as jit
    native = getattr(jit.native_specialize_impl, "native", None)
    if native is not None:
        jit.native_specialize_impl = native
