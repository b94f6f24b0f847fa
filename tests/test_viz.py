"""Pictures: the content of each figure (where every cell sits, what it says,
how many there are), checked against an independent swizzle formula."""
import re
import sys

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import viz


def _map(swizzle="128B", box=(16, 64), shape=(128, 256), dtype="bf16", **kw):
    t = np.zeros(shape, np.uint16)
    return pa.TensorMap.from_array(t, box, 0x10000, swizzle=swizzle, dtype=dtype, **kw)


def _swz(addr, mode_bytes):
    """PTX ISA swizzle, written out here: chunk bits [4, 7) XOR address bits [7, 10),
    masked to the pattern's span (32B: 1 bit, 64B: 2 bits, 128B: 3 bits)."""
    if mode_bytes == 0:
        return addr
    bits = {32: 1, 64: 2, 128: 3}[mode_bytes]
    mask = (1 << bits) - 1
    return addr ^ (((addr >> 7) & mask) << 4)


def _cells(scene):
    """{(line address, byte offset in line): label} read off the scene's geometry."""
    addrs = {round(d["y"]): int(d["s"], 16) for d in scene.find("text", "address")}
    xs = sorted({d["x"] for d in scene.find("rect", "cell")} | {d["x"] for d in scene.find("rect", "empty")}
                | {d["x"] for d in scene.find("rect", "before_dst")})
    out = {}
    for d in scene.find("text", "cell_label"):
        slot = [i for i, x in enumerate(xs) if x < d["x"]][-1]
        out[(addrs[round(d["y"])], slot * 16)] = d["s"]
    return out


