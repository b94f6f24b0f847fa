"""Bad arguments found by fuzzing the Python API: each is refused with an error
that names the parameter and says what to give, never a SystemError, a silent
truncation, a masked address or a wrong write; helpers that could run for
minutes on a huge input are bounded."""
import ctypes
import itertools

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import _core
from ptxasync.arrays import _DLManagedTensor, as_array

BAD = [2**70, -2**70, 1.5, None, "7", [2**70], [1.5], float("nan")]


# --- every parse stops at the first error ---------------------------------------

def test_im2col_corner_parsed_after_a_failed_one_keeps_the_first_error():
    # the upper corner used to be parsed after the lower one failed, clearing its error
    for lower in ([2**70], [-2**70], [1.5], [None], 7, [2**64], [2**63]):
        with pytest.raises((OverflowError, TypeError)) as e:
            pa.TensorMap.im2col("f32", 0, [16, 8, 8], [64, 512], lower, [-1], 16, 4)
        assert "lower" in str(e.value).lower()
    with pytest.raises(OverflowError, match=r"pixelBoxLowerCorner\[0\] does not fit in 64 bits"):
        pa.TensorMap.im2col("f32", 0, [16, 8, 8], [64, 512], [2**70], [-1], 16, 4)
    with pytest.raises(OverflowError, match=r"pixelBoxUpperCorner\[0\] = 2147483648"):
        pa.TensorMap.im2col("f32", 0, [16, 8, 8], [64, 512], [0], [2**31], 16, 4)


def _binding_calls():
    """(name, function, valid arguments) for the binding's functions that parse
    several operands: each argument position is then given bad values."""
    m = pa.Machine(ctas=2, smem_bytes=4096, target="sm_100a")
    g = m.alloc(4096)
    tm = pa.TensorMap.tiled("u8", g.address, [64, 8], [64], [16, 2])
    im = pa.TensorMap.im2col("f32", g.address, [16, 8, 8], [64, 512], [0], [0], 16, 4)
    recs = pa.OpList()
    recs.mbarrier_init(0, 1)
    M = m
    return [
        ("encode_tiled", pa.TensorMap._encode_tiled,
         [0, 2, g.address, [64, 8], [64], [16, 2], [1, 1], 0, 0, 0, 0]),
        ("encode_im2col", pa.TensorMap._encode_im2col,
         [7, 3, g.address, [16, 8, 8], [64, 512], [0], [0], 16, 4, [1, 1, 1], 0, 0, 0, 0]),
        ("encode_im2col_wide", _core.encode_im2col_wide,
         [pa.TensorMap, 6, 4, g.address, [64, 9, 7, 4], [128, 1152, 8064], 0, 0, 64, 16, [1, 1, 1, 1], 0, 0,
          3, 0, 0, 0, "sm_100a"]),
        ("tensor load", M.cp_async_bulk_tensor_load,
         [tm, [0, 0], 0, 1024, 0, 0, "shared::cta", None, "tile", None, 0, 0, None]),
        ("tensor load im2col", M.cp_async_bulk_tensor_load,
         [im, [0, 0, 0], 0, 1024, 0, 0, "shared::cluster", 3, "im2col", [0], 0, 0, 1]),
        ("tensor load im2col::w", M.cp_async_bulk_tensor_load,
         [im, [0, 0, 0], 0, 1024, 0, 0, "shared::cta", None, "im2col::w", None, 1, 1, None]),
        ("tensor_store", M._tensor_store, [0, 0, tm, "tile", [0, 0], 0]),
        ("tensor_store reduce", M._tensor_store, [0, 0, tm, 0, [0, 0], 0, 0]),
        ("prefetch_tensor", M._prefetch_tensor, [tm, 0, [0, 0], None]),
        ("bulk_reduce", M._bulk_reduce, [0, 0, False, g.address, 0, 16, 0, 0, 0, False]),
        ("cp_async", M._cp_async, [0, 0, 0, g.address, 16, False, 16, False, 0, False]),
        ("bulk_copy", M._bulk_copy, [0, 0, 0, 0, g.address, 16, 1024, False, 0, False, 0, False]),
        ("st_async", M._st_async, [0, 0, 1 << 24, 1 << 24 | 1024, b"\0\0\0\0", 4, 1]),
        ("st_async_release", M._st_async_release, [0, 0, g.address, b"\0", False, False]),
        ("st_bulk", M._st_bulk, [0, 0, 0, 8, 0]),
        ("tile_load_batch", M._tile_load_batch,
         [0, 0, tm, np.zeros((1, 5), np.int32), np.zeros(1, np.uint32), 1024]),
        ("replay", M._replay, [recs.records, ()]),
        ("mbar_init", M._mbar_init, [0, 1024, 1]),
        ("mbar_arrive", M._mbar_arrive, [0, 1024, 1, 0, 0]),
        ("mbar_why", M._mbar_why, [0, 1024, 0]),
        ("check_read", M._check_read, [0, 0, 0, 0, 16]),
        ("exit", M._exit, [0, 0]),
        ("add_buffer", M._add_buffer, [1 << 40, np.zeros(16, np.uint8)]),
        ("pick_address", M._pick_address, [16, 256]),
        ("set_policy", M._set_policy, [0, 0]),
        ("address_table", tm._address_table, [0]),
        ("inverse", tm._inverse, [0, 0]),
        ("replace", tm.copy()._replace, [0, 0, g.address]),
        ("wgmma_desc_encode", _core.wgmma_desc_encode, [0, 0, 0, 0, 0, 0]),
        ("bank_wavefronts", _core.bank_wavefronts, [0, 4, 1, list(range(0, 128, 4))]),
        ("ldmatrix_map", _core.ldmatrix_map, [1, False, list(range(0, 512, 16))]),
        ("swizzle_addr", _core.swizzle_addr, [3, 0]),
        ("reduce_apply", _core.reduce_apply, [0, 0, bytearray(4), b"\0\0\0\0", False]),
    ]


