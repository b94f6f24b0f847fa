"""red.async (PTX ISA 9.7.13.6, sm_90, PTX 8.1): a reduction into another CTA's shared memory that
completes on that CTA's mbarrier, run through the same queue as st.async. The element arithmetic is
checked against tests/reduce_reference.py (written apart from csrc/core/reduce.c); the completion
against the ISA: "complete-tx ... with completeCount equal to the amount of data" of the type."""
import numpy as np
import pytest

import ptx_forms as pf
import ptxasync as pa
from ptxasync import ptx
from reduce_reference import reduce_ref

N = 64
# the ISA's table (and .add.s64): .inc/.dec .u32; .min/.max .u32/.s32; .and/.or/.xor .b32; .add .u32/.s32/.u64
FORMS = [("inc", "u32"), ("dec", "u32"), ("min", "u32"), ("max", "u32"), ("min", "s32"), ("max", "s32"),
         ("and", "b32"), ("or", "b32"), ("xor", "b32"), ("add", "u32"), ("add", "s32"), ("add", "u64"),
         ("add", "s64")]   # ptxas 13.0/13.5 take .add.s64 too: REDAS.ADD.64, the instruction of .add.u64
RED = "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes"


def kernel(op, typ, wait=True, expect=None):
    """CTA 1 fills dst[] from pd and expects N elements' bytes on its mbarrier; CTA 0's thread 0
    reduces b[i] into CTA 1's dst[i]; CTA 1 waits (phase 0) and writes dst[] to po."""
    w = 64 if typ in ("u64", "s64") else 32
    r = "%rd" if w == 64 else "%r"
    expect = N * w // 8 if expect is None else expect
    wait_lines = f"""WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [mb], 0;
    @!%p3 bra WAIT;""" if wait else ""
    return f""".version 8.1
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 po, .param .u64 pd, .param .u64 pb)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<24>;
    .reg .b64 %rd<24>;
    .shared .align 8 .b64 mb;
    .shared .align 8 .b{w} dst[{N}];
    mov.u32 %r1, %cluster_ctarank;
    mov.u32 %r2, %tid.x;
    setp.ne.u32 %p1, %r2, 0;
    @%p1 bra SYNC;
    setp.ne.u32 %p2, %r1, 1;
    @%p2 bra SYNC;
    ld.param.u64 %rd1, [pd];
    mov.u32 %r3, 0;
FILL:
    mul.wide.u32 %rd2, %r3, {w // 8};
    add.u64 %rd3, %rd1, %rd2;
    ld.global.b{w} {r}10, [%rd3];
    mov.u32 %r4, dst;
    cvt.u32.u64 %r5, %rd2;
    add.u32 %r4, %r4, %r5;
    st.shared.b{w} [%r4], {r}10;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p3, %r3, {N};
    @%p3 bra FILL;
    mbarrier.init.shared::cta.b64 [mb], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [mb], {expect};
SYNC:
    barrier.cluster.arrive;
    barrier.cluster.wait;
    @%p1 bra DONE;
    setp.ne.u32 %p2, %r1, 0;
    @%p2 bra TAIL;
    ld.param.u64 %rd1, [pb];
    mov.u32 %r6, dst;
    mapa.shared::cluster.u32 %r6, %r6, 1;
    mov.u32 %r7, mb;
    mapa.shared::cluster.u32 %r7, %r7, 1;
    mov.u32 %r3, 0;
ISSUE:
    mul.wide.u32 %rd2, %r3, {w // 8};
    add.u64 %rd3, %rd1, %rd2;
    ld.global.b{w} {r}11, [%rd3];
    cvt.u32.u64 %r5, %rd2;
    add.u32 %r8, %r6, %r5;
    {RED}.{op}.{typ} [%r8], {r}11, [%r7];
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p3, %r3, {N};
    @%p3 bra ISSUE;
    bra DONE;
TAIL:
{wait_lines}
    ld.param.u64 %rd1, [po];
    mov.u32 %r3, 0;
OUT:
    mul.wide.u32 %rd2, %r3, {w // 8};
    mov.u32 %r4, dst;
    cvt.u32.u64 %r5, %rd2;
    add.u32 %r4, %r4, %r5;
    ld.shared.b{w} {r}12, [%r4];
    add.u64 %rd3, %rd1, %rd2;
    st.global.b{w} [%rd3], {r}12;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p3, %r3, {N};
    @%p3 bra OUT;
DONE:
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
}}
"""


