"""cvt forms no H200 runs (sm_100 and later: .e2m1x2, .e2m3x2, .e3m2x2, .ue8m0x2, .s2f6x2, the
four-element types, .rs stochastic rounding), one test per rule, each citing the PTX ISA's
sentence (9.1, cvt). docs/conversions.md lists them with the choices the ISA leaves open."""
import struct

import numpy as np
import pytest

import isa_cvt_all

NAN32 = 0x7FC00000
INF32 = 0x7F800000


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bf16(x):
    return f32(x) >> 16


def cvt(sem, text, *srcs, rbits=None):
    """One lane of `text` (its qualifiers and types) on source registers srcs."""
    k = isa_cvt_all.parse(text)
    d, _ = sem.run(k, [np.array([s], np.uint64) for s in srcs],
                   d1=None if rbits is None else [rbits])
    return int(d[0])


# ---- .e2m1x2 / .e2m3x2 / .e3m2x2 ----

def test_e2m1x2_packs_a_above_b(sem):
    """"the value converted from input a is stored in the upper 4 bits of d and the value
    converted from input b is stored in the lower 4 bits of d" (e2m1: 1.0 = 0b0010,
    0.5 = 0b0001)."""
    assert cvt(sem, "cvt.rn.satfinite.e2m1x2.f32", f32(1.0), f32(0.5)) == 0x21


def test_e2m1_rounds_to_nearest_even(sem):
    """".rn: rounding to nearest, with ties to even": 2.5 lies between 2 (0b0100) and 3
    (0b0101), 5 between 4 (0b0110) and 6 (0b0111)."""
    assert cvt(sem, "cvt.rn.satfinite.e2m1x2.f32", f32(2.5), f32(5.0)) == 0x46
    assert cvt(sem, "cvt.rn.satfinite.e2m1x2.f32", f32(2.75), f32(-0.25)) == 0x58


def test_satfinite_overflow_to_sign_preserved_max_norm(sem):
    """"If the absolute value of input (ignoring sign) is greater than MAX_NORM of the
    specified destination format, then the result is sign-preserved MAX_NORM" (e2m1 6.0,
    e2m3 7.5, e3m2 28.0), infinities too."""
    assert cvt(sem, "cvt.rn.satfinite.e2m1x2.f32", f32(100.0), f32(-100.0)) == 0x7F
    assert cvt(sem, "cvt.rn.satfinite.e2m1x2.f32", INF32, INF32 | 1 << 31) == 0x7F
    assert cvt(sem, "cvt.rn.satfinite.e2m3x2.f32", f32(8.0), f32(-8.0)) == 0x1F3F
    assert cvt(sem, "cvt.rn.satfinite.e3m2x2.f32", f32(1e6), f32(-1e6)) == 0x1F3F


def test_satfinite_nan_to_positive_max_norm(sem):
    """"For .e2m1x2, .e2m3x2, .e3m2x2, .e2m1x4, .e2m3x4, .e3m2x4, .s2f6x2 destination
    formats NaN results are converted to positive MAX_NORM.\""""
    assert cvt(sem, "cvt.rn.satfinite.e2m1x2.f32", NAN32, 0xFFC00000) == 0x77
    assert cvt(sem, "cvt.rn.satfinite.e2m3x2.f32", NAN32, f32(1.0)) == 0x1F08
    assert cvt(sem, "cvt.rn.satfinite.e3m2x2.f32", NAN32, f32(1.0)) == 0x1F0C
    assert cvt(sem, "cvt.rn.satfinite.relu.e2m1x2.f32", NAN32, NAN32) == 0x77


def test_relu_clamps_negative_to_zero(sem):
    """".relu clamps the result to 0 if negative.\""""
    assert cvt(sem, "cvt.rn.satfinite.relu.e2m1x2.f32", f32(-1.0), f32(1.5)) == 0x03
    assert cvt(sem, "cvt.rn.satfinite.relu.e2m3x2.f32", f32(-1.0), f32(-0.0)) == 0x0000


