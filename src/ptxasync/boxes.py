"""The box of a map in shared memory as a NumPy array, and back.

``read_box`` gathers through ``TensorMap.smem_addresses(dst)`` (the core's
layout: swizzle, padding, interleave, im2col columns), so the array it returns
is the box in NumPy order (outermost first), unswizzled, whatever the mode.
"""
import numpy as np

from . import _core
from .enums import DataType

__all__ = ["read_box", "write_box", "numpy_dtype"]


def numpy_dtype(dtype):
    """The NumPy dtype ``read_box`` returns for a tensor-map data type: bf16
    elements are their bits, uint16, whether or not ml_dtypes is installed
    (``read_box(..., dtype=ml_dtypes.bfloat16)`` gives them as values);
    tf32 / f32_ftz maps hold f32 bits (float32)."""
    dt = DataType(int(dtype))
    simple = {DataType.UINT8: np.uint8, DataType.UINT16: np.uint16, DataType.UINT32: np.uint32,
              DataType.INT32: np.int32, DataType.UINT64: np.uint64, DataType.INT64: np.int64,
              DataType.FLOAT16: np.float16, DataType.FLOAT32: np.float32, DataType.FLOAT64: np.float64,
              DataType.FLOAT32_FTZ: np.float32, DataType.TFLOAT32: np.float32,
              DataType.TFLOAT32_FTZ: np.float32}
    if dt in simple:
        return np.dtype(simple[dt])
    if dt == DataType.BFLOAT16:
        return np.dtype(np.uint16)
    raise ValueError(f"{dt.name} elements are packed sub-byte values: read the box as bytes (dtype=np.uint8)")


def bf16_bits(values):
    """float values -> bf16 bits (uint16), rounded to nearest even (NaN kept a NaN)."""
    f = np.asarray(values, np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(0x7FC0), rounded)


def _smem(where, cta):
    """The uint8 shared memory of a Machine's CTA, a CTA, or a uint8 array itself."""
    from .machine import CTA, Machine
    if isinstance(where, Machine):
        return where.cta(cta).smem
    if isinstance(where, CTA):
        return where.smem
    raw = np.asarray(where)
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise TypeError("read_box/write_box take a Machine, a CTA or a 1-D uint8 shared-memory array")
    return raw


def _index(tmap, dst, raw, esize):
    addrs = np.asarray(tmap.smem_addresses(int(dst)), dtype=np.int64)
    # interleaved maps: each table entry is a 16/32-byte slice of elements
    # (dimension 0 counts slices, docs/tile-mode.md 6.1): one more, innermost axis
    addrs = _slice_addresses(tmap, addrs, esize) & 0xFFFFFF    # CTA-relative offsets
    if addrs.size and int(addrs.max()) + esize > raw.size:
        raise ValueError(f"the box at dst 0x{int(dst):x} reaches byte {int(addrs.max()) + esize} of a "
                         f"{raw.size}-byte shared memory")
    return addrs


def _slice_addresses(tmap, addrs, esize, absolute=False):
    """Interleaved maps: the address of every element of each slice. The table
    gives where a slice starts; a slice wider than a 16-byte chunk is not
    contiguous under a swizzle, so each element's address is the swizzle of its
    unswizzled address (the swizzle is its own inverse, and reads the absolute
    address: ``addrs`` must be absolute shared addresses)."""
    slice_bytes = {1: 16, 2: 32}.get(int(tmap.fields["interleave"]))
    if not slice_bytes:
        return addrs
    from .layout import swizzle_address
    sw = int(tmap.fields["swizzle"])
    step = np.arange(slice_bytes // esize, dtype=np.int64) * esize
    if sw == 0:
        return addrs[..., None] + step
    start = swizzle_address(sw, addrs.astype(np.uint32)).astype(np.int64)      # unswizzled start
    flat = (start[..., None] + step).astype(np.uint32)
    return swizzle_address(sw, flat.reshape(-1)).astype(np.int64).reshape(flat.shape)


def read_box(smem, tmap, dst, dtype=None, cta=0):
    """The box a load through ``tmap`` wrote at shared address ``dst``, as a new
    array in NumPy order (outermost first; an im2col map: pixels x channels; an
    interleaved map: its slices, with the elements of each slice as the last
    axis), unswizzled. ``smem`` is a Machine (CTA ``cta``), a CTA or a uint8 array.
    The array's type is ``numpy_dtype`` of the map's (bf16: its bits as uint16,
    the same with or without ml_dtypes); ``dtype`` overrides it (same item size,
    e.g. ``ml_dtypes.bfloat16``)."""
    raw = _smem(smem, cta)
    esize = tmap.box_layout["esize"]
    dt = numpy_dtype(tmap.fields["dtype"]) if dtype is None else np.dtype(dtype)
    if dt.itemsize != esize:
        raise ValueError(f"dtype {dt} has {dt.itemsize}-byte items; the map's elements are {esize} B")
    addrs = _index(tmap, dst, raw, esize)
    if not (addrs % esize).any():          # element-aligned: one gather of whole items
        return raw[:raw.size - raw.size % esize].view(dt)[addrs // esize]
    b = raw[addrs[..., None] + np.arange(esize)]
    return np.ascontiguousarray(b).view(dt).reshape(addrs.shape)


def write_box(smem, tmap, dst, values, cta=0):
    """Write ``values`` (the box in NumPy order, as ``read_box`` returns it) into
    shared memory where the map's layout puts each element at ``dst`` (what a
    kernel prepares before a store). Values are cast to the map's element type
    as NumPy casts, and to bf16 rounded to nearest even (bits are kept when the
    item sizes agree: an array of uint16 bits or ml_dtypes.bfloat16 for a bf16 map)."""
    raw = _smem(smem, cta)
    esize = tmap.box_layout["esize"]
    addrs = _index(tmap, dst, raw, esize)
    v = np.asarray(values)
    if v.shape != addrs.shape:
        raise ValueError(f"values have shape {v.shape}; the box is {addrs.shape}")
    if v.dtype.itemsize != esize or v.dtype.kind == "O":
        if DataType(int(tmap.fields["dtype"])) == DataType.BFLOAT16:
            v = bf16_bits(v)
        else:
            v = v.astype(numpy_dtype(tmap.fields["dtype"]))
    bytes_ = np.ascontiguousarray(v).view(np.uint8).reshape(addrs.shape + (esize,))
    raw[addrs[..., None] + np.arange(esize)] = bytes_
