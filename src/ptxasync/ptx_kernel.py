"""Running a PTX kernel on the model: ``ptxasync.ptx.Kernel``.

``Kernel(text, entry=None)`` parses the module, checks it as ptxas does for its own
``.target`` / ``.version`` (an error raises ``PtxSyntaxError`` with line and column), and
lowers the ``.entry`` once for the interpreter (an instruction it does not run raises there,
naming the line). ``kernel.launch(machine, grid, block, cluster, params)`` runs every
thread of every CTA in C against the machine's engines, mbarriers, memories and checkers:
the same C operations the Python API calls (docs/ptx.md, "Running PTX").
"""
from __future__ import annotations

import numbers
import sys
import weakref

from . import _core

__all__ = ["Kernel", "LaunchStats"]


class LaunchStats(tuple):
    """What a launch did: ``instructions`` executed (all threads), ``operations`` of them
    that touched the model, and ``steps``: pending operations the scheduler completed
    because every thread waited. The kernel's ``printf`` output: ``printf_calls``, one
    ``((ctaid x, y, z), (tid x, y, z), text)`` per call, every thread's first call before any
    thread's second (as an H200 prints a short kernel's), each round by block (x fastest), then
    thread; ``printf`` their texts, ``stdout`` them joined;
    ``printf_dropped`` calls whose output did not fit the 1 MiB buffer (docs/ptx.md)."""

    def __new__(cls, instructions, operations, steps, printf_calls=(), printf_dropped=0):
        self = super().__new__(cls, (instructions, operations, steps))
        self.printf_calls = list(printf_calls)
        self.printf_dropped = printf_dropped
        return self

    instructions = property(lambda self: self[0])
    operations = property(lambda self: self[1])
    steps = property(lambda self: self[2])
    printf = property(lambda self: [text for _, _, text in self.printf_calls])
    stdout = property(lambda self: "".join(text for _, _, text in self.printf_calls))

    def __repr__(self):
        return f"LaunchStats(instructions={self[0]}, operations={self[1]}, steps={self[2]})"


def _integral(v):
    """isinstance(v, numbers.Integral), a plain int at the cost of one type test."""
    return type(v) is int or isinstance(v, numbers.Integral)


def _dim3(v, name):
    if type(v) is int:                     # the usual forms; the C side checks each is in [1, 2^31)
        return (v, 1, 1)
    if type(v) is tuple and len(v) == 3 and type(v[0]) is int and type(v[1]) is int and type(v[2]) is int:
        return v
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        v = (int(v),)
    try:
        v = tuple(int(x) for x in v)
    except TypeError:
        raise TypeError(f"{name} must be an int or up to three ints, not {type(v).__name__}") from None
    if not 1 <= len(v) <= 3:
        raise ValueError(f"{name} takes one to three dimensions; got {len(v)}")
    return v + (1,) * (3 - len(v))


def _weak(x):
    """A weak reference to x where x takes one, else x."""
    try:
        return weakref.ref(x)
    except TypeError:
        return x


def _deref(r):
    return r() if isinstance(r, weakref.ref) else r


