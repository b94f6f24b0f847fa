"""Operation lists: a kernel's asynchronous operations recorded once and replayed
in one call (``Machine.replay``), and the arguments of a tile-load batch
(``Machine.cp_async_bulk_tensor_load_batch``).

A list holds the operations in issue order, named as the Machine methods that
issue them one by one; replaying it is the same as calling those methods in that
order (same results, same errors), done in C without the GIL::

    ops = OpList()
    for k in range(steps):
        ops.mbarrier_arrive_expect_tx(bar, 2 * tile_bytes)
        ops.cp_async_bulk_tensor_load(a_map, (k * 64, m0), stage, bar)
        ops.cp_async_bulk_tensor_load(b_map, (k * 64, n0), stage + tile_bytes, bar)
        ops.mbarrier_wait(bar, k & 1)
    gpu.replay(ops)

The first operation that fails stops the replay: its error is raised with the
message prefixed by ``operation i (kind)`` and ``.index = i``; the operations
before it have taken effect (a list cannot be checked ahead: later operations
depend on the state earlier ones leave).
"""
import operator

import numpy as np

from . import _core
from .enums import LoadMode, parse, parse_redop as _redop, parse_reduce_type as _reduce_type

__all__ = ["OpList"]

_F = _core.REC_FIELDS
_RANK = 5


def _int(v, name, lo, hi):
    """An operand recorded now, checked now: an integer in [lo, hi) (a float,
    string or None is a TypeError naming it, never truncated; out of range a
    ValueError naming it, not an error at replay)."""
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(v).__name__}") from None
    if not lo <= v < hi:
        rng = f"[0, 2^{hi.bit_length() - 1})" if lo == 0 else f"[-2^{(-lo).bit_length() - 1}, 2^{hi.bit_length() - 1})"
        raise ValueError(f"{name} must be in {rng}; got {v}")
    return v


def _u32(v, name):
    return _int(v, name, 0, 1 << 32)


def _addr(x, name="mbar"):
    """An address operand: an int, or an Mbarrier (its address)."""
    return _u32(getattr(x, "addr", x), name)


def _coords(coords):
    try:
        c = list(coords)
    except TypeError:
        raise TypeError(f"coords must be a sequence of integers (driver order, c0 innermost), "
                        f"not {type(coords).__name__}") from None
    if len(c) > _RANK:
        raise ValueError(f"{len(c)} tensor coordinates given; at most {_RANK}")
    c = [_int(v, f"coords[{i}]", -(1 << 31), 1 << 31) for i, v in enumerate(c)]
    return c + [0] * (_RANK - len(c)), len(c)


def batch_arrays(coords, dst):
    """(int32[n][5], uint32[n], the coordinates a row was given) for
    Machine.cp_async_bulk_tensor_load_batch, or a
    clear error for coordinates or destinations that do not fit their operands."""
    try:
        c = np.asarray(coords)
    except ValueError:   # ragged rows: NumPy's message names no parameter
        raise ValueError("coords must be an (n, rank) integer array: every row the same length") from None
    if c.ndim == 1:
        c = c.reshape(1, -1)
    if c.ndim != 2 or not 1 <= c.shape[1] <= _RANK:
        raise ValueError(f"coords must be an (n, rank) array with rank 1..{_RANK}, not shape {c.shape}")
    if c.dtype.kind not in "iu":
        raise TypeError(f"coords must be integers, not {c.dtype}")
    # (int32 values fit by type: no scan)
    if c.dtype != np.int32 and c.size and (c.min() < -2**31 or c.max() >= 2**31):
        i = int(np.nonzero((c < -2**31) | (c >= 2**31))[0][0])
        raise OverflowError(f"coords[{i}] = {c[i].tolist()} does not fit the .s32 tensor coordinates")
    out = np.zeros((c.shape[0], _RANK), dtype=np.int32)
    out[:, :c.shape[1]] = c
    try:
        d = np.asarray(dst)
    except ValueError:
        raise ValueError("dst must be one shared address or one per coordinate row") from None
    if d.dtype.kind not in "iu":
        raise TypeError(f"dst must be integers, not {d.dtype}")
    d = np.broadcast_to(d, (c.shape[0],)) if d.ndim == 0 else d
    if d.shape != (c.shape[0],):
        raise ValueError(f"{d.size} destinations for {c.shape[0]} coordinate rows")
    if d.dtype != np.uint32 and d.size and (d.min() < 0 or d.max() >= 2**32):
        raise OverflowError("a destination does not fit the 32-bit shared address")
    return out, np.ascontiguousarray(d, dtype=np.uint32), c.shape[1]


