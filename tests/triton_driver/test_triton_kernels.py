"""Triton kernels compiled by Triton's own NVIDIA backend and run on the model through
ptxasync.triton, with NumPy arrays (and CPU torch tensors where Triton's API wants a tensor),
against NumPy's results: exactly where the arithmetic is exact, within a stated bound elsewhere."""
import numpy as np
import pytest

pytest.importorskip("triton.backends.compiler", reason="Triton is not installed (pip install '.[triton]')")
import triton  # noqa: E402

import ptxasync.triton as pt  # noqa: E402

import kernels  # noqa: E402

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("target", ["sm_90a", "sm_80"])
def test_vector_add_numpy_in_place(target):
    pt.configure(target=target)
    n = 1000
    x = RNG.standard_normal(n).astype(np.float32)
    y = RNG.standard_normal(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    kernels.add[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    np.testing.assert_array_equal(out, x + y)          # f32 add.rn: NumPy's rounding
    rec = pt.last_launch()
    assert rec.kernel == "add" and rec.target == target and rec.grid == (4, 1, 1) and rec.block == (128, 1, 1)
    assert rec.stats.instructions > 0 and rec.races == [] and rec.error is None
    assert f".target {target}" in rec.ptx


def test_vector_add_in_place_on_its_own_input():
    x = np.arange(300, dtype=np.int32)
    want = 2 * x
    kernels.add[(2,)](x, x, x, 300, BLOCK=256)          # three pointers into one array: one registration
    np.testing.assert_array_equal(x, want)


def test_vector_add_torch_tensors():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    x = torch.arange(500, dtype=torch.float16)
    y = torch.full((500,), 0.5, dtype=torch.float16)
    out = torch.empty(500, dtype=torch.float16)
    kernels.add[(2,)](x, y, out, 500, BLOCK=256)
    np.testing.assert_array_equal(out.numpy(), x.numpy() + y.numpy())


def test_scalar_parameters_are_packed_as_the_cuda_launcher_packs_them():
    out = np.zeros(6, np.float64)
    bf = 1.0 + 2.0 ** -8 + 2.0 ** -9       # between two bf16 values: the launcher truncates the f32
    kernels.scalars[(1,)](out, 1.5, bf, 0.1, 1 / 3, -(2 ** 40) - 5, True, BLOCK=1)
    want_bf = np.array([np.float32(bf).view(np.uint32) & 0xFFFF0000], np.uint32).view(np.float32)[0]
    np.testing.assert_array_equal(out, [1.5, want_bf, np.float32(0.1), 1 / 3, -(2 ** 40) - 5, 1.0])
    assert want_bf == 1.0


def test_softmax():
    x = RNG.standard_normal((6, 100)).astype(np.float32)
    y = np.zeros_like(x)
    kernels.softmax[(6,)](x, y, 100, 100, BLOCK=128)
    ref = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    # tl.exp is ex2.approx.ftz.f32 of x*log2(e) (2 ulp in the PTX ISA) and the division is
    # div.full.f32 (2 ulp): a few f32 ulps of the result
    np.testing.assert_allclose(y, ref, rtol=1e-6, atol=1e-9)


def _matmul(M=64, N=64, K=64):
    a = RNG.standard_normal((M, K)).astype(np.float16)
    b = RNG.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    kernels.matmul[(M // 64, N // 64)](a, b, c, M, N, K, BM=64, BN=64, BK=32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    # f16 x f16 products are exact in f32; K of them summed in f32: |error| <= K u sum|a||b|
    bound = K * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64))
    assert (np.abs(c - a64 @ b64) <= bound).all()
    return pt.last_launch()


def test_matmul_wgmma_sm90a():
    rec = _matmul()
    assert "wgmma.mma_async" in rec.ptx


def test_matmul_mma_sync_sm80():
    pt.configure(target="sm_80")
    rec = _matmul()
    assert "mma.sync" in rec.ptx


@pytest.mark.parametrize("target", ["sm_90a", "sm_100a"])
def test_tma_host_tensor_descriptor(target):
    pt.configure(target=target)
    x = RNG.standard_normal((64, 96)).astype(np.float16)
    y = np.zeros_like(x)
    # 96 columns in 64-wide boxes: the second column of tiles is half out of bounds (zero fill
    # on load, clipped on store)
    kernels.tma_scale[(2, 2)](pt.descriptor(x, [32, 64]), pt.descriptor(y, [32, 64]), BM=32, BN=64)
    np.testing.assert_array_equal(y, 2 * x)
    assert "cp.async.bulk.tensor" in pt.last_launch().ptx


def test_tma_host_tensor_descriptor_from_torch():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    from triton.tools.tensor_descriptor import TensorDescriptor
    x = torch.randn(128, 64, dtype=torch.float32)
    y = torch.zeros_like(x)
    kernels.tma_scale[(2, 1)](TensorDescriptor.from_tensor(x, [64, 64]), TensorDescriptor.from_tensor(y, [64, 64]),
                              BM=64, BN=64)
    np.testing.assert_array_equal(y.numpy(), 2 * x.numpy())


def test_device_side_descriptor_with_set_allocator():
    calls = []

    def alloc(size, align, stream):
        calls.append((size, align))
        raw = np.zeros(size + align, np.int8)       # any host array, aligned as asked
        off = -raw.ctypes.data % align
        return raw[off:off + size]

    triton.set_allocator(alloc)
    try:
        x = RNG.standard_normal((128, 64)).astype(np.float32)
        y = np.zeros_like(x)
        kernels.device_desc_add[(2, 1)](x, y, 128, 64, BM=64, BN=64)
    finally:
        from triton.runtime._allocation import NullAllocator
        triton.set_allocator(NullAllocator())
    np.testing.assert_array_equal(y, x + np.float32(1))
    assert calls and calls[0][0] >= 2 * 2 * 128      # two 128-byte tensor maps in each of two CTAs


def test_allocator_misaligned_buffer_is_refused_before_the_launch():
    def off_by_8(size, align, stream):
        raw = np.zeros(size + align + 8, np.int8)
        off = -raw.ctypes.data % align + 8
        return raw[off:off + size]

    triton.set_allocator(off_by_8)
    try:
        x = np.zeros((64, 64), np.float32)
        with pytest.raises(ValueError, match="not 128-byte aligned"):
            kernels.device_desc_add[(1, 1)](x, x.copy(), 64, 64, BM=64, BN=64)
    finally:
        from triton.runtime._allocation import NullAllocator
        triton.set_allocator(NullAllocator())


def test_device_side_descriptor_without_allocator_raises_as_triton_does():
    x = np.zeros((64, 64), np.float32)
    with pytest.raises(RuntimeError, match="set_allocator"):
        kernels.device_desc_add[(1, 1)](x, x.copy(), 64, 64, BM=64, BN=64)


@pytest.mark.parametrize("target", ["sm_90a", "sm_80"])
def test_atomics(target):
    pt.configure(target=target)
    n = 1000
    x = RNG.integers(-1000, 1000, n).astype(np.int32)
    acc = np.array([0, -(2 ** 31), 2 ** 31 - 1], np.int32)
    hist = np.zeros(8, np.int32)
    kernels.atomics[(4,)](x, acc, hist, n, BLOCK=256)
    np.testing.assert_array_equal(acc, [x.sum(), x.max(), x.min()])
    np.testing.assert_array_equal(hist, np.bincount(x & 7, minlength=8))
