"""PTX text that asks for more than a host has, or that the front end once read wrongly: every
size and count is read in 64 bits and bounded, and the error names the line and the limit
(docs/ptx.md, "Limits"); never a hang, a bare MemoryError, a silent truncation, or a module whose
rest goes unchecked."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx
from ptxasync.ptx import PtxSyntaxError

HEAD = ".version {version}\n.target {target}\n.address_size 64\n"


def kernel(body, params="", version="8.6", target="sm_90a"):
    """HEAD (3 lines), then `.visible .entry k(params)` at line 4, `{` at 5, the body from line 6."""
    return HEAD.format(version=version, target=target) + f".visible .entry k({params})\n{{\n{body}\n  ret;\n}}\n"


def errors(text):
    return [d for d in ptx.check(text) if d.severity == "error"]


# --- registers: a range past 2^20 is refused at Kernel(), past 2^32 - 1 at the parse --------------

REG_HANG = r"""
import sys
sys.path.insert(0, sys.argv[1])
from ptxasync import ptx
text = (".version 8.6\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
        "  .reg .b32 %r<" + sys.argv[2] + ">;\n  mov.u32 %r0, 1;\n  ret;\n}\n")
try:
    ptx.Kernel(text)
except ptx.PtxSyntaxError as e:
    print(e)
