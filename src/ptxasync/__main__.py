"""A short tour: python -m ptxasync

Builds a 2D bf16 tensor map with 128B swizzle, loads one tile through an
mbarrier exactly as a kernel would, and prints where the bytes landed in shared
memory and the tile they hold.
"""
import numpy as np

import ptxasync as pa
from ptxasync.layout import render_box, render_chunks


def tour():
    # A 128 x 256 tensor of 16-bit values; element (row r, col c) holds r * 256 + c
    # so that every value names its own position. (Stored as uint16 bits; the map
    # says bf16: a copy moves bits, it does not convert them.)
    rows, cols = 128, 256
    tensor = (np.arange(rows * cols, dtype=np.uint32) % 65536).astype(np.uint16).reshape(rows, cols)

    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024)
    gmem = gpu.register(tensor)                       # global memory at a device-like address
    box = (8, 64)                                     # NumPy order: 8 rows of 64 elements = 128 B
    tmap = pa.TensorMap.from_array(tensor, box, gmem.address, swizzle="128B", dtype="bf16")
    print("== cuTensorMapEncodeTiled ==")
    print(tmap)

    # The kernel side: init an mbarrier, arrive.expect_tx the box bytes, issue
    # cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes.
    bar = gpu.mbarrier(0)
    bar.init(1)
    bar.arrive_expect_tx(tmap.box_bytes)
    dst = 1024                                        # shared-memory destination
    coords = (64, 16)                                 # driver order: c0 = column, c1 = row
    gpu.cp_async_bulk_tensor_load(tmap, coords, dst, bar)
    print(f"\nissued the load: {gpu.pending} operation pending, barrier {bar}")
    print(f"destination before completion: {gpu.smem[dst:dst + 8]} (untouched)")
    assert bar.try_wait(0)                            # completes the load, then the phase
    print(f"after mbarrier.try_wait.parity 0: {bar}")

    print("\n== the 128B swizzle: which 16-byte chunk of a row each slot of a 128-byte line holds ==")
    print(render_chunks("128B", base=dst))
    print("\n== where the box landed (r = box row, c = first element of the 16-byte chunk) ==")
    print(render_box(tmap, dst))

    raw = gpu.ctas[0].view(np.uint16, (8, 64), dst)   # shared memory as the kernel sees it
    print("\n== shared memory read row by row (swizzled): first 16 elements of each row ==")
    print(raw[:, :16])
    tile = np.empty((8, 64), dtype=np.uint16)         # undo the swizzle with the layout function
    addrs = tmap.smem_addresses(dst)
    flat = gpu.smem.view(np.uint16)
    tile[:] = flat[addrs // 2]
    print("\n== the tile, unswizzled through TensorMap.smem_addresses ==")
    print(tile[:, :8], "...")
    expected = tensor[16:24, 64:128]
    print(f"\ntile equals tensor[16:24, 64:128]: {np.array_equal(tile, expected)}")
    return 0 if np.array_equal(tile, expected) else 1


if __name__ == "__main__":
    raise SystemExit(tour())
