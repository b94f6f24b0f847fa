"""Drop-ins for the CUDA driver's tensor-map encoders, as cuda-python spells them.

Host code written against ``cuda.bindings.driver`` pastes in unchanged:

    from ptxasync.driver import CUresult, cuTensorMapEncodeTiled
    err, tmap = cuTensorMapEncodeTiled(
        CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, ptr, [256, 128], [512], [64, 8], [1, 1],
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert err == CUresult.CUDA_SUCCESS

Arguments are in the driver's order (dimension 0 innermost; ``globalStrides``
has rank - 1 byte strides). Enums may be cuda-python's members, plain numbers
or ptxasync names. The result is ``(CUresult, TensorMap)``; a rejected map
gives ``(CUDA_ERROR_INVALID_VALUE, None)``, as the driver does, and
``last_error()`` names the rule that rejected it.
"""
from enum import IntEnum

from . import _core
from .tensormap import TensorMap

__all__ = ["CUresult", "cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col", "last_error"]


class CUresult(IntEnum):
    """The driver's status codes these functions return."""
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1


_last = [None]


def last_error():
    """The rule the last rejected encode broke (None after a success)."""
    return _last[0]


def _address(p):
    # cuda-python passes CUdeviceptr objects or ints; both convert with int()
    return int(p)


def _call(fn, *args, **kw):
    try:
        tm = fn(*args, **kw)
    except (_core.InvalidValue, ValueError, TypeError) as e:
        _last[0] = str(e)
        return CUresult.CUDA_ERROR_INVALID_VALUE, None
    _last[0] = None
    return CUresult.CUDA_SUCCESS, tm


def cuTensorMapEncodeTiled(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides, boxDim,
                           elementStrides, interleave, swizzle, l2Promotion, oobFill):
    """cuTensorMapEncodeTiled -> (CUresult, TensorMap or None)."""
    return _call(TensorMap.tiled, int(tensorDataType), _address(globalAddress), list(globalDim)[:int(tensorRank)],
                 list(globalStrides), list(boxDim), element_strides=list(elementStrides),
                 interleave=int(interleave), swizzle=int(swizzle), l2_promotion=int(l2Promotion),
                 oob_fill=int(oobFill), rank=int(tensorRank))


def cuTensorMapEncodeIm2col(tensorDataType, tensorRank, globalAddress, globalDim, globalStrides,
                            pixelBoxLowerCorner, pixelBoxUpperCorner, channelsPerPixel, pixelsPerColumn,
                            elementStrides, interleave, swizzle, l2Promotion, oobFill):
    """cuTensorMapEncodeIm2col -> (CUresult, TensorMap or None)."""
    return _call(TensorMap.im2col, int(tensorDataType), _address(globalAddress),
                 list(globalDim)[:int(tensorRank)], list(globalStrides), list(pixelBoxLowerCorner),
                 list(pixelBoxUpperCorner), int(channelsPerPixel), int(pixelsPerColumn),
                 element_strides=list(elementStrides), interleave=int(interleave), swizzle=int(swizzle),
                 l2_promotion=int(l2Promotion), oob_fill=int(oobFill), rank=int(tensorRank))
