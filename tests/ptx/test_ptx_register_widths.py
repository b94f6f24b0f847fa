"""Register widths (text/rules_sem.c): ptxas refuses a register whose size is not the operand's
("Arguments mismatch"), except that cvt's destination and source may be wider (PTX ISA 5.2.4);
mov moves a register of its type's size, a 32-bit special register also as .u16, an address as
64 bits. The verdicts are ptxas 13.0's (asked of each installed ptxas live as well), and random
instances of the semantics library's rows with registers of every size are judged by ptxas."""
import random

import pytest

import ptx_tables
from ptxasync import ptx
from ptx_forms import judges, ptxas_verdict

DECLS = (".reg .b64 rd<4>; .reg .b32 r<16>; .reg .pred p<3>; .reg .b16 h<4>; .reg .f32 f<4>; "
         ".reg .f64 fd<4>;")


def module(line):
    return (".version 8.0\n.target sm_90a\n.address_size 64\n.global .b32 gv;\n.visible .entry k()\n{\n  "
            + DECLS + "\n  " + line + "\n  ret;\n}\n")


CASES = [   # (line, ptxas 13.0 assembles it)
    ("add.f32 f1, f2, f3;", True), ("add.f32 f1, r2, r3;", True), ("add.f32 f1, h1, h2;", False),
    ("add.f32 f1, rd2, rd3;", False), ("add.u32 r1, rd1, r2;", False), ("add.u64 rd1, r1, r2;", False),
    ("add.u16 h1, r1, r2;", False), ("add.f64 fd1, f1, f2;", False), ("add.f16 h1, r2, r3;", False),
    ("add.f16x2 r1, h2, h3;", False), ("mul.wide.u32 rd1, r1, r2;", True), ("mul.wide.u32 r1, r1, r2;", False),
    ("setp.lt.u32 p1, rd1, r2;", False), ("selp.b32 r1, r2, r3, r4;", False), ("selp.b32 r1, r2, r3, p1;", True),
    ("shl.b64 rd1, rd2, r1;", True), ("shl.b64 rd1, rd2, rd1;", False), ("shl.b32 r1, r2, rd1;", False),
    ("mad.lo.u32 r1, r2, r3, rd1;", False), ("popc.b64 r1, rd1;", True), ("popc.b64 rd1, rd1;", False),
    ("prmt.b32 r1, r2, r3, rd1;", False), ("prmt.b32 f1, r1, r2, r3;", True), ("and.b32 r1, f1, r2;", True),
    ("bmsk.wrap.b32 f1, r1, r2;", False), ("bmsk.wrap.b32 r1, f1, r2;", False),   # bmsk's are .u32 to ptxas ("fma.rn.f32 f1, f2, f3, h1;", False), ("neg.s32 r1, rd1;", False),
    # cvt: a wider register is taken, a narrower one is not
    ("cvt.u64.u32 rd1, rd2;", True), ("cvt.u32.u64 r1, rd1;", True), ("cvt.u32.u64 r1, r2;", False),
    # mov
    ("mov.u32 r1, rd2;", False), ("mov.u64 rd1, r1;", False), ("mov.u16 h1, %tid.x;", True),
    ("mov.u64 rd1, %tid.x;", False), ("mov.u32 r1, %clock64;", False), ("mov.u64 rd1, gv;", True),
    ("mov.u32 r1, gv;", False), ("mov.u32 r1, k;", True), ("mov.pred p1, r1;", False), ("mov.f32 f1, r1;", True),
    ("mov.b32 {h1, h2}, r1;", True), ("mov.b32 {h1, h2}, rd1;", False), ("mov.b32 rd1, {h1, h2};", False),
    ("mov.b64 {r1, r2}, rd1;", True),
]


@pytest.mark.parametrize("line,ok", CASES)
def test_check_gives_ptxas_s_verdict(line, ok):
    d = ptx.check(module(line), ptxas="13.0")
    assert (not any(x.severity == "error" for x in d)) == ok, d


def random_instances(n, seed=5):
    """Instances of the rows the semantics library runs, each register operand one of every size."""
    rnd = random.Random(seed)
    forms = [f for f in ptx_tables.collect() if f.get("sem") and not f["root"].startswith("v")]
    regs = ["p1", "h1", "r1", "rd1", "f1", "fd1"]
    out = []
    while len(out) < n:
        f = rnd.choice(forms)
        quals = []
        for name, vals, opt, grp in f["slots"]:
            if vals and not (opt and rnd.random() < 0.5):
                quals.append(rnd.choice(vals))
        ops = []
        for name, opt in f["operands"]:
            if opt and rnd.random() < 0.5:
                continue
            ops.append("3" if name.strip() == "immLut" else "p1|p2" if name.strip() in ("p|q", "d|p") else
                       rnd.choice(regs))
        out.append(f["root"] + "".join(quals) + " " + ", ".join(ops) + ";")
    return out


@pytest.mark.parametrize("release,path", judges())
def test_the_verdicts_are_ptxas_s(release, path):
    for line, ok in CASES:
        v = ptxas_verdict(module(line), "sm_90a", path)
        if not v.crash and release == "13.0":
            assert v.accepted == ok, (line, v.message)
    # random instances with registers of every size: check and ptxas agree
    wrong = []
    for line in random_instances(150):
        text = module(line)
        v = ptxas_verdict(text, "sm_90a", path)
        if v.crash:
            continue
        if v.accepted != ptx.accepts(text, ptxas=release):
            wrong.append((line, v.accepted, v.message.strip()[:120]))
    assert not wrong, wrong[:5]
