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
