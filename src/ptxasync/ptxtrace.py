"""A Machine's trace as a PTX module: the operations a Python program issued, in issue order.

``Machine.trace_ptx()`` (or ``ptxasync.ptx.from_machine(machine)``) prints one ``.entry`` whose
body holds, in the order they were issued, every instruction the program's calls stand for:
the asynchronous copies (tensor, bulk, cp.async, st.async, st.bulk, reductions, prefetches),
their commit / wait_group lines, the mbarrier operations, the fences and the barriers. Its
parameters are the machine's global buffers (``.param .u64 g<i>``, in registration order) and
the tensor maps the copies used (``.param .align 64 .b8 tmap<j>[128]``, first use first).
Global addresses are written as a buffer parameter plus an offset, shared addresses as the
model's (CTA window offsets; ``rank << 24 | offset`` for a shared::cluster address), other
operands as immediates.

What the calls were comes from two records: the Machine methods a program calls (kept, with
their arguments, while ``trace_enabled`` is on) and the trace's own events for the mbarrier
operations (``Mbarrier.arrive``, ``try_wait``, ... are the binding's methods). A wait that
succeeded is printed as a kernel writes it, a ``try_wait`` loop; one that did not as a single
``try_wait`` / ``test_wait``. Several issuing threads (or CTAs) put each line under a
predicate of its thread (``%tid.x``) and CTA (``%cluster_ctarank``).

Operations issued through ``Machine.replay`` or ``cp_async_bulk_tensor_load_batch`` are not
recorded one by one: printing a trace that holds one raises NotImplementedError.
"""
import numpy as np

__all__ = ["trace_ptx", "trace_launch"]

_TENSOR_MODES = {"tile": "tile", "im2col": "im2col", "im2col_no_offs": "im2col_no_offs",
                 "tile_gather4": "tile::gather4", "tile::gather4": "tile::gather4",
                 "tile_scatter4": "tile::scatter4", "tile::scatter4": "tile::scatter4",
                 "im2col_w": "im2col::w", "im2col::w": "im2col::w",
                 "im2col_w128": "im2col::w::128", "im2col::w::128": "im2col::w::128"}
_ST_TYPES = {"b32": "<u4", "u32": "<u4", "s32": "<i4", "f32": "<f4", "b64": "<u8", "u64": "<u8",
             "s64": "<i8", "f64": "<f8", "b8": "<u1", "u8": "<u1", "s8": "<i1", "b16": "<u2", "u16": "<u2",
             "s16": "<i2"}
_BULK_SPACES = ("shared::cta", "shared::cluster", "global")


def _name(v):
    """A PTX name given with or without its dot, or an enum member ("ADD" -> "add")."""
    if isinstance(v, str):
        return v.strip().lstrip(".").lower()
    name = getattr(v, "name", None)
    return (name if name is not None else str(v)).lower()


def _mode(load_mode):
    key = _name(load_mode)
    if key not in _TENSOR_MODES:
        raise ValueError(f"load mode {load_mode!r} has no PTX form")
    return _TENSOR_MODES[key]


