"""fence{.sem}.scope with .sem = { .sc, .acq_rel, .acquire, .release } (PTX ISA, membar/fence):
.sem may be left out (.acq_rel is assumed). The verdicts below are ptxas 13.0's, recorded with
`ptxas -arch=<target>` on this module: it takes the uni-directional .acquire / .release at
every version it knows for the target, though the ISA's notes date them to PTX ISA 8.6."""
import pytest

import ptxasync as pa
from ptxasync import ptx

MODULE = """.version {v}
.target {t}
.address_size 64
.visible .entry k()
{{
    fence{s}.{scope};
    ret;
}}
"""

# (version, target, .sem, scope) that ptxas 13.0 accepts
ACCEPTED = [("7.0", "sm_80", ".acquire", "gpu"), ("7.0", "sm_80", ".release", "gpu"), ("7.0", "sm_80", "", "gpu"),
            ("8.5", "sm_90", ".acquire", "gpu"), ("9.0", "sm_90", ".release", "gpu"), ("6.4", "sm_75", ".acquire", "sys"),
            ("6.4", "sm_75", "", "sys"), ("8.0", "sm_90a", ".acq_rel", "cluster"), ("8.0", "sm_90a", ".sc", "cta")]


@pytest.mark.parametrize("v,t,s,scope", ACCEPTED)
def test_fence_sem_forms_ptxas_takes(v, t, s, scope):
    assert ptx.check(MODULE.format(v=v, t=t, s=s, scope=scope), ptxas="13.0") == []


def test_an_unknown_sem_is_refused():
    diags = ptx.check(MODULE.format(v="8.0", t="sm_90a", s=".relaxed", scope="gpu"), ptxas="13.0")
    assert diags and diags[0].severity == "error"


@pytest.mark.parametrize("s", [".acquire", ".release", ""])
def test_uni_directional_fences_run(s):
    # the memory model takes them as .acq_rel fences (docs/ptx.md, "What it runs"); PTX 8.6, which
    # ptxas 13.5 wants for .acquire / .release (13.0 takes them at 8.0)
    k = ptx.Kernel(MODULE.format(v="8.6", t="sm_90a", s=s, scope="gpu"))
    k.launch(pa.Machine(), block=(32, 1, 1))
