"""Variables outside registers and shared memory (csrc/core/ptx/exec/lower_vars.c): module-scope
.global / .const variables with their initialisers, in a global buffer the kernel keeps per
machine (their values last across launches, as a loaded module's do), and a thread's .local
window (NVRTC's __local_depot with %SP / %SPL, ld/st.local, cvta.local, generic local
addresses); tensormap.cp_fenceproxy, which puts a tensor map built in shared memory into
global memory for the tensor-map proxy."""
import struct

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

HEAD = ".version 8.6\n.target sm_90a\n.address_size 64\n"


def kernel(decls, body, regs=""):
    return HEAD + decls + f"""
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<16>;
  .reg .b64 %rd<16>;
  .reg .f32 %f<4>;
  .reg .pred %p<4>;
{regs}
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
{body}
  ret;
}}
"""


def run(text, nout=16, block=1, machine=None, k=None):
    m = machine or pa.Machine()
    out = m.alloc(4 * nout)
    k = k or ptx.Kernel(text)
    k.launch(m, block=block, params={"out": out.address})
    return out.array.view(np.uint32).copy(), m, k


def test_module_globals_initialised():
    decls = """
.global .align 1 .b8 _$_str[11] = {95, 95, 67, 85, 68, 65, 95, 70, 84, 90};
.global .align 4 .u32 counter = 1000;
.const .align 4 .b8 coef[8] = {0, 0, 0, 63, 0, 0, 160, 191};
.visible .global .align 4 .s32 neg[3] = {-1, 2, -3};
.const .f32 half = 0f3F000000;
.global .align 8 .u64 big = 0x123456789ABCDEF0;
.global .align 4 .u32 grid2[2][3] = {{1, 2}, {4, 5, 6}};
"""
    body = """
  ld.global.u32 %r1, [counter];
  st.global.u32 [%rd1], %r1;
  mov.u64 %rd2, coef;
  ld.const.f32 %f1, [%rd2+4];
  st.global.f32 [%rd1+4], %f1;
  ld.const.f32 %f2, [half];
  st.global.f32 [%rd1+8], %f2;
  ld.global.s32 %r2, [neg+8];
  st.global.u32 [%rd1+12], %r2;
  mov.u64 %rd3, _$_str;
  ld.u8 %r3, [%rd3+2];
  st.global.u32 [%rd1+16], %r3;
  ld.global.u32 %r4, [big+4];
  st.global.u32 [%rd1+20], %r4;
  ld.global.u32 %r5, [grid2+8];
  st.global.u32 [%rd1+24], %r5;
  ld.global.u32 %r6, [grid2+12];
  st.global.u32 [%rd1+28], %r6;
  ld.global.u8 %r7, [_$_str+10];
  st.global.u32 [%rd1+32], %r7;
"""
    got, m, k = run(kernel(decls, body))
    f = lambda v: struct.unpack("<I", struct.pack("<f", v))[0]
    assert list(got[:9]) == [1000, f(-1.25), f(0.5), 2**32 - 3, 67, 0x12345678, 0, 4, 0]
    assert k.variables["counter"][0] == "global" and k.variables["coef"][0] == "const"
    assert k.variables["grid2"][2] == 24 and k.variables["_$_str"][2] == 11
    assert bytes(k.variable(m, "coef")) == bytes([0, 0, 0, 63, 0, 0, 160, 191])


def test_module_globals_keep_their_values_across_launches():
    decls = ".global .align 4 .u32 counter = 7;\n"
    body = """
  ld.global.u32 %r1, [counter];
  add.u32 %r1, %r1, 1;
  st.global.u32 [counter], %r1;
  st.global.u32 [%rd1], %r1;
"""
    text = kernel(decls, body)
    got, m, k = run(text)
    assert got[0] == 8
    got, _, _ = run(text, machine=m, k=k)
    assert got[0] == 9                                   # the same module on the same machine
    assert int(k.variable(m, "counter").view(np.uint32)[0]) == 9
    got, _, _ = run(text, machine=m)                     # a new Kernel: a new module, its own copy
    assert got[0] == 8
    got, _, _ = run(text, k=k)                           # another machine: its own copy
    assert got[0] == 8


def test_const_variables_are_read_only():
    decls = ".const .align 4 .u32 c[2] = {1, 2};\n"
    body = "  mov.u64 %rd2, c;\n  mov.u32 %r1, 5;\n  st.u32 [%rd2], %r1;\n"
    with pytest.raises(pa.IllegalAddress, match="read-only"):
        run(kernel(decls, body))


def test_address_initialiser_is_refused_by_name():
    decls = ".global .u32 a = 1;\n.global .u64 p = a;\n"
    with pytest.raises(ptx.PtxSyntaxError, match="initial value 'a' is not modelled"):
        ptx.Kernel(kernel(decls, ""))


def test_local_depot_and_stack_pointer():
    """NVRTC's per-thread array: __local_depot0 with %SP / %SPL, stored through the local
    address and read back through the generic one; each thread has its own."""
    regs = "  .local .align 4 .b8 __local_depot0[32];\n  .reg .b64 %SP;\n  .reg .b64 %SPL;\n"
    body = """
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
LOOP:
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %SPL, %rd2;
  add.u32 %r3, %r1, %r2;
  st.local.u32 [%rd3], %r3;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, 8;
  @%p1 bra LOOP;
  ld.u32 %r4, [%SP+28];
  cvta.to.local.u64 %rd4, %SP;
  ld.local.u32 %r5, [%rd4+4];
  add.u32 %r6, %r4, %r5;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd1, %rd5;
  st.global.u32 [%rd6], %r6;
"""
    text = kernel("", body, regs)
    got, _, k = run(text, nout=64, block=64)
    t = np.arange(64)
    assert np.array_equal(got[:64], (t + 7) + (t + 1))
    assert k.variables["__local_depot0"] == ("local", 0, 32)


def test_local_out_of_window_is_an_illegal_address():
    regs = "  .local .align 4 .b8 __local_depot0[8];\n"
    body = "  mov.u64 %rd2, __local_depot0;\n  ld.local.u32 %r1, [%rd2+8];\n"
    with pytest.raises(pa.IllegalAddress, match="outside the thread's 8 bytes of .local"):
        run(kernel("", body, regs))


def test_tensormap_cp_fenceproxy_copies_the_map():
    """A warp copies a 128-byte tensor map from shared to global (every lane names the same
    addresses: one copy, no race) and releases it to the tensor-map proxy."""
    text = HEAD + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .shared .align 128 .b8 map[128];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, map;
  add.u32 %r4, %r3, %r2;
  mad.lo.u32 %r5, %r1, 16777619, 7;
  st.shared.u32 [%r4], %r5;
  bar.warp.sync -1;
  cvt.u64.u32 %rd2, %r3;
  tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd1], [%rd2], 128;
  fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;
  ret;
}
"""
    m = pa.Machine()
    out = m.alloc(128, align=128)
    ptx.Kernel(text).launch(m, block=32, params={"out": out.address})
    t = np.arange(32, dtype=np.uint64)
    assert np.array_equal(out.array.view(np.uint32), ((t * 16777619 + 7) % 2**32).astype(np.uint32))
    assert not m.races
