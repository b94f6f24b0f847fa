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

from .ptxops import OpPrinter

__all__ = ["trace_ptx", "trace_launch"]


class _Printer(OpPrinter):
    """The operations' lines (OpPrinter) with the trace's operands: global addresses as a buffer
    parameter plus an offset, tensor maps as parameters, shared addresses as the model's."""

    def __init__(self, machine):
        super().__init__()
        self.m = machine
        self.maps = []           # (bytes, name)
        self.labels = 0
        self.guards = {}         # (cta, thread) -> predicate register
        self.guarded = False

    def label(self):
        self.labels += 1
        return f"$L_{self.labels}"

    def g64(self, address):
        """A global address: the buffer parameter that holds it plus the offset."""
        a = int(address)
        for i, b in enumerate(self.m._buffers):
            if b.address <= a < b.address + b.nbytes:
                r = self.reg("rd")
                self.emit(f"add.s64 {r}, %g{i}, {a - b.address};")
                return r
        return self.b64(a)                             # no buffer holds it: the address as it was

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

    # one call of the program -----------------------------------------------------------
    def call(self, name, args, kw):
        fn = getattr(self, "op_" + name, None)
        if fn is None:
            raise NotImplementedError(f"Machine.{name} is not printed as PTX: its operations are not "
                                      "recorded one by one (issue them one call each)")
        fn(*args, **kw)

    def op_load_box(self, *args, **kw):      # printed through the load it makes (recorded)
        pass

    # one event of the trace (mbarrier operations by a thread) ---------------------------------
    def event(self, e):
        a = e.addr if e.rank == e.cta else (e.rank << 24) | e.addr
        remote = e.rank != e.cta
        if e.kind == "init":
            self.mbarrier_init(self.s32(a), e.a)
        elif e.kind == "inval":
            self.mbarrier_inval(self.s32(a))
        elif e.kind == "arrive":
            self.mbarrier_arrive(self.s32(a), count=e.a, tx=e.b, remote=remote)
        elif e.kind in ("expect_tx", "complete_tx"):
            self.mbarrier_tx(e.kind, self.s32(a), e.a, remote=remote)
        elif e.kind == "wait":
            b, p = self.s32(a), self.reg("p")
            op = "try_wait" if e.b & 2 else "test_wait"
            if e.b & 1:             # it succeeded: the loop a kernel writes
                top = self.label()
                self.lines.append(f"{top}:")
                self.mbarrier_wait(p, b, e.a, op)
                self.emit(f"@!{p} bra {top};")
            else:
                self.mbarrier_wait(p, b, e.a, op)

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
