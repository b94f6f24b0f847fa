"""Write tests/data/isa/cvt_subset.npz: every recorded cvt form on a compact subset of its inputs.

    python tools/isa_cvt_subset.py [--golden DIR]

The H200's recordings (golden/isa/, 15 million elements) are too large to vendor; the subset
keeps, for every one of the 852 forms, the elements of a fixed choice of inputs:
- 16-bit float sources (every pattern recorded): the 1024 patterns whose low byte is 0x00,
  0x01, 0x80 or 0xFF (every sign and exponent, the halfway points of the integer roundings,
  the smallest and largest fractions, NaN payloads at both ends);
- the others (8,192 recorded): the first 192 (specials and format boundaries, in the
  recording's order) and 320 more evenly spaced (halfway points of every narrower format,
  integers of every length) and the first 8 signalling NaNs of f32 and of f64, the same
  indices for every form.
Keys: `forms` (cvt_forms.json's text), `ex_idx` / `pub_idx` (the chosen indices), the
chosen inputs under their recording names (`ex16`, `exf16x2`, `pub_s16`, ..., `pub_s<w>_b`,
`pub_s<w>_c` the second and third sources) and `<i>` the H200's outputs of form i.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import isa_cvt_all as H  # noqa: E402

OUT = os.path.join(H.ROOT, "tests", "data", "isa", "cvt_subset.npz")


def snans(x, w):
    """Indices of the signalling NaNs among w-bit floats x."""
    x = x.astype(np.uint64)
    e, q = {32: (0x7F800000, 1 << 22), 64: (0x7FF0000000000000, 1 << 51)}[w]
    e, q = np.uint64(e), np.uint64(q)
    return np.flatnonzero(((x & e) == e) & ((x & (q - np.uint64(1))) != 0) & ((x & q) == 0))


def choose(inputs):
    x = np.arange(65536)
    ex = np.flatnonzero(np.isin(x & 0xFF, [0x00, 0x01, 0x80, 0xFF]))
    rest = np.linspace(192, 8191, 320).round().astype(np.int64)
    sig = [snans(inputs["pub_s%d" % w], w)[:8] for w in (32, 64)]
    pub = np.unique(np.concatenate([np.arange(192), rest] + sig))
    return ex, pub


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--golden", default=H.GOLDEN)
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args(argv)
    forms, inputs, outs = H.load_golden(a.golden)
    ex, pub = choose(inputs)
    z = {"forms": np.array(json.dumps(forms)), "ex_idx": ex, "pub_idx": pub,
         "ex16": inputs["ex16"][ex], "exf16x2": inputs["exf16x2"][ex]}
    for w in (16, 32, 64):
        s = inputs["pub_s%d" % w]
        z["pub_s%d" % w] = s[pub]
        z["pub_s%d_b" % w] = s[inputs["pub_pb"]][pub]
        z["pub_s%d_c" % w] = s[inputs["pub_pc"]][pub]
    for i in range(len(forms)):
        o = outs[i]
        z[str(i)] = o[ex] if len(o) == 65536 else o[pub]
    np.savez_compressed(a.out, **z)
    print("%s: %d forms, %d bytes" % (a.out, len(forms), os.path.getsize(a.out)))


if __name__ == "__main__":
    main()
