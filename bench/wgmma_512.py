"""The census's Triton wgmma matmul (tests/data/census/matmul_f16.sm_90a.ptx: 64 x 64 tiles, k-steps
of 32, f16 in, f32 out) launched at 512 x 512 x 512 (its M, N, K and strides are parameters; the grid
8 x 8) on the model with the race checker on (bench key wgmma_matmul_512), against NumPy's f32 matmul
of the same matrices. The result is checked against NumPy first."""
import os
import sys

import numpy as np

import ptxasync as pa
from ptxasync import ptx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "census"))
import census_lib as cl  # noqa: E402

N = 512
NAME, ARCH = "matmul_f16", "sm_90a"


def matrices(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, N)).astype(np.float16), rng.standard_normal((N, N)).astype(np.float16)


def launcher(a, b, race_checks=True):
    """A function that launches the kernel once on a fresh machine; its out array (c)."""
    man = dict(cl.manifest(NAME))
    # a, b, c; M, N, K; a's row stride and column stride, b's, c's (elements)
    man["params"] = [["buf", "a"], ["buf", "b"], ["buf", "c"], ["i32", N], ["i32", N], ["i32", N],
                     ["i32", N], ["i32", 1], ["i32", N], ["i32", 1], ["i32", N], ["i32", 1]]
    md = man["archs"][ARCH]
    text = cl.ptx_text(NAME, ARCH)
    k = ptx.Kernel(text, entry=md["entry"])
    smem = max(cl.static_shared(text) + int(md.get("shared", 0)), 16)
    c = np.zeros((N, N), np.float32)

    def run():
        m = pa.Machine(smem_bytes=smem, seed=1, race_checks=race_checks)
        gbuf = {"a": m.register(a), "b": m.register(b), "c": m.register(c)}
        params = cl.model_params(man, ARCH, text, m, gbuf)
        k.launch(m, grid=(N // 64, N // 64, 1), block=tuple(man["block"]), params=params)
        if m.races or m.hazards:
            raise RuntimeError(f"wgmma_matmul_512: {(m.races or m.hazards)[0]}")
    return run, c
