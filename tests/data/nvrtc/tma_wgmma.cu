// D = A * B^T on one Hopper warpgroup: TMA loads a 64x64 bf16 tile of A and of B (128-byte
// swizzle) into shared memory, an mbarrier counts their bytes (expect_tx) and the threads wait
// on its phase parity; then four wgmma.mma_async m64n64k16 (K = 64) read both tiles through
// shared-memory descriptors and the f32 accumulators go to global memory.
// Grid (N / 64, M / 64), 128 threads. A is M x 64, B is N x 64 (both row-major: K contiguous).
#include <cuda/ptx>
#include <cuda/std/cstdint>

namespace ptx = cuda::ptx;
using cuda::std::uint16_t;
using cuda::std::uint32_t;
using cuda::std::uint64_t;

// NVRTC has no <cuda.h>: its CUtensorMap is 128 opaque bytes aligned to 64
// (<cuda/barrier> forward-declares the struct under this name)
struct alignas(64) CUtensorMap_st { unsigned long long opaque[16]; };
typedef struct CUtensorMap_st CUtensorMap;

constexpr int BM = 64, BN = 64, BK = 64;

// wgmma's shared-memory matrix descriptor of a K-major tile in the 128B swizzle: start address
// >> 4 (bits 0-13), leading byte offset 1 (unused for a swizzled K-major tile), stride byte
// offset 1024 >> 4 (eight 128-byte rows make one swizzle atom), layout type 1 = 128B (bits 62-63)
__device__ __forceinline__ uint64_t smem_desc(const void *p) {
    uint64_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));
    return ((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

// one m64n64k16 step: d (32 f32 per thread) = a * b^T + (accumulate ? d : 0)
__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], uint64_t da, uint64_t db, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "r"(accumulate));
}

extern "C" __global__ void __launch_bounds__(128)
tma_wgmma(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          float *d, int ldd) {
    __shared__ alignas(1024) uint16_t sa[BM * BK];     // 1024-aligned: the swizzle atom starts at 0
    __shared__ alignas(1024) uint16_t sb[BN * BK];
    __shared__ alignas(8) uint64_t bar;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    if (threadIdx.x == 0) {
        ptx::mbarrier_init(&bar, 1);
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);   // the init, visible to the async proxy
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        // coordinates in the tensor map's order: innermost (k) first
        int32_t ca[2] = {0, m0}, cb[2] = {0, n0};
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar,
                                       sizeof(sa) + sizeof(sb));
        ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, sa, &tmap_a, ca, &bar);
        ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, sb, &tmap_b, cb, &bar);
    }
    while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {}  // phase 0 completes when both tiles landed

    float acc[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) acc[i] = 0.f;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int k = 0; k < BK / 16; ++k)          // a k-step of 16 bf16 is 32 bytes along the swizzled row
        wgmma_m64n64k16(acc, smem_desc(sa + 16 * k), smem_desc(sb + 16 * k), k > 0);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");

    // the accumulator fragment of m64nNk16: warp w holds rows 16w..16w+15; lane l holds rows
    // l/4 and l/4 + 8 of them, columns 8j + 2(l%4) + {0, 1}
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
        int row = m0 + 16 * w + l / 4 + 8 * ((i >> 1) & 1);
        int col = n0 + 8 * (i >> 2) + 2 * (l % 4) + (i & 1);
        d[row * ldd + col] = acc[i];
    }
}
