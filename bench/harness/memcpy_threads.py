"""The ceiling of Machine.replay(threads=N) on a machine: the gemm_replay rows copied by
plain memcpy on N threads at once (each thread a contiguous slice of the GEMM's steps,
into its own shared-memory-shaped buffer), in wall time, against one thread's memcpy of
all of them; beside it, the replay itself with N threads.

    python bench/harness/memcpy_threads.py [--threads 1,2,4,8,16] [--rounds 5]

If N memcpy threads reach only k times one thread, no replay on N threads can do better
than about k: the bytes, not the model, are then the limit."""
import argparse
import os
import statistics
import sys
import tempfile
import threading
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from run import GemmSetup, gemm_trace, memcpy_rows_lib  # noqa: E402

import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    counts = [int(t) for t in args.threads.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        lib = memcpy_rows_lib(tmp)
    g = GemmSetup(lib, 8)
    BM, _, BK, K = g._rows
    steps = len(g.a_off)
    bufs = [np.empty(1024 + 4 * 2 * g.tile + 4096, dtype=np.uint8) for _ in range(max(counts))]

    def memcpy_on(n):
        def part(i):
            lo, hi = steps * i // n, steps * (i + 1) // n
            b = bufs[i]
            d = b.ctypes.data + (-b.ctypes.data % 4096) + 1024
            lib.memcpy_rows_staged(d, g.A.ctypes.data, g.a_off[lo:].ctypes.data, g.B.ctypes.data,
                                   g.b_off[lo:].ctypes.data, hi - lo, 4, BM, BK * 2, K * 2)
        ts = [threading.Thread(target=part, args=(i,)) for i in range(n)]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return time.perf_counter() - t0

    tr = gemm_trace(g.a_map, g.b_map, 8)
    mc = {n: [] for n in counts}
    rp = {n: [] for n in counts}
    for n in counts:
        memcpy_on(n)
        g.gpu.replay(tr, threads=n)
    for _ in range(args.rounds):
        for n in counts:
            mc[n].append(memcpy_on(n))
            t0 = time.perf_counter()
            g.gpu.replay(tr, threads=n)
            rp[n].append(time.perf_counter() - t0)
    one = statistics.median(mc[counts[0]]) if counts[0] == 1 else None
    print(f"{g.nloads} loads, {g.total / 2**30:.2f} GiB, {os.cpu_count()} CPUs (median of {args.rounds}, wall)")
    print(f"{'threads':>7s} {'memcpy GB/s':>11s} {'x one':>6s} {'replay GB/s':>11s} {'x one memcpy':>12s}")
    for n in counts:
        wm, wr = statistics.median(mc[n]), statistics.median(rp[n])
        print(f"{n:7d} {g.total / wm / 1e9:11.2f} {one / wm if one else float('nan'):6.2f} "
              f"{g.total / wr / 1e9:11.2f} {one / wr if one else float('nan'):12.2f}")


if __name__ == "__main__":
    main()
