"""csrc/core/sem/mma.c against mma.sync as an H200 ran it, bit for bit.

tests/data/isa/mma_sync.npz holds, per recorded instruction, each lane's fragment
registers in and out (32 warps of each golden/isa mma.sync op, and the targeted
vectors of docs/tensor-cores.md). Where the whole golden set is at hand
(shared/golden/isa), every one of its 256 warps per op is checked too.
Property tests: results that need no rounding equal the exact sum; special values.
"""
import ctypes
import json
import os
import re
import subprocess
from fractions import Fraction

import numpy as np
import pytest

from testpaths import DATA as _DATA, REPO as ROOT

SEM = os.path.join(ROOT, "csrc", "core", "sem")
DATA = os.path.join(_DATA, "isa", "mma_sync.npz")


def _types():
    text = open(os.path.join(SEM, "sem.h")).read()
    body = text[text.index("typedef enum {") + 14:text.index("} sem_type;")]
    names = [x.split("=")[0].strip() for x in re.sub(r"/\*.*?\*/", "", body).replace("\n", " ").split(",")]
    return {n[len("SEM_T_"):].lower(): i for i, n in enumerate(names) if n}


T = _types()


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("mma") / "libmma.so")
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared",
                    "-I", os.path.join(ROOT, "csrc", "core"), os.path.join(SEM, "mma.c"), "-o", out],
                   check=True)
    so = ctypes.CDLL(out)
    p32, p64 = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64)
    so.sem_mma_tile.argtypes = [ctypes.c_int] * 7 + [ctypes.c_uint, p32, p32, p64, p64]
    so.sem_mma_dot.argtypes = [ctypes.c_int] * 5 + [ctypes.c_uint, p32, p32, ctypes.c_uint64, p64]
    return so


def parse(name):
    """mma.sync name -> (m, n, k, dtype, atype, btype, ctype, satfinite)"""
    parts = name.split(".")
    shape = next(p for p in parts if p.startswith("m16"))
    k = int(shape.split("k")[1])
    d, a, b, c = parts[-4:]
    return k, d, a, b, c, "satfinite" in parts


def unfragment(name, ins, outs):
    """Registers (regs x lanes) -> A[w,16,K], B[w,8,K] (B's columns), C[w,16,8], D[w,16,8]:
    the fragment layouts of the PTX ISA for m16n8k{8,16,32} .row.col."""
    k, d, a, b, c, _ = parse(name)
    W = ins.shape[1] // 32
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    R = [x.reshape(W, 32).astype(np.uint64) for x in ins]
    A = np.zeros((W, 16, k), np.uint64)
    B = np.zeros((W, 8, k), np.uint64)
    if a in ("f16", "bf16") and k == 16:
        for r in range(4):
            row, col = g + 8 * (r & 1), 2 * t + 8 * (r >> 1)
            A[:, row, col], A[:, row, col + 1] = R[r] & 0xFFFF, R[r] >> 16
        for r in range(2):
            kk = 2 * t + 8 * r
            B[:, g, kk], B[:, g, kk + 1] = R[4 + r] & 0xFFFF, R[4 + r] >> 16
        ci = 6
    elif a == "tf32":
        for r in range(4):
            A[:, g + 8 * (r & 1), t + 4 * (r >> 1)] = R[r]
        for r in range(2):
            B[:, g, t + 4 * r] = R[4 + r]
        ci = 6
    elif k == 8:
        for r in range(2):
            A[:, g + 8 * r, 2 * t], A[:, g + 8 * r, 2 * t + 1] = R[r] & 0xFFFF, R[r] >> 16
        B[:, g, 2 * t], B[:, g, 2 * t + 1] = R[2] & 0xFFFF, R[2] >> 16
        ci = 3
    else:  # m16n8k32, 8-bit elements
        for r in range(4):
            row, col = g + 8 * (r & 1), 4 * t + 16 * (r >> 1)
            for q in range(4):
                A[:, row, col + q] = (R[r] >> (8 * q)) & 0xFF
        for r in range(2):
            kk = 4 * t + 16 * r
            for q in range(4):
                B[:, g, kk + q] = (R[4 + r] >> (8 * q)) & 0xFF
        ci = 6
    C = np.zeros((W, 16, 8), np.uint64)
    D = np.zeros((W, 16, 8), np.uint64)
    O = [x.reshape(W, 32).astype(np.uint64) for x in outs]
    if c == "f16":
        for r in range(2):
            C[:, g + 8 * r, 2 * t], C[:, g + 8 * r, 2 * t + 1] = R[ci + r] & 0xFFFF, R[ci + r] >> 16
            D[:, g + 8 * r, 2 * t], D[:, g + 8 * r, 2 * t + 1] = O[r] & 0xFFFF, O[r] >> 16
    else:
        for r in range(4):
            C[:, g + 8 * (r >> 1), 2 * t + (r & 1)] = R[ci + r]
            D[:, g + 8 * (r >> 1), 2 * t + (r & 1)] = O[r]
    return A, B, C, D


