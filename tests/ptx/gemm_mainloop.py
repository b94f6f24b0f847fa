"""What tests/data/ptx/gemm_mainloop.ptx must do, computed through the Python API (no PTX).

``setup(k_iters)`` gives the machine the kernel runs on (its A and B in global memory, the out
buffer), the tensor maps, the launch parameters, and what the run must leave: the bytes of each
of the 3 stages of smem_a / smem_b (the last tiles loaded into it, with the maps' 128B swizzle)
and the 64 consumer checksums in out. The API machine that computes them issues the same loads
in the same order (expect_tx, two tile loads, wait) and reads the same 16-byte chunks.

``kernel_text()`` is the PTX; ``without_full_wait()`` the same kernel with the consumers' wait
on the full barrier deleted (they read a stage before its tiles land: reported by the model).
"""
import os

import numpy as np

import ptxasync as pa

from testpaths import DATA

PATH = os.path.join(DATA, "ptx", "gemm_mainloop.ptx")
STAGES, ROWS, K_TILE = 3, 128, 64
# where the kernel's arrays are in shared memory: ptx.Kernel places static .shared variables in
# declaration order from offset 0, each at its .align (smem_a, smem_b, full_bar, empty_bar)
SMEM_A, SMEM_B = 0, 3 * 128 * 64 * 2
TILE_BYTES = ROWS * K_TILE * 2            # f16
CONSUMERS = 64
LAUNCH = {"grid": (1, 1, 1), "block": (96, 1, 1)}

FULL_WAIT = ("$L_wait_full:\n"
             "\tmbarrier.try_wait.parity.shared::cta.b64 \t%p5, [%r14], %r12;\n"
             "\t@!%p5 bra \t$L_wait_full;\n")


def kernel_text():
    with open(PATH) as fh:
        return fh.read()


def without_full_wait():
    text = kernel_text()
    assert text.count(FULL_WAIT) == 1
    return text.replace(FULL_WAIT, "")


def operands(k_iters, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 16, size=(ROWS, K_TILE * k_iters), dtype=np.uint16)
    b = rng.integers(0, 1 << 16, size=(ROWS, K_TILE * k_iters), dtype=np.uint16)
    return a, b


def maps(m, a, b):
    ga, gb = m.register(a), m.register(b)
    ta = pa.TensorMap.from_array(a, (ROWS, K_TILE), ga.address, swizzle="128B", dtype="f16")
    tb = pa.TensorMap.from_array(b, (ROWS, K_TILE), gb.address, swizzle="128B", dtype="f16")
    return ta, tb


def setup(k_iters=8, seed=0, **machine_kw):
    """{"machine", "params", "launch", "stages_a", "stages_b", "out", "out_buffer"}: run the kernel
    on "machine" with "params" and "launch"; afterwards stage s of smem_a (at SMEM_A) must hold
    stages_a[s] (bytes), of smem_b (at SMEM_B) stages_b[s], and out_buffer the u32 checksums
    "out"."""
    a, b = operands(k_iters, seed)
    m = pa.Machine(ctas=1, smem_bytes=2 * STAGES * TILE_BYTES + 1024, **machine_kw)
    ta, tb = maps(m, a, b)
    out = m.register(np.zeros(CONSUMERS, dtype=np.uint32))
    stages_a, stages_b, sums = expected(a, b, k_iters)
    return {"machine": m, "params": {"tmap_a": ta, "tmap_b": tb, "k_iters": k_iters, "out": out.address},
            "launch": LAUNCH, "stages_a": stages_a, "stages_b": stages_b, "out": sums, "out_buffer": out}


def expected(a, b, k_iters):
    """The stages' final bytes and the checksums, issued through the API on a machine of its own."""
    base_a, base_b = 1024, 1024 + STAGES * TILE_BYTES        # 1024-aligned, as the kernel's arrays
    m = pa.Machine(ctas=1, smem_bytes=base_b + STAGES * TILE_BYTES)
    ta, tb = maps(m, a, b)
    sums = np.zeros(CONSUMERS, dtype=np.uint32)
    c = np.arange(CONSUMERS)
    for k in range(k_iters):
        s = k % STAGES
        bar = m.mbarrier(8 * s)
        if k < STAGES:
            bar.init(1)
        bar.arrive_expect_tx(2 * TILE_BYTES)
        m.cp_async_bulk_tensor_load(ta, (K_TILE * k, 0), base_a + s * TILE_BYTES, bar)
        m.cp_async_bulk_tensor_load(tb, (K_TILE * k, 0), base_b + s * TILE_BYTES, bar)
        bar.wait((k // STAGES) & 1)
        words = m.smem.view(np.uint32)
        for base, chunk in ((base_a, 0), (base_b, 16)):
            off = (base + s * TILE_BYTES + 256 * c + chunk) // 4
            for w in range(4):
                sums ^= words[off + w]
    stages_a = [bytes(m.smem[base_a + s * TILE_BYTES:base_a + (s + 1) * TILE_BYTES]) for s in range(STAGES)]
    stages_b = [bytes(m.smem[base_b + s * TILE_BYTES:base_b + (s + 1) * TILE_BYTES]) for s in range(STAGES)]
    return stages_a, stages_b, sums
