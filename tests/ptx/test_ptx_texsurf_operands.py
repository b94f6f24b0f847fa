"""The operand shapes of the texture and surface instructions (text/rules_tex.c) as ptxas 13.0 and
13.5 check them: coordinates per geometry, tex's destination per type, offset, gradients, lod and
depth, a surface access's data registers, txq's handle. The verdicts are ptxas's, written here and
asked of each installed ptxas again; a seeded sample of tools/rows_verdicts.py's sweep of the
family (where every operand shape used to be "not compared") is judged live."""
import argparse
import os
import sys

import pytest

from ptxasync import ptx
from ptx_forms import judges, ptxas_verdict
from testpaths import REPO

sys.path.insert(0, os.path.join(REPO, "tools"))
import rows_verdicts  # noqa: E402

KINDS = ["pred", "b8", "b16", "f16", "b32", "s32", "u32", "f32", "f16x2", "b64", "f64"]
# (a .samplerref "violates .target texmode_unified": an explicit sampler is a 64-bit register here)
HEAD = (".version 8.7\n.target sm_90a\n.address_size 64\n.global .texref tex1;\n.global .surfref surf1;\n"
        ".visible .entry k()\n{\n" + "".join("\t.reg .%s %s_<40>;\n" % (k, k) for k in KINDS))


def module(line):
    return HEAD + "\t" + line + "\n\tret;\n}\n"


def V(kind, n, base=0):
    return "{" + ", ".join("%s_%d" % (kind, base + i) for i in range(n)) + "}"


