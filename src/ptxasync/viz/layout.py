"""Layout pictures: where the hardware puts every 16-byte chunk (or element) of a box.

Everything drawn comes from the core: ``TensorMap.smem_addresses(dst)`` gives
the shared address of each box element (swizzle, padding and interleave
included) and ``swizzle_info`` the span / repeat of the pattern. Nothing here
re-derives a layout rule.
"""
import numpy as np

from ..enums import Swizzle
from ..layout import MAX_LINES, _index, cute_swizzle, render_chunks, swizzle_info, swizzle_label
from .scene import Scene, to_figure

__all__ = ["LayoutData", "layout_data", "layout_scene", "compare_scene", "layout_figure",
           "compare_figure", "layout_svg", "compare_svg", "layout_text", "PALETTE"]

# one colour per logical 16-byte chunk of a row (column // chunk), cycling every 8
PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7"]
LINE = 128  # bytes of a shared-memory line (32 banks x 4 B)


def _tint(hexcol, amount):
    """Mix a colour with white (amount 0: unchanged, 1: white)."""
    r, g, b = (int(hexcol[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(v + (255 - v) * amount) for v in (r, g, b)]
    return "#%02x%02x%02x" % tuple(mix)


def colour(row, chunk):
    """Colour of logical (row, chunk of the row): hue by chunk, rows alternate light/dark."""
    return _tint(PALETTE[chunk % len(PALETTE)], 0.0 if row % 2 == 0 else 0.45)


class LayoutData:
    """A box's shared-memory image as the core lays it out.

    ``addr[r, c]``: shared address of logical element (row r, column c), where
    the column is the innermost box index and the row runs over all the outer
    box dimensions (NumPy order flattened; an im2col box: pixel, channel).
    """

    def __init__(self, tmap, dst, start=None):
        table = np.asarray(tmap.smem_addresses(dst), dtype=np.int64)
        self.tmap, self.dst = tmap, int(dst)
        self.box_shape = table.shape
        self.cols = table.shape[-1]
        self.rows = table.size // self.cols
        self.addr = table.reshape(self.rows, self.cols)
        lay = tmap.box_layout
        self.esize = lay["esize"]
        # an interleaved map's dimension 0 counts 16/32-byte slices (docs/tile-mode.md 6.1):
        # each entry of the address table is then a whole slice
        il = int(tmap.fields["interleave"])
        self.unit = {1: 16, 2: 32}.get(il, self.esize)
        self.swizzle = Swizzle(lay["swizzle"])
        info = swizzle_info(self.swizzle)
        self.span, self.repeat = info["span"], info["repeat"]
        # the picture starts at the swizzle repeat (or line) holding dst, so a
        # destination that is not aligned to the repeat shows where it begins
        unit = self.repeat if self.swizzle != Swizzle.NONE else LINE
        self.start = self.dst - self.dst % unit if start is None else int(start) - int(start) % LINE
        top = int(self.addr.max()) + self.unit
        self.end = -(-top // LINE) * LINE
        # the 16-byte chunk each element is in, and the first element of each chunk
        per = self.unit // self.esize                      # elements per table entry
        from ..boxes import _slice_addresses
        elem = _slice_addresses(tmap, self.addr, self.esize).reshape(self.rows, -1)
        keys = (elem // 16).ravel()
        uniq, first, counts = np.unique(keys, return_index=True, return_counts=True)
        ecols = self.cols * per
        def col(c):   # column label: the entry, and for a slice the element inside it
            return c // per if per == 1 else f"{c // per}.{c % per}"
        self.chunks = {int(k) * 16: (int(i) // ecols, col(int(i) % ecols), int(n))
                       for k, i, n in zip(uniq, first, counts)}
        # element address -> (row, column label)
        self.elements = {int(a): (r, col(c)) for (r, c), a in np.ndenumerate(elem)}

    def __repr__(self):
        return (f"LayoutData(box {tuple(self.box_shape)} (NumPy order) of {self.esize}-byte elements at dst "
                f"0x{self.dst:x}, swizzle {swizzle_label(self.swizzle)}: {self.lines} lines of 128 B from "
                f"0x{self.start:x})")

    @property
    def lines(self):
        """Number of 128-byte lines the picture spans."""
        return (self.end - self.start) // LINE

    def chunk_at(self, addr):
        """(row, first column, elements) of the chunk at shared address ``addr``, or None."""
        return self.chunks.get(int(addr) - int(addr) % 16)

    def misaligned_note(self):
        """The note for a destination that is not aligned to the swizzle repeat, or None."""
        if self.swizzle == Swizzle.NONE or self.dst % self.repeat == 0:
            return None
        into = self.dst % self.repeat
        bms = cute_swizzle(self.swizzle)
        bits = "bits [7, 10)" if bms is None else (
            f"bit {bms[1] + bms[2]}" if bms[0] == 1 else f"bits [{bms[1] + bms[2]}, {bms[1] + bms[2] + bms[0]})")
        line, off = divmod(into, LINE)
        where = (f"at its line {line}, not line 0" if not off else
                 f"{off} B into its line {line}, not at the start of line 0")
        return (f"dst 0x{self.dst:x} is {into} B ({line} line{'s' if line != 1 else ''}"
                f"{f' and {off} B' if off else ''}) into a {self.repeat}-byte swizzle repeat: the pattern "
                f"starts {where} (the XOR uses the absolute address {bits})")


def layout_data(tmap, dst=0):
    """LayoutData for a box written at shared address ``dst``."""
    return LayoutData(tmap, dst)


def _swizzle_name(sw):
    return "none" if sw == Swizzle.NONE else sw.name.replace("B", "", 1) + "B" if sw.name.startswith("B") else sw.name


def xor_note(sw):
    """What the swizzle XORs, in address bits, from the core's own pattern."""
    bms = cute_swizzle(sw)
    if bms is None:
        return f"swizzle {swizzle_label(sw)}: 16-byte chunks permuted within each 128-byte line"
    b, m, s = bms
    bits = lambda lo, n: f"bit {lo}" if n == 1 else f"bits [{lo}, {lo + n})"
    return (f"swizzle {swizzle_label(sw)}: address {bits(m, b)} XORed with {bits(m + s, b)}"
            + (" (the 16-byte chunk index, bits [4, 7), takes only "
               f"{'that bit' if b == 1 else 'those bits'})" if m == 4 and b < 3 else ""))


def layout_scene(tmap, dst=0, level="chunk", max_lines=40, byte_range=None, first_line=0, title=None,
                 start=None):
    """The layout as a Scene (see ``layout_figure`` for the parameters)."""
    d = tmap if isinstance(tmap, LayoutData) else LayoutData(tmap, dst, start)
    b0, b1 = _byte_range(d, level, byte_range)
    unit = 16 if level == "chunk" else d.esize
    cw = 64.0 if level == "chunk" else max(22.0, 11.0 * max(1, d.esize))   # cell width (pt)
    lh = 20.0 if level == "chunk" else 24.0
    ncells = (b1 - b0) // unit
    total = d.lines
    first_line = max(0, min(int(first_line), total - 1))
    nlines = min(total - first_line, max_lines)
    left, top, right = 78.0, 58.0, 78.0
    notes = []
    W = left + ncells * cw + right
    H = top + nlines * lh + 16 + 14 * 4
    sw = d.swizzle
    swname = swizzle_label(sw)
    s = Scene(W, H, title or f"swizzle {swname}: box {tuple(d.box_shape)} (NumPy order) of {d.esize}-byte "
                             f"elements at dst 0x{d.dst:x}"
                             if d.unit == d.esize else f"swizzle {swname}, interleave: box {tuple(d.box_shape)} "
                             f"(NumPy order) of {d.unit}-byte slices at dst 0x{d.dst:x}")
    s.text(8, 12, s.title, size=10, ha="left", bold=True, tag="title")
    what = ("cell = 16-byte chunk, label (row, first column) of the box (NumPy order); colour = logical column chunk"
            + ("; column s.e = element e of slice s" if d.unit != d.esize else "")
            if level == "chunk" else f"cell = {d.esize}-byte element, label = row (top) and column (bottom) of the box")
    s.text(8, 28, what, size=7.5, ha="left", color="#444", tag="legend")
    # column header: byte offset inside the 128-byte line
    for i in range(ncells):
        off = b0 + i * unit
        if level == "chunk" or off % 16 == 0:
            s.text(left + i * cw + (cw / 2 if level == "chunk" else 2), top - 8, f"+{off}",
                   size=7, ha="center" if level == "chunk" else "left", color="#555", tag="header")
    y = top
    marker = None
    for li in range(first_line, first_line + nlines):
        line_addr = d.start + li * LINE
        s.text(left - 6, y + lh / 2, f"0x{line_addr:05x}", size=7.5, ha="right", family="monospace",
               tag="address")
        for i in range(ncells):
            a = line_addr + b0 + i * unit
            x = left + i * cw
            if level == "chunk":
                hit = d.chunk_at(a)
            else:
                hit = d.elements.get(a)
                hit = None if hit is None else (hit[0], hit[1], 1)
            if a == d.dst:        # the destination, marked in the grid where it lies
                marker = (x, y)
            if hit is None:
                s.rect(x, y, cw, lh, fill="white", edge="#cccccc", lw=0.4,
                       hatch=a < d.dst, tag="before_dst" if a < d.dst else "empty")
                continue
            r, c, _ = hit
            chunk = (int(str(c).split(".")[0]) * d.unit + (int(str(c).split(".")[1]) * d.esize
                                                           if "." in str(c) else 0)) // 16
            s.rect(x, y, cw, lh, fill=colour(r, chunk), edge="#ffffff", lw=0.6, tag="cell",
                   label=f"row {r}, column {c} at 0x{a:x}")
            if level == "chunk":
                s.text(x + cw / 2, y + lh / 2, f"({r}, {c})", size=7.5, tag="cell_label")
            else:
                s.text(x + cw / 2, y + lh * 0.32, f"{r}", size=6, tag="cell_label")
                s.text(x + cw / 2, y + lh * 0.72, f"{c}", size=6, tag="cell_label", color="#222")
        # a swizzle repeat begins on this line
        if sw != Swizzle.NONE and line_addr % d.repeat == 0:
            s.line(left - 4, y, left + ncells * cw + 4, y, color="#b2182b", lw=2.2, tag="repeat")
            s.text(left + ncells * cw + 8, y + 2, f"repeat ({d.repeat} B)", size=7, ha="left",
                   va="top", color="#b2182b", tag="repeat_label")
        y += lh
    # grid overlays: 16-byte atoms (element level) and the swizzle span
    bottom = y
    if level == "element":
        for i in range(ncells + 1):
            if (b0 + i * unit) % 16 == 0:
                s.line(left + i * cw, top, left + i * cw, bottom, color="#333", lw=1.0, tag="atom")
    if sw != Swizzle.NONE and d.span < LINE:
        for i in range(ncells + 1):
            off = b0 + i * unit
            if off % d.span == 0 and 0 < off < LINE:
                s.line(left + i * cw, top - 2, left + i * cw, bottom, color="#b2182b", lw=1.4, dash=True,
                       tag="span")
    s.rect(left, top, ncells * cw, bottom - top, fill="none", edge="#222", lw=1.0, tag="frame")
    if marker is not None:    # dst: an outline on its cell, and a tag in the margin of its line
        s.rect(marker[0], marker[1], cw, lh, fill="none", edge="#000000", lw=2.4, tag="dst_cell")
        s.text(left + ncells * cw + 8, marker[1] + lh - 2, f"< dst 0x{d.dst:x}", size=7, ha="left", va="bottom",
               bold=True, color="#000000", tag="dst")
    # notes
    if sw != Swizzle.NONE:
        notes.append(f"{xor_note(sw)}; span {d.span} B, repeat {d.repeat} B")
    else:
        notes.append("no swizzle: rows are stored in order, one after another")
    m = d.misaligned_note()
    if m:
        notes.append(m)
    if total > first_line + nlines or first_line:
        notes.append(f"showing lines {first_line}..{first_line + nlines - 1} of {total}")
    if b1 - b0 < LINE:
        notes.append(f"showing bytes {b0}..{b1 - 1} of each 128-byte line (byte_range, or --bytes LO HI, "
                     "shows the others)")
    if marker is None and first_line == 0:
        notes.append(f"dst 0x{d.dst:x} lies outside the bytes shown")
    y = bottom + 14
    for n in notes:
        s.text(8, y, n, size=7.5, ha="left", color="#b2182b" if n is m else "#333", tag="note")
        y += 13
    s.height = y + 4
    return s


def compare_scene(tmap, dst=0, **kw):
    """Unswizzled (left) and the map's own swizzle (right), side by side, both from
    the same first line (the swizzled picture's, at its repeat) so rows line up."""
    plain = tmap.copy().replace("swizzle_mode", 0)
    start = LayoutData(tmap, dst).start
    a = layout_scene(plain, dst, start=start, **kw)
    b = layout_scene(tmap, dst, start=start, **kw)
    s = Scene(a.width + b.width + 10, max(a.height, b.height), f"{a.title}  |  {b.title}")
    s.place(a, 0, 0)
    s.line(a.width + 5, 8, a.width + 5, s.height - 8, color="#999", lw=0.8, tag="divider")
    s.place(b, a.width + 10, 0)
    return s


def layout_figure(tmap, dst=0, level="chunk", **kw):
    """The shared-memory image of a box written at ``dst`` as a matplotlib Figure.

    One picture row per 128-byte line (address on the left), starting at the
    swizzle repeat holding ``dst``; each cell is a 16-byte chunk
    (``level="chunk"``) or, zoomed, an element (``level="element"``, optionally
    ``byte_range=(lo, hi)`` of the line), placed where the hardware puts it,
    labelled with its logical (row, column) of the box and coloured by the
    column chunk it came from. Red lines: swizzle repeat starts (solid) and the
    span inside a line (dashed). ``max_lines`` / ``first_line`` window long boxes.
    Needs matplotlib; ``layout_svg`` does not."""
    return to_figure(layout_scene(tmap, dst, level=level, **kw))


def compare_figure(tmap, dst=0, **kw):
    """``layout_figure`` of the map without swizzle and with its swizzle, side by side."""
    return to_figure(compare_scene(tmap, dst, **kw))


def layout_svg(tmap, dst=0, **kw):
    """``layout_figure`` as SVG text (no matplotlib needed)."""
    return layout_scene(tmap, dst, **kw).svg()


def compare_svg(tmap, dst=0, **kw):
    """``compare_figure`` as SVG text (no matplotlib needed)."""
    return compare_scene(tmap, dst, **kw).svg()


def _byte_range(d, level, byte_range):
    """(lo, hi) of each 128-byte line a picture shows: the whole line for chunks;
    for elements the first 32 (1-byte) or 64 (2-byte) bytes unless given."""
    if level not in ("chunk", "element"):
        raise ValueError(f"level must be 'chunk' or 'element', not {level!r}")
    if byte_range is None:
        return 0, ({1: 32, 2: 64}.get(d.esize, LINE) if level == "element" else LINE)
    b0, b1 = (int(v) for v in byte_range)
    if not (0 <= b0 < b1 <= LINE):
        raise ValueError(f"byte_range {tuple(byte_range)} must lie within one {LINE}-byte line")
    return b0, b1


def _grid_text(d, level, byte_range, max_lines):
    """The lines of shared memory from dst's line as text, and the notes on what is left out."""
    b0, b1 = _byte_range(d, level, byte_range)
    unit = 16 if level == "chunk" else d.esize
    cells = {}
    for li in range(min(d.lines, max_lines)):
        for off in range(b0, b1, unit):
            a = d.start + li * LINE + off
            hit = d.chunk_at(a) if level == "chunk" else d.elements.get(a)
            cells[li, off] = "." if hit is None else (
                f"r{hit[0]} c{hit[1]}" if level == "chunk" else f"{hit[0]},{hit[1]}")
    w = max([len(c) for c in cells.values()] + [len(f"+{b1 - unit}")])
    offs = [off for off in range(b0, b1, unit)]
    out = ["address | " + " ".join(f"+{o}".ljust(w) if level == "chunk" or o % 16 == 0 else " " * w
                                   for o in offs).rstrip()]
    for li in range(min(d.lines, max_lines)):
        out.append(f"0x{d.start + li * LINE:05x} | " + " ".join(cells[li, o].center(w) for o in offs).rstrip())
    notes = []
    if d.lines > max_lines:
        notes.append(f"showing lines 0..{max_lines - 1} of {d.lines} (--lines / max_lines shows more)")
    if b1 - b0 < LINE:
        notes.append(f"showing bytes {b0}..{b1 - 1} of each 128-byte line (--bytes LO HI / byte_range "
                     "shows the others)")
    return out, notes


def layout_text(tmap, dst=0, max_lines=16, level="chunk", byte_range=None, compare=False):
    """Plain-text picture for a terminal: the swizzle's chunk permutation and the
    box in shared memory from the 128-byte line holding ``dst``, one row per
    line: each 16-byte chunk as ``r<row> c<first column>`` of the box (NumPy
    order), or with ``level="element"`` each element as ``row,column`` (the
    bytes ``byte_range=(lo, hi)`` of each line). ``compare=True`` puts the
    unswizzled layout first. At most ``max_lines`` lines; a note says what is
    left out."""
    max_lines = _index(max_lines, "max_lines")
    if not 1 <= max_lines <= MAX_LINES:
        raise ValueError(f"max_lines must be in [1, {MAX_LINES}]; got {max_lines}")
    d = LayoutData(tmap, dst, start=dst)
    what = ("r = box row, c = first column of each 16-byte chunk" if level == "chunk" else
            f"row,column of each {d.esize}-byte element")
    out = []
    if compare:
        plain = LayoutData(tmap.copy().replace("swizzle_mode", 0), dst, start=dst)
        grid, _ = _grid_text(plain, level, byte_range, max_lines)
        out += [f"unswizzled (the same box without swizzle) at dst 0x{d.dst:x}: {what}"] + grid + [""]
    if d.swizzle != Swizzle.NONE:
        out.append(render_chunks(d.swizzle, base=d.dst - d.dst % LINE))
        out.append("")
    out.append(f"box {tuple(d.box_shape)} (NumPy order) at dst 0x{d.dst:x}, swizzle {swizzle_label(d.swizzle)}: "
               f"{what}")
    grid, notes = _grid_text(d, level, byte_range, max_lines)
    out += grid
    m = d.misaligned_note()
    out += ["note: " + n for n in notes + ([m] if m else [])]
    return "\n".join(out)
