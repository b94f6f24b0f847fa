"""The pipeline timeline picture: lanes, marks and spans read from the engine's trace."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import pipeline, viz


@pytest.fixture(scope="module")
def piped():
    m, _, _ = pipeline.run(tiles=4, trace=True)
    return m


def test_lanes_ops_and_phases_follow_the_trace(piped):
    tr = piped.trace
    tl = viz.timeline(piped)
    labels = [lab for _, lab in tl.lanes]
    assert labels[:2] == ["CTA 0 thread 0", "CTA 0 thread 128"]
    assert labels[2:6] == [f"op #{i}" for i in range(4)]
    assert labels[6:] == [f"mbarrier 0x{a:x} CTA 0" for a in (0x10, 0x18, 0x20, 0x40, 0x48, 0x50)]
    # each operation spans from its issue to its complete_tx
    for o in range(4):
        cols = [c for c, e in enumerate(tr) if e.op == o]
        assert tr[cols[0]].kind == "issue" and tr[cols[-1]].kind == "complete_tx"
        assert tl.ops[o] == (cols[0], cols[-1])
    # the full barrier of stage 0 (0x10) flipped twice: phases 0 and 1 closed where the trace says
    flips = [c for c, e in enumerate(tr) if e.kind == "phase" and e.addr == 0x10]
    b = labels.index("mbarrier 0x10 CTA 0")
    assert [(c1, ph) for _, c1, ph in tl.phases[b]] == [(flips[0], 0), (flips[1], 1)]
    assert tl.open_phases[b][2] == 2


def test_scene_positions_labels_and_counts(piped):
    tr = piped.trace
    sc = viz.timeline_scene(piped, col=14.0, lane=22.0)
    assert sc.texts("lane_label")[0] == "CTA 0 thread 0" and len(sc.find("rect", "lane")) == 12
    assert len(sc.find("rect", "op")) == 4
    assert len(sc.find("line", "phase")) == sum(e.kind == "phase" for e in tr)
    assert len(sc.find("rect", "complete_tx")) == 2 * 4      # the op's lane and the barrier's lane
    waits = sc.find("rect", "wait")
    assert len(waits) == sum(e.kind == "wait" for e in tr)
    assert sum(w["fill"] == "white" for w in waits) == sum(e.kind == "wait" and not e.b & 1 for e in tr)
    # an issue mark sits in its column (left 150 + 14 * column, centred) and its op's lane
    c = next(c for c, e in enumerate(tr) if e.kind == "issue" and e.op == 2)
    lane_y = 46 + 22 * 4                                       # op #2 is lane 4
    hits = [r for r in sc.find("rect", "issue") if abs(r["x"] + r["w"] / 2 - (150 + 14 * c + 7)) < 1e-6]
    assert {round(r["y"] + r["h"] / 2 - lane_y, 6) for r in hits} == {11.0, 11.0 - 22 * 4}   # op lane, thread 0
    assert "phase 1" in sc.texts("phase_label") and "t=0" in sc.texts("tick_label")
    assert "<svg" in viz.timeline_svg(piped) and "op #3" in viz.timeline_svg(piped)


def test_hazard_and_text_form():
    m = pa.Machine(smem_bytes=4096, hazards="report", trace=True)
    b = m.mbarrier(0x100).init(1)
    assert not b.test_wait(0, thread=1)
    b.arrive()
    b.arrive()                                      # phase-unobserved: thread 1 never saw phase 0
    tl = viz.timeline(m.trace)
    col = next(c for c, e in enumerate(m.trace) if e.kind == "hazard")
    assert tl.hazards == [(col, "phase-unobserved")]
    sc = viz.timeline_scene(m)
    assert sc.texts("hazard_rule") == ["phase-unobserved"] and len(sc.find("line", "hazard_line")) == 1
    text = viz.timeline_text(m)
    lines = text.splitlines()
    assert lines[0].startswith("pipeline timeline: 7 events, 1 hazard(s)")
    bar = next(l for l in lines if l.lstrip().startswith("mbarrier 0x100"))
    assert bar.split("|", 1)[1].count("A") == 2 and bar.count("|") == 3     # label bar + two flips
    t1 = next(l for l in lines if l.lstrip().startswith("CTA 0 thread 1"))
    assert t1.split("|", 1)[1][1] == "."            # its wait returned false
    assert "hazard at t=" in text and "phase-unobserved" in text


def test_figure_renders(piped, tmp_path):
    pytest.importorskip("matplotlib")
    fig = viz.timeline_figure(piped)
    assert fig.get_figwidth() > 8
    viz.save(viz.timeline_scene(piped), str(tmp_path / "tl.png"))
    assert (tmp_path / "tl.png").stat().st_size > 1000


def _arrive_expect_tx_trace():
    m = pa.Machine(trace=True, smem_bytes=64 * 1024)
    t = np.zeros((64, 64), np.uint16)
    g = m.register(t)
    tm = pa.TensorMap.from_array(t, (8, 64), g.address, swizzle="128B")
    bar = m.mbarrier(0).init(1)
    for i in range(3):
        bar.arrive_expect_tx(tm.box_bytes)
        m.cp_async_bulk_tensor_load(tm, (0, 8 * i), 1024, bar)
        bar.try_wait(i % 2)
    return m


def test_expect_tx_is_drawn_and_the_legend_lists_what_is_drawn():
    sc = viz.timeline_scene(_arrive_expect_tx_trace())
    halves = sc.find("rect", "expect_tx")
    assert len(halves) == 6                      # 3 arrive.expect_tx, on the thread and mbarrier lanes
    assert all("expect_tx 1024 bytes" == d["label"] for d in halves)
    legend = sc.texts("legend")
    assert any(t.startswith("expect_tx") for t in legend) and "init" in legend
    assert "hazard" not in legend and "source read" not in legend      # nothing of the kind drawn


def test_markers_leave_phase_labels_readable():
    sc = viz.timeline_scene(_arrive_expect_tx_trace())
    labels = sc.find("text", "phase_label")
    marks = [d for k in ("arrive", "complete_tx", "expect_tx") for d in sc.find("rect", k)]
    assert labels
    for lab in labels:              # each label (top of its lane, 6 pt) lies above every marker
        for mk in marks:
            if abs(mk["x"] - lab["x"]) < 40 and lab["y"] - 2 <= mk["y"] + mk["h"] / 2 <= lab["y"] + 20:
                assert mk["y"] >= lab["y"] + 6, (lab, mk)


def test_fences_barriers_and_a_race_s_two_accesses():
    """The memory model's picture: fences (F) and bar.sync (B) on their threads'
    lanes; the race's two accesses ringed in red and joined."""
    import numpy as np
    m = pa.Machine(policy="immediate", trace=True, hazards="report")
    g = m.alloc(256)
    tm = pa.TensorMap.tiled("u8", g.address, [16, 16], [16], [16, 16])
    m.cta(0).write(1024, np.ones(32, np.uint8), thread=37)
    m.fence_proxy_async(thread=37, space="global")      # the wrong state space
    m.bar_sync(0)
    m.cp_async_bulk_tensor_store(tm, [0, 0], 1024, thread=0)
    assert [h.rule for h in m.hazards] == ["proxy-fence-missing"]
    tl = viz.timeline(m)
    kinds = {(tl.lanes[i][1], k) for _, i, k, _ in tl.marks}
    assert {("CTA 0 thread 37", "fence"), ("CTA 0 thread 37", "barrier"), ("CTA 0 thread 0", "barrier"),
            ("CTA 0 thread 37", "write")} <= kinds
    (rule, (c0, i0), (c1, i1)), = tl.races
    assert rule == "proxy-fence-missing"
    assert tl.lanes[i0][1] == "CTA 0 thread 37" and tl.events[c0].kind == "write"
    assert tl.lanes[i1][1] == "op #0" and tl.events[c1].kind == "issue"
    sc = viz.timeline_scene(m)
    assert len([d for _, d in sc.items if d.get("tag") == "race_access"]) == 2
    assert len([d for _, d in sc.items if d.get("tag") == "race_line"]) == 1
    assert "proxy-fence-missing: CTA 0 thread 37 at t=" in viz.timeline_text(m)
