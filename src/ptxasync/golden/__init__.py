"""Golden runner: check recorded hardware results against the model.

    python -m ptxasync.golden FILE.jsonl.gz [FILE ...] [--json] [--verbose]

Each file holds cases of one or more families (gzipped JSON lines recorded on a
real GPU). For every family it supports, the runner replays each case through
the model and compares every recorded byte; it prints passed / failed /
unsupported per family and the first differing byte of each failure. With
``--json`` it prints one JSON object ``{family: {passed, failed, unsupported}}``.
The exit status is non-zero if any case failed.
"""
import argparse
import gzip
import json

from .. import _core
from . import bulk, cluster, consumers, edits, mbarrier, tensor
from .common import Unsupported

__all__ = ["check_file", "check_case", "FAMILIES", "main"]

FAMILIES = {**tensor.FAMILIES, **bulk.FAMILIES, **cluster.FAMILIES, **edits.FAMILIES,
            **mbarrier.FAMILIES, **consumers.FAMILIES}


def check_case(case):
    """(status, message): status is 'passed', 'failed' or 'unsupported'."""
    fn = FAMILIES.get(case.get("family"))
    if fn is None:
        return "unsupported", f"family {case.get('family')!r} is not modelled yet"
    try:
        msg = fn(case)
    except Unsupported as e:
        return "unsupported", str(e)
    except (_core.PtxAsyncError, ValueError) as e:
        return "failed", f"model error: {type(e).__name__}: {e}"
    return ("failed", msg) if msg else ("passed", None)


def check_file(path, results=None, failures=None):
    """Check every case of a golden file; accumulates into results/failures."""
    results = {} if results is None else results
    failures = [] if failures is None else failures
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            case = json.loads(line)
            if "family" not in case:
                continue  # header lines
            status, msg = check_case(case)
            fam = results.setdefault(case["family"], {"passed": 0, "failed": 0, "unsupported": 0})
            fam[status] += 1
            if status == "failed":
                failures.append((case.get("id"), msg))
    return results, failures


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m ptxasync.golden", description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--json", action="store_true", help="print one JSON object of counts per family")
    ap.add_argument("--verbose", action="store_true", help="list every failure in full")
    args = ap.parse_args(argv)
    results, failures = {}, []
    for path in args.files:
        check_file(path, results, failures)
    if args.json:
        print(json.dumps(results, sort_keys=True))
    else:
        for fam, r in sorted(results.items()):
            print(f"{fam:24s} passed {r['passed']:5d}  failed {r['failed']:5d}  unsupported {r['unsupported']:5d}")
        for cid, msg in failures if args.verbose else failures[:50]:
            print(f"FAIL {cid}: {msg}")
        if len(failures) > 50 and not args.verbose:
            print(f"... {len(failures) - 50} more failures (--verbose lists all)")
    return 1 if failures else 0


