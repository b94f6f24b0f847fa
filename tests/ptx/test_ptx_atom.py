"""atom and red (csrc/core/ptx/exec/atom.c, lower_atom.c; the forms in tools/ptx_atom_rows.py):

- the H200's recordings (tests/data/isa/carry_atom.*, tools/device/record_carry_atom.py) bit for
  bit: f32 add into .global flushes subnormals (NaN 0x7FFFFFFF), into .shared keeps them; f16,
  bf16, f16x2, bf16x2 round to nearest even keeping subnormals (NaN 0x7FFF); f64 add is IEEE's,
  a NaN passed unchanged into .global, quieted into .shared; the .v2 / .v4 f32 forms;
- every operation and type against a reference written here, on .global, .shared::cta,
  .shared::cluster and generic addresses, scalar and vector, atom and red;
- what the checker refuses, as ptxas 13.0 does;
- the race checker: atomics never race with each other, an atomic and a plain access do, and a
  .release atomic read by an .acquire one orders the data before it.
"""
import json
import math
import os
import struct

import numpy as np
import pytest

import isa_golden
import ptxasync as pa
from ptxasync import ptx
from testpaths import DATA

_META = json.load(open(os.path.join(DATA, "isa", "carry_atom.json")))
_Z = np.load(os.path.join(DATA, "isa", "carry_atom.npz"))
ATOMS = [(i, c) for i, c in enumerate(_META["cases"]) if c["name"].startswith(("atom", "red"))]

_UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}


