"""The PTX Triton emitted for a TMA copy and a TMA matmul (sm_90a, tests/data/ptx/) run whole by
the interpreter: the copy's output is its input byte for byte, the matmul's is NumPy's product
within the tolerance the GPU's own result had."""
import os

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx
from testpaths import DATA


def kernel(name):
    with open(os.path.join(DATA, "ptx", name)) as f:
        return ptx.Kernel(f.read())


def desc_params(prefix, first, tmap, shape, strides):
    """Triton passes a tensor descriptor as the map and then its shape and strides."""
    return {f"{prefix}{first}": tmap, f"{prefix}{first + 1}": shape[1], f"{prefix}{first + 2}": shape[0],
            f"{prefix}{first + 3}": strides[0], f"{prefix}{first + 4}": strides[1]}


@pytest.mark.parametrize("policy", ["in_order", "random", "adversarial"])
def test_triton_tma_copy_runs_whole_and_copies(policy):
    k = kernel("triton_tma_copy.ptx")
    M = N = 256
    x = np.random.default_rng(0).standard_normal((M, N)).astype(np.float16)
    y = np.zeros_like(x)
    m = pa.Machine(smem_bytes=16384, policy=policy, seed=7)
    gx, gy = m.register(x), m.register(y)
    # what TensorDescriptor.from_tensor(x, [64, 64]) encodes: 128-byte rows, 128B swizzle
    ti = pa.TensorMap.tiled("f16", gx.address, [N, M], [N * 2], [64, 64], swizzle="128B")
    to = pa.TensorMap.tiled("f16", gy.address, [N, M], [N * 2], [64, 64], swizzle="128B")
    p = {"tma_copy_param_10": 0, "tma_copy_param_11": 0}
    p.update(desc_params("tma_copy_param_", 0, ti, (M, N), (N, 1)))
    p.update(desc_params("tma_copy_param_", 5, to, (M, N), (N, 1)))
    st = k.launch(m, grid=(M // 64, N // 64), block=128, params=p)
    np.testing.assert_array_equal(y.view(np.uint16), x.view(np.uint16))
    assert m.races == [] and m.hazards == [] and m.pending == 0
    assert st.instructions > 16 * 128 * 30


def matmul_params(ta, tb, tc, M, N, K):
    P = "tma_matmul_param_"
    p = {P + "15": K, P + "16": 0, P + "17": 0}
    p.update(desc_params(P, 0, ta, (M, K), (K, 1)))
    p.update(desc_params(P, 5, tb, (N, K), (K, 1)))
    p.update(desc_params(P, 10, tc, (M, N), (N, 1)))
    return p


@pytest.mark.parametrize("policy,seed", [("in_order", 0), ("random", 5)])
def test_triton_tma_matmul_runs_whole_and_multiplies(policy, seed):
    k = kernel("triton_tma_matmul.ptx")
    M = N = K = 256                              # 128x64 tiles, 64-deep k-steps, 3 stages, wgmma
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    m = pa.Machine(smem_bytes=80 * 1024, policy=policy, seed=seed)
    ga, gb, gc = m.register(a), m.register(b), m.register(c)
    ta = pa.TensorMap.tiled("f16", ga.address, [K, M], [K * 2], [64, 128], swizzle="128B")
    tb = pa.TensorMap.tiled("f16", gb.address, [K, N], [K * 2], [64, 64], swizzle="128B")
    tc = pa.TensorMap.tiled("f16", gc.address, [N, M], [N * 2], [64, 128], swizzle="128B")
    k.launch(m, grid=(M // 128, N // 64), block=128, params=matmul_params(ta, tb, tc, M, N, K))
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    # the GPU's tolerance: the f16 result's rounding (half an ulp) and the f32 sums' error
    ulp = np.spacing(np.abs(ref).astype(np.float16)).astype(np.float64)
    err = np.abs(c.astype(np.float64) - ref)
    assert (err <= 0.5 * ulp + 2e-3).all(), err.max()
    assert m.races == [] and m.hazards == [] and m.pending == 0


def test_matmul_with_a_b_tile_in_the_wrong_swizzle_is_wrong():
    # the wgmma descriptors say 128B: a B map encoded without swizzle moves the same bytes
    # but feeds wgmma the wrong elements (the consumer reads the producer's layout through
    # its descriptor, as on a GPU)
    k = kernel("triton_tma_matmul.ptx")
    M = N = K = 128
    rng = np.random.default_rng(1)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    m = pa.Machine(smem_bytes=80 * 1024)
    ga, gb, gc = m.register(a), m.register(b), m.register(c)
    ta = pa.TensorMap.tiled("f16", ga.address, [K, M], [K * 2], [64, 128], swizzle="128B")
    tb = pa.TensorMap.tiled("f16", gb.address, [K, N], [K * 2], [64, 64], swizzle="NONE")
    tc = pa.TensorMap.tiled("f16", gc.address, [N, M], [N * 2], [64, 128], swizzle="128B")
    k.launch(m, grid=(1, 2), block=128, params=matmul_params(ta, tb, tc, M, N, K))
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.abs(c.astype(np.float64) - ref).max() > 1.0
