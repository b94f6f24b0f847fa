"""fns, movmatrix, brx.idx, alloca / stacksave / stackrestore, setmaxnreg and pmevent on the
model, each against its ISA section (the expected values computed here from the ISA's words)."""
import random

import numpy as np
import pytest

from ptxasync import ptx
from lane_kernel import lane_kernel, run_lanes


def launch(lines, x, n=32, text=None):
    return run_lanes(text or lane_kernel(lines), x, n)


# ---- fns (9.7.1.17) -------------------------------------------------------------------------------

def fns_ref(mask, base, offset):
    """The ISA's Semantics block, step by step."""
    offset = offset - (1 << 32) if offset >> 31 else offset
    if offset == 0:
        return base if base < 32 and (mask >> base) & 1 else 0xFFFFFFFF
    pos, count, inc = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if (mask >> pos) & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return 0xFFFFFFFF


def test_fns_isa_examples():
    """9.7.1.17's examples: 0xaaaaaaaa from 3 (+1, -1) is 3, from 2 (+1) 3, (-1) 1."""
    x = [[0xAAAAAAAA, 3, 1], [0xAAAAAAAA, 3, 0xFFFFFFFF], [0xAAAAAAAA, 2, 1], [0xAAAAAAAA, 2, 0xFFFFFFFF]] * 8
    assert launch("    fns.b32 %r1, %r2, %r3, %r4;", x)[:4] == [3, 3, 3, 1]


@pytest.mark.parametrize("seed", range(4))
def test_fns_random(seed):
    rnd = random.Random(seed)
    x = [[rnd.choice([rnd.getrandbits(32), 1 << rnd.randrange(32), 0, 0xFFFFFFFF]), rnd.randrange(32),
          rnd.choice([0, rnd.randint(1, 33), (-rnd.randint(1, 33)) & 0xFFFFFFFF])] for _ in range(32)]
    got = launch("    fns.b32 %r1, %r2, %r3, %r4;", x)
    assert got == [fns_ref(*r) for r in x]


# ---- movmatrix (9.7.14.5.17) ---------------------------------------------------------------------

