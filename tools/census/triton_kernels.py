"""The census's Triton kernels: what a Triton user writes, compiled by Triton's own compiler on
this (GPU-less) machine for sm_90a and sm_80, vendored as written under tests/data/census/.

    python tools/census/triton_kernels.py [NAME ...]     # writes <name>.<arch>.ptx and <name>.json

Each kernel comes with its launch: grid, warps, every parameter in order and how it is filled
(tools/census/census_lib.py reads that manifest on the GPU and in the tests). The PTX is
compiled with ``enable_fp_fusion=False``: Triton then writes ``mul.rn`` / ``add.rn``, which
ptxas does not contract into an fma, so the GPU's bits are the PTX's own; ``ptx_version=90``
is the highest PTX ISA the H200's driver (CUDA 13.0) loads (sm_80 keeps Triton's own choice, the
8.8 of the ptxas it uses for sm_80).
"""
import json
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.language.extra import libdevice

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "data", "census")


# ---------------------------------------------------------------- the kernels

@triton.jit
def vadd(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


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
def layernorm_fwd(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(m, x - mean, 0.)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    w = tl.load(w_ptr + cols, mask=m)
    b = tl.load(b_ptr + cols, mask=m)
    tl.store(y_ptr + row * stride + cols, (xc * rstd * w + b).to(tl.float16), mask=m)


@triton.jit
def layernorm_bwd_dx(dy_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.)
    dy = tl.load(dy_ptr + row * stride + cols, mask=m, other=0.)
    w = tl.load(w_ptr + cols, mask=m, other=0.)
    mean = tl.load(mean_ptr + row)
    rstd = tl.load(rstd_ptr + row)
    xhat = tl.where(m, (x - mean) * rstd, 0.)
    wdy = w * dy
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    tl.store(dx_ptr + row * stride + cols, (wdy - (xhat * c1 + c2)) * rstd, mask=m)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(a), tl.load(b), acc)
        a += BK * sak
        b += BK * sbk
    c = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_i8(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.int32)
    for k in range(0, K, BK):
        acc = tl.dot(tl.load(a), tl.load(b), acc)
        a += BK * sak
        b += BK * sbk
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc)


@triton.jit
def matmul_tma_persistent(a_desc, b_desc, c_desc, M, N, K,
                          BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, NUM_SMS: tl.constexpr):
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    for tile in tl.range(tl.program_id(0), tiles, NUM_SMS, flatten=True):
        om = (tile // tiles_n) * BM
        on = (tile % tiles_n) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            acc = tl.dot(a_desc.load([om, k]), b_desc.load([on, k]).T, acc)
        c_desc.store([om, on], acc.to(tl.float16))


@triton.jit
def matmul_device_desc(a_ptr, b_ptr, c_ptr, M, N, K,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    om = tl.program_id(0) * BM
    on = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([om, k]), b_desc.load([on, k]).T, acc)
    c_desc.store([om, on], acc.to(tl.float16))


@triton.jit
def flash_attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, S,
                   D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    base = head * S * D
    rm = start_m * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + base + rm[:, None] * D + rd[None, :])
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, S, BN):
        kk = tl.load(k_ptr + base + (start_n + rn)[None, :] * D + rd[:, None])
        qk = tl.dot(q, kk) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + base + (start_n + rn)[:, None] * D + rd[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + rm[:, None] * D + rd[None, :], acc.to(tl.float16))


@triton.jit
def splitk_matmul(a_ptr, b_ptr, c_ptr, M, N, K,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, SPLIT: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = pid_k * BK + tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK * SPLIT):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(a, b, acc)
    tl.atomic_add(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def reduce_atomic(x_ptr, sum_ptr, isum_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.)
    tl.atomic_add(sum_ptr, tl.sum(x, axis=0))
    xi = (x * 100).to(tl.int32)
    tl.atomic_add(isum_ptr, tl.sum(xi, axis=0))
    tl.atomic_max(isum_ptr + 1, tl.max(xi, axis=0))


@triton.jit
def libdevice_math(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.)
    ax = tl.abs(x) + 0.5
    tl.store(y_ptr + 0 * n + offs, libdevice.exp(x), mask=m)
    tl.store(y_ptr + 1 * n + offs, libdevice.log(ax), mask=m)
    tl.store(y_ptr + 2 * n + offs, libdevice.sqrt(ax), mask=m)
    tl.store(y_ptr + 3 * n + offs, tl.exp(x), mask=m)
    tl.store(y_ptr + 4 * n + offs, tl.log(ax), mask=m)
    tl.store(y_ptr + 5 * n + offs, tl.sqrt(ax), mask=m)
    tl.store(y_ptr + 6 * n + offs, tl.sqrt_rn(ax), mask=m)
    tl.store(y_ptr + 7 * n + offs, libdevice.tanh(x), mask=m)


@triton.jit
def cumsum(x_ptr, y_ptr, xi_ptr, yi_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = row * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))
    tl.store(yi_ptr + offs, tl.cumsum(tl.load(xi_ptr + offs), axis=0))


