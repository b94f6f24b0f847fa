/* sfu_probe.cu - dumps the H200 MUFU forms over whole ranges of operand bits, the data
 * tests/sem/sfu_fit.py fits csrc/core/sem/sfu.c's tables to. Build: nvcc -O2 -arch=sm_90a;
 * run: sfu_probe OUTDIR NAME BASE COUNT ... (NAME rcp64_LO: rcp.approx.ftz.f64 with low word LO). */
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#define OP(name, ptx) \
__global__ void k_##name(uint32_t *o, uint32_t base, uint32_t n) { \
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; \
  uint32_t x = base + i, y; asm volatile(ptx " %0, %1;" : "=r"(y) : "r"(x)); o[i] = y; }
OP(ex2f, "ex2.approx.ftz.f32")
OP(ex2, "ex2.approx.f32")
OP(rcpf, "rcp.approx.ftz.f32")
OP(rcp, "rcp.approx.f32")
OP(rsqf, "rsqrt.approx.ftz.f32")
OP(rsq, "rsqrt.approx.f32")
OP(sqrtf_, "sqrt.approx.ftz.f32")
OP(sqrt_, "sqrt.approx.f32")
OP(lg2f, "lg2.approx.ftz.f32")
OP(lg2, "lg2.approx.f32")
OP(sinf_, "sin.approx.ftz.f32")
OP(cosf_, "cos.approx.ftz.f32")
OP(tanh_, "tanh.approx.f32")
OP(sin_, "sin.approx.f32")
OP(cos_, "cos.approx.f32")
__global__ void k_rcp64(uint64_t *o, uint32_t base, uint32_t n, uint32_t lo) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  uint64_t x = ((uint64_t)(base + i) << 32) | lo, y;
  asm volatile("rcp.approx.ftz.f64 %0, %1;" : "=l"(y) : "l"(x)); o[i] = y; }
typedef void (*kf)(uint32_t*, uint32_t, uint32_t);
struct { const char *n; kf f; } T[] = {
 {"ex2f",k_ex2f},{"ex2_",k_ex2},{"rcpf",k_rcpf},{"rcp_",k_rcp},{"rsqf",k_rsqf},{"rsq",k_rsq},
 {"sqrtf",k_sqrtf_},{"sqrt_",k_sqrt_},{"lg2f",k_lg2f},{"lg2",k_lg2},{"sinf",k_sinf_},{"cosf",k_cosf_},{"tanh",k_tanh_},{"sin",k_sin_},{"cos",k_cos_}};
int main(int argc, char **argv) {
  // args: outdir then triples name base count  (name rcp64 -> base count lo)
  const char *dir = argv[1];
  uint32_t *d; cudaMalloc(&d, (size_t)1 << 28);
  void *h = malloc((size_t)1 << 28);
  for (int a = 2; a + 2 < argc; a += 3) {
    const char *nm = argv[a]; uint32_t base = strtoul(argv[a+1],0,0), n = strtoul(argv[a+2],0,0);
    if (n > (1u << 26)) { fprintf(stderr, "count %u over 2^26\n", n); return 1; }
    char fn[512]; size_t bytes;
    if (!strncmp(nm, "rcp64", 5)) {
      uint32_t lo = strtoul(nm + 6, 0, 0);
      k_rcp64<<<(n+255)/256,256>>>((uint64_t*)d, base, n, lo); bytes = (size_t)n * 8;
    } else {
      int j = -1; for (int t = 0; t < (int)(sizeof T / sizeof T[0]); t++) if (!strcmp(T[t].n, nm)) j = t;
      if (j < 0) { fprintf(stderr, "bad %s\n", nm); return 1; }
      T[j].f<<<(n+255)/256,256>>>(d, base, n); bytes = (size_t)n * 4;
    }
    cudaError_t e = cudaDeviceSynchronize(); if (e) { fprintf(stderr, "%s\n", cudaGetErrorString(e)); return 1; }
    cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
    snprintf(fn, sizeof fn, "%s/%s_%08x_%u.bin", dir, nm, base, n);
    FILE *f = fopen(fn, "wb"); fwrite(h, 1, bytes, f); fclose(f);
  }
  return 0;
}
