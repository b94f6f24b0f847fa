"""The semantics library's video functions and fns called alone (csrc/core/sem/video.c,
video_simd.c, intops.c), a sem_ctl written by hand in sem/video.h's layout, against
tests/video_reference.py (the ISA's pseudocode in Python, apart from the C code)."""
import random

import numpy as np
import pytest

import video_reference as V
from isa_cvt_all import SemCtl, T

U32, S32 = T["u32"], T["s32"]
SSEL = {None: 0, "b0": 1, "b1": 2, "b2": 3, "b3": 4, "h0": 5, "h1": 6}
OP2 = {None: 0, "add": 1, "min": 2, "max": 3}
CMP = ["eq", "ne", "lt", "le", "gt", "ge"]


def ctl(sem, op, dt=U32, at=U32, bt=U32, **kw):
    k = SemCtl()
    k.op = sem.lib.sem_op_from_name(op.encode())
    assert k.op, op
    k.dt, k.at, k.bt = dt, at, bt
    for f, v in kw.items():
        setattr(k, f, v)
    return k


def operands(rng, n=512):
    edges = np.array([0, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF], np.uint64)
    x = rng.integers(0, 1 << 32, (3, n), dtype=np.uint64)
    pick = rng.random((3, n)) < 0.4
    x[pick] = rng.choice(edges, pick.sum())
    return x


@pytest.mark.parametrize("seed", range(8))
def test_scalar_video_functions(sem, seed):
    """vadd ... vmax, vshl / vshr, vset: partSelectSignExtend, optSaturate, optSecOp, optMerge."""
    rnd, rng = random.Random(seed), np.random.default_rng(seed)
    for _ in range(12):
        op = rnd.choice(["vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vset"])
        dt, at, bt = (rnd.choice(["u32", "s32"]) for _ in range(3))
        asel, bsel = rnd.choice(list(SSEL)), rnd.choice(list(SSEL))
        op2 = rnd.choice(list(OP2))
        dsel = rnd.choice(list(SSEL)[1:]) if op2 is None and rnd.random() < 0.5 else None
        sat = op != "vset" and rnd.random() < 0.5
        mode = rnd.choice(["clamp", "wrap"]) if op in ("vshl", "vshr") else None
        bt = "u32" if mode else bt
        cmp = rnd.randrange(6)
        k = ctl(sem, op, T[dt], T[at], T[bt], aux=cmp if op == "vset" else 0, aux2=OP2[op2],
                flags=(2 if sat else 0) | ((1 << 14) if mode == "wrap" else (1 << 15) if mode else 0),
                imm=SSEL[asel] | SSEL[bsel] << 4 | SSEL[dsel] << 8)
        a, b, c = operands(rng)
        got, _ = sem.run(k, [a, b, c])
        for i in range(len(a)):
            want = V.scalar(op, None if op == "vset" else dt, at, bt, int(a[i]), int(b[i]), int(c[i]), asel, bsel,
                            dsel, sat, op2, mode, CMP[cmp])
            assert int(got[i]) == want, (op, dt, at, bt, asel, bsel, dsel, sat, op2, mode, hex(int(a[i])),
                                         hex(int(b[i])), hex(int(c[i])), hex(int(got[i])), hex(want))


@pytest.mark.parametrize("seed", range(6))
def test_vmad_function(sem, seed):
    """vmad: the product's or c's negation (neg bits), .po, .sat, .shr7 / .shr15."""
    rnd, rng = random.Random(seed), np.random.default_rng(100 + seed)
    for _ in range(12):
        dt, at, bt = (rnd.choice(["u32", "s32"]) for _ in range(3))
        asel, bsel = rnd.choice(list(SSEL)), rnd.choice(list(SSEL))
        na, nb, nc = rnd.choice([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, 1, 1)])
        po = not (na ^ nb or nc) and rnd.random() < 0.5
        sat, scale = rnd.random() < 0.5, rnd.choice([0, 7, 15])
        k = ctl(sem, "vmad", T[dt], T[at], T[bt], pad=na | nb << 1 | nc << 2, aux=scale,
                flags=(2 if sat else 0) | ((1 << 20) if po else 0), imm=SSEL[asel] | SSEL[bsel] << 4)
        a, b, c = operands(rng)
        got, _ = sem.run(k, [a, b, c])
        for i in range(len(a)):
            want = V.vmad(at, bt, int(a[i]), int(b[i]), int(c[i]), asel, bsel, bool(na), bool(nb), bool(nc), po,
                          sat, scale)
            assert int(got[i]) == want


