"""The half precision comparisons (PTX ISA 9.7.4.x, "Half Precision Comparison Instructions":
set and setp with .f16 .bf16 .f16x2 .bf16x2 sources) run through ptx.Kernel. The expected values
are computed here, by NumPy's float16 and ml_dtypes' bfloat16 compares, over random operands and
the special ones (+-0, +-inf, NaNs, subnormals, the largest numbers, equal pairs). The rules:

- a compare of NaN is false, but the unordered ones (equ neu ltu leu gtu geu, and nan) are true;
- setp of an x2 type: p from the low halves, q from the high halves, each combined with c by
  BoolOp (c, or !c, as written);
- set writes 1.0 of a .f16 / .bf16 destination (0x3C00 / 0x3F80), all ones of an integer one
  (0xFFFF for .u16 / .s16, 0xFFFFFFFF for .u32 / .s32); of an x2 source each half: 1.0 of the
  .f16x2 / .bf16x2 destination or 0xFFFF of .u32 / .s32;
- .ftz (f16 only) flushes a subnormal operand to a zero of its sign before the compare.
"""
import os
import re
import subprocess
import tempfile

import ml_dtypes
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

import ptx_forms as pf

KERNEL = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
    .reg .b32 %r<8>;
    .reg .b16 %h<8>;
    .reg .pred %p<4>;
    .reg .b64 %rd<4>;
    .reg .b32 %t;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %rd3, %t, 12;
    ld.param.u64 %rd1, [pin];
    add.s64 %rd1, %rd1, %rd3;
    mul.wide.u32 %rd3, %t, 8;
    ld.param.u64 %rd2, [pout];
    add.s64 %rd2, %rd2, %rd3;
    ld.global.b32 %r1, [%rd1];
    ld.global.b32 %r2, [%rd1+4];
    ld.global.b32 %r3, [%rd1+8];
    cvt.u16.u32 %h1, %r1;
    cvt.u16.u32 %h2, %r2;
    setp.ne.u32 %p3, %r3, 0;
    mov.u32 %r4, 0;
    mov.u32 %r5, 0;
    LINE
    st.global.b32 [%rd2], %r4;
    st.global.b32 [%rd2+4], %r5;
    ret;
}
"""
CMPS = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]
NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}
MBITS = {"f16": 10, "bf16": 7}
N = 256


def specials(h):
    """The special encodings of a half format: zeros, infinities, NaNs, subnormals, extremes, 1.0."""
    m = MBITS[h]
    e = 15 - m
    inf = ((1 << e) - 1) << m
    one = 0x3C00 if h == "f16" else 0x3F80
    out = [0, 0x8000, inf, inf | 0x8000, inf | 1, inf | (1 << (m - 1)), 0x8000 | inf | 3, 1, 0x8001,
           (1 << m) - 1, 0x8000 | ((1 << m) - 1), inf - 1, 0x8000 | (inf - 1), 1 << m, one, 0x8000 | one]
    return out


def operands(h, seed, n=N):
    """(a, b) 16-bit encodings: random, specials against everything, and equal pairs."""
    rng = np.random.default_rng(seed)
    sp = np.array(specials(h), np.uint16)
    a = rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
    b = rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
    k = rng.random(n)
    a = np.where(k < 0.35, sp[rng.integers(0, len(sp), n)], a)
    b = np.where(rng.random(n) < 0.35, sp[rng.integers(0, len(sp), n)], b)
    b = np.where(k > 0.85, a, b)                      # equal pairs (NaN with itself included)
    b = np.where((k > 0.8) & (k <= 0.85), a ^ 0x8000, b)   # +0 / -0 and sign flips
    return a, b


def flush(h, x):
    """.ftz: a subnormal encoding becomes the zero of its sign."""
    sub = (x & 0x7FFF) < (1 << MBITS[h])
    return np.where(sub, x & 0x8000, x).astype(np.uint16)


def compare(cmp, h, a, b, ftz=False):
    """The ISA's compare of two half encodings, as NumPy / ml_dtypes compare them."""
    if ftz:
        a, b = flush(h, a), flush(h, b)
    x, y = a.view(NP[h]), b.view(NP[h])
    un = np.isnan(x.astype(np.float32)) | np.isnan(y.astype(np.float32))
    if cmp in ("num", "nan"):
        return ~un if cmp == "num" else un
    with np.errstate(invalid="ignore"):
        r = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp[:2]]
    return (r & ~un) | un if cmp.endswith("u") else r & ~un


