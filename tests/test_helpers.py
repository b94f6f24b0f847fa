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
    assert msg.startswith("5 of 512 box elements differ (box at dst 0x400):")
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