@triton.jit
def cross_entropy(logits_ptr, target_ptr, loss_ptr, stride, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < V
    x = tl.load(logits_ptr + row * stride + cols, mask=m, other=-float("inf")).to(tl.float32)
    mx = tl.max(x, axis=0)
    lse = mx + tl.log(tl.sum(tl.exp(x - mx), axis=0))
    t = tl.load(target_ptr + row)
    xt = tl.load(logits_ptr + row * stride + t).to(tl.float32)
    tl.store(loss_ptr + row, lse - xt)


@triton.jit
def dropout(x_ptr, y_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    keep = tl.rand(seed, offs) > p
    tl.store(y_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=m)


@triton.jit
def gelu(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, 0.5 * x * (1 + libdevice.erf(x * 0.7071067811865476)), mask=m)
    t = libdevice.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))
    tl.store(z_ptr + offs, 0.5 * x * (1 + t), mask=m)


@triton.jit
def transpose(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=m)
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(x), mask=tl.trans(m))


@triton.jit
def embedding(idx_ptr, w_ptr, out_ptr, D: tl.constexpr):
    row = tl.program_id(0)
    i = tl.load(idx_ptr + row)
    d = tl.arange(0, D)
    tl.store(out_ptr + row * D + d, tl.load(w_ptr + i * D + d))


@triton.jit
def matmul_fp8(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None])    # B is N x K (K-major)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * (BN * tl.num_programs(1)) + rn[None, :], acc)


# ---------------------------------------------------------------- their launches
# buffer: (dtype, shape, fill, compare). fill: randn | rand | zeros | randint:lo:hi | arange | perm;
# compare: None (input, not compared), "exact" (bits), or {"atol": a, "rtol": r}.
# param: ("buf", name) | ("i32", v) | ("f32", v) | ("desc", buf, [block...]) (host TensorDescriptor)
# "archs": the targets a kernel is compiled for.

def mm_strides(M, N, K):
    return [("i32", K), ("i32", 1), ("i32", N), ("i32", 1), ("i32", N), ("i32", 1)]