def test_every_binding_call_with_two_bad_arguments_raises_the_first_error():
    # a parse after a failed one must not clear or replace its error (SystemError: returned
    # NULL without setting an exception); every pair of positions, several bad values
    calls = _binding_calls()
    for name, fn, args in calls:
        for i, j in itertools.combinations(range(len(args)), 2):
            # the second value of a pair is bad, or a sequence that parses in the fast path
            for bi, bj in ((BAD[0], BAD[5]), (BAD[2], BAD[6]), (BAD[5], BAD[0]), (BAD[4], BAD[3]),
                           (BAD[5], [-1]), (BAD[6], [2**64 - 1]), (BAD[1], [0, -1])):
                a = list(args)
                a[i], a[j] = bi, bj
                try:
                    fn(*a)
                except SystemError as e:   # pragma: no cover - the failure this guards
                    pytest.fail(f"{name} args {i}, {j} = {bi!r}, {bj!r}: SystemError {e}")
                except (pa.PtxAsyncError, TypeError, ValueError, OverflowError, IndexError, BufferError) as e:
                    assert str(e), f"{name}: {type(e).__name__} without a message"


# --- st.async: bytes are bytes ---------------------------------------------------

def test_st_async_release_bytes_are_the_register_bytes():
    m = pa.Machine(target="sm_100a")
    g = m.alloc(64)
    m.st_async_release(g.address, b"7", type="u8")
    m.st_async_release(g.address + 4, b"\x01\x02\x03\x04", type="u32")
    m.st_async_release(g.address + 8, bytearray(b"\xff\xfe"), type="b16")
    m.st_async_release(g.address + 16, np.array([9, 8, 7, 6, 5, 4, 3, 2], np.uint8), type="u64")
    m.run()
    assert g.bytes[0] == 0x37   # b"7" is the byte 0x37, not the number 7
    assert g.bytes[4:8].tolist() == [1, 2, 3, 4] and g.bytes[8:10].tolist() == [0xff, 0xfe]
    assert g.bytes[16:24].tolist() == [9, 8, 7, 6, 5, 4, 3, 2]