def combine(boolop, v, c):
    return {"": v, "and": v & c, "or": v | c, "xor": v ^ c}[boolop]


def run(line, a32, b32, c=None):
    """(r4, r5) of every thread after `line` (a in %r1 / %h1, b in %r2 / %h2, c in %p3)."""
    n = len(a32)
    c = np.zeros(n, np.uint32) if c is None else c.astype(np.uint32)
    inp = np.stack([a32.astype(np.uint32), b32.astype(np.uint32), c], axis=1).reshape(-1).copy()
    out = np.zeros(2 * n, np.uint32)
    text = KERNEL.replace("LINE", line)
    assert [d for d in ptx.check(text) if d.severity == "error"] == [], line
    m = pa.Machine()
    ptx.Kernel(text).launch(m, grid=1, block=n, params={"pin": m.register(inp), "pout": m.register(out)})
    return out[0::2], out[1::2]


SETP_OUT = "selp.u32 %r4, 1, 0, %p1;\n    selp.u32 %r5, 1, 0, %p2;"


@pytest.mark.parametrize("h", ["f16", "bf16"])
@pytest.mark.parametrize("cmp", CMPS)
def test_setp_scalar(h, cmp):
    """setp.CmpOp.f16 / .bf16 p, a, b: the compare of the two halves, NaN per the ISA."""
    a, b = operands(h, 11 + CMPS.index(cmp))
    p, _ = run(f"setp.{cmp}.{h} %p1, %h1, %h2;\n    {SETP_OUT}", a, b)
    assert np.array_equal(p.astype(bool), compare(cmp, h, a, b)), cmp


@pytest.mark.parametrize("h", ["f16", "bf16"])
@pytest.mark.parametrize("cmp", CMPS)
def test_setp_x2_halves(h, cmp):
    """setp.CmpOp.f16x2 p|q, a, b: p from the low halves, q from the high halves."""
    alo, blo = operands(h, 40 + CMPS.index(cmp))
    ahi, bhi = operands(h, 80 + CMPS.index(cmp))
    a = alo.astype(np.uint32) | ahi.astype(np.uint32) << 16
    b = blo.astype(np.uint32) | bhi.astype(np.uint32) << 16
    p, q = run(f"setp.{cmp}.{h}x2 %p1|%p2, %r1, %r2;\n    {SETP_OUT}", a, b)
    assert np.array_equal(p.astype(bool), compare(cmp, h, alo, blo))
    assert np.array_equal(q.astype(bool), compare(cmp, h, ahi, bhi))
    # the halves differ somewhere, so a swap of p and q would show
    assert not np.array_equal(compare(cmp, h, alo, blo), compare(cmp, h, ahi, bhi))


