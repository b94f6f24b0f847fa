"""A register range declared in a `{ }` block names its elements there only (PTX ISA 5.1.1 / 11:
"{ }" opens a new scope for the declarations in it). Triton's inline conversions do so: one block
declares `.reg .b32 a<14>;` and uses a0 as a 32-bit value, a later one `.reg .f16 a<2>;` and
uses a0 as an f16 half (test_scaled_dot's dot_scale_kernel, which ptxas 13.0 assembles). The
checker must take each a0 as its own block's."""
import numpy as np

import ptxasync as pa
from ptxasync import ptx

KERNEL = """.version 8.6
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.b64 %rd1, [p];
  ld.global.b32 %r1, [%rd1];
  {
  .reg .b32 a<2>;
  and.b32 a0, %r1, 255;
  shr.u32 a1, a0, 3;
  prmt.b32 %r2, a0, 0, a1;
  }
  {
  .reg .b32 a;
  .reg .f16 a<2>;
  mov.b32 {a0, a1}, %r1;
  mov.b32 a, {a1, a0};
  mov.b32 %r3, a;
  }
  add.u32 %r2, %r2, %r3;
  st.global.b32 [%rd1], %r2;
  ret;
}
"""


def test_each_block_s_range_is_its_own():
    assert ptx.check(KERNEL) == []


def test_each_block_s_range_runs_as_its_own():
    m = pa.Machine()
    a = np.array([0x12345678], np.uint32)
    ptx.Kernel(KERNEL).launch(m, grid=(1, 1, 1), block=(1, 1, 1), params={"p": m.register(a).address})
    # block 1: a0 = 0x78, a1 = 0x0f; prmt's selectors 0x000f: byte 7 (0) with its sign, then
    # byte 0 (0x78) three times: 0x78787800. Block 2: the halves swapped: 0x56781234.
    assert a[0] == (0x78787800 + 0x56781234) & 0xFFFFFFFF
