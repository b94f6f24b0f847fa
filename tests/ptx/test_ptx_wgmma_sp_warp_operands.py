"""Operand rules the family sweeps (tools/rows_verdicts.py --families sync,wgmma) found missing:
wgmma.mma_async.sp's d (n/4 registers for .f16, n/2 otherwise: "Argument vector size mismatch")
and sp-sel (0 or 1, 0 with 8-bit types: "unexpected value '1', expected to be 0"); the .b1 form's
qualifier order (.s32 before the .b1s, .and before .popc); mma kind::f8f6f4's fragments with
6- and 4-bit types; the operands of vote and shfl without
.sync (predicates; 32-bit registers). The verdicts are ptxas 13.0's and 13.5's, written here and
asked again of each installed ptxas."""
import pytest

from ptxasync import ptx
from ptx_forms import judges, ptxas_verdict

REGS = "".join("\t.reg .%s %s_<40>;\n" % (k, k) for k in ("pred", "b16", "b32", "b64"))


def module(line, target, version):
    return (".version %s\n.target %s\n.address_size 64\n.visible .entry k()\n{\n%s\t%s\n\tret;\n}\n"
            % (version, target, REGS, line))


def V(n):
    return "{" + ", ".join("b32_%d" % i for i in range(n)) + "}"


MMA = "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.%s %s, %s, %s, %s;"
SP = "wgmma.mma_async.sp.sync.aligned.m64n8k%d%s %s, b64_1, b64_2, b32_5, %d, pred_1%s;"
CASES = [   # (instruction, target, version, ptxas assembles it)
    (SP % (32, ".f32.f16.f16", V(4), 1, ", 1, 1, 0, 0"), "sm_90a", "8.7", True),
    (SP % (32, ".f32.f16.f16", V(4), 2, ", 1, 1, 0, 0"), "sm_90a", "8.7", False),
    (SP % (32, ".f32.f16.f16", V(2), 0, ", 1, 1, 0, 0"), "sm_90a", "8.7", False),
    (SP % (32, ".f16.f16.f16", V(2), 1, ", 1, 1, 0, 0"), "sm_90a", "8.7", True),
    (SP % (32, ".f16.f16.f16", V(4), 0, ", 1, 1, 0, 0"), "sm_90a", "8.7", False),
    (SP % (16, ".f32.tf32.tf32", V(4), 1, ", 1, 1"), "sm_90a", "8.7", True),
    (SP % (64, ".f32.e4m3.e4m3", V(4), 0, ", 1, 1"), "sm_90a", "8.7", True),
    (SP % (64, ".f32.e4m3.e4m3", V(4), 1, ", 1, 1"), "sm_90a", "8.7", False),
    (SP % (64, ".s32.s8.u8", V(4), 1, ""), "sm_90a", "8.7", False),
    ("wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc %s, b64_1, b64_2, pred_1;" % V(4), "sm_90a", "8.7",
     True),
    ("wgmma.mma_async.sync.aligned.m64n8k256.b1.s32.b1.and.popc %s, b64_1, b64_2, pred_1;" % V(4), "sm_90a", "8.7",
     False),
    ("wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.popc.and %s, b64_1, b64_2, pred_1;" % V(4), "sm_90a", "8.7",
     False),
    # mma kind::f8f6f4: the 6- and 4-bit types' fragments are those of the 8-bit ones
    (MMA % ("f32.e2m3.e5m2.f32", V(4), V(4), V(2), V(4)), "sm_120a", "9.0", True),
    (MMA % ("f32.e2m3.e5m2.f32", V(4), V(4), V(4), V(4)), "sm_120a", "9.0", False),
    (MMA % ("f16.e4m3.e2m1.f16", V(2), V(4), V(2), V(2)), "sm_120a", "9.0", True),
    (MMA % ("f16.e4m3.e2m1.f16", V(4), V(4), V(2), V(4)), "sm_120a", "9.0", False),
    ("vote.all.pred pred_1, pred_2;", "sm_75", "6.3", True),
    ("vote.all.pred %s, pred_2;" % V(4), "sm_75", "6.3", False),
    ("vote.any.pred b32_1, pred_2;", "sm_75", "6.3", False),
    ("shfl.up.b32 b32_1, b32_2, b32_3, b32_4;", "sm_75", "6.3", True),
    ("shfl.up.b32 %s, b32_2, b32_3, b32_4;" % V(4), "sm_75", "6.3", False),
    ("shfl.up.b32 b32_1, b64_2, b32_3, b32_4;", "sm_75", "6.3", False),
]
# ptxas 13.5 wants PTX 8.6 for fence.release / .acquire, 13.0 takes them at 8.0: (line, version, 13.0, 13.5)
FENCES = [("fence.release.cluster;", "8.0", True, False), ("fence.acquire.gpu;", "8.5", True, False),
          ("fence.release.cluster;", "8.6", True, True), ("fence.acq_rel.cluster;", "8.0", True, True)]
IDS = ["%d-%s" % (i, c[0].split()[0]) for i, c in enumerate(CASES)]


@pytest.mark.parametrize("release", ptx.PTXAS_RELEASES)
@pytest.mark.parametrize("line,target,version,ok", CASES, ids=IDS)
def test_the_checker_gives_ptxas_verdict(line, target, version, ok, release):
    errors = [d.message for d in ptx.check(module(line, target, version), ptxas=release) if d.severity == "error"]
    assert (not errors) == ok, errors


@pytest.mark.parametrize("release,path", judges())
def test_ptxas_still_gives_those_verdicts(release, path):
    wrong = [(line, v.message) for line, target, version, ok in CASES
             for v in [ptxas_verdict(module(line, target, version), target, path)] if not v.crash and v.accepted != ok]
    assert not wrong, wrong


@pytest.mark.parametrize("line,version,ok130,ok135", FENCES)
def test_fence_release_acquire_versions_per_release(line, version, ok130, ok135):
    for release, ok in (("13.0", ok130), ("13.5", ok135)):
        errors = [d.message for d in ptx.check(module(line, "sm_90", version), ptxas=release) if d.severity == "error"]
        assert (not errors) == ok, (release, errors)
        path = ptx.ptxas_installed().get(release)
        if path:
            v = ptxas_verdict(module(line, "sm_90", version), "sm_90", path)
            assert v.crash or v.accepted == ok, (release, v.message)
