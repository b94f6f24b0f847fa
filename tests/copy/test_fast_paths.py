"""Property tests of the fast paths against the slow references.

- tile loads whose boxes lie wholly or partly out of bounds (the in-place fill
  runs), at destinations that are not 128-byte aligned (the swizzled fill row),
  TF32 maps included, and TF32 rows of one whole line (their vector rounding):
  tests/reference.py tile_load;
- tensor reductions through the machine (the store walk's stage and the
  specialised reduction loops) for every (redOp, data type) pair that executes:
  tests/reference.py tile_store (which bytes, which source element) combined
  with tests/reduce_reference.py (the arithmetic);
- the reduction loops on long, unaligned arrays for every bulk and tensor pair,
  at every vector level the CPU has (AVX-512 with AVX512_FP16, with AVX512_BF16, with
  neither, AVX2, SSE2, none: _core.simd_level, _core.simd_bf16, _core.simd_fp16), also
  with the host float environment set to another rounding mode (the reducer
  must fall back to its integer-only definition: docs/reductions.md).

Expected values come from the references, never from the code under test.
"""
import ctypes
import ctypes.util

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ptxasync import _core
from ptxasync.enums import DataType, RedOp, ReduceType

import reduce_reference as R  # noqa: E402
import reference as ref  # noqa: E402
from vector_levels import CPU_LEVEL, SIMD_NAMES  # noqa: E402
from test_properties import SETTINGS, _machine_with_tensor, _smem_extent, tiled_maps  # noqa: E402