def test_st_async_release_bytes_must_be_one_register():
    m = pa.Machine(target="sm_100a")
    g = m.alloc(64)
    for value, t in ((b"65", "b8"), (b"", "u8"), (b"\x01\x02\x03", "u32"), (b"\0" * 16, "u64")):
        with pytest.raises(ValueError, match=f"stores .* not {len(value)}"):
            m.st_async_release(g.address, value, type=t)
    assert m.pending == 0 and not g.bytes.any()


def test_st_async_bytes_are_the_register_bytes_and_their_length_is_checked():
    m = pa.Machine(ctas=2, smem_bytes=4096)
    bar = m.mbarrier(1024, cta=1).init(1)
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    bar.arrive_expect_tx(8)
    dst = pa.mapa(64, 1)
    m.st_async(dst, b"\x01\x02\x03\x04\x05\x06\x07\x08", bar.addr, type="u32")   # .v2
    m.run()
    assert m.ctas[1].smem[64:72].tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    for value in (b"7", b"\x01\x02\x03", b"\0" * 12, b"\0" * 32, b""):
        with pytest.raises(ValueError, match="raw bytes are not the register"):
            m.st_async(dst, value, bar.addr, type="u32")
    assert m.pending == 0


def test_st_async_empty_value_says_what_to_give():
    m = pa.Machine(ctas=2, smem_bytes=4096)
    for empty in ([], (), np.zeros(0)):
        with pytest.raises(ValueError, match="needs a value: one number, a sequence of 2"):
            m.st_async(pa.mapa(64, 1), empty, pa.mapa(1024, 1))


# --- floats are refused, never truncated -------------------------------------------

def _wide(g, **kw):
    args = dict(dtype="f16", global_address=g.address, global_dim=[64, 9, 7, 4],
                global_strides=[128, 1152, 8064], pixel_box_lower_w=0, pixel_box_upper_w=0,
                channels_per_pixel=64, pixels_per_column=16)
    args.update(kw)
    return pa.TensorMap.im2col_wide(**args)


def test_im2col_wide_refuses_floats_naming_the_parameter():
    m = pa.Machine(target="sm_100a")
    g = m.alloc(64 * 9 * 7 * 4 * 2)
    _wide(g)
    for name, v in (("channels_per_pixel", 64.7), ("pixels_per_column", 16.5), ("rank", 4.9),
                    ("global_address", float(g.address)), ("pixel_box_lower_w", 0.5), ("mode", 0.0)):
        with pytest.raises(TypeError, match=f"{name} must be an integer, not float"):
            _wide(g, **{name: v})


def test_w_halo_and_w_offset_refuse_floats_nan_and_strings_naming_them():
    m = pa.Machine(target="sm_100a")
    g = m.alloc(64 * 9 * 7 * 4 * 2)
    wm = _wide(g)
    bar = m.mbarrier(1024).init(1)
    for name, v in (("w_halo", 1.9), ("w_halo", float("nan")), ("w_offset", "3"), ("w_offset", None)):
        with pytest.raises(TypeError, match=f"{name} must be an integer"):
            m.cp_async_bulk_tensor_load(wm, (0, 0, 0, 0), 0, bar, load_mode="im2col::w", **{name: v})
        with pytest.raises(TypeError, match=f"{name} must be an integer"):
            m.cp_async_bulk_prefetch_tensor(wm, (0, 0, 0, 0), load_mode="im2col::w", **{name: v})
    with pytest.raises(OverflowError, match="w_offset = -1 does not fit in .u16"):
        m.cp_async_bulk_tensor_load(wm, (0, 0, 0, 0), 0, bar, load_mode="im2col::w", w_offset=-1)
    with pytest.raises(TypeError, match="cta_group must be an integer"):
        m.cp_async_bulk_tensor_load(wm, (0, 0, 0, 0), 0, bar, load_mode="im2col::w", cta_group=1.5)
    assert m.pending == 0 and m.prefetches == []


