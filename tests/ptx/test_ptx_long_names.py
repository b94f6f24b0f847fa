"""Names are the module's, whole: a templated CUDA C++ kernel's mangled name runs to a thousand
characters (CuTe's), and so do its parameters' (`<entry>_param_0`); two names that share a long
start are two names."""
import numpy as np

import ptxasync as pa
from ptxasync import ptx

STEM = "_ZN4cute6detail" + "N3cute5tupleIJNS_1CILi64EEES2_EEE" * 30    # about 1,000 characters

KERNEL = """.version 8.0
.target sm_90a
.address_size 64
.global .align 4 .u32 {g}_a[1] = {{5}};
.global .align 4 .u32 {g}_b[1] = {{9}};
.visible .entry {e}(.param .u64 {e}_param_0, .param .u32 {e}_param_1)
{{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [{e}_param_0];
    ld.param.u32 %r1, [{e}_param_1];
    ld.global.u32 %r2, [{g}_b];
    add.u32 %r3, %r1, %r2;
    st.global.u32 [%rd1], %r3;
    ret;
}}
"""


def test_a_thousand_character_entry_and_its_parameters():
    e, g = STEM + "kernel", STEM + "global"
    assert len(e) > 1000
    k = ptx.Kernel(KERNEL.format(e=e, g=g), entry=e)
    assert k.entry == e
    out = np.zeros(1, np.uint32)
    m = pa.Machine()
    k.launch(m, block=(1, 1, 1), params={e + "_param_0": m.register(out), e + "_param_1": 30})
    assert out[0] == 39       # 30 + the second variable (9), not the first (5): the names differ at the end
