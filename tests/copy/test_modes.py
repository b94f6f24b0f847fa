"""sm_100 load modes and the target gate (docs/load-modes.md).

Each rule test cites the PTX ISA / driver text it checks (spec/tensors.md,
spec/seeds/ptx-data-movement.md, spec/driver-tensormap.md); the property
tests compare the model with tests/modes_reference.py.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptxasync as pa
from ptxasync import _core

import modes_reference as ref

NP = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
DT = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}


def gather_setup(target="sm_100a", rows=40, cols=64, es=2, box0=32, swizzle="NONE", fill=0x5A):
    m = pa.Machine(target=target)
    m.smem[:] = fill
    rng = np.random.default_rng(rows * 1000 + cols)
    src = rng.integers(0, 256, size=rows * cols * es, dtype=np.uint8).view(NP[es]).reshape(rows, cols)
    g = m.register(src)
    tm = pa.TensorMap.tiled(DT[es], g.address, [cols, rows], [cols * es], [box0, 1], swizzle=swizzle,
                            target=target)
    return m, src, g, tm


# ---- targets ----------------------------------------------------------------

def test_target_table_follows_the_seed_notes():
    # seed cp.async.bulk.tensor, Target ISA Notes: ".tile::gather4 and .im2col::w require
    # sm_100a when destination state space is .shared::cluster and is supported on sm_100f
    # ...; sm_100 or higher when destination state space is .shared::cta"
    t = _core.target_table()
    assert t[".tile::gather4 (to .shared::cta)"][1][0] == "sm_100"
    assert "sm_90a" not in t[".tile::gather4 (to .shared::cta)"][1]
    assert set(t[".tile::gather4 to .shared::cluster"][1]) == {"sm_100a", "sm_100f", "sm_103a", "sm_103f"}
    # ".tile::scatter4 is supported on sm_100a, sm_101a (renamed sm_110a), sm_100f / sm_101f
    # (sm_110f) or higher in the same family" - not sm_120a, not the baseline sm_100
    for name in (".tile::scatter4", ".im2col::w::128", ".cta_group"):
        have = set(t[name][1])
        assert {"sm_100a", "sm_100f", "sm_103a", "sm_110a", "sm_110f"} <= have
        assert not have & {"sm_90", "sm_90a", "sm_100", "sm_120a", "sm_121a"}
    # cp.async.bulk.prefetch.tensor: "Requires sm_90 or higher"
    assert "sm_90a" in t["cp.async.bulk.prefetch.tensor"][1]


def test_gather4_on_sm90a_names_the_target_that_has_it():
    m, src, g, tm = gather_setup(target="sm_100a")
    m90 = pa.Machine()
    m90.register(src, address=g.address)
    with pytest.raises(pa.IllegalInstruction, match=r"gather4.*needs sm_100 or later; this machine is sm_90a"):
        m90.cp_async_bulk_tensor_load(tm, (0, 1, 2, 3, 4), 0, m90.mbarrier(1024).init(1),
                                      load_mode="tile::gather4")


def test_gather4_to_shared_cluster_needs_an_a_or_f_target():
    # seed: ".tile::gather4 ... require sm_100a when destination state space is .shared::cluster"
    m, src, g, tm = gather_setup(target="sm_100")
    bar = m.mbarrier(1024).init(1)
    m.cp_async_bulk_tensor_load(tm, (0, 1, 2, 3, 4), 0, bar, load_mode="tile::gather4")  # shared::cta
    with pytest.raises(pa.IllegalInstruction, match=r"shared::cluster needs sm_100a, sm_100f"):
        m.cp_async_bulk_tensor_load(tm, (0, 1, 2, 3, 4), 0, bar, load_mode="tile::gather4",
                                    dst_space="shared::cluster")


def test_scatter4_not_on_sm120a():
    m, src, g, tm = gather_setup(target="sm_120a")
    with pytest.raises(pa.IllegalInstruction, match=r"scatter4 needs sm_100a/f"):
        m.cp_async_bulk_tensor_store(tm, (0, 1, 2, 3, 4), 0, load_mode="tile::scatter4")


def test_atom_swizzles_by_target():
    # golden observation 15: the sm_90 driver rejects every 128B_ATOM_* swizzle; the driver
    # docs give them to compute capability 10.0 (CCCL: "not supported with compute capability 9")
    args = ("f16", 0x1000, [64, 16], [128], [64, 4])
    with pytest.raises(pa.InvalidValue, match=r"not supported on sm_90.*need sm_100 or later.*sm_90a"):
        pa.TensorMap.tiled(*args, swizzle="128B_ATOM_32B")
    for sw in ("128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B"):
        tm = pa.TensorMap.tiled(*args, swizzle=sw, target="sm_100a")
        assert tm.swizzle == pa.Swizzle[("B" + sw).replace("B128B", "B128")]
        assert pa.TensorMap.from_bytes(bytes(tm)) == tm


def test_atom_map_refused_by_an_sm90a_machine():
    m = pa.Machine(target="sm_100a")
    g = m.alloc(64 * 16 * 2)
    tm = pa.TensorMap.tiled("f16", g.address, [64, 16], [128], [64, 4], swizzle="128B_ATOM_64B",
                            target="sm_100a")
    m90 = pa.Machine()
    m90.register(g.bytes, address=g.address)
    with pytest.raises(pa.IllegalInstruction, match=r"128B_ATOM_\* swizzle needs sm_100 or later \(compute capability 10.0\); this machine is sm_90a"):
        m90.cp_async_bulk_tensor_load(tm, (0, 0), 0, m90.mbarrier(2048).init(1))
    bar = m.mbarrier(2048).init(1)
    m.cp_async_bulk_tensor_load(tm, (0, 0), 0, bar)   # sm_100a executes it


def test_atom_swizzle_on_cluster_load_not_on_sm120a():
    # seed, restrictions for sm_120a: loads to .shared::cluster do not support .swizzle_atomicity
    m = pa.Machine(target="sm_120a")
    g = m.alloc(64 * 16 * 2)
    tm = pa.TensorMap.tiled("f16", g.address, [64, 16], [128], [64, 4], swizzle="128B_ATOM_32B",
                            target="sm_120a")
    bar = m.mbarrier(2048).init(1)
    m.cp_async_bulk_tensor_load(tm, (0, 0), 0, bar)
    with pytest.raises(pa.IllegalInstruction, match="shared::cluster"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), 0, bar, dst_space="shared::cluster")


def test_atom_swizzle_layout_is_the_ptx_table():
    # PTX 5.5.7, 32-byte atomicity: "0 1 | 2 3 | 4 5 | 6 7 / 2 3 | 0 1 | 6 7 | 4 5 / ..."
    table = [[0, 1, 2, 3, 4, 5, 6, 7], [2, 3, 0, 1, 6, 7, 4, 5], [4, 5, 6, 7, 0, 1, 2, 3],
             [6, 7, 4, 5, 2, 3, 0, 1]]
    for line, row in enumerate(table):
        for pos, chunk in enumerate(row):
            assert pa.swizzle_address("128B_ATOM_32B", line * 128 + chunk * 16) == line * 128 + pos * 16
    # 64-byte atomicity: "0 1 2 3 | 4 5 6 7 / 4 5 6 7 | 0 1 2 3"
    for line, row in enumerate([[0, 1, 2, 3, 4, 5, 6, 7], [4, 5, 6, 7, 0, 1, 2, 3]]):
        for pos, chunk in enumerate(row):
            assert pa.swizzle_address("128B_ATOM_64B", line * 128 + chunk * 16) == line * 128 + pos * 16
    # 8-byte flip: "a flip of adjacent 8-bytes within the 16-byte data at every alternate line"
    assert pa.swizzle_address("128B_ATOM_32B_FLIP_8B", 128 + 0) == 128 + 2 * 16 + 8


def test_packed_types_by_target():
    # obs. 15: the sm_90 driver rejects the packed types; CC 10.0 drivers encode them
    with pytest.raises(pa.InvalidValue, match="not supported on sm_90.*need sm_100 or later"):
        pa.TensorMap.tiled("16U4_ALIGN8B", 0x1000, [256, 4], [128], [64, 1])
    tm = pa.TensorMap.tiled("16U4_ALIGN8B", 0x1000, [256, 4], [128], [64, 1], target="sm_100a")
    assert pa.TensorMap.from_bytes(bytes(tm)) == tm
    m = pa.Machine()
    m.alloc(4096, address=0x1000)
    with pytest.raises(pa.IllegalInstruction, match="packed 16U4/16U6 type needs sm_100 or later"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), 0, m.mbarrier(1024).init(1))


# ---- tile::gather4 / tile::scatter4 -------------------------------------------

def test_gather4_needs_rank_2():
    # 5.5.3.4: "these modes work only on 2D tensor data"
    m = pa.Machine(target="sm_100a")
    g = m.alloc(8 * 8 * 64)
    tm = pa.TensorMap.tiled("u8", g.address, [64, 8, 8], [64, 512], [16, 1, 1], target="sm_100a")
    with pytest.raises(pa.InvalidValue, match="rank-2"):
        m.cp_async_bulk_tensor_load(tm, (0, 0, 1, 2, 3), 0, m.mbarrier(1024).init(1),
                                    load_mode="tile::gather4")


def test_gather4_needs_box_dim1_of_one():
    # 5.5.3.4.1: "The size of the bounding box in the dimension 1 must be one."
    m = pa.Machine(target="sm_100a")
    g = m.alloc(64 * 8)
    tm = pa.TensorMap.tiled("u8", g.address, [64, 8], [64], [16, 2], target="sm_100a")
    with pytest.raises(pa.InvalidValue, match=r"boxDim\[1\] = 1"):
        m.cp_async_bulk_tensor_load(tm, (0, 0, 1, 2, 3), 0, m.mbarrier(1024).init(1),
                                    load_mode="tile::gather4")


def test_gather4_takes_five_coordinates():
    # seed: "{col_idx, row_idx0, row_idx1, row_idx2, row_idx3} Fixed length vector of size 5"
    m, src, g, tm = gather_setup()
    with pytest.raises(ValueError, match="needs 5"):
        m.cp_async_bulk_tensor_load(tm, (0, 1), 0, m.mbarrier(1024).init(1), load_mode="tile::gather4")


def test_gather4_column_start_is_a_tile_rule():
    # 5.5.3.4: "All other constraints and rules of the tile mode apply": the innermost start
    # offset is 16-byte aligned (golden observation 1). Figure 10's column 1 faults for u16.
    m, src, g, tm = gather_setup()
    with pytest.raises(pa.IllegalInstruction, match="multiple of 16"):
        m.cp_async_bulk_tensor_load(tm, (1, 2, 5, 0, 9), 0, m.mbarrier(1024).init(1),
                                    load_mode="tile::gather4")


def test_gather4_figure10_rows_and_tx_bytes():
    # 5.5.3.4.1 Figure 10: rows 2, 5, 0, 9 (column 0 here); the four rows one after another;
    # complete_tx of 4 x row bytes (tensors.md: "for gather4: 4 x row bytes")
    m, src, g, tm = gather_setup(box0=32, es=2)
    bar = m.mbarrier(4096).init(1)
    bar.arrive_expect_tx(4 * 64)
    m.cp_async_bulk_tensor_load(tm, (0, 2, 5, 0, 9), 0, bar, load_mode="tile::gather4")
    m.run()
    assert bar.phase == 1
    got = m.cta(0).view(np.uint16, (4, 32))
    assert (got == src[[2, 5, 0, 9], :32]).all()


def test_gather4_out_of_bounds_rows_and_columns_fill():
    # 5.5.3.3 as in tile mode: elements outside the tensor are zero (or OOB-NaN)
    m = pa.Machine(target="sm_100a")
    src = np.arange(10 * 24, dtype=np.float32).reshape(10, 24) + 1
    g = m.register(src)
    tm = pa.TensorMap.tiled("f32", g.address, [24, 10], [96], [16, 1], oob_fill="NAN",
                            target="sm_100a")
    bar = m.mbarrier(4096).init(1)
    m.cp_async_bulk_tensor_load(tm, (16, -1, 3, 10, 2), 0, bar, load_mode="tile::gather4")
    m.run()
    raw = m.cta(0).view(np.uint16, (4, 32))
    nan_words = np.full(32, 0x7FF7, np.uint16)  # observation 3: 0x7FF7 repeated
    assert (raw[0] == nan_words).all() and (raw[2] == nan_words).all()
    got = m.cta(0).view(np.float32, (4, 16))
    assert (got[1, :8] == src[3, 16:24]).all() and (raw[1, 16:] == 0x7FF7).all()
    assert (got[3, :8] == src[2, 16:24]).all()


@settings(max_examples=40, deadline=None)
@given(es=st.sampled_from([1, 2, 4, 8]), swz=st.sampled_from([0, 1, 2, 3, 4, 5, 6]),
       rows=st.integers(1, 20), data=st.data())
def test_gather4_matches_the_reference(es, swz, rows, data):
    span = ref.SPAN[swz]
    max_box = (span // es) if span else 64
    box0 = data.draw(st.sampled_from([b for b in (16 // es, 32 // es, 64 // es, 128 // es)
                                      if 1 <= b <= max_box and b * es >= 16]))
    cols = data.draw(st.integers(1, 4)) * 16 // es * 4
    col = data.draw(st.integers(-2, cols // (16 // es) + 1)) * (16 // es)
    picks = data.draw(st.lists(st.integers(-3, rows + 2), min_size=4, max_size=4))
    dst = data.draw(st.sampled_from([0, 128, 256, 1024, 1536]))
    m, src, g, tm = gather_setup(rows=rows, cols=cols, es=es, box0=box0,
                                 swizzle=pa.Swizzle(swz).name.replace("B128", "128B").replace("B64", "64B").replace("B32", "32B") if swz else "NONE")
    bar = m.mbarrier(8192).init(1)
    bar.arrive_expect_tx(4 * box0 * es)      # the load credits exactly 4 rows
    m.cp_async_bulk_tensor_load(tm, [col] + picks, dst, bar, load_mode="tile::gather4")
    m.run()
    assert bar.phase == 1 and bar.state["tx"] == 0
    want = ref.gather4(src, col, picks, box0).view(np.uint8).reshape(4, box0 * es)
    pitch = max(box0 * es, span)
    assert (ref.read_back(m.smem, 4, box0 * es, dst, pitch, swz) == want).all()


@settings(max_examples=40, deadline=None)
@given(es=st.sampled_from([1, 2, 4]), swz=st.sampled_from([0, 2, 3, 4]), data=st.data())
def test_gather4_loads_of_one_map_match_the_reference(es, swz, data):
    """Many .tile::gather4 loads through one machine (the plan of a map seen
    before takes the map's checks and layout from the last plan): each lands as
    tests/modes_reference.py's gather4 says, a column start that is not 16-byte
    aligned faults (golden observation 1) with nothing queued, and a second map
    in between is planned on its own."""
    rows, cols = 24, 64 // es * 2
    span = ref.SPAN[swz]
    box0 = 32 // es
    name = pa.Swizzle(swz).name.replace("B128", "128B").replace("B64", "64B").replace("B32", "32B") if swz else "NONE"
    m, src, g, tm = gather_setup(rows=rows, cols=cols, es=es, box0=box0, swizzle=name)
    other = pa.TensorMap.tiled(DT[es], g.address, [cols, rows], [cols * es], [box0 * 2, 1], swizzle=name,
                               target="sm_100a")
    bar = m.mbarrier(8192).init(1)
    for _ in range(data.draw(st.integers(1, 8))):
        two = data.draw(st.integers(0, 3)) == 0
        width = box0 * (2 if two else 1)
        col = data.draw(st.integers(-2, cols // width)) * width + data.draw(st.sampled_from([0, 0, 0, 1]))
        picks = data.draw(st.lists(st.integers(-2, rows + 1), min_size=4, max_size=4))
        dst = data.draw(st.sampled_from([0, 1024, 2048]))
        if (col * es) % 16:
            with pytest.raises(pa.IllegalInstruction, match="multiple of 16"):
                m.cp_async_bulk_tensor_load(other if two else tm, [col] + picks, dst, bar,
                                            load_mode="tile::gather4")
            assert m.pending == 0
            continue
        bar.arrive_expect_tx(4 * width * es)
        m.cp_async_bulk_tensor_load(other if two else tm, [col] + picks, dst, bar, load_mode="tile::gather4")
        assert bar.try_wait(bar.phase & 1)
        want = ref.gather4(src, col, picks, width).view(np.uint8).reshape(4, width * es)
        pitch = max(width * es, span)
        assert (ref.read_back(m.smem, 4, width * es, dst, pitch, swz) == want).all(), (col, picks, dst, two)


def test_scatter4_coordinates_non_negative():
    # seed, .global.shared::cta: "Starting co-ordinates for Bounding Box (tensorCoords) must be
    # non-negative"
    m, src, g, tm = gather_setup()
    with pytest.raises(pa.IllegalInstruction, match="row_idx2 = -1 is negative"):
        m.cp_async_bulk_tensor_store(tm, (0, 1, 2, -1, 3), 0, load_mode="tile::scatter4")


def test_scatter4_is_no_reduction_mode():
    # seed cp.reduce.async.bulk.tensor: ".load_mode = { .tile, .im2col_no_offs }"
    m, src, g, tm = gather_setup()
    with pytest.raises(pa.InvalidValue, match="takes no .tile::scatter4"):
        m.cp_reduce_async_bulk_tensor("add", tm, (0, 1, 2, 3, 4), 0, load_mode="tile::scatter4")


def test_gather4_is_no_store_mode():
    m, src, g, tm = gather_setup()
    with pytest.raises(pa.InvalidValue, match="store-direction"):
        m._tensor_store(0, 0, tm, "tile::gather4", (0, 1, 2, 3, 4), 0)


@settings(max_examples=30, deadline=None)
@given(es=st.sampled_from([1, 2, 4]), swz=st.sampled_from([0, 2, 3, 4, 6]), rows=st.integers(1, 12),
       data=st.data())
def test_scatter4_matches_the_reference(es, swz, rows, data):
    span = ref.SPAN[swz]
    box0 = 64 // es if not span or span >= 64 else span // es
    cols = 128 // es
    col = data.draw(st.integers(0, 3)) * (16 // es)
    picks = data.draw(st.lists(st.integers(0, rows + 2), min_size=4, max_size=4))
    name = {0: "NONE", 2: "64B", 3: "128B", 4: "128B_ATOM_32B", 6: "128B_ATOM_64B"}[swz]
    m, src, g, tm = gather_setup(rows=rows, cols=cols, es=es, box0=box0, swizzle=name)
    before = src.copy()
    tile = (np.arange(4 * box0, dtype=np.uint64) * 40503 + 7).astype(NP[es]).reshape(4, box0)
    pitch = max(box0 * es, span)
    ref.place(tile.view(np.uint8).reshape(4, box0 * es), m.smem, 0, pitch, swz)
    m.cp_async_bulk_tensor_store(tm, [col] + picks, 0, load_mode="tile::scatter4")
    m.run()
    assert (src == ref.scatter4(before, tile, col, picks)).all()


# ---- im2col::w / im2col::w::128 ---------------------------------------------------

def wide_map(g, mode="W", dims=(64, 9, 7, 4), es=2, cpp=64, ppc=16, lower=0, upper=0, swizzle="128B",
             estride=1, target="sm_100a", **kw):
    dt = {1: "u8", 2: "f16", 4: "f32"}[es]
    strides = [dims[0] * es]
    for d in dims[1:-1]:
        strides.append(strides[-1] * d)
    esd = [1, estride] + [1] * (len(dims) - 2)
    return pa.TensorMap.im2col_wide(dt, g.address, list(dims), strides, lower, upper, cpp, ppc,
                                    mode=mode, swizzle=swizzle, element_strides=esd, target=target, **kw)


def test_im2col_wide_encoder_rules():
    g_addr = 0x10000

    class G:
        address = g_addr
    # driver: "This API is only supported on devices of compute capability 10.0 or higher."
    with pytest.raises(pa.InvalidValue, match="needs sm_100 or later"):
        wide_map(G, target="sm_90a")
    # driver: swizzle "must be one of ... 64B, 128B, 128B_ATOM_32B"
    for sw in ("NONE", "32B", "128B_ATOM_64B", "128B_ATOM_32B_FLIP_8B"):
        with pytest.raises(pa.InvalidValue, match="only 64B, 128B and 128B_ATOM_32B"):
            wide_map(G, swizzle=sw)
    for sw in ("64B", "128B", "128B_ATOM_32B"):
        wide_map(G, swizzle=sw, cpp=32)
    # PTX 5.5.6: "The interleave layout is not supported for .im2col::w and .im2col::w::128"
    with pytest.raises(pa.InvalidValue, match="no interleave"):
        wide_map(G, interleave="16B")
    # driver: corners "within range [-32768, 32767]" regardless of rank
    wide_map(G, dims=(64, 9, 7, 3, 4), lower=-32768, upper=32767)
    with pytest.raises(pa.InvalidValue, match="outside"):
        wide_map(G, lower=-32769)
    # driver: "pixelsPerColumn ... must be less than or equal to 1024. This field is ignored
    # when mode is CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128."
    with pytest.raises(pa.InvalidValue, match="pixelsPerColumn = 0"):
        wide_map(G, ppc=0)
    assert wide_map(G, mode="W128", ppc=0).pixels_per_column == 128
    # driver: "the bounding box inner dimension ... must be less than or equal to the swizzle size"
    with pytest.raises(pa.InvalidValue, match="swizzle span"):
        wide_map(G, swizzle="64B", cpp=64)
    tm = wide_map(G, mode="W128", lower=-3, upper=2)
    assert tm.kind == "im2col_w128" and tm.pixel_box_lower == [-3] and tm.pixel_box_upper == [2]
    assert pa.TensorMap.from_bytes(bytes(tm)) == tm


def test_im2col_w_info_ranges():
    # seed: "wHalo ... Im2col::w mode : valid range is [0, 512). Im2col::w::128 mode : valid
    # range is [0, 32). Argument wOffset ... valid range of values is [0, 32)."
    m = pa.Machine(target="sm_100a")
    g = m.alloc(64 * 9 * 7 * 4 * 2)
    tw, t128 = wide_map(g), wide_map(g, mode="W128")
    bar = m.mbarrier(200000).init(1)
    m.cp_async_bulk_tensor_load(tw, (0, 0, 0, 0), 0, bar, load_mode="im2col::w", w_halo=511)
    with pytest.raises(pa.InvalidValue, match=r"wHalo = 512 is outside \[0, 512\)"):
        m.cp_async_bulk_tensor_load(tw, (0, 0, 0, 0), 0, bar, load_mode="im2col::w", w_halo=512)
    with pytest.raises(pa.InvalidValue, match=r"wHalo = 32 is outside \[0, 32\)"):
        m.cp_async_bulk_tensor_load(t128, (0, 0, 0, 0), 0, bar, load_mode="im2col::w::128", w_halo=32)
    with pytest.raises(pa.InvalidValue, match=r"wOffset = 32"):
        m.cp_async_bulk_tensor_load(tw, (0, 0, 0, 0), 0, bar, load_mode="im2col::w", w_offset=32)
    # the map's wide mode must match the instruction's
    with pytest.raises(pa.InvalidValue, match="mode W128"):
        m.cp_async_bulk_tensor_load(tw, (0, 0, 0, 0), 0, bar, load_mode="im2col::w::128")


def test_im2col_w_first_element_only_left_of_the_box():
    # 5.5.5.1: "The first element can lie outside of the Bounding Box in the W-dimension only
    # and only on the left side of the Bounding Box."
    m = pa.Machine(target="sm_100a", checks=False)   # the loads share a destination
    g = m.alloc(64 * 9 * 7 * 4 * 2)
    tm = wide_map(g, lower=2, upper=-2)        # box W in [2, 6]
    bar = m.mbarrier(100000).init(1)
    m.cp_async_bulk_tensor_load(tm, (0, 0, 0, 0), 0, bar, load_mode="im2col::w")   # left: fine
    m.cp_async_bulk_tensor_load(tm, (0, 6, 0, 0), 0, bar, load_mode="im2col::w")
    with pytest.raises(pa.IllegalInstruction, match="right of the bounding box"):
        m.cp_async_bulk_tensor_load(tm, (0, 7, 0, 0), 0, bar, load_mode="im2col::w")
    # 5.5.5.4: wOffset moves the box and the start together
    with pytest.raises(pa.IllegalInstruction, match="right of the bounding box"):
        m.cp_async_bulk_tensor_load(tm, (0, 7, 0, 0), 0, bar, load_mode="im2col::w", w_offset=3)


def conv_input(m, dims, es=2):
    c, w, h, n = dims[0], dims[1], dims[2], dims[-1]
    x = (np.arange(n * h * w * c, dtype=np.uint32) % 65521).astype(NP[es]).reshape(n, h, w, c)
    return x, m.register(x)


def load_wide(m, tm, coords, mode, halo=0, off=0, dst=0):
    bar = m.mbarrier(190000).init(1)
    try:
        m.cp_async_bulk_tensor_load(tm, coords, dst, bar, load_mode=mode, w_halo=halo, w_offset=off)
        m.run()
    finally:
        bar.inval()


def test_whalo_example_im2col_w():
    # 5.5.5.3 example: Tensor Size {128, 9, 7, 64}, Pixels-per-column 128, Channels-per-pixel 64,
    # corners 0 / 0, coordinates (7, 2, 3, 0), wHalo 2: "loads 128 pixels and the two halo
    # pixels" "next to the main row pixels". As printed, c = 7 breaks the im2col channel-start
    # rule ("All the constraints and rules of the im2col mode apply", golden observation 6).
    # 128 pixels from rows of 9 with H and D kept (5.5.5): the walk goes on in the next image
    # at the same (h, d), as im2col's walk does past its box (docs/load-modes.md 3).
    m = pa.Machine(target="sm_100a")
    dims = (128, 9, 7, 64)
    x, g = conv_input(m, dims)
    tm = wide_map(g, dims=dims, cpp=64, ppc=128)
    with pytest.raises(pa.IllegalInstruction, match="channel start"):
        load_wide(m, tm, (7, 2, 3, 0), "im2col::w", halo=2)
    m.smem[:] = 0xEE
    load_wide(m, tm, (0, 2, 3, 0), "im2col::w", halo=2)
    rows = ref.read_back(m.smem, 130, 128, 0, 128, 3).view(np.uint16)
    assert (rows == ref.im2col_w(x, 0, 3, 0, 64, 2, 128, 2, 1, 0, 8)).all()
    assert (rows[:7] == x[0, 3, 2:9, :64]).all()           # image 0: W 2..8
    for n in range(1, 14):                                 # images 1..13: W 0..8, row h = 3
        assert (rows[7 + 9 * (n - 1):7 + 9 * n] == x[n, 3, :, :64]).all(), n
    assert (rows[124:128] == x[14, 3, 0:4, :64]).all()     # image 14: W 0..3, 128 pixels in all
    assert (rows[128:130] == x[14, 3, 4:6, :64]).all()     # the halo: W 4, 5 of image 14
    assert m.smem[130 * 128] == 0xEE                       # 130 rows, no more


def test_whalo_example_im2col_w128():
    # 5.5.5.3 second example: "loads 128 elements such that after every 32 elements, wHalo
    # number of elements are loaded" -> 4 x (32 + 2) rows
    m = pa.Machine(target="sm_100a")
    dims = (128, 160, 7, 2)
    x, g = conv_input(m, dims)
    tm = wide_map(g, mode="W128", dims=dims, cpp=64)
    bar = m.mbarrier(190000).init(1)
    bar.arrive_expect_tx(136 * 128)
    m.cp_async_bulk_tensor_load(tm, (0, 2, 3, 0), 0, bar, load_mode="im2col::w::128", w_halo=2)
    m.run()
    assert bar.phase == 1                      # 136 rows of 128 bytes credited
    rows = ref.read_back(m.smem, 136, 128, 0, 128, 3).view(np.uint16)
    assert (rows == ref.im2col_w128(x, 0, 3, 0, 64, 2, 2, 1, 0, 159)).all()
    # group 0: pixels 2..33, halo 34, 35; group 1 starts again at pixel 2 + 32 = 34
    assert (rows[32] == x[0, 3, 34, :64]).all() and (rows[34] == x[0, 3, 34, :64]).all()


@pytest.mark.parametrize("halo,off,stride,lower,upper,W", [
    (1, 0, 2, -1, 0, 9), (0, 1, 2, -1, 0, 9),                    # 5.5.5.4 example 1
    (0, 0, 3, -1, -1, 7), (0, 1, 3, -1, -1, 7), (0, 2, 3, -1, -1, 7)])   # example 2
def test_woffset_examples(halo, off, stride, lower, upper, W):
    # 5.5.5.4: "Bounding Box Lower Corner W += wOffset, Upper Corner W += wOffset, W += wOffset";
    # 5.5.5.2: the W pixels are strided by the traversal stride. Coordinates (7, 2, -1, 0) as
    # printed put H at -1 (a padding row: every pixel filled); c = 7 is taken as 0 (see above),
    # and H = 1 is loaded too so that the buffers hold data.
    m = pa.Machine(target="sm_100a")
    dims = (128, W, 67 if W == 9 else 7, 4)
    x, g = conv_input(m, dims)
    tm = wide_map(g, dims=dims, cpp=64, ppc=128, lower=lower, upper=upper, estride=stride)
    for h in (-1, 1):
        m.smem[:] = 0xEE
        load_wide(m, tm, (0, 2, h, 0), "im2col::w", halo=halo, off=off)
        rows = ref.read_back(m.smem, 128 + halo, 128, 0, 128, 3).view(np.uint16)
        want = ref.im2col_w(x, 0, h, 0, 64, 2 + off, 128, halo, stride, lower + off, W - 1 + upper + off)
        assert (rows == want).all()
        if h == -1:
            assert (rows == 0).all()
        else:     # past image 0 the walk goes on in image 1 from the box's lower W
            first, lo = (W - 1 + upper - 2) // stride + 1, lower + off
            assert (rows[first] == (x[1, h, lo, :64] if lo >= 0 else 0)).all()


@settings(max_examples=40, deadline=None)
@given(mode=st.sampled_from(["im2col::w", "im2col::w::128"]), es=st.sampled_from([1, 2, 4]),
       stride=st.integers(1, 3), data=st.data())
def test_im2col_w_matches_the_convolution_reference(mode, es, stride, data):
    cpp = data.draw(st.sampled_from([c for c in (16, 32, 64) if c * es <= 128]))
    C = cpp * data.draw(st.integers(1, 2))
    W = data.draw(st.integers(1, 40))
    H, N = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    halo = data.draw(st.integers(0, 31 if mode.endswith("128") else 40))
    off = data.draw(st.integers(0, 31))
    ppc = data.draw(st.integers(1, 40))
    lower = data.draw(st.integers(-4, 0))
    w_start = data.draw(st.integers(-6, W - 1)) - off
    w_start = min(w_start, W - 1)
    c0 = data.draw(st.integers(0, C // cpp)) * cpp
    h, n = data.draw(st.integers(-1, H)), data.draw(st.integers(-1, N))
    m = pa.Machine(target="sm_100a")
    dims = (C, W, H, N)
    x, g = conv_input(m, dims, es)
    tm = wide_map(g, mode="W128" if mode.endswith("128") else "W", dims=dims, es=es, cpp=cpp, ppc=ppc,
                  lower=lower, estride=stride)
    m.smem[:] = 0xEE
    load_wide(m, tm, (c0, w_start, h, n), mode, halo=halo, off=off)
    lo, hi = lower + off, W - 1 + off          # the box's W corners (upper 0), moved by wOffset
    if mode == "im2col::w":
        want = ref.im2col_w(x, n, h, c0, cpp, w_start + off, ppc, halo, stride, lo, hi)
    else:
        want = ref.im2col_w128(x, n, h, c0, cpp, w_start + off, halo, stride, lo, hi)
    rows = len(want)
    pitch = max(cpp * es, 128)
    got = ref.read_back(m.smem, rows, cpp * es, 0, pitch, 3).view(NP[es])
    assert (got == want).all()


# ---- cp.async.bulk.prefetch.tensor ---------------------------------------------------

def test_prefetch_moves_nothing_and_records_what_it_reads():
    # seed: "may initiate an asynchronous prefetch of tensor data ... to the L2 cache"
    m = pa.Machine()
    a = np.arange(16 * 64, dtype=np.uint16).reshape(16, 64)
    g = m.register(a)
    tm = pa.TensorMap.tiled("u16", g.address, [64, 16], [128], [32, 4])
    before = m.smem.copy()
    rec = m.cp_async_bulk_prefetch_tensor(tm, (48, 14))
    assert (m.smem == before).all() and m.pending == 0
    # rows 14, 15 in bounds, 16 and 17 not; columns 48..63 in bounds
    assert rec["ranges"] == [(0, g.address + 14 * 128 + 96, 32), (1, g.address + 15 * 128 + 96, 32)]
    assert rec["bytes"] == 64 and m.prefetches == [rec]


def test_prefetch_faults_like_a_load():
    m = pa.Machine()
    g = m.alloc(16 * 128)
    tm = pa.TensorMap.tiled("u16", g.address, [64, 16], [128], [32, 4])
    with pytest.raises(pa.IllegalInstruction, match="multiple of 16"):
        m.cp_async_bulk_prefetch_tensor(tm, (3, 0))
    tm_far = pa.TensorMap.tiled("u16", g.address + (1 << 20), [64, 16], [128], [32, 4])
    with pytest.raises(pa.IllegalAddress):
        m.cp_async_bulk_prefetch_tensor(tm_far, (0, 0))
    assert m.prefetches == []
    with pytest.raises(pa.InvalidValue, match="takes no .im2col_no_offs"):
        m.cp_async_bulk_prefetch_tensor(tm, (0, 0), load_mode="im2col_no_offs")


def test_prefetch_gather4_needs_its_targets():
    # seed prefetch.tensor: ".tile::gather4 is supported on sm_100a, sm_101a, sm_100f ..."
    m, src, g, tm = gather_setup(target="sm_100")
    with pytest.raises(pa.IllegalInstruction, match="prefetch.tensor .tile::gather4 needs"):
        m.cp_async_bulk_prefetch_tensor(tm, (0, 1, 2, 3, 4), load_mode="tile::gather4")
    m2 = pa.Machine(target="sm_100a")
    m2.register(src, address=g.address)
    rec = m2.cp_async_bulk_prefetch_tensor(tm, (0, 1, 2, 99, 4), load_mode="tile::gather4")
    assert [r for r, _, _ in rec["ranges"]] == [0, 1, 3]


def test_prefetch_im2col_modes_record_the_pixels():
    m = pa.Machine(target="sm_100a")
    dims = (64, 9, 7, 4)
    x, g = conv_input(m, dims)
    tm = wide_map(g, dims=dims, ppc=8)
    rec = m.cp_async_bulk_prefetch_tensor(tm, (0, 4, 1, 0), load_mode="im2col::w", w_halo=2)
    # 8 pixels: W = 4..8 of image 0, W = 0..2 of image 1 (row h = 1 in both), then the
    # halo W = 3, 4 of image 1: ten rows, all inside the tensor
    assert [r for r, _, _ in rec["ranges"]] == list(range(10))
    px = lambda n, w: g.address + ((n * 7 + 1) * 9 + w) * 64 * 2
    assert [a for _, a, _ in rec["ranges"]] == [px(0, w) for w in range(4, 9)] + [px(1, w) for w in range(5)]
    im = pa.TensorMap.im2col("f16", g.address, list(dims), [128, 128 * 9, 128 * 63], [-1, -1], [-1, -1], 64, 4)
    rec = m.cp_async_bulk_prefetch_tensor(im, (0, 0, 0, 0), load_mode="im2col", im2col_offsets=(0, 0))
    assert rec["mode"] == "im2col" and len(rec["ranges"]) >= 1


# ---- packed sub-byte types -------------------------------------------------------------

PACKED = {"16U4_ALIGN8B": 13, "16U4_ALIGN16B": 14, "16U6_ALIGN16B": 15}


def packed_tensor(m, dtype, rows, cols, seed=0):
    """A 2D tensor of `cols` values per row, packed into global memory (row pitch a
    multiple of 32 bytes)."""
    bits = ref.BITS[PACKED[dtype]]
    rng = np.random.default_rng(seed)
    vals = rng.integers(0, 1 << bits, size=(rows, cols), dtype=np.uint8)
    row_bytes = cols * bits // 8
    pitch = -(-row_bytes // 32) * 32
    mem = np.zeros(rows * pitch, np.uint8)
    for r in range(rows):
        mem[r * pitch:r * pitch + row_bytes] = ref.pack(vals[r], bits)
    g = m.register(mem)
    return vals, g, pitch


def test_packed_encoder_rules():
    # driver, cuTensorMapEncodeTiled / Im2col / Im2colWide for the packed types
    T = dict(target="sm_100a")
    pa.TensorMap.tiled("16U4_ALIGN8B", 0x1000, [256, 4], [128], [64, 1], **T)
    with pytest.raises(pa.InvalidValue, match="multiple of 16"):     # boxDim[0] * 4 bits = 8 B
        pa.TensorMap.tiled("16U4_ALIGN8B", 0x1000, [256, 4], [128], [16, 1], **T)
    # "globalDim[0] must be a multiple of 2" / "of 128"
    with pytest.raises(pa.InvalidValue, match=r"globalDim\[0\] = 255 .* multiple of 2"):
        pa.TensorMap.tiled("16U4_ALIGN8B", 0x1000, [255, 4], [128], [64, 1], **T)
    with pytest.raises(pa.InvalidValue, match=r"globalDim\[0\] = 192 .* multiple of 128"):
        pa.TensorMap.tiled("16U6_ALIGN16B", 0x1000, [192, 4], [128], [128, 1], **T)
    # "boxDim[0] must be 128" (PTX: Box-Size[0] exactly 96B / 64B)
    with pytest.raises(pa.InvalidValue, match="boxDim.0. = 64: 16U4_ALIGN16B needs 128"):
        pa.TensorMap.tiled("16U4_ALIGN16B", 0x1000, [256, 4], [128], [64, 1], **T)
    # "globalAddress must be 32 byte aligned"; "the strides must be a multiple of 32"
    with pytest.raises(pa.InvalidValue, match="not 32-byte aligned"):
        pa.TensorMap.tiled("16U6_ALIGN16B", 0x1010, [256, 4], [192], [128, 1], **T)
    with pytest.raises(pa.InvalidValue, match="not a multiple of 32"):
        pa.TensorMap.tiled("16U6_ALIGN16B", 0x1000, [256, 4], [208], [128, 1], **T)
    # swizzle lists; NaN fill never for packed types
    with pytest.raises(pa.InvalidValue, match="not supported with 16U6_ALIGN16B"):
        pa.TensorMap.tiled("16U6_ALIGN16B", 0x1000, [256, 4], [192], [128, 1], swizzle="64B", **T)
    pa.TensorMap.tiled("16U6_ALIGN16B", 0x1000, [256, 4], [192], [128, 1], swizzle="128B_ATOM_64B", **T)
    with pytest.raises(pa.InvalidValue, match="floating-point"):
        pa.TensorMap.tiled("16U6_ALIGN16B", 0x1000, [256, 4], [192], [128, 1], oob_fill="NAN", **T)
    # im2col: "channelsPerPixel must be 128"; wide: 128B / 128B_ATOM_32B only
    with pytest.raises(pa.InvalidValue, match="channelsPerPixel = 64"):
        pa.TensorMap.im2col("16U4_ALIGN16B", 0x1000, [128, 4, 4], [64, 256], [0], [0], 64, 4, **T)
    pa.TensorMap.im2col_wide("16U6_ALIGN16B", 0x1000, [128, 4, 4], [96 + 32, 512], 0, 0, 128, 4,
                             swizzle="128B", target="sm_100a")
    with pytest.raises(pa.InvalidValue, match="not supported with 16U6_ALIGN16B"):
        pa.TensorMap.im2col_wide("16U6_ALIGN16B", 0x1000, [128, 4, 4], [128, 512], 0, 0, 128, 4,
                                 swizzle="64B", target="sm_100a")


@settings(max_examples=25, deadline=None)
@given(dtype=st.sampled_from(sorted(PACKED)), data=st.data())
def test_packed_load_is_the_unpack_of_the_packed_words(dtype, data):
    # PTX 5.5.1.1: .b4x16 copied as is; .b4x16_p64 / .b6x16_p32 "copied ... with the append
    # of 64 / 32 bits of padding"; "The padded region that gets added is un-initialized"
    dt = PACKED[dtype]
    padded = dt != 13
    rows = data.draw(st.integers(1, 6))
    cols = 128 * data.draw(st.integers(1, 3))
    m = pa.Machine(target="sm_100a")
    vals, g, pitch = packed_tensor(m, dtype, rows, cols, seed=rows * cols)
    box0 = 128 if padded else data.draw(st.sampled_from([32, 64, 128, 256]))
    box1 = data.draw(st.integers(1, 4))
    sw = data.draw(st.sampled_from(["NONE", "128B", "128B_ATOM_32B"] if padded or box0 <= 256 else ["NONE"]))
    if not padded and sw != "NONE" and box0 > 256:
        sw = "NONE"
    tm = pa.TensorMap.tiled(dtype, g.address, [cols, rows], [pitch], [box0, box1], swizzle=sw,
                            target="sm_100a")
    step = 128 if padded else 32
    c0 = data.draw(st.integers(-1, cols // step)) * step
    r0 = data.draw(st.integers(-1, rows))
    m.smem[:] = 0xAB
    srow = box0 if padded else box0 // 2
    spitch = max(srow, 128 if sw != "NONE" else 0)
    bar = m.mbarrier(65536).init(1)
    bar.arrive_expect_tx(srow * box1)          # the shared box, padding included (docs)
    m.cp_async_bulk_tensor_load(tm, (c0, r0), 0, bar)
    m.run()
    assert bar.phase == 1
    swz = {"NONE": 0, "128B": 3, "128B_ATOM_32B": 4}[sw]
    for j in range(box1):
        r = r0 + j
        want_vals = np.array([vals[r, c0 + k] if 0 <= r < rows and 0 <= c0 + k < cols else 0
                              for k in range(box0)], np.uint8)
        want = ref.packed_smem_row(want_vals, dt)
        got = [int(m.smem[ref.swizzle(j * spitch + b, swz)]) for b in range(srow)]
        assert [w if w is not None else 0xAB for w in want] == got


def test_b6p2x16_store_packs_the_low_six_bits():
    # PTX 5.5.1.1: ".b6p2x16: sixteen elements, each containing 6-bits of data at the LSB and
    # 2-bits of padding at the MSB, are copied ... by discarding the 2-bits of padding data and
    # packing the 6-bits data contiguously"
    m = pa.Machine(target="sm_100a")
    vals, g, pitch = packed_tensor(m, "16U6_ALIGN16B", 3, 256)
    before = g.bytes.copy()
    tm = pa.TensorMap.tiled("16U6_ALIGN16B", g.address, [256, 3], [pitch], [128, 2], swizzle="128B",
                            target="sm_100a")
    rng = np.random.default_rng(5)
    shared = rng.integers(0, 256, size=(2, 128), dtype=np.uint8)   # pad bits set at random
    ref.place(shared, m.smem, 0, 128, 3)
    m.cp_async_bulk_tensor_store(tm, (128, 1), 0)
    m.run()
    after = g.bytes
    for j, r in enumerate((1, 2)):
        got = ref.unpack(after[r * pitch + 96:r * pitch + 192], 6, 128)
        assert (got == shared[j] & 63).all()
    assert (after[:pitch] == before[:pitch]).all()             # row 0 untouched
    assert (after[pitch:pitch + 96] == before[pitch:pitch + 96]).all()


def test_packed_copy_restrictions():
    m = pa.Machine(target="sm_100a")
    vals, g, pitch = packed_tensor(m, "16U4_ALIGN16B", 2, 256)
    tm = pa.TensorMap.tiled("16U4_ALIGN16B", g.address, [256, 2], [pitch], [128, 1], target="sm_100a")
    bar = m.mbarrier(8192).init(1)
    # restriction 7: "the first coordinate ... must be a multiple of 128"
    with pytest.raises(pa.IllegalInstruction, match="not a multiple of 128"):
        m.cp_async_bulk_tensor_load(tm, (64, 0), 0, bar)
    # restriction 2: the store direction "doesn't support the type .b4x16_p64"
    with pytest.raises(pa.IllegalInstruction, match="b4x16_p64"):
        m.cp_async_bulk_tensor_store(tm, (0, 0), 0)
    # restriction 1: "cp.reduce.async.bulk doesn't support the types ..."
    with pytest.raises(pa.IllegalInstruction, match="does not support the sub-byte type"):
        m.cp_reduce_async_bulk_tensor("add", tm, (0, 0), 0)
    # restriction 3 / sm_120a: loads to .shared::cluster take no sub-byte type
    m120 = pa.Machine(target="sm_120a")
    m120.register(g.bytes, address=g.address)
    b120 = m120.mbarrier(8192).init(1)
    m120.cp_async_bulk_tensor_load(tm, (0, 0), 0, b120)
    with pytest.raises(pa.IllegalInstruction, match="packed 16U4/16U6 type on a load to .shared::cluster"):
        m120.cp_async_bulk_tensor_load(tm, (0, 0), 0, b120, dst_space="shared::cluster")
    # driver: 16U6_ALIGN16B with 128B_ATOM_64B is "Store only"
    v6, g6, p6 = packed_tensor(m, "16U6_ALIGN16B", 2, 128)
    t6 = pa.TensorMap.tiled("16U6_ALIGN16B", g6.address, [128, 2], [p6], [128, 1],
                            swizzle="128B_ATOM_64B", target="sm_100a")
    with pytest.raises(pa.IllegalInstruction, match="stores only"):
        m.cp_async_bulk_tensor_load(t6, (0, 0), 0, bar)
    m.cp_async_bulk_tensor_store(t6, (0, 0), 0)


def test_packed_prefetch_names_the_packed_bytes():
    m = pa.Machine(target="sm_100a")
    vals, g, pitch = packed_tensor(m, "16U6_ALIGN16B", 2, 256)
    tm = pa.TensorMap.tiled("16U6_ALIGN16B", g.address, [256, 2], [pitch], [128, 2], target="sm_100a")
    rec = m.cp_async_bulk_prefetch_tensor(tm, (128, 1))
    assert rec["ranges"] == [(0, g.address + pitch + 96, 96)]


# ---- .cta_group ------------------------------------------------------------------------

def cluster_setup(target="sm_100a", ctas=2):
    m = pa.Machine(ctas=ctas, target=target)
    a = np.arange(8 * 64, dtype=np.uint8).reshape(8, 64)
    g = m.register(a)
    tm = pa.TensorMap.tiled("u8", g.address, [64, 8], [64], [32, 2])
    bars = [m.mbarrier(4096, cta=r).init(1) for r in range(ctas)]
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    return m, tm, bars


def test_cta_group_needs_its_targets():
    # seed: "Qualifier .cta_group is supported on sm_100a, sm_101a ..., sm_100f / sm_110f families"
    m, tm, bars = cluster_setup(target="sm_90a")
    with pytest.raises(pa.IllegalInstruction, match=r".cta_group needs sm_100a/f"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), m.cta(0).addr(0), bars[0], cta_group=1)


def test_cta_group_2_signals_the_peer_cta():
    # seed: ".cta_group::2 ... the mbarrier object mbar can be in shared memory of either the
    # same CTA as the shared memory destination dstMem or in its peer-CTA"
    m, tm, bars = cluster_setup()
    m.cp_async_bulk_tensor_load(tm, (0, 0), m.cta(0).addr(0), bars[1].addr, cta_group=2)
    m.run()
    assert bars[1].state["tx"] == -64 and bars[0].state["tx"] == 0   # credited, not expected
    assert (m.cta(0).view(np.uint8, (2, 32)) == np.arange(8 * 64).reshape(8, 64)[:2, :32]).all()
    # .cta_group::1: "must be in the shared memory of the same CTA as ... dstMem"
    with pytest.raises(pa.Hazard, match="neither the destination CTA 0"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), m.cta(0).addr(0), bars[1].addr, cta_group=1)


def test_cta_group_2_multicast_signals_by_parity():
    # seed: "For each destination CTA specified in the ctaMask, the mbarrier signal is sent
    # either to the destination CTA or its peer-CTA based on CTAs %cluster_ctarank parity of
    # shared memory where the mbarrier object mbar resides."
    m, tm, bars = cluster_setup(ctas=4)
    m.cp_async_bulk_tensor_load(tm, (0, 0), m.cta(0).addr(0), bars[1].addr, cta_mask=0b0111,
                                cta_group=2)
    m.run()
    tx = [b.state["tx"] for b in bars]
    # CTAs 0, 1 -> CTA 1 (odd); CTA 2 -> CTA 3; CTA 0 and 2 get nothing
    assert tx[0] == 0 and tx[2] == 0
    assert tx[1] == -128 and tx[3] == -64


# ---- tensormap.replace on the sm_100 targets --------------------------------------------

def test_replace_swizzle_atomicity_and_subbyte_elemtype_by_target():
    # seed tensormap.replace: ".swizzle_atomicity is supported on sm_100a, sm_101a, sm_120a ..."
    # and ".elemtype corresponding to new_val values 13, 14 and 15" on the same targets
    tm = pa.TensorMap.tiled("u8", 0x1000, [256, 4], [256], [128, 2], swizzle="128B")
    with pytest.raises(pa.InvalidValue, match="swizzle_atomicity is not supported on sm_90a"):
        tm.replace("swizzle_atomicity", 1)
    tm.replace("swizzle_atomicity", 1, target="sm_100a")
    assert tm.swizzle == pa.Swizzle.B128_ATOM_32B
    assert tm == pa.TensorMap.tiled("u8", 0x1000, [256, 4], [256], [128, 2], swizzle="128B_ATOM_32B",
                                    target="sm_100a")
    tm.replace("swizzle_atomicity", 3, target="sm_100a")
    assert tm.swizzle == pa.Swizzle.B128_ATOM_64B
    with pytest.raises(pa.InvalidValue, match="outside 0..3"):
        tm.replace("swizzle_atomicity", 4, target="sm_100a")
    with pytest.raises(pa.InvalidValue, match="13..15 need sm_100a"):
        tm.replace("elemtype", 13)
    tm.replace("elemtype", 13, target="sm_100f")
    assert tm.dtype == pa.DataType(13)
    # tensormap.replace itself: not on the baseline targets
    with pytest.raises(pa.InvalidValue, match="tensormap.replace needs sm_90a"):
        tm.replace("box_dim", 64, target="sm_100")


def test_box_layout_of_the_new_maps():
    # im2col-wide: channelsPerPixel x pixelsPerColumn (128 for W128), halo not included
    tm = pa.TensorMap.im2col_wide("f16", 0x1000, [64, 9, 7, 4], [128, 1152, 8064], -1, 0, 64, 16,
                                  swizzle="128B", target="sm_100a")
    lay = tm.box_layout
    assert lay["rows"] == 16 and lay["row_bytes"] == 128 and lay["tx_bytes"] == 16 * 128
    assert pa.TensorMap.im2col_wide("f16", 0x1000, [64, 9, 7, 4], [128, 1152, 8064], -1, 0, 64,
                                    mode="W128", target="sm_100a").box_bytes == 128 * 128
    # packed: the shared bytes (a 16-byte slot per 16 values of the padded types)
    p = pa.TensorMap.tiled("16U6_ALIGN16B", 0x1000, [256, 4], [192], [128, 2], target="sm_100a")
    assert p.box_layout["row_bytes"] == 128 and p.box_bytes == 256
    q = pa.TensorMap.tiled("16U4_ALIGN8B", 0x1000, [256, 4], [128], [64, 2], target="sm_100a")
    assert q.box_layout["row_bytes"] == 32 and q.box_bytes == 64


def test_binding_arguments_are_checked():
    m, src, g, tm = gather_setup()
    with pytest.raises(OverflowError, match="dst"):
        m.cp_async_bulk_tensor_load(tm, (0, 1, 2, 3, 4), -16, 1024, load_mode="tile::gather4")
    with pytest.raises(OverflowError, match="does not fit in .u16"):
        wm = wide_map(type("G", (), {"address": g.address}))
        m.cp_async_bulk_tensor_load(wm, (0, 0, 0, 0), 0, 1024, load_mode="im2col::w", w_halo=1 << 16)
    # one rule, in the core (copy/modes.c): InvalidValue, a ValueError
    with pytest.raises(pa.InvalidValue, match=r"takes no \.tile::scatter4 mode \(the load-direction modes"):
        m.cp_async_bulk_tensor_load(tm, (0, 1, 2, 3, 4), 0, 1024, load_mode="tile::scatter4")


@settings(max_examples=40, deadline=None)
@given(es=st.sampled_from([1, 2, 4]), data=st.data())
def test_prefetch_names_exactly_the_in_bounds_bytes(es, data):
    # a prefetch moves nothing; what it names is what a tile load would read: the in-bounds
    # elements of the box (counted here per dimension, independently of the walk)
    dims = [data.draw(st.integers(1, 6)) * 16 // es, data.draw(st.integers(1, 9)), data.draw(st.integers(1, 4))]
    box = [16 // es * data.draw(st.integers(1, 4)), data.draw(st.integers(1, 5)), data.draw(st.integers(1, 3))]
    estr = [1, data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))]
    coords = [16 // es * data.draw(st.integers(-3, 6)), data.draw(st.integers(-5, 10)),
              data.draw(st.integers(-3, 5))]
    m = pa.Machine()
    nbytes = dims[0] * es * dims[1] * dims[2]
    g = m.alloc(nbytes)
    tm = pa.TensorMap.tiled(DT[es], g.address, dims, [dims[0] * es, dims[0] * es * dims[1]], box,
                            element_strides=estr)
    rec = m.cp_async_bulk_prefetch_tensor(tm, coords)
    want = es
    for i in range(3):
        n = -(-box[i] // estr[i]) if i else box[0]
        step = estr[i] if i else 1
        want *= sum(1 for k in range(n) if 0 <= coords[i] + k * step < dims[i])
    assert rec["bytes"] == want
    assert all(g.address <= a and a + n <= g.address + nbytes for _, a, n in rec["ranges"])
    assert m.pending == 0


def test_packed_map_from_edited_bytes_is_refused_not_moved():
    # a map the driver would not encode (here: boxDim[0] edited to 64 on a 16U6 map) is refused
    # at issue instead of being walked with a zero-width equivalent box
    m = pa.Machine(target="sm_100a")
    vals, g, pitch = packed_tensor(m, "16U6_ALIGN16B", 2, 256)
    tm = pa.TensorMap.tiled("16U6_ALIGN16B", g.address, [256, 2], [pitch], [128, 1], target="sm_100a")
    tm.replace("box_dim", 3, ord=0)
    with pytest.raises(pa.InvalidValue, match="driver would not encode"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), 0, m.mbarrier(4096).init(1))


# ---- edited maps (tensormap.replace): the copy applies the rules the encoder did ---------

def _packed_map(m, dtype="16U6_ALIGN16B", swizzle="128B"):
    vals, g, pitch = packed_tensor(m, dtype, 4, 128)
    return pa.TensorMap.tiled(dtype, g.address, [128, 4], [pitch], [128, 1], swizzle=swizzle,
                              target="sm_100a")


@pytest.mark.parametrize("dtype", ["16U4_ALIGN16B", "16U6_ALIGN16B"])
@pytest.mark.parametrize("edit,name", [({"swizzle_mode": 1}, "32B"),
                                       ({"swizzle_atomicity": 2}, "128B_ATOM_32B_FLIP_8B")])
def test_packed_copy_refuses_an_edited_swizzle(dtype, edit, name):
    # seed 9.7.9.25.5.1 restriction 9: .b4x16_p64 / .b6x16_p32 / .b6p2x16 support swizzle
    # "None" and "128B (With all potential swizzle atomicity values except: 32B with 8B flip)"
    m = pa.Machine(target="sm_100a")
    tm = _packed_map(m, dtype)
    bar = m.mbarrier(60000).init(1)
    bar.arrive_expect_tx(tm.box_layout["tx_bytes"])
    m.cp_async_bulk_tensor_load(tm, (0, 0), 0, bar)      # as encoded: fine
    m.run()
    (field, value), = edit.items()
    tm.replace(field, value, target="sm_100a")
    assert tm.fields["swizzle"] == pa.enums.parse(pa.Swizzle, name)
    with pytest.raises(pa.IllegalInstruction, match=f"not {name} .PTX tensor copy restriction 9"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), 1024, bar)
    assert m.pending == 0


def test_packed_copy_refuses_an_edited_nan_fill():
    # restriction 4: "OOB-NaN fill mode doesn't support the types .b4x16, .b4x16_p64,
    # .b6x16_p32 and .b6p2x16"; the encoder refuses it, an edited map is refused at the copy
    m = pa.Machine(target="sm_100a")
    for dtype in ("16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B"):
        tm = _packed_map(m, dtype, swizzle="NONE").replace("fill_mode", 1)
        assert tm.fields["oob_fill"] == pa.OOBFill.NAN_REQUEST_ZERO_FMA
        bar = m.mbarrier(60000).init(1)
        with pytest.raises(pa.IllegalInstruction, match="OOB-NaN fill.*restriction 4"):
            m.cp_async_bulk_tensor_load(tm, (0, 0), 0, bar)
        bar.inval()


def test_im2col_w_refuses_an_edited_interleaved_map():
    # PTX 5.5.6: "The interleave layout is not supported for .im2col::w and .im2col::w::128
    # modes"; cuTensorMapEncodeIm2colWide refuses it, tensormap.replace can write it
    m = pa.Machine(target="sm_100a")
    g = m.alloc(64 * 9 * 7 * 4 * 2)
    for mode, map_mode in (("im2col::w", "W"), ("im2col::w::128", "W128")):
        tm = wide_map(g, mode=map_mode)
        tm.replace("interleave_layout", 2)
        assert tm.fields["interleave"] == pa.Interleave.B32
        bar = m.mbarrier(100000).init(1)
        with pytest.raises(pa.IllegalInstruction, match=r"interleaved map .*PTX ISA 5\.5\.6"):
            m.cp_async_bulk_tensor_load(tm, (0, 0, 0, 0), 0, bar, load_mode=mode)
        bar.inval()
        assert m.pending == 0


def test_padded_type_alignment_error_names_the_type():
    # driver: 16U6_ALIGN16B / 16U4_ALIGN16B need a 32-byte aligned address and strides; the
    # error says why 32 (the type), not INTERLEAVE_32B, which the map does not use
    T = dict(target="sm_100a")
    with pytest.raises(pa.InvalidValue, match=r"0x10010 is not 32-byte aligned \(16U6_ALIGN16B\)$"):
        pa.TensorMap.tiled("16U6_ALIGN16B", 0x10010, [256, 4], [192], [128, 1], **T)
    with pytest.raises(pa.InvalidValue, match=r"= 208 is not a multiple of 32 \(16U4_ALIGN16B\)$"):
        pa.TensorMap.tiled("16U4_ALIGN16B", 0x10000, [256, 4], [208], [128, 1], **T)
    with pytest.raises(pa.InvalidValue, match=r"not 32-byte aligned \(INTERLEAVE_32B\)$"):
        pa.TensorMap.tiled("f16", 0x10010, [16, 4, 4], [32, 128], [16, 4, 4], interleave="32B",
                           swizzle="32B")
