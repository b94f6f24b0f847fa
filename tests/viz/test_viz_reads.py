"""The consumer read-order picture: which wgmma / ldmatrix fragment element each
shared-memory chunk feeds, what the TMA load put there, and where they differ.

Expected positions are written from the rules (observation 2 / W4: the 16-byte
chunk index XOR address bits [7, 10); W2: the MN-major no-swizzle layout; L1:
ldmatrix row r of matrix j comes from thread 8j + r's address), never taken from
the code under test."""
import sys

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import viz
from ptxasync.consumers import (TmaProducer, WgmmaDescriptor, box_ldmatrix_addresses, check_ldmatrix,
                                check_wgmma, descriptor_for_tile)

DST = 0x1180          # 384 bytes into a 1024-byte repeat: line bits [7, 10) start at 3


def _tile(swizzle="128B"):
    tm = pa.TensorMap.tiled("FLOAT16", 0x10000, [128, 64], [256], [64, 64], swizzle=swizzle)
    return tm, TmaProducer(tm, [((0, 0), DST)])


def _tma_chunk(row, q, dst=DST, pitch=128, mask=7):
    """Where a 128B-swizzled TMA load puts 16-byte chunk q of box row ``row``."""
    line = dst + row * pitch
    return line - line % 128 + 16 * (q ^ ((line >> 7) & mask)) if pitch == 128 else None


def test_matching_descriptor_reads_each_row_where_the_load_put_it():
    tm, prod = _tile()
    ro = viz.wgmma_read_order(descriptor_for_tile(tm, DST), "B", 64, producer=prod)
    assert len(ro.chunks) == 128 and ro.addr.size == 64 * 16
    for n in range(64):
        for q in (0, 1):
            ch = ro.chunks[_tma_chunk(n, q)]
            assert ch.label == f"n{n} k{8 * q}-{8 * q + 7}"
            assert ch.holds == ("tile", (n, 8 * q)) and not ch.bad and ch.reads == 1
    assert ro.mismatched == 0 and ro.bad_chunks == []


def test_64B_descriptor_mismatches_as_check_wgmma_counts():
    tm, prod = _tile()
    bad = WgmmaDescriptor.from_fields(start=DST, lbo=16, sbo=512, swizzle="64B")
    ro = viz.wgmma_read_order(bad, "B", 64, producer=prod)
    assert ro.mismatched == check_wgmma(bad, prod, "B", n=64).mismatched == 1008
    # rows 64 bytes apart: only row 0 (at dst, where bits [7, 9) and [7, 10) agree) is right
    good = sorted(set(ro.chunks) - set(ro.bad_chunks))
    assert good == sorted([_tma_chunk(0, 0), _tma_chunk(0, 1)])
    assert ro.chunks[DST + 64 + 48].label == "n1 k0-7"           # row 1: 64 B on, chunk 0 XOR 3
    assert ro.chunks[DST + 64 + 48].holds == ("tile", (0, 32))     # ... which holds row 0, column 32


def test_scene_places_labels_and_outlines():
    tm, prod = _tile()
    g = viz.wgmma_read_order(descriptor_for_tile(tm, DST), "B", 64, producer=prod)
    b = viz.wgmma_read_order(WgmmaDescriptor.from_fields(start=DST, lbo=16, sbo=512, swizzle="64B"), "B", 64,
                             producer=prod)
    s = viz.read_order_scene(g, max_lines=16)
    # the window starts at the repeat holding the start (0x1000): 16 lines hold rows 0..12
    assert s.texts("address")[:4] == ["0x01000", "0x01080", "0x01100", "0x01180"]
    cells = s.find("rect", "cell")
    assert len(cells) == 2 * 13
    c = next(c for c in cells if c["label"].startswith(f"0x{_tma_chunk(0, 0):x}:"))
    x0, y0 = s.find("rect", "frame")[0]["x"], s.find("rect", "frame")[0]["y"]
    assert (round((c["x"] - x0) / c["w"]), round((c["y"] - y0) / c["h"])) == (3, 3)   # +48 of line 3
    assert "n0 k0-7" in s.texts("cell_label") and "(0, 0)" in s.texts("holds_label")
    assert not s.find("rect", "bad") and s.texts("start") == ["◀ start 0x1180"]
    assert len(s.find("line", "repeat")) == 2                       # 0x1000 and 0x1400
    both = viz.read_order_scene([g, b], max_lines=16)
    shown = [a for a in b.bad_chunks if a < 0x1000 + 16 * 128]
    assert len(both.find("rect", "bad")) == len(shown) == 50
    assert any(t.startswith("1024 elements read from 128 chunks; 1008 not the intended ones")
               for t in both.texts("summary"))
    assert "first: n1 k0 reads 0x11f0, which holds (0, 32); intended (1, 0)" in both.texts("note")


