"""The race checker's per-byte shadow (csrc/core/check/shadow.c) against a slow reference
written here: every access kept per byte in a list, happens-before as graph reachability (no
vector clocks, no sets, no cells). Random programs of shared-memory reads and writes, bulk
tensor-like loads into shared memory (async writes), bulk stores out of it (async reads),
bar.sync, mbarrier signals, wait_group and fence.proxy.async run in report mode: after every
event both name the same races, each with the same earlier access and the same bytes.

What a byte keeps (docs/hazards.md, "The cost of the race checker"): a thread's write replaces
everything; a read replaces its own slot's earlier read; an operation's write keeps the threads'
accesses and the operations' it is not ordered after. A new access meets its bytes in address
order, oldest first in a byte: the first unordered conflict is a data-race; if none, the first
generic write that an async access meets without a fence.proxy.async between is
proxy-fence-missing. The bytes reported: that access's piece of the new access's range.
"""
import bisect

import numpy as np
from hypothesis import given, settings, strategies as st

import ptxasync as p

SMEM = 0x400            # the shared bytes the programs touch: [SMEM, SMEM + 128)


def _reaches(preds, a, b):
    seen, stack = set(), [b]
    while stack:
        x = stack.pop()
        if x == a:
            return True
        if x in seen:
            continue
        seen.add(x)
        stack.extend(preds.get(x, ()))
    return False


class Reference:
    """Accesses per byte as lists of dicts; happens-before by reachability."""

    def __init__(self):
        self.preds, self.last, self.fences = {}, {}, []
        self.bytes = {}                    # offset -> [access], oldest first
        self.stores = {}                   # thread -> its bulk stores' read nodes, not yet waited for
        self.found = []

    def node(self, key, threads, extra=()):
        self.preds[key] = {self.last[t] for t in threads if t in self.last} | set(extra)
        for t in threads:
            self.last[t] = key

    def ordered(self, o, at):
        return _reaches(self.preds, o["node"], at)

    def fenced(self, o, at):
        return any(_reaches(self.preds, o["node"], f) and _reaches(self.preds, f, at) for f in self.fences)

    def verdict(self, o, a):
        """1 data-race, 2 proxy-fence-missing, 0 none (a's clock: node a['at'])."""
        if not (o["write"] or a["write"]) or (o["op"] and a["op"]):
            return 0
        if not (o["slot"] == a["slot"] and not a["op"]) and not self.ordered(o, a["at"]):
            return 1
        if o["write"] and not o["async"] and a["async"] and not self.fenced(o, a["at"]):
            return 2
        return 0

    def access(self, ev, a):
        lo, hi = a["lo"], a["hi"]
        found = None
        for want in (1, 2):
            for b in range(lo, hi):
                for o in self.bytes.get(b, []):
                    if self.verdict(o, a) == want:
                        found = (want, o, b)
                        break
                if found:
                    break
            if found:
                break
        if found:
            want, o, b = found
            end = b
            while end < hi and any(x is o for x in self.bytes.get(end, [])):
                end += 1
            self.found.append((ev, "data-race" if want == 1 else "proxy-fence-missing", o["ev"], o["op"],
                               o["write"], b, end))

    def record(self, a, keep_clock_at=None):
        for b in range(a["lo"], a["hi"]):
            old = self.bytes.get(b, [])
            if a["write"] and not a["op"]:
                kept = []
            elif not a["write"]:
                kept = [o for o in old if o["write"] or o["slot"] != a["slot"]]
            else:                          # an operation's write
                kept = [o for o in old if not o["op"] or not self.ordered(o, keep_clock_at)]
            self.bytes[b] = kept + [a]


def _acc(ev, node, at, slot, lo, hi, write, op, async_):
    return {"ev": ev, "node": node, "at": at, "slot": slot, "lo": lo, "hi": hi, "write": write, "op": op,
            "async": async_}


def reference(prog):
    """[(event, rule, earlier event, earlier is an operation, earlier writes, lo, hi)]."""
    r = Reference()
    loads = []
    for n, ev in enumerate(prog):
        kind = ev[0]
        if kind in ("r", "w"):
            _, t, lo, hi = ev
            r.node(n, [t])
            a = _acc(n, n, n, ("t", t), lo, hi, kind == "w", False, False)
            r.access(n, a)
            r.record(a)
        elif kind == "bar":
            r.node(n, ev[1])
        elif kind == "sig":
            _, t1, t2 = ev
            r.node((n, "arrive"), [t1])
            r.node((n, "wait"), [t2], [(n, "arrive")])
        elif kind == "fence":
            r.node(n, [ev[1]])
            r.fences.append(n)
        elif kind == "load":               # arrive.expect_tx, then the copy into [lo, hi)
            _, t, lo, hi = ev
            r.node((n, "arrive"), [t])
            r.preds[n] = {(n, "arrive")}
            loads.append(n)
            a = _acc(n, n, (n, "arrive"), ("load", n), lo, hi, True, True, True)
            r.access(n, a)
            r.record(a, keep_clock_at=(n, "arrive"))
        elif kind == "wait":               # a wait on the k-th load's mbarrier, returning True
            _, t, k = ev
            if loads:
                op = loads[k % len(loads)]
                r.node((n, "wait"), [t], [op, (op, "arrive")])
        elif kind == "store":              # a bulk store of [lo, hi) to global memory, committed
            _, t, lo, hi = ev
            r.node((n, "issue"), [t])
            r.preds[n] = {(n, "issue")}
            r.stores.setdefault(t, []).append(n)
            a = _acc(n, n, (n, "issue"), ("bulkread", t), lo, hi, False, True, True)
            r.access(n, a)
            r.record(a)
        elif kind == "wg":                 # cp.async.bulk.wait_group 0: the thread's stores are done
            t = ev[1]
            r.node((n, "wg"), [t], r.stores.pop(t, []))
    return r.found