def test_oplist_refuses_floats_and_operands_that_do_not_fit_when_recorded():
    m = pa.Machine()
    g = m.alloc(4096)
    tm = pa.TensorMap.tiled("u8", g.address, [64, 8], [64], [16, 2])
    ops = pa.OpList()
    bad = [
        (TypeError, r"coords\[0\] must be an integer, not float",
         lambda: ops.cp_async_bulk_tensor_load(tm, (0.9, 0.2), 0, 1024)),
        (TypeError, "dst must be an integer, not float", lambda: ops.cp_async_bulk_tensor_load(tm, (0, 0), 128.7, 1024)),
        (TypeError, "coords must be a sequence", lambda: ops.cp_async_bulk_tensor_load(tm, 7, 0, 1024)),
        (TypeError, "wait_group N must be an integer, not float", lambda: ops.cp_async_bulk_wait_group(1.5)),
        (ValueError, r"wait_group N must be in \[0, 2\^32\); got -1", lambda: ops.cp_async_bulk_wait_group(-1)),
        (ValueError, r"count must be in \[0, 2\^32\); got 1180591620717411303424", lambda: ops.mbarrier_init(8, 2**70)),
        (TypeError, "parity must be an integer", lambda: ops.mbarrier_wait(8, 1.0)),
        (ValueError, r"coords\[1\] must be in \[-2\^31, 2\^31\)", lambda: ops.cp_async_bulk_tensor_store(tm, (0, 2**31), 0)),
        (ValueError, "cta must be in", lambda: ops.mbarrier_arrive(8, cta=-1)),
        (TypeError, "tx must be an integer", lambda: ops.mbarrier_expect_tx(8, 2.5)),
        (ValueError, r"dst must be in \[0, 2\^63\)", lambda: ops.cp_reduce_async_bulk("add", "u32", 2**63, 0, 16)),
        (TypeError, "size must be an integer", lambda: ops.cp_reduce_async_bulk("add", "u32", g.address, 0, 16.0)),
        (ValueError, r"cta_mask must be in \[0, 2\^16\)",
         lambda: ops.cp_async_bulk_tensor_load(tm, (0, 0), 0, 1024, cta_mask=1 << 16)),
    ]
    for exc, msg, f in bad:
        with pytest.raises(exc, match=msg):
            f()
    assert len(ops) == 0   # nothing half-recorded


def test_replay_refuses_records_that_are_not_int64():
    m = pa.Machine()
    g = m.alloc(4096)
    tm = pa.TensorMap.tiled("u8", g.address, [64, 8], [64], [16, 2])
    # float64 zeros used to replay as a .tile load (kind 0) of map 0
    for recs in (np.zeros((1, 16)), np.zeros((1, 16), np.uint64), np.zeros((2, 16), np.int32)):
        with pytest.raises(TypeError, match=f"records must be an array of int64, not {recs.dtype}"):
            m._replay(recs, (tm,))
    with pytest.raises(TypeError, match="coords must be an array of int32, not float32"):
        m._tile_load_batch(0, 0, tm, np.zeros((1, 5), np.float32), np.zeros(1, np.uint32), 1024)
    with pytest.raises(TypeError, match="dst must be an array of uint32, not int32"):
        m._tile_load_batch(0, 0, tm, np.zeros((1, 5), np.int32), np.zeros(1, np.int32), 1024)
    assert m.pending == 0 and not m.smem.any()


# --- NumPy integers are integers ------------------------------------------------------

def test_numpy_integers_are_accepted_wherever_ints_are():
    m = pa.Machine(seed=np.int64(3), smem_bytes=np.uint32(4096), ctas=np.int8(1))
    m.set_policy("random", np.uint64(7))
    b = m.register(np.zeros(64, np.uint8), address=np.int64(1 << 20))
    assert b.address == 1 << 20
    c = m.register(np.zeros(64, np.uint8), align=np.int64(4096))
    assert c.address % 4096 == 0
    d = m.alloc(np.int32(32), address=np.uint64(1 << 30))
    assert d.address == 1 << 30 and m._pick_address(np.uint64(16), np.uint64(256)) % 256 == 0
    tm = pa.TensorMap.tiled("u8", np.uint64(b.address), [np.int64(64)], [], [np.int16(16)])
    m.cp_async_bulk_tensor_load(tm, [np.int32(0)], np.uint32(0), m.mbarrier(np.int64(1024)).init(np.int8(1)))
    m.run()


