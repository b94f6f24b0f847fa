"""neg / abs of a NaN as an H200 gives it (ptxas 13.0 makes them adds): an f32, f16 or bf16 NaN
(each half of an x2) gives the canonical NaN, an f64 NaN comes through quieted with its sign; a
number has its sign flipped or cleared. Evidence: 144,211 of 144,384 neg/abs results of 1,500
random programs recorded on an H200 (tests/data/randprog/h200.npz, tools/random_programs.py).
The expected words are computed here from that rule."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

KERNEL = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
    .reg .bW %x<2>;
    .reg .b64 %rd<4>;
    .reg .b32 %t;
    mov.u32 %t, %tid.x;
    mul.wide.u32 %rd3, %t, 8;
    ld.param.u64 %rd1, [pin];
    add.s64 %rd1, %rd1, %rd3;
    ld.param.u64 %rd2, [pout];
    add.s64 %rd2, %rd2, %rd3;
    ld.global.bW %x0, [%rd1];
    OP.TYPE %x1, %x0;
    st.global.bW [%rd2], %x1;
    ret;
}
"""
FMT = {"f32": (8, 23, 32), "f64": (11, 52, 64), "f16": (5, 10, 16), "bf16": (8, 7, 16)}


def rule(op, t, x):
    e, m, _ = FMT[t]
    sb = 1 << (e + m)
    if (x >> m) & ((1 << e) - 1) == (1 << e) - 1 and x & ((1 << m) - 1):
        return x | 1 << (m - 1) if t == "f64" else sb - 1
    return x ^ sb if op == "neg" else x & (sb - 1)


@pytest.mark.parametrize("op", ["neg", "abs"])
@pytest.mark.parametrize("t", ["f32", "f64", "f16", "bf16", "f16x2", "bf16x2"])
def test_nan_operands(op, t):
    base = t[:-2] if t.endswith("x2") else t
    e, m, w = FMT[base]
    rng = np.random.default_rng(3)
    nan = lambda: (int(rng.integers(2)) << (e + m)) | (((1 << e) - 1) << m) | int(rng.integers(1, 1 << m))  # noqa: E731
    num = lambda: int(rng.integers(0, 1 << (e + m + 1), dtype=np.uint64))  # noqa: E731
    vals = [nan() if rng.random() < 0.7 else num() for _ in range(64)]
    if t.endswith("x2"):
        vals = [v | (nan() if rng.random() < 0.5 else num()) << 16 for v in vals]
        w = 32
    want = [rule(op, base, v & 0xFFFF) | rule(op, base, v >> 16) << 16 if t.endswith("x2") else rule(op, base, v)
            for v in vals]
    text = KERNEL.replace("bW", "b%d" % w).replace("OP.TYPE", "%s.%s" % (op, t))
    inp = np.array(vals, np.uint64)
    out = np.zeros(64, np.uint64)
    m_ = pa.Machine()
    ptx.Kernel(text).launch(m_, grid=1, block=64, params={"pin": m_.register(inp), "pout": m_.register(out)})
    got = [int(v) & ((1 << w) - 1) for v in out]
    assert got == want
