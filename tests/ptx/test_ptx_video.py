"""The video instructions (PTX ISA 9.7.18) on the model against tests/video_reference.py, a slow
reference written from the ISA's pseudocode apart from the C code: random forms (every
instruction, type, .sat, secondary operation, merge, selector and mask the Syntax blocks give;
each checked by ptx.check first) over random operands mixed with the values at the edges of the
byte, half-word and word ranges. The ISA's rules each have a test of their own below, citing the
section."""
import random

import numpy as np
import pytest

from ptxasync import ptx
import video_reference as V
from lane_kernel import lane_kernel, run_lanes

N = 64


def kernel(line):
    return lane_kernel("    " + line, init="0x5a5a5a5a")


EDGES = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFF80,
         0x807F80FF, 0x00FF7F80, 31, 32, 33, 0xFFFFFFE0]


def operands(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1 << 32, (N, 3), dtype=np.uint64)
    pick = rng.random((N, 3)) < 0.4
    x[pick] = rng.choice(np.array(EDGES, np.uint64), pick.sum())
    return x.astype(np.uint32)


def run(line, seed=0):
    """The instruction `line` on N threads (a, b, c in %r2-%r4, d in %r1): (inputs, outputs)."""
    x = operands(seed)
    return [tuple(int(v) for v in row) for row in x], run_lanes(kernel(line), x, N)


def check(line, ref, seed=0):
    x, out = run(line, seed)
    for (a, b, c), o in zip(x, out):
        want = ref(a, b, c)
        assert o == want, "%s with a=%#x b=%#x c=%#x: model %#x, ISA %#x" % (line, a, b, c, o, want)


# ---- random forms -------------------------------------------------------------------------------

SSEL = [None, "b0", "b1", "b2", "b3", "h0", "h1"]


def _s(sel):
    return "" if sel is None else "." + sel


def scalar_form(rnd):
    op = rnd.choice(["vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vset"])
    dt, at, bt = (rnd.choice(["u32", "s32"]) for _ in range(3))
    asel, bsel = rnd.choice(SSEL), rnd.choice(SSEL)
    kw = dict(asel=asel, bsel=bsel)
    var = rnd.choice(["plain", "op2", "merge", "unused"])
    op2 = rnd.choice(["add", "min", "max"]) if var == "op2" else None
    dsel = rnd.choice(SSEL[1:]) if var == "merge" else None
    sat = op != "vset" and rnd.random() < 0.5
    a = "%r2" + _s(asel) if rnd.random() < 0.9 else str(rnd.choice([5, 0x7FFFFFFF, -3]))
    if a[0] != "%":
        kw["asel"] = None
    if op == "vset":
        cmp = rnd.choice(["eq", "ne", "lt", "le", "gt", "ge"])
        opc = "vset.%s.%s.%s%s" % (at, bt, cmp, "." + op2 if op2 else "")
        kw.update(cmp=cmp)
        dt = None
    elif op in ("vshl", "vshr"):
        bt = "u32"
        mode = rnd.choice(["clamp", "wrap"])
        opc = "%s.%s.%s.u32%s.%s%s" % (op, dt, at, ".sat" if sat else "", mode, "." + op2 if op2 else "")
        kw.update(mode=mode)
    else:
        opc = "%s.%s.%s.%s%s%s" % (op, dt, at, bt, ".sat" if sat else "", "." + op2 if op2 else "")
    ops = ["%r1" + _s(dsel), a, "%r3" + _s(bsel)] + ([] if var == "plain" else ["%r4"])
    kw.update(sat=sat, op2=op2, dsel=dsel)
    imm = None if a[0] == "%" else int(a) & V.M32
    return "%s %s;" % (opc, ", ".join(ops)), (
        lambda A, B, C: V.scalar(op, dt, at, bt, A if imm is None else imm, B, C, **kw))