CENSUS = {
    "vadd": dict(fn=vadd, sig="*fp32 *fp32 *fp32 i32", const={"BLOCK": 256}, warps=4, grid=[4, 1, 1],
                 bufs={"x": ("float32", [1000], "randn", None), "y": ("float32", [1000], "randn", None),
                       "z": ("float32", [1000], "zeros", "exact")},
                 params=[("buf", "x"), ("buf", "y"), ("buf", "z"), ("i32", 1000)]),
    "softmax": dict(fn=softmax, sig="*fp32 *fp32 i32 i32", const={"BLOCK": 128}, warps=4, grid=[16, 1, 1],
                    bufs={"x": ("float32", [16, 100], "randn", None), "y": ("float32", [16, 100], "zeros", "exact")},
                    params=[("buf", "x"), ("buf", "y"), ("i32", 100), ("i32", 100)]),
    "layernorm_fwd": dict(fn=layernorm_fwd, sig="*fp16 *fp16 *fp32 *fp32 *fp32 *fp32 i32 i32 fp32",
                          const={"BLOCK": 128}, warps=4, grid=[8, 1, 1],
                          bufs={"x": ("float16", [8, 96], "randn", None), "y": ("float16", [8, 96], "zeros", "exact"),
                                "w": ("float32", [96], "randn", None), "b": ("float32", [96], "randn", None),
                                "mean": ("float32", [8], "zeros", "exact"), "rstd": ("float32", [8], "zeros", "exact")},
                          params=[("buf", "x"), ("buf", "y"), ("buf", "w"), ("buf", "b"), ("buf", "mean"),
                                  ("buf", "rstd"), ("i32", 96), ("i32", 96), ("f32", 1e-5)]),
    "layernorm_bwd_dx": dict(fn=layernorm_bwd_dx, sig="*fp32 *fp32 *fp32 *fp32 *fp32 *fp32 i32 i32",
                             const={"BLOCK": 128}, warps=4, grid=[8, 1, 1],
                             bufs={"dy": ("float32", [8, 96], "randn", None), "x": ("float32", [8, 96], "randn", None),
                                   "w": ("float32", [96], "randn", None), "mean": ("float32", [8], "randn", None),
                                   "rstd": ("float32", [8], "rand", None),
                                   "dx": ("float32", [8, 96], "zeros", "exact")},
                             params=[("buf", "dy"), ("buf", "x"), ("buf", "w"), ("buf", "mean"), ("buf", "rstd"),
                                     ("buf", "dx"), ("i32", 96), ("i32", 96)]),
    "matmul_f16": dict(fn=matmul, sig="*fp16 *fp16 *fp32 i32 i32 i32 i32 i32 i32 i32 i32 i32",
                       const={"BM": 64, "BN": 64, "BK": 32}, warps=4, grid=[2, 2, 1],
                       bufs={"a": ("float16", [128, 64], "randn", None), "b": ("float16", [64, 128], "randn", None),
                             "c": ("float32", [128, 128], "zeros", {"atol": 1e-5, "rtol": 1e-5})},
                       params=[("buf", "a"), ("buf", "b"), ("buf", "c"), ("i32", 128), ("i32", 128), ("i32", 64)]
                       + mm_strides(128, 128, 64),
                       note="the tensor cores' f32 sums are in the hardware's own order: compared within 1e-5"),
    "matmul_i8": dict(fn=matmul_i8, sig="*i8 *i8 *i32 i32 i32 i32 i32 i32 i32 i32 i32 i32",
                      const={"BM": 64, "BN": 64, "BK": 64}, warps=4, grid=[2, 2, 1],
                      bufs={"a": ("int8", [128, 128], "randint:-128:128", None),
                            "b": ("int8", [128, 128], "randint:-128:128", None),
                            "c": ("int32", [128, 128], "zeros", "exact")},
                      params=[("buf", "a"), ("buf", "b"), ("buf", "c"), ("i32", 128), ("i32", 128), ("i32", 128)]
                      + mm_strides(128, 128, 128)),
    "matmul_fp8": dict(fn=matmul_fp8, sig="*fp8e4nv *fp8e4nv *fp32 i32", const={"BM": 64, "BN": 64, "BK": 64},
                       warps=4, grid=[2, 2, 1], archs=["sm_90a"],
                       bufs={"a": ("uint8", [128, 128], "fp8e4m3", None), "b": ("uint8", [128, 128], "fp8e4m3", None),
                             "c": ("float32", [128, 128], "zeros", {"atol": 1e-4, "rtol": 1e-5})},
                       params=[("buf", "a"), ("buf", "b"), ("buf", "c"), ("i32", 128)],
                       note="e4m3 products summed by the tensor cores in their own order"),
    "matmul_tma_persistent": dict(fn=matmul_tma_persistent,
                                  sig="desc:fp16:64,64 desc:fp16:64,64 desc:fp16:64,64 i32 i32 i32",
                                  const={"BM": 64, "BN": 64, "BK": 64, "NUM_SMS": 2}, warps=4, grid=[2, 1, 1],
                                  archs=["sm_90a"],
                                  bufs={"a": ("float16", [128, 128], "randn", None),
                                        "b": ("float16", [128, 128], "randn", None),
                                        "c": ("float16", [128, 128], "zeros", {"atol": 1e-2, "rtol": 1e-3})},
                                  params=[("desc", "a", [64, 64]), ("desc", "b", [64, 64]), ("desc", "c", [64, 64]),
                                          ("i32", 128), ("i32", 128), ("i32", 128)],
                                  note="f32 sums in the tensor cores' order, rounded to f16"),
    "matmul_device_desc": dict(fn=matmul_device_desc, sig="*fp16 *fp16 *fp16 i32 i32 i32",
                               const={"BM": 64, "BN": 64, "BK": 64}, warps=4, grid=[2, 2, 1], archs=["sm_90a"],
                               bufs={"a": ("float16", [128, 128], "randn", None),
                                     "b": ("float16", [128, 128], "randn", None),
                                     "c": ("float16", [128, 128], "zeros", {"atol": 1e-2, "rtol": 1e-3})},
                               params=[("buf", "a"), ("buf", "b"), ("buf", "c"), ("i32", 128), ("i32", 128),
                                       ("i32", 128)],
                               note="f32 sums in the tensor cores' order, rounded to f16"),
    "flash_attn_fwd": dict(fn=flash_attn_fwd, sig="*fp16 *fp16 *fp16 *fp16 fp32 i32",
                           const={"D": 32, "BM": 64, "BN": 32}, warps=4, grid=[2, 2, 1],
                           bufs={"q": ("float16", [2, 128, 32], "randn", None), "k": ("float16", [2, 128, 32], "randn", None),
                                 "v": ("float16", [2, 128, 32], "randn", None),
                                 "o": ("float16", [2, 128, 32], "zeros", {"atol": 2e-3, "rtol": 2e-3})},
                           params=[("buf", "q"), ("buf", "k"), ("buf", "v"), ("buf", "o"), ("f32", 0.17677669),
                                   ("i32", 128)],
                           note="two tensor-core products in the hardware's order of sums"),
    "splitk_matmul": dict(fn=splitk_matmul, sig="*fp16 *fp16 *fp32 i32 i32 i32",
                          const={"BM": 64, "BN": 64, "BK": 32, "SPLIT": 4}, warps=4, grid=[1, 1, 4],
                          bufs={"a": ("float16", [64, 256], "randn", None), "b": ("float16", [256, 64], "randn", None),
                                "c": ("float32", [64, 64], "zeros", {"atol": 1e-4, "rtol": 1e-5})},
                          params=[("buf", "a"), ("buf", "b"), ("buf", "c"), ("i32", 64), ("i32", 64), ("i32", 256)],
                          note="f32 atomic adds land in the order the CTAs reach them"),
    "reduce_atomic": dict(fn=reduce_atomic, sig="*fp32 *fp32 *i32 i32", const={"BLOCK": 256}, warps=4,
                          grid=[8, 1, 1],
                          bufs={"x": ("float32", [2000], "randn", None),
                                "sum": ("float32", [1], "zeros", {"atol": 1e-4, "rtol": 1e-5}),
                                "isum": ("int32", [2], "zeros", "exact")},
                          params=[("buf", "x"), ("buf", "sum"), ("buf", "isum"), ("i32", 2000)],
                          note="the f32 total depends on the order of the atomic adds"),
    "libdevice_math": dict(fn=libdevice_math, sig="*fp32 *fp32 i32", const={"BLOCK": 256}, warps=4, grid=[2, 1, 1],
                           bufs={"x": ("float32", [500], "randn", None), "y": ("float32", [8, 500], "zeros", "exact")},
                           params=[("buf", "x"), ("buf", "y"), ("i32", 500)]),
    "cumsum": dict(fn=cumsum, sig="*fp32 *fp32 *i32 *i32", const={"BLOCK": 128}, warps=4, grid=[4, 1, 1],
                   bufs={"x": ("float32", [4, 128], "randn", None), "y": ("float32", [4, 128], "zeros", "exact"),
                         "xi": ("int32", [4, 128], "randint:-1000:1000", None),
                         "yi": ("int32", [4, 128], "zeros", "exact")},
                   params=[("buf", "x"), ("buf", "y"), ("buf", "xi"), ("buf", "yi")]),
    "cross_entropy": dict(fn=cross_entropy, sig="*fp16 *i64 *fp32 i32 i32", const={"BLOCK": 512}, warps=4,
                          grid=[8, 1, 1],
                          bufs={"logits": ("float16", [8, 500], "randn", None),
                                "target": ("int64", [8], "randint:0:500", None),
                                "loss": ("float32", [8], "zeros", "exact")},
                          params=[("buf", "logits"), ("buf", "target"), ("buf", "loss"), ("i32", 500), ("i32", 500)]),
    "dropout": dict(fn=dropout, sig="*fp32 *fp32 i32 fp32 i32", const={"BLOCK": 256}, warps=4, grid=[4, 1, 1],
                    bufs={"x": ("float32", [1000], "randn", None), "y": ("float32", [1000], "zeros", "exact")},
                    params=[("buf", "x"), ("buf", "y"), ("i32", 1000), ("f32", 0.25), ("i32", 1234)]),
    "gelu": dict(fn=gelu, sig="*fp32 *fp32 *fp32 i32", const={"BLOCK": 256}, warps=4, grid=[4, 1, 1],
                 bufs={"x": ("float32", [1000], "randn", None), "y": ("float32", [1000], "zeros", "exact"),
                       "z": ("float32", [1000], "zeros", "exact")},
                 params=[("buf", "x"), ("buf", "y"), ("buf", "z"), ("i32", 1000)]),
    "transpose": dict(fn=transpose, sig="*fp32 *fp32 i32 i32", const={"BM": 32, "BN": 32}, warps=4, grid=[2, 2, 1],
                      bufs={"x": ("float32", [60, 40], "randn", None), "y": ("float32", [40, 60], "zeros", "exact")},
                      params=[("buf", "x"), ("buf", "y"), ("i32", 60), ("i32", 40)]),
    "embedding": dict(fn=embedding, sig="*i64 *fp16 *fp16", const={"D": 64}, warps=2, grid=[16, 1, 1],
                      bufs={"idx": ("int64", [16], "randint:0:100", None), "w": ("float16", [100, 64], "randn", None),
                            "out": ("float16", [16, 64], "zeros", "exact")},
                      params=[("buf", "idx"), ("buf", "w"), ("buf", "out")]),
}

