"""A Program as one PTX kernel (one CTA; thread 0 issues every operation).

The kernel: every thread copies the initial shared memory in from global memory
(16 bytes at a time), ``fence.proxy.async.shared::cta`` and ``bar.sync``; thread 0
issues the operations in order, with the program's addresses and operands as
immediates (global addresses as buffer base + offset, the bases being kernel
parameters; tensor maps as ``__grid_constant__``-style ``.param`` blocks whose
generic address is the operand); then thread 0 waits for its bulk async-groups
and cp.async groups, probes every mbarrier with ``mbarrier.test_wait.parity 0``
(has the phase of parity 0 completed?), and after ``bar.sync`` every thread copies the
shared memory out.

Status words (u64, in the status buffer): 0 the shared-window address of the
dynamic shared memory, 1 the number of operations issued (less than all when a
wait timed out), then one slot per value-returning operation (arrive states,
waits: 1 completed / 2 timed out) and one per mbarrier probe (1 / 0).

The PTX text is written here, instruction by instruction; the PTX printer of the
core (csrc/core/ptx/) can take this job once it prints every form used here.
"""
from .program import GAddr, MapRef

__all__ = ["generate", "WAIT_TRIES", "ENTRY"]

ENTRY = "ptxasync_run"
WAIT_TRIES = 4000          # try_wait.parity attempts (each suspends up to ~8k cycles) before a timeout
_BULK_DIRS = {("shared::cta", "global"), ("shared::cluster", "global"), ("global", "shared::cta"),
              ("shared::cluster", "shared::cta")}
_REDOPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


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

    # --- operations -------------------------------------------------------------------
    def op(self, i, op):
        fn = getattr(self, "op_" + op.name, None)
        if fn is None:
            raise NotImplementedError(f"operation {op.name} has no PTX form here yet")
        self.emit(f"// op {i}: {op!r}"[:200])
        fn(i, *op.args, **op.kw)

    def op_mbarrier_init(self, i, mbar, count=1):
        self.emit(f"mbarrier.init.shared::cta.b64 [{self.s32(_addr_of(mbar))}], {int(count)};")
        self.emit("fence.mbarrier_init.release.cluster;")

    def _store_state(self, i, reg):
        off = self.slot("state", i)
        self.emit(f"st.global.u64 [%st+{off}], {reg};")

    def op_mbarrier_arrive(self, i, mbar, count=1):
        s = self.rd()
        cnt = f", {int(count)}" if int(count) != 1 else ""
        self.emit(f"mbarrier.arrive.shared::cta.b64 {s}, [{self.s32(_addr_of(mbar))}]{cnt};")
        self._store_state(i, s)

    def op_mbarrier_arrive_expect_tx(self, i, mbar, tx):
        s = self.rd()
        self.emit(f"mbarrier.arrive.expect_tx.shared::cta.b64 {s}, [{self.s32(_addr_of(mbar))}], {int(tx)};")
        self._store_state(i, s)

    def op_mbarrier_expect_tx(self, i, mbar, tx):
        self.emit(f"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{self.s32(_addr_of(mbar))}], {int(tx)};")

    def op_mbarrier_complete_tx(self, i, mbar, tx):
        self.emit(f"mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [{self.s32(_addr_of(mbar))}], {int(tx)};")

    def op_mbarrier_wait(self, i, mbar, parity):
        a = self.s32(_addr_of(mbar))
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
        # timed out: say so, and issue nothing more
        self.emit(f"st.global.u64 [%st+{off}], 2;")
        self.emit(f"st.global.u64 [%st+8], {i};")
        self.emit("bra L_drain;")
        self.label(done)
        self.emit(f"st.global.u64 [%st+{off}], 1;")

    def _tensor_mode(self, load_mode, store):
        mode = str(load_mode).strip().lstrip(".")
        ok = ("tile", "im2col_no_offs") if store else ("tile", "im2col")
        if mode not in ok:
            raise NotImplementedError(f"load mode {load_mode!r} has no PTX form here (sm_90: {', '.join(ok)})")
        return mode

    def op_cp_async_bulk_tensor_load(self, i, tmap, coords, dst, mbar, cta=0, thread=0, dst_space="shared::cta",
                                     cta_mask=None, load_mode="tile", im2col_offsets=None):
        if cta_mask is not None or cta or thread:
            raise NotImplementedError("one CTA, thread 0: no multicast here")
        mode = self._tensor_mode(load_mode, store=False)
        space = str(dst_space).lstrip(".")
        if space == "shared::cta":
            self.version = max(self.version, (8, 6))
        d, b = self.s32(dst), self.s32(_addr_of(mbar))
        c = self.coords(coords)
        tail = ""
        if mode == "im2col":
            hs = []
            for o in im2col_offsets or ():
                hreg = self.h()
                self.emit(f"mov.u16 {hreg}, {int(o) & 0xFFFF};")
                hs.append(hreg)
            tail = ", {" + ", ".join(hs) + "}"
        self.emit(f"cp.async.bulk.tensor.{len(coords)}d.{space}.global.{mode}.mbarrier::complete_tx::bytes "
                  f"[{d}], [{self.tmap(tmap)}, {{{c}}}], [{b}]{tail};")

    def op_cp_async_bulk_tensor_store(self, i, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        mode = self._tensor_mode(load_mode, store=True)
        s = self.s32(src)
        c = self.coords(coords)
        self.emit(f"cp.async.bulk.tensor.{len(coords)}d.global.shared::cta.{mode}.bulk_group "
                  f"[{self.tmap(tmap)}, {{{c}}}], [{s}];")

    def op_cp_reduce_async_bulk_tensor(self, i, op, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        mode = self._tensor_mode(load_mode, store=True)
        red = _redop_name(op)
        s = self.s32(src)
        c = self.coords(coords)
        self.emit(f"cp.reduce.async.bulk.tensor.{len(coords)}d.global.shared::cta.{red}.{mode}.bulk_group "
                  f"[{self.tmap(tmap)}, {{{c}}}], [{s}];")

    def op_cp_async_bulk_commit_group(self, i, cta=0, thread=0):
        self.emit("cp.async.bulk.commit_group;")

    def op_cp_async_bulk_wait_group(self, i, n=0, cta=0, thread=0, read=False):
        self.emit(f"cp.async.bulk.wait_group{'.read' if read else ''} {int(n)};")

    def op_cp_reduce_async_bulk(self, i, op, type, dst, src, size, mbar=None, cta=0, thread=0, noftz=False,
                                dst_space="global"):
        if dst_space != "global":
            raise NotImplementedError("bulk reductions to .global only here")
        t = str(type).strip().lstrip(".").lower()
        if t.startswith("noftz."):
            noftz, t = True, t[len("noftz."):]
        red = _redop_name(op)
        g, s = self.g64(dst), self.s32(src)
        self.emit(f"cp.reduce.async.bulk.global.shared::cta.bulk_group.{red}{'.noftz' if noftz else ''}.{t} "
                  f"[{g}], [{s}], {int(size)};")

    def op_cp_async_bulk(self, i, dst, src, size, mbar=None, cta=0, thread=0, dst_space="shared::cta",
                         src_space="global", cta_mask=None, byte_mask=None, cache_policy=None):
        key = (str(dst_space).lstrip("."), str(src_space).lstrip("."))
        if key not in _BULK_DIRS or cta_mask is not None or byte_mask is not None:
            raise NotImplementedError(f"cp.async.bulk .{key[0]}.{key[1]} (no multicast, no cp_mask) only here")
        if key == ("global", "shared::cta"):
            g, s = self.g64(dst), self.s32(src)
            self.emit(f"cp.async.bulk.global.shared::cta.bulk_group [{g}], [{s}], {int(size)};")
            return
        if key[0] == "shared::cta":
            self.version = max(self.version, (8, 6))
        d, b = self.s32(dst), self.s32(_addr_of(mbar))
        srcop = self.g64(src) if key[1] == "global" else self.s32(src)
        self.emit(f"cp.async.bulk.{key[0]}.{key[1]}.mbarrier::complete_tx::bytes [{d}], [{srcop}], {int(size)}, [{b}];")

    def op_cp_async(self, i, dst, src, cp_size, cta=0, thread=0, cache="ca", src_size=None, ignore_src=None,
                    prefetch=None, cache_policy=None):
        cache = str(cache).strip().lstrip(".")
        pf = ""
        if prefetch is not None:
            v = str(prefetch).strip().lstrip(".")
            pf = "." + (v if v.startswith("L2::") else f"L2::{int(v)}B")
        d, g = self.s32(dst), self.g64(src)
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
        self.emit(f"cp.async.mbarrier.arrive{'.noinc' if noinc else ''}.shared::cta.b64 [{self.s32(_addr_of(mbar))}];")

    # --- the kernel ------------------------------------------------------------------
    def kernel(self):
        prog = self.prog
        body = self.lines
        for i, op in enumerate(prog.ops):
            self.op(i, op)
        self.emit(f"st.global.u64 [%st+8], {len(prog.ops)};")
        self.label("L_drain")
        self.emit("cp.async.bulk.wait_group 0;")
        self.emit("cp.async.wait_all;")
        for a in prog.mbarriers():
            # test_wait only reads: an arrive here could be one arrival too many (golden R12:
            # that poisons the context)
            off = self.slot("probe", a)
            p, s = self.p(), self.rd()
            self.emit(f"mbarrier.test_wait.parity.shared::cta.b64 {p}, [{self.s32(a)}], 0;")
            self.emit(f"selp.u64 {s}, 1, 0, {p};")
            self.emit(f"st.global.u64 [%st+{off}], {s};")
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
                "\t.reg .b32 %tx, %sb, %ci, %cs, %v0, %v1, %v2, %v3;", "\t.reg .pred %pc, %pt;",
                "\t.reg .b64 %io, %st, %ca, %co;"]
        if prog.buffers:
            decl.append("\t.reg .b64 " + ", ".join(f"%gb{b.index}" for b in prog.buffers) + ";")
        if prog.maps:
            decl.append("\t.reg .b64 " + ", ".join(f"%tm{m.index}" for m in prog.maps) + ";")
        setup = ["mov.u32 %tx, %tid.x;", "mov.u32 %sb, dsmem;",
                 "ld.param.u64 %io, [p_io];", "cvta.to.global.u64 %io, %io;",
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

        pre = setup + copy("in") + ["fence.proxy.async.shared::cta;", "bar.sync 0;",
                                    "setp.ne.u32 %pt, %tx, 0;", "@%pt bra L_ops_end;",
                                    "cvt.u64.u32 %co, %sb;", "st.global.u64 [%st], %co;"]
        post = ["L_ops_end:", "bar.sync 0;"] + copy("out") + ["ret;"]
        fmt = lambda xs: [x if x.endswith(":") else "\t" + x for x in xs]   # noqa: E731
        return "\n".join(head + decl + fmt(pre) + [ops_text] + fmt(post) + ["}", ""])


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
