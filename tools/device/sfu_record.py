#!/usr/bin/env python3
"""Record on an H200 the MUFU cores over every reduced operand, the dumps tools/sfu_tables.py
builds csrc/core/sem/sfu_tables.c from.

It builds tests/sem/sfu_probe.cu (nvcc -O2 -arch=sm_90a), runs the .ftz forms over whole ranges
of operand bits and writes one file per form, OUTDIR/<name>.npz.xz: an .npz (lzma-compressed)
holding, per range, the first result and the differences of successive result bits
(`<base>_<count>|first`, `|diff`), which are small because every core is monotone.

    python tools/device/sfu_record.py OUTDIR

The ranges: rcp over [1, 2) (its core's 2^23 operands), ex2 over [1, 2) (its table's 2^23
fractions) and [0.5, 1), [-1, -0.5) (the fixed-point rule), rsqrt and sqrt over [1, 4) (their
2^24 operands), lg2 over [0.25, 8) by binades and [2^23, 2^24), tanh (no .ftz form) over
[2^-8, 32) by binades (it is odd: every negative operand of these binades gives the positive's
result negated, on an H200)."""
import io
import lzma
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "..", "..", "tests", "sem", "sfu_probe.cu")
P, Q = 1 << 23, 1 << 24
RANGES = {
    "rcpf": [(0x3F800000, P)],
    "ex2f": [(0x3F800000, P), (0x3F000000, P), (0xBF800000, P)],
    "rsqf": [(0x3F800000, Q)],
    "sqrtf": [(0x3F800000, Q)],
    "lg2f": [(0x3E800000, P), (0x3F000000, P), (0x3F800000, P), (0x40000000, P), (0x40800000, P),
             (0x4B000000, P)],
    "tanh": [(e << 23, P) for e in range(119, 132)],
}


def pack(tmp, outdir, name):
    arrays = {}
    for base, count in RANGES[name]:
        y = np.fromfile(os.path.join(tmp, "%s_%08x_%u.bin" % (name, base, count)), np.uint32)
        d = np.diff(y.astype(np.int64))
        for t in (np.int8, np.int16, np.int32, np.int64):
            if d.min() >= np.iinfo(t).min and d.max() <= np.iinfo(t).max:
                break
        key = "%08x_%d" % (base, count)
        arrays[key + "|first"] = y[:1]
        arrays[key + "|diff"] = d.astype(t)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path = os.path.join(outdir, name + ".npz.xz")
    with open(path, "wb") as f:
        f.write(lzma.compress(buf.getvalue(), preset=6))
    return path, os.path.getsize(path)


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "sfu_probe")
        subprocess.run(["nvcc", "-O2", "-arch=sm_90a", "-o", exe, PROBE], check=True)
        args = [exe, tmp]
        for name, ranges in RANGES.items():
            for base, count in ranges:
                args += [name, hex(base), str(count)]
        subprocess.run(args, check=True)
        with ProcessPoolExecutor(len(RANGES)) as ex:
            for path, size in ex.map(pack, [tmp] * len(RANGES), [outdir] * len(RANGES), list(RANGES)):
                print("%s: %d bytes" % (path, size))


def load(path):
    """The dumps of one file: {(base, count): uint32 results}."""
    with open(path, "rb") as f:
        z = np.load(io.BytesIO(lzma.decompress(f.read())))
    out = {}
    for k in z.files:
        if k.endswith("|first"):
            key = k[:-6]
            base, count = key.split("_")
            y = np.empty(int(count), np.uint32)
            y[0] = z[k][0]
            y[1:] = (np.int64(z[k][0]) + np.cumsum(z[key + "|diff"].astype(np.int64))).astype(np.uint32)
            out[(int(base, 16), int(count))] = y
    return out


if __name__ == "__main__":
    main(sys.argv[1])
