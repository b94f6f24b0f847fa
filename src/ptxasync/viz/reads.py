"""Consumer read-order pictures: which fragment element a wgmma or an ldmatrix
reads from each 16-byte chunk (or element) of shared memory, and, given the
producer, whether the chunk holds what the consumer meant to read.

The shared address of every fragment element comes from the core's consumer
views (``WgmmaDescriptor.addresses``: rules W2, W4, W5; ``ldmatrix_map``: L1);
what each address holds comes from the producer (``TmaProducer``, the TMA
load's own address table). The picture only places and compares them.

Colours follow the layout picture: hue by the chunk of the operand's row that
the consumer reads (K-chunk for a K-major wgmma operand, M/N-chunk for an
MN-major one, the matrix column block for ldmatrix), light / dark by row, so a
descriptor that reads a tile as the TMA load wrote it looks like that tile's
layout picture; a chunk outlined in red holds something other than intended.
"""
import numpy as np

from .layout import LINE, colour
from .scene import Scene, to_figure

__all__ = ["ReadOrder", "wgmma_read_order", "ldmatrix_read_order", "read_order_scene",
           "read_order_figure", "read_order_svg", "read_order_text"]

BAD = "#d62728"


class ReadOrder:
    """What one consumer instruction reads, element by element.

    ``addr[e]``: the shared address of fragment element e; ``frag[e]``: its
    coordinates (wgmma: (i, k) with i = m for A, n for B; ldmatrix: (matrix j,
    row r, column c) as ``ldmatrix_fragments`` numbers them); ``tile[e]``: the
    (row, column) in the stored tile's orientation that decides the colour.
    With a producer: ``holds[e]`` what the address holds (``TmaProducer.what``)
    and, where an intent is known, ``intended[e]`` and ``bad[e]``.
    ``chunks``: {chunk address: Chunk} for every 16-byte chunk read."""

    def __init__(self, kind, title, esize, addr, frag, tile, label_of, repeat=0, start=None, notes=()):
        self.kind, self.title, self.esize = kind, title, int(esize)
        self.addr = np.asarray(addr, dtype=np.int64).reshape(-1)
        self.frag = [tuple(int(v) for v in f) for f in frag]
        self.tile = [tuple(int(v) for v in t) for t in tile]
        self.repeat, self.start = int(repeat), start
        self.notes = list(notes)
        self.holds = self.intended = self.bad = None
        self._label_of = label_of
        self._group()

    # --- grouping by chunk and element ----------------------------------------
    def _group(self):
        by_chunk, by_elem = {}, {}
        for e, a in enumerate(self.addr.tolist()):
            by_chunk.setdefault(a - a % 16, []).append(e)
            by_elem.setdefault(a, []).append(e)
        self.by_element = by_elem
        self.chunks = {c: Chunk(c, es, self) for c, es in sorted(by_chunk.items())}

    def attach(self, producer, intended=None):
        """Record what each address holds (``producer.what``) and, with
        ``intended`` (one (row, col) per fragment element, in ``frag`` order),
        which elements read something else (equal labels, or both
        out-of-bounds fill, count as the same: check_wgmma's rule)."""
        from ..consumers import _same
        if hasattr(producer, "what_many"):
            kind, r, c = producer.what_many(self.addr)
            names = {0: "fill", 1: "tile", 2: "partial", 3: "oob"}
            self.holds = [(names[int(k)], (int(a), int(b)) if k in (1, 3) else None)
                          for k, a, b in zip(kind.tolist(), r.tolist(), c.tolist())]
        else:
            self.holds = [producer.what(int(a)) for a in self.addr]
        self.producer = producer
        if intended is not None:
            gd = getattr(producer, "gdim", None)

            def want(lab):
                if gd is not None and not (0 <= lab[0] < gd[1] and 0 <= lab[1] < gd[0]):
                    return ("oob", lab)
                return ("tile", lab)
            self.intended = [tuple(int(v) for v in x) for x in intended]
            if len(self.intended) != self.addr.size:
                raise ValueError(f"intended gives {len(self.intended)} elements; the consumer reads {self.addr.size}")
            self.bad = np.array([not _same(h, want(i)) for h, i in zip(self.holds, self.intended)], dtype=bool)
        for ch in self.chunks.values():
            ch._attach(self)
        return self

    @property
    def mismatched(self):
        """Fragment elements that read something other than intended (None without an intent)."""
        return None if self.bad is None else int(self.bad.sum())

    @property
    def bad_chunks(self):
        """Addresses of the chunks holding at least one such element."""
        return [c for c, ch in self.chunks.items() if ch.bad]

    def label(self, elems):
        """The words for fragment elements ``elems`` (indices): 'n3 k0-7', 'M1 row 2', ..."""
        return self._label_of([self.frag[e] for e in elems])

    def _repr_svg_(self):
        """Jupyter: the read-order picture (no matplotlib needed)."""
        return read_order_scene(self).svg()

    def __repr__(self):
        bad = "" if self.bad is None else f", {self.mismatched} not intended"
        return f"<ReadOrder {self.title}: {self.addr.size} elements from {len(self.chunks)} chunks{bad}>"

    def window(self):
        """(first, end) addresses of the lines worth drawing: from the swizzle
        repeat (or line) holding the lowest address read to past the highest."""
        lo, hi = int(self.addr.min()), int(self.addr.max()) + self.esize
        if self.start is not None:
            lo = min(lo, int(self.start))
        unit = self.repeat or LINE
        return lo - lo % unit, -(-hi // LINE) * LINE


class Chunk:
    """One 16-byte chunk a consumer reads: ``elements`` (indices into the
    ReadOrder), ``label`` (what is read, e.g. 'n3 k0-7'), ``reads`` (how many
    fragment elements read each of its bytes at most: above 1, the consumer reads
    the same bytes twice), ``holds`` (what the producer put at its first byte),
    ``bad`` (some element is not the intended one)."""

    def __init__(self, addr, elems, ro):
        self.addr, self.elements = addr, elems
        self.label = ro.label(elems)
        self.reads = max(len(ro.by_element[int(ro.addr[e])]) for e in elems)
        self.tile = min(ro.tile[e] for e in elems)
        self.holds, self.bad = None, False

    def _attach(self, ro):
        if hasattr(ro.producer, "what"):
            self.holds = ro.producer.what(self.addr)
        self.bad = bool(ro.bad is not None and any(ro.bad[e] for e in self.elements))


def _span(vals):
    """'3', '0-7' (a contiguous run), '0,8' (up to three others), or None."""
    v = sorted(vals)
    if v == list(range(v[0], v[-1] + 1)):
        return str(v[0]) if len(v) == 1 else f"{v[0]}-{v[-1]}"
    return ",".join(map(str, v)) if len(v) <= 3 else None


def _wgmma_label(letter):
    def label(frags):
        i, k = _span({f[0] for f in frags}), _span({f[1] for f in frags})
        if i is not None and k is not None and len(set(frags)) == len({f[0] for f in frags}) * len({f[1] for f in frags}):
            return f"{letter}{i} k{k}"
        return f"{len(frags)} elements"
    return label


def _ldmatrix_label(frags):
    if len(frags) == 1:
        return "M{} r{} c{}".format(*frags[0])
    js, rs, cs = ({f[n] for f in frags} for n in range(3))
    if len(js) == 1 and len(rs) == 1:
        return f"M{min(js)} row {min(rs)}"
    if len(js) == 1 and len(cs) == 1:
        return f"M{min(js)} col {min(cs)}"
    return f"{len(frags)} elements"


def _producer(p):
    """A TmaProducer from (tmap, dst), or the producer as given."""
    from ..consumers import TmaProducer
    if isinstance(p, tuple) and len(p) == 2 and hasattr(p[0], "smem_addresses"):
        return TmaProducer(p[0], [((0, 0), int(p[1]))])
    return p


def wgmma_read_order(desc, operand="B", n=None, major="K", dtype="f16", producer=None, k_slice=0,
                     intended=None, tile_major=None, title=None):
    """The read order of a wgmma operand through shared-memory descriptor ``desc``
    (a WgmmaDescriptor or its 64-bit value): element (i, k) of the operand, [rows,
    K] as ``WgmmaDescriptor.addresses`` gives them. ``producer`` (a TmaProducer,
    or (tmap, dst) for one load at (0, 0)) adds what each chunk holds, and the
    intent (``intended`` [rows, K, 2] (row, col), by default the producer's
    natural one for ``k_slice``, as ``check_wgmma``) marks what mismatches."""
    from ..consumers import WGMMA_TYPES, WgmmaDescriptor, _dtype, _major, _operand
    if not isinstance(desc, WgmmaDescriptor):
        desc = WgmmaDescriptor.from_value(desc)
    op, dt, mj = _operand(operand), _dtype(dtype), _major(major)
    addrs = desc.addresses(op, n, major, dt)
    rows, K = addrs.shape
    esize = WGMMA_TYPES[dt][1]
    per = 16 // esize                                           # elements per 16-byte chunk
    ii, kk = np.meshgrid(np.arange(rows), np.arange(K), indexing="ij")
    frag = np.stack([ii, kk], -1).reshape(-1, 2)
    # stored orientation: K-major rows are operand rows with K along the line;
    # MN-major rows are k with M/N along the line
    tile = frag if mj == 0 else frag[:, ::-1]
    tile = np.stack([tile[:, 0], tile[:, 1] // per], -1)
    letter = "m" if op == "A" else "n"
    shape = f"m64n{rows}k{K}" if op == "B" else f"m64k{K}"
    t = title or (f"wgmma {op} ({shape}, .{dt}, {'K' if mj == 0 else 'MN'}-major): "
                  f"swizzle {desc.swizzle_name}, start 0x{desc.start:x}, LBO {desc.lbo}, SBO {desc.sbo}"
                  + (f", base offset {desc.base_offset}" if desc.base_offset else ""))
    ro = ReadOrder("wgmma", t, esize, addrs, frag, tile, _wgmma_label(letter),
                   repeat=8 * desc.swizzle, start=desc.start)
    ro.desc, ro.operand, ro.major = desc, op, "K" if mj == 0 else "MN"
    if producer is not None:
        p = _producer(producer)
        if intended is None and hasattr(p, "intended"):
            intended = p.intended(op, rows, major if tile_major is None else tile_major, k_slice, dt)
        ro.attach(p, None if intended is None else np.asarray(intended).reshape(-1, 2))
    return ro


def ldmatrix_read_order(addresses, num=4, trans=False, producer=None, intended=None, title=None):
    """The read order of ldmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16 with
    these 32 row addresses (``consumers.ldmatrix_map``): fragment element
    (j, r, c) of matrix j. ``producer`` (a TmaProducer, or (tmap, dst)) adds what
    each chunk holds; ``intended`` marks mismatches: [num, 8, 8, 2] (row, col)
    per fragment element, or (row, col) of the tile's 16x16 block read in the
    usual A-fragment order (matrix j = rows + 8 (j % 2), columns + 8 (j // 2),
    as ``box_ldmatrix_addresses``)."""
    from ..consumers import ldmatrix_map
    num = int(num)
    amap = ldmatrix_map(addresses, num, trans)                       # [32, num, 2]
    addr, frag, tile = [], [], []
    for j in range(num):
        for r in range(8):
            for c in range(8):
                t, h = 4 * r + c // 2, c % 2
                addr.append(int(amap[t, j, h]))
                frag.append((j, r, c))
                u = c if trans else r                                # the row address it comes from
                tile.append((8 * (j % 2) + u, j // 2))
    t = title or f"ldmatrix .x{num}{' .trans' if trans else ''} (.b16, 32 row addresses)"
    ro = ReadOrder("ldmatrix", t, 2, addr, frag, tile, _ldmatrix_label)
    ro.num, ro.trans = num, bool(trans)
    if producer is not None:
        p = _producer(producer)
        if intended is not None:
            it = np.asarray(intended)
            if it.shape == (2,):
                r0, c0 = (int(v) for v in it)
                it = np.array([[[(r0 + 8 * (j % 2) + r, c0 + 8 * (j // 2) + c) for c in range(8)]
                                for r in range(8)] for j in range(num)])
            intended = it.reshape(-1, 2)
        ro.attach(p, intended)
        if getattr(p, "tmap", None) is not None:
            from ..enums import Swizzle
            from ..layout import swizzle_info
            sw = Swizzle(p.tmap.box_layout["swizzle"])
            ro.repeat = swizzle_info(sw)["repeat"] if sw != Swizzle.NONE else 0
    return ro


def _as_list(data):
    return list(data) if isinstance(data, (list, tuple)) else [data]


def _holds_text(h):
    kind, lab = h
    if kind == "tile":
        return f"({lab[0]}, {lab[1]})"
    if kind == "oob":
        return f"oob ({lab[0]}, {lab[1]})"
    return {"fill": "not written", "partial": "mid-element", "outside": "outside"}.get(kind, kind)


def _panel(ro, level, max_lines, first_line, byte_range):
    lo, hi = ro.window()
    total = (hi - lo) // LINE
    first_line = max(0, min(int(first_line), total - 1))
    nlines = min(total - first_line, max_lines)
    if level not in ("chunk", "element"):
        raise ValueError(f"level must be 'chunk' or 'element', not {level!r}")
    if byte_range is None:     # element level: the 32 bytes holding the lowest address read
        b = int(ro.addr.min()) % LINE // 32 * 32
        byte_range = (0, LINE) if level == "chunk" else (b, b + 32)
    b0, b1 = byte_range
    if not (0 <= b0 < b1 <= LINE):
        raise ValueError(f"byte_range {byte_range} must lie within one {LINE}-byte line")
    unit = 16 if level == "chunk" else ro.esize
    ncells = (b1 - b0) // unit
    two = ro.holds is not None
    cw = 66.0 if level == "chunk" else 30.0
    lh = (30.0 if two else 20.0) if level == "chunk" else (34.0 if two else 24.0)
    left, top, right = 78.0, 72.0, 130.0
    s = Scene(left + ncells * cw + right, top + nlines * lh + 80, ro.title)
    s.text(8, 12, ro.title, size=10, ha="left", bold=True, tag="panel_title")
    if level == "chunk":
        what = ("cell = 16-byte chunk of shared memory; top: the fragment elements read from it"
                + ("; bottom: what the TMA load put there (tile row, first column)" if two else ""))
    else:
        what = (f"cell = {ro.esize}-byte element; top: the fragment element read from it"
                + ("; bottom: the tile element the producer put there" if two else ""))
    s.text(8, 27, what, size=7.5, ha="left", color="#444", tag="legend")
    nread = ro.addr.size
    summ = f"{nread} elements read from {len(ro.chunks)} chunks"
    if ro.bad is not None:
        nb = ro.mismatched
        summ += (f"; {nb} not the intended ones, in {len(ro.bad_chunks)} chunks (outlined red)" if nb
                 else "; every one is the intended element")
    twice = sum(1 for ch in ro.chunks.values() if ch.reads > 1)
    if twice:
        summ += f"; {twice} chunks read more than once"
    s.text(8, 41, summ, size=8, ha="left", bold=bool(ro.bad is not None and ro.mismatched),
           color=BAD if ro.bad is not None and ro.mismatched else "#000", tag="summary")
    for i in range(ncells):
        off = b0 + i * unit
        if level == "chunk" or off % 16 == 0:
            s.text(left + i * cw + (cw / 2 if level == "chunk" else 2), top - 8, f"+{off}", size=7,
                   ha="center" if level == "chunk" else "left", color="#555", tag="header")
    y = top
    for li in range(first_line, first_line + nlines):
        line = lo + li * LINE
        s.text(left - 6, y + lh / 2, f"0x{line:05x}", size=7.5, ha="right", family="monospace", tag="address")
        for i in range(ncells):
            a = line + b0 + i * unit
            x = left + i * cw
            ch = ro.chunks.get(a - a % 16)
            if level == "chunk":
                elems = None if ch is None else ch.elements
            else:
                elems = ro.by_element.get(a)
            if not elems:
                s.rect(x, y, cw, lh, fill="white", edge="#d0d0d0", lw=0.4, tag="unread")
                if two:     # where the producer put what nobody reads here
                    h = ro.producer.what(a)
                    if h[0] in ("tile", "oob"):
                        s.text(x + cw / 2, y + lh * 0.72, _holds_text(h), size=6.5 if level == "chunk" else 5.5,
                               color="#aaaaaa", tag="unread_holds")
                continue
            if level == "chunk":
                row, blk = ch.tile
                label, bad, holds, reads = ch.label, ch.bad, ch.holds, ch.reads
            else:
                e0 = elems[0]
                row, blk = ro.tile[e0]
                f = ro.frag[e0]
                label = ",".join(map(str, f))
                bad = bool(ro.bad is not None and any(ro.bad[e] for e in elems))
                holds, reads = (ro.holds[e0] if two else None), len(elems)
            tip = f"0x{a:x}: reads {label}" + (f", holds {_holds_text(holds)}" if holds else "")
            s.rect(x, y, cw, lh, fill=colour(row, blk), edge="#ffffff", lw=0.6, tag="cell", label=tip)
            if bad:
                inset, lw = (1.2, 2.0) if level == "chunk" else (0.8, 1.2)
                s.rect(x + inset, y + inset, cw - 2 * inset, lh - 2 * inset, fill="none", edge=BAD, lw=lw, tag="bad")
            ty = y + (lh * 0.33 if two else lh / 2)
            s.text(x + cw / 2, ty, label + (f" ×{reads}" if reads > 1 else ""),
                   size=7.5 if level == "chunk" else 6, tag="cell_label")
            if two:
                s.text(x + cw / 2, y + lh * 0.72, ("≠ " if bad and level == "chunk" else "")
                       + (_holds_text(holds) if holds else "-"),
                       size=6.5 if level == "chunk" else 5.5, color="#000" if bad else "#333", bold=bad,
                       tag="holds_label")
        if ro.repeat and line % ro.repeat == 0:
            s.line(left - 4, y, left + ncells * cw + 4, y, color="#b2182b", lw=2.2, tag="repeat")
            s.text(left + ncells * cw + 8, y + 2, f"repeat ({ro.repeat} B)", size=7, ha="left", va="top",
                   color="#b2182b", tag="repeat_label")
        if ro.start is not None and line <= ro.start < line + LINE:
            s.text(left + ncells * cw + 8, y + lh - 3, f"◀ start 0x{ro.start:x}", size=7.5, ha="left",
                   va="bottom", bold=True, tag="start")
        y += lh
    if level == "element":
        for i in range(ncells + 1):
            if (b0 + i * unit) % 16 == 0:
                s.line(left + i * cw, top, left + i * cw, y, color="#333", lw=1.0, tag="atom")
    s.rect(left, top, ncells * cw, y - top, fill="none", edge="#222", lw=1.0, tag="frame")
    notes = list(ro.notes)
    if total > first_line + nlines or first_line:
        notes.append(f"showing lines {first_line}..{first_line + nlines - 1} of {total}")
    if b1 - b0 < LINE:
        notes.append(f"showing bytes {b0}..{b1 - 1} of each 128-byte line")
    if ro.bad is not None and ro.mismatched:
        e = int(np.flatnonzero(ro.bad)[0])
        notes.append(f"first: {ro.label([e])} reads 0x{int(ro.addr[e]):x}, which holds "
                     f"{_holds_text(ro.holds[e])}; intended {tuple(ro.intended[e])}")
    y += 14
    for n in notes:
        s.text(8, y, n, size=7.5, ha="left", color=BAD if n.startswith("first:") else "#333", tag="note")
        y += 13
    s.height = y + 4
    return s


def read_order_scene(data, level="chunk", max_lines=16, first_line=0, byte_range=None):
    """One panel per ReadOrder (a list puts them side by side): the lines of
    shared memory the consumer reads, from the swizzle repeat holding its lowest
    address; each 16-byte chunk (``level="element"``: each element, in
    ``byte_range`` of the line) labelled with the fragment elements read from it
    and, with a producer, what it holds; red outline where that is not the
    intended element. ``max_lines`` / ``first_line`` window the lines."""
    panels = [_panel(ro, level, max_lines, first_line, byte_range) for ro in _as_list(data)]
    W = sum(p.width for p in panels) + 10 * (len(panels) - 1)
    H = max(p.height for p in panels)
    s = Scene(W, H, "  |  ".join(p.title for p in panels))
    x = 0.0
    for i, p in enumerate(panels):
        if i:
            s.line(x - 5, 8, x - 5, H - 8, color="#999", lw=0.8, tag="divider")
        s.place(p, x, 0)
        x += p.width + 10
    return s


def read_order_figure(data, **kw):
    """``read_order_scene`` as a matplotlib Figure (needs matplotlib)."""
    return to_figure(read_order_scene(data, **kw))


def read_order_svg(data, **kw):
    """``read_order_scene`` as SVG text (no matplotlib needed)."""
    return read_order_scene(data, **kw).svg()


def read_order_text(data, max_lines=16, first_line=0):
    """For a terminal: a row per 128-byte line, a column per 16-byte chunk, the
    fragment elements read from it ('.' = not read, '!' = not the intended
    element) and, with a producer, a row under it of what each chunk holds;
    then the first mismatches. ``max_lines`` is at least 1."""
    import operator
    max_lines = operator.index(max_lines)
    if max_lines < 1:
        raise ValueError(f"max_lines must be at least 1; got {max_lines}")
    out = []
    for ro in _as_list(data):
        lo, hi = ro.window()
        total = (hi - lo) // LINE
        out.append(ro.title)
        summ = f"{ro.addr.size} elements read from {len(ro.chunks)} chunks"
        if ro.bad is not None:
            summ += (f"; {ro.mismatched} not the intended ones, in {len(ro.bad_chunks)} chunks (marked !)"
                     if ro.mismatched else "; every one is the intended element")
        out.append(summ)
        if ro.holds is not None:
            out.append("under each line: what the producer put in each chunk (tile row, first column)")
        w = max(11, max(len(ch.label) + (3 if ch.reads > 1 else 0) for ch in ro.chunks.values()) + 2)
        out.append("address  " + "".join(f"+{o:<{w - 1}}" for o in range(0, LINE, 16)))
        first_line = max(0, min(int(first_line), total - 1))
        for li in range(first_line, min(total, first_line + max_lines)):
            line = lo + li * LINE
            cells = []
            for a in range(line, line + LINE, 16):
                ch = ro.chunks.get(a)
                if ch is None:
                    cells.append(f"{'.':<{w}}")
                else:
                    lab = ch.label + (f" x{ch.reads}" if ch.reads > 1 else "") + ("!" if ch.bad else "")
                    cells.append(f"{lab:<{w}}")
            mark = f"  <- start 0x{ro.start:x}" if ro.start is not None and line <= ro.start < line + LINE else ""
            out.append(f"0x{line:05x}  " + "".join(cells).rstrip() + mark)
            if ro.holds is not None:
                held = [ro.producer.what(a) for a in range(line, line + LINE, 16)]
                row = "".join(f"{_holds_text(h) if h[0] in ('tile', 'oob') else '':<{w}}" for h in held)
                if row.strip():
                    out.append("         " + row.rstrip())
        if total > first_line + max_lines:
            out.append(f"... lines {first_line}..{first_line + max_lines - 1} of {total} shown (max_lines, or "
                       "--lines, shows more)")
        if ro.bad is not None and ro.mismatched:
            for e in np.flatnonzero(ro.bad)[:4]:
                e = int(e)
                out.append(f"  {ro.label([e])} reads 0x{int(ro.addr[e]):x}, which holds "
                           f"{_holds_text(ro.holds[e])}; intended {tuple(ro.intended[e])}")
        out.append("")
    return "\n".join(out).rstrip()
