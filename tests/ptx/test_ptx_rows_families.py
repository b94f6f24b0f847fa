"""The texture / surface, wmma, tcgen05 / clusterlaunchcontrol and remaining synchronisation
families are rows of the instruction table (tools/ptx_rows: texsurf, wmma, tcgen05, sync): a
valid form is accepted with the "valid but not modelled yet (why)" warning and Kernel() refuses
it with the same reason (text/notyet.c); a wrong qualifier, target or PTX version is an error, as
ptxas 13.0 gives one; a name no row has is an unknown instruction. ptxas's verdicts are checked on
the same sample where ptxas is installed (tools/rows_verdicts.py sweeps every qualifier choice)."""
import pytest

import ptx_forms as pf
from ptxasync import ptx

DECLS = ".global .texref tex1;\n.global .surfref surf1;\n"
REGS = ("\t.reg .pred %p<8>;\n\t.reg .b16 %h<8>;\n\t.reg .b32 %r<140>;\n\t.reg .b64 %rd<16>;\n"
        "\t.reg .f32 %f<40>;\n\t.reg .b128 %q<4>;\n")


def module(ins, target="sm_90a", version="8.7"):
    return (".version %s\n.target %s\n.address_size 64\n%s.visible .entry k()\n{\n%s\t%s\n\tret;\n}\n"
            % (version, target, DECLS, REGS, ins))


V8 = "{%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7}"
# (instruction, target, version, the not-yet reason's words): each ptxas 13.0 assembles
VALID = [
    ("tex.2d.v4.f32.f32 {%r0, %r1, %r2, %r3}, [tex1, {%f1, %f2}];", "sm_90a", "8.7", "texture"),
    ("tex.2d.v4.f32.f32 {%r0, %r1, %r2, %r3}, [%rd1, %rd2, {%f1, %f2}];", "sm_90a", "8.7", "texture"),
    ("tex.level.2d.v4.s32.f32 {%r0, %r1, %r2, %r3}, [tex1, {%f1, %f2}], %f3;", "sm_90a", "8.7", "texture"),
    ("tld4.r.2d.v4.f32.f32 {%r0, %r1, %r2, %r3}, [tex1, {%f1, %f2}];", "sm_90a", "8.7", "texture"),
    ("txq.width.b32 %r1, [tex1];", "sm_90a", "8.7", "texture"),
    ("istypep.texref %p1, %rd1;", "sm_90a", "8.7", "texture"),
    ("suld.b.2d.v4.b32.trap {%r0, %r1, %r2, %r3}, [surf1, {%r5, %r6}];", "sm_90a", "8.7", "surface"),
    ("sust.b.2d.v4.b32.trap [surf1, {%r5, %r6}], {%r0, %r1, %r2, %r3};", "sm_90a", "8.7", "surface"),
    ("sured.b.add.2d.u32.trap [surf1, {%r5, %r6}], %r1;", "sm_90a", "8.7", "surface"),
    ("suq.width.b32 %r1, [surf1];", "sm_90a", "8.7", "surface"),
    ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16 %s, [%%rd1], %%r9;" % V8, "sm_90a", "8.7", "wmma"),
    ("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 %s, %s, %s, %s;" % (V8, V8, V8, V8), "sm_90a", "8.7", "wmma"),
    ("wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%%rd1], %s, %%r9;" % V8, "sm_90a", "8.7", "wmma"),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;", "sm_100a", "8.7", "tcgen05"),
    ("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r3];", "sm_100a", "8.7", "tcgen05"),
    ("tcgen05.wait::ld.sync.aligned;", "sm_100a", "8.7", "tcgen05"),
    ("tcgen05.fence::before_thread_sync;", "sm_100a", "8.7", "tcgen05"),
    ("tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r3, %p1;", "sm_100a", "8.7", "tcgen05"),
    ("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r1], [%r2];",
     "sm_100a", "8.7", "cluster launch control"),
    ("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], %r2, [%r3];",
     "sm_90a", "8.7", "red.async"),
]
# each ptxas 13.0 refuses (its message in the comment)
INVALID = [
    # "Floating-point coordinates required"
    ("tex.cube.v4.f32.s32 {%r0, %r1, %r2, %r3}, [tex1, {%r1, %r2, %r3, %r4}];", "sm_90a", "8.7", None),
    # "Unknown modifier '.level'": the mipmap qualifier comes right after tex
    ("tex.2d.level.v4.f32.f32 {%r0, %r1, %r2, %r3}, [tex1, {%f1, %f2}], %f3;", "sm_90a", "8.7", None),
    # "Incorrect type '.u32' for operation '.and' in instruction 'sured.b'"
    ("sured.b.and.2d.u32.trap [surf1, {%r5, %r6}], %r1;", "sm_90a", "8.7", None),
    # "requires .target sm_100a" (tcgen05 is of the architecture-specific targets)
    ("tcgen05.wait::ld.sync.aligned;", "sm_90a", "8.7", None),
    ("tcgen05.wait::ld.sync.aligned;", "sm_120a", "8.7", None),
    # "Feature 'clusterlaunchcontrol.try_cancel.async' requires .target sm_100 or higher"
    ("clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128 [%r1], [%r2];",
     "sm_90a", "8.7", None),
    # "Instruction 'vote' without '.sync' is not supported on .target sm_70 and higher from PTX 6.4"
    ("vote.all.pred %p1, %p2;", "sm_90a", "8.7", None),
    ("shfl.idx.b32 %r1, %r2, %r3, %r4;", "sm_90a", "8.7", None),
    # wmma.load.a of a sub-byte type is .row only
    ("wmma.load.a.sync.aligned.col.m8n8k32.global.s4 {%r1}, [%rd1], %r9;", "sm_90a", "8.7", None),
]


