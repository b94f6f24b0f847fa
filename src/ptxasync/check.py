"""What the machine's checker reports: hazards, the trace, explanations of waits.

``Machine(hazards="raise")`` (the default) raises ``Hazard`` at the undefined
behaviour; ``hazards="report"`` collects every one in ``machine.hazards`` and
goes on as the hardware would. Each hazard names its rule (``Hazard.rule``,
``HazardReport.rule``); ``RULES`` lists them, docs/hazards.md explains them.
"""
from collections import namedtuple

from . import _core

__all__ = ["RULES", "HazardReport", "TraceEvent", "WaitExplanation"]

#: Every rule the checker knows, by id (docs/hazards.md has one row per rule).
RULES = _core.HAZARD_RULES

HazardReport = namedtuple("HazardReport", "rule time message")
HazardReport.__doc__ = """A hazard seen in report mode: its rule id, the logical time
(the trace clock) and the message."""


class TraceEvent(namedtuple("TraceEvent", "time kind cta thread op rank addr space a b")):
    """One event of the trace.

    ``kind``: issue, read, write, init, inval, arrive, expect_tx, complete_tx,
    phase, wait, commit_group, wait_group, hazard. ``cta`` / ``thread``: the
    issuing thread (None for the asynchronous side's own events, e.g. a phase
    flip). ``op``: the issue number of the operation the event belongs to (or
    None). ``rank`` / ``addr``: the mbarrier or shared location (CTA rank,
    offset). ``a`` / ``b`` depend on the kind: arrive (count, tx), expect_tx /
    complete_tx (bytes, -), phase (phases completed now, -), wait (parity,
    result | 2 for try_wait), issue (operation kind, -), read / write (global
    address or -, bytes)."""

    def __str__(self):
        who = "async" if self.thread is None else f"CTA {self.cta} thread {self.thread}"
        op = "" if self.op is None else f" op #{self.op}"
        where = f" bar 0x{self.addr:x}@CTA{self.rank}" if self.space == 1 else ""
        return f"t={self.time:<5} {self.kind:<12} {who}{op}{where} a={self.a} b={self.b}"


class WaitExplanation:
    """Why a wait on an mbarrier answers as it does (``Mbarrier.why(parity)``).

    ``complete``: the wait returns True. Otherwise ``phase`` is the open phase,
    ``pending`` the arrivals and ``tx`` the transaction bytes still missing
    (negative: credited beyond those expected), ``signalers`` / ``signal_tx``
    the pending operations that credit the barrier and their bytes, and
    ``can_complete`` whether they complete the phase (False: nothing pending
    can; the kernel would hang unless a thread still arrives)."""

    def __init__(self, d):
        self.rank = d["rank"]
        self.offset = d["offset"]
        self.phase = d["phase"]
        self.parity = d["parity"]
        self.complete = d["complete"]
        self.pending = d["pending"]
        self.expected = d["expected"]
        self.tx = d["tx"]
        self.tx_expected = d["tx_expected"]
        self.tx_credited = d["tx_credited"]
        self.signalers = d["nsignal"]
        self.signal_tx = d["signal_tx"]
        self.can_complete = d["can_complete"]
        self.text = d["text"]

    def __bool__(self):
        return bool(self.complete)

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"WaitExplanation({self.text!r})"
