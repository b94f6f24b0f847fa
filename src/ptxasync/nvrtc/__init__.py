"""CUDA C++ to a runnable model kernel, without a GPU: NVRTC writes the PTX, ``ptx.Kernel``
runs it on a ``Machine`` (docs/nvrtc.md).

    from ptxasync import nvrtc
    k = nvrtc.compile(source, entry="tma_wgmma")      # -> ptx.Kernel (an NvrtcKernel)
    k.ptx                                             # the PTX text NVRTC wrote
    k.launch(machine, grid=..., block=..., params={...})

    prog = nvrtc.compile_ptx(source, name_expressions=["copy<Cfg>"])   # the text only
    prog.ptx, prog.lowered_names["copy<Cfg>"]

A kernel is picked by its C++ name (``entry="copy<Cfg>"``, ``"ns::kernel"``: NVRTC's name
expressions, which also give an ``extern "C"`` kernel's plain name) or, when the module has one
``.entry``, by default. The include folders of the installed wheels (nvidia-cuda-cccl for
``<cuda/ptx>``, the CUDA headers, nvidia-cutlass for CuTe) are passed as ``-I`` unless
``include_paths`` is given. NVRTC's refusal is a ``CompileError`` carrying its log.

Install: ``pip install '.[nvrtc]'`` in the repository. NVRTC is loaded on the first compile, not at import.
"""
from ..ptx_kernel import Kernel
from ._compile import CompileError, NvrtcUnavailable, Program, compile_program
from ._paths import cccl_include, cutlass_include, include_paths

__all__ = ["compile", "compile_ptx", "NvrtcKernel", "Program", "CompileError", "NvrtcUnavailable",
           "include_paths", "cccl_include", "cutlass_include", "available"]


def available():
    """None when NVRTC can be used here, else the reason (a sentence saying what to install)."""
    from ._compile import _nvrtc
    try:
        _nvrtc()
    except NvrtcUnavailable as e:
        return str(e)
    return None


def compile_ptx(source, arch="sm_90a", options=(), name_expressions=(), include_paths=None,
                name="kernel.cu", headers=None):
    """Compile CUDA C++ ``source`` with NVRTC to PTX for ``arch`` ("sm_90a", "sm_80", ...).

    ``options``: more NVRTC options ("-DTILE=64", "--use_fast_math", "-default-device", ...;
    "-std=c++17" unless one is given). ``name_expressions``: C++ names of kernels (or
    ``__device__`` variables) whose mangled names to look up ("copy<Cfg>", "&ns::k").
    ``include_paths``: the ``-I`` folders (default: ``ptxasync.nvrtc.include_paths()``, the
    installed wheels' headers). ``name``: the source's file name in NVRTC's log. ``headers``:
    {include name: text} for headers given in memory. Returns a ``Program``; raises
    ``CompileError`` (with NVRTC's log) or ``NvrtcUnavailable``."""
    return compile_program(source, arch=arch, options=tuple(options), name_expressions=tuple(name_expressions),
                           include_paths=include_paths, name=name, headers=headers)


class NvrtcKernel(Kernel):
    """A ``ptx.Kernel`` made by ``compile``; ``program`` is the NVRTC ``Program`` (``ptx``,
    ``lowered_names``, ``log``), ``ptx`` its text."""

    def __init__(self, program, entry=None):
        self.program = program
        self.ptx = program.ptx
        super().__init__(program.ptx, entry=entry)


def compile(source, arch="sm_90a", options=(), name_expressions=(), include_paths=None, entry=None,
            name="kernel.cu", headers=None):
    """Compile CUDA C++ ``source`` with NVRTC and lower its kernel for the model: a
    ``ptx.Kernel`` to ``launch`` on a ``Machine``.

    ``entry``: the kernel's C++ name (a name expression: "tma_copy", "copy<Cfg>",
    "ns::kernel"; an ``extern "C"`` kernel's name is its own); without it, the module's only
    ``.entry``. Other arguments as ``compile_ptx``. Raises ``CompileError`` when NVRTC refuses
    the source (its log attached) and ``ptx.PtxSyntaxError`` when the model refuses the PTX."""
    exprs = tuple(name_expressions) + ((entry,) if entry is not None else ())
    prog = compile_ptx(source, arch=arch, options=options, name_expressions=exprs, include_paths=include_paths,
                       name=name, headers=headers)
    return NvrtcKernel(prog, entry=prog.lowered_names[entry] if entry is not None else None)
