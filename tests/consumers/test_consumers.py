"""Consumer views, one test per rule of tests/data/README.md ("Shared-memory read
families" W1-W8, L1-L2; "TMA load consumed by wgmma" T3-T4; "Shared-memory bank
conflicts" K1-K4) and per descriptor field. Expected values are the recorded
hardware's (read_addr, wavefronts) or worked out by hand from the rule text;
property tests compare with tests/consumers_reference.py."""
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxasync as pa
from ptxasync.consumers import (SmemProducer, TmaProducer, WgmmaDescriptor, bank_conflicts, check_wgmma,
                                compare_swizzles, descriptor_for_tile, fit_descriptor, ldmatrix,
                                ldmatrix_fragments, ldmatrix_map, stmatrix, tile_access_addresses)

import consumers_reference as ref

import testpaths  # noqa: E402
DATA = Path(testpaths.DATA)


def _cases(family):
    with gzip.open(DATA / f"{family}.jsonl.gz", "rt", encoding="utf-8") as f:
        return [c for c in map(json.loads, f) if c.get("family") == family]


WGMMA = _cases("wgmma_smem_read")


def _recorded_addresses(case):
    p = case["params"]
    d = WgmmaDescriptor.from_value(int(case["desc_hex"], 16))
    return d.addresses(p["operand"], p["N"], p["major"]), np.array(case["read_addr"])


# --- descriptor fields ---------------------------------------------------------------
def test_field_start_bits_0_13():
    """Bits 0-13 = (start & 0x3FFFF) >> 4 (harness description of the descriptor)."""
    assert WgmmaDescriptor.from_fields(0x3FFF0, 0, 0).value == 0x3FFF
    assert WgmmaDescriptor.from_value(0x0040).start == 1024
    with pytest.raises(pa.InvalidValue, match="start"):
        WgmmaDescriptor.from_fields(1 << 18, 16, 16)
    with pytest.raises(pa.InvalidValue, match="start"):
        WgmmaDescriptor.from_fields(1032, 16, 16)


def test_field_lbo_bits_16_29():
    assert WgmmaDescriptor.from_fields(0, 128, 0).value == 8 << 16
    with pytest.raises(pa.InvalidValue, match="LBO"):
        WgmmaDescriptor.from_fields(0, 24, 0)


def test_field_sbo_bits_32_45():
    assert WgmmaDescriptor.from_fields(0, 0, 256).value == 16 << 32
    assert WgmmaDescriptor.from_value(0x3FFF << 32).sbo == 262128      # the W7 probe's field
    with pytest.raises(pa.InvalidValue, match="SBO"):
        WgmmaDescriptor.from_fields(0, 0, 1 << 18)


def test_field_base_offset_bits_49_51():
    assert WgmmaDescriptor.from_fields(0, 0, 0, base_offset=7).value == 7 << 49
    with pytest.raises(pa.InvalidValue, match="base offset"):
        WgmmaDescriptor.from_fields(0, 0, 0, base_offset=8)


def test_field_swizzle_bits_62_63():
    """0 none, 1 128B, 2 64B, 3 32B (the harness's field values)."""
    for name, v in (("none", 0), ("128B", 1), ("64B", 2), ("32B", 3)):
        d = WgmmaDescriptor.from_fields(0, 16, 0, swizzle=name)
        assert d.value >> 62 == v and WgmmaDescriptor.from_value(d.value).swizzle_name == name
    assert WgmmaDescriptor.from_fields(0, 16, 0, swizzle=pa.Swizzle.B64).swizzle == 64
    with pytest.raises(ValueError):
        WgmmaDescriptor.from_fields(0, 16, 0, swizzle="256B")


def test_recorded_descriptors_round_trip():
    """Every recorded desc_hex decodes to the harness's fields and re-encodes to itself."""
    for c in WGMMA:
        if c.get("error"):
            continue
        p = c["params"]
        d = WgmmaDescriptor.from_value(int(c["desc_hex"], 16))
        assert (d.start, d.lbo, d.sbo, d.base_offset, d.swizzle_name) == (
            c["start_addr"], p["lbo_bytes"], p["sbo_bytes"], p["base_offset"], p["swizzle"])
        assert d.value == int(c["desc_hex"], 16)


