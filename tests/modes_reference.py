"""Independent NumPy model of what the sm_100 load modes mean (docs/load-modes.md).

Written from the PTX text, not from the C core: each mode is stated as what a
kernel wants from it, then laid out in shared memory by the swizzle table of
PTX ISA 5.5.7 (tensors.md, "Address-level formula").

* gather4  = four rows picked out of a 2D tensor (a MoE / paged-attention gather)
* scatter4 = its inverse: four rows written back into a 2D tensor
* im2col::w = the input pixels of a run of output positions, walked through the
  bounding box image after image (a GEMM's dense column), with the filter's halo
"""
import numpy as np

# PTX 5.5.7 tables as XOR masks on the absolute shared address a, L = a >> 7.
def swizzle(a, mode):
    L = a >> 7
    return a ^ {0: 0,
                1: (L & 1) << 4,                        # 32B
                2: (L & 3) << 4,                        # 64B
                3: (L & 7) << 4,                        # 128B, 16-byte atoms
                4: (L & 3) << 5,                        # 128B, 32-byte atoms
                5: ((L & 3) << 5) ^ ((L & 1) << 3),     # 32-byte atoms, 8-byte flip
                6: (L & 1) << 6}[mode]                  # 64-byte atoms


SPAN = {0: 0, 1: 32, 2: 64, 3: 128, 4: 128, 5: 128, 6: 128}


def place(tile_bytes, smem, dst, pitch, mode):
    """Write a 2D byte tile (rows x row_bytes) into smem (a uint8 array) row by
    row at dst + row * pitch, every byte through the swizzle."""
    rows, width = tile_bytes.shape
    for r in range(rows):
        for b in range(width):
            smem[swizzle(dst + r * pitch + b, mode)] = tile_bytes[r, b]


def read_back(smem, rows, width, dst, pitch, mode):
    """The inverse of place: the byte tile held in smem."""
    out = np.zeros((rows, width), np.uint8)
    for r in range(rows):
        for b in range(width):
            out[r, b] = smem[swizzle(dst + r * pitch + b, mode)]
    return out


def gather4(src, col, rows, width, fill=0):
    """Rows `rows` of the 2D array src, columns col .. col+width-1; whatever
    lies outside src is `fill`."""
    out = np.full((4, width), fill, dtype=src.dtype)
    for i, r in enumerate(rows):
        if not 0 <= r < src.shape[0]:
            continue
        for k in range(width):
            if 0 <= col + k < src.shape[1]:
                out[i, k] = src[r, col + k]
    return out


def scatter4(dst, tile, col, rows):
    """Write the four rows of tile back at rows `rows` of dst, columns col..;
    parts outside dst are dropped (later rows win where rows repeat)."""
    out = dst.copy()
    for i, r in enumerate(rows):
        if not 0 <= r < dst.shape[0]:
            continue
        for k in range(tile.shape[1]):
            if 0 <= col + k < dst.shape[1]:
                out[r, col + k] = tile[i, k]
    return out


def box_walk(n0, w0, count, stride, lo, hi):
    """The (n, w) output positions a walk through an im2col bounding box of one
    row (H and D fixed) visits, as a GEMM's dense column of outputs needs them:
    along W from w0 in steps of `stride` while w <= hi, then on from lo in the
    next image, and so on (PTX 5.5.5: im2col's walk, the box 1 high and deep)."""
    out, n, w = [], n0, w0
    while len(out) < count:
        out.append((n, w))
        w += stride
        if w > hi:
            n, w = n + 1, lo
    return out


def _pixels(x, h, c0, cpp, positions):
    # NHWC x: the channels [c0, c0 + cpp) of each (n, w) at row h; zeros outside x
    out = np.zeros((len(positions), cpp), x.dtype)
    for i, (n, w) in enumerate(positions):
        if 0 <= n < x.shape[0] and 0 <= h < x.shape[1] and 0 <= w < x.shape[2]:
            for c in range(cpp):
                if 0 <= c0 + c < x.shape[3]:
                    out[i, c] = x[n, h, w, c0 + c]
    return out


def _with_halo(run, halo, stride):
    # the filter's halo: the `halo` inputs after the run's last pixel, in its row
    n, w = run[-1]
    return run + [(n, w + (j + 1) * stride) for j in range(halo)]


def im2col_w(x, n, h, c0, cpp, w0, pixels, halo, stride, lo, hi):
    """.im2col::w: `pixels` positions of the box walk from (n, w0), then the
    halo after the last one (lo, hi: the box's W corners, wOffset included)."""
    return _pixels(x, h, c0, cpp, _with_halo(box_walk(n, w0, pixels, stride, lo, hi), halo, stride))


def im2col_w128(x, n, h, c0, cpp, w0, halo, stride, lo, hi):
    """.im2col::w::128: 128 positions of the box walk in 4 groups of 32, each
    followed by its own halo (the inputs its filter window adds)."""
    walk = box_walk(n, w0, 128, stride, lo, hi)
    rows = []
    for g in range(4):
        rows += _with_halo(walk[32 * g:32 * g + 32], halo, stride)
    return _pixels(x, h, c0, cpp, rows)


# ---- packed sub-byte types (PTX ISA 5.5.1.1) ----------------------------------------
# 16 values per group; value i in bits [b*i, b*i + b) of the little-endian group.

BITS = {13: 4, 14: 4, 15: 6}          # CUtensorMapDataType -> bits per value


def pack(values, bits):
    """Pack a 1D array of values (a multiple of 16 of them) into bytes."""
    out = np.zeros(len(values) * bits // 8, np.uint8)
    for i, v in enumerate(values):
        for b in range(bits):
            if (int(v) >> b) & 1:
                out[(bits * i + b) // 8] |= 1 << ((bits * i + b) % 8)
    return out


def unpack(data, bits, count):
    """The first `count` values held by packed bytes."""
    vals = np.zeros(count, np.uint8)
    for i in range(count):
        v = 0
        for b in range(bits):
            pos = bits * i + b
            v |= ((int(data[pos // 8]) >> (pos % 8)) & 1) << b
        vals[i] = v
    return vals


def packed_smem_row(values, dtype):
    """What a load writes for one row of values: .b4x16 packed as in global;
    .b4x16_p64 / .b6x16_p32 each group of 16 in a 16-byte slot, data first
    (None marks the padding bytes the load leaves untouched)."""
    bits = BITS[dtype]
    data = pack(values, bits)
    if dtype == 13:
        return list(data)
    gb = 16 * bits // 8
    row = []
    for k in range(len(values) // 16):
        row += list(data[k * gb:(k + 1) * gb]) + [None] * (16 - gb)
    return row
