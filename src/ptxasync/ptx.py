"""PTX text in: validation as ptxas does it, and canonical printing.

``check(text)`` parses a PTX module and validates it for the module's own ``.target`` and
``.version`` exactly as ``ptxas -arch=<target>`` (CUDA 13.0) accepts or rejects it; the module is
accepted iff no diagnostic is an error. ``format(text)`` prints a module back as canonical PTX.
The parser, the instruction tables (generated from the PTX ISA syntax blocks by
``tools/ptx_tables.py``) and the rules live in the C core (``csrc/core/ptx/``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from . import _core

__all__ = ["Diagnostic", "check", "accepts", "format", "PtxSyntaxError"]


@dataclass(frozen=True)
class Diagnostic:
    """One finding: ``severity`` is "error" or "warning"; ``line`` and ``column`` count from 1."""
    severity: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        return f"{self.line}:{self.column}: {self.severity}: {self.message}"


class PtxSyntaxError(ValueError):
    """The text is not PTX the parser can read; ``diagnostics`` says where."""

    def __init__(self, diagnostics):
        self.diagnostics = list(diagnostics)
        super().__init__("; ".join(str(d) for d in self.diagnostics) or "not PTX")


def _bytes(text) -> bytes:
    if isinstance(text, str):
        return text.encode("utf-8")
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError(f"PTX text must be str or bytes, not {type(text).__name__}")


_TARGET = re.compile(rb"(?m)^([ \t]*\.target[ \t]+)([A-Za-z0-9_]+)")


def check(text, target=None) -> list[Diagnostic]:
    """Diagnostics of a PTX module for its ``.target`` and ``.version`` (empty: ptxas accepts it).
    ``target`` (``"sm_100a"``, ...) checks it for that target instead, as if its ``.target``
    directive named it (the module must have one)."""
    raw = _bytes(text)
    if target is not None:
        if not isinstance(target, str) or not re.fullmatch(r"sm_[0-9]+[af]?", target):
            raise ValueError(f"target {target!r} is not a target name such as sm_90a or sm_100a")
        raw, n = _TARGET.subn(lambda m: m.group(1) + target.encode(), raw, count=1)
        if not n:
            raise ValueError("the module has no .target directive for the target to replace")
    return [Diagnostic(*d) for d in _core.ptx_check(raw)]


def accepts(text) -> bool:
    """True iff ptxas would assemble the module (no diagnostic is an error)."""
    return not any(d.severity == "error" for d in check(text))


def format(text) -> str:  # noqa: A001 - the PTX printer
    """The module as canonical PTX text (parse -> print); raises PtxSyntaxError if it does not parse."""
    out, diags = _core.ptx_print(_bytes(text))
    if out is None:
        raise PtxSyntaxError(Diagnostic(*d) for d in diags)
    return out


from .ptx_kernel import Kernel, LaunchStats  # noqa: E402 - the interpreter (it uses this module's helpers)

__all__ += ["Kernel", "LaunchStats"]
