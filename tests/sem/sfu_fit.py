"""How csrc/core/sem/sfu.c's lg2 tables were made (not run by the suite: it needs the unit's
output over whole binades, which sfu_probe.cu dumps on an H200, NAME_BASE_COUNT.bin each).
The exact cores of rcp, ex2, rsqrt and sqrt are tools/sfu_tables.py's (sfu_tables.c).

lg2's operands of [1, 2) and of [0.5, 1) are cut into segments of 2^16; in each a
least-squares cubic in the centred coordinate t is fitted to the unit's result (absolute,
units 2^-40).

    python3 tests/sem/sfu_fit.py DUMPDIR > tables.inc
"""
import os
import sys

import numpy as np


def load(d, name, base, count):
    return np.fromfile(os.path.join(d, "%s_%08x_%d.bin" % (name, base, count)), np.uint32)


def design(L, nbits):
    j = np.arange(L)
    t = (j + 0.5) / L * 2 - 1
    cols = [t ** 3, t ** 2, t, np.ones(L)] + [((j >> i) & 1).astype(float) for i in range(nbits)]
    return np.stack(cols, 1)


def fit(R, nbits, iters, segbits=16):
    L = 1 << segbits
    V = design(L, nbits)
    pinv = np.linalg.pinv(V)
    Rs = R.reshape(-1, L).astype(float)
    tgt = Rs.copy()
    for _ in range(iters):
        tgt = np.clip((tgt @ pinv.T) @ V.T, Rs - 0.45, Rs + 0.45)
    return tgt @ pinv.T


def main(d):
    P = 1 << 23
    lgp = load(d, "lg2f", 0x3F800000, P).view(np.float32).astype(float) * 2.0 ** 40  # absolute, 2^-40
    lgn = load(d, "lg2f", 0x3F000000, P).view(np.float32).astype(float) * 2.0 ** 40
    for name, R, nbits, iters in (("lg2p", lgp, 0, 0), ("lg2n", lgn, 0, 0)):
        C = fit(R, nbits, iters)
        rows = ",\n".join("    {%s}" % ", ".join(repr(float(v)) for v in row) for row in C)
        print("static const double sfu_tab_%s[%d][%d] = {\n%s\n};" % (name, C.shape[0], C.shape[1], rows))


if __name__ == "__main__":
    main(sys.argv[1])
