// A CuTe tile copy through TMA with a 128-byte-swizzled shared-memory layout: each CTA loads a
// 64x64 tile of a 128x128 u16 matrix with SM90_TMA_LOAD into GMMA's K-major SW128 layout
// (Swizzle<3,4,3> over 8x64 atoms), adds to every element its coordinates in the tile through
// CuTe's (swizzled) view of shared memory, and stores the tile with SM90_TMA_STORE.
// Grid (2, 2), 128 threads. out[r][c] = x[r][c] + 64 * (r % 64) + (c % 64) (mod 2^16) when CuTe's
// swizzle and the TMA's agree.
//
// The host side of such a kernel calls make_tma_copy on a device pointer, which encodes the
// tensor map through cuTensorMapEncodeTiled; under NVRTC the same call is compiled for the
// device and gives the TiledCopy's type (the descriptor is left zero): the map itself is
// encoded by whoever launches the kernel and is the parameter's first 128 bytes.
#include <cute/tensor.hpp>
#include <cute/atom/copy_traits_sm90_tma.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cutlass/arch/barrier.h>

using namespace cute;

using T = uint16_t;
using GmemLayout = Layout<Shape<_128, _128>, Stride<_128, _1>>;              // row-major, static
using SmemLayout = decltype(tile_to_shape(GMMA::Layout_K_SW128_Atom<T>{}, Shape<_64, _64>{}));

using TmaLoad = decltype(make_tma_copy(SM90_TMA_LOAD{}, make_tensor(make_gmem_ptr((T const *)nullptr), GmemLayout{}),
                                       SmemLayout{}));
using TmaStore = decltype(make_tma_copy(SM90_TMA_STORE{}, make_tensor(make_gmem_ptr((T *)nullptr), GmemLayout{}),
                                        SmemLayout{}));

extern "C" __global__ void __launch_bounds__(128)
tma_copy_sw128(CUTE_GRID_CONSTANT TmaLoad const tma_load, CUTE_GRID_CONSTANT TmaStore const tma_store) {
    using SLayout = SmemLayout;
    __shared__ alignas(1024) T smem[cosize_v<SLayout>];
    __shared__ alignas(8) uint64_t bar;
    Tensor sA = make_tensor(make_smem_ptr(smem), SLayout{});                 // (64, 64), swizzled

    auto tile = make_shape(size<0>(SLayout{}), size<1>(SLayout{}));
    auto blk = make_coord(blockIdx.y, blockIdx.x);
    Tensor gX = local_tile(tma_load.get_tma_tensor(shape(GmemLayout{})), tile, blk);
    Tensor gY = local_tile(tma_store.get_tma_tensor(shape(GmemLayout{})), tile, blk);
    auto ld = tma_load.get_slice(0);
    auto st = tma_store.get_slice(0);

    if (threadIdx.x == 0) {
        initialize_barrier(bar, 1);
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        set_barrier_transaction_bytes(bar, sizeof(smem));
        copy(tma_load.with(bar), ld.partition_S(gX), ld.partition_D(sA));
    }
    wait_barrier(bar, 0);

    for (int i = threadIdx.x; i < size(sA); i += blockDim.x) {
        int r = i / 64, c = i % 64;
        sA(r, c) = T(sA(r, c) + 64 * r + c);
    }
    tma_store_fence();              // the threads' writes, visible to the async proxy
    __syncthreads();
    if (threadIdx.x == 0) {
        copy(tma_store, st.partition_S(sA), st.partition_D(gY));
        tma_store_arrive();
        tma_store_wait<0>();
    }
}
