"""Machine.replay(ops, threads=N) (csrc/core/defer.h): the bytes of .tile loads
moved on several threads leave exactly what threads=1 leaves - shared and global
bytes, mbarrier states, pending operations, the trace, and the error (class,
message, .index) - for random operation lists whose loads overlap each other,
whose stores and reductions read what loads wrote, whose mbarrier.init writes
over earlier load destinations, and which fail midway (at issue, at a wait, or
at a completion whose tx-count credit is refused after its bytes landed).

threads=1 is the replay of test_batch.py, itself checked against one-by-one
issue; here it is the reference the threaded replay must equal byte for byte."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxasync as pa

ROWS, COLS = 96, 256            # bf16 elements
SMEM = 48 * 1024
BARS = (8, 16, 24)              # mbarriers of every CTA
CTAS = 2


def _machine(policy, seed=0):
    gpu = pa.Machine(ctas=CTAS, smem_bytes=SMEM, policy=policy, trace=True, checks=False)   # threads need them off
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 1 << 16, size=(ROWS, COLS), dtype=np.uint16)
    g = gpu.register(t)
    maps = [
        # 32 x 64 bf16 = 4 KiB boxes, 128B swizzle (1024-aligned destinations)
        pa.TensorMap.from_array(t, (32, 64), g.address, swizzle="128B", dtype="bf16", oob_fill="nan"),
        # 16 x 32 bf16 = 1 KiB boxes, no swizzle (128-aligned destinations)
        pa.TensorMap.from_array(t, (16, 32), g.address, dtype="bf16"),
    ]
    for cta in range(CTAS):
        sm = gpu.ctas[cta].smem
        sm[:] = rng.integers(0, 256, size=sm.size, dtype=np.uint8)
        for a in BARS:
            gpu.mbarrier(a, cta=cta).init(1)
    return gpu, g, maps


def _state(gpu, g):
    bars = [tuple(sorted(gpu.mbarrier(a, cta=c).state.items())) for c in range(CTAS) for a in BARS]
    return ([bytes(gpu.ctas[c].smem) for c in range(CTAS)], bytes(g.bytes), bars, gpu.pending,
            [tuple(e) for e in gpu.trace])


def _replay(ops, policy, threads):
    gpu, g, maps = _machine(policy)
    err = None
    try:
        gpu.replay(ops, threads=threads)
    except pa.PtxAsyncError as e:
        err = (type(e).__name__, str(e), e.index)
    return _state(gpu, g), err


# --- random operation lists --------------------------------------------------
BOX = (4096, 1024)
dst_of = (lambda s: 1024 * s, lambda s: 128 * s)            # per map: aligned, overlapping slots
NSLOT = ((SMEM - 4096) // 1024, (SMEM - 1024) // 128)
# mostly in bounds (a zero fill would look like mbarrier.init's zeros), some past an edge
coord = st.tuples(st.integers(-16, COLS).map(lambda c: c // 8 * 8), st.integers(-8, ROWS - 8))
store_coord = st.tuples(st.integers(0, COLS // 8).map(lambda c: 8 * c), st.integers(0, ROWS))   # non-negative
load = st.tuples(st.integers(0, 1), coord, st.integers(0, 40))
# (issuer CTA, destination CTA): another CTA's shared memory through shared::cluster
step = st.tuples(st.just("step"), st.tuples(st.integers(0, CTAS - 1), st.integers(0, CTAS - 1)),
                 st.integers(0, len(BARS) - 1), st.lists(load, min_size=1, max_size=6),
                 st.sampled_from([0] * 8 + [-1, 1]))
block = st.one_of(
    step, step, step, step, step, step,
    # one load multicast to both CTAs (one operation per destination, golden C3)
    st.tuples(st.just("multicast"), st.integers(0, CTAS - 1), st.integers(0, len(BARS) - 1), load),
    st.tuples(st.just("store"), st.integers(0, CTAS - 1), store_coord, st.integers(1, 40)),
    st.tuples(st.just("reduce"), st.integers(0, CTAS - 1), store_coord, st.integers(1, 40)),
    st.tuples(st.just("bulk_reduce"), st.integers(0, CTAS - 1), st.integers(0, 200), st.integers(8, 400)),
    # mbarrier.init writes 8 bytes, often inside an earlier load's destination
    st.tuples(st.just("init"), st.integers(0, CTAS - 1), st.integers(0, 40), st.integers(0, 511)),
    st.tuples(st.just("init"), st.integers(0, CTAS - 1), st.integers(0, 40), st.integers(0, 511)),
    st.tuples(st.just("loose"), st.integers(0, CTAS - 1), load),    # credits tx no one expects
    st.tuples(st.just("bad_load"), st.integers(0, CTAS - 1), load),
    st.tuples(st.just("run"),),
)


def _sa(cta, off):
    """CTA cta's shared address of offset off (machine.py: r << 24 | offset in a cluster)."""
    return cta << 24 | off


