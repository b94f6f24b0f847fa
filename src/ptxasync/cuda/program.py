"""A program: one CTA's data and asynchronous operations, runnable on either engine.

The operations are named and called as the ``Machine`` methods that issue them
(same arguments, same order); the data are global buffers and the initial
shared memory. Global addresses are written ``buffer + offset``: the GPU decides
where a buffer lives, and the model is then given the same address, so the
tensor maps (which embed it) and every address compare as they are::

    prog = Program(smem_bytes=32 * 1024)
    g = prog.register(np.arange(64 * 64, dtype=np.uint16))
    tm = prog.tensor_map_tiled(g, dtype="u16", global_dim=(64, 64), global_strides=(128,),
                               box_dim=(16, 8), swizzle="32B")
    prog.mbarrier_init(1024, 1)
    prog.mbarrier_arrive_expect_tx(1024, 256)
    prog.cp_async_bulk_tensor_load(tm, (16, 8), 2048, 1024)
    prog.mbarrier_wait(1024, 0)

Shared addresses are absolute (what ``cvta.to.shared`` gives a kernel): the
dynamic shared memory starts at ``smem_base`` (1024 on sm_90: the first KiB of a
CTA's window is the system's), and the run checks that the GPU agrees.
"""
import numpy as np

from ..enums import DataType, Interleave, L2Promotion, OOBFill, Swizzle, parse

__all__ = ["Program", "Buffer", "GAddr", "MapRef", "SMEM_BASE"]

SMEM_BASE = 1024     # where dynamic shared memory starts in the shared window on sm_90


class GAddr:
    """A global address: ``buffer`` (a Buffer) plus ``offset`` bytes."""
    __slots__ = ("buffer", "offset")

    def __init__(self, buffer, offset=0):
        self.buffer, self.offset = buffer, int(offset)

    def __add__(self, k):
        return GAddr(self.buffer, self.offset + int(k))

    def resolve(self, addresses):
        return addresses[self.buffer.index] + self.offset

    def __repr__(self):
        return f"buffer{self.buffer.index}+{self.offset}"


class Buffer:
    """Global memory of a program: its initial bytes; ``buffer + k`` is an address."""

    def __init__(self, index, data):
        self.index, self.data = index, data

    @property
    def nbytes(self):
        return len(self.data)

    def __add__(self, k):
        return GAddr(self, int(k))

    @property
    def address(self):
        return GAddr(self, 0)

    def __repr__(self):
        return f"Buffer({self.index}, {self.nbytes} bytes)"


def _enum(cls, v):
    return int(v) if isinstance(v, (int, np.integer)) else int(parse(cls, v))


class MapRef:
    """A tensor map of a program: the encode parameters (driver order, plain
    integers) and the buffer + offset it starts at; each engine encodes it at the
    buffer's address there."""

    def __init__(self, index, kind, where, args):
        self.index, self.kind, self.where, self.args = index, kind, where, args

    def address(self, addresses):
        return self.where.resolve(addresses) if isinstance(self.where, GAddr) else int(self.where)

    def model(self, addresses):
        """The model's TensorMap at the run's addresses (InvalidValue if it rejects)."""
        from ..tensormap import TensorMap
        a = dict(self.args)
        a["global_address"] = self.address(addresses)
        if self.kind == "tiled":
            return TensorMap.tiled(**a)
        if self.kind == "im2col":
            return TensorMap.im2col(**a)
        return TensorMap.im2col_wide(**a)

    def driver_args(self):
        """(buffer index or None, offset, the driver's integer parameters)."""
        a = {k: v for k, v in self.args.items() if k not in ("target",)}
        if isinstance(self.where, GAddr):
            return self.where.buffer.index, self.where.offset, a
        return None, int(self.where), a

    def __repr__(self):
        return f"MapRef({self.index}, {self.kind}, at {self.where!r})"


def _map_args(dtype, global_dim, global_strides, element_strides, interleave, swizzle, l2_promotion,
              oob_fill, rank):
    gd = [int(x) for x in global_dim]
    return dict(dtype=_enum(DataType, dtype), rank=len(gd) if rank is None else int(rank), global_dim=gd,
                global_strides=[int(x) for x in global_strides],
                element_strides=[1] * len(gd) if element_strides is None else [int(x) for x in element_strides],
                interleave=_enum(Interleave, interleave), swizzle=_enum(Swizzle, swizzle),
                l2_promotion=_enum(L2Promotion, l2_promotion), oob_fill=_enum(OOBFill, oob_fill))


class Op:
    """One operation: the Machine method's name and its arguments."""
    __slots__ = ("name", "args", "kw")

    def __init__(self, name, args, kw):
        self.name, self.args, self.kw = name, args, kw

    def __repr__(self):
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kw.items()]
        return f"{self.name}({', '.join(parts)})"


