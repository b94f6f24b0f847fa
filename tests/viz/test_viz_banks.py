"""The bank picture: which banks each thread touches, by phase and wavefront (consumers' bank model)."""
import pytest

import ptxasync as pa
from ptxasync import consumers, viz
from ptxasync.cli import main


def _column(swizzle, rows=32, cols=64):
    tm = pa.TensorMap.tiled("bf16", 0, [cols, rows], [2 * cols], [cols, rows], swizzle=swizzle)
    return consumers.box_access_addresses(tm, 0, "column", 16)


@pytest.mark.parametrize("sw,per_phase", [("none", [8, 8, 8, 8]), ("128B", [1, 1, 1, 1])])
def test_cells_follow_the_addresses_and_the_model(sw, per_phase):
    a = _column(sw)
    d = viz.banks_data(a, 16, title=sw)
    assert d.report.per_phase == per_phase
    for t in range(32):
        assert sorted(d.cells[t]) == sorted({(a[t] // 4 + i) % 32 for i in range(4)})   # 16 B: 4 banks
    # the deepest wavefront of each phase is the model's count for that phase
    for p in range(4):
        assert max(max(c.values()) for c in d.cells[8 * p:8 * p + 8]) == per_phase[p]
    if sw == "none":     # 128-byte rows, no swizzle: every thread of a phase on banks 0-3, one after another
        assert [d.cells[t] for t in range(8)] == [{b: t + 1 for b in range(4)} for t in range(8)]


def test_scene_positions_labels_and_text():
    ds = [viz.banks_data(_column(sw), 16, title=f"swizzle {sw}") for sw in ("none", "128B")]
    sc = viz.banks_scene(ds, cell=11.0)
    assert sc.texts("panel_title") == ["swizzle none", "swizzle 128B"]
    assert sc.texts("summary")[0].startswith("32 wavefront(s), 4 phase(s) of 8 threads")
    cells = sc.find("rect", "cell")
    assert len(cells) == 2 * 32 * 4 and len(sc.find("rect", "empty")) == 2 * 32 * 28
    assert sc.texts("phase_label")[:4] == [f"phase {p}: 8 wf" for p in range(4)]
    assert sc.texts("phase_label")[4:] == [f"phase {p}: 1 wf" for p in range(4)]
    # 128B panel (second, shifted by the first panel's width): thread 1 reads banks 4-7, row 1
    w = sc.find("rect", "cell")[0]["w"]
    x0 = [d["x"] for d in sc.find("text", "panel_title")][1]          # panel left + 34 = grid left
    t1 = [c for c in cells[128:] if "thread 1 " in c["label"]]
    assert sorted(round((c["x"] - x0) / w) for c in t1) == [4, 5, 6, 7]
    text = viz.banks_text(ds[0])
    lines = text.splitlines()
    assert lines[0] == "swizzle none: 32 wavefront(s), 4 phase(s) of 8 threads"
    assert "t7       8888" + "." * 28 in lines
    assert "<svg" in viz.banks_svg(ds)
    assert ds[1]._repr_svg_() == viz.banks_svg(ds[1])


def test_store_phases_and_cli_picture(tmp_path, capsys):
    d = viz.banks_data(list(range(0, 256, 8)), 8, "st")      # 8-byte stores: half-warps, 16 threads each
    assert d.report.phases == 2 and d.report.phase_threads == 16 and d.phase_of[16] == 1
    out = tmp_path / "b.svg"
    assert main(["banks", "--box", "32", "64", "--swizzle", "NONE,128B", "-o", str(out)]) == 0
    svg = out.read_text()
    assert ">swizzle NONE<" in svg and ">swizzle 128B<" in svg
    assert "bf16 box 32x64 (NumPy order) at 0x0, ld 16 B, column pattern" in svg     # what was read
    # a swizzle that makes no valid map is said under the panels, not dropped silently
    assert main(["banks", "--box", "32", "128", "-o", str(out)]) == 0
    svg = out.read_text()
    assert ">swizzle NONE<" in svg and ">swizzle 128B<" not in svg
    assert "swizzle 128B: no panel, not a valid map" in svg
    assert main(["banks", "-o", str(tmp_path / "b.txt")]) == 2


def test_figure_renders(tmp_path):
    pytest.importorskip("matplotlib")
    viz.save(viz.banks_scene(viz.banks_data(_column("128B"), 16)), str(tmp_path / "b.png"))
    assert (tmp_path / "b.png").stat().st_size > 1000
