"""The instruction table's rows whose semantics the semantics library (csrc/core/sem/) runs.

One module a family; each has ROWS: (syntax, PTX version, sm, operation[, qualifier requirements[,
architectures]]),
the syntax in the ISA's template language (as tools/ptx_tables.py reads it), the operation the name
of a sem_op (sem.h's SEM_OPS), a requirement (qualifier, PTX version x10, sm[, architectures]) where a qualifier is
newer than its form (or only on those architectures), the architectures a list ("sm_120a sm_121a") where only those have the form.
An empty operation names no PI_SEM function: the form is lowered by its own code (mma.sync, a warp
collective). tools/ptx_tables.py turns each row into a form of the one table
(csrc/core/ptx/text/tables.c) that the checker validates and the lowering runs.
"""
import importlib

FAMILIES = ["intalu", "farith", "intops", "cvt", "sfu", "carry", "mma", "wgmma", "video", "misc", "texsurf", "wmma", "tcgen05", "sync"]
# families whose forms the table lists after all the others (the call forms included), so that
# the forms before them keep their numbers
LATE = ["texsurf", "wmma", "tcgen05", "sync"]

# roots of more than one component among the rows
ROOTS = ["cvt.pack", "brx.idx", "pmevent.mask", "tex.base", "tex.level", "tex.grad", "suld.b", "sust.b", "sust.p", "sured.b", "sured.p",
         "wmma.load.a", "wmma.load.b", "wmma.load.c", "wmma.store.d", "wmma.mma",
         "tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.ld", "tcgen05.st",
         "tcgen05.wait::ld", "tcgen05.wait::st", "tcgen05.cp", "tcgen05.shift", "tcgen05.commit",
         "tcgen05.fence::before_thread_sync", "tcgen05.fence::after_thread_sync", "tcgen05.mma",
         "tcgen05.mma.sp", "tcgen05.mma.ws", "tcgen05.mma.ws.sp",
         "clusterlaunchcontrol.try_cancel.async", "clusterlaunchcontrol.query_cancel",
         "bar.arrive", "bar.red", "barrier.arrive", "barrier.red", "bar.warp.sync", "red.async",
         "wgmma.mma_async", "wgmma.mma_async.sp", "mma.sp", "mma.sp::ordered_metadata", "fence.proxy"]


def rows(late=False):
    """The rows of FAMILIES before LATE, or (late) of LATE."""
    out = []
    for name in FAMILIES:
        if (name in LATE) != late:
            continue
        try:
            mod = importlib.import_module("ptx_rows." + name)
        except ModuleNotFoundError:
            continue
        for row in mod.ROWS:
            syntax, v, sm, sem, *rest = row
            qreq = rest[0] if rest else []
            arch = rest[1] if len(rest) > 1 else ""
            out.append((syntax, v, sm, qreq, sem, arch))
    return out