def operands(typ, seed):
    rng = np.random.default_rng(seed)
    dt = np.uint64 if typ in ("u64", "s64") else np.uint32
    bits = 64 if typ in ("u64", "s64") else 32
    special = np.array([0, 1, 2, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, 5, 6], dtype=dt)
    d = np.concatenate([special, special[::-1], rng.integers(0, 1 << bits, N - 16, dtype=dt)])
    b = np.concatenate([special[::-1], special, rng.integers(0, 1 << bits, N - 16, dtype=dt)])
    b[16:32] = d[16:32] % 7           # small limits for .inc/.dec: wrap and saturate both taken
    return d, b


@pytest.mark.parametrize("op,typ", FORMS)
@pytest.mark.parametrize("policy", ["immediate", "adversarial"])
def test_red_async_reduces_into_the_other_ctas_shared_memory(op, typ, policy):
    d, b = operands(typ, hash((op, typ)) & 0xFFFF)
    out = np.zeros_like(d)
    m = pa.Machine(ctas=2, policy=policy)
    ptx.Kernel(kernel(op, typ)).launch(m, grid=(2, 1, 1), block=(32, 1, 1), cluster=(2, 1, 1),
                                       params={"po": m.register(out), "pd": m.register(d.copy()),
                                               "pb": m.register(b)})
    ref_type = "u64" if typ == "s64" else typ      # a two's-complement add: the same bits
    want = reduce_ref(op, ref_type, d.copy(), b)
    assert out.tolist() == want.tolist()


def test_the_phase_waits_for_every_reduction_byte():
    # expecting one element's bytes more than the reductions credit: the phase never completes
    with pytest.raises(pa.Deadlock):
        m = pa.Machine(ctas=2)
        d, b = operands("u32", 1)
        ptx.Kernel(kernel("add", "u32", expect=N * 4 + 4)).launch(
            m, grid=(2, 1, 1), block=(32, 1, 1), cluster=(2, 1, 1),
            params={"po": m.register(np.zeros(N, np.uint32)), "pd": m.register(d), "pb": m.register(b)})


def test_reading_the_destination_before_the_wait_is_a_hazard():
    # CTA 1 reads dst[] without waiting on the mbarrier: a pending red.async's destination
    m = pa.Machine(ctas=2, checks=True)
    d, b = operands("u32", 2)
    with pytest.raises(pa.Hazard, match="red.async"):
        ptx.Kernel(kernel("add", "u32", wait=False)).launch(
            m, grid=(2, 1, 1), block=(32, 1, 1), cluster=(2, 1, 1),
            params={"po": m.register(np.zeros(N, np.uint32)), "pd": m.register(d), "pb": m.register(b)})


@pytest.mark.parametrize("form,ok", [
    (f"{RED}.add.u32 [%r1], %r2, [%r3];", True),
    (f"{RED}.inc.u32 [%r1], 5, [%r3];", True),
    (f"{RED}.add.u64 [%r1], %rd2, [%r3];", True),
    (f"{RED}.add.s64 [%r1], %rd2, [%r3];", True),         # not in the Syntax block; ptxas takes it
    (f"{RED}.add.u32 [%r1], %rd2, [%r3];", False),        # a register wider than the type
    (f"{RED}.add.u64 [%r1], %r2, [%r3];", False),         # ... narrower
    (f"{RED}.add.u32 [%r1], 1.5, [%r3];", False),         # a floating-point literal
    (f"{RED}.max.u64 [%r1], %rd2, [%r3];", False),
    (f"{RED}.min.b32 [%r1], %r2, [%r3];", False),
    (f"{RED}.inc.s32 [%r1], %r2, [%r3];", False),
    (f"{RED}.add.f32 [%r1], %r2, [%r3];", False),
    ("red.async.relaxed.cluster.shared::cluster.add.u32 [%r1], %r2, [%r3];", False),   # no completion
])
def test_the_checker_takes_what_ptxas_takes(form, ok):
    # ptxas 13.0's verdicts on sm_90a, PTX 8.1 (13.5 gives the same)
    text = pf.module(form, "sm_90a", "8.1")
    assert ptx.accepts(text, ptxas="13.0") == ok, ptx.check(text)
    if ok:
        assert not [d for d in ptx.check(text) if "not modelled" in d.message]
