"""The CUDA device runtime on the interpreter (docs/ptx.md, "The device runtime"): printf with
every conversion, its return value and its order, a failed assert's exception and line, malloc
and free; NVRTC's PTX vendored under tests/data/ptx/calls/ (tools/calls_kernels.py writes it).
The expected printf text comes from Python's % formatting of the arguments computed here (C's
printf semantics: unsigned values masked, %#o as C writes it, no length modifiers in Python)."""
import os
import re

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

import testpaths

DATA = os.path.join(testpaths.REPO, "tests", "data", "ptx", "calls")
WORD = b"hello"
BIG = 123456789012


def load(name, arch="sm_90a"):
    return ptx.Kernel(open(os.path.join(DATA, f"{name}.{arch}.ptx")).read())


def cfmt(fmt, args):
    """C's printf of fmt with Python's %: length modifiers dropped (Python ignores them and takes
    no 'll'), %u of a value already masked, and %#o as C writes it (0 then the digits)."""
    out, k = [], 0
    for m in re.finditer(r"%([-+ #0]*)(\d*)(?:\.(\d+))?(hh|h|ll|l|z)?([diouxXcsfeEgGp%])|[^%]+", fmt):
        if not m.group(5):
            out.append(m.group(0))
            continue
        flags, width, prec, _, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        v = args[k]
        k += 1
        if conv == "o" and "#" in flags:
            s = "0" + "%o" % v if v else "0"
            out.append(s.rjust(int(width or 0)))
            continue
        spec = "%" + flags + width + ("." + prec if prec is not None else "") + ("d" if conv == "u" else conv)
        out.append(spec % v)
    return "".join(out)


def f64(x):
    return float(np.float64(x))


def printf_lines(t):
    """The five printf calls of printf_all for thread t, as C formats them."""
    f = np.float32(1.5) + np.float32(t)
    d = -2.25 * t
    u32 = lambda v: v & 0xFFFFFFFF    # noqa: E731
    return [
        cfmt("t=%d i=%i u=%u x=%x X=%X o=%o c=%c s=%s\n",
             [t - 1, t * 7, u32(t - 2), 255 + t, u32(0xABC * (t + 1)), 8 * t + 1, chr(ord("A") + t), WORD.decode()]),
        cfmt("f=%f e=%e g=%g E=%E G=%G ld=%ld lld=%lld lu=%lu %%\n",
             [f64(f), d, f64(f) * 1e-5, d * 1e10, f64(f) * 1e20, BIG * t, BIG - t, BIG + t]),
        cfmt("[%5d|%-5d|%05d|%+d|%.3f|%10.4e|%-8s|%.2s|%#x|%#o|%8.3g|%c]\n",
             [t, -t, t * 3, t, f64(f / np.float32(3)), d, WORD.decode(), WORD.decode(), t + 10, t + 8,
              f64(f * np.float32(1000)), "a"]),
        "no arguments\n",
        cfmt("from a function: t=%d d=%.2f\n", [t, d]),
    ]


def launch_printf(arch, grid, block, **kw):
    k = load("calls_printf", arch)
    m = pa.Machine()
    word = m.register(np.frombuffer(WORD + b"\0", np.uint8).copy())
    ret = m.alloc(4 * 5 * block)
    st = k.launch(m, grid=grid, block=block, params={"printf_all_param_0": ret, "printf_all_param_1": word,
                                                     "printf_all_param_2": BIG}, **kw)
    return st, ret.array.view(np.int32).reshape(block, 5)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_printf_formats_every_conversion_as_c_does(arch):
    st, ret = launch_printf(arch, 1, 4, echo=False)
    assert len(st.printf) == 20
    for t in range(4):
        got = [text for (ctaid, tid, text) in st.printf_calls if tid == (t, 0, 0)]
        assert got == printf_lines(t)


def test_printf_returns_the_number_of_arguments_it_read():
    _, ret = launch_printf("sm_90a", 1, 4, echo=False)
    counts = [len(re.findall(r"%[^%]", s.replace("%%", ""))) for s in (
        "t=%d i=%i u=%u x=%x X=%X o=%o c=%c s=%s", "f=%f e=%e g=%g E=%E G=%G ld=%ld lld=%lld lu=%lu %%",
        "[%5d|%-5d|%05d|%+d|%.3f|%10.4e|%-8s|%.2s|%#x|%#o|%8.3g|%c]", "no arguments", "t=%d d=%.2f")]
    assert counts == [8, 8, 12, 0, 2]
    assert (ret == counts).all()


