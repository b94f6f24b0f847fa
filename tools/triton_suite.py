"""Triton's own language tests (python/test/unit/language/test_core.py of the Triton source) run
on the model through ptxasync.triton, with CPU tensors, and the outcomes sorted by why.

    python tools/triton_suite.py --tests TRITON/python [--target sm_90a] [--sample 3] [--timeout 120]
                                 [--from FUNCTION] [--until FUNCTION] [-k EXPR] [--out results.jsonl]
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
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def run(args):
    test = os.path.join(args.tests, "test", "unit", "language", "test_core.py")
    if not os.path.exists(test):
        sys.exit(f"{test} does not exist: --tests is the python/ folder of a Triton checkout")
    if os.path.exists(args.out) and not args.resume:
        os.remove(args.out)
    out = os.path.abspath(args.out)
    env = dict(os.environ, TRITON_SUITE_TARGET=args.target, TRITON_SUITE_SAMPLE=str(args.sample),
               TRITON_SUITE_TIMEOUT=str(args.timeout), TRITON_SUITE_OUT=out,
               TRITON_SUITE_FROM=args.from_ or "", TRITON_SUITE_UNTIL=args.until or "",
               TRITON_DEFAULT_FP_FUSION=os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"),
               PYTHONPATH=os.pathsep.join([HERE, os.path.join(REPO, "src"), os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "pytest", "-p", "triton_suite_plugin", "-p", "no:cacheprovider", "-q",
           "--rootdir", args.tests, "--device", "cpu", test, "-W", "ignore"]
    if args.k:
        cmd += ["-k", args.k]
    # The per-test alarm is checked in Python, between launches; one launch runs in C until it ends.
    # A test still running --grace seconds past --timeout is killed here, recorded as too slow, and
    # the run resumes after it.
    while True:
        proc = subprocess.Popen(cmd, env=env, cwd=args.tests, start_new_session=True)
        while proc.poll() is None:
            time.sleep(2)
            row = _last_row(out)
            if row and row["outcome"] == "started" and time.time() - row["t"] > args.timeout + args.grace:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                row = dict(row, outcome="failed", error="_Timeout", seconds=round(time.time() - row["t"]),
                           message=f"killed {args.grace} s past the {args.timeout} s limit: one launch ran on in C")
                with open(out, "a") as f:
                    f.write(json.dumps(row) + "\n")
                break
        else:
            return


def _last_row(path):
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    return json.loads(lines[-1]) if lines else None


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
        if row.get("races"):
            return "passed, races flagged", ", ".join(h for h in row["hazards"] if h != "same-value-store") or "race"
        if row.get("same_value"):
            return "passed, only same-value stores recorded", "same-value-store"
        return "passed", ""
    if row["outcome"] == "skipped":
        return "skipped", _norm(row.get("reason", ""))
    err, msg, where = row.get("error", ""), row.get("message", ""), row.get("where", "")
    launch = row.get("launch_error", "")
    if err == "_Timeout":
        return "too large for the model in the time limit", _norm(msg)
    if err == "TooLarge":
        return "too large for the model in the time limit", "a launch of more threads than the suite runs"
    if "max_instructions" in msg or "instructions a launch" in msg:
        return "too large for the model in the time limit", "a launch past max_instructions"
    if "cuobjdump" in msg or "nvdisasm" in msg:
        return "asks for SASS (the driver builds no cubin)", row["function"]
    if err == "AssertionError" and ("Generated by LLVM NVPTX" in msg or ".asm[" in where):
        return "asserts on Triton's generated code", row["function"]
    if err == "PtxSyntaxError" or "PtxSyntaxError" in launch:
        m = re.findall(r"does not run '([^']+)'[^;]*", msg) or re.findall(r"error: ([^;]+)", msg)
        forms = sorted({_norm(x) for x in m}) or [_norm(msg)]
        if any("expected an operand, found '('" in f for f in forms):
            forms = ["call (a .func with parameters: the core does not run call yet)"]
        return "form refused by the model", "; ".join(forms)[:200]
    if err == "Failed" and "DID NOT RAISE" in msg and "cpu" in row["test"]:
        return "expects host memory refused (the model's memory is the host's)", row["function"]
    if re.search(r"Torch not compiled with CUDA|requires a CUDA or other accelerator|device.?=.?.cuda|CUDA device interface|cuda\.Event|"
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
    rows = [r for r in map(json.loads, open(path)) if r["outcome"] != "started"]
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
    ap.add_argument("--grace", type=int, default=30,
                    help="seconds past --timeout after which a test still in one launch is killed")
    ap.add_argument("--from", dest="from_", metavar="FUNCTION", help="the first test function run (file order)")
    ap.add_argument("--until", metavar="FUNCTION", help="the test function the run stops before")
    ap.add_argument("-k", help="pytest -k expression")
    ap.add_argument("--out", default="triton_suite.jsonl")
    ap.add_argument("--resume", action="store_true",
                    help="keep --out's results and run only the tests it lacks (a test that started and never "
                         "finished counts as killed)")
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
