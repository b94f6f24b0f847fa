"""PTX text in: validation as ptxas does it, and canonical printing.

``check(text)`` parses a PTX module and validates it for the module's own ``.target`` and
``.version`` exactly as ``ptxas -arch=<target>`` of CUDA 13.5 (``PTXAS``) accepts or rejects it,
``check(text, ptxas="13.0")`` as CUDA 13.0's does (the two differ in the ``.version`` each
reads, the targets each knows and two rules: docs/ptx.md, "Which ptxas"); the module is accepted
iff no diagnostic is an error. ``ptxas_path()`` finds an installed ptxas (the ``nvidia-cuda-nvcc`` wheel's, or one on
``PATH``) to compare with. ``format(text)`` prints a module back as canonical PTX.
The parser, the instruction tables (generated from the PTX ISA syntax blocks by
``tools/ptx_tables.py``) and the rules live in the C core (``csrc/core/ptx/``).
"""
from __future__ import annotations

import functools
import glob
import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from . import _core

__all__ = ["Diagnostic", "check", "accepts", "format", "PtxSyntaxError", "PTXAS", "PTXAS_RELEASES",
           "ptxas_path", "ptxas_release", "ptxas_installed"]

PTXAS_RELEASES = ("13.0", "13.5")   # the ptxas releases whose verdicts check() gives
PTXAS = "13.5"                      # the one it gives by default


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


def _release(ptxas) -> int:
    r = PTXAS if ptxas is None else str(ptxas)
    if r not in PTXAS_RELEASES:
        raise ValueError(f"ptxas {r!r}: check() gives the verdicts of ptxas {' and '.join(PTXAS_RELEASES)}")
    major, minor = r.split(".")
    return int(major) * 10 + int(minor)


_TARGET = re.compile(rb"(?m)^([ \t]*\.target[ \t]+)([A-Za-z0-9_]+)")


def check(text, target=None, ptxas=None) -> list[Diagnostic]:
    """Diagnostics of a PTX module for its ``.target`` and ``.version`` (empty: ptxas accepts it),
    as ``ptxas`` (a release in ``PTXAS_RELEASES``; default ``PTXAS``) gives them.
    ``target`` (``"sm_100a"``, ...) checks it for that target instead, as if its ``.target``
    directive named it (the module must have one)."""
    release = _release(ptxas)
    raw = _bytes(text)
    if target is not None:
        if not isinstance(target, str) or not re.fullmatch(r"sm_[0-9]+[af]?", target):
            raise ValueError(f"target {target!r} is not a target name such as sm_90a or sm_100a")
        raw, n = _TARGET.subn(lambda m: m.group(1) + target.encode(), raw, count=1)
        if not n:
            raise ValueError("the module has no .target directive for the target to replace")
    return [Diagnostic(*d) for d in _core.ptx_check(raw, release)]


def accepts(text, ptxas=None) -> bool:
    """True iff ptxas (``ptxas``: a release in ``PTXAS_RELEASES``; default ``PTXAS``) would
    assemble the module (no diagnostic is an error)."""
    return not any(d.severity == "error" for d in check(text, ptxas=ptxas))


@functools.lru_cache(maxsize=None)
def _release_of(path, mtime):
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release (\d+\.\d+)", out)
    return m.group(1) if m else None


def ptxas_release(path) -> str | None:
    """The CUDA release of the ptxas executable at ``path`` ("13.5" from its ``--version``), or
    None if it does not run or say one."""
    try:
        return _release_of(os.path.realpath(path), os.stat(path).st_mtime_ns)
    except OSError:
        return None


def ptxas_installed() -> dict[str, str]:
    """Every ptxas found, as {release: path}: the ``nvidia-cuda-nvcc`` wheel's
    (``nvidia/cu13/bin/ptxas``; ``nvidia/cuda_nvcc/bin/ptxas`` for CUDA 12) first, then the one on
    ``PATH``; the first of a release wins."""
    exe = "ptxas.exe" if os.name == "nt" else "ptxas"
    found = []
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    for d in (spec.submodule_search_locations or []) if spec else []:
        found += sorted(glob.glob(os.path.join(d, "cu[0-9]*", "bin", exe)), reverse=True)
        found += glob.glob(os.path.join(d, "cuda_nvcc", "bin", exe))
    on_path = shutil.which("ptxas")
    if on_path:
        found.append(on_path)
    out = {}
    for path in found:
        r = ptxas_release(path)
        if r and r not in out:
            out[r] = path
    return out


def ptxas_path(release=None) -> str | None:
    """The path of an installed ptxas of ``release`` ("13.5"), or of the newest one found when
    ``release`` is None; None when there is none (see ``ptxas_installed``)."""
    found = ptxas_installed()
    if release is not None:
        return found.get(str(release))
    if not found:
        return None
    return found[max(found, key=lambda r: tuple(int(x) for x in r.split(".")))]


def format(text) -> str:  # noqa: A001 - the PTX printer
    """The module as canonical PTX text (parse -> print); raises PtxSyntaxError if it does not parse."""
    out, diags = _core.ptx_print(_bytes(text))
    if out is None:
        raise PtxSyntaxError(Diagnostic(*d) for d in diags)
    return out


from .ptx_kernel import Kernel, LaunchStats  # noqa: E402 - the interpreter (it uses this module's helpers)

__all__ += ["Kernel", "LaunchStats"]
