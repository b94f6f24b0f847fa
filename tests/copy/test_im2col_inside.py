""".im2col columns wholly inside the tensor (csrc/core/copy/tile.c, column_inside:
the W lines worked out from the plan, no walk set up) against the slow reference
(tests/im2col_reference.py) and against the general pixel walk.

- columns near the tensor's edges (padding pixels, images past N, channels past C
  on some, none on others; offsets, traversal strides, ranks 3-5, every type with
  TFLOAT32 rounding, dense images whose W lines follow one another in memory and
  padded ones whose lines do not): the reference;
- the same inside column from a tensor registered as two buffers cut at one of its
  pixels: no single buffer holds the column, so the pixel walk moves it. Shared
  memory equals that of the load from one buffer, and the reference's;
- the rules a load's operands break raise what they raised before the one-pass
  check of those rules (pa_im2col_start_rules).

Expected bytes come from the reference, never from the code under test.
"""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ptxasync as pa

from im2col_reference import im2col_load as ref_load
from im2col_reference import pixels
from test_properties import SETTINGS

ESIZE = {0: 1, 1: 2, 7: 4, 9: 2, 11: 4}   # u8, u16, f32, bf16, tf32
SMEM = 96 * 1024
SEEN = {"inside": 0, "outside": 0}


@st.composite
def columns(draw):
    """A map, coordinates and offsets of a column near the tensor's edges; most
    made to have every pixel inside it (boxes inside the image, offsets that keep
    them there, the column cut before its first pixel outside), some of those
    with channels past C."""
    shape = draw(st.sampled_from(["inside", "inside", "channels past C", "edges"]))
    keep_inside = shape != "edges"
    rank = draw(st.sampled_from([3, 4, 5]))
    dt = draw(st.sampled_from(sorted(ESIZE)))
    e = ESIZE[dt]
    sw = draw(st.sampled_from([0, 3, 3]))
    row_bytes = draw(st.sampled_from([16, 32, 64, 128]))
    cpp = row_bytes // e
    per16 = 16 // e if e < 16 else 1
    C = cpp + per16 * draw(st.integers(0, 2))
    c0 = per16 * draw(st.integers(0, (C - cpp) // per16 + (shape == "edges")))
    if shape == "channels past C":
        c0 = C - cpp + per16 * draw(st.integers(1, max(1, cpp // per16)))
    sp = rank - 2
    gdim = [C] + [draw(st.integers(1, {3: 20, 4: 8, 5: 5}[rank])) for _ in range(sp)] + [draw(st.integers(1, 4))]
    lower = [draw(st.integers(0 if keep_inside else -1, 1)) for _ in range(sp)]
    upper = [draw(st.integers(-3, 0 if keep_inside else 1)) for _ in range(sp)]
    for i in range(sp):   # a non-empty box
        if gdim[i + 1] - 1 + upper[i] < lower[i]:
            upper[i] = lower[i] - gdim[i + 1] + 1
    es = [1] + [draw(st.sampled_from([1, 1, 2])) for _ in range(sp + 1)]
    pitch = max(row_bytes, 128 if sw else 0)
    ppc = draw(st.integers(1, min(300, 60 * 1024 // pitch)))
    strides, acc = [], C * e + 16 * draw(st.sampled_from([0, 0, 1]))   # dense pixels, or 16 bytes apart
    for i in range(1, rank):
        strides.append(acc)
        acc *= gdim[i]
    coords = [c0] + [draw(st.integers(lower[i], gdim[i + 1] - 1 + upper[i])) for i in range(sp)]
    coords.append(draw(st.integers(0, gdim[-1] - 1)))
    offsets = [draw(st.integers(0, max(0, -upper[i]) if keep_inside else 2)) for i in range(sp)]
    params = {"tensorDataType_value": dt, "globalDim": gdim, "elementStrides": es, "globalStrides": strides,
              "channelsPerPixel": cpp, "pixelsPerColumn": ppc, "swizzle_value": sw,
              "pixelBoxLowerCorner": lower, "pixelBoxUpperCorner": upper, "oobFill_value": 0}
    if keep_inside:
        walk = pixels(gdim, es, lower, upper, coords, ppc)
        params["pixelsPerColumn"] = next((k for k, px in enumerate(walk) if not pixel_inside(gdim, px, offsets)),
                                         ppc) or 1
    return params, coords, offsets, acc, draw(st.integers(0, 2**32 - 1))


def at_of(px, offsets):
    """A pixel's coordinates (W, H, D..., N) with the im2col offsets added."""
    return [px[i] + (offsets[i] if i < len(offsets) else 0) for i in range(len(px))]


def pixel_inside(gdim, px, offsets):
    return all(0 <= a < gdim[i + 1] for i, a in enumerate(at_of(px, offsets)))


def inside(params, coords, offsets):
    """Every pixel of the column and all of its channels inside the tensor (the
    reference's walk)."""
    gdim = params["globalDim"]
    if coords[0] + params["channelsPerPixel"] > gdim[0]:
        return False
    for px in pixels(gdim, params["elementStrides"], params["pixelBoxLowerCorner"],
                     params["pixelBoxUpperCorner"], coords, params["pixelsPerColumn"]):
        if not pixel_inside(gdim, px, offsets):
            return False
    return True


def memory(params, nbytes, seed):
    mem = np.frombuffer(np.random.default_rng(seed).bytes(nbytes), np.uint8).copy()
    if params["tensorDataType_value"] == 11:   # NaN, infinities and ties at bit 13 among the values
        w = mem[: nbytes // 4 * 4].view(np.uint32)
        w[::7] = 0x7F800001
        w[3::7] = 0xFF800000
        w[5::7] = (w[5::7] & ~np.uint32(0x1FFF)) | np.uint32(0x1000)
    return mem


def tensor_map(params, base):
    """The map (None: the driver rejects it)."""
    try:
        return pa.TensorMap.im2col(dtype=params["tensorDataType_value"], global_address=base,
                                   global_dim=params["globalDim"], global_strides=params["globalStrides"],
                                   pixel_box_lower=params["pixelBoxLowerCorner"],
                                   pixel_box_upper=params["pixelBoxUpperCorner"],
                                   channels_per_pixel=params["channelsPerPixel"],
                                   pixels_per_column=params["pixelsPerColumn"],
                                   element_strides=params["elementStrides"], swizzle=params["swizzle_value"])
    except pa.InvalidValue:
        return None


def load(gpu, params, base, coords, offsets, tm=None, dst=1024):
    """The column loaded through `gpu`: shared memory (None: the driver rejects the map)."""
    tm = tm or tensor_map(params, base)
    if tm is None:
        return None
    gpu.smem[:] = 0xA5
    bar = gpu.mbarrier(0).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, coords, dst, bar, load_mode="im2col", im2col_offsets=offsets)
    assert bar.try_wait(0)
    return gpu.smem.copy()


def want_of(params, mem, coords, offsets, dst=1024):
    want = np.full(SMEM, 0xA5, dtype=np.uint8)
    ref_load(params, mem, 0, coords, offsets, want, dst)
    return want


def test_columns_near_the_edges_match_reference():
    @settings(max_examples=150, **SETTINGS)
    @given(col=columns())
    def prop(col):
        params, coords, offsets, nbytes, seed = col
        mem = memory(params, nbytes, seed)
        gpu = pa.Machine(ctas=1, smem_bytes=SMEM)
        got = load(gpu, params, gpu.register(mem).address, coords, offsets)
        assume(got is not None)
        SEEN["inside" if inside(params, coords, offsets) else "outside"] += 1
        want = want_of(params, mem, coords, offsets)
        bad = np.nonzero(got[8:] != want[8:])[0] + 8   # bytes 0-7: the mbarrier
        assert len(bad) == 0, f"{params} coords={coords} offsets={offsets}: shared byte {bad[0]}"
    SEEN.update(inside=0, outside=0)
    prop()
    assert SEEN["inside"] >= 15 and SEEN["outside"] >= 15, SEEN   # both paths taken


def test_column_across_two_buffers_is_the_walk():
    @settings(max_examples=80, **SETTINGS)
    @given(col=columns(), pick=st.integers(0, 2**16))
    def prop(col, pick):
        params, coords, offsets, nbytes, seed = col
        assume(inside(params, coords, offsets))
        px = pixels(params["globalDim"], params["elementStrides"], params["pixelBoxLowerCorner"],
                    params["pixelBoxUpperCorner"], coords, params["pixelsPerColumn"])
        offs = sorted({sum(a * s for a, s in zip(at_of(p, offsets), params["globalStrides"])) for p in px})
        assume(len(offs) >= 2)
        # cut at a pixel past the lowest: no pixel's bytes cross it (pixels are a
        # stride of at least C elements apart), but the column's do
        cut = offs[1 + pick % (len(offs) - 1)]
        mem = memory(params, nbytes, seed)
        base = 1 << 32
        whole = pa.Machine(ctas=1, smem_bytes=SMEM)
        whole.register(mem.copy(), address=base)
        got_whole = load(whole, params, base, coords, offsets)
        assume(got_whole is not None)
        split = pa.Machine(ctas=1, smem_bytes=SMEM)
        split.register(mem[:cut].copy(), address=base)
        split.register(mem[cut:].copy(), address=base + cut)
        got_split = load(split, params, base, coords, offsets)
        want = want_of(params, mem, coords, offsets)
        assert np.array_equal(got_whole[8:], got_split[8:]), f"{params} coords={coords} offsets={offsets} cut={cut}"
        assert np.array_equal(got_whole[8:], want[8:]), f"{params} coords={coords} offsets={offsets}"
    prop()


# the bench's column: 64 x 64 x 64 x 64 (N, H, W, C) bf16, 128B swizzle, 256 pixels
DENSE = {"tensorDataType_value": 9, "globalDim": [64, 64, 64, 64], "elementStrides": [1, 1, 1, 1],
         "globalStrides": [128, 128 * 64, 128 * 64 * 64], "channelsPerPixel": 64, "pixelsPerColumn": 256,
         "swizzle_value": 3, "pixelBoxLowerCorner": [0, 0], "pixelBoxUpperCorner": [0, 0], "oobFill_value": 0}


@pytest.mark.parametrize("coords,offsets", [
    ([0, 0, 0, 0], [0, 0]),     # image rows 0-3: one run of 256 pixels
    ([0, 5, 60, 3], [0, 0]),    # from W = 5 to row 63 and into the next image
    ([0, 17, 2, 63], [0, 0]),   # the last image: the walk runs past N (fill)
    ([0, 3, 1, 7], [1, 2]),     # offsets: W 64 is past the edge (fill)
])
@pytest.mark.parametrize("swizzle", [3, 0])
def test_dense_image_columns(coords, offsets, swizzle):
    """Unswizzled, a dense column's pixels are one run of bytes in global and in
    shared memory (put_rows hands it to memcpy whole)."""
    params = dict(DENSE, swizzle_value=swizzle)
    mem = memory(params, 128 * 64 ** 3, 7)
    gpu = pa.Machine(ctas=1, smem_bytes=SMEM)
    got = load(gpu, params, gpu.register(mem).address, coords, offsets)
    want = want_of(params, mem, coords, offsets)
    assert np.array_equal(got[8:], want[8:])


# a small one for the rules (4D: offsets of 8 bits)
SMALL = dict(DENSE, globalDim=[64, 8, 8, 2], globalStrides=[128, 128 * 8, 128 * 64], pixelsPerColumn=16)


def rule_error(gpu, tm, coords, offsets):
    bar = gpu.mbarrier(8).init(1)
    with pytest.raises(pa.PtxAsyncError) as e:
        gpu.cp_async_bulk_tensor_load(tm, coords, 1024, bar, load_mode="im2col", im2col_offsets=offsets)
    return e.value


@pytest.mark.parametrize("coords,offsets,words", [
    ([0, 8, 0, 0], [0, 0], "outside the bounding box"),
    ([0, 0, -1, 0], [0, 0], "outside the bounding box"),
    ([0, 0, 0, 0], [256, 0], "im2col offset 0 = 256"),
    ([0, 0, 0, 0], [0, 300], "im2col offset 1 = 300"),
    ([4, 0, 0, 0], [0, 0], "not a multiple of 16 bytes"),
])
def test_rules_of_the_operands(coords, offsets, words):
    """A first load plans the map; a second, through the machine's memo, checks
    the operands alone. Both name the broken rule, as a fresh machine does."""
    mem = memory(SMALL, 128 * 128, 1)
    gpu, fresh = pa.Machine(ctas=1, smem_bytes=SMEM), pa.Machine(ctas=1, smem_bytes=SMEM)
    tm = tensor_map(SMALL, gpu.register(mem).address)
    assert load(gpu, SMALL, None, [0, 0, 0, 0], [0, 0], tm=tm) is not None
    again = rule_error(gpu, tm, coords, offsets)
    first = rule_error(fresh, tensor_map(SMALL, fresh.register(mem).address), coords, offsets)
    assert type(again) is type(first) and str(again) == str(first)
    assert words in str(first)