@pytest.mark.parametrize("seed", range(6))
def test_simd_video_function(sem, seed):
    """vop2 / vop4: lanes chosen from {b, a}, .sat to the lane's range, merge or accumulate by mask."""
    rnd, rng = random.Random(seed), np.random.default_rng(200 + seed)
    for _ in range(12):
        lanes = rnd.choice([2, 4])
        op = rnd.choice(["vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax", "vset"])
        dt, at, bt = (rnd.choice(["u32", "s32"]) for _ in range(3))
        asel = [rnd.randrange(2 * lanes) for _ in range(lanes)] if rnd.random() < 0.7 else None
        bsel = [rnd.randrange(2 * lanes) for _ in range(lanes)] if rnd.random() < 0.7 else None
        mask = sorted(rnd.sample(range(lanes), rnd.randint(1, lanes))) if rnd.random() < 0.6 else None
        add = rnd.random() < 0.4
        sat = op != "vset" and not add and rnd.random() < 0.5
        cmp = rnd.randrange(6)
        imm = 0
        if asel:
            imm |= sum(v << 3 * i for i, v in enumerate(asel)) | 1 << 28
        if bsel:
            imm |= sum(v << (12 + 3 * i) for i, v in enumerate(bsel)) | 1 << 29
        if mask:
            imm |= sum(1 << (24 + i) for i in mask) | 1 << 30
        k = ctl(sem, "%s%d" % (op, lanes), T[dt], T[at], T[bt], aux=cmp, aux2=1 if add else 0,
                flags=2 if sat else 0, imm=imm)
        a, b, c = operands(rng)
        got, _ = sem.run(k, [a, b, c])
        for i in range(len(a)):
            want = V.simd(op, lanes, dt, at, bt, int(a[i]), int(b[i]), int(c[i]), asel, bsel, mask, sat, add,
                          CMP[cmp])
            assert int(got[i]) == want


def test_fns_function(sem):
    """fns (9.7.1.17): the ISA's examples, and its Semantics block over random masks."""
    k = ctl(sem, "fns", T["b32"], T["b32"], 0)
    got, _ = sem.run(k, [np.full(4, 0xAAAAAAAA), np.array([3, 3, 2, 2]), np.array([1, 0xFFFFFFFF, 1, 0xFFFFFFFF])])
    assert [int(v) for v in got] == [3, 3, 3, 1]
    rng = np.random.default_rng(9)
    m = rng.integers(0, 1 << 32, 2000, dtype=np.uint64)
    base = rng.integers(0, 32, 2000, dtype=np.uint64)
    off = (rng.integers(-34, 35, 2000) & 0xFFFFFFFF).astype(np.uint64)
    got, _ = sem.run(k, [m, base, off])
    for i in range(2000):
        o = int(off[i]) - (1 << 32) if int(off[i]) >> 31 else int(off[i])
        want = 0xFFFFFFFF
        if o == 0:
            want = int(base[i]) if (int(m[i]) >> int(base[i])) & 1 else want
        else:
            bits = [p for p in (range(int(base[i]), 32) if o > 0 else range(int(base[i]), -1, -1))
                    if (int(m[i]) >> p) & 1]
            want = bits[abs(o) - 1] if len(bits) >= abs(o) else want
        assert int(got[i]) == want
