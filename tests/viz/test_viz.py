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
    with pytest.raises(ImportError, match="pip install matplotlib"):
        viz.layout_figure(tm, 0)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        pa.layout.plot_layout(tm, 0)


def test_text_picture():
    txt = viz.layout_text(_map("128B"), 0x480)
    assert "0x00480 |  r0 c8   r0 c0   r0 c24  r0 c16" in txt
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


# ---- what a reader sees: names, footnotes, alignment, markers, size ---------------------

def test_swizzles_carry_their_cute_names():
    # CuTe's Swizzle<B,M,S> XORs address bits [M, M+B) with [M+S, M+S+B); written out here
    from ptxasync.layout import cute_swizzle, swizzle_label
    want = {"32B": (1, 4, 3), "64B": (2, 4, 3), "128B": (3, 4, 3), "128B_ATOM_32B": (2, 5, 2),
            "128B_ATOM_64B": (1, 6, 1), "NONE": None, "128B_ATOM_32B_FLIP_8B": None, "96B": None}
    for sw, bms in want.items():
        assert cute_swizzle(sw) == bms, sw
        if bms:
            b, m, s = bms
            a = np.arange(8192)
            assert (pa.swizzle_address(sw, a) == a ^ ((a >> s) & (((1 << b) - 1) << m))).all(), sw
    assert swizzle_label("128B") == "128B (CuTe Swizzle<3,4,3>)"
    assert "CuTe Swizzle<3,4,3>" in viz.layout_scene(_map("128B"), 0).title
    assert "CuTe Swizzle<2,4,3>" in viz.layout_scene(_map("64B", box=(8, 32)), 0).title


@pytest.mark.parametrize("swizzle,box,says", [
    ("32B", (8, 16), "address bit 4 XORed with bit 7 (the 16-byte chunk index, bits [4, 7), takes only that bit)"),
    ("64B", (8, 32), "address bits [4, 6) XORed with bits [7, 9) (the 16-byte chunk index, bits [4, 7), takes only those bits)"),
    ("128B", (8, 64), "address bits [4, 7) XORed with bits [7, 10)")])
def test_xor_footnote_names_the_bits_that_apply(swizzle, box, says):
    notes = " ".join(viz.layout_scene(_map(swizzle, box=box), 0x100).texts("note"))
    assert says in notes
    if swizzle != "128B":
        assert "[7, 10)" not in notes


def test_misaligned_destination_note():
    # moved here from the tour and swizzle-modes notebooks: the picture says where the pattern starts
    assert any("starts at its line 3" in n for n in viz.layout_scene(_map("128B", box=(8, 64)), 0x580).texts("note"))
    assert any("starts at its line 2" in n for n in viz.layout_scene(_map("128B", box=(8, 64)), 0x100).texts("note"))
    note = viz.layout_data(_map("32B", box=(8, 16)), 0x80).misaligned_note()
    assert note.endswith("(the XOR uses the absolute address bit 7)")


def test_compare_panels_start_on_the_same_line():
    # a destination not aligned to the repeat: both panels from the swizzled panel's first line
    s = viz.compare_scene(_map("128B", box=(8, 64)), 0x480)
    addrs = [d["s"] for d in s.find("text", "address")]
    half = len(addrs) // 2
    assert addrs[:half] == addrs[half:] and addrs[0] == "0x00400"
    left = {round(d["y"]) for d in s.find("text", "address")[:half]}
    right = {round(d["y"]) for d in s.find("text", "address")[half:]}
    assert left == right                                 # the rows line up


def test_dst_marker_sits_on_its_cell():
    s = viz.layout_scene(_map("128B", box=(8, 64)), 0x480)
    cell, = s.find("rect", "dst_cell")
    line = [d for d in s.find("text", "address") if d["s"] == "0x00480"][0]
    assert cell["y"] < line["y"] < cell["y"] + cell["h"]         # on dst's line
    x0 = min(d["x"] for d in s.find("rect", "cell"))
    assert cell["x"] == x0                                        # byte 0 of that line
    tag, = s.find("text", "dst")
    assert cell["y"] < tag["y"] <= cell["y"] + cell["h"]         # on dst's line, in the right margin:
    assert tag["x"] > max(d["x"] + d["w"] for d in s.find("rect", "cell"))   # it covers no label
    assert tag["s"] == "< dst 0x480"


def test_figures_save_like_scenes(tmp_path):
    """viz.save takes a Figure too, and fig.savefig() writes the PNG viz.save does
    (150 dpi for a narrow picture: 7-point labels are 14 pixels tall, not 7)."""
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread
    tm = _map("128B", box=(8, 64))
    want = imread(viz.save(viz.layout_scene(tm, 0x480), str(tmp_path / "scene.png"))).shape
    assert imread(viz.save(viz.layout_figure(tm, 0x480), str(tmp_path / "fig.png"))).shape == want
    viz.layout_figure(tm, 0x480).savefig(str(tmp_path / "own.png"))
    assert imread(str(tmp_path / "own.png")).shape == want
    assert abs(want[1] - viz.layout_scene(tm, 0x480).width * 150 / 72) <= 1
    with pytest.raises(TypeError, match="save takes a Scene"):
        viz.save("not a picture", str(tmp_path / "x.png"))


