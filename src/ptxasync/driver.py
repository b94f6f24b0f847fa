"""Drop-ins for the CUDA driver's tensor-map encoders, as cuda-python spells them.

Host code written against ``cuda.bindings.driver`` pastes in unchanged:

    from ptxasync.driver import CUresult, cuTensorMapEncodeTiled
    err, tmap = cuTensorMapEncodeTiled(
        CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, ptr, [256, 128], [512], [64, 8], [1, 1],
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert err == CUresult.CUDA_SUCCESS

Arguments are in the driver's order (dimension 0 innermost; ``globalStrides``
has rank - 1 byte strides). Numbers may be what cuda-python / cuda-bindings
pass: ``cuuint64_t`` / ``cuuint32_t`` wrappers, a ``CUdeviceptr``, their
``CUtensorMap*`` enum members, or plain ints; enums may also be the
``CU_TENSOR_MAP_*`` names this module exports or ptxasync names. The result
is ``(CUresult, TensorMap)``; a rejected map gives ``(CUDA_ERROR_INVALID_VALUE,
None)``, as the driver does, and ``last_error()`` names the rule that rejected
it. ``TensorMap.from_bytes`` takes a cuda-bindings ``CUtensorMap`` too.
"""
import operator
from enum import Enum, IntEnum

from . import _core
from .enums import DataType, Interleave, L2Promotion, OOBFill, Swizzle, driver_name
from .tensormap import TensorMap

__all__ = ["CUresult", "cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col", "last_error"]

# CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, CU_TENSOR_MAP_SWIZZLE_128B, ...: the driver's
# names, as cuda-python exports them at module level (the model's own 96B swizzle,
# which has no driver value, is left out)
for _cls in (DataType, Interleave, Swizzle, L2Promotion, OOBFill):
    for _m in _cls:
        if not (_cls is Swizzle and _m is Swizzle.B96):
            globals()[driver_name(_m)] = _m
            __all__.append(driver_name(_m))
del _cls, _m


class CUresult(IntEnum):
    """The driver's status codes these functions return."""
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1


_last = [None]


def last_error():
    """The rule the last rejected encode broke (None after a success)."""
    return _last[0]


def _num(x, name):
    """A driver integer as cuda-python passes it: an int, a NumPy integer, an
    enum member or ctypes integer (``.value``), or a wrapper that converts with ``int()``
    (``cuuint64_t``, ``cuuint32_t``, ``CUdeviceptr``). Floats, strings and bools
    are refused rather than truncated."""
    if isinstance(x, (bool, float, complex, str, bytes)):
        raise TypeError(f"{name} must be an integer, got {x!r}")
    if isinstance(x, Enum):
        return _num(x.value, name)
    try:
        return operator.index(x)
    except TypeError:
        pass
    if isinstance(getattr(x, "value", None), int):     # ctypes integers
        return _num(x.value, name)
    if hasattr(x, "__int__") and not hasattr(x, "__float__"):
        return int(x)
    raise TypeError(f"{name} must be an integer, got {x!r}")


def _nums(seq, name):
    try:
        items = list(seq)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of integers, got {seq!r}") from None
    return [_num(x, f"{name}[{i}]") for i, x in enumerate(items)]


def _enum_arg(x, name):
    # ptxasync names and members stay as they are (TensorMap parses them)
    return x if isinstance(x, str) else _num(x, name)


def _fail(e):
    _last[0] = str(e)
    return CUresult.CUDA_ERROR_INVALID_VALUE, None


def _call(fn, *args, **kw):
    try:
        tm = fn(*args, **kw)
    except (_core.InvalidValue, ValueError, TypeError) as e:
        return _fail(e)
    _last[0] = None
    return CUresult.CUDA_SUCCESS, tm


def _layout_kw(elementStrides, interleave, swizzle, l2Promotion, oobFill, rank):
    """The arguments both encoders share, as TensorMap's keywords."""
    return dict(element_strides=_nums(elementStrides, "elementStrides"),
                interleave=_enum_arg(interleave, "interleave"), swizzle=_enum_arg(swizzle, "swizzle"),
                l2_promotion=_enum_arg(l2Promotion, "l2Promotion"), oob_fill=_enum_arg(oobFill, "oobFill"),
                rank=rank)


def cuTensorMapEncodeTiled(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, boxDim,
                           elementStrides, interleave, swizzle, l2Promotion, oobFill):
    """cuTensorMapEncodeTiled -> (CUresult, TensorMap or None)."""
    try:
        rank = _num(tensorRank, "tensorRank")
        args = (_enum_arg(tensorDataType, "tensorDataType"), _num(globalAddress, "globalAddress"),
                _nums(globalDim, "globalDim")[:rank], _nums(globalStrides, "globalStrides"),
                _nums(boxDim, "boxDim"))
        kw = _layout_kw(elementStrides, interleave, swizzle, l2Promotion, oobFill, rank)
    except TypeError as e:
        return _fail(e)
    return _call(TensorMap.tiled, *args, **kw)


def cuTensorMapEncodeIm2col(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                            pixelBoxLowerCorner, pixelBoxUpperCorner, channelsPerPixel, pixelsPerColumn,
                            elementStrides, interleave, swizzle, l2Promotion, oobFill):
    """cuTensorMapEncodeIm2col -> (CUresult, TensorMap or None)."""
    try:
        rank = _num(tensorRank, "tensorRank")
        args = (_enum_arg(tensorDataType, "tensorDataType"), _num(globalAddress, "globalAddress"),
                _nums(globalDim, "globalDim")[:rank], _nums(globalStrides, "globalStrides"),
                _nums(pixelBoxLowerCorner, "pixelBoxLowerCorner"),
                _nums(pixelBoxUpperCorner, "pixelBoxUpperCorner"),
                _num(channelsPerPixel, "channelsPerPixel"), _num(pixelsPerColumn, "pixelsPerColumn"))
        kw = _layout_kw(elementStrides, interleave, swizzle, l2Promotion, oobFill, rank)
    except TypeError as e:
        return _fail(e)
    return _call(TensorMap.im2col, *args, **kw)
