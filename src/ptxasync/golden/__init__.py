"""Golden runner: check recorded hardware results against the model.

    python -m ptxasync.golden FILE.jsonl.gz [FILE ...] [--json] [--verbose]

Each file holds cases of one or more families (gzipped JSON lines recorded on a
real GPU). For every family it supports, the runner replays each case through
the model and compares every recorded byte; it prints passed / failed /
unsupported per family and the first differing byte of each failure. With
``--json`` it prints one JSON object ``{family: {passed, failed, unsupported}}``.
The exit status is 1 if any case failed, 2 if a file is not in the recorded
format (unreadable, not JSON objects, a family the runner does not know, a
case missing a key or with a value of the wrong type or size): the message
names the file and line. A file that holds no case at all (another kind of
data, such as tests/data/ptx_assembler_probe.jsonl.gz) is skipped with a note
when other files were given; if no file holds a case, that is exit 2 too.
"""
import argparse
import gzip
import json
import os
import sys
import zlib

from .. import _core
from . import async_, bulk, cluster, consumers, edits, mbarrier, tensor
from .common import BadInput, NoCase, Unsupported

__all__ = ["check_file", "check_files", "check_case", "FAMILIES", "main", "BadInput", "NoCase"]

FAMILIES = {**tensor.FAMILIES, **bulk.FAMILIES, **cluster.FAMILIES, **edits.FAMILIES,
            **mbarrier.FAMILIES, **async_.FAMILIES, **consumers.FAMILIES}


# Errors a checker raises when a case lacks a key or holds a value of the wrong
# type or size: the input is bad, which is neither a pass nor a model failure.
_BAD_CASE = (KeyError, TypeError, IndexError, AttributeError, OverflowError, ValueError,
             MemoryError)


def check_case(case):
    """(status, message): status is 'passed', 'failed' or 'unsupported'.
    Raises BadInput for a case that is not in the recorded format."""
    if not isinstance(case, dict) or not isinstance(case.get("family"), str):
        raise BadInput("a case is a JSON object with a string 'family'")
    fn = FAMILIES.get(case.get("family"))
    if fn is None:
        raise BadInput(f"family {case['family']!r} is not one the runner knows (known: "
                       f"{', '.join(sorted(FAMILIES))})")
    try:
        msg = fn(case)
    except Unsupported as e:
        return "unsupported", str(e)
    except _core.PtxAsyncError as e:
        return "failed", f"model error: {type(e).__name__}: {e}"
    except BadInput:
        raise
    except _BAD_CASE as e:
        what = f"missing key {e}" if isinstance(e, KeyError) else f"{type(e).__name__}: {e}"
        which = f"case {case['id']!r}" if "id" in case else "the case (it has no 'id')"
        raise BadInput(f"{which} is not in the recorded format ({what})") from e
    return ("failed", msg) if msg else ("passed", None)


def _lines(path):
    """(line number, text) of a golden file; BadInput naming the file when it
    cannot be read."""
    if os.path.isdir(path):
        raise BadInput(f"{path}: is a directory, not a golden file")
    opener = gzip.open if str(path).endswith(".gz") else open
    lineno = 0
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                yield lineno, line
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as e:
        raise BadInput(f"{path}:{lineno + 1}: cannot be read ({type(e).__name__}: {e})") from None


def check_file(path, results=None, failures=None):
    """Check every case of a golden file; accumulates into results/failures.
    Raises BadInput ("file:line: why") for a file that is not in the recorded
    format, including one that holds no case."""
    results = {} if results is None else results
    failures = [] if failures is None else failures
    cases = 0
    for lineno, line in _lines(path):
        line = line.strip()
        if not line:
            continue
        try:
            case = json.loads(line)
        except (ValueError, RecursionError) as e:
            raise BadInput(f"{path}:{lineno}: invalid JSON ({e})") from None
        if not isinstance(case, dict):
            raise BadInput(f"{path}:{lineno}: a line must be a JSON object, not {type(case).__name__}")
        if "family" not in case:
            continue  # header lines
        try:
            status, msg = check_case(case)
        except BadInput as e:
            raise BadInput(f"{path}:{lineno}: {e}") from e.__cause__
        cases += 1
        fam = results.setdefault(case["family"], {"passed": 0, "failed": 0, "unsupported": 0})
        fam[status] += 1
        if status == "failed":
            failures.append((case.get("id"), msg))
    if cases == 0:
        raise NoCase(f"{path}: holds no case (no JSON object with a 'family'): not a file of recorded results")
    return results, failures


def check_files(paths, results=None, failures=None, note=None):
    """check_file over several files. A file that holds no case is skipped,
    ``note(message)`` told of it, unless no file holds one: then the first such
    NoCase is raised (BadInput). Returns (results, failures)."""
    results = {} if results is None else results
    failures = [] if failures is None else failures
    skipped = []
    for path in paths:
        try:
            check_file(path, results, failures)
        except NoCase as e:
            skipped.append(e)
    if skipped and len(skipped) == len(paths):
        raise skipped[0]
    for e in skipped:
        if note is not None:
            note(f"skipped {e}")
    return results, failures


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m ptxasync.golden", description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--json", action="store_true", help="print one JSON object of counts per family")
    ap.add_argument("--verbose", action="store_true", help="list every failure in full")
    args = ap.parse_args(argv)
    results, failures = {}, []
    try:
        check_files(args.files, results, failures,
                    note=lambda m: print(f"python -m ptxasync.golden: note: {m}", file=sys.stderr))
    except BadInput as e:
        print(f"python -m ptxasync.golden: bad input: {e}", file=sys.stderr)
        return 2
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