@pytest.mark.parametrize("ins,target,version,why", VALID, ids=[v[0].split()[0] for v in VALID])
def test_valid_form_is_accepted_as_not_modelled_yet_and_refused_by_kernel(ins, target, version, why):
    text = module(ins, target, version)
    diags = ptx.check(text)
    assert not [d for d in diags if d.severity == "error"], diags
    notes = [d.message for d in diags if "not modelled yet" in d.message]
    assert notes and why in notes[0], diags
    with pytest.raises(ptx.PtxSyntaxError, match="not modelled yet.*" + why.split()[0]):
        ptx.Kernel(text)


@pytest.mark.parametrize("ins,target,version,_", INVALID, ids=[v[0].split()[0] for v in INVALID])
def test_invalid_form_is_an_error(ins, target, version, _):
    assert any(d.severity == "error" for d in ptx.check(module(ins, target, version)))


def test_a_name_no_row_has_is_an_unknown_instruction():
    diags = ptx.check(module("frobnicate.u32 %r1, %r2;"))
    assert [d.severity for d in diags] == ["error"] and "unknown instruction" in diags[0].message


def test_no_instruction_is_outside_the_checked_subset():
    # wgmma.mma_async (Triton's matmul) has rows: no "not validated" warning remains
    text = module("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r0, %r1, %r2, %r3}, %rd1, %rd2, %p1, "
                  "1, 1, 0, 1;", "sm_90a", "8.7")
    diags = ptx.check(text)
    assert not diags, diags


@pytest.mark.skipif(pf.ptxas_path() is None, reason="ptxas is not installed")
@pytest.mark.parametrize("case", VALID + INVALID, ids=[v[0].split()[0] for v in VALID + INVALID])
def test_ptxas_agrees(case):
    ins, target, version, _ = case
    text = module(ins, target, version)
    ok, msg = pf.ptxas_accepts(text, target)
    ours = not any(d.severity == "error" for d in ptx.check(text))
    assert ours == ok, (ours, msg)
