"""Bank pictures: which of the 32 shared-memory banks each thread of a warp touches.

The wavefront counts are the consumers' bank model (``consumers.bank_conflicts``,
rules K1-K4 of docs/consumers.md); the picture only places them: one row per
thread, one column per bank, threads grouped by the phase the hardware serves
them in, and each cell numbered with the wavefront (1, 2, ...) that serves its
4-byte word: distinct words of one bank within a phase take one wavefront each,
in order of the lowest thread that wants them.
"""
from .scene import Scene

__all__ = ["BankData", "banks_data", "banks_scene", "banks_figure", "banks_svg", "banks_text"]

RAMP = ["#c7e9c0", "#fdd49e", "#fdae6b", "#fd8d3c", "#f16913", "#d94801", "#a63603", "#7f2704"]


class BankData:
    """``report``: the BankReport; ``cells[t]``: {bank: wavefront (1-based)} of
    thread t; ``phase_of[t]``: its phase; ``title``."""

    def __init__(self, addresses, report, title):
        self.addresses, self.report, self.title = list(addresses), report, title
        pt = report.phase_threads
        self.phase_of = [t // pt for t in range(32)]
        w = report.width
        self.cells = [dict() for _ in range(32)]
        for p in range(report.phases):
            seen = {}                                            # bank -> [words in first-want order]
            for t in range(p * pt, min((p + 1) * pt, 32)):
                if not report.banks[t]:
                    continue
                for i in range(w // 4):
                    word = self.addresses[t] // 4 + i
                    words = seen.setdefault(word % 32, [])
                    if word not in words:
                        words.append(word)
                    self.cells[t][word % 32] = words.index(word) + 1


    def _repr_svg_(self):
        """Jupyter: the bank picture (no matplotlib needed)."""
        return banks_scene(self).svg()


def banks_data(addresses, width=4, op="ld", num=4, title=None):
    """Run the bank model on 32 per-thread addresses and lay out its picture."""
    from ..consumers import bank_conflicts
    rep = bank_conflicts(addresses, width, op, num)
    return BankData(addresses, rep, title or f"{rep.op} {rep.width} B")


def _data(x, **kw):
    if isinstance(x, BankData):
        return [x]
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], BankData):
        return list(x)
    return [banks_data(x, **kw)]


def _panel(d, cell=11.0):
    rep = d.report
    left, top = 34.0, 52.0
    sc = Scene(left + 32 * cell + 120, top + 32 * cell + 16)
    sc.text(left, 10, d.title, size=10, ha="left", bold=True, tag="panel_title")
    sc.text(left, 25, f"{rep.wavefronts} wavefront(s), {rep.phases} phase(s) of {rep.phase_threads} threads"
            + (", packed (K4)" if rep.packed else ""), size=8, ha="left", tag="summary")
    for b in range(32):
        if b % 4 == 0:
            sc.text(left + (b + 0.5) * cell, top - 8, str(b), size=6.5, tag="bank_label")
    sc.text(left - 4, top - 8, "bank", size=6.5, ha="right", color="#444")
    for t in range(32):
        y = top + t * cell
        sc.text(left - 4, y + cell / 2, f"t{t}", size=6, ha="right", tag="thread_label")
        for b in range(32):
            wf = d.cells[t].get(b)
            if wf is None:
                sc.rect(left + b * cell, y, cell, cell, fill="white", edge="#e4e4e4", lw=0.3, tag="empty")
            else:
                sc.rect(left + b * cell, y, cell, cell, fill=RAMP[min(wf - 1, len(RAMP) - 1)], edge="#666",
                        lw=0.4, tag="cell", label=f"thread {t} (address 0x{d.addresses[t]:x}) bank {b}: wavefront {wf}")
                sc.text(left + (b + 0.5) * cell, y + cell / 2, str(wf), size=5.5, tag="wavefront",
                        color="white" if wf >= 5 else "#000")
    pt = rep.phase_threads
    for p in range(rep.phases):
        y0 = top + p * pt * cell
        sc.line(left, y0, left + 32 * cell, y0, color="#000", lw=1.2, tag="phase_line")
        n = rep.per_phase[p] if p < len(rep.per_phase) else "?"
        sc.text(left + 32 * cell + 6, y0 + min(pt, 32) * cell / 2, f"phase {p}: {n} wf", size=7.5,
                ha="left", tag="phase_label")
    sc.line(left, top + 32 * cell, left + 32 * cell, top + 32 * cell, color="#000", lw=1.2)
    return sc


def banks_scene(data, cell=11.0, title=None, notes=(), **kw):
    """One panel per BankData (or per list item), side by side. ``data``: a
    BankData, a list of them, or 32 addresses (then ``width``/``op``/``num``).
    ``title`` heads the picture (what was read: type, box, destination);
    ``notes`` are lines printed under the panels (e.g. a panel left out, and why)."""
    panels = [_panel(d, cell) for d in _data(data, **kw)]
    notes = [str(n) for n in notes]
    W = max(sum(p.width for p in panels), 10 + 4.3 * max([len(n) for n in notes] + [0]))
    H = max(p.height for p in panels) + 40 + 13 * len(notes)
    sc = Scene(W, H, title or "bank conflicts")
    sc.text(10, 12, title or "Shared-memory banks per thread (number = wavefront serving that word)", size=11,
            ha="left", bold=True, tag="title")
    if title:
        sc.text(10, 26, "number = the wavefront serving that word", size=8, ha="left", color="#444",
                tag="legend")
    x = 0.0
    for p in panels:
        sc.place(p, x, 22 + (12 if title else 0))
        x += p.width
    y = max(p.height for p in panels) + 34 + (12 if title else 0)
    for n in notes:
        sc.text(10, y, n, size=7.5, ha="left", color="#b2182b", tag="note")
        y += 13
    sc.height = y + 4
    return sc


def banks_figure(data, **kw):
    """The bank picture as a matplotlib Figure (needs matplotlib)."""
    return banks_scene(data, **kw).figure()


def banks_svg(data, **kw):
    """The bank picture as SVG text (no matplotlib needed)."""
    return banks_scene(data, **kw).svg()


def banks_text(data, **kw):
    """The bank picture for a terminal: a row per thread, a column per bank,
    the wavefront number where the thread touches the bank."""
    out = []
    for d in _data(data, **kw):
        rep = d.report
        out.append(f"{d.title}: {rep.wavefronts} wavefront(s), {rep.phases} phase(s) of {rep.phase_threads} "
                   f"threads" + (", packed (K4)" if rep.packed else ""))
        out.append("bank     " + "".join(str(b // 10) if b % 10 == 0 else " " for b in range(32)))
        out.append("         " + "".join(str(b % 10) for b in range(32)))
        for t in range(32):
            if t % rep.phase_threads == 0:
                p = t // rep.phase_threads
                out.append(f"-- phase {p}: {rep.per_phase[p] if p < len(rep.per_phase) else '?'} wavefront(s)")
            row = "".join(str(min(d.cells[t][b], 9)) if b in d.cells[t] else "." for b in range(32))
            out.append(f"t{t:<3}     {row}")
    return "\n".join(out)
