"""Consumer views: cost of a wgmma operand read, the producer/consumer check and a
bank-conflict count, through the Python API.

    python bench/bench_consumers.py [--json]

1. WgmmaDescriptor.read of operand B, N = 256, K-major 128B (4096 f16 elements).
2. check_wgmma of that read against a 128B TMA tile (a matching descriptor, and a
   64B one, which also searches for the descriptor that works).
3. bank_conflicts of one 16-byte warp access.
Reported as microseconds per call (median of repeats).
"""
import argparse
import json
import time

import numpy as np

import ptxasync as pa
from ptxasync.consumers import TmaProducer, WgmmaDescriptor, check_wgmma, tile_access_addresses


def per_call(fn, reps):
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps)
    return sorted(times)[2] * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    m = pa.Machine(smem_bytes=200 * 1024, checks=False)
    g = m.register((np.arange(256 * 128) % 60000).astype(np.uint16).reshape(256, 128))
    tm = pa.TensorMap.tiled("FLOAT16", g.address, [128, 256], [256], [64, 256], swizzle="128B")
    dst = 4096
    bar = m.mbarrier(0).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    m.cp_async_bulk_tensor_load(tm, [0, 0], dst, bar)
    bar.wait(0)
    good = WgmmaDescriptor.from_fields(dst, 16, 1024, swizzle="128B")
    bad = good.replace(swizzle="64B", sbo=512)
    prod = TmaProducer(tm, [((0, 0), dst)])
    addrs = tile_access_addresses(64, 128, "128B", order="column")
    res = {
        "wgmma_read_n256_us": per_call(lambda: good.read(m, "B", 256), 200),
        "check_matched_n256_us": per_call(lambda: check_wgmma(good, prod, "B", 256), 3),
        "check_mismatched_n256_us": per_call(lambda: check_wgmma(bad, prod, "B", 256), 1),
        "bank_conflicts_us": per_call(lambda: pa.bank_conflicts(addrs, 16), 2000),
    }
    if args.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:28s} {v:10.1f}")


if __name__ == "__main__":
    main()
