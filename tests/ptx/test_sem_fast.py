"""The interpreter's own cases for the common integer forms (ptx/exec/lower_sem.c's fast_op) against the
semantics library's functions for the same rows (sem/intalu.c, setp in flanes.c): one kernel per
form over edge and random values, run twice, PTXASYNC_SEM_ONLY=1 the second time; and both against
Python's integers for a few forms."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

HEAD = ".version 8.0\n.target sm_90a\n.address_size 64\n"
N = 256


def values(bits, rng):
    m = (1 << bits) - 1
    edge = [0, 1, 2, 3, m, m - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, (1 << (bits - 1)) + 1, 7, 8, 31, 32, 33,
            63, 64, 65]
    rand = [int(x) & m for x in rng.integers(0, 1 << 62, N - len(edge), dtype=np.int64)]
    return np.array([v & m for v in edge] + rand, dtype=np.uint64)


FORMS = []
for t in ("u16", "s16", "u32", "s32", "u64", "s64"):
    for op in ("add", "sub", "mul.lo", "mul.hi", "mad.lo", "mad.hi", "div", "rem", "min", "max"):
        FORMS.append((op + "." + t, 3 if op.startswith("mad") else 2, False))
    if t in ("u16", "s16", "u32", "s32"):
        FORMS += [("mul.wide." + t, 2, True), ("mad.wide." + t, 3, True)]
    if t[0] == "s":
        FORMS += [("neg." + t, 1, False), ("abs." + t, 1, False)]
    FORMS.append(("shr." + t, 2, False))
    for cmp in ("eq", "ne", "lt", "le", "gt", "ge") + (("lo", "ls", "hi", "hs") if t[0] == "u" else ()):
        FORMS.append(("setp.%s.%s" % (cmp, t), 2, "pred"))     # (ptxas takes lo..hs on unsigned types only)
for b in ("b16", "b32", "b64"):
    FORMS += [("and." + b, 2, False), ("or." + b, 2, False), ("xor." + b, 2, False), ("not." + b, 1, False),
              ("shl." + b, 2, False), ("selp." + b, 2, "selp")]


def kernel_text(form, nsrc, kind, bits):
    reg = {16: "%h", 32: "%r", 64: "%rd"}
    dbits = 2 * bits if kind is True else bits
    r, rd = reg[bits], reg[dbits]
    srcs = ", ".join("%s%d" % (r, j + 1) for j in range(nsrc))
    if form.startswith("mad.wide"):
        srcs = "%s1, %s2, %s5" % (r, r, rd)
    if kind == "pred":
        body = "%s %%p1, %s; selp.b32 %%r9, 1, 0, %%p1;" % (form, srcs)
        dreg, dbits = "%r9", 32
    elif kind == "selp":
        body = "setp.ne.b%d %%p1, %s3, 0; %s %s0, %s1, %s2, %%p1;" % (bits, r, form, r, r, r)
        dreg = r + "0"
    else:
        if form.startswith(("shl", "shr")):
            srcs = "%s1, %%r7" % r
        body = "%s %s0, %s;" % (form, rd if kind is True else r, srcs)
        dreg = (rd if kind is True else r) + "0"
    loads = "".join("ld.global.b%d %s%d, [%%rd%d];\n" % (bits, r, j + 1, 10 + j) for j in range(3))
    return HEAD + """
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u64 pe, .param .u64 po)
{
.reg .pred %%p<3>; .reg .b16 %%h<10>; .reg .b32 %%r<10>; .reg .b64 %%rd<20>;
mov.u32 %%r8, %%tid.x; cvt.u64.u32 %%rd8, %%r8;
ld.param.u64 %%rd10, [pa]; ld.param.u64 %%rd11, [pb]; ld.param.u64 %%rd12, [pc]; ld.param.u64 %%rd13, [pd];
ld.param.u64 %%rd14, [po]; ld.param.u64 %%rd15, [pe]; mad.lo.u64 %%rd15, %%rd8, 8, %%rd15;
mad.lo.u64 %%rd10, %%rd8, %(w)d, %%rd10; mad.lo.u64 %%rd11, %%rd8, %(w)d, %%rd11; mad.lo.u64 %%rd12, %%rd8, %(w)d, %%rd12;
mad.lo.u64 %%rd13, %%rd8, 4, %%rd13; mad.lo.u64 %%rd14, %%rd8, %(dw)d, %%rd14;
%(loads)sld.global.b64 %%rd5, [%%rd15]; ld.global.b32 %%r7, [%%rd13];
%(body)s
st.global.b%(db)d [%%rd14], %(dreg)s;
ret;
}
""" % dict(w=bits // 8, dw=dbits // 8, db=dbits, loads=loads, body=body, dreg=dreg)


def run(text, ins, shift, dbits, monkeypatch, sem_only, wide=None):
    monkeypatch.setenv("PTXASYNC_SEM_ONLY", "1" if sem_only else "0")
    k = ptx.Kernel(text)
    m = pa.Machine(ctas=1, smem_bytes=1024)
    out = np.zeros(N, dtype={16: np.uint16, 32: np.uint32, 64: np.uint64}[dbits])
    params = {"pa": m.register(ins[0]), "pb": m.register(ins[1]), "pc": m.register(ins[2]),
              "pd": m.register(shift), "po": m.register(out),
              "pe": m.register(wide if wide is not None else np.zeros(N, np.uint64))}
    k.launch(m, grid=1, block=N, params=params)
    return out


@pytest.mark.parametrize("form,nsrc,kind", FORMS, ids=[f[0] for f in FORMS])
def test_fast_case_equals_library(form, nsrc, kind, monkeypatch):
    bits = int(form.rsplit(".", 1)[1][1:])
    rng = np.random.default_rng(abs(hash(form)) % 2**32)
    dt = {16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
    ins = [values(bits, rng).astype(dt) for _ in range(3)]
    wide = values(64, rng)
    shift = (np.arange(N) % 70).astype(np.uint32)
    text = kernel_text(form, nsrc, kind, bits)
    dbits = 32 if kind == "pred" else 2 * bits if kind is True else bits
    fast = run(text, ins, shift, dbits, monkeypatch, False, wide)
    slow = run(text, ins, shift, dbits, monkeypatch, True, wide)
    diff = np.nonzero(fast != slow)[0]
    assert not len(diff), "%s: lane %d fast %#x library %#x" % (form, diff[0], fast[diff[0]], slow[diff[0]])


def test_against_python_integers(monkeypatch):
    """mul.hi.s64, div.s32 (by zero: all ones), shr.s32 past the width, against Python."""
    rng = np.random.default_rng(5)
    for form, bits, ref in [
        ("mul.hi.s64", 64, lambda a, b: ((a * b) >> 64) & (2**64 - 1)),
        ("div.s32", 32, lambda a, b: (2**32 - 1) if b == 0 else (abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)) & (2**32 - 1)),
    ]:
        dt = np.uint64 if bits == 64 else np.uint32
        ins = [values(bits, rng).astype(dt) for _ in range(3)]
        out = run(kernel_text(form, 2, False, bits), ins, np.zeros(N, np.uint32), bits, monkeypatch, False)

        def s(v):
            v = int(v)
            return v - (1 << bits) if v >> (bits - 1) else v
        want = [ref(s(a), s(b)) for a, b in zip(ins[0], ins[1])]
        assert [int(x) for x in out] == want, form