class _Printer:
    def __init__(self, machine):
        self.m = machine
        self.lines = []
        self.n = {"r": 0, "rd": 0, "p": 0, "rs": 0}
        self.maps = []           # (bytes, name)
        self.labels = 0
        self.guards = {}         # (cta, thread) -> predicate register
        self.guarded = False

    # registers and operands ---------------------------------------------------------------
    def reg(self, kind):
        self.n[kind] += 1
        return f"%{kind}{self.n[kind]}"

    def emit(self, s):
        self.lines.append("\t" + s)

    def label(self):
        self.labels += 1
        return f"$L_{self.labels}"

    def s32(self, v):
        """A shared address or a 32-bit value in a register."""
        r = self.reg("r")
        self.emit(f"mov.b32 {r}, 0x{int(v) & 0xFFFFFFFF:x};")
        return r

    def h16(self, v):
        r = self.reg("rs")
        self.emit(f"mov.b16 {r}, 0x{int(v) & 0xFFFF:x};")
        return r

    def g64(self, address):
        """A global address: the buffer parameter that holds it plus the offset."""
        a = int(address)
        r = self.reg("rd")
        for i, b in enumerate(self.m._buffers):
            if b.address <= a < b.address + b.nbytes:
                self.emit(f"add.s64 {r}, %g{i}, {a - b.address};")
                return r
        self.emit(f"mov.b64 {r}, 0x{a:x};")        # no buffer holds it: the address as it was
        return r

    def tmap(self, tmap):
        if isinstance(tmap, (int, np.integer)) and not isinstance(tmap, bool):
            return self.g64(tmap)                    # a tensor map in global memory
        raw = bytes(tmap)
        for b, name in self.maps:
            if b == raw:
                break
        else:
            name = f"tmap{len(self.maps)}"
            self.maps.append((raw, name))
        r = self.reg("rd")
        self.emit(f"mov.u64 {r}, {name};")
        return r

    def mbar(self, mbar):
        return self.s32(getattr(mbar, "addr", mbar))

    def coords(self, coords):
        return ", ".join(self.s32(c) for c in coords)

    # one call of the program -----------------------------------------------------------
    def call(self, name, args, kw):
        fn = getattr(self, "op_" + name, None)
        if fn is None:
            raise NotImplementedError(f"Machine.{name} is not printed as PTX: its operations are not "
                                      "recorded one by one (issue them one call each)")
        fn(*args, **kw)

    def op_cp_async_bulk_tensor_load(self, tmap, coords, dst, mbar, cta=0, thread=0, dst_space="shared::cta",
                                     cta_mask=None, load_mode="tile", im2col_offsets=None, w_halo=0, w_offset=0,
                                     cta_group=None):
        mode = _mode(load_mode)
        coords = [int(c) for c in coords]
        space = "shared::cluster" if cta_mask is not None else _name(dst_space)
        dims = 2 if mode == "tile::gather4" else len(coords)
        d, b, t = self.s32(dst), self.mbar(mbar), self.tmap(tmap)
        c = self.coords(coords)
        tail = ""
        if mode == "im2col":
            tail = ", {" + ", ".join(self.h16(o) for o in (im2col_offsets or ())) + "}"
        elif mode.startswith("im2col::w"):
            tail = ", {" + ", ".join(self.h16(o) for o in (w_halo, w_offset)) + "}"
        q = ".multicast::cluster" if cta_mask is not None else ""
        if cta_mask is not None:
            tail += ", " + self.h16(cta_mask)
        if cta_group is not None:
            q += f".cta_group::{int(cta_group)}"
        self.emit(f"cp.async.bulk.tensor.{dims}d.{space}.global.{mode}.mbarrier::complete_tx::bytes{q} "
                  f"[{d}], [{t}, {{{c}}}], [{b}]{tail};")

    def op_load_box(self, *args, **kw):      # printed through the load it makes (recorded)
        pass

    def op_cp_async_bulk_tensor_store(self, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        self._store(None, tmap, coords, src, load_mode)

    def op_cp_reduce_async_bulk_tensor(self, op, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        self._store(op, tmap, coords, src, load_mode)

    def _store(self, op, tmap, coords, src, load_mode):
        mode = _mode(load_mode)
        coords = [int(c) for c in coords]
        dims = 2 if mode == "tile::scatter4" else len(coords)
        s, t = self.s32(src), self.tmap(tmap)
        c = self.coords(coords)
        head = "cp.async.bulk.tensor" if op is None else f"cp.reduce.async.bulk.tensor"
        red = "" if op is None else "." + _name(op)
        self.emit(f"{head}.{dims}d.global.shared::cta{red}.{mode}.bulk_group [{t}, {{{c}}}], [{s}];")

    def op_cp_async_bulk_prefetch_tensor(self, tmap, coords, load_mode="tile", im2col_offsets=None, w_halo=0,
                                         w_offset=0):
        mode = _mode(load_mode)
        coords = [int(c) for c in coords]
        dims = 2 if mode == "tile::gather4" else len(coords)
        t = self.tmap(tmap)
        c = self.coords(coords)
        tail = ""
        if mode == "im2col":
            tail = ", {" + ", ".join(self.h16(o) for o in (im2col_offsets or ())) + "}"
        elif mode.startswith("im2col::w"):
            tail = ", {" + ", ".join(self.h16(o) for o in (w_halo, w_offset)) + "}"
        self.emit(f"cp.async.bulk.prefetch.tensor.{dims}d.L2.global.{mode} [{t}, {{{c}}}]{tail};")

    def op_cp_reduce_async_bulk(self, op, type, dst, src, size, mbar=None, cta=0, thread=0, noftz=False,
                                dst_space="global"):
        t = _name(type)
        if t.startswith("noftz."):
            noftz, t = True, t[len("noftz."):]
        red = _name(op)
        s = self.s32(src)
        if _name(dst_space) == "shared::cluster":
            d, b = self.s32(dst), self.mbar(mbar)
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
        d, g = self.s32(dst), self.g64(src)
        tail = ""
        if src_size is not None:
            tail = f", {int(src_size)}"
        elif ignore_src is not None:
            p = self.reg("p")
            self.emit(f"setp.ne.u32 {p}, {self.s32(int(bool(ignore_src)))}, 0;")
            tail = f", {p}"
        hint = ""
        if cache_policy is not None:
            pol = self.reg("rd")
            self.emit(f"mov.b64 {pol}, 0x{int(cache_policy) & 0xFFFFFFFFFFFFFFFF:x};")
            hint, tail = ".L2::cache_hint", tail + f", {pol}"
        self.emit(f"cp.async.{_name(cache)}.shared.global{hint}{pf} [{d}], [{g}], {int(cp_size)}{tail};")

    def op_cp_async_commit_group(self, cta=0, thread=0):
        self.emit("cp.async.commit_group;")

    def op_cp_async_wait_group(self, n=0, cta=0, thread=0):
        self.emit(f"cp.async.wait_group {int(n)};")

    def op_cp_async_wait_all(self, cta=0, thread=0):
        self.emit("cp.async.wait_all;")

    def op_cp_async_mbarrier_arrive(self, mbar, cta=0, thread=0, noinc=False, space="shared::cta", type="b64"):
        self.emit(f"cp.async.mbarrier.arrive{'.noinc' if noinc else ''}.shared::cta.b64 [{self.mbar(mbar)}];")

    def op_cp_async_bulk(self, dst, src, size, mbar=None, cta=0, thread=0, dst_space="shared::cta",
                         src_space="global", cta_mask=None, byte_mask=None, cache_policy=None):
        ds, ss = _name(dst_space), _name(src_space)
        hint, tail = "", ""
        if cache_policy is not None:
            pol = self.reg("rd")
            self.emit(f"mov.b64 {pol}, 0x{int(cache_policy) & 0xFFFFFFFFFFFFFFFF:x};")
            hint, tail = ".L2::cache_hint", f", {pol}"
        if ds == "global":
            g, s = self.g64(dst), self.s32(src)
            mask = ""
            if byte_mask is not None:
                mask, tail = ".cp_mask", tail + f", {self.h16(byte_mask)}"
            self.emit(f"cp.async.bulk.global.shared::cta.bulk_group{hint}{mask} [{g}], [{s}], {int(size)}{tail};")
            return
        d, b = self.s32(dst), self.mbar(mbar)
        srcop = self.g64(src) if ss == "global" else self.s32(src)
        mc = ""
        if cta_mask is not None:
            ds, mc = "shared::cluster", ".multicast::cluster"
            tail = f", {self.h16(cta_mask)}" + tail
        self.emit(f"cp.async.bulk.{ds}.{ss}.mbarrier::complete_tx::bytes{mc}{hint} [{d}], [{srcop}], {int(size)}, "
                  f"[{b}]{tail};")

    def op_cp_async_bulk_prefetch_l2(self, src, size, cta=0, thread=0, cache_policy=None):
        self.emit(f"cp.async.bulk.prefetch.L2.global [{self.g64(src)}], {int(size)};")

    def _value_regs(self, value, t):
        """The registers of st.async's value: raw bytes stored unchanged, else the numbers."""
        dt = np.dtype(_ST_TYPES[t])
        if isinstance(value, (bytes, bytearray, memoryview)) or (isinstance(value, np.ndarray)
                                                                 and value.dtype == np.uint8):
            raw = bytes(np.asarray(memoryview(value)).reshape(-1).view(np.uint8))
        else:
            raw = np.asarray(value, dtype=dt).reshape(-1).tobytes()
        words = [int.from_bytes(raw[i:i + dt.itemsize], "little") for i in range(0, len(raw), dt.itemsize)]
        kind = "rd" if dt.itemsize == 8 else ("rs" if dt.itemsize < 4 else "r")
        regs = []
        for w in words:
            r = self.reg(kind)
            self.emit(f"mov.b{max(dt.itemsize, 2) * 8} {r}, 0x{w:x};")
            regs.append(r)
        return regs

    def op_st_async(self, dst, value, mbar, type="u32", cta=0, thread=0, weak=False):
        t = _name(type)
        regs = self._value_regs(value, t)
        d, b = self.s32(dst), self.mbar(mbar)
        vec = "" if len(regs) == 1 else f".v{len(regs)}"
        val = regs[0] if len(regs) == 1 else "{" + ", ".join(regs) + "}"
        self.emit(f"st.async{'.weak' if weak else ''}.shared::cluster.mbarrier::complete_tx::bytes{vec}.{t} "
                  f"[{d}], {val}, [{b}];")

    def op_st_async_release(self, dst, value, type="u32", scope="gpu", mmio=False, cta=0, thread=0):
        t = _name(type)
        if t in ("b8", "u8", "s8"):
            val = str(int.from_bytes(bytes(np.asarray(value, dtype=_ST_TYPES[t]).reshape(-1).tobytes())
                                     if not isinstance(value, (bytes, bytearray)) else bytes(value), "little"))
        else:
            val = self._value_regs(value, t)[0]
        g = self.g64(dst)
        self.emit(f"st.async{'.mmio' if mmio else ''}.release.{_name(scope)}.global.{t} [{g}], {val};")

    def op_st_bulk(self, dst, size, initval=0, cta=0, thread=0):
        self.emit(f"st.bulk.weak.shared::cta [{self.s32(dst)}], {int(size)}, {int(initval)};")

    def op_tensormap_replace(self, address, field, value, ord=0, cta=0, thread=0):
        f = _name(field)
        f = {"interleave": "interleave_layout", "swizzle": "swizzle_mode", "fill": "fill_mode"}.get(f, f)
        wide = f in ("global_address", "global_stride")
        g = self.g64(address)
        ordop = f"{int(ord)}, " if f in ("box_dim", "global_dim", "global_stride", "element_stride") else ""
        if f in ("elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode"):
            val = str(int(value))
        elif wide:
            val = self.reg("rd")
            self.emit(f"mov.b64 {val}, 0x{int(value) & 0xFFFFFFFFFFFFFFFF:x};")
        else:
            val = self.s32(value)
        self.emit(f"tensormap.replace.tile.{f}.global.b1024.b{64 if wide else 32} [{g}], {ordop}{val};")

    def op_fence_proxy_async(self, cta=0, thread=0, space=None):
        self.emit("fence.proxy.async" + ("" if space is None else "." + _name(space)) + ";")

    def op_fence_proxy_tensormap(self, cta=0, thread=0, kind="acquire", address=None, size=128, scope="gpu"):
        if _name(kind) == "release":
            self.emit(f"fence.proxy.tensormap::generic.release.{_name(scope)};")
        else:
            self.emit(f"fence.proxy.tensormap::generic.acquire.{_name(scope)} [{self.g64(address)}], {int(size)};")

    def op_fence_mbarrier_init(self, cta=0, thread=0):
        self.emit("fence.mbarrier_init.release.cluster;")

    def op_fence(self, cta=0, thread=0, scope="cta", sem="acq_rel"):
        self.emit(f"fence.{_name(sem)}.{_name(scope)};")

    def op_bar_sync(self, cta=0, barrier=0, threads=None):
        if threads is None:
            self.emit(f"barrier.sync {int(barrier)};")
        else:
            self.emit(f"barrier.sync {int(barrier)}, {32 * -(-len(tuple(threads)) // 32)};")

    def op_barrier_cluster(self, relaxed=False):
        self.emit(f"barrier.cluster.arrive{'.relaxed' if relaxed else ''};")
        self.emit("barrier.cluster.wait;")

    def op_mbarrier_arrive_flags(self, addr, count, tx, drop, no_complete, cta=0, thread=0):
        """Mbarrier.arrive_drop / arrive_no_complete / ... (the event has no flags)."""
        b = self.s32(addr)
        st = self.reg("rd")
        name = "mbarrier.arrive_drop" if drop else "mbarrier.arrive"
        if tx:
            self.emit(f"{name}.expect_tx.shared::cta.b64 {st}, [{b}], {int(tx)};")
        elif no_complete:
            self.emit(f"{name}.noComplete.shared::cta.b64 {st}, [{b}], {int(count)};")
        else:
            self.emit(f"{name}.shared::cta.b64 {st}, [{b}]{'' if int(count) == 1 else f', {int(count)}'};")

    # one event of the trace (mbarrier operations by a thread) ---------------------------------
    def event(self, e):
        a = e.addr if e.rank == e.cta else (e.rank << 24) | e.addr
        remote = e.rank != e.cta
        space = "shared::cluster" if remote else "shared::cta"
        if e.kind == "init":
            self.emit(f"mbarrier.init.shared::cta.b64 [{self.s32(a)}], {int(e.a)};")
        elif e.kind == "inval":
            self.emit(f"mbarrier.inval.shared::cta.b64 [{self.s32(a)}];")
        elif e.kind == "arrive":
            b = self.s32(a)
            st = "_" if remote else self.reg("rd")
            sem = ".release.cluster" if remote else ""
            if e.b:
                self.emit(f"mbarrier.arrive.expect_tx{sem}.{space}.b64 {st}, [{b}], {int(e.b)};")
            else:
                cnt = "" if e.a == 1 else f", {int(e.a)}"
                self.emit(f"mbarrier.arrive{sem}.{space}.b64 {st}, [{b}]{cnt};")
        elif e.kind in ("expect_tx", "complete_tx"):
            scope = "cluster" if remote else "cta"
            self.emit(f"mbarrier.{e.kind}.relaxed.{scope}.{space}.b64 [{self.s32(a)}], {int(e.a)};")
        elif e.kind == "wait":
            b, p = self.s32(a), self.reg("p")
            op = "try_wait" if e.b & 2 else "test_wait"
            if e.b & 1:             # it succeeded: the loop a kernel writes
                top = self.label()
                self.lines.append(f"{top}:")
                self.emit(f"mbarrier.{op}.parity.shared::cta.b64 {p}, [{b}], {int(e.a) & 1};")
                self.emit(f"@!{p} bra {top};")
            else:
                self.emit(f"mbarrier.{op}.parity.shared::cta.b64 {p}, [{b}], {int(e.a) & 1};")

    # guards: which thread of which CTA runs a line --------------------------------------------
    def guard(self, cta, thread, body):
        if not self.guarded:
            self.lines.extend(body)
            return
        key = (int(cta), int(thread))
        if key not in self.guards:
            self.guards[key] = f"%pg{len(self.guards)}"
        skip = self.label()
        self.lines.append(f"\t@!{self.guards[key]} bra {skip};")
        self.lines.extend(body)
        self.lines.append(f"{skip}:")


_PRINTED_EVENTS = ("init", "inval", "arrive", "expect_tx", "complete_tx", "wait")


def _who(name, args, kw):
    """The (cta, thread) of a recorded call."""
    if name == "barrier_cluster":
        return None
    if name == "mbarrier_arrive_flags":
        return kw["cta"], kw["thread"]
    return kw.get("cta", 0), kw.get("thread", 0)


def trace_ptx(machine, entry="trace"):
    """The PTX module of what ``machine`` was asked to do while its trace was on (see the module
    docstring). ``entry`` names the ``.entry``."""
    return _print(machine, entry)[0]


def trace_launch(machine, entry="trace"):
    """What replaying the trace through ``ptx.Kernel`` takes: ``{"text", "params", "grid",
    "block", "cluster"}``, the parameters by name (each global buffer's address, each tensor
    map's 128 bytes) and a launch of one cluster of the machine's CTAs with enough threads for
    the highest thread id that issued. Run it on a machine with the same buffers at the same
    addresses (their contents as they were before the program ran)."""
    text, pr = _print(machine, entry)
    params = {f"g{i}": b.address for i, b in enumerate(machine._buffers)}
    params.update({name: raw for raw, name in pr.maps})
    threads = 1 + max((t for _, t in pr.guards), default=0)
    n = machine.nctas
    return {"text": text, "params": params, "grid": (n, 1, 1), "block": (threads, 1, 1), "cluster": (n, 1, 1)}


def _print(machine, entry):
    if not machine.trace_enabled and not machine._calls:
        raise ValueError("the machine's trace is off: Machine(trace=True) or machine.trace_enabled = True "
                         "before the program issues its operations")
    from .check import TraceEvent
    events = [TraceEvent(*e) for e in machine._trace_events(0)]
    calls = list(machine._calls)
    pr = _Printer(machine)
    # which events a recorded call made (printed from the call), and the issuers
    covered = [False] * len(events)
    who = set()
    for name, args, kw, n0, n1 in calls:
        for i in range(n0, min(n1, len(events))):
            covered[i] = True
        w = _who(name, args, kw)
        if w is not None and name != "load_box":
            who.add(w)
    printed = [e for i, e in enumerate(events) if not covered[i] and e.kind in _PRINTED_EVENTS
               and e.thread is not None and e.op is None]
    who.update((e.cta, e.thread) for e in printed)
    pr.guarded = bool(who - {(0, 0)}) or machine.nctas > 1
    # the body: calls at their place among the events
    ci = 0
    for i in range(len(events) + 1):
        while ci < len(calls) and calls[ci][3] <= i:
            name, args, kw, _, _ = calls[ci]
            ci += 1
            mark = len(pr.lines)
            pr.call(name, args, kw)
            body = pr.lines[mark:]
            del pr.lines[mark:]
            w = _who(name, args, kw)
            if w is None or name == "load_box":
                pr.lines.extend(body)
            else:
                pr.guard(*w, body)
        if i < len(events) and not covered[i]:
            e = events[i]
            if e.kind in _PRINTED_EVENTS and e.thread is not None and e.op is None:
                mark = len(pr.lines)
                pr.event(e)
                body = pr.lines[mark:]
                del pr.lines[mark:]
                pr.guard(e.cta, e.thread, body)
    return _module(pr, machine, entry), pr


def _module(pr, machine, entry):
    target = machine.target
    version = "9.0"
    params = [f"\t.param .u64 g{i}" for i in range(len(machine._buffers))]
    params += [f"\t.param .align 64 .b8 {name}[128]" for _, name in pr.maps]
    head = [f".version {version}", f".target {target}", ".address_size 64", "",
            f".visible .entry {entry}(" + ("" if params else ")")]
    if params:
        head += [",\n".join(params), ")"]
    head.append("{")
    decl = []
    for kind, width in (("p", "pred"), ("rs", "b16"), ("r", "b32"), ("rd", "b64")):
        if pr.n[kind]:
            decl.append(f"\t.reg .{width} %{kind}<{pr.n[kind] + 1}>;")
    if machine._buffers:
        decl.append("\t.reg .b64 " + ", ".join(f"%g{i}" for i in range(len(machine._buffers))) + ";")
    setup = []
    for i in range(len(machine._buffers)):
        setup += [f"\tld.param.u64 %g{i}, [g{i}];", f"\tcvta.to.global.u64 %g{i}, %g{i};"]
    if pr.guards:
        decl.append("\t.reg .b32 %tx, %rank;")
        decl.append(f"\t.reg .pred %pt, %pc, %pg<{len(pr.guards)}>;")
        setup += ["\tmov.u32 %tx, %tid.x;", "\tmov.u32 %rank, %cluster_ctarank;"]
        for (cta, thread), p in pr.guards.items():
            setup += [f"\tsetp.eq.u32 %pt, %tx, {thread};", f"\tsetp.eq.u32 %pc, %rank, {cta};",
                      f"\tand.pred {p}, %pt, %pc;"]
    return "\n".join(head + decl + setup + pr.lines + ["\tret;", "}", ""])
