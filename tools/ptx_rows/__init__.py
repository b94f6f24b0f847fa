"""The instruction table's rows whose semantics the semantics library (csrc/core/sem/) runs.

One module a family; each has ROWS: (syntax, PTX version, sm, qualifier requirements, operation),
the syntax in the ISA's template language (as tools/ptx_tables.py reads it), the operation the name
of a sem_op (sem.h's SEM_OPS). tools/ptx_tables.py turns each row into a form of the one table
(csrc/core/ptx/tables.c) that the checker validates and the lowering runs.
"""
import importlib

FAMILIES = ["farith", "intops", "cvt", "sfu"]

# roots of more than one component among the rows
ROOTS = ["cvt.pack"]


def rows():
    out = []
    for name in FAMILIES:
        try:
            mod = importlib.import_module("ptx_rows." + name)
        except ModuleNotFoundError:
            continue
        for row in mod.ROWS:
            syntax, v, sm, *rest = row
            qreq = rest[0] if len(rest) > 1 else []
            sem = rest[-1]
            out.append((syntax, v, sm, qreq, sem))
    return out