def test_f6x2_pads_two_msbs_with_zeros(sem):
    """"the value converted from input a is stored in the upper 8 bits of d with 2 MSB bits
    padded with zeros" (e2m3 -1.0 = 0b101000, e3m2 -1.0 = 0b101100)."""
    assert cvt(sem, "cvt.rn.satfinite.e2m3x2.f32", f32(-1.0), f32(1.0)) == 0x2808
    assert cvt(sem, "cvt.rn.satfinite.e3m2x2.f32", f32(-1.0), f32(1.0)) == 0x2C0C


def test_f4x2_f6x2_from_fp16x2(sem):
    """"When converting an .f16x2/.bf16x2 input to .e2m1x2, ... the value from the upper 16
    bits of a is stored in the upper 4 bits of d" (likewise .e2m3x2/.e3m2x2, .e4m3x2)."""
    assert cvt(sem, "cvt.rn.satfinite.e2m1x2.f16x2", 0x3C00_3800) == 0x21
    assert cvt(sem, "cvt.rn.satfinite.e2m3x2.bf16x2", bf16(-1.0) << 16 | bf16(1.0)) == 0x2808
    assert cvt(sem, "cvt.rn.satfinite.e4m3x2.bf16x2", bf16(1.0) << 16 | bf16(-2.0)) == 0x38C0


def test_f16x2_from_e2m1x2(sem):
    """"Each 4-bit input value in operand a is converted to .f16 type ... the upper 4 bits of
    a is stored in the upper 16 bits of d" (exact: 1.0, -6.0)."""
    assert cvt(sem, "cvt.rn.f16x2.e2m1x2", 0x2F) == 0x3C00_C600
    assert cvt(sem, "cvt.rn.relu.f16x2.e2m1x2", 0x2F) == 0x3C00_0000


def test_f16x2_from_f6x2(sem):
    """"Each 8-bit input value with 2 MSB bits 0 in operand a is converted to .f16 type"
    (e2m3 0b011111 = 7.5, e3m2 0b011111 = 28; 0b000001 = 2^-3 and 2^-4)."""
    assert cvt(sem, "cvt.rn.f16x2.e2m3x2", 0x1F01) == 0x4780_3000
    assert cvt(sem, "cvt.rn.f16x2.e3m2x2", 0x1F01) == 0x4F00_2C00


# ---- .ue8m0x2 ----

def test_ue8m0x2_rounds_toward_zero_or_up(sem):
    """"cvt.frnd3{.satfinite}.ue8m0x2.f32 d, a, b; .frnd3 = { .rz, .rp }": 1.0 is 0x7F,
    3.0 is 2.0 (0x80) toward zero and 4.0 (0x81) up; a in the upper 8 bits."""
    assert cvt(sem, "cvt.rz.satfinite.ue8m0x2.f32", f32(3.0), f32(1.0)) == 0x807F
    assert cvt(sem, "cvt.rp.satfinite.ue8m0x2.f32", f32(3.0), f32(1.0)) == 0x817F


def test_ue8m0x2_satfinite_positive_max_norm(sem):
    """"a positive MAX_NORM in .ue8m0x2 for which the destination sign is not supported"
    (0xFE = 2^127), for +-infinity and beyond 2^127; a NaN stays "NaN in the specified
    destination format" (0xFF)."""
    assert cvt(sem, "cvt.rp.satfinite.ue8m0x2.f32", INF32, INF32 | 1 << 31) == 0xFEFE
    assert cvt(sem, "cvt.rp.satfinite.ue8m0x2.f32", f32(3e38), NAN32) == 0xFEFF


def test_ue8m0x2_from_bf16x2(sem):
    """"When converting two .f32 or two packed .bf16 inputs to .ue8m0x2, each input is
    converted ... a is stored in the upper 8 bits" (bf16x2: its upper half)."""
    assert cvt(sem, "cvt.rz.ue8m0x2.bf16x2", bf16(3.0) << 16 | bf16(0.5)) == 0x807E


