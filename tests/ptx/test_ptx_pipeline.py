"""A warp-specialised producer/consumer mbarrier ring written in PTX (the pipeline of
ptxasync.pipeline, as a kernel would write it) run by the interpreter: exact and silent in
every policy and seed; with one wait deleted the race checker reports it (as pipeline.py's
``missing=`` variants); a wait that can never complete is the deadlock, naming its line."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

STAGES, ROWS, COLS = 3, 8, 16            # f32 tiles of 512 bytes
TILE = ROWS * COLS * 4

RING = """.version 8.0
.target sm_90a
.address_size 64

// warp 0 lane 0 produces (TMA loads into a ring of 3 stages), warp 1 consumes
// (each lane copies 16 bytes of the stage to global memory, then arrives on empty)
.visible .entry ring(.param .align 64 .b8 tmap[128], .param .u64 out, .param .u32 tiles)
{
  .reg .b32 %r<32>;
  .reg .b64 %rd<8>;
  .reg .pred %p<8>;
  .shared .align 1024 .b8 stage[1536];
  .shared .align 8 .b64 full[3];
  .shared .align 8 .b64 empty[3];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, full;
  mov.u32 %r3, empty;
  mov.u32 %r4, stage;
  ld.param.u32 %r5, [tiles];
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  mbarrier.init.shared::cta.b64 [%r2+8], 1;
  mbarrier.init.shared::cta.b64 [%r2+16], 1;
  mbarrier.init.shared::cta.b64 [%r3], EMPTY_COUNT;
  mbarrier.init.shared::cta.b64 [%r3+8], EMPTY_COUNT;
  mbarrier.init.shared::cta.b64 [%r3+16], EMPTY_COUNT;
  fence.mbarrier_init.release.cluster;
SYNC:
  bar.sync 0;
  setp.ge.u32 %p2, %r1, 32;
  @%p2 bra CONSUMER;
  @%p1 bra DONE;
  mov.u32 %r6, 0;
  mov.u32 %r7, 0;
  mov.u32 %r8, 0;
PLOOP:
  setp.ge.u32 %p3, %r6, %r5;
  @%p3 bra DONE;
  shl.b32 %r9, %r7, 3;
  add.u32 %r10, %r3, %r9;
  add.u32 %r11, %r2, %r9;
  and.b32 %r12, %r8, 1;
  xor.b32 %r12, %r12, 1;
PWAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r10], %r12;   // PRODUCER_WAIT
  @!%p4 bra PWAIT;                                              // PRODUCER_WAIT
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r11], 512;
  shl.b32 %r13, %r7, 9;
  add.u32 %r14, %r4, %r13;
  shl.b32 %r15, %r6, 3;
  mov.u32 %r16, 0;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r14], [tmap, {%r16, %r15}], [%r11];
  add.u32 %r6, %r6, 1;
  add.u32 %r7, %r7, 1;
  setp.eq.u32 %p5, %r7, 3;
  @%p5 mov.u32 %r7, 0;
  @%p5 add.u32 %r8, %r8, 1;
  bra PLOOP;
CONSUMER:
  and.b32 %r20, %r1, 31;
  shl.b32 %r21, %r20, 4;
  cvt.u64.u32 %rd3, %r21;
  ld.param.u64 %rd1, [out];
  mov.u32 %r6, 0;
  mov.u32 %r7, 0;
  mov.u32 %r8, 0;
CLOOP:
  setp.ge.u32 %p3, %r6, %r5;
  @%p3 bra DONE;
  shl.b32 %r9, %r7, 3;
  add.u32 %r10, %r3, %r9;
  add.u32 %r11, %r2, %r9;
  and.b32 %r12, %r8, 1;
CWAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r11], %r12;   // CONSUMER_WAIT
  @!%p4 bra CWAIT;                                              // CONSUMER_WAIT
  shl.b32 %r13, %r7, 9;
  add.u32 %r14, %r4, %r13;
  add.u32 %r22, %r14, %r21;
  ld.shared.v4.u32 {%r23, %r24, %r25, %r26}, [%r22];
  mul.wide.u32 %rd2, %r6, 512;
  add.s64 %rd4, %rd1, %rd2;
  add.s64 %rd4, %rd4, %rd3;
  st.global.v4.u32 [%rd4], {%r23, %r24, %r25, %r26};
  mbarrier.arrive.shared::cta.b64 _, [%r10];
  add.u32 %r6, %r6, 1;
  add.u32 %r7, %r7, 1;
  setp.eq.u32 %p5, %r7, 3;
  @%p5 mov.u32 %r7, 0;
  @%p5 add.u32 %r8, %r8, 1;
  bra CLOOP;
DONE:
  ret;
}
"""


def ring(missing=None, empty_count=32):
    text = RING.replace("EMPTY_COUNT", str(empty_count))
    if missing:
        text = "\n".join(s for s in text.splitlines() if f"{missing.upper()}_WAIT" not in s)
    return text


def run(text, tiles=12, policy="in_order", seed=0, **kw):
    m = pa.Machine(smem_bytes=4096, policy=policy, seed=seed, **kw)
    a = np.arange(tiles * ROWS * COLS, dtype=np.float32).reshape(-1, COLS) + 1
    out = np.zeros_like(a)
    g, go = m.register(a), m.register(out)
    tm = pa.TensorMap.tiled("f32", g.address, [COLS, a.shape[0]], [COLS * 4], [COLS, ROWS])
    ptx.Kernel(text).launch(m, block=64, params={"tmap": tm, "out": go, "tiles": tiles}, seed=seed)
    return m, a, out


def test_the_ring_is_valid_ptx():
    assert ptx.check(ring()) == []
    assert ptx.check(ring("consumer")) == []


POLICIES = ["immediate", "in_order", "reverse", "random", "adversarial"]


@pytest.mark.parametrize("policy", POLICIES)
def test_ring_is_exact_and_silent_in_every_policy_and_seed(policy):
    for seed in range(12):
        m, a, out = run(ring(), policy=policy, seed=seed)
        np.testing.assert_array_equal(out, a)
        assert m.races == [] and m.hazards == [] and m.pending == 0


@pytest.mark.parametrize("missing", ["consumer", "producer"])
@pytest.mark.parametrize("policy", ["immediate", "in_order", "random", "adversarial"])
def test_a_deleted_wait_is_reported_in_every_seed(policy, missing):
    rules = set()
    for seed in range(10):
        with pytest.raises(pa.Hazard) as e:
            run(ring(missing), policy=policy, seed=seed)
        rules.add(e.value.rule)
        assert "PTX line" in str(e.value)
    # the memory model's rules name the bug (an mbarrier rule may catch a schedule first)
    assert rules & {"data-race", "destination-read"}, rules


def test_a_wait_that_can_never_complete_is_the_deadlock_naming_its_line():
    # empty expects 64 arrivals; the 32 consumer lanes give 32: the producer's second pass
    # over the stages waits forever, and the consumer then waits for tile 3 forever
    text = ring(empty_count=64)
    lines = text.splitlines()
    pwait = 1 + next(i for i, s in enumerate(lines) if "try_wait" in s and "PRODUCER" in s)
    cwait = 1 + next(i for i, s in enumerate(lines) if "try_wait" in s and "CONSUMER" in s)
    with pytest.raises(pa.Deadlock) as e:
        run(text, policy="random", seed=3)
    msg = str(e.value)
    assert f"CTA 0 thread 0 waits on an mbarrier at line {pwait}" in msg, msg
    assert f"CTA 0 threads 32-63 wait on an mbarrier at line {cwait}" in msg, msg


def test_a_barrier_no_thread_can_pass_is_the_deadlock():
    # thread 0 skips the bar.sync the others wait at: they can never be released
    text = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry stuck()
{
  .reg .b32 %r1;
  .reg .pred %p1;
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
@%p1 bra SPIN;
  bar.sync 1, 64;
  ret;
SPIN:
  bar.sync 2, 32;
  ret;
}
"""
    with pytest.raises(pa.Deadlock, match=r"CTA 0 thread 0 waits at a barrier at line 14 \(bar.sync\); "
                                          r"CTA 0 threads 1-63 wait at a barrier at line 11"):
        ptx.Kernel(text).launch(pa.Machine(), block=64)
