"""wgmma.mma_async is asynchronous: its registers and shared memory belong to it until a
wgmma.wait_group retires its group (csrc/core/ptx/exec/wgpend.c, docs/hazards.md).

PTX ISA, wgmma.wait_group: "Accessing the accumulator register or the input register containing
the fragments of matrix A of a wgmma.mma_async instruction without first performing a
wgmma.wait_group instruction that waits on a wgmma-group including that wgmma.mma_async
instruction is undefined behavior." wgmma.fence: the fence is needed "between a register access
by a thread in the warpgroup and any wgmma.mma_async instruction that accesses the same
registers ... except when these are accumulator register accesses across multiple
wgmma.mma_async instructions of the same shape", where "an ordering guarantee is provided by
default". The model computes D at issue (the values are the H200's, tests/ptx/test_ptx_mma.py);
what it adds here is the report, with the wgmma's line and the access's.
"""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

# A 64x16 and B 8x16 f16 in shared memory, K-major without swizzle: LBO 128, SBO 256 bytes
DESC = (128 >> 4) << 16 | (256 >> 4) << 32
MMA8 = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%s}, %%q4, %%q5, %%p1, 1, 1, 0, 0;"
MMA16 = "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%s}, %%q4, %%q5, %%p1, 1, 1, 0, 0;"
D = "%d0,%d1,%d2,%d3"
E = "%e0,%e1,%e2,%e3"


def kernel(body):
    """128 threads; %q4 / %q5 the descriptors of sA / sB; po gets 4 floats a thread of `out`."""
    head = [".version 8.7", ".target sm_90a", ".address_size 64",
            ".visible .entry k(.param .u64 po)", "{",
            ".reg .pred %p<2>; .reg .b32 %t<8>; .reg .b64 %q<8>; .reg .f32 %d<4>; .reg .f32 %e<4>;",
            ".shared .align 1024 .b8 sA[2048]; .shared .align 1024 .b8 sB[256];",
            "mov.u32 %t0, %tid.x;"]
    for reg, sym in (("%q4", "sA"), ("%q5", "sB")):
        head.append("mov.u32 %%t6, %s; cvt.u64.u32 %s, %%t6; shr.u64 %s, %s, 4; and.b64 %s, %s, 16383; "
                    "or.b64 %s, %s, %d;" % (sym, reg, reg, reg, reg, reg, reg, reg, DESC))
    head += ["mov.f32 %%%s, 0f3F800000;" % r for r in ("d0", "d1", "d2", "d3", "e0", "e1", "e2", "e3")]
    head += ["setp.ne.b32 %p1, 1, 0;",
             "ld.param.u64 %q0, [po]; cvta.to.global.u64 %q0, %q0; mul.wide.u32 %q1, %t0, 16; "
             "add.u64 %q0, %q0, %q1;",
             "wgmma.fence.sync.aligned;"]
    lines = head + body + ["ret;", "}"]
    return "\n".join(lines) + "\n", {s: i + 1 for i, s in enumerate(lines)}


def run(body, **kw):
    text, line = kernel(body)
    m = pa.Machine(ctas=1, smem_bytes=4096, **kw)
    out = np.zeros(128 * 4, np.float32)
    ptx.Kernel(text).launch(m, grid=1, block=128, params={"po": m.register(out)})
    return m, out, line


def store(regs):
    return "st.global.v4.f32 [%%q0], {%s};" % regs


def test_read_after_wait_group_is_silent():
    m, out, _ = run([MMA8 % D, "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;",
                     store(D)])
    assert (out == 1).all()   # B is zero: D = 0 * 0 + D


def test_accumulator_read_before_its_wait_group_names_both_lines():
    body = [MMA8 % D, "wgmma.commit_group.sync.aligned;", store(D)]
    with pytest.raises(pa.Hazard) as e:
        run(body)
    _, line = kernel(body)
    msg = str(e.value)
    assert e.value.rule == "wgmma-pending"
    assert "wgmma.mma_async at PTX line %d" % line[MMA8 % D] in msg
    assert "[PTX line %d: st.global.v4.f32" % line[store(D)] in msg


def test_an_uncommitted_wgmma_is_not_retired_by_wait_group():
    # wait_group "waits on ... prior wgmma-groups": a wgmma after the last commit is in none
    with pytest.raises(pa.Hazard, match="wgmma-pending"):
        run([MMA8 % D, "wgmma.wait_group.sync.aligned 0;", store(D)])


def test_wait_group_1_retires_all_but_the_newest_group():
    two = [MMA8 % D, "wgmma.commit_group.sync.aligned;", MMA8 % E, "wgmma.commit_group.sync.aligned;",
           "wgmma.wait_group.sync.aligned 1;"]
    m, out, _ = run(two + [store(D)])            # D's group is retired
    assert (out == 1).all()
    with pytest.raises(pa.Hazard, match=r"wgmma-pending.*wgmma-group 2 "):
        run(two + [store(E)])                    # E's is the one still pending


def test_writing_an_accumulator_before_the_wait_is_reported():
    with pytest.raises(pa.Hazard, match="wgmma-pending"):
        run([MMA8 % D, "wgmma.commit_group.sync.aligned;", "mov.f32 %d2, 0f00000000;",
             "wgmma.wait_group.sync.aligned 0;"])


def test_same_shape_wgmmas_chained_on_one_accumulator_are_ordered():
    m, out, _ = run([MMA8 % D, MMA8 % D, "wgmma.commit_group.sync.aligned;", MMA8 % D,
                     "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;", store(D)])
    assert (out == 1).all()


def test_another_shape_on_pending_accumulators_is_reported():
    with pytest.raises(pa.Hazard, match="wgmma-pending.*accumulator register"):
        run([MMA8 % D, "wgmma.commit_group.sync.aligned;", MMA16 % (D + "," + E),
             "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;"])


def test_writing_the_shared_memory_a_pending_wgmma_reads_is_a_race():
    # B's bytes belong to the wgmma until its group is retired ("wgmma.commit_group and
    # wgmma.wait_group operations must be used to wait for the completion")
    st = "mov.u32 %t1, sB; mov.b32 %t2, 0; setp.eq.u32 %p0, %t0, 0; @%p0 st.shared.b32 [%t1], %t2;"
    body = [MMA8 % D, "wgmma.commit_group.sync.aligned;", st, "wgmma.wait_group.sync.aligned 0;"]
    with pytest.raises(pa.Hazard) as e:
        run(body)
    _, line = kernel(body)
    assert e.value.rule == "data-race"
    assert "wgmma.mma_async at PTX line %d" % line[MMA8 % D] in str(e.value)
    run([MMA8 % D, "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;", st])


def test_report_mode_reports_each_pending_wgmma_once():
    m, out, _ = run([MMA8 % D, "wgmma.commit_group.sync.aligned;", store(D), store(D)], hazards="report")
    assert [h.rule for h in m.hazards] == ["wgmma-pending"]


def test_not_kept_without_the_race_checker():
    m, out, _ = run([MMA8 % D, "wgmma.commit_group.sync.aligned;", store(D)], race_checks=False)
    assert (out == 1).all()