def _build(blocks, g_address):
    """An OpList from blocks; parities are tracked so that waits mostly succeed
    (a tx mismatch of -1/+1 box makes one fail or leave a load pending)."""
    ops = pa.OpList()
    # maps as the machine builds them (same parameters: the replayed records name them by index)
    gpu, _, maps = _machine("in_order")
    parity = {}
    for b in blocks:
        kind = b[0]
        if kind == "step":
            _, (src, dst), bi, loads, miss = b
            bar = BARS[bi]
            tx = sum(BOX[m] for m, _, _ in loads) + miss * BOX[loads[0][0]]
            ops.mbarrier_arrive_expect_tx(_sa(dst, bar), tx, cta=dst)
            for m, c, s in loads:
                ops.cp_async_bulk_tensor_load(maps[m], c, _sa(dst, dst_of[m](s % NSLOT[m] + 1)), _sa(dst, bar),
                                              cta=src, dst_space="shared::cluster" if src != dst else "shared::cta")
            p = parity.get((dst, bar), 0)
            ops.mbarrier_wait(_sa(dst, bar), p, cta=dst)
            parity[(dst, bar)] = p ^ 1
        elif kind == "multicast":
            _, src, bi, (m, c, s) = b
            for dst in range(CTAS):
                ops.mbarrier_arrive_expect_tx(_sa(dst, BARS[bi]), BOX[m], cta=dst)
            ops.cp_async_bulk_tensor_load(maps[m], c, _sa(src, dst_of[m](s % NSLOT[m] + 1)), _sa(src, BARS[bi]),
                                          cta=src, cta_mask=(1 << CTAS) - 1)
            for dst in range(CTAS):
                p = parity.get((dst, BARS[bi]), 0)
                ops.mbarrier_wait(_sa(dst, BARS[bi]), p, cta=dst)
                parity[(dst, BARS[bi])] = p ^ 1
        elif kind in ("store", "reduce"):
            _, cta, c, s = b
            if kind == "store":
                ops.cp_async_bulk_tensor_store(maps[0], c, _sa(cta, 1024 * s), cta=cta)
            else:
                ops.cp_reduce_async_bulk_tensor("add", maps[0], c, _sa(cta, 1024 * s), cta=cta)
            ops.cp_async_bulk_commit_group(cta=cta)
            ops.cp_async_bulk_wait_group(0, cta=cta)
        elif kind == "bulk_reduce":
            _, cta, off, size = b
            ops.cp_reduce_async_bulk("add", "u32", g_address + 16 * off, _sa(cta, 1024 + 16 * off), size // 16 * 16,
                                     cta=cta)
            ops.cp_async_bulk_commit_group(cta=cta)
            ops.cp_async_bulk_wait_group(0, cta=cta)
        elif kind == "init":
            _, cta, s, k = b
            ops.mbarrier_init(_sa(cta, dst_of[0](s % NSLOT[0] + 1) + 8 * k), 1, cta=cta)
        elif kind in ("loose", "bad_load"):
            _, cta, (m, c, s) = b
            off = dst_of[m](s % NSLOT[m] + 1) + (16 if kind == "bad_load" else 0)
            ops.cp_async_bulk_tensor_load(maps[m], c, _sa(cta, off), _sa(cta, BARS[0]), cta=cta)
        else:
            ops.run()
    ops.run()
    return ops


def _g_address():
    return _machine("in_order")[1].address


@settings(max_examples=60, deadline=None)
@given(blocks=st.lists(block, min_size=1, max_size=16),
       policy=st.sampled_from(["in_order", "reverse", "random", "immediate"]),
       threads=st.sampled_from([2, 4]))
def test_threaded_replay_equals_sequential(blocks, policy, threads):
    ops = _build(blocks, _g_address())
    seq = _replay(ops, policy, 1)
    par = _replay(ops, policy, threads)
    assert par[1] == seq[1]
    assert par[0][0] == seq[0][0]       # shared memory of every CTA, byte for byte
    assert par[0] == seq[0]             # global bytes, barriers, pending, trace


def test_many_flushes_and_lanes():
    """More loads than one flush holds (512) and more destinations than it has
    lanes (64), overlapping: still the sequential image."""
    gpu0, g0, maps = _machine("in_order")
    ops = _build([("step", (i % CTAS, i % 3 % CTAS), i % 3, [(i % 2, (8 * (i % 29), i % 90 - 10), i * 7 + 3)] * 3, 0)
                  for i in range(400)], g0.address)
    assert len(ops) > 1500
    seq = _replay(ops, "in_order", 1)
    for threads in (2, 3, 8):
        assert _replay(ops, "in_order", threads) == seq