@pytest.mark.parametrize("i", [i for i, _ in ATOMS], ids=[c["name"] for _, c in ATOMS])
def test_recorded_atomic(i):
    c = _META["cases"][i]
    ins = [_Z["%d_in%d" % (i, j)] for j in range(4)]
    want = [_Z["%d_out%d" % (i, k)] for k in range(2)]
    if ".v" not in c["name"]:
        got = isa_golden.run_module(c["ptx"], ins, [c["w"]] * 2, c["n"], 128)
    else:                                   # the .v2 / .v4 f32 forms: w / 32 words a thread
        k = ptx.Kernel(c["ptx"])
        m = pa.Machine(ctas=1, smem_bytes=8192)
        got = [np.zeros_like(w) for w in want]
        params = {"po%d" % j: m.register(o) for j, o in enumerate(got)}
        params.update({"pi%d" % j: m.register(np.ascontiguousarray(a)) for j, a in enumerate(ins)})
        params["pn"] = c["n"]
        k.launch(m, grid=(c["n"] + 127) // 128, block=128, params=params)
    assert len(ins[0]) == len(want[0])
    bad, first = isa_golden.compare(c["name"], got, want)
    assert not bad, "%s: %d differ; first %s" % (c["name"], bad, first)


# --- a reference for every operation -------------------------------------------------------

def _round(x, p):
    """x (a float64 holding an exact sum) rounded to p significant bits, to nearest even."""
    if x == 0 or not math.isfinite(x):
        return x
    m, e = math.frexp(x)
    return math.ldexp(round(m * (1 << p)), e - p)


def f2b(x, t):
    if t == "f32":
        return struct.unpack("<I", struct.pack("<f", x))[0]
    if t == "f64":
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    if t == "f16":
        return int(np.float16(x).view(np.uint16))
    if t == "bf16":
        return struct.unpack("<I", struct.pack("<f", x))[0] >> 16
    raise ValueError(t)


def b2f(b, t):
    if t == "f32":
        return struct.unpack("<f", struct.pack("<I", b))[0]
    if t == "f64":
        return struct.unpack("<d", struct.pack("<Q", b))[0]
    if t == "f16":
        return float(np.uint16(b).view(np.float16))
    if t == "bf16":
        return struct.unpack("<f", struct.pack("<I", b << 16))[0]
    raise ValueError(t)


PREC = {"f32": 24, "f64": 53, "f16": 11, "bf16": 8}


def ref_elem(op, t, d, s, c=0):
    """The new memory word of one element of type t."""
    bits = {"b16": 16, "f16": 16, "bf16": 16}.get(t, 64 if t[-2:] == "64" else 32)
    mask = (1 << bits) - 1
    if op == "exch":
        return s
    if op == "cas":
        return c if d == s else d
    if t in ("f16x2", "bf16x2"):
        h = t[:-2]
        return ref_elem(op, h, d & 0xFFFF, s & 0xFFFF) | ref_elem(op, h, d >> 16, s >> 16) << 16
    if t in PREC:
        a, b = b2f(d, t), b2f(s, t)
        if op == "add":
            return f2b(_round(a + b, PREC[t]), t) if t != "f64" else f2b(a + b, t)
        return f2b(min(a, b) if op == "min" else max(a, b), t)
    sg = t[0] == "s"
    sv = lambda v: v - (1 << bits) if sg and v >> (bits - 1) else v   # noqa: E731
    if op == "add":
        return (d + s) & mask
    if op == "min":
        return d if sv(d) <= sv(s) else s
    if op == "max":
        return d if sv(d) >= sv(s) else s
    if op == "inc":
        return 0 if d >= s else d + 1
    if op == "dec":
        return s if d == 0 or d > s else d - 1
    if op == "and":
        return d & s
    if op == "or":
        return d | s
    if op == "xor":
        return d ^ s
    raise ValueError(op)


# type -> (register bits, register class, register prefix)
REG = {"u32": (32, "b32", "%r"), "s32": (32, "b32", "%r"), "b32": (32, "b32", "%r"), "f16x2": (32, "b32", "%r"),
       "bf16x2": (32, "b32", "%r"), "u64": (64, "b64", "%rd"), "s64": (64, "b64", "%rd"),
       "b64": (64, "b64", "%rd"), "f32": (32, "f32", "%f"), "f64": (64, "f64", "%fd"),
       "b16": (16, "b16", "%h"), "f16": (16, "b16", "%h"), "bf16": (16, "b16", "%h")}

HEAD = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pm, .param .u64 pb, .param .u64 pc, .param .u64 pold)
{
    .reg .pred %p<2>;
    .reg .b16 %h<50>;
    .reg .b32 %r<50>;
    .reg .b64 %rd<50>;
    .reg .f32 %f<50>;
    .reg .f64 %fd<50>;
    .shared .align 16 .b8 sm[4096];
    mov.u32 %r30, %tid.x;
    mul.wide.u32 %rd30, %r30, BYTES;
    ld.param.u64 %rd31, [pm]; add.u64 %rd31, %rd31, %rd30;
    ld.param.u64 %rd32, [pb]; add.u64 %rd32, %rd32, %rd30;
    ld.param.u64 %rd33, [pc]; add.u64 %rd33, %rd33, %rd30;
    ld.param.u64 %rd34, [pold]; add.u64 %rd34, %rd34, %rd30;
    mov.u32 %r31, sm;
    cvt.u32.u64 %r32, %rd30;
    add.u32 %r31, %r31, %r32;
"""


def atomic_kernel(kind, op, t, space, n=1, sem=""):
    bits, cls, pre = REG[t]
    bytes_ = bits // 8
    regs = lambda base: [f"{pre}{base + j}" for j in range(n)]   # noqa: E731
    vec = lambda rs: rs[0] if n == 1 else "{" + ", ".join(rs) + "}"   # noqa: E731
    v = "" if n == 1 else f".v{n}"
    M, B, D = regs(1), regs(11), regs(41)
    body = HEAD.replace("BYTES", str(bytes_ * n))
    for j in range(n):
        o = j * bytes_
        body += f"    ld.global.{cls} {M[j]}, [%rd31+{o}];\n    ld.global.{cls} {B[j]}, [%rd32+{o}];\n"
    body += f"    ld.global.{cls} {pre}21, [%rd33];\n"
    if space == "global":
        addr, q = "[%rd31]", ".global"
    elif space == "generic":
        addr, q = "[%rd31]", ""
    else:
        for j in range(n):
            body += f"    st.shared.{cls} [%r31+{j * bytes_}], {M[j]};\n"
        if space == "generic_shared":
            body += "    cvt.u64.u32 %rd35, %r31;\n    cvta.shared.u64 %rd35, %rd35;\n"
            addr, q = "[%rd35]", ""
        else:
            addr, q = "[%r31]", "." + space
    noftz = ".noftz" if t in ("f16", "bf16", "f16x2", "bf16x2") else ""
    c = f", {pre}21" if op == "cas" else ""
    if kind == "atom":
        body += f"    atom{sem}{q}.{op}{noftz}{v}.{t} {vec(D)}, {addr}, {vec(B)}{c};\n"
        for j in range(n):
            body += f"    st.global.{cls} [%rd34+{j * bytes_}], {D[j]};\n"
    else:
        body += f"    red{sem}{q}.{op}{noftz}{v}.{t} {addr}, {vec(B)};\n"
    if space not in ("global", "generic"):
        for j in range(n):
            body += f"    ld.shared.{cls} {M[j]}, [%r31+{j * bytes_}];\n    st.global.{cls} [%rd31+{j * bytes_}], {M[j]};\n"
    return body + "    ret;\n}\n"


def operands(t, op, count, rng):
    bits = REG[t][0]
    if t in ("f32", "f64", "f16", "bf16", "f16x2", "bf16x2"):
        # normal values whose sums and results stay normal (the rules for subnormals, NaN and
        # infinities are the recordings' above)
        h = t[:-2] if t.endswith("x2") else t
        per = 2 if t.endswith("x2") else 1
        vals = rng.uniform(0.5, 4.0, (count, per)) * rng.choice([-1.0, 1.0], (count, per))
        out = []
        for row in vals:
            w = 0
            for j, x in enumerate(row):
                b = f2b(float(x), h)
                if h in ("f32", "f64"):
                    b = f2b(b2f(b, h), h)
                w |= b << (16 * j)
            out.append(w)
        return out
    if op in ("inc", "dec"):
        return [int(x) for x in rng.integers(0, 40, count)]
    if op == "cas":
        return [int(x) for x in rng.integers(0, 3, count)]
    return [int(x) for x in rng.integers(0, 1 << bits, count, dtype=np.uint64 if bits == 64 else np.int64)]


SCALAR = [("add", t) for t in ("u32", "s32", "u64", "f32", "f64", "f16", "bf16", "f16x2", "bf16x2")] + \
    [(o, "u32") for o in ("inc", "dec")] + [(o, t) for o in ("min", "max") for t in ("u32", "s32", "u64", "s64")] + \
    [(o, t) for o in ("and", "or", "xor") for t in ("b32", "b64")] + \
    [("exch", t) for t in ("b32", "b64")] + [("cas", t) for t in ("b16", "b32", "b64")]
VECTOR = [("add", "f32", 2), ("add", "f32", 4)] + \
    [(o, t, n) for o in ("add", "min", "max") for t in ("f16", "bf16") for n in (2, 4, 8)] + \
    [(o, t, n) for o in ("add", "min", "max") for t in ("f16x2", "bf16x2") for n in (2, 4)]
SPACES = ["global", "shared", "shared::cta", "shared::cluster", "generic", "generic_shared"]


def run_atomic(kind, op, t, space, n=1, sem="", threads=64, seed=0):
    rng = np.random.default_rng(seed)
    bits = REG[t][0]
    dt = _UINT[bits]
    cnt = threads * n
    mem = np.array(operands(t, op, cnt, rng), dtype=dt)
    b = np.array(operands(t, op, cnt, rng), dtype=dt)
    if op == "cas":                         # a third of the compares hold
        mem = np.array([int(x) % 2 for x in mem], dtype=dt)
        b = np.array([int(x) % 2 for x in b], dtype=dt)
    c = np.array(operands(t, "exch", cnt, rng), dtype=dt)
    old = np.zeros(cnt, dt)
    text = atomic_kernel(kind, op, t, space, n, sem)
    m = pa.Machine(ctas=1, smem_bytes=4096, hazards="report")
    mem_in = mem.copy()
    params = {"pm": m.register(mem), "pb": m.register(b), "pc": m.register(c), "pold": m.register(old)}
    ptx.Kernel(text).launch(m, grid=1, block=threads, params=params)
    want = np.array([ref_elem(op, t, int(mem_in[i]), int(b[i]), int(c[(i // n) * n]))
                     for i in range(cnt)], dtype=dt)
    return mem, want, old, mem_in, m


@pytest.mark.parametrize("op,t", SCALAR, ids=[f"{o}.{t}" for o, t in SCALAR])
@pytest.mark.parametrize("space", SPACES)
def test_atom_against_the_reference(op, t, space):
    mem, want, old, mem_in, m = run_atomic("atom", op, t, space)
    assert np.array_equal(mem, want), (op, t, space, np.flatnonzero(mem != want)[:4])
    assert np.array_equal(old, mem_in)
    assert m.races == [] and m.hazards == []


RED = [(o, t) for o, t in SCALAR if o not in ("exch", "cas")]


@pytest.mark.parametrize("op,t", RED, ids=[f"{o}.{t}" for o, t in RED])
@pytest.mark.parametrize("space", ["global", "shared", "generic_shared"])
def test_red_against_the_reference(op, t, space):
    mem, want, _, _, m = run_atomic("red", op, t, space)
    assert np.array_equal(mem, want)
    assert m.races == [] and m.hazards == []


@pytest.mark.parametrize("op,t,n", VECTOR, ids=[f"{o}.v{n}.{t}" for o, t, n in VECTOR])
@pytest.mark.parametrize("kind", ["atom", "red"])
def test_vector_forms_against_the_reference(op, t, n, kind):
    mem, want, old, mem_in, m = run_atomic(kind, op, t, "global", n=n)
    assert np.array_equal(mem, want)
    if kind == "atom":
        assert np.array_equal(old, mem_in)


@pytest.mark.parametrize("sem", [".relaxed.gpu", ".acquire.cta", ".release.cluster", ".acq_rel.sys",
                                 ".gpu.acq_rel", ".sys"])
def test_every_order_and_scope_runs(sem):
    mem, want, old, mem_in, _ = run_atomic("atom", "add", "u32", "global", sem=sem)
    assert np.array_equal(mem, want) and np.array_equal(old, mem_in)


def test_many_threads_on_one_word_sum_and_do_not_race():
    text = HEAD.replace("BYTES", "0") + """
    mov.u32 %r1, 1;
    atom.global.add.u32 %r2, [%rd31], %r1;
    red.shared.add.u32 [%r31], %r1;
    atom.global.gpu.acq_rel.max.s32 %r3, [%rd32], %r30;
    ret;
}
"""
    m = pa.Machine(ctas=1, smem_bytes=4096, hazards="report")
    cnt, mx, old, c = (np.zeros(1, np.uint32), np.zeros(1, np.int32), np.zeros(1, np.uint32),
                       np.zeros(1, np.uint32))
    k = ptx.Kernel(text)
    k.launch(m, grid=1, block=96, params={"pm": m.register(cnt), "pb": m.register(mx), "pc": m.register(c),
                                           "pold": m.register(old)})
    assert cnt[0] == 96 and mx[0] == 95
    assert m.races == [] and m.hazards == []


# --- what ptxas refuses, the checker refuses -------------------------------------------------

def _check(line, target="sm_90a"):
    text = f""".version 8.7
