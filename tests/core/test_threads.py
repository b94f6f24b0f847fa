"""A Machine shared by threads: calls wait for each other (a per-machine
lock, taken without the GIL), never fail with a spurious "in use" error,
and every load lands whole and uncorrupted."""
import threading

import numpy as np

import ptxasync as pa

THREADS = 4
ROUNDS = 40


def _run_threads(fn):
    errors = []

    def wrap(t):
        try:
            fn(t)
        except BaseException as e:   # reported in the main thread
            errors.append((t, e))

    ts = [threading.Thread(target=wrap, args=(t,)) for t in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not any(t.is_alive() for t in ts), "a thread hung"
    assert not errors, errors


def test_threads_sharing_a_machine_take_turns_without_corruption():
    m = pa.Machine(smem_bytes=200 * 1024, checks=False)   # eight loads share each destination
    tensors = [np.random.default_rng(t).integers(0, 2**16, (256, 64), dtype=np.uint16) for t in range(THREADS)]
    bufs = [m.register(a) for a in tensors]
    maps = [pa.TensorMap.from_array(a, (128, 64), b.address) for a, b in zip(tensors, bufs)]
    box = 128 * 64 * 2

    def worker(t):
        bar = m.mbarrier(8 * t).init(1)
        dst = 1024 + t * box
        phase = 0
        scratch = []
        for r in range(ROUNDS):
            row = (r * 16 + 16 * t) % 128
            bar.arrive_expect_tx(8 * maps[t].box_bytes)
            for _ in range(8):     # a long run without the GIL for the others to run into
                m.cp_async_bulk_tensor_load(maps[t], (0, row), dst, bar)
            if r % 3 == 0:
                m.run()            # may complete the other threads' loads too
            bar.wait(phase)
            phase ^= 1
            got = m.smem[dst:dst + box].view(np.uint16).reshape(128, 64)
            assert (got == tensors[t][row:row + 128]).all(), f"thread {t} round {r}: corrupted tile"
            # registration churn and queries from every thread meanwhile
            scratch.append(m.alloc(4096))
            if len(scratch) > 3:
                scratch.pop(0).free()
            assert m.pending >= 0
        for b in scratch:
            b.free()

    stop = threading.Event()
    polls, poll_errors = [0], []

    def poller():
        # cheap calls that must wait for a running core, not fail
        try:
            while not stop.is_set():
                m.pending
                try:
                    m.mbarrier(0).state
                except pa.Hazard:     # not initialised yet: an answer, not a failure
                    pass
                polls[0] += 1
        except BaseException as e:
            poll_errors.append(e)

    p = threading.Thread(target=poller)
    p.start()
    try:
        _run_threads(worker)
    finally:
        stop.set()
        p.join(10)
    assert not poll_errors, poll_errors
    assert polls[0] > 0
    assert m.pending == 0 and len(m._buffers) == THREADS


def test_a_map_edited_by_one_thread_while_another_loads_through_it():
    """The load copies the map under the GIL: each completes with one map or
    the other, never a mixture."""
    m = pa.Machine(smem_bytes=64 * 1024)
    a = np.full((64, 64), 1, np.uint16)
    b = np.full((64, 64), 2, np.uint16)
    ga, gb = m.register(a), m.register(b)
    tm = pa.TensorMap.from_array(a, (64, 64), ga.address)
    stop = threading.Event()

    def editor():
        flip = 0
        while not stop.is_set():
            tm.replace("global_address", gb.address if flip else ga.address)
            flip ^= 1

    ed = threading.Thread(target=editor)
    ed.start()
    try:
        bar = m.mbarrier(0).init(1)
        for r in range(100):
            bar.arrive_expect_tx(64 * 64 * 2)
            m.cp_async_bulk_tensor_load(tm, (0, 0), 1024, bar)
            bar.wait(r & 1)
            tile = m.smem[1024:1024 + 8192].view(np.uint16)
            assert (tile == tile[0]).all() and tile[0] in (1, 2)
    finally:
        stop.set()
        ed.join(10)


def test_machines_in_parallel_threads_are_independent():
    def worker(t):
        m = pa.Machine(smem_bytes=32 * 1024)
        src = np.arange(64 * 64, dtype=np.uint32).reshape(64, 64) + t
        g = m.register(src)
        tm = pa.TensorMap.from_array(src, (32, 64), g.address)
        for r in range(ROUNDS):
            bar = m.mbarrier(0).init(1) if r == 0 else bar
            bar.arrive_expect_tx(tm.box_bytes)
            m.cp_async_bulk_tensor_load(tm, (0, 32 * (r & 1)), 1024, bar)
            bar.wait(r & 1)
            got = m.smem[1024:1024 + tm.box_bytes].view(np.uint32).reshape(32, 64)
            assert (got == src[32 * (r & 1):32 * (r & 1) + 32]).all()

    _run_threads(worker)
