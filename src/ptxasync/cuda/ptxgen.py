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

The operations' instructions are printed by ``ptxasync.ptxops`` (the printer of
``Machine.trace_ptx`` too): this module gives their operands (``mapa`` for another
CTA, buffer bases, tensor-map parameters), refuses what sm_90a cannot do, and writes
what is the GPU's own: the copies in and out, the status words, the bounded waits
and the cluster launch.
"""
import inspect

import numpy as np

from ..ptxops import FENCE_MBARRIER_INIT, OpPrinter, ptx_name, tensor_mode, value_bytes
from .program import GAddr, MapRef

__all__ = ["generate", "issuer", "WAIT_TRIES", "ENTRY"]

ENTRY = "ptxasync_run"
WAIT_TRIES = 4000          # try_wait.parity attempts (each suspends up to ~8k cycles) before a timeout
_BULK_DIRS = {("shared::cta", "global"), ("shared::cluster", "global"), ("global", "shared::cta"),
              ("shared::cluster", "shared::cta")}
_ST_ASYNC = ("b32", "u32", "s32", "f32", "b64", "u64", "s64", "f64")


class _Gen(OpPrinter):
    """The operations' lines (OpPrinter) with the kernel's operands, refusing what sm_90a or
    the kernel cannot do; the mbarrier operations with their status words."""

    def __init__(self, prog):
        super().__init__()
        self.prog = prog
        self.slots = []          # (kind, op index or mbarrier address)
        self.labels = 0
        self.version = (8, 0)
        self.i = None                # the operation being generated
        self.cta = 0                 # the CTA issuing it
        self.block_end = None        # where a timed-out wait goes (the end of its CTA's block)

    def label(self, name):
        self.lines.append(f"{name}:")

    def new_label(self, what):
        self.labels += 1
        return f"L_{what}_{self.labels}"

    def slot(self, kind, key):
        self.slots.append((kind, key))
        return 8 * (1 + len(self.slots))     # byte offset in the status buffer (words 0, 1 are fixed)

    def store_status(self, kind, value):
        """Status word of the current operation (an immediate or a register)."""
        self.emit(f"st.global.u64 [%st+{self.slot(kind, self.i)}], {value};")

    # operands (OpPrinter's hooks) ---------------------------------------------------------
    def need(self, version):
        self.version = max(self.version, version)

    def cache_hint(self, policy):
        # the model ignores the policy; a made-up policy word is no valid createpolicy result
        return "", None

    def tensor_mode(self, load_mode, store):
        mode = ptx_name(load_mode)
        ok = ("tile", "im2col_no_offs") if store else ("tile", "im2col")
        if mode not in ok:
            raise NotImplementedError(f"load mode {load_mode!r} has no PTX form here (sm_90: {', '.join(ok)})")
        return tensor_mode(mode)

    def g64(self, a):
        """A global address: a GAddr (buffer base + offset) or a raw integer."""
        if not isinstance(a, GAddr):
            return self.b64(a)
        reg = self.reg("rd")
        self.emit(f"add.s64 {reg}, %gb{a.buffer.index}, {a.offset};")
        return reg

    def tmap(self, m):
        if not isinstance(m, MapRef):
            raise TypeError(f"a tensor map of the program (MapRef) is needed, not {type(m).__name__}")
        return f"%tm{m.index}"

    # shared addresses (the Machine's form: r << 24 | offset in a cluster)
    def window(self, loc):
        if loc < self.prog.smem_base:
            raise ValueError(f"shared address {loc:#x} is below the dynamic shared memory at "
                             f"{self.prog.smem_base:#x} (on sm_90 the first KiB of a CTA's window is the system's)")

    def own(self, addr, what="operand"):
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
        reg = self.reg("r")
        self.emit(f"mapa.shared::cluster.u32 {reg}, {self.s32(self.cta << 24 | loc)}, {rank};")
        return reg

    def multicast(self, addr):
        """A multicast operand: the issuing CTA's own address (as CUTLASS passes it;
        each destination CTA uses the same offset), mapa into another CTA."""
        rank, loc = self.prog.split(addr)
        return self.own(addr) if rank == self.cta else self.cluster(addr)

    # --- operations -------------------------------------------------------------------
    def op(self, i, op):
        fn = getattr(self, "op_" + op.name, None)
        if fn is None:
            raise NotImplementedError(f"operation {op.name} has no PTX form here yet")
        self.emit(f"// op {i}: {' '.join(repr(op).split())}"[:200])
        self.i = i
        fn(*op.args, **op.kw)

    def op_mbarrier_init(self, mbar, count=1):
        self.mbarrier_init(self.own(mbar), count)
        self.emit(FENCE_MBARRIER_INIT)

    def op_mbarrier_arrive(self, mbar, count=1):
        self.store_status("state", self.mbarrier_arrive(self.own(mbar), count))

    def op_mbarrier_arrive_expect_tx(self, mbar, tx):
        self.store_status("state", self.mbarrier_arrive(self.own(mbar), tx=tx))

    def op_mbarrier_expect_tx(self, mbar, tx):
        self.mbarrier_tx("expect_tx", self.own(mbar), tx)

    def op_mbarrier_complete_tx(self, mbar, tx):
        self.mbarrier_tx("complete_tx", self.own(mbar), tx)

    def _bounded_wait(self, mbar, parity, what):
        """try_wait.parity until the phase completes, WAIT_TRIES times at most; falls through
        when it timed out, and returns the label it jumps to when it completed."""
        a = self.own(mbar)
        n, p, q = self.reg("r"), self.reg("p"), self.reg("p")
        top, done = self.new_label(what), self.new_label(what + "_done")
        self.emit(f"mov.u32 {n}, 0;")
        self.label(top)
        self.mbarrier_wait(p, a, parity)
        self.emit(f"@{p} bra {done};")
        self.emit(f"add.u32 {n}, {n}, 1;")
        self.emit(f"setp.lt.u32 {q}, {n}, {WAIT_TRIES};")
        self.emit(f"@{q} bra {top};")
        return done

    def op_mbarrier_wait(self, mbar, parity):
        done = self._bounded_wait(mbar, parity, "wait")
        # timed out: say so, and this CTA issues nothing more
        off = self.slot("wait", self.i)
        self.emit(f"st.global.u64 [%st+{off}], 2;")
        self.emit("setp.eq.u32 %stop, %tx, %tx;")
        self.emit(f"bra {self.block_end};")
        self.label(done)
        self.emit(f"st.global.u64 [%st+{off}], 1;")

    def op_mbarrier_try_wait(self, mbar, parity):
        """As a wait, bounded the same way, but a timeout is an answer (False), not the end."""
        done = self._bounded_wait(mbar, parity, "try")
        end = self.new_label("try_end")
        off = self.slot("try", self.i)
        self.emit(f"st.global.u64 [%st+{off}], 0;")
        self.emit(f"bra {end};")
        self.label(done)
        self.emit(f"st.global.u64 [%st+{off}], 1;")
        self.label(end)

    def op_mbarrier_test_wait(self, mbar, parity):
        self.store_status("test", self.probe(mbar, parity))

    def probe(self, mbar, parity):
        """test_wait.parity once: a register holding 1 (the phase completed) or 0."""
        p, s = self.reg("p"), self.reg("rd")
        self.mbarrier_wait(p, self.own(mbar), parity, "test_wait")
        self.emit(f"selp.u64 {s}, 1, 0, {p};")
        return s

    def op_cp_async_bulk_tensor_load(self, *args, cta_group=None, **kw):
        if cta_group is not None:
            raise NotImplementedError(".cta_group (sm_100) has no PTX form on sm_90a")
        super().op_cp_async_bulk_tensor_load(*args, **kw)

    def op_cp_async_bulk(self, dst, src, size, mbar=None, cta=0, thread=0, dst_space="shared::cta",
                         src_space="global", cta_mask=None, byte_mask=None, cache_policy=None):
        key = (ptx_name(dst_space), ptx_name(src_space))
        if key not in _BULK_DIRS or byte_mask is not None:
            raise NotImplementedError(f"cp.async.bulk .{key[0]}.{key[1]} (no cp_mask: sm_100) has no PTX form here")
        if cta_mask is not None and key != ("shared::cluster", "global"):
            raise ValueError("only cp.async.bulk.shared::cluster.global multicasts (.multicast::cluster)")
        super().op_cp_async_bulk(dst, src, size, mbar, dst_space=dst_space, src_space=src_space, cta_mask=cta_mask)

    def op_st_async(self, dst, value, mbar, type="u32", cta=0, thread=0, weak=False):
        t = ptx_name(type)
        if t not in _ST_ASYNC:
            raise ValueError(f"st.async has no .{t} form ({' '.join('.' + x for x in _ST_ASYNC)})")
        esize = 8 if t.endswith("64") else 4
        raw = value_bytes(value, t)
        n = len(raw) // esize
        if len(raw) % esize or n not in (1, 2, 4) or n * esize > 16:
            raise ValueError(f"st.async stores 1, 2 or 4 .{t} elements of at most 16 bytes in all, "
                             f"not {len(raw)} bytes")
        super().op_st_async(dst, value, mbar, type=t, weak=weak)

    def op_write_shared(self, addr, data):
        raw = _raw(data)
        a = self.own(addr)
        v = self.reg("r")
        for k, byte in enumerate(raw):
            self.emit(f"mov.u32 {v}, {byte};")
            self.emit(f"st.shared.u8 [{a}+{k}], {v};")
        # the async proxy reads these bytes after this point (as Machine's CTA.write then a copy)
        self.op_fence_proxy_async(space="shared::cta")

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
            q = self.reg("p")
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
                s = self.probe(a, 0)
                self.emit(f"st.global.u64 [%st+{self.slot('probe', a)}], {s};")
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
        decl = [f"\t.reg .{w} %{k}<{self.n[k] + 1}>;" for k, w in (("p", "pred"), ("rs", "b16"), ("r", "b32"),
                                                                   ("rd", "b64"))]
        decl += [
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
    fn = getattr(OpPrinter, "op_" + op.name, fn)      # the Machine method's own signature
    try:
        bound = inspect.signature(fn).bind(None, *op.args, **op.kw)
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


def generate(prog):
    """(PTX text, status slots): slots[i] = (kind, key) of status word i + 2."""
    g = _Gen(prog)
    text = g.kernel()
    return text, g.slots
