"""Host code written against cuda-python / cuda-bindings pastes in: its integer
wrappers (cuuint64_t, cuuint32_t, CUdeviceptr), its enum members and its
CUtensorMap go where plain ints and bytes go. The first tests use stand-ins
with the same duck type; the last ones use the real package (skipped without it)."""
import ctypes
from enum import IntEnum

import pytest

import ptxasync as pa
import ptxasync.driver as drv
from ptxasync.driver import CUresult, cuTensorMapEncodeIm2col, cuTensorMapEncodeTiled, last_error

REF = pa.TensorMap.tiled("bf16", 0x10000, [256, 128], [512], [64, 8], swizzle="128B")


class Wrapped:
    """Like cuuint64_t / CUdeviceptr: converts with int(), nothing else."""

    def __init__(self, v):
        self._v = v

    def __int__(self):
        return self._v


class Dtype(IntEnum):           # like cuda.bindings.driver.CUtensorMapDataType
    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9


def test_driver_module_exports_the_cu_tensor_map_names():
    from ptxasync.driver import (CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                 CU_TENSOR_MAP_SWIZZLE_128B)
    assert int(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16) == 9 and int(CU_TENSOR_MAP_SWIZZLE_128B) == 3
    assert int(drv.CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B) == 15
    assert int(drv.CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B) == 5
    assert int(drv.CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA) == 1
    assert int(drv.CU_TENSOR_MAP_L2_PROMOTION_L2_256B) == 3
    assert not hasattr(drv, "CU_TENSOR_MAP_SWIZZLE_96B")      # no driver value
    # the module docstring's example runs as written
    err, tm = cuTensorMapEncodeTiled(
        CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 0x10000, [256, 128], [512], [64, 8], [1, 1],
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert err == CUresult.CUDA_SUCCESS and tm == REF


def test_encode_takes_int_wrappers_and_foreign_enums():
    W = Wrapped
    err, tm = cuTensorMapEncodeTiled(Dtype.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, W(2), W(0x10000),
                                     [W(256), W(128)], [W(512)], [W(64), W(8)], [W(1), W(1)],
                                     W(0), W(3), W(0), W(0))
    assert (err, last_error()) == (CUresult.CUDA_SUCCESS, None) and tm == REF
    # ctypes integers carry the value in .value
    err, tm = cuTensorMapEncodeTiled(9, 2, ctypes.c_uint64(0x10000), [ctypes.c_uint64(256), 128], [512],
                                     [ctypes.c_uint32(64), 8], [1, 1], 0, 3, 0, 0)
    assert err == CUresult.CUDA_SUCCESS and tm == REF


def test_encode_im2col_takes_int_wrappers():
    W = Wrapped
    err, tm = cuTensorMapEncodeIm2col(W(6), W(4), W(0x10000), [W(64), W(6), W(6), W(2)],
                                      [W(128), W(768), W(4608)], [-1, -1], [-1, -1], W(32), W(16),
                                      [W(1)] * 4, W(0), W(2), W(0), W(0))
    assert err == CUresult.CUDA_SUCCESS
    assert tm == pa.TensorMap.im2col("f16", 0x10000, [64, 6, 6, 2], [128, 768, 4608], [-1, -1], [-1, -1],
                                     32, 16, swizzle="64B")


@pytest.mark.parametrize("bad", [256.0, "256", True])
def test_encode_refuses_what_is_not_an_integer(bad):
    # a float is never truncated; the rule names the parameter and the value
    err, tm = cuTensorMapEncodeTiled(9, 2, 0x10000, [bad, 128], [512], [64, 8], [1, 1], 0, 3, 0, 0)
    assert err == CUresult.CUDA_ERROR_INVALID_VALUE and tm is None
    assert "globalDim[0] must be an integer" in last_error() and repr(bad) in last_error()


class OpaqueMap:
    """Like cuda-bindings' CUtensorMap: sixteen 64-bit words in .opaque."""

    def __init__(self, image):
        self.opaque = [Wrapped(int.from_bytes(image[i:i + 8], "little")) for i in range(0, 128, 8)]


class PointerMap:
    """Like a CUtensorMap seen only through getPtr()."""

    def __init__(self, image):
        self._buf = ctypes.create_string_buffer(bytes(image), 128)

    def getPtr(self):
        return ctypes.addressof(self._buf)


def test_from_bytes_takes_a_cutensormap_object():
    assert pa.TensorMap.from_bytes(OpaqueMap(bytes(REF))) == REF
    assert pa.TensorMap.from_bytes(PointerMap(bytes(REF))) == REF
    assert pa.TensorMap.from_bytes(bytes(REF)) == REF
    with pytest.raises(ValueError, match="a tensor map is 128 bytes, got 64"):
        pa.TensorMap.from_bytes(bytes(64))


# --- the real package (pip install cuda-bindings; it imports without a GPU) ---

def _cuda():
    return pytest.importorskip("cuda.bindings.driver", reason="cuda-bindings is not installed")


def test_real_cuda_bindings_host_code_pastes_in():
    cuda = _cuda()
    err, tm = pa.cuTensorMapEncodeTiled(
        cuda.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, cuda.CUdeviceptr(0x10000),
        [cuda.cuuint64_t(256), cuda.cuuint64_t(128)], [cuda.cuuint64_t(512)],
        [cuda.cuuint32_t(64), cuda.cuuint32_t(8)], [cuda.cuuint32_t(1), cuda.cuuint32_t(1)],
        cuda.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        cuda.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        cuda.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        cuda.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert (err, last_error()) == (CUresult.CUDA_SUCCESS, None) and tm == REF


def test_real_cuda_bindings_im2col_pastes_in():
    cuda = _cuda()
    u64, u32 = cuda.cuuint64_t, cuda.cuuint32_t
    err, tm = pa.cuTensorMapEncodeIm2col(
        cuda.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, cuda.CUdeviceptr(0x10000),
        [u64(64), u64(6), u64(6), u64(2)], [u64(128), u64(768), u64(4608)], [-1, -1], [-1, -1],
        32, 16, [u32(1)] * 4, cuda.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        cuda.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B,
        cuda.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
        cuda.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    assert err == CUresult.CUDA_SUCCESS
    assert tm == pa.TensorMap.im2col("f16", 0x10000, [64, 6, 6, 2], [128, 768, 4608], [-1, -1], [-1, -1],
                                     32, 16, swizzle="64B")


def test_real_cutensormap_round_trips():
    cuda = _cuda()
    c = cuda.CUtensorMap()
    image = bytes(REF)
    c.opaque = [int.from_bytes(image[i:i + 8], "little") for i in range(0, 128, 8)]
    assert pa.TensorMap.from_bytes(c) == REF
    # the driver's enum numbers are the ones ptxasync exports
    for name in ("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B",
                 "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B", "CU_TENSOR_MAP_INTERLEAVE_32B"):
        enum = next(e for e in (cuda.CUtensorMapDataType, cuda.CUtensorMapSwizzle, cuda.CUtensorMapInterleave)
                    if hasattr(e, name))
        assert int(getattr(enum, name)) == int(getattr(drv, name)), name
