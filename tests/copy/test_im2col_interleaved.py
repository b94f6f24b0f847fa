"""Interleaved im2col maps whose pixel is not one slice (docs/im2col-mode.md 3.1, 3.2).

The documentation sizes an im2col pixel as channelsPerPixel * elemsize; with
INTERLEAVE_16B / 32B the hardware moves (and credits) one whole 16/32-byte slice
per pixel instead. Evidence: tests/data/im2col_interleaved.jsonl.gz (30 maps with
16-byte pixels recorded on an H200, tests/data/README.md "Interleaved im2col loads
with 16-byte pixels") and tests/data/im2col_interleaved_device.jsonl.gz (232 cases
recorded with tools/device/im2col_probe.cu on an H100). Expected values are written
out by hand, computed by tests/im2col_reference.py, or read from those recordings;
never produced by the code under test.
"""
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptxasync as pa
from ptxasync import golden

from im2col_reference import (im2col_load as ref_load, im2col_store_interleaved as ref_store,  # noqa: E402
                              pixels_interleaved)

import testpaths  # noqa: E402
DATA = Path(testpaths.DATA)


def _cases(name):
    with gzip.open(DATA / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _loads(name):
    for c in _cases(name):
        if c["family"] == "im2col_load" and not c.get("encode_result"):
            for ld in c["loads"]:
                yield c, ld


# ---- the recorded sets replay byte for byte --------------------------------------------------

def test_golden_im2col_interleaved_all_pass():
    """All 30 public maps of im2col_interleaved (88 loads: 61 completed, 27 faults,
    1 map the driver rejected) reproduce: bytes, tx count, faults."""
    results, failures = golden.check_file(DATA / "im2col_interleaved.jsonl.gz")
    assert results == {"im2col_load": {"passed": 30, "failed": 0, "unsupported": 0}}, failures[:5]


def test_device_probe_interleaved_pixels_all_pass():
    """The 232 probe cases (16-byte pixels of 32B maps with every swizzle, wider
    pixels of 16B and 32B maps; loads, stores, add reductions; faults) reproduce."""
    results, failures = golden.check_file(DATA / "im2col_interleaved_device.jsonl.gz")
    assert results == {"im2col_load": {"passed": 194, "failed": 0, "unsupported": 0},
                       "tile_store": {"passed": 32, "failed": 0, "unsupported": 0},
                       "tensor_reduce": {"passed": 6, "failed": 0, "unsupported": 0}}, failures[:5]


# ---- rules, read off the recordings ------------------------------------------------------------

@pytest.mark.parametrize("name", ["im2col_interleaved.jsonl.gz", "im2col_interleaved_device.jsonl.gz"])
def test_recorded_credit_is_one_slice_per_pixel_or_an_early_completion(name):
    """docs/im2col-mode.md 3.1 / 3.2: every completed interleaved load credited
    T = pixelsPerColumn * slice bytes, or completed exactly at expect_tx E < T
    where E is a multiple of the slice (timing; tile-mode.md 7.2)."""
    seen = {"T": 0, "early": 0}
    for c, ld in _loads(name):
        if ld.get("error"):
            continue
        S = 16 if c["params"]["interleave_value"] == 1 else 32
        T, E = c["params"]["pixelsPerColumn"] * S, ld["expect_tx"]
        if ld["tx_bytes_observed"] == T:
            seen["T"] += 1
        else:
            assert ld["mbar_status"] == "completed" and ld["tx_bytes_observed"] == E < T and E % S == 0, \
                (c["id"], ld["index"])
            seen["early"] += 1
    assert seen["T"] > 0 and seen["early"] > 0


def test_same_load_credits_either_way_in_repeated_launches():
    """docs/im2col-mode.md 3.2: the 1x / 2x credit is timing, not a rule of the
    parameters: each repeated probe load (8 launches, same map, coordinates and
    data) both completed at expect_tx and credited twice it."""
    runs = {}
    for c, ld in _loads("im2col_interleaved_device.jsonl.gz"):
        if c["probe_category"] == "load_px16_repeat":
            key = json.dumps([c["params"], c["global_window_hex"][:64]], sort_keys=True)
            runs.setdefault(key, []).append(ld["tx_bytes_observed"] // ld["expect_tx"])
    assert len(runs) == 2
    for ratios in runs.values():
        assert len(ratios) == 8 and set(ratios) == {1, 2}


@pytest.mark.parametrize("name, faults", [("im2col_interleaved.jsonl.gz", 27),
                                          ("im2col_interleaved_device.jsonl.gz", 19)])
def test_recorded_faults_are_start_pixels_outside_the_box(name, faults):
    """docs/im2col-mode.md 4: of the interleaved loads and stores exactly those whose
    start pixel (coordinates 0..r-3) lies outside [lower, globalDim - 1 + upper] faulted."""
    n = 0
    for c in _cases(name):
        p = c["params"]
        if c.get("encode_result"):
            continue
        runs = c["loads"] if c["family"] == "im2col_load" else [dict(c, coords=p["coords"])]
        for run in runs:
            outside = any(not (p["pixelBoxLowerCorner"][i] <= run["coords"][i]
                               <= p["globalDim"][i] - 1 + p["pixelBoxUpperCorner"][i])
                          for i in range(p["tensorRank"] - 2))
            assert outside == (run.get("error") == "cudaErrorIllegalInstruction"), c["id"]
            n += outside
    assert n == faults


def test_reference_replays_the_recorded_loads():
    """The slow reference (tests/im2col_reference.py) itself reproduces every
    completed recorded 16-byte-pixel load: the bytes it writes equal the dump
    (bytes it reads past the recorded window are left out)."""
    checked = 0
    for name in ("im2col_interleaved.jsonl.gz", "im2col_interleaved_device.jsonl.gz"):
        for c, ld in _loads(name):
            if ld.get("error"):
                continue
            p = c["params"]
            win = np.frombuffer(bytes.fromhex(c["global_window_hex"]), np.uint8)
            pad = 1 << 16
            got = []
            for fill in (0x00, 0xFF):
                mem = np.full(len(win) + 2 * pad + (1 << 20), fill, np.uint8)
                mem[pad:pad + len(win)] = win
                out = {}
                ref_load(p, mem, pad - c["global_window_offset"], ld["coords"], ld["im2col_offsets"],
                         out, ld["smem_dst_addr"])
                got.append(out)
            dump = bytes.fromhex(ld["smem_hex"])
            region = ld["smem_region_addr"]
            for a, v in got[0].items():
                if v == got[1][a] and a - region < len(dump):
                    assert dump[a - region] == v, (c["id"], ld["index"], a)
                    checked += 1
    assert checked > 100_000


def test_reference_replays_the_recorded_stores():
    """The slow store reference reproduces every completed probe store of an
    interleaved map (16-byte and wider pixels): the whole window after the store."""
    n = 0
    for c in _cases("im2col_interleaved_device.jsonl.gz"):
        if c["family"] != "tile_store" or c.get("error"):
            continue
        p = c["params"]
        mem = bytearray.fromhex(c["global_before_hex"])
        smem = {c["smem_region_addr"] + i: v for i, v in enumerate(bytes.fromhex(c["smem_hex"]))}
        ref_store(p, mem, -c["global_window_offset"], p["coords"], smem, c["smem_src_addr"])
        assert mem.hex() == c["global_after_hex"], c["id"]
        n += 1
    assert n == 28


# ---- rules on hand-made maps --------------------------------------------------------------------

def _il_map(g, il, dtype, cpp, ppc, gdim, strides, lower, upper, es=None, **kw):
    return pa.TensorMap.im2col(dtype=dtype, global_address=g.address, global_dim=gdim, global_strides=strides,
                               pixel_box_lower=lower, pixel_box_upper=upper, channels_per_pixel=cpp,
                               pixels_per_column=ppc, element_strides=es or [1] * len(gdim),
                               interleave=il, swizzle=1 if il == 2 else 0, **kw)


def _setup(nbytes):
    gpu = pa.Machine(ctas=1, smem_bytes=16 * 1024, hazards="report")   # expect_tx below the bytes credited: reported
    mem = (np.arange(nbytes) % 251).astype(np.uint8)
    return gpu, mem, gpu.register(mem)


def _load(gpu, tm, coords, offsets, expect, bar_addr=0):
    gpu.smem[:] = 0xA5
    bar = gpu.mbarrier(bar_addr).init(1)
    bar.arrive_expect_tx(expect)
    gpu.cp_async_bulk_tensor_load(tm, coords, 1024, bar, load_mode="im2col", im2col_offsets=offsets)
    done = bar.try_wait(0)
    return done, bar.state["tx"]


def test_16_byte_pixel_of_a_32B_map_moves_its_whole_slice():
    """docs/im2col-mode.md 3.1: a 16-byte pixel (8 x u16) of an INTERLEAVE_32B map
    moves the 32-byte slice holding it, rows packed at 32 bytes, and credits 32
    bytes per pixel: with the documented expect_tx (3 * 16) the tx-count ends at
    48 - 96 = -48 and the phase stays open."""
    gpu, mem, g = _setup(4 * 32)
    # rank 3: W (4 slices), C/x (1), N (1); slices are 32 bytes apart
    tm = _il_map(g, 2, "u16", cpp=8, ppc=3, gdim=[4, 1, 1], strides=[128, 128], lower=[0], upper=[0])
    assert tm.box_bytes == 3 * 32
    done, tx = _load(gpu, tm, (1, 0, 0), (0,), expect=3 * 16)
    assert not done and tx == -48
    assert gpu.smem[1024:1024 + 96].tobytes() == mem[32:128].tobytes()   # slices W = 1, 2, 3
    assert (gpu.smem[1024 + 96:1024 + 128] == 0xA5).all()


def test_wide_pixel_moves_one_slice():
    """docs/im2col-mode.md 3.1 (probe: 26/26 loads): a 64-byte pixel of an
    INTERLEAVE_32B map and a 48-byte pixel of an INTERLEAVE_16B map move one slice
    each; the phase never completes at the documented expect_tx."""
    gpu, mem, g = _setup(8 * 32)
    tm = _il_map(g, 2, "u32", cpp=16, ppc=2, gdim=[8, 1, 1], strides=[256, 256], lower=[0], upper=[0])
    assert tm.box_bytes == 2 * 32
    done, tx = _load(gpu, tm, (2, 0, 0), (0,), expect=2 * 64)
    assert not done and tx == 128 - 64
    assert gpu.smem[1024:1024 + 64].tobytes() == mem[64:128].tobytes()
    assert (gpu.smem[1024 + 64:1024 + 128] == 0xA5).all()
    tm = _il_map(g, 1, "u16", cpp=24, ppc=3, gdim=[8, 1, 1], strides=[128, 128], lower=[0], upper=[0])
    assert tm.box_bytes == 3 * 16
    done, tx = _load(gpu, tm, (5, 0, 0), (0,), expect=3 * 16, bar_addr=8)
    assert done
    assert gpu.smem[1024:1024 + 48].tobytes() == mem[80:128].tobytes()   # W = 5, 6, 7


def test_out_of_bounds_pixel_is_a_slice_of_fill():
    """docs/im2col-mode.md 3.1: a padding pixel of a 16-byte-pixel map is 32 bytes
    of fill (0x7FF7 with OOB_FILL_NAN_REQUEST_ZERO_FMA)."""
    gpu, mem, g = _setup(4 * 32)
    tm = _il_map(g, 2, "f16", cpp=8, ppc=2, gdim=[4, 1, 1], strides=[128, 128], lower=[-1], upper=[0],
                 oob_fill=1)
    _load(gpu, tm, (-1, 0, 0), (0,), expect=64)                    # W = -1 (padding), then W = 0
    assert gpu.smem.view(np.uint16)[512:528].tolist() == [0x7FF7] * 16
    assert gpu.smem[1056:1088].tobytes() == mem[0:32].tobytes()


def test_store_writes_the_whole_slice():
    """docs/im2col-mode.md 3.1 (probe: 14/14 stores, 6/6 reductions): an
    .im2col_no_offs store of a 16-byte-pixel map writes 32 bytes per pixel."""
    gpu, mem, g = _setup(4 * 32)
    before = mem.copy()
    tm = _il_map(g, 2, "u8", cpp=16, ppc=2, gdim=[4, 1, 1], strides=[128, 128], lower=[0], upper=[0])
    gpu.smem[1024:1088] = np.arange(200, 264) % 256
    gpu.cp_async_bulk_tensor_store(tm, (1, 0, 0), 1024, load_mode="im2col_no_offs")
    gpu.cp_async_bulk_commit_group()
    gpu.cp_async_bulk_wait_group(0)
    want = before.copy()
    want[32:96] = np.arange(200, 264) % 256
    assert mem.tolist() == want.tolist()


def test_start_pixel_outside_the_box_faults_for_16_byte_pixels():
    """docs/im2col-mode.md 4 (27/27 recorded faults): W below the lower corner."""
    gpu, mem, g = _setup(4 * 32)
    tm = _il_map(g, 2, "u16", cpp=8, ppc=2, gdim=[4, 1, 1], strides=[128, 128], lower=[1], upper=[0])
    bar = gpu.mbarrier(0).init(1)
    with pytest.raises(pa.IllegalInstruction, match="bounding box"):
        gpu.cp_async_bulk_tensor_load(tm, (0, 0, 0), 1024, bar, load_mode="im2col", im2col_offsets=(0,))


def test_reference_interleaved_walk_sanity():
    """The reference's interleaved walk, by hand: W (dim 0) in {-1, 1}, H (dim 1)
    in {0, 1}, dim 2 (C/x) not walked, then N (dim 3)."""
    assert pixels_interleaved([3, 2, 5, 2], [2, 1, 1, 1], [-1, 0], [-1, 0], (1, 1, 4, 0), 4) == [
        (1, 1, 0), (-1, 0, 1), (1, 0, 1), (-1, 1, 1)]


# ---- fast path == slow reference ------------------------------------------------------------------

ES = {0: 1, 1: 2, 2: 4, 4: 8, 6: 2, 9: 2, 11: 4}


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_interleaved_im2col_load_matches_reference(data):
    """Fast path == slow reference over random interleaved im2col loads, pixels of
    16 to 128 bytes (one slice, half a slice, several slices)."""
    il = data.draw(st.sampled_from([1, 2]))
    S = 16 if il == 1 else 32
    dt = data.draw(st.sampled_from(sorted(ES)))
    e = ES[dt]
    pixel = data.draw(st.sampled_from([16, 48, 16, 64, 32, 128]))
    cpp = pixel // e
    rank = data.draw(st.sampled_from([3, 4, 5]))
    sp = rank - 2
    gdim = [data.draw(st.integers(1, 5)) for _ in range(sp)] + [data.draw(st.integers(1, 3)),
                                                              data.draw(st.integers(1, 3))]
    lim = {3: 3, 4: 3, 5: 2}[rank]
    lower = [data.draw(st.integers(-lim, 1)) for _ in range(sp)]
    upper = [data.draw(st.integers(-1, lim)) for _ in range(sp)]
    for i in range(sp):   # a non-empty box
        if gdim[i] - 1 + upper[i] < lower[i]:
            upper[i] = lower[i] - gdim[i] + 1
    es = [data.draw(st.integers(1, 3)) for _ in range(sp)] + [1, data.draw(st.integers(1, 2))]
    ppc = data.draw(st.integers(1, 40))
    strides, acc = [], S * gdim[0] + S * data.draw(st.integers(0, 1))
    for i in range(1, rank):
        strides.append(acc)
        acc = acc * gdim[i] + 32 * data.draw(st.integers(0, 1))
    size = acc + 4 * 32      # dim 0 may reach a slice past globalStrides[0]
    mem = np.frombuffer(np.random.default_rng(data.draw(st.integers(0, 99))).bytes(size), np.uint8).copy()
    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024, hazards="report")   # expect_tx below the bytes credited: reported
    g = gpu.register(mem)
    sw = data.draw(st.sampled_from([1, 1, 0, 2, 3] if il == 2 else [0, 1, 2, 3]))
    try:
        tm = pa.TensorMap.im2col(dtype=dt, global_address=g.address, global_dim=gdim, global_strides=strides,
                                 pixel_box_lower=lower, pixel_box_upper=upper, channels_per_pixel=cpp,
                                 pixels_per_column=ppc, element_strides=es, interleave=il, swizzle=sw,
                                 oob_fill=data.draw(st.sampled_from([0, 1])) if dt >= 6 else 0)
    except pa.InvalidValue:
        return   # the driver rejects it too (checked against encode_errors elsewhere)
    coords = [data.draw(st.integers(lower[i], gdim[i] - 1 + upper[i])) for i in range(sp)]
    coords += [data.draw(st.integers(-1, gdim[sp])), data.draw(st.integers(0, gdim[-1]))]
    offsets = [data.draw(st.integers(0, 3)) for _ in range(sp)]
    dst = data.draw(st.sampled_from([1024, 1040, 1152]))
    gpu.smem[:] = 0xA5
    bar = gpu.mbarrier(0).init(1)
    bar.arrive_expect_tx(1)
    gpu.cp_async_bulk_tensor_load(tm, coords, dst, bar, load_mode="im2col", im2col_offsets=offsets)
    bar.try_wait(0)
    want = np.full(64 * 1024, 0xA5, dtype=np.uint8)
    tx = ref_load({"tensorDataType_value": dt, "globalDim": gdim, "elementStrides": es, "globalStrides": strides,
                   "channelsPerPixel": cpp, "pixelsPerColumn": ppc, "swizzle_value": sw, "interleave_value": il,
                   "pixelBoxLowerCorner": lower, "pixelBoxUpperCorner": upper,
                   "oobFill_value": tm.fields["oob_fill"]}, mem, 0, coords, offsets, want, dst)
    assert 1 - bar.state["tx"] == tx          # credited bytes (expect_tx 1, one complete_tx)
    bad = np.nonzero(gpu.smem[8:] != want[8:])[0] + 8     # bytes 0-7: the mbarrier
    assert len(bad) == 0, f"first difference at shared byte {bad[0]}"


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_interleaved_im2col_store_matches_reference(data):
    """Fast path == slow reference over random interleaved .im2col_no_offs stores."""
    il = data.draw(st.sampled_from([1, 2]))
    S = 16 if il == 1 else 32
    dt = data.draw(st.sampled_from(sorted(ES)))
    pixel = data.draw(st.sampled_from([16, 48, 16, 64, 32]))
    rank = data.draw(st.sampled_from([3, 4, 5]))
    sp = rank - 2
    gdim = [data.draw(st.integers(1, 5)) for _ in range(sp)] + [data.draw(st.integers(1, 3)),
                                                              data.draw(st.integers(1, 3))]
    lower = [data.draw(st.integers(0, 1)) for _ in range(sp)]
    upper = [data.draw(st.integers(-2, 0)) for _ in range(sp)]
    for i in range(sp):   # a non-empty box inside the tensor (.im2col_no_offs)
        if gdim[i] - 1 + upper[i] < lower[i]:
            lower[i] = upper[i] = 0
    es = [data.draw(st.integers(1, 3)) for _ in range(sp)] + [1, data.draw(st.integers(1, 2))]
    ppc = data.draw(st.integers(1, 30))
    strides, acc = [], S * gdim[0] + S * data.draw(st.integers(0, 1))
    for i in range(1, rank):
        strides.append(acc)
        acc = acc * gdim[i] + 32 * data.draw(st.integers(0, 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    mem = np.frombuffer(rng.bytes(acc + 4 * 32), np.uint8).copy()
    want = bytearray(mem.tobytes())
    gpu = pa.Machine(ctas=1, smem_bytes=16 * 1024, hazards="report")   # expect_tx below the bytes credited: reported
    g = gpu.register(mem)
    sw = data.draw(st.sampled_from([1, 1, 0, 2, 3] if il == 2 else [0, 1, 2, 3]))
    try:
        tm = pa.TensorMap.im2col(dtype=dt, global_address=g.address, global_dim=gdim, global_strides=strides,
                                 pixel_box_lower=lower, pixel_box_upper=upper,
                                 channels_per_pixel=pixel // ES[dt], pixels_per_column=ppc,
                                 element_strides=es, interleave=il, swizzle=sw)
    except pa.InvalidValue:
        return
    coords = [data.draw(st.integers(max(lower[i], 0), max(gdim[i] - 1 + upper[i], 0))) for i in range(sp)]
    coords += [data.draw(st.integers(0, gdim[sp])), data.draw(st.integers(0, gdim[-1]))]
    src = data.draw(st.sampled_from([1024, 1040, 2048]))
    gpu.smem[:] = np.frombuffer(rng.bytes(16 * 1024), np.uint8)
    smem = gpu.smem.copy()
    try:
        gpu.cp_async_bulk_tensor_store(tm, coords, src, load_mode="im2col_no_offs")
    except pa.IllegalInstruction:
        assert any(not (lower[i] <= coords[i] <= gdim[i] - 1 + upper[i]) for i in range(sp))
        return
    gpu.cp_async_bulk_commit_group()
    gpu.cp_async_bulk_wait_group(0)
    ref_store({"globalDim": gdim, "globalStrides": strides, "elementStrides": es, "interleave_value": il,
               "pixelBoxLowerCorner": lower, "pixelBoxUpperCorner": upper, "pixelsPerColumn": ppc,
               "swizzle_value": sw}, want, 0, coords, smem, src)
    assert mem.tobytes() == bytes(want)
