"""What the last launch did (``ptxasync.triton.last_launch()``), and the error a race raises."""
from __future__ import annotations

import threading

from .._core import PtxAsyncError

_last = threading.local()
_last_any = [None]


class LaunchRecord:
    """One launch on the model: ``kernel`` (the .entry's name), ``target``, ``grid`` / ``block`` /
    ``cluster`` as launched (grid in CTAs), ``stats`` (``ptx.LaunchStats``: instructions,
    operations, steps; None if the launch raised), ``races`` (``check.Race``), ``hazards``
    (``check.HazardReport``, in report mode), ``error`` (what the launch raised, or None),
    ``machine`` (the Machine it ran on, the host arrays unregistered: shared memory, trace and
    pending state stay readable) and ``ptx`` (the text that ran)."""

    def __init__(self, kernel, target, grid, block, cluster, machine, ptx):
        self.kernel, self.target = kernel, target
        self.grid, self.block, self.cluster = grid, block, cluster
        self.machine, self.ptx = machine, ptx
        self.stats = None
        self.races = []
        self.hazards = []
        self.error = None

    def __repr__(self):
        what = f"error={type(self.error).__name__}" if self.error is not None else f"stats={self.stats}"
        return (f"LaunchRecord({self.kernel!r}, {self.target}, grid={self.grid}, block={self.block}, "
                f"{what}, races={len(self.races)}, hazards={len(self.hazards)})")


class RaceError(PtxAsyncError):
    """A launch's memory model found races or missing fences (``ptxasync.triton.configure(races=...)``
    says whether they raise, warn or are only recorded). ``record`` is the LaunchRecord."""

    def __init__(self, record):
        n = len(record.races)
        shown = "\n  ".join(repr(r) for r in record.races[:5])
        more = f"\n  ... and {n - 5} more" if n > 5 else ""
        super().__init__(f"kernel {record.kernel}: the memory model found {n} race(s) / missing fence(s):"
                         f"\n  {shown}{more}")
        self.record = record


def set_last(rec):
    _last.record = rec
    _last_any[0] = rec


def last():
    """The calling thread's last launch (or, from a thread that launched none, the process's)."""
    return getattr(_last, "record", None) or _last_any[0]