def vmad_form(rnd):
    dt, at, bt = (rnd.choice(["u32", "s32"]) for _ in range(3))
    asel, bsel = rnd.choice(SSEL), rnd.choice(SSEL)
    neg = rnd.choice([(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, 1, 1)])
    po = neg in ((0, 0, 0), (1, 1, 0)) and rnd.random() < 0.4
    sat = rnd.random() < 0.5
    scale = rnd.choice([0, 7, 15])
    opc = "vmad.%s.%s.%s%s%s%s" % (dt, at, bt, ".po" if po else "", ".sat" if sat else "",
                                   ".shr%d" % scale if scale else "")
    ops = ["%r1", "-" * neg[0] + "%r2" + _s(asel), "-" * neg[1] + "%r3" + _s(bsel), "-" * neg[2] + "%r4"]
    return "%s %s;" % (opc, ", ".join(ops)), (
        lambda A, B, C: V.vmad(at, bt, A, B, C, asel, bsel, *map(bool, neg), po=po, sat=sat, scale=scale))


def simd_form(rnd):
    lanes = rnd.choice([2, 4])
    op = rnd.choice(["vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax", "vset"])
    dt, at, bt = (rnd.choice(["u32", "s32"]) for _ in range(3))
    h = "h" if lanes == 2 else "b"
    asel = [rnd.randrange(2 * lanes) for _ in range(lanes)] if rnd.random() < 0.7 else None
    bsel = [rnd.randrange(2 * lanes) for _ in range(lanes)] if rnd.random() < 0.7 else None
    mask = sorted(rnd.sample(range(lanes), rnd.randint(1, lanes))) if rnd.random() < 0.6 else None
    add = rnd.random() < 0.4
    sat = op != "vset" and not add and rnd.random() < 0.5
    sel = lambda s: "" if s is None else "." + h + "".join(str(v) for v in reversed(s))  # noqa: E731
    if op == "vset":
        cmp = rnd.choice(["eq", "ne", "lt", "le", "gt", "ge"])
        opc = "vset%d.%s.%s.%s%s" % (lanes, at, bt, cmp, ".add" if add else "")
    else:
        cmp = None
        opc = "%s%d.%s.%s.%s%s%s" % (op, lanes, dt, at, bt, ".sat" if sat else "", ".add" if add else "")
    line = "%s %%r1%s, %%r2%s, %%r3%s, %%r4;" % (opc, sel(mask), sel(asel), sel(bsel))
    return line, (lambda A, B, C: V.simd(op, lanes, dt, at, bt, A, B, C, asel, bsel, mask, sat, add, cmp))


FORMS = [scalar_form] * 4 + [vmad_form] * 2 + [simd_form] * 4


@pytest.mark.parametrize("seed", range(60))
def test_random_forms_match_the_isa_pseudocode(seed):
    rnd = random.Random(seed)
    for k in range(6):
        line, ref = rnd.choice(FORMS)(rnd)
        check(line, ref, seed * 10 + k)


# ---- the ISA's rules, one a test ------------------------------------------------------------------

def test_selector_sign_extends_by_type():
    """9.7.18.1: a byte / half-word part is sign-extended for .s32, zero-extended for .u32
    (0x80 is -128 or 128: vadd.s32.s32.u32 of a.b0 and b.b0 is 0 or 256)."""
    x, out = run("vadd.s32.s32.s32 %r1, %r2.b0, %r3.b0;")
    assert all(int(o) == (V._ext(a, 8, True) + V._ext(b, 8, True)) & V.M32 for (a, b, _), o in zip(x, out))
    x, out = run("vadd.u32.u32.u32 %r1, %r2.h1, %r3.b3;")
    assert all(int(o) == ((int(a) >> 16) + (int(b) >> 24)) & V.M32 for (a, b, _), o in zip(x, out))


