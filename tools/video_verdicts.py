#!/usr/bin/env python3
"""ptxas 13.0's verdict against ptx.check's on the video instructions and the small leftover ones
(setmaxnreg, movmatrix, brx.idx, alloca, stacksave, stackrestore, fns, pmevent).

    python tools/video_verdicts.py [--family video|misc|all] [--disagree FILE] [--seed N]

Every qualifier choice of every row of tools/ptx_rows/video.py (tests/randprog.all_qualifiers),
each with operand variants (selectors right and wrong, immediates, -reg, a missing or extra c),
the qualifiers also permuted and doubled, plus the misc instructions' forms and mutations, under
several .target / .version headers; one kernel per header and chunk, ptxas's errors name the
lines it rejects. Prints the counts and where the two differ (0 is the goal).
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, HERE)

import ptx_tables  # noqa: E402
import randprog as R  # noqa: E402

DECLS = ("\t.reg .pred %p<4>;\n\t.reg .b16 %h<8>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n"
         "\t.local .align 8 .b8 loc[64];\n")

SCALAR_SEL = ["", ".b0", ".b3", ".h1", ".b4", ".h2", ".b00", ".h10"]
SIMD2_SEL = ["", ".h10", ".h32", ".h03", ".h4", ".h1", ".b10", ".h101"]
SIMD4_SEL = ["", ".b3210", ".b7654", ".b0707", ".b8000", ".b321", ".h10", ".b76543"]
MASK2 = ["", ".h10", ".h1", ".h0", ".h01", ".h11", ".h2", ".b10"]
MASK4 = ["", ".b3210", ".b31", ".b0", ".b210", ".b3201", ".b00", ".b4", ".h10", ".b32100"]


def video_lines(rnd):
    """(opcode, operands) over the video rows' qualifier choices and operand variants."""
    rows = [f for f in ptx_tables.collect() if f.get("sem") and ptx_tables.VIDEO_ROOT.match(f["root"])]
    out = []
    for f in rows:
        v = ptx_tables.VIDEO_ROOT.match(f["root"])
        lanes = v.group(2)
        mad = v.group(1) == "mad"
        srcs = {"": SCALAR_SEL, "2": SIMD2_SEL, "4": SIMD4_SEL}[lanes]
        dsts = {"": ["", ".b1", ".h0", ".b5", ".h10"], "2": MASK2, "4": MASK4}[lanes]
        four = len(f["operands"]) == 4
        for qs in R.all_qualifiers(f):
            op = R.opcode(f, qs)
            variants = [("%r1", "%r2", "%r3", "%r4" if four else None)]
            for _ in range(6):
                a = "%r2" + rnd.choice(srcs) if rnd.random() < 0.85 else rnd.choice(["5", "-%r2", "0x7f"])
                b = "%r3" + rnd.choice(srcs) if rnd.random() < 0.85 else rnd.choice(["-3", "-%r3"])
                c = rnd.choice(["%r4", "%r4", "9", "-%r4", "%r4.b0", None])
                d = "%r1" + rnd.choice(dsts) if rnd.random() < 0.9 else rnd.choice(["%rd1", "%h1", "-%r1"])
                if mad and rnd.random() < 0.5:
                    a, b = rnd.choice(["%r2", "-%r2"]), rnd.choice(["%r3.h1", "-%r3"])
                    c = rnd.choice(["%r4", "-%r4"])
                variants.append((d, a, b, c))
            for d, a, b, c in variants:
                out.append((op, ", ".join(x for x in (d, a, b, c) if x is not None)))
        # the qualifiers permuted or doubled
        for qs in rnd.sample(list(R.all_qualifiers(f)), 6):
            q2 = list(qs)
            rnd.shuffle(q2)
            if rnd.random() < 0.3:
                q2.append(rnd.choice(q2))
            ops = "%r1, %r2, %r3" + (", %r4" if four else "")
            out.append((f["root"] + "".join(q2), ops))
    return out


