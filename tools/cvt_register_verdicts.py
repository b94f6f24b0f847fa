#!/usr/bin/env python3
"""ptx.check against ptxas (13.0 and 13.5) on the registers of every cvt / cvt.pack form: each
qualifier choice of each row (tools/ptx_rows/cvt.py) with its operands in registers of their types'
sizes, then each operand in turn in a register of every declared kind and size (.pred, .b8 ..
.b64, .s8 .. .s64, .u8 .. .u64, .f16, .f32, .f64, .f16x2), the others kept.

One module a chunk of lines, an instruction a line; ptxas names the lines it refuses, and the
lines it took go again into a module of their own (ptxas stops at the first phase with errors).

    python tools/cvt_register_verdicts.py [--target sm_90a] [--version 8.7] [--sample N --seed S]
                                          [--write FILE]   (the verdicts, a line each, for the test)
"""
import argparse
import collections
import itertools
import os
import random
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
import ptx_rows  # noqa: E402
import ptx_tables  # noqa: E402

KINDS = ["pred", "b8", "s8", "u8", "b16", "s16", "u16", "f16", "b32", "s32", "u32", "f32", "f16x2", "b64", "s64",
         "u64", "f64"]
DECLS = "".join("\t.reg .%s %s_<8>;\n" % (k, k) for k in KINDS)
# the register that holds each type of the rows (PTX ISA 5.2.4): its size in bits
SIZE = {"u8": 16, "s8": 16, "u16": 16, "s16": 16, "u32": 32, "s32": 32, "u64": 64, "s64": 64, "f16": 16, "bf16": 16,
        "f32": 32, "tf32": 32, "f64": 64, "f16x2": 32, "bf16x2": 32, "e4m3x2": 16, "e5m2x2": 16, "e2m3x2": 16,
        "e3m2x2": 16, "e2m1x2": 8, "ue8m0x2": 16, "e4m3x4": 32, "e5m2x4": 32, "e2m3x4": 32, "e3m2x4": 32,
        "e2m1x4": 16, "u2": 32, "s2": 32, "u4": 32, "s4": 32, "b32": 32}


def cvt_forms():
    rows = [r for r in ptx_rows.rows() if r[0].startswith("cvt")]
    return [f for f in ptx_tables.semantic_forms(rows) if f["root"] in ("cvt", "cvt.pack")]


def natural(f, qs, name):
    """the .b register of the operand's size: d the destination type's, a / b the source's, c and
    rbits .b32 (cvt.pack's c, the random bits)"""
    types = [q[1:] for q in qs if q[1:] in SIZE]
    n = name.strip()
    if n in ("rbits", "c"):
        return "b32_1"
    if n == "r":                                     # the .f8x4 / .f4x4 / .f6x4 forms' four f32 sources
        return "{b32_1, b32_2, b32_3, b32_4}"
    t = types[0] if n == "d" else types[-1] if f["root"] == "cvt" else "s32"
    return "b%d_%d" % (SIZE[t], {"d": 0, "a": 1, "b": 2}.get(n, 3))


def lines_of(f, cap, rnd):
    slots = f["slots"]
    choices = [(vals + [None]) if opt else vals for _, vals, opt, _ in slots]
    combos = list(itertools.product(*choices))
    if len(combos) > cap:
        combos = rnd.sample(combos, cap)
    out = []
    for c in combos:
        qs = [x for x in c if x]
        names = [n for n, _ in f["operands"]]
        ops = [natural(f, qs, n) for n in names]
        base = f["root"] + "".join(qs) + " "
        out.append((base + ", ".join(ops) + ";", True))
        for i, n in enumerate(names):
            if n.strip() == "r":
                continue
            for k in KINDS:
                alt = list(ops)
                alt[i] = "%s_%d" % (k, 5 + i)
                out.append((base + ", ".join(alt) + ";", False))
    return out


def module(target, version, lines):
    head = ".version %s\n.target %s\n.address_size 64\n.visible .entry k()\n{\n%s" % (version, target, DECLS)
    return head + "".join("\t%s\n" % t for t in lines) + "\tret;\n}\n", head.count("\n") + 1


def ptxas(path, text, target):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        open(p, "w").write(text)
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        r = subprocess.run([path, "-arch=" + target, p, "-o", os.path.join(d, "k.o")], capture_output=True,
                           text=True, env=env)
    bad = collections.defaultdict(list)
    for m in re.finditer(r"line (\d+); (error|fatal)\s*: (.*)", r.stdout + r.stderr):
        bad[int(m.group(1))].append(m.group(3))
    return r.returncode, bad


def verdicts(path, release, target, version, lines):
    """{line: (ptxas assembles it, ptxas's message)} for each instruction line"""
    from ptxasync import ptx  # noqa: F401
    out = {}
    for s in range(0, len(lines), 1500):
        part = lines[s:s + 1500]
        text, first = module(target, version, part)
        rc, bad = ptxas(path, text, target)
        for i, t in enumerate(part):
            out[t] = (first + i not in bad, "; ".join(bad.get(first + i, [])))
        if rc and not bad:
            for t in part:
                out[t] = (False, "(no line named)")
    return out


def check_verdict(release, target, version, line):
    from ptxasync import ptx
    text, _ = module(target, version, [line])
    return not any(d.severity == "error" for d in ptx.check(text, ptxas=release))


def sweep(release, path, target, version, lines):
    """[(line, ptxas, check, message)] for every line. ptxas stops at the first phase with errors
    (an operand's kind before the expansion's "Arguments mismatch for instruction 'mov'"): the
    lines a module took are sent again on their own module until it takes them all."""
    v = verdicts(path, release, target, version, lines)
    took = [t for t in lines if v[t][0]]
    while took:
        again = verdicts(path, release, target, version, took)
        v.update(again)
        if all(again[t][0] for t in took):
            break
        took = [t for t in took if again[t][0]]
    return [(t, v[t][0], check_verdict(release, target, version, t), v[t][1]) for t in lines]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--version", default="8.7")
    ap.add_argument("--per-form", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--releases", default="13.0,13.5")
    ap.add_argument("--write", default="")
    ap.add_argument("--show", type=int, default=40)
    a = ap.parse_args()
    from ptxasync import ptx
    rnd = random.Random(a.seed)
    lines = list(dict.fromkeys(t for f in cvt_forms() for t, _ in lines_of(f, a.per_form, rnd)))
    found = ptx.ptxas_installed()
    bad, rec = [], {}
    for rel in a.releases.split(","):
        if rel not in found:
            print("ptxas %s is not installed" % rel)
            continue
        with ThreadPoolExecutor(2) as ex:
            parts = [lines[i::2] for i in range(2)]
            res = [r for rs in ex.map(lambda p: sweep(rel, found[rel], a.target, a.version, p), parts) for r in rs]
        d = [r for r in res if r[1] != r[2]]
        print("ptxas %s: %d lines, %d refused, %d disagreements (%d the checker accepts)" % (
            rel, len(res), sum(not r[1] for r in res), len(d), sum(r[2] for r in d)))
        bad += [(rel,) + r for r in d]
        for r in res:
            rec.setdefault(r[0], {})[rel] = r[1]
    for r in bad[:a.show]:
        print("  %s  %-60s ptxas %s check %s  %s" % (r[0], r[1], r[2], r[3], r[4][:90]))
    if a.write:
        with open(a.write, "w") as fh:
            for t in lines:
                if t in rec:
                    fh.write("%s\t%s\n" % ("".join("1" if rec[t].get(r) else "0" for r in a.releases.split(",")), t))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
