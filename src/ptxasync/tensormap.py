"""The tensor map (CUtensorMap): what cuTensorMapEncodeTiled / Im2col build.

Dimension order follows the driver and PTX: index 0 is the innermost,
contiguous dimension (``global_dim[0]`` is the row length). ``TensorMap.from_array``
takes NumPy order (outermost first) and reverses it for you.
"""
import numpy as np

from . import _core
from .enums import (DataType, Interleave, L2Promotion, OOBFill, Swizzle, TensorMapField,
                    driver_name, parse)

__all__ = ["TensorMap", "encode_tiled", "encode_im2col", "encode_im2col_wide", "SMEM_TABLE_MAX"]

# Boxes past these sizes fit in no CTA's shared memory (227 KiB on sm_90a, 16 MiB
# windows): smem_addresses refuses them, and a notebook shows the table without
# the picture (which would take seconds and gigabytes to build).
SMEM_TABLE_MAX = 1 << 22
HTML_PICTURE_MAX = 1 << 18

# The decoded fields (TensorMap.fields), readable as attributes.
_FIELD_NAMES = frozenset((
    "kind", "dtype", "rank", "global_address", "global_dim", "global_strides", "box_dim",
    "element_strides", "pixel_box_lower", "pixel_box_upper", "channels_per_pixel",
    "pixels_per_column", "interleave", "swizzle", "l2_promotion", "oob_fill"))


def _ints(seq, name, signed=False):
    """Integers of a parameter array; floats are refused rather than truncated,
    and negative values of unsigned driver parameters are named as given."""
    import operator
    try:
        vals = [operator.index(x) for x in seq]
    except TypeError:
        raise TypeError(f"{name} must be a sequence of integers, got {seq!r}") from None
    if not signed:
        for i, v in enumerate(vals):
            if v < 0:
                raise _core.InvalidValue(f"{name}[{i}] = {v} is negative (the driver takes unsigned values)")
    return vals