@pytest.mark.parametrize("swizzle,span", [("NONE", 0), ("32B", 32), ("64B", 64), ("128B", 128)])
@pytest.mark.parametrize("dst", [0, 0x400, 0x480, 0x580])
def test_layout_chunks_sit_where_the_swizzle_puts_them(swizzle, span, dst):
    row_elems = (span or 128) // 2
    tm = _map(swizzle, box=(16, row_elems))
    s = viz.layout_scene(tm, dst)
    cells = _cells(s)
    assert len(s.find("rect", "cell")) == 16 * row_elems * 2 // 16      # one cell per 16-byte chunk
    assert len(cells) == len(s.find("rect", "cell"))
    pitch = span or 128
    for (line, off), label in cells.items():
        r, c = map(int, re.match(r"\((\d+), (\d+)\)", label).groups())
        assert _swz(dst + r * pitch + c * 2, span) == line + off, (label, hex(line), off)
    note = [t for t in s.texts("note") if "into a" in t]
    assert bool(note) == (swizzle != "NONE" and dst % {"32B": 256, "64B": 512, "128B": 1024}.get(swizzle, 1) != 0)
    # the picture starts at the repeat holding dst: lines before dst are hatched
    assert len(s.find("rect", "before_dst")) == 8 * (dst % {"NONE": 128, "32B": 256, "64B": 512, "128B": 1024}[swizzle] // 128)


def test_repeat_lines_and_span_marks():
    s = viz.layout_scene(_map("128B"), 0x480)      # 16 rows from 0x480: lines 0x400..0xc00
    reps = [d["y0"] for d in s.find("line", "repeat")]
    assert len(reps) == 3                            # at 0x400, 0x800 and 0xc00
    s64 = viz.layout_scene(_map("64B", box=(8, 32)), 0)
    assert len(s64.find("line", "span")) == 1        # the 64-byte span splits each 128-byte line once
    assert "repeat 512 B" in " ".join(s64.texts("note"))


def test_unswizzled_and_swizzled_differ_side_by_side():
    tm = _map("128B")
    s = viz.compare_scene(tm, 0)
    labels = s.texts("cell_label")
    assert len(labels) == 2 * 16 * 8
    left, right = labels[:128], labels[128:]
    assert left[:8] == [f"(0, {c})" for c in range(0, 64, 8)]
    assert right[8:16] == ["(1, 8)", "(1, 0)", "(1, 24)", "(1, 16)", "(1, 40)", "(1, 32)", "(1, 56)", "(1, 48)"]
    assert sorted(left) == sorted(right)
    # colour follows the logical column chunk, not the position
    fills = {}
    for d, lab in zip(s.find("rect", "cell"), labels):
        fills.setdefault(lab, set()).add(d["fill"])
    assert all(len(v) == 1 for v in fills.values())


def test_element_zoom_labels_every_element():
    tm = _map("128B", box=(8, 64))
    s = viz.layout_scene(tm, 0, level="element", byte_range=(0, 32))
    assert len(s.find("rect", "cell")) == 8 * 16                     # 16 bf16 elements per line
    assert len(s.find("line", "atom")) == 3                          # 16-byte atom edges at 0, 16, 32
    # line 1, first element: swizzle moved chunk 1 of row 1 to slot 0
    assert s.texts("cell_label")[32:34] == ["1", "8"]


def test_matplotlib_figure_matches_scene(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.patches import Rectangle
    tm = _map("64B", box=(8, 32))
    scene = viz.layout_scene(tm, 0)
    fig = viz.layout_figure(tm, 0)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == [d["s"] for d in scene.find("text")]
    rects = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len(rects) >= len(scene.find("rect"))
    fig.savefig(tmp_path / "l.png")
    assert (tmp_path / "l.png").stat().st_size > 10000


def test_svg_needs_no_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    tm = _map("128B")
    svg = viz.layout_svg(tm, 0)
    assert svg.startswith("<svg") and svg.count(">(0, 8)<") == 1
    with pytest.raises(ImportError, match=r"pip install ptxasync\[plot\]"):
        viz.layout_figure(tm, 0)
    with pytest.raises(ImportError, match=r"pip install ptxasync\[plot\]"):
        pa.layout.plot_layout(tm, 0)


def test_text_picture():
    txt = viz.layout_text(_map("128B"), 0x480)
    assert "0x00480 | r0  c8 |r0  c0 " in txt
    assert "1 line) into a 1024-byte swizzle repeat" in txt


def test_provenance_tile_with_oob():
    tm = _map("32B", box=(8, 16), shape=(40, 104), oob_fill="NAN_REQUEST_ZERO_FMA")
    p = viz.provenance(tm, (96, 36))
    rows, cols = np.meshgrid(np.arange(36, 44), np.arange(96, 112), indexing="ij")
    inb = (rows < 40) & (cols < 104)
    assert (p.oob == ~inb).all()
    assert (p.coords[inb][:, 0] == rows[inb]).all() and (p.coords[inb][:, 1] == cols[inb]).all()
    assert p.fill == "NaN"
    s = viz.provenance_scene(p)
    assert len(s.find("rect", "oob")) == int((~inb).sum())
    assert s.texts("cell_label")[0] == "(36, 96)"
    assert "32 elements from the tensor, 96 out-of-bounds fill" in s.texts("note")
    assert p._repr_svg_() == s.svg()                                 # Jupyter shows the picture


def test_provenance_element_strides_and_3d():
    t = np.zeros((4, 16, 32), np.float32)
    tm = pa.TensorMap.from_array(t, (2, 4, 8), 0x20000, element_strides=(1, 2, 1))
    p = viz.provenance(tm, (8, 2, 1))
    # rows run over (d2, d1); d1 steps by its element stride 2
    want = [(z, y) for z in (1, 2) for y in (2, 4)]
    got = [tuple(int(v) for v in p.coords[r, 0][:2]) for r in range(p.rows)]
    assert got == want
    assert list(p.coords[0, :, 2]) == list(range(8, 16))


def test_im2col_pixels():
    x = np.zeros((1, 4, 4, 8), np.uint16)
    tm = pa.TensorMap.im2col("u16", 0x40000, [8, 4, 4, 1], [16, 64, 256], [-1, -1], [-1, -1],
                             channels_per_pixel=8, pixels_per_column=6)
    p = viz.provenance(tm, (0, -1, -1, 0), "im2col", (1, 1))
    txt = viz.im2col_text(p)
    # offsets (1, 1) from corner (-1, -1): the first pixel is (h, w) = (0, 0), W fastest
    assert "row   0: pixel (0, 0, 0) channels 0..7" in txt
    assert "row   3: pixel (0, 0, 3) channels 0..7" in txt
    s = viz.im2col_scene(p)
    assert len(s.find("rect", "pixel")) == 16
    assert len(s.find("rect", "taken")) == 6 - len(s.find("rect", "oob"))
    assert p._repr_svg_() == s.svg()


def test_jupyter_reprs_need_no_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    t = np.arange(64 * 128, dtype=np.uint16).reshape(64, 128)
    gpu = pa.Machine(smem_bytes=16384)
    g = gpu.register(t)
    tm = pa.TensorMap.from_array(t, (8, 64), g.address, swizzle="128B")
    html = tm._repr_html_()
    assert "<table>" in html and "<svg" in html and html.count(">(1, 8)<") == 1
    bar = gpu.mbarrier(8192).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (0, 0), 1024, bar)
    svg = bar._repr_svg_()
    assert "tx-count 1024 (bytes still expected)" in svg and "1 of 1 arrived (0 pending)" in svg
    bar.try_wait(0)
    from ptxasync.viz.objects import smem_scene
    s = smem_scene(gpu.smem, "smem")
    assert len(s.find("rect", "line_used")) == 8          # the 1 KiB box: 8 lines from 0x400
    assert "<svg" in gpu._repr_html_() and "<svg" in gpu.ctas[0]._repr_svg_()
