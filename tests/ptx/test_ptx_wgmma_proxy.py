"""wgmma.mma_async reads its shared-memory operands in the async proxy (PTX ISA, wgmma.mma_async:
"The shared memory accesses by wgmma.mma_async are performed in the async proxy"; memory
consistency model, proxies: a generic-proxy write is made visible to the async proxy by
fence.proxy.async). A st.shared of A or B followed by the wgmma without the fence is
proxy-fence-missing, reported with both lines; with the fence it is silent; an operand a TMA load
wrote (async proxy, completion observed on its mbarrier) needs no fence.
"""
import pytest

import ptxasync as pa
from test_ptx_wgmma_pending import D, MMA8, kernel, run, store

# thread 0 writes a word of B (sB), everyone meets at bar.sync, then the wgmma reads it
ST = "mov.u32 %t1, sB; mov.b32 %t2, 0; setp.eq.u32 %p0, %t0, 0; @%p0 st.shared.b32 [%t1], %t2;"
WAIT = ["wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;", store(D)]


def test_a_generic_write_then_wgmma_without_the_proxy_fence_names_both_lines():
    body = [ST, "bar.sync 0;", MMA8 % D] + WAIT
    with pytest.raises(pa.Hazard) as e:
        run(body)
    _, line = kernel(body)
    msg = str(e.value)
    assert e.value.rule == "proxy-fence-missing"
    assert "the wgmma.mma_async at PTX line %d" % line[MMA8 % D] in msg
    assert "st.shared at PTX line %d" % line[ST] in msg
    assert "in the generic proxy" in msg and "fence.proxy.async" in msg


@pytest.mark.parametrize("fence", ["fence.proxy.async.shared::cta;", "fence.proxy.async;"])
def test_the_proxy_fence_before_the_barrier_orders_it(fence):
    m, out, _ = run([ST, fence, "bar.sync 0;", MMA8 % D] + WAIT)
    assert (out == 1).all()   # B is zero: D = 0 * 0 + D


def test_the_global_proxy_fence_does_not_order_shared_memory():
    with pytest.raises(pa.Hazard, match="proxy-fence-missing"):
        run([ST, "fence.proxy.async.global;", "bar.sync 0;", MMA8 % D] + WAIT)


def test_a_fence_by_another_thread_does_not_order_the_write():
    # the writer (thread 0) does not fence; thread 1's fence orders only thread 1's writes
    other = "setp.eq.u32 %p0, %t0, 1; @%p0 fence.proxy.async.shared::cta;"
    with pytest.raises(pa.Hazard, match="proxy-fence-missing"):
        run([ST, other, "bar.sync 0;", MMA8 % D] + WAIT)


def test_a_write_the_barrier_does_not_order_is_a_data_race_whatever_the_fence():
    # thread 33 writes and fences, but nothing orders its write before the wgmma's issue
    st33 = "mov.u32 %t1, sB; mov.b32 %t2, 0; setp.eq.u32 %p0, %t0, 33; @%p0 st.shared.b32 [%t1], %t2;"
    with pytest.raises(pa.Hazard, match="data-race"):
        run([st33, "fence.proxy.async.shared::cta;", MMA8 % D] + WAIT)
