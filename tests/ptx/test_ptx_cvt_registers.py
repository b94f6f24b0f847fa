"""cvt's registers (text/rules_sem.c) and targets (tools/ptx_rows/cvt.py) as ptxas 13.0 and 13.5
give them: tools/cvt_register_verdicts.py puts each operand of every cvt / cvt.pack form in a
register of every kind and size and finds the rules below (PTX ISA 5.2.4 lets cvt take a wider
register; ptxas takes less and more than that). The verdicts are written here and asked of each
installed ptxas again, and a seeded sample of the sweep is judged live."""
import os
import random
import sys

import pytest

from ptxasync import ptx
from ptx_forms import judges
from testpaths import REPO

sys.path.insert(0, os.path.join(REPO, "tools"))
import cvt_register_verdicts as sweep  # noqa: E402


def module(line, target="sm_90a", version="8.7"):
    return sweep.module(target, version, [line])[0]


# (instruction, target, ptxas 13.0 assembles it, ptxas 13.5 does); registers are named kind_n
CASES = [
    # cvt.{rz,rm,rp}.ftz.f32.f64 into a wider register: "Arguments mismatch for instruction 'mov'"
    # (from a pass after the other operand checks); .rn or no .ftz takes it
    ("cvt.rm.ftz.sat.f32.f64 b64_1, f64_1;", "sm_90a", False, False),
    ("cvt.rz.ftz.f32.f64 b64_1, f64_1;", "sm_90a", False, False),
    ("cvt.rp.ftz.f32.f64 u64_1, f64_1;", "sm_90a", False, False),
    ("cvt.rn.ftz.f32.f64 b64_1, f64_1;", "sm_90a", True, True),
    ("cvt.rm.sat.f32.f64 b64_1, f64_1;", "sm_90a", True, True),
    ("cvt.rm.ftz.f32.f64 b32_1, f64_1;", "sm_90a", True, True),
    ("cvt.ftz.f32.f16 b64_1, f16_1;", "sm_90a", True, True),
    # an 8-bit integer type in an 8-bit register of either sign; an integer type in a .f16x2 one
    ("cvt.u16.u8 u16_1, s8_1;", "sm_90a", True, True),
    ("cvt.rni.s8.f32 b8_1, f32_1;", "sm_90a", True, True),
    ("cvt.u32.u16 u32_1, f16x2_1;", "sm_90a", True, True),
    ("cvt.u16.u32 f16x2_1, u32_1;", "sm_90a", True, True),
    ("cvt.u64.u32 u64_1, f16x2_1;", "sm_90a", True, True),
    ("cvt.u32.u64 f16x2_1, u64_1;", "sm_90a", True, True),
    ("cvt.u64.u32 f16x2_1, u32_1;", "sm_90a", False, False),
    ("cvt.u32.u16 u32_1, b8_1;", "sm_90a", False, False),
    ("cvt.f32.f16 f32_1, f16x2_1;", "sm_90a", False, False),
    # cvt.rs's random bits: a .b32 register, not .u32, .f32 or a predicate
    ("cvt.rs.satfinite.e4m3x4.f32 b32_1, {b32_1, b32_2, b32_3, b32_4}, b32_5;", "sm_100a", True, True),
    ("cvt.rs.satfinite.e4m3x4.f32 b32_1, {b32_1, b32_2, b32_3, b32_4}, u32_5;", "sm_100a", False, False),
    ("cvt.rs.satfinite.e4m3x4.f32 b32_1, {b32_1, b32_2, b32_3, b32_4}, pred_5;", "sm_100a", False, False),
    ("cvt.rs.satfinite.e2m1x4.f32 b16_1, {b32_1, b32_2, b32_3, b32_4}, f32_5;", "sm_100a", False, False),
    ("cvt.rs.f16x2.f32 b32_1, b32_2, b32_3, b64_5;", "sm_100a", False, False),
    # an .e2m1x2 pair: a .b8 register
    ("cvt.rn.satfinite.e2m1x2.f32 b8_1, b32_1, b32_2;", "sm_100a", True, True),
    ("cvt.rn.satfinite.e2m1x2.f32 b16_1, b32_1, b32_2;", "sm_100a", False, False),
    ("cvt.rn.f16x2.e2m1x2 b32_1, u8_1;", "sm_100a", False, False),
    # cvt.rn.bf16x2.ue8m0x2's .bf16x2: ptxas 13.0 takes any 32-bit register and a predicate, 13.5 .b32
    ("cvt.rn.bf16x2.ue8m0x2 pred_1, b16_1;", "sm_100a", True, False),
    ("cvt.rz.ue8m0x2.bf16x2 b16_1, f32_1;", "sm_100a", True, False),
    ("cvt.rz.ue8m0x2.bf16x2 b16_1, b64_1;", "sm_100a", False, False),
    # targets: .rs "not supported on .target 'sm_100f'"; the fp4 / fp6 / ue8m0 pairs on the a and f
    # targets of sm_100 up, not on sm_100 or sm_120
    ("cvt.rs.f16x2.f32 b32_1, b32_2, b32_3, b32_4;", "sm_103a", True, True),
    ("cvt.rs.f16x2.f32 b32_1, b32_2, b32_3, b32_4;", "sm_100f", False, False),
    ("cvt.rs.f16x2.f32 b32_1, b32_2, b32_3, b32_4;", "sm_120a", False, False),
    ("cvt.rn.f16x2.e2m3x2 b32_1, b16_1;", "sm_110f", True, True),
    ("cvt.rn.f16x2.e2m3x2 b32_1, b16_1;", "sm_120", False, False),
    ("cvt.rn.f16x2.e2m3x2 b32_1, b16_1;", "sm_100", False, False),
    ("cvt.rp.ue8m0x2.f32 b16_1, b32_1, b32_2;", "sm_121a", True, True),
]
IDS = [c[0].split()[0] + "-" + c[1] for c in CASES]


