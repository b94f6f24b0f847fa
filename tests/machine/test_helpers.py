"""ptxasync.testing assertions and the cuda-python style encoder drop-ins."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync.driver import CUresult, cuTensorMapEncodeIm2col, cuTensorMapEncodeTiled, last_error
from ptxasync.testing import assert_box_equal, assert_smem_equal


@pytest.fixture
def loaded():
    t = np.arange(64 * 128, dtype=np.uint16).reshape(64, 128)
    gpu = pa.Machine(smem_bytes=8192, policy="immediate")
    g = gpu.register(t)
    tm = pa.TensorMap.from_array(t, (8, 64), g.address, swizzle="128B")
    bar = gpu.mbarrier(4096).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (64, 8), 1024, bar)
    return gpu, tm, t


def test_assert_box_equal_passes_and_reports(loaded):
    gpu, tm, t = loaded
    assert_box_equal(gpu, tm, 1024, t[8:16, 64:128])
    wrong = t[8:16, 64:128].copy()
    wrong[3, 5] = 1
    wrong[7, 60:] = 0
    with pytest.raises(AssertionError) as e:
        assert_box_equal(gpu, tm, 1024, wrong)
    msg = str(e.value)
    assert msg.startswith("5 of 512 box elements differ (box at dst 0x400, compared as UINT16):")
    # row 3, column 5: chunk 0 of line 3 XOR 3 -> slot 3 of the line at 0x400 + 3 * 128
    assert f"box (3, 5) at shared 0x{0x400 + 3 * 128 + 3 * 16 + 5 * 2:x}: expected 1, got {t[11, 69]}" in msg


def test_assert_box_equal_compares_bits():
    gpu = pa.Machine(smem_bytes=4096)
    tm = pa.TensorMap.tiled("f32", 0, [4], [], [4])
    gpu.smem[:16] = np.array([0.0, -0.0, np.nan, 1.0], np.float32).view(np.uint8)
    assert_box_equal(gpu, tm, 0, np.array([0.0, -0.0, np.nan, 1.0], np.float32))
    with pytest.raises(AssertionError, match="1 of 4 box elements differ"):
        assert_box_equal(gpu, tm, 0, np.array([0.0, 0.0, np.nan, 1.0], np.float32))


def test_assert_smem_equal_names_box_elements(loaded):
    gpu, tm, t = loaded
    assert_smem_equal(gpu, gpu.smem[1024:1056].copy(), 1024)
    with pytest.raises(AssertionError) as e:
        assert_smem_equal(gpu, np.zeros(16, np.uint16), 1024, tmap=tm, dst=1024)
    msg = str(e.value)
    assert "bytes differ from shared 0x400" in msg
    assert "shared 0x400 (box element (0, 0) byte 0): expected 0x00, got 0x" in msg
    with pytest.raises(AssertionError, match="shared memory has 8192"):
        assert_smem_equal(gpu, b"\0" * 16, 8190)


def test_encode_tiled_drop_in():
    err, tm = cuTensorMapEncodeTiled(9, 2, 0x10000, [256, 128], [512], [64, 8], [1, 1], 0, 3, 0, 0)
    assert err == CUresult.CUDA_SUCCESS and last_error() is None
    assert tm == pa.TensorMap.tiled("bf16", 0x10000, [256, 128], [512], [64, 8], swizzle="128B")
    err, tm = cuTensorMapEncodeTiled(9, 2, 0x10000, [256, 128], [500], [64, 8], [1, 1], 0, 3, 0, 0)
    assert err == CUresult.CUDA_ERROR_INVALID_VALUE and tm is None
    assert "globalStrides[0] = 500 is not a multiple of 16" in last_error()


def test_encode_im2col_drop_in():
    err, tm = cuTensorMapEncodeIm2col(6, 4, 0x10000, [64, 6, 6, 2], [128, 768, 4608], [-1, -1], [-1, -1],
                                      32, 16, [1, 1, 1, 1], 0, 2, 0, 0)
    assert err == 0
    assert tm == pa.TensorMap.im2col("f16", 0x10000, [64, 6, 6, 2], [128, 768, 4608], [-1, -1], [-1, -1],
                                     32, 16, swizzle="64B")
    err, tm = cuTensorMapEncodeIm2col(6, 4, 0x10000, [64, 6, 6, 2], [128, 768, 4608], [-1, -1], [-1, -1],
                                      0, 16, [1, 1, 1, 1], 0, 2, 0, 0)
    assert err == CUresult.CUDA_ERROR_INVALID_VALUE and "channelsPerPixel = 0" in last_error()


def _bf16_box(gpu, values):
    """A 1 x 8 bf16 map whose box at shared 0 holds ``values`` (bf16 bits)."""
    tm = pa.TensorMap.tiled("bf16", 0, [8], [], [8])
    gpu.smem[:16] = np.asarray(values, np.uint16).view(np.uint8)
    return tm


def test_assert_box_equal_compares_and_prints_in_the_maps_type():
    # bf16 bits of 0.25, 1.0, -2.0, 0.5, ...: 0x3e80 is 0.25 (sign 0, exponent 125, mantissa 0)
    bits = np.array([0x3E80, 0x3F80, 0xC000, 0x3F00, 0, 0x8000, 0x7FC0, 0x4040], np.uint16)
    values = [0.25, 1.0, -2.0, 0.5, 0.0, -0.0, np.nan, 3.0]
    gpu = pa.Machine(smem_bytes=4096)
    tm = _bf16_box(gpu, bits)
    assert_box_equal(gpu, tm, 0, bits)                       # the bits as integers
    assert_box_equal(gpu, tm, 0, np.array(values))           # float64 values, cast to bf16
    assert_box_equal(gpu, tm, 0, values)                     # a list
    wrong = list(values)
    wrong[0] = 0.3125                                        # bf16 0x3ea0
    with pytest.raises(AssertionError) as e:
        assert_box_equal(gpu, tm, 0, wrong)
    msg = str(e.value)
    assert "compared as BFLOAT16" in msg
    assert "box (0,) at shared 0x0: expected 0.3125 (0x3ea0), got 0.25 (0x3e80)" in msg
    # values round to nearest even when cast: 1 + 2^-9 is halfway between two bf16 -> 1.0
    assert_box_equal(gpu, tm, 0, [0.25, 1.0 + 2.0 ** -9, -2.0, 0.5, 0.0, -0.0, np.nan, 3.0])


def test_assert_box_equal_with_ml_dtypes_and_float16_values():
    ml = pytest.importorskip("ml_dtypes")
    gpu = pa.Machine(smem_bytes=4096)
    vals = np.array([0.25, 1.0, -2.0, 0.5, 0.0, -0.0, 1.5, 3.0])
    tm = _bf16_box(gpu, vals.astype(ml.bfloat16).view(np.uint16))
    assert_box_equal(gpu, tm, 0, vals.astype(ml.bfloat16))
    # float16 values are values, not bf16 bits: cast, then compared
    assert_box_equal(gpu, tm, 0, vals.astype(np.float16))
    f16 = pa.TensorMap.tiled("f16", 0, [8], [], [8])
    gpu.smem[:16] = vals.astype(np.float16).view(np.uint8)
    assert_box_equal(gpu, f16, 0, vals.astype(ml.bfloat16))   # bf16 values cast to f16
    with pytest.raises(AssertionError, match=r"expected 1.0 \(0x3c00\), got 0.25 \(0x3400\)"):
        assert_box_equal(gpu, f16, 0, np.array([1.0, 1.0, -2.0, 0.5, 0.0, -0.0, 1.5, 3.0]))


def test_register_ml_dtypes_arrays():
    """Machine.register takes ml_dtypes bfloat16 and float8 arrays (no buffer
    format of their own): same bytes, no copy, and they load."""
    ml = pytest.importorskip("ml_dtypes")
    gpu = pa.Machine(smem_bytes=64 * 1024)
    t = (np.arange(16 * 64).reshape(16, 64) / 64).astype(ml.bfloat16)
    g = gpu.register(t)
    assert g.array is t or np.shares_memory(g.array, t)
    tm = pa.TensorMap.from_array(t, (8, 64), g.address, swizzle="128B")
    assert tm.fields["dtype"] == pa.DataType.BFLOAT16
    bar = gpu.mbarrier(0).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (0, 8), 1024, bar)
    assert bar.try_wait(0)
    assert_box_equal(gpu, tm, 1024, t[8:16])
    f8 = np.arange(4 * 64).astype(ml.float8_e4m3fn).reshape(4, 64)
    g8 = gpu.register(f8)
    t8 = pa.TensorMap.from_array(f8, (2, 64), g8.address)
    assert t8.fields["dtype"] == pa.DataType.UINT8
    bar = gpu.mbarrier(8).init(1)
    bar.arrive_expect_tx(t8.box_bytes)
    gpu.cp_async_bulk_tensor_load(t8, (0, 2), 8192, bar)
    assert bar.try_wait(0)
    assert_box_equal(gpu, t8, 8192, f8[2:4])
    assert bytes(gpu.smem[8192:8192 + 128]) == f8[2:4].tobytes()


def test_assert_box_equal_takes_torch_bf16():
    torch = pytest.importorskip("torch")
    gpu = pa.Machine(smem_bytes=4096)
    t = torch.tensor([0.25, 1.0, -2.0, 0.5, 0.0, -0.0, 1.5, 3.0], dtype=torch.bfloat16)
    tm = _bf16_box(gpu, t.view(torch.int16).numpy().view(np.uint16))
    assert_box_equal(gpu, tm, 0, t)
    w = t.clone()
    w[1] = 0.25
    with pytest.raises(AssertionError, match=r"box \(1,\) at shared 0x2: expected 0.25 \(0x3e80\), got 1.0"):
        assert_box_equal(gpu, tm, 0, w)


def test_load_box_takes_numpy_order():
    """load_box speaks NumPy order (outermost first), as from_array and read_box do:
    the same load as cp_async_bulk_tensor_load with the coordinates reversed."""
    t = np.arange(64 * 128, dtype=np.uint16).reshape(64, 128)
    gpu = pa.Machine(smem_bytes=32 * 1024, policy="immediate")
    g = gpu.register(t)
    tm = pa.TensorMap.from_array(t, (8, 64), g.address, swizzle="128B")
    bar = gpu.mbarrier(0).init(1)
    bar.arrive_expect_tx(3 * tm.box_bytes)
    gpu.load_box(tm, (16, 64), 1024, bar)
    gpu.load_box(tm, np.s_[40:48, 0:64], 2048, bar)
    gpu.cp_async_bulk_tensor_load(tm, (64, 16), 3072, bar)        # driver order: the same box
    assert bar.try_wait(0)
    assert_box_equal(gpu, tm, 1024, t[16:24, 64:128])
    assert_box_equal(gpu, tm, 2048, t[40:48, 0:64])
    assert bytes(gpu.smem[1024:2048]) == bytes(gpu.smem[3072:4096])
    # -8 is eight rows above the tensor (zero fill), not NumPy's eighth from the end
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.load_box(tm, (-4, 0), 4096, bar)
    assert bar.try_wait(1)
    assert_box_equal(gpu, tm, 4096, np.vstack([np.zeros((4, 64), np.uint16), t[0:4, 0:64]]))
    with pytest.raises(ValueError, match="spans 4; the box extent along NumPy axis 0 is 8"):
        gpu.load_box(tm, np.s_[0:4, 0:64], 1024, bar)
    with pytest.raises(ValueError, match="has 1 entries; the map has rank 2"):
        gpu.load_box(tm, (3,), 1024, bar)
    with pytest.raises(TypeError, match=r"index\[1\] must be an integer"):
        gpu.load_box(tm, (0, 1.5), 1024, bar)
