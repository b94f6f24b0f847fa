""".func and call on the interpreter (docs/ptx.md, "Functions and calls"): direct calls, call.uni,
calls with no return or no argument, register and immediate arguments, indirect calls through a
.callprototype, recursion with a frame per activation, calls on divergent lanes, the depth limit;
what the checker says of a bad call, against ptxas where it is installed; and NVRTC's
__noinline__ functions, recursion and function pointers (tests/data/ptx/calls/, written by
tools/calls_kernels.py), their results computed here in Python."""
import math
import os

import numpy as np
import pytest

import ptx_forms as pf
import ptxasync as pa
from ptxasync import ptx

import testpaths

DATA = os.path.join(testpaths.REPO, "tests", "data", "ptx", "calls")
HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"

FUNCS = """
.func (.param .b32 rv) add3(.param .b32 a, .param .b32 b, .param .b32 c)
{
  .reg .b32 %r<5>;
  ld.param.b32 %r1, [a];
  ld.param.b32 %r2, [b];
  ld.param.b32 %r3, [c];
  add.s32 %r4, %r1, %r2;
  add.s32 %r4, %r4, %r3;
  st.param.b32 [rv], %r4;
  ret;
}
.func (.param .b32 rv) twice(.param .b32 a)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
  shl.b32 %r2, %r1, 1;
  st.param.b32 [rv], %r2;
  ret;
}
.func (.param .b32 rv) square(.param .b32 a)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
  mul.lo.s32 %r2, %r1, %r1;
  st.param.b32 [rv], %r2;
}
.global .align 4 .u32 counter;
.func bump()
{
  .reg .b32 %r<2>;
  atom.global.add.u32 %r1, [counter], 1;
  ret;
}
"""


def kernel(body, funcs=FUNCS, regs=""):
    return HEAD + funcs + f"""
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  {regs}
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
{body}
  st.global.u32 [%rd3], %r9;
  ret;
}}
"""


def run(text, threads=32, **kw):
    k = ptx.Kernel(text)
    m = pa.Machine()
    out = m.alloc(4 * threads)
    k.launch(m, block=threads, params={"out": out}, **kw)
    return k, m, out.array.view(np.int32).copy()


TID = np.arange(32)


def test_direct_call_with_param_scopes_as_nvrtc_writes_them():
    _, _, got = run(kernel("""
  {
  .param .b32 param0;
  st.param.b32 [param0+0], %r1;
  .param .b32 param1;
  st.param.b32 [param1+0], 10;
  .param .b32 param2;
  st.param.b32 [param2+0], 100;
  .param .b32 retval0;
  call.uni (retval0), add3, (param0, param1, param2);
  ld.param.b32 %r9, [retval0+0];
  }"""))
    assert (got == TID + 110).all()


def test_register_and_immediate_arguments_and_a_register_return():
    _, _, got = run(kernel("  call (%r9), add3, (%r1, 7, %r1);"))
    assert (got == 2 * TID + 7).all()


def test_a_body_that_runs_off_its_end_returns():
    _, _, got = run(kernel("  call (%r9), square, (%r1);"))
    assert (got == TID * TID).all()


def test_no_return_and_no_arguments():
    k, m, got = run(kernel("  call bump;\n  call.uni bump, ();\n  mov.u32 %r9, 5;"))
    assert (got == 5).all()
    assert int(k.variable(m, "counter").view(np.uint32)[0]) == 64


def test_indirect_call_through_a_prototype_on_divergent_lanes():
    body = """
  proto: .callprototype (.param .b32 _) _ (.param .b32 _);
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p1, %r2, 0;
  mov.u64 %rd4, twice;
  mov.u64 %rd5, square;
  selp.b64 %rd6, %rd4, %rd5, %p1;
  {
  .param .b32 param0;
  st.param.b32 [param0], %r1;
  .param .b32 retval0;
  call (retval0), %rd6, (param0), proto;
  ld.param.b32 %r9, [retval0];
  }"""
    _, _, got = run(kernel(body))
    assert (got == np.where(TID % 2 == 0, 2 * TID, TID * TID)).all()


def test_a_call_on_some_lanes_only():
    _, _, got = run(kernel("""
  mov.u32 %r9, -1;
  setp.lt.u32 %p1, %r1, 5;
  @%p1 call (%r9), twice, (%r1);"""))
    assert (got == np.where(TID < 5, 2 * TID, -1)).all()


