"""Calls through a .calltargets list and .func parameters / return values in .reg (PTX ISA 9.7.12.6
call, 11.1 .callprototype / .calltargets, 7.1 .func; docs/ptx.md, "Functions and calls"): run on
the interpreter with results computed here, and the checker's verdicts written as ptxas 13.0 and
13.5 give them (the message in the comment), asked of them live where installed."""
import numpy as np
import pytest

import ptxasync as pa
from ptx_forms import judges, ptxas_verdict
from ptxasync import ptx

HEAD = ".version 8.0\n.target sm_90a\n.address_size 64\n"

INC_DBL = """
.func (.param .b32 r) inc(.param .b32 a)
{
  .reg .b32 %t;
  ld.param.b32 %t, [a];
  add.u32 %t, %t, 1;
  st.param.b32 [r], %t;
  ret;
}
.func (.param .b32 r) dbl(.param .b32 a)
{
  .reg .b32 %t;
  ld.param.b32 %t, [a];
  add.u32 %t, %t, %t;
  st.param.b32 [r], %t;
  ret;
}
.func (.reg .b32 r) rinc(.reg .b32 a)
{
  add.u32 r, a, 1;
  ret;
}
"""


def kernel(body, funcs=INC_DBL, regs=""):
    """a kernel storing %r9 of each thread to out[tid]; %r1 holds tid"""
    return HEAD + funcs + f"""
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<4>;
  .reg .pred %p<2>;
  {regs}
  mov.u32 %r1, %tid.x;
{body}
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r9;
  ret;
}}
"""


def run(text, threads=32):
    errs = [d for d in ptx.check(text) if d.severity == "error"]
    assert not errs, errs
    k = ptx.Kernel(text)
    m = pa.Machine()
    out = m.alloc(4 * threads)
    k.launch(m, block=threads, params={"out": out})
    return out.array.view(np.int32).copy()


TID = np.arange(32)


def test_an_indirect_call_through_a_calltargets_list():
    # thread 0 calls inc(20), the others dbl(20)
    got = run(kernel("""
  Ftgt: .calltargets inc, dbl;
  setp.eq.u32 %p1, %r1, 0;
  mov.u64 %rd4, inc;
  @!%p1 mov.u64 %rd4, dbl;
  {
  .param .b32 pa;
  .param .b32 pr;
  st.param.b32 [pa], 20;
  call (pr), %rd4, (pa), Ftgt;
  ld.param.b32 %r9, [pr];
  }"""))
    assert (got == np.where(TID == 0, 20 + 1, 20 * 2)).all()


def test_a_list_mixing_param_and_reg_functions_with_register_entries():
    # inc takes .param formals, rinc .reg ones: one call passes registers to either
    got = run(kernel("""
  Flist: .calltargets inc, rinc, dbl;
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %p1, %r2, 0;
  mov.u64 %rd4, rinc;
  @!%p1 mov.u64 %rd4, dbl;
  call (%r9), %rd4, (%r1), Flist;"""))
    assert (got == np.where(TID % 2 == 0, TID + 1, 2 * TID)).all()


def test_an_address_outside_the_list_is_an_error_naming_the_line_and_the_value():
    text = kernel("""
  Fone: .calltargets inc;
  mov.u64 %rd4, dbl;
  call (%r9), %rd4, (%r1), Fone;""")
    line = text[:text.index("call (%r9), %rd4")].count("\n") + 1
    with pytest.raises(pa.IllegalInstruction, match=rf"indirect call to 0x[0-9a-f]+ \('dbl'\), which is not a "
                       rf"function of the call's .calltargets list \(1 of them\).*PTX line {line}: call"):
        run(text, threads=1)


def test_reg_parameters_as_the_isa_s_example_writes_them():
    got = run(kernel("  call (%r9), rinc, (%r1);"))
    assert (got == TID + 1).all()


def test_immediates_and_one_register_as_argument_and_return():
    got = run(kernel("  add.u32 %r9, %r1, 3;\n  call (%r9), rinc, (%r9);\n  call (%r2), rinc, (7);\n"
                     "  add.u32 %r9, %r9, %r2;"))
    assert (got == TID + 4 + 8).all()


