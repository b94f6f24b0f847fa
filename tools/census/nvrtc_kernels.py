"""The census's CUDA C++ kernels, compiled to PTX by NVRTC (the pip wheels nvidia-cuda-nvrtc 13.0,
the H200's driver's CUDA, and nvidia-cuda-cccl for cuda::ptx), vendored as written under
tests/data/census/ with their manifests (the format tools/census/triton_kernels.py writes).

    python tools/census/nvrtc_kernels.py [NAME ...]
"""
import json
import os
import sys

from cuda.bindings import nvrtc

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "tests", "data", "census")

BLOCK_REDUCE = r"""
__device__ __forceinline__ int warp_sum(int v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_sumf(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
extern "C" __global__ void block_reduce(const int *x, const float *xf, int *out, float *outf, int n) {
    __shared__ int part[32];
    __shared__ float partf[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    float f = i < n ? xf[i] : 0.f;
    v = warp_sum(v);
    f = warp_sumf(f);
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0) { part[w] = v; partf[w] = f; }
    __syncthreads();
    if (w == 0) {
        v = lane < blockDim.x / 32 ? part[lane] : 0;
        f = lane < blockDim.x / 32 ? partf[lane] : 0.f;
        v = warp_sum(v);
        f = warp_sumf(f);
        if (lane == 0) { out[blockIdx.x] = v; outf[blockIdx.x] = f; }
    }
}
"""

TMA_COPY = r"""
#include <cuda/ptx>
#include <cuda/std/cstdint>
namespace ptx = cuda::ptx;
struct alignas(64) TensorMap { unsigned long long opaque[16]; };

// each CTA loads a 32x32 f32 tile through the tensor map, waits on an mbarrier,
// and writes the tile, doubled, to out (row-major, 64 columns)
extern "C" __global__ void tma_copy(const __grid_constant__ TensorMap tmap, float *out, int ncols) {
    __shared__ alignas(128) float tile[32 * 32];
    __shared__ alignas(8) unsigned long long bar;
    int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
    if (threadIdx.x == 0) {
        ptx::mbarrier_init(&bar, 1);
        ptx::fence_proxy_async(ptx::space_shared);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int32_t coords[2] = {c0, r0};
        ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, tile, &tmap, coords, &bar);
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, sizeof(tile));
    }
    while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {}
    for (int i = threadIdx.x; i < 32 * 32; i += blockDim.x)
        out[(r0 + i / 32) * ncols + c0 + i % 32] = 2.0f * tile[i];
}
"""

FUNCS_GLOBALS = r"""
__constant__ float coef[4] = {0.5f, -1.25f, 2.0f, 3.5f};
__device__ int counter_base = 1000;
__device__ unsigned int table[8] = {1, 1, 2, 3, 5, 8, 13, 21};

__device__ __noinline__ float poly(float x, int k) {
    float r = 0.f;
    for (int i = 0; i < 4; i++) r = __fmaf_rn(r, x, coef[(i + k) & 3]);
    return r;
}
__device__ __noinline__ unsigned int mix(unsigned int a, unsigned int b) {
    return (a * 2654435761u) ^ (b + table[a & 7]);
}
extern "C" __global__ void funcs_globals(const float *x, float *y, unsigned int *h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = poly(x[i], i);
        h[i] = mix((unsigned int)i, (unsigned int)counter_base);
    }
}
"""

LOCAL_ARRAY = r"""
// a per-thread array indexed at run time lives in .local memory (the thread's stack)
extern "C" __global__ void local_array(const int *x, int *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    volatile int buf[16];
    for (int k = 0; k < 16; k++) buf[k] = x[(i * 16 + k) % n] + k;
    int acc = 0;
    for (int k = 0; k < 16; k++) acc += buf[(k * 7 + i) & 15] * (k + 1);
    y[i] = acc;
}
"""

DYN_SMEM = r"""
// dynamic shared memory: a block-wide reversal through extern __shared__, sized at launch
extern "C" __global__ void dyn_smem_reverse(const unsigned short *x, unsigned short *y, unsigned int *size_out) {
    extern __shared__ unsigned short s[];
    unsigned int dyn;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    s[t] = x[base + t];
    __syncthreads();
    y[base + t] = s[blockDim.x - 1 - t];
    if (t == 0) size_out[blockIdx.x] = dyn;
}
"""

