"""How Machine.replay(ops, threads=N) scales: the gemm_replay trace (a 4096^3 bf16
GEMM's 262,144 TMA operations, 131,072 loads of 16 KiB) replayed with 1, 2, 4, 8
threads, in wall time (the copies run on several threads), against one thread's
memcpy of the same rows (the same order and destination offsets; `vs one buffer`:
against the earlier baseline, every A tile then every B tile into one 16 KiB buffer).

    python bench/bench_replay_threads.py [--threads 1,2,4,8] [--rounds 5]

Each thread count's shared-memory image is checked equal to the one-thread image.
Prints a table, then one JSON line per thread count."""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import statistics
import sys
import tempfile
import time



HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import GemmSetup, gemm_trace, memcpy_rows_lib, replay_walls  # noqa: E402  (the gemm_replay key's workload and trace)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2,4,8")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    counts = [int(t) for t in args.threads.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        lib = memcpy_rows_lib(tmp)
    bar_addr = 8
    g = GemmSetup(lib, bar_addr)
    gpu, total, nloads, memcpy = g.gpu, g.total, g.nloads, g.baseline
    tr = gemm_trace(g.a_map, g.b_map, bar_addr)

    images = {}
    for t in counts:   # warm-up, and the image each thread count leaves
        gpu.replay(tr, threads=t)
        images[t] = bytes(gpu.smem)
    memcpy()
    one = []

    def both():   # the two baselines, the second timed apart
        memcpy()
        t0 = time.perf_counter()
        g.baseline_one_buffer()
        one.append(time.perf_counter() - t0)

    walls, base = replay_walls(gpu, tr, counts, both, args.rounds)
    base = [b - o for b, o in zip(base, one)]
    wb, wo = statistics.median(base), statistics.median(one)
    w1 = statistics.median(walls[counts[0]])
    print(f"{len(tr)} operations, {nloads} loads, {total / 2**30:.2f} GiB; {os.cpu_count()} CPUs; "
          f"memcpy {total / wb / 1e9:.2f} GB/s, into one buffer {total / wo / 1e9:.2f} GB/s "
          f"(median of {args.rounds}, wall time)")
    print(f"{'threads':>7s} {'GB/s':>7s} {'vs memcpy':>9s} {'vs one buffer':>13s} {'speedup':>8s} same image")
    rows = []
    for t in counts:
        w = statistics.median(walls[t])
        row = {"threads": t, "gbs": round(total / w / 1e9, 3), "ratio": round(wb / w, 4),
               "ratio_one_buffer": round(wo / w, 4), "speedup": round(w1 / w, 3),
               "same_image": images[t] == images[counts[0]], "wall_s": [round(x, 4) for x in walls[t]]}
        rows.append(row)
        print(f"{t:7d} {row['gbs']:7.2f} {row['ratio']:9.3f} {row['ratio_one_buffer']:13.3f} {row['speedup']:8.2f} "
              f"{row['same_image']}")
    for row in rows:
        print(json.dumps(row))
    return 0 if all(r["same_image"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
