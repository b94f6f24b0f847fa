"""mbarrier waits of converged warps: a warp's lanes that name one mbarrier and one parity
wait at once (the barrier looked up once, the lanes' checked waits in lane order); lanes
that name different ones wait each on its own. Either way each lane's answer, and each
hazard, is that lane's own wait's, as the per-thread API gives it (PTX ISA,
mbarrier.test_wait / try_wait: True once the phase the parity names has completed; a wait
is valid only for the current or the immediately preceding phase)."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

HEAD = ".version 8.6\n.target sm_90a\n.address_size 64\n"

# Each lane waits on bar[SEL] with parity PAR (expressions of %r1 = %tid.x); bar[0] has
# completed one phase, bar[1] none.
PATTERNS = {
    "one barrier, one parity": ("0", "0"),
    "parities apart": ("0", "%r1 & 1"),
    "barriers apart": ("(%r1 >> 2) & 1", "1"),
    "both apart": ("(%r1 >> 1) & 1", "(%r1 >> 3) & 1"),
}


def _expr(e, dst):
    """PTX computing one of the PATTERNS' expressions of %r1 into dst."""
    if e in ("0", "1"):
        return [f"mov.u32 {dst}, {e};"]
    if e == "%r1 & 1":
        return [f"and.b32 {dst}, %r1, 1;"]
    shift = e.split(">> ")[1].split(")")[0]
    return [f"shr.u32 {dst}, %r1, {shift};", f"and.b32 {dst}, {dst}, 1;"]


def waits_kernel(sel, par, state=False):
    """bar[0] and bar[1] (count 1) initialised by thread 0, which completes bar[0]'s phase
    0 and observes it; then every thread test_waits on its barrier and parity (or, with
    state, on a state whose parity bit is the parity) and stores the answer."""
    wait = ("mbarrier.test_wait.shared::cta.b64 %p2, [%r4], %rd3;" if state else
            "mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r4], %r3;")
    body = ["mov.u32 %r1, %tid.x;", "mov.u32 %r2, bar;", "setp.ne.u32 %p1, %r1, 0;", "@%p1 bra SYNC;",
            "mbarrier.init.shared::cta.b64 [%r2], 1;", "mbarrier.init.shared::cta.b64 [%r2+8], 1;",
            "mbarrier.arrive.shared::cta.b64 _, [%r2];",
            "mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r2], 0;",
            "SYNC:", "bar.sync 0;"]
    body += _expr(sel, "%r5") + _expr(par, "%r3")
    body += ["shl.b32 %r5, %r5, 3;", "add.u32 %r4, %r2, %r5;", "cvt.u64.u32 %rd3, %r3;",
             "shl.b64 %rd3, %rd3, 63;", wait, "selp.u32 %r6, 1, 0, %p2;", "ld.param.u64 %rd1, [out];",
             "mul.wide.u32 %rd2, %r1, 4;", "add.s64 %rd1, %rd1, %rd2;", "st.global.u32 [%rd1], %r6;"]
    return HEAD + (".visible .entry waits(.param .u64 out)\n{\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n"
                   "  .reg .pred %p<4>;\n  .shared .align 8 .b64 bar[2];\n  "
                   + "\n  ".join(body) + "\n  ret;\n}\n")


def _eval(e, t):
    return eval(e.replace("%r1", str(t)))


def api_answers(n, sel, par):
    """The same waits through the per-thread API: bar[0] one phase done, bar[1] none."""
    m = pa.Machine()
    bars = [m.mbarrier(0x40).init(1), m.mbarrier(0x48).init(1)]
    bars[0].arrive()
    assert bars[0].test_wait(0)
    return [int(bars[_eval(sel, t)].test_wait(_eval(par, t), thread=t)) for t in range(n)]


@pytest.mark.parametrize("state", [False, True], ids=["parity", "state"])
@pytest.mark.parametrize("pattern", list(PATTERNS))
@pytest.mark.parametrize("nthreads,seed", [(32, 0), (64, 1), (45, 2)])
def test_each_lane_is_answered_as_its_own_wait(pattern, state, nthreads, seed):
    sel, par = PATTERNS[pattern]
    m = pa.Machine()
    out = np.full(nthreads, 7, dtype=np.uint32)
    ptx.Kernel(waits_kernel(sel, par, state)).launch(m, block=nthreads, params={"out": m.register(out)},
                                                     seed=seed)
    phase = [1, 0]                                 # phases completed: bar[0], bar[1]
    want = [int(phase[_eval(sel, t)] & 1 != _eval(par, t)) for t in range(nthreads)]
    assert out.tolist() == want
    assert want == api_answers(nthreads, sel, par)


MISSED = HEAD + """.visible .entry missed(.param .u32 n)
{
  .reg .b32 %r<4>;
  .reg .pred %p<4>;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra FIRST;
  mbarrier.init.shared::cta.b64 [%r2], 1;
FIRST:
  bar.sync 0;
  mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  bar.sync 0;
  @%p1 bra LATE;
  mbarrier.arrive.shared::cta.b64 _, [%r2];
  mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r2], 0;
  mbarrier.arrive.shared::cta.b64 _, [%r2];
LATE:
  bar.sync 0;
  mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  ret;
}
"""


@pytest.mark.parametrize("nthreads,seed", [(32, 0), (64, 3)])
def test_a_warp_that_missed_two_phases_reports_each_lane(nthreads, seed):
    """Every thread waits at phase 0; thread 0 completes phases 0 and 1 (observing 0);
    every other thread's next wait names a phase it missed: one missed-phase hazard for
    each of them (report mode), worded as the per-thread API words it."""
    m = pa.Machine()
    m.hazard_mode = "report"
    ptx.Kernel(MISSED).launch(m, block=nthreads, params={"n": nthreads}, seed=seed)
    got = sorted((h.message for h in m.hazards if h.rule == "missed-phase"),
                 key=lambda s: int(s.split("thread ")[1].split(" ")[0]))
    a = pa.Machine()
    a.hazard_mode = "report"
    b = a.mbarrier(0x40).init(1)
    for t in range(nthreads):
        b.test_wait(0, thread=t)
    b.arrive()
    assert b.test_wait(0)
    b.arrive()
    for t in range(1, nthreads):
        b.test_wait(0, thread=t)
    want = [h.message for h in a.hazards if h.rule == "missed-phase"]
    assert len(want) == nthreads - 1
    # the kernel's barrier lies at its own shared offset: compare with the address left out
    strip = [s.split(" of the mbarrier at ")[0] + s.split(" in CTA 0: ")[1] for s in want]
    assert [s.split(" of the mbarrier at ")[0] + s.split(" in CTA 0: ")[1] for s in got] == strip