def test_w6_unknown_bits_are_named_and_inert():
    """W6: bits 14-15, 30-31, 46-47, 52-61 set: no effect. Bit 48 was never set."""
    case = next(c for c in WGMMA if c["params"]["category"] == "probe_unused_bits")
    d = WgmmaDescriptor.from_value(int(case["desc_hex"], 16))
    assert {b for b, _ in d.unknown_bits} == {14, 15, 30, 31, 46, 47, *range(52, 62)}
    assert all("W6" in note for _, note in d.unknown_bits)
    got, want = _recorded_addresses(case)
    assert np.array_equal(got, want)
    assert "never set" in dict(WgmmaDescriptor.from_value(1 << 48).unknown_bits)[48]
    assert "bit 48" in WgmmaDescriptor.from_value(1 << 48).explain("B", 8)


# --- W1-W5: the element -> address rule ---------------------------------------------------
def test_w1_hand_check():
    """W1: start + (i%8)*16 + (i/8)*256 + (k%8)*2 + (k/8)*128 for LBO 128, SBO 256."""
    case = next(c for c in WGMMA if c["params"]["category"] == "hand_check")
    got, want = _recorded_addresses(case)
    assert np.array_equal(got, want)
    assert got[1, 8] == 1024 + 16 + 128


@pytest.mark.parametrize("major", ["K", "MN"])
@pytest.mark.parametrize("swizzle", ["none", "32B", "64B", "128B"])
def test_w2_every_row_of_the_table(major, swizzle):
    """W2: every completed case of this (major, swizzle) reads where the rule says."""
    cases = [c for c in WGMMA if not c.get("error") and c["params"]["major"] == major
             and c["params"]["swizzle"] == swizzle]
    assert cases
    for c in cases:
        got, want = _recorded_addresses(c)
        assert np.array_equal(got, want), c["id"]


def test_w3_lbo_unused_k_major_swizzled():
    """W3: K-major with a swizzle ignores LBO."""
    d = WgmmaDescriptor.from_fields(2048, 16, 1024, swizzle="128B")
    assert np.array_equal(d.addresses("B", 64), d.replace(lbo=8192).addresses("B", 64))
    cases = [c for c in WGMMA if c["params"]["category"] == "alt_strides" and c["params"]["major"] == "K"
             and c["params"]["swizzle"] != "none"]
    for c in cases:
        got, want = _recorded_addresses(c)
        assert np.array_equal(got, want)


def test_w4_absolute_address_xor():
    """W4: starts not aligned to the repeat follow the absolute XOR; the XOR of the
    offset from the start does not."""
    cases = [c for c in WGMMA if c["params"]["category"] == "start_misaligned"
             and c["params"]["swizzle"] != "none"]
    assert len(cases) >= 5
    for c in cases:
        got, want = _recorded_addresses(c)
        assert np.array_equal(got, want)
        p = c["params"]
        d = WgmmaDescriptor.from_value(int(c["desc_hex"], 16))
        # the offset-relative alternative: move the start to 0 and add it back afterwards
        rel = d.replace(start=0).addresses(p["operand"], p["N"], p["major"]) + d.start
        assert not np.array_equal(rel, want)


def test_w5_base_offset_subtracted():
    """W5: ((a >> 7) - base_offset) & msk. base_offset = (start >> 7) & 7 with a
    128-aligned start is the XOR of the offset from the start."""
    for c in WGMMA:
        if c["params"]["base_offset"] and not c.get("error"):
            got, want = _recorded_addresses(c)
            assert np.array_equal(got, want), c["id"]
    d = WgmmaDescriptor.from_fields(1024 + 384, 16, 1024, base_offset=3, swizzle="128B")
    rel = WgmmaDescriptor.from_fields(0, 16, 1024, swizzle="128B").addresses("B", 16) + 1024 + 384
    assert np.array_equal(d.addresses("B", 16), rel)


