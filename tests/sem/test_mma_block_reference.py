"""sem_mma_tile / sem_wgmma_tile (csrc/core/sem/mma.c, the tile path that decodes A and B
once) against a slow model of the native block written here from docs/tensor-cores.md's
rules alone, with Python integers: Finding 1 (exact products, E the largest nominal
exponent, every term cut toward zero at 2^(E-25), one rounding: f32 toward zero), 2
(past f32's range infinity, subnormal results kept, a zero result +0), 3 (canonical NaN,
infinities), 4 (f16 accumulator: nearest even) and 7 (wgmma's fp8, QGMMA: cut at
2^(E-13), 13 fraction bits of an f32 result). Random tiles mix wide and narrow exponent
spreads, subnormals, zeros, cancellation and a few NaNs / infinities."""
import ctypes
import os
import subprocess

import numpy as np
import pytest

from testpaths import REPO as ROOT
from test_mma import T

SEM = os.path.join(ROOT, "csrc", "core", "sem")

# format: (exponent bits, fraction bits, bias, e4m3's "only S.1111.111 is NaN, no infinity")
FMT = {"f16": (5, 10, 15, False), "bf16": (8, 7, 127, False), "tf32": (8, 10, 127, False),
       "f32": (8, 23, 127, False), "e4m3": (4, 3, 7, True), "e5m2": (5, 2, 15, False)}
NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF}
INF = {"f32": 0x7F800000, "f16": 0x7C00}


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("mmaref") / "libmma.so")
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared",
                    "-I", os.path.join(ROOT, "csrc", "core"), os.path.join(SEM, "mma.c"), "-o", out],
                   check=True)
    so = ctypes.CDLL(out)
    p32, p64 = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64)
    so.sem_mma_tile.argtypes = [ctypes.c_int] * 7 + [ctypes.c_uint, p32, p32, p64, p64]
    so.sem_wgmma_tile.argtypes = [ctypes.c_int] * 6 + [ctypes.c_uint, p32, p32, p64, p64]
    return so


def decode(t, bits):
    """("nan",) / ("inf", sign) / (sign, significand, nominal exponent, fraction bits)"""
    if t == "tf32":
        bits >>= 13                       # the register's low 13 bits are not read
    eb, mb, bias, fn = FMT[t]
    e, m, s = (bits >> mb) & ((1 << eb) - 1), bits & ((1 << mb) - 1), (bits >> (eb + mb)) & 1
    if e == (1 << eb) - 1 and (not fn or m == (1 << mb) - 1):
        return ("nan",) if (m or fn) else ("inf", s)
    if e == 0:
        return (s, m, 1 - bias, mb)       # a subnormal's nominal exponent is emin
    return (s, m | (1 << mb), e - bias, mb)


def round_f32_rz(v, x):
    """v * 2^x (v a nonzero int) toward zero to f32; 2^128 and beyond: infinity."""
    s, a = (1 if v < 0 else 0), abs(v)
    ex = a.bit_length() - 1 + x           # a * 2^x lies in [2^ex, 2^(ex+1))
    if ex >= 128:
        return (s << 31) | 0x7F800000
    q_exp = max(ex, -126) - 23            # the unit of the result's last bit
    sh = x - q_exp
    q = a << sh if sh >= 0 else a >> -sh
    if q == 0:
        return 0                          # a zero result is +0, whatever its sign
    if q >> 23 == 0:
        return (s << 31) | q              # subnormal
    return (s << 31) | ((q_exp + 23 + 127) << 23) | (q & 0x7FFFFF)


def round_f16_rne(v, x):
    s, a = (1 if v < 0 else 0), abs(v)
    ex = a.bit_length() - 1 + x
    q_exp = max(ex, -14) - 10
    sh = x - q_exp
    if sh >= 0:
        q = a << sh
    else:
        q, rem = a >> -sh, a & ((1 << -sh) - 1)
        half = 1 << (-sh - 1)
        if rem > half or (rem == half and q & 1):
            q += 1
    if q >> 11:                           # carried into the next binade
        q >>= 1
        q_exp += 1
    if q == 0:
        return 0
    if q >> 10 == 0:
        return (s << 15) | q
    if q_exp + 10 + 15 >= 31:
        return (s << 15) | 0x7C00
    return (s << 15) | ((q_exp + 10 + 15) << 10) | (q & 0x3FF)


