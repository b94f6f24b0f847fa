"""Tile-load throughput and Python overhead.

    python bench/bench_tile_load.py [--json] [--tiles N]

1. Repeated 2D bf16 tile loads with 128B swizzle (box 64 x 256 elements = 32 KiB)
   from a 256 MiB tensor at random tile coordinates, each issued and waited for
   through the Python API exactly as a kernel would (mbarrier arrive.expect_tx,
   cp.async.bulk.tensor, try_wait). Reported as bytes/s and as a ratio to plain C
   memcpy of the same rows from the same positions (no swizzle), in the same run.
2. Python overhead: issue + wait of a 4 KiB tile load, microseconds per operation.
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # idle BLAS threads would steal a core

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import ptxasync as pa

HERE = os.path.dirname(os.path.abspath(__file__))


def build_baseline():
    out = os.path.join(tempfile.mkdtemp(prefix="ptxasync-bench-"), "libmemcpy_rows.so")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", os.path.join(HERE, "memcpy_rows.c"), "-o", out],
                   check=True)
    lib = ctypes.CDLL(out)
    lib.memcpy_rows.restype = None
    lib.memcpy_rows.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    return lib


def best_of(fn, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_throughput(ntiles, seed=1):
    rows, cols = 16384, 8192                     # 16384 x 8192 bf16 = 256 MiB
    box_rows, box_cols = 256, 64                 # NumPy order: 256 rows of 64 elements (128 B)
    rng = np.random.default_rng(seed)
    # Real data in every page (an untouched zero page would make memcpy look faster).
    tensor = rng.integers(0, 1 << 16, size=(rows, cols), dtype=np.uint16)
    r0 = rng.integers(0, rows - box_rows + 1, ntiles)
    c0 = rng.integers(0, (cols - box_cols) // 8 + 1, ntiles) * 8     # 16-byte aligned c0
    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024)
    g = gpu.register(tensor)
    tmap = pa.TensorMap.from_array(tensor, (box_rows, box_cols), g.address, swizzle="128B", dtype="bf16")
    bar = gpu.mbarrier(0)
    bar.init(1)
    nbytes = tmap.box_bytes
    coords = list(zip(c0.tolist(), r0.tolist()))

    def model():
        parity = 0
        for c in coords:
            bar.arrive_expect_tx(nbytes)
            gpu.cp_async_bulk_tensor_load(tmap, c, 1024, bar)
            bar.try_wait(parity)
            parity ^= 1

    lib = build_baseline()
    offsets = (r0 * cols * 2 + c0 * 2).astype(np.int64)
    dst = np.empty(box_rows * box_cols * 2, dtype=np.uint8)

    def baseline():
        lib.memcpy_rows(dst.ctypes.data, tensor.ctypes.data, offsets.ctypes.data, ntiles, box_rows,
                        box_cols * 2, cols * 2)

    t_model = best_of(model)
    t_memcpy = best_of(baseline)
    total = ntiles * nbytes
    return {"tile_bytes": nbytes, "tiles": ntiles, "model_bytes_per_s": total / t_model,
            "memcpy_bytes_per_s": total / t_memcpy, "ratio_to_memcpy": t_memcpy / t_model}


def bench_overhead(n=20000):
    tensor = np.zeros((256, 256), dtype=np.uint16)
    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024)
    g = gpu.register(tensor)
    tmap = pa.TensorMap.from_array(tensor, (32, 64), g.address, swizzle="128B", dtype="bf16")  # 4 KiB
    bar = gpu.mbarrier(0)
    bar.init(1)
    nbytes = tmap.box_bytes
    assert nbytes == 4096

    def loop():
        parity = 0
        for _ in range(n):
            bar.arrive_expect_tx(nbytes)
            gpu.cp_async_bulk_tensor_load(tmap, (64, 32), 1024, bar)
            bar.try_wait(parity)
            parity ^= 1

    t = best_of(loop, 3)
    return {"tile_bytes": nbytes, "us_per_issue_and_wait": t / n * 1e6}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--tiles", type=int, default=2000)
    args = ap.parse_args()
    res = {"throughput": bench_throughput(args.tiles), "overhead": bench_overhead()}
    if args.json:
        print(json.dumps(res))
        return
    t, o = res["throughput"], res["overhead"]
    print(f"2D bf16 128B-swizzled tile loads, {t['tile_bytes']} B each, {t['tiles']} random tiles of a 256 MiB tensor")
    print(f"  model (issue + wait via Python): {t['model_bytes_per_s'] / 1e9:6.2f} GB/s")
    print(f"  plain memcpy of the same rows:   {t['memcpy_bytes_per_s'] / 1e9:6.2f} GB/s")
    print(f"  ratio:                           {t['ratio_to_memcpy']:6.2f}")
    print(f"4 KiB tile load, issue + wait:     {o['us_per_issue_and_wait']:6.2f} us/op")


if __name__ == "__main__":
    sys.exit(main())
