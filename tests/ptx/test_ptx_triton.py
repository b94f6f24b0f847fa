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
