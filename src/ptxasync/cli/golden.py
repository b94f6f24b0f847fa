"""Check files of recorded hardware results against the model.

Each file holds gzipped JSON lines recorded on a real GPU (tests/data/ has the
vendored sets; tests/data/README.md describes the format). Every case of a
family the model knows is replayed and compared byte for byte.

examples:
  ptxasync golden tests/data/tile_load.jsonl.gz
  ptxasync golden tests/data/*.jsonl.gz --json

exit status: 0 every case passed, 1 a case failed, 2 a file could not be read.
"""
import json
import os
import sys
import time

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
    from ..golden import BadInput, check_file
    from . import UsageError
    for path in args.files:
        if not os.path.isfile(path):
            raise UsageError(f"{path}: no such file")
    results, failures = {}, []
    bar = Progress(len(args.files), results, not args.no_progress and not args.json)
    try:
        for path in args.files:
            bar.start_file(os.path.basename(path))
            try:
                check_file(path, results, failures)
            except BadInput as e:   # the runner names the file and line
                raise UsageError(str(e)) from None
            except (OSError, ValueError, EOFError) as e:   # unreadable / not JSON lines
                raise UsageError(f"{path}: cannot read it as a golden file ({type(e).__name__}: {e})") from None
            bar.end_file()
    finally:
        bar.close()
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
