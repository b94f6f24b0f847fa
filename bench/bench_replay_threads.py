"""How Machine.replay(ops, threads=N) scales: the gemm_replay trace (a 4096^3 bf16
GEMM's 262,144 TMA operations, 131,072 loads of 16 KiB) replayed with 1, 2, 4, 8
threads, in wall time (the copies run on several threads), against one thread's
memcpy of the same rows.

    python bench/bench_replay_threads.py [--threads 1,2,4,8] [--rounds 5]

Each thread count's shared-memory image is checked equal to the one-thread image.
Prints a table, then one JSON line per thread count."""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import ctypes
import json
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import ptxasync as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import gemm_trace  # noqa: E402  (the trace of the gemm_replay key)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2,4,8")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    counts = [int(t) for t in args.threads.split(",")]
    M = N = K = 4096
    BM = BN = 128
    BK = 64
    rng = np.random.default_rng(2)
    A = rng.integers(0, 1 << 16, size=(M, K), dtype=np.uint16)
    B = rng.integers(0, 1 << 16, size=(N, K), dtype=np.uint16)
    gpu = pa.Machine(ctas=1, smem_bytes=200 * 1024)
    ga, gb = gpu.register(A), gpu.register(B)
    a_map = pa.TensorMap.from_array(A, (BM, BK), ga.address, swizzle="128B", dtype="bf16")
    b_map = pa.TensorMap.from_array(B, (BN, BK), gb.address, swizzle="128B", dtype="bf16")
    for s in range(4):
        gpu.mbarrier(8 + 8 * s).init(1)
    tr = gemm_trace(a_map, b_map, 8)
    tile = BM * BK * 2
    nloads = 2 * (M // BM) * (N // BN) * (K // BK)
    total = nloads * tile

    with tempfile.TemporaryDirectory() as tmp:
        so = os.path.join(tmp, "libmemcpy_rows.so")
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", os.path.join(HERE, "memcpy_rows.c"), "-o", so], check=True)
        lib = ctypes.CDLL(so)
    lib.memcpy_rows.restype = None
    lib.memcpy_rows.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 4
    nk = K // BK
    mi, ni, ki = np.meshgrid(np.arange(M // BM), np.arange(N // BN), np.arange(nk), indexing="ij")
    a_off = (mi.ravel() * BM * K * 2 + ki.ravel() * BK * 2).astype(np.int64)
    b_off = (ni.ravel() * BN * K * 2 + ki.ravel() * BK * 2).astype(np.int64)
    dst = np.empty(tile, dtype=np.uint8)

    def memcpy():
        lib.memcpy_rows(dst.ctypes.data, A.ctypes.data, a_off.ctypes.data, len(a_off), BM, BK * 2, K * 2)
        lib.memcpy_rows(dst.ctypes.data, B.ctypes.data, b_off.ctypes.data, len(b_off), BN, BK * 2, K * 2)

    images = {}
    walls = {t: [] for t in counts}
    base = []
    for t in counts:   # warm-up, and the image each thread count leaves
        gpu.replay(tr, threads=t)
        images[t] = bytes(gpu.smem)
    memcpy()
    for _ in range(args.rounds):
        for t in counts:
            t0 = time.perf_counter()
            gpu.replay(tr, threads=t)
            walls[t].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        memcpy()
        base.append(time.perf_counter() - t0)
    wb = statistics.median(base)
    w1 = statistics.median(walls[counts[0]])
    print(f"{len(tr)} operations, {nloads} loads, {total / 2**30:.2f} GiB; {os.cpu_count()} CPUs; "
          f"memcpy {total / wb / 1e9:.2f} GB/s (median of {args.rounds}, wall time)")
    print(f"{'threads':>7s} {'GB/s':>7s} {'vs memcpy':>9s} {'speedup':>8s} same image")
    rows = []
    for t in counts:
        w = statistics.median(walls[t])
        row = {"threads": t, "gbs": round(total / w / 1e9, 3), "ratio": round(wb / w, 4),
               "speedup": round(w1 / w, 3), "same_image": images[t] == images[counts[0]],
               "wall_s": [round(x, 4) for x in walls[t]]}
        rows.append(row)
        print(f"{t:7d} {row['gbs']:7.2f} {row['ratio']:9.3f} {row['speedup']:8.2f} {row['same_image']}")
    for row in rows:
        print(json.dumps(row))
    return 0 if all(r["same_image"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
