"""A machine keeps the map's side of its last .tile load plan (copy/copy.h,
pa_tile_memo): a load through a byte-identical map skips the map's checks and
layout. It must be exactly as strict and give the same bytes as a plan made in
full: loads through a sequence of maps (some edited in place between loads) on
one machine == each load on a fresh machine, whose memo is empty."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxasync as pa

ROWS, COLS = 64, 256            # bf16 elements
BOXES = [(32, 64), (16, 64), (32, 32), (8, 16)]
SWIZZLES = ["128B", "none"]


def _machine(target="sm_90a"):
    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024, checks=False, race_checks=False, target=target)
    t = np.arange(ROWS * COLS, dtype=np.uint16).reshape(ROWS, COLS) * 7 + 3
    g = gpu.register(t)
    return gpu, g, [0]            # [0]: the mbarriers used so far (one per load, from 0x8)


def _map(g, box, swizzle, fill):
    t = np.zeros((ROWS, COLS), dtype=np.uint16)
    return pa.TensorMap.from_array(t, box, g.address, swizzle=swizzle, dtype="bf16", oob_fill=fill)


def _load(gpu, bars, tm, coords, dst):
    """The load's outcome: the box's bytes, or the error's type and text (each load
    signals a barrier of its own: a failed one leaves its barrier waiting)."""
    gpu.smem[512:] = 0xA5         # no bytes of an earlier load
    bars[0] += 1
    bar = gpu.mbarrier(8 * bars[0]).init(1)
    try:
        bar.arrive_expect_tx(tm.box_bytes)
        gpu.cp_async_bulk_tensor_load(tm, coords, dst, bar)
        gpu.run()
        assert bar.try_wait(0)
        return bytes(gpu.smem[dst:dst + 8192])
    except pa.PtxAsyncError as e:   # a failed issue leaves the machine unchanged
        assert gpu.pending == 0
        return type(e).__name__, str(e)


load = st.tuples(st.integers(0, len(BOXES) - 1), st.sampled_from(SWIZZLES), st.sampled_from(["zero", "nan"]),
                 st.integers(-40, COLS + 8), st.integers(-20, ROWS + 4), st.sampled_from([1024, 1040, 9216]))


@settings(max_examples=30, deadline=None)
@given(loads=st.lists(load, min_size=2, max_size=6))
def test_memo_equals_a_fresh_plan(loads):
    """Same bytes and the same errors (misaligned c0, misaligned dst, box past shared
    memory) as on a machine that never planned before, whatever map came last."""
    gpu, g, bar = _machine()
    for box, sw, fill, c0, c1, dst in loads:
        tm = _map(g, BOXES[box], sw, fill)
        got = _load(gpu, bar, tm, (c0, c1), dst)
        gpu2, g2, bar2 = _machine()
        assert got == _load(gpu2, bar2, tm, (c0, c1), dst)


def test_the_same_map_twice_then_edited_in_place():
    """An edit of the map object between two loads (tensormap.replace) is seen:
    the second load uses the new box, as a fresh machine does."""
    gpu, g, bar = _machine()
    tm = _map(g, (32, 64), "128B", "zero")
    first = _load(gpu, bar, tm, (64, 8), 1024)
    assert first == _load(gpu, bar, tm, (64, 8), 1024)
    tm.replace("box_dim", 16, ord=1)                  # 16 rows instead of 32
    assert tm.box_bytes == 16 * 128
    got = _load(gpu, bar, tm, (64, 8), 1024)
    gpu2, g2, bar2 = _machine()
    assert got == _load(gpu2, bar2, tm, (64, 8), 1024)
    assert got[:2048] == first[:2048] and got != first


def test_an_edit_the_target_rejects_is_rejected_after_a_good_load():
    """A map that passed on sm_90a, edited to a 128B_ATOM_32B swizzle (sm_100a only),
    raises on the sm_90a machine that has just loaded through it, as on a fresh one."""
    gpu, g, bar = _machine()
    tm = _map(g, (32, 64), "128B", "zero")
    assert isinstance(_load(gpu, bar, tm, (0, 0), 1024), bytes)
    tm.replace("swizzle_atomicity", 1, target="sm_100a")
    got = _load(gpu, bar, tm, (0, 0), 1024)
    gpu2, g2, bar2 = _machine()
    assert got == _load(gpu2, bar2, tm, (0, 0), 1024)
    assert isinstance(got, tuple) and got[0] == "IllegalInstruction", got



def test_maps_taking_turns_one_edited_in_place():
    """Loads that take turns between maps, as a GEMM's A and B loads do (the memo
    keeps several), with more maps than it keeps and one of them edited in place
    between its turns: every load as on a fresh machine."""
    gpu, g, bar = _machine()
    maps = [_map(g, BOXES[i % len(BOXES)], SWIZZLES[i % 2], "zero") for i in range(6)]
    for turn in range(3):
        for i in (0, 1, 0, 1, 2, 3, 4, 5, 0):
            if turn == 1 and i == 1:
                maps[1].replace("box_dim", 8, ord=1)     # fewer rows from here on
            coords = (16 * (i + turn), 2 * i - 4)
            got = _load(gpu, bar, maps[i], coords, 1024)
            gpu2, g2, bar2 = _machine()
            assert got == _load(gpu2, bar2, maps[i], coords, 1024), (turn, i)


# --- within a replay: a map equal to an entry is compared once a replay -----------------

def _replay_outcome(gpu, loads, maps, turn):
    """The loads (map index, c0, c1) as one replay, each with a barrier of its own (a
    fresh one each turn) and its own 8 KiB of shared memory: the shared bytes and the
    failing record, if any."""
    gpu.smem[1024:] = 0xA5
    tr = pa.OpList()
    for k, (i, c0, c1) in enumerate(loads):
        bar = 64 * turn + 8 * (k + 1)
        gpu.mbarrier(bar).init(1)
        tr.mbarrier_arrive_expect_tx(bar, maps[i].box_bytes)
        tr.cp_async_bulk_tensor_load(maps[i], (c0, c1), 1024 + 8192 * k, bar)
        tr.mbarrier_wait(bar, 0)
    try:
        gpu.replay(tr)
        failed = None
    except pa.PtxAsyncError as e:
        failed = (type(e).__name__, e.index)
    return bytes(gpu.smem[1024:]), failed


def _one_by_one(loads, maps):
    """The same loads issued one by one on a fresh machine (no replay: every map
    compared with the memo at every load)."""
    gpu, g, _ = _machine()
    gpu.smem[1024:] = 0xA5
    failed = None
    for k, (i, c0, c1) in enumerate(loads):
        bar = gpu.mbarrier(8 * (k + 1)).init(1)
        bar.arrive_expect_tx(maps[i].box_bytes)
        try:
            gpu.cp_async_bulk_tensor_load(maps[i], (c0, c1), 1024 + 8192 * k, bar)
        except pa.PtxAsyncError as e:
            failed = (type(e).__name__, 3 * k + 1)
            break
        assert bar.try_wait(0)
    return bytes(gpu.smem[1024:]), failed


@settings(max_examples=25, deadline=None)
@given(loads=st.lists(st.tuples(st.integers(0, 3), st.integers(-8, COLS // 8), st.integers(-4, ROWS)),
                      min_size=2, max_size=7),
       edits=st.lists(st.tuples(st.integers(0, 3), st.sampled_from([8, 16, 32])), max_size=3))
def test_replays_of_maps_edited_between_them(loads, edits):
    """Replays through maps that share their global address (each compared with the
    memo once a replay), the same list replayed again after maps were edited in place
    (tensormap.replace): each replay as the loads issued one by one on a fresh machine."""
    gpu, g, _ = _machine()
    maps = [_map(g, BOXES[i], SWIZZLES[i % 2], "zero") for i in range(4)]
    loads = [(i, 8 * c0, c1) for i, c0, c1 in loads]
    assert _replay_outcome(gpu, loads, maps, 0) == _one_by_one(loads, maps)
    for turn, (i, rows) in enumerate(edits, 1):
        maps[i].replace("box_dim", rows, ord=1)
        assert _replay_outcome(gpu, loads, maps, turn) == _one_by_one(loads, maps), (i, rows)
