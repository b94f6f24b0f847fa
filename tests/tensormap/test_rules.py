"""One test per rule, each with its source (PTX ISA section, driver doc, or a
golden observation number in tests/data/README.md). Expected values
are written out by hand here, never produced by the code under test."""
import struct

import numpy as np
import pytest

import ptxasync as p
from ptxasync import layout
from ptxasync.enums import DataType, Interleave, OOBFill, Swizzle, parse


def _machine(**kw):
    return p.Machine(ctas=kw.pop("ctas", 1), smem_bytes=kw.pop("smem_bytes", 64 * 1024), **kw)


# ---------------------------------------------------------------- swizzle tables

PTX_32B = [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6]]
PTX_64B = PTX_32B + [[2, 3, 0, 1, 6, 7, 4, 5], [3, 2, 1, 0, 7, 6, 5, 4]]
PTX_128B = PTX_64B + [[4, 5, 6, 7, 0, 1, 2, 3], [5, 4, 7, 6, 1, 0, 3, 2],
                      [6, 7, 4, 5, 2, 3, 0, 1], [7, 6, 5, 4, 3, 2, 1, 0]]
PTX_ATOM_32B = [[0, 1, 2, 3, 4, 5, 6, 7], [2, 3, 0, 1, 6, 7, 4, 5],
                [4, 5, 6, 7, 0, 1, 2, 3], [6, 7, 4, 5, 2, 3, 0, 1]]
PTX_ATOM_64B = [[0, 1, 2, 3, 4, 5, 6, 7], [4, 5, 6, 7, 0, 1, 2, 3]]


@pytest.mark.parametrize("mode,table", [("32B", PTX_32B), ("64B", PTX_64B), ("128B", PTX_128B),
                                        ("128B_ATOM_32B", PTX_ATOM_32B),
                                        ("128B_ATOM_64B", PTX_ATOM_64B)])
def test_ptx_swizzle_tables(mode, table):
    """PTX ISA 5.5.7 "Swizzling Modes": the 16-byte-chunk tables as printed
    (pattern repeats), from an address aligned to the repeat."""
    want = np.array([table[i % len(table)] for i in range(16)])
    assert (layout.chunk_map(mode, base=0, lines=16) == want).all()
    assert (layout.chunk_map(mode, base=8192, lines=16) == want).all()


def test_ptx_no_swizzle_table():
    """PTX ISA 5.5.7: no swizzle leaves the layout as the source."""
    assert (layout.chunk_map("NONE", 0, 8) == np.arange(8)[None, :].repeat(8, 0)).all()


