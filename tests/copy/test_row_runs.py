"""Property test of the tile-load row runs (csrc/core/copy/tile.c, load_direct):
boxes whose rows are whole in dim 0 but lie partly outside the tensor in the
dims >= 1, so that the in-bounds rows form runs with fill between them.

Every swizzle of a .tile load (none, 32B, 64B, 128B and the sm_100 128B
atomicity modes), 128-byte aligned destinations (fill rows filled in place, one
128-byte line a row) and merely 16-byte aligned ones (fill through the
swizzle), zero and NaN fill, ranks 2 to 5 with traversal strides.

The expected image is stated here element by element from docs/tile-mode.md:
box element k reads global element g_i = c_i + k_i * elementStrides[i], fill
when any g_i is outside [0, globalDim[i]) (golden observation 3: NaN fill is
0x7FF7 per 16 bits), and lands at dst + row * pitch + k_0 * esize, each
byte through the swizzle table of PTX ISA 5.5.7 (tests/modes_reference.py).
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ptxasync as pa

import modes_reference as mref  # noqa: E402
from test_properties import SETTINGS  # noqa: E402

SMEM = 64 * 1024
SWIZZLES = {0: "NONE", 1: "32B", 2: "64B", 3: "128B", 4: "128B_ATOM_32B", 5: "128B_ATOM_32B_FLIP_8B",
            6: "128B_ATOM_64B"}
TYPES = {1: "u8", 2: "bf16", 4: "f32", 8: "u64"}
NAN16 = (0xF7, 0x7F)   # the 16-bit 0x7FF7 of golden observation 3, little-endian


def expected(tensor, gdim, strides, box, estr, coords, es, dst, swz, nan, smem):
    """The shared-memory image of the load, written into smem (bytes)."""
    rank = len(gdim)
    span = mref.SPAN[swz]
    row_bytes = box[0] * es
    pitch = max(row_bytes, span)
    raw = tensor.view(np.uint8).ravel()
    counts = [-(-box[i] // estr[i]) for i in range(1, rank)]   # box rows per dim (traversal strides)
    for row, k in enumerate(np.ndindex(*reversed(counts))):
        k = tuple(reversed(k))                      # dim 1 fastest
        g = [coords[i] + k[i - 1] * estr[i] for i in range(1, rank)]
        inside = all(0 <= g[i - 1] < gdim[i] for i in range(1, rank))
        base = sum(g[i - 1] * strides[i - 1] for i in range(1, rank)) if inside else 0
        for k0 in range(box[0]):
            g0 = coords[0] + k0
            for b in range(es):
                a = dst + row * pitch + k0 * es + b
                if inside and 0 <= g0 < gdim[0]:
                    v = raw[base + g0 * es + b]
                else:
                    v = NAN16[a & 1] if nan else 0
                smem[mref.swizzle(a, swz)] = v


def check_load(swz, es, nan, gdim, strides, box, estr, coords, dst, seed):
    """One load through the machine against expected()."""
    target = "sm_100a" if swz >= 4 else "sm_90a"
    m = pa.Machine(target=target, smem_bytes=SMEM)
    rng = np.random.default_rng(seed)
    nbytes = strides[-1] * gdim[-1]
    tensor = rng.integers(0, 256, nbytes, dtype=np.uint8)
    g = m.register(tensor)
    tm = pa.TensorMap.tiled(TYPES[es] if not nan else {2: "bf16", 4: "f32"}[es], g.address, gdim, strides,
                            box, element_strides=estr, swizzle=SWIZZLES[swz],
                            oob_fill="NAN_REQUEST_ZERO_FMA" if nan else "NONE", target=target)
    m.smem[:] = 0xA5
    bar = m.mbarrier(0).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    m.cp_async_bulk_tensor_load(tm, coords, dst, bar)
    assert bar.try_wait(0)
    want = np.full(SMEM, 0xA5, dtype=np.uint8)
    want[0:8] = m.smem[0:8]                         # the mbarrier
    expected(tensor, gdim, strides, box, estr, coords, es, dst, swz, nan, want)
    got = m.smem.copy()
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, (f"swizzle {SWIZZLES[swz]} es={es} gdim={gdim} strides={strides} box={box} "
                           f"estr={estr} coords={coords} dst={dst}: first difference at smem 0x{bad[0]:x}: "
                           f"model 0x{got[bad[0]]:02x}, expected 0x{want[bad[0]]:02x}")


@settings(max_examples=120, **SETTINGS)
@given(data=st.data())
def test_rows_partly_outside_in_the_outer_dims(data):
    swz = data.draw(st.sampled_from(sorted(SWIZZLES)))
    es = data.draw(st.sampled_from([1, 2, 4, 8]))
    nan = es in (2, 4) and data.draw(st.booleans())
    span = mref.SPAN[swz]
    row_bytes = span or 128                         # one whole swizzle span a row: the line loop
    if data.draw(st.booleans()):
        row_bytes = data.draw(st.sampled_from([b for b in (16, 32, 64, 128) if b <= row_bytes]))
    rank = data.draw(st.integers(2, 5))
    box = [row_bytes // es] + [data.draw(st.integers(1, 6)) for _ in range(rank - 1)]
    estr = [1] + [data.draw(st.integers(1, 3)) for _ in range(rank - 1)]
    gdim = [box[0] * data.draw(st.integers(1, 3))] + [data.draw(st.integers(1, 9)) for _ in range(rank - 1)]
    strides = [gdim[0] * es + 16 * data.draw(st.integers(0, 2))]
    for i in range(2, rank):
        strides.append(strides[-1] * gdim[i - 1])
    # dim 0 whole and inside; each outer dim from wholly before to wholly past the tensor
    coords = [box[0] * data.draw(st.integers(0, gdim[0] // box[0] - 1))]
    for i in range(1, rank):
        reach = box[i] * estr[i]
        coords.append(data.draw(st.integers(-reach - 1, gdim[i] + 1)))
    rows = int(np.prod([-(-box[i] // estr[i]) for i in range(1, rank)]))
    pitch = max(row_bytes, span)
    dst = data.draw(st.sampled_from([1024, 2048 + 128 * data.draw(st.integers(0, 7)),
                                     1024 + 16 * data.draw(st.integers(1, 7))]))
    if swz >= 4:                                    # 32/64-byte atoms: 32/64-byte aligned boxes
        dst = dst // 64 * 64
    if dst + rows * pitch + 128 > SMEM:
        dst = 1024
    assume(dst + rows * pitch + 128 <= SMEM)        # up to 6**4 rows: not every box fits
    check_load(swz, es, nan, gdim, strides, box, estr, coords, dst, data.draw(st.integers(0, 2**32 - 1)))


@pytest.mark.parametrize("swz", sorted(SWIZZLES))
@pytest.mark.parametrize("dst", [1024, 1024 + 64])
def test_half_the_rows_past_the_end(swz, dst):
    """The shape of the oob_half benchmark, smaller: a 2D box of 64 rows, each one
    swizzle span (128 bytes unswizzled), the last 32 rows past the tensor; every
    line XOR of the swizzle is met by an in-bounds row and a fill row."""
    span = mref.SPAN[swz] or 128
    es = 2
    gdim, strides, box = [4 * span // es, 96], [4 * span], [span // es, 64]
    for nan in (False, True):
        check_load(swz, es, nan, gdim, strides, box, [1, 1], [span // es, 64], dst, 7)
