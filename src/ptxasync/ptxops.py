"""The model's operations as PTX instructions: one text for every form, whoever prints it.

``OpPrinter`` turns a Machine call (``op_<method name>``, the method's own arguments) into
the PTX lines it stands for: operand registers first (``mov`` of the immediates), then the
instruction with its qualifiers in the order ptxas documents them. Two printers build on it:
``ptxtrace`` (a Machine's trace as a module, replayed by ``ptx.Kernel``) and
``cuda.ptxgen`` (a Program as the kernel the GPU runs). What differs between them is how an
operand reaches a register, and a subclass says it:

- ``g64(address)``: a global address (a buffer parameter plus an offset);
- ``tmap(map)``: a tensor map's generic address;
- ``own(addr, what)``: a shared::cta operand (the issuing CTA's);
- ``cluster(addr)``: a shared::cluster operand (another CTA's, in the model's
  ``rank << 24 | offset`` form or through ``mapa``);
- ``multicast(addr)``: the destination and mbarrier of a ``.multicast::cluster`` copy;
- ``tensor_mode(load_mode, store)``: the modes it can print;
- ``cache_hint(policy)``: the ``.L2::cache_hint`` qualifier and operand, or none;
- ``need(version)``: the PTX ISA version a form needs.

The mbarrier instructions (``mbarrier_init``, ``mbarrier_arrive``, ``mbarrier_tx``,
``mbarrier_wait``) take their operands as registers: the printers issue them from their own
records (trace events, program operations with status words).
"""
import numpy as np

__all__ = ["OpPrinter", "ptx_name", "tensor_mode", "redop_name", "value_bytes"]

TENSOR_MODES = {"tile": "tile", "im2col": "im2col", "im2col_no_offs": "im2col_no_offs",
                "tile_gather4": "tile::gather4", "tile::gather4": "tile::gather4",
                "tile_scatter4": "tile::scatter4", "tile::scatter4": "tile::scatter4",
                "im2col_w": "im2col::w", "im2col::w": "im2col::w",
                "im2col_w128": "im2col::w::128", "im2col::w::128": "im2col::w::128"}
REDOPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
VALUE_TYPES = {"b32": "<u4", "u32": "<u4", "s32": "<i4", "f32": "<f4", "b64": "<u8", "u64": "<u8",
               "s64": "<i8", "f64": "<f8", "b8": "<u1", "u8": "<u1", "s8": "<i1", "b16": "<u2", "u16": "<u2",
               "s16": "<i2"}
FENCE_MBARRIER_INIT = "fence.mbarrier_init.release.cluster;"


def ptx_name(v):
    """A PTX name given with or without its dot, or an enum member ("ADD" -> "add")."""
    if isinstance(v, str):
        return v.strip().lstrip(".").lower()
    name = getattr(v, "name", None)
    return (name if name is not None else str(v)).lower()


def tensor_mode(load_mode):
    """The PTX spelling of a tensor copy's load mode ("tile_gather4" -> "tile::gather4")."""
    key = ptx_name(load_mode)
    if key not in TENSOR_MODES:
        raise ValueError(f"load mode {load_mode!r} has no PTX form")
    return TENSOR_MODES[key]


def redop_name(op):
    """A reduction's PTX name from a RedOp, its value or its name."""
    from .enums import RedOp
    if isinstance(op, (int, np.integer)) and not isinstance(op, bool):
        op = RedOp(int(op))
    name = ptx_name(op)
    if name not in REDOPS:
        raise ValueError(f"reduction operation {op!r} is not one of {', '.join(REDOPS)}")
    return name


def value_bytes(value, t):
    """The register bytes of a stored value of PTX type t: raw bytes unchanged, else the numbers."""
    if isinstance(value, (bytes, bytearray, memoryview)) or (isinstance(value, np.ndarray)
                                                             and value.dtype == np.uint8):
        return bytes(np.asarray(memoryview(value)).reshape(-1).view(np.uint8))
    return np.atleast_1d(np.asarray(value)).astype(VALUE_TYPES[t]).reshape(-1).tobytes()


