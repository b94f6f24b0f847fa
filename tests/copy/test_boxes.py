"""read_box / write_box: the box in NumPy order, unswizzled, for tile and im2col maps."""
import numpy as np
import pytest

import ptxasync as pa


@pytest.mark.parametrize("swizzle", ["NONE", "32B", "64B", "128B"])
@pytest.mark.parametrize("dst", [0, 0x480])
def test_read_box_after_a_load(swizzle, dst):
    span = {"NONE": 128, "32B": 32, "64B": 64, "128B": 128}[swizzle]
    t = np.arange(64 * 128, dtype=np.float32).reshape(64, 128)
    gpu = pa.Machine(smem_bytes=16 * 1024, policy="immediate")
    g = gpu.register(t)
    tm = pa.TensorMap.from_array(t, (8, span // 4), g.address, swizzle=swizzle)
    bar = gpu.mbarrier(0x3000).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (4, 3), dst + 0x400 * (swizzle != "NONE"), bar)
    box = pa.read_box(gpu, tm, dst + 0x400 * (swizzle != "NONE"))
    assert box.dtype == np.float32
    np.testing.assert_array_equal(box, t[3:11, 4:4 + span // 4])


def test_write_box_then_store_round_trip():
    out = np.zeros((16, 64), np.uint16)
    gpu = pa.Machine(smem_bytes=8192, policy="immediate")
    g = gpu.register(out)
    tm = pa.TensorMap.from_array(out, (8, 64), g.address, swizzle="128B", dtype="u16")
    vals = np.arange(8 * 64, dtype=np.uint16).reshape(8, 64)
    pa.write_box(gpu, tm, 1024, vals)
    np.testing.assert_array_equal(pa.read_box(gpu, tm, 1024), vals)
    assert not np.array_equal(gpu.ctas[0].view(np.uint16, (8, 64), 1024), vals)   # swizzled in memory
    gpu.cp_async_bulk_tensor_store(tm, (0, 8), 1024)
    gpu.cp_async_bulk_commit_group()
    gpu.cp_async_bulk_wait_group(0)
    np.testing.assert_array_equal(out[8:16], vals)


def test_read_box_im2col():
    x = np.arange(1 * 4 * 4 * 8, dtype=np.uint16).reshape(1, 4, 4, 8)
    gpu = pa.Machine(smem_bytes=8192, policy="immediate")
    gx = gpu.register(x)
    tm = pa.TensorMap.im2col("u16", gx.address, [8, 4, 4, 1], [16, 64, 256], [-1, -1], [-1, -1],
                             channels_per_pixel=8, pixels_per_column=6)
    bar = gpu.mbarrier(0x1800).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (0, -1, -1, 0), 0, bar, load_mode="im2col", im2col_offsets=(1, 1))
    col = pa.read_box(gpu, tm, 0)
    assert col.shape == (6, 8)
    # no swizzle: the column's rows lie one after another
    np.testing.assert_array_equal(col, gpu.smem[:96].view(np.uint16).reshape(6, 8))
    np.testing.assert_array_equal(col[0], x[0, 0, 0])   # offsets (1, 1) from corner (-1, -1)


def test_read_box_refuses_what_does_not_fit():
    gpu = pa.Machine(smem_bytes=1024)
    tm = pa.TensorMap.tiled("f32", 0, [64, 64], [256], [32, 16])
    with pytest.raises(ValueError, match="reaches byte"):
        pa.read_box(gpu, tm, 0)
    with pytest.raises(ValueError, match="elements are 4 B"):
        pa.read_box(np.zeros(4096, np.uint8), tm, 0, dtype=np.uint16)
    with pytest.raises(ValueError, match="shape"):
        pa.write_box(np.zeros(4096, np.uint8), tm, 0, np.zeros((3, 3), np.float32))


def test_read_box_interleaved_slices():
    # INTERLEAVE_32B: dimension 0 counts 32-byte slices; dimension rank-2 is not traversed
    # (docs/tile-mode.md 6.1, 6.2): item (k2, k0) is the slice at base + c1*32 + (c0 + k0)*32 + (c2 + k2)*512
    x = (np.arange(8 * 512) % 251).astype(np.uint8)
    gpu = pa.Machine(smem_bytes=8192, policy="immediate")
    g = gpu.register(x)
    tm = pa.TensorMap.tiled("u8", g.address, [16, 16, 8], [32, 512], [32, 8, 4], interleave="32B")
    bar = gpu.mbarrier(6144).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (0, 3, 1), 0, bar)
    box = pa.read_box(gpu, tm, 0)
    assert box.shape == (4, 1, 32, 32)
    for k2 in range(4):
        for k0 in range(32):
            start = 3 * 32 + k0 * 32 + (1 + k2) * 512
            want = x[start:start + 32] if k0 < 16 else np.zeros(32, np.uint8)   # slices past gd[0]: OOB
            np.testing.assert_array_equal(box[k2, 0, k0], want, err_msg=f"k2={k2} k0={k0}")
    # the layout picture covers every byte of every slice
    from ptxasync import viz
    d = viz.layout_data(tm, 0)
    assert sum(n for _, _, n in d.chunks.values()) == 4 * 32 * 32


def _swz32(addr):
    """The 32B swizzle written out: address bit 7 XORed into bit 4."""
    return addr ^ (((addr >> 7) & 1) << 4)


def test_read_box_interleaved_swizzled_slices():
    # a 32-byte slice spans two 16-byte chunks, which the 32B swizzle may swap
    x = (np.arange(8 * 8192) % 251).astype(np.uint8)
    gpu = pa.Machine(smem_bytes=8192, policy="immediate")
    g = gpu.register(x)
    tm = pa.TensorMap.tiled("bf16", g.address, [16, 16, 8], [512, 8192], [16, 8, 4], interleave="32B",
                            swizzle="32B")
    bar = gpu.mbarrier(4096).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (0, 2, 1), 0, bar)
    box = pa.read_box(gpu, tm, 0, dtype=np.uint16)
    raw = gpu.smem
    assert box.shape == (4, 1, 16, 16)
    for k2 in range(4):
        for k0 in range(16):
            unswz = k2 * 16 * 32 + k0 * 32 + np.arange(0, 32, 2)       # rows packed (tile-mode 6.3)
            want = [int(raw[_swz32(a)]) | int(raw[_swz32(a) + 1]) << 8 for a in unswz]
            assert list(box[k2, 0, k0]) == want, (k2, k0)
            start = 2 * 512 + k0 * 32 + (1 + k2) * 8192
            assert bytes(box[k2, 0, k0].view(np.uint8)) == bytes(x[start:start + 32]), (k2, k0)
    from ptxasync import viz
    d = viz.layout_data(tm, 0)
    assert len(d.chunks) == 4 * 16 * 2 and all(n == 8 for _, _, n in d.chunks.values())
