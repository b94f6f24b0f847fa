/* sincos_record.cu - MUFU.SIN / MUFU.COS at every fraction q of a period that
 * some f32 operand reaches, and a check over all 2^32 operands that the result
 * is a function of q alone. sin/cos.approx(.ftz).f32 x is
 * MUFU(FMUL.RZ(x, 0x3E22F983)); the unit keeps q = floor(|r| 2^25) mod 2^25.
 * Pass 1 writes, for every x >= 0, the result at q(x) (T[q]) and marks q
 * reached; pass 2 counts, per form and for every x (either sign, .ftz or not),
 * the results that are not T[q(x)] (sin: its sign flipped for negative x).
 * Writes OUTDIR/{sin,cos}_q.bin (2^25 results) and reached_q.bin (2^25 bytes).
 * Build: nvcc -O2 -arch=sm_90a -o sincos_record tools/device/sincos_record.cu
 * Run:   sincos_record OUTDIR */
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

#define NQ (1u << 25)

__device__ __forceinline__ int q_of(uint32_t x, uint32_t *q)
{
  if (((x >> 23) & 0xFF) == 0xFF) return 0;            /* NaN, inf: no q */
  float r = __fmul_rz(__uint_as_float(x), __uint_as_float(0x3E22F983u));
  double a = fabs((double)r);
  *q = a >= 0x1p25 ? 0 : (uint32_t)((uint64_t)floor(a * 0x1p25) & (NQ - 1));
  return 1;
}

#define OP(name, ptx) __device__ __forceinline__ uint32_t name(uint32_t x) \
  { uint32_t y; asm volatile(ptx " %0, %1;" : "=r"(y) : "r"(x)); return y; }
OP(sinf_, "sin.approx.ftz.f32")
OP(sin_, "sin.approx.f32")
OP(cosf_, "cos.approx.ftz.f32")
OP(cos_, "cos.approx.f32")

__global__ void fill(uint32_t *ts, uint32_t *tc, uint8_t *seen, uint32_t half)
{
  uint32_t x = half + blockIdx.x * blockDim.x + threadIdx.x, q;
  if (x >= 0x80000000u || !q_of(x, &q)) return;
  ts[q] = sinf_(x); tc[q] = cosf_(x); seen[q] = 1;
}

__global__ void check(const uint32_t *ts, const uint32_t *tc, unsigned long long *bad, uint64_t base)
{
  uint32_t x = (uint32_t)(base + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x), q;
  if (!q_of(x, &q)) return;
  uint32_t s = ts[q] ^ (x & 0x80000000u), c = tc[q];
  if (sinf_(x) != s) atomicAdd(&bad[0], 1ull);
  if (sin_(x) != s) atomicAdd(&bad[1], 1ull);
  if (cosf_(x) != c) atomicAdd(&bad[2], 1ull);
  if (cos_(x) != c) atomicAdd(&bad[3], 1ull);
}

static int put(const char *dir, const char *name, const void *d, size_t n)
{
  char fn[512]; snprintf(fn, sizeof fn, "%s/%s", dir, name);
  void *h = malloc(n); cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost);
  FILE *f = fopen(fn, "wb"); if (!f) return 1;
  fwrite(h, 1, n, f); fclose(f); free(h); return 0;
}

int main(int argc, char **argv)
{
  if (argc < 2) { fprintf(stderr, "usage: sincos_record OUTDIR\n"); return 2; }
  uint32_t *ts, *tc; uint8_t *seen; unsigned long long *bad, hb[4];
  cudaMalloc(&ts, NQ * 4); cudaMalloc(&tc, NQ * 4); cudaMalloc(&seen, NQ); cudaMalloc(&bad, 32);
  cudaMemset(ts, 0, NQ * 4); cudaMemset(tc, 0, NQ * 4); cudaMemset(seen, 0, NQ); cudaMemset(bad, 0, 32);
  for (uint32_t h = 0; h < 0x80000000u; h += 1u << 30)
    fill<<<(1u << 30) / 256, 256>>>(ts, tc, seen, h);
  for (uint64_t b = 0; b < (1ull << 32); b += 1u << 30)
    check<<<(1u << 30) / 256, 256>>>(ts, tc, bad, b);
  cudaError_t e = cudaDeviceSynchronize();
  if (e) { fprintf(stderr, "%s\n", cudaGetErrorString(e)); return 1; }
  cudaMemcpy(hb, bad, 32, cudaMemcpyDeviceToHost);
  printf("of all 2^32 operands, not T[q(x)]: sin.ftz %llu, sin %llu, cos.ftz %llu, cos %llu\n",
         hb[0], hb[1], hb[2], hb[3]);
  return put(argv[1], "sin_q.bin", ts, NQ * 4) | put(argv[1], "cos_q.bin", tc, NQ * 4) |
         put(argv[1], "reached_q.bin", seen, NQ);
}
