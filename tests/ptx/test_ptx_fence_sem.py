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
@pytest.mark.parametrize("scope", ["cta", "gpu", "sys"])
def test_uni_directional_fences_run(s, scope):
    # PTX 8.6, which ptxas 13.5 wants for .acquire / .release (13.0 takes them at 8.0)
    k = ptx.Kernel(MODULE.format(v="8.6", t="sm_90a", s=s, scope=scope))
    k.launch(pa.Machine(), block=(32, 1, 1))


# The memory model's patterns (PTX ISA, "Memory Consistency Model", release and acquire
# patterns): a fence with release semantics then a relaxed atomic write is a release pattern; a
# relaxed atomic read then a fence with acquire semantics an acquire pattern. .acquire has no
# release half and .release no acquire half. Thread 0 stores 42 then sets the flag; thread 32
# spins on the flag with relaxed atomics, then reads the data.
from test_ptx_atom import FLAG, run_race  # noqa: E402


def fenced(producer, consumer):
    body = FLAG.replace("{rel}", ".relaxed.gpu").replace("{acq}", ".relaxed.gpu")
    if producer is not None:
        body = body.replace("    atom.relaxed.gpu.global.exch", f"    fence{producer}.gpu;\n    atom.relaxed.gpu.global.exch")
    if consumer is not None:
        body = body.replace("    ld.global.u32 %r5", f"    fence{consumer}.gpu;\n    ld.global.u32 %r5")
    return run_race(body)


@pytest.mark.parametrize("producer,consumer", [(".release", ".acquire"), (".acq_rel", ".acq_rel"), ("", ".sc"),
                                               (".sc", ".acquire"), (".release", "")])
def test_fence_release_and_fence_acquire_order_the_data(producer, consumer):
    races, d = fenced(producer, consumer)
    assert races == [] and d[1] == 42


@pytest.mark.parametrize("producer,consumer", [(".acquire", ".acquire"), (".release", ".release"), (None, ".acquire"),
                                               (".release", None)])
def test_a_fence_without_the_needed_half_leaves_the_data_racing(producer, consumer):
    races, _ = fenced(producer, consumer)
    assert races and races[0].first["instr"] == "st.global"


def test_machine_fence_takes_the_four_semantics():
    m = pa.Machine()
    for sem in ("acq_rel", "sc", "acquire", "release"):
        m.fence(sem=sem, scope="gpu")
    with pytest.raises(ValueError, match="not .acq_rel, .sc, .acquire or .release"):
        m.fence(sem="relaxed")