@pytest.mark.parametrize("mode,n", [("32B", 2), ("64B", 4), ("128B", 8)])
@pytest.mark.parametrize("dst", [128, 256, 384, 640, 896, 1152, 3 * 1024 + 5 * 128])
def test_swizzle_base_offset_formula(mode, n, dst):
    """PTX ISA 5.5.7 base offset = (dstMem/128) % n and the Programming Guide index
    relation smem[y][x] <-> smem[y][((y+offset)%n)^x]: same as XOR on the absolute
    address (docs/tile-mode.md 2, golden obs. 2 / T3)."""
    off = (dst // 128) % n
    for y in range(16):
        for x in range(8):
            a = dst + y * 128 + x * 16
            assert p.swizzle_address(mode, a) == dst + y * 128 + (((y + off) % n) ^ x) * 16


def test_flip_8b_flips_alternate_lines():
    """PTX ISA 5.5.7 32-byte atomicity with 8-byte flip: as ATOM_32B, plus the two
    8-byte halves of each 16-byte chunk swapped on every alternate line."""
    for line in range(8):
        for chunk in range(8):
            a = line * 128 + chunk * 16
            atom = p.swizzle_address("128B_ATOM_32B", a)
            lo, hi = p.swizzle_address("128B_ATOM_32B_FLIP_8B", a), p.swizzle_address("128B_ATOM_32B_FLIP_8B", a + 8)
            if line % 2 == 0:
                assert (lo, hi) == (atom, atom + 8)
            else:
                assert (lo, hi) == (atom + 8, atom)


# ---------------------------------------------------------------- completion policy

def _u8_map(buf, gd0=64, rows=4, box=(16, 2), **kw):
    return p.TensorMap.tiled("u8", buf.address, [gd0, rows], [gd0], list(box), **kw)


def _filled(m, n, start=1):
    buf = m.alloc(n)
    buf.bytes[:] = (np.arange(n) + start) % 251 + 1
    return buf


def test_load_destination_untouched_before_completion():
    """PTX ISA 9.7.9.25 cp.async.bulk.tensor: the copy is asynchronous; its writes are
    visible only after the mbarrier phase completes (model: queued until a wait)."""
    m = _machine(policy="in_order")
    buf = _filled(m, 256)
    tm = _u8_map(buf)
    m.smem[:] = 0xA5
    bar = m.mbarrier(0).init(1)
    bar.arrive_expect_tx(32)
    m.cp_async_bulk_tensor_load(tm, [16, 1], 1024, bar)
    assert m.pending == 1
    assert (m.smem[1024:1024 + 32] == 0xA5).all()
    assert bar.test_wait(0) is False
    assert bar.try_wait(0) is True
    want = np.concatenate([buf.bytes[64 + 16:64 + 32], buf.bytes[128 + 16:128 + 32]])
    assert (m.smem[1024:1056] == want).all()
    assert (m.smem[1056:1100] == 0xA5).all()


def test_policy_immediate_completes_at_issue():
    """Model contract (machine.py): policy 'immediate' completes every operation when issued."""
    m = _machine(policy="immediate")
    buf = _filled(m, 256)
    bar = m.mbarrier(0).init(1)
    bar.arrive_expect_tx(32)
    m.cp_async_bulk_tensor_load(_u8_map(buf), [0, 0], 1024, bar)
    assert m.pending == 0
    assert bar.test_wait(0) is True
    assert (m.smem[1024:1040] == buf.bytes[0:16]).all()


def _two_loads(policy, seed=0):
    m = _machine(policy=policy, seed=seed, checks=False)   # the race is the point
    buf = _filled(m, 256)
    tm = _u8_map(buf, box=(16, 1))
    bar = m.mbarrier(0).init(1)
    bar.arrive_expect_tx(32)
    m.cp_async_bulk_tensor_load(tm, [0, 0], 1024, bar)   # row 0
    m.cp_async_bulk_tensor_load(tm, [0, 1], 1024, bar)   # row 1, same destination
    assert bar.try_wait(0)
    row0, row1 = bytes(buf.bytes[0:16]), bytes(buf.bytes[64:80])
    got = bytes(m.smem[1024:1040])
    assert got in (row0, row1)
    return "second" if got == row1 else "first"


def test_policy_order_is_observable():
    """Model contract (machine.py set_policy): in_order completes in issue order,
    reverse in the opposite order, random in a seed-dependent order."""
    assert _two_loads("in_order") == "second"
    assert _two_loads("reverse") == "first"
    outcomes = {_two_loads("random", seed) for seed in range(24)}
    assert outcomes == {"first", "second"}


# ---------------------------------------------------------------- mbarrier (R6-R9, obs. 14)

def test_mbarrier_init_state():
    """PTX 9.7.13.15.11 mbarrier.init: phase 0, expected = pending = count, tx 0; R7: a fresh
    barrier answers parity 0 false, parity 1 true."""
    m = _machine()
    b = m.mbarrier(8).init(5)
    s = b.state
    assert (s["phase"], s["expected"], s["pending"], s["tx"]) == (0, 5, 5, 0)
    assert b.test_wait(0) is False and b.test_wait(1) is True


def test_mbarrier_arrive_and_phase_flip():
    """R6: arrive lowers P; P = 0 and T = 0 advances the phase once and resets P = E;
    parity answers flip with every completed phase (R7)."""
    m = _machine()
    b = m.mbarrier(0).init(2)
    b.arrive()
    assert b.state["pending"] == 1 and b.test_wait(0) is False
    b.arrive()
    assert b.state["phase"] == 1 and b.state["pending"] == 2
    assert b.test_wait(0) is True and b.test_wait(1) is False
    b.arrive(2)
    assert b.state["phase"] == 2 and b.test_wait(1) is True and b.test_wait(0) is False


def test_mbarrier_tx_negative_then_expect():
    """R7: complete_tx before expect_tx drives T negative and completes nothing; an arrive
    with T negative leaves the phase open until expect_tx brings T back to exactly 0."""
    m = _machine()
    b = m.mbarrier(0).init(1)
    b.complete_tx(100)
    assert b.state["tx"] == -100
    b.arrive()
    assert b.state["phase"] == 0 and b.state["pending"] == 0
    b.expect_tx(60)
    assert b.state["phase"] == 0 and b.state["tx"] == -40
    b.expect_tx(40)
    assert b.state["phase"] == 1 and b.state["tx"] == 0 and b.state["pending"] == 1


def test_mbarrier_expect_then_complete():
    """R7: expect_tx then arrive with tx outstanding stays open until the complete_tx
    amounts add up; arrive.expect_tx adds its tx before arriving (R6)."""
    m = _machine()
    b = m.mbarrier(0).init(2)
    b.arrive_expect_tx(64)
    b.arrive_expect_tx(32)
    assert b.state["tx"] == 96 and b.state["phase"] == 0
    b.complete_tx(90)
    assert b.state["phase"] == 0
    b.complete_tx(6)
    assert b.state["phase"] == 1


def test_mbarrier_tx_range_limits():
    """PTX 9.7.13.15.2: tx-count range is [-(2^20-1), 2^20-1]; both ends are valid."""
    m = _machine()
    b = m.mbarrier(0).init(1)
    b.expect_tx(2**20 - 1)
    assert b.state["tx"] == 2**20 - 1
    b.complete_tx(2 * (2**20 - 1))
    assert b.state["tx"] == -(2**20 - 1)
    with pytest.raises(p.Hazard):
        b.complete_tx(1)


def _r9_bits(phase, P, T):
    return ((phase & 1) << 63) | (((2**20 - P) % 2**20) << 43) | ((((-T) % 2**21) >> 11) << 32)


def test_mbarrier_state_word_r9():
    """R9: arrive-state bits 63 = phase parity, 43-62 = (2^20 - P) mod 2^20, 32-42 =
    ((-T) mod 2^21) >> 11, P and T before the operation (before an .expect_tx's own tx).
    R8: pending_count(state) = P before the arrive."""
    m = _machine()
    b = m.mbarrier(0).init(3)
    hi = lambda s: s & ~0xFFFFFFFF
    assert hi(b.arrive()) == _r9_bits(0, 3, 0)
    b.expect_tx(4096)
    assert hi(b.arrive_expect_tx(2048)) == _r9_bits(0, 2, 4096)
    b.complete_tx(6144)
    assert hi(b.arrive()) == _r9_bits(0, 1, 0)           # completes phase 0
    b.complete_tx(10000)
    assert hi(b.arrive()) == _r9_bits(1, 3, -10000)
    # pending_count read back from the state word (R8)
    s = b.arrive()
    assert 2**20 - ((s >> 43) & (2**20 - 1)) == 2


def test_mbarrier_arrive_drop():
    """R11 / PTX mbarrier.arrive_drop: counts as an arrival and lowers the expected count
    of the following phases."""
    m = _machine()
    b = m.mbarrier(0).init(3)
    b.arrive_drop()
    b.arrive()
    assert b.state["phase"] == 0
    b.arrive()
    s = b.state
    assert (s["phase"], s["expected"], s["pending"]) == (1, 2, 2)
    b.arrive(); b.arrive()
    assert b.state["phase"] == 2


def test_mbarrier_arrive_after_expected_zero_faults():
    """R12: two arrive_drop on a count-2 barrier complete the phase (E = 0); one more
    arrive faulted on the hardware (model: Hazard)."""
    m = _machine()
    b = m.mbarrier(0).init(2)
    b.arrive_drop(); b.arrive_drop()
    assert b.state["phase"] == 1 and b.state["expected"] == 0
    with pytest.raises(p.Hazard):
        b.arrive()


def test_mbarrier_inval_then_init():
    """R11: inval followed by init with another count gives a fresh barrier (phase 0)."""
    m = _machine()
    b = m.mbarrier(0).init(1)
    b.arrive()
    b.inval()
    b.init(4)
    s = b.state
    assert (s["phase"], s["expected"], s["pending"], s["tx"]) == (0, 4, 4, 0)


def test_mbarrier_word_reads_zero():
    """Golden obs. 14: the mbarrier word reads 0 through ld.shared in every state."""
    m = _machine()
    m.smem[:] = 0xA5
    b = m.mbarrier(64).init(3)
    assert (m.smem[64:72] == 0).all()
    b.arrive(); b.expect_tx(100); b.complete_tx(30)
    assert (m.smem[64:72] == 0).all()
    assert (m.smem[56:64] == 0xA5).all() and (m.smem[72:80] == 0xA5).all()


# ---------------------------------------------------------------- TF32, OOB fill

@pytest.mark.parametrize("x,want", [
    (0x3F800000, 0x3F800000),          # exact
    (0x3F801000, 0x3F800000),          # tie, even (bit 13 = 0) -> down
    (0x3F803000, 0x3F804000),          # tie, odd -> up
    (0x3F801001, 0x3F802000),          # above half -> up
    (0x3F800FFF, 0x3F800000),          # below half -> down
    (0x3FFFF000, 0x40000000),          # carry into the exponent
    (0x7F7FF000, 0x7F800000),          # max finite rounds up to inf
    (0x00001000, 0x00000000),          # subnormal tie, even; not flushed
    (0x00003000, 0x00004000),          # subnormal, kept (no FTZ)
    (0x7F800000, 0x7F800000),          # +inf kept
    (0xFF800000, 0xFF800000),          # -inf kept
    (0x7FC00000, 0x7FFFE000),          # quiet NaN
    (0xFF800001, 0x7FFFE000),          # negative signalling NaN
    (0x7F800001, 0x7FFFE000),
    (0xBF803000, 0xBF804000),          # sign kept
])
def test_tf32_rounding(x, want):
    """Golden obs. 4 / docs/tile-mode.md 5: TF32 loads round to nearest even at bit 13,
    NaN -> 0x7FFFE000, inf kept, subnormals not flushed."""
    assert p.tf32_round(x) == want


def test_tf32_load_converts_in_bounds_not_fill():
    """docs/tile-mode.md 5: TFLOAT32 loads convert in-bounds elements; fill values are not
    converted (NaN fill stays 0x7FF77FF7, golden obs. 3/4)."""
    m = _machine()
    buf = m.alloc(64)
    buf.view(np.uint32, 4)[:] = [0x3F803000, 0x7FC00000, 0x3F801000, 0x00003000]
    tm = p.TensorMap.tiled("TFLOAT32", buf.address, [4], [], [8], oob_fill="NAN")
    bar = m.mbarrier(0).init(1)
    bar.arrive_expect_tx(32)
    m.cp_async_bulk_tensor_load(tm, [0], 1024, bar)
    assert bar.try_wait(0)
    got = m.cta(0).view(np.uint32, 8, 1024).tolist()
    assert got == [0x3F804000, 0x7FFFE000, 0x3F800000, 0x00004000] + [0x7FF77FF7] * 4


@pytest.mark.parametrize("dtype,esize", [("f16", 2), ("bf16", 2), ("f32", 4), ("f32_ftz", 4),
                                         ("f64", 8), ("u8", 1), ("u32", 4)])
@pytest.mark.parametrize("fill", ["NONE", "NAN"])
def test_oob_fill_pattern(dtype, esize, fill):
    """Golden obs. 3 / docs/tile-mode.md 4: out-of-bounds elements read 00, or with
    NAN_REQUEST_ZERO_FMA the 16-bit pattern 0x7FF7 repeated (f7 7f little-endian)."""
    m = _machine()
    buf = m.alloc(256, fill=0x11)
    box0 = 32 // esize
    try:
        tm = p.TensorMap.tiled(dtype, buf.address, [box0, 2], [32], [box0, 2], oob_fill=fill)
    except p.InvalidValue:
        assert fill == "NAN" and dtype in ("u8", "u32")   # integer types need no NaN
        return
    bar = m.mbarrier(0).init(1)
    bar.arrive_expect_tx(64)
    m.cp_async_bulk_tensor_load(tm, [0, 1], 1024, bar)    # row 1 in bounds, row 2 out
    assert bar.try_wait(0)
    assert (m.smem[1024:1056] == 0x11).all()
    want = bytes([0xF7, 0x7F] * 16) if fill == "NAN" else bytes(32)
    assert bytes(m.smem[1056:1088]) == want


# ---------------------------------------------------------------- stores, faults

def test_store_writes_to_chunk_end_past_global_dim():
    """Golden obs. 9 / docs/tile-mode.md 8: in dim 0 a store writes up to the end of the
    16-byte chunk holding the last in-bounds byte; exact bounds in dims >= 1."""
    m = _machine()
    g = m.alloc(64 * 3, fill=0xEE)
    # u16, globalDim {9, 2}: 18 bytes per row -> bytes [0, 32) of each row are written
    tm = p.TensorMap.tiled("u16", g.address, [9, 2], [64], [24, 4])
    src = np.arange(1, 24 * 2 * 4 + 1, dtype=np.uint8)      # 4 rows of 48 bytes
    m.smem[2048:2048 + 192] = src
    m.cp_async_bulk_tensor_store(tm, [0, 0], 2048)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    want = bytearray([0xEE] * 192)
    want[0:32] = bytes(range(1, 33))             # row 0: shared bytes 0..31
    want[64:96] = bytes(range(49, 81))           # row 1: shared bytes 48..79
    assert bytes(g.bytes) == bytes(want)


def test_unaligned_c0_load_faults():
    """Golden obs. 1 / docs/tile-mode.md 9: c0*elemsize not a multiple of 16 faults
    (IllegalInstruction) at issue, naming the 16-byte rule."""
    m = _machine()
    buf = m.alloc(1024)
    tm = p.TensorMap.tiled("f32", buf.address, [64, 4], [256], [8, 2])
    bar = m.mbarrier(0).init(1)
    with pytest.raises(p.IllegalInstruction, match="16"):
        m.cp_async_bulk_tensor_load(tm, [2, 0], 1024, bar)
    m.cp_async_bulk_tensor_load(tm, [-4, -1], 1024, bar)    # negative, aligned: fine (obs. 1)


@pytest.mark.parametrize("coords", [[-4, 0], [0, -1]])
def test_negative_store_coordinate_faults(coords):
    """docs/tile-mode.md 9 (golden tile_store faults): any negative store coordinate faults."""
    m = _machine()
    buf = m.alloc(1024)
    tm = p.TensorMap.tiled("f32", buf.address, [64, 4], [256], [8, 2])
    with pytest.raises(p.IllegalInstruction, match=str(coords[0] if coords[0] else coords[1])):
        m.cp_async_bulk_tensor_store(tm, coords, 1024)


def test_global_access_outside_buffers_is_illegal_address():
    """CUDA: an access outside any allocation is cudaErrorIllegalAddress; the message names
    the address."""
    m = _machine()
    tm = p.TensorMap.tiled("u8", 0x4000, [64, 4], [64], [16, 2])
    bar = m.mbarrier(0).init(1)
    with pytest.raises(p.IllegalAddress, match="0x4000"):
        m.cp_async_bulk_tensor_load(tm, [0, 0], 1024, bar)
        m.run()


# ---------------------------------------------------------------- cluster

def test_cluster_shared_addresses_and_mapa():
    """Golden C1: rank r sees its shared memory at r*2^24 + offset; mapa(a, k) =
    (a & 0xFFFFFF) | (k << 24)."""
    m = _machine(ctas=4, smem_bytes=16 * 1024)
    assert [c.addr(0x800) for c in m.ctas] == [0x800, 0x1000800, 0x2000800, 0x3000800]
    assert p.mapa(0x2000400, 1) == 0x1000400
    assert p.mapa(0x123, 3) == 0x3000123
    assert m.ctas[2].mbarrier(0x400).addr == 0x2000400
    assert _machine(ctas=1).cta(0).addr(0x800) == 0x800    # single CTA: plain offsets


def test_multicast_load():
    """Golden C3: every CTA in ctaMask receives the whole box at dstMem's CTA-relative
    offset and its barrier at mbar's offset is credited with the whole box; others are
    untouched with tx 0; the issuer need not be in the mask."""
    m = _machine(ctas=4, smem_bytes=16 * 1024)
    g = _filled(m, 64 * 8)
    tm = p.TensorMap.tiled("u8", g.address, [64, 8], [64], [16, 2])
    for c in m.ctas:
        c.smem[:] = 0xA5 + c.rank
        c.mbarrier(0x400).init(1).arrive_expect_tx(32)
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    m.cp_async_bulk_tensor_load(tm, [16, 3], m.ctas[1].addr(0x800), m.ctas[1].addr(0x400),
                                cta=1, cta_mask=0b1101)
    m.run()
    want = bytes(g.bytes[3 * 64 + 16:3 * 64 + 32]) + bytes(g.bytes[4 * 64 + 16:4 * 64 + 32])
    for c in m.ctas:
        bar = c.mbarrier(0x400)
        if c.rank in (0, 2, 3):
            assert bytes(c.smem[0x800:0x820]) == want
            assert bar.state["phase"] == 1
        else:
            assert (c.smem[0x800:0x820] == 0xA5 + 1).all()
            assert bar.state["phase"] == 0 and bar.state["tx"] == 32
        assert (c.smem[0x820:0x900] == 0xA5 + c.rank).all()


def test_machine_limits():
    """sm_90: 227 KiB of shared memory per CTA; cluster size 1..16 (CUDA programming guide,
    portable cluster size 8, non-portable up to 16)."""
    assert p.SMEM_MAX == 227 * 1024
    p.Machine(ctas=1, smem_bytes=227 * 1024)
    with pytest.raises(p.InvalidValue, match="232449"):
        p.Machine(smem_bytes=227 * 1024 + 1)
    assert p.Machine(ctas=16, smem_bytes=1024).nctas == 16
    for bad in (0, 17):
        with pytest.raises(p.InvalidValue, match=str(bad)):
            p.Machine(ctas=bad, smem_bytes=1024)


# ---------------------------------------------------------------- API contracts

def test_views_share_memory():
    """machine.py contract: view(dtype, shape, offset) is a view, not a copy."""
    m = _machine()
    v = m.cta(0).view(np.uint32, (2, 4), 256)
    v[1, 2] = 0xDEADBEEF
    assert bytes(m.smem[256 + 24:256 + 28]) == bytes.fromhex("efbeadde")
    m.smem[256] = 7
    assert v[0, 0] & 0xFF == 7
    g = m.alloc(64)
    gv = g.view(np.uint16, 8, 16)
    gv[:] = 0x0102
    assert bytes(g.bytes[16:20]) == b"\x02\x01\x02\x01"


def test_register_user_array_is_written_in_place():
    """machine.py register(): copies write into the user's array."""
    m = _machine()
    arr = np.zeros((4, 16), dtype=np.uint8)
    g = m.register(arr)
    m.smem[1024:1040] = 9
    tm = p.TensorMap.tiled("u8", g.address, [16, 4], [16], [16, 1])
    m.cp_async_bulk_tensor_store(tm, [0, 2], 1024)
    m.cp_async_bulk_commit_group(); m.cp_async_bulk_wait_group(0)
    assert (arr[2] == 9).all() and (arr[[0, 1, 3]] == 0).all()


def test_from_array_reverses_dims():
    """tensormap.py: from_array takes NumPy order and equals tiled() with reversed dims."""
    a = np.zeros((6, 5, 32), dtype=np.float16)
    t1 = p.TensorMap.from_array(a, (2, 3, 16), 0x10000, swizzle="32B", element_strides=(1, 2, 1))
    t2 = p.TensorMap.tiled("f16", 0x10000, [32, 5, 6], [64, 320], [16, 3, 2],
                           element_strides=[1, 2, 1], swizzle="32B")
    assert bytes(t1) == bytes(t2)
    assert t1.fields["global_dim"] == [32, 5, 6]


@pytest.mark.parametrize("cls,name,value", [
    (Swizzle, "128B", 3), (Swizzle, "CU_TENSOR_MAP_SWIZZLE_64B", 2), (Swizzle, "SWIZZLE_32B", 1),
    (Swizzle, "128B_ATOM_64B", 6), (Swizzle, "none", 0),
    (DataType, "bf16", 9), (DataType, "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 6), (DataType, "tf32", 11),
    (DataType, "f32", 7), (DataType, "u8", 0), (DataType, np.float64, 8), (DataType, np.dtype("int32"), 3),
    (Interleave, "32B", 2), (Interleave, "CU_TENSOR_MAP_INTERLEAVE_16B", 1),
    (OOBFill, "NAN_REQUEST_ZERO_FMA", 1), (OOBFill, "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE", 0),
])
def test_enum_names_parse(cls, name, value):
    """enums.py: driver names (cuda.h CUtensorMap* enums), short names and PTX names parse."""
    assert parse(cls, name) == value


# ---------------------------------------------------------------- tensormap.replace (R1)

def _w(b, off):
    return struct.unpack_from("<I", b, off)[0]


def _set_w(b, off, v):
    struct.pack_into("<I", b, off, v & 0xFFFFFFFF)


def _set_bits(b, off, lo, n, v):
    w = _w(b, off)
    mask = ((1 << n) - 1) << lo
    _set_w(b, off, (w & ~mask) | ((v << lo) & mask))


def _base_map():
    return p.TensorMap.tiled("f32", 0x10000, [64, 8, 4], [256, 4096], [16, 4, 2])


def _r1_expect(raw, field, value, ord):
    b = bytearray(raw)
    if field == "global_address":
        struct.pack_into("<Q", b, 0, value)
    elif field == "rank":
        _set_bits(b, 8, 4, 3, value & 7)
    elif field == "elemtype":
        if value in (11, 12):
            _set_bits(b, 8, 7, 4, value - 4)
            _set_bits(b, 8, 16, 1, 1)
        else:
            _set_bits(b, 8, 7, 4, value)
    elif field == "interleave_layout":
        _set_bits(b, 8, 11, 2, value)
    elif field == "swizzle_mode":
        _set_bits(b, 8, 13, 2, value)
    elif field == "fill_mode":
        _set_bits(b, 8, 15, 1, value)
    elif field == "global_stride":
        _set_w(b, 12 + 4 * ord, value >> 4)
        _set_bits(b, 28, 4 * ord, 4, (value >> 36) & 0xF)
    elif field == "global_dim":
        _set_w(b, 32 + 4 * ord, value - 1)
    elif field == "box_dim":
        b[55 + ord] = (value - 1) & 0xFF
    elif field == "element_stride":
        _set_bits(b, 52, 3 * ord, 3, (value - 1) & 7)
    return bytes(b)


R1_EDITS = [
    ("global_address", 0x12345, 0), ("global_address", 0xFFFF_0000_0000_0010, 0),
    ("rank", 1, 0), ("rank", 4, 0),
    ("elemtype", 6, 0), ("elemtype", 11, 0), ("elemtype", 12, 0), ("elemtype", 0, 0),
    ("interleave_layout", 1, 0), ("swizzle_mode", 3, 0), ("fill_mode", 1, 0),
    ("global_stride", 512, 0), ("global_stride", 24, 1), ("global_stride", 2**37 + 0x40, 1),
    ("global_stride", 2**40, 0),
    ("global_dim", 100, 2), ("global_dim", 1, 0), ("global_dim", 0, 1),
    ("box_dim", 32, 1), ("box_dim", 256, 0), ("box_dim", 1, 2), ("box_dim", 257, 1),
    ("element_stride", 3, 2), ("element_stride", 8, 0), ("element_stride", 9, 1),
    ("box_dim", 5, 4), ("global_dim", 7, 3),
]


@pytest.mark.parametrize("field,value,ord", R1_EDITS)
def test_tensormap_replace_bits(field, value, ord):
    """Golden R1: tensormap.replace.tile changes exactly the documented bits of the
    128-byte map and nothing else (ords at or above the rank written the same way)."""
    tm = _base_map()
    raw = bytes(tm)
    tm.replace(field, value, ord=ord)
    assert bytes(tm) == _r1_expect(raw, field, value, ord)


def test_tensormap_replace_decoded_fields_follow():
    """Golden R1/R3: the decoded fields of an edited map read the new values
    (rank as rank-1, strides in bytes, elemtype PTX numbering)."""
    tm = _base_map()
    tm.replace("box_dim", 8, ord=1).replace("global_dim", 5, ord=2)
    tm.replace("global_stride", 8192, ord=1).replace("element_stride", 2, ord=0)
    tm.replace("swizzle", 1).replace("fill", 1).replace("elemtype", 11)
    tm.replace("global_address", 0x20000)
    f = tm.fields
    assert f["box_dim"] == [16, 8, 2] and f["global_dim"] == [64, 8, 5]
    assert f["global_strides"] == [256, 8192] and f["element_strides"] == [2, 1, 1]
    assert f["swizzle"] == Swizzle.B32 and f["oob_fill"] == OOBFill.NAN_REQUEST_ZERO_FMA
    assert f["dtype"] == DataType.TFLOAT32 and f["global_address"] == 0x20000
    tm.replace("rank", 1)
    assert tm.fields["rank"] == 2


def test_repr_names_fields():
    """Display contract: repr and _repr_html_ name the driver fields."""
    tm = p.TensorMap.tiled("bf16", 0x10000, [64, 8], [128], [32, 4], swizzle="64B")
    r, h = repr(tm), tm._repr_html_()
    for name in ("globalDim", "globalStrides", "boxDim", "elementStrides", "interleave",
                 "swizzle", "oobFill", "l2Promotion", "globalAddress"):
        assert name in r and name in h
    assert "CU_TENSOR_MAP_SWIZZLE_64B" in r and "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16" in r
    assert "0x10000" in r
