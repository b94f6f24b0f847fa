"""Assertions for test suites: compare shared memory or a box, bit for bit,
with a diff a person can read.

    from ptxasync.testing import assert_box_equal
    assert_box_equal(gpu, tmap, dst, tensor[16:24, 64:128])

Values are compared as bits of the map's element type (the model is
bit-exact: a NaN equals the same NaN pattern, -0.0 differs from 0.0), and
printed as that type (a bf16 map's 0x3e80 prints as 0.25). On a mismatch the AssertionError says how many
elements differ and, for the first few, the box coordinate, the shared address,
the expected and the actual value.
"""
import numpy as np

from .boxes import _smem, bf16_bits, read_box
from .enums import DataType

__all__ = ["assert_box_equal", "assert_smem_equal"]

SHOW = 10


_FLOATS = {"FLOAT16": np.float16, "FLOAT32": np.float32, "FLOAT64": np.float64,
           "FLOAT32_FTZ": np.float32, "TFLOAT32": np.float32, "TFLOAT32_FTZ": np.float32}
_SIGNED = {"INT32": np.int32, "INT64": np.int64}


def _element(tmap):
    """(bits dtype, name, how the map's element type shows its bits)."""
    dt = DataType(int(tmap.fields["dtype"]))
    esize = tmap.box_layout["esize"]
    bits = np.dtype(f"u{esize}") if esize in (1, 2, 4, 8) else np.dtype(np.uint8)
    if dt.name in _FLOATS:
        ft = np.dtype(_FLOATS[dt.name])
        return bits, dt.name, lambda b: b.astype(bits).view(ft)
    if dt == DataType.BFLOAT16:      # the upper half of an f32 (no NumPy bf16 needed)
        return bits, dt.name, lambda b: (b.astype(np.uint32) << 16).view(np.float32)
    if dt.name in _SIGNED:
        return bits, dt.name, lambda b: b.astype(bits).view(_SIGNED[dt.name])
    return bits, dt.name, None


def _expected_bits(expected, tmap, bits):
    """``expected`` as the bits of the map's element type. An array of the
    element's item size (the map's own type, its bits as integers, a torch
    bf16 tensor) is taken bit for bit; values of any other type (Python
    floats, float64, int64) are cast to the element type first, as the
    kernel's host code would."""
    from .arrays import as_array
    from .boxes import numpy_dtype
    exp = expected if isinstance(expected, np.ndarray) else (
        as_array(expected, writable=False) if hasattr(expected, "__dlpack__") else np.asarray(expected))
    dt = DataType(int(tmap.fields["dtype"]))
    own_float = np.dtype(_FLOATS[dt.name]) if dt.name in _FLOATS else None
    foreign_bf16 = exp.dtype.name == "bfloat16" and dt != DataType.BFLOAT16
    if exp.dtype.itemsize == bits.itemsize and not foreign_bf16 and (
            exp.dtype.kind in "uibV" or exp.dtype == own_float):
        return exp.view(bits), exp
    if foreign_bf16:
        exp = exp.astype(np.float32)
    if dt == DataType.BFLOAT16:
        return bf16_bits(exp), exp
    try:
        target = numpy_dtype(dt)
    except ValueError:               # packed sub-byte maps: compare as given
        return exp, exp
    with np.errstate(all="ignore"):
        return exp.astype(target).view(bits), exp


def _show(b, element):
    """A value as the map's element type: the number, and its bits for a float."""
    b = np.asarray(b)
    if element is None:
        return str(b.item())
    v = element(b.reshape(1))[0].item()
    if isinstance(v, float):
        return f"{v!r} (0x{int(b):0{2 * b.dtype.itemsize}x})"
    return str(v)


def assert_box_equal(smem, tmap, dst, expected, cta=0, msg=""):
    """The box a load through ``tmap`` wrote at ``dst`` (``read_box``) equals
    ``expected`` (NumPy order), bit for bit, in the map's element type.

    ``expected`` is a NumPy array (an ml_dtypes bf16 / fp8 one too), a torch
    tensor (bf16 included) or nested lists: an array of the element's item size
    is compared bit for bit, values of another type are first cast to the map's
    type. A mismatch prints both values as the map's element type (a float's
    bits beside it)."""
    __tracebackhide__ = True       # pytest shows the test's line, not this function's
    bits, name, element = _element(tmap)
    exp_bits, exp = _expected_bits(expected, tmap, bits)
    got = read_box(smem, tmap, dst, dtype=bits if exp_bits.dtype == bits else None, cta=cta)
    if got.shape != exp_bits.shape:
        raise AssertionError(f"{msg}box shape {got.shape} != expected shape {exp_bits.shape}")
    diff = got != exp_bits
    n = int(diff.sum())
    if not n:
        return
    addrs = np.asarray(tmap.smem_addresses(int(dst)), dtype=np.int64)
    lines = [f"{msg}{n} of {exp_bits.size} box elements differ (box at dst 0x{int(dst):x}, "
             f"compared as {name}):"]
    shown = element if exp_bits.dtype == bits else None
    for idx in list(zip(*np.nonzero(diff)))[:SHOW]:
        idx = tuple(int(i) for i in idx)
        lines.append(f"  box {idx} at shared 0x{int(addrs[idx]):x}: expected {_show(exp_bits[idx], shown)}, "
                     f"got {_show(got[idx], shown)}")
    if n > SHOW:
        lines.append(f"  ... and {n - SHOW} more")
    raise AssertionError("\n".join(lines))


def assert_smem_equal(actual, expected, offset=0, tmap=None, dst=0, cta=0, msg=""):
    """Shared memory from ``offset`` equals ``expected`` (bytes, or any array:
    compared as its bytes). ``actual`` is a Machine (CTA ``cta``), a CTA or a
    uint8 array. With ``tmap``/``dst`` each differing byte is also named by the
    box element it belongs to."""
    __tracebackhide__ = True
    raw = _smem(actual, cta)
    exp = np.frombuffer(np.ascontiguousarray(expected).tobytes(), np.uint8) \
        if not isinstance(expected, (bytes, bytearray)) else np.frombuffer(bytes(expected), np.uint8)
    offset = int(offset)
    if offset < 0 or offset + exp.size > raw.size:
        raise AssertionError(f"{msg}expected {exp.size} bytes at 0x{offset:x}: shared memory has {raw.size}")
    got = raw[offset:offset + exp.size]
    bad = np.flatnonzero(got != exp)
    if not bad.size:
        return
    lines = [f"{msg}{bad.size} of {exp.size} bytes differ from shared 0x{offset:x}:"]
    for i in bad[:SHOW]:
        a = offset + int(i)
        where = ""
        if tmap is not None:
            hit = tmap.smem_element(a, dst)
            where = " (outside the box)" if hit is None else \
                f" (box element {tuple(hit[0])[::-1]} byte {hit[1]})"
        lines.append(f"  shared 0x{a:x}{where}: expected 0x{int(exp[i]):02x}, got 0x{int(got[i]):02x}")
    if bad.size > SHOW:
        lines.append(f"  ... and {bad.size - SHOW} more")
    raise AssertionError("\n".join(lines))