.target {target}
.address_size 64
.visible .entry k(.param .u64 p)
{{
    .reg .b16 %h<9>; .reg .b32 %r<9>; .reg .b64 %rd<9>; .reg .f32 %f<9>; .reg .f64 %fd<9>;
    ld.param.u64 %rd1, [p];
    {line}
    ret;
}}
"""
    return [d for d in ptx.check(text) if d.severity == "error"]


@pytest.mark.parametrize("line", [
    "atom.global.add.f32 %f1, [%rd1], %f2;",
    "atom.global.gpu.acq_rel.add.f32 %f1, [%rd1], %f2;",
    "atom.shared::cluster.release.cluster.add.u32 %r1, [%rd1], %r2;",
    "atom.add.noftz.f16 %h1, [%rd1], %h2;",
    "atom.global.cas.b16 %h1, [%rd1], %h2, %h3;",
    "atom.global.v2.f32.add {%f1, %f2}, [%rd1], {%f3, %f4};",
    "atom.global.max.noftz.v8.bf16 {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8}, [%rd1], "
    "{%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8};",
    "red.release.gpu.global.add.u64 [%rd1], %rd2;",
    "red.global.add.noftz.bf16x2 [%rd1], %r2;",
    "atom.inc.u32 %r1, [%rd1], %r2;",
    "atom.global.exch.b64 %rd2, [%rd1], %rd3;",
])
def test_forms_ptxas_takes_check(line):
    assert _check(line) == []


@pytest.mark.parametrize("line", [
    "atom.global.add.s64 %rd2, [%rd1], %rd3;",          # no s64 add
    "atom.global.add.f16 %h1, [%rd1], %h2;",            # .noftz required
    "atom.global.inc.s32 %r1, [%rd1], %r2;",            # inc / dec u32 only
    "atom.global.and.u32 %r1, [%rd1], %r2;",            # and / or / xor b32 / b64
    "atom.global.exch.u32 %r1, [%rd1], %r2;",
    "atom.global.min.f32 %f1, [%rd1], %f2;",            # float min / max: vector f16 / bf16 only
    "atom.shared.v2.f32.add {%f1, %f2}, [%rd1], {%f3, %f4};",   # vectors: .global only
    "atom.global.add.noftz.v8.f16x2 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], "
    "{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8};",
    "red.acquire.global.add.u32 [%rd1], %r2;",          # red: no .acquire
    "red.global.cas.b32 [%rd1], %r2, %r3;",             # red: no cas / exch
    "red.global.exch.b32 [%rd1], %r2;",
])
def test_forms_ptxas_refuses_are_refused(line):
    assert _check(line), line


def _generated(n, seed):
    import random
    import ptx_forms as pf
    import ptx_tables
    forms = [f for f in ptx_tables.collect() if f["root"] in ("atom", "red")]
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        f, target, version = rnd.choice(forms), rnd.choice(pf.TARGETS), rnd.choice(pf.VERSIONS)
        out.append((pf.instance(f, random.Random(rnd.getrandbits(32)), mutate=rnd.random() < 0.5), target,
                    version))
    return out


GENERATED = _generated(120, seed=2026)


@pytest.mark.parametrize("case", range(len(GENERATED)))
def test_generated_forms_get_the_verdict_of_ptxas(case):
    import ptx_forms as pf
    path = ptx.ptxas_installed().get("13.0")
    if not path:
        pytest.skip("ptxas 13.0 is not installed")
    form, target, version = GENERATED[case]
    text = pf.module(form, target, version)
    v = pf.ptxas_verdict(text, target, path)
    if v.crash:
        pytest.skip(f"{v.crash} on `{form}`: no verdict")
    ours = not any(d.severity == "error" for d in ptx.check(text, ptxas="13.0"))
    assert ours == v.accepted, (form, target, version, v.message)


def test_vector_forms_need_sm_90():
    assert _check("atom.global.v2.f32.add {%f1, %f2}, [%rd1], {%f3, %f4};", target="sm_80")
    assert _check("atom.global.add.f32 %f1, [%rd1], %f2;", target="sm_80") == []


# --- the race checker --------------------------------------------------------------------------

RACE_HEAD = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pd, .param .u64 pf)
{
    .reg .pred %p<6>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<10>;
    mov.u32 %r1, %tid.x;
    ld.param.u64 %rd1, [pd];
    ld.param.u64 %rd2, [pf];
    setp.eq.u32 %p1, %r1, 0;
    setp.eq.u32 %p2, %r1, 32;
"""