@pytest.mark.parametrize("t", ["f16", "bf16", "f16x2", "bf16x2"])
@pytest.mark.parametrize("boolop", ["and", "or", "xor"])
@pytest.mark.parametrize("neg", [False, True])
def test_setp_boolop(t, boolop, neg):
    """setp.CmpOp.BoolOp p[|q], a, b, {!}c: each compare combined with c (or !c). A scalar's q
    is not written (ptxas refuses p|q there); an x2's q is the high halves' compare with c."""
    h = t[:-2] if t.endswith("x2") else t
    alo, blo = operands(h, 7)
    ahi, bhi = operands(h, 8)
    c = np.random.default_rng(9).integers(0, 2, N).astype(bool)
    cc = ~c if neg else c
    bang = "!" if neg else ""
    if t.endswith("x2"):
        a = alo.astype(np.uint32) | ahi.astype(np.uint32) << 16
        b = blo.astype(np.uint32) | bhi.astype(np.uint32) << 16
        p, q = run(f"setp.ltu.{boolop}.{t} %p1|%p2, %r1, %r2, {bang}%p3;\n    {SETP_OUT}", a, b, c)
        assert np.array_equal(q.astype(bool), combine(boolop, compare("ltu", h, ahi, bhi), cc))
    else:
        p, _ = run(f"setp.ltu.{boolop}.{t} %p1, %h1, %h2, {bang}%p3;\n    {SETP_OUT}", alo, blo, c)
    assert np.array_equal(p.astype(bool), combine(boolop, compare("ltu", h, alo, blo), cc))


def subnormal_operands(seed):
    """f16 pairs where a subnormal meets a zero, another subnormal or a small number."""
    rng = np.random.default_rng(seed)
    sub = (rng.integers(1, 1 << 10, N) | (rng.integers(0, 2, N) << 15)).astype(np.uint16)
    other = np.array([0, 0x8000, 1, 0x8001, 0x0400, 0x8400, 0x03FF], np.uint16)[rng.integers(0, 7, N)]
    swap = rng.random(N) < 0.5
    return np.where(swap, other, sub), np.where(swap, sub, other)


@pytest.mark.parametrize("cmp", ["eq", "lt", "gt", "ne", "geu"])
def test_ftz_flushes_f16_subnormals(cmp):
    """.ftz: a subnormal f16 operand compares as a zero of its sign (setp, set, and the x2 forms);
    without .ftz it compares as its value, and the two differ on these operands."""
    a, b = subnormal_operands(3 + len(cmp))
    want_ftz, want = compare(cmp, "f16", a, b, ftz=True), compare(cmp, "f16", a, b)
    assert not np.array_equal(want_ftz, want)
    p, _ = run(f"setp.{cmp}.ftz.f16 %p1, %h1, %h2;\n    {SETP_OUT}", a, b)
    assert np.array_equal(p.astype(bool), want_ftz)
    p, _ = run(f"setp.{cmp}.f16 %p1, %h1, %h2;\n    {SETP_OUT}", a, b)
    assert np.array_equal(p.astype(bool), want)
    d, _ = run(f"set.{cmp}.ftz.u32.f16 %r4, %h1, %h2;", a, b)
    assert np.array_equal(d, np.where(want_ftz, 0xFFFFFFFF, 0).astype(np.uint32))
    a2 = a.astype(np.uint32) | b.astype(np.uint32) << 16       # high half: the pair swapped
    b2 = b.astype(np.uint32) | a.astype(np.uint32) << 16
    d, _ = run(f"set.{cmp}.ftz.f16x2.f16x2 %r4, %r1, %r2;", a2, b2)
    lo, hi = compare(cmp, "f16", a, b, ftz=True), compare(cmp, "f16", b, a, ftz=True)
    assert np.array_equal(d, (np.where(lo, 0x3C00, 0) | np.where(hi, 0x3C00, 0) << 16).astype(np.uint32))


@pytest.mark.parametrize("h", ["f16", "bf16"])
def test_nan_operands(h):
    """A NaN operand: the ordered compares and num false, the unordered ones and nan true."""
    a, b = operands(h, 5)
    inf = ((1 << (15 - MBITS[h])) - 1) << MBITS[h]
    nan = (a & 0x8000) | inf | (a & ((1 << MBITS[h]) - 1) | 1)
    a = np.where(np.arange(N) % 2 == 0, nan, a).astype(np.uint16)
    for cmp in CMPS:
        p, _ = run(f"setp.{cmp}.{h} %p1, %h1, %h2;\n    {SETP_OUT}", a, b)
        got = p.astype(bool)[::2]
        assert got.all() if cmp in ("equ", "neu", "ltu", "leu", "gtu", "geu", "nan") else not got.any(), cmp
        assert np.array_equal(p.astype(bool), compare(cmp, h, a, b)), cmp


