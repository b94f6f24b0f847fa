"""The Triton kernels the driver's tests run (Triton's @jit needs them in a file): what a Triton
user writes, small enough to run on the model in about a second each."""
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def scalars(out_ptr, a: tl.float16, b: tl.bfloat16, c: tl.float32, d: tl.float64, e: tl.int64, flag: tl.int1,
            BLOCK: tl.constexpr):
    # each scalar parameter type the CUDA launcher packs, written back as f64 / i64
    tl.store(out_ptr + 0, a.to(tl.float64))      # fp16
    tl.store(out_ptr + 1, b.to(tl.float64))      # bf16
    tl.store(out_ptr + 2, c.to(tl.float64))      # fp32
    tl.store(out_ptr + 3, d)                     # fp64
    tl.store(out_ptr + 4, e.to(tl.float64))      # i64
    tl.store(out_ptr + 5, flag.to(tl.float64))   # i1


@triton.jit
def softmax(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def tma_scale(x_desc, y_desc, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    y_desc.store([pm * BM, pn * BN], x_desc.load([pm * BM, pn * BN]) * 2)


@triton.jit
def device_desc_add(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    xd = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    yd = tl.make_tensor_descriptor(y_ptr, [M, N], [N, 1], [BM, BN])
    yd.store([pm * BM, pn * BN], xd.load([pm * BM, pn * BN]) + 1)


@triton.jit
def atomics(x_ptr, acc_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(acc_ptr + 0, tl.sum(v, axis=0))
    tl.atomic_max(acc_ptr + 1, tl.max(tl.where(m, v, -2147483648), axis=0))
    tl.atomic_min(acc_ptr + 2, tl.min(tl.where(m, v, 2147483647), axis=0))
    tl.atomic_add(hist_ptr + (v & 7), 1, mask=m)


@triton.jit
def racy(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs // BLOCK, offs)       # every thread stores its own value to x[0]


@triton.jit
def gather_1d(src_ptr, idx_ptr, out_ptr, N: tl.constexpr, M: tl.constexpr):
    # src (N < the CTA's threads) goes through shared memory: warps holding the same elements
    # store the same values to the same bytes (test_gather of Triton's test_core.py)
    src = tl.load(src_ptr + tl.arange(0, N))
    idx = tl.load(idx_ptr + tl.arange(0, M))
    tl.store(out_ptr + tl.arange(0, M), tl.gather(src, idx, 0))
