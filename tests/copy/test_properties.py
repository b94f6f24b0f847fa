"""Property tests: the C model against tests/reference.py (an independent,
element-by-element statement of docs/tile-mode.md) on random tiled maps.

Expected values come from tests/reference.py, never from the code under test.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ptxasync as p
from ptxasync import layout

import reference as ref  # noqa: E402

SMEM = 64 * 1024
ESIZE = ref.ELEM_SIZE                       # dtype value -> bytes (types 0..12)
FLOAT_TYPES = ref.FLOAT_TYPES
SPAN = {0: 0, 1: 32, 2: 64, 3: 128}
MAX_BOX_BYTES = 6144
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _ceil(a, b):
    return -(-a // b)


@st.composite
def tiled_maps(draw):
    """A random tiled map the driver rules allow (docs/tile-mode.md 1, 3, 6;
    spec/tensors.md cuTensorMapEncodeTiled rules), as reference-style params."""
    dtype = draw(st.sampled_from(sorted(ESIZE)))
    es = ESIZE[dtype]
    interleave = draw(st.sampled_from([0, 0, 0, 1, 2]))
    if interleave:
        rank = draw(st.integers(3, 5))
        swizzle = draw(st.sampled_from([0, 1, 2, 3] if interleave == 1 else [1, 1, 1, 0, 2, 3]))
        unit = ref.SLICE_BYTES[interleave]
        bd0 = draw(st.sampled_from([16 // es, 32 // es] if es < 16 else [1]))
        bd0 = max(bd0, 1)
        gd0 = draw(st.integers(1, 6))                      # slices (section 6.1)
        row = gd0 * unit
    else:
        rank = draw(st.integers(1, 5))
        swizzle = draw(st.sampled_from([0, 1, 2, 3]))
        unit = es
        limit = SPAN[swizzle] or 128
        per16 = 16 // es
        bd0 = per16 * draw(st.integers(1, max(1, limit // 16)))
        gd0 = draw(st.integers(1, 2 * bd0 + 8))
        row = gd0 * es
    box = [bd0] + [draw(st.integers(1, 5)) for _ in range(rank - 1)]
    estr = [draw(st.integers(1, 8)) for _ in range(rank)]
    gdim = [gd0] + [draw(st.integers(1, 6)) for _ in range(rank - 1)]
    mult = 32 if interleave == 2 else 16
    strides = []
    prev = _ceil(row, mult) * mult
    for i in range(1, rank):
        s = prev + mult * draw(st.integers(0, 3))
        strides.append(s)
        prev = s * gdim[i]
    oob = draw(st.sampled_from([0, 1])) if dtype in FLOAT_TYPES else 0
    params = dict(tensorDataType_value=dtype, globalDim=gdim, globalStrides=strides, boxDim=box,
                  elementStrides=estr, interleave_value=interleave, swizzle_value=swizzle,
                  oobFill_value=oob)
    tx = ref.tile_load_tx_bytes(params)
    assume(0 < tx <= MAX_BOX_BYTES)
    return params


def _footprint(params):
    geo = ref._Geometry(params)
    end = geo.gdim[0] * geo.unit
    for i in range(1, geo.rank):
        end += (geo.gdim[i] - 1) * geo.gstride[i]
    return end


def _encode(params, address):
    try:
        return p.TensorMap.tiled(params["tensorDataType_value"], address, params["globalDim"],
                                 params["globalStrides"], params["boxDim"],
                                 element_strides=params["elementStrides"],
                                 interleave=params["interleave_value"],
                                 swizzle=params["swizzle_value"], oob_fill=params["oobFill_value"])
    except p.InvalidValue:
        assume(False)


def _machine_with_tensor(params, rng):
    """A one-CTA machine holding the map's tensor as random bytes (and 256 more), and
    the map encoded at it: (machine, buffer, map). Sets params["global_address"]."""
    nbytes = _footprint(params) + 256
    m = p.Machine(ctas=1, smem_bytes=SMEM)
    buf = m.alloc(nbytes)
    buf.bytes[:] = rng.integers(0, 256, nbytes, dtype=np.uint8)
    params["global_address"] = buf.address
    return m, buf, _encode(params, buf.address)


@st.composite
def coords_for(draw, params, store=False):
    geo = ref._Geometry(params)
    cs = []
    for i in range(geo.rank):
        span = params["boxDim"][i] * params["elementStrides"][i]
        lo = 0 if store else -span - 2
        c = draw(st.integers(lo, geo.gdim[i] + 2))
        if i == 0 and geo.interleave == 0:
            per16 = 16 // geo.esize if geo.esize < 16 else 1
            c = (c // per16) * per16 if c >= 0 else -((-c) // per16) * per16
            if store:
                c = max(c, 0)
        cs.append(c)
    return cs


def _smem_extent(params):
    geo = ref._Geometry(params)
    rows = 1
    for n in geo.counts[1:]:
        rows *= n
    return rows * geo.pitch + 128


@settings(max_examples=120, **SETTINGS)
@given(data=st.data())
def test_tile_load_matches_reference(data):
    """Shared bytes and tx bytes of a tile load equal tests/reference.py tile_load
    (docs/tile-mode.md sections 1-7: layout, absolute-address swizzle, OOB fill, TF32, tx count)."""
    params = data.draw(tiled_maps())
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    m, buf, tm = _machine_with_tensor(params, rng)
    coords = data.draw(coords_for(params))
    extent = _smem_extent(params)
    dst = 128 * data.draw(st.integers(1, (SMEM - extent) // 128 - 1))
    m.smem[:] = 0xA5
    bar = m.mbarrier(0).init(1)
    big = 2**20 - 1
    bar.arrive_expect_tx(big)
    m.cp_async_bulk_tensor_load(tm, coords, dst, bar)
    bar.try_wait(0)
    credited = big - bar.state["tx"]

    want = bytearray(b"\xa5" * SMEM)
    want[0:8] = bytes(m.smem[0:8])          # the mbarrier word is the model's business (obs. 14)
    tx = ref.tile_load(params, bytes(buf.bytes), buf.address, coords, want, dst)
    got = m.smem.copy()
    want = np.frombuffer(bytes(want), dtype=np.uint8)
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, (f"{params} coords={coords} dst={dst}: first difference at smem 0x{bad[0]:x}: "
                           f"model 0x{got[bad[0]]:02x}, reference 0x{want[bad[0]]:02x}")
    assert credited == tx, f"{params}: model credited {credited}, reference {tx}"
    assert tm.box_bytes == tx


@settings(max_examples=100, **SETTINGS)
@given(data=st.data())
def test_tile_store_matches_reference(data):
    """Global bytes after a tile store equal tests/reference.py tile_store
    (docs/tile-mode.md section 8: dim-0 bound to the 16-byte chunk end, exact in dims >= 1)."""
    params = data.draw(tiled_maps())
    params["oobFill_value"] = 0
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    m, buf, tm = _machine_with_tensor(params, rng)
    before = bytes(buf.bytes)
    coords = data.draw(coords_for(params, store=True))
    extent = _smem_extent(params)
    src = 128 * data.draw(st.integers(0, (SMEM - extent) // 128 - 1))
    m.smem[:] = rng.integers(0, 256, SMEM, dtype=np.uint8)
    smem = bytes(m.smem)
    m.cp_async_bulk_tensor_store(tm, coords, src)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    want = bytearray(before)
    ref.tile_store(params, want, buf.address, coords, smem, src)
    want = np.frombuffer(bytes(want), dtype=np.uint8)
    bad = np.nonzero(buf.bytes != want)[0]
    assert len(bad) == 0, (f"{params} coords={coords} src={src}: first difference at global +{bad[0]}: "
                           f"model 0x{buf.bytes[bad[0]]:02x}, reference 0x{want[bad[0]]:02x}")
    assert bytes(m.smem) == smem            # a store does not write shared memory


SWZ_MODES = ["NONE", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B"]


@settings(max_examples=200, deadline=None)
@given(mode=st.sampled_from(SWZ_MODES), addr=st.integers(0, 2**24 - 1))
def test_swizzle_round_trip(mode, addr):
    """swizzle_address is undone by unswizzle_address (PTX 5.5.7: a permutation
    of 16-byte chunks (8-byte halves for the flip sub-mode) within a repeat)."""
    s = p.swizzle_address(mode, addr)
    assert layout.unswizzle_address(mode, s) == addr
    info = p.swizzle_info(mode)
    assert s // max(info["repeat"], 16) == addr // max(info["repeat"], 16) or mode == "NONE"
    assert s % info["atom"] == addr % info["atom"]


@settings(max_examples=200, deadline=None)
@given(mode=st.sampled_from([0, 1, 2, 3]), addr=st.integers(0, 2**24 - 1))
def test_swizzle_formula(mode, addr):
    """Swizzle = XOR of absolute address bits [7,10) into bits [4,7)
    (docs/tile-mode.md section 2; golden obs. 2; reference.swizzle_address)."""
    assert p.swizzle_address(mode, addr) == ref.swizzle_address(addr, mode)
    arr = np.arange(addr & ~0xF, (addr & ~0xF) + 64, dtype=np.uint32)
    assert list(p.swizzle_address(mode, arr)) == [ref.swizzle_address(int(a), mode) for a in arr]


@pytest.mark.parametrize("mode", SWZ_MODES)
def test_swizzle_is_bijection_on_repeat(mode):
    """Every swizzle permutes the bytes of each repeat block (PTX 5.5.7 tables)."""
    rep = max(p.swizzle_info(mode)["repeat"], 16)
    for base in (0, 3 * rep):
        a = np.arange(base, base + rep, dtype=np.uint32)
        s = np.asarray(p.swizzle_address(mode, a))
        assert sorted(s.tolist()) == a.tolist()


@settings(max_examples=60, **SETTINGS)
@given(data=st.data())
def test_smem_addresses_and_smem_element_are_inverse(data):
    """TensorMap.smem_addresses and smem_element describe the same layout
    (docs/tile-mode.md section 1: lin = dst + row*pitch + k0*unit, then swz)."""
    params = data.draw(tiled_maps())
    assume(params["interleave_value"] == 0)
    tm = _encode(params, 0x10000)
    dst = 128 * data.draw(st.integers(0, 32))
    addrs = np.asarray(tm.smem_addresses(dst))
    geo = ref._Geometry(params)
    assert addrs.size == int(np.prod(geo.counts))
    assert len(set(addrs.reshape(-1).tolist())) == addrs.size
    for idx in np.ndindex(addrs.shape):
        a = int(addrs[idx])
        k = tuple(idx[::-1])
        hit = tm.smem_element(a, dst)
        assert hit is not None, (idx, a)
        assert tuple(hit[0])[:len(k)] == k[:len(hit[0])] and hit[1] == 0, (idx, a, hit)
        # independent address: reference layout rule
        row = 0
        mul = 1
        for i in range(1, geo.rank):
            row += k[i] * mul
            mul *= geo.counts[i]
        lin = dst + row * geo.pitch + k[0] * geo.unit
        assert a == ref.swizzle_address(lin, params["swizzle_value"])
    extent = _smem_extent(params)
    for a in data.draw(st.lists(st.integers(dst, dst + extent), max_size=20)):
        hit = tm.smem_element(a, dst)
        if hit is not None:
            k, b = hit
            assert int(addrs[tuple(k[::-1])[-addrs.ndim:]]) + b == a
