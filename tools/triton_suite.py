"""Triton's own language tests (python/test/unit/language/test_core.py of the Triton source) run
on the model through ptxasync.triton, with CPU tensors, and the outcomes sorted by why.

    python tools/triton_suite.py --tests TRITON/python [--target sm_90a] [--sample 3] [--timeout 120]
                                 [-k EXPR] [--out results.jsonl]
    python tools/triton_suite.py --report results.jsonl        # the table again, from a run's file

TRITON/python is the python/ folder of a Triton checkout of the installed release (its
conftest.py files and test/unit/language/test_core.py are read; nothing of it is copied here).
Every test function runs with at most --sample of its parameter sets (spread evenly), each test
under --timeout seconds; the plugin (tools/triton_suite_plugin.py) says what it patches. The
figures of a run are in docs/triton.md. Not part of the test suite: it takes tens of minutes.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def run(args):
    test = os.path.join(args.tests, "test", "unit", "language", "test_core.py")
    if not os.path.exists(test):
        sys.exit(f"{test} does not exist: --tests is the python/ folder of a Triton checkout")
    if os.path.exists(args.out):
        os.remove(args.out)
    env = dict(os.environ, TRITON_SUITE_TARGET=args.target, TRITON_SUITE_SAMPLE=str(args.sample),
               TRITON_SUITE_TIMEOUT=str(args.timeout), TRITON_SUITE_OUT=os.path.abspath(args.out),
               TRITON_DEFAULT_FP_FUSION=os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"),
               PYTHONPATH=os.pathsep.join([HERE, os.path.join(REPO, "src"), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "pytest", "-p", "triton_suite_plugin", "-p", "no:cacheprovider", "-q",
           "--rootdir", args.tests, "--device", "cpu", test, "-W", "ignore"]
    if args.k:
        cmd += ["-k", args.k]
    subprocess.run(cmd, env=env, cwd=args.tests)


# ---------------------------------------------------------------- sorting the outcomes

def _norm(text):
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    text = re.sub(r"\b\d+:\d+: ", "", text)                                    # line:col of a diagnostic
    text = re.sub(r"\[PTX line \d+: ([^;\]]+)[^\]]*\]", r"[\1]", text)
    text = re.sub(r"\b(thread|CTA|line|t=)\s*\d+", r"\1 N", text)
    return text.split("\n")[0][:160]


def category(row):
    """(kind, detail) of one test's outcome."""
    if row["outcome"] == "passed":
        return ("passed, races flagged", ", ".join(row["hazards"]) or "race") if row.get("races") else ("passed", "")
    if row["outcome"] == "skipped":
        return "skipped", _norm(row.get("reason", ""))
    err, msg, where = row.get("error", ""), row.get("message", ""), row.get("where", "")
    launch = row.get("launch_error", "")
    if err == "_Timeout":
        return "timeout", "ran past the time limit"
    if err == "PtxSyntaxError" or "PtxSyntaxError" in launch:
        m = re.findall(r"does not run '([^']+)'[^;]*", msg) or re.findall(r"error: ([^;]+)", msg)
        forms = sorted({_norm(x) for x in m}) or [_norm(msg)]
        return "form refused by the model", "; ".join(forms)[:200]
    if re.search(r"Torch not compiled with CUDA|device.?=.?.cuda|CUDA device interface|cuda\.Event|"
                 r"torch\.cuda|no CUDA device interface", msg + where):
        return "needs CUDA (device, streams, events)", _norm(msg)
    if err in ("Hazard", "Deadlock", "IllegalAddress", "MisalignedAddress", "IllegalInstruction", "InvalidValue",
               "MemoryError") and "ptxasync" in (where + launch + err):
        return "model error during the run", f"{err}: {_norm(msg)}"
    if "ptxasync/triton" in where:
        return "driver", f"{err}: {_norm(msg)}"
    if err == "AssertionError" and row.get("launches"):
        return "result differs (kernel semantics)", row["function"]
    if err in ("CompilationError", "CompileTimeAssertionFailure", "MLIRError") or "triton/compiler" in where:
        return "Triton does not compile it (for this target)", f"{err}: {_norm(msg)}"
    return "other", f"{err}: {_norm(msg)}"


def report(path):
    rows = [json.loads(line) for line in open(path)]
    tests = {}
    for r in rows:                     # a setup failure and a call report: keep the worst
        if r["test"] not in tests or r["outcome"] == "failed":
            tests[r["test"]] = r
    kinds = collections.Counter()
    details = collections.defaultdict(collections.Counter)
    examples = {}
    for r in tests.values():
        k, d = category(r)
        kinds[k] += 1
        details[k][d] += 1
        examples.setdefault((k, d), r["test"].split("::")[-1])
    print(f"{len(tests)} tests, {len({r['function'] for r in tests.values()})} test functions\n")
    print("| outcome | tests |\n|---|---|")
    for k, n in kinds.most_common():
        print(f"| {k} | {n} |")
    for k, _ in kinds.most_common():
        if k == "passed":
            continue
        print(f"\n### {k}\n")
        for d, n in details[k].most_common(25):
            print(f"- {n} x {d or '-'} (e.g. `{examples[(k, d)]}`)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", help="the python/ folder of a Triton checkout")
    ap.add_argument("--target", default="sm_90a")
    ap.add_argument("--sample", type=int, default=3, help="parameter sets per test function (0: all)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per test")
    ap.add_argument("-k", help="pytest -k expression")
    ap.add_argument("--out", default="triton_suite.jsonl")
    ap.add_argument("--report", help="only print the table of a run's results file")
    args = ap.parse_args()
    if args.report:
        return report(args.report)
    if not args.tests:
        ap.error("--tests (or --report) is required")
    run(args)
    report(args.out)


if __name__ == "__main__":
    main()