def run_model(prog):
    m = p.Machine(policy="immediate", hazards="report", trace=True, checks=False)
    g = m.alloc(4096, fill=5)
    ends, nbar, loads = [], 0, []
    for n, ev in enumerate(prog):
        kind = ev[0]
        if kind == "r":
            m.cta(0).read(np.uint8, ev[3] - ev[2], SMEM + ev[2], thread=ev[1])
        elif kind == "w":
            m.cta(0).write(SMEM + ev[2], np.zeros(ev[3] - ev[2], np.uint8), thread=ev[1])
        elif kind == "bar":
            m.bar_sync(0, threads=list(ev[1]))
        elif kind == "sig":
            b = m.mbarrier(8 * nbar).init(1, thread=ev[1])
            nbar += 1
            b.arrive(thread=ev[1])
            assert b.try_wait(0, thread=ev[2])
        elif kind == "fence":
            m.fence_proxy_async(thread=ev[1])
        elif kind == "load":
            _, t, lo, hi = ev
            b = m.mbarrier(8 * nbar).init(1, thread=t)
            nbar += 1
            b.arrive_expect_tx(hi - lo, thread=t)
            m.cp_async_bulk(SMEM + lo, g.address, hi - lo, mbar=b, thread=t)
            loads.append(b)
        elif kind == "wait":
            if loads:
                assert loads[ev[2] % len(loads)].try_wait(0, thread=ev[1])
        elif kind == "store":
            _, t, lo, hi = ev
            m.cp_async_bulk(g.address + 256 * n % 4096, SMEM + lo, hi - lo, dst_space="global",
                            src_space="shared::cta", thread=t)
            m.cp_async_bulk_commit_group(thread=t)
        else:
            m.cp_async_bulk_wait_group(0, thread=ev[1])
        ends.append(m.trace[-1].time if m.trace else -1)
    out = []
    for race in m.races:
        a, b = race.first, race.second
        ev = bisect.bisect_left(ends, b["time"])
        out.append((ev, race.rule, bisect.bisect_left(ends, a["time"]), a["op"] is not None, bool(a["write"]),
                    a["lo"] - SMEM, a["hi"] - SMEM))
    return out


@st.composite
def programs(draw):
    nthreads = draw(st.integers(2, 4))
    thread = st.integers(0, nthreads - 1)
    prog = []
    for _ in range(draw(st.integers(1, 16))):
        kind = draw(st.sampled_from(["r", "r", "w", "w", "bar", "sig", "load", "load", "wait", "wait", "fence",
                                     "store", "wg"]))
        if kind in ("r", "w", "load", "store"):
            lo = draw(st.integers(0, 5)) * 16
            if kind in ("r", "w") and draw(st.booleans()):    # thread accesses: any bytes
                lo += draw(st.integers(0, 15))
                prog.append((kind, draw(thread), lo, lo + draw(st.integers(1, 24))))
            else:
                prog.append((kind, draw(thread), lo, lo + 16 * draw(st.integers(1, 3))))
        elif kind == "bar":
            prog.append(("bar", tuple(sorted(draw(st.sets(thread, min_size=1))))))
        elif kind == "sig":
            t1 = draw(thread)
            prog.append(("sig", t1, draw(thread.filter(lambda x: x != t1))))
        elif kind == "wait":
            prog.append(("wait", draw(thread), draw(st.integers(0, 20))))
        else:
            prog.append((kind, draw(thread)))
    return prog


@settings(max_examples=300, deadline=None)
@given(programs())
def test_shadow_reports_what_the_reference_reports(prog):
    assert run_model(prog) == reference(prog)


def test_the_reference_can_tell():
    """Each verdict the property compares, in a program of its own (no test that cannot fail)."""
    race = [("w", 0, 0, 16), ("r", 1, 4, 8)]
    assert reference(race) == run_model(race) == [(1, "data-race", 0, False, True, 4, 8)]
    fence = [("w", 0, 0, 32), ("bar", (0, 1)), ("load", 1, 16, 48)]
    assert reference(fence) == run_model(fence) == [(2, "proxy-fence-missing", 0, False, True, 16, 32)]
    fenced = [("w", 0, 0, 32), ("fence", 0), ("bar", (0, 1)), ("load", 1, 16, 48)]
    assert reference(fenced) == run_model(fenced) == []
    # a read replaces its own slot's read: the write names the later one
    reads = [("r", 1, 0, 8), ("r", 1, 4, 12), ("w", 0, 0, 16)]
    assert reference(reads) == run_model(reads) == [(2, "data-race", 0, False, False, 0, 4)]
    store = [("w", 0, 0, 16), ("bar", (0, 1)), ("store", 1, 0, 16), ("w", 0, 0, 16)]
    assert reference(store) == run_model(store) == [(2, "proxy-fence-missing", 0, False, True, 0, 16),
                                                    (3, "data-race", 2, True, False, 0, 16)]
