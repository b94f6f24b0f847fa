"""Provenance pictures: which global element each box element of a load came from.

``provenance`` finds out by running the load itself in a scratch machine: the
global tensor is filled with tags (each element holds its own offset + 1, in as
many passes as the element size needs) and the map is copied with its element
type replaced by an unsigned type of the same size (so TF32 rounding or NaN
fill cannot disturb a tag). Whatever the core then writes is the answer:
traversal strides, interleave, im2col pixel walks and out-of-bounds fill are
never re-derived here. An element that still holds 0 was out-of-bounds fill.
"""
import numpy as np

from .. import _core
from ..enums import DataType, OOBFill
from .layout import LayoutData, colour
from .scene import Scene, to_figure

__all__ = ["Provenance", "provenance", "provenance_scene", "provenance_figure", "provenance_svg",
           "provenance_text", "im2col_scene", "im2col_figure", "im2col_svg", "im2col_text"]

_UINT = {1: DataType.UINT8, 2: DataType.UINT16, 4: DataType.UINT32, 8: DataType.UINT64}
MAX_TRACE_BYTES = 64 << 20


class Provenance:
    """Where each element of a loaded box came from.

    ``coords[r, c]``: the global coordinate (NumPy order, outermost first) of
    box element (row r, column c) as ``LayoutData`` numbers them, or -1 where
    ``oob[r, c]`` (out-of-bounds fill: ``fill`` is "zero" or "NaN")."""

    def __init__(self, tmap, load_coords, load_mode, coords, oob, offsets):
        self.tmap, self.load_coords, self.load_mode = tmap, tuple(load_coords), load_mode
        self.coords, self.oob, self.offsets = coords, oob, offsets
        self.fill = "NaN" if tmap.fields["oob_fill"] == OOBFill.NAN_REQUEST_ZERO_FMA else "zero"
        self.rows, self.cols = oob.shape

    def __repr__(self):
        n = int(self.oob.sum())
        return (f"Provenance({self.load_mode} load at {self.load_coords} (driver order, c0 innermost): "
                f"{self.rows} x {self.cols} box elements, {n} out-of-bounds ({self.fill} fill))")

    def _repr_svg_(self):
        """Jupyter: the provenance picture (im2col loads: the pixel picture)."""
        return (im2col_scene(self) if "im2col" in str(self.load_mode).lower() else provenance_scene(self)).svg()


def _extent(f, esize):
    dims, strides = f["global_dim"], [esize] + list(f["global_strides"])
    span = sum((d - 1) * s for d, s in zip(dims, strides)) + esize
    if f["interleave"]:
        span += 32 * esize + int(dims[0]) * 32  # dim 0 counts slices of an interleaved map
    return span