def test_element_zoom_reaches_every_byte_of_a_line(capsys, tmp_path):
    from ptxasync.cli import main
    tm = _map("128B", box=(8, 64))
    s = viz.layout_scene(tm, 0, level="element", byte_range=(64, 128))
    assert len(s.find("rect", "cell")) == 8 * 32
    assert any("bytes 64..127" in n for n in s.texts("note"))
    assert main(["layout", "--elements", "--bytes", "64", "128", "-o", str(tmp_path / "e.svg")]) == 0
    assert main(["layout", "--bytes", "64", "128", "-o", str(tmp_path / "e.svg")]) == 2
    assert "--bytes 64 128: needs --elements" in capsys.readouterr().err


def test_wide_pictures_are_saved_at_most_2000_pixels_wide(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread
    tm = _map("128B", box=(8, 64))
    path = viz.save(viz.compare_scene(tm, 0x480), str(tmp_path / "c.png"))
    h, w = imread(path).shape[:2]
    assert w <= viz.MAX_PNG_WIDTH
    path = viz.save(viz.layout_scene(tm, 0), str(tmp_path / "l.png"))   # narrow: full 150 dpi
    assert abs(imread(path).shape[1] - viz.layout_scene(tm, 0).width * 150 / 72) <= 1


def test_provenance_draws_every_column_in_bands():
    # a 64-column box: all columns by default (its out-of-bounds edge at column 40 shows),
    # 16 to a band, bands one under another
    t = np.zeros((40, 104), np.uint16)
    tm = pa.TensorMap.from_array(t, (8, 64), 0x10000, swizzle="128B")
    p = viz.provenance(tm, (64, 36))
    s = viz.provenance_scene(p)
    assert len(s.find("rect", "cell")) + len(s.find("rect", "oob")) == 8 * 64
    assert len(s.find("rect", "cell")) == 4 * 40                   # rows 36..39, columns 64..103
    heads = [d for d in s.find("text", "header") if d["s"].startswith("col ")]
    assert [d["s"] for d in heads][:17] == [f"col {c}" for c in range(17)]
    assert len({d["x"] for d in heads}) == 16 and len({d["y"] for d in heads}) == 4
    wide = viz.provenance_scene(p, wrap=64)
    assert s.width < wide.width / 3                                 # not 64 columns across
    assert len({d["y"] for d in wide.find("text", "header") if d["s"].startswith("col ")}) == 1
    assert "showing" not in " ".join(s.texts("note"))


def test_every_picture_title_says_its_coordinate_order():
    t = np.zeros((40, 104), np.uint16)
    tm = pa.TensorMap.from_array(t, (8, 64), 0x10000, swizzle="128B")
    p = viz.provenance(tm, (64, 36))
    assert viz.provenance_scene(p).title == (
        "provenance: tile load at (36, 64) in NumPy order (driver order (64, 36))")
    assert "in NumPy order (driver order (64, 36))" in viz.provenance_text(p).splitlines()[0]
    assert "(NumPy order)" in viz.layout_scene(tm, 0).title
    im = pa.TensorMap.im2col("u16", 0x40000, [8, 6, 4, 1], [16, 96, 384], [-1, -1], [1, 0],
                             channels_per_pixel=8, pixels_per_column=40)
    q = viz.provenance(im, (0, -1, -1, 0), "im2col", (0, 0))
    assert "NumPy order" in viz.im2col_scene(q).title and "NumPy order" in viz.im2col_text(q)


def test_im2col_picture_draws_the_padding_halo_in_colours_of_its_own():
    # corners lower (-1, -1), upper (+1, 0) in (W, H): the box reaches one pixel left, one
    # right and one above the 6 x 4 image
    im = pa.TensorMap.im2col("u16", 0x40000, [8, 6, 4, 1], [16, 96, 384], [-1, -1], [1, 0],
                             channels_per_pixel=8, pixels_per_column=40)
    p = viz.provenance(im, (0, -1, -1, 0), "im2col", (0, 0))
    s = viz.im2col_scene(p, max_rows=40)
    assert len(s.find("rect", "pixel")) == 6 * 4 and len(s.find("rect", "taken")) == 24
    assert len(s.find("rect", "padding")) == 8 * 5 - 6 * 4            # the ring around the image
    fills = [d["fill"] for d in s.find("rect", "row")]
    assert len(fills) == 24 and len(set(fills)) == 24                # no colour twice
    assert "hatched: padding" in " ".join(s.texts("plane_title"))
