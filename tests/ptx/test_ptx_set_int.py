"""set with an integer source type (`set.CmpOp.dtype.stype d, a, b;`, PTX ISA 9.7.8.5): the
integer row once named its source-type slot `.stype` without a value set, so the checker took
`set.lt.u32.stype` (ptxas 13.0: "Unknown modifier '.stype'") and refused `set.lt.u32.s32`
(ptxas 13.0 assembles it for sm_90a). The expected words are computed here: all ones or 1.0f for
true, 0 for false."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

KERNEL = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .b32 %t;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %rd3, %t, 8;
    ld.param.u64 %rd1, [pin];
    add.s64 %rd1, %rd1, %rd3;
    ld.param.u64 %rd2, [pout];
    mul.wide.u32 %rd3, %t, 4;
    add.s64 %rd2, %rd2, %rd3;
    ld.global.b32 %r1, [%rd1];
    ld.global.b32 %r2, [%rd1+4];
    LINE
    st.global.b32 [%rd2], %r3;
    ret;
}
"""


@pytest.mark.parametrize("stype", ["b32", "u32", "s32"])
def test_integer_source_types_check(stype):
    assert ptx.check(KERNEL.replace("LINE", "set.eq.u32.%s %%r3, %%r1, %%r2;" % stype)) == []


def test_no_stype_placeholder():
    diags = ptx.check(KERNEL.replace("LINE", "set.eq.u32.stype %r3, %r1, %r2;"))
    assert any(d.severity == "error" for d in diags)


@pytest.mark.parametrize("cmp,dtype", [("lt", "u32"), ("lt", "f32"), ("hi", "s32"), ("ge", "u32")])
def test_set_integer_values(cmp, dtype):
    rng = np.random.default_rng(5)
    n = 64
    a = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    b = np.where(rng.random(n) < 0.3, a, rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32))
    stype = "u32" if cmp == "hi" else "s32"
    text = KERNEL.replace("LINE", "set.%s.%s.%s %%r3, %%r1, %%r2;" % (cmp, dtype, stype))
    inp = np.stack([a, b], axis=1).reshape(-1).copy()
    out = np.zeros(n, np.uint32)
    m = pa.Machine()
    ptx.Kernel(text).launch(m, grid=1, block=n, params={"pin": m.register(inp), "pout": m.register(out)})
    sa, sb = a.astype(np.int32).astype(np.int64), b.astype(np.int32).astype(np.int64)
    truth = {"lt": sa < sb, "ge": sa >= sb, "hi": a > b}[cmp]
    one = 0x3F800000 if dtype == "f32" else 0xFFFFFFFF
    assert np.array_equal(out, np.where(truth, one, 0).astype(np.uint32))
