"""Rules found in the H200 recording of random programs (tests/data/randprog/h200.npz, recorded by
tools/random_programs.py with ptxas 13.0 -arch=sm_90a; docs/semantics.md, "The SM90 rules"), each
checked through ptx.Kernel on operands and results copied from that recording. A case cites
(seed, instruction index, thread) of the recorded program it comes from.

- f64 add / sub / mul / fma / mad with NaN operands: the result is the second source's NaN, else
  (fma) the addend's, else the first's, quieted. The cases are instructions whose SASS kept PTX's
  operand order (ptxas commutes some; then the H200 returns the other NaN, known list).
- min / max.f64 of two NaNs: the second, quieted (one NaN: the other operand, as before).
- min / max .f16 / .f32 / .f64 of a register with itself: that register, NaN payload kept (ptxas
  folds it to a move); .bf16, .f16x2 and .ftz.f16 are computed (the canonical NaN).
- testp.normal: true for +-0.
- bfe.u64 / bfe.s64 / bfi.b64: pos and len are their 32-bit values clamped to 64 (ptxas's shift
  sequence), not taken modulo 256 as the ISA's pseudocode says.
"""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

_REG = {64: "%rd", 32: "%r", 16: "%h"}


def run(body, widths, out_w, rows):
    """Each row (one thread) of operand words loaded into registers of `widths` (%rd0 / %r1 / %h2 ...,
    named by position), `body` run, its destination (%rd9 / %r9 / %h9, or %p0 for a predicate)
    stored; the results as ints."""
    n = len(widths)
    loads = "\n".join("    ld.global.b%d %s%d, [%%a0+%d];" % (w, _REG[w], j, 8 * j) for j, w in enumerate(widths))
    if out_w == "p":
        store = "    selp.u32 %r9, 1, 0, %p0;\n    st.global.b32 [%a1], %r9;"
    else:
        store = "    st.global.b%d [%%a1], %s9;" % (out_w, _REG[out_w])
    text = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
    .reg .b64 %%rd<10>;
    .reg .b32 %%r<10>;
    .reg .b16 %%h<10>;
    .reg .pred %%p<2>;
    .reg .b64 %%a<4>;
    .reg .b32 %%t;
    mov.u32 %%t, %%tid.x;
    ld.param.u64 %%a0, [pin];
    mul.wide.u32 %%a2, %%t, %d;
    add.s64 %%a0, %%a0, %%a2;
    ld.param.u64 %%a1, [pout];
    mul.wide.u32 %%a3, %%t, 8;
    add.s64 %%a1, %%a1, %%a3;
%s
    %s;
