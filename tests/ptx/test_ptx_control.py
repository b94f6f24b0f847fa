"""trap, brkpt, nanosleep, griddepcontrol and membar: in the table (checked as ptxas 13.0 takes
them), and run: trap and brkpt end the launch with an error naming the line, as the GPU ends it;
the others are hints or fences that leave the bytes alone."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

MODULE = """.version {v}
.target {t}
.address_size 64
.visible .entry k(.param .u64 p)
{{
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, 7;
    {ins}
    st.global.u32 [%rd1], %r1;
    ret;
}}
"""

# (instruction, target, version) -> ptxas 13.0 accepts it (recorded with ptxas -arch=<target>)
VERDICTS = [("trap;", "sm_80", "7.8", True), ("brkpt;", "sm_90a", "8.0", True),
            ("nanosleep.u32 100;", "sm_80", "7.8", True), ("nanosleep.u32 %r1;", "sm_90a", "8.0", True),
            ("griddepcontrol.wait;", "sm_90a", "8.0", True), ("griddepcontrol.launch_dependents;", "sm_90a", "8.0", True),
            ("griddepcontrol.wait;", "sm_80", "7.8", False), ("membar.gl;", "sm_80", "7.8", True),
            ("membar.cta;", "sm_90a", "8.0", True), ("membar.sys;", "sm_90a", "8.0", True)]


@pytest.mark.parametrize("ins,t,v,ok", VERDICTS)
def test_checked_as_ptxas_takes_them(ins, t, v, ok):
    diags = ptx.check(MODULE.format(ins=ins, t=t, v=v), ptxas="13.0")
    assert (not any(d.severity == "error" for d in diags)) == ok, diags
    assert not any("outside the checked subset" in d.message for d in diags)


@pytest.mark.parametrize("ins,words", [("trap;", "trap: the kernel stopped itself"),
                                       ("brkpt;", "brkpt: a breakpoint")])
def test_trap_and_brkpt_end_the_launch_naming_the_line(ins, words):
    out = np.zeros(1, np.uint32)
    m = pa.Machine()
    with pytest.raises(pa.IllegalInstruction, match=words + r".*PTX line 10"):
        ptx.Kernel(MODULE.format(ins=ins, t="sm_90a", v="8.0")).launch(m, block=(1, 1, 1), params={"p": m.register(out)})
    assert out[0] == 0                      # the store after it never ran


@pytest.mark.parametrize("ins", ["nanosleep.u32 100;", "griddepcontrol.wait;", "griddepcontrol.launch_dependents;",
                                 "membar.gl;", "membar.cta;"])
def test_hints_and_fences_run(ins):
    out = np.zeros(1, np.uint32)
    m = pa.Machine()
    ptx.Kernel(MODULE.format(ins=ins, t="sm_90a", v="8.0")).launch(m, block=(32, 1, 1), params={"p": m.register(out)})
    assert out[0] == 7
