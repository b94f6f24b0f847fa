"""Check files of recorded hardware results against the model.

Each file holds gzipped JSON lines recorded on a real GPU (tests/data/ has the
vendored sets; tests/data/README.md describes the format). Every case of a
family the model knows is replayed and compared byte for byte.

examples:
  ptxasync golden tests/data/tile_load.jsonl.gz
  ptxasync golden tests/data/*.jsonl.gz --json
  ptxasync golden record -o mine.jsonl.gz tests/data/tile_load.jsonl.gz   (on a GPU machine)
  ptxasync golden mine.jsonl.gz                                           (replay what was recorded)

A file that holds no case (other data, such as ptx_assembler_probe.jsonl.gz
beside the recorded sets) is skipped with a note on stderr.

exit status: 0 every case passed, 1 a case failed, 2 a file could not be read,
holds a family the runner does not know, or no file holds a case.
"""
import json
import os
import sys

NAME = "golden"
HELP = "check recorded hardware results (golden files) against the model"


def add_arguments(p):
    p.add_argument("files", nargs="+", metavar="FILE", help="golden files (.jsonl or .jsonl.gz)")
    p.add_argument("--json", action="store_true", help="print one JSON object of counts per family")
    p.add_argument("--verbose", action="store_true", help="list every failure in full")
    p.add_argument("--no-progress", action="store_true", help="never draw the progress bar")


class Progress:
    """A one-line bar on stderr: files done of all, and cases checked so far
    (read from the runner's running counts). Drawn by a background thread, only
    on a terminal and only once a run takes more than a moment."""

    def __init__(self, files, results, enabled):
        import threading
        self.files, self.results, self.done, self.label = files, results, 0, ""
        self.enabled = enabled and sys.stderr.isatty()
        self.drawn = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True) if self.enabled else None
        if self._thread:
            self._thread.start()

    def _loop(self):
        if self._stop.wait(0.5):          # a quick run draws nothing
            return
        while not self._stop.is_set():
            self.draw()
            self._stop.wait(0.2)

    def draw(self):
        cases = sum(sum(r.values()) for r in list(self.results.values()))
        width = 30
        full = width * self.done // max(1, self.files)
        sys.stderr.write(f"\r[{'#' * full}{'.' * (width - full)}] file {min(self.done + 1, self.files)}/"
                         f"{self.files} {self.label[:32]:<32} {cases} cases")
        sys.stderr.flush()
        self.drawn = True

    def start_file(self, label):
        self.label = label

    def end_file(self):
        self.done += 1

    def close(self):
        self._stop.set()
        if self._thread:
            self._thread.join()
        if self.drawn:
            sys.stderr.write("\r" + " " * 90 + "\r")
            sys.stderr.flush()


def run(args):
    from ..golden import BadInput, NoCase, check_file
    from . import UsageError
    for path in args.files:
        if not os.path.isfile(path):
            raise UsageError(f"{path}: no such file")
    results, failures, skipped = {}, [], []
    bar = Progress(len(args.files), results, not args.no_progress and not args.json)
    try:
        for path in args.files:
            bar.start_file(os.path.basename(path))
            try:
                check_file(path, results, failures)
            except NoCase as e:     # other data beside the recorded sets (a glob over tests/data/)
                skipped.append(str(e))
            except BadInput as e:   # the runner names the file and line
                raise UsageError(str(e)) from None
            except (OSError, ValueError, EOFError) as e:   # unreadable / not JSON lines
                raise UsageError(f"{path}: cannot read it as a golden file ({type(e).__name__}: {e})") from None
            bar.end_file()
    finally:
        bar.close()
    if len(skipped) == len(args.files):
        raise UsageError(skipped[0])
    for msg in skipped:
        print(f"ptxasync golden: note: skipped {msg}", file=sys.stderr)
    if args.json:
        print(json.dumps(results, sort_keys=True))
    else:
        for fam, r in sorted(results.items()):
            print(f"{fam:24s} passed {r['passed']:5d}  failed {r['failed']:5d}  unsupported {r['unsupported']:5d}")
        shown = failures if args.verbose else failures[:50]
        for cid, msg in shown:
            print(f"FAIL {cid}: {msg}")
        if len(failures) > len(shown):
            print(f"... {len(failures) - len(shown)} more failures (--verbose lists all)")
    return 1 if failures else 0


RECORD_DOC = """Run recorded cases again on this machine's GPU (ptxasync.cuda) and record them.

Every case of the given files whose family the GPU path supports (encode_errors,
tile_load, im2col_load, tile_store, tensor_reduce, bulk_copy, bulk_reduce,
cp_async, and in cluster launches st_async, cluster_bulk_copy,
cluster_bulk_reduce, cluster_tile_load) is run on the GPU and compared with the stored result (addresses
aside) and with the model; the GPU's results are written to OUT in the same
format, with the GPU name, compute capability and driver version. With
--random N, N new cases per family are made from the given ones instead (new
data, coordinates and offsets). `ptxasync golden OUT` replays what was recorded.

examples:
  ptxasync golden record -o h100.jsonl.gz tests/data/tile_load.jsonl.gz
  ptxasync golden record --random 200 --seed 7 -o new.jsonl.gz tests/data/tile_store.jsonl.gz

exit status: 0 every case agreed, 1 a case differed, 2 no GPU or bad input.
"""


def record_main(argv):
    import argparse
    ap = argparse.ArgumentParser(prog="ptxasync golden record", description=RECORD_DOC,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", metavar="FILE", help="golden files to take the cases from")
    ap.add_argument("-o", "--out", required=True, help="the file to write (.jsonl.gz)")
    ap.add_argument("--random", type=int, metavar="N", help="N new random cases per family instead")
    ap.add_argument("--seed", type=int, default=0, help="seed of --random (default 0)")
    ap.add_argument("--limit", type=int, help="at most this many cases of each file")
    args = ap.parse_args(argv)
    from .. import cuda
    if not cuda.available():
        print(f"ptxasync golden record: no GPU can be used here: {cuda.why_unavailable()}", file=sys.stderr)
        return 2
    for path in args.files:
        if not os.path.isfile(path):
            print(f"ptxasync golden record: {path}: no such file", file=sys.stderr)
            return 2
    from ..cuda import record
    if args.random:
        tally = record.random_cases(args.files, args.random, seed=args.seed, out=args.out)
    else:
        tally = record.rerecord(args.files, out=args.out, limit=args.limit)
    bad = 0
    for fam, c in sorted(tally.fam.items()):
        line = f"{fam:16s} runs {c['runs']:5d}  model agrees {c['model_same']:5d}  differs {c['model_differs']:4d}"
        if not args.random:
            line += f"  stored agrees {c['stored_same']:5d}  differs {c['stored_differs']:4d}"
        print(line + f"  skipped {c['skipped']}")
        bad += c["model_differs"] + (0 if args.random else c["stored_differs"])
    for n in tally.notes[:50]:
        print(n)
    print(f"wrote {args.out}")
    return 1 if bad else 0
