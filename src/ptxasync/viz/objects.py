"""How model objects show themselves in Jupyter (``_repr_html_`` / ``_repr_svg_``):
no matplotlib needed."""
import html

import numpy as np

from .layout import layout_scene
from .scene import Scene

__all__ = ["tensormap_html", "mbarrier_scene", "smem_scene", "machine_html", "pending_html",
           "tensor_load_html"]


def tensormap_html(tm, table):
    """The field table and, for a map that loads, its box at shared address 0."""
    try:
        pic = layout_scene(tm, 0, max_lines=16).svg()
    except Exception:   # a map no copy accepts (e.g. a packed type): the table alone
        return table
    return f"<div>{table}<div style='margin-top:6px'>{pic}</div></div>"


def mbarrier_scene(bar):
    """Phase, arrivals (pending of expected) and tx-count of an mbarrier."""
    s_ = bar.state
    exp, pend, tx = s_["expected"], s_["pending"], s_["tx"]
    s = Scene(330, 62, f"mbarrier at 0x{bar.addr:x} (CTA {bar.cta})")
    s.text(6, 10, s.title, size=9, ha="left", bold=True, tag="title")
    s.text(6, 30, f"phase {s_['phase']} (parity {s_['phase'] & 1})", size=8, ha="left", tag="phase")
    x0, w = 130.0, 190.0
    done = 0 if exp == 0 else (exp - pend) / exp
    s.rect(x0, 22, w, 14, fill="#eeeeee", edge="#888", tag="arrivals_frame")
    s.rect(x0, 22, w * max(0.0, min(1.0, done)), 14, fill="#59a14f", edge="none", lw=0, tag="arrivals")
    s.text(x0 + w / 2, 29, f"{exp - pend} of {exp} arrived ({pend} pending)", size=7.5, tag="arrivals_label")
    s.text(6, 50, f"tx-count {tx}" + (" (bytes still expected)" if tx > 0 else
                                      " (more bytes completed than expected)" if tx < 0 else ""),
           size=8, ha="left", color="#b2182b" if tx else "#000", tag="tx")
    return s


