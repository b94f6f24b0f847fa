"""The instruction table's rows whose semantics the semantics library (csrc/core/sem/) runs.

One module a family; each has ROWS: (syntax, PTX version, sm, operation[, qualifier requirements[,
architectures]]),
the syntax in the ISA's template language (as tools/ptx_tables.py reads it), the operation the name
of a sem_op (sem.h's SEM_OPS), a requirement (qualifier, PTX version x10, sm) where a qualifier is
newer than its form, the architectures a list ("sm_120a sm_121a") where only those have the form.
An empty operation names no PI_SEM function: the form is lowered by its own code (mma.sync, a warp
collective). tools/ptx_tables.py turns each row into a form of the one table
(csrc/core/ptx/text/tables.c) that the checker validates and the lowering runs.
"""
import importlib

FAMILIES = ["intalu", "farith", "intops", "cvt", "sfu", "carry", "mma", "video", "misc"]

# roots of more than one component among the rows
ROOTS = ["cvt.pack", "brx.idx", "pmevent.mask"]


def rows():
    out = []
    for name in FAMILIES:
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