# recursion as nvcc writes it: a .local depot per activation, %SP / %SPL
RECURSIVE = """
.func (.param .b32 rv) sumto(.param .b32 n)
{
  .local .align 4 .b8 __local_depot0[8];
  .reg .b64 %SP;
  .reg .b64 %SPL;
  .reg .b32 %r<6>;
  .reg .pred %p<2>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  ld.param.b32 %r1, [n];
  st.local.u32 [%SPL], %r1;
  setp.eq.s32 %p1, %r1, 0;
  mov.u32 %r5, 0;
  @%p1 bra DONE;
  add.s32 %r2, %r1, -1;
  {
  .param .b32 param0;
  st.param.b32 [param0], %r2;
  .param .b32 retval0;
  call.uni (retval0), sumto, (param0);
  ld.param.b32 %r3, [retval0];
  }
  ld.u32 %r4, [%SP];
  add.s32 %r5, %r3, %r4;
DONE:
  st.param.b32 [rv], %r5;
  ret;
}
"""


def test_recursion_keeps_a_frame_per_activation():
    # each activation stores its n in its own .local slot and reads it back after the call
    _, _, got = run(kernel("  add.u32 %r2, %r1, 40;\n  call (%r9), sumto, (%r2);", funcs=RECURSIVE))
    n = TID + 40
    assert (got == n * (n + 1) // 2).all()


def test_recursion_past_the_depth_limit_is_an_error_naming_the_line_and_the_limit():
    text = kernel("  mov.u32 %r2, 5000;\n  call (%r9), sumto, (%r2);", funcs=RECURSIVE)
    line = text[:text.index("call.uni (retval0), sumto")].count("\n") + 1
    with pytest.raises(pa.PtxAsyncError, match=rf"nest 1025 calls deep.*holds 1024.*PTX line {line}: call\.uni"):
        run(text, threads=1)
    # 1000 deep is within it
    _, _, got = run(kernel("  mov.u32 %r2, 1000;\n  call (%r9), sumto, (%r2);", funcs=RECURSIVE), threads=1)
    assert got[0] == 1000 * 1001 // 2


def test_weak_and_visible_functions_run_an_extern_one_without_a_body_is_refused():
    weak = FUNCS.replace(".func (.param .b32 rv) twice", ".weak .func (.param .b32 rv) twice").replace(
        ".func (.param .b32 rv) square", ".visible .func (.param .b32 rv) square")
    _, _, got = run(kernel("  call (%r9), twice, (%r1);\n  call (%r9), square, (%r9);", funcs=weak))
    assert (got == 4 * TID * TID).all()
    ext = FUNCS + ".extern .func (.param .b32 rv) elsewhere(.param .b32 a);\n"
    with pytest.raises(ptx.PtxSyntaxError, match="'elsewhere' has no body in this module"):
        ptx.Kernel(kernel("  call (%r9), elsewhere, (%r1);", funcs=ext))


def test_an_indirect_call_to_a_function_of_another_signature_is_an_error():
    body = """
  proto: .callprototype (.param .b32 _) _ (.param .b32 _);
  mov.u64 %rd4, add3;
  call (%r9), %rd4, (%r1), proto;"""
    with pytest.raises(pa.IllegalInstruction, match="indirect call to 'add3'.*not the .callprototype's"):
        run(kernel(body), threads=1)


def test_an_indirect_call_to_an_address_of_no_function_is_an_error():
    body = """
  proto: .callprototype (.param .b32 _) _ (.param .b32 _);
  mov.u64 %rd4, 4096;
  call (%r9), %rd4, (%r1), proto;"""
    with pytest.raises(pa.IllegalInstruction, match="indirect call to 0x1000, which is not the address of a .func"):
        run(kernel(body), threads=1)


# ---- the checker: each bad call is an error as ptxas's, and the good ones pass ----

CHECK = HEAD + FUNCS + """
.func (.param .b64 rv) wide(.param .b64 a)
{
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .reg .b16 %h<2>;
  proto1: .callprototype (.param .b32 _) _ (.param .b32 _);
  {
  .param .b32 p0;
  .param .b32 p1;
  .param .b32 p2;
  .param .b64 q0;
  .param .b32 r0;
  .param .b64 r64;
  .param .align 4 .b8 a4[4];
  CALL
  }
  ret;
}
"""

CALLS = [
    ("call (r0), add3, (p0, p1, p2);", None),
    ("call.uni (r0), add3, (p0, %r1, 5);", None),
    ("call bump;", None),
    ("call bump, ();", None),
    ("mov.u64 %rd1, twice; call (r0), %rd1, (p0), proto1;", None),
    ("call (r0), add3, (p0, p1);", "wrong number of parameters"),
    ("call add3, (p0, p1, p2);", "wrong number of parameters"),
    ("call (r0), bump;", "wrong number of parameters"),
    ("call (r0), nosuch, (p0);", "not a declared symbol"),
    ("call (r0), k, (p0);", "is an .entry"),
    ("call (r0), add3, (q0, p1, p2);", "does not match formal parameter 'a'"),
    ("call (r64), twice, (p0);", "does not match formal parameter 'rv'"),
    ("call (r0), twice, (a4);", "does not match formal parameter 'a'"),
    ("call (r0), twice, (%h1);", "does not match formal parameter 'a'"),
    ("call (r0), wide, (%rd1);", "does not match formal parameter 'rv'"),
    ("mov.u64 %rd1, twice; call (r0), %rd1, (p0, p1), proto1;", "wrong number of parameters"),
    ("mov.u64 %rd1, twice; call (r0), %rd1, (p0);", "names a .callprototype"),
    ("mov.u64 %rd1, twice; call (r0), %rd1, (p0), twice;", "neither a .callprototype label"),
    ("call (r0), twice, (p0), proto1;", "register holding a function's address"),
    ("call.foo bump;", "call"),
]


@pytest.mark.parametrize("line,error", CALLS, ids=[c[0] for c in CALLS])
def test_the_checker_judges_a_call_as_ptxas_does(line, error):
    text = CHECK.replace("CALL", line)
    errs = [d for d in ptx.check(text, ptxas="13.0") if d.severity == "error"]
    if error is None:
        assert not errs, errs
    else:
        assert errs and error in errs[0].message, errs
        assert errs[0].line == text[:text.index(line)].count("\n") + 1
    path = ptx.ptxas_installed().get("13.0")
    if path:
        v = pf.ptxas_verdict(text, "sm_90", path)
        if not v.crash:
            assert v.accepted == (error is None), v.message


def test_a_store_to_an_input_parameter_is_refused_a_return_parameter_takes_one():
    text = HEAD + """
.func (.param .b32 rv) f(.param .b32 a)
{
  .reg .b32 %r<2>;
  st.param.b32 [a], %r1;
  st.param.b32 [rv], %r1;
  ret;
}
.visible .entry k()
{
  ret;
}
"""
    errs = [d for d in ptx.check(text) if d.severity == "error"]
    line = text[:text.index("st.param.b32 [a]")].count("\n") + 1
    assert len(errs) == 1 and errs[0].line == line and "'a' is an input parameter" in errs[0].message


def test_format_prints_calls_and_prototypes_to_text_that_checks_clean():
    text = CHECK.replace("CALL", "mov.u64 %rd1, twice; call (r0), %rd1, (p0), proto1; call bump, ();")
    out = ptx.format(text)
    assert "call (r0), %rd1, (p0), proto1;" in out and ".callprototype (.param .b32 _) _ (.param .b32 _);" in out
    assert "call bump, ();" in out
    assert not [d for d in ptx.check(out) if d.severity == "error"]
    assert ptx.format(out) == out


# ---- NVRTC's code: __noinline__ functions, recursion, function pointers, a .local array ----

def rec(n, depth):
    buf = [n * (i + 1) + depth for i in range(4)]
    v = buf[n & 3]
    return v if depth <= 0 else v + rec(int(n / 2), depth - 1)     # C's division truncates


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_nvrtc_functions_recursion_and_function_pointers(arch):
    k = ptx.Kernel(open(os.path.join(DATA, f"calls_funcs.{arch}.ptx")).read())
    n = 150
    x = np.random.default_rng(7).integers(-40, 60, n).astype(np.int32)
    m = pa.Machine(policy="random", seed=5)
    gx, out, fout = m.register(x), m.alloc(16 * n), m.alloc(4 * n)
    k.launch(m, grid=3, block=64, params={"calls_param_0": gx, "calls_param_1": out, "calls_param_2": fout,
                                          "calls_param_3": n})
    ops = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b]
    want = np.array([[math.factorial(max(v & 7, 1)), rec(v, v & 3), ops[i % 3](v, i),
                      math.factorial(max(i & 5, 1)) if i & 1 else -1] for i, v in enumerate(x.tolist())])
    assert (out.array.view(np.int32).reshape(n, 4) == want).all()
    fwant = x.astype(np.float32) * np.arange(n, dtype=np.float32) + np.float32(0.5)
    assert (fout.array.view(np.float32)[:n] == fwant).all()
    assert int(k.variable(m, "hits").view(np.int32)[0]) == len(range(0, n, 4))
