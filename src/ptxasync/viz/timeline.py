"""Pipeline timeline: the engine's trace (``Machine(trace=True)``) over logical time.

One lane per issuing thread (CTA, thread), one per asynchronous operation (from
its issue to its last write or complete_tx), one per mbarrier (its phases as
shaded spans, arrivals, transaction bytes and phase flips); hazards are red
marks with a dashed line across every lane. Fences (``F``) and barriers
(``B``: bar.sync, barrier.cluster) sit on their threads' lanes; the memory
model's races (``machine.races``) ring their two accesses in red, joined by a
red line. Each trace event takes one column,
in trace order (the trace clock only orders events), so nothing overlaps.
Everything is read from ``machine.trace`` (``check.TraceEvent``): nothing is
re-derived.
"""
from .scene import Scene

__all__ = ["Timeline", "timeline", "timeline_scene", "timeline_figure", "timeline_svg", "timeline_text"]

# kind -> (colour, text letter, legend)
MARKS = {
    "init": ("#7f7f7f", "i", "init"),
    "issue": ("#1f77b4", "I", "issue"),
    "arrive": ("#2ca02c", "A", "arrive"),
    "expect_tx": ("#98df8a", "E", "expect_tx"),
    "complete_tx": ("#ff7f0e", "X", "complete_tx"),
    "read": ("#17becf", "r", "source read"),
    "write": ("#8c564b", "w", "destination write"),
    "wait": ("#9467bd", "W", "wait (hollow, '.': returned false)"),
    "commit_group": ("#bcbd22", "C", "commit_group"),
    "wait_group": ("#bcbd22", "G", "wait_group"),
    "inval": ("#7f7f7f", "v", "inval"),
    "phase": ("#000000", "|", "phase flip"),
    "hazard": ("#d62728", "!", "hazard"),
    "fence": ("#e377c2", "F", "fence"),
    "barrier": ("#000080", "B", "bar.sync / barrier.cluster"),
}


class Timeline:
    """Lanes of a trace. ``lanes``: [(key, label)] in drawing order, key
    ("thread", cta, thread), ("op", n) or ("bar", rank, addr). ``marks``:
    [(column, lane index, kind, event)]. ``ops``: {n: (first column, last
    column)}. ``phases``: {bar lane index: [(start column, end column, phase)]}.
    ``hazards``: [(column, rule)]. ``times``: the trace time of each column.
    ``races``: [(rule, (column, lane), (column, lane))], the two accesses of
    each race the memory model found (``check.Race``) that the trace holds."""

    def __init__(self, events, races=()):
        from ..check import RULES
        self.events = list(events)
        self.times = [e.time for e in self.events]
        threads, ops, bars = {}, {}, {}
        for e in self.events:
            if e.thread is not None:
                threads.setdefault((e.cta, e.thread), None)
            if e.op is not None:
                ops.setdefault(e.op, None)
            if e.space == 1 and e.kind not in ("read", "write", "issue", "hazard"):
                bars.setdefault((e.rank, e.addr), None)
        self.lanes = ([(("thread", c, t), f"CTA {c} thread {t}") for c, t in sorted(threads)]
                      + [(("op", n), f"op #{n}") for n in sorted(ops)]
                      + [(("bar", r, a), f"mbarrier 0x{a:x} CTA {r}") for r, a in sorted(bars)])
        index = {k: i for i, (k, _) in enumerate(self.lanes)}
        self.marks, self.ops, self.hazards = [], {}, []
        phase_start, phase_no = {}, {}
        self.phases = {}
        for col, e in enumerate(self.events):
            k = e.kind
            if k == "hazard":
                self.hazards.append((col, RULES[e.a] if e.a < len(RULES) else str(e.a)))
            if e.op is not None:
                lo, _ = self.ops.get(e.op, (col, col))
                self.ops[e.op] = (lo, col)
            bar = index.get(("bar", e.rank, e.addr)) if e.space == 1 and k not in ("read", "write") else None
            if e.op is not None and k == "issue":
                self.marks.append((col, index[("op", e.op)], k, e))      # the operation's lane starts here
            if e.op is not None and k != "issue":
                self.marks.append((col, index[("op", e.op)], k, e))      # the operation's own work
            elif e.thread is not None:
                self.marks.append((col, index[("thread", e.cta, e.thread)], k, e))
            elif k == "barrier":   # every thread of the CTA (bar.sync), of the cluster (barrier.cluster)
                for (key, _), i in zip(self.lanes, range(len(self.lanes))):
                    if key[0] == "thread" and (e.a == 16 or key[1] == e.cta):
                        self.marks.append((col, i, k, e))
            if bar is not None and k in ("init", "arrive", "expect_tx", "complete_tx", "phase", "inval"):
                if k == "init":
                    phase_start[bar], phase_no[bar] = col, 0
                if k != "init" or e.thread is None:
                    self.marks.append((col, bar, k, e))
                if k == "phase":
                    start = phase_start.get(bar, 0)
                    self.phases.setdefault(bar, []).append((start, col, e.a - 1))
                    phase_start[bar], phase_no[bar] = col, e.a
        self.open_phases = {b: (phase_start[b], len(self.events) - 1, phase_no[b])
                            for b in phase_start}
        self.races = []
        for r in races:
            ends = [self._place(a, index) for a in (r.first, r.second)]
            if None not in ends:
                self.races.append((r.rule, ends[0], ends[1]))

    def _place(self, a, index):
        """(column, lane) of a race's access: its event, or the column of its
        operation's issue; None if the trace does not hold it."""
        import bisect
        c = bisect.bisect_left(self.times, a["time"])
        if c >= len(self.times):
            return None
        lane = index.get(("op", a["op"])) if a["op"] is not None else index.get(("thread", a["cta"], a["thread"]))
        if lane is None and a["op"] is not None:   # its issue event is on the issuer's lane
            lane = index.get(("thread", a["cta"], a["thread"]))
        return None if lane is None else (c, lane)


