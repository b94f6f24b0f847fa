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


def test_address_initialisers_hold_the_variables_addresses():
    """PTX ISA 5.4.4 (initializers): a variable's name in an initialiser is its address, and
    generic(name) its generic address, either with an offset added; a 32-bit element holds the
    address's low 32 bits (ptxas 13.0 assembles every line below). In the model a module
    variable's address is where ``globals(machine)`` puts it, at the offset ``variables`` names,
    for .const ones as for .global ones."""
    decls = (".const .align 4 .u32 c0 = 42;\n.global .align 4 .u32 bar[3] = {2, 3, 5};\n"
             ".global .align 8 .u64 p1 = c0;\n.global .align 8 .u64 p2 = generic(c0);\n"
             ".global .align 8 .u64 parr[3] = {generic(bar), generic(bar)+4, bar+8};\n"
             ".global .align 4 .u32 p3 = bar+4;\n")
    text = kernel(decls, "  ld.global.u64 %rd2, [parr+8];\n  ld.u32 %r1, [%rd2];\n  st.global.u32 [%rd1], %r1;\n")
    assert not [d for d in ptx.check(text) if d.severity == "error"]
    got, m, k = run(text)
    base = k.globals(m).address
    addr = {name: base + off for name, (_, off, _) in k.variables.items()}
    u64 = lambda n: [int(v) for v in k.variable(m, n).view(np.uint64)]  # noqa: E731
    assert u64("p1") == u64("p2") == [addr["c0"]]
    assert u64("parr") == [addr["bar"], addr["bar"] + 4, addr["bar"] + 8]
    assert int(k.variable(m, "p3").view(np.uint32)[0]) == (addr["bar"] + 4) & 0xFFFFFFFF
    assert got[0] == 3                      # bar[1], through the address parr[1] holds


def test_call_table_of_function_addresses():
    """5.4.4: a function's name in an initialiser is its address, which an indirect call through a
    .callprototype takes (9.7.12.6): a table of two .func addresses, each thread calling entry
    tid % 2 (f(x) = x + 1, g(x) = 10 x; ptxas 13.0 assembles the module)."""
    funcs = "".join(f""".func (.param .b32 r) {name}(.param .b32 x)
{{
  .reg .b32 %a<2>;
  ld.param.b32 %a0, [x];
  {op} %a1, %a0, {c};
  st.param.b32 [r], %a1;
  ret;
}}
""" for name, op, c in (("f", "add.u32", 1), ("g", "mul.lo.u32", 10)))
    decls = funcs + ".global .align 8 .u64 tbl[2] = {f, g};\n"
    body = """  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  mul.wide.u32 %rd2, %r2, 8;
  mov.u64 %rd3, tbl;
  add.s64 %rd3, %rd3, %rd2;
  ld.global.u64 %rd4, [%rd3];
  {
  .param .b32 pr;
  .param .b32 px;
  st.param.b32 [px], %r1;
  proto: .callprototype (.param .b32 _) _ (.param .b32 _);
  call (pr), %rd4, (px), proto;
  ld.param.b32 %r3, [pr];
  }
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd5, %rd1, %rd5;
  st.global.u32 [%rd5], %r3;
"""
    got, _, _ = run(kernel(decls, body), nout=8, block=8)
    assert list(got[:8]) == [t * 10 if t & 1 else t + 1 for t in range(8)]


def test_address_initialiser_of_an_unknown_name_is_refused_by_name():
    decls = ".global .u64 p = nothere;\n"
    with pytest.raises(ptx.PtxSyntaxError, match="nothere"):
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
