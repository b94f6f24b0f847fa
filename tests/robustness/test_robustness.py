"""Regression tests of bad input: each test is named after what it guards.

Every refusal leaves the model unchanged, names the parameter and its range,
and nothing is written outside an operation's range (issue: robustness)."""
import subprocess
import sys

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import _core
from ptxasync.machine import _hex


def _u8_map(address, rows=1, stride=None, cols=16, box_rows=1):
    strides = [] if rows == 1 and stride is None else [stride if stride is not None else cols]
    dims = [cols] if not strides else [cols, rows]
    box = [cols] if not strides else [cols, box_rows]
    return pa.TensorMap.tiled("uint8", address, dims, strides, box)


# --- registration -------------------------------------------------------------

def test_object_dtype_register_leaves_machine_unchanged():
    m = pa.Machine(smem_bytes=4096)
    with pytest.raises(TypeError, match="object"):
        m.register(np.empty(4, dtype=object), address=0x10000)
    assert m._buffers == []
    # nothing is registered at 0x10000: a store there faults, no object pointer is overwritten
    m.smem[:32] = 0xAB
    m.cp_async_bulk_tensor_store(_u8_map(0x10000, cols=32), [0], 0)
    m.cp_async_bulk_commit_group()
    with pytest.raises(pa.IllegalAddress):
        m.run()
    # and the address is still free
    assert m.register(np.zeros(32, np.uint8), address=0x10000).address == 0x10000


@pytest.mark.parametrize("obj", [np.empty(4, dtype=object),
                                 np.zeros(2, dtype=[("a", "u1"), ("o", "O")])],
                         ids=["object", "struct-with-object"])
def test_binding_refuses_object_buffers_and_keeps_nothing(obj):
    m = pa.Machine(smem_bytes=4096)
    with pytest.raises(TypeError, match="object pointers"):
        m._add_buffer(0x10000, obj)
    # no registration was kept: the same range registers cleanly
    m._add_buffer(0x10000, np.zeros(64, np.uint8))


def test_failed_add_buffer_registers_nothing():
    m = pa.Machine(smem_bytes=4096)
    a = np.zeros(64, np.uint8)
    before = sys.getrefcount(a)
    m.register(a, address=0x1000)
    with pytest.raises(pa.InvalidValue, match="overlaps"):
        m.register(np.zeros(64, np.uint8), address=0x1020)
    assert len(m._buffers) == 1
    m._buffers[0].free()
    assert sys.getrefcount(a) == before


def test_shared_memory_cannot_be_registered_as_global_memory():
    m = pa.Machine(ctas=2, smem_bytes=4096)
    for view in (m.smem, m.smem[100:200], m.cta(1).smem[4000:], m.cta(1).view(np.uint32, 4, 64)):
        with pytest.raises(ValueError, match="shared memory"):
            m.register(view)
    assert m._buffers == []
    # another machine's shared memory is ordinary host memory to this one
    other = pa.Machine(smem_bytes=4096)
    assert m.register(other.smem).nbytes == 4096


def test_free_removes_the_buffer_from_the_machine():
    m = pa.Machine(smem_bytes=4096)
    a = np.zeros(256, np.uint8)
    before = sys.getrefcount(a)
    for _ in range(1000):
        m.register(a).free()
    assert m._buffers == []
    assert sys.getrefcount(a) == before
    b = m.register(a)
    b.free()
    b.free()    # a second free is a no-op
    assert m._buffers == []


# --- the address search -------------------------------------------------------

_HANG = """
import numpy as np, ptxasync as pa
m = pa.Machine(smem_bytes=4096)
m.alloc(16, align=2**63)
for _ in range(2):
    try:
        m.alloc(16, align=2**63)
        raise SystemExit("second 2^63-aligned buffer")
    except pa.InvalidValue as e:
        assert "no free global address range" in str(e), e
m2 = pa.Machine(smem_bytes=4096)
m2.register(np.zeros(32, np.uint8), address=0)
m2.register(np.zeros(16, np.uint8), address=2**64 - 32)
b = m2.alloc(16)
assert 0 < b.address < 2**64 - 32, hex(b.address)
print("ok")
"""