%s
    ret;
}
""" % (8 * n, loads, body, store)
    inp = np.array([list(r) for r in rows], np.uint64).reshape(-1)
    out = np.zeros(len(rows), np.uint64)
    m = pa.Machine()
    ptx.Kernel(text).launch(m, grid=1, block=len(rows), params={"pin": m.register(inp), "pout": m.register(out)})
    mask = 1 if out_w == "p" else (1 << out_w) - 1
    return [int(v) & mask for v in out]


def check(op_body, widths, out_w, cases):
    got = run(op_body, widths, out_w, [c[2] for c in cases])
    want = [c[3] for c in cases]
    bad = ["%s %s: H200 0x%X, model 0x%X" % (c[0], c[1], w, g) for c, g, w in zip(cases, got, want) if g != w]
    assert not bad, "\n".join(bad)


# (opcode, (seed, instruction, thread), operands, H200 result)
F64_NAN = [
    ("add.rp.f64", (1612, 25, 22), (0x7FFE000000000000, 0xFFFFFFFFFFFFFFC3), 0xFFFFFFFFFFFFFFC3),
    ("add.rz.f64", (1667, 33, 5), (0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFCB), 0xFFFFFFFFFFFFFFCB),
    ("add.rp.f64", (1612, 25, 18), (0xFFFFFC0000000000, 0xFFFFFFFFFFFFFFC0), 0xFFFFFFFFFFFFFFC0),
    ("add.rn.f64", (0, 38, 1), (0xFFFFFFFF80000000, 0x7FFB1043F4DE0454), 0x7FFB1043F4DE0454),
    ("add.f64", (665, 40, 24), (0x7FFC000000000001, 0xFFF4200020000001), 0xFFFC200020000001),
    ("mul.f64", (53, 33, 12), (0xFFFFFFFFFFFFFFEA, 0xFFFFFFFFFFFFFFF5), 0xFFFFFFFFFFFFFFF5),
    ("mul.rm.f64", (1667, 48, 29), (0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFC2), 0xFFFFFFFFFFFFFFC2),
    ("mul.rz.f64", (490, 48, 10), (0xFFF8000000000001, 0xFFFFFFFFFFFFFFFF), 0xFFFFFFFFFFFFFFFF),
    ("mul.f64", (3671, 0, 27), (0xFFFFFFFFFFFFFFFB, 0xFFFFFFFFFFFFFFFF), 0xFFFFFFFFFFFFFFFF),
    ("sub.rz.f64", (1880, 50, 28), (0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFBF), 0xFFFFFFFFFFFFFFBF),
    ("sub.rp.f64", (3459, 13, 31), (0xFFFFFFFFFFFFFFC6, 0x7FF400000000002B), 0x7FFC00000000002B),
    ("sub.rm.f64", (180, 24, 30), (0xFFFFFFFFFFFFFFDE, 0xFFFFFFFFFFFFFFC6), 0xFFFFFFFFFFFFFFC6),
    ("sub.f64", (3036, 27, 28), (0xFFF8000000000000, 0xFFFFFFFFFFFFFFFF), 0xFFFFFFFFFFFFFFFF),
    ("sub.rz.f64", (1880, 50, 19), (0xFFFFFFFFFFFFFFFE, 0xFFFFFFFFCF000000), 0xFFFFFFFFCF000000),
]
FMA_NAN = [
    ("fma.rz.f64", (3036, 57, 0), (0xFFFFFFFFFFFFFFCC, 0xFFFFFFFFFFFFFF98, 0x0), 0xFFFFFFFFFFFFFF98),
    ("fma.rp.f64", (490, 33, 17), (0xFFFFFFFFFFFFFFFF, 0x7BBEA0F71482DB2B, 0xFFFFFFFFFFFFFFCC), 0xFFFFFFFFFFFFFFCC),
    ("fma.rm.f64", (3626, 8, 14), (0xFFFF800080000000, 0xFFF0000000000001, 0x0), 0xFFF8000000000001),
    ("fma.rm.f64", (3626, 8, 18), (0xFFF0000000000001, 0x7FF8000000000000, 0x0), 0x7FF8000000000000),
    ("fma.rn.f64", (3036, 45, 28), (0xFFFFFFFFFFFFFFFF, 0xFFF8000000000000, 0xFFF7FFFFFFFFFFFF), 0xFFF8000000000000),
    ("mad.rz.f64", (3221, 11, 11), (0x3096CF1DA8BBAC6B, 0x7FFB444BC54C0EF0, 0x7FF3444BC54C0EF0), 0x7FFB444BC54C0EF0),
    ("mad.rz.f64", (3221, 11, 5), (0x4F8000007F800000, 0x7FFC98E9B97E94BF, 0x7FF498E9B97E94BF), 0x7FFC98E9B97E94BF),
]


@pytest.mark.parametrize("case", F64_NAN, ids=lambda c: "%s-%d-%d-%d" % ((c[0],) + c[1]))
def test_f64_two_operand_nan_is_the_second(case):
    check("%s %%rd9, %%rd0, %%rd1" % case[0], [64, 64], 64, [case])


@pytest.mark.parametrize("case", FMA_NAN, ids=lambda c: "%s-%d-%d-%d" % ((c[0],) + c[1]))
def test_f64_fma_nan_is_b_then_c_then_a(case):
    check("%s %%rd9, %%rd0, %%rd1, %%rd2" % case[0], [64, 64, 64], 64, [case])


MINMAX_F64_TWO_NANS = [
    ("min.f64", (1445, 14, 24), (0xFFFFFFFFFFFFFFD1, 0xFFFFFFFFFFFFFFFF), 0xFFFFFFFFFFFFFFFF),
    ("min.f64", (1445, 14, 26), (0x7FF8000000000000, 0xFFF8000000000000), 0xFFF8000000000000),
    ("min.f64", (159, 27, 10), (0xFFFFFFFFFFFFFFBE, 0x7FFFFFFFFFFFFFFF), 0x7FFFFFFFFFFFFFFF),
    ("min.f64", (3445, 7, 13), (0xFFFFFFFFFFFFFFF9, 0xFFFFFFFFFFFFFFFF), 0xFFFFFFFFFFFFFFFF),
    ("max.f64", (2973, 25, 20), (0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF), 0xFFFFFFFFFFFFFFFF),
    ("max.f64", (2769, 6, 0), (0x7FFFFFFF00000000, 0xFFFFFFFFFFFFFFE6), 0xFFFFFFFFFFFFFFE6),
]


@pytest.mark.parametrize("case", MINMAX_F64_TWO_NANS, ids=lambda c: "%s-%d-%d-%d" % ((c[0],) + c[1]))
def test_minmax_f64_of_two_nans_is_the_second(case):
    check("%s %%rd9, %%rd0, %%rd1" % case[0], [64, 64], 64, [case])


# (opcode, (seed, instruction, thread), x, H200 result of op(x, x))
MINMAX_SELF = [
    ("min.f64", (48, 7, 21), 0xFFFF800080000000, 0xFFFF800080000000),
    ("min.f64", (300, 17, 23), 0x7FF4000000000001, 0x7FF4000000000001),
    ("min.f64", (1539, 3, 8), 0xFFF0000000000001, 0xFFF0000000000001),
    ("max.f64", (715, 10, 4), 0x7FFC6949E35CA443, 0x7FFC6949E35CA443),
    ("max.f16", (61, 26, 3), 0xFFF1, 0xFFF1),
    ("max.f16", (61, 26, 4), 0xFF77, 0xFF77),
    ("min.f16", (134, 0, 16), 0x7F7F, 0x7F7F),
    ("max.f32", (131, 2, 3), 0x7FFF7FFF, 0x7FFF7FFF),
    ("min.f32", (788, 27, 29), 0x7FFF0000, 0x7FFF0000),
    ("min.f32", (1842, 2, 1), 0xFFFFFFFF, 0xFFFFFFFF),
    # computed, not folded: the canonical NaN
    ("min.bf16", (1330, 9, 21), 0x7FCF, 0x7FFF),
    ("min.bf16", (1358, 3, 23), 0xFFE3, 0x7FFF),
    ("max.bf16", (3896, 0, 9), 0xFFD1, 0x7FFF),
    ("max.f16x2", (2693, 1, 6), 0xFFFF, 0x7FFF),
    ("min.ftz.f16", (3450, 21, 2), 0xFD68, 0x7FFF),
    ("min.ftz.f16", (3450, 21, 18), 0x7F9F, 0x7FFF),
]


@pytest.mark.parametrize("case", MINMAX_SELF, ids=lambda c: "%s-%d-%d-%d" % ((c[0],) + c[1]))
def test_minmax_of_a_register_with_itself(case):
    op, cite, x, want = case
    w = 64 if op.endswith("f64") else 32 if op.endswith(("f32", "x2")) else 16
    r = _REG[w]
    check("%s %s9, %s0, %s0" % (op, r, r, r), [w], w, [(op, cite, (x,), want)])


def test_minmax_of_two_registers_holding_one_nan_is_computed():
    """The fold is of the text (one register twice), not of equal values: min.f32 of two registers
    holding one NaN gives the canonical NaN (sm90.h; golden/isa min.f32)."""
    assert run("min.f32 %r9, %r0, %r1", [32, 32], 32, [(0x7FFF0000, 0x7FFF0000)]) == [0x7FFFFFFF]


TESTP_NORMAL = [
    ("testp.normal.f32", (1777, 15, 4), (0x0,), 1),
    ("testp.normal.f32", (2970, 54, 3), (0x0,), 1),
    ("testp.normal.f64", (723, 27, 29), (0x8000000000000000,), 1),
    ("testp.normal.f32", (3818, 19, 14), (0x2DCF48,), 0),
    ("testp.normal.f32", (3818, 19, 21), (0x37,), 0),
    ("testp.normal.f64", (723, 27, 24), (0x29,), 0),
]


@pytest.mark.parametrize("case", TESTP_NORMAL, ids=lambda c: "%s-%d-%d-%d" % ((c[0],) + c[1]))
def test_testp_normal_of_zero_is_true(case):
    w = 64 if case[0].endswith("f64") else 32
    check("%s %%p0, %s0" % (case[0], _REG[w]), [w], "p", [case])


BFE64 = [
    ("bfe.s64", (1777, 18, 11), (0x4129F55A29288CB2, 0x3B, 0x18), 0x8),
    ("bfe.s64", (0, 13, 27), (0xBE8C1E339AC7640D, 0xD2F3B540, 0xF3B5B239), 0xFFFFFFFFFFFFFFFF),
    ("bfe.s64", (1777, 18, 24), (0xFFFFFFFFFFFFFFF7, 0x3, 0x35ED476E), 0xFFFFFFFFFFFFFFFE),
    ("bfe.s64", (61, 27, 14), (0x3F794B31DB97E333, 0x25, 0x7B202039), 0x1FBCA59),
    ("bfe.s64", (1777, 18, 21), (0xFFF8000000000001, 0x1, 0x4F800000), 0xFFFC000000000000),
    ("bfe.s64", (386, 36, 6), (0xFFFDA00000000000, 0x3F7F0200, 0x0), 0x0),
    ("bfe.u64", (87, 8, 17), (0x43DB0BF83E02B3B0, 0x14, 0x14), 0xF83E0),
    ("bfe.u64", (1919, 22, 29), (0x3AEAFC0EB9B296F0, 0x2, 0xFFFFFFFF), 0xEBABF03AE6CA5BC),
    ("bfe.u64", (650, 6, 21), (0xA5E3A3D692A6BC77, 0x26, 0x38800000), 0x2978E8F),
    ("bfe.u64", (1919, 22, 8), (0x13A77C14E3E530C7, 0x10, 0xFFFFFFFF), 0x13A77C14E3E5),
    ("bfe.u64", (1919, 20, 10), (0x121999B40E44EFA, 0xFFFF, 0xC0800000), 0x0),
]
BFI64 = [
    ("bfi.b64", (1496, 15, 8), (0x2823B85F334841D3, 0x188538FF59C69260, 0x2D, 0x2D), 0x83A78FF59C69260),
    ("bfi.b64", (2230, 1, 30), (0x0, 0x8000E16BD7C55369, 0x1F, 0x19), 0x8000000057C55369),
    ("bfi.b64", (1278, 21, 20), (0x46F6B611BC6F4320, 0xBD8B430EBE1E3C66, 0x2, 0x80008000), 0x1BDAD846F1BD0C82),
    ("bfi.b64", (674, 6, 22), (0x3240C1AF442AA4D8, 0x8557A6D4E5A2FB79, 0x1, 0x8001), 0x6481835E885549B1),
    ("bfi.b64", (2470, 11, 5), (0x66FA22052F56A26E, 0x934DF0305EDB8CCC, 0x33, 0x77298), 0x1375F0305EDB8CCC),
    ("bfi.b64", (1039, 5, 27), (0x8000000000000001, 0x3F800000FFC00000, 0x3F800000, 0x25), 0x3F800000FFC00000),
]


@pytest.mark.parametrize("case", BFE64, ids=lambda c: "%s-%d-%d-%d" % ((c[0],) + c[1]))
def test_bfe64_clamps_pos_and_len_to_64(case):
    check("%s %%rd9, %%rd0, %%r1, %%r2" % case[0], [64, 32, 32], 64, [case])


@pytest.mark.parametrize("case", BFI64, ids=lambda c: "%s-%d-%d-%d" % ((c[0],) + c[1]))
def test_bfi64_clamps_pos_and_len_to_64(case):
    check("%s %%rd9, %%rd0, %%rd1, %%r2, %%r3" % case[0], [64, 64, 32, 32], 64, [case])


BFE32_MOD256 = [
    ("bfe.u32", (601, 25, 18), (0x7F803C14, 0x7FFF3C14, 0x7FFF3C14), 0x7F8),
    ("bfe.u32", (499, 17, 15), (0x9484905, 0x9484905, 0x9484905), 0x8),
]


@pytest.mark.parametrize("case", BFE32_MOD256, ids=lambda c: "%s-%d-%d-%d" % ((c[0],) + c[1]))
def test_bfe32_keeps_the_isa_modulo_256(case):
    """The 32-bit forms keep the ISA's rule (pos, len: the low 8 bits), as every recorded 32-bit
    bfe / bfi does (1,818 with an operand of 256 or more)."""
    check("%s %%r9, %%r0, %%r1, %%r2" % case[0], [32, 32, 32], 32, [case])