def smem_scene(smem, title, line=128, per_row=32):
    """One cell per 128-byte line of shared memory, darker the more of its bytes are non-zero."""
    raw = np.asarray(smem)
    n = raw.size // line
    filled = np.count_nonzero(raw[:n * line].reshape(n, line), axis=1) / line
    rows = -(-n // per_row)
    cw, ch, left, top = 10.0, 10.0, 58.0, 30.0
    s = Scene(left + per_row * cw + 10, top + rows * ch + 22, title)
    s.text(6, 10, title, size=9, ha="left", bold=True, tag="title")
    for r in range(rows):
        s.text(left - 4, top + r * ch + ch / 2, f"0x{r * per_row * line:05x}", size=6.5, ha="right",
               family="monospace", tag="address")
        for c in range(per_row):
            i = r * per_row + c
            if i >= n:
                break
            f = filled[i]
            col = "#ffffff" if f == 0 else "#%02x%02x%02x" % tuple(int(255 - (255 - v) * (0.35 + 0.65 * f))
                                                                   for v in (0x4e, 0x79, 0xa7))
            s.rect(left + c * cw, top + r * ch, cw, ch, fill=col, edge="#dddddd", lw=0.3,
                   tag="line_used" if f else "line_zero")
    used = int(np.count_nonzero(filled))
    s.text(6, top + rows * ch + 12, f"{used} of {n} 128-byte lines hold non-zero bytes "
           f"({per_row * line // 1024} KiB per row)", size=7.5, ha="left", tag="note")
    return s


def machine_html(m):
    parts = [f"<p><code>{html.escape(repr(m))}</code></p>"]
    for cta in m.ctas:
        parts.append(smem_scene(cta.smem, f"CTA {cta.rank} shared memory ({cta.smem.size // 1024} KiB)").svg())
    return "<div>" + "".join(parts) + "</div>"


def _range_html(r):
    if r is None:
        return "<i>tensor (global side)</i>"
    if r["space"] == "shared":
        return f"smem[CTA {r['cta']}] 0x{r['offset']:x} .. 0x{r['offset'] + r['nbytes']:x} ({r['nbytes']} B)"
    return f"global 0x{r['address']:x} .. 0x{r['address'] + r['nbytes']:x} ({r['nbytes']} B)"


def _tracked_html(t):
    if t is None:
        return "-"
    if t["kind"] == "mbarrier":
        return f"mbarrier 0x{t['offset']:x} @ CTA {t['cta']} ({t['tx_bytes']} tx bytes)"
    return f"{t['kind']} " + ("<b>not committed</b>" if t["group"] is None else f"group {t['group']}")


def pending_html(ops):
    """The pending operations as a table: issue number, kind, issuer, source,
    destination, what tracks it, and notes (source already read, reduction)."""
    if not ops:
        return "<p><i>no pending operations</i></p>"
    e = html.escape
    head = ("<tr><th>#</th><th>kind</th><th>issuer</th><th>source</th><th>destination</th>"
            "<th>tracked by</th><th>notes</th></tr>")
    rows = []
    for op in ops:
        notes = ", ".join(n for n, on in (("source read", getattr(op, "source_read", False)),
                                          ("reduction", getattr(op, "reduction", False))) if on)
        rows.append(f"<tr><td>{op.op}</td><td><code>{e(op.kind)}</code></td><td>CTA {op.cta} thread {op.thread}</td>"
                    f"<td>{_range_html(op.source)}</td><td>{_range_html(op.destination)}</td>"
                    f"<td>{_tracked_html(op.tracked_by)}</td><td>{e(notes)}</td></tr>")
    cap = f"{len(ops)} pending operation{'s' if len(ops) != 1 else ''}, in issue order"
    return (f"<table><caption style='text-align:left'>{cap}</caption>{head}{''.join(rows)}</table>")


def tensor_load_html(ld):
    """A load's result: pending (its operations, its mbarrier, where the box will
    land) or complete (the layout at its destination and the provenance of each
    element)."""
    e = html.escape
    head = f"<p><code>{e(repr(ld))}</code></p>"
    pend = ld.pending
    dst = ld.dst & 0xFFFFFF
    try:
        lay = layout_scene(ld.tmap, dst, max_lines=16).svg()
    except Exception:       # a map no picture takes (e.g. a packed type): the text alone
        lay = ""
    if pend:
        parts = [head, pending_html(pend)]
        t = pend[0].tracked_by
        if t is not None and t["kind"] == "mbarrier":
            parts.append(mbarrier_scene(ld.machine.cta(t["cta"]).mbarrier(t["offset"])).svg())
        parts.append("<p>where the box will land:</p>" + lay)
        return "<div>" + "".join(parts) + "</div>"
    parts = [head, lay]
    try:
        from .provenance import provenance_scene
        parts.append(provenance_scene(ld.provenance(), max_rows=8, max_cols=8).svg())
    except Exception as exc:   # e.g. a tensor too large to trace: say so instead
        parts.append(f"<p><i>no provenance picture: {e(str(exc))}</i></p>")
    return "<div>" + "".join(parts) + "</div>"


# --- how the model's objects show themselves in Jupyter -----------------------------
# The pictures import the model, never the reverse: these are installed on the
# model's classes here (the package imports this module).

def _tensormap_repr_html(tm):
    """Jupyter: the field table and, for a map that loads, its box at shared address 0."""
    from .. import _core
    from ..tensormap import HTML_PICTURE_MAX
    if not tm.decodes:
        return f"<pre>{html.escape(repr(tm))}</pre>"
    cells = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th>"
                    f"<td style='text-align:left'><code>{html.escape(str(v))}</code></td></tr>"
                    for k, v in tm._rows())
    table = ("<table><caption>TensorMap (dim 0 innermost)</caption>"
             f"{cells}<tr><th>bytes (hex)</th><td><code>"
             + "<br>".join(f"+{o:<3} {bytes(tm)[o:o + 32].hex()}".replace(" ", "&nbsp;") for o in range(0, 128, 32))
             + "</code></td></tr></table>")
    try:
        n = tm._table_entries()
    except _core.PtxAsyncError:   # a map no copy accepts (e.g. a packed type): the table alone
        return table
    if n > HTML_PICTURE_MAX:
        return (f"<div>{table}<p>The box has {n} elements ({tm.box_bytes} bytes), more than the "
                f"{HTML_PICTURE_MAX} drawn here (more than a CTA's shared memory holds): no layout "
                "picture. <code>ptxasync.layout.render_box(tm, max_lines=16)</code> shows its first "
                "lines.</p></div>")
    return tensormap_html(tm, table)


def _mbarrier_repr_svg(bar):
    """Jupyter: phase, arrivals and tx-count drawn."""
    return mbarrier_scene(bar).svg()


def _cta_repr_svg(cta):
    """Jupyter: which 128-byte lines of this CTA's shared memory hold data."""
    return smem_scene(cta.smem, f"CTA {cta.rank} shared memory ({cta.smem.size // 1024} KiB)").svg()


def _machine_repr_html(m):
    """Jupyter: the machine and each CTA's shared memory."""
    return machine_html(m)


def _pending_op_repr_html(op):
    """Jupyter: one pending operation as a table row."""
    return pending_html([op])


def _pending_ops_repr_html(ops):
    """Jupyter: the pending operations as a table."""
    return pending_html(ops)


def _install():
    from ..check import PendingOp, PendingOps
    from ..machine import CTA, Machine, Mbarrier
    from ..tensormap import TensorMap
    TensorMap._repr_html_ = _tensormap_repr_html
    Mbarrier._repr_svg_ = _mbarrier_repr_svg
    CTA._repr_svg_ = _cta_repr_svg
    Machine._repr_html_ = _machine_repr_html
    PendingOp._repr_html_ = _pending_op_repr_html
    PendingOps._repr_html_ = _pending_ops_repr_html


_install()