def run_race(body, threads=64):
    m = pa.Machine(ctas=1, smem_bytes=1024, hazards="report")
    d, f = np.zeros(4, np.uint32), np.zeros(4, np.uint32)
    ptx.Kernel(RACE_HEAD + body + "    ret;\n}\n").launch(m, grid=1, block=threads,
                                                        params={"pd": m.register(d), "pf": m.register(f)})
    return [r for r in m.races if r.rule == "data-race"], d


def test_an_atomic_and_a_plain_store_race():
    races, _ = run_race("""
    @%p1 atom.global.add.u32 %r2, [%rd1], 1;
    @%p2 st.global.u32 [%rd1], %r1;
""")
    assert races and {races[0].first["instr"], races[0].second["instr"]} == {"atom", "st.global"}


def test_a_plain_load_and_an_atomic_race():
    races, _ = run_race("""
    @%p1 ld.global.u32 %r2, [%rd1];
    @%p2 red.global.add.u32 [%rd1], 1;
""")
    assert races


def test_atomics_of_two_warps_do_not_race():
    races, d = run_race("""
    @%p1 atom.global.add.u32 %r2, [%rd1], 1;
    @%p2 red.global.add.u32 [%rd1], 2;
    @%p2 atom.global.exch.b32 %r3, [%rd1+4], 7;
    @%p1 atom.global.cas.b32 %r3, [%rd1+4], 0, 5;
""")
    assert races == [] and d[0] == 3 and d[1] in (5, 7)


