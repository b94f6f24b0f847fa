"""mma.sync and wgmma.mma_async through ptx.Kernel against an H200, bit for bit.

tests/data/isa/mma_forms.npz holds what an H200 (driver 580.159.04) gave for the modules of
tools/device/mma_record.py: every mma.sync shape / type family of sm_80..sm_90 (33 forms, 131,072
outputs each) and 14 wgmma.mma_async cases (each type, f16 / f32 accumulators, scale-d, imm-scale
-1, both transposes, A from registers; 131,072 outputs each). The inputs are not stored: the
recorder draws them from a counter hash, so the test makes the same bits. Kept: the outputs of the
first 32 warps (4 CTAs of a wgmma case) and a blake2b digest of every warp's (CTA's) outputs, so the
whole recording can be checked (PTXASYNC_MMA_FULL=1; tools/device/mma_record.py model does the same
runs). Also: an independent reference from the ISA's fragment layouts on exactly representable
values (every form: only the layout decides the bits), and ptxas 13.0's verdicts on every
combination of mma.sync's qualifiers (tests/data/ptx/mma_verdicts.json.gz) against ptx.check.
"""
import gzip
import hashlib
import json
import os
import sys
from fractions import Fraction

import numpy as np
import pytest

import isa_golden
from ptxasync import ptx
from testpaths import DATA, REPO

sys.path.insert(0, os.path.join(REPO, "tools", "device"))
import mma_record as R  # noqa: E402

Z = np.load(os.path.join(DATA, "isa", "mma_forms.npz"))
META = json.loads(str(Z["meta"]))
FULL = os.environ.get("PTXASYNC_MMA_FULL") == "1"


def test_recorder_forms_are_the_recorded_ones():
    assert META["forms"] == R.FORMS
    assert [list(c) for c in META["wg_cases"]] == [list(c) for c in R.WG_CASES]


def _digest(arrs, u, per):
    h = hashlib.blake2b(digest_size=8)
    for a in arrs:
        h.update(np.ascontiguousarray(a[u * per:(u + 1) * per]).tobytes())
    return np.frombuffer(h.digest(), np.uint8)