"""


@pytest.mark.parametrize("n", [2**20 - 1, 2**31 - 1, 2**31, 2**32 - 1])
def test_a_huge_register_range_is_refused_naming_its_line_and_the_limit(n):
    # was: a 32-bit capacity doubled to 0 while the register file grew (a hang at 100% CPU
    # holding the GIL, for 2^31 - 1 and 2^31), or a MemoryError with no message (2^32 - 1)
    src = os.path.dirname(os.path.dirname(pa.__file__))
    r = subprocess.run([sys.executable, "-c", REG_HANG, src, str(n)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"6:13: error: %r<{n}>: the kernel declares more registers a thread than the interpreter holds " \
           f"(at most 1048576, 2^20)" in r.stdout


def test_a_register_range_past_32_bits_is_an_error_not_zero_registers():
    # was: 2^32 taken as zero registers (then "%r0 is not a declared register")
    text = kernel("  .reg .b32 %r<4294967296>;\n  mov.u32 %r0, 1;")
    (d,) = errors(text)
    assert (d.line, d.message) == (6, "the register range <4294967296> does not fit in 32 bits (at most "
                                      "4294967295 names)")
    # ptxas takes any range that fits (it allocates the names it sees), and so does the checker
    assert errors(kernel("  .reg .b32 %r<3000000000>;\n  mov.u32 %r2999999999, 1;")) == []
    # %r<0> declares no register
    (d,) = errors(kernel("  .reg .b32 %r<0>;\n  mov.u32 %r0, 1;"))
    assert "'%r0' is not a declared register" in d.message


def test_a_launch_whose_register_file_passes_1_gib_is_refused_naming_the_declaration():
    k = ptx.Kernel(kernel("  .reg .b32 %r<200000>;\n  mov.u32 %r199999, 1;"))
    m = pa.Machine(smem_bytes=1024)
    with pytest.raises(MemoryError, match=r"the launch's registers would take 1,638,432,768 bytes \(1024 threads "
                                          r"of a cluster x 200,004 registers x 8 bytes; the largest declaration, "
                                          r"200,000 registers, at PTX line 6\); the interpreter holds at most "
                                          r"1,073,741,824 bytes \(1 GiB\)"):
        k.launch(m, block=1024)
    k.launch(m, block=32)                       # 51 MB: runs


# --- parameter space: ptxas 13.0's limit, checked before anything is allocated -------------------

@pytest.mark.parametrize("version,size,ok", [("8.6", 32764, True), ("8.6", 32765, False), ("8.1", 32764, True),
                                             ("8.0", 4352, True), ("8.0", 4353, False),
                                             ("8.6", 2**31 - 1, False), ("8.6", 2**32, False),
                                             ("8.6", 2**63 - 1, False)])
def test_parameter_space_is_bounded_as_ptxas_bounds_it(version, size, ok):
    # was: any size passed check and Kernel() (kept in 32 bits: 2^32 was 0 bytes), and launch()
    # allocated the whole block before looking at the value (2 GiB; 2^63 - 1: a bare MemoryError)
    text = kernel("", f".param .align 64 .b8 tmap[{size}]", version=version)
    if ok:
        assert errors(text) == []
        assert ptx.Kernel(text).params == {"tmap": (0, size, True)}
        return
    limit = 32764 if version >= "8.1" else 4352
    (d,) = errors(text)
    assert d.line == 4 and d.message.startswith(f"entry function 'k' uses too much parameter space: {size} bytes; "
                                                f"ptxas 13.0 allows {limit}")
    t0 = time.perf_counter()
    with pytest.raises(PtxSyntaxError, match="too much parameter space"):
        ptx.Kernel(text)
    assert time.perf_counter() - t0 < 5


def test_parameter_space_counts_alignment_and_every_parameter():
    text = kernel("", ".param .u32 a, .param .align 64 .b8 tmap[32704]")   # 4, then 64-aligned: 64 + 32704
    assert [d.message for d in errors(text)] == ["entry function 'k' uses too much parameter space: 32768 bytes; "
                                                 "ptxas 13.0 allows 32764 (PTX ISA 8.1 and later; 4352 before)"]
    assert errors(kernel("", ".param .u32 a, .param .align 64 .b8 tmap[32700]")) == []


# --- shared variables: 64-bit sizes, bounded by the target's static shared data -----------------

@pytest.mark.parametrize("target,limit", [("sm_90a", 232448), ("sm_100a", 232448), ("sm_90", 49152),
                                          ("sm_80", 49152)])
def test_a_shared_variable_past_the_targets_shared_data_is_refused(target, limit):
    # was: .shared .b8 s[4294967296] taken as 0 bytes, the next variable at the same address
    for decl, size in ((f"s[{limit + 1}]", limit + 1), ("s[4294967296]", 2**32), ("s[4][65536]", 2**18)):
        if size <= limit:
            continue
        text = kernel(f"  .shared .align 16 .b8 {decl};\n  .reg .b32 %r<2>;\n  mov.u32 %r1, s;", target=target)
        (d,) = errors(text)
        assert (d.line, d.message) == (6, f"the .shared variable 's' takes {size} bytes; a CTA's static shared data "
                                          f"is at most {limit} bytes on {target}")
    assert errors(kernel(f"  .shared .align 16 .b8 s[{limit}];", target=target)) == []


def test_shared_variables_are_placed_one_after_the_other_every_dimension_counted():
    text = kernel("  .shared .align 16 .b8 s[4][1024];\n  .shared .align 16 .b8 t[16];\n  .reg .b32 %r<3>;\n"
                  "  mov.u32 %r1, s;\n  mov.u32 %r2, t;")
    assert ptx.Kernel(text)._k.info["static_smem"] == 4096 + 16
    # the sum over the variables is bounded too, naming the variable that crosses it
    text = kernel("  .shared .align 16 .b8 s[232448];\n  .shared .align 16 .b8 t[16];\n  .reg .b32 %r<3>;\n"
                  "  mov.u32 %r1, s;\n  mov.u32 %r2, t;")
    with pytest.raises(PtxSyntaxError, match=r"7:3: error: the .shared variables up to 't' take 232464 bytes; "
                                             r"the limit is 232448 bytes on sm_90a"):
        ptx.Kernel(text)


# --- a loop that never waits, a loop that never ends ----------------------------------------------

ASYNC_LOOP = """  .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  .shared .align 16 .b8 s[64];
  ld.param.u64 %rd1, [g];
  mov.u32 %r1, s;
  mov.u32 %r2, 0;
