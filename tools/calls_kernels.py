"""CUDA C++ kernels with __noinline__ functions, recursion, function pointers and the device
runtime (printf, assert, malloc / free), compiled to PTX by NVRTC and vendored under
tests/data/ptx/calls/ as NVRTC wrote them (tests/ptx/test_ptx_calls.py and
tests/ptx/test_device_runtime.py run them; the tests need no NVRTC).

    python tools/calls_kernels.py [NAME ...]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "census"))
from nvrtc_kernels import compile_ptx  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "ptx", "calls")

FUNCS = r"""
__device__ __noinline__ int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }

// a local array indexed at run time lives in .local memory: one per activation
__device__ __noinline__ int rec(int n, int depth) {
    int buf[4];
    for (int i = 0; i < 4; i++) buf[i] = n * (i + 1) + depth;
    int v = buf[n & 3];
    if (depth <= 0) return v;
    return v + rec(n / 2, depth - 1);
}

__device__ __noinline__ float scale(float x, int k) { return x * (float)k + 0.5f; }

typedef int (*binop)(int, int);
__device__ __noinline__ int add(int a, int b) { return a + b; }
__device__ __noinline__ int mul(int a, int b) { return a * b; }
__device__ __noinline__ int sub(int a, int b) { return a - b; }
__device__ __noinline__ binop pick(int i) { return i == 0 ? add : i == 1 ? mul : sub; }

__device__ int hits;
__device__ __noinline__ void touch() { atomicAdd(&hits, 1); }

extern "C" __global__ void calls(const int *x, int *out, float *fout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = x[i];
    out[4 * i + 0] = fact(v & 7);
    out[4 * i + 1] = rec(v, v & 3);
    binop f = pick(i % 3);
    out[4 * i + 2] = f(v, i);
    if (i & 1) out[4 * i + 3] = fact(i & 5); else out[4 * i + 3] = -1;
    fout[i] = scale((float)v, i);
    if (i % 4 == 0) touch();
}
"""

PRINTF = r"""
__device__ __noinline__ int report(int t, double d) { return printf("from a function: t=%d d=%.2f\n", t, d); }

extern "C" __global__ void printf_all(int *ret, const char *word, long long big) {
    int t = threadIdx.x;
    float f = 1.5f + t;
    double d = -2.25 * t;
    ret[5 * t + 0] = printf("t=%d i=%i u=%u x=%x X=%X o=%o c=%c s=%s\n", t - 1, t * 7, (unsigned)(t - 2),
                            255 + t, 0xABCu * (t + 1), 8 * t + 1, 'A' + t, word);
    ret[5 * t + 1] = printf("f=%f e=%e g=%g E=%E G=%G ld=%ld lld=%lld lu=%lu %%\n", f, d, f * 1e-5, d * 1e10,
                            f * 1e20, (long)big * t, big - t, (unsigned long)big + t);
    ret[5 * t + 2] = printf("[%5d|%-5d|%05d|%+d|%.3f|%10.4e|%-8s|%.2s|%#x|%#o|%8.3g|%c]\n", t, -t, t * 3, t,
                            f / 3, d, word, word, t + 10, t + 8, f * 1000, 'a');
    ret[5 * t + 3] = printf("no arguments\n");
    ret[5 * t + 4] = report(t, d);
}
"""

ASSERT = r"""
// NVRTC's built-in header defines assert (NVRTC has no <cassert>)
extern "C" __global__ void check_positive(const int *x, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        assert(x[i] > 0);
        out[i] = 2 * x[i];
    }
}
"""

MALLOC = r"""
extern "C" __global__ void heap(const int *len, long long *sums, unsigned long long *ptrs, int *nulls,
                                unsigned long long huge) {
    int t = threadIdx.x;
    int n = len[t];
    int *a = (int *)malloc(n * sizeof(int));
    ptrs[2 * t] = (unsigned long long)a;
    long long s = 0;
    if (a) {
        for (int k = 0; k < n; k++) a[k] = t * 1000 + k;
        for (int k = 0; k < n; k++) s += a[k];
        free(a);
    }
    sums[t] = s;
    int *b = (int *)malloc(n * sizeof(int));     // the same thread again: the freed piece
    ptrs[2 * t + 1] = (unsigned long long)b;
    free(b);
    nulls[t] = malloc(huge) == 0;                // more than the heap: NULL
}
"""

KERNELS = {"calls_funcs": FUNCS, "calls_printf": PRINTF, "calls_assert": ASSERT, "calls_malloc": MALLOC}


def main(names):
    os.makedirs(OUT, exist_ok=True)
    for name in names or KERNELS:
        for arch in ("sm_90a", "sm_80"):
            ptx = compile_ptx(KERNELS[name], name, arch)
            with open(os.path.join(OUT, f"{name}.{arch}.ptx"), "w") as f:
                f.write(ptx)
            print(f"{name} {arch}: {len(ptx.splitlines())} lines")


if __name__ == "__main__":
    main(sys.argv[1:])
