"""Random sequences of the asynchronous-copy operations with random (often bad)
operands, under every policy: every call either works or raises a ptxasync
error / ValueError / TypeError / OverflowError naming what is wrong; the queue
stays consistent (run() drains it, a refused call queues nothing)."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxasync as p
from ptxasync import mapa

SMEM = 4096
ALLOWED = (p.PtxAsyncError, ValueError, TypeError, OverflowError)

addr = st.one_of(st.integers(0, SMEM + 32), st.integers(0, 3).map(lambda r: r << 24),
                 st.builds(lambda r, o: mapa(o, r), st.integers(0, 3), st.integers(0, SMEM + 32)),
                 st.integers(-2, 2**33))
gaddr = st.one_of(st.integers(0x10000 - 32, 0x10000 + 1100), st.integers(-1, 2**65))
size = st.one_of(st.sampled_from([0, 4, 8, 16, 32, 48, 64, 256]), st.integers(-1, 5000))
small = st.integers(-1, 5)

ops = st.one_of(
    st.tuples(st.just("cp_async"), addr, gaddr, st.sampled_from([4, 8, 16, 3, 32]),
              st.sampled_from(["ca", "cg"]), st.one_of(st.none(), st.integers(-1, 17)), small, small),
    st.tuples(st.just("cp_commit"), small, small),
    st.tuples(st.just("cp_wait"), small, small, small),
    st.tuples(st.just("cp_wait_all"), small, small),
    st.tuples(st.just("cp_arrive"), addr, small, small, st.booleans()),
    st.tuples(st.just("bulk"), addr, gaddr, size, addr, small,
              st.sampled_from([("shared::cta", "global"), ("shared::cluster", "global"),
                               ("shared::cluster", "shared::cta"), ("global", "shared::cta")]),
              st.one_of(st.none(), st.integers(-1, 0x1FFFF)), st.one_of(st.none(), st.integers(0, 0xFFFF))),
    st.tuples(st.just("bulk_commit"), small, small),
    st.tuples(st.just("bulk_wait"), small, small, small, st.booleans()),
    st.tuples(st.just("st_async"), addr, addr, st.sampled_from(["u32", "f64", "b16", "s64"]),
              st.sampled_from([1, [1, 2], [1, 2, 3, 4]]), small),
    st.tuples(st.just("st_bulk"), addr, size, small),
    st.tuples(st.just("prefetch"), gaddr, size),
    st.tuples(st.just("step")),
    st.tuples(st.just("try_wait"), small, st.integers(0, 1)),
)


def _apply(m, g, op):
    k = op[0]
    if k == "cp_async":
        _, dst, src, n, cache, src_size, cta, thread = op
        m.cp_async(dst, src, n, cache=cache, src_size=src_size, cta=cta, thread=thread)
    elif k == "cp_commit":
        m.cp_async_commit_group(cta=op[1], thread=op[2])
    elif k == "cp_wait":
        m.cp_async_wait_group(op[3], cta=op[1], thread=op[2])
    elif k == "cp_wait_all":
        m.cp_async_wait_all(cta=op[1], thread=op[2])
    elif k == "cp_arrive":
        _, bar, cta, thread, noinc = op
        m.cp_async_mbarrier_arrive(bar, cta=cta, thread=thread, noinc=noinc)
    elif k == "bulk":
        _, dst, src, n, bar, cta, (ds, ss), mask, bmask = op
        if ss == "shared::cta":
            src = src & 0xFFF
        if ds == "global":
            dst, bar = g.address + (dst & 0x3FF), None
        m.cp_async_bulk(dst, src, n, bar, cta=cta, dst_space=ds, src_space=ss, cta_mask=mask, byte_mask=bmask)
    elif k == "bulk_commit":
        m.cp_async_bulk_commit_group(cta=op[1], thread=op[2])
    elif k == "bulk_wait":
        m.cp_async_bulk_wait_group(op[3], cta=op[1], thread=op[2], read=op[4])
    elif k == "st_async":
        _, dst, bar, t, v, cta = op
        m.st_async(dst, v, bar, type=t, cta=cta)
    elif k == "st_bulk":
        m.st_bulk(op[1], op[2], cta=op[3])
    elif k == "prefetch":
        m.cp_async_bulk_prefetch_l2(op[1], op[2])
    elif k == "step":
        m.step()
    elif k == "try_wait":
        m.cta(op[1] % 2).mbarrier(SMEM - 8).try_wait(op[2])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prog=st.lists(ops, max_size=25), policy=st.sampled_from(["immediate", "in_order", "reverse", "random"]),
       target=st.sampled_from(["sm_90a", "sm_100a"]), seed=st.integers(0, 1000))
def test_random_async_programs_never_crash(prog, policy, target, seed):
    m = p.Machine(ctas=2, smem_bytes=SMEM, policy=policy, seed=seed, target=target)
    g = m.register(np.arange(1024, dtype=np.uint8), address=0x10000)
    for r in range(2):
        bar = m.cta(r).mbarrier(SMEM - 8).init(1000)
        bar.expect_tx(1 << 19)      # room for the credits of many copies
    for op in prog:
        before = m.pending
        try:
            _apply(m, g, op)
        except ALLOWED as e:
            assert str(e)
            if op[0] not in ("step", "try_wait", "cp_wait", "cp_wait_all", "bulk_wait"):
                assert m.pending == before, f"a refused {op[0]} changed the queue"
    try:
        m.run()
    except p.PtxAsyncError:
        return   # a completion that found undefined behaviour (e.g. tx out of range) reports it
    assert m.pending == 0