ARCHS = {"sm_90a": 90, "sm_80": 80}


def triton_signature(fn, sig, const):
    names = [a for a in fn.arg_names if a not in const]
    types = sig.split()
    assert len(names) == len(types), (fn.__name__, names, types)
    s = {}
    for n, t in zip(names, types):
        if t.startswith("desc:"):
            _, dt, block = t.split(":")
            t = f"tensordesc<{dt}[{block}]>"
        s[n] = t
    s.update({k: "constexpr" for k in const})
    return s


def compile_one(name, spec, arch):
    fn = spec["fn"]
    src = triton.compiler.ASTSource(fn, signature=triton_signature(fn, spec["sig"], spec["const"]),
                                    constexprs=dict(spec["const"]))
    k = triton.compile(src, target=GPUTarget("cuda", ARCHS[arch], 32),
                       options={"num_warps": spec["warps"], "enable_fp_fusion": False,
                                                     "ptx_version": 90 if arch == "sm_90a" else None})
    md = k.metadata
    return k.asm["ptx"], {"entry": md.name, "shared": md.shared, "num_warps": md.num_warps,
                          "global_scratch_size": md.global_scratch_size, "global_scratch_align": md.global_scratch_align,
                          "profile_scratch_size": md.profile_scratch_size,
                          "tensordesc_meta": list(md.tensordesc_meta or [])}