def test_saturate_to_the_merged_destination():
    """9.7.18.1 optSaturate: with a merge the clamp is the byte's / half-word's range
    (vadd.s32...sat into d.b1 of 127 + 1 is 127, the other bytes c's)."""
    x, out = run("vadd.s32.s32.s32.sat %r1.b1, %r2, %r3, %r4;")
    for (a, b, c), o in zip(x, out):
        t = max(-128, min(127, V._ext(a, 32, True) + V._ext(b, 32, True)))
        assert int(o) == ((t & 0xFF) << 8 | (int(c) & 0xFFFF00FF))


def test_secondary_op_after_saturate():
    """9.7.18.1: optSecondaryOp acts on the saturated intermediate and c (signed by .dtype)."""
    x, out = run("vsub.u32.u32.u32.sat.min %r1, %r2, %r3, %r4;")
    for (a, b, c), o in zip(x, out):
        assert int(o) == min(max(0, int(a) - int(b)), int(c))


def test_vshl_clamp_and_wrap():
    """9.7.18.1.2: .clamp takes a shift above 32 as 32, .wrap takes it modulo 32."""
    check("vshl.u32.u32.u32.clamp %r1, %r2, %r3;",
          lambda a, b, c: (a << min(b, 32)) & V.M32)
    check("vshr.s32.s32.u32.wrap %r1, %r2, %r3;",
          lambda a, b, c: (V._ext(a, 32, True) >> (b & 31)) & V.M32)


def test_vset_is_unsigned_zero_or_one():
    """9.7.18.1.4: vset's result is 1 or 0, merged as unsigned."""
    check("vset.s32.u32.lt %r1, %r2, %r3;", lambda a, b, c: int(V._ext(a, 32, True) < b))
    check("vset.u32.u32.ne %r1.h1, %r2.b2, %r3.b2, %r4;",
          lambda a, b, c: int((a >> 16 & 0xFF) != (b >> 16 & 0xFF)) << 16 | (c & 0xFFFF))


def test_vmad_examples():
    """9.7.18.1.3's examples: vmad.s32.s32.u32.sat r0, r1, r2, -r3 and
    vmad.u32.u32.u32.shr15 r0, r1.h0, r2.h0, r3."""
    check("vmad.s32.s32.u32.sat %r1, %r2, %r3, -%r4;",
          lambda a, b, c: max(-(1 << 31), min((1 << 31) - 1, V._ext(a, 32, True) * b - V._ext(c, 32, True)))
          & V.M32)
    check("vmad.u32.u32.u32.shr15 %r1, %r2.h0, %r3.h0, %r4;",
          lambda a, b, c: (((a & 0xFFFF) * (b & 0xFFFF) + c) >> 15) & V.M32)


def test_vmad_po_adds_one():
    """9.7.18.1.3: .po computes (a*b) + c + 1."""
    check("vmad.u32.u32.u32.po %r1, %r2, %r3, %r4;", lambda a, b, c: (a * b + c + 1) & V.M32)


def test_vmad_negated_pair_cancels():
    """9.7.18.1.3: (a*b) is negated iff exactly one of a, b is: -a, -b is a*b."""
    check("vmad.s32.s32.s32 %r1, -%r2, -%r3, %r4;",
          lambda a, b, c: (V._ext(a, 32, True) * V._ext(b, 32, True) + V._ext(c, 32, True)) & V.M32)


def test_simd_defaults():
    """9.7.18.2.1: asel defaults to .h10, bsel to .h32, mask to .h10: lane i of a with lane i of b."""
    check("vadd2.u32.u32.u32 %r1, %r2, %r3, %r4;",
          lambda a, b, c: ((a + b) & 0xFFFF) | (((a >> 16) + (b >> 16)) & 0xFFFF) << 16)


def test_simd_merge_keeps_c_outside_the_mask():
    """9.7.18.2.3: lanes outside the mask are c's bytes."""
    check("vmax4.u32.u32.u32 %r1.b20, %r2, %r3, %r4;",
          lambda a, b, c: V.simd("vmax", 4, "u32", "u32", "u32", a, b, c, mask=[0, 2]))


