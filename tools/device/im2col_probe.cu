// im2col probe: records what an sm_90 GPU does for .im2col loads and
// .im2col_no_offs stores/reductions, one case per process (an IllegalInstruction
// poisons the context). Build and run on a GPU machine:
//   nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a im2col_probe.cu -o probe -lcuda
//   python3 im2col_probe_cases.py ./probe SEED [PLAN] > results.jsonl   (PLAN: first | pixel)
//   python3 im2col_to_golden.py cases.jsonl.gz results.jsonl   (then: python -m ptxasync.golden)
// stdin: mode dtype rank gdim[5] gstride[4] es[5] lower[3] upper[3] cpp ppc il sw oob c[5] o[3] seed
// mode 0: .im2col load, 1: .im2col_no_offs store, 2: .im2col_no_offs reduce.add
// stdout: ADDR, ENC (encode failed) or MAP, ERR (kernel error) or DONE (load: phase completed at
// expect_tx), TX (load not completed: the bytes the TMA credited), SADDR, WIN, AFTER, SMEM
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
extern __shared__ __align__(1024) unsigned char smem[];
__device__ __forceinline__ void store(const CUtensorMap* tm, int rank, int red, const int* c, uint32_t s) {
#define ST(N, ...) asm volatile("cp.async.bulk.tensor." #N "d.global.shared::cta.im2col_no_offs.bulk_group [%0, {" __VA_ARGS__ "}], [%1];" :: "l"(tm), "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory")
#define RD(N, ...) asm volatile("cp.reduce.async.bulk.tensor." #N "d.global.shared::cta.add.im2col_no_offs.bulk_group [%0, {" __VA_ARGS__ "}], [%1];" :: "l"(tm), "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory")
  if (!red) { if (rank==3) ST(3,"%2,%3,%4"); else if (rank==4) ST(4,"%2,%3,%4,%5"); else ST(5,"%2,%3,%4,%5,%6"); }
  else { if (rank==3) RD(3,"%2,%3,%4"); else if (rank==4) RD(4,"%2,%3,%4,%5"); else RD(5,"%2,%3,%4,%5,%6"); }
}
__global__ void kstore(const __grid_constant__ CUtensorMap tm, const unsigned char* src, int n, int rank, int red, int4 c03, int c4, unsigned* status) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) smem[i] = src[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    int c[5] = {c03.x, c03.y, c03.z, c03.w, c4};
    status[1] = (uint32_t)__cvta_generic_to_shared(smem);
    store(&tm, rank, red, c, (uint32_t)__cvta_generic_to_shared(smem));
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}
__global__ void kload(const __grid_constant__ CUtensorMap tm, unsigned char* out, int n, int rank, int4 c03, int c4, short o0, short o1, short o2, unsigned tx, unsigned* status) {
  __shared__ __align__(8) uint64_t bar;
  for (int i = threadIdx.x; i < n; i += blockDim.x) smem[i] = 0xA5;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    status[1] = s;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(tx) : "memory");
    int c[5] = {c03.x, c03.y, c03.z, c03.w, c4};
