"""A converged warp's register-only instructions run as passes over lane-major rows (lanes.c,
one version per vector level); a thread on its own runs them one at a time (interp.c). Every
register-only operation, at each width, on values with the edge cases in some lanes: the
warp's results (whole, or under a guard that holds for some lanes only; CTAs of 32, 13 and 40
threads: rows of 32, rows of 16 with room to spare, a last warp of 8) equal each lane's own
run, bit for bit, at every vector level the CPU has."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx
from vector_levels import SIMD_NAMES, vector_level

# (result register kind, instruction with d as the destination): sources %rd1 / %rd2 (u64),
# %r1 / %r2 (their low halves), %h1 / %h2 (their low 16 bits), %r3 (a shift amount 0..70),
# %rd4 / %r4 (a third source)
OPS = [
    ("r", "add.u32 d, %r1, %r2"), ("rd", "add.s64 d, %rd1, %rd2"), ("r", "sub.s32 d, %r1, %r2"),
    ("rd", "sub.u64 d, %rd1, %rd2"), ("h", "add.u16 d, %h1, %h2"),
    ("r", "mul.lo.u32 d, %r1, %r2"), ("rd", "mul.lo.u64 d, %rd1, %rd2"), ("h", "mul.lo.u16 d, %h1, %h2"),
    ("r", "mul.hi.u32 d, %r1, %r2"), ("r", "mul.hi.s32 d, %r1, %r2"), ("rd", "mul.hi.u64 d, %rd1, %rd2"),
    ("rd", "mul.hi.s64 d, %rd1, %rd2"), ("rd", "mul.wide.u32 d, %r1, %r2"), ("rd", "mul.wide.s32 d, %r1, %r2"),
    ("r", "mad.lo.u32 d, %r1, %r2, %r4"), ("rd", "mad.lo.s64 d, %rd1, %rd2, %rd4"),
    ("h", "mad.lo.u16 d, %h1, %h2, %h1"), ("r", "mad.hi.u32 d, %r1, %r2, %r4"),
    ("r", "mad.hi.s32 d, %r1, %r2, %r4"), ("rd", "mad.wide.u32 d, %r1, %r2, %rd4"),
    ("rd", "mad.wide.s32 d, %r1, %r2, %rd4"),
    ("r", "div.u32 d, %r1, %r2"), ("r", "div.s32 d, %r1, %r2"), ("rd", "div.s64 d, %rd1, %rd2"),
    ("r", "rem.u32 d, %r1, %r2"), ("r", "rem.s32 d, %r1, %r2"), ("rd", "rem.u64 d, %rd1, %rd2"),
    ("r", "shl.b32 d, %r1, %r3"), ("rd", "shl.b64 d, %rd1, %r3"), ("r", "shr.u32 d, %r1, %r3"),
    ("r", "shr.s32 d, %r1, %r3"), ("rd", "shr.s64 d, %rd1, %r3"), ("rd", "shr.u64 d, %rd1, %r3"),
    ("r", "and.b32 d, %r1, %r2"), ("rd", "or.b64 d, %rd1, %rd2"), ("r", "xor.b32 d, %r1, %r2"),
    ("rd", "not.b64 d, %rd1"), ("r", "neg.s32 d, %r1"), ("r", "abs.s32 d, %r1"), ("rd", "abs.s64 d, %rd1"),
    ("r", "min.s32 d, %r1, %r2"), ("r", "max.u32 d, %r1, %r2"), ("rd", "min.u64 d, %rd1, %rd2"),
    ("rd", "max.s64 d, %rd1, %rd2"), ("h", "min.s16 d, %h1, %h2"),
    ("r", "selp.b32 d, %r1, %r2, %p1"), ("rd", "mov.b64 d, {%r1, %r2}"), ("r", "mov.b32 d, {%h1, %h2}"),
    ("rd", "cvta.to.global.u64 d, %rd1"),
    # the semantics library (PI_SEM): rows in place, and a destination that is also a source
    ("r", "add.rn.f32 d, %r1, %r2"), ("r", "fma.rn.f32 d, %r1, %r2, %r4"), ("r", "cvt.rn.f32.s32 d, %r1"),
    ("r", "min.f32 d, %r1, %r2"), ("r", "add.f32 %r4, %r4, %r1; mov.b32 d, %r4"),
    ("r", "bfe.u32 d, %r1, %r2, %r4"), ("r", "popc.b64 d, %rd1"), ("r", "lop3.b32 d, %r1, %r2, %r4, 0xE8"),
] + [("p", f"setp.{c}.{t} d|q, {a}, {b}") for c in ("eq", "ne", "lt", "le", "gt", "ge")
     for t, a, b in (("s32", "%r1", "%r2"), ("u32", "%r1", "%r2"), ("u64", "%rd1", "%rd2"), ("s64", "%rd1", "%rd2"))]


def kernel(guarded, diverge):
    """Each thread: its inputs from pin, each operation's result widened to 64 bits at pout[tid][k].
    guarded: each operation under @%p9, which holds for a pattern of lanes; diverge: the lanes
    go apart first (odd and even lanes to two copies of the body), so each runs on its own."""
    g = "@%p9 " if guarded else ""
    body = []
    for k, (kind, text) in enumerate(OPS):
        *pre, last = text.split("; ")
        body += [f"    {g}{p};" for p in pre]
        if kind == "p":
            body += [f"    {g}{last.replace('d|q', '%p2|%p3')};",
                     f"    selp.u64 %rd9, 1, 0, %p2;", f"    selp.u64 %rd10, 2, 0, %p3;",
                     f"    or.b64 %rd9, %rd9, %rd10;"]
        else:
            body += [f"    mov.u64 %rd9, 0;" if kind == "rd" else f"    mov.u32 %r9, 0;" if kind == "r"
                     else "    mov.u16 %h9, 0;"]
            d = {"r": "%r9", "rd": "%rd9", "h": "%h9"}[kind]
            body += [f"    {g}{last.replace('d,', d + ',', 1)};"]
            if kind == "r":
                body += ["    cvt.u64.u32 %rd9, %r9;"]
            elif kind == "h":
                body += ["    cvt.u64.u16 %rd9, %h9;"]
        body += [f"    st.global.u64 [%rd8+{8 * k}], %rd9;"]
    code = "\n".join(body)
    if diverge:
        code = "    and.b32 %r10, %r0, 1;\n    setp.eq.u32 %p8, %r10, 0;\n    @%p8 bra EVEN;\n" + code + \
               "\n    bra.uni DONE;\nEVEN:\n" + code + "\nDONE:"
    return f""".version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
    .reg .pred %p<10>;
    .reg .b16 %h<10>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<12>;
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd5, %r0, 24;
    ld.param.u64 %rd6, [pin];
    add.u64 %rd6, %rd6, %rd5;
    ld.global.u64 %rd1, [%rd6];
    ld.global.u64 %rd2, [%rd6+8];
    ld.global.u64 %rd4, [%rd6+16];
    cvt.u32.u64 %r1, %rd1;
    cvt.u32.u64 %r2, %rd2;
    cvt.u32.u64 %r4, %rd4;
    cvt.u16.u64 %h1, %rd1;
    cvt.u16.u64 %h2, %rd2;
    and.b32 %r3, %r4, 127;
    min.u32 %r3, %r3, 70;
    mul.wide.u32 %rd5, %r0, {8 * len(OPS)};
    ld.param.u64 %rd8, [pout];
    add.u64 %rd8, %rd8, %rd5;
    mul.lo.u32 %r10, %r0, 0x9E3779B1;
    shr.u32 %r10, %r10, 29;
    setp.lt.u32 %p9, %r10, 5;
    setp.ne.u32 %p1, %r10, 2;
{code}
    ret;
}}
"""


def inputs(n, seed):
    rng = np.random.default_rng(seed)
    v = rng.integers(0, 2**64, (n, 3), dtype=np.uint64)
    edges = [0, 1, 2**64 - 1, 2**63, 2**63 - 1, 2**31, 2**32 - 1, 0xFFFF, 0x8000]
    for i in range(n):                     # edge values, and divisors 0 and -1, in some lanes
        if i % 3 == 0:
            v[i, i % 2] = edges[i % len(edges)]
        if i % 5 == 1:
            v[i, 1] = [0, 2**64 - 1, 2**32 - 1, 0xFFFFFFFF00000000][i % 4]
        if i % 7 == 3:                     # equal operands: each comparison's edge
            v[i, 1] = v[i, 0]
    return v


def run(block, guarded, diverge, seed=0):
    m = pa.Machine()
    vin = inputs(block, seed)
    out = np.zeros((block, len(OPS)), np.uint64)
    gi, go = m.register(vin), m.register(out)
    ptx.Kernel(kernel(guarded, diverge)).launch(m, block=block, params={"pin": gi, "pout": go})
    return out


def on_lanes(block):
    return np.array([((t * 0x9E3779B1) & 0xFFFFFFFF) >> 29 < 5 for t in range(block)])


@pytest.mark.parametrize("level", range(len(SIMD_NAMES)), ids=SIMD_NAMES)
@pytest.mark.parametrize("block", [32, 13, 40])
def test_a_warps_passes_equal_each_lanes_own_run(level, block):
    alone = run(block, guarded=False, diverge=True)
    alone_g = run(block, guarded=True, diverge=True)
    on = on_lanes(block)
    assert 0 < on.sum() < block
    assert (alone_g[~on] == 0).all() and (alone_g[on] == alone[on]).all()
    with vector_level(level):
        whole = run(block, guarded=False, diverge=False)
        some = run(block, guarded=True, diverge=False)
    for got, want in ((whole, alone), (some, alone_g)):
        bad = np.argwhere(got != want)
        assert not len(bad), [(OPS[k][1], int(t), hex(int(got[t, k])), hex(int(want[t, k]))) for t, k in bad[:5]]


def test_the_lanes_differ_and_the_edges_show():
    # the comparison above is worth something: lanes' results differ from one another, and
    # the edge cases are there (division by zero is all ones; a shift past the width is 0)
    out = run(32, guarded=False, diverge=False)
    assert all(len(set(out[:, k])) > 3 for k in range(len(OPS)) if OPS[k][0] != "p")
    div = [i for i, (_, t) in enumerate(OPS) if t.startswith("div.u32")][0]
    assert 0xFFFFFFFF in out[:, div]
    ge = [i for i, (_, t) in enumerate(OPS) if t.startswith("setp.ge.u64")][0]
    assert set(out[:, ge]) == {1, 2}
