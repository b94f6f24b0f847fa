// consumers probe: what an sm_90 GPU reads through a bf16 wgmma descriptor, and
// where stmatrix writes (the two consumer forms the recorded set does not cover).
// Build and run on a GPU machine; prints one JSON object per case:
//   nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a consumers_probe.cu -o cprobe
//   ./cprobe > consumers_device.jsonl
// wgmma: as golden wgmma_smem_read, with .bf16 inputs: 128 threads, 58368 bytes of
// dynamic shared memory; the 2-byte slot at every even shared address a holds the
// bf16 bit pattern 0x8400 + a/2; A = identity slice in registers (A[m][k] = 1 if
// m % 16 == k), scale-d 0, so D[m][n] = B[m % 16][n]. N = 16.
// stmatrix: 32 threads, a 4096-byte buffer aligned to 1024 prefilled with 0xEEEE;
// register j of thread t holds (8t + 2j) | (8t + 2j + 1) << 16; the buffer is dumped.
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <vector>

extern __shared__ __align__(1024) unsigned char dsmem[];

template <int TB>
__device__ void wgmma16(float* d, const uint32_t* a, uint64_t desc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 0, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, %12, p, 1, 1, %13;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(TB));
}

__global__ void kwgmma(int start_off, int lbo, int sbo, int bo, int swz, int tb, float* out, uint32_t* info) {
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(dsmem);
  const int bytes = 58368;
  for (int i = threadIdx.x * 2; i < bytes; i += blockDim.x * 2) {
    uint32_t a = base + i;
    *(uint16_t*)(dsmem + i) = (uint16_t)(0x8400 + a / 2);
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const uint32_t region = (base + 1023) & ~1023u;
  const uint32_t start = region + start_off;
  uint64_t desc = (uint64_t)((start & 0x3FFFF) >> 4) | (uint64_t)(lbo >> 4) << 16 | (uint64_t)(sbo >> 4) << 32 |
                  (uint64_t)bo << 49 | (uint64_t)swz << 62;
  const int t = threadIdx.x, w = t / 32, g = (t % 32) / 4, q = t % 4;
  uint32_t a[4];
  for (int i = 0; i < 4; i++) {
    uint32_t v = 0;
    for (int h = 0; h < 2; h++) {
      int e = 2 * i + h;
      int m = 16 * w + g + 8 * ((e >> 1) & 1), k = 2 * q + (e & 1) + 8 * (e >> 2);
      if (m % 16 == k) v |= 0x3F80u << (16 * h);
    }
    a[i] = v;
  }
  float d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  if (tb) wgmma16<1>(d, a, desc); else wgmma16<0>(d, a, desc);
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int r = 0; r < 8; r++) out[t * 8 + r] = d[r];
  if (t == 0) { info[0] = base; info[1] = region; info[2] = (uint32_t)desc; info[3] = (uint32_t)(desc >> 32); }
}

__global__ void kstmatrix(int num, int trans, const uint32_t* offs, uint16_t* out, uint32_t* info) {
  __shared__ __align__(1024) uint16_t buf[2048];
  const int t = threadIdx.x;
  for (int i = t; i < 2048; i += 32) buf[i] = 0xEEEE;
  __syncwarp();
  uint32_t r[4];
  for (int j = 0; j < 4; j++) r[j] = (uint32_t)(8 * t + 2 * j) | (uint32_t)(8 * t + 2 * j + 1) << 16;
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(buf) + offs[t];
  if (num == 1 && !trans) asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r[0]) : "memory");
  if (num == 2 && !trans) asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" :: "r"(addr), "r"(r[0]), "r"(r[1]) : "memory");
  if (num == 4 && !trans) asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  if (num == 1 && trans) asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r[0]) : "memory");
  if (num == 2 && trans) asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" :: "r"(addr), "r"(r[0]), "r"(r[1]) : "memory");
  if (num == 4 && trans) asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  __syncwarp();
  for (int i = t; i < 2048; i += 32) out[i] = buf[i];
  if (t == 0) info[0] = (uint32_t)__cvta_generic_to_shared(buf);
}

static void hex(const void* p, size_t n) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; i++) printf("%02x", b[i]);
}