class OpList:
    """A kernel's asynchronous operations in issue order, for ``Machine.replay``."""

    def __init__(self):
        self._rows = []
        self._maps = []
        self._map_index = {}
        self._array = None

    def __len__(self):
        return len(self._rows)

    @property
    def maps(self):
        """The tensor maps the operations name (by index)."""
        return tuple(self._maps)

    @property
    def records(self):
        """The operations as an int64 (n, 16) array (the layout of csrc/core/batch.h)."""
        if self._array is None:
            self._array = np.array(self._rows, dtype=np.int64).reshape(len(self._rows), _F)
        return self._array

    def _map(self, tmap):
        if not isinstance(tmap, _core.TensorMap):
            raise TypeError(f"expected a TensorMap, not {type(tmap).__name__}")
        k = self._map_index.get(id(tmap))
        if k is None:
            k = self._map_index[id(tmap)] = len(self._maps)
            self._maps.append(tmap)
        return k

    def _add(self, kind, cta=0, thread=0, map=0, coords=(0,) * _RANK, smem=0, mbar=0, a=0, b=0, gaddr=0,
             flags=0, mask=0):
        """One record; the operands (smem, a, b, gaddr) come checked by the caller,
        which knows their names."""
        self._rows.append((kind, _u32(cta, "cta"), _u32(thread, "thread"), map, *coords, smem, mbar, a, b,
                           gaddr, flags, mask))
        self._array = None

    # --- tensor copies (.tile) ------------------------------------------------
    def cp_async_bulk_tensor_load(self, tmap, coords, dst, mbar, cta=0, thread=0, dst_space="shared::cta",
                                  cta_mask=None, load_mode="tile"):
        """As Machine.cp_async_bulk_tensor_load (.tile mode)."""
        if parse(LoadMode, load_mode) != LoadMode.TILE:
            raise ValueError("operation lists record .tile loads only")
        if dst_space not in ("shared::cta", "shared::cluster"):
            raise ValueError(f"dst_space must be 'shared::cta' or 'shared::cluster', not {dst_space!r}")
        multicast = cta_mask is not None
        flags = int(dst_space == "shared::cluster" or multicast) | (int(multicast) << 1)
        c, n = _coords(coords)
        self._add(_core.REC_TENSOR_LOAD, cta, thread, self._map(tmap), c, _u32(dst, "dst"), _addr(mbar), b=n,
                  flags=flags, mask=_int(cta_mask or 0, "cta_mask", 0, 1 << 16))

    def tensor_loads(self, tmap, coords, dst, mbar, cta=0, thread=0):
        """Many .tile loads of one map: coords (n, rank), dst one address or n of them."""
        c, d, n = batch_arrays(coords, dst)
        k, bar = self._map(tmap), _addr(mbar)
        for row, a in zip(c.tolist(), d.tolist()):
            self._add(_core.REC_TENSOR_LOAD, cta, thread, k, row, a, bar, b=n)

    def cp_async_bulk_tensor_store(self, tmap, coords, src, cta=0, thread=0):
        """As Machine.cp_async_bulk_tensor_store (.tile mode)."""
        c, n = _coords(coords)
        self._add(_core.REC_TENSOR_STORE, cta, thread, self._map(tmap), c, _u32(src, "src"), b=n)

    def cp_reduce_async_bulk_tensor(self, op, tmap, coords, src, cta=0, thread=0):
        """As Machine.cp_reduce_async_bulk_tensor (.tile mode)."""
        c, n = _coords(coords)
        self._add(_core.REC_TENSOR_REDUCE, cta, thread, self._map(tmap), c, _u32(src, "src"), a=int(_redop(op)),
                  b=n)

    def cp_reduce_async_bulk(self, op, type, dst, src, size, mbar=None, cta=0, thread=0, noftz=False,
                             dst_space="global"):
        """As Machine.cp_reduce_async_bulk."""
        rtype, type_noftz = _reduce_type(type)
        to_cluster = dst_space == "shared::cluster"
        if not to_cluster and dst_space != "global":
            raise ValueError(f"dst_space must be 'global' or 'shared::cluster', not {dst_space!r}")
        if to_cluster and mbar is None:
            raise ValueError("a shared::cluster destination completes on an mbarrier: pass mbar")
        b = int(_redop(op)) | int(rtype) << 8 | int(bool(noftz) or type_noftz) << 16
        dst = _int(dst, "dst", 0, 1 << 32 if to_cluster else 1 << 63)   # a record's field is int64
        self._add(_core.REC_BULK_REDUCE, cta, thread, smem=_u32(src, "src"),
                  mbar=_addr(0 if mbar is None else mbar), a=_u32(size, "size"), b=b, gaddr=dst,
                  flags=int(to_cluster))

    def cp_async_bulk_commit_group(self, cta=0, thread=0):
        self._add(_core.REC_COMMIT_GROUP, cta, thread)

    def cp_async_bulk_wait_group(self, n=0, cta=0, thread=0):
        self._add(_core.REC_WAIT_GROUP, cta, thread, a=_u32(n, "wait_group N"))

    # --- mbarriers --------------------------------------------------------------
    def mbarrier_init(self, mbar, count=1, cta=0):
        self._add(_core.REC_MBAR_INIT, cta, mbar=_addr(mbar), a=_u32(count, "count"))

    def mbarrier_arrive(self, mbar, count=1, cta=0):
        self._add(_core.REC_MBAR_ARRIVE, cta, mbar=_addr(mbar), a=_u32(count, "count"))

    def mbarrier_arrive_expect_tx(self, mbar, tx, cta=0):
        """mbarrier.arrive.expect_tx (one arrival, tx bytes expected)."""
        self._add(_core.REC_MBAR_ARRIVE, cta, mbar=_addr(mbar), a=1, b=_u32(tx, "tx"))

    def mbarrier_expect_tx(self, mbar, tx, cta=0):
        self._add(_core.REC_MBAR_EXPECT_TX, cta, mbar=_addr(mbar), a=_u32(tx, "tx"))

    def mbarrier_wait(self, mbar, parity, cta=0):
        """try_wait.parity that must succeed, as Mbarrier.wait (Hazard if it cannot)."""
        p = _int(parity, "parity", 0, 1 << 32)
        if p not in (0, 1):
            raise ValueError(f"phase parity {parity!r} must be 0 or 1")
        self._add(_core.REC_MBAR_WAIT, cta, mbar=_addr(mbar), a=p)

    def run(self):
        """Complete every pending operation."""
        self._add(_core.REC_RUN)

    def __repr__(self):
        return f"OpList({len(self)} operations, {len(self._maps)} tensor maps)"