class TensorMap(_core.TensorMap):
    """A 128-byte tensor-map descriptor. ``bytes(tm)`` is the CUtensorMap image."""

    # --- construction -------------------------------------------------------
    @classmethod
    def tiled(cls, dtype, global_address, global_dim, global_strides, box_dim,
              element_strides=None, interleave="NONE", swizzle="NONE",
              l2_promotion="NONE", oob_fill="NONE", rank=None, tensormap_address=0,
              target="sm_90a"):
        """cuTensorMapEncodeTiled. Dims, strides and box are driver order (dim 0 innermost);
        ``global_strides`` are bytes for dims 1..rank-1 (rank-1 entries).

        ``target``: the driver of which target encodes (``"sm_90a"``: what the sm_90
        driver accepted on the recorded H200; ``"sm_100a"`` and later also take the
        128B_ATOM_* swizzles, as the driver documents them for compute capability 10.0)."""
        global_dim = _ints(global_dim, "global_dim")
        rank = len(global_dim) if rank is None else _index(rank, "rank")
        if element_strides is None:
            element_strides = [1] * len(global_dim)
        return cls._encode_tiled(
            _enum(DataType, dtype), rank, _index(global_address, "global_address"), global_dim,
            _ints(global_strides, "global_strides"), _ints(box_dim, "box_dim"),
            _ints(element_strides, "element_strides"), _enum(Interleave, interleave),
            _enum(Swizzle, swizzle), _enum(L2Promotion, l2_promotion), _enum(OOBFill, oob_fill),
            _index(tensormap_address, "tensormap_address"), str(target))

    @classmethod
    def im2col(cls, dtype, global_address, global_dim, global_strides, pixel_box_lower,
               pixel_box_upper, channels_per_pixel, pixels_per_column, element_strides=None,
               interleave="NONE", swizzle="NONE", l2_promotion="NONE", oob_fill="NONE",
               rank=None, tensormap_address=0, target="sm_90a"):
        """cuTensorMapEncodeIm2col (driver order: dim 0 = C, dim 1 = W, ...); ``target`` as in
        ``tiled``."""
        global_dim = _ints(global_dim, "global_dim")
        rank = len(global_dim) if rank is None else _index(rank, "rank")
        if element_strides is None:
            element_strides = [1] * len(global_dim)
        return cls._encode_im2col(
            _enum(DataType, dtype), rank, _index(global_address, "global_address"), global_dim,
            _ints(global_strides, "global_strides"), _ints(pixel_box_lower, "pixel_box_lower", signed=True),
            _ints(pixel_box_upper, "pixel_box_upper", signed=True),
            _index(channels_per_pixel, "channels_per_pixel"),
            _index(pixels_per_column, "pixels_per_column"), _ints(element_strides, "element_strides"),
            _enum(Interleave, interleave), _enum(Swizzle, swizzle),
            _enum(L2Promotion, l2_promotion), _enum(OOBFill, oob_fill),
            _index(tensormap_address, "tensormap_address"), str(target))

    @classmethod
    def im2col_wide(cls, dtype, global_address, global_dim, global_strides, pixel_box_lower_w,
                    pixel_box_upper_w, channels_per_pixel, pixels_per_column=128, mode="W",
                    element_strides=None, interleave="NONE", swizzle="128B", l2_promotion="NONE",
                    oob_fill="NONE", rank=None, tensormap_address=0, target="sm_100a"):
        """cuTensorMapEncodeIm2colWide (compute capability 10.0+; driver order: C, W, H, D, N).

        ``mode`` "W" (CU_TENSOR_MAP_IM2COL_WIDE_MODE_W, for ``.im2col::w``: pixelsPerColumn
        pixels) or "W128" (``.im2col::w::128``: 128 pixels, pixelsPerColumn ignored). One
        W corner pair at any rank; swizzle 64B, 128B or 128B_ATOM_32B; no interleave."""
        global_dim = _ints(global_dim, "global_dim")
        rank = len(global_dim) if rank is None else _index(rank, "rank")
        if element_strides is None:
            element_strides = [1] * len(global_dim)
        modes = {"W": 0, "W128": 1, "CU_TENSOR_MAP_IM2COL_WIDE_MODE_W": 0,
                 "CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128": 1}
        if isinstance(mode, str):
            if mode.upper() not in modes:
                raise ValueError(f"mode {mode!r} is not a CUtensorMapIm2ColWideMode (W, W128)")
            mode = modes[mode.upper()]
        return _core.encode_im2col_wide(
            cls, _enum(DataType, dtype), rank, _index(global_address, "global_address"), global_dim,
            _ints(global_strides, "global_strides"), _index(pixel_box_lower_w, "pixel_box_lower_w"),
            _index(pixel_box_upper_w, "pixel_box_upper_w"), _index(channels_per_pixel, "channels_per_pixel"),
            _index(pixels_per_column, "pixels_per_column"),
            _ints(element_strides, "element_strides"), _enum(Interleave, interleave),
            _index(mode, "mode"), _enum(Swizzle, swizzle), _enum(L2Promotion, l2_promotion),
            _enum(OOBFill, oob_fill), _index(tensormap_address, "tensormap_address"), str(target))

    @classmethod
    def from_bytes(cls, data):
        """Decode a 128-byte CUtensorMap image: ``bytes``, any buffer, or a
        cuda-python / cuda-bindings ``CUtensorMap`` (read through its ``opaque``
        words or its ``getPtr()`` address)."""
        return super().from_bytes(_tensormap_image(data))

    @classmethod
    def from_array(cls, array, box_shape, global_address, swizzle="NONE", dtype=None,
                   element_strides=None, **kw):
        """A tiled map over an array, in NumPy order (outermost first).

        ``array`` is a NumPy array, a buffer-protocol object or a ``__dlpack__``
        tensor (torch, any dtype). ``box_shape`` and ``element_strides`` are NumPy
        order too; ``global_address`` is where the array lives in the model's
        global memory (``GlobalBuffer.address``). Without ``dtype`` the data type
        follows the array's as CUTLASS and Triton map it (int8, fp8 and packed
        int4 as UINT8; see ``ptxasync.arrays``). The rules that bite: the innermost
        dimension must be contiguous, every other stride a multiple of 16 bytes,
        and ``box_shape[-1]`` times the element size a multiple of 16 bytes (and,
        with a swizzle, at most its span)."""
        from .arrays import as_array, tensor_map_dtype
        a = as_array(array)
        if a.ndim < 1:
            raise ValueError("from_array needs an array with at least one dimension")
        box_shape = _ints(box_shape, "box_shape (NumPy order, one entry per array dimension)")
        if len(box_shape) != a.ndim:
            raise ValueError(f"box_shape has {len(box_shape)} entries; the array has {a.ndim} dims")
        if a.strides[-1] != a.itemsize:
            raise ValueError("the innermost NumPy dimension must be contiguous")
        dt = tensor_map_dtype(array) if dtype is None else parse(DataType, dtype)
        strides = [int(s) for s in a.strides[::-1][1:]]
        es = None if element_strides is None else _ints(element_strides, "element_strides")[::-1]
        return cls.tiled(dt, global_address, list(a.shape)[::-1], strides, box_shape[::-1],
                         element_strides=es, swizzle=swizzle, **kw)

    # --- fields --------------------------------------------------------------
    @property
    def fields(self):
        """Decoded fields (driver order), enums as enum members."""
        f = self._fields()
        f["kind"] = ("tiled", "im2col", "im2col_w", "im2col_w128")[f["kind"]]
        f["dtype"] = DataType(f["dtype"])
        f["interleave"] = Interleave(f["interleave"])
        f["swizzle"] = Swizzle(f["swizzle"])
        f["l2_promotion"] = L2Promotion(f["l2_promotion"])
        f["oob_fill"] = OOBFill(f["oob_fill"])
        return f

    def __getattr__(self, name):
        if name.startswith("__"):  # protocol probes never decode the map
            raise AttributeError(name)
        try:
            f = self.fields
        except _core.PtxAsyncError as e:
            if name in _FIELD_NAMES:   # a field of a map whose edited bytes do not decode
                raise
            # hasattr(tm, "x") is False, not an error, whatever the bytes hold
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}") from e
        if name in f:
            return f[name]
        raise AttributeError(name)

    @property
    def box_layout(self):
        """Shape of the box in shared memory: row bytes, pitch, rows, tx bytes
        (im2col maps: the column, pixelsPerColumn rows of channelsPerPixel elements; with
        interleave one 16/32-byte slice per row, docs/im2col-mode.md 3.1)."""
        return self._box_layout()

    @property
    def box_bytes(self):
        """Bytes a load through this map credits to the mbarrier."""
        return self._box_layout()["tx_bytes"]

    def replace(self, field, value, ord=0, target="sm_90a"):
        """tensormap.replace.tile.<field>: change exactly the bits the hardware changes.

        ``field`` is a TensorMapField or its PTX name ("global_address", "box_dim",
        "global_stride", ...). Values use PTX conventions: ``rank`` takes rank-1,
        ``global_stride`` bytes, ``elemtype`` the PTX .elemtype numbering.

        Forms ptxas rejects for sm_90a (golden R4: ``swizzle_atomicity``, elemtype
        13-15, swizzle_mode 4, interleave_layout 3, fill_mode 2, ord outside 0-4)
        raise InvalidValue. Values the hardware stores without complaint are
        stored as it does, even where the result is no valid map (rank 5-7):
        ``decodes`` is then False and using the map raises InvalidValue.

        ``target`` is the target the instruction is compiled for: sm_100a and the other
        targets the seed names also take ``swizzle_atomicity`` (0 16B, 1 32B, 2 32B + 8B
        flip, 3 64B: the 128B_ATOM_* swizzles) and ``elemtype`` 13-15 (docs/load-modes.md)."""
        if isinstance(field, str):
            key = field.strip().lstrip(".").upper()
            key = {"INTERLEAVE": "INTERLEAVE_LAYOUT", "SWIZZLE": "SWIZZLE_MODE",
                   "FILL": "FILL_MODE"}.get(key, key)
            try:
                field = TensorMapField[key]
            except KeyError:
                raise ValueError(f"unknown tensormap.replace field {field!r} (valid: "
                                 f"{', '.join(m.name.lower() for m in TensorMapField)})") from None
        self._replace(int(TensorMapField(field)), _index(ord, "ord"), _index(value, "value"), str(target))
        return self

    @property
    def decodes(self):
        """False when an edit left bytes that no map can hold (e.g. rank field 5-7)."""
        return self._decodes()

    def copy(self):
        """An exact copy (bytes and decoded fields), e.g. to edit with ``replace``."""
        return self._copy()

    # --- layout --------------------------------------------------------------
    def smem_addresses(self, dst=0):
        """Shared address of every box element for a box written at ``dst``
        (NumPy order: outermost first), swizzle included. Refused (ValueError)
        for a box of more than ``SMEM_TABLE_MAX`` elements: no CTA's shared
        memory holds one (``smem_element`` answers for single addresses)."""
        dst = _index(dst, "dst")
        n = self._table_entries()
        if n > SMEM_TABLE_MAX:
            raise ValueError(f"the box has {n} elements ({self.box_bytes} bytes): more than "
                             f"SMEM_TABLE_MAX = {SMEM_TABLE_MAX}, and no CTA's shared memory holds it "
                             "(227 KiB on sm_90a); use smem_element(addr, dst) for single addresses")
        return self._address_table(dst)

    def _table_entries(self):
        """Entries of smem_addresses' table (box elements, or interleave slices)."""
        lay = self._box_layout()
        return lay["rows"] * lay["n"][0]

    def smem_element(self, addr, dst=0):
        """Inverse layout: ((k0, k1, ...), byte) held at shared address ``addr``, or None."""
        return self._inverse(_index(dst, "dst"), _index(addr, "addr"))

    # --- display -------------------------------------------------------------
    def _rows(self):
        f = self.fields
        rows = [("kind", f["kind"]), ("dtype", driver_name(f["dtype"])), ("rank", f["rank"]),
                ("globalAddress", hex(f["global_address"])),
                ("globalDim", f["global_dim"]), ("globalStrides", f["global_strides"])]
        if f["kind"] == "tiled":
            rows.append(("boxDim", f["box_dim"]))
        elif f["kind"] != "im2col":
            rows += [("mode", "W" if f["kind"] == "im2col_w" else "W128"),
                     ("pixelBoxLowerCornerWidth", f["pixel_box_lower"][0]),
                     ("pixelBoxUpperCornerWidth", f["pixel_box_upper"][0]),
                     ("channelsPerPixel", f["channels_per_pixel"]),
                     ("pixelsPerColumn", f["pixels_per_column"])]
        else:
            rows += [("pixelBoxLowerCorner", f["pixel_box_lower"]),
                     ("pixelBoxUpperCorner", f["pixel_box_upper"]),
                     ("channelsPerPixel", f["channels_per_pixel"]),
                     ("pixelsPerColumn", f["pixels_per_column"])]
        rows += [("elementStrides", f["element_strides"]),
                 ("interleave", driver_name(f["interleave"])),
                 ("swizzle", driver_name(f["swizzle"])),
                 ("l2Promotion", driver_name(f["l2_promotion"])),
                 ("oobFill", driver_name(f["oob_fill"]))]
        try:
            rows.append(("box bytes (tx)", self.box_bytes))
        except Exception:  # e.g. a data type no copy accepts on sm_90
            pass
        return rows

    def __repr__(self):
        rows = self._rows() if self.decodes else [("decodes", "no (edited bytes hold no map)")]
        width = max(len(k) for k, _ in rows)
        lines = [f"TensorMap (dim 0 innermost)"]
        lines += [f"  {k:<{width}}  {v}" for k, v in rows]
        raw = bytes(self).hex()          # all 128 bytes, 32 to a line, each line's first offset
        for off in range(0, 128, 32):
            head = "bytes (hex)" if off == 0 else ""
            lines.append(f"  {head:<{width}}  +{off:<3} {raw[2 * off:2 * off + 64]}")
        return "\n".join(lines)

    def __eq__(self, other):
        if isinstance(other, _core.TensorMap):
            return bytes(self) == bytes(other)
        return NotImplemented

    __hash__ = None


def _tensormap_image(data):
    if isinstance(data, (bytes, bytearray, memoryview)) or not (
            hasattr(data, "opaque") or hasattr(data, "getPtr")):
        return data
    opaque = getattr(data, "opaque", None)
    if opaque is not None:        # cuda-bindings: sixteen cuuint64_t words
        return b"".join(int(w).to_bytes(8, "little") for w in opaque)
    import ctypes
    return ctypes.string_at(int(data.getPtr()), 128)


def _index(v, name):
    """An integer argument as is: a float or string is refused, never truncated
    (the binding then checks its range, naming it)."""
    import operator
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(v).__name__}") from None


def _enum(cls, v):
    # Out-of-range numbers go through to the core, which rejects them with the
    # driver's rule, exactly as cuTensorMapEncode* would.
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    return int(parse(cls, v))


encode_tiled = TensorMap.tiled
encode_im2col = TensorMap.im2col
encode_im2col_wide = TensorMap.im2col_wide