def test_more_maps_than_a_flush_keeps_plans_of():
    """Loads of twelve maps in turn (a flush keeps the plans of eight: a ninth
    starts the next), each box in a slot of its own and over the slot of the
    load before it: still the sequential image."""
    gpu0, g0, _ = _machine("in_order")
    t = np.zeros((ROWS, COLS), dtype=np.uint16)
    maps = [pa.TensorMap.from_array(t, (8 + 4 * (i % 3), 8 * (1 + i % 4)), g0.address, dtype="bf16")
            for i in range(12)]
    ops = pa.OpList()
    parity = 0
    for rnd in range(3):
        tx = 0
        loads = []
        for i, m in enumerate(maps):
            box = (8 + 4 * (i % 3)) * 8 * (1 + i % 4) * 2
            tx += 2 * box
            slot = 1024 * (1 + (i + rnd) % 12)
            loads += [(m, (8 * (i + rnd), i), slot), (m, (16 * rnd, 2 * i), slot + 512)]
        ops.mbarrier_arrive_expect_tx(BARS[0], tx)
        for m, c, dst in loads:
            ops.cp_async_bulk_tensor_load(m, c, dst, BARS[0])
        ops.mbarrier_wait(BARS[0], parity)
        parity ^= 1
    seq = _replay(ops, "in_order", 1)
    assert seq[1] is None
    for threads in (2, 4):
        assert _replay(ops, "in_order", threads) == seq


def test_error_midway_leaves_the_sequential_state():
    """A wait that cannot complete after loads of several lanes: the loads
    before it have landed, the error is the same."""
    _, g, maps = _machine("in_order")
    ops = pa.OpList()
    ops.mbarrier_arrive_expect_tx(BARS[0], 4 * 4096)
    for s in range(4):
        ops.cp_async_bulk_tensor_load(maps[0], (64 * s, 8 * s), 1024 + 4096 * s, BARS[0])
    ops.mbarrier_wait(BARS[0], 0)
    ops.mbarrier_wait(BARS[0], 1)                    # phase 1 has nothing pending: a hazard
    seq = _replay(ops, "in_order", 1)
    assert seq[1][0] == "Hazard" and seq[1][2] == 6
    assert _replay(ops, "in_order", 4) == seq


def test_checks_on_replays_on_one_thread_with_the_same_result():
    """Memory checks compare bytes at every completion: nothing is moved later
    (defer.h), and the result is the sequential one."""
    ops = _build([("step", (0, 0), 0, [(0, (0, 0), 1), (0, (64, 32), 6)], 0)], _g_address())
    assert _replay(ops, "adversarial", 4) == _replay(ops, "adversarial", 1)


@pytest.mark.parametrize("bad,exc", [(0, ValueError), (65, ValueError), (-1, ValueError), (2.0, TypeError),
                                     ("2", TypeError)])
def test_threads_argument(bad, exc):
    gpu, g, maps = _machine("in_order")
    with pytest.raises(exc, match="threads"):
        gpu.replay(pa.OpList(), threads=bad)


def _two(ops, policy="in_order", threads=4):
    seq = _replay(ops, policy, 1)
    assert _replay(ops, policy, threads) == seq
    return seq


# 4 KiB boxes: two that overlap, then five apart (five lanes, pending after the step)
LOADS = [(0, (128, 40), 3), (0, (8, 56), 5)] + [(0, (64 * (i % 3), 8 * i), 1 + 4 * i) for i in range(5)]


@pytest.mark.parametrize("after", ["init", "store", "reduce", "bulk_reduce", "reload"])
def test_what_reads_or_writes_a_pending_destination_sees_the_loads(after):
    """Each operation that touches shared memory a taken-aside load writes:
    mbarrier.init (writes 8 zero bytes), a store and reductions (read it),
    another load over two lanes (writes it)."""
    blocks = [("step", (0, 0), 0, LOADS, 0)]
    blocks.append({"init": ("init", 0, 2, 100), "store": ("store", 0, (64, 8), 3),
                   "reduce": ("reduce", 0, (0, 16), 4),
                   "bulk_reduce": ("bulk_reduce", 0, 100, 400),
                   "reload": ("step", (0, 0), 1, [(1, (32, 40), 40)], 0)}[after])   # 1 KiB over two lanes
    seq = _two(_build(blocks, _g_address()))
    assert seq[1] is None


def test_a_load_that_may_fault_keeps_its_place():
    """A map whose tensor reaches past its buffer does not qualify (its copy
    could fault midway, defer.h): it runs in order on the calling thread after
    the loads before it, and its fault at the wait is the sequential one."""
    gpu0, g0, maps = _machine("in_order")
    tall = pa.TensorMap.tiled("bf16", g0.address, (COLS, 2 * ROWS), (2 * COLS,), (64, 32), swizzle="128B")
    for rows, fault in ((0, None), (ROWS - 16, "IllegalAddress")):
        ops = pa.OpList()
        ops.mbarrier_arrive_expect_tx(BARS[0], 4 * 4096)
        ops.cp_async_bulk_tensor_load(maps[0], (0, 0), 2048, BARS[0])
        ops.cp_async_bulk_tensor_load(maps[0], (64, 8), 6144, BARS[0])
        ops.cp_async_bulk_tensor_load(tall, (128, rows), 4096, BARS[0])     # over both
        ops.cp_async_bulk_tensor_load(maps[0], (128, 16), 10240, BARS[0])
        ops.mbarrier_wait(BARS[0], 0)
        seq = _two(ops)
        assert (seq[1] and seq[1][0]) == fault