def test_bf16x2_from_ue8m0x2(sem):
    """"Each 8-bit input value in operand a is converted to .bf16 type" (0x7F = 1.0,
    0x00 = 2^-127 a subnormal bf16, 0xFF the NaN: "NaN value is limited to 0xff")."""
    assert cvt(sem, "cvt.rn.bf16x2.ue8m0x2", 0x7F00) == 0x3F80_0040
    assert cvt(sem, "cvt.rn.bf16x2.ue8m0x2", 0xFF80) == 0x7FFF_4000


# ---- .rs ----

def test_rs_f16x2_uses_13_random_bits(sem):
    """".rs: rounded in the direction toward zero or away from zero based on the carry out
    of the integer addition of the supplied random bits (rbits) to the truncated off
    (discarded) bits"; f16x2: "13 LSBs from upper 16-bits are used as random bits for
    operand a" (1 + 2^-11: the discarded bits are 0x1000)."""
    x = f32(1.0 + 2.0 ** -11)
    assert cvt(sem, "cvt.rs.f16x2.f32", x, x, 0x0FFF_1000) == 0x3C00_3C01
    assert cvt(sem, "cvt.rs.f16x2.f32", x, x, 0xEFFF_F000) == 0x3C00_3C01   # 3 MSBs unused
    assert cvt(sem, "cvt.rs.relu.f16x2.f32", f32(-1.5), x, 0) == 0x0000_3C00


def test_rs_bf16x2_uses_16_random_bits(sem):
    """".bf16x2: upper 16-bits are used as random bits for operand a and lower 16-bits are
    used as random bits for operand b" (1 + 2^-8: discarded 0x8000)."""
    x = f32(1.0 + 2.0 ** -8)
    assert cvt(sem, "cvt.rs.bf16x2.f32", x, x, 0x7FFF_8000) == 0x3F80_3F81
    assert cvt(sem, "cvt.rs.bf16x2.f32", f32(-1.0 - 2.0 ** -8), x, 0x8000_0000) == 0xBF81_3F80


def test_rs_f8x4_packing_and_random_bits(sem):
    """"values converted from inputs a, b, e, f are stored in each 8 bits starting from
    upper bits of d"; "lower 16-bits are used for operands e, f and upper 16 bits are used
    for operands a, b" (1 + 2^-4 into e4m3: discarded 0x8000 of 16)."""
    x = f32(1.0 + 2.0 ** -4)
    assert cvt(sem, "cvt.rs.satfinite.e4m3x4.f32", x, x, x, x, rbits=0x8000_7FFF) == 0x3939_3838
    assert cvt(sem, "cvt.rs.satfinite.e5m2x4.f32", f32(1.0), f32(-2.0), f32(0.5), 0,
               rbits=0) == 0x3CC0_3800


def test_rs_satfinite_clamps(sem):
    """.satfinite: "the result is sign-preserved MAX_NORM" (e4m3 448 = 0x7E) whatever the
    random bits; NaN "is NaN in the specified destination format" (e4m3 0x7F)."""
    assert cvt(sem, "cvt.rs.satfinite.e4m3x4.f32", f32(1e9), f32(-1e9), NAN32, f32(480.0),
               rbits=0xFFFF_FFFF) == 0x7EFE_7F7E


