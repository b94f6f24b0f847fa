#!/usr/bin/env python3
"""Pack the output of sincos_record.cu into OUT/sincos_q.npz.xz (lzma): `reached` (np.packbits of
the 2^25 flags: q that some f32 operand reaches) and, for sin and cos, `first` and `diff` (the
differences of successive results, an unreached q holding the result before it), which
tools/sfu_tables.py --only sin reads.

    nvcc -O2 -arch=sm_90a -o /tmp/sr tools/device/sincos_record.cu && /tmp/sr /tmp/q
    python tools/device/sincos_pack.py /tmp/q OUT"""
import io
import lzma
import os
import sys

import numpy as np


def pack(src, out):
    seen = np.fromfile(os.path.join(src, "reached_q.bin"), np.uint8).astype(bool)
    arrays = {"reached": np.packbits(seen)}
    idx = np.maximum.accumulate(np.where(seen, np.arange(seen.size), 0))
    for f in ("sin", "cos"):
        y = np.fromfile(os.path.join(src, f + "_q.bin"), np.uint32)[idx].astype(np.int64)
        arrays[f + "|first"] = y[:1]
        arrays[f + "|diff"] = np.diff(y).astype(np.int32)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path = os.path.join(out, "sincos_q.npz.xz")
    with open(path, "wb") as fh:
        fh.write(lzma.compress(buf.getvalue(), preset=6))
    print("%s: %d bytes, %d of 2^25 q reached" % (path, os.path.getsize(path), seen.sum()))


def load(path):
    """(reached flags, {"sin": results, "cos": results}) over the 2^25 q."""
    with open(path, "rb") as fh:
        z = np.load(io.BytesIO(lzma.decompress(fh.read())))
    seen = np.unpackbits(z["reached"]).astype(bool)
    out = {}
    for f in ("sin", "cos"):
        y = np.empty(seen.size, np.int64)
        y[0] = z[f + "|first"][0]
        y[1:] = y[0] + np.cumsum(z[f + "|diff"].astype(np.int64))
        out[f] = y.astype(np.uint32)
    return seen, out


if __name__ == "__main__":
    pack(sys.argv[1], sys.argv[2])