def test_movmatrix_transposes_the_warps_matrix():
    """Lane t holds row t/4, columns 2(t%4) and 2(t%4)+1 (the first in the low half); d holds the
    same places of the transpose."""
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1 << 16, (8, 8), dtype=np.uint32)
    x = [[int(a[t // 4, 2 * (t % 4)]) | int(a[t // 4, 2 * (t % 4) + 1]) << 16, 0, 0] for t in range(32)]
    got = launch("    movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;", x)
    at = a.T
    assert got == [int(at[t // 4, 2 * (t % 4)]) | int(at[t // 4, 2 * (t % 4) + 1]) << 16 for t in range(32)]


def test_movmatrix_in_place():
    """d may be a: every lane reads its source before any writes."""
    x = [[t * 0x00010001 + 0x10000, 0, 0] for t in range(32)]
    once = launch("    movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;", x)
    inplace = launch("    movmatrix.sync.aligned.m8n8.trans.b16 %r2, %r2;\n    mov.b32 %r1, %r2;", x)
    assert once == inplace


# ---- brx.idx (9.7.12.4) ---------------------------------------------------------------------------

BRX = """    brx.idx %r2, ts;
L0:
    mov.b32 %r1, 100;
    bra.uni DONE;
L1:
    mov.b32 %r1, 101;
    bra.uni DONE;
L2:
    mov.b32 %r1, 102;
    ts: .branchtargets L0, L1, L2;
DONE:
"""


def test_brx_idx_branches_to_the_index_th_label_per_lane():
    """Each lane to its own index's label (the lanes go apart and meet again)."""
    x = [[t % 3, 0, 0] for t in range(32)]
    assert launch(BRX, x) == [100 + t % 3 for t in range(32)]


def test_brx_idx_guarded():
    """@p brx.idx: a lane whose guard is false goes on to the next instruction."""
    x = [[2, t & 1, 0] for t in range(32)]
    lines = "    setp.ne.u32 %p1, %r3, 0;\n" + BRX.replace("    brx.idx", "    @%p1 brx.idx")
    assert launch(lines, x) == [102 if t & 1 else 100 for t in range(32)]


def test_brx_idx_out_of_range_is_an_error():
    """An index at or past the table's length is undefined in the ISA: the launch fails, naming it."""
    with pytest.raises(Exception, match="brx.idx: index 3 is past"):
        launch(BRX, [[3, 0, 0]] * 32)


# ---- alloca, stacksave, stackrestore (9.7.17) ----------------------------------------------------

def test_alloca_memory_holds_local_stores():
    """9.7.17.3: ptr points to local memory ld.local / st.local use; its alignment is immAlign."""
    lines = """    .reg .b64 %sp<4>;
    stacksave.u64 %sp0;
    alloca.u64 %sp1, 64, 32;
    st.local.u32 [%sp1+60], %r2;
    ld.local.u32 %r5, [%sp1+60];
    and.b64 %sp2, %sp1, 31;
    cvt.u32.u64 %r6, %sp2;
    add.u32 %r1, %r5, %r6;
    stackrestore.u64 %sp0;
"""
    x = [[t * 7 + 1, 0, 0] for t in range(32)]
    assert launch(lines, x) == [t * 7 + 1 for t in range(32)]


def test_stackrestore_frees_and_alloca_reuses():
    """9.7.17: stacksave before alloca and stackrestore after give the memory back: the next alloca
    returns the same pointer."""
    lines = """    .reg .b32 %sp<4>;
    stacksave.u32 %sp0;
    alloca.u32 %sp1, %r3, 16;
    stackrestore.u32 %sp0;
    alloca.u32 %sp2, %r3, 16;
    sub.u32 %r1, %sp2, %sp1;
"""
    assert launch(lines, [[0, 40, 0]] * 32) == [0] * 32


def test_stackrestore_past_the_top_is_an_error():
    """A value no stacksave of this function gave is undefined in the ISA: an error naming it."""
    lines = """    .reg .b64 %sp<2>;
    stacksave.u64 %sp0;
    add.u64 %sp0, %sp0, 64;
    stackrestore.u64 %sp0;
"""
    with pytest.raises(Exception, match="stackrestore to"):
        launch(lines, [[0, 0, 0]] * 32)


def test_alloca_in_a_func_is_popped_by_ret():
    """9.7.17.3: alloca's memory is deallocated when the function exits: the caller's stack pointer
    is the same before and after the call."""
    text = lane_kernel("""    .reg .b32 %s<3>;
    stacksave.u32 %s0;
    {
    .param .b32 pr;
    .param .b32 pn;
    st.param.b32 [pn], %r2;
    call (pr), f, (pn);
    ld.param.b32 %r5, [pr];
    }
    stacksave.u32 %s1;
    sub.u32 %s2, %s1, %s0;
    add.u32 %r1, %r5, %s2;
""", before=""".func (.param .b32 r) f(.param .b32 n)
{
    .reg .b32 %a<4>;
    ld.param.b32 %a0, [n];
    alloca.u32 %a1, %a0, 8;
    st.local.u32 [%a1], %a0;
    ld.local.u32 %a2, [%a1];
    st.param.b32 [r], %a2;
    ret;
}
""")
    x = [[t + 4, 0, 0] for t in range(32)]
    assert launch(None, x, text=text) == [t + 4 for t in range(32)]


# ---- setmaxnreg (9.7.19.5), pmevent (9.7.19.4) ---------------------------------------------------

def test_setmaxnreg_and_pmevent_change_no_value():
    """Register allocation and the profiler's events are not modelled: the registers keep their
    values (setmaxnreg.inc leaves new registers undefined; a kernel's declared ones are its own)."""
    lines = """    setmaxnreg.dec.sync.aligned.u32 64;
    setmaxnreg.inc.sync.aligned.u32 240;
    pmevent 3;
    pmevent.mask 0x11;
    add.u32 %r1, %r2, %r3;
"""
    x = [[t, 2 * t, 0] for t in range(128)]
    assert launch(lines, x, n=128) == [3 * t for t in range(128)]


@pytest.mark.parametrize("line,why", [
    ("setmaxnreg.inc.sync.aligned.u32 100;", "multiple of 8"),
    ("setmaxnreg.inc.sync.aligned.u32 260;", "multiple of 8"),
    ("pmevent 16;", "0 to 15"),
    ("alloca.u64 %rd1, %rd2, 3;", "power of 2"),
    ("brx.idx %r1, L9;", ".branchtargets"),
    ("brx %r1, ts;", "brx.idx"),
    ("fns.b32 %rd1, %r2, %r3, %r4;", "32-bit"),
    ("movmatrix.sync.aligned.m8n8.trans.b16 %r1, 5;", "32-bit register"),
])
def test_checker_refuses_what_ptxas_does(line, why):
    text = lane_kernel("L9:\n    %s" % line)
    diags = [d for d in ptx.check(text) if d.severity == "error"]
    assert diags and why in diags[0].message, diags


def test_setmaxnreg_needs_an_a_target():
    """9.7.19.5: sm_90a, sm_100a, sm_110a, sm_120a and the f families only."""
    text = lane_kernel("    setmaxnreg.dec.sync.aligned.u32 64;", target="sm_90")
    assert any(d.severity == "error" and "setmaxnreg" in d.message for d in ptx.check(text))