class OpPrinter:
    """The PTX lines of the model's operations, appended to ``self.lines`` (see the module
    docstring for what a subclass provides)."""

    def __init__(self):
        self.lines = []
        self.n = {"r": 0, "rd": 0, "p": 0, "rs": 0}

    # registers and operands --------------------------------------------------------------
    def reg(self, kind):
        """A new register: "p" (.pred), "rs" (.b16), "r" (.b32), "rd" (.b64)."""
        self.n[kind] += 1
        return f"%{kind}{self.n[kind]}"

    def emit(self, s):
        self.lines.append("\t" + s)

    def s32(self, v):
        """A shared address or a 32-bit value in a register."""
        r = self.reg("r")
        self.emit(f"mov.b32 {r}, 0x{int(v) & 0xFFFFFFFF:x};")
        return r

    def h16(self, v):
        r = self.reg("rs")
        self.emit(f"mov.b16 {r}, 0x{int(v) & 0xFFFF:x};")
        return r

    def b64(self, v):
        r = self.reg("rd")
        self.emit(f"mov.b64 {r}, 0x{int(v) & 0xFFFFFFFFFFFFFFFF:x};")
        return r

    def coords(self, coords):
        return ", ".join(self.s32(c) for c in coords)

    def own(self, addr, what="operand"):
        return self.s32(getattr(addr, "addr", addr))

    def cluster(self, addr):
        return self.s32(getattr(addr, "addr", addr))

    def multicast(self, addr):
        return self.cluster(addr)

    def tensor_mode(self, load_mode, store):
        return tensor_mode(load_mode)

    def cache_hint(self, policy):
        """(qualifier, operand) of an L2 cache policy; ("", None) without one."""
        return ("", None) if policy is None else (".L2::cache_hint", self.b64(policy))

    def need(self, version):
        """The form needs PTX ISA ``version`` (major, minor)."""

    def value_regs(self, value, t):
        """The registers of a stored value: one per element of type t."""
        raw = value_bytes(value, t)
        size = np.dtype(VALUE_TYPES[t]).itemsize
        kind = "rd" if size == 8 else ("rs" if size < 4 else "r")
        regs = []
        for k in range(0, len(raw), size):
            r = self.reg(kind)
            self.emit(f"mov.b{max(size, 2) * 8} {r}, 0x{int.from_bytes(raw[k:k + size], 'little'):x};")
            regs.append(r)
        return regs

    def _offsets(self, mode, im2col_offsets, w_halo, w_offset):
        """The im2col offsets operand of a tensor load or prefetch ("" in the other modes)."""
        if mode == "im2col":
            return ", {" + ", ".join(self.h16(o) for o in (im2col_offsets or ())) + "}"
        if mode.startswith("im2col::w"):
            return ", {" + ", ".join(self.h16(o) for o in (w_halo, w_offset)) + "}"
        return ""

    # mbarrier instructions (operands in registers) ----------------------------------------
    def mbarrier_init(self, a, count):
        self.emit(f"mbarrier.init.shared::cta.b64 [{a}], {int(count)};")

    def mbarrier_inval(self, a):
        self.emit(f"mbarrier.inval.shared::cta.b64 [{a}];")

    def mbarrier_arrive(self, a, count=1, tx=0, remote=False, drop=False, no_complete=False):
        """An arrive (``.expect_tx`` with tx, ``.noComplete``, ``arrive_drop``; on another CTA's
        mbarrier ``.release.cluster.shared::cluster`` with the sink ``_``); returns the state register."""
        st = "_" if remote else self.reg("rd")
        head = ("mbarrier.arrive_drop" if drop else "mbarrier.arrive") + (".expect_tx" if tx else "")
        head += ".noComplete" if no_complete and not tx else ""
        tail = f", {int(tx)}" if tx else (f", {int(count)}" if no_complete or int(count) != 1 else "")
        sem = ".release.cluster.shared::cluster" if remote else ".shared::cta"
        self.emit(f"{head}{sem}.b64 {st}, [{a}]{tail};")
        return st

    def mbarrier_tx(self, kind, a, n, remote=False):
        """mbarrier.expect_tx / complete_tx (kind) of n bytes."""
        scope = "cluster.shared::cluster" if remote else "cta.shared::cta"
        self.emit(f"mbarrier.{kind}.relaxed.{scope}.b64 [{a}], {int(n)};")

    def mbarrier_wait(self, p, a, parity, op="try_wait"):
        """One try_wait / test_wait (op) of a phase parity into predicate p."""
        self.emit(f"mbarrier.{op}.parity.shared::cta.b64 {p}, [{a}], {int(parity) & 1};")

    # the Machine's calls -----------------------------------------------------------------
    def op_cp_async_bulk_tensor_load(self, tmap, coords, dst, mbar, cta=0, thread=0, dst_space="shared::cta",
                                     cta_mask=None, load_mode="tile", im2col_offsets=None, w_halo=0, w_offset=0,
                                     cta_group=None):
        mode = self.tensor_mode(load_mode, store=False)
        coords = [int(c) for c in coords]
        dims = 2 if mode == "tile::gather4" else len(coords)
        space, q = ptx_name(dst_space), ""
        if cta_mask is not None:
            space, q = "shared::cluster", ".multicast::cluster"
            d, b = self.multicast(dst), self.multicast(mbar)
        elif space == "shared::cta":
            self.need((8, 6))
            d, b = self.own(dst, "destination"), self.own(mbar, "mbarrier")
        else:
            d, b = self.cluster(dst), self.cluster(mbar)
        t = self.tmap(tmap)
        c = self.coords(coords)
        tail = self._offsets(mode, im2col_offsets, w_halo, w_offset)
        if cta_mask is not None:
            tail += ", " + self.h16(cta_mask)
        if cta_group is not None:
            q += f".cta_group::{int(cta_group)}"
        self.emit(f"cp.async.bulk.tensor.{dims}d.{space}.global.{mode}.mbarrier::complete_tx::bytes{q} "
                  f"[{d}], [{t}, {{{c}}}], [{b}]{tail};")

    def op_cp_async_bulk_tensor_store(self, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        self._tensor_store(None, tmap, coords, src, load_mode)

    def op_cp_reduce_async_bulk_tensor(self, op, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        self._tensor_store(redop_name(op), tmap, coords, src, load_mode)

    def _tensor_store(self, red, tmap, coords, src, load_mode):
        mode = self.tensor_mode(load_mode, store=True)
        coords = [int(c) for c in coords]
        dims = 2 if mode == "tile::scatter4" else len(coords)
        s, t = self.own(src, "source"), self.tmap(tmap)
        c = self.coords(coords)
        head = "cp.async.bulk.tensor" if red is None else "cp.reduce.async.bulk.tensor"
        red = "" if red is None else "." + red
        self.emit(f"{head}.{dims}d.global.shared::cta{red}.{mode}.bulk_group [{t}, {{{c}}}], [{s}];")

    def op_cp_async_bulk_prefetch_tensor(self, tmap, coords, load_mode="tile", im2col_offsets=None, w_halo=0,
                                         w_offset=0):
        mode = self.tensor_mode(load_mode, store=False)
        coords = [int(c) for c in coords]
        dims = 2 if mode == "tile::gather4" else len(coords)
        t = self.tmap(tmap)
        c = self.coords(coords)
        tail = self._offsets(mode, im2col_offsets, w_halo, w_offset)
        self.emit(f"cp.async.bulk.prefetch.tensor.{dims}d.L2.global.{mode} [{t}, {{{c}}}]{tail};")

    def op_cp_reduce_async_bulk(self, op, type, dst, src, size, mbar=None, cta=0, thread=0, noftz=False,
                                dst_space="global"):
        space = ptx_name(dst_space)
        if space not in ("global", "shared::cluster"):
            raise ValueError(f"cp.reduce.async.bulk has no .{space} destination (.global or .shared::cluster)")
        t = ptx_name(type)
        if t.startswith("noftz."):
            noftz, t = True, t[len("noftz."):]
        red = redop_name(op)
        s = self.own(src, "source")
        if space == "shared::cluster":
            d, b = self.cluster(dst), self.cluster(mbar)
            self.emit(f"cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.{red}.{t} "
                      f"[{d}], [{s}], {int(size)}, [{b}];")
            return
        g = self.g64(dst)
        self.emit(f"cp.reduce.async.bulk.global.shared::cta.bulk_group.{red}{'.noftz' if noftz else ''}.{t} "
                  f"[{g}], [{s}], {int(size)};")

    def op_cp_async_bulk_commit_group(self, cta=0, thread=0):
        self.emit("cp.async.bulk.commit_group;")

    def op_cp_async_bulk_wait_group(self, n=0, cta=0, thread=0, read=False):
        self.emit(f"cp.async.bulk.wait_group{'.read' if read else ''} {int(n)};")

    def op_cp_async(self, dst, src, cp_size, cta=0, thread=0, cache="ca", src_size=None, ignore_src=None,
                    prefetch=None, cache_policy=None):
        pf = ""
        if prefetch is not None:
            v = str(prefetch).strip().lstrip(".")
            pf = ".L2::" + v[4:].upper() if v.upper().startswith("L2::") else f".L2::{int(v)}B"
        d, g = self.own(dst, "destination"), self.g64(src)
        tail = ""
        if src_size is not None:
            tail = f", {int(src_size)}"
        elif ignore_src is not None:
            p = self.reg("p")
            self.emit(f"setp.ne.u32 {p}, {self.s32(int(bool(ignore_src)))}, 0;")
            tail = f", {p}"
        hint, pol = self.cache_hint(cache_policy)
        tail += f", {pol}" if pol else ""
        self.emit(f"cp.async.{ptx_name(cache)}.shared.global{hint}{pf} [{d}], [{g}], {int(cp_size)}{tail};")

    def op_cp_async_commit_group(self, cta=0, thread=0):
        self.emit("cp.async.commit_group;")

    def op_cp_async_wait_group(self, n=0, cta=0, thread=0):
        self.emit(f"cp.async.wait_group {int(n)};")

    def op_cp_async_wait_all(self, cta=0, thread=0):
        self.emit("cp.async.wait_all;")

    def op_cp_async_mbarrier_arrive(self, mbar, cta=0, thread=0, noinc=False, space="shared::cta", type="b64"):
        self.emit(f"cp.async.mbarrier.arrive{'.noinc' if noinc else ''}.shared::cta.b64 "
                  f"[{self.own(mbar, 'mbarrier')}];")

    def op_cp_async_bulk(self, dst, src, size, mbar=None, cta=0, thread=0, dst_space="shared::cta",
                         src_space="global", cta_mask=None, byte_mask=None, cache_policy=None):
        ds, ss = ptx_name(dst_space), ptx_name(src_space)
        hint, pol = self.cache_hint(cache_policy)
        tail = f", {pol}" if pol else ""
        if ds == "global":
            g, s = self.g64(dst), self.own(src, "source")
            mask = ""
            if byte_mask is not None:
                mask, tail = ".cp_mask", tail + f", {self.h16(byte_mask)}"
            self.emit(f"cp.async.bulk.global.shared::cta.bulk_group{hint}{mask} [{g}], [{s}], {int(size)}{tail};")
            return
        mc = ""
        if cta_mask is not None:
            ds, mc = "shared::cluster", ".multicast::cluster"
            d, b = self.multicast(dst), self.multicast(mbar)
            tail = f", {self.h16(cta_mask)}" + tail
        elif ds == "shared::cta":
            self.need((8, 6))
            d, b = self.own(dst, "destination"), self.own(mbar, "mbarrier")
        else:
            d, b = self.cluster(dst), self.cluster(mbar)
        srcop = self.g64(src) if ss == "global" else self.own(src, "source")
        self.emit(f"cp.async.bulk.{ds}.{ss}.mbarrier::complete_tx::bytes{mc}{hint} [{d}], [{srcop}], {int(size)}, "
                  f"[{b}]{tail};")

    def op_cp_async_bulk_prefetch_l2(self, src, size, cta=0, thread=0, cache_policy=None):
        self.emit(f"cp.async.bulk.prefetch.L2.global [{self.g64(src)}], {int(size)};")

    def op_st_async(self, dst, value, mbar, type="u32", cta=0, thread=0, weak=False):
        t = ptx_name(type)
        self.need((8, 1))
        regs = self.value_regs(value, t)
        d, b = self.cluster(dst), self.cluster(mbar)
        vec = "" if len(regs) == 1 else f".v{len(regs)}"
        val = regs[0] if len(regs) == 1 else "{" + ", ".join(regs) + "}"
        self.emit(f"st.async{'.weak' if weak else ''}.shared::cluster.mbarrier::complete_tx::bytes{vec}.{t} "
                  f"[{d}], {val}, [{b}];")

    def op_st_async_release(self, dst, value, type="u32", scope="gpu", mmio=False, cta=0, thread=0):
        t = ptx_name(type)
        if t in ("b8", "u8", "s8"):
            val = str(int.from_bytes(value_bytes(value, t), "little"))
        else:
            val = self.value_regs(value, t)[0]
        g = self.g64(dst)
        self.emit(f"st.async{'.mmio' if mmio else ''}.release.{ptx_name(scope)}.global.{t} [{g}], {val};")

    def op_st_bulk(self, dst, size, initval=0, cta=0, thread=0):
        self.emit(f"st.bulk.weak.shared::cta [{self.own(dst, 'destination')}], {int(size)}, {int(initval)};")

    def op_tensormap_replace(self, address, field, value, ord=0, cta=0, thread=0):
        f = ptx_name(field)
        f = {"interleave": "interleave_layout", "swizzle": "swizzle_mode", "fill": "fill_mode"}.get(f, f)
        wide = f in ("global_address", "global_stride")
        g = self.g64(address)
        ordop = f"{int(ord)}, " if f in ("box_dim", "global_dim", "global_stride", "element_stride") else ""
        if f in ("elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode"):
            val = str(int(value))
        else:
            val = self.b64(value) if wide else self.s32(value)
        self.emit(f"tensormap.replace.tile.{f}.global.b1024.b{64 if wide else 32} [{g}], {ordop}{val};")

    def op_fence_proxy_async(self, cta=0, thread=0, space=None):
        self.emit("fence.proxy.async" + ("" if space is None else "." + ptx_name(space)) + ";")

    def op_fence_proxy_tensormap(self, cta=0, thread=0, kind="acquire", address=None, size=128, scope="gpu"):
        if ptx_name(kind) == "release":
            self.emit(f"fence.proxy.tensormap::generic.release.{ptx_name(scope)};")
        else:
            self.emit(f"fence.proxy.tensormap::generic.acquire.{ptx_name(scope)} [{self.g64(address)}], {int(size)};")

    def op_fence_mbarrier_init(self, cta=0, thread=0):
        self.emit(FENCE_MBARRIER_INIT)

    def op_fence(self, cta=0, thread=0, scope="cta", sem="acq_rel"):
        self.emit(f"fence.{ptx_name(sem)}.{ptx_name(scope)};")

    def op_bar_sync(self, cta=0, barrier=0, threads=None):
        if threads is None:
            self.emit(f"barrier.sync {int(barrier)};")
        else:
            self.emit(f"barrier.sync {int(barrier)}, {32 * -(-len(tuple(threads)) // 32)};")

    def op_barrier_cluster(self, relaxed=False):
        self.emit(f"barrier.cluster.arrive{'.relaxed' if relaxed else ''};")
        self.emit("barrier.cluster.wait;")

    def op_mbarrier_arrive_flags(self, addr, count, tx, drop, no_complete, cta=0, thread=0):
        """Mbarrier.arrive_drop / arrive_no_complete / ... (the trace's event has no flags)."""
        self.mbarrier_arrive(self.own(addr, "mbarrier"), count, tx, drop=drop, no_complete=no_complete)
