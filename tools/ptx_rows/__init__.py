"""The instruction table's rows whose semantics the semantics library (csrc/core/sem/) runs.

One module a family; each has ROWS: (syntax, PTX version, sm, operation[, qualifier requirements]),
the syntax in the ISA's template language (as tools/ptx_tables.py reads it), the operation the name
of a sem_op (sem.h's SEM_OPS), a requirement (qualifier, PTX version x10, sm) where a qualifier is
newer than its form. tools/ptx_tables.py turns each row into a form of the one table
(csrc/core/ptx/tables.c) that the checker validates and the lowering runs.
"""
import importlib

FAMILIES = ["intalu", "farith", "intops", "cvt", "sfu", "carry"]

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
            syntax, v, sm, sem, *rest = row
            qreq = rest[0] if rest else []
            out.append((syntax, v, sm, qreq, sem))
    return out
