"""Stop Triton's NVIDIA pipeline after PTX: its last stage ("cubin", which runs ptxas) hands on
the PTX text as the kernel's binary, which the driver's ``load_binary`` lowers for the model.

Triton's own extension point does it: ``knobs.runtime.add_stages_inspection_hook``, called once
with no arguments for a key that goes into the compile cache's hash (so these "binaries" never
mix with real cubins in ~/.triton), and once per compile with the backend's stages to edit. A
hook the user had installed still runs, after ours; uninstall puts it back.
"""
from __future__ import annotations

KEY = "ptxasync-ptx-binary"


class PtxStagesHook:
    """The hook: edits the NVIDIA backend's stages, then calls the hook it replaced."""

    def __init__(self, previous):
        self.previous = previous

    def __call__(self, *args):
        if not args:                         # asked for the cache key
            key, hsh = ("", "") if self.previous is None else self.previous()
            return key + KEY, f"{hsh}{KEY}"
        backend, stages, options, language, capability = args
        if getattr(backend, "binary_ext", None) == "cubin" and "ptx" in stages:
            stages["cubin"] = lambda src, metadata: src.encode()
        if self.previous is not None:
            self.previous(*args)


def install():
    from triton import knobs
    hook = knobs.runtime.add_stages_inspection_hook
    if not isinstance(hook, PtxStagesHook):
        knobs.runtime.add_stages_inspection_hook = PtxStagesHook(hook)


def uninstall():
    from triton import knobs
    hook = knobs.runtime.add_stages_inspection_hook
    if isinstance(hook, PtxStagesHook):
        knobs.runtime.add_stages_inspection_hook = hook.previous