class Kernel:
    """A PTX ``.entry`` lowered for the interpreter (see the module docstring)."""

    def __init__(self, text, entry=None):
        from .ptx import Diagnostic, PtxSyntaxError, _bytes
        if entry is not None and not isinstance(entry, str):
            raise TypeError(f"entry must be a str or None, not {type(entry).__name__}")
        k, diags = _core.ptx_kernel(_bytes(text), entry)
        self.diagnostics = [Diagnostic(*d) for d in diags]
        if k is None:
            raise PtxSyntaxError(d for d in self.diagnostics if d.severity == "error")
        self._k = k
        self.entry = k.entry
        #: the parameters in order: name -> (offset, size in bytes, is a .b8 array)
        self.params = {name: (off, size, bool(arr)) for name, off, size, arr in k.params}
        self._param_size = max((off + size for off, size, _ in self.params.values()), default=0)
        #: the module's .global / .const variables and the body's .local ones:
        #: name -> (space "global" / "const" / "local", offset, bytes); a module variable's
        #: offset is in the buffer ``globals(machine)`` gives, a local one is its local address
        spaces = {"g": "global", "c": "const", "l": "local"}
        self.variables = {name: (spaces[sp], off, n) for name, sp, off, n in k.variables}
        image, self._const_bytes = k.module_image
        self._image = image or b""
        # id(machine) -> (machine, GlobalBuffer), both as weak references where they take them: the
        # module's variables there (the machine keeps its buffers; a strong reference here kept every
        # machine the kernel ran on, with its memory and its race checker's, as long as the kernel)
        self._gbufs = {}
        self._uses_heap = bool(k.info["uses_heap"])    # the module calls malloc / free

    def globals(self, machine):
        """The global buffer holding this kernel's module variables on ``machine`` (``None`` if
        the module has none): the ``.const`` ones first (read-only to the kernel), then the
        ``.global`` ones, at the offsets ``variables`` names. It is made at the first launch on
        that machine, initialised as the PTX says, and kept for every later launch of this
        ``Kernel`` there: the variables keep their values across launches, as a loaded module's
        do on the GPU (a new ``Kernel`` of the same text is a new module: its own copy)."""
        if not self._image:
            return None
        m = getattr(machine, "_m", machine)
        got = self._gbufs.get(id(m))
        if got is not None and _deref(got[0]) is m:
            b = _deref(got[1])
            if b is not None:
                return b
        for k in [k for k, v in self._gbufs.items() if _deref(v[0]) is None]:   # machines gone since
            del self._gbufs[k]
        buf = machine.alloc(len(self._image))
        # the image as loaded there: a variable's address an initialiser names is absolute
        buf.array.reshape(-1).view("u1")[:] = memoryview(self._k.image_at(buf.address))
        self._gbufs[id(m)] = (_weak(m), _weak(buf))
        return buf

    def variable(self, machine, name):
        """The bytes of module variable ``name`` on ``machine`` (a NumPy uint8 view)."""
        sp, off, n = self.variables[name]
        if sp == "local":
            raise ValueError(f"{name!r} is a .local variable: each thread has its own, during a launch only")
        return self.globals(machine).array.reshape(-1).view("u1")[off:off + n]

    def __repr__(self):
        return f"Kernel({self.entry!r}, params={list(self.params)})"

    def _param_block(self, params):
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise TypeError(f"params must be a dict of parameter name -> value, not {type(params).__name__}")
        unknown = [k for k in params if k not in self.params]
        if unknown:
            raise ValueError(f"unknown parameter {unknown[0]!r}: kernel {self.entry} takes "
                             f"{', '.join(self.params) or 'no parameters'}")
        missing = [k for k in self.params if k not in params]
        if missing:
            raise ValueError(f"parameter {missing[0]!r} of kernel {self.entry} is not given")
        block = bytearray(self._param_size)
        for name, (off, size, is_array) in self.params.items():
            block[off:off + size] = _param_bytes(name, params[name], size, is_array)
        return bytes(block)

    def launch(self, machine, grid=(1, 1, 1), block=(128, 1, 1), cluster=(1, 1, 1), params=None, seed=None,
               max_burst=8, max_instructions=None, max_pending=None, heap_size=8 << 20, echo=True):
        """Run the kernel on ``machine`` (a ``ptxasync.Machine``).

        ``params`` maps each ``.param`` name to its value: a ``TensorMap`` (or its 128 bytes)
        for a ``.b8 [128]`` tensor-map parameter (a grid constant: the copy takes the
        parameter's address), a ``GlobalBuffer`` (its address) or an int for a scalar. The
        grid's clusters run one after another on the machine's cluster (``cluster`` CTAs at
        most ``machine.nctas``); inside one, the threads are interleaved by a scheduler
        seeded with ``seed`` (default: the machine's seed), which runs a random thread, or a
        converged warp (its lanes together, each instruction for all of them), for
        1..``max_burst`` operations that touch the model. Returns ``LaunchStats``.

        Limits (docs/ptx.md, "Limits"): ``max_instructions`` executed a launch (default 2^30,
        about ten seconds of one thread's loop: a loop that never ends stops with its line) and
        ``max_pending`` asynchronous operations pending at once (default 32,768: a loop that
        issues copies and never waits stops with a ``MemoryError`` naming its line).
        Raises what the same operations raise through the Python API (``Hazard``,
        ``Deadlock`` naming each blocked thread and its PTX line, ``IllegalAddress``, ...).

        The CUDA device runtime (docs/ptx.md, "Functions and calls"): ``printf`` output is
        written to ``sys.stdout`` at the launch's end (``echo=False``: not written) and kept
        on the result (``LaunchStats.printf``, on an exception ``exc.printf``); a failed
        ``assert`` raises ``DeviceAssert``; ``malloc`` takes from a heap of ``heap_size`` bytes
        (default 8 MiB, ``cudaLimitMallocHeapSize``'s) in global memory made for the launch."""
        m = getattr(machine, "_m", machine)
        if seed is None:
            seed = getattr(machine, "_seed", 0) or 0
        if not _integral(seed) or not 0 <= int(seed) < 1 << 64:
            raise ValueError(f"seed must be an int in [0, 2^64); got {seed!r}")
        if not _integral(max_burst) or not 1 <= int(max_burst) <= 1 << 20:
            raise ValueError(f"max_burst must be an int in [1, 2^20]; got {max_burst!r}")
        if max_instructions is None:
            max_instructions = 0
        if not _integral(max_instructions) or not 0 <= int(max_instructions) < 1 << 64:
            raise ValueError(f"max_instructions must be a non-negative int; got {max_instructions!r}")
        if max_pending is None:
            max_pending = 0
        if not _integral(max_pending) or not 0 <= int(max_pending) < 1 << 32:
            raise ValueError(f"max_pending must be an int in [1, 2^32) (0 or None: 32,768); got {max_pending!r}")
        if not _integral(heap_size) or not 16 <= int(heap_size) <= 1 << 40:
            raise ValueError(f"heap_size must be an int in [16, 2^40] bytes; got {heap_size!r}")
        blockp = self._param_block(params)
        gbuf = self.globals(machine) if self._image else None
        # malloc's heap lives for the launch: global memory made now, given back at the end
        heap = machine.alloc(int(heap_size), align=4096) if self._uses_heap else None
        try:
            st = self._k.launch(m, _dim3(grid, "grid"), _dim3(block, "block"), _dim3(cluster, "cluster"), blockp,
                                int(seed), int(max_burst), int(max_instructions), int(max_pending),
                                gbuf.address if gbuf else 0, heap.address if heap else 0, int(heap_size))
        except Exception as e:
            if echo and getattr(e, "printf", None):
                sys.stdout.write("".join(text for _, _, text in e.printf))
            raise
        finally:
            if heap is not None:
                try:
                    heap.free()
                except Exception:      # an operation still pending reaches it: the machine keeps it
                    pass
        stats = LaunchStats(*st)
        if echo and stats.printf_calls:
            sys.stdout.write(stats.stdout)
        return stats


def _param_bytes(name, value, size, is_array):
    if type(value) is int and not is_array and 0 <= value < 1 << (8 * size):
        return value.to_bytes(size, "little")   # the usual scalar: what the checks below give it
    if isinstance(value, _core.TensorMap) or isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        if len(raw) != size:
            raise ValueError(f"parameter {name!r} is {size} bytes; the value given is {len(raw)} bytes"
                             + (" (a tensor map is 128)" if isinstance(value, _core.TensorMap) else ""))
        return raw
    from .machine import GlobalBuffer
    if isinstance(value, GlobalBuffer):
        value = value.address
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        v = int(value)
        if is_array:
            raise TypeError(f"parameter {name!r} is a .b8 array of {size} bytes: give bytes or a TensorMap, "
                            f"not an int")
        if not -(1 << (8 * size - 1)) <= v < 1 << (8 * size):
            raise OverflowError(f"parameter {name!r} ({size} bytes) cannot hold {v}")
        return (v % (1 << (8 * size))).to_bytes(size, "little")
    raise TypeError(f"parameter {name!r}: expected a TensorMap, bytes, a GlobalBuffer or an int, "
                    f"not {type(value).__name__}")
