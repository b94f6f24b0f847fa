"""8-bit registers (`.reg .b8`): PTX ISA 5.2.4 lets cvt's operands be registers wider than
their types; ptxas 13.0 also takes an 8-bit register of an 8-bit type exactly
(`cvt.u32.u8 %r, %b8`, `cvt.s8.s32 %b8, %r`) and refuses one for a 16-bit type (Arguments
mismatch). Triton's `tl.inline_asm_elementwise` unpacks bytes so
(`mov.b32 {b0, b1, b2, b3}, %r; cvt.u32.u8 %r, b0`: test_inline_asm_packed_multiple_outputs)."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

HEAD = ".version 8.6\n.target sm_90a\n.address_size 64\n"


def kernel(body):
    return HEAD + f"""
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<2>;
  .reg .b16 %h;
  .reg .b8 t<4>;
  ld.param.u64 %rd1, [p];
  ld.global.b32 %r1, [%rd1];
{body}
  ret;
}}
"""


def run(body, words):
    m = pa.Machine()
    a = np.array(words, np.uint32)
    g = m.register(a)
    ptx.Kernel(kernel(body)).launch(m, grid=(1, 1, 1), block=(1, 1, 1), params={"p": g.address})
    return a


def errors(body):
    return [str(d) for d in ptx.check(kernel(body)) if d.severity == "error"]


def test_unpacked_bytes_widen_by_cvt():
    # bytes 0x01, 0x80, 0x7f, 0xff of the word (little-endian: t0 is the low byte)
    a = run("""
  mov.b32 {t0, t1, t2, t3}, %r1;
  cvt.u32.u8 %r2, t1;
  cvt.s32.s8 %r3, t1;
  cvt.s32.s8 %r4, t3;
  cvt.u32.u8 %r5, t2;
  st.global.b32 [%rd1+4], %r2;
  st.global.b32 [%rd1+8], %r3;
  st.global.b32 [%rd1+12], %r4;
  st.global.b32 [%rd1+16], %r5;""", [0xff7f8001, 0, 0, 0, 0])
    # cvt.u32.u8 zero-extends, cvt.s32.s8 sign-extends (PTX ISA, cvt: "integer conversions")
    assert list(a[1:]) == [0x80, 0xffffff80, 0xffffffff, 0x7f]


def test_narrowing_into_an_8_bit_register_and_packing_back():
    # cvt.u8.u32 keeps the low 8 bits; cvt.s8.s32 without .sat too; the bytes packed into a word
    a = run("""
  cvt.u8.u32 t0, %r1;
  shr.u32 %r2, %r1, 8;
  cvt.s8.s32 t1, %r2;
  mov.b32 %r3, 0x00000033;
  cvt.u8.u32 t2, %r3;
  cvt.u16.u8 %h, t0;
  cvt.u8.u16 t3, %h;
  mov.b32 %r4, {t0, t1, t2, t3};
  st.global.b32 [%rd1+4], %r4;""", [0x1234abcd, 0])
    assert a[1] == 0xcd33abcd


@pytest.mark.parametrize("line", ["cvt.u32.u8 %r2, t1;", "cvt.s32.s8 %r2, t1;", "cvt.u8.u32 t1, %r1;",
                                  "cvt.u16.u8 %h, t1;", "cvt.rn.f32.u8 %r2, t1;", "cvt.u8.u16 t1, %h;",
                                  "cvt.s8.s32 t1, %r1;"])
def test_ptxas_takes_an_8_bit_register_of_an_8_bit_type(line):
    assert errors(line) == []


def test_an_8_bit_register_of_a_16_bit_type_is_refused():
    # ptxas 13.0: "Arguments mismatch for instruction 'cvt'"
    e = errors("cvt.u32.u16 %r2, t1;")
    assert len(e) == 1 and "('t1') is an 8-bit register; the form needs a 16-bit register" in e[0]