#define LD(N, CO, OF) asm volatile("cp.async.bulk.tensor." #N "d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {" CO "}], [%2], {" OF "};" :: "r"(s), "l"(&tm), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "h"(o0), "h"(o1), "h"(o2) : "memory")
    if (rank == 3) LD(3, "%3,%4,%5", "%8"); else if (rank == 4) LD(4, "%3,%4,%5,%6", "%8,%9"); else LD(5, "%3,%4,%5,%6,%7", "%8,%9,%10");
    unsigned ok = 0;
    for (int it = 0; it < 200000 && !ok; it++)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(b) : "memory");
    *status = ok;
    if (!ok) {
      // Not completed at expect_tx: raise the count by 4*tx and complete it one
      // byte at a time; the TMA credited T = 5*tx - k bytes (k = steps taken).
      asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(4 * tx) : "memory");
      unsigned k = 0, done = 0;
      while (!done && k <= 5 * tx) {
        asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(1u) : "memory");
        k++;
        asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(b) : "memory");
      }
      status[2] = done ? 5 * tx - k : 0xffffffffu;
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = smem[i];
}
static uint64_t sm64(uint64_t& s) { s += 0x9E3779B97F4A7C15ull; uint64_t z = s; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; return z ^ (z >> 31); }
static void hex(const unsigned char* p, size_t n) { for (size_t i = 0; i < n; i++) printf("%02x", p[i]); }
static const int ES[] = {1,2,4,4,8,8,2,4,8,2,4,4,4};
int main() {
  int mode, dtype, rank, cpp, ppc, il, sw, oob; long long gdim[5], gs[4]; unsigned es[5]; int lo[3], up[3], c[5], o[3]; unsigned long long seed;
  if (scanf("%d %d %d", &mode, &dtype, &rank) != 3) return 2;
  for (int i = 0; i < 5; i++) scanf("%lld", &gdim[i]);
  for (int i = 0; i < 4; i++) scanf("%lld", &gs[i]);
  for (int i = 0; i < 5; i++) scanf("%u", &es[i]);
  for (int i = 0; i < 3; i++) scanf("%d", &lo[i]);
  for (int i = 0; i < 3; i++) scanf("%d", &up[i]);
  scanf("%d %d %d %d %d", &cpp, &ppc, &il, &sw, &oob);
  for (int i = 0; i < 5; i++) scanf("%d", &c[i]);
  for (int i = 0; i < 3; i++) scanf("%d", &o[i]);
  scanf("%llu", &seed);
  size_t gbytes = (size_t)gdim[0] * ES[dtype] * (il ? 16 : 1);
  if (il && (size_t)gdim[0] * (il == 1 ? 16 : 32) > gbytes) gbytes = (size_t)gdim[0] * (il == 1 ? 16 : 32);  // dim 0 counts slices
  for (int i = 1; i < rank; i++) gbytes += (size_t)(gdim[i] - 1) * gs[i - 1];
  gbytes = (gbytes + 4095) / 4096 * 4096 + 4096;
  size_t wlen = gbytes + 256;
  std::vector<unsigned char> win(wlen), after(wlen);
  uint64_t s = seed; for (size_t i = 0; i < wlen; i += 8) { uint64_t v = sm64(s); memcpy(&win[i], &v, wlen - i < 8 ? wlen - i : 8); }
  unsigned char* dwin; cudaMalloc(&dwin, wlen + 1024);
  unsigned char* base = dwin + 128; // global address: 128-aligned cudaMalloc + 128
  cudaMemcpy(dwin, win.data(), wlen, cudaMemcpyHostToDevice);
  CUtensorMap tm; cuuint64_t d[5], st[4]; cuuint32_t e[5];
  for (int i = 0; i < rank; i++) { d[i] = gdim[i]; e[i] = es[i]; }
  for (int i = 0; i < rank - 1; i++) st[i] = gs[i];
  CUresult r = cuTensorMapEncodeIm2col(&tm, (CUtensorMapDataType)dtype, rank, base, d, st, lo, up, cpp, ppc, e,
      (CUtensorMapInterleave)il, (CUtensorMapSwizzle)sw, CU_TENSOR_MAP_L2_PROMOTION_NONE, (CUtensorMapFloatOOBfill)oob);
  printf("ADDR %p\n", (void*)base);
  if (r != CUDA_SUCCESS) { printf("ENC %d\n", (int)r); return 0; }
  printf("MAP "); hex((unsigned char*)&tm, 128); printf("\n");
  int n = 200 * 1024;
  cudaFuncSetAttribute(kstore, cudaFuncAttributeMaxDynamicSharedMemorySize, n);
  cudaFuncSetAttribute(kload, cudaFuncAttributeMaxDynamicSharedMemorySize, n);
  int4 c03 = make_int4(c[0], c[1], c[2], c[3]);
  int region = ppc * cpp * ES[dtype] * 2 + 4096; if (region > n) region = n;
  unsigned char* dbuf; cudaMalloc(&dbuf, n); unsigned* dst; cudaMalloc(&dst, 16); cudaMemset(dst, 0, 16);
  std::vector<unsigned char> sbuf(region);
  if (mode == 0) {
    unsigned tx = ppc * cpp * ES[dtype];
    kload<<<1, 128, n>>>(tm, dbuf, region, rank, c03, c[4], (short)o[0], (short)o[1], (short)o[2], tx, dst);
  } else {
    for (int i = 0; i < region; i += 8) { uint64_t v = sm64(s); memcpy(&sbuf[i], &v, region - i < 8 ? region - i : 8); }
    cudaMemcpy(dbuf, sbuf.data(), region, cudaMemcpyHostToDevice);
    kstore<<<1, 128, n>>>(tm, dbuf, region, rank, mode == 2, c03, c[4], dst);
  }
  cudaError_t ce = cudaDeviceSynchronize();
  if (ce != cudaSuccess) { printf("ERR %s\n", cudaGetErrorName(ce)); return 0; }
  if (mode == 0) {
    unsigned ok[3]; cudaMemcpy(ok, dst, 12, cudaMemcpyDeviceToHost);
    cudaMemcpy(sbuf.data(), dbuf, region, cudaMemcpyDeviceToHost);
    if (!ok[0]) printf("TX %u\n", ok[2]);
    printf("DONE %u\nSADDR %u\nWIN ", ok[0], ok[1]); hex(win.data(), wlen); printf("\nSMEM "); hex(sbuf.data(), region); printf("\n");
  } else {
    unsigned ok[2]; cudaMemcpy(ok, dst, 8, cudaMemcpyDeviceToHost);
    cudaMemcpy(after.data(), dwin, wlen, cudaMemcpyDeviceToHost);
    printf("DONE 1\nSADDR %u\nWIN ", ok[1]); hex(win.data(), wlen); printf("\nAFTER "); hex(after.data(), wlen); printf("\nSMEM "); hex(sbuf.data(), region); printf("\n");
  }
  return 0;
}