def test_simd_accumulate_sums_the_masked_lanes():
    """9.7.18.2.3: with .add the lanes in the mask are summed onto c (vabsdiff4.add: a sum of
    absolute differences)."""
    check("vabsdiff4.u32.u32.u32.add %r1, %r2, %r3, %r4;",
          lambda a, b, c: (c + sum(abs((a >> 8 * i & 0xFF) - (b >> 8 * i & 0xFF)) for i in range(4))) & V.M32)


def test_vavrg_rounds_half_up_when_not_negative():
    """9.7.18.2.1: vavrg2 is (Va + Vb + 1) >> 1 for a sum >= 0, (Va + Vb) >> 1 below."""
    check("vavrg2.s32.s32.s32 %r1, %r2, %r3, %r4;",
          lambda a, b, c: V.simd("vavrg", 2, "s32", "s32", "s32", a, b, c))


def test_simd_selectors_reach_b():
    """9.7.18.2.3: .bxyzw picks any of the eight bytes of {b, a} per lane (.b7654 is b)."""
    check("vadd4.u32.u32.u32 %r1, %r2.b7654, %r3.b0123, %r4;",
          lambda a, b, c: V.simd("vadd", 4, "u32", "u32", "u32", a, b, c, asel=[4, 5, 6, 7], bsel=[3, 2, 1, 0]))


# ---- the checker, as ptxas 13.0 (tools/video_verdicts.py sweeps the rest) ------------------------

@pytest.mark.parametrize("line,why", [
    ("vadd.u32.u32.u32 %r1.b0, %r2, %r3;", "selector"),                      # merge needs c
    ("vadd.u32.u32.u32.add %r1.b0, %r2, %r3, %r4;", "exclude"),             # merge and .op2
    ("vadd.u32.u32.u32 %r1, %r2.b4, %r3;", "selector"),
    ("vadd2.u32.u32.u32 %r1.h01, %r2, %r3, %r4;", "mask"),
    ("vadd4.u32.u32.u32 %r1, %r2.b765, %r3, %r4;", "byte selector"),
    ("vadd2.u32.u32.u32.sat.add %r1, %r2, %r3, %r4;", ".sat"),
    ("vadd2.u32.u32.u32 %r1, %r2, %r3, 5;", "register"),
    ("vadd.u32.u32.u32 %r1, %r2, -%r3;", "negat"),
    ("vmad.u32.u32.u32 %r1, -%r2, %r3, -%r4;", "either"),
    ("vmad.u32.u32.u32.po %r1, %r2, %r3, -%r4;", ".po"),
    ("vshl.u32.u32.s32.clamp %r1, %r2, %r3;", ""),
    ("vshr.u32.u32.u32 %r1, %r2, %r3;", ""),
    ("vset.u32.u32.lt.sat %r1, %r2, %r3;", ""),
    ("vset4.u32.u32.lt.max %r1, %r2, %r3, %r4;", ""),
    ("add.u32 %r1, %r2.b0, %r3;", "video"),
    ("vadd.u32.u32.u32 %r1, %tid.x, %r3;", "special"),
])
def test_checker_refuses_what_ptxas_does(line, why):
    diags = [d for d in ptx.check(kernel(line)) if d.severity == "error"]
    assert diags and why in diags[0].message, (line, diags)


def test_printer_keeps_selectors_and_negation():
    """ptx.format prints a video selector and vmad's -reg back as written."""
    text = kernel("vmad.s32.s32.u32 %r1, -%r2.b3, %r3.h1, -%r4;\n    "
                  "vsub4.s32.s32.s32.sat %r1.b310, %r2.b3210, %r3.b0707, %r4;")
    out = ptx.format(text)
    assert "-%r2.b3, %r3.h1, -%r4" in out and "%r1.b310, %r2.b3210, %r3.b0707" in out
    assert ptx.format(out) == out