@pytest.mark.parametrize("i", range(len(R.FORMS)), ids=R.FORMS)
def test_mma_sync_recorded(i):
    """The first warps of the recording (all of it with PTXASYNC_MMA_FULL=1) through ptx.Kernel."""
    instr, inw, outw, ins = R.mma_case(i)
    nl = len(ins[0])
    warps = nl // 32 if FULL else 8
    text = R.mma_module(instr, inw, outw)
    digests = Z["mma%d_digest" % i]
    for s in range(0, warps * 32, 1024):
        e = min(warps * 32, s + 1024)
        got = isa_golden.run_module(text, [x[s:e] for x in ins], outw, e - s)
        if e <= META["subset_warps"] * 32:
            want = [Z["mma%d_out%d" % (i, k)][s:e] for k in range(len(outw))]
            bad, first = isa_golden.compare(instr, got, want)
            assert not bad, "%s: %d outputs differ, first %s" % (instr, bad, first)
        for w in range((e - s) // 32):
            assert (_digest(got, w, 32) == digests[s // 32 + w]).all(), "%s: warp %d differs" % (instr, s // 32 + w)


@pytest.mark.parametrize("ci", range(len(R.WG_CASES)), ids=[R.wg_instr(c) + str(c[3:]) for c in R.WG_CASES])
def test_wgmma_recorded(ci):
    """wgmma.mma_async cases, one warpgroup a CTA (descriptors without swizzle, or A from registers)."""
    ctas = 64 if FULL else 2
    A, B, C, pa_, pb_, pr = R.wg_buffers(ci, 64)
    text = R.wg_module(ci)
    m = R.Model()
    digests = Z["wg%d_digest" % ci]
    for c in range(ctas):
        po = np.zeros_like(C[c:c + 1])
        got = m.run(text, [po, pa_[c:c + 1], pb_[c:c + 1], C[c:c + 1], pr[c:c + 1]], [], 1, 1, 128,
                    ["po", "pa", "pb", "pc", "pr"])[0][0]
        if c < META["subset_ctas"]:
            want = Z["wg%d_out" % ci][c]
            assert (got == want).all(), "%s CTA %d: %d of %d outputs differ" % (
                R.wg_instr(R.WG_CASES[ci]), c, int((got != want).sum()), got.size)
        assert (_digest([got.reshape(1, -1)], 0, 1) == digests[c]).all()


# ---- an independent reference: the ISA's fragment layouts on exact values ----------------------

def _exact_elems(t, n, rng):
    """Elements whose products and sums are exact in every model: small integers (floats: -3..3
    as the type's bit pattern; integers: the type's range; b1 bits)."""
    if t == "b1":
        return rng.integers(0, 2, n).astype(np.uint64)
    if t in ("s8", "u8", "s4", "u4"):
        bits = R.BITS[t]
        return rng.integers(0, 1 << bits, n).astype(np.uint64)
    v = rng.integers(-3, 4, n).astype(np.float64)
    return _bits_of(t, v)


def _bits_of(t, v):
    v = np.asarray(v, np.float64)
    if t == "f16":
        return v.astype(np.float16).view(np.uint16).astype(np.uint64)
    if t in ("f32", "tf32"):
        return v.astype(np.float32).view(np.uint32).astype(np.uint64)
    if t == "bf16":
        return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
    if t == "f64":
        return v.view(np.uint64)
    if t in ("e4m3", "e5m2"):
        import ml_dtypes
        return v.astype(ml_dtypes.float8_e4m3fn if t == "e4m3" else ml_dtypes.float8_e5m2).view(np.uint8).astype(np.uint64)
    if t == "s32":
        return v.astype(np.int64).astype(np.uint32).astype(np.uint64)
    raise ValueError(t)


def _value(t, x):
    x = int(x)
    if t in ("s8", "s4"):
        b = R.BITS[t]
        return x - (1 << b) if x >> (b - 1) else x
    if t in ("u8", "u4", "b1"):
        return x
    if t == "s32":
        return x - (1 << 32) if x >> 31 else x
    if t == "f16":
        return Fraction(float(np.uint16(x).view(np.float16)))
    if t == "bf16":
        return Fraction(float(np.uint32(x << 16).view(np.float32)))
    if t in ("f32", "tf32"):
        return Fraction(float(np.uint32(x).view(np.float32)))
    if t == "f64":
        return Fraction(float(np.uint64(x).view(np.float64)))
    import ml_dtypes
    return Fraction(float(np.uint8(x).view(ml_dtypes.float8_e4m3fn if t == "e4m3" else ml_dtypes.float8_e5m2)))


def _layout(instr):
    """(A, B, C, D) fragment maps of the ISA: for each lane, register and element, the matrix
    position it holds, written from the PTX ISA's figures (independently of mma_exec.c)."""
    m, n, k = R.mma_shape(instr)
    d, a, b, c = R.mma_types(instr)
    if (m, n, k) == (8, 8, 4) and a == "f16":
        lay = instr.split("m8n8k4.")[1].split(".")[:2]

        def A(l, e):
            q, h, i = (l >> 2) & 3, l >> 4, l & 3
            return (q, e + 4 * h, i) if lay[0] == "col" else (q, i + 4 * h, e)

        def B(l, e):
            q, h, i = (l >> 2) & 3, l >> 4, l & 3
            return (q, i, e + 4 * h) if lay[1] == "row" else (q, e, i + 4 * h)

        def CD(l, e, t):
            q, h, i = (l >> 2) & 3, l >> 4, l & 3
            if t == "f16":
                return (q, i + 4 * h, e)
            return (q, (i & 1) + (e & 2) + 4 * h, (e & 4) + (i & 2) + (e & 1))
        return A, B, CD
    epa = 1 if R.BITS[a] >= 32 else 32 // R.BITS[a]
    epb = 1 if R.BITS[b] >= 32 else 32 // R.BITS[b]

    def A(l, e):            # element e of the lane's A fragment: register e // epa
        r, j = divmod(e, epa)
        g, t = l >> 2, l & 3
        return (0, g + 8 * (r % 2), (r // 2) * 4 * epa + t * epa + j)

    def B(l, e):
        r, j = divmod(e, epb)
        g, t = l >> 2, l & 3
        return (0, r * 4 * epb + t * epb + j, g)

    def CD(l, e, t_):
        g, t = l >> 2, l & 3
        return (0, g + 8 * (e // 2), 2 * t + e % 2)
    return A, B, CD


@pytest.mark.parametrize("i", range(len(R.FORMS)), ids=R.FORMS)
def test_mma_sync_layout_reference(i):
    """D = A*B + C from the ISA's fragment layouts in exact arithmetic, on values whose result is
    exact (so only where each register's element sits decides the bits), against ptx.Kernel."""
    instr = R.FORMS[i]
    m, n, k = R.mma_shape(instr)
    d, a, b, c = R.mma_types(instr)
    nd, na, nb, nc = R.mma_regs(instr)
    rng = np.random.default_rng(100 + i)
    W = 2
    q = 4 if (m, n, k) == (8, 8, 4) and a == "f16" else 1
    A_ = _exact_elems(a, W * q * m * k, rng).reshape(W, q, m, k)
    B_ = _exact_elems(b, W * q * k * n, rng).reshape(W, q, k, n)
    C_ = _exact_elems(c, W * q * m * n, rng).reshape(W, q, m, n)
    Amap, Bmap, CDmap = _layout(instr)
    ea, eb = R.BITS[a], R.BITS[b]
    epa = 1 if ea >= 32 else 32 // ea
    epb = 1 if eb >= 32 else 32 // eb
    ec = R.BITS[c]
    epc = 1 if ec >= 32 else 32 // ec
    epd = 1 if R.BITS[d] >= 32 else 32 // R.BITS[d]
    regs = []
    for cnt, per, bits, mp, X in ((na, epa, ea, Amap, A_), (nb, epb, eb, Bmap, B_)):
        for r in range(cnt):
            v = np.zeros(W * 32, np.uint64)
            for w in range(W):
                for l in range(32):
                    for j in range(per):
                        qq, x, y = mp(l, r * per + j)
                        v[w * 32 + l] |= (int(X[w, qq, x, y]) & ((1 << bits) - 1)) << (j * bits)
            regs.append(v)
    for r in range(nc):
        v = np.zeros(W * 32, np.uint64)
        for w in range(W):
            for l in range(32):
                for j in range(epc):
                    qq, x, y = CDmap(l, r * epc + j, c)
                    v[w * 32 + l] |= (int(C_[w, qq, x, y]) & ((1 << ec) - 1)) << (j * ec)
        regs.append(v)
    inw = [64 if R.BITS[t] == 64 else 32 for t, cnt in ((a, na), (b, nb), (c, nc)) for _ in range(cnt)]
    outw = [64 if R.BITS[d] == 64 else 32] * nd
    ins = [x.astype(np.uint64 if w == 64 else np.uint32) for x, w in zip(regs, inw)]
    got = isa_golden.run_module(R.mma_module(instr, inw, outw), ins, outw, W * 32)
    for w in range(W):
        for qq in range(q):
            Av = [[_value(a, A_[w, qq, x, y]) for y in range(k)] for x in range(m)]
            Bv = [[_value(b, B_[w, qq, x, y]) for y in range(n)] for x in range(k)]
            for l in range(32):
                for e in range(nd * epd):
                    q2, x, y = CDmap(l, e, d)
                    if q2 != qq:
                        continue
                    if a == "b1":
                        bits = [int(Av[x][kk]) & int(Bv[kk][y]) if "and" in instr else int(Av[x][kk]) ^ int(Bv[kk][y])
                                for kk in range(k)]
                        want = sum(bits) + _value(c, C_[w, qq, x, y])
                    else:
                        want = sum(Av[x][kk] * Bv[kk][y] for kk in range(k)) + _value(c, C_[w, qq, x, y])
                    wb = int(_bits_of(d, [float(want)])[0]) if d != "s32" else int(want) & 0xFFFFFFFF
                    r, j = divmod(e, epd)
                    bits = R.BITS[d]
                    reg = int(got[r][w * 32 + l])
                    have = (reg >> (j * bits)) & ((1 << bits) - 1) if bits < 32 else reg
                    assert have == wb, "%s warp %d lane %d element %d (%d, %d): %#x, want %#x" % (
                        instr, w, l, e, x, y, have, wb)


# ---- what ptxas takes --------------------------------------------------------------------------

def _module(instr, tgt, ver):
    nd, na, nb, nc = R.mma_regs(instr)
    d, a, b, c = R.mma_types(instr)

    def vec(p, cnt, t):
        r = "%rd" if t == "f64" else "%r"
        return "{" + ",".join("%s%d" % (r, p + x) for x in range(cnt)) + "}"
    return (".version %s\n.target %s\n.address_size 64\n.visible .entry k()\n{\n .reg .b32 %%r<80>; "
            ".reg .b64 %%rd<80>;\n %s %s, %s, %s, %s;\n ret;\n}\n" % (
                ver, tgt, instr, vec(0, nd, d), vec(20, na, a), vec(40, nb, b), vec(60, nc, c)))


def test_mma_sync_verdicts_agree_with_ptxas():
    """2,574 modules (286 instructions: shapes x types x layouts x .satfinite x bit operations, on
    sm_80 / sm_89 / sm_90a at three PTX versions each): ptx.check accepts exactly what ptxas 13.0
    assembled."""
    rows = json.load(gzip.open(os.path.join(DATA, "ptx", "mma_verdicts.json.gz"), "rt"))
    bad = []
    for instr, tgt, ver, ok in rows:
        diags = ptx.check(_module(instr, tgt, ver))
        ours = not any(x.severity == "error" for x in diags)
        if ours != bool(ok):
            bad.append((instr, tgt, ver, ok, [x.message for x in diags][:1]))
    assert len(rows) == 2574 and not bad, bad[:10]


def test_mma_sync_refuses_a_wrong_register_vector():
    text = _module("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "sm_90a", "8.7").replace(
        "{%r20,%r21,%r22,%r23}", "{%r20,%r21,%r22}")
    with pytest.raises(ptx.PtxSyntaxError, match="4 32-bit registers"):
        ptx.Kernel(text)
