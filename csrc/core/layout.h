/* layout.h - where a box element lives in shared memory.
 *
 * Two steps, as the hardware does them (golden/README.md observation 2):
 *   1. the box is laid out row by row: element (k0, k1, .., k4) at
 *        dst + row * pitch + k0 * elemsize,  row = k1 + n1*(k2 + n2*(k3 + n3*k4))
 *      with pitch = max(row bytes, swizzle span);
 *   2. every byte address a is swizzled on its ABSOLUTE shared address:
 *        a ^ (((a >> 7) & m) << 4)        m = 1, 3, 7 for 32B / 64B / 128B
 *      so a destination that is not aligned to the swizzle repeat starts
 *      mid-pattern.
 */
#ifndef PA_LAYOUT_H
#define PA_LAYOUT_H

#include "tensormap.h"

/* Swizzle of one shared-memory byte address. Each mode is an XOR of address
 * bits [7, 10) into lower bits, hence its own inverse.
 *
 *   address bits:  ... 9 8 7 | 6 5 4 | 3 2 1 0
 *                      line    chunk   byte in 16-byte chunk
 *   32B:   chunk bit 4      ^= line bit 7
 *   64B:   chunk bits 5..4  ^= line bits 8..7
 *   128B:  chunk bits 6..4  ^= line bits 9..7
 *   128B_ATOM_32B:          bits 6..5 ^= line bits 8..7      (32-byte atoms)
 *   128B_ATOM_32B_FLIP_8B:  as ATOM_32B, and bit 3 ^= line bit 7
 *   128B_ATOM_64B:          bit 6 ^= line bit 7              (64-byte atoms)
 *   96B:    chunk bit 4      ^= line bit 7       (the 32B pattern)
 * The ATOM forms follow the PTX ISA swizzle tables (sm_100+; the sm_90 driver
 * rejects them, golden observation 15). The 96B table of PTX 5.5.7 is the 32B
 * one ("0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 / 1 | 0 | 3 | 2 | 5 | 4 | 7 | 6 /
 * ... Pattern repeats ...", 256-byte aligned): a ^ ((L & 1) << 4), every 256 B;
 * it differs from 32B in its span (rows up to 96 B), not its pattern. */
static inline uint32_t pa_swizzle_xor(pa_swizzle sw, uint32_t line)
{
    switch (sw) {
    case PA_SWIZZLE_32B:
    case PA_SWIZZLE_96B: return (line & 1u) << 4;
    case PA_SWIZZLE_64B: return (line & 3u) << 4;
    case PA_SWIZZLE_128B: return (line & 7u) << 4;
    case PA_SWIZZLE_128B_ATOM_32B: return (line & 3u) << 5;
    case PA_SWIZZLE_128B_ATOM_32B_FLIP_8B: return ((line & 3u) << 5) | ((line & 1u) << 3);
    case PA_SWIZZLE_128B_ATOM_64B: return (line & 1u) << 6;
    default: return 0;
    }
}

static inline uint32_t pa_swizzle_addr(pa_swizzle sw, uint32_t addr)
{
    return addr ^ pa_swizzle_xor(sw, addr >> 7);
}

/* The XOR leaves bits [7, 10) alone, so applying it twice is the identity. */
static inline uint32_t pa_unswizzle_addr(pa_swizzle sw, uint32_t addr)
{
    return pa_swizzle_addr(sw, addr);
}

/* Bytes after which the swizzle pattern repeats (1 for none). */
uint32_t pa_swizzle_repeat(pa_swizzle sw);

/* Smallest unit kept whole by a swizzle: 16 bytes (8 for the flip mode). */
uint32_t pa_swizzle_atom(pa_swizzle sw);

/* The shape of a box in shared memory. A box is walked in items along
 * dimension 0 and rows along dimensions 1..rank-1. An item is one element,
 * or for interleaved maps one whole 16- or 32-byte slice (docs/tile-mode.md
 * section 6: dimension 0 of an interleaved map counts slices, the hardware's
 * behaviour, not the documented one). */
typedef struct {
    uint32_t esize;               /* bytes per element */
    uint32_t unit;                /* bytes per item: esize, or the slice size */
    uint32_t step0;               /* traversal stride of dimension 0 (1 unless interleaved) */
    uint32_t rank;
    uint32_t n[PA_MAX_RANK];      /* items (dim 0) / rows (dims >= 1) held in shared memory */
    uint32_t row_bytes;           /* bytes of one row written (n[0] * unit) */
    uint32_t pitch;               /* distance between rows */
    uint64_t rows;                /* n[1] * ... * n[rank-1] */
    uint64_t tx_bytes;            /* bytes credited to the mbarrier */
    pa_swizzle swizzle;
} pa_box_layout;

/* Shape of a tile-mode box of map m (non-interleaved or interleaved). */
int pa_box_layout_tile(const pa_tensormap *m, pa_box_layout *out, pa_error *err);

/* Shape of an im2col column: pixelsPerColumn rows of one pixel each,
 * laid out like a 2D tile (rows padded to the swizzle span; interleaved rows
 * packed). 282 non-interleaved and 91 interleaved recorded loads. */
int pa_box_layout_im2col(const pa_tensormap *m, pa_box_layout *out, pa_error *err);

/* Bytes of one im2col pixel (row): channelsPerPixel * elemsize, but with
 * INTERLEAVE_16B/32B always one whole 16/32-byte slice, whatever
 * channelsPerPixel (hardware, docs/im2col-mode.md 3.1: 16-byte pixels of
 * 32B maps move 32 bytes; 32..128-byte pixels move one slice). */
uint32_t pa_im2col_pixel_bytes(const pa_tensormap *m);

/* Forward: shared byte address of byte `byte` (0..unit-1) of box item k
 * (k[0] innermost), for a box written at shared address dst. */
uint32_t pa_layout_forward(const pa_box_layout *l, uint32_t dst, const uint32_t k[PA_MAX_RANK],
                           uint32_t byte);

/* Inverse: which box item (and byte of it) shared address addr holds.
 * Returns 1 and fills k/byte, or 0 if addr is padding or outside the box. */
int pa_layout_inverse(const pa_box_layout *l, uint32_t dst, uint32_t addr, uint32_t k[PA_MAX_RANK],
                      uint32_t *byte);

#endif