L:
  cp.async.ca.shared.global [%r1], [%rd1], 4;
  add.u32 %r2, %r2, 1;
  setp.lt.u32 %p1, %r2, {n};
  @%p1 bra L;"""


def test_a_loop_of_copies_that_never_waits_stops_at_the_pending_limit():
    # was: every copy kept (a MemoryError with no message at 2^22 of them), and with the race
    # checker the time grew with the square of their number (400,000 instructions: 37 s)
    k = ptx.Kernel(kernel(ASYNC_LOOP.format(n=10**9), ".param .u64 g"))
    m = pa.Machine(smem_bytes=1024)
    g = m.register(np.zeros(64, np.uint8))
    with pytest.raises(MemoryError, match=r"^1,001 asynchronous operations pending at once that no thread has "
                                          r"waited for; the launch's limit is 1,000 \(launch\(max_pending=...\)\): "
                                          r"does the kernel wait for what it issues\? \[PTX line 12: "
                                          r"cp.async.ca.shared.global; CTA 0 \(ctaid 0,0,0\) thread 0\]$"):
        k.launch(m, block=1, params={"g": g}, max_pending=1000)
    m2 = pa.Machine(smem_bytes=1024, race_checks=False)
    g2 = m2.register(np.zeros(64, np.uint8))
    t0 = time.perf_counter()
    with pytest.raises(MemoryError, match=r"^32,769 asynchronous operations pending .* limit is 32,768 "):
        k.launch(m2, block=1, params={"g": g2})         # the default
    assert time.perf_counter() - t0 < 30


def test_the_instruction_limit_names_itself():
    k = ptx.Kernel(kernel("  .reg .b32 %r<2>;\nL:\n  add.u32 %r1, %r1, 1;\n  bra L;"))
    with pytest.raises(pa.PtxAsyncError, match=r"ran past its instruction limit \(max_instructions\) at line [89]: "
                                               r"a loop that never ends\? \(max_instructions = 1,000\) \[PTX line [89]: "):
        k.launch(pa.Machine(smem_bytes=1024), block=1, max_instructions=1000)
    with pytest.raises(ValueError, match="max_pending must be an int"):
        k.launch(pa.Machine(smem_bytes=1024), block=1, max_pending=-1)


# --- initialisers: parsed, kept, checked; the rest of the module checked after them --------------

def test_the_module_after_a_global_initialiser_is_checked():
    # was: an initialiser in { } swallowed the module up to the next `x;`: no diagnostic at all
    for decl in (".global .align 4 .b32 tbl[4] = {1, 2, 3, 4};", ".global .b32 g = 5;",
                 ".const .b32 c[2][2] = {{7, 8}, {9}};", ".global .b32 tbl[1] = {1};\n.global .u64 p = generic(tbl);",
                 ".global .f32 f[] = {0f3F800000, 1.5};"):
        text = HEAD.format(version="8.6", target="sm_90a") + decl + """