MORE = INC_DBL + """
.func (.reg .b32 r, .reg .b32 s) two(.reg .b32 a, .param .b32 b)
{
  .reg .b32 %t;
  ld.param.b32 %t, [b];
  add.u32 r, a, %t;
  mul.lo.u32 s, a, 3;
  add.u32 a, a, 1000;     // the callee's own copy: the caller's register keeps its value
  ret;
}
.func (.reg .b64 r) hi(.reg .b64 a)
{
  add.u64 r, a, 4294967296;
  ret;
}
.func (.reg .f32 r) fneg(.reg .f32 a)
{
  neg.f32 r, a;
  ret;
}
.func (.param .b32 r) pdbl(.reg .b32 a)
{
  .reg .b32 %t;
  mov.u32 %t, a;
  add.u32 %t, %t, %t;
  st.param.b32 [r], %t;
  ret;
}
"""


def test_mixed_formals_two_return_values_and_pass_by_value():
    got = run(kernel("  call (%r2, %r3), two, (%r1, 5);\n  mul.lo.u32 %r9, %r2, 100000;\n"
                     "  mad.lo.u32 %r9, %r3, 100, %r9;\n  add.u32 %r9, %r9, %r1;", funcs=MORE))
    assert (got == (TID + 5) * 100000 + 3 * TID * 100 + TID).all()


def test_64_bit_and_f32_formals_a_param_return_and_a_dropped_one():
    got = run(kernel("""
  cvt.u64.u32 %rd4, %r1;
  call (%rd5), hi, (%rd4);
  shr.u64 %rd5, %rd5, 32;
  cvt.u32.u64 %r2, %rd5;
  cvt.rn.f32.u32 %f1, %r1;
  call (%f2), fneg, (%f1);
  cvt.rzi.s32.f32 %r3, %f2;
  call (%r4), pdbl, (%r1);
  call (_), rinc, (%r1);
  mad.lo.s32 %r9, %r3, 10, %r2;
  mad.lo.s32 %r9, %r4, 1000, %r9;""", funcs=MORE))
    assert (got == 1 - 10 * TID + 2 * TID * 1000).all()


def test_a_reg_function_through_a_param_prototype():
    got = run(kernel("""
  proto: .callprototype (.param .b32 _) _ (.param .b32 _);
  mov.u64 %rd4, rinc;
  call (%r9), %rd4, (%r1), proto;"""))
    assert (got == TID + 1).all()


SUMTO = """
.func (.reg .b32 r) sumto(.reg .b32 n)
{
  .reg .pred %q;
  .reg .b32 %s;
  setp.eq.u32 %q, n, 0;
  mov.u32 r, 0;
  @%q bra DONE;
  sub.u32 %s, n, 1;
  call (%s), sumto, (%s);
  add.u32 r, %s, n;       // n is this activation's: the callee's registers were saved
DONE:
  ret;
}
"""