F4 = V("f32", 4)
# (instruction, ptxas 13.0 and 13.5 assemble it); ptxas's message in the comments
CASES = [
    # coordinates: 1, 2 or 4 elements, at least the geometry's ("Operand vector size doesn't match
    # geometry", "Illegal vector size: 3"); .a2dms is not checked
    ("tex.1d.v4.f32.f32 %s, [tex1, {f32_1, f32_2, f32_3, f32_4}];" % F4, True),
    ("tex.2d.v4.f32.f32 %s, [tex1, {f32_1}];" % F4, False),
    ("tex.3d.v4.f32.f32 %s, [tex1, {f32_1, f32_2, f32_3}];" % F4, False),
    ("tex.a1d.v4.f32.s32 %s, [tex1, {b32_1}];" % F4, False),
    ("tex.a2dms.v4.f32.s32 %s, [tex1, {b32_1}];" % F4, True),
    # an array's index is an integer register, the rest .f32 ones with .f32 coordinates
    ("tex.a1d.v4.f32.f32 %s, [tex1, {b32_1, f32_2}];" % F4, True),
    ("tex.a1d.v4.f32.f32 %s, [tex1, {f32_1, f32_2}];" % F4, False),
    ("tex.2d.v4.f32.s32 %s, [tex1, {f32_1, f32_2}];" % F4, False),
    ("tex.2d.v4.f32.f32 %s, [tex1, {s32_1, s32_2}];" % F4, True),
    # the destination: four registers of the type's size ("Arguments mismatch")
    ("tex.2d.v4.f16.f32 %s, [tex1, {f32_1, f32_2}];" % V("f16", 4), True),
    ("tex.2d.v4.f16.f32 %s, [tex1, {f32_1, f32_2}];" % F4, False),
    ("tex.2d.v4.u32.f32 %s, [tex1, {f32_1, f32_2}];" % F4, False),
    ("tex.2d.v4.f32.f32 %s, [tex1, {f32_1, f32_2}];" % V("f32", 2), False),
    ("tex.2d.v2.f16x2.f32 %s, [tex1, {f32_1, f32_2}];" % V("f16x2", 2), True),
    # offset: integer registers, at least the geometry's dimensions; gradients exactly them
    ("tex.2d.v4.f32.f32 %s, [tex1, {f32_1, f32_2}], {s32_1, s32_2, s32_3, s32_4};" % F4, True),
    ("tex.2d.v4.f32.f32 %s, [tex1, {f32_1, f32_2}], {f32_5, f32_6};" % F4, False),
    ("tex.grad.2d.v4.f32.f32 %s, [tex1, {f32_1, f32_2}], {f32_5, f32_6}, {b32_5, b32_6};" % F4, True),
    ("tex.grad.1d.v4.f32.f32 %s, [tex1, {f32_1}], {f32_5, f32_6}, {f32_5, f32_6};" % F4, False),
    ("tex.grad.2d.v4.f32.f32 %s, [tex1, {f32_1, f32_2}], {s32_5, s32_6}, {s32_5, s32_6};" % F4, False),
    # lod: of the coordinates' kind; depth: with .f32 coordinates only
    ("tex.level.2d.v4.f32.s32 %s, [tex1, {b32_1, b32_2}], s32_5;" % F4, True),
    ("tex.level.2d.v4.f32.s32 %s, [tex1, {b32_1, b32_2}], f32_5;" % F4, False),
    ("tex.level.2d.v4.f32.f32 %s, [tex1, {f32_1, f32_2}], s32_5;" % F4, False),
    ("tex.2d.v4.f32.f32 %s, [tex1, {f32_1, f32_2}], {b32_1, b32_2}, f32_5;" % F4, True),
    ("tex.2d.v4.f32.s32 %s, [tex1, {b32_1, b32_2}], {b32_1, b32_2}, b32_5;" % F4, False),
    # with an explicit sampler and integer coordinates lod is a .b32 register
    ("tex.level.2d.v4.f32.s32 %s, [tex1, b64_9, {b32_1, b32_2}], b32_5;" % F4, True),
    ("tex.level.2d.v4.f32.s32 %s, [tex1, b64_9, {b32_1, b32_2}], s32_5;" % F4, False),
    # tex.level takes a cube map with an explicit sampler ("Illegal modifier '.cube'" for .grad)
    ("tex.level.cube.v4.f32.f32 %s, [tex1, b64_9, {b32_1, f32_1, f32_2, f32_3}], f32_3;" % F4, True),
    ("tex.grad.cube.v4.f32.f32 %s, [tex1, b64_9, {b32_1, f32_1, f32_2, f32_3}], %s, %s;" % (F4, F4, F4), False),
    # surfaces: integer coordinates; .vec registers no narrower than the type, at most 128 bits
    ("suld.b.2d.v2.b16.trap {b32_0, b32_1}, [surf1, {b32_1, b32_2}];", True),
    ("suld.b.2d.v2.b32.trap {b16_0, b16_1}, [surf1, {b32_1, b32_2}];", False),
    ("suld.b.2d.v4.b32.trap {b32_0, b32_1}, [surf1, {b32_1, b32_2}];", False),
    ("suld.b.2d.b32.trap b32_0, [surf1, {f32_1, f32_2}];", False),
    ("sust.b.2d.v2.b64.trap [surf1, {b32_1, b32_2}], {b64_0, b64_1};", True),
    ("sust.b.2d.v4.b64.trap [surf1, {b32_1, b32_2}], {b64_0, b64_1, b64_2, b64_3};", False),
    # txq: a .texref or a 64-bit register; .force_unnormalized_coords a register only
    ("txq.width.b32 b32_1, [tex1];", True),
    ("txq.width.b32 b32_1, [surf1];", False),
    ("txq.force_unnormalized_coords.b32 b32_1, [b64_1];", True),
    ("txq.force_unnormalized_coords.b32 b32_1, [tex1];", False),
]
IDS = ["%d-%s" % (i, c[0].split()[0]) for i, c in enumerate(CASES)]


@pytest.mark.parametrize("release", ptx.PTXAS_RELEASES)
@pytest.mark.parametrize("line,ok", CASES, ids=IDS)
def test_the_checker_gives_ptxas_verdict(line, ok, release):
    errors = [d.message for d in ptx.check(module(line), ptxas=release) if d.severity == "error"]
    assert (not errors) == ok, errors


@pytest.mark.parametrize("release,path", judges())
def test_ptxas_still_gives_those_verdicts(release, path):
    wrong = [(line, v.message) for line, ok in CASES
             for v in [ptxas_verdict(module(line), "sm_90a", path)] if not v.crash and v.accepted != ok]
    assert not wrong, wrong


@pytest.mark.skipif("13.0" not in ptx.ptxas_installed(), reason="ptxas 13.0 is not installed")
def test_a_sample_of_the_family_sweep_has_no_disagreement_and_no_uncompared_shape():
    # rows_verdicts asks the ptxas on the PATH (13.0): 8 qualifier choices of each form and a mutation
    a = argparse.Namespace(seed=3, targets="sm_90a@8.7,sm_100a@9.0", families="texsurf", per_form=8)
    results = [r for job in rows_verdicts.build_jobs(a) for r in rows_verdicts.judge(job)]
    bad = [(r[0], r[5], r[6], r[7]) for r in results if r[0] != "agree"]
    assert len(results) > 800 and not bad, (len(bad), bad[:5])
