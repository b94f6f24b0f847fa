"""pytest plugin for tools/triton_suite.py: runs Triton's own language tests with ptxasync.triton
as the active driver and CPU tensors (``--device cpu``), the way Triton's interpreter mode runs
them, and writes one JSON line per test to $TRITON_SUITE_OUT.

What it changes, all in the test process and none of it in the driver:
- the model is the active driver, races and hazards recorded (not raised: a test's outcome is
  its own assertion; the record says which passing tests the race checker flagged), same-value
  stores as the driver's default has them (recorded as their own class);
- Triton's test helpers ask torch.cuda for the capability (is_hopper(), check_type_supported,
  ...) and ask whether the CUDA backend's driver is active (is_cuda()): they are answered for the
  model's target, so each test takes the branch it takes on that GPU;
- ``default_alloc_fn`` (the ``with_allocator`` fixture) allocates CPU memory, aligned as asked;
- each test function keeps at most $TRITON_SUITE_SAMPLE of its parameter sets, spread evenly (all
  of them where it has no more),
  and each test has $TRITON_SUITE_TIMEOUT seconds (checked between launches: a launch itself is
  bounded by max_instructions, 2^26); a launch of more than $TRITON_SUITE_MAX_THREADS threads
  raises TooLarge instead of running.
"""
import json
import os
import signal
import time
import traceback

import pytest

TARGET = os.environ.get("TRITON_SUITE_TARGET", "sm_90a")
SAMPLE = int(os.environ.get("TRITON_SUITE_SAMPLE", "3"))
# a launch of more threads than this is not run (the model interprets every thread: Triton's
# stress tests launch 65,536 CTAs of 1,024 threads a thousand times)
MAX_THREADS = int(os.environ.get("TRITON_SUITE_MAX_THREADS", str(1 << 18)))
TIMEOUT = int(os.environ.get("TRITON_SUITE_TIMEOUT", "120"))
OUT = os.environ.get("TRITON_SUITE_OUT")
# the test functions run: from FROM on (file order), UNTIL excluded ("" : to the end)
FROM = os.environ.get("TRITON_SUITE_FROM", "")
UNTIL = os.environ.get("TRITON_SUITE_UNTIL", "")


def _patch_environment():
    import torch
    import triton
    import triton._internal_testing as it
    from triton.backends import backends

    import ptxasync.triton as pt
    pt.configure(target=TARGET, hazards="report", max_instructions=1 << 26)
    _limit_launch_size()
    cap = divmod(pt.driver().capability, 10)
    torch.cuda.get_device_capability = lambda device=None: cap
    torch.cuda.get_device_name = lambda device=None: f"ptxasync model ({TARGET})"
    torch.cuda.current_device = lambda: 0
    backends["nvidia"].driver.is_active = staticmethod(lambda: True)

    def alloc(size, align, stream):
        raw = torch.empty(size + align, dtype=torch.int8)
        off = -raw.data_ptr() % align
        return raw[off:off + size]

    it.default_alloc_fn = alloc
    return triton


class TooLarge(Exception):
    pass


def _limit_launch_size():
    from ptxasync.triton import _launcher
    run = _launcher.Launcher._run

    def limited(self, loaded, grid, threads, *rest):
        n = grid[0] * grid[1] * grid[2] * threads
        if n > MAX_THREADS:
            raise TooLarge(f"a launch of {n} threads (grid {grid} x {threads}): over the suite's limit of "
                           f"{MAX_THREADS} for the model")
        return run(self, loaded, grid, threads, *rest)

    _launcher.Launcher._run = limited


def pytest_configure(config):
    os.environ.setdefault("DISABLE_SUBPROCESS", "1")
    _patch_environment()


def _done():
    """Tests of $TRITON_SUITE_OUT already reported (a resumed run skips them); a test that started
    and never reported (its launch ran until the run was stopped) is reported as killed."""
    if not OUT or not os.path.exists(OUT):
        return set()
    rows = [json.loads(line) for line in open(OUT)]
    reported = {r["test"] for r in rows if r["outcome"] != "started"}
    for r in rows:
        if r["outcome"] == "started" and r["test"] not in reported:
            r.update(outcome="failed", error="_Timeout",
                     message=r.get("killed", "stopped by hand: one launch ran for minutes"))
            with open(OUT, "a") as f:
                f.write(json.dumps(r) + "\n")
            reported.add(r["test"])
    return reported


def _span(items):
    """The items of the test functions from FROM (included) to UNTIL (excluded), in file order."""
    names = [it.originalname or it.name for it in items]
    lo = names.index(FROM) if FROM else 0
    hi = names.index(UNTIL) if UNTIL else len(items)
    return items[lo:hi]


def pytest_collection_modifyitems(session, config, items):
    kept = _span(items)
    if SAMPLE > 0:                      # sampled before the resumed run drops what is done, so the
        by_fn = {}                      # sample is the same set however often the run resumes
        for it in kept:
            by_fn.setdefault(it.originalname or it.name, []).append(it)
        keep = set()
        for group in by_fn.values():
            n = len(group)
            picks = set(range(n)) if n <= SAMPLE else {round(i * (n - 1) / max(SAMPLE - 1, 1)) for i in range(SAMPLE)}
            keep.update(id(group[i]) for i in picks)
        kept = [it for it in kept if id(it) in keep]
    done = _done()
    kept_ids = {id(it) for it in kept if it.nodeid not in done}
    deselected = [it for it in items if id(it) not in kept_ids]
    items[:] = [it for it in items if id(it) in kept_ids]
    config.hook.pytest_deselected(items=deselected)


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout(f"the test ran past {TIMEOUT} s on the model")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    from ptxasync.triton import _launcher, _record
    item._suite_launches = launches = []

    def set_last(rec):                      # every launch of the test, not only its last
        launches.append(rec)
        _record.set_last(rec)

    _launcher.set_last = set_last
    if OUT:
        with open(OUT, "a") as f:
            f.write(json.dumps({"test": item.nodeid, "function": item.originalname or item.name,
                                "outcome": "started", "t": time.time()}) + "\n")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        _launcher.set_last = _record.set_last


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not OUT or (rep.when != "call" and not (rep.failed or rep.skipped)):
        return
    launches = getattr(item, "_suite_launches", [])
    row = {"test": item.nodeid, "function": item.originalname or item.name, "when": rep.when,
           "outcome": rep.outcome, "seconds": round(rep.duration, 2), "launches": len(launches),
           "races": sum(r.rule != "same-value-store" for rec in launches for r in rec.races),
           "same_value": sum(r.rule == "same-value-store" for rec in launches for r in rec.races),
           "hazards": sorted({h.rule for r in launches for h in r.hazards})}
    first = next((h for r in launches for h in r.hazards), None)
    if first is not None:
        row["hazard_example"] = str(first.message)[:400]
    rec = launches[-1] if launches else None
    if rep.skipped and isinstance(rep.longrepr, tuple):
        row["reason"] = rep.longrepr[2]
    if rep.failed and call.excinfo is not None:
        e = call.excinfo.value
        row["error"] = type(e).__name__
        row["message"] = str(e)[:2000]
        row["where"] = "".join(traceback.format_tb(call.excinfo.tb, limit=-3))[-1500:]
        if rec is not None and rec.error is not None:
            row["launch_error"] = f"{type(rec.error).__name__}: {str(rec.error)[:1000]}"
    with open(OUT, "a") as f:
        f.write(json.dumps(row) + "\n")