def test_printf_order_each_round_of_calls_by_block_then_thread_and_to_stdout(capsys):
    # 2 CTAs of 40 threads (two warps each): every thread's first call, then every second, ...
    st, _ = launch_printf("sm_90a", 2, 40, seed=11)
    want = [((b, 0, 0), (t, 0, 0), printf_lines(t)[n]) for n in range(5) for b in range(2) for t in range(40)]
    assert st.printf_calls == want
    assert capsys.readouterr().out == "".join(w[2] for w in want) == st.stdout
    assert st.printf_dropped == 0


def printf_kernel(fmt, args):
    """One thread calls printf(fmt, ...) with the 32-bit integer arguments args (a .global
    buffer laid out as the device's printf reads it: each argument 4 bytes)."""
    fb = list(fmt.encode() + b"\0")
    ab = list(np.asarray(args, np.int32).tobytes()) or [0]
    return f"""
.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 fmt[{len(fb)}] = {{{", ".join(map(str, fb))}}};
.global .align 8 .b8 args[{len(ab)}] = {{{", ".join(map(str, ab))}}};
.visible .entry k()
{{
  .reg .b32 %r<2>;
  .reg .b64 %rd<5>;
  mov.u64 %rd1, fmt;
  cvta.global.u64 %rd2, %rd1;
  mov.u64 %rd3, args;
  cvta.global.u64 %rd4, %rd3;
  {{
  .param .b64 param0;
  st.param.b64 [param0], %rd2;
  .param .b64 param1;
  st.param.b64 [param1], %rd4;
  .param .b32 retval0;
  call.uni (retval0), vprintf, (param0, param1);
  ld.param.b32 %r1, [retval0];
  }}
  ret;
}}
"""


# what an H200 printed (nvcc 13 for sm_90a, one thread each): a '*' width is read from the
# arguments as C reads it, a negative one is the '-' flag
STAR_WIDTHS = [
    ("A[%*d]\n", [6, 42], "A[    42]\n"),
    ("B[%-*d]\n", [6, -7], "B[-7    ]\n"),
    ("F[%*d]\n", [-6, 42], "F[42    ]\n"),
    ("H[%*d|%d]\n", [6, 42, 43], "H[    42|43]\n"),
    ("M[%-0*d|%+*i|%*x]\n", [6, 3, 6, 4, 6, 255], "M[3     |    +4|    ff]\n"),
]


@pytest.mark.parametrize("fmt,args,want", STAR_WIDTHS)
def test_printf_takes_a_star_width_from_the_arguments_as_the_h200_does(fmt, args, want):
    st = ptx.Kernel(printf_kernel(fmt, args)).launch(pa.Machine(), block=1, echo=False)
    assert st.stdout == want


def test_printf_of_a_directive_it_cannot_format_is_an_error():
    # a '*' precision: an H200 prints the directive itself ("%.*f") or reads the arguments out
    # of step (garbage, once an illegal address): no value to give
    with pytest.raises(pa.InvalidValue, match=r'printf: a \'\*\' precision \(in "C\[%\.\*f\]\\n"\) is not one the '
                                              r"device's printf takes"):
        ptx.Kernel(printf_kernel("C[%.*f]\n", [3, 0, 0])).launch(pa.Machine(), block=1, echo=False)
    with pytest.raises(pa.InvalidValue, match=r"printf: the directive '%Lf'"):
        ptx.Kernel(printf_kernel("n=%Lf\n", [0, 0])).launch(pa.Machine(), block=1, echo=False)


def test_a_runtime_function_declared_with_another_signature_is_refused():
    text = """
.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b32 func_retval0) malloc(.param .b32 n);
.visible .entry k()
{
  .reg .b32 %r<2>;
  call (%r1), malloc, (%r1);
  ret;
}
"""
    with pytest.raises(ptx.PtxSyntaxError, match="'malloc' is declared with a signature other than"):
        ptx.Kernel(text)


# ---- assert ----

@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_a_failed_assert_stops_the_launch_with_the_gpu_s_line(arch):
    k = load("calls_assert", arch)
    n = 96
    x = np.arange(1, n + 1, dtype=np.int32)
    x[64 + 5] = -3                            # block 1, thread 5
    m = pa.Machine()
    gx, out = m.register(x), m.alloc(4 * n)
    params = {"check_positive_param_0": gx, "check_positive_param_1": out, "check_positive_param_2": n}
    # what CUDA prints: file:line: function: block: [x,y,z], thread: [x,y,z] Assertion `expr` failed.
    want = ("calls_assert.cu:6: void check_positive(const int *, int *, int): block: [1,0,0], thread: [5,0,0] "
            "Assertion `x[i] > 0` failed.")
    with pytest.raises(pa.DeviceAssert) as e:
        k.launch(m, grid=2, block=64, params=params)
    assert str(e.value).startswith(want)
    assert "[PTX line" in str(e.value) and isinstance(e.value, AssertionError)
    x[64 + 5] = 3
    k.launch(m, grid=2, block=64, params=params)
    assert (out.array.view(np.int32) == 2 * x).all()


