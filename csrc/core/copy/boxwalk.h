/* boxwalk.h - where each row of a box lives in global memory.
 *
 * A bulk tensor copy moves its box as rows of items: a row is n0 items along
 * dimension 0 (elements; whole 16/32-byte slices for interleaved tile maps),
 * laid out in shared memory one row after another (layout.h). The walk names,
 * row by row, the global byte offset of the row and whether it lies inside
 * the tensor. Item k of a row is at
 *
 *     globalAddress + row offset + (c0 + k * step0) * unit,  inside when
 *     0 <= c0 + k * step0 < limit0
 *
 * .tile: rows run over dims 1..r-1, dim 1 fastest, each stepping by its
 *     traversal stride: g_i = c_i + k_i * elementStrides[i].
 *
 * .im2col / .im2col_no_offs: a row is one pixel: channelsPerPixel elements
 *     of dim 0 (C) starting at c0. pixelsPerColumn pixels are walked through
 *     the bounding box, W fastest, from the pixel the coordinates name:
 *
 *         W = lower_W, lower_W + s_W, ...  <= globalDim_W - 1 + upper_W
 *         past the end: W = lower_W and H steps (then D); past the last D:
 *         the next image, N + elementStrides[N]
 *
 *     and each pixel reads the element at pixel + im2col offsets
 *     (.im2col_no_offs: no offsets). Padding pixels and images past N are
 *     out of bounds (filled). All 282 non-interleaved recorded im2col loads
 *     follow this walk; that N is strided too (the PTX text names only D, H
 *     and W) was measured on an H200 (48/48 probe loads).
 *
 * Interleaved im2col maps (INTERLEAVE_16B/32B; docs/im2col-mode.md): the
 *     hardware counts dimensions as in the NC/xHWCx layout without its
 *     innermost slice: W, H, D are dims 0..r-3 (dim 0 in units of the slice
 *     size), dim r-2 (C / x) is not walked and keeps its coordinate, N is
 *     dim r-1; each pixel is one whole 16/32-byte slice, whatever
 *     channelsPerPixel (pa_im2col_pixel_bytes: the hardware differs from the
 *     documented channelsPerPixel * elemsize there). The 91 completed
 *     recorded and 195 probe interleaved loads follow this.
 */
#ifndef PA_BOXWALK_H
#define PA_BOXWALK_H

#include "copy.h"

typedef struct {
    /* dimension 0 of every row */
    int64_t c0;                  /* index of item 0 */
    uint64_t limit0;             /* items with index in [0, limit0) are inside */
    /* the row position */
    uint32_t first, last;        /* dims that place a row: [first, last] */
    int64_t g[PA_MAX_RANK];      /* current position per dim */
    int64_t off[PA_MAX_RANK];    /* im2col offsets added when reading */
    int64_t step[PA_MAX_RANK];   /* traversal stride per dim */
    int64_t lo[PA_MAX_RANK], hi[PA_MAX_RANK];  /* im2col: bounding box of the walked dims */
    uint32_t k[PA_MAX_RANK], n[PA_MAX_RANK];    /* tile: box index and extent per dim */
    uint64_t bytes[PA_MAX_RANK]; /* byte stride per dim */
    uint64_t dim[PA_MAX_RANK];   /* globalDim */
    uint32_t walk_lo, walk_hi;   /* im2col: the dims the pixel walk steps (then image dim) */
    uint32_t image;              /* im2col: the image (N) dim */
    int im2col;
} pa_walk;

/* Walks of a tile box (layout l) and of an im2col column. */
void pa_walk_tile(pa_walk *w, const pa_tensormap *m, const pa_box_layout *l,
                  const int32_t coords[PA_MAX_RANK]);
void pa_walk_im2col(pa_walk *w, const pa_tensormap *m, const int32_t coords[PA_MAX_RANK],
                    const uint16_t offsets[PA_MAX_RANK - 2]);

/* Is the current row inside the tensor (dims >= 1; interleaved im2col: all
 * dims)? Also its byte offset from globalAddress, without dim 0's c0
 * (PA_GADDR_OVERFLOW if it passes 2^64: the access then faults). */
static inline int pa_walk_row(const pa_walk *w, uint64_t *offset)
{
    uint64_t o = 0;
    for (uint32_t i = w->first; i <= w->last; i++) {
        int64_t x = w->g[i] + w->off[i];
        if (x < 0 || (uint64_t)x >= w->dim[i])
            return 0;
        o = pa_gaddr(o, 0, (uint64_t)x, w->bytes[i]);   /* saturates: memory.h */
    }
    *offset = o;
    return 1;
}

/* Items [lo, hi) of a row whose dim-0 index c0 + k * step lies in [0, limit)
 * (inline: the row copies call it per box and per dimension). */
static inline void pa_dim0_range(int64_t c0, uint32_t step, uint32_t n0, uint64_t limit, uint32_t *lo,
                                 uint32_t *hi)
{
    if (step == 1) {   /* no division (every non-interleaved map) */
        int64_t a = c0 >= 0 ? 0 : -c0, b = (int64_t)limit - c0;
        a = a > n0 ? n0 : a;
        b = b < a ? a : b > n0 ? n0 : b;
        *lo = (uint32_t)a;
        *hi = (uint32_t)b;
        return;
    }
    int64_t a = c0 >= 0 ? 0 : (-c0 + step - 1) / step;
    int64_t b = (int64_t)limit - c0 <= 0 ? 0 : ((int64_t)limit - c0 + step - 1) / step;
    if (a > n0) a = n0;
    if (b > n0) b = n0;
    if (b < a) b = a;
    *lo = (uint32_t)a;
    *hi = (uint32_t)b;
}

/* Advance to the next row. */
void pa_walk_next(pa_walk *w);

#endif