def _opmethod(name, doc):
    def method(self, *args, **kw):
        self.ops.append(Op(name, args, kw))
        return self
    method.__name__ = name
    method.__doc__ = doc
    return method


class Program:
    """One cluster of ``ctas`` CTAs (1: a plain launch) of ``threads`` threads each
    (thread 0 of each CTA issues that CTA's operations), ``smem_bytes`` of dynamic
    shared memory per CTA filled with ``smem_fill`` (one byte, or one per CTA;
    ``write_smem`` changes it), global buffers (``register``) and tensor maps over
    them. In a cluster, shared addresses are the Machine's: CTA r's byte at
    offset o is ``r << 24 | o`` (what ``mapa`` gives on the GPU)."""

    MAX_CTAS = 8          # the portable cluster size

    def __init__(self, smem_bytes=64 * 1024, smem_fill=0xA5, threads=128, smem_base=SMEM_BASE, ctas=1):
        if smem_bytes <= 0 or smem_bytes % 16:
            raise ValueError(f"smem_bytes = {smem_bytes}: a positive multiple of 16")
        if not 32 <= threads <= 1024 or threads % 32:
            raise ValueError(f"threads = {threads}: a multiple of 32 from 32 to 1024")
        if not 1 <= int(ctas) <= self.MAX_CTAS:
            raise ValueError(f"ctas = {ctas}: a cluster of 1 to {self.MAX_CTAS} CTAs (the portable cluster size)")
        self.smem_bytes, self.threads, self.smem_base = int(smem_bytes), int(threads), int(smem_base)
        self.ctas = int(ctas)
        fills = list(smem_fill) if isinstance(smem_fill, (list, tuple)) else [smem_fill] * self.ctas
        if len(fills) != self.ctas:
            raise ValueError(f"smem_fill has {len(fills)} bytes for {self.ctas} CTAs")
        self.smem_ctas = [np.full(self.smem_bytes, f, dtype=np.uint8) for f in fills]
        self.smem = self.smem_ctas[0]
        self.buffers = []
        self.maps = []
        self.ops = []
        self.expect = None      # optional: the error the program is meant to raise (recording)

    # --- data ---------------------------------------------------------------------
    def register(self, array):
        """A global buffer holding a copy of ``array``'s bytes (any NumPy array or
        bytes); returns a Buffer (``buffer + k`` is an address)."""
        if isinstance(array, (bytes, bytearray, memoryview)):
            raw = np.frombuffer(bytes(array), dtype=np.uint8).copy()
        else:
            raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8).copy()
        if raw.size == 0:
            raise ValueError("a global buffer needs at least 1 byte")
        b = Buffer(len(self.buffers), raw)
        self.buffers.append(b)
        return b

    def alloc(self, nbytes, fill=0):
        return self.register(np.full(int(nbytes), fill, dtype=np.uint8))

    def split(self, addr):
        """(CTA rank, shared::cta address) of a shared address in the Machine's form."""
        addr = int(getattr(addr, "addr", addr))
        if self.ctas == 1:
            return 0, addr
        rank, local = addr >> 24, addr & 0xFFFFFF
        if rank >= self.ctas:
            raise ValueError(f"shared address {addr:#x} names CTA {rank}, outside the cluster of {self.ctas}")
        return rank, local

    def write_smem(self, addr, data):
        """Initial shared memory at shared address ``addr`` (in a cluster,
        ``r << 24 | offset`` for CTA r)."""
        raw = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) \
            else np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        rank, local = self.split(addr)
        off = local - self.smem_base
        if off < 0 or off + raw.size > self.smem_bytes:
            raise ValueError(f"shared range [{local:#x}, +{raw.size}) of CTA {rank} is outside the dynamic shared "
                             f"memory [{self.smem_base:#x}, {self.smem_base + self.smem_bytes:#x})")
        self.smem_ctas[rank][off:off + raw.size] = raw

    # --- tensor maps --------------------------------------------------------------
    def _add_map(self, kind, where, args):
        if isinstance(where, Buffer):
            where = where.address
        m = MapRef(len(self.maps), kind, where, args)
        self.maps.append(m)
        return m

    def tensor_map_tiled(self, where, dtype, global_dim, global_strides, box_dim, element_strides=None,
                         interleave="NONE", swizzle="NONE", l2_promotion="NONE", oob_fill="NONE", rank=None):
        """cuTensorMapEncodeTiled over ``where`` (a Buffer, ``buffer + k`` or a raw integer address)."""
        a = _map_args(dtype, global_dim, global_strides, element_strides, interleave, swizzle, l2_promotion,
                      oob_fill, rank)
        a["box_dim"] = [int(x) for x in box_dim]
        return self._add_map("tiled", where, a)

    def tensor_map_im2col(self, where, dtype, global_dim, global_strides, pixel_box_lower, pixel_box_upper,
                          channels_per_pixel, pixels_per_column, element_strides=None, interleave="NONE",
                          swizzle="NONE", l2_promotion="NONE", oob_fill="NONE", rank=None):
        """cuTensorMapEncodeIm2col over ``where``."""
        a = _map_args(dtype, global_dim, global_strides, element_strides, interleave, swizzle, l2_promotion,
                      oob_fill, rank)
        a.update(pixel_box_lower=[int(x) for x in pixel_box_lower],
                 pixel_box_upper=[int(x) for x in pixel_box_upper],
                 channels_per_pixel=int(channels_per_pixel), pixels_per_column=int(pixels_per_column))
        return self._add_map("im2col", where, a)

    # --- operations (the Machine's names and arguments) ----------------------------
    mbarrier_init = _opmethod("mbarrier_init", "mbarrier.init.shared::cta.b64 [mbar], count")
    mbarrier_arrive = _opmethod("mbarrier_arrive", "mbarrier.arrive.shared::cta.b64 state, [mbar]{, count}")
    mbarrier_arrive_expect_tx = _opmethod("mbarrier_arrive_expect_tx",
                                          "mbarrier.arrive.expect_tx.shared::cta.b64 state, [mbar], tx")
    mbarrier_expect_tx = _opmethod("mbarrier_expect_tx", "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [mbar], tx")
    mbarrier_complete_tx = _opmethod("mbarrier_complete_tx",
                                     "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [mbar], tx")
    mbarrier_wait = _opmethod("mbarrier_wait", "try_wait.parity until the phase completes (bounded on the GPU)")
    mbarrier_try_wait = _opmethod("mbarrier_try_wait", "as mbarrier_wait, but a timeout is the answer False "
                                  "(Mbarrier.try_wait)")
    mbarrier_test_wait = _opmethod("mbarrier_test_wait", "mbarrier.test_wait.parity once (Mbarrier.test_wait)")
    cp_async_bulk_tensor_load = _opmethod("cp_async_bulk_tensor_load", "as Machine.cp_async_bulk_tensor_load")
    cp_async_bulk_tensor_store = _opmethod("cp_async_bulk_tensor_store", "as Machine.cp_async_bulk_tensor_store")
    cp_reduce_async_bulk_tensor = _opmethod("cp_reduce_async_bulk_tensor",
                                            "as Machine.cp_reduce_async_bulk_tensor")
    cp_async_bulk_commit_group = _opmethod("cp_async_bulk_commit_group", "cp.async.bulk.commit_group")
    cp_async_bulk_wait_group = _opmethod("cp_async_bulk_wait_group", "cp.async.bulk.wait_group{.read} N")
    cp_reduce_async_bulk = _opmethod("cp_reduce_async_bulk", "as Machine.cp_reduce_async_bulk (.global)")
    cp_async_bulk = _opmethod("cp_async_bulk", "as Machine.cp_async_bulk (.multicast::cluster included; no .cp_mask)")
    cp_async = _opmethod("cp_async", "as Machine.cp_async")
    cp_async_commit_group = _opmethod("cp_async_commit_group", "cp.async.commit_group")
    cp_async_wait_group = _opmethod("cp_async_wait_group", "cp.async.wait_group N")
    cp_async_wait_all = _opmethod("cp_async_wait_all", "cp.async.wait_all")
    cp_async_mbarrier_arrive = _opmethod("cp_async_mbarrier_arrive", "as Machine.cp_async_mbarrier_arrive")
    st_async = _opmethod("st_async", "as Machine.st_async (a cluster of 2 or more CTAs)")
    barrier_cluster = _opmethod("barrier_cluster", "barrier.cluster.arrive + barrier.cluster.wait by every "
                                "thread of the cluster: what each CTA issued before it is issued before "
                                "what any CTA issues after it")
    write_shared = _opmethod("write_shared", "st.shared of bytes at a shared address by thread 0 of its CTA, "
                             "in program order (the Machine's CTA.write)")

    def mbarriers(self):
        """Shared addresses of the mbarriers the program initialises, in order."""
        seen = []
        for op in self.ops:
            if op.name == "mbarrier_init":
                a = int(getattr(op.args[0], "addr", op.args[0]))
                if a not in seen:
                    seen.append(a)
        return seen

    def __repr__(self):
        return (f"Program({len(self.ops)} operations, {len(self.buffers)} buffers, {len(self.maps)} maps, "
                f"{self.ctas} CTA{'s' if self.ctas > 1 else ''}, {self.smem_bytes} bytes of shared memory each)")