def test_alloc_never_hangs_when_the_search_passes_2_64():
    r = subprocess.run([sys.executable, "-c", _HANG], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


def test_alloc_align_2_64_names_the_value():
    m = pa.Machine(smem_bytes=4096)
    with pytest.raises(OverflowError, match=r"align must be in \[0, 2\^64\); got 18446744073709551616"):
        m.alloc(16, align=2**64)
    with pytest.raises(pa.InvalidValue, match="alignment 48 is not a power of two"):
        m.alloc(16, align=48)
    with pytest.raises(TypeError, match="align"):
        m.alloc(16, align=256.0)
    assert m._buffers == []


# --- global address arithmetic ----------------------------------------------------

def _wrap_setup():
    """A map whose dim-1 offset 2^24 * (2^40 - 16) = 2^64 - 2^28 would wrap to
    2^28 bytes below its own buffer, where another buffer lives."""
    m = pa.Machine(smem_bytes=4096)
    base = 0x7f0000000000
    own = m.register(np.full(64, 0x11, np.uint8), address=base)
    victim = m.register(np.full(64, 0x5A, np.uint8), address=base - 2**28)
    tm = _u8_map(base, rows=2**25, stride=2**40 - 16)
    return m, own, victim, tm


def test_global_offset_past_2_64_faults_instead_of_reading_another_buffer():
    m, own, victim, tm = _wrap_setup()
    m.smem[:] = 0xEE
    bar = m.mbarrier(1024).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    m.cp_async_bulk_tensor_load(tm, [0, 2**24], 0, bar)
    with pytest.raises(pa.IllegalAddress, match="2\\^64"):
        m.run()
    assert (m.smem[:16] == 0xEE).all()


def test_global_offset_past_2_64_faults_instead_of_writing_another_buffer():
    m, own, victim, tm = _wrap_setup()
    m.smem[:16] = 0x77
    m.cp_async_bulk_tensor_store(tm, [0, 2**24], 0)
    m.cp_async_bulk_commit_group()
    with pytest.raises(pa.IllegalAddress):
        m.run()
    m2, own2, victim2, _ = _wrap_setup()
    tm2 = pa.TensorMap.tiled("uint32", own2.address, [4, 2**25], [2**40 - 16], [4, 1])
    m2.smem[:16] = 1
    m2.cp_reduce_async_bulk_tensor("add", tm2, [0, 2**24], 0)
    m2.cp_async_bulk_commit_group()
    with pytest.raises(pa.IllegalAddress):
        m2.run()
    assert (victim.bytes == 0x5A).all() and (own.bytes == 0x11).all()
    assert (victim2.bytes == 0x5A).all()


def test_global_address_plus_offset_past_2_64_faults():
    """globalAddress near 2^64 plus a row offset: no wrap to low addresses."""
    m = pa.Machine(smem_bytes=4096)
    low = m.register(np.full(64, 0x5A, np.uint8), address=0x1000)
    tm = _u8_map(2**64 - 2**20, rows=2**25, stride=2**40 - 16)
    m.smem[:64] = 9
    m.cp_async_bulk_tensor_store(tm, [0, 2**24], 0)
    m.cp_async_bulk_commit_group()
    with pytest.raises(pa.IllegalAddress):
        m.run()
    assert (low.bytes == 0x5A).all()


# --- checked integer conversion --------------------------------------------------

def _m():
    return pa.Machine(smem_bytes=4096)


CASES = {
    "register-address": (lambda m: m.register(np.zeros(16, np.uint8), address=2**64 + 0x1000),
                         r"address must be in \[0, 2\^64\); got 18446744073709555712"),
    "register-negative": (lambda m: m.register(np.zeros(16, np.uint8), address=-16),
                          r"address must be in \[0, 2\^64\); got -16"),
    "mbarrier-address": (lambda m: m.mbarrier(2**32 + 8).init(1),
                         r"addr must be in \[0, 2\^32\); got 4294967304"),
    "init-count": (lambda m: m.mbarrier(8).init(2**32 + 1),
                   r"count must be in \[0, 2\^32\); got 4294967297"),
    "tiled-global-address": (lambda m: pa.TensorMap.tiled("uint8", 2**64 + 16, [16], [], [16]),
                             r"global_address must be in \[0, 2\^64\); got 18446744073709551632"),
    "im2col-channels": (lambda m: pa.TensorMap.im2col("uint8", 0, [16, 4, 4], [16, 64], [0], [0],
                                                      2**32 + 16, 4),
                        r"channels_per_pixel must be in \[0, 2\^32\)"),
    "load-dst": (lambda m: m.cp_async_bulk_tensor_load(_u8_map(0x1000), [0], 2**32 + 1024, 8),
                 r"dst must be in \[0, 2\^32\); got 4294968320"),
    "load-cta": (lambda m: m.cp_async_bulk_tensor_load(_u8_map(0x1000), [0], 0, 8, cta=-1),
                 r"cta must be in \[0, 2\^32\); got -1"),
    "store-src": (lambda m: m.cp_async_bulk_tensor_store(_u8_map(0x1000), [0], -16),
                  r"src must be in \[0, 2\^32\); got -16"),
    "replace-global-address": (lambda m: _u8_map(0x1000).replace("global_address", -16),
                               r"value must be in \[0, 2\^64\); got -16"),
    "replace-ord": (lambda m: _u8_map(0x1000).replace("box_dim", 8, ord=2**31),
                    r"ord must be in \[-2\^31, 2\^31\); got 2147483648"),
    "bulk-reduce-size": (lambda m: m.cp_reduce_async_bulk("add", "u32", 0x1000, 0, 2**32),
                         r"size must be in \[0, 2\^32\); got 4294967296"),
    "wait-group-n": (lambda m: m.cp_async_bulk_wait_group(2**32),
                     r"n must be in \[0, 2\^32\); got 4294967296"),
    "machine-ctas": (lambda m: pa.Machine(ctas=2**32 + 1), r"nctas must be in \[0, 2\^32\)"),
    "policy-seed": (lambda m: m.set_policy("random", seed=2**64),
                    r"seed must be in \[0, 2\^64\)"),
    "smem-address-table": (lambda m: _u8_map(0x1000).smem_addresses(2**32),
                           r"dst must be in \[0, 2\^32\)"),
    "swizzle-addr": (lambda m: _core.swizzle_addr(0, -1), r"addr must be in \[0, 2\^32\); got -1"),
    "tf32": (lambda m: _core.tf32_round(2**32), r"bits must be in \[0, 2\^32\)"),
    "pending-count": (lambda m: _core.mbar_pending_count(-1), r"state must be in \[0, 2\^64\)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_of_range_integers_are_refused_naming_the_parameter(name):
    call, msg = CASES[name]
    m = _m()
    with pytest.raises(OverflowError, match=msg):
        call(m)
    assert m._buffers == [] and m.pending == 0


@pytest.mark.parametrize("bad", [1.5, "8", None])
def test_non_integer_arguments_are_type_errors_naming_the_parameter(bad):
    m = _m()
    with pytest.raises(TypeError, match="addr|count"):
        m._mbar_init(0, bad, 1)
    with pytest.raises(TypeError, match="global_address"):
        pa.TensorMap.tiled("uint8", bad, [16], [], [16])


def test_machine_size_is_not_truncated():
    with pytest.raises(TypeError, match="nctas must be an integer, not float"):
        pa.Machine(ctas=1.5)
    with pytest.raises(TypeError, match="smem_bytes"):
        pa.Machine(smem_bytes=4096.0)


def test_wrong_object_type_names_the_parameter():
    with pytest.raises(TypeError, match="tmap must be ptxasync._core.TensorMap, not str"):
        _m()._tensor_store(0, 0, "tm", 0, [0], 0)


# --- smaller ---------------------------------------------------------------------

def test_negative_addresses_print_with_a_sign():
    assert _hex(-16) == "-0x10" and _hex(255) == "0xff"
    m = pa.Machine(ctas=2, smem_bytes=4096)
    m.mbarrier(8).init(1)
    with pytest.raises(ValueError, match="dst -0x10 is not"):
        m.cp_reduce_async_bulk("add", "u32", -16, 0, 16, mbar=8, dst_space="shared::cluster")


def test_hasattr_on_a_map_that_does_not_decode_is_false():
    tm = _u8_map(0x1000, rows=4, stride=16)
    tm.replace("rank", 5)
    assert not tm.decodes
    assert hasattr(tm, "x") is False
    with pytest.raises(pa.InvalidValue, match="rank"):
        tm.box_dim
    assert "decodes" in repr(tm)


def test_keyword_arguments_are_checked_too():
    kw = dict(dtype=0, rank=1, global_dim=[16], global_strides=[], box_dim=[16], element_strides=[1],
              interleave=0, swizzle=0, l2_promotion=0, oob_fill=0)
    with pytest.raises(OverflowError, match=r"global_address must be in \[0, 2\^64\); got 18446744073709551616"):
        _core.TensorMap._encode_tiled(global_address=2**64, **kw)
    with pytest.raises(OverflowError, match=r"tensormap_address must be in \[0, 2\^64\); got -64"):
        _core.TensorMap._encode_tiled(global_address=0, tensormap_address=-64, **kw)
    with pytest.raises(OverflowError, match=r"smem_bytes must be in \[0, 2\^32\)"):
        _core.Machine(1, smem_bytes=-1)
    assert bytes(_core.TensorMap._encode_tiled(global_address=256, **kw))[:8] == (256).to_bytes(8, "little")
