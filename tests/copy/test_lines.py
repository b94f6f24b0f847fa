"""The vector line movers (csrc/core/copy/lines.c) against the slow reference.

Rows of one whole 128-byte line move a vector at a time (AVX-512: two
64-byte halves, AVX2: four 32-byte pairs, their 16-byte lanes permuted by the
swizzle; SSE2 and none: eight chunks). Every level the CPU has is run
(_core.simd_level caps it) on:

- tile loads of 128-byte rows (no swizzle and 128B; 8-, 16- and 32-bit types,
  TFLOAT32 rounded on the way in), boxes inside the tensor, across its edges
  and past it (fill rows through the line writer): tests/reference.py tile_load;
- tile stores of such rows (the line read back out of the swizzle; whole rows in one buffer
  are written row by row, copy/tile.c store_direct, also where dim-2 slices overlap in global
  memory): tests/reference.py tile_store.

Expected bytes come from the reference, never from the code under test.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


import reference as ref
from test_fast_paths import _load_matches_reference
from test_properties import SETTINGS, _machine_with_tensor
from vector_levels import SIMD_NAMES, vector_level

SMEM = 64 * 1024
ESIZE = {0: 1, 1: 2, 7: 4, 9: 2, 11: 4, 12: 4}   # uint8, uint16, f32, bf16, tf32, tf32_ftz


@pytest.fixture(params=range(len(SIMD_NAMES)), ids=SIMD_NAMES)
def level(request):
    with vector_level(request.param):
        yield request.param


@st.composite
def line_maps(draw):
    """A 2D or 3D map whose box rows are one 128-byte line, no swizzle or 128B."""
    dt = draw(st.sampled_from(sorted(ESIZE)))
    es = ESIZE[dt]
    swizzle = draw(st.sampled_from([0, 3]))
    rows = draw(st.integers(1, 24))
    gd0 = draw(st.sampled_from([128 // es, 128 // es + 16 // es, 256 // es]))
    gd1 = draw(st.integers(1, 40))
    stride = gd0 * es + 16 * draw(st.integers(0, 3))
    params = dict(tensorDataType_value=dt, globalDim=[gd0, gd1], globalStrides=[stride],
                  boxDim=[128 // es, rows], elementStrides=[1, 1], interleave_value=0,
                  swizzle_value=swizzle, oobFill_value=draw(st.sampled_from([0, 1])) if es > 1 and dt != 1 else 0)
    if draw(st.booleans()):
        params["globalDim"].append(draw(st.integers(1, 4)))
        # dim 2 a whole dim-1 extent further on, or less (slices that overlap in global
        # memory: the rows are then written in the walk's order, the reference's)
        params["globalStrides"].append(draw(st.sampled_from([stride * gd1 + 16 * draw(st.integers(0, 2)),
                                                             stride * draw(st.integers(1, gd1))])))
        params["boxDim"].append(draw(st.integers(1, 3)))
        params["elementStrides"].append(1)
    return params


def _coords(data, params, store):
    es = ESIZE[params["tensorDataType_value"]]
    per16 = 16 // es
    gd = params["globalDim"]
    lo = 0 if store else -2
    c0 = per16 * data.draw(st.integers(lo, (gd[0] + 2 * per16) // per16))
    rest = [data.draw(st.integers(-params["boxDim"][i] if not store else 0, gd[i] + 1))
            for i in range(1, len(gd))]
    return [c0] + rest


def test_line_loads_match_reference(level):
    @settings(max_examples=40, **SETTINGS)
    @given(data=st.data())
    def prop(data):
        params = data.draw(line_maps())
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        m, buf, tm = _machine_with_tensor(params, rng)
        if params["tensorDataType_value"] in (11, 12):   # NaN, infinity, ties at bit 13 among the values
            words = buf.bytes[: buf.bytes.size // 4 * 4].view(np.uint32)
            k = rng.integers(0, 5, words.size)
            words[k == 0] = 0x7F800000 | rng.integers(1, 1 << 23, int((k == 0).sum()), dtype=np.uint32)
            words[k == 1] = 0xFF800000
            words[k == 2] = (words[k == 2] & ~np.uint32(0x1FFF)) | np.uint32(0x1000)
        coords = _coords(data, params, store=False)
        step = 1024 if params["swizzle_value"] else 128
        dst = step * data.draw(st.integers(1, 8 if step == 1024 else 64))
        _load_matches_reference(m, buf, tm, params, coords, dst)
    prop()


def test_line_stores_match_reference(level):
    @settings(max_examples=40, **SETTINGS)
    @given(data=st.data())
    def prop(data):
        params = data.draw(line_maps())
        params["tensorDataType_value"] = {11: 7, 12: 7}.get(params["tensorDataType_value"],
                                                              params["tensorDataType_value"])
        params["oobFill_value"] = 0
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        m, buf, tm = _machine_with_tensor(params, rng)
        coords = _coords(data, params, store=True)
        step = 1024 if params["swizzle_value"] else 128
        src = step * data.draw(st.integers(1, 8 if step == 1024 else 64))
        m.smem[:] = rng.integers(0, 256, SMEM, dtype=np.uint8)
        want = bytearray(buf.bytes)
        ref.tile_store(params, want, buf.address, coords, bytes(m.smem), src)
        m.cp_async_bulk_tensor_store(tm, coords, src)
        m.cp_async_bulk_commit_group()
        m.cp_async_bulk_wait_group(0)
        got = np.asarray(buf.bytes)
        bad = np.nonzero(got != np.frombuffer(bytes(want), dtype=np.uint8))[0]
        assert len(bad) == 0, (f"{params} coords={coords} src={src}: first difference at byte {bad[0]}: "
                               f"model 0x{got[bad[0]]:02x}, reference 0x{want[bad[0]]:02x}")
    prop()