@pytest.mark.parametrize("release", ptx.PTXAS_RELEASES)
@pytest.mark.parametrize("line,target,ok130,ok135", CASES, ids=IDS)
def test_the_checker_gives_ptxas_verdict(line, target, ok130, ok135, release):
    diags = ptx.check(module(line, target, "9.0"), ptxas=release)
    errors = [d.message for d in diags if d.severity == "error"]
    assert (not errors) == (ok130 if release == "13.0" else ok135), errors


@pytest.mark.parametrize("release,path", judges())
def test_ptxas_still_gives_those_verdicts(release, path):
    wrong = []
    for line, target, ok130, ok135 in CASES:
        v = sweep.verdicts(path, release, target, "9.0", [line])[line]
        if v[0] != (ok130 if release == "13.0" else ok135):
            wrong.append((line, target, v))
    assert not wrong, wrong


def test_a_refused_register_names_its_width():
    errors = [d.message for d in ptx.check(module("cvt.rm.ftz.f32.f64 b64_1, f64_1;")) if d.severity == "error"]
    assert errors and "64-bit register" in errors[0] and "32-bit" in errors[0], errors
    errors = [d.message for d in ptx.check(module("cvt.u32.u16 u32_1, b8_1;")) if d.severity == "error"]
    assert errors and "8-bit register" in errors[0], errors


@pytest.mark.parametrize("target", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("release,path", judges())
def test_a_sample_of_the_sweep_agrees_with_ptxas(release, path, target):
    # six qualifier choices of each form, every operand in every register kind (about 9,000 lines)
    rnd = random.Random(7)
    lines = list(dict.fromkeys(t for f in sweep.cvt_forms() for t, _ in sweep.lines_of(f, 6, rnd)))
    res = sweep.sweep(release, path, target, "8.7", lines)
    wrong = [r for r in res if r[1] != r[2]]
    assert len(res) > 8000 and not wrong, (len(wrong), wrong[:5])
