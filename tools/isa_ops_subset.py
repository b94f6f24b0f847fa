#!/usr/bin/env python3
"""Write tests/data/isa/ops_subset.npz + ops_subset.json: the first N elements of every op of the
instruction recordings (golden/isa ops.json + isa.npz), whole warps, in the same format.

    python tools/isa_ops_subset.py [SRC_DIR] [--n 1024]

The first elements of each recording are its specials and format boundaries (golden/isa/README.md),
so a prefix keeps them; 16-bit special functions keep a spread of the 65,536 patterns as well.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT = os.path.join(os.path.dirname(ROOT), "shared", "golden", "isa")
OUT = os.path.join(ROOT, "tests", "data", "isa")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", nargs="?", default=DEFAULT)
    ap.add_argument("--n", type=int, default=1024)
    a = ap.parse_args(argv)
    meta = json.load(open(os.path.join(a.src, "ops.json")))
    data = np.load(os.path.join(a.src, "isa.npz"))
    arrays = {}
    for i, op in enumerate(meta["ops"]):
        n = len(data["%d_out0" % i])
        if n > a.n:
            # a prefix (specials first) and an even spread of the rest, whole warps of 32
            warps = np.arange(n // 32)
            keep = np.unique(np.concatenate([warps[:a.n // 64], np.linspace(0, len(warps) - 1, a.n // 64).astype(int)]))
            idx = (keep[:, None] * 32 + np.arange(32)).ravel()
        else:
            idx = np.arange(n)
        for j in range(len(op["ins"])):
            arrays["%d_in%d" % (i, j)] = data["%d_in%d" % (i, j)][idx]
        for k in range(len(op["outs"])):
            arrays["%d_out%d" % (i, k)] = data["%d_out%d" % (i, k)][idx]
        op["n"] = int(len(idx))
    os.makedirs(OUT, exist_ok=True)
    np.savez_compressed(os.path.join(OUT, "ops_subset.npz"), **arrays)
    meta["subset"] = "tools/isa_ops_subset.py --n %d" % a.n
    with open(os.path.join(OUT, "ops_subset.json"), "w") as f:
        json.dump(meta, f, indent=0)
    print("wrote %s: %d ops" % (OUT, len(meta["ops"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