MISC = [
    # fns (9.7.1.17)
    ("fns.b32", "%r1, %r2, %r3, %r4"), ("fns.b32", "%r1, 0xaaaaaaaa, 3, -1"), ("fns.u32", "%r1, %r2, %r3, %r4"),
    ("fns.b32", "%r1, %r2, %r3"), ("fns.b32", "%rd1, %r2, %r3, %r4"), ("fns.b32", "%r1, %rd2, %r3, %r4"),
    ("fns.b32", "%r1, %r2, %h3, %r4"), ("fns", "%r1, %r2, %r3, %r4"), ("fns.b32", "%r1, %r2, 40, 1"),
    # setmaxnreg (9.7.19.5)
    ("setmaxnreg.dec.sync.aligned.u32", "64"), ("setmaxnreg.inc.sync.aligned.u32", "192"),
    ("setmaxnreg.inc.sync.aligned.u32", "20"), ("setmaxnreg.inc.sync.aligned.u32", "260"),
    ("setmaxnreg.inc.sync.aligned.u32", "100"), ("setmaxnreg.inc.sync.aligned.u32", "%r1"),
    ("setmaxnreg.inc.sync.u32", "64"), ("setmaxnreg.inc.aligned.u32", "64"), ("setmaxnreg.sync.aligned.u32", "64"),
    ("setmaxnreg.inc.sync.aligned.b32", "64"), ("setmaxnreg.dec.sync.aligned.u32", "24"),
    ("setmaxnreg.dec.sync.aligned.u32", "256"), ("setmaxnreg.aligned.sync.dec.u32", "64"),
    # pmevent (9.7.19.4)
    ("pmevent", "1"), ("pmevent", "15"), ("pmevent", "16"), ("pmevent", "%r1"), ("pmevent.mask", "3"),
    ("pmevent.mask", "0xffff"), ("pmevent.mask", "0x10000"), ("pmevent.mask", "0"), ("pmevent", "0"),
    # movmatrix (9.7.14.5.17)
    ("movmatrix.sync.aligned.m8n8.trans.b16", "%r1, %r2"), ("movmatrix.sync.aligned.m8n8.b16", "%r1, %r2"),
    ("movmatrix.sync.aligned.m16n8.trans.b16", "%r1, %r2"), ("movmatrix.sync.aligned.m8n8.trans.b32", "%r1, %r2"),
    ("movmatrix.sync.aligned.m8n8.trans.b16", "%rd1, %r2"), ("movmatrix.sync.aligned.m8n8.trans.b16", "%r1, 5"),
    ("movmatrix.aligned.m8n8.trans.b16", "%r1, %r2"), ("movmatrix.sync.m8n8.trans.b16", "%r1, %r2"),
    ("movmatrix.sync.aligned.trans.m8n8.b16", "%r1, %r2"), ("movmatrix.sync.aligned.m8n8.trans.b16", "%h1, %r2"),
    # alloca / stacksave / stackrestore (9.7.17)
    ("alloca.u64", "%rd1, %rd2"), ("alloca.u64", "%rd1, %rd2, 16"), ("alloca.u64", "%rd1, 64, 8"),
    ("alloca.u32", "%r1, %r2, 4"), ("alloca.u64", "%rd1, %rd2, 3"), ("alloca.u64", "%rd1, %rd2, %r3"),
    ("alloca.u64", "%rd1, %r2"), ("alloca.b64", "%rd1, %rd2"), ("alloca", "%rd1, %rd2"),
    ("alloca.u64", "%rd1, %rd2, 16777216"), ("alloca.u64", "%rd1, %rd2, 8388608"), ("alloca.u32", "%rd1, %rd2"),
    ("stacksave.u64", "%rd1"), ("stacksave.u32", "%r1"), ("stacksave.u64", "%r1"), ("stacksave.b64", "%rd1"),
    ("stackrestore.u64", "%rd1"), ("stackrestore.u32", "%r1"), ("stackrestore.u64", "5"),
    ("stackrestore.s64", "%rd1"), ("stacksave", "%rd1"),
    # brx.idx (9.7.12.4) with the table `ts` of the prologue
    ("brx.idx", "%r1, ts"), ("brx.idx.uni", "%r1, ts"), ("brx.idx", "2, ts"), ("brx.idx", "%rd1, ts"),
    ("brx.idx", "%r1, L1"), ("brx.idx", "%r1, nots"), ("brx.idx.u32", "%r1, ts"), ("brx", "%r1, ts"),
    ("brx.idx", "%r1"),
]

HEADERS = [("sm_90a", "8.0"), ("sm_90", "8.0"), ("sm_80", "7.8"), ("sm_100a", "8.8"), ("sm_75", "6.3"),
           ("sm_80", "7.2"), ("sm_90", "7.8"), ("sm_75", "7.7"), ("sm_120a", "8.7"), ("sm_100f", "8.8"),
           ("sm_103f", "8.8"), ("sm_120f", "8.8"), ("sm_100a", "8.6"), ("sm_90a", "8.7")]


def ptxas(text, target):
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run(["ptxas", "-arch=%s" % target, f.name, "-o", "/dev/null"], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return r.returncode, r.stderr


def judge(lines, target, version, rows):
    from ptxasync import ptx
    head = ".version %s\n.target %s\n.address_size 64\n.visible .entry k()\n{\n%s" % (version, target, DECLS)
    head += "L1:\nL2:\n\tts: .branchtargets L1, L2;\n"
    first = head.count("\n") + 1
    text = head + "".join("\t%s %s;\n" % (op, ops) for op, ops in lines) + "\tret;\n}\n"
    rc, err = ptxas(text, target)
    bad = {int(m.group(1)) - first for m in re.finditer(r"line (\d+); error", err)}
    hdr = [m for m in re.finditer(r"line (\d+); error", err) if int(m.group(1)) < first]
    if hdr or (rc and not bad):
        return None, err[:400]
    checker = {d.line - first for d in ptx.check(text, ptxas="13.0") if d.severity == "error"}
    acc = 0
    for i, (op, ops) in enumerate(lines):
        acc += i not in bad
        if (i in bad) != (i in checker):
            rows.append("%s %s\t%s %s;\tptxas %s, ptx.check %s" % (target, version, op, ops,
                                                                    "rejects" if i in bad else "accepts",
                                                                    "rejects" if i in checker else "accepts"))
    return acc, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", default="all", choices=["video", "misc", "all"])
    ap.add_argument("--disagree")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    rows, total, accepted = [], 0, 0
    groups = []
    if a.family in ("video", "all"):
        vl = video_lines(rnd)
        groups += [(vl, "sm_90a", "8.0"), (rnd.sample(vl, 400), "sm_75", "6.3")]
    if a.family in ("misc", "all"):
        groups += [(MISC, t, v) for t, v in HEADERS]
    for lines, target, version in groups:
        for i in range(0, len(lines), 1500):
            chunk = lines[i:i + 1500]
            acc, err = judge(chunk, target, version, rows)
            if err:
                print("skipped %s %s: %s" % (target, version, err.splitlines()[0] if err else ""))
                continue
            total += len(chunk)
            accepted += acc
    print("%d instructions judged, ptxas accepts %d, rejects %d" % (total, accepted, total - accepted))
    print("%d where ptx.check (as ptxas 13.0) differs" % len(rows))
    for r in rows[:40]:
        print("  " + r)
    if a.disagree:
        open(a.disagree, "w").write("\n".join(rows) + "\n")
    return 1 if rows else 0


if __name__ == "__main__":
    sys.exit(main())
