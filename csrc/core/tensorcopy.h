/* tensorcopy.h - the box walk of cp.async.bulk.tensor in tile mode.
 *
 * A box is walked row by row (dims 1..rank-1); inside a row the in-bounds
 * elements are one contiguous run of global memory, so each row is moved
 * with at most three wide operations (fill, copy, fill), split only where
 * the swizzle moves 16-byte chunks apart.
 *
 *   element k of the box  <->  global element g:
 *       g_i = c_i + k_i * elementStrides[i]      (elementStrides[0] = 1 unless interleaved)
 *       address = globalAddress + g_0 * esize + sum_{i>=1} g_i * globalStrides[i-1]
 *   load:  out-of-bounds elements (any g_i outside [0, globalDim[i])) are filled
 *   store: in dims >= 1 bounds are exact; in dim 0 the bytes up to the end of
 *          the 16-byte chunk holding the row's last in-bounds byte are written
 *          too (golden observation 9)
 */
#ifndef PA_TENSORCOPY_H
#define PA_TENSORCOPY_H

#include "boxwalk.h"
#include "memory.h"

/* Shared memory of one CTA as the copy sees it. */
typedef struct {
    uint8_t *base;      /* byte 0 of the CTA's shared memory */
    uint32_t size;      /* bytes */
} pa_smem_view;

/* Faults the hardware raises at issue (golden observations 1 and 8). */
int pa_tile_check_coords(const pa_tensormap *m, const int32_t coords[PA_MAX_RANK], int is_store,
                         pa_error *err);

/* Check that the box fits in shared memory at dst (offset within the CTA)
 * and that dst meets the alignment rules. */
int pa_tile_check_smem(const pa_tensormap *m, const pa_box_layout *l, uint32_t dst,
                       uint32_t smem_size, pa_error *err);

/* Load the box (tile) or column (im2col, with offsets) at coords into
 * shared memory at offset dst. */
int pa_tensor_load_exec(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                        const uint16_t offsets[PA_MAX_RANK - 2], const pa_global *g, pa_smem_view smem,
                        uint32_t dst, pa_error *err);
int pa_tile_load_exec(const pa_tensormap *m, const int32_t coords[PA_MAX_RANK],
                      const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err);

/* What to do with each run of a store-direction walk: copy (store) or reduce. */
typedef void (*pa_run_fn)(void *ctx, uint8_t *gdst, const uint8_t *ssrc, size_t nbytes);

/* Walk the box in the store direction (.tile or .im2col_no_offs) over the
 * runs of bytes that the hardware writes to global memory: fn NULL copies
 * them (a store); otherwise fn gets each run, unswizzled, in pieces of at
 * most 2 KiB (a reduction). */
int pa_tensor_store_exec(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                         const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn, void *ctx,
                         pa_error *err);
int pa_tile_store_exec(const pa_tensormap *m, const int32_t coords[PA_MAX_RANK],
                       const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                       void *ctx, pa_error *err);

/* Round an f32 bit pattern as a TFLOAT32 map load does (observation 4):
 * to nearest-even at bit 13, NaN -> 0x7FFFE000, infinities kept, no flush. */
uint32_t pa_tf32_round(uint32_t bits);

#endif