def test_an_atomic_does_not_hide_the_atomics_before_it():
    # thread 0 adds atomically, then sets a relaxed flag (no order); thread 32 waits for that flag,
    # adds, and releases a second flag that thread 1 acquires before a plain store: the store is
    # ordered after thread 32's add, not thread 0's, which an atomic must not drop from the log
    races, _ = run_race("""
    setp.eq.u32 %p3, %r1, 1;
    @!%p1 bra T32;
    red.global.add.u32 [%rd1], 1;
    atom.relaxed.gpu.global.exch.b32 %r3, [%rd2+4], 1;
    bra DONE;
T32:
    @!%p2 bra T1;
W32:
    atom.relaxed.gpu.global.add.u32 %r4, [%rd2+4], 0;
    setp.eq.u32 %p4, %r4, 0;
    @%p4 bra W32;
    red.global.add.u32 [%rd1], 1;
    atom.release.gpu.global.exch.b32 %r3, [%rd2], 1;
    bra DONE;
T1:
    @!%p3 bra DONE;
W1:
    atom.acquire.gpu.global.add.u32 %r4, [%rd2], 0;
    setp.eq.u32 %p4, %r4, 0;
    @%p4 bra W1;
    st.global.u32 [%rd1], %r1;
DONE:
""")
    assert races and {(r.first["thread"], r.second["thread"]) for r in races} == {(0, 1)}


