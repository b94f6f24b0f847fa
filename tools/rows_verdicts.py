#!/usr/bin/env python3
"""ptx.check against ptxas 13.0 on the forms of the families listed after the call forms
(tools/ptx_rows: texsurf, wmma, tcgen05, sync): every qualifier choice of each form (a sample
of at most --per-form where the product is larger), mutated ones (a qualifier dropped, one of
another form of the same root put in, two swapped), on several targets and PTX versions.

One module per (form, target, version), an instruction a line; ptxas names the lines it refuses.
A refusal whose every message is about the operands ("Arguments mismatch", a vector's size)
while the checker accepts is counted apart as an operand-shape refusal, and is a disagreement
too: the checker reads the operand shapes of every family (rules_tex.c, rules_tc.c, rules.c).

    python tools/rows_verdicts.py [--per-form N] [--seed S] [--families texsurf,wmma] [--show N] [--release 13.5]
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

TARGETS = [("sm_90a", "8.7"), ("sm_90a", "8.0"), ("sm_100a", "8.7"), ("sm_100a", "9.0"), ("sm_100f", "9.0"),
           ("sm_103a", "8.8"), ("sm_120a", "9.0"), ("sm_80", "8.7"), ("sm_75", "6.3")]
DECLS = ".global .texref tex1;\n.global .surfref surf1;\n"
REGS = ("\t.reg .pred %p<8>;\n\t.reg .b16 %h<8>;\n\t.reg .b32 %r<520>;\n\t.reg .b64 %rd<16>;\n"
        "\t.reg .f32 %f<140>;\n\t.reg .b128 %q<4>;\n\t.shared .align 16 .b8 smem[1024];\n")
# ("Unexpected instruction types" is about the qualifiers, not the operands)
RELEASE = ["13.0", "ptxas"]         # the ptxas release compared with, and its path (--release)
OPERAND_ERR = re.compile(r"Arguments mismatch|vector|operand|Operand|register|Illegal type|(?<!Un)expected", re.I)


def family_forms(families):
    rows = ptx_rows.rows() + ptx_rows.rows(late=True)     # (wgmma, mma: families before the late ones)
    forms = ptx_tables.semantic_forms(rows)
    by_family = []
    for name in families:
        mod = __import__("ptx_rows." + name, fromlist=["ROWS"])
        keys = {r[0] for r in mod.ROWS}
        by_family += [(name, f) for f in forms if f["template"].rstrip(";") in {" ".join(k.split(";")[0].split())
                                                                                 for k in keys}]
    return by_family


def combos(f, rnd, cap):
    slots = f["slots"]
    choices = [(vals + [None]) if opt else vals for _, vals, opt, _ in slots]
    n = 1
    for c in choices:
        n *= len(c)
    if n <= cap:
        return [list(c) for c in itertools.product(*choices)]
    return [[rnd.choice(c) for c in choices] for _ in range(cap)]


def vec_count(f, qs, name):
    """the register count of a fragment / vector operand, where the ISA gives it simply (4 for
    a mutated instruction it cannot read)"""
    try:       # at most 128 (tcgen05's widest): a longer vector is a syntax error that stops the check
        return min(_vec_count(f, qs, name), 128)
    except (IndexError, ValueError, KeyError, AttributeError, StopIteration):
        return 4


def _vec_count(f, qs, name):
    root = f["root"]
    q = set(qs)
    if root.startswith("tex") or root == "tld4":
        return 2 if ".f16x2" in q else 4
    if root.startswith("suld") or root.startswith("sust"):
        return 4 if ".v4" in q else 2 if ".v2" in q else 1
    if root.startswith("wmma"):
        shape = next((x for x in qs if x.startswith(".m")), "")
        t = [x for x in qs if x in (".f16", ".f32", ".s32", ".s8", ".u8", ".bf16", ".tf32", ".f64", ".s4", ".u4", ".b1")]
        if root in ("wmma.load.c", "wmma.store.d") or (root == "wmma.mma" and name in ("d", "c")):
            ty = t[0] if root != "wmma.mma" else (t[0] if name == "d" else t[-1])
            return {".f16": 4, ".f32": 8, ".s32": 8 if shape not in (".m8n8k32", ".m8n8k128") else 2, ".f64": 2}.get(ty, 8)
        ab = "a" if root == "wmma.load.a" or name == "a" else "b"
        ty = t[0] if root != "wmma.mma" else (t[1] if len(t) > 2 else t[0])
        if ty == ".f16":
            return 8
        if ty in (".s8", ".u8"):
            return {".m16n16k16": 2, ".m8n32k16": 1 if ab == "a" else 4, ".m32n8k16": 4 if ab == "a" else 1}[shape]
        if ty == ".bf16":
            return {".m16n16k16": 4, ".m8n32k16": 2 if ab == "a" else 8, ".m32n8k16": 8 if ab == "a" else 2}[shape]
        if ty == ".tf32":
            return 4
        return 1
    if root.startswith("tcgen05.ld") or root.startswith("tcgen05.st"):
        num = next((int(x[2:]) for x in qs if re.fullmatch(r"\.x\d+", x)), 1)
        shape = next((x for x in qs if "x" in x and x[1].isdigit()), ".32x32b")
        per = {".16x64b": 1, ".16x128b": 2, ".16x256b": 4, ".32x32b": 1, ".16x32bx2": 1}[shape]
        return per * num                     # .pack::16b / .unpack::16b do not change it (ptxas 13.0)
    if root.startswith("wgmma"):
        shape = next((x for x in qs if x.startswith(".m64n")), ".m64n8k16")
        n = int(re.match(r"\.m64n(\d+)", shape).group(1))
        if name == "d":
            return n // 2 if ".f16" in qs[:qs.index(shape) + 2] and qs[qs.index(shape) + 1] == ".f16" else n // 2
        return 4
    if root.startswith("mma.sp"):             # mma.sync's fragments, A half the dense shape's
        m, n, k = map(int, re.match(r"\.m(\d+)n(\d+)k(\d+)", next(x for x in qs if x.startswith(".m"))).groups())
        bits = {".f16": 16, ".bf16": 16, ".tf32": 32, ".f32": 32, ".s32": 32, ".s8": 8, ".u8": 8, ".e4m3": 8,
                ".e5m2": 8, ".s4": 4, ".u4": 4}
        t = [bits[x] for x in qs if x in bits]
        rows, cols, b = {"d": (m, n, t[0]), "a": (m, k // 2, t[1]), "b": (k, n, t[2]), "c": (m, n, t[3])}[name]
        return max(rows * cols * b // 1024, 1)
    return 4


def operand(f, qs, name, k, rnd):
    n = name.strip()
    if n in ("vd", "va", "vb", "vc"):          # the fragments of wmma.mma / mma.sp / wgmma's register A
        n = n[1:]
    kind = ptx_tables.kind_of(name, k, f["root"])
    root = f["root"]
    if root.startswith("tex") or root == "tld4" or root.startswith(("suld", "sust", "sured")):
        geom = next((x for x in qs if re.fullmatch(r"\.a?(1d|2d|3d|cube|acube|2dms|a2dms)|\.a?cube|\.a2dms", x)), ".2d")
        nc = {".1d": 1, ".2d": 2, ".3d": 4, ".a1d": 2, ".a2d": 4, ".cube": 4, ".acube": 4, ".2dms": 4,
              ".a2dms": 4}.get(geom, 2)
        creg = "%f" if ".f32" in qs[-1:] and (root.startswith("tex") or root == "tld4") else "%r"
        first = "%r" if geom.startswith(".a") and geom != ".acube" or geom == ".acube" else creg   # the array index: .u32
        coords = "{" + ", ".join("%s%d" % (first if i == 0 else creg, 20 + i) for i in range(nc)) + "}"
        if kind == "T":
            return "[%s, %s]" % ((rnd.choice(["tex1", "%rd1"]) if root.startswith("tex") or root == "tld4" else "surf1"), coords)
        if kind == "TS":
            return "[%rd1, %rd2, " + coords + "]"
        if n == "d":
            return "{" + ", ".join("%%r%d" % i for i in range(vec_count(f, qs, n))) + "}" \
                if vec_count(f, qs, n) > 1 else ("%rd3" if ".b64" in qs else "%h1" if ".b16" in qs or ".b8" in qs else "%r1")
        if n == "c" and root.startswith("sust"):
            c = vec_count(f, qs, n)
            reg = "%rd" if ".b64" in qs else "%h" if (".b16" in qs or ".b8" in qs) else "%r"
            return "{" + ", ".join("%s%d" % (reg, i + 1) for i in range(c)) + "}" if c > 1 else reg + "1"
        if n == "c":
            return "%rd3" if any(x in qs for x in (".u64", ".s64", ".b64")) else "%r1"
        if n == "offset":
            return "{%r30, %r31}" if nc <= 2 else "{%r30, %r31, %r32, %r33}"
        if n in ("lod", "depth"):
            return "%f3"
        if n in ("dPdx", "dPdy"):
            return "{%f4, %f5}" if nc <= 2 else "{%f4, %f5, %f6, %f7}"
    if root in ("txq", "suq"):
        return "%r1" if n == "d" else "[tex1]" if root == "txq" else "[surf1]" if n == "[a]" else "%r2"
    if root == "istypep":
        return "%p1" if n == "p" else "%rd1"
    if kind in ("V", "D") or n in ("r", "a") and root.startswith(("wmma", "tcgen05", "wgmma", "mma.sp")):
        if root.startswith("wgmma") and n == "a":
            return "{%r100, %r101, %r102, %r103}"
        if root.startswith("clusterlaunchcontrol"):
            return "{%r1, %r2, %r3, %r4}" if ".v4" in qs else "%r1" if ".pred" not in qs else "%p1"
        c = vec_count(f, qs, n)
        reg = "%rd" if ".f64" in qs and root.startswith("wmma") else "%r"
        base = {"d": 0, "r": 0, "a": 40, "b": 60, "c": 80}.get(n, 0)
        return "{" + ", ".join("%s%d" % (reg, base + i if reg == "%r" else (i % 8)) for i in range(c)) + "}"
    if n in ("b", "c") and root.startswith(("wmma", "mma.sp")):
        c = vec_count(f, qs, n)
        return "{" + ", ".join("%%r%d" % (60 + i) for i in range(c)) + "}"
    if kind == "A":
        return "[%r1]" if any(".shared" in x for x in qs) or root.startswith(("tcgen05", "red.async")) else "[%rd2]"
    if n == "idesc":                         # tcgen05.mma's instruction descriptor: 32 bits
        return "%r7"
    if n in ("a-desc", "b-desc", "s-desc") or "desc" in n:
        return "%rd4"
    if n in ("scale-d", "enable-input-d", "pred"):
        return "%p1"
    if n == "p":
        return "%p1"
    if kind == "I":
        return "1"
    if n in ("e", "f") and root.startswith("mma.sp"):
        return "%r120" if n == "e" else "0"
    if n == "disable-output-lane":
        return "{%r1, %r2, %r3, %r4}" if ".cta_group::1" in qs else "{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}"
    if n == "try_cancel_response":
        return "%q1"
    if n in ("sp-sel", "immHalfSplitoff", "scale-input-d"):
        return "0"
    if kind == "R16":
        return "%h1"
    if n in ("membermask",):
        return "%r9"
    if n == "b" and root == "red.async":
        return "%rd5" if ".u64" in qs else "%r5"
    return "%r" + str(9 + k)


def instruction(f, qs, rnd):
    ops = []
    for k, (name, opt) in enumerate(f["operands"]):
        q = ptx_tables.OPERAND_QUALIFIER.get(name.strip())
        if opt and (q not in qs if q else True):
            continue
        ops.append(operand(f, qs, name, k, rnd))
    return f["root"] + "".join(qs) + (" " + ", ".join(ops) if ops else "") + ";"


def ptxas(text, target):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        open(p, "w").write(text)
        r = subprocess.run([RELEASE[1], "-arch=" + target, p, "-o", os.path.join(d, "k.o")], capture_output=True,
                           text=True)
    msgs = collections.defaultdict(list)
    for m in re.finditer(r"line (\d+); (error|warning)\s*: (.*)", r.stdout + r.stderr):
        if m.group(2) == "error":
            msgs[int(m.group(1))].append(m.group(3))
    return r.returncode, msgs


def module(target, version, lines):
    head = ".version %s\n.target %s\n.address_size 64\n%s.visible .entry k()\n{\n%s" % (version, target, DECLS, REGS)
    first = head.count("\n") + 1
    return head + "".join("\t%s\n" % t for t in lines) + "\tret;\n}\n", first


def judge(job):
    from ptxasync import ptx
    fam, f, target, version, lines = job
    text, first = module(target, version, lines)
    rc, msgs = ptxas(text, target)
    if rc and not msgs:
        return [("nomsg", fam, f, target, version, lines[0], "", "")]
    ours = collections.defaultdict(list)
    for d in ptx.check(text, ptxas=RELEASE[0]):
        if d.severity == "error":
            ours[d.line].append(d.message)
    out = []
    for i, t in enumerate(lines):
        ln = first + i
        pa, ok = ln not in msgs, ln not in ours
        if pa and not ok:
            # ptxas stops at the first phase that has errors: a line the others' errors hid is judged alone
            text1, first1 = module(target, version, [t])
            rc1, msgs1 = ptxas(text1, target)
            if rc1:
                pa, msgs[ln] = False, msgs1.get(first1) or ["(the module fails: %s)" % "; ".join(
                    m for v in msgs1.values() for m in v)[:150]]
        if pa == ok:
            out.append(("agree", fam, f, target, version, t, "", ""))
        elif not pa and all(OPERAND_ERR.search(x) for x in msgs[ln]) and ok:
            out.append(("operands", fam, f, target, version, t, "; ".join(msgs[ln]), ""))
        else:
            out.append(("differ", fam, f, target, version, t, "; ".join(msgs[ln])[:200], "; ".join(ours[ln])[:200]))
    return out


def build_jobs(a):
    """(family, form, target, version, lines) for each module the sweep sends to ptxas"""
    rnd = random.Random(a.seed)
    targets = [tuple(t.split("@")) for t in a.targets.split(",")] if a.targets else TARGETS
    forms = family_forms(a.families.split(","))
    by_root = collections.defaultdict(list)
    for _, f in forms:
        by_root[f["root"]].append(f)
    jobs = []
    for fam, f in forms:
        lines = []
        for c in combos(f, rnd, a.per_form):
            qs = [x for x in c if x]
            lines.append(instruction(f, qs, rnd))
            # mutations: drop one, put in one of another form of the root, swap two
            r = rnd.random()
            m = list(qs)
            if r < 0.4 and m:
                m.pop(rnd.randrange(len(m)))
            elif r < 0.8:
                other = rnd.choice(by_root[f["root"]])
                vals = [v for _, vs, _, _ in other["slots"] for v in vs] or [".x"]
                if m:
                    m[rnd.randrange(len(m))] = rnd.choice(vals)
            elif len(m) > 1:
                i, j = rnd.sample(range(len(m)), 2)
                m[i], m[j] = m[j], m[i]
            lines.append(instruction(f, m, rnd))
        lines = list(dict.fromkeys(lines))
        # ptxas refuses a function that uses both .cta_group::1 and ::2 (no line named): one module each
        groups = collections.defaultdict(list)
        for t in lines:
            groups[re.findall(r"\.cta_group::\d", t)[:1] == [".cta_group::2"]].append(t)
        for target, version in targets:
            for part in groups.values():
                for s in range(0, len(part), 150):
                    jobs.append((fam, f, target, version, part[s:s + 150]))
    return jobs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-form", type=int, default=48)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--families", default=",".join(ptx_rows.LATE + ["wgmma", "mma"]))
    ap.add_argument("--targets", default="")
    ap.add_argument("--show", type=int, default=30)
    ap.add_argument("--grep", default="")
    ap.add_argument("--examples", type=int, default=3)
    ap.add_argument("--release", default="13.0", help="the installed ptxas release to compare with (13.0, 13.5)")
    a = ap.parse_args()
    if a.release != "13.0":
        from ptxasync import ptx
        RELEASE[:] = [a.release, ptx.ptxas_installed()[a.release]]
    jobs = build_jobs(a)
    with ThreadPoolExecutor(2) as ex:
        results = [r for rs in ex.map(judge, jobs) for r in rs]
    counts = collections.Counter((r[1], r[0]) for r in results)
    for fam in a.families.split(","):
        print("%-8s %6d agree  %4d differ  %5d operand-shape refusals" % (
            fam, counts[(fam, "agree")], counts[(fam, "differ")], counts[(fam, "operands")]))
    bad = [r for r in results if r[0] in ("differ", "nomsg", "operands")]
    print("%d instances, %d disagreements" % (len(results), len(bad)))
    for m, c in collections.Counter(r[6].split(";")[0][:90] + " | " + r[7][:60] for r in bad).most_common(a.show):
        print("  %5d  %s" % (c, m))
    for r in [b for b in bad if a.grep in b[5] + b[6] + b[7]][:a.examples]:
        print("  %s %s@%s  %s\n      ptxas: %s\n      check: %s" % (r[0], r[3], r[4], r[5], r[6] or "accepts",
                                                                    r[7] or "accepts"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