def timeline(trace_or_machine):
    """A Timeline from ``machine.trace`` (or the Machine itself, with its races)."""
    events = getattr(trace_or_machine, "trace", trace_or_machine)
    races = getattr(trace_or_machine, "races", ()) if hasattr(trace_or_machine, "trace") else ()
    return Timeline(events, races)


def _tl(x):
    return x if isinstance(x, Timeline) else timeline(x)


def timeline_scene(trace, col=14.0, lane=22.0, max_events=400):
    """The timeline as a Scene: lanes down, one column per trace event across."""
    tl = _tl(trace)
    if len(tl.events) > max_events:
        tl = Timeline(tl.events[:max_events])
    left, top, n = 150.0, 46.0, max(len(tl.events), 1)
    legend_h = 40.0
    W = left + n * col + 20
    H = top + len(tl.lanes) * lane + 30 + legend_h
    sc = Scene(max(W, 620.0), H, f"pipeline timeline: {len(tl.events)} events")
    sc.text(10, 14, f"Pipeline timeline ({len(tl.events)} trace events, one column each; "
            f"{len(tl.hazards)} hazard(s))", size=11, ha="left", bold=True, tag="title")
    x = lambda c: left + c * col                                      # noqa: E731
    y = lambda i: top + i * lane                                      # noqa: E731
    for i, (key, label) in enumerate(tl.lanes):
        shade = {"thread": "#f4f7fb", "op": "#fbf8f2", "bar": "#f5f5f5"}[key[0]]
        sc.rect(left, y(i), n * col, lane, fill=shade, edge="#dddddd", lw=0.4, tag="lane")
        sc.text(left - 6, y(i) + lane / 2, label, size=8, ha="right", tag="lane_label")
    for b, spans in tl.phases.items():
        for c0, c1, ph in spans:
            sc.rect(x(c0) + col / 2, y(b) + 3, (c1 - c0) * col, lane - 6, fill="#e3eaf5" if ph % 2 == 0 else "#f5e9dc",
                    edge="none", lw=0, tag="phase_span", label=f"phase {ph}")
            sc.text(x(c0) + col / 2 + 4, y(b) + 2, f"phase {ph}", size=6, ha="left", va="top", color="#555",
                    tag="phase_label")
    for b, (c0, c1, ph) in tl.open_phases.items():
        if c1 > c0:
            sc.text(x(c0) + col / 2 + 4, y(b) + 2, f"phase {ph}", size=6, ha="left", va="top", color="#555",
                    tag="phase_label")
    bar_lanes = {i for i, (key, _) in enumerate(tl.lanes) if key[0] == "bar"}
    drawn = set()
    for o, (c0, c1) in tl.ops.items():
        i = [k for k, _ in tl.lanes].index(("op", o))
        sc.rect(x(c0) + col / 2, y(i) + lane / 2 - 2, max((c1 - c0), 0.2) * col, 4, fill="#aec7e8",
                edge="#1f77b4", lw=0.5, tag="op", label=f"op #{o}: columns {c0}-{c1}")
    for c, i, k, e in tl.marks:
        colour = MARKS.get(k, ("#000", "?", ""))[0]
        # an mbarrier lane's marks sit below its phase label, so the label stays readable
        cx, cy = x(c) + col / 2, y(i) + lane / 2 + (3 if i in bar_lanes else 0)
        drawn.add(k)
        if k == "phase":
            sc.line(cx, y(i) + 1, cx, y(i) + lane - 1, color="#000", lw=2.0, tag="phase")
            continue
        s = 8.0
        fill = "white" if (k == "wait" and not e.b & 1) else colour
        sc.rect(cx - s / 2, cy - s / 2, s, s, fill=fill, edge=colour, lw=1.2, tag=k, label=str(e))
        if k == "arrive" and e.b:     # arrive.expect_tx: its right half in the expect_tx colour
            tx = MARKS["expect_tx"][0]
            sc.rect(cx, cy - s / 2, s / 2, s, fill=tx, edge=tx, lw=0.8, tag="expect_tx",
                    label=f"expect_tx {e.b} bytes")
            drawn.add("expect_tx")
    for c, rule in tl.hazards:
        cx = x(c) + col / 2
        sc.line(cx, top - 4, cx, top + len(tl.lanes) * lane, color="#d62728", lw=1.0, dash=True, tag="hazard_line")
        sc.text(cx, top - 8, rule, size=7, color="#d62728", tag="hazard_rule", rotation=0)
    for rule, (c0, i0), (c1, i1) in tl.races:
        sc.line(x(c0) + col / 2, y(i0) + lane / 2, x(c1) + col / 2, y(i1) + lane / 2, color="#d62728", lw=1.4,
                tag="race_line")
        for c, i in ((c0, i0), (c1, i1)):
            sc.rect(x(c) + col / 2 - 6, y(i) + lane / 2 - 6, 12, 12, fill="none", edge="#d62728", lw=1.6,
                    tag="race_access", label=f"{rule}: access at t={tl.times[c]}")
    # time axis: trace clock every 5 columns
    ybase = top + len(tl.lanes) * lane
    for c in range(0, len(tl.events), 5):
        sc.line(x(c) + col / 2, ybase, x(c) + col / 2, ybase + 4, color="#444", lw=0.6, tag="tick")
        sc.text(x(c) + col / 2, ybase + 11, f"t={tl.times[c]}", size=6.5, tag="tick_label")
    sc.text(left - 6, ybase + 11, "trace time", size=7, ha="right", color="#444")
    # legend
    ly, lx = ybase + 28, 10.0
    if tl.hazards:
        drawn.add("hazard")
    for k in [k for k in MARKS if k in drawn]:        # only what the picture shows
        colour, _, name = MARKS[k]
        if k == "expect_tx":
            name += " (a right half: arrive.expect_tx)"
        if k == "phase":
            sc.line(lx + 4, ly - 5, lx + 4, ly + 5, color="#000", lw=2.0, tag="legend")
        else:
            sc.rect(lx, ly - 4, 8, 8, fill=colour, edge=colour, lw=1.0, tag="legend")
        sc.text(lx + 12, ly, name, size=7, ha="left", tag="legend")
        lx += 12 + 5.2 * len(name) + 14
        if lx > sc.width - 120:
            lx, ly = 10.0, ly + 14
    sc.height = max(sc.height, ly + 14)
    return sc


