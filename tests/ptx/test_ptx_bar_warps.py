"""bar / barrier count warps, not threads (PTX ISA 9.7.13.1, bar / barrier, the semantics of
sm_70 and up, every target the model runs):

  R1 "barrier{.cta} instruction causes executing thread to wait for all non-exited threads from
     its warp and marks warps' arrival at barrier."
  R2 "barrier{.cta}.red and barrier{.cta}.sync instructions causes executing thread to wait for
     non-exited threads of all other warps participating in the barrier to arrive.
     barrier{.cta}.arrive does not cause executing thread to wait for threads of other
     participating warps."
  R3 "Operand b specifies the number of threads participating in the barrier ... When specifying a
     thread count, the value must be a multiple of the warp size."
  R4 "Different warps may execute different forms of the barrier{.cta} instruction using the same
     barrier name and thread count. One example mixes barrier{.cta}.sync and barrier{.cta}.arrive
     to implement producer/consumer models." (the ISA's producer / consumer example)

So a barrier of b threads completes when b / 32 warps have arrived, a warp arriving when all its
non-exited threads have executed the instruction: a warp with exited lanes counts whole, and lanes
of several warps adding up to b threads do not complete it.
"""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

HEAD = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pout)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 s[256];
    mov.u32 %r0, %tid.x;
    and.b32 %r1, %r0, 31;
    shr.u32 %r2, %r0, 5;
    ld.param.u64 %rd1, [pout];
    mul.wide.u32 %rd2, %r0, 4;
    add.s64 %rd1, %rd1, %rd2;
    mov.u32 %r3, s;
    shl.b32 %r4, %r0, 2;
    add.u32 %r5, %r3, %r4;
"""


def launch(body, block, **kw):
    text = HEAD + body + "}\n"
    errs = [d for d in ptx.check(text) if d.severity == "error"]
    assert not errs, errs
    m = pa.Machine(**kw)
    out = np.zeros(block, np.uint32)
    ptx.Kernel(text).launch(m, grid=1, block=block, params={"pout": m.register(out)})
    return out, text


def test_a_warp_with_exited_lanes_counts_whole():
    # R1, R3: lanes 16-31 of warp 0 exit; the 48 threads left complete bar.sync 1, 64 (two warps),
    # and each then reads what a thread of the other warp stored before it
    out, _ = launch("""
    setp.ge.u32 %p1, %r1, 16;
    setp.eq.u32 %p2, %r2, 0;
    and.pred %p1, %p1, %p2;
@%p1 ret;
    st.shared.b32 [%r5], %r0;
    bar.sync 1, 64;
    xor.b32 %r6, %r4, 128;
    add.u32 %r6, %r3, %r6;
    ld.shared.b32 %r7, [%r6];
    st.global.b32 [%rd1], %r7;
    ret;
""", 64)
    assert (out[:16] == np.arange(32, 48)).all() and (out[32:48] == np.arange(16)).all()
    assert (out[48:] == 0).all()   # their partners exited before storing


def test_a_partial_last_warp_is_a_warp():
    # R1, R3: a CTA of 48 threads has two warps, the second of 16 lanes: bar.sync 1, 64 completes
    out, _ = launch("""
    st.shared.b32 [%r5], %r0;
    bar.sync 1, 64;
    xor.b32 %r6, %r4, 128;
    add.u32 %r6, %r3, %r6;
    ld.shared.b32 %r7, [%r6];
    st.global.b32 [%rd1], %r7;
    ret;
""", 48)
    assert (out[:16] == np.arange(32, 48)).all() and (out[32:] == np.arange(16)).all()


def test_lanes_of_several_warps_adding_up_to_the_count_do_not_complete_it():
    # R1: lanes 0-15 of each of four warps at bar.sync 1, 64 (64 threads), lanes 16-31 at
    # bar.sync 2, 64: no warp has all its threads at either, so neither barrier completes
    with pytest.raises(pa.Deadlock, match="wait at a barrier"):
        launch("""
    setp.lt.u32 %p1, %r1, 16;
@%p1 bra LOW;
    bar.sync 2, 64;
    ret;
LOW:
    bar.sync 1, 64;
    ret;
""", 128)


def test_bar_arrive_waits_for_its_warp():
    # R1 holds for .arrive too: lanes 0-15 at bar.arrive 1, 32 wait there for lanes 16-31, which
    # wait at bar.sync 2, 32 for them: neither barrier can complete, and lanes 0-15 have not gone on
    body = """
    setp.lt.u32 %p1, %r1, 16;
@%p1 bra LOW;
    bar.sync 2, 32;
    ret;
LOW:
    bar.arrive 1, 32;
    ret;
"""
    arrive = (HEAD + body).splitlines().index("    bar.arrive 1, 32;") + 1
    with pytest.raises(pa.Deadlock, match=f"CTA 0 threads 0-15 wait at a barrier at line {arrive} "):
        launch(body, 32)


def test_one_warp_arrival_from_two_forms():
    # R1, R4: lanes 0-15 of warp 0 bar.arrive 1, 64 and lanes 16-31 bar.sync 1, 64: together the
    # warp's arrival; with warp 1's bar.sync the barrier completes and warp 1 reads warp 0's stores
    out, _ = launch("""
    st.shared.b32 [%r5], %r0;
    setp.eq.u32 %p2, %r2, 1;
