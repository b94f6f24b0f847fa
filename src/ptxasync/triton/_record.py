"""What the last launch did (``ptxasync.triton.last_launch()``), and the warning that lists a
launch's races and hazards (``configure(hazards="warn")``)."""
from __future__ import annotations

import threading

_last = threading.local()
_last_any = [None]


class LaunchRecord:
    """One launch on the model: ``kernel`` (the .entry's name), ``target``, ``grid`` / ``block`` /
    ``cluster`` as launched (grid in CTAs), ``stats`` (``ptx.LaunchStats``: instructions,
    operations, steps; None if the launch raised), ``races`` (``check.Race``: the memory
    model's finds), ``hazards`` (``check.HazardReport``, in "warn" / "report" mode: every race
    again, with its PTX line, and the other hazards), ``error`` (what the launch raised, or None),
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


class HazardWarning(UserWarning):
    """A launch run with ``configure(hazards="warn")`` found races or hazards: the message lists
    the first few; ``last_launch()`` has them all."""


def summary(record):
    # in report mode every race is also a hazard report (with the PTX line): list those
    found = [h.message for h in record.hazards] or [repr(r) for r in record.races]
    shown = "\n  ".join(found[:5])
    more = f"\n  ... and {len(found) - 5} more" if len(found) > 5 else ""
    return f"kernel {record.kernel}: {len(found)} race(s) / hazard(s):\n  {shown}{more}"


def set_last(rec):
    _last.record = rec
    _last_any[0] = rec


def last():
    """The calling thread's last launch (or, from a thread that launched none, the process's)."""
    return getattr(_last, "record", None) or _last_any[0]