def timeline_figure(trace, **kw):
    """The timeline as a matplotlib Figure (needs matplotlib)."""
    return timeline_scene(trace, **kw).figure()


def timeline_svg(trace, **kw):
    """The timeline as SVG text (no matplotlib needed)."""
    return timeline_scene(trace, **kw).svg()


def timeline_text(trace, max_events=400):
    """The timeline for a terminal: one line per lane, one character per event
    (letters as in ``MARKS``; '.' a wait that returned false, '=' an operation
    in flight, '-' between phase flips)."""
    tl = _tl(trace)
    if len(tl.events) > max_events:
        tl = Timeline(tl.events[:max_events])
    n = len(tl.events)
    rows = [[" "] * n for _ in tl.lanes]
    index = {k: i for i, (k, _) in enumerate(tl.lanes)}
    for o, (c0, c1) in tl.ops.items():
        for c in range(c0, c1 + 1):
            rows[index[("op", o)]][c] = "="
    for b, (c0, c1, _) in tl.open_phases.items():
        for c in range(c0, c1 + 1):
            rows[b][c] = "-"
    for b, spans in tl.phases.items():
        for c0, c1, _ in spans:
            for c in range(c0, c1 + 1):
                rows[b][c] = "-"
    for c, i, k, e in tl.marks:
        rows[i][c] = "." if (k == "wait" and not e.b & 1) else MARKS.get(k, ("", "?", ""))[1]
    for c, _ in tl.hazards:
        for r in rows:
            if r[c] == " ":
                r[c] = "!"
    width = max([len(label) for _, label in tl.lanes] + [10])
    out = [f"pipeline timeline: {n} events, {len(tl.hazards)} hazard(s); one column per event"]
    for (key, label), r in zip(tl.lanes, rows):
        out.append(f"{label:>{width}} |{''.join(r).rstrip()}")
    out.append(" " * width + "  " + "".join("^" if c % 10 == 0 else " " for c in range(n)).rstrip()
               + ("  (^ every 10 events, from t=%d)" % tl.times[0] if n else ""))
    out.append("  ".join(f"{v[1]} {v[2]}" for k, v in MARKS.items()))
    for c, rule in tl.hazards:
        out.append(f"hazard at t={tl.times[c]}: {rule}")
    for rule, (c0, i0), (c1, i1) in tl.races:
        out.append(f"{rule}: {tl.lanes[i0][1]} at t={tl.times[c0]} and {tl.lanes[i1][1]} at t={tl.times[c1]}")
    return "\n".join(out)