def provenance(tmap, coords, load_mode="tile", im2col_offsets=None):
    """Run the load of ``tmap`` at ``coords`` (driver order, as the instruction
    takes them) in a scratch machine and report each box element's source."""
    f = tmap.fields
    lay = tmap.box_layout
    esize = lay["esize"]
    rank = f["rank"]
    span = _extent(f, esize)
    if span > MAX_TRACE_BYTES:
        raise ValueError(f"the tensor spans {span} B of global memory; provenance traces at most "
                         f"{MAX_TRACE_BYTES} B (use a smaller globalDim to look at the pattern)")
    probe = tmap.copy()
    probe.replace("elemtype", _core.dtype_info(int(_UINT[esize]))["ptx_elemtype"])
    probe.replace("fill_mode", 0)
    addrs = np.asarray(tmap.smem_addresses(0), dtype=np.int64)
    # the load may write more than the address table names (interleaved rows are packed)
    box_end = max(int(addrs.max()) + esize, lay["tx_bytes"], lay["rows"] * lay["pitch"])
    bar_at = -(-box_end // 8) * 8
    n_elems = -(-span // esize)
    digit_bits = 8 * esize
    passes = max(1, -(-int(n_elems + 1).bit_length() // digit_bits))
    uint = np.dtype(f"<u{esize}")
    tags = np.arange(1, n_elems + 1, dtype=np.uint64)
    total = np.zeros(addrs.shape, dtype=np.uint64)
    for p in range(passes):
        m = _core_machine(bar_at + 8)
        mem = np.zeros(n_elems, dtype=uint)
        mem[:] = (tags >> np.uint64(p * digit_bits)) & np.uint64((1 << digit_bits) - 1 if digit_bits < 64 else ~0)
        m.register(mem, address=f["global_address"])
        bar = m.mbarrier(bar_at).init(1)
        bar.arrive_expect_tx(lay["tx_bytes"])
        m.cp_async_bulk_tensor_load(probe, tuple(coords), 0, bar, load_mode=load_mode,
                                    im2col_offsets=im2col_offsets)
        m.run()
        got = np.zeros(addrs.shape, dtype=np.uint64)
        raw = m.smem
        for b in range(esize):
            got |= raw[addrs + b].astype(np.uint64) << np.uint64(8 * b)
        total |= got << np.uint64(p * digit_bits)
    cols = addrs.shape[-1]
    total = total.reshape(-1, cols)
    oob = total == 0
    offsets = np.where(oob, -1, (total.astype(np.int64) - 1) * esize)
    gc = _offsets_to_coords(offsets, f, esize)
    return Provenance(tmap, coords, load_mode, gc, oob, offsets)


def _core_machine(smem):
    from ..machine import Machine
    return Machine(ctas=1, smem_bytes=max(1024, int(smem)), policy="in_order")


def _offsets_to_coords(offsets, f, esize):
    """Global coordinates (NumPy order) of byte offsets, dividing by the strides
    from the largest down (exact for tensors whose strides do not overlap)."""
    dims = list(f["global_dim"])
    # an interleaved map's dimension 0 counts 16/32-byte slices (docs/tile-mode.md 6.1)
    strides = [{1: 16, 2: 32}.get(int(f["interleave"]), esize)] + list(f["global_strides"])
    order = sorted(range(len(dims)), key=lambda i: -strides[i])
    out = np.full(offsets.shape + (len(dims),), -1, dtype=np.int64)
    rest = offsets.copy()
    for i in order:
        s = strides[i] if strides[i] else 1
        q = np.where(offsets >= 0, rest // s, -1)
        rest = np.where(offsets >= 0, rest - q * s, rest)
        out[..., len(dims) - 1 - i] = q
    return out


# --- pictures ----------------------------------------------------------------
def _title(prov, what):
    # one order in the words: NumPy order, with the instruction's own (driver order) beside it
    return (f"{what}: {prov.load_mode} load at {tuple(prov.load_coords)[::-1]} in NumPy order "
            f"(driver order {tuple(prov.load_coords)})")


def provenance_scene(prov, max_rows=16, max_cols=None, wrap=16):
    """The box as a grid of elements, each labelled with the global coordinate it
    came from (NumPy order) or hatched as out-of-bounds fill. Every column is
    drawn (``max_cols`` limits them), ``wrap`` columns to a band, the bands one
    under another, so a wide box stays readable and its out-of-bounds edge shows."""
    rows = min(prov.rows, max_rows)
    cols = prov.cols if max_cols is None else min(prov.cols, max_cols)
    wrap = max(1, min(int(wrap), cols))
    bands = -(-cols // wrap)
    rank = prov.coords.shape[-1]
    cw = 30.0 + 14.0 * rank
    lh = 20.0
    left, top, gap = 52.0, 58.0, 22.0
    band_h = rows * lh + gap
    s = Scene(max(left + wrap * cw + 20, 560.0), top + bands * band_h + 60, _title(prov, "provenance"))
    s.width = max(s.width, 16 + 5.8 * len(s.title))
    s.text(8, 12, s.title, size=10, ha="left", bold=True, tag="title")
    s.text(8, 28, "cell = box element (row, column); label = the global coordinate it holds (NumPy order, "
           f"outermost first); hatched = out-of-bounds fill ({prov.fill})", size=7.5, ha="left",
           color="#444", tag="legend")
    esize = prov.tmap.box_layout["esize"]
    for r in range(rows):
        for c in range(cols):
            band, cc = divmod(c, wrap)
            x, y = left + cc * cw, top + band * band_h + r * lh
            if cc == 0:
                s.text(left - 6, y + lh / 2, f"row {r}", size=7, ha="right", color="#555", tag="header")
            if r == 0:
                s.text(x + cw / 2, y - 8, f"col {c}", size=7, color="#555", tag="header")
            if prov.oob[r, c]:
                s.rect(x, y, cw, lh, hatch=True, edge="#999", lw=0.4, tag="oob")
                s.text(x + cw / 2, y + lh / 2, "OOB " + ("NaN" if prov.fill == "NaN" else "0"), size=7,
                       color="#555", tag="oob_label")
            else:
                g = tuple(int(v) for v in prov.coords[r, c])
                s.rect(x, y, cw, lh, fill=colour(g[-2] if rank > 1 else 0, g[-1] * esize // 16),
                       edge="white", lw=0.6, tag="cell")
                s.text(x + cw / 2, y + lh / 2, "(" + ", ".join(map(str, g)) + ")", size=7, tag="cell_label")
    y = top + bands * band_h - gap + 14
    n_oob = int(prov.oob.sum())
    s.text(8, y, f"{prov.rows * prov.cols - n_oob} elements from the tensor, {n_oob} out-of-bounds fill"
           + (f"; showing {rows} of {prov.rows} rows, {cols} of {prov.cols} columns"
              if (rows, cols) != (prov.rows, prov.cols) else ""), size=7.5, ha="left", tag="note")
    s.height = y + 10
    return s


def provenance_figure(prov, **kw):
    """``provenance`` as a matplotlib Figure (needs matplotlib)."""
    return to_figure(provenance_scene(prov, **kw))


def provenance_svg(prov, **kw):
    """``provenance_figure`` as SVG text (no matplotlib needed)."""
    return provenance_scene(prov, **kw).svg()


def provenance_text(prov, max_rows=16, max_cols=8):
    """The global coordinate of each box element, row by row, for a terminal."""
    lines = [_title(prov, "provenance") + "; each box element's global coordinate (NumPy order)"]
    for r in range(min(prov.rows, max_rows)):
        cells = []
        for c in range(min(prov.cols, max_cols)):
            cells.append(f"OOB:{prov.fill}" if prov.oob[r, c] else
                         "(" + ",".join(str(int(v)) for v in prov.coords[r, c]) + ")")
        lines.append(f"row {r:3d}: " + " ".join(f"{x:>12}" for x in cells) + (" ..." if prov.cols > max_cols else ""))
    return "\n".join(lines)


def _pixels(prov):
    """Per column row: (n, d, h, w) of the pixel (None for out-of-bounds padding) and its channels."""
    out = []
    for r in range(prov.rows):
        inb = np.flatnonzero(~prov.oob[r])
        if inb.size == 0:
            out.append((None, None))
            continue
        g = prov.coords[r, inb[0]]          # NumPy order: N, (D,) (H,) W, C
        pix = tuple(int(v) for v in g[:-1])
        chans = [int(prov.coords[r, c][-1]) for c in inb]
        out.append((pix, (min(chans), max(chans))))
    return out


def row_colour(r):
    """A colour of its own for column row r: hues a golden-ratio step apart never repeat."""
    import colorsys
    h = (r * 0.6180339887) % 1.0
    red, green, blue = colorsys.hls_to_rgb(h, 0.62 if r % 2 else 0.72, 0.55)
    return "#%02x%02x%02x" % (round(red * 255), round(green * 255), round(blue * 255))


def im2col_scene(prov, max_rows=32):
    """Which input pixel and channels fill each row of an im2col column, and where
    those pixels sit in the image, with the padding the bounding box adds around it."""
    rank = prov.coords.shape[-1]
    names = {3: "n, w", 4: "n, h, w", 5: "n, d, h, w"}[rank]
    pix = _pixels(prov)
    rows = min(prov.rows, max_rows)
    lh, left, top = 16.0, 8.0, 58.0
    tw = 250.0
    f = prov.tmap.fields
    dims = f["global_dim"]      # driver order: C, W, H, D, N
    Wd = dims[1]
    Hd = dims[2] if rank >= 4 else 1
    # the bounding box's corners (driver order W, H, D): negative lower / positive upper
    # corners reach past the image: the padding halo, drawn hatched around it
    lower = list(f.get("pixel_box_lower") or [0, 0, 0]) + [0, 0]
    upper = list(f.get("pixel_box_upper") or [0, 0, 0]) + [0, 0]
    w_lo, w_hi = min(0, lower[0]), max(Wd - 1, Wd - 1 + upper[0])
    h_lo, h_hi = (min(0, lower[1]), max(Hd - 1, Hd - 1 + upper[1])) if rank >= 4 else (0, 0)
    nw, nh = w_hi - w_lo + 1, h_hi - h_lo + 1
    cell = max(10.0, min(26.0, 320.0 / max(nw, nh)))
    gw = nw * cell
    s = Scene(left + tw + 40 + max(gw, 200) + 20, max(top + rows * lh, top + nh * cell + 20) + 50,
              _title(prov, f"im2col column, {prov.rows} pixels x {prov.cols} channels"))
    s.width = max(s.width, 16 + 5.8 * len(s.title))     # the title fits
    s.text(8, 12, s.title, size=10, ha="left", bold=True, tag="title")
    s.text(8, 28, f"left: each row of the column is one input pixel ({names}) with its channels",
           size=7.5, ha="left", color="#444", tag="legend")
    s.text(8, 40, "right: the image plane of the first pixel, numbered by the column row that takes it",
           size=7.5, ha="left", color="#444", tag="legend")
    first = next((p for p, _ in pix if p is not None), None)
    for r in range(rows):
        y = top + r * lh
        p, ch = pix[r]
        if p is None:
            s.rect(left, y, tw, lh, hatch=True, edge="#999", lw=0.4, tag="oob")
            s.text(left + 4, y + lh / 2, f"row {r:3d}: padding (out of bounds, {prov.fill})", size=7.5,
                   ha="left", tag="row_label", family="monospace")
        else:
            s.rect(left, y, tw, lh, fill=row_colour(r), edge="white", tag="row")
            s.text(left + 4, y + lh / 2, f"row {r:3d}: pixel ({', '.join(map(str, p))}) c {ch[0]}..{ch[1]}",
                   size=7.5, ha="left", tag="row_label", family="monospace")
    # the image plane of the first in-bounds pixel
    gx, gy = left + tw + 40, top
    if first is not None:
        same = [(r, p) for r, (p, _) in enumerate(pix) if p is not None and p[:-2 if rank >= 4 else -1] == first[:-2 if rank >= 4 else -1]]
        s.text(gx, gy - 8, f"image plane ({', '.join(map(str, first[:-2 if rank >= 4 else -1]))}, :, :)  H={Hd} W={Wd}"
               + ("; hatched: padding" if (nw, nh) != (Wd, Hd) else ""), size=7.5, ha="left", tag="plane_title")
        for h in range(h_lo, h_hi + 1):
            for w in range(w_lo, w_hi + 1):
                px, py = gx + (w - w_lo) * cell, gy + (h - h_lo) * cell
                if 0 <= w < Wd and 0 <= h < Hd:
                    s.rect(px, py, cell, cell, fill="#f4f4f4", edge="#ccc", lw=0.4, tag="pixel")
                else:
                    s.rect(px, py, cell, cell, hatch=True, edge="#bbb", lw=0.4, tag="padding")
        s.rect(gx - w_lo * cell, gy - h_lo * cell, Wd * cell, Hd * cell, fill="none", edge="#555", lw=1.0,
               tag="image_edge")
        for r, p in same:
            h = p[-2] if rank >= 4 else 0
            w = p[-1]
            px, py = gx + (w - w_lo) * cell, gy + (h - h_lo) * cell
            s.rect(px, py, cell, cell, fill=row_colour(r), edge="#333", lw=0.6, tag="taken")
            s.text(px + cell / 2, py + cell / 2, str(r), size=min(7.5, cell * 0.45), tag="taken_label")
    y = top + max(rows * lh, nh * cell) + 14
    npad = sum(1 for p, _ in pix if p is None)
    s.text(8, y, f"{prov.rows - npad} pixels from the image, {npad} padding rows"
           + (f"; showing {rows} of {prov.rows} rows" if rows < prov.rows else ""), size=7.5, ha="left",
           tag="note")
    return s


def im2col_figure(prov, **kw):
    """``im2col_scene`` as a matplotlib Figure (needs matplotlib)."""
    return to_figure(im2col_scene(prov, **kw))


def im2col_svg(prov, **kw):
    """``im2col_figure`` as SVG text (no matplotlib needed)."""
    return im2col_scene(prov, **kw).svg()


def im2col_text(prov):
    """Which pixel and channels fill each row of the column, for a terminal."""
    out = [_title(prov, f"im2col column of {prov.rows} rows (pixels) x {prov.cols} channels")]
    for r, (p, ch) in enumerate(_pixels(prov)):
        out.append(f"row {r:3d}: " + ("padding (out of bounds)" if p is None else
                                      f"pixel {p} channels {ch[0]}..{ch[1]}"))
    return "\n".join(out)
