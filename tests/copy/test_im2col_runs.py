"""im2col loads of whole pixels, moved as runs along W (csrc/core/copy/tile.c,
load_pixels), against the slow reference (tests/im2col_reference.py).

The pixels of a column from the current one to the end of the bounding box's
W line, or to the tensor's edge, are one run a fixed stride apart in global
memory; padding pixels are fill rows. The maps here have whole pixels
(channelsPerPixel = C, c0 = 0) and long W lines, so runs of many pixels meet
padding, the wrap to the next H / D / image, traversal strides, im2col offsets
and TFLOAT32 rounding; 128-byte pixels under the 128B swizzle take the vector
line writer. Every vector level the CPU has is run.

Expected bytes come from the reference, never from the code under test.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxasync as pa

from im2col_reference import im2col_load as ref_load
from vector_levels import vector_level

ESIZE = {0: 1, 1: 2, 7: 4, 9: 2, 11: 4}


@pytest.fixture(params=[0, 1, 3], ids=["none", "sse2", "avx512"])
def level(request):
    with vector_level(request.param):
        yield request.param


def test_whole_pixel_runs_match_reference(level):
    @settings(max_examples=60, deadline=None)
    @given(data=st.data())
    def prop(data):
        rank = data.draw(st.sampled_from([3, 4, 5]))
        dt = data.draw(st.sampled_from(sorted(ESIZE)))
        e = ESIZE[dt]
        sw = data.draw(st.sampled_from([0, 3, 3]))
        pixel = data.draw(st.sampled_from([16, 32, 64, 128]))
        C = pixel // e
        sp = rank - 2
        wmax = {3: 24, 4: 12, 5: 6}[rank]
        gdim = [C, data.draw(st.integers(1, wmax))] + [data.draw(st.integers(1, 3)) for _ in range(sp - 1)]
        gdim.append(data.draw(st.integers(1, 3)))
        lim = {3: 3, 4: 3, 5: 2}[rank]
        lower = [data.draw(st.integers(-lim, 1)) for _ in range(sp)]
        upper = [data.draw(st.integers(-1, lim)) for _ in range(sp)]
        for i in range(sp):   # a non-empty box
            if gdim[i + 1] - 1 + upper[i] < lower[i]:
                upper[i] = lower[i] - gdim[i + 1] + 1
        es = [1] + [data.draw(st.integers(1, 3)) for _ in range(sp + 1)]
        pitch = max(pixel, 128 if sw else 0)   # a row's pitch: at least the swizzle span
        ppc = data.draw(st.integers(1, 60 * 1024 // pitch))
        strides, acc = [], C * e + 16 * data.draw(st.integers(0, 1))
        for i in range(1, rank):
            strides.append(acc)
            acc *= gdim[i]
        mem = np.frombuffer(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).bytes(acc), np.uint8).copy()
        if dt == 11:   # NaN, infinities and ties at bit 13 among the values
            w = mem[: acc // 4 * 4].view(np.uint32)
            w[::7] = 0x7F800001
            w[3::7] = 0xFF800000
            w[5::7] = (w[5::7] & ~np.uint32(0x1FFF)) | np.uint32(0x1000)
        gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024)
        g = gpu.register(mem)
        try:
            tm = pa.TensorMap.im2col(dtype=dt, global_address=g.address, global_dim=gdim, global_strides=strides,
                                     pixel_box_lower=lower, pixel_box_upper=upper, channels_per_pixel=C,
                                     pixels_per_column=ppc, element_strides=es, swizzle=sw,
                                     oob_fill=data.draw(st.sampled_from([0, 1])) if dt >= 7 else 0)
        except pa.InvalidValue:
            return   # the driver rejects it too
        coords = [0] + [data.draw(st.integers(lower[i], gdim[i + 1] - 1 + upper[i])) for i in range(sp)]
        coords.append(data.draw(st.integers(0, gdim[-1] - 1)))
        offsets = [data.draw(st.integers(0, 3)) for _ in range(sp)]
        dst = 1024 if sw else data.draw(st.sampled_from([1024, 1040, 1152]))
        gpu.smem[:] = 0xA5
        bar = gpu.mbarrier(0).init(1)
        bar.arrive_expect_tx(tm.box_bytes)
        gpu.cp_async_bulk_tensor_load(tm, coords, dst, bar, load_mode="im2col", im2col_offsets=offsets)
        assert bar.try_wait(0)
        want = np.full(64 * 1024, 0xA5, dtype=np.uint8)
        ref_load({"tensorDataType_value": dt, "globalDim": gdim, "elementStrides": es, "globalStrides": strides,
                  "channelsPerPixel": C, "pixelsPerColumn": ppc, "swizzle_value": sw,
                  "pixelBoxLowerCorner": lower, "pixelBoxUpperCorner": upper,
                  "oobFill_value": tm.fields["oob_fill"]},
                 mem, 0, coords, offsets, want, dst)
        bad = np.nonzero(gpu.smem[8:] != want[8:])[0] + 8     # bytes 0-7: the mbarrier
        assert len(bad) == 0, (f"gdim={gdim} es={es} lower={lower} upper={upper} coords={coords} "
                               f"offsets={offsets} ppc={ppc}: first difference at shared byte {bad[0]}")
    prop()


def test_loads_of_one_map_through_one_machine_match_reference():
    """A machine keeps the layout of the maps it planned last (copy.h, the tile
    memo): later .im2col loads of the same map run only the rules of their
    operands. A run of loads with random coordinates and offsets, each against
    the reference, and operands that break a rule fail as on a fresh machine."""
    @settings(max_examples=25, deadline=None)
    @given(data=st.data())
    def prop(data):
        gdim = [64, 9, 5, 2]                       # C (bf16, 128-byte pixels), W, H, N
        strides = [128, 128 * 9, 128 * 9 * 5]
        lower, upper = [-1, -1], [1, 0]
        mem = np.frombuffer(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).bytes(strides[-1] * 2),
                            np.uint8).copy()
        params = dict(dtype=9, global_dim=gdim, global_strides=strides, pixel_box_lower=lower,
                      pixel_box_upper=upper, channels_per_pixel=64, element_strides=[1, 1, 1, 1], swizzle=3)
        gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024)
        g = gpu.register(mem)
        ppc = data.draw(st.integers(1, 40))
        tm = pa.TensorMap.im2col(global_address=g.address, pixels_per_column=ppc, **params)
        bar = gpu.mbarrier(0).init(1)
        parity = 0
        for _ in range(data.draw(st.integers(2, 6))):
            coords = [0, data.draw(st.integers(-2, 10)), data.draw(st.integers(-2, 5)), data.draw(st.integers(0, 1))]
            offsets = [data.draw(st.integers(0, 255)), data.draw(st.integers(0, 300))]
            inside = lower[0] <= coords[1] <= gdim[1] - 1 + upper[0] and lower[1] <= coords[2] <= gdim[2] - 1 + upper[1]
            if not inside or offsets[1] > 255:
                fresh = pa.Machine(ctas=1, smem_bytes=64 * 1024)
                fmap = pa.TensorMap.im2col(global_address=fresh.register(mem).address, pixels_per_column=ppc,
                                           **params)
                fbar = fresh.mbarrier(0).init(1)
                with pytest.raises(pa.PtxAsyncError) as want:
                    fresh.cp_async_bulk_tensor_load(fmap, coords, 1024, fbar, load_mode="im2col",
                                                    im2col_offsets=offsets)
                with pytest.raises(type(want.value)) as got:
                    gpu.cp_async_bulk_tensor_load(tm, coords, 1024, bar, load_mode="im2col", im2col_offsets=offsets)
                assert str(got.value) == str(want.value)
                continue
            gpu.smem[:] = 0xA5
            bar.arrive_expect_tx(tm.box_bytes)
            gpu.cp_async_bulk_tensor_load(tm, coords, 1024, bar, load_mode="im2col", im2col_offsets=offsets)
            assert bar.try_wait(parity)
            parity ^= 1
            want = np.full(64 * 1024, 0xA5, dtype=np.uint8)
            ref_load({"tensorDataType_value": 9, "globalDim": gdim, "elementStrides": [1, 1, 1, 1],
                      "globalStrides": strides, "channelsPerPixel": 64, "pixelsPerColumn": ppc, "swizzle_value": 3,
                      "pixelBoxLowerCorner": lower, "pixelBoxUpperCorner": upper, "oobFill_value": 0},
                     mem, 0, coords, offsets, want, 1024)
            bad = np.nonzero(gpu.smem[1024:] != want[1024:])[0] + 1024
            assert len(bad) == 0, f"coords={coords} offsets={offsets} ppc={ppc}: shared byte {bad[0]}"
    prop()
