"""One NVRTC compilation: CUDA C++ source in, PTX text and the kernels' lowered names out.

NVRTC is reached through cuda-bindings (``cuda.bindings.nvrtc``), imported on the first
compile only, so ``import ptxasync`` (and ``import ptxasync.nvrtc``) work without it.
"""
from dataclasses import dataclass, field

from .._core import PtxAsyncError
from . import _paths

__all__ = ["CompileError", "NvrtcUnavailable", "Program", "compile_program", "arch_option"]

INSTALL = "pip install '.[nvrtc]' in the ptxasync repository (cuda-bindings, nvidia-cuda-nvrtc, nvidia-cuda-cccl)"


class NvrtcUnavailable(PtxAsyncError, ImportError):
    """NVRTC (or the cuda-bindings that reach it) is not installed or cannot be loaded."""


class CompileError(PtxAsyncError):
    """NVRTC refused the source: ``log`` is its compilation log (file:line: error: ...),
    ``options`` what it was given."""

    def __init__(self, message, log="", options=()):
        self.log = log
        self.options = list(options)
        super().__init__(message + (f"\n{log.rstrip()}" if log.strip() else ""))


@dataclass(frozen=True)
class Program:
    """What NVRTC made of a source: ``ptx`` (the module's text), ``lowered_names`` (each name
    expression -> the mangled name its ``.entry`` has in ``ptx``), ``log`` (warnings, possibly
    empty), ``options`` (every option NVRTC was given, include folders included) and the
    ``version`` of NVRTC, (major, minor)."""
    ptx: str
    lowered_names: dict = field(default_factory=dict)
    log: str = ""
    options: tuple = ()
    version: tuple = ()


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise NvrtcUnavailable(f"ptxasync.nvrtc needs cuda-bindings and NVRTC ({e}); install them with: "
                               f"{INSTALL}") from e
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except Exception as e:      # libnvrtc.so missing: cuda.pathfinder's DynamicLibNotFoundError, OSError, RuntimeError
        raise NvrtcUnavailable(f"the NVRTC library could not be loaded ({type(e).__name__}: {e}); install it "
                               f"with: {INSTALL}") from e
    return nvrtc, (major, minor)


def arch_option(arch):
    """``--gpu-architecture=compute_XX`` for "sm_XX" or "compute_XX" (NVRTC writes PTX for a
    virtual architecture; its ``.target`` is then "sm_XX")."""
    if not isinstance(arch, str):
        raise TypeError(f"arch must be a str such as 'sm_90a', not {type(arch).__name__}")
    a = arch.strip()
    for prefix in ("sm_", "compute_"):
        if a.startswith(prefix) and a[len(prefix):len(prefix) + 2].isdigit():
            return "--gpu-architecture=compute_" + a[len(prefix):]
    raise ValueError(f"arch {arch!r}: expected 'sm_XX' or 'compute_XX' (such as 'sm_90a', 'sm_80')")


def _text(buf):
    return bytes(buf).rstrip(b"\0").decode("utf-8", errors="replace")


def _log(nvrtc, prog):
    err, size = nvrtc.nvrtcGetProgramLogSize(prog)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS or size <= 1:
        return ""
    buf = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, buf)
    return _text(buf)


def _check(nvrtc, call, res, log=""):
    err = res[0]
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        msg = nvrtc.nvrtcGetErrorString(err)[1]
        raise CompileError(f"{call}: {err.name}" + (f" ({msg.decode()})" if msg else ""), log)
    return res[1] if len(res) == 2 else None


def compile_program(source, *, arch, options, name_expressions, include_paths, name, headers):
    """NVRTC's compile of ``source``; see ``ptxasync.nvrtc.compile_ptx``."""
    nvrtc, version = _nvrtc()
    if isinstance(source, bytes):
        source = source.decode("utf-8")
    if not isinstance(source, str):
        raise TypeError(f"source must be a str of CUDA C++, not {type(source).__name__}")
    if isinstance(options, (str, bytes)) or isinstance(name_expressions, (str, bytes)):
        raise TypeError("options and name_expressions are sequences of str (a single str would be "
                        "split into characters)")
    exprs = list(dict.fromkeys(name_expressions))
    includes = list(include_paths) if include_paths is not None else _paths.include_paths()
    opts = [arch_option(arch), *options]
    if not any(o.startswith(("-std", "--std")) for o in options):
        opts.insert(1, "-std=c++17")          # CuTe and cuda::ptx need C++17; NVRTC's default is C++17 too
    opts += ["-I" + p for p in includes]
    headers = dict(headers or {})
    prog = _check(nvrtc, "nvrtcCreateProgram", nvrtc.nvrtcCreateProgram(
        source.encode(), name.encode(), len(headers), [h.encode() for h in headers.values()],
        [n.encode() for n in headers]))
    try:
        for e in exprs:
            _check(nvrtc, f"nvrtcAddNameExpression({e!r})", nvrtc.nvrtcAddNameExpression(prog, e.encode()))
        res = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        log = _log(nvrtc, prog)
        if res[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            first = next((ln for ln in log.splitlines() if "error" in ln), res[0].name)
            raise CompileError(f"NVRTC could not compile {name} for {arch}: {first.strip()}", log, opts)
        lowered = {}
        for e in exprs:
            err, low = nvrtc.nvrtcGetLoweredName(prog, e.encode())
            if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                raise CompileError(f"name expression {e!r} names no __global__ function or __device__ "
                                   f"variable of {name} ({err.name})", log, opts)
            lowered[e] = low.decode()
        size = _check(nvrtc, "nvrtcGetPTXSize", nvrtc.nvrtcGetPTXSize(prog), log)
        buf = b" " * size
        _check(nvrtc, "nvrtcGetPTX", nvrtc.nvrtcGetPTX(prog, buf), log)
        return Program(ptx=_text(buf), lowered_names=lowered, log=log, options=tuple(opts), version=version)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