def test_operand_a_and_b_share_the_rule():
    """W2 holds for operand A (M = 64 rows) as for B."""
    cases = [c for c in WGMMA if c["params"]["operand"] == "A" and not c.get("error")]
    assert len(cases) > 10
    for c in cases:
        got, want = _recorded_addresses(c)
        assert got.shape == (64, 16) and np.array_equal(got, want)


def test_read_returns_the_operand():
    """read(): the f16 values at the rule's addresses (fill code 0x8400 + a/2)."""
    m = pa.Machine(smem_bytes=8192)
    a = np.arange(0, 8192, 2)
    m.smem.view(np.uint16)[:] = 0x8400 + a // 2
    d = WgmmaDescriptor.from_fields(1024, 128, 256)
    op = d.read(m, "B", 16)
    assert op.dtype == np.float16 and op.shape == (16, 16)
    assert np.array_equal(op.view(np.uint16), 0x8400 + d.addresses("B", 16) // 2)
    assert d.read(m.smem, "B", 16, raw=True).dtype == np.uint16


# --- W7 ---------------------------------------------------------------------------------
def test_w7_reading_past_shared_memory_faults():
    """W7: start 59264 with 59392 bytes of shared memory, N = 16; and SBO field 0x3FFF."""
    m = pa.Machine(smem_bytes=59392)
    with pytest.raises(pa.IllegalAddress, match="W7"):
        WgmmaDescriptor.from_fields(59264, 128, 256).read(m, "B", 16)
    with pytest.raises(pa.IllegalAddress):
        WgmmaDescriptor.from_value(0x3FFF << 32 | 8 << 16 | 0x40).read(m, "B", 64)
    WgmmaDescriptor.from_fields(59136, 128, 256).read(m, "B", 8)   # last element ends at 59392: no fault


# --- element types (derived from the ISA) -----------------------------------------------
def test_types_share_the_core_matrix_geometry():
    """tf32 (K = 8), e4m3 / s8 (K = 32): 32 bytes of K per instruction, same layout in bytes."""
    d = WgmmaDescriptor.from_fields(0, 128, 256)
    f16 = d.addresses("B", 8, dtype="f16")
    assert d.addresses("B", 8, dtype="tf32").shape == (8, 8)
    assert np.array_equal(d.addresses("B", 8, dtype="tf32"), f16[:, ::2])
    assert np.array_equal(d.addresses("B", 8, dtype="e4m3")[:, ::2], f16)
    with pytest.raises(pa.InvalidValue, match="f16"):
        d.addresses("B", 8, major="MN", dtype="tf32")
    with pytest.raises(pa.InvalidValue, match="N = 40"):
        d.addresses("B", 40, dtype="s8")
    assert "derived" in d.explain("B", 8, dtype="e5m2")


# --- W8 and the check ---------------------------------------------------------------------
def _tile(swizzle, dst, rows=64, box_cols=64, machine=None):
    m = machine or pa.Machine(smem_bytes=64 * 1024)
    g = (np.arange(rows * 128, dtype=np.uint16) + 0x0400).reshape(rows, 128)
    buf = m.register(g)
    tm = pa.TensorMap.tiled("FLOAT16", buf.address, [128, rows], [256], [box_cols, rows], swizzle=swizzle)
    return m, tm


@pytest.mark.parametrize("dst", [4096, 4096 + 384, 4096 + 640])
@pytest.mark.parametrize("sw,cols", [("128B", 64), ("64B", 32), ("32B", 16)])
def test_w8_descriptor_for_a_tile(sw, cols, dst):
    """W8: K-major, the map's swizzle S, SBO 8*S, base offset 0, start dst + 32 j,
    whatever dst mod 1024 is; and it reads every element as loaded (T3)."""
    m, tm = _tile(sw, dst, box_cols=cols)
    S = cols * 2
    for j in range(cols // 16):
        d = descriptor_for_tile(tm, dst, j)
        assert (d.swizzle, d.sbo, d.base_offset, d.start) == (S, 8 * S, 0, dst + 32 * j)
        rep = check_wgmma(d, TmaProducer(tm, [((0, 0), dst)]), "B", 64, k_slice=j)
        assert rep.ok, str(rep)


def test_w8_no_descriptor_for_dense_rows():
    """T4 mismatch_dense_rows: a no-swizzle box 16 elements wide (32-byte rows)."""
    m, tm = _tile("none", 4096, box_cols=16)
    with pytest.raises(ValueError, match="dense rows"):
        descriptor_for_tile(tm, 4096)
    m, tm = _tile("none", 4096, box_cols=8)
    with pytest.raises(ValueError, match="k-slice 0 needs"):
        descriptor_for_tile(tm, 4096)
    # two loads of 8 columns: LBO = 16 * rows (the golden's matched form)
    d = descriptor_for_tile(tm, 4096, loads=[((0, 0), 4096), ((8, 0), 4096 + 16 * 64)])
    assert (d.swizzle, d.lbo, d.sbo) == (0, 1024, 128)


def _loaded(sw, dst, box_cols):
    m, tm = _tile(sw, dst, box_cols=box_cols)
    bar = m.mbarrier(0).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    m.cp_async_bulk_tensor_load(tm, [0, 0], dst, bar)
    bar.wait(0)
    return m, tm


def test_check_names_the_wrong_swizzle_and_suggests_one():
    """T4 mismatch_swizzle: a 128B tile read as 64B; the suggestion reads it right."""
    m, tm = _loaded("128B", 4096 + 128, 64)
    prod = TmaProducer(tm, [((0, 0), 4096 + 128)])
    bad = WgmmaDescriptor.from_fields(4096 + 128, 16, 512, swizzle="64B")
    rep = check_wgmma(bad, prod, "B", 64)
    assert not rep.ok and rep.causes[0] == "swizzle" and rep.mismatched > 0
    assert "use swizzle 128B" in str(rep) and "SBO 1024" in str(rep) and "base offset 0" in str(rep)
    first = rep.mismatches[0]
    assert first["holds"][0] in ("tile", "fill", "oob")
    good = rep.suggestion
    assert check_wgmma(good, prod, "B", 64).ok
    # and the model's shared memory agrees: the suggested read returns the tile's rows
    op = good.read(m, "B", 64).view(np.uint16)
    assert np.array_equal(op, (0x0400 + np.arange(64)[:, None] * 128 + np.arange(16)[None, :]).astype(np.uint16))


def test_check_base_offset_and_formula():
    """T4 mismatch_base_offset(_formula): a TMA tile needs base offset 0 (T3)."""
    dst = 4096 + 640
    m, tm = _loaded("128B", dst, 64)
    prod = TmaProducer(tm, [((0, 0), dst)])
    d = WgmmaDescriptor.from_fields(dst, 16, 1024, base_offset=(dst >> 7) & 7, swizzle="128B")
    rep = check_wgmma(d, prod, "B", 64)
    assert rep.causes == ["base_offset"] and "(start >> 7) & 7" in rep.explanation[0]
    assert rep.suggestion.base_offset == 0


def test_check_swapped_and_major():
    """T4 mismatch_lbo_sbo_swapped and mismatch_major."""
    dst = 4096
    m, tm = _loaded("none", dst, 8)
    bar = m.mbarrier(8).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    m.cp_async_bulk_tensor_load(tm, [8, 0], dst + 16 * 64, bar)
    bar.wait(0)
    prod = TmaProducer(tm, [((0, 0), dst), ((8, 0), dst + 16 * 64)])
    right = WgmmaDescriptor.from_fields(dst, 1024, 128)
    assert check_wgmma(right, prod, "B", 64).ok
    rep = check_wgmma(WgmmaDescriptor.from_fields(dst, 128, 1024), prod, "B", 64)
    assert rep.causes == ["lbo_sbo_swapped"] and rep.suggestion == right
    rep = check_wgmma(right, prod, "B", 64, major="MN", tile_major="K")
    assert rep.causes[0] == "major" and rep.suggested_major == "K"


def test_check_base_not_aligned_from_user_layout():
    """A tile swizzled (128B) relative to its own base 1024 + 384, described by the
    user: only base offset 3 reads it (W5), and the check says why (W4)."""
    base = 1024 + 384
    holds = {}
    for i in range(16):
        for k in range(16):
            off = i * 128 + 2 * k
            holds[(i, k)] = base + (off ^ (((off >> 7) & 7) << 4))
    prod = SmemProducer(holds)
    intended = [[(i, k) for k in range(16)] for i in range(16)]
    d = WgmmaDescriptor.from_fields(base, 16, 1024, swizzle="128B")
    rep = check_wgmma(d, prod, "B", 16, intended=intended)
    assert rep.causes == ["base_not_aligned"] and rep.suggestion.base_offset == 3
    assert check_wgmma(rep.suggestion, prod, "B", 16, intended=intended).ok


def test_fit_descriptor_inverts_the_rule():
    d = WgmmaDescriptor.from_fields(2048 + 256, 2048, 1024, swizzle="128B")
    fits = fit_descriptor(d.addresses("B", 128, "MN"), like=d)
    assert fits[0] == (d, "MN")


# --- L1, L2, stmatrix ----------------------------------------------------------------------
def test_l1_recorded_fragments():
    """L1: every regular ldmatrix case's halves come from the rule's addresses."""
    for c in _cases("ldmatrix_read"):
        if c.get("error"):
            continue
        p = c["params"]
        addrs = [c["region_addr"] + o for o in p["thread_addr_offsets"]]
        got = ldmatrix_map(addrs, p["num_matrices"], p["trans"])
        assert np.array_equal(got, np.array(c["read_addr"])), c["id"]


def test_l2_alignment():
    """L2: a used row at 8 mod 16 faults; unused threads' addresses are ignored."""
    addrs = [1024 + 16 * t for t in range(32)]
    addrs[3] += 8
    with pytest.raises(pa.MisalignedAddress, match="thread 3"):
        ldmatrix_map(addrs, 4)
    addrs[3] -= 8
    addrs[20] += 8
    ldmatrix_map(addrs, 2)
    with pytest.raises(pa.MisalignedAddress):
        ldmatrix_map(addrs, 4)


def test_stmatrix_mirrors_ldmatrix():
    m = pa.Machine(smem_bytes=8192)
    addrs = tile_access_addresses(32, 128, "128B", order="column", dst=2048)
    regs = np.arange(32 * 4, dtype=np.uint32).reshape(32, 4) * 0x00010003
    for trans in (False, True):
        stmatrix(m, addrs, regs, 4, trans)
        assert np.array_equal(ldmatrix(m, addrs, 4, trans), regs)
    frag = ldmatrix_fragments(m, addrs, 4, True)
    assert frag[0, 0, 1] == regs[0, 0] >> 16 and frag[1, 7, 6] == regs[31, 1] & 0xFFFF


# --- K1-K4 --------------------------------------------------------------------------------
def test_k1_four_byte_distinct_words_per_bank():
    assert bank_conflicts([4 * t for t in range(32)], 4).wavefronts == 1
    assert bank_conflicts([128 * t for t in range(32)], 4).wavefronts == 32
    assert bank_conflicts([(t % 2) * 512 for t in range(32)], 4).wavefronts == 2
    assert bank_conflicts([64] * 32, 4, "st").wavefronts == 1


def test_k2_ldmatrix_per_matrix():
    pitch128 = [(t % 8) * 128 + (t // 8) * 16 for t in range(32)]
    assert bank_conflicts(pitch128, op="ldmatrix", num=4).wavefronts == 32
    sw = tile_access_addresses(32, 128, "128B", order="column", first=(0, 0))
    assert len(set(b for t in range(8) for b in bank_conflicts(sw, op="ldmatrix", num=1).banks[t])) == 32
    assert bank_conflicts(sw, op="ldmatrix", num=1).wavefronts == 1


def test_k3_stores_by_half_and_quarter_warps():
    assert bank_conflicts([64] * 32, 8, "st").wavefronts == 2
    assert bank_conflicts([64] * 32, 16, "st").wavefronts == 4
    assert bank_conflicts([(t % 2) * 2048 for t in range(32)], 16, "st").wavefronts == 8


def test_k4_loads_pack_equal_pairs():
    """K4: 16-byte, all one address: 2 (not 4); 8-byte: 1 (not 2); half-warps
    reading the same 16 words: 2 (pairs differ: no packing)."""
    r = bank_conflicts([64] * 32, 16)
    assert (r.wavefronts, r.packed, r.phases) == (2, True, 2)
    assert bank_conflicts([64] * 32, 8).wavefronts == 1
    assert bank_conflicts([(t % 2) * 1024 for t in range(32)], 8).wavefronts == 2
    assert bank_conflicts([(t % 16) * 8 for t in range(32)], 8).wavefronts == 2
    with pytest.raises(pa.MisalignedAddress):
        bank_conflicts([4] * 32, 8)


def test_k_tile_reads_recorded():
    """The recorded 'tile' cases: reads of a 64x64 bf16 tile under each swizzle."""
    for c in _cases("bank_conflicts"):
        if c["params"]["category"] == "tile":
            p = c["params"]
            assert bank_conflicts(p["offsets"], p["width"], p["op"]).wavefronts == c["wavefronts"]


def test_compare_swizzles_column_reads():
    """Column reads of 128-byte rows: 8-way per quarter without a swizzle, none with 128B."""
    r = compare_swizzles(64, 128, order="column", width=16)
    assert r["none"].wavefronts == 32 and r["128B"].wavefronts == 4
    assert r["32B"].wavefronts == 16 and r["64B"].wavefronts == 8


# --- property tests against the slow reference ------------------------------------------------
SPANS = {"none": 0, "32B": 32, "64B": 64, "128B": 128}


@settings(max_examples=150, deadline=None)
@given(start=st.integers(0, 4095), lbo=st.integers(0, 4095), sbo=st.integers(0, 4095), bo=st.integers(0, 7),
       sw=st.sampled_from(list(SPANS)), major=st.sampled_from(["K", "MN"]),
       dtype=st.sampled_from(["f16", "bf16", "tf32", "e4m3", "s8"]), n=st.sampled_from([8, 16, 24, 64, 136]),
       operand=st.sampled_from(["A", "B"]))
def test_property_element_address_matches_reference(start, lbo, sbo, bo, sw, major, dtype, n, operand):
    if major == "MN" and dtype not in ("f16", "bf16"):
        major = "K"
    if dtype == "s8" and n == 136:
        n = 128
    d = WgmmaDescriptor.from_fields(16 * start, 16 * lbo, 16 * sbo, bo if sw != "none" else 0, sw)
    got = d.addresses(operand, n, major, dtype)
    esize = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "s8": 1}[dtype]
    for i in range(got.shape[0]):
        for k in range(got.shape[1]):
            assert got[i, k] == ref.wgmma_element_address(d.start, d.lbo, d.sbo, d.base_offset, SPANS[sw], major,
                                                          esize, i, k)


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.integers(0, 255), min_size=32, max_size=32), num=st.sampled_from([1, 2, 4]),
       trans=st.booleans())
def test_property_ldmatrix_matches_reference(rows, num, trans):
    addrs = [16 * r for r in rows]
    got = ldmatrix_map(addrs, num, trans)
    want = ref.ldmatrix_halves(addrs, num, trans)
    for (t, j, h), a in want.items():
        assert got[t, j, h] == a


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.integers(0, 255), min_size=32, max_size=32), width=st.sampled_from([4, 8, 16]),
       op=st.sampled_from(["ld", "st", "ldmatrix"]), pairs=st.sampled_from([0, 1, 2]))
