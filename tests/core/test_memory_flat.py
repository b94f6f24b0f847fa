"""Memory stays flat: repeated operations, register/free cycles, error paths
and Machine lifetimes leave no growth in traced allocations, reference counts
or the process's resident set."""
import gc
import os
import sys
import tracemalloc

import numpy as np
import pytest

import ptxasync as pa


def _rss():
    if os.environ.get("PTXASYNC_SANITIZED"):
        return 0   # AddressSanitizer keeps freed memory in quarantine: RSS says nothing there
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096
    except OSError:
        pytest.skip("needs /proc/self/statm")


def _traced_growth(fn, warm=50, n=1000):
    """Bytes still allocated (Python and NumPy, traced) after n more calls of fn."""
    for _ in range(warm):
        fn()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(n):
            fn()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_register_free_cycles_stay_flat():
    m = pa.Machine(smem_bytes=4096)
    a = np.zeros(4096, np.uint8)
    ref = sys.getrefcount(a)
    assert _traced_growth(lambda: m.register(a).free()) < 16 * 1024
    assert sys.getrefcount(a) == ref and m._buffers == []
    # new arrays each time (a leak would keep every one: 1000 x 64 KiB)
    assert _traced_growth(lambda: m.register(np.zeros(65536, np.uint8)).free()) < 64 * 1024


def test_repeated_loads_stores_and_errors_stay_flat():
    m = pa.Machine(smem_bytes=64 * 1024)
    t = np.arange(64 * 64, dtype=np.uint16).reshape(64, 64)
    g = m.register(t)
    tm = pa.TensorMap.from_array(t, (16, 64), g.address, swizzle="128B")
    bad = pa.TensorMap.from_array(t, (16, 64), 0x10, swizzle="128B")   # no memory there
    bar = m.mbarrier(0).init(1)
    refs = [sys.getrefcount(x) for x in (t, tm, bad, m)]
    phase = [0]

    def ops():
        bar.arrive_expect_tx(tm.box_bytes)
        m.cp_async_bulk_tensor_load(tm, (0, 16), 1024, bar)
        bar.wait(phase[0])
        phase[0] ^= 1
        m.cp_async_bulk_tensor_store(tm, (0, 16), 1024)
        m.cp_async_bulk_commit_group()
        m.cp_async_bulk_wait_group(0)
        for call in (lambda: m.cp_async_bulk_tensor_load(bad, (0, 0), 1024, 8) or m.run(),
                     lambda: m.cp_async_bulk_tensor_load(tm, (0, 0), 2**32, bar),
                     lambda: m.register(np.empty(2, object)),
                     lambda: tm.replace("global_address", -1)):
            try:
                call()
            except (pa.PtxAsyncError, TypeError, ValueError, OverflowError):
                pass

    rss = _rss()
    assert _traced_growth(ops, n=500) < 32 * 1024
    assert [sys.getrefcount(x) for x in (t, tm, bad, m)] == refs
    assert _rss() - rss < 8 * 1024 * 1024


def test_machine_lifetimes_stay_flat():
    def life():
        m = pa.Machine(ctas=2, smem_bytes=200 * 1024)
        buf = m.alloc(4096)
        m.mbarrier(0).init(1)
        m.smem[:16] = 1
        del buf, m

    for _ in range(20):
        life()
    gc.collect()
    # a leaked machine keeps 400 KiB of shared memory: 300 of them would be 120 MiB
    assert _traced_growth(life, warm=0, n=300) < 64 * 1024
    gc.collect()
    rss = _rss()
    for i in range(300):
        life()
        if i % 50 == 49:
            gc.collect()   # a Machine and its CTAs refer to each other: the collector frees them
    assert _rss() - rss < 16 * 1024 * 1024
