"""The load of a .tile box wholly inside its tensor (copy/tile.c, load_inside: no
walk set up, the rows moved run by run) against the slow reference and against the
general row walk.

- boxes inside the tensor of every kind of tiled map (ranks 1-5, interleaved maps,
  element strides, every swizzle and type): tests/reference.py tile_load;
- the same inside box of a rank-2 map whose tensor is registered as two buffers
  cut at one of the box's rows: no single buffer holds the box, so the row walk
  moves it (its rows resolved one by one). Shared memory equals that of the load
  from one buffer, and the reference's.

Expected values come from the reference, never from the code under test.
"""
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ptxasync as pa

import reference as ref  # noqa: E402
from test_fast_paths import SMEM, _load_matches_reference  # noqa: E402
from test_properties import SETTINGS, _encode, _footprint, _machine_with_tensor, _smem_extent, tiled_maps  # noqa: E402


@st.composite
def inside_coords(draw, params):
    """Coordinates that put every element of the box inside the tensor (None: the
    box does not fit in it)."""
    geo = ref._Geometry(params)
    cs = []
    for i in range(geo.rank):
        hi = geo.gdim[i] - 1 - (geo.counts[i] - 1) * geo.steps[i]   # the last position inside
        if hi < 0:
            return None
        c = draw(st.integers(0, hi))
        if i == 0 and geo.interleave == 0:
            per16 = 16 // geo.esize if geo.esize < 16 else 1
            c = c // per16 * per16
        cs.append(int(c))
    return cs


@settings(max_examples=150, **SETTINGS)
@given(data=st.data())
def test_boxes_inside_match_reference(data):
    params = data.draw(tiled_maps())
    coords = data.draw(inside_coords(params))
    assume(coords is not None)
    assume(ref.tile_fault(params, coords, False) is None)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    m, buf, tm = _machine_with_tensor(params, rng)
    extent = _smem_extent(params)
    assume(extent + 2048 <= SMEM)
    dst = 1024 * data.draw(st.integers(1, (SMEM - extent) // 1024 - 1))
    _load_matches_reference(m, buf, tm, params, coords, dst)


def _load(m, tm, coords, dst):
    m.smem[:] = 0xA5
    bar = m.mbarrier(0).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    m.cp_async_bulk_tensor_load(tm, coords, dst, bar)
    assert bar.try_wait(0)
    return m.smem.copy()


@settings(max_examples=60, **SETTINGS)
@given(data=st.data())
def test_box_across_two_buffers_is_the_walk(data):
    dtype = data.draw(st.sampled_from([t for t in sorted(ref.ELEM_SIZE) if ref.ELEM_SIZE[t] in (1, 2, 4, 8)]))
    es = ref.ELEM_SIZE[dtype]
    swizzle = data.draw(st.sampled_from([0, 1, 2, 3]))
    inner = data.draw(st.sampled_from([16, 32, 64, 128] if swizzle == 0 else [{1: 32, 2: 64, 3: 128}[swizzle]]))
    rows = data.draw(st.integers(2, 40))
    gd0 = inner // es * data.draw(st.integers(1, 3))
    gd1 = rows + data.draw(st.integers(0, 20))
    stride = gd0 * es + 16 * data.draw(st.integers(0, 2))
    params = dict(tensorDataType_value=dtype, globalDim=[gd0, gd1], globalStrides=[stride],
                  boxDim=[inner // es, rows], elementStrides=[1, data.draw(st.sampled_from([1, 1, 2]))],
                  interleave_value=0, swizzle_value=swizzle, oobFill_value=0)
    step1 = params["elementStrides"][1]
    n1 = ref._Geometry(params).counts[1]   # rows of the box: every step1-th
    assume(n1 >= 2 and (n1 - 1) * step1 < gd1)
    c1 = data.draw(st.integers(0, gd1 - 1 - (n1 - 1) * step1))
    c0 = inner // es * data.draw(st.integers(0, gd0 // (inner // es) - 1))
    coords = [c0, c1]
    dst = 1024 * data.draw(st.integers(1, 8))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    nbytes = _footprint(params) + 256
    data_bytes = rng.integers(0, 256, nbytes, dtype=np.uint8)
    base = 1 << 32
    # one buffer: the box inside, in one lookup
    whole = pa.Machine(ctas=1, smem_bytes=SMEM)
    whole.register(data_bytes.copy(), address=base)
    params["global_address"] = base
    got_whole = _load(whole, _encode(params, base), coords, dst)
    # two buffers cut at the start of a row of the box past its first: the row walk
    cut = (c1 + step1 * data.draw(st.integers(1, n1 - 1))) * stride
    split = pa.Machine(ctas=1, smem_bytes=SMEM)
    split.register(data_bytes[:cut].copy(), address=base)
    split.register(data_bytes[cut:].copy(), address=base + cut)
    got_split = _load(split, _encode(params, base), coords, dst)
    want = bytearray(b"\xa5" * SMEM)
    want[0:8] = bytes(got_whole[0:8])
    ref.tile_load(params, bytes(data_bytes), base, coords, want, dst)
    want = np.frombuffer(bytes(want), dtype=np.uint8)
    assert np.array_equal(got_whole, got_split), f"{params} coords={coords} cut={cut}"
    assert np.array_equal(got_whole, want), f"{params} coords={coords}"


def test_unswizzled_box_as_wide_as_its_tensor_is_one_run():
    """A box whose rows are whole rows of a dense tensor, unswizzled, is one run of
    bytes on both sides (put_rows hands it to memcpy whole): shared memory holds
    the tensor's rows as NumPy slices them, and nothing past the box changes."""
    t = np.arange(64 * 200, dtype=np.float32).reshape(200, 64)
    gpu = pa.Machine(ctas=1, smem_bytes=SMEM)
    tm = pa.TensorMap.tiled("f32", gpu.register(t).address, [64, 200], [256], [64, 100])
    gpu.smem[:] = 0xA5
    bar = gpu.mbarrier(0).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, [0, 37], 1024, bar)
    assert bar.try_wait(0)
    assert np.array_equal(gpu.smem[1024:1024 + 100 * 256].view(np.float32).reshape(100, 64), t[37:137])
    assert (gpu.smem[8:1024] == 0xA5).all() and (gpu.smem[1024 + 100 * 256:] == 0xA5).all()
