"""What the machine's checker reports: hazards, the trace, explanations of waits.

``Machine(hazards="raise")`` (the default) raises ``Hazard`` at the undefined
behaviour; ``hazards="report"`` collects every one in ``machine.hazards`` and
goes on as the hardware would. Each hazard names its rule (``Hazard.rule``,
``HazardReport.rule``); ``RULES`` lists them, docs/hazards.md explains them.
"""
from collections import namedtuple

from . import _core

__all__ = ["RULES", "FENCES", "POISON_WORD", "POISON", "HazardReport", "TraceEvent", "WaitExplanation",
           "PendingOp", "PendingOps", "Race", "poison_words"]

#: What the adversarial policy writes over a pending destination at issue: the
#: little-endian 32-bit word 0xEFBEADDE (bytes DE AD BE EF), aligned to the
#: shared / global offset, so a read before completion sees poison, never the
#: right data by luck.
POISON_WORD = _core.POISON_WORD
POISON = POISON_WORD.to_bytes(4, "little")


def poison_words(data, offset=0):
    """How many 4-byte aligned words of ``data`` (any array or bytes; its first
    byte at ``offset`` of its memory) are the poison pattern."""
    import numpy as np
    b = np.frombuffer(memoryview(np.ascontiguousarray(data)).cast("B"), dtype=np.uint8)
    skip = (-int(offset)) % 4
    b = b[skip:]
    b = b[:len(b) // 4 * 4]
    return int((b.view("<u4") == POISON_WORD).sum())

#: Every rule the checker knows, by id (docs/hazards.md has one row per rule).
RULES = _core.HAZARD_RULES

#: The fences of trace events of kind "fence", by their ``a``.
FENCES = ("fence.proxy.async", "fence.proxy.tensormap::generic.release",
          "fence.proxy.tensormap::generic.acquire", "fence.mbarrier_init.release.cluster",
          "fence.acq_rel", "fence.sc")

HazardReport = namedtuple("HazardReport", "rule time message")
HazardReport.__doc__ = """A hazard seen in report mode: its rule id, the logical time
(the trace clock) and the message."""


class TraceEvent(namedtuple("TraceEvent", "time kind cta thread op rank addr space a b")):
    """One event of the trace.

    ``kind``: issue, read, write, init, inval, arrive, expect_tx, complete_tx,
    phase, wait, commit_group, wait_group, hazard, fence, barrier (read / write
    with ``op`` None: a thread's own access through the model, e.g. CTA.read). ``cta`` / ``thread``: the
    issuing thread (None for the asynchronous side's own events, e.g. a phase
    flip). ``op``: the issue number of the operation the event belongs to (or
    None). ``rank`` / ``addr``: the mbarrier or shared location (CTA rank,
    offset). ``a`` / ``b`` depend on the kind: arrive (count, tx), expect_tx /
    complete_tx (bytes, -), phase (phases completed now, -), wait (parity,
    result | 2 for try_wait), issue (operation kind, -), read / write (global
    address or -, bytes), fence (FENCES index, its operand: state space 0 all /
    1 global / 2 shared::cta / 3 shared::cluster, scope 0 cta / 1 cluster / 2 gpu
    / 3 sys, or the tensor map's address), barrier (bar.sync: barrier, threads
    listed or 0 for all; barrier.cluster: 16, 1 if .relaxed)."""

    def __str__(self):
        who = "async" if self.thread is None else f"CTA {self.cta} thread {self.thread}"
        op = "" if self.op is None else f" #{self.op}"
        k = self.kind
        if k in ("read", "write"):
            where = (f"smem[CTA {self.rank}][0x{self.addr:x}:+{self.b}]" if self.space == 1
                     else f"global[0x{self.a:x}:+{self.b}]")
            return f"t={self.time:<5} {k:<11} {who}{op} {where}"
        bar = f" mbarrier 0x{self.addr:x}@CTA{self.rank}" if self.space == 1 else ""
        what = {"arrive": f"count {self.a}" + (f" expect_tx {self.b}" if self.b else ""),
                "expect_tx": f"{self.a} bytes", "complete_tx": f"{self.a} bytes",
                "phase": f"phase {self.a - 1} completed", "init": f"count {self.a}",
                "wait": f"{'try' if self.b & 2 else 'test'}_wait parity {self.a} -> {bool(self.b & 1)}",
                "issue": "", "hazard": RULES[self.a] if self.a < len(RULES) else ""}.get(k, "")
        if k == "fence":
            what = FENCES[self.a] if self.a < len(FENCES) else ""
            if self.a == 0:
                what += ("", ".global", ".shared::cta", ".shared::cluster")[self.b & 3]
            elif self.a == 2:
                what += f" [0x{self.b:x}], 128"
            elif self.a >= 4:
                what += (".cta", ".cluster", ".gpu", ".sys")[self.b & 3]
        if k == "barrier":
            what = (f"barrier.cluster{'.relaxed' if self.b else ''}" if self.a == 16
                    else f"bar.sync {self.a}" + (f" ({self.b} threads)" if self.b else " (all threads)"))
            who = "every thread" if self.a == 16 else f"CTA {self.cta}"
        return f"t={self.time:<5} {k:<11} {who}{op}{bar} {what}".rstrip()


class Race:
    """A race or a missing fence found by the memory model (``Machine.races``):
    ``rule`` (data-race, proxy-fence-missing, tensormap-fence-missing,
    mbarrier-init-unordered, same-value-store), ``time`` (the hazard's logical time) and the two
    accesses, ``first`` (the earlier) and ``second`` (the one that found it):
    dicts with time, cta, thread, op (issue number, None for a thread's own
    access), instr, space ("shared" / "global"), rank, lo, hi (the bytes both
    touch), write and proxy ("generic", "async", "tensormap")."""

    def __init__(self, d):
        self.rule = d["rule"]
        self.time = d["time"]
        self.first = d["first"]
        self.second = d["second"]

    def __repr__(self):
        def acc(a):
            who = (f"thread {a['thread']} of CTA {a['cta']}" if a["op"] is None
                   else f"#{a['op']} (thread {a['thread']} of CTA {a['cta']})")
            return f"{who} {'writes' if a['write'] else 'reads'} with {a['instr']} at t={a['time']}"
        return (f"<{self.rule}: {acc(self.first)}; {acc(self.second)}; "
                f"{self.first['space']} [0x{self.first['lo']:x}, 0x{self.first['hi']:x})>")


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


class PendingOp:
    """A pending asynchronous operation (``Machine.pending_ops()``): its issue
    number ``op``, ``kind`` (the PTX form), issuer (``cta``, ``thread``),
    ``source`` / ``destination`` ranges (dicts: space, cta / address, offset,
    nbytes; None where not a contiguous range: a tensor copy's global side),
    ``tracked_by`` (the mbarrier it credits, with its tx bytes, or its thread's
    async-group: None while not committed; None for st.async.release.global,
    done by the end of the CTA), ``source_read`` (two-step
    operations: the source has been read) and ``reduction`` (the destination
    keeps its bytes: reductions, masked copies)."""

    def __init__(self, d):
        self.__dict__.update(d)

    def __repr__(self):
        def rng(r):
            if r is None:
                return "-"
            if r["space"] == "shared":
                return f"smem[CTA {r['cta']}][0x{r['offset']:x}:+{r['nbytes']}]"
            return f"global[0x{r['address']:x}:+{r['nbytes']}]"
        t = self.tracked_by
        if t is None and self.kind.startswith("st.async.release"):
            tr = "nothing: done by the end of the CTA"
        elif t is None:
            tr = "-"
        elif t["kind"] == "mbarrier":
            tr = f"mbarrier 0x{t['offset']:x}@CTA{t['cta']} ({t['tx_bytes']} tx bytes)"
        else:
            tr = f"{t['kind']} {'(not committed)' if t['group'] is None else t['group']}"
        return (f"<#{self.op} {self.kind} by CTA {self.cta} thread {self.thread}: "
                f"{rng(self.source)} -> {rng(self.destination)}, tracked by {tr}>")

class PendingOps(list):
    """``Machine.pending_ops()``: a list of PendingOp, in issue order, shown as a
    table (issue number, kind, issuer, source and destination ranges, what
    tracks it) in Jupyter and one line per operation in a terminal."""

    def __repr__(self):
        if not self:
            return "no pending operations"
        return "\n".join([f"{len(self)} pending operation{'s' if len(self) != 1 else ''}:"]
                         + [f"  {op!r}" for op in self])

