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
    regs = REGS if float(version) >= 8.3 else REGS.replace("\t.reg .b128 %q<4>;\n", "")   # .b128: PTX 8.3
    return (".version %s\n.target %s\n.address_size 64\n%s.visible .entry k()\n{\n%s\t%s\n\tret;\n}\n"
            % (version, target, DECLS, regs, ins))


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


# What the sweep against ptxas 13.0 found (tools/rows_verdicts.py): per cause, an instance ptxas
# assembles (True) and one it refuses (False, its message in the comment); the verdicts are
# ptxas 13.0's, written here, and asked of ptxas again where it is installed.
V4 = "{%r0, %r1, %r2, %r3}"
V2 = "{%r0, %r1}"
V128 = "{" + ", ".join("%%r%d" % i for i in range(128)) + "}"
MMA_SP = "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 %s, {%%r40, %%r41}, {%%r60, %%r61}, " \
    "{%%r80, %%r81, %%r82, %%r83}, %%r120, 0;"
CAUSES = [
    # wmma's .shared::cta: "Feature '::cta' requires PTX ISA .version 7.8 or later"
    ("wmma.load.a.sync.aligned.row.m16n16k16.shared::cta.f16 %s, [%%r1];" % V8, "sm_80", "7.8", True),
    ("wmma.load.a.sync.aligned.row.m16n16k16.shared::cta.f16 %s, [%%r1];" % V8, "sm_80", "7.7", False),
    # tcgen05.ld: .16x128b (2 registers a .num) up to .x64: "Modifier .x128 not allowed for instruction
    # tcgen05.ld with shape '.16x128b'"; r holds 2 x .num registers: "Argument vector size mismatch"
    ("tcgen05.ld.sync.aligned.16x128b.x64.b32 %s, [%%r130];" % V128, "sm_100a", "8.7", True),
    ("tcgen05.ld.sync.aligned.16x128b.x128.b32 %s, [%%r130];" % V128, "sm_100a", "8.7", False),
    ("tcgen05.ld.sync.aligned.16x128b.x2.pack::16b.b32 %s, [%%r130];" % V2, "sm_100a", "8.7", False),
    # tcgen05.cp: .64x128b needs a .warpx2 multicast: "Modifier .warpx4 not allowed for instruction
    # tcgen05.cp with shape '.64x128b'"; the formats are .dst_fmt.src_fmt: "Illegal modifier
    # '.b6x16_p32.b8x16'"
    ("tcgen05.cp.cta_group::1.64x128b.warpx2::02_13 [%r1], %rd1;", "sm_100a", "8.7", True),
    ("tcgen05.cp.cta_group::1.64x128b.warpx4 [%r1], %rd1;", "sm_100a", "8.7", False),
    ("tcgen05.cp.cta_group::1.128x256b.b8x16.b6x16_p32 [%r1], %rd1;", "sm_100a", "8.7", True),
    ("tcgen05.cp.cta_group::1.128x256b.b6x16_p32.b8x16 [%r1], %rd1;", "sm_100a", "8.7", False),
    # "Instruction 'tcgen05.shift' not supported on .target 'sm_100f'"
    ("tcgen05.shift.cta_group::1.down [%r1];", "sm_100a", "9.0", True),
    ("tcgen05.shift.cta_group::1.down [%r1];", "sm_100f", "9.0", False),
    # tcgen05.ld takes no .aligned; tcgen05.alloc needs it (".aligned modifier required")
    ("tcgen05.ld.sync.32x32b.x2.b32 {%r1, %r2}, [%r3];", "sm_100a", "8.7", True),
    ("tcgen05.alloc.cta_group::1.sync.shared::cta.b32 [%r1], 32;", "sm_100a", "8.7", False),
    # .sync twice is taken, .aligned twice is not ("Multiple .aligned modifiers specified")
    ("wmma.load.b.sync.sync.aligned.row.m16n16k16.f16 %s, [%%rd2];" % V8, "sm_90a", "8.7", True),
    ("wmma.load.b.sync.aligned.aligned.row.m16n16k16.f16 %s, [%%rd2];" % V8, "sm_90a", "8.7", False),
    # mma.sp with f8 and an f16 accumulator: sm_120f / sm_121f only ("Instruction 'mma with with F16
    # accumulator and F8 floating point type' not supported on .target 'sm_90a'")
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f16.e4m3.e4m3.f16 {%r0, %r1}, " + V4 + ", " + V4 +
     ", {%r8, %r9}, %r120, 0;", "sm_120a", "8.7", True),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f16.e4m3.e4m3.f16 {%r0, %r1}, " + V4 + ", " + V4 +
     ", {%r8, %r9}, %r120, 0;", "sm_90a", "8.7", False),
    # mma.sp's layouts are .row.col ("Illegal alayout '.col' for instruction 'mma'"), its types d a b c
    # ("Incorrect instruction type specified for mma with shape '.m16n8k128'")
    ("mma.sp.sync.aligned.m16n8k128.row.col.s32.s4.u4.s32 " + ", ".join([V4] * 4) + ", %r120, 0;", "sm_90a", "8.7",
     True),
    ("mma.sp.sync.aligned.m16n8k128.col.row.s32.s4.u4.s32 " + ", ".join([V4] * 4) + ", %r120, 0;", "sm_90a", "8.7",
     False),
    ("mma.sp.sync.aligned.m16n8k128.row.col.s4.s32.u4.s32 " + ", ".join([V4] * 4) + ", %r120, 0;", "sm_90a", "8.7",
     False),
    # mma.sp's A is half the dense shape's: 2 registers for m16n8k16 .f16 ("Argument vector size mismatch")
    (MMA_SP % V4, "sm_90a", "8.7", True),
    ((MMA_SP % V4).replace("{%r40, %r41}", "{%r40, %r41, %r42, %r43}"), "sm_90a", "8.7", False),
    # wmma's fragments: .f16 A is 8 registers ("Arguments mismatch"); A and B of one integer type
    # ("Unexpected instruction types specified for 'wmma.mma'"); .row.col of m8n8k128 in that order
    # ("Illegal alayout '.col' for instruction 'wmma.mma'")
    ("wmma.load.a.sync.aligned.row.m16n16k16.f16 %s, [%%rd1];" % V4, "sm_90a", "8.7", False),
    ("wmma.mma.sync.aligned.row.col.m16n16k16.s32.s8.s8.s32 %s, {%%r40, %%r41}, {%%r60, %%r61}, %s;" % (V8, V8),
     "sm_90a", "8.7", True),
    ("wmma.mma.sync.aligned.row.col.m16n16k16.s32.s8.u8.s32 %s, {%%r40, %%r41}, {%%r60, %%r61}, %s;" % (V8, V8),
     "sm_90a", "8.7", False),
    ("wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r0, %r1}, {%r40}, {%r60}, {%r80, %r81};",
     "sm_90a", "8.7", True),
    ("wmma.mma.xor.popc.sync.aligned.col.row.m8n8k128.s32.b1.b1.s32 {%r0, %r1}, {%r40}, {%r60}, {%r80, %r81};",
     "sm_90a", "8.7", False),
    # sured.b .and / .or: .b32 only ("Unexpected instruction types specified for 'sured.b'" on .b64)
    ("sured.b.and.1d.b32.trap [surf1, {%r1}], %r3;", "sm_90a", "8.7", True),
    ("sured.b.and.1d.b64.trap [surf1, {%r1}], %rd3;", "sm_90a", "8.7", False),
    # .async right after try_cancel ("Unknown modifier '.try_cancel'" otherwise)
    ("clusterlaunchcontrol.try_cancel.shared::cta.async.mbarrier::complete_tx::bytes.b128 [%r1], [%r2];",
     "sm_100a", "8.7", False),
    # tcgen05.mma: idesc is 32 bits ("Arguments mismatch"); .kind::i8 on sm_100a / sm_110a ("Feature
    # '.kind::i8' not supported on .target 'sm_100f'"); no scale vector size is .block32, PTX 8.8
    # ("Feature '.block32' requires PTX ISA .version 8.8 or later"); mxf4 takes no .scale_vec::1X
    ("tcgen05.mma.cta_group::1.kind::i8 [%r1], %rd1, %rd2, %r3, %p1;", "sm_100a", "8.7", True),
    ("tcgen05.mma.cta_group::1.kind::i8 [%r1], %rd1, %rd2, %rd3, %p1;", "sm_100a", "8.7", False),
    ("tcgen05.mma.cta_group::1.kind::i8 [%r1], %rd1, %rd2, %r3, %p1;", "sm_100f", "9.0", False),
    ("tcgen05.mma.cta_group::1.kind::mxf4.block_scale [%r1], %rd1, %rd2, %r3, [%r4], [%r5], %p1;", "sm_100a", "8.8",
     True),
    ("tcgen05.mma.cta_group::1.kind::mxf4.block_scale [%r1], %rd1, %rd2, %r3, [%r4], [%r5], %p1;", "sm_100a", "8.7",
     False),
    ("tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::1X [%r1], %rd1, %rd2, %r3, [%r4], [%r5], %p1;",
     "sm_100a", "8.8", False),
    # the .sync_restrict fences: PTX 8.6, sm_90, acquire with ::shared::cluster, release with ::shared::cta
    # ("Feature '.sync_restrict' requires PTX ISA .version 8.6", "Modifier '.sync_restrict::shared::cluster'
    # cannot be combined with modifier '.release'")
    ("fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;", "sm_90", "8.6", True),
    ("fence.acquire.sync_restrict::shared::cluster.cluster;", "sm_90", "8.6", True),
    ("fence.acquire.sync_restrict::shared::cluster.cluster;", "sm_90", "8.5", False),
    ("fence.release.sync_restrict::shared::cluster.cluster;", "sm_90", "8.6", False),
    # fence's .cluster scope: "Feature '.cluster scope' requires .target sm_90 or higher"
    ("fence.release.cluster;", "sm_90", "8.7", True),
    ("fence.release.cluster;", "sm_80", "8.7", False),
]


