"""A Program as one PTX kernel (one CTA, or one cluster of CTAs launched with
cuLaunchKernelEx; thread 0 of each CTA issues that CTA's operations).

The kernel: every thread copies its CTA's initial shared memory in from global
memory (16 bytes at a time), ``fence.proxy.async.shared::cta``, ``bar.sync`` (and
``barrier.cluster`` in a cluster); thread 0 of each CTA issues its operations in
program order, with the program's addresses and operands as immediates (global
addresses as buffer base + offset, the bases being kernel parameters; tensor
maps as ``__grid_constant__``-style ``.param`` blocks whose generic address is
the operand; another CTA's shared address through ``mapa``). A
``barrier_cluster`` operation is a ``barrier.cluster`` of every thread: the
operations before it, of every CTA, are issued before any after it. Then
thread 0 waits for its bulk async-groups and cp.async groups, probes each of its
CTA's mbarriers with ``mbarrier.test_wait.parity 0`` (has the phase of parity 0
completed?), and after a barrier every thread copies the shared memory out.

Status words (u64, in the status buffer): 0 the shared-window address of the
dynamic shared memory, 1 the number of CTAs in the cluster, then one slot per value-returning operation
(arrive states, waits: 1 completed / 2 timed out) and one per mbarrier probe
(1 / 0). A wait that timed out stops its CTA's issuing (the CTA still takes
part in every barrier, so the others run to the end).

The PTX text is written here, instruction by instruction; the PTX printer of the
core (csrc/core/ptx/) can take this job once it prints every form used here.
"""
import inspect

import numpy as np

from .program import GAddr, MapRef

__all__ = ["generate", "issuer", "WAIT_TRIES", "ENTRY"]

ENTRY = "ptxasync_run"
WAIT_TRIES = 4000          # try_wait.parity attempts (each suspends up to ~8k cycles) before a timeout
_BULK_DIRS = {("shared::cta", "global"), ("shared::cluster", "global"), ("global", "shared::cta"),
              ("shared::cluster", "shared::cta")}
_REDOPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
_ST_ASYNC = {"b32": 4, "u32": 4, "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8}


def _imm32(v):
    return f"0x{int(v) & 0xFFFFFFFF:08x}"


def _addr_of(x):
    return int(getattr(x, "addr", x))


class _Gen:
    def __init__(self, prog):
        self.prog = prog
        self.lines = []
        self.nr = self.nrd = self.np = self.nh = 0
        self.slots = []          # (kind, op index or mbarrier address)
        self.labels = 0
        self.version = (8, 0)
        self.cta = 0                 # the CTA issuing the operation being generated
        self.block_end = None        # where a timed-out wait goes (the end of its CTA's block)

    # registers
    def r(self):
        self.nr += 1
        return f"%r{self.nr}"

    def rd(self):
        self.nrd += 1
        return f"%rd{self.nrd}"

    def p(self):
        self.np += 1
        return f"%p{self.np}"

    def h(self):
        self.nh += 1
        return f"%h{self.nh}"

    def emit(self, s):
        self.lines.append("\t" + s)

    def label(self, name):
        self.lines.append(f"{name}:")

    def new_label(self, what):
        self.labels += 1
        return f"L_{what}_{self.labels}"

    def slot(self, kind, key):
        self.slots.append((kind, key))
        return 8 * (1 + len(self.slots))     # byte offset in the status buffer (words 0, 1 are fixed)

    # operands
    def s32(self, v):
        """A shared address (or any 32-bit immediate) in a register."""
        reg = self.r()
        self.emit(f"mov.u32 {reg}, {_imm32(v)};")
        return reg

    def g64(self, a):
        """A global address: a GAddr (buffer base + offset) or a raw integer."""
        reg = self.rd()
        if isinstance(a, GAddr):
            self.emit(f"add.s64 {reg}, %gb{a.buffer.index}, {a.offset};")
        else:
            self.emit(f"mov.u64 {reg}, {int(a)};")
        return reg

    def tmap(self, m):
        if not isinstance(m, MapRef):
            raise TypeError(f"a tensor map of the program (MapRef) is needed, not {type(m).__name__}")
        return f"%tm{m.index}"

    def coords(self, coords):
        return ", ".join(self.s32(c) for c in coords)

    # shared addresses (the Machine's form: r << 24 | offset in a cluster)
    def window(self, loc):
        if loc < self.prog.smem_base:
            raise ValueError(f"shared address {loc:#x} is below the dynamic shared memory at "
                             f"{self.prog.smem_base:#x} (on sm_90 the first KiB of a CTA's window is the system's)")

    def local(self, addr, what="operand"):
        """A shared::cta operand: an address of the issuing CTA. In a cluster launch
        CTA r's own window is at r << 24 | offset (golden C1), the Machine's form,
        so the address is used as it is."""
        rank, loc = self.prog.split(addr)
        self.window(loc)
        if rank != self.cta:
            raise ValueError(f"the shared::cta {what} {int(getattr(addr, 'addr', addr)):#x} is in CTA {rank}; "
                             f"the operation is issued by CTA {self.cta}")
        return self.s32(int(getattr(addr, "addr", addr)))

    def cluster(self, addr):
        """A shared::cluster operand: mapa of the issuing CTA's address at the same
        offset into the CTA it names (a plain shared::cta address in a one-CTA program)."""
        rank, loc = self.prog.split(addr)
        self.window(loc)
        if self.prog.ctas == 1:
            return self.s32(loc)
        reg = self.r()
        self.emit(f"mapa.shared::cluster.u32 {reg}, {self.s32(self.cta << 24 | loc)}, {rank};")
        return reg

    def own_or_cluster(self, addr):
        """A multicast operand: the issuing CTA's own address (as CUTLASS passes it;
        each destination CTA uses the same offset), mapa into another CTA."""
        rank, loc = self.prog.split(addr)
        return self.local(addr) if rank == self.cta else self.cluster(addr)

    # --- operations -------------------------------------------------------------------
    def op(self, i, op):
        fn = getattr(self, "op_" + op.name, None)
        if fn is None:
            raise NotImplementedError(f"operation {op.name} has no PTX form here yet")
        self.emit(f"// op {i}: {' '.join(repr(op).split())}"[:200])
        fn(i, *op.args, **op.kw)

    def op_mbarrier_init(self, i, mbar, count=1):
        self.emit(f"mbarrier.init.shared::cta.b64 [{self.local(mbar)}], {int(count)};")
        self.emit("fence.mbarrier_init.release.cluster;")

    def _store_state(self, i, reg):
        off = self.slot("state", i)
        self.emit(f"st.global.u64 [%st+{off}], {reg};")

    def op_mbarrier_arrive(self, i, mbar, count=1):
        s = self.rd()
        cnt = f", {int(count)}" if int(count) != 1 else ""
        self.emit(f"mbarrier.arrive.shared::cta.b64 {s}, [{self.local(mbar)}]{cnt};")
        self._store_state(i, s)

    def op_mbarrier_arrive_expect_tx(self, i, mbar, tx):
        s = self.rd()
        self.emit(f"mbarrier.arrive.expect_tx.shared::cta.b64 {s}, [{self.local(mbar)}], {int(tx)};")
        self._store_state(i, s)

    def op_mbarrier_expect_tx(self, i, mbar, tx):
        self.emit(f"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{self.local(mbar)}], {int(tx)};")

    def op_mbarrier_complete_tx(self, i, mbar, tx):
        self.emit(f"mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [{self.local(mbar)}], {int(tx)};")

    def op_mbarrier_wait(self, i, mbar, parity):
        a = self.local(mbar)
        n, p, q = self.r(), self.p(), self.p()
        top, done = self.new_label("wait"), self.new_label("waited")
        off = self.slot("wait", i)
        self.emit(f"mov.u32 {n}, 0;")
        self.label(top)
        self.emit(f"mbarrier.try_wait.parity.shared::cta.b64 {p}, [{a}], {int(parity) & 1};")
        self.emit(f"@{p} bra {done};")
        self.emit(f"add.u32 {n}, {n}, 1;")
        self.emit(f"setp.lt.u32 {q}, {n}, {WAIT_TRIES};")
        self.emit(f"@{q} bra {top};")
        # timed out: say so, and this CTA issues nothing more
        self.emit(f"st.global.u64 [%st+{off}], 2;")
        self.emit("setp.eq.u32 %stop, %tx, %tx;")
        self.emit(f"bra {self.block_end};")
        self.label(done)
        self.emit(f"st.global.u64 [%st+{off}], 1;")

    def op_mbarrier_try_wait(self, i, mbar, parity):
        """As a wait, bounded the same way, but a timeout is an answer (False), not the end."""
        a = self.local(mbar)
        n, p, q = self.r(), self.p(), self.p()
        top, done, end = self.new_label("try"), self.new_label("tried"), self.new_label("try_end")
        off = self.slot("try", i)
        self.emit(f"mov.u32 {n}, 0;")
        self.label(top)
        self.emit(f"mbarrier.try_wait.parity.shared::cta.b64 {p}, [{a}], {int(parity) & 1};")
        self.emit(f"@{p} bra {done};")
        self.emit(f"add.u32 {n}, {n}, 1;")
        self.emit(f"setp.lt.u32 {q}, {n}, {WAIT_TRIES};")
        self.emit(f"@{q} bra {top};")
        self.emit(f"st.global.u64 [%st+{off}], 0;")
        self.emit(f"bra {end};")
        self.label(done)
        self.emit(f"st.global.u64 [%st+{off}], 1;")
        self.label(end)

    def op_mbarrier_test_wait(self, i, mbar, parity):
        p, s = self.p(), self.rd()
        off = self.slot("test", i)
        self.emit(f"mbarrier.test_wait.parity.shared::cta.b64 {p}, [{self.local(mbar)}], {int(parity) & 1};")
        self.emit(f"selp.u64 {s}, 1, 0, {p};")
        self.emit(f"st.global.u64 [%st+{off}], {s};")

    def _tensor_mode(self, load_mode, store):
        mode = str(load_mode).strip().lstrip(".")
        ok = ("tile", "im2col_no_offs") if store else ("tile", "im2col")
        if mode not in ok:
            raise NotImplementedError(f"load mode {load_mode!r} has no PTX form here (sm_90: {', '.join(ok)})")
        return mode

    def op_cp_async_bulk_tensor_load(self, i, tmap, coords, dst, mbar, cta=0, thread=0, dst_space="shared::cta",
                                     cta_mask=None, load_mode="tile", im2col_offsets=None):
        mode = self._tensor_mode(load_mode, store=False)
        space = str(dst_space).lstrip(".")
        mc = ""
        if space == "shared::cta":
            self.version = max(self.version, (8, 6))
            d, b = self.local(dst, "destination"), self.local(mbar, "mbarrier")
        elif cta_mask is not None:
            d, b = self.own_or_cluster(dst), self.own_or_cluster(mbar)
            mc = ".multicast::cluster"
        else:
            d, b = self.cluster(dst), self.cluster(mbar)
        c = self.coords(coords)
        tail = ""
        if mode == "im2col":
            hs = []
            for o in im2col_offsets or ():
                hreg = self.h()
                self.emit(f"mov.u16 {hreg}, {int(o) & 0xFFFF};")
                hs.append(hreg)
            tail = ", {" + ", ".join(hs) + "}"
        if mc:
            mask = self.h()
            self.emit(f"mov.u16 {mask}, {int(cta_mask) & 0xFFFF};")
            tail += f", {mask}"
        self.emit(f"cp.async.bulk.tensor.{len(coords)}d.{space}.global.{mode}.mbarrier::complete_tx::bytes{mc} "
                  f"[{d}], [{self.tmap(tmap)}, {{{c}}}], [{b}]{tail};")

    def op_cp_async_bulk_tensor_store(self, i, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        mode = self._tensor_mode(load_mode, store=True)
        s = self.local(src, "source")
        c = self.coords(coords)
        self.emit(f"cp.async.bulk.tensor.{len(coords)}d.global.shared::cta.{mode}.bulk_group "
                  f"[{self.tmap(tmap)}, {{{c}}}], [{s}];")

    def op_cp_reduce_async_bulk_tensor(self, i, op, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        mode = self._tensor_mode(load_mode, store=True)
        red = _redop_name(op)
        s = self.local(src, "source")
        c = self.coords(coords)
        self.emit(f"cp.reduce.async.bulk.tensor.{len(coords)}d.global.shared::cta.{red}.{mode}.bulk_group "
                  f"[{self.tmap(tmap)}, {{{c}}}], [{s}];")

    def op_cp_async_bulk_commit_group(self, i, cta=0, thread=0):
        self.emit("cp.async.bulk.commit_group;")

    def op_cp_async_bulk_wait_group(self, i, n=0, cta=0, thread=0, read=False):
        self.emit(f"cp.async.bulk.wait_group{'.read' if read else ''} {int(n)};")

    def op_cp_reduce_async_bulk(self, i, op, type, dst, src, size, mbar=None, cta=0, thread=0, noftz=False,
                                dst_space="global"):
        space = str(dst_space).strip().lstrip(".")
        if space not in ("global", "shared::cluster"):
            raise ValueError(f"cp.reduce.async.bulk has no .{space} destination (.global or .shared::cluster)")
        t = str(type).strip().lstrip(".").lower()
        if t.startswith("noftz."):
            noftz, t = True, t[len("noftz."):]
        red = _redop_name(op)
        if space == "shared::cluster":
            d, s, b = self.cluster(dst), self.local(src, "source"), self.cluster(mbar)
            self.emit(f"cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.{red}.{t} "
                      f"[{d}], [{s}], {int(size)}, [{b}];")
            return
        g, s = self.g64(dst), self.local(src, "source")
        self.emit(f"cp.reduce.async.bulk.global.shared::cta.bulk_group.{red}{'.noftz' if noftz else ''}.{t} "
                  f"[{g}], [{s}], {int(size)};")

    def op_cp_async_bulk(self, i, dst, src, size, mbar=None, cta=0, thread=0, dst_space="shared::cta",
                         src_space="global", cta_mask=None, byte_mask=None, cache_policy=None):
        key = (str(dst_space).lstrip("."), str(src_space).lstrip("."))
        if key not in _BULK_DIRS or byte_mask is not None:
            raise NotImplementedError(f"cp.async.bulk .{key[0]}.{key[1]} (no cp_mask: sm_100) has no PTX form here")
        if cta_mask is not None and key != ("shared::cluster", "global"):
            raise ValueError("only cp.async.bulk.shared::cluster.global multicasts (.multicast::cluster)")
        if key == ("global", "shared::cta"):
            g, s = self.g64(dst), self.local(src, "source")
            self.emit(f"cp.async.bulk.global.shared::cta.bulk_group [{g}], [{s}], {int(size)};")
            return
        mc = ""
        if key[0] == "shared::cta":
            self.version = max(self.version, (8, 6))
            d, b = self.local(dst, "destination"), self.local(mbar, "mbarrier")
        elif cta_mask is not None:
            d, b = self.own_or_cluster(dst), self.own_or_cluster(mbar)
            mask = self.h()
            self.emit(f"mov.u16 {mask}, {int(cta_mask) & 0xFFFF};")
            mc = ".multicast::cluster"
        else:
            d, b = self.cluster(dst), self.cluster(mbar)
        srcop = self.g64(src) if key[1] == "global" else self.local(src, "source")
        tail = f", {mask}" if mc else ""
        self.emit(f"cp.async.bulk.{key[0]}.{key[1]}.mbarrier::complete_tx::bytes{mc} [{d}], [{srcop}], {int(size)}, "
                  f"[{b}]{tail};")

    def op_cp_async(self, i, dst, src, cp_size, cta=0, thread=0, cache="ca", src_size=None, ignore_src=None,
                    prefetch=None, cache_policy=None):
        cache = str(cache).strip().lstrip(".")
        pf = ""
        if prefetch is not None:
            v = str(prefetch).strip().lstrip(".")
            pf = "." + (v if v.startswith("L2::") else f"L2::{int(v)}B")
        d, g = self.local(dst, "destination"), self.g64(src)
        tail = ""
        if src_size is not None:
            tail = f", {int(src_size)}"
        elif ignore_src is not None:
            pr, z = self.p(), self.r()
            self.emit(f"mov.u32 {z}, {int(bool(ignore_src))};")
            self.emit(f"setp.ne.u32 {pr}, {z}, 0;")
            tail = f", {pr}"
        self.emit(f"cp.async.{cache}.shared.global{pf} [{d}], [{g}], {int(cp_size)}{tail};")

    def op_cp_async_commit_group(self, i, cta=0, thread=0):
        self.emit("cp.async.commit_group;")

    def op_cp_async_wait_group(self, i, n=0, cta=0, thread=0):
        self.emit(f"cp.async.wait_group {int(n)};")

    def op_cp_async_wait_all(self, i, cta=0, thread=0):
        self.emit("cp.async.wait_all;")

    def op_cp_async_mbarrier_arrive(self, i, mbar, cta=0, thread=0, noinc=False, space="shared::cta", type="b64"):
        self.emit(f"cp.async.mbarrier.arrive{'.noinc' if noinc else ''}.shared::cta.b64 [{self.local(mbar)}];")

    def op_st_async(self, i, dst, value, mbar, type="u32", cta=0, thread=0, weak=False):
        t = str(type).strip().lstrip(".").lower()
        if t not in _ST_ASYNC:
            raise ValueError(f"st.async has no .{t} form (.b32 .u32 .s32 .f32 .b64 .u64 .s64 .f64)")
        esize = _ST_ASYNC[t]
        raw = _value_bytes(value, t, esize)
        n = len(raw) // esize
        if len(raw) % esize or n not in (1, 2, 4) or n * esize > 16:
            raise ValueError(f"st.async stores 1, 2 or 4 .{t} elements of at most 16 bytes in all, "
                             f"not {len(raw)} bytes")
        self.version = max(self.version, (8, 1))
        regs = []
        for k in range(n):
            v = int.from_bytes(raw[k * esize:(k + 1) * esize], "little")
            reg = self.r() if esize == 4 else self.rd()
            self.emit(f"mov.b{8 * esize} {reg}, 0x{v:0{2 * esize}x};")
            regs.append(reg)
        d, b = self.cluster(dst), self.cluster(mbar)
        vec = "" if n == 1 else f".v{n}"
        val = regs[0] if n == 1 else "{" + ", ".join(regs) + "}"
        self.emit(f"st.async{'.weak' if weak else ''}.shared::cluster.mbarrier::complete_tx::bytes{vec}.{t} "
                  f"[{d}], {val}, [{b}];")

    def op_write_shared(self, i, addr, data):
        raw = _raw(data)
        a = self.local(addr)
        v = self.r()
        for k, byte in enumerate(raw):
            self.emit(f"mov.u32 {v}, {byte};")
            self.emit(f"st.shared.u8 [{a}+{k}], {v};")
        # the async proxy reads these bytes after this point (as Machine's CTA.write then a copy)
        self.emit("fence.proxy.async.shared::cta;")

    # --- the kernel ------------------------------------------------------------------
    def segments(self):
        """The operations split at each barrier_cluster: [[(index, op, issuing CTA), ...], ...]."""
        segs, cur = [], []
        for i, op in enumerate(self.prog.ops):
            if op.name == "barrier_cluster":
                segs.append(cur)
                cur = []
                continue
            cur.append((i, op, issuer(self.prog, op)))
        segs.append(cur)
        return segs

    def cluster_barrier(self):
        for x in _sync(self.prog):
            self.emit(x)

    def rank_block(self, c, tag):
        """Start a block that only CTA c runs; returns its end label."""
        end = self.new_label(tag)
        if self.prog.ctas > 1:
            q = self.p()
            self.emit(f"setp.ne.u32 {q}, %rank, {c};")
            self.emit(f"@{q} bra {end};")
        return end

    def kernel(self):
        prog = self.prog
        body = self.lines
        segs = self.segments()
        for k, seg in enumerate(segs):
            seg_end = self.new_label("seg")
            self.emit(f"@%pt bra {seg_end};")
            for c in sorted({c for _, _, c in seg}):
                self.cta = c
                self.block_end = self.rank_block(c, "cta")
                self.emit(f"@%stop bra {self.block_end};")
                for i, op, cc in seg:
                    if cc == c:
                        self.op(i, op)
                self.label(self.block_end)
            self.label(seg_end)
            if k + 1 < len(segs):
                self.cluster_barrier()
        probes_end = self.new_label("probes")
        self.emit(f"@%pt bra {probes_end};")
        self.emit("cp.async.bulk.wait_group 0;")
        self.emit("cp.async.wait_all;")
        by_rank = {}
        for a in prog.mbarriers():
            by_rank.setdefault(prog.split(a)[0], []).append(a)
        for c, addrs in sorted(by_rank.items()):
            self.cta = c
            end = self.rank_block(c, "probe")
            for a in addrs:
                # test_wait only reads: an arrive here could be one arrival too many (golden R12:
                # that poisons the context)
                off = self.slot("probe", a)
                p, s = self.p(), self.rd()
                self.emit(f"mbarrier.test_wait.parity.shared::cta.b64 {p}, [{self.local(a)}], 0;")
                self.emit(f"selp.u64 {s}, 1, 0, {p};")
                self.emit(f"st.global.u64 [%st+{off}], {s};")
            self.label(end)
        self.label(probes_end)
        ops_text = "\n".join(body)

        n, t = prog.smem_bytes, prog.threads
        params = [".param .u64 p_io", ".param .u64 p_status"]
        params += [f".param .u64 p_g{b.index}" for b in prog.buffers]
        params += [f".param .align 64 .b8 p_tm{m.index}[128]" for m in prog.maps]
        head = [f".version {self.version[0]}.{self.version[1]}", ".target sm_90a", ".address_size 64", "",
                ".extern .shared .align 1024 .b8 dsmem[];", "",
                f".visible .entry {ENTRY}(", "\t" + ",\n\t".join(params), ")", f".maxntid {t}, 1, 1", "{"]
        decl = [f"\t.reg .pred %p<{self.np + 4}>;", f"\t.reg .b16 %h<{self.nh + 1}>;",
                f"\t.reg .b32 %r<{self.nr + 1}>;", f"\t.reg .b64 %rd<{self.nrd + 1}>;",
                "\t.reg .b32 %tx, %sb, %ci, %cs, %rank, %v0, %v1, %v2, %v3;", "\t.reg .pred %pc, %pt, %stop;",
                "\t.reg .b64 %io, %st, %ca, %co;"]
        if prog.buffers:
            decl.append("\t.reg .b64 " + ", ".join(f"%gb{b.index}" for b in prog.buffers) + ";")
        if prog.maps:
            decl.append("\t.reg .b64 " + ", ".join(f"%tm{m.index}" for m in prog.maps) + ";")
        setup = ["mov.u32 %tx, %tid.x;", "mov.u32 %sb, dsmem;",
                 "mov.u32 %rank, %cluster_ctarank;" if prog.ctas > 1 else "mov.u32 %rank, 0;",
                 "setp.ne.u32 %stop, %tx, %tx;",
                 "ld.param.u64 %io, [p_io];", "cvta.to.global.u64 %io, %io;",
                 f"mul.wide.u32 %co, %rank, {n};", "add.s64 %io, %io, %co;",
                 "ld.param.u64 %st, [p_status];", "cvta.to.global.u64 %st, %st;"]
        for b in prog.buffers:
            setup += [f"ld.param.u64 %gb{b.index}, [p_g{b.index}];", f"cvta.to.global.u64 %gb{b.index}, %gb{b.index};"]
        for m in prog.maps:
            setup += [f"mov.u64 %tm{m.index}, p_tm{m.index};", f"cvta.param.u64 %tm{m.index}, %tm{m.index};"]

        def copy(direction):
            lab = "L_copy_" + direction
            out = ["shl.b32 %ci, %tx, 4;", f"{lab}:", f"setp.ge.u32 %pc, %ci, {n};", f"@%pc bra {lab}_end;",
                   "cvt.u64.u32 %co, %ci;", "add.s64 %ca, %io, %co;", "add.u32 %cs, %sb, %ci;"]
            if direction == "in":
                out += ["ld.global.v4.u32 {%v0, %v1, %v2, %v3}, [%ca];", "st.shared.v4.u32 [%cs], {%v0, %v1, %v2, %v3};"]
            else:
                out += ["ld.shared.v4.u32 {%v0, %v1, %v2, %v3}, [%cs];", "st.global.v4.u32 [%ca], {%v0, %v1, %v2, %v3};"]
            out += [f"add.u32 %ci, %ci, {16 * t};", f"bra {lab};", f"{lab}_end:"]
            return out

        # every CTA's initial bytes are in place before any CTA issues (a copy may go to another CTA)
        sync = _sync(prog)
        pre = setup + copy("in") + ["fence.proxy.async.shared::cta;"] + sync + [
            "setp.ne.u32 %pt, %tx, 0;", "setp.ne.u32 %pc, %rank, 0;", "or.pred %pc, %pc, %pt;", "@%pc bra L_base;",
            "cvt.u64.u32 %co, %sb;", "st.global.u64 [%st], %co;",
            "mov.u32 %ci, %cluster_nctarank;" if prog.ctas > 1 else "mov.u32 %ci, 1;",
            "cvt.u64.u32 %co, %ci;", "st.global.u64 [%st+8], %co;", "L_base:"]
        # every CTA has issued, drained and probed before any copies out; and none exits while
        # another may still copy into it
        post = sync + copy("out") + (sync if prog.ctas > 1 else []) + ["ret;"]
        fmt = lambda xs: [x if x.endswith(":") else "\t" + x for x in xs]   # noqa: E731
        return "\n".join(head + decl + fmt(pre) + [ops_text] + fmt(post) + ["}", ""])


def _sync(prog):
    """Every thread of the CTA, then of the cluster, at one point (the CTA barrier
    first: the warp whose thread 0 issued is converged again, so the cluster
    barrier can be .aligned)."""
    if prog.ctas == 1:
        return ["bar.sync 0;"]
    return ["bar.sync 0;", "barrier.cluster.arrive.aligned;", "barrier.cluster.wait.aligned;"]


def issuer(prog, op):
    """The CTA whose thread 0 issues ``op``: an mbarrier operation's (or a shared
    write's) own CTA, else the call's ``cta``; any thread but 0 is refused."""
    if op.name.startswith("mbarrier_") or op.name == "write_shared":
        return prog.split(op.args[0] if op.args else op.kw.get("mbar", op.kw.get("addr")))[0]
    fn = getattr(_Gen, "op_" + op.name, None)
    if fn is None:
        raise NotImplementedError(f"operation {op.name} has no PTX form here yet")
    try:
        bound = inspect.signature(fn).bind(None, 0, *op.args, **op.kw)
    except TypeError as e:
        raise TypeError(f"{op.name}: {e}") from None
    a = bound.arguments
    if int(a.get("thread", 0)):
        raise NotImplementedError(f"{op.name} from thread {a['thread']}: thread 0 of each CTA issues here")
    cta = int(a.get("cta", 0))
    if not 0 <= cta < prog.ctas:
        raise ValueError(f"{op.name}: cta = {cta} is outside the cluster of {prog.ctas}")
    return cta


def _raw(data):
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8).tobytes()
    return bytes(data)


def _value_bytes(value, t, esize):
    """The register bytes of an st.async value: raw bytes, or numbers of type t."""
    if isinstance(value, (bytes, bytearray, memoryview)) or (isinstance(value, np.ndarray) and value.dtype == np.uint8):
        return _raw(value)
    dt = {"b32": "<u4", "u32": "<u4", "s32": "<i4", "f32": "<f4", "b64": "<u8", "u64": "<u8", "s64": "<i8",
          "f64": "<f8"}[t]
    vals = np.atleast_1d(np.asarray(value)).astype(dt)
    return vals.tobytes()


def _redop_name(op):
    from ..enums import RedOp
    if isinstance(op, str):
        name = op.strip().lstrip(".").lower()
    else:
        name = RedOp(int(op)).name.lower()
    if name not in _REDOPS:
        raise ValueError(f"reduction operation {op!r} is not one of {', '.join(_REDOPS)}")
    return name


def generate(prog):
    """(PTX text, status slots): slots[i] = (kind, key) of status word i + 2."""
    g = _Gen(prog)
    text = g.kernel()
    return text, g.slots