def block(at, bt, acc, a, b, c, p, fbits):
    nan = pinf = ninf = False
    terms = []                            # (sign, significand, nominal exponent, fraction bits)
    for x, y in zip(a, b):
        u, w = decode(at, x), decode(bt, y)
        if u[0] == "nan" or w[0] == "nan":
            nan = True
        elif u[0] == "inf" or w[0] == "inf":
            other = w if u[0] == "inf" else u
            sign = (u[1] if u[0] == "inf" else u[0]) ^ (w[1] if w[0] == "inf" else w[0])
            if other[0] != "inf" and other[1] == 0:
                nan = True                # inf * 0
            elif sign:
                ninf = True
            else:
                pinf = True
        elif u[1] and w[1]:
            terms.append((u[0] ^ w[0], u[1] * w[1], u[2] + w[2], u[3] + w[3]))
    cv = decode(acc, c)
    if cv[0] == "nan":
        nan = True
    elif cv[0] == "inf":
        ninf, pinf = ninf or cv[1] == 1, pinf or cv[1] == 0
    elif cv[1]:
        terms.append(cv)
    if nan or (pinf and ninf):
        return NAN[acc]
    if pinf or ninf:
        return INF[acc] | ((1 << (31 if acc == "f32" else 15)) if ninf else 0)
    if not terms:
        return 0
    E = max(t[2] for t in terms)
    total = 0
    for s, sig, ne, fr in terms:          # the term in units of 2^(E-p), cut toward zero
        sh = (ne - fr) - (E - p)
        mag = sig << sh if sh >= 0 else sig >> -sh
        total += -mag if s else mag
    if total == 0:
        return 0
    if acc == "f16":
        return round_f16_rne(total, E - p)
    r = round_f32_rz(total, E - p)
    if fbits < 23 and (r & 0x7F800000) != 0x7F800000:
        r &= ~((1 << (23 - fbits)) - 1)
    return r


def elements(rng, t, size, mode):
    """Bit patterns of t: mode 0 any bits; 1 exponents near the middle (cancellation);
    2 the smallest exponents (subnormals); 3 the largest (overflow, a few specials);
    4 the whole finite range. A sixth of the elements are zeros outside mode 0."""
    eb, mb, _, fn = FMT[t]
    emax = (1 << eb) - 1
    if mode == 0:
        x = rng.integers(0, 1 << (1 + eb + mb), size)
    else:
        lo, hi = {1: (emax // 2 - 2, emax // 2 + 3), 2: (0, 3), 3: (emax - 3, emax + 1), 4: (0, emax)}[mode]
        e = rng.integers(lo, hi, size)
        if mode == 3:                      # specials: about one element in 200
            e = np.where((e == emax) & (rng.random(size) > 0.02), emax - 1, e)
        s = rng.integers(0, 2, size)
        m = rng.integers(0, 1 << mb, size)
        x = np.where(rng.random(size) < 1 / 6, 0, (e << mb) | m) | (s << (eb + mb))
    if fn:                                 # e4m3: keep its one NaN pattern rare
        x = np.where(((x & 0x7F) == 0x7F) & (rng.random(size) < 0.9), x ^ 1, x)
    x = x.astype(np.uint64)
    if t == "tf32":
        x = (x << np.uint64(13)) | rng.integers(0, 1 << 13, size).astype(np.uint64)
    return x


# (instruction, a, b, accumulator, k, p, f32 fraction bits)
FORMS = [("mma", "f16", "f16", "f32", 16, 25, 23), ("mma", "f16", "f16", "f16", 16, 25, 23),
         ("mma", "bf16", "bf16", "f32", 16, 25, 23), ("mma", "tf32", "tf32", "f32", 8, 25, 23),
         ("mma", "f16", "f16", "f32", 8, 25, 23), ("wgmma", "f16", "f16", "f32", 16, 25, 23),
         ("wgmma", "bf16", "bf16", "f32", 16, 25, 23), ("wgmma", "e4m3", "e4m3", "f32", 32, 13, 13),
         ("wgmma", "e5m2", "e4m3", "f32", 32, 13, 13), ("wgmma", "e4m3", "e5m2", "f16", 32, 13, 23),
         ("wgmma", "e5m2", "e5m2", "f32", 32, 13, 13)]


@pytest.mark.parametrize("form", FORMS, ids=lambda f: "-".join(map(str, f[:5])))
def test_tile_matches_the_block_rules(lib, form):
    kind, at, bt, acc, k, p, fbits = form
    rng = np.random.default_rng(FORMS.index(form))
    p32, p64 = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64)
    checked = 0
    for mode in range(5):
        for m, n in ((16, 8), (5, 21)):  # 21 columns: a partial chunk of the tile path
            a = elements(rng, at, m * k, mode).astype(np.uint32)
            b = elements(rng, bt, n * k, mode).astype(np.uint32)
            c = elements(rng, acc, m * n, mode if mode != 3 else 1)
            if mode == 2:
                c[::3] = 0
            d = np.zeros(m * n, np.uint64)
            args = [a.ctypes.data_as(p32), b.ctypes.data_as(p32), c.ctypes.data_as(p64), d.ctypes.data_as(p64)]
            if kind == "mma":
                rc = lib.sem_mma_tile(T[at], T[bt], T[acc], T[acc], m, n, k, 0, *args)
            else:
                rc = lib.sem_wgmma_tile(T[at], T[bt], T[acc], m, n, k, 0, *args)
            assert rc == 0
            for i in range(m):
                for j in range(n):
                    want = block(at, bt, acc, [int(x) for x in a[i * k:(i + 1) * k]],
                                 [int(y) for y in b[j * k:(j + 1) * k]], int(c[i * n + j]), p, fbits)
                    assert int(d[i * n + j]) == want, (form, mode, i, j, hex(int(d[i * n + j])), hex(want))
                    checked += 1
    assert checked == 5 * (16 * 8 + 5 * 21)