def run_tile(lib, name, A, B, C):
    k, d, a, b, c, sat = parse(name)
    W = A.shape[0]
    out = np.zeros((W, 16, 8), np.uint64)
    for w in range(W):
        a_ = np.ascontiguousarray(A[w].astype(np.uint32))
        b_ = np.ascontiguousarray(B[w].astype(np.uint32))
        c_ = np.ascontiguousarray(C[w].astype(np.uint64))
        d_ = np.zeros((16, 8), np.uint64)
        rc = lib.sem_mma_tile(T[a], T[b], T[c], T[d], 16, 8, k, 1 if sat else 0,
                              a_.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)),
                              b_.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)),
                              c_.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)),
                              d_.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)))
        assert rc == 0, name
        out[w] = d_
    return out


def recorded_sets():
    z = np.load(DATA)
    names = list(z["names"])
    return [(str(z[f"{j}_src"]), names[j], z[f"{j}_in"], z[f"{j}_out"]) for j in range(len(names))]


@pytest.mark.parametrize("j", range(26))
def test_recorded(lib, j):
    sets = recorded_sets()
    src, name, ins, outs = sets[j]
    A, B, C, D = unfragment(name, ins, outs)
    got = run_tile(lib, name, A, B, C)
    bad = np.argwhere(got != D)
    assert len(bad) == 0, (src, name, len(bad), [(tuple(x), hex(int(got[tuple(x)])), hex(int(D[tuple(x)])))
                                                for x in bad[:5]])


def _golden_dir():
    for p in (os.path.join(ROOT, "shared", "golden", "isa"), os.path.join(ROOT, "..", "shared", "golden", "isa"),
              "/work/shared/golden/isa"):
        if os.path.exists(os.path.join(p, "isa.npz")):
            return p
    return None


def test_golden_all_warps(lib):
    p = _golden_dir()
    if p is None:
        pytest.skip("shared/golden/isa not here")
    ops = json.load(open(os.path.join(p, "ops.json")))["ops"]
    z = np.load(os.path.join(p, "isa.npz"))
    seen = 0
    for i, o in enumerate(ops):
        if not o["name"].startswith("mma.sync"):
            continue
        ins = np.stack([z[f"{i}_in{j}"] for j in range(len(o["ins"]))])
        outs = np.stack([z[f"{i}_out{k}"] for k in range(len(o["outs"]))])
        A, B, C, D = unfragment(o["name"], ins, outs)
        got = run_tile(lib, o["name"], A, B, C)
        assert (got == D).all(), (o["name"], int((got != D).sum()))
        seen += D.size
    assert seen >= 7 * 32768


# ---- properties ---------------------------------------------------------------

def dot(lib, a, b, at, bt, ct, dt, c, flags=0):
    k = len(a)
    a_ = (ctypes.c_uint32 * k)(*a)
    b_ = (ctypes.c_uint32 * k)(*b)
    d_ = ctypes.c_uint64(0)
    assert lib.sem_mma_dot(T[at], T[bt], T[ct], T[dt], k, flags, a_, b_, c, ctypes.byref(d_)) == 0
    return d_.value


def f32(x):
    return int(np.array([x], np.float32).view(np.uint32)[0])


def f16(x):
    return int(np.array([x], np.float16).view(np.uint16)[0])


def bf16(x):
    u = f32(x)
    assert u & 0xFFFF == 0
    return u >> 16


def tofloat(bits, t):
    if t == "f32":
        return float(np.array([bits], np.uint32).view(np.float32)[0])
    return float(np.array([bits], np.uint16).view(np.float16)[0])


E4M3 = {}
for _v in range(256):
    _e, _m, _s = (_v >> 3) & 15, _v & 7, -1 if _v >> 7 else 1
    if not (_e == 15 and _m == 7):
        E4M3.setdefault(_s * (_m * 2.0 ** -9 if _e == 0 else (8 + _m) * 2.0 ** (_e - 10)), _v)


