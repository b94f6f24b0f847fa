// What CuTe's host-side make_tma_copy passes to cuTensorMapEncodeTiled for the proof kernel
// tests/data/nvrtc/cute_tma_sw128.cu, found without a GPU: CUTLASS is told to call the driver
// directly (CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL) and this program defines the driver entry
// itself, printing its arguments as JSON (one object per call) instead of encoding.
//
//   nvcc -std=c++17 -arch=sm_90a -I<cutlass>/include -o /tmp/cute_tma_args tools/nvrtc/cute_tma_args.cu
//   /tmp/cute_tma_args > tests/data/nvrtc/cute_tma_sw128.encode.json
//
// (tools/nvrtc/vendor.py --cute-args runs both.) No libcuda is linked: nothing here touches a GPU.
#define CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL 1
#include <cstdio>
#include <cuda.h>
#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>

using namespace cute;

// the kernel's types, as tests/data/nvrtc/cute_tma_sw128.cu spells them
using T = uint16_t;
using GmemLayout = Layout<Shape<_128, _128>, Stride<_128, _1>>;
using SmemLayout = decltype(tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_64, _64>{}));

static const char *sep = "";

extern "C" CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType dtype, cuuint32_t rank,
                                           void *address, const cuuint64_t *dims, const cuuint64_t *strides,
                                           const cuuint32_t *box, const cuuint32_t *element_strides,
                                           CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                           CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
    std::printf("%s{\"dtype\": %d, \"rank\": %u, \"address\": %llu, \"dims\": [", sep, (int)dtype, rank,
                (unsigned long long)address);
    for (cuuint32_t i = 0; i < rank; i++) std::printf("%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
    std::printf("], \"strides\": [");
    for (cuuint32_t i = 0; i + 1 < rank; i++) std::printf("%s%llu", i ? ", " : "", (unsigned long long)strides[i]);
    std::printf("], \"box\": [");
    for (cuuint32_t i = 0; i < rank; i++) std::printf("%s%u", i ? ", " : "", box[i]);
    std::printf("], \"element_strides\": [");
    for (cuuint32_t i = 0; i < rank; i++) std::printf("%s%u", i ? ", " : "", element_strides[i]);
    std::printf("], \"interleave\": %d, \"swizzle\": %d, \"l2\": %d, \"oob_fill\": %d}", (int)interleave,
                (int)swizzle, (int)l2, (int)oob);
    sep = ",\n ";
    std::memset(map, 0, sizeof *map);
    return CUDA_SUCCESS;
}

int main() {
    // any 16-byte-aligned address: CuTe only passes it on
    auto x = make_tensor(make_gmem_ptr(reinterpret_cast<T const *>(0x10000)), GmemLayout{});
    auto y = make_tensor(make_gmem_ptr(reinterpret_cast<T *>(0x20000)), GmemLayout{});
    std::printf("{\"calls\": [");
    auto load = make_tma_copy(SM90_TMA_LOAD{}, x, SmemLayout{});
    auto store = make_tma_copy(SM90_TMA_STORE{}, y, SmemLayout{});
    std::printf("],\n \"param_bytes\": [%zu, %zu], \"param_align\": [%zu, %zu]}\n", sizeof load, sizeof store,
                alignof(decltype(load)), alignof(decltype(store)));
    return 0;
}