.visible .entry k()
{
  .reg .b32 %r<4>;
  bogus.u32 %r1, 1;
  add.u32 %r1, %r9, 1;
  ret;
}
"""
        msgs = [d.message for d in errors(text)]
        assert "unknown instruction 'bogus.u32'" in msgs and \
               "operand 2 (a) of add: '%r9' is not a declared register" in msgs, (decl, msgs)


def test_the_command_line_rejects_what_follows_an_initialiser(tmp_path):
    f = tmp_path / "k.ptx"
    f.write_text(HEAD.format(version="8.6", target="sm_90a") + ".global .align 4 .b32 tbl[4] = {1, 2, 3, 4};\n"
                 ".visible .entry k()\n{\n  bogus.u32 1;\n  ret;\n}\n")
    r = subprocess.run([sys.executable, "-m", "ptxasync", "ptx", "check", str(f)], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(pa.__file__))))
    assert r.returncode == 1 and "k.ptx:7:3: error: unknown instruction 'bogus.u32'" in r.stderr, r.stderr


@pytest.mark.parametrize("decl,line,says", [
    (".global .b32 t[2] = {1, 2, 3};", 4, "more initial values than the 2 elements of the array's dimension"),
    (".global .b32 t[2][2] = {1, 2, 3, 4};", 4, "initial value type mismatch"),
    (".global .b32 t = {5};", 4, "initial value type mismatch"),
    (".global .b32 t = %r1;", 4, "invalid initial value '%r1'"),
    (".shared .b32 t[2] = {1, 2};", 4, "no initial value is allowed for 't' in this state space"),
    (".global .u64 t = nothere;", 4, "initial value 'nothere' is not a declared variable or function"),
])
def test_bad_initialisers_are_refused_as_ptxas_refuses_them(decl, line, says):
    text = HEAD.format(version="8.6", target="sm_90a") + decl + "\n.visible .entry k()\n{\n  ret;\n}\n"
    assert [(d.line, says in d.message) for d in errors(text)] == [(line, True)]


CONSTRUCTS = [
    ".global .align 4 .b32 tbl[4] = {1, 2, 3, 4};",
    ".global .b32 tbl[2] = {1, 2",                     # no closing brace, no ';'
    ".global .b32 tbl[2 = {1, 2};",                    # no ']'
    ".global .b32 tbl[2] = {1, 2, 3};",
    ".shared .b8 s[16]",                               # no ';'
    ".section .debug_info\n{\n.b8 1, 2",               # a section never closed
    ".visible .func (.param .b32 r f(.param .b32 a);",  # no ')'
    ".global .b32 g = {{{{{{{{{{1}}}}}}}}}};",
    "}",
    "{ { {",
]


@pytest.mark.parametrize("construct", CONSTRUCTS)
def test_no_construct_hides_the_rest_of_the_module(construct):
    """Whatever comes first, the entry after it is read: its syntax error (line + 3) is reported."""
    text = HEAD.format(version="8.6", target="sm_90a") + construct + """
.visible .entry k()
{
  mov.u32 %r1 %r2;
  ret;
}
"""
    line = 4 + construct.count("\n") + 3
    assert any(d.line == line for d in errors(text)), (line, errors(text))


# --- messages ------------------------------------------------------------------------------------

def test_a_brace_operand_is_an_operand_error_naming_it():
    # was: "the interpreter does not run 'mov.u32'" at Kernel(), and no error from check
    text = kernel("  .reg .b32 %r<40>;\n  mov.u32 %r31, {C1};")
    with pytest.raises(PtxSyntaxError, match=r"7:17: error: operand 2 \(a\) of mov: 'C1' in the vector is not a "
                                             r"register or an immediate"):
        ptx.Kernel(text)
    (d,) = errors(kernel("  .reg .b32 %r<4>;\n  add.u32 %r1, {%r2}, 1;"))
    assert d.message == "operand 2 (a) of add: a vector operand { } is not allowed for add"
    (d,) = errors(kernel("  .reg .b32 %r<4>;\n  mov.u32 %r1, {%r2};"))
    assert "mov packs a vector into a .b16, .b32, .b64 or .b128 register" in d.message
    assert errors(kernel("  .reg .b32 %r<4>;\n  .reg .b16 %h<3>;\n  mov.b32 %r1, {%h1, %h2};")) == []


def test_int64_min_is_an_immediate():
    # parsing it negated INT64_MIN (undefined behaviour: tests/core runs the C side under UBSan)
    k = ptx.Kernel(kernel("  .reg .b64 %rd<3>;\n  mov.b64 %rd1, -9223372036854775808;\n  st.global.u64 [%rd2], %rd1;",
                          ".param .u64 out").replace("st.global", "ld.param.u64 %rd2, [out];\n  st.global"))
    m = pa.Machine(smem_bytes=1024)
    out = np.zeros(1, np.uint64)
    g = m.register(out)
    k.launch(m, block=1, params={"out": g})
    assert out[0] == 1 << 63
