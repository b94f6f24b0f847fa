"""The fences restricted to one state space (PTX ISA, membar / fence, PTX 8.6, sm_90):
"When .sync_restrict is .sync_restrict::shared::cta, .sem must be .release, and the effect of the
fence only applies to operations performed on objects in .shared::cta state space. Likewise, when
.sync_restrict is .sync_restrict::shared::cluster, .sem must be .acquire, and the effect of the
fence only applies to operations performed on objects in .shared::cluster state space."

A cluster of two CTAs, one thread each: CTA 0 stores to its shared memory and to global memory,
fences, and arrives on the cluster barrier with .relaxed (which releases only what a fence
released); CTA 1 waits, then reads one of the two. The restricted release orders the shared store
and not the global one: the race checker says so.
"""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

KERNEL = """.version 8.6
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pg, .param .u64 pout)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 16 .b32 s[4];
    mov.u32 %r0, %cluster_ctarank;
    ld.param.u64 %rd1, [pg];
    ld.param.u64 %rd2, [pout];
    mov.u32 %r1, s;
    setp.ne.u32 %p1, %r0, 0;
@%p1 bra READER;
    mov.b32 %r2, 7;
    st.shared.b32 [%r1], %r2;
    mov.b32 %r2, 9;
    st.global.b32 [%rd1], %r2;
    @FENCE@
    barrier.cluster.arrive.relaxed;
    barrier.cluster.wait;
    ret;
READER:
    barrier.cluster.arrive.relaxed;
    barrier.cluster.wait;
    @READ@
    st.global.b32 [%rd2], %r3;
    ret;
}
"""
READ_SHARED = "mapa.shared::cluster.u32 %r4, %r1, 0;\n    ld.shared::cluster.b32 %r3, [%r4];"
READ_GLOBAL = "ld.global.b32 %r3, [%rd1];"
RESTRICTED = "fence.release.sync_restrict::shared::cta.cluster;"


def run(fence, read):
    text = KERNEL.replace("@FENCE@", fence).replace("@READ@", read)
    assert not [d for d in ptx.check(text) if d.severity != "info"]
    m = pa.Machine(ctas=2)
    g = np.zeros(1, np.uint32)
    out = np.zeros(1, np.uint32)
    ptx.Kernel(text).launch(m, grid=2, block=1, cluster=2, params={"pg": m.register(g), "pout": m.register(out)})
    return int(out[0])


def test_the_restricted_release_orders_its_ctas_shared_memory():
    assert run(RESTRICTED, READ_SHARED) == 7


def test_the_restricted_release_does_not_order_global_memory():
    with pytest.raises(pa.Hazard, match=r"\[data-race\].*ld.global.*st.global"):
        run(RESTRICTED, READ_GLOBAL)


@pytest.mark.parametrize("read", [READ_SHARED, READ_GLOBAL], ids=["shared", "global"])
def test_a_full_release_fence_orders_both(read):
    assert run("fence.acq_rel.cluster;", read) in (7, 9)


@pytest.mark.parametrize("read", [READ_SHARED, READ_GLOBAL], ids=["shared", "global"])
def test_without_a_fence_the_relaxed_arrive_orders_neither(read):
    with pytest.raises(pa.Hazard, match="data-race"):
        run("", read)


def test_the_acquire_form_runs():
    # the model's waits acquire (barrier.cluster.wait; mbarrier waits, .relaxed included): the
    # restricted acquire adds no order, and the kernel runs
    assert run(RESTRICTED + "\n    fence.acquire.sync_restrict::shared::cluster.cluster;", READ_SHARED) == 7


PROXY = """.version 8.6
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pg)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 16 .b8 s[16];
    ld.param.u64 %rd1, [pg];
    mov.u32 %r1, s;
    mov.b32 %r2, 5;
    WRITE
    FENCE
    cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], 16;
    cp.async.bulk.commit_group;
    cp.async.bulk.wait_group 0;
    ret;
}
"""


def run_proxy(write, fence):
    text = PROXY.replace("WRITE", write).replace("FENCE", fence)
    assert not [d for d in ptx.check(text) if d.severity != "info"]
    m = pa.Machine()
    g = np.zeros(4, np.uint32)
    ptx.Kernel(text).launch(m, grid=1, block=1, params={"pg": m.register(g)})
    return g


def test_the_restricted_proxy_fence_orders_shared_memory_for_the_async_proxy():
    # st.shared, then the bulk copy reads it in the async proxy
    g = run_proxy("st.shared.b32 [%r1], %r2;", "fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;")
    assert g[0] == 5


def test_the_restricted_proxy_fence_does_not_order_global_memory():
    # st.global, then the bulk copy writes those bytes in the async proxy: the shared-restricted
    # fence is not the global one
    with pytest.raises(pa.Hazard, match="proxy-fence-missing"):
        run_proxy("st.global.b32 [%rd1], %r2;",
                  "fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;")
    run_proxy("st.global.b32 [%rd1], %r2;", "fence.proxy.async.global;")