@%p2 bra CONSUMER;
    setp.lt.u32 %p1, %r1, 16;
@%p1 bar.arrive 1, 64;
@!%p1 bar.sync 1, 64;
    ret;
CONSUMER:
    bar.sync 1, 64;
    sub.u32 %r6, %r5, 128;
    ld.shared.b32 %r7, [%r6];
    st.global.b32 [%rd1], %r7;
    ret;
""", 64)
    assert (out[32:] == np.arange(32)).all()


PRODUCER_CONSUMER = """
    setp.ge.u32 %p3, %r2, 2;
    mov.u32 %r10, 0;
    mov.u32 %r11, 0;
@%p3 bra CONSUMER;
PRODUCE:
    add.u32 %r12, %r10, %r0;
    st.shared.b32 [%r5], %r12;
    bar.arrive 0, 128;
    bar.sync 1, 128;
    add.u32 %r10, %r10, 1000;
    setp.lt.u32 %p1, %r10, 4000;
@%p1 bra PRODUCE;
    ret;
CONSUMER:
    bar.sync 0, 128;
    sub.u32 %r6, %r5, 256;
    ld.shared.b32 %r7, [%r6];
    add.u32 %r11, %r11, %r7;
    BAR1;
    add.u32 %r10, %r10, 1000;
    setp.lt.u32 %p1, %r10, 4000;
@%p1 bra CONSUMER;
    st.global.b32 [%rd1], %r11;
    ret;
"""


@pytest.mark.parametrize("seed", range(4))
def test_producer_and_consumer_warps_share_counted_barriers(seed):
    # R2, R4, the ISA's example: warps 0-1 store a value and bar.arrive 0, 128, then wait on
    # bar.sync 1, 128 for the slot to be read; warps 2-3 bar.sync 0, 128, read, bar.arrive 1, 128.
    # Four rounds: each consumer sums its producer's values, and nothing races.
    out, _ = launch(PRODUCER_CONSUMER.replace("BAR1", "bar.arrive 1, 128"), 128, seed=seed)
    assert (out[64:] == 4 * np.arange(64) + 6000).all()


def test_producer_and_consumer_without_the_consumers_arrive_is_a_race():
    # the same ring with the consumers' bar.arrive 1 replaced by nothing: the producer never
    # passes bar.sync 1 (a deadlock) -- and with bar.arrive on barrier 2 (no one waits there), the
    # producer's next store is not ordered after the consumer's read
    with pytest.raises(pa.Hazard):
        launch(PRODUCER_CONSUMER.replace("BAR1", "bar.arrive 2, 64"), 128)


ARRIVE_ORDER = """
    setp.eq.u32 %p2, %r2, 1;
@%p2 bra SYNC;
    st.shared.b32 [%r5], %r0;
    bar.arrive 0, 64;
    AFTER_ARRIVE;
    ret;
SYNC:
    BEFORE_SYNC;
    bar.sync 0, 64;
    sub.u32 %r6, %r5, 128;
    AFTER_SYNC;
    ret;
"""


@pytest.mark.parametrize("seed", range(3))
def test_bar_arrive_releases_what_came_before_it(seed):
    # R2 and "The barrier{.cta}.sync or barrier{.cta}.red or barrier{.cta}.arrive instruction
    # guarantees that when the barrier completes, prior memory accesses requested by this thread
    # are performed relative to all threads participating in the barrier"
    body = (ARRIVE_ORDER.replace("AFTER_ARRIVE;", "").replace("BEFORE_SYNC;", "")
            .replace("AFTER_SYNC;", "ld.shared.b32 %r7, [%r6];\n    st.global.b32 [%rd1], %r7;"))
    out, _ = launch(body, 64, seed=seed)
    assert (out[32:] == np.arange(32)).all()


@pytest.mark.parametrize("seed", range(3))
def test_a_store_after_bar_arrive_is_not_released(seed):
    # what the arriving thread does after bar.arrive is not "prior": a read of it after the
    # bar.sync races, however the threads are scheduled
    body = (ARRIVE_ORDER.replace("AFTER_ARRIVE;", "st.shared.b32 [%r5+512], %r0;").replace("BEFORE_SYNC;", "")
            .replace("AFTER_SYNC;", "ld.shared.b32 %r7, [%r6+512];"))
    with pytest.raises(pa.Hazard, match="data-race"):
        launch(body, 64, seed=seed)


@pytest.mark.parametrize("seed", range(3))
def test_bar_arrive_acquires_nothing(seed):
    # .arrive "does not cause executing thread to wait for threads of other participating warps":
    # what those did before their bar.sync is not ordered before the arriving thread's next access
    body = (ARRIVE_ORDER.replace("AFTER_ARRIVE;", "ld.shared.b32 %r7, [%r5+512];")
            .replace("BEFORE_SYNC;", "st.shared.b32 [%r5+384], %r0;").replace("AFTER_SYNC;", ""))
    with pytest.raises(pa.Hazard, match="data-race"):
        launch(body, 64, seed=seed)