def test_property_wavefronts_match_simulation(words, width, op, pairs):
    if op == "ldmatrix":
        width = 16
    if pairs:   # make the K4 packing condition hold sometimes
        words = [words[t & ~pairs] for t in range(32)]
    addrs = [w * width for w in words]
    got = bank_conflicts(addrs, width, op, 4).wavefronts
    assert got == ref.wavefronts_by_simulation(addrs, width, op, 4)


# --- ldmatrix check, named patterns, bad input ------------------------------------------------
def test_check_ldmatrix_unswizzled_rows():
    """L1: ldmatrix adds no swizzle, so plain row addresses over a 128B-swizzled TMA
    tile read other columns; the check names it and gives addresses that work."""
    from ptxasync.consumers import box_access_addresses, check_ldmatrix
    dst = 4096 + 384
    m, tm = _loaded("128B", dst, 64)
    prod = TmaProducer(tm, [((0, 0), dst)])
    intended = [[[(8 * (j % 2) + r, 8 * (j // 2) + c) for c in range(8)] for r in range(8)] for j in range(4)]
    plain = [dst + (8 * ((t // 8) % 2) + t % 8) * 128 + 16 * (t // 16) for t in range(32)]
    rep = check_ldmatrix(plain, prod, intended)
    assert not rep.ok and rep.causes == ["rows_not_swizzled"]
    assert check_ldmatrix(rep.suggestion, prod, intended).ok
    frag = ldmatrix_fragments(m, rep.suggestion, 4)
    assert frag[3, 7, 7] == 0x0400 + 15 * 128 + 15
    assert check_ldmatrix(rep.suggestion, prod, intended, trans=True).causes == ["trans"]
    # matrix 0's rows are column 0 of rows 0..7 as the load laid them out
    assert rep.suggestion[:8] == box_access_addresses(tm, dst, "column")[:8]


def test_box_access_addresses_follow_the_load():
    from ptxasync.consumers import box_access_addresses
    dst = 4096 + 128
    m, tm = _tile("128B", dst)
    table = tm.smem_addresses(dst)
    assert box_access_addresses(tm, dst, "row", 16)[:9] == [int(table[0, 8 * t]) for t in range(8)] + [int(table[1, 0])]
    assert bank_conflicts(box_access_addresses(tm, dst, "column", 16), 16).wavefronts == 4
    with pytest.raises(ValueError, match="past"):
        box_access_addresses(tm, dst, "column", 16, first=(40, 0))


def test_bad_input_is_refused_clearly():
    d = WgmmaDescriptor.from_fields(0, 16, 1024, swizzle="128B")
    with pytest.raises(ValueError, match="operand"):
        d.addresses("C", 8)
    with pytest.raises(ValueError, match="needs n"):
        d.addresses("B")
    with pytest.raises(ValueError, match="major"):
        d.addresses("B", 8, major="X")
    with pytest.raises(ValueError, match="wgmma input type"):
        d.addresses("B", 8, dtype="f64")
    with pytest.raises(pa.InvalidValue, match="N = 12"):
        d.addresses("B", 12)
    with pytest.raises(pa.InvalidValue):
        WgmmaDescriptor(0, 16, 0, other_bits=1 << 70).value
    with pytest.raises(pa.InvalidValue, match="overlap"):
        WgmmaDescriptor.from_fields(0, 16, 0, other_bits=1)
    with pytest.raises(ValueError, match="64 bits"):
        WgmmaDescriptor.from_value(-1)
    with pytest.raises(ValueError, match="32 thread addresses"):
        bank_conflicts([0] * 31)
    with pytest.raises(ValueError, match="op"):
        bank_conflicts([0] * 32, op="atom")
    with pytest.raises(pa.InvalidValue, match="width"):
        bank_conflicts([0] * 32, 12)
    with pytest.raises(TypeError):
        ldmatrix_map([0.5] * 32)
    with pytest.raises(pa.InvalidValue, match=".x3"):
        ldmatrix_map([0] * 32, 3)
    m = pa.Machine(smem_bytes=4096)
    with pytest.raises(pa.IllegalAddress):
        ldmatrix(m, [4096 - 16] * 31 + [4096], 4)
    before = m.smem.copy()
    with pytest.raises(pa.MisalignedAddress):
        stmatrix(m, [8] * 32, np.zeros((32, 4), np.uint32), 4)
    assert np.array_equal(before, m.smem)


def test_w8_mn_major_tiles():
    """The golden's matched MN-major form: R / (S/2) loads of box {S/2, 16} at
    dst + b*16*S read with LBO = 16*S, SBO = 8*S (tma_to_wgmma 'matched')."""
    m = pa.Machine(smem_bytes=64 * 1024)
    g = m.register((0x0400 + np.arange(64 * 128)).astype(np.uint16).reshape(64, 128))
    tm = pa.TensorMap.tiled("FLOAT16", g.address, [128, 64], [256], [64, 16], swizzle="128B")
    dst = 4096 + 128
    d = descriptor_for_tile(tm, dst, major="MN", loads=[((0, 0), dst), ((64, 0), dst + 2048)])
    assert (d.swizzle, d.lbo, d.sbo, d.base_offset, d.start) == (128, 2048, 1024, 0, dst)


def test_read_takes_any_buffer():
    d = WgmmaDescriptor.from_fields(1024, 128, 256)
    mem = np.zeros(4096, np.uint16)
    mem[512] = 0x3C00                                   # byte 1024: element (0, 0)
    assert d.read(mem, "B", 8)[0, 0] == 1.0
    assert d.read(mem.tobytes(), "B", 8)[0, 0] == 1.0


@pytest.mark.parametrize("sw,want", [("none", 32), ("128B", 4)])
def test_box_ldmatrix_rows_bank_conflicts(sw, want):
    """K2 on a box as loaded: 64-element (128-byte) rows, x4 at (0, 0): 8-way per
    matrix without a swizzle, conflict-free with 128B; the rows read the block."""
    from ptxasync.consumers import box_ldmatrix_addresses, check_ldmatrix
    dst = 4096
    m, tm = _loaded(sw, dst, 64)
    addrs = box_ldmatrix_addresses(tm, dst, (16, 8))
    assert bank_conflicts(addrs, op="ldmatrix", num=4).wavefronts == want
    intended = [[[(16 + 8 * (j % 2) + r, 8 + 8 * (j // 2) + c) for c in range(8)] for r in range(8)] for j in range(4)]
    assert check_ldmatrix(addrs, TmaProducer(tm, [((0, 0), dst)]), intended).ok


@settings(max_examples=60, deadline=None)
@given(start=st.integers(64, 1024), lbo=st.integers(1, 256), sbo=st.integers(1, 256), bo=st.integers(0, 7),
       sw=st.sampled_from(list(SPANS)), major=st.sampled_from(["K", "MN"]), n=st.sampled_from([8, 16, 64]),
       wrong=st.sampled_from(["swizzle", "base_offset", "major", "swap"]))
def test_property_check_finds_a_descriptor_that_reads_the_layout(start, lbo, sbo, bo, sw, major, n, wrong):
    """For data laid out as some descriptor reads it, a wrong descriptor is caught
    and the suggestion reads every intended element."""
    d = WgmmaDescriptor.from_fields(16 * start, 16 * lbo, 16 * sbo, bo if sw != "none" else 0, sw)
    addrs = d.addresses("B", n, major)
    if len(set(addrs.reshape(-1).tolist())) != addrs.size:
        return                                      # overlapping elements: no unique intent
    holds = {(i, k): int(addrs[i, k]) for i in range(n) for k in range(16)}
    intended = [[(i, k) for k in range(16)] for i in range(n)]
    prod = SmemProducer(holds)
    assert check_wgmma(d, prod, "B", n, major, intended=intended).ok
    other_major = major
    if wrong == "swizzle":
        bad = d.replace(swizzle={"none": "128B", "32B": "64B", "64B": "128B", "128B": "32B"}[sw])
    elif wrong == "base_offset":
        bad = d.replace(base_offset=(d.base_offset + 1) % 8)
    elif wrong == "swap":
        bad = d.replace(lbo=d.sbo, sbo=d.lbo)
    else:
        bad, other_major = d, ("MN" if major == "K" else "K")
    rep = check_wgmma(bad, prod, "B", n, other_major, intended=intended)
    if rep.ok:
        return                                      # the change does not alter this read (e.g. unused field)
    assert rep.suggestion is not None, str(rep)
    assert check_wgmma(rep.suggestion, prod, "B", n, rep.suggested_major, intended=intended).ok