def test_a_bad_number_names_the_parameter_not_its_position():
    m = pa.Machine()
    for call, name in ((lambda: m.register(np.zeros(64, np.uint8), address=1.5), "address"),
                       (lambda: m.register(np.zeros(64, np.uint8), align="256"), "align"),
                       (lambda: pa.Machine(seed=1.5), "seed"),
                       (lambda: m.set_policy("random", None), "seed"),
                       (lambda: m._trace_events(1.5), "start"),
                       (lambda: m._exit(0, 2.5), "thread"),
                       (lambda: m._mbar_why(0, "8", 0), "addr")):
        with pytest.raises(TypeError, match=f"^{name} must be an integer") as e:
            call()
        assert "argument" not in str(e.value)
    with pytest.raises(OverflowError, match=r"^seed must be in \[0, 2\^64\)"):
        m.set_policy("random", -1)
    assert m._buffers == []


# --- addresses are never masked ---------------------------------------------------------

def test_a_cluster_mbarrier_offset_outside_the_window_is_refused_not_masked():
    m = pa.Machine(ctas=2, smem_bytes=4096)
    for off in (-(2**24) + 16, -16, 2**24, 2**24 + 16):
        with pytest.raises(ValueError, match="outside a CTA's 16 MiB shared::cluster window"):
            m.mbarrier(off, cta=1)
    with pytest.raises(TypeError, match="offset must be an integer"):
        m.mbarrier(16.0, cta=1)
    for addr, rank in ((-16, 0), (2**32, 0), (16, 256), (16, -1)):
        with pytest.raises(ValueError, match="does not fit"):
            pa.mapa(addr, rank)
    assert m.mbarrier(16, cta=1).addr == 1 << 24 | 16
    assert not m.ctas[1].smem.any()


# --- bounded helpers ----------------------------------------------------------------------

def test_render_chunks_and_chunk_map_refuse_huge_or_non_integer_input():
    with pytest.raises(ValueError, match=r"lines must be in \[1, 2048\]"):
        pa.layout.render_chunks(3, 471, 2**24 + 8)
    for base in (1.5, float("nan"), "0"):
        with pytest.raises(TypeError, match="base must be an integer"):
            pa.layout.chunk_map(3, base)
    with pytest.raises(ValueError, match="not inside the 32-bit shared address space"):
        pa.layout.chunk_map(3, -128)
    with pytest.raises(ValueError, match="shared addresses are 32-bit unsigned integers, not float64"):
        pa.layout.swizzle_address(3, np.array([1.5]))
    with pytest.raises(ValueError, match="shared addresses are 32-bit unsigned integers"):
        pa.layout.swizzle_address(3, np.array([-16]))
    assert pa.layout.chunk_map(3, 0, 2048).shape == (2048, 8)
    assert pa.layout.chunk_map(3, 128, 1).dtype.kind == "u"


def _huge_box_map():
    # the encoder refuses such a box; tensormap.replace stores it (as the hardware does)
    tm = pa.TensorMap.tiled("f64", 1 << 20, [256] * 5, [2048, 2048 * 256, 2048 * 256**2, 2048 * 256**3], [2] * 5)
    for o in range(5):
        tm.replace("box_dim", 256, ord=o)
    return tm


def test_smem_addresses_refuses_a_box_no_shared_memory_holds():
    tm = _huge_box_map()
    assert tm.box_bytes == 8 * 256**5
    with pytest.raises(ValueError, match="the box has 1099511627776 elements .* use smem_element"):
        tm.smem_addresses()
    assert tm.smem_element(0) is not None   # single addresses still answer