SMEM = 64 * 1024
UT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@st.composite
def far_coords(draw, params):
    """Coordinates that put the box wholly outside, across an edge, or inside."""
    geo = ref._Geometry(params)
    cs = []
    for i in range(geo.rank):
        span = params["boxDim"][i] * params["elementStrides"][i]
        c = draw(st.sampled_from([-span - 3, -span // 2, 0, geo.gdim[i] - span // 2, geo.gdim[i],
                                  geo.gdim[i] + 5]))
        if i == 0 and geo.interleave == 0:
            per16 = 16 // geo.esize if geo.esize < 16 else 1
            c = (c // per16) * per16 if c >= 0 else -((-c) // per16) * per16
        cs.append(int(c))
    return cs


def _load_matches_reference(m, buf, tm, params, coords, dst):
    """Load tm at coords into dst (shared memory prefilled with 0xA5) and compare
    every shared byte with tests/reference.py's tile_load of the same load."""
    m.smem[:] = 0xA5
    bar = m.mbarrier(0).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    m.cp_async_bulk_tensor_load(tm, coords, dst, bar)
    assert bar.try_wait(0)
    want = bytearray(b"\xa5" * SMEM)
    want[0:8] = bytes(m.smem[0:8])
    ref.tile_load(params, bytes(buf.bytes), buf.address, coords, want, dst)
    got = m.smem.copy()
    want = np.frombuffer(bytes(want), dtype=np.uint8)
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, (f"{params} coords={coords} dst={dst}: first difference at smem 0x{bad[0]:x}: "
                           f"model 0x{got[bad[0]]:02x}, reference 0x{want[bad[0]]:02x}")


@settings(max_examples=120, **SETTINGS)
@given(data=st.data())
def test_out_of_bounds_loads_match_reference(data):
    """OOB fill (zero and NaN, observation 3) and TF32 rounding (observation 4)
    of boxes wholly or partly outside the tensor, at 16-byte aligned destinations
    (a swizzle then starts mid-pattern): tests/reference.py tile_load."""
    params = data.draw(tiled_maps())
    if params["interleave_value"] == 0 and data.draw(st.integers(0, 3)):
        params["tensorDataType_value"] = data.draw(st.sampled_from([7, 11, 12, 9]))  # f32, tf32, bf16
        params["oobFill_value"] = data.draw(st.sampled_from([0, 1, 1]))
        es = ref.ELEM_SIZE[params["tensorDataType_value"]]
        params["boxDim"][0] = max(16 // es, params["boxDim"][0] // es * es)
        assume(0 < ref.tile_load_tx_bytes(params) <= 6144)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    m, buf, tm = _machine_with_tensor(params, rng)
    coords = data.draw(far_coords(params))
    assume(ref.tile_fault(params, coords, False) is None)
    extent = _smem_extent(params)
    dst = 16 * data.draw(st.integers(8, (SMEM - extent) // 16 - 8))
    _load_matches_reference(m, buf, tm, params, coords, dst)


@settings(max_examples=40, **SETTINGS)
@given(data=st.data())
def test_tf32_rows_of_one_line_match_reference(data):
    """TFLOAT32 loads whose rows are one whole 128-byte line in bounds (the
    vector rounding of copy/rows.h, pa_rows_line_tf32): random bits (NaN,
    infinities, subnormals, ties at bit 13 among them) rounded as
    tests/reference.py tile_load rounds them (observation 4), every swizzle;
    rows close together and rows over 2 KiB apart (the line mover's loops
    without and with software prefetch, copy/lines.c)."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    swizzle = data.draw(st.sampled_from([0, 1, 2, 3]))
    rows = data.draw(st.integers(1, 40))
    gd0 = data.draw(st.sampled_from([32, 40, 64, 96]))
    gd1 = data.draw(st.integers(rows, rows + 30))
    params = dict(tensorDataType_value=data.draw(st.sampled_from([11, 12])), globalDim=[gd0, gd1],
                  globalStrides=[gd0 * 4 + 16 * data.draw(st.integers(0, 2)) + data.draw(st.sampled_from([0, 4096]))],
                  boxDim=[{0: 32, 1: 8, 2: 16, 3: 32}[swizzle], rows], elementStrides=[1, 1],
                  interleave_value=0, swizzle_value=swizzle, oobFill_value=0)
    m, buf, tm = _machine_with_tensor(params, rng)
    words = buf.bytes[: gd1 * params["globalStrides"][0]].view(np.uint32)
    special = rng.integers(0, 6, words.size)                  # a sixth each: NaN, inf, subnormal, a tie
    words[special == 0] = 0x7F800000 | rng.integers(1, 1 << 23, int((special == 0).sum()), dtype=np.uint32)
    words[special == 1] = 0x7F800000
    words[special == 2] &= 0x807FFFFF
    words[special == 3] = (words[special == 3] & ~np.uint32(0x1FFF)) | np.uint32(0x1000)
    words |= (rng.integers(0, 2, words.size, dtype=np.uint32) << 31)
    c0 = 8 * data.draw(st.integers(0, (gd0 - params["boxDim"][0]) // 8))
    coords = [c0, data.draw(st.integers(0, gd1 - rows))]
    dst = 1024 * data.draw(st.integers(1, 8))
    _load_matches_reference(m, buf, tm, params, coords, dst)


TENSOR_PAIRS = sorted(R.TENSOR_EXECUTES)


@settings(max_examples=60, **SETTINGS)
@given(data=st.data())
def test_tensor_reduce_matches_references(data):
    """cp.reduce.async.bulk.tensor through the machine, every executing pair:
    the bytes a store would write (tile_store) get dst = dst op src element by
    element (reduce_tensor_ref); no other byte changes."""
    op, dt = data.draw(st.sampled_from(TENSOR_PAIRS))
    es = ref.ELEM_SIZE[dt]
    swizzle = data.draw(st.sampled_from([0, 1, 2, 3]))
    inner = data.draw(st.sampled_from([16, 32, 64, 128] if swizzle == 0 else [16, {1: 32, 2: 64, 3: 128}[swizzle]]))
    rows = data.draw(st.integers(1, 24))
    gd0 = data.draw(st.integers(1, 3 * inner // es))
    gd1 = data.draw(st.integers(1, 40))
    stride = -(-gd0 * es // 16) * 16 + 16 * data.draw(st.integers(0, 2))
    params = dict(tensorDataType_value=dt, globalDim=[gd0, gd1], globalStrides=[stride],
                  boxDim=[inner // es, rows], elementStrides=[1, 1], interleave_value=0,
                  swizzle_value=swizzle, oobFill_value=0)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    m, buf, tm = _machine_with_tensor(params, rng)
    before = bytes(buf.bytes)
    nbytes = buf.bytes.size
    c0 = data.draw(st.integers(0, gd0 + 2)) // (16 // es) * (16 // es)
    coords = [c0, data.draw(st.integers(0, gd1 + 2))]
    src = 128 * data.draw(st.integers(0, 64))
    m.smem[:] = rng.integers(0, 256, SMEM, dtype=np.uint8)
    smem = bytes(m.smem)
    m.cp_reduce_async_bulk_tensor(op, tm, coords, src)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    stored = bytearray(before)                     # the source element of every written byte
    ref.tile_store(params, stored, buf.address, coords, smem, src)
    mask = bytearray(nbytes)                        # which bytes are written
    ref.tile_store(params, mask, buf.address, coords, b"\x01" * SMEM, src)
    ut = UT[es]
    d = np.frombuffer(before, dtype=ut, count=nbytes // es)
    s = np.frombuffer(bytes(stored), dtype=ut, count=nbytes // es)
    written = np.frombuffer(bytes(mask), dtype=ut, count=nbytes // es) != 0
    want = d.copy()
    if written.any():
        want[written] = R.reduce_tensor_ref(op, dt, d[written], s[written])
    got = np.frombuffer(bytes(buf.bytes), dtype=ut, count=nbytes // es)
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, (f"{op} {DataType(dt).name} {params} coords={coords}: element {bad[0]}: "
                           f"model 0x{int(got[bad[0]]):x}, reference 0x{int(want[bad[0]]):x}")
    assert bytes(buf.bytes)[len(d) * es:] == before[len(d) * es:]


RT_BYTES = {"b32": 4, "b64": 8, "u32": 4, "s32": 4, "u64": 8, "s64": 8, "f16": 2, "bf16": 2, "f32": 4,
            "f64": 8}


def _all_pairs():
    bulk = [(op.name.lower(), t.name.lower(), False) for op in RedOp for t in ReduceType
            if t.name.lower() in R.BULK_VALID.get(op.name.lower(), ())]
    tensor = [(op, dt, True) for op, dt in TENSOR_PAIRS]
    return bulk + tensor


def _elem_bits(typ, tensor):
    if tensor:
        return ref.ELEM_SIZE[typ] * 8
    return RT_BYTES[typ] * 8


def _check_long(op, typ, tensor, rng, n, offset):
    bits = _elem_bits(typ, tensor)
    ut = UT[bits // 8]
    raw = rng.integers(0, 2**63, size=(2, n), dtype=np.int64).astype(np.uint64)
    # half the elements small (subnormals, cancellation), half random bits
    raw[:, ::2] >>= rng.integers(0, bits, size=(2, (n + 1) // 2)).astype(np.uint64)
    dst = (raw[0] & np.uint64((1 << bits) - 1)).astype(ut)
    src = (raw[1] & np.uint64((1 << bits) - 1)).astype(ut)
    src[1::3] = dst[1::3] ^ ut(1 << (bits - 1))      # exact cancellation
    want = R.reduce_tensor_ref(op, typ, dst, src) if tensor else R.reduce_ref(op, typ, dst, src)
    # unaligned destination and source inside byte buffers
    dbuf = bytearray(n * dst.itemsize + offset)
    dbuf[offset:] = dst.tobytes()
    got = np.frombuffer(dbuf, dtype=np.uint8)[offset:]
    sbytes = bytes(offset + 1) + src.tobytes()
    code = int(DataType(typ)) if tensor else int(ReduceType[typ.upper()])
    _core.reduce_apply(int(RedOp[op.upper()]), code, got, sbytes[offset + 1:], tensor)
    got = np.frombuffer(bytes(got), dtype=ut)
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, (f"{op}.{typ} ({'tensor' if tensor else 'bulk'}): d=0x{int(dst[bad[0]]):x} "
                           f"s=0x{int(src[bad[0]]):x}: C 0x{int(got[bad[0]]):x}, "
                           f"reference 0x{int(want[bad[0]]):x}")


EXTENSIONS = ["avx512_bf16", "avx512_fp16"]
HAS = {"avx512_bf16": _core.simd_bf16()[1], "avx512_fp16": _core.simd_fp16()[1]}


@pytest.fixture(params=range(len(SIMD_NAMES) + len(EXTENSIONS)), ids=SIMD_NAMES + EXTENSIONS)
def simd_level(request):
    """Run with the vector level capped (every level computes the same bytes);
    the AVX512 level without, then with AVX512_BF16 (the bf16 add's narrowing),
    then with AVX512_FP16 (the f16 add)."""
    level = min(request.param, 3)
    ext = (SIMD_NAMES + EXTENSIONS)[request.param] if request.param > 3 else None
    if level > CPU_LEVEL or (ext and not HAS[ext]):
        pytest.skip(f"this CPU has no {(SIMD_NAMES + EXTENSIONS)[request.param]}")
    _core.simd_level(level)
    _core.simd_bf16(int(ext == "avx512_bf16"))
    _core.simd_fp16(int(ext == "avx512_fp16"))
    assert _core.simd_level()[0] == SIMD_NAMES[level]
    assert (_core.simd_bf16()[0], _core.simd_fp16()[0]) == (ext == "avx512_bf16", ext == "avx512_fp16")
    yield request.param
    _core.simd_level(len(SIMD_NAMES) - 1)
    _core.simd_bf16(1)
    _core.simd_fp16(1)


@pytest.mark.parametrize("op,typ,tensor", _all_pairs(), ids=lambda v: str(v))
def test_reduction_loops_on_long_unaligned_arrays(op, typ, tensor, simd_level):
    """The specialised loops (vector blocks, then the tail) == the reference."""
    @settings(max_examples=4, deadline=None)
    @given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 160), offset=st.integers(0, 7))
    def prop(seed, n, offset):
        _check_long(op, typ, tensor, np.random.default_rng(seed), n, offset)
    prop()


@pytest.mark.parametrize("typ,tensor", [("f16", False), ("bf16", False), ("f32", False), (6, True),
                                        (9, True), (7, True), (8, True)], ids=str)
def test_float_add_loops_on_many_values(typ, tensor, simd_level):
    """Float add through the vector loop of the level against the reference:
    8,192 destinations (16-bit: a random sample of every value; 32-bit: random
    bits, half of them shifted down to small and subnormal values) with random
    sources, a third exact cancellations, a third near twins (rounding of 2d).
    csrc/tests/test_reduce_fast.c sweeps every 16-bit destination."""
    rng = np.random.default_rng(11 + simd_level)
    bits = _elem_bits(typ, tensor)
    ut = UT[bits // 8]
    dst = rng.integers(0, 1 << bits, 8192, dtype=np.uint64).astype(ut)
    if bits == 32:
        dst[::2] >>= rng.integers(0, 32, len(dst[::2])).astype(ut)
    src = rng.integers(0, 1 << bits, len(dst), dtype=np.uint64).astype(ut)
    src[::3] = dst[::3] ^ ut(1 << (bits - 1))                            # exact cancellation
    src[1::3] = dst[1::3] + ut(1)                                        # rounding of 2d
    want = R.reduce_tensor_ref("add", typ, dst, src) if tensor else R.reduce_ref("add", typ, dst, src)
    got = dst.copy()
    code = int(DataType(typ)) if tensor else int(ReduceType[typ.upper()])
    _core.reduce_apply(int(RedOp.ADD), code, got, src.tobytes(), tensor)
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, (f"add {typ}: d=0x{int(dst[bad[0]]):x} s=0x{int(src[bad[0]]):x}: "
                           f"C 0x{int(got[bad[0]]):x}, reference 0x{int(want[bad[0]]):x}")


def _libm():
    name = ctypes.util.find_library("m")
    if not name:
        pytest.skip("no C maths library to change the rounding mode with")
    lib = ctypes.CDLL(name)
    return lib


# <fenv.h> rounding-mode values on x86 and aarch64
FE_MODES = {"x86_64": {"towardzero": 0xC00, "upward": 0x800, "downward": 0x400},
            "aarch64": {"towardzero": 0xC00000, "upward": 0x400000, "downward": 0x800000}}


@pytest.mark.parametrize("mode", ["towardzero", "upward", "downward"])
def test_reductions_ignore_the_host_rounding_mode(mode):
    """docs/reductions.md, host independence: with this thread's rounding mode
    changed, every float add still rounds to nearest-even as the hardware does."""
    import platform
    modes = FE_MODES.get(platform.machine())
    if modes is None:
        pytest.skip("rounding-mode constants unknown for this architecture")
    libm = _libm()
    old = libm.fegetround()
    assert libm.fesetround(modes[mode]) == 0
    try:
        rng = np.random.default_rng(7)
        for op, typ, tensor in _all_pairs():
            if op == "add" and (typ in ("f16", "bf16", "f32", "f64") or typ in (6, 7, 8, 9, 10, 11, 12)):
                _check_long(op, typ, tensor, rng, 257, 3)
    finally:
        libm.fesetround(old)


@pytest.mark.parametrize("switch", ["simd_bf16", "simd_fp16"])
@pytest.mark.parametrize("bad", [2, -2, 5])
def test_extension_switch_rejects_other_values(switch, bad):
    """on is 0, 1 or -1: anything else is named in the error and changes nothing."""
    fn = getattr(_core, switch)
    before = fn()
    with pytest.raises(ValueError, match=rf"{switch}\(on={bad}\): on is 0 \(off\), 1 \(on\) or -1"):
        fn(bad)
    assert fn() == before