int main() {
  float* dout; uint32_t* dinfo; uint16_t* dbuf; uint32_t* doffs;
  cudaMalloc(&dout, 128 * 8 * 4); cudaMalloc(&dinfo, 64); cudaMalloc(&dbuf, 4096); cudaMalloc(&doffs, 128);
  cudaFuncSetAttribute(kwgmma, cudaFuncAttributeMaxDynamicSharedMemorySize, 58368);
  // major (0 K, 1 MN), swizzle field (0 none, 1 128B, 2 64B, 3 32B), start offset, LBO, SBO, base offset
  struct W { int tb, swz, start, lbo, sbo, bo; };
  std::vector<W> ws = {
      {0, 0, 0, 128, 256, 0}, {0, 3, 0, 16, 256, 0}, {0, 2, 0, 16, 512, 0}, {0, 1, 0, 16, 1024, 0},
      {1, 0, 0, 256, 128, 0}, {1, 3, 0, 512, 256, 0}, {1, 2, 0, 1024, 512, 0}, {1, 1, 0, 2048, 1024, 0},
      {0, 1, 384, 16, 1024, 0}, {0, 2, 128, 16, 512, 0}, {1, 1, 640, 2048, 1024, 0}, {0, 1, 0, 16, 1024, 3},
      {0, 0, 2048 + 32, 512, 1024, 0}, {1, 3, 256 + 128, 512, 256, 1}};
  for (size_t c = 0; c < ws.size(); c++) {
    W x = ws[c];
    kwgmma<<<1, 128, 58368>>>(x.start, x.lbo, x.sbo, x.bo, x.swz, x.tb, dout, dinfo);
    cudaError_t e = cudaDeviceSynchronize();
    float h[128 * 8]; uint32_t info[4] = {0, 0, 0, 0};
    cudaMemcpy(h, dout, sizeof h, cudaMemcpyDeviceToHost); cudaMemcpy(info, dinfo, 16, cudaMemcpyDeviceToHost);
    printf("{\"family\": \"wgmma_bf16_read\", \"id\": \"wgmma_bf16_read.dev.%04zu\", \"params\": {\"operand\": \"B\", "
           "\"N\": 16, \"dtype\": \"bf16\", \"major\": \"%s\", \"swizzle_field\": %d, \"start_offset\": %d, "
           "\"lbo_bytes\": %d, \"sbo_bytes\": %d, \"base_offset\": %d}, \"error\": %s%s%s, \"dyn_smem_base\": %u, "
           "\"region_addr\": %u, \"desc_hex\": \"0x%08x%08x\", \"d_hex\": \"",
           c, x.tb ? "MN" : "K", x.swz, x.start, x.lbo, x.sbo, x.bo, e ? "\"" : "null", e ? cudaGetErrorName(e) : "",
           e ? "\"" : "", info[0], info[1], info[3], info[2]);
    hex(h, sizeof h);
    printf("\"}\n");
    if (e) return 1;
  }
  struct S { int num, trans, pattern; };
  for (int pattern = 0; pattern < 2; pattern++)
    for (int num : {1, 2, 4})
      for (int trans = 0; trans < 2; trans++) {
        uint32_t offs[32];
        for (int t = 0; t < 32; t++) {
          if (pattern == 0) offs[t] = 16 * t;                       // rows packed
          else {                                                   // 128-byte pitch, 128B-swizzled
            uint32_t a = (t % 8) * 128 + (t / 8) * 16 + 1024;
            offs[t] = a ^ (((a >> 7) & 7) << 4);
          }
        }
        cudaMemcpy(doffs, offs, sizeof offs, cudaMemcpyHostToDevice);
        kstmatrix<<<1, 32>>>(num, trans, doffs, dbuf, dinfo);
        cudaError_t e = cudaDeviceSynchronize();
        uint16_t h[2048]; uint32_t info = 0;
        cudaMemcpy(h, dbuf, sizeof h, cudaMemcpyDeviceToHost); cudaMemcpy(&info, dinfo, 4, cudaMemcpyDeviceToHost);
        printf("{\"family\": \"stmatrix_write\", \"id\": \"stmatrix_write.dev.%d%d%d\", \"params\": {\"num_matrices\": %d, "
               "\"trans\": %s, \"thread_addr_offsets\": [", pattern, num, trans, num, trans ? "true" : "false");
        for (int t = 0; t < 32; t++) printf("%u%s", offs[t], t < 31 ? ", " : "");
        printf("], \"prefill\": 61166, \"regs_rule\": \"register j of thread t = (8t+2j) | (8t+2j+1) << 16\"}, "
               "\"error\": %s%s%s, \"buffer_addr\": %u, \"smem_hex\": \"", e ? "\"" : "null",
               e ? cudaGetErrorName(e) : "", e ? "\"" : "", info);
        hex(h, sizeof h);
        printf("\"}\n");
        if (e) return 1;
      }
  return 0;
}