# set.CmpOp.dtype.stype: (dtype, stype, destination register, sources, the true word)
SET_SCALAR = [
    ("u16", "f16", "%h3", 0xFFFF), ("s16", "f16", "%h3", 0xFFFF), ("u32", "f16", "%r4", 0xFFFFFFFF),
    ("s32", "f16", "%r4", 0xFFFFFFFF), ("f16", "f16", "%h3", 0x3C00), ("bf16", "f16", "%h3", 0x3F80),
    ("u16", "bf16", "%h3", 0xFFFF), ("s32", "bf16", "%r4", 0xFFFFFFFF), ("bf16", "bf16", "%h3", 0x3F80),
]


@pytest.mark.parametrize("dtype,stype,dreg,one", SET_SCALAR)
@pytest.mark.parametrize("boolop", ["", "or"])
def test_set_scalar_encodings(dtype, stype, dreg, one, boolop):
    """set of a scalar half source: `one` (1.0 of a half dtype, all ones of an integer one) or 0."""
    a, b = operands(stype, 21)
    c = np.random.default_rng(2).integers(0, 2, N).astype(bool)
    bo = f".{boolop}" if boolop else ""
    tail = ", !%p3" if boolop else ""
    wide = dreg == "%r4"
    line = f"set.leu{bo}.{dtype}.{stype} {dreg}, %h1, %h2{tail};" + ("" if wide else "\n    cvt.u32.u16 %r4, %h3;")
    d, _ = run(line, a, b, c)
    want = combine(boolop, compare("leu", stype, a, b), ~c)
    assert np.array_equal(d, np.where(want, one, 0).astype(np.uint32))


@pytest.mark.parametrize("dtype,stype,one", [
    ("f16x2", "f16x2", 0x3C00), ("u32", "f16x2", 0xFFFF), ("s32", "f16x2", 0xFFFF),
    ("bf16x2", "bf16x2", 0x3F80), ("u32", "bf16x2", 0xFFFF), ("s32", "bf16x2", 0xFFFF)])
@pytest.mark.parametrize("boolop", ["", "xor"])
def test_set_x2_encodings(dtype, stype, one, boolop):
    """set of an x2 source: each half of d from its halves' compare (with c by BoolOp): 1.0 of
    the x2 dtype, or 0xFFFF of .u32 / .s32."""
    h = stype[:-2]
    alo, blo = operands(h, 31)
    ahi, bhi = operands(h, 32)
    a = alo.astype(np.uint32) | ahi.astype(np.uint32) << 16
    b = blo.astype(np.uint32) | bhi.astype(np.uint32) << 16
    c = np.random.default_rng(4).integers(0, 2, N).astype(bool)
    bo, tail = (f".{boolop}", ", %p3") if boolop else ("", "")
    d, _ = run(f"set.gt{bo}.{dtype}.{stype} %r4, %r1, %r2{tail};", a, b, c)
    lo = combine(boolop, compare("gt", h, alo, blo), c)
    hi = combine(boolop, compare("gt", h, ahi, bhi), c)
    assert np.array_equal(d, (np.where(lo, one, 0) | np.where(hi, one, 0) << 16).astype(np.uint32))