FLAG = """
    @!%p1 bra CONSUMER;
    st.global.u32 [%rd1], 42;
    atom{rel}.global.exch.b32 %r3, [%rd2], 1;
    bra DONE;
CONSUMER:
    @!%p2 bra DONE;
SPIN:
    atom{acq}.global.add.u32 %r4, [%rd2], 0;
    setp.eq.u32 %p3, %r4, 0;
    @%p3 bra SPIN;
    ld.global.u32 %r5, [%rd1];
    st.global.u32 [%rd1+4], %r5;
DONE:
"""


def test_release_then_acquire_atomics_order_the_data():
    races, d = run_race(FLAG.replace("{rel}", ".release.gpu").replace("{acq}", ".acquire.gpu"))
    assert races == [] and d[1] == 42


def test_acq_rel_atomics_order_the_data():
    races, d = run_race(FLAG.replace("{rel}", ".acq_rel.gpu").replace("{acq}", ".acq_rel.gpu"))
    assert races == [] and d[1] == 42


@pytest.mark.parametrize("rel,acq", [("", ".acquire.gpu"), (".release.gpu", ".relaxed.gpu"), ("", "")])
def test_a_relaxed_side_leaves_the_data_racing(rel, acq):
    races, _ = run_race(FLAG.replace("{rel}", rel).replace("{acq}", acq))
    assert races and races[0].first["instr"] == "st.global"


def test_a_fence_then_a_relaxed_atomic_releases():
    body = FLAG.replace("{rel}", ".relaxed.gpu").replace("{acq}", ".acquire.gpu")
    body = body.replace("    atom.relaxed.gpu.global.exch", "    fence.acq_rel.gpu;\n    atom.relaxed.gpu.global.exch")
    races, d = run_race(body)
    assert races == [] and d[1] == 42


def test_shared_cluster_atomics_reach_the_other_cta():
    # every thread of both CTAs adds 1 to CTA 0's word (mapa) and its rank + 1 to CTA 1's; the
    # cluster barrier orders the adds before CTA 0's thread 0 copies the words out
    text = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 po)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    .shared .align 8 .b32 w[2];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    mov.u32 %r3, w;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 st.shared.u32 [%r3], 0;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    mapa.shared::cluster.u32 %r4, %r3, 0;
    mapa.shared::cluster.u32 %r5, %r3, 1;
    atom.shared::cluster.add.u32 %r6, [%r4], 1;
    add.u32 %r7, %r2, 1;
    red.shared::cluster.add.u32 [%r5], %r7;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    setp.eq.u32 %p2, %r2, 0;
    and.pred %p2, %p2, %p1;
    @!%p2 bra DONE;
    ld.param.u64 %rd1, [po];
    ld.shared::cluster.u32 %r8, [%r4];
    ld.shared::cluster.u32 %r9, [%r5];
    st.global.u32 [%rd1], %r8;
    st.global.u32 [%rd1+4], %r9;
DONE:
    ret;
}
"""
    m = pa.Machine(ctas=2, smem_bytes=1024, hazards="report")
    out = np.zeros(2, np.uint32)
    ptx.Kernel(text).launch(m, grid=(2, 1, 1), block=(64, 1, 1), cluster=(2, 1, 1), params={"po": m.register(out)})
    assert list(out) == [128, 64 * 1 + 64 * 2]
    assert m.races == [] and m.hazards == []