def test_mn_major_chunks_hold_eight_n():
    # MN-major, no swizzle (W2): 8 consecutive n per 16-byte row, k rows 16 bytes
    # apart, the second 8 n SBO = 128 further, k 8..15 LBO = 256 further
    d = WgmmaDescriptor.from_fields(start=0, lbo=256, sbo=128)
    ro = viz.wgmma_read_order(d, "B", 16, major="MN")
    for k in range(16):
        for h in (0, 1):
            a = 16 * (k % 8) + 128 * h + 256 * (k // 8)
            assert ro.chunks[a].label == f"n{8 * h}-{8 * h + 7} k{k}"
    assert ro.holds is None and "n0-7 k0" in viz.read_order_scene(ro).texts("cell_label")


def test_ldmatrix_rows_unswizzled_against_a_128B_tile():
    tm, prod = _tile()
    ok = viz.ldmatrix_read_order(box_ldmatrix_addresses(tm, DST), producer=prod, intended=(0, 0))
    assert ok.mismatched == 0 and len(ok.chunks) == 32
    # L1: matrix j row r is thread 8j + r's row: tile rows r + 8 (j % 2), chunk j // 2
    for j in range(4):
        for r in range(8):
            assert ok.chunks[_tma_chunk(r + 8 * (j % 2), j // 2)].label == f"M{j} row {r}"
    plain = [DST + (t % 8 + 8 * ((t // 8) % 2)) * 128 + 16 * (t // 16) for t in range(32)]
    ro = viz.ldmatrix_read_order(plain, producer=prod, intended=(0, 0))
    # an unswizzled row address is right only where the line's XOR is 0: (35 + row) % 8 == 0, rows 5 and 13
    right = {a for a in ro.chunks if ((a >> 7) & 7) == 0}
    assert set(ro.chunks) - set(ro.bad_chunks) == right and len(right) == 4
    intended = [[[(r + 8 * (j % 2), c + 8 * (j // 2)) for c in range(8)] for r in range(8)] for j in range(4)]
    assert ro.mismatched == 224
    assert check_ldmatrix(plain, prod, intended).mismatched == 224
    tr = viz.ldmatrix_read_order(plain, trans=True)
    assert tr.chunks[DST].label == "M0 col 0" and tr.chunks[DST + 128].label == "M0 col 1"


def test_text_form():
    tm, prod = _tile()
    b = viz.wgmma_read_order(WgmmaDescriptor.from_fields(start=DST, lbo=16, sbo=512, swizzle="64B"), "B", 64,
                             producer=prod)
    lines = viz.read_order_text(b).splitlines()
    assert lines[1] == "1024 elements read from 128 chunks; 1008 not the intended ones, in 126 chunks (marked !)"
    row = next(ln for ln in lines if ln.startswith("0x01180"))
    assert row.split()[1:7] == [".", ".", "n0", "k8-15", "n0", "k0-7"] and "n1 k8-15!" in row
    assert row.endswith("<- start 0x1180")
    held = lines[lines.index(row) + 1]           # under it: what the load put in each chunk of the line
    assert [c.strip() + ")" for c in held.split(")")[:8]] == [f"(0, {8 * (q ^ 3)})" for q in range(8)]
    assert "  n1 k0 reads 0x11f0, which holds (0, 32); intended (1, 0)" in lines


def test_element_level_and_repeated_reads():
    tm, prod = _tile()
    s = viz.read_order_scene(viz.wgmma_read_order(descriptor_for_tile(tm, DST), "B", 64, producer=prod),
                             level="element")
    labels, holds = s.texts("cell_label"), s.texts("holds_label")
    assert labels[:8] == [f"0,{k}" for k in range(8, 16)]          # bytes 32..63 of line 0x1180
    assert holds[:2] == ["(0, 8)", "(0, 9)"]
    # SBO 0: every 8-row group reads the same core matrices
    ro = viz.wgmma_read_order(WgmmaDescriptor.from_fields(start=0, lbo=128, sbo=0), "B", 16)
    assert ro.chunks[0].reads == 2 and ro.chunks[0].label == "n0,8 k0-7"
    assert any("×2" in t for t in viz.read_order_scene(ro).texts("cell_label"))


def test_svg_without_matplotlib(monkeypatch):
    tm, prod = _tile()
    ro = viz.wgmma_read_order(descriptor_for_tile(tm, DST), "B", 64, producer=prod)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    svg = viz.read_order_svg(ro)
    assert svg.startswith("<svg") and svg.count(">n0 k0-7<") == 1
    assert ro._repr_svg_() == svg and repr(ro).endswith("1024 elements from 128 chunks, 0 not intended>")
    with pytest.raises(ImportError, match="pip install matplotlib"):
        viz.read_order_figure(ro)


def test_figure_matches_scene(tmp_path):
    pytest.importorskip("matplotlib")
    tm, prod = _tile()
    ro = viz.wgmma_read_order(descriptor_for_tile(tm, DST), "B", 64, producer=prod)
    fig = viz.read_order_figure(ro)
    assert [t.get_text() for t in fig.axes[0].texts] == [d["s"] for d in viz.read_order_scene(ro).find("text")]
    fig.savefig(tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 10000


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="level"):
        viz.read_order_scene(viz.ldmatrix_read_order([16 * t for t in range(32)]), level="byte")
    with pytest.raises(ValueError, match="32 thread addresses"):
        viz.ldmatrix_read_order([0] * 8)
    tm, prod = _tile()
    with pytest.raises(ValueError, match="intended gives"):
        viz.wgmma_read_order(descriptor_for_tile(tm, DST), "B", 64, producer=prod, intended=np.zeros((3, 2)))
