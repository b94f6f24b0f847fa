"""im2col copies: .im2col loads and .im2col_no_offs stores/reductions.

One test per rule, citing its source (PTX ISA 5.5.4, golden observations 6 and
10 in tests/data/README.md, docs/im2col-mode.md for what the H200 probe
measured). Expected values are written out by hand or computed by
tests/im2col_reference.py, never by the code under test.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptxasync as pa

from im2col_reference import im2col_load as ref_load, pixels


def _nhwc(n=2, h=3, w=4, c=8, dtype=np.uint16):
    """A tensor whose element (n, h, w, c) is n*1000 + h*100 + w*10 + c."""
    a = np.zeros((n, h, w, c), dtype=dtype)
    for idx in np.ndindex(a.shape):
        a[idx] = idx[0] * 1000 + idx[1] * 100 + idx[2] * 10 + idx[3]
    return a


def _machine(a):
    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024)
    return gpu, gpu.register(a)


def _map(a, g, lower, upper, cpp, ppc, es=None, dtype="u16", **kw):
    dims = list(a.shape[::-1])                      # C, W, H, N
    strides = [a.strides[i] for i in range(a.ndim - 2, -1, -1)]
    return pa.TensorMap.im2col(dtype=dtype, global_address=g.address, global_dim=dims,
                               global_strides=strides, pixel_box_lower=lower, pixel_box_upper=upper,
                               channels_per_pixel=cpp, pixels_per_column=ppc,
                               element_strides=es or [1] * a.ndim, **kw)


def _load(gpu, tm, coords, offsets, dst=1024):
    gpu.smem[:] = 0xA5
    bar = gpu.mbarrier(0).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, coords, dst, bar, load_mode="im2col", im2col_offsets=offsets)
    assert bar.try_wait(0)
    return gpu


def test_walk_is_w_fastest_and_wraps_to_the_lower_corner():
    """PTX 5.5.4.1: pixelsPerColumn pixels from the filter base, W fastest, inside
    the bounding box [lower, dim - 1 + upper]; past the last W the walk restarts
    at the lower corner in the next H row."""
    a = _nhwc()
    gpu, g = _machine(a)
    tm = _map(a, g, lower=[0, 0], upper=[-1, -1], cpp=8, ppc=5)   # W in 0..2, H in 0..1
    _load(gpu, tm, (0, 1, 0, 0), (0, 0))
    col = gpu.smem.view(np.uint16)[512:512 + 5 * 8].reshape(5, 8)
    # pixels (w, h): (1,0) (2,0) then wrap to (0,1) (1,1) (2,1)
    want = [[h * 100 + w * 10 + c for c in range(8)] for (w, h) in [(1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]]
    assert col.tolist() == want


def test_offsets_are_added_to_each_pixel():
    """PTX 5.5.4.1: the im2col offsets are added to the filter base coordinates
    to find the element read."""
    a = _nhwc()
    gpu, g = _machine(a)
    tm = _map(a, g, lower=[0, 0], upper=[-1, -1], cpp=8, ppc=2)
    _load(gpu, tm, (0, 0, 0, 1), (1, 1))        # image 1, pixels (0,0) (1,0), offset (+1, +1)
    col = gpu.smem.view(np.uint16)[512:512 + 16].reshape(2, 8)
    assert col[:, 0].tolist() == [1000 + 110, 1000 + 120]


def test_padding_pixels_are_filled():
    """PTX 5.5.4.3: pixels outside the tensor (padding) are out-of-bounds and
    zero-filled (NaN fill with OOB_FILL_NAN_REQUEST_ZERO_FMA)."""
    a = _nhwc().astype(np.float16)
    gpu, g = _machine(a)
    tm = _map(a, g, lower=[-1, -1], upper=[0, 0], cpp=8, ppc=2, dtype="f16", oob_fill=1)
    _load(gpu, tm, (0, -1, -1, 0), (0, 0))      # pixel (-1,-1) is padding, then (0,-1)
    raw = gpu.smem.view(np.uint16)[512:512 + 16]
    assert raw.tolist() == [0x7FF7] * 16


def test_channels_past_c_are_filled():
    """Channels at or past globalDim[0] are out of bounds (as in tile mode)."""
    a = _nhwc(c=8)
    gpu, g = _machine(a)
    tm = _map(a, g, lower=[0, 0], upper=[0, 0], cpp=16, ppc=1)
    _load(gpu, tm, (0, 2, 1, 0), (0, 0))
    row = gpu.smem.view(np.uint16)[512:528]
    assert row.tolist() == [120 + c for c in range(8)] + [0] * 8


def test_tx_is_pixels_times_channels_times_elemsize():
    """Golden observation 6: each completed im2col load credits exactly
    pixelsPerColumn * channelsPerPixel * elemsize bytes."""
    a = _nhwc()
    _, g = _machine(a)
    assert _map(a, g, lower=[0, 0], upper=[0, 0], cpp=8, ppc=7).box_bytes == 7 * 8 * 2


def test_start_pixel_outside_the_box_faults():
    """Golden observation 6: a start pixel outside [lower, dim - 1 + upper] raises
    cudaErrorIllegalInstruction."""
    a = _nhwc()
    gpu, g = _machine(a)
    tm = _map(a, g, lower=[1, 0], upper=[0, 0], cpp=8, ppc=2)
    bar = gpu.mbarrier(0).init(1)
    with pytest.raises(pa.IllegalInstruction, match="outside the bounding box"):
        gpu.cp_async_bulk_tensor_load(tm, (0, 0, 0, 0), 1024, bar, load_mode="im2col", im2col_offsets=(0, 0))


def test_unaligned_channel_start_faults():
    """Golden observation 6: c0 * elemsize not a multiple of 16 bytes faults."""
    a = _nhwc(c=16)
    gpu, g = _machine(a)
    tm = _map(a, g, lower=[0, 0], upper=[0, 0], cpp=8, ppc=2)
    bar = gpu.mbarrier(0).init(1)
    with pytest.raises(pa.IllegalInstruction, match="16 bytes"):
        gpu.cp_async_bulk_tensor_load(tm, (4, 0, 0, 0), 1024, bar, load_mode="im2col", im2col_offsets=(0, 0))


def test_offset_range_per_rank():
    """PTX 5.5.4.1: offsets are [0, 2^8-1] for 4D copies."""
    a = _nhwc()
    gpu, g = _machine(a)
    tm = _map(a, g, lower=[0, 0], upper=[0, 0], cpp=8, ppc=2)
    bar = gpu.mbarrier(0).init(1)
    with pytest.raises(pa.InvalidValue, match="outside"):
        gpu.cp_async_bulk_tensor_load(tm, (0, 0, 0, 0), 1024, bar, load_mode="im2col", im2col_offsets=(256, 0))


def test_image_dimension_steps_by_its_traversal_stride():
    """Measured on an H200 (docs/im2col-mode.md, 48/48 probe loads): after the
    last pixel of an image the walk moves to image N + elementStrides[N]."""
    a = _nhwc(n=3, h=1, w=2)
    gpu, g = _machine(a)
    tm = _map(a, g, lower=[0, 0], upper=[0, 0], cpp=8, ppc=4, es=[1, 1, 1, 2])
    _load(gpu, tm, (0, 0, 0, 0), (0, 0))
    col = gpu.smem.view(np.uint16)[512:512 + 32].reshape(4, 8)
    assert col[:, 0].tolist() == [0, 10, 2000, 2010]


@pytest.mark.parametrize("lower,upper,coords,rule", [
    ([-1, 0], [0, 0], (0, 0, 0, 0), "pixelBoxLowerCorner"),
    ([0, 0], [1, 0], (0, 0, 0, 0), "pixelBoxUpperCorner"),
    ([0, 0], [0, 0], (0, 0, 0, -1), "negative"),
    ([0, 0], [-1, 0], (0, 3, 0, 0), "outside the bounding box"),
])
def test_im2col_no_offs_store_rules(lower, upper, coords, rule):
    """PTX cp.async.bulk.tensor (.im2col_no_offs): the box must stay inside the
    tensor (lower corner >= 0, upper corner <= 0), coordinates non-negative; and
    the start pixel in the box (H200 probe: 15/15 faulted). Golden observation 10."""
    a = _nhwc()
    gpu, g = _machine(a)
    tm = _map(a, g, lower=lower, upper=upper, cpp=8, ppc=2)
    with pytest.raises(pa.IllegalInstruction, match=rule):
        gpu.cp_async_bulk_tensor_store(tm, coords, 1024, load_mode="im2col_no_offs")


def test_im2col_no_offs_store_writes_the_column_back():
    """A store walks the same pixels as a load (no offsets) and writes each
    row of shared memory to its pixel (H200 probe: 138/138 stores)."""
    a = _nhwc()
    gpu, g = _machine(a)
    tm = _map(a, g, lower=[0, 0], upper=[0, 0], cpp=8, ppc=3)
    rows = np.arange(1, 25, dtype=np.uint16).reshape(3, 8) + 5000
    gpu.smem.view(np.uint16)[512:512 + 24] = rows.ravel()
    gpu.cp_async_bulk_tensor_store(tm, (0, 3, 1, 1), 1024, load_mode="im2col_no_offs")
    gpu.cp_async_bulk_commit_group()
    gpu.cp_async_bulk_wait_group(0)
    want = _nhwc()
    want[1, 1, 3], want[1, 2, 0], want[1, 2, 1] = rows     # (w=3,h=1) then wrap to (0,2), (1,2)
    assert (a == want).all()


def test_modes_belong_to_their_direction():
    """.im2col is a load mode, .im2col_no_offs a store mode (PTX .load_mode)."""
    a = _nhwc()
    gpu, g = _machine(a)
    tm = _map(a, g, lower=[0, 0], upper=[0, 0], cpp=8, ppc=2)
    bar = gpu.mbarrier(0).init(1)
    with pytest.raises(ValueError):
        gpu.cp_async_bulk_tensor_load(tm, (0, 0, 0, 0), 1024, bar, load_mode="im2col_no_offs")
    with pytest.raises(ValueError):
        gpu.cp_async_bulk_tensor_store(tm, (0, 0, 0, 0), 1024, load_mode="im2col")
    with pytest.raises(ValueError, match="0 im2col offsets given; .im2col with a rank-4 map takes 2") as e:
        gpu.cp_async_bulk_tensor_load(tm, (0, 0, 0, 0), 1024, bar, load_mode="im2col")
    assert e.value.rule == "im2col-info"


def test_reference_walk_sanity():
    """The reference's own walk, by hand: W in {-1, 1} (stride 2), H in {0, 1}."""
    assert pixels([8, 3, 2, 2], [1, 2, 1, 1], [-1, 0], [-1, 0], (0, 1, 0, 0), 5) == [
        (1, 0, 0), (-1, 1, 0), (1, 1, 0), (-1, 0, 1), (1, 0, 1)]


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_im2col_load_matches_reference(data):
    """Fast path == slow reference over random non-interleaved im2col loads."""
    rank = data.draw(st.sampled_from([3, 4, 5]))
    dt = data.draw(st.sampled_from([0, 1, 2, 4, 6, 9, 11]))
    e = {0: 1, 1: 2, 2: 4, 4: 8, 6: 2, 9: 2, 11: 4}[dt]
    sw = data.draw(st.sampled_from([0, 1, 2, 3]))
    maxk = {0: 8, 1: 2, 2: 4, 3: 8}[sw]
    cpp = data.draw(st.integers(1, maxk)) * 16 // e
    C = cpp * data.draw(st.integers(1, 2)) + data.draw(st.sampled_from([0, 16 // e]))
    sp = rank - 2
    gdim = [C] + [data.draw(st.integers(1, 5)) for _ in range(sp)] + [data.draw(st.integers(1, 3))]
    lim = {3: 3, 4: 3, 5: 2}[rank]
    lower = [data.draw(st.integers(-lim, 1)) for _ in range(sp)]
    upper = [data.draw(st.integers(-1, lim)) for _ in range(sp)]
    for i in range(sp):   # a non-empty box
        if gdim[i + 1] - 1 + upper[i] < lower[i]:
            upper[i] = lower[i] - gdim[i + 1] + 1
    es = [1] + [data.draw(st.integers(1, 3)) for _ in range(sp + 1)]
    ppc = data.draw(st.integers(1, 40))
    strides, acc = [], (C * e + 15) // 16 * 16
    for i in range(1, rank):
        strides.append(acc)
        acc *= gdim[i]
    mem = np.frombuffer(np.random.default_rng(data.draw(st.integers(0, 99))).bytes(acc), np.uint8).copy()
    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024)
    g = gpu.register(mem)
    try:
        tm = pa.TensorMap.im2col(dtype=dt, global_address=g.address, global_dim=gdim, global_strides=strides,
                                 pixel_box_lower=lower, pixel_box_upper=upper, channels_per_pixel=cpp,
                                 pixels_per_column=ppc, element_strides=es, swizzle=sw,
                                 oob_fill=data.draw(st.sampled_from([0, 1])) if dt >= 6 else 0)
    except pa.InvalidValue:
        return   # the driver rejects it too (checked against encode_errors elsewhere)
    c0 = data.draw(st.integers(0, max(0, (C - 1) // (16 // e)))) * (16 // e)
    coords = [c0] + [data.draw(st.integers(lower[i], gdim[i + 1] - 1 + upper[i])) for i in range(sp)]
    coords.append(data.draw(st.integers(0, gdim[-1] - 1)))
    offsets = [data.draw(st.integers(0, 3)) for _ in range(sp)]
    dst = data.draw(st.sampled_from([1024, 1040, 1152]))
    _load(gpu, tm, coords, offsets, dst)
    want = np.full(64 * 1024, 0xA5, dtype=np.uint8)
    ref_load({"tensorDataType_value": dt, "globalDim": gdim, "elementStrides": es, "globalStrides": strides,
              "channelsPerPixel": cpp, "pixelsPerColumn": ppc, "swizzle_value": sw,
              "pixelBoxLowerCorner": lower, "pixelBoxUpperCorner": upper, "oobFill_value": tm.fields["oob_fill"]},
             mem, 0, coords, offsets, want, dst)
    bad = np.nonzero(gpu.smem[8:] != want[8:])[0] + 8     # bytes 0-7: the mbarrier
    assert len(bad) == 0, f"first difference at shared byte {bad[0]}"