def test_rs_e2m1x4_random_bits_layout(sem):
    """".e2m1x4: lower 8-bits from both 16-bits half of rbits are used for operands e, f and
    upper 8-bits from both 16-bits half of rbits are used for operands a, b" (read: a
    [31:24], b [15:8], e [23:16], f [7:0]); 1.25 into e2m1 discards 0x80 of 8 bits."""
    x = f32(1.25)
    assert cvt(sem, "cvt.rs.satfinite.e2m1x4.f32", x, x, x, x, rbits=0x8000_0000) == 0x3222
    assert cvt(sem, "cvt.rs.satfinite.e2m1x4.f32", x, x, x, x, rbits=0x0000_8000) == 0x2322
    assert cvt(sem, "cvt.rs.satfinite.e2m1x4.f32", x, x, x, x, rbits=0x0080_0000) == 0x2232
    assert cvt(sem, "cvt.rs.satfinite.e2m1x4.f32", x, x, x, x, rbits=0x0000_0080) == 0x2223


def test_rs_f6x4_pads(sem):
    """"For .e3m2x4/.e2m3x4, each 8-bit output will have 2 MSB bits padded with zeros.\""""
    one = f32(1.0)
    assert cvt(sem, "cvt.rs.satfinite.e2m3x4.f32", one, f32(-1.0), one, one, rbits=0) == 0x0828_0808


# ---- .s2f6x2 ----

def test_s2f6_fixed_point(sem):
    """"s2f6 value = s8 value * 2^(-6)"; "Positive max representation = 01.111111 =
    1.984375, Negative max representation = 10.000000 = -2.0": beyond them .satfinite
    clamps; a is stored in the upper 8 bits."""
    assert cvt(sem, "cvt.rn.satfinite.s2f6x2.f32", f32(1.0), f32(-2.0)) == 0x4080
    assert cvt(sem, "cvt.rn.satfinite.s2f6x2.f32", f32(3.0), f32(-3.0)) == 0x7F80
    assert cvt(sem, "cvt.rn.satfinite.s2f6x2.f32", f32(2.0 ** -7), f32(3 * 2.0 ** -7)) == 0x0002
    assert cvt(sem, "cvt.rn.satfinite.s2f6x2.f32", NAN32, f32(-0.5)) == 0x7FE0
    assert cvt(sem, "cvt.rn.satfinite.relu.s2f6x2.f32", f32(-0.5), f32(0.5)) == 0x0020


def test_s2f6_scale_factor(sem):
    """"For down conversion, inputs are divided by scale-factor"; "For up-conversion, inputs
    are converted to destination type and then multiplied by scale-factor"; "If not
    specified explicitly, value of scale-factor will be assumed to be 0x7f7f".\""""
    assert cvt(sem, "cvt.rn.satfinite.scaled::n2::ue8m0.s2f6x2.f32", f32(2.0), f32(2.0),
               0x807F) == 0x407F
    assert cvt(sem, "cvt.rn.satfinite.s2f6x2.bf16x2", bf16(1.0) << 16 | bf16(0.25)) == 0x4010
    assert cvt(sem, "cvt.rn.bf16x2.s2f6x2", 0x4080) == 0x3F80_C000
    assert cvt(sem, "cvt.rn.scaled::n2::ue8m0.bf16x2.s2f6x2", 0x4040, 0x807E) == 0x4000_3F00


# ---- a rule the H200 confirms ----

def test_nan_to_integer(sem):
    """"NaN input results in ... Zero if source is not .f64 and destination is not .s64,
    .u64. Otherwise 1 << (BitWidth(dst) - 1)" (the H200 agrees: golden/isa)."""
    assert cvt(sem, "cvt.rzi.s32.f32", NAN32) == 0
    assert cvt(sem, "cvt.rzi.u64.f32", NAN32) == 1 << 63
    assert cvt(sem, "cvt.rzi.u16.f64", 0x7FF8000000000000) == 0x8000


@pytest.mark.parametrize("text", ["cvt.rs.f16.f32", "cvt.rs.satfinite.e4m3x2.f32"])
def test_rs_only_where_the_isa_has_it(sem, text):
    """.rs exists for ".f16x2.f32", ".bf16x2.f32" and the four-element types only."""
    rc, _, why = sem.resolve(isa_cvt_all.parse(text))
    assert rc != 0 and why
