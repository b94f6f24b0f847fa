"""The Triton driver: what ``triton.runtime.driver.active`` must answer (backends/driver.py's
``DriverBase``, and what runtime/jit.py, compiler/compiler.py and testing.py ask of it), for a
"device" that is the model on the CPU. Triton's own NVIDIA backend compiles for the configured
target; the launcher (``_launcher.Launcher``) runs the PTX on a Machine.
"""
from __future__ import annotations

import functools
import time

import numpy as np
from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase

from . import _options
from ._launcher import Launcher, LoadedKernel


class ModelUtils:
    """``driver.utils``: what CompiledKernel and the launch path call."""

    def __init__(self, driver):
        self._driver = driver

    def load_binary(self, name, kernel, shared, device):
        """(module, function, n_regs, n_spills, n_max_threads): the PTX lowered once per kernel."""
        if isinstance(kernel, (bytes, bytearray)) and kernel[:4] == b"\x7fELF":
            raise RuntimeError(f"kernel {name}: Triton handed the driver a cubin, not PTX: its stage hook "
                               "(knobs.runtime.add_stages_inspection_hook) was replaced or reset after "
                               "ptxasync.triton was activated; call ptxasync.triton.activate() again")
        text = kernel.decode() if isinstance(kernel, (bytes, bytearray)) else str(kernel)
        loaded = LoadedKernel(name, text)
        return loaded, loaded, 0, 0, 1024

    def unload_module(self, module):
        pass

    def get_device_properties(self, device):
        return _options.device_properties(self._driver.capability)

    def get_device_capability(self, device):
        return divmod(self._driver.capability, 10)

    def get_current_device(self):
        return self._driver.get_current_device()

    def set_current_device(self, device):
        pass

    def set_printf_fifo_size(self, size):
        pass

    def fill_tma_descriptor_tiled(self, ptr, swizzle, elem_size, elem_type, block_size, shape, strides, padding):
        """The model's version of Triton's helper (same arguments, device-side element type
        already mapped to the host enum): a TensorMap."""
        from ..tensormap import TensorMap
        rank = len(shape)
        return TensorMap.tiled(int(elem_type), int(ptr), [int(s) for s in shape][::-1],
                               [elem_size * int(s) for s in strides[:-1]][::-1], [int(b) for b in block_size][::-1],
                               [1] * rank, swizzle=int(swizzle), l2_promotion="L2_128B",
                               oob_fill="NAN_REQUEST_ZERO_FMA" if padding == 1 else "NONE",
                               target=self._driver.tensormap_target)


def _do_bench(fn, warmup=None, rep=None, grad_to_none=None, quantiles=None, return_mode="mean", **_):
    """A CPU stand-in for triton.testing.do_bench: wall time of three runs after one warm-up, in
    ms (``warmup`` / ``rep`` are GPU milliseconds there, ignored: a model run takes far longer).
    What it measures is the model's speed, not a GPU's."""
    fn()
    times = []
    for _ in range(3):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    t = np.array(times)
    if quantiles is not None:
        out = np.quantile(t, quantiles).tolist()
        return out[0] if len(out) == 1 else out
    return float(getattr(np, return_mode)(t))


class ModelDriver(DriverBase):
    """A Triton driver whose device is the ptxasync model (``ptxasync.triton.driver()``)."""

    def __init__(self, options=None):
        super().__init__()
        self.options = (options or _options.Options()).check()
        self.utils = ModelUtils(self)
        self.launcher_cls = functools.partial(Launcher, self)

    @classmethod
    def is_active(cls):
        # never picked by Triton's discovery: it is made active explicitly (set_active)
        return False

    @property
    def capability(self):
        return _options.parse_target(self.options.target)[0]

    @property
    def tensormap_target(self):
        t = self.options.target
        return t if t.endswith("a") else "sm_90a"

    def get_current_target(self):
        return GPUTarget("cuda", self.capability, 32)

    def get_current_device(self):
        # one device per target: Triton keeps a compile cache per device, so switching the target
        # (configure(target=...)) compiles anew instead of reusing another target's kernels
        return _options.target_names().index(self.options.target)

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_device_capability(self, device=None):
        return divmod(self.capability, 10)

    def get_active_torch_device(self):
        import torch
        return torch.device("cpu")

    def get_device_interface(self):
        raise NotImplementedError("the model has no CUDA device interface (streams, events): "
                                  "time kernels with driver.get_benchmarker()")

    def map_python_to_cpp_type(self, ty):
        from triton.backends.nvidia.driver import ty_to_cpp
        return ty_to_cpp(ty)

    def get_benchmarker(self):
        return _do_bench

    def get_empty_cache_for_benchmark(self):
        return np.empty(1, np.int32)

    def clear_cache(self, cache):
        cache.fill(0)

    def allocate_default_profile_scratch(self, size, alignment, stream):
        return _aligned_zeros(size, alignment)

    def __repr__(self):
        return f"<ptxasync Triton driver: {self.options.target} on the model>"


def _aligned_zeros(nbytes, align):
    raw = np.zeros(nbytes + max(align, 1), np.uint8)
    off = (-raw.__array_interface__["data"][0]) % max(align, 1)
    return raw[off:off + nbytes]
