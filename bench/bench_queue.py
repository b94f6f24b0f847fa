"""Queue cost per operation as the queue grows ("deep_queue").

    python bench/bench_queue.py [--json] [--depths 8,8192]

For each depth N: issue N 4 KiB tile loads (u8 map, box 64 x 64, spread over
64 mbarriers so no tx-count leaves its range), then time their completion,
which is queue work plus a 4 KiB copy each. Three ways to drain the queue:
``run`` (Machine.run), ``try_wait`` (each barrier waited on in turn) and
``wait_group`` (N 4 KiB tile stores of one thread, one bulk group, wait_group 0).
Reported as microseconds per completed operation, per policy, and the ratio of
the deepest to the shallowest depth (flat queue: close to 1).

``deep_queue()`` returns the same figures as a dict for other bench scripts.
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import time

import numpy as np

import ptxasync as pa

BOX = 64            # 64 x 64 u8 = 4 KiB
NBARS = 64
SLOTS = 32          # destinations cycle through 32 x 4 KiB of shared memory


def _machine(policy):
    m = pa.Machine(smem_bytes=SLOTS * 4096 + 4096, policy=policy, seed=7, checks=False)
    g = m.alloc(256 * 256)
    g.bytes[:] = np.arange(g.nbytes, dtype=np.uint64).astype(np.uint8)
    tm = pa.TensorMap.tiled("u8", g.address, [256, 256], [256], [BOX, BOX])
    return m, tm


def _loads(m, tm, n):
    base = SLOTS * 4096
    bars = [m.mbarrier(base + 8 * i).init(1) for i in range(NBARS)]
    per = [0] * NBARS
    for i in range(n):
        per[i % NBARS] += 1
    for b, k in zip(bars, per):
        if k:
            b.arrive_expect_tx(k * BOX * BOX)
    for i in range(n):
        m.cp_async_bulk_tensor_load(tm, [64 * (i % 4), 64 * ((i // 4) % 4)], (i % SLOTS) * 4096,
                                    bars[i % NBARS])
    return bars


def _time(policy, n, how, min_ops):
    """Seconds per completed operation, over at least min_ops operations."""
    total, ops = 0.0, 0
    while ops < min_ops:
        m, tm = _machine(policy)
        if how == "wait_group":
            for i in range(n):
                m.cp_async_bulk_tensor_store(tm, [64 * (i % 4), 64 * ((i // 4) % 4)], (i % SLOTS) * 4096)
            m.cp_async_bulk_commit_group()
            t0 = time.perf_counter()
            m.cp_async_bulk_wait_group(0)
            total += time.perf_counter() - t0
        else:
            bars = _loads(m, tm, n)
            t0 = time.perf_counter()
            if how == "run":
                m.run()
            else:
                for b in bars[:min(n, NBARS)]:
                    assert b.try_wait(0)
            total += time.perf_counter() - t0
        assert m.pending == 0
        ops += n
    return total / ops


def deep_queue(depths=(8, 8192), policies=("in_order", "random"), ways=("run", "try_wait", "wait_group"),
               min_ops=16384):
    """{"<way>/<policy>": {"us_per_op": {depth: us}, "ratio": deepest / shallowest}}."""
    out = {}
    for how in ways:
        for pol in policies:
            us = {d: _time(pol, d, how, min_ops) * 1e6 for d in depths}
            out[f"{how}/{pol}"] = {"us_per_op": us, "ratio": us[max(depths)] / us[min(depths)]}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--depths", default="8,8192")
    args = ap.parse_args()
    depths = tuple(int(x) for x in args.depths.split(","))
    res = deep_queue(depths)
    if args.json:
        print(json.dumps(res, indent=1))
        return
    for key, r in res.items():
        cells = "  ".join(f"{d:6d} pending {u:7.2f} us/op" for d, u in r["us_per_op"].items())
        print(f"{key:22s} {cells}  ratio {r['ratio']:.2f}")


if __name__ == "__main__":
    main()
