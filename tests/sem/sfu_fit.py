"""How csrc/core/sem/sfu.c's tables were made (not run by the suite: it needs the unit's
output over whole binades, which sfu_probe.cu dumps on an H200, NAME_BASE_COUNT.bin each).

For each core the reduced operand's 2^23 (rsqrt, sqrt: 2^24) values are cut into segments of
2^16; in each a least-squares cubic in the centred coordinate t, plus (rcp, ex2) one term per
low operand bit, is fitted to the unit's result in units of its last place, then nudged
(target clipped to within 0.45 of the recorded value, refitted) so that rounding it to
nearest gives the recorded value as often as it can.

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


def mant(y):
    return (y & 0x7FFFFF).astype(np.int64) | (1 << 23)


def main(d):
    P, Q = 1 << 23, 1 << 24
    rcp = mant(load(d, "rcpf", 0x3F800000, P)); rcp[0] = 1 << 24      # units 2^-24
    ex2 = mant(load(d, "ex2f", 0x3F800000, P))                         # 2^(1 + F/2^23) / 2
    rsq = mant(load(d, "rsqf", 0x3F800000, Q)); rsq[0] = 1 << 24      # [1, 4), units 2^-24
    sqr = mant(load(d, "sqrtf", 0x3F800000, Q))                        # [1, 4), units 2^-23
    lgp = load(d, "lg2f", 0x3F800000, P).view(np.float32).astype(float) * 2.0 ** 40  # absolute, 2^-40
    lgn = load(d, "lg2f", 0x3F000000, P).view(np.float32).astype(float) * 2.0 ** 40
    for name, R, nbits, iters in (("rcp", rcp, 16, 40), ("ex2", ex2, 16, 40), ("rsq", rsq, 0, 20),
                                  ("sqrt", sqr, 0, 20), ("lg2p", lgp, 0, 0), ("lg2n", lgn, 0, 0)):
        C = fit(R, nbits, iters)
        rows = ",\n".join("    {%s}" % ", ".join(repr(float(v)) for v in row) for row in C)
        print("static const double sfu_tab_%s[%d][%d] = {\n%s\n};" % (name, C.shape[0], C.shape[1], rows))


if __name__ == "__main__":
    main(sys.argv[1])