@pytest.mark.parametrize("form", ["f16", "bf16", "tf32", "e4m3", "f16acc"])
def test_exact_sums_are_exact(lib, form):
    """Small integers times powers of two: products and sums need no rounding,
    so every rule gives the exact sum."""
    rng = np.random.default_rng(7)
    k = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "f16acc": 16}[form]
    for _ in range(300):
        xs = rng.integers(-15, 16, k) * 2.0 ** rng.integers(-3, 3)
        ys = rng.integers(-15, 16, k) * 2.0 ** rng.integers(-3, 3)
        cv = float(rng.integers(-1000, 1000)) * 0.25
        if form == "f16acc":  # an f16 result holds 11 bits: integers below 2^11
            xs, ys = rng.integers(-7, 8, k) * 1.0, rng.integers(-7, 8, k) * 1.0
            cv = float(rng.integers(-100, 100))
        exact = float(np.dot(xs, ys) + cv)
        if form == "f16":
            d = dot(lib, [f16(x) for x in xs], [f16(y) for y in ys], "f16", "f16", "f32", "f32", f32(cv))
        elif form == "f16acc":
            d = dot(lib, [f16(x) for x in xs], [f16(y) for y in ys], "f16", "f16", "f16", "f16", f16(cv))
        elif form == "bf16":
            d = dot(lib, [bf16(x) for x in xs], [bf16(y) for y in ys], "bf16", "bf16", "f32", "f32", f32(cv))
        elif form == "tf32":
            d = dot(lib, [f32(x) for x in xs], [f32(y) for y in ys], "tf32", "tf32", "f32", "f32", f32(cv))
        else:
            xs = np.clip(xs, -15, 15)
            ys = np.clip(ys, -15, 15)
            exact = float(np.dot(xs, ys) + cv)
            d = dot(lib, [E4M3[float(x)] for x in xs], [E4M3[float(y)] for y in ys], "e4m3", "e4m3", "f32", "f32",
                    f32(cv))
        assert tofloat(d, "f16" if form == "f16acc" else "f32") == exact


def test_integer_forms(lib):
    rng = np.random.default_rng(3)
    for sat in (0, 1):
        for at, bt in (("s8", "s8"), ("u8", "s8"), ("s8", "u8"), ("u8", "u8")):
            for _ in range(200):
                a = rng.integers(0, 256, 32)
                b = rng.integers(0, 256, 32)
                c = int(rng.choice([0, 0x7FFFFF00, 0x80000100, int(rng.integers(0, 2 ** 32))]))
                sa = [x - 256 if at == "s8" and x >= 128 else int(x) for x in a]
                sb = [x - 256 if bt == "s8" and x >= 128 else int(x) for x in b]
                v = sum(x * y for x, y in zip(sa, sb)) + (c - 2 ** 32 if c >= 2 ** 31 else c)
                if sat:
                    v = max(-2 ** 31, min(2 ** 31 - 1, v))
                assert dot(lib, [int(x) for x in a], [int(x) for x in b], at, bt, "s32", "s32", c, sat) == v % 2 ** 32


def test_specials(lib):
    one, inf, nan, z = f16(1.0), 0x7C00, 0x7E00, 0
    pad = [z] * 14
    assert dot(lib, [inf, one] + pad, [one, one] + pad, "f16", "f16", "f32", "f32", 0) == 0x7F800000
    assert dot(lib, [inf, one] + pad, [z, one] + pad, "f16", "f16", "f32", "f32", 0) == 0x7FFFFFFF
    assert dot(lib, [inf, inf] + pad, [one, 0xBC00] + pad, "f16", "f16", "f32", "f32", 0) == 0x7FFFFFFF
    assert dot(lib, [nan, one] + pad, [one, one] + pad, "f16", "f16", "f32", "f32", 0) == 0x7FFFFFFF
    assert dot(lib, [one] + pad + [z], [one] + pad + [z], "f16", "f16", "f32", "f32", 0xFF800000) == 0xFF800000
    assert dot(lib, [nan, one] + pad, [one, one] + pad, "f16", "f16", "f16", "f16", 0) == 0x7FFF
    # a zero result is +0, whatever the signs of its terms
    assert dot(lib, [0x8000] * 16, [one] * 16, "f16", "f16", "f32", "f32", 0x80000000) == 0
    assert dot(lib, [0x8000] * 16, [one] * 16, "f16", "f16", "f16", "f16", 0x8000) == 0
    # tf32 reads only the top 19 bits: a NaN whose payload is all in the low 13 is an infinity
    assert dot(lib, [0x7F800001] + [0] * 7, [f32(1.0)] + [0] * 7, "tf32", "tf32", "f32", "f32", 0) == 0x7F800000


