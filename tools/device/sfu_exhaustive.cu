/* sfu_exhaustive.cu - every f32 operand (all 2^32 bit patterns) of the f32
 * special-function forms on the GPU against csrc/core/sem/sfu.c, and
 * rcp.approx.ftz.f64 for every high word (low word a hash of it). Prints, per
 * form, how many results differ and the first few.
 *
 * Build (from the repository root, sfu.c's objects with the shim):
 *   gcc -std=c11 -O2 -c -Icsrc/core csrc/core/sem/sfu.c csrc/core/sem/sfu_tables.c csrc/core/sem/sfu_sin.c \
 *       csrc/core/sem/sfu_tanh.c tests/sem/sfu_shim.c
 *   nvcc -O2 -arch=sm_90a -Xcompiler -fopenmp -o sfu_exhaustive tools/device/sfu_exhaustive.cu \
 *        sfu.o sfu_tables.o sfu_tanh.o sfu_sin.o sfu_shim.o -lm
 *   ./sfu_exhaustive [FORM...]     (default: every form below) */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <omp.h>

extern "C" int sfu_shim_run(const char *op, const char *type, unsigned flags, uint64_t *d,
                            const uint64_t *a, const uint64_t *b, size_t n);

#define OP(name, ptx) \
__global__ void k_##name(uint32_t *o, uint64_t base, uint32_t n) { \
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return; \
  uint32_t x = (uint32_t)(base + i), y; asm volatile(ptx " %0, %1;" : "=r"(y) : "r"(x)); o[i] = y; }
OP(rcpf, "rcp.approx.ftz.f32")
OP(rcp, "rcp.approx.f32")
OP(ex2f, "ex2.approx.ftz.f32")
OP(ex2, "ex2.approx.f32")
OP(rsqf, "rsqrt.approx.ftz.f32")
OP(rsq, "rsqrt.approx.f32")
OP(sqrtf_, "sqrt.approx.ftz.f32")
OP(sqrt_, "sqrt.approx.f32")
OP(lg2f, "lg2.approx.ftz.f32")
OP(lg2, "lg2.approx.f32")
OP(tanh_, "tanh.approx.f32")
OP(sinf_, "sin.approx.ftz.f32")
OP(sin_, "sin.approx.f32")
OP(cosf_, "cos.approx.ftz.f32")
OP(cos_, "cos.approx.f32")

static __host__ __device__ uint32_t lo_of(uint32_t hi) { return hi * 2654435761u ^ (hi >> 13); }

/* The result is stored whole: nvcc turns (uint32_t)y of this asm's 64-bit
 * output into a conversion of the double (F2I.U32.F64.TRUNC). */
__global__ void k_rcp64(uint32_t *o, uint64_t base, uint32_t n) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
  uint32_t hi = (uint32_t)(base + i);
  uint64_t x = ((uint64_t)hi << 32) | lo_of(hi), y;
  asm volatile("rcp.approx.ftz.f64 %0, %1;" : "=l"(y) : "l"(x));
  ((uint64_t *)o)[i] = y; }

typedef void (*kf)(uint32_t *, uint64_t, uint32_t);
static const struct { const char *name, *op, *type; unsigned flags; kf k; } FORMS[] = {
  {"rcp.approx.ftz.f32", "rcp", "f32", 3, k_rcpf}, {"rcp.approx.f32", "rcp", "f32", 2, k_rcp},
  {"ex2.approx.ftz.f32", "ex2", "f32", 3, k_ex2f}, {"ex2.approx.f32", "ex2", "f32", 2, k_ex2},
  {"rsqrt.approx.ftz.f32", "rsqrt", "f32", 3, k_rsqf}, {"rsqrt.approx.f32", "rsqrt", "f32", 2, k_rsq},
  {"sqrt.approx.ftz.f32", "sqrt", "f32", 3, k_sqrtf_}, {"sqrt.approx.f32", "sqrt", "f32", 2, k_sqrt_},
  {"lg2.approx.ftz.f32", "lg2", "f32", 3, k_lg2f}, {"lg2.approx.f32", "lg2", "f32", 2, k_lg2},
  {"tanh.approx.f32", "tanh", "f32", 2, k_tanh_},
  {"sin.approx.ftz.f32", "sin", "f32", 3, k_sinf_}, {"sin.approx.f32", "sin", "f32", 2, k_sin_},
  {"cos.approx.ftz.f32", "cos", "f32", 3, k_cosf_}, {"cos.approx.f32", "cos", "f32", 2, k_cos_},
  {"rcp.approx.ftz.f64", "rcp", "f64", 3, k_rcp64},
};

#define CHUNK (1u << 28)
#define SUB (1u << 16)

int main(int argc, char **argv) {
  uint32_t *dev, *gpu;
  cudaMalloc(&dev, (size_t)CHUNK * 8);
  gpu = (uint32_t *)malloc((size_t)CHUNK * 8);
  for (size_t f = 0; f < sizeof FORMS / sizeof FORMS[0]; f++) {
    int want = argc < 2;
    for (int a = 1; a < argc; a++) want |= !strcmp(argv[a], FORMS[f].name);
    if (!want) continue;
    int f64 = !strcmp(FORMS[f].type, "f64");
    unsigned long long differ = 0, shown = 0;
    unsigned long long by_exp[256] = {0};
    for (uint64_t base = 0; base < (1ull << 32); base += CHUNK) {
      FORMS[f].k<<<CHUNK / 256, 256>>>(dev, base, CHUNK);
      if (cudaDeviceSynchronize() != cudaSuccess) { fprintf(stderr, "kernel failed\n"); return 1; }
      cudaMemcpy(gpu, dev, (size_t)CHUNK * (f64 ? 8 : 4), cudaMemcpyDeviceToHost);
#pragma omp parallel
      {
        uint64_t *a = (uint64_t *)malloc(SUB * 8), *d = (uint64_t *)malloc(SUB * 8);
        unsigned long long mine[256] = {0};
#pragma omp for schedule(dynamic) reduction(+ : differ)
        for (uint32_t s = 0; s < CHUNK / SUB; s++) {
          for (uint32_t i = 0; i < SUB; i++) {
            uint32_t x = (uint32_t)(base + (uint64_t)s * SUB + i);
            a[i] = f64 ? ((uint64_t)x << 32) | lo_of(x) : x;
          }
          sfu_shim_run(FORMS[f].op, FORMS[f].type, FORMS[f].flags, d, a, a, SUB);
          for (uint32_t i = 0; i < SUB; i++) {
            size_t g = (size_t)s * SUB + i;
            uint64_t want = f64 ? ((const uint64_t *)gpu)[g] : gpu[g];
            if (d[i] != want) {
              differ++;
              mine[(a[i] >> (f64 ? 55 : 23)) & 0xFF]++;
              if (shown < 8)
#pragma omp critical
              {
                if (shown < 8) {
                  shown++;
                  printf("  %s x=%016llx gpu=%016llx model=%016llx\n", FORMS[f].name,
                         (unsigned long long)a[i], (unsigned long long)want, (unsigned long long)d[i]);
                }
              }
            }
          }
        }
#pragma omp critical
        for (int e = 0; e < 256; e++) by_exp[e] += mine[e];
        free(a); free(d);
      }
    }
    printf("%s: %llu of 4294967296 differ\n", FORMS[f].name, differ);
    if (differ) {
      printf("  by the operand's biased exponent (f64: its top 8 bits past the sign):");
      for (int e = 0; e < 256; e++) if (by_exp[e]) printf(" %d:%llu", e, by_exp[e]);
      printf("\n");
    }
    fflush(stdout);
  }
  return 0;
}