# ---- malloc / free ----

LENS = np.array([3, 5, 1, 7, 2, 4, 6, 8, 40, 9, 1, 1, 2, 3, 5, 8], np.int32)


def launch_heap(arch="sm_90a", heap_size=8 << 20, huge=1 << 40, seed=None):
    k = load("calls_malloc", arch)
    m = pa.Machine(policy="random", seed=3)
    nt = len(LENS)
    g = m.register(LENS.copy())
    sums, ptrs, nulls = m.alloc(8 * nt), m.alloc(16 * nt), m.alloc(4 * nt)
    k.launch(m, block=nt, params={"heap_param_0": g, "heap_param_1": sums, "heap_param_2": ptrs,
                                  "heap_param_3": nulls, "heap_param_4": huge}, heap_size=heap_size, seed=seed)
    return (sums.array.view(np.int64).copy(), ptrs.array.view(np.uint64).reshape(nt, 2).copy(),
            nulls.array.view(np.int32).copy())


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_malloc_gives_each_thread_its_own_memory_and_free_takes_it_back(arch):
    sums, ptrs, nulls = launch_heap(arch)
    t = np.arange(len(LENS))
    assert (sums == [sum(i * 1000 + k for k in range(n)) for i, n in zip(t, LENS)]).all()
    first = ptrs[:, 0]
    assert (first != 0).all() and (first % 16 == 0).all()
    spans = sorted((int(p), int(p) + 4 * int(n)) for p, n in zip(first, LENS))
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))     # no two pieces overlap
    assert (ptrs[:, 1] == first).all()          # a thread's second malloc takes the piece it freed
    assert (nulls == 1).all()                   # more than the heap: NULL


def test_malloc_returns_null_once_the_heap_is_spent():
    sums, ptrs, _ = launch_heap(heap_size=64)
    got = ptrs[:, 0] != 0
    assert got.any() and not got.all()
    assert 16 * sum(-(-4 * int(n) // 16) for n in LENS[got]) <= 64
    assert (sums[~got] == 0).all()


FREE_BAD = """
.version 8.0
.target sm_90
.address_size 64
.extern .func free(.param .b64 free_param_0);
.visible .entry k()
{
  call.uni free, (12345);
  ret;
}
"""


def test_free_of_an_address_malloc_did_not_return_is_an_error():
    with pytest.raises(pa.IllegalAddress, match=r"free\(0x3039\): not an address malloc returned"):
        ptx.Kernel(FREE_BAD).launch(pa.Machine(), block=1)


RACE = """
.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b64 func_retval0) malloc(.param .b64 malloc_param_0);
.visible .entry k(.param .u64 slot)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<5>;
  .reg .pred %p<3>;
  ld.param.u64 %rd1, [slot];
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra WAIT;
  call.uni (%rd2), malloc, (16);
  st.global.u64 [%rd1], %rd2;
WAIT:
  bar.sync 0;
  ld.global.u64 %rd3, [%rd1];
  and.b32 %r2, %r1, 31;
  setp.ne.u32 %p2, %r2, 0;
  @%p2 bra DONE;
  st.u32 [%rd3], %r1;
  BARRIER
DONE:
  ret;
}
"""


def test_the_race_checker_sees_heap_memory_as_global_memory():
    # threads 0 and 32 store to one malloc'd word with nothing ordering them: a race
    m = pa.Machine()
    slot = m.alloc(8)
    with pytest.raises(pa.Hazard, match="race"):
        ptx.Kernel(RACE.replace("BARRIER", "")).launch(m, block=64, params={"slot": slot})
    # each stores its own word: none
    m = pa.Machine()
    slot = m.alloc(8)
    text = RACE.replace("st.u32 [%rd3], %r1;", "shr.u32 %r2, %r1, 3;\n  cvt.u64.u32 %rd4, %r2;\n"
                        "  add.s64 %rd3, %rd3, %rd4;\n  st.u32 [%rd3], %r1;").replace("BARRIER", "")
    ptx.Kernel(text).launch(m, block=64, params={"slot": slot})