def test_recursion_through_a_reg_parameter_function():
    got = run(kernel("  add.u32 %r2, %r1, 40;\n  call (%r9), sumto, (%r2);", funcs=SUMTO))
    n = TID + 40
    assert (got == n * (n + 1) // 2).all()
    got = run(kernel("  mov.u32 %r2, 1000;\n  call (%r9), sumto, (%r2);", funcs=SUMTO), threads=1)
    assert got[0] == 1000 * 1001 // 2


# ---- the checker against ptxas ----

FUNCS = INC_DBL + """
.func (.param .b64 r) wide(.param .b64 a)
{
  ret;
}
.func (.param .b32 r) finc(.param .f32 a)
{
  ret;
}
.func (.reg .b32 r) h16(.reg .b16 a)
{
  ret;
}
.func (.reg .f32 r) fr(.reg .f32 a)
{
  ret;
}
.func (.reg .b32 r) al(.reg .align 8 .b32 a)
{
  ret;
}
.global .u32 gv;
"""

CALL = "mov.u64 %rd4, inc;\n  call (%r9), %rd4, (%r1), Ftgt;"
CASES = [
    # lists: only the calls through them are checked against their functions' signatures
    ("Ftgt: .calltargets inc, dbl;\n  " + CALL, True),
    ("Ftgt: .calltargets inc, finc;\n  " + CALL, True),       # .b32 and .f32 formals: one width
    ("Ftgt: .calltargets inc, rinc;\n  " + CALL, True),
    ("Ftgt: .calltargets inc, wide;", True),
    ("Ftgt: .calltargets inc, wide;\n  " + CALL, False),      # Type of argument does not match formal parameter 'a'
    ("Ftgt: .calltargets inc, k;\n  " + CALL, False),         # Call has wrong number of parameters
    ("Ftgt: .calltargets inc, nosuch;", False),               # Unknown symbol 'nosuch'
    ("Ftgt: .calltargets inc, gv;", False),                   # Illegal call target, device function expected
    ("Ftgt: .calltargets inc, later;", False),                # Illegal call target, device function expected
    (".calltargets inc;", False),                             # Parsing error near '.calltargets': syntax error
    ("Ftgt: .calltargets inc;\n  call (%r9), inc, (%r1), Ftgt;", False),   # Argument 1 of instruction 'call': must be register
    ("mov.u64 %rd4, inc;\n  call (%r9), %rd4, (%r1), Ftgt;\n  Ftgt: .calltargets inc;", False),
    # ^ Label expected for forward reference of 'Ftgt'
    ("{\n  Ftgt: .calltargets inc;\n  }\n  " + CALL, False),   # Unknown symbol 'Ftgt'
    ("Ftgt: .branchtargets L1;\n  L1:\n  " + CALL, False),    # Call target not recognized
    ("Ftgt: .calltargets inc;\n  mov.u64 %rd4, inc;\n  call (%r9), %rd4, (%r1, %r1), Ftgt;", False),
    # ^ Call has wrong number of parameters
    # .reg formals: a register of the formal's width, any of .b/.u/.s/.f
    ("call (%r9), rinc, (%r1);", True),
    ("call (%r9), rinc, (%f1);", True),
    ("call (%f2), fr, (%r1);", True),
    ("call (%r9), rinc, (%rd1);", False),                     # Type of argument does not match formal parameter 'a'
    ("call (%rd2), rinc, (%r1);", False),                     # Type of argument does not match formal parameter 'r'
    ("call (%r9), al, (%r1);", False),                        # Alignment of argument does not match formal parameter 'a'
    ("call (%r9), h16, (%r1);", False),
    # ^ In ABI compilation, passing predicate, 8-bit and 16-bit parameters to device functions is not supported
    # immediates: integer ones fit .b/.u/.s formals, floating-point ones .b/.f formals
    ("call (%r9), rinc, (7);", True),
    ("call (%f2), fr, (1.5);", True),
    ("call (%f2), fr, (3);", False),                          # Type of argument does not match formal parameter 'a'
    ("call (%r9), finc, (3);", False),                        # Type of argument does not match formal parameter 'a'
    # '_' takes a return value, gives no argument
    ("call (_), rinc, (%r1);", True),
    ("call (%r9), rinc, (_);", False),                        # Illegal argument for formal parameter 'a'
]


def module(line):
    return HEAD + FUNCS + """
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<4>;
  """ + line + """
  ret;
}
.func (.param .b32 r) later(.param .b32 a)
{
  ret;
}
"""


HEADERS = [
    (".func (.reg .b32 r) f(.reg .b32 a)\n{\n  ret;\n}", True),
    (".func (.reg .b16 r) f(.reg .pred a)\n{\n  ret;\n}", True),       # refused only in a call
    (".func f(.reg .b32 a[2])\n{\n  ret;\n}", False),                   # Variable 'a' cannot be allocated into a register
    (".entry e(.reg .b32 a)\n{\n  ret;\n}", False),                     # Entry parameter 'a' must have .param state space
    (".func (.param .b32 r) f(.param .b32 a)\n{\n  call (r), inc, (a);\n  ret;\n}", False),
    # ^ Formal parameter 'r' declared in .param space cannot be used as argument to call
]


def header_module(text):
    return HEAD + INC_DBL + text + "\n.visible .entry k()\n{\n  ret;\n}\n"


ALL = [(module(line), ok) for line, ok in CASES] + [(header_module(t), ok) for t, ok in HEADERS]
IDS = [line.split("\n")[-1][:60] for line, _ in CASES] + [t.split("\n")[0][:60] for t, _ in HEADERS]


@pytest.mark.parametrize("release", ["13.0", "13.5"])
@pytest.mark.parametrize("text,ok", ALL, ids=IDS)
def test_check_gives_ptxas_s_verdict(text, ok, release):
    errs = [d for d in ptx.check(text, ptxas=release) if d.severity == "error"]
    assert (not errs) == ok, errs


@pytest.mark.parametrize("release,path", judges())
def test_the_verdicts_are_ptxas_s(release, path):
    for text, ok in ALL:
        v = ptxas_verdict(text, "sm_90a", path)
        if v.crash:
            continue
        assert v.accepted == ok, (release, text, v.message)


def test_format_prints_lists_and_reg_formals_to_text_that_checks_clean():
    text = kernel("  Ftgt: .calltargets inc, rinc;\n  mov.u64 %rd4, inc;\n  call (%r9), %rd4, (%r1), Ftgt;")
    out = ptx.format(text)
    assert ".calltargets inc, rinc;" in out and ".func (.reg .b32 r) rinc(" in out
    assert not [d for d in ptx.check(out) if d.severity == "error"]
    assert ptx.format(out) == out