def main(names):
    os.makedirs(OUT, exist_ok=True)
    for name in names or CENSUS:
        spec = CENSUS[name]
        man = {"name": name, "source": "triton", "triton": triton.__version__, "block": [32 * spec["warps"], 1, 1],
               "grid": spec["grid"], "buffers": {b: {"dtype": d, "shape": s, "fill": f, "compare": c}
                                                 for b, (d, s, f, c) in spec["bufs"].items()},
               "params": [list(p) for p in spec["params"]], "note": spec.get("note", ""), "archs": {}}
        for arch in spec.get("archs", ARCHS):
            try:
                ptx, md = compile_one(name, spec, arch)
            except Exception as e:                        # noqa: BLE001 (recorded, not hidden)
                print(f"{name} {arch}: Triton does not compile it: {type(e).__name__}: "
                      f"{str(e).splitlines()[0][:200]}")
                continue
            with open(os.path.join(OUT, f"{name}.{arch}.ptx"), "w") as f:
                f.write(ptx)
            man["archs"][arch] = md
            print(f"{name} {arch}: {len(ptx.splitlines())} lines, shared {md['shared']}, "
                  f"scratch {md['global_scratch_size']}")
        with open(os.path.join(OUT, f"{name}.json"), "w") as f:
            json.dump(man, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
