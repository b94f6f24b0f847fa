"""The launcher Triton calls for each kernel launch (``driver.launcher_cls(src, metadata)``, then
``launcher(gridX, gridY, gridZ, stream, function, packed_metadata, launch_metadata,
enter_hook, exit_hook, *args)``, as ``CudaLauncher`` is): a fresh Machine per launch, the
launch's arrays registered in place, the PTX run on it, the record kept for ``last_launch()``.
"""
from __future__ import annotations

import warnings

from . import _params
from ._memory import HostMemory, address_of, span_of
from ._record import HazardWarning, LaunchRecord, set_last, summary


class LoadedKernel:
    """What ``load_binary`` gives Triton as module and function: the lowered PTX."""

    def __init__(self, name, ptx_text):
        from .. import ptx
        self.name = name
        self.ptx = ptx_text
        self.kernel = ptx.Kernel(ptx_text, entry=name)
        info = self.kernel._k.info
        self.static_smem = max(info["static_smem"], info["dynamic_smem_offset"])

    def __repr__(self):
        return f"<ptxasync kernel {self.name}>"


class Launcher:

    def __init__(self, driver, src, metadata):
        self.driver = driver
        self.signature = dict(src.signature)
        self.tensordesc_meta = getattr(metadata, "tensordesc_meta", None)
        self.num_ctas = getattr(metadata, "num_ctas", 1)
        self.global_scratch = (metadata.global_scratch_size, metadata.global_scratch_align)
        self.profile_scratch = (metadata.profile_scratch_size, metadata.profile_scratch_align)
        self.launch_cooperative_grid = metadata.launch_cooperative_grid
        if getattr(metadata, "instrumentation_mode", "") == "gsan":
            raise NotImplementedError("Triton's GSan instrumentation needs its CUDA runtime: not run on the model")

    def _scratch(self, size_align, ctas, allocator, memory, default=None):
        from triton.runtime._allocation import NullAllocator
        size, align = size_align
        if size <= 0:
            return None
        nbytes = ctas * self.num_ctas * size
        alloc = allocator.get()
        if isinstance(alloc, NullAllocator) and default is not None:
            buf = default(nbytes, align, None)
        else:
            buf = alloc(nbytes, align, None)
        addr, span = address_of(buf), span_of(buf)
        if align > 1 and addr % align:
            raise ValueError(f"the allocator gave a {nbytes}-byte scratch buffer at 0x{addr:x}, which is not "
                             f"{align}-byte aligned as Triton asked (a CUDA allocation is 256-byte aligned)")
        if span is None or span[1] - addr < nbytes:
            raise ValueError(f"the allocator gave {type(buf).__name__} of fewer than the {nbytes} bytes asked for")
        memory.add(buf)
        return buf

    def __call__(self, gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata,
                 launch_enter_hook, launch_exit_hook, *args):
        from triton.runtime import _allocation
        if launch_enter_hook is not None:
            launch_enter_hook(launch_metadata)
        num_warps, num_ctas, shared = kernel_metadata
        ctas = gridX * gridY * gridZ
        if ctas > 0:
            self._run(function, (gridX * num_ctas, gridY, gridZ), 32 * num_warps, num_ctas, shared, args,
                      _allocation)
        if launch_exit_hook is not None:
            launch_exit_hook(launch_metadata)

    def _run(self, loaded, grid, threads, num_ctas, shared, args, _allocation):
        opts = self.driver.options
        target = opts.target
        if grid[1] > 65535 or grid[2] > 65535:
            raise ValueError(f"grid {grid}: CUDA limits grid dimensions y and z to 65535")
        memory = HostMemory()
        flat = _params.flatten(self.signature, args, self.tensordesc_meta,
                               lambda d, m: _params.encode_tensor_map(d, m, _map_target(target)))
        for ty, v in flat:
            if ty.startswith("*"):
                memory.add(v)
        for ty, d in zip(self.signature.values(), args):
            if isinstance(ty, str) and ty.startswith("tensordesc"):
                memory.add(d.base)
        ctas = grid[0] * grid[1] * grid[2] // num_ctas
        gscratch = self._scratch(self.global_scratch, ctas, _allocation._allocator, memory)
        pscratch = (self._scratch(self.profile_scratch, ctas, _allocation._profile_allocator, memory,
                                  self.driver.allocate_default_profile_scratch))
        flat += [("*i8", gscratch), ("*i8", pscratch)]

        k = loaded.kernel
        names = list(k.params)
        if len(names) != len(flat):
            raise ValueError(f"kernel {loaded.name} takes {len(names)} parameters; Triton's arguments give "
                             f"{len(flat)} (signature {list(self.signature.values())})")
        params = {n: _params.pack(n, ty, v, k.params[n][1]) for n, (ty, v) in zip(names, flat)}

        from ..machine import Machine
        smem = max(16, loaded.static_smem + shared)
        m = Machine(**opts.machine_kwargs(num_ctas, smem))
        bufs = memory.register(m)
        rec = LaunchRecord(loaded.name, target, grid, (threads, 1, 1), (num_ctas, 1, 1), m, loaded.ptx)
        set_last(rec)
        try:
            rec.stats = k.launch(m, grid=grid, block=threads, cluster=(num_ctas, 1, 1), params=params,
                                 **opts.launch_kwargs())
        except BaseException as e:
            rec.error = e
            raise
        finally:
            rec.races = m.races if m.race_checks else []
            rec.hazards = m.hazards
            # the record keeps the machine: it must not reach the host memory once the arrays go
            for b in bufs:
                try:
                    b.free()
                except Exception:                           # noqa: BLE001 (an operation left pending by an error)
                    rec.machine = None
            del memory
        if (rec.races or rec.hazards) and opts.hazards == "warn":
            warnings.warn(summary(rec), HazardWarning, stacklevel=4)


def _map_target(target):
    # the tensor-map encoder knows sm_90a and later; maps for sm_80 kernels never reach it
    return target if target.endswith("a") else "sm_90a"