def test_truncation_and_alignment(lib):
    """The rules that set the tensor cores apart from IEEE (docs/tensor-cores.md)."""
    b = bf16
    z6 = [0] * 14
    # c is cut at 2^(E-25): 2^24 - 2^24 + 1 keeps the 1, 2^26 - 2^26 + 1 loses it
    assert dot(lib, [b(2.0 ** 12), b(2.0 ** 12)] + z6, [b(2.0 ** 12), b(-2.0 ** 12)] + z6, "bf16", "bf16", "f32", "f32",
               f32(1.0)) == f32(1.0)
    assert dot(lib, [b(2.0 ** 13), b(2.0 ** 13)] + z6, [b(2.0 ** 13), b(-2.0 ** 13)] + z6, "bf16", "bf16", "f32", "f32",
               f32(1.0)) == 0
    # toward zero: 1 - 1.5 * 2^-25 (the term cut to 2^-25) gives 1 - 2^-24's neighbour below 1
    assert dot(lib, [f16(1.0)] + [0] * 15, [f16(1.0)] + [0] * 15, "f16", "f16", "f32", "f32",
               f32(-3 * 2.0 ** -26)) == 0x3F7FFFFF
    # past FLT_MAX by half an ulp stays FLT_MAX (toward zero); reaching 2^128 is infinity
    cmax = f32(2.0 ** 127 * (2 - 2 ** -23 - 1.9921875))
    assert dot(lib, [b(1.9921875 * 2 ** 127), b(2.0 ** 103)] + z6, [b(1.0), b(1.0)] + z6, "bf16", "bf16", "f32", "f32",
               cmax) == 0x7F7FFFFF
    assert dot(lib, [b(1.9921875 * 2 ** 127), b(2.0 ** 104)] + z6, [b(1.0), b(1.0)] + z6, "bf16", "bf16", "f32", "f32",
               cmax) == 0x7F800000
    # subnormal results are kept (no flush), cut toward zero
    assert dot(lib, [b(2.0 ** -70)] + [0] * 15, [b(2.0 ** -70)] + [0] * 15, "bf16", "bf16", "f32", "f32", 0) == 0x200


def _exact_fraction(bits, t):
    if t == "f32":
        s, e, m = bits >> 31, (bits >> 23) & 255, bits & 0x7FFFFF
        v = Fraction(m, 1 << 23) * Fraction(2) ** -126 if e == 0 else Fraction(m + (1 << 23), 1 << 23) * Fraction(2) ** (e - 127)
    else:
        s, e, m = bits >> 15, (bits >> 10) & 31, bits & 0x3FF
        v = Fraction(m, 1 << 10) * Fraction(2) ** -14 if e == 0 else Fraction(m + 1024, 1024) * Fraction(2) ** (e - 15)
    return -v if s else v


def test_toward_zero_bounds(lib):
    """f32 results lie between the exact sum and zero, closer than 2^(E-22) (17 cut
    terms, one rounding) - a check independent of the exact rule."""
    rng = np.random.default_rng(11)
    for _ in range(400):
        xs = [int(x) for x in rng.integers(0, 0x7C00, 16) | (rng.integers(0, 2, 16) << 15)]
        ys = [int(x) for x in rng.integers(0, 0x7C00, 16) | (rng.integers(0, 2, 16) << 15)]
        c = f32(float(rng.standard_normal()))
        d = dot(lib, xs, ys, "f16", "f16", "f32", "f32", c)
        ex = sum(_exact_fraction(x, "f16") * _exact_fraction(y, "f16") for x, y in zip(xs, ys)) + _exact_fraction(c, "f32")
        got = _exact_fraction(d, "f32")
        emax = max([((x >> 10) & 31) + ((y >> 10) & 31) - 30 for x, y in zip(xs, ys)] + [((c >> 23) & 255) - 127])
        assert abs(got - ex) < Fraction(2) ** (emax - 20)