@pytest.mark.parametrize("ins,target,version,accepts", CAUSES, ids=[c[0].split()[0] for c in CAUSES])
def test_the_checker_gives_ptxas_verdict(ins, target, version, accepts):
    diags = ptx.check(module(ins, target, version), ptxas="13.0")
    assert (not any(d.severity == "error" for d in diags)) == accepts, diags


@pytest.mark.skipif("13.0" not in ptx.ptxas_installed(), reason="ptxas 13.0 is not installed")
@pytest.mark.parametrize("ins,target,version,accepts", CAUSES, ids=[c[0].split()[0] for c in CAUSES])
def test_ptxas_still_gives_that_verdict(ins, target, version, accepts):
    ok, msg = pf.ptxas_accepts(module(ins, target, version), target, ptx.ptxas_installed()["13.0"])
    assert ok == accepts, msg


def test_ptxas_13_5_wants_tcgen05_ld_aligned():
    # ptxas 13.5: ".aligned modifier required for instruction 'tcgen05.ld'" (13.0 assembles it)
    text = module("tcgen05.ld.sync.32x32b.x2.b32 {%r1, %r2}, [%r3];", "sm_100a", "8.7")
    assert any(d.severity == "error" and ".aligned" in d.message for d in ptx.check(text, ptxas="13.5"))
    assert not any(d.severity == "error" for d in ptx.check(text, ptxas="13.0"))


def test_an_error_inside_a_vector_does_not_end_the_function():
    # the recovery used to stop at the vector's '}' and take it for the function's end
    big = "{" + ", ".join("%%r%d" % (i % 100) for i in range(256)) + "}"
    diags = ptx.check(module("tcgen05.st.sync.aligned.32x32b.x128.b32 [%%r1], %s;" % big, "sm_100a", "8.7"))
    msgs = [d.message for d in diags if d.severity == "error"]
    assert any("more than 255 elements" in m for m in msgs), msgs
    assert not any("outside a function" in m for m in msgs), msgs