def test_repr_html_of_a_huge_box_is_the_table_and_a_note():
    tm = _huge_box_map()
    h = tm._repr_html_()
    assert "<table>" in h and "no layout picture" in h and len(h) < 10000
    assert len(pa.layout.render_box(tm, max_lines=16).splitlines()) == 16
    with pytest.raises(ValueError, match="max_lines"):
        pa.layout.render_box(tm, max_lines=2**40)


# --- messages that say what to do ------------------------------------------------------------

def test_sequence_parameters_given_a_number_say_what_they_take():
    m = pa.Machine()
    g = m.alloc(8 * 8 * 16 * 4)
    bar = m.mbarrier(1024).init(1)
    im = pa.TensorMap.im2col("f32", g.address, [16, 8, 8], [64, 512], [0], [0], 16, 4)
    tm = pa.TensorMap.tiled("u8", g.address, [64, 8], [64], [16, 2])
    with pytest.raises(TypeError, match=r"im2col_offsets must be a sequence of rank - 2 integers"):
        m.cp_async_bulk_tensor_load(im, (0, 0, 0), 0, bar, load_mode="im2col", im2col_offsets=7)
    with pytest.raises(TypeError, match="box_shape .* must be a sequence of integers, got 15"):
        pa.TensorMap.from_array(np.zeros((16, 16), np.uint8), 15, g.address)
    with pytest.raises(TypeError, match="tensorCoords must be a sequence of integers, not int"):
        m.cp_async_bulk_tensor_load(tm, 7, 0, bar)
    with pytest.raises(TypeError, match="coords must be a sequence of integers"):
        m.cp_async_bulk_prefetch_tensor(tm, 7)
    assert m.pending == 0