CENSUS = {
    "nvrtc_block_reduce": dict(src=BLOCK_REDUCE, entry="block_reduce", grid=[4, 1, 1], block=[256, 1, 1],
                               bufs={"x": ("int32", [1000], "randint:-1000:1000", None),
                                     "xf": ("float32", [1000], "randn", None),
                                     "out": ("int32", [4], "zeros", "exact"),
                                     "outf": ("float32", [4], "zeros", "exact")},
                               params=[("buf", "x"), ("buf", "xf"), ("buf", "out"), ("buf", "outf"), ("i32", 1000)]),
    "nvrtc_tma_copy": dict(src=TMA_COPY, entry="tma_copy", grid=[2, 2, 1], block=[128, 1, 1], archs=["sm_90a"],
                           bufs={"x": ("float32", [64, 64], "randn", None), "out": ("float32", [64, 64], "zeros", "exact")},
                           params=[("tmap", "x", [32, 32], "NONE"), ("buf", "out"), ("i32", 64)]),
    "nvrtc_funcs_globals": dict(src=FUNCS_GLOBALS, entry="funcs_globals", grid=[2, 1, 1], block=[128, 1, 1],
                                bufs={"x": ("float32", [200], "randn", None), "y": ("float32", [200], "zeros", "exact"),
                                      "h": ("uint32", [200], "zeros", "exact")},
                                params=[("buf", "x"), ("buf", "y"), ("buf", "h"), ("i32", 200)]),
    "nvrtc_local_array": dict(src=LOCAL_ARRAY, entry="local_array", grid=[2, 1, 1], block=[64, 1, 1],
                              bufs={"x": ("int32", [300], "randint:-100:100", None),
                                    "y": ("int32", [128], "zeros", "exact")},
                              params=[("buf", "x"), ("buf", "y"), ("i32", 300)]),
    "nvrtc_dyn_smem": dict(src=DYN_SMEM, entry="dyn_smem_reverse", grid=[3, 1, 1], block=[128, 1, 1],
                           dynamic_smem=256,
                           bufs={"x": ("uint16", [384], "randint:0:65535", None),
                                 "y": ("uint16", [384], "zeros", "exact"),
                                 "size": ("uint32", [3], "zeros", "exact")},
                           params=[("buf", "x"), ("buf", "y"), ("buf", "size")]),
}

ARCHS = {"sm_90a": b"--gpu-architecture=compute_90a", "sm_80": b"--gpu-architecture=compute_80"}


def include_dirs():
    import nvidia
    dirs = []
    for base in nvidia.__path__:
        for sub in ("cu13/include/cccl", "cu13/include", "cuda_cccl/include"):
            if os.path.isdir(os.path.join(base, sub)):
                dirs.append(os.path.join(base, sub))
    return dirs


def check(res):
    err = res[0]
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"nvrtc: {err}")
    return res[1:] if len(res) > 2 else (res[1] if len(res) == 2 else None)


def compile_ptx(src, name, arch):
    prog = check(nvrtc.nvrtcCreateProgram(src.encode(), f"{name}.cu".encode(), 0, [], []))
    opts = [ARCHS[arch], b"-std=c++17", b"-default-device", b"-lineinfo"] + \
           [b"-I" + d.encode() for d in include_dirs()]
    res = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if res[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        size = check(nvrtc.nvrtcGetProgramLogSize(prog))
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(log.decode(errors="replace")[:2000])
    size = check(nvrtc.nvrtcGetPTXSize(prog))
    buf = b" " * size
    check(nvrtc.nvrtcGetPTX(prog, buf))
    return buf.rstrip(b"\0").decode()


def main(names):
    ver = check(nvrtc.nvrtcVersion())
    for name in names or CENSUS:
        spec = CENSUS[name]
        man = {"name": name, "source": "nvrtc", "nvrtc": "%d.%d" % tuple(ver), "block": spec["block"],
               "grid": spec["grid"], "buffers": {b: {"dtype": d, "shape": s, "fill": f, "compare": c}
                                                 for b, (d, s, f, c) in spec["bufs"].items()},
               "params": [list(p) for p in spec["params"]], "note": spec.get("note", ""), "archs": {}}
        for arch in spec.get("archs", ARCHS):
            ptx = compile_ptx(spec["src"], name, arch)
            with open(os.path.join(OUT, f"{name}.{arch}.ptx"), "w") as f:
                f.write(ptx)
            man["archs"][arch] = {"entry": spec["entry"], "shared": spec.get("dynamic_smem", 0)}
            print(f"{name} {arch}: {len(ptx.splitlines())} lines")
        with open(os.path.join(OUT, f"{name}.json"), "w") as f:
            json.dump(man, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
