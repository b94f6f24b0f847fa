"""Triton kernels on the CPU: a Triton driver whose device is the ptxasync model.

    import ptxasync.triton                       # makes the model Triton's active driver
    add_kernel[grid](x, y, out, n, BLOCK=1024)   # CPU torch tensors or NumPy arrays, in place
    ptxasync.triton.last_launch()                # stats, races, hazards, the Machine, the PTX

Triton's own NVIDIA compiler compiles for the configured target (sm_90a by default; sm_80,
sm_100a, ... with ``configure(target=...)``) and stops after PTX; the launch runs the PTX on a
fresh ``ptxasync.Machine`` with every array registered at its host address, host
``TensorDescriptor``s encoded by the model's tensor-map encoder and ``triton.set_allocator``'s
buffers as global scratch. The race checker is on: a race or hazard raises ``ptxasync.Hazard`` at
its PTX line (or the launch goes on and they are listed in a ``HazardWarning``, or only recorded:
``configure(hazards="warn" / "report")``). docs/triton.md has the details and the limits.
"""
from __future__ import annotations

try:
    import triton.backends.compiler as _triton  # noqa: F401  (Triton itself, not a folder named triton)
except ImportError as _e:        # pragma: no cover - depends on the environment
    raise ImportError("ptxasync.triton needs Triton: pip install 'ptxasync[triton]' (or pip install triton)") from _e

from . import _numpy, _stages
from ._driver import ModelDriver
from ._numpy import HostArray, descriptor
from ._options import Options, target_names
from ._record import HazardWarning, LaunchRecord, last

__all__ = ["driver", "descriptor", "HostArray", "activate", "deactivate", "configure", "options", "last_launch", "ModelDriver",
           "LaunchRecord", "HazardWarning", "Options", "target_names"]

_driver = ModelDriver()


def driver():
    """The driver object (``triton.runtime.driver.set_active(ptxasync.triton.driver())``)."""
    return _driver


def _is_active():
    from triton.runtime import driver as cfg
    return cfg._active is _driver


def activate():
    """Make the model Triton's active driver (done on import): installs the stage hook that stops
    compilation at PTX and the NumPy-array argument typing."""
    from triton.runtime import driver as cfg
    _stages.install()
    _numpy.install(_is_active)
    cfg.set_active(_driver)


def deactivate():
    """Give Triton its default driver back and remove the hooks."""
    from triton.runtime import driver as cfg
    _stages.uninstall()
    _numpy.uninstall()
    if cfg._active is _driver:
        cfg._active = None       # not reset_active(): that builds the default driver now, which raises without a GPU


def configure(**kw):
    """Set the driver's options; returns the new ``Options``. ``target`` ("sm_90a", "sm_80",
    "sm_100a", ...: ``target_names()``), ``race_checks`` (the memory model, default True),
    ``hazards`` ("raise" at the first race or hazard, or "warn" / "report": the launch goes on and
    they are recorded), ``same_value_stores`` ("record", the default: two unordered plain stores
    of the same bytes, as Triton writes a value replicated across threads, are a
    ``same-value-store`` race in the record, never raised; "race": a data race; "accept":
    nothing), ``checks`` (the Machine's memory checks), ``policy`` (completion policy, default
    "random"), ``seed``, ``max_burst``, ``max_instructions``, ``max_pending``. Unknown names raise."""
    known = set(Options.__dataclass_fields__)
    bad = sorted(set(kw) - known)
    if bad:
        raise TypeError(f"configure() got unknown option(s) {', '.join(bad)}; it takes {', '.join(sorted(known))}")
    import dataclasses
    new = dataclasses.replace(_driver.options, **kw).check()
    _driver.options = new
    return new


def options():
    """The driver's current ``Options``."""
    return _driver.options


def last_launch():
    """The ``LaunchRecord`` of the last launch (this thread's), or None before any."""
    return last()


activate()
