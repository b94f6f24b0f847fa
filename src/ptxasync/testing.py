"""Assertions for test suites: compare shared memory or a box, bit for bit,
with a diff a person can read.

    from ptxasync.testing import assert_box_equal
    assert_box_equal(gpu, tmap, dst, tensor[16:24, 64:128])

Values are compared as bits (the model is bit-exact: a NaN equals the same NaN
pattern, -0.0 differs from 0.0). On a mismatch the AssertionError says how many
elements differ and, for the first few, the box coordinate, the shared address,
the expected and the actual value.
"""
import numpy as np

from .boxes import _smem, read_box

__all__ = ["assert_box_equal", "assert_smem_equal"]

SHOW = 10


def _bits(a):
    a = np.asarray(a)
    if a.dtype.kind in "biu" or a.dtype.itemsize not in (1, 2, 4, 8):
        return a
    return a.view(f"u{a.dtype.itemsize}")


def _fmt(v):
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, float):
        return repr(v)
    return str(v)


def assert_box_equal(smem, tmap, dst, expected, cta=0, msg=""):
    """The box a load through ``tmap`` wrote at ``dst`` (``read_box``) equals
    ``expected`` (NumPy order), bit for bit."""
    exp = np.asarray(expected)
    got = read_box(smem, tmap, dst, dtype=exp.dtype if exp.dtype.itemsize == tmap.box_layout["esize"]
                   else None, cta=cta)
    if got.shape != exp.shape:
        raise AssertionError(f"{msg}box shape {got.shape} != expected shape {exp.shape}")
    diff = _bits(got) != _bits(exp.astype(got.dtype, copy=False))
    n = int(diff.sum())
    if not n:
        return
    addrs = np.asarray(tmap.smem_addresses(int(dst)), dtype=np.int64)
    lines = [f"{msg}{n} of {exp.size} box elements differ (box at dst 0x{int(dst):x}):"]
    for idx in list(zip(*np.nonzero(diff)))[:SHOW]:
        idx = tuple(int(i) for i in idx)
        lines.append(f"  box {idx} at shared 0x{int(addrs[idx]):x}: expected {_fmt(exp[idx])}, got {_fmt(got[idx])}")
    if n > SHOW:
        lines.append(f"  ... and {n - SHOW} more")
    raise AssertionError("\n".join(lines))


def assert_smem_equal(actual, expected, offset=0, tmap=None, dst=0, cta=0, msg=""):
    """Shared memory from ``offset`` equals ``expected`` (bytes, or any array:
    compared as its bytes). ``actual`` is a Machine (CTA ``cta``), a CTA or a
    uint8 array. With ``tmap``/``dst`` each differing byte is also named by the
    box element it belongs to."""
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