@pytest.mark.parametrize("line,a,b,want", [
    # a half destination of other source types: 1.0 or 0 (set.f16.f32 .ftz flushes f32 subnormals)
    ("set.lt.f16.f32 %h3, %r1, %r2;", 0x3F800000, 0x40000000, 0x3C00),
    ("set.lt.f16.f32 %h3, %r1, %r2;", 0x00000001, 0x00000000, 0),
    ("set.gt.f16.f32 %h3, %r1, %r2;", 0x00000001, 0x00000000, 0x3C00),
    ("set.gt.ftz.f16.f32 %h3, %r1, %r2;", 0x00000001, 0x00000000, 0),
    ("set.lo.bf16.u32 %h3, %r1, %r2;", 5, 0xFFFFFFFF, 0x3F80),
    ("set.lt.bf16.s32 %h3, %r1, %r2;", 5, 0xFFFFFFFF, 0),
    ("set.nan.bf16.f32 %h3, %r1, %r2;", 0x7FC00000, 0, 0x3F80),
])
def test_set_half_destination_of_other_sources(line, a, b, want):
    d, _ = run(line + "\n    cvt.u32.u16 %r4, %h3;", np.array([a], np.uint32), np.array([b], np.uint32))
    assert int(d[0]) == want


# every (dtype, stype) pair of the half compares, with and without .ftz and a BoolOp
VERDICT_LINES = [
    f"setp.{c}{bo}{f}.{t} {d}, {s}{cc};"
    for t, s in (("f16", "%h1, %h2"), ("bf16", "%h1, %h2"), ("f16x2", "%r1, %r2"), ("bf16x2", "%r1, %r2"))
    for d in ("%p1", "%p1|%p2") for c in ("lt", "equ", "lo") for f in ("", ".ftz")
    for bo, cc in (("", ""), (".and", ", !%p3"))
] + [
    f"set.{c}{bo}{f}.{dt}.{st} {dr}, {sr}{cc};"
    for dt, dr in (("u16", "%h3"), ("s16", "%h3"), ("u32", "%r4"), ("s32", "%r4"), ("f16", "%h3"),
                   ("bf16", "%h3"), ("f16x2", "%r4"), ("bf16x2", "%r4"), ("f32", "%r4"))
    for st, sr in (("f16", "%h1, %h2"), ("bf16", "%h1, %h2"), ("f16x2", "%r1, %r2"), ("bf16x2", "%r1, %r2"),
                   ("f32", "%r1, %r2"), ("u32", "%r1, %r2"), ("b16", "%h1, %h2"))
    if dt in ("f16", "bf16", "f16x2", "bf16x2") or st in ("f16", "bf16", "f16x2", "bf16x2")
    for c in ("lt", "ne") for f in ("", ".ftz") for bo, cc in (("", ""), (".xor", ", %p3"))
]


def ptxas_refused_lines(text, target, path):
    """The line numbers ptxas reports an error on (one run for the whole module)."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as fh:
            fh.write(text)
        p = subprocess.run([path, *pf.arch_args(target), src, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True)
    lines = {int(x) for x in re.findall(r"line (\d+); error", p.stdout + p.stderr)}
    assert p.returncode in (0, 255) and (p.returncode == 0) == (not lines), p.stderr[:400]
    return lines


@pytest.mark.parametrize("release,path", pf.judges())
@pytest.mark.parametrize("target,version", [("sm_90a", "8.7"), ("sm_89", "7.8"), ("sm_75", "6.4")])
def test_verdicts_match_ptxas(release, path, target, version):
    """ptx.check's verdict on each form equals ptxas's (13.0 and 13.5 where installed), the forms
    assembled together and ptxas's errors read by line."""
    head = KERNEL.replace(".version 8.7", f".version {version}").replace(".target sm_90a", f".target {target}")
    first = head[:head.index("LINE")].count("\n") + 1
    refused = ptxas_refused_lines(head.replace("LINE", "\n    ".join(VERDICT_LINES)), target, path)
    assert refused and len(refused) < len(VERDICT_LINES)
    wrong = []
    for i, line in enumerate(VERDICT_LINES):
        ours = not any(d.severity == "error" for d in ptx.check(head.replace("LINE", line), ptxas=release))
        if ours != (first + i not in refused):
            wrong.append((line, ours))
    assert wrong == []