class _Legacy:
    """A producer whose __dlpack__ gives a legacy (pre-1.0) capsule."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_a_legacy_dlpack_capsule_refusal_says_what_to_do():
    m = pa.Machine()
    with pytest.raises(ValueError, match="legacy DLPack capsule .* read-only: use a producer"):
        m.register(_Legacy(np.zeros(64, np.uint8)))
    with pytest.raises(ValueError, match=r"read-only .* np.array\(x\)"):
        m.register(np.frombuffer(b"\0" * 64, np.uint8))
    with pytest.raises(ValueError, match="C-contiguous .*np.ascontiguousarray"):
        m.register(np.zeros(64, np.uint8)[::2])
    assert m._buffers == []


class _BF16:
    """A bf16 DLPack producer (NumPy has no bf16: as_array reads the capsule itself)."""

    def __init__(self, base, offset, shape, strides):
        self.base = base   # uint16 storage
        t = _DLManagedTensor()
        t.dl_tensor.data = base.ctypes.data + offset
        t.dl_tensor.device.device_type, t.dl_tensor.ndim = 1, len(shape)
        t.dl_tensor.dtype.code, t.dl_tensor.dtype.bits, t.dl_tensor.dtype.lanes = 4, 16, 1   # kDLBfloat
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._strides = (ctypes.c_int64 * len(shape))(*strides)
        t.dl_tensor.shape, t.dl_tensor.strides = self._shape, self._strides
        self._t = t

    def __dlpack__(self, **kw):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._t), b"dltensor", None)

    def __dlpack_device__(self):
        return (1, 0)


def test_a_negative_stride_dlpack_tensor_is_viewed_element_for_element():
    base = np.arange(16, dtype=np.uint16) + 100
    flipped = _BF16(base, 15 * 2, [16], [-1])          # t.flip(0) of a bf16 tensor
    a = as_array(flipped)
    assert a.tolist() == base[::-1].tolist() and a.ctypes.data == base.ctypes.data + 30
    two = _BF16(base, 3 * 2, [4, 4], [-1, 4])          # rows reversed, a negative outer stride
    want = np.lib.stride_tricks.as_strided(base[3:], shape=(4, 4), strides=(-2, 8))
    assert as_array(two).tolist() == want.tolist()
    with pytest.raises(ValueError, match="C-contiguous"):
        pa.Machine().register(flipped)


def test_ragged_batch_coordinates_and_a_low_rank_im2col_prefetch_say_what_is_wrong():
    m = pa.Machine()
    g = m.alloc(4096)
    tm = pa.TensorMap.tiled("u8", g.address, [64, 8], [64], [16, 2])
    with pytest.raises(ValueError, match=r"coords must be an \(n, rank\) integer array: every row the same length"):
        m.cp_async_bulk_tensor_load_batch(tm, [[0, 0], [0]], 0, 1024)
    with pytest.raises(ValueError, match=r"a .im2col copy needs an im2col tensor map \(this one is tiled\)"):
        m.cp_async_bulk_prefetch_tensor(tm, (0, 0), load_mode="im2col", im2col_offsets=[])
    assert m.pending == 0 and m.prefetches == []


# --- PTX text found by the fuzz_ptx harness ------------------------------------------------------

def test_ptx_unterminated_string_and_initialiser_running_to_the_end_are_syntax_errors():
    from ptxasync import ptx
    head = ".version 9.0\n.target sm_100a\n.address_size 64\n.visible .entry k(\n\t.param .u64 p\n)\n{\n"
    # an unterminated string printed on one line with what follows would change the module
    diags = ptx.check(head + '\t.reg .pred"\t%], 16;\n\tret;\n}\n')
    assert any(d.severity == "error" and "unterminated string" in d.message for d in diags)
    # an initialiser in a parameter list ran past the last token (heap read past the token array)
    text = head.replace(".param .u64 p", ".param .u32 k_=aram_2") + "\t.reg .b32 %r<4>;\n\tret;\n}\n"
    assert any(d.severity == "error" for d in ptx.check(text))
    assert any(d.severity == "error" for d in ptx.check(text[:-4]))


def test_free_refuses_a_buffer_a_pending_operation_may_touch():
    """A pending st.async.release (done by the end of the CTA) completed into the
    buffer registered at the same address after a free: a silent wrong write. Free
    is refused while an operation may touch the buffer, and the model is unchanged."""
    m = pa.Machine(ctas=1, target="sm_100a", policy="in_order")
    a = np.full(1, 7, np.uint8)
    b = m.register(a, address=0, align=16)
    other = m.register(np.zeros(16, np.uint8))
    m.st_async_release(b.address, 0, type="u8", scope="gpu")
    other.free()                                   # not touched by the store
    with pytest.raises(ValueError, match=r"operation #0 \(st.async.release.global\) is still pending"):
        b.free()
    c = np.full(1, 9, np.uint8)
    with pytest.raises(Exception):
        m.register(c, address=0, align=16)         # still registered: the address is taken
    m.run()
    assert a[0] == 0
    b.free()
    m.register(c, address=0, align=16)
    m.run()
    assert c[0] == 9


def test_free_refuses_a_buffer_a_pending_tensor_copy_may_touch():
    """A tensor copy's global side is its map's tensor: a pending load from it or store
    into it refuses the buffer's free (the check is the machine's, over every pending
    operation), and the model is unchanged."""
    m = pa.Machine(policy="in_order")
    src = m.register(np.arange(1024, dtype=np.uint8))
    dst = m.alloc(1024)
    tsrc = pa.TensorMap.tiled("u8", src.address, [64, 16], [64], [16, 4])
    tdst = pa.TensorMap.tiled("u8", dst.address, [64, 16], [64], [16, 4])
    bar = m.mbarrier(0).init(1)
    bar.arrive_expect_tx(64)
    m.cp_async_bulk_tensor_load(tsrc, (16, 8), 1024, bar)
    m.cp_async_bulk_tensor_store(tdst, (32, 4), 2048)
    for buf, kind in ((src, "load"), (dst, "store")):
        with pytest.raises(pa.InvalidValue, match=rf"\(cp.async.bulk.tensor \({kind}\)\) is still pending on "
                                                   rf"global \[0x{buf.address:x}, .*its tensor map's tensor"):
            buf.free()
    assert m.pending == 2 and len(m.pending_ops()) == 2
    m.run()
    src.free()
    dst.free()
