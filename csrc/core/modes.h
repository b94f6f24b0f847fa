/* modes.h - the sm_100 load modes of the bulk tensor copy engine, and what
 * each target executes (docs/load-modes.md).
 *
 * .tile::gather4 / .tile::scatter4 (PTX ISA 5.5.3.4): a rank-2 tiled map
 *     whose boxDim[1] is 1; coordinates {col, row0, row1, row2, row3} (the
 *     operand list; the prose swaps them, tensors.md flags it). The four rows
 *     of boxDim[0] elements are placed one after another and swizzled as one
 *     4-row box:
 *
 *         row i (global row row_i, columns col .. col+boxDim[0]-1)
 *             -> dst + i * pitch,   pitch = max(row bytes, swizzle span)
 *
 *     each row exactly as a 1-row tile box at dst + i * pitch (the swizzle
 *     works on absolute addresses, so the four 1-row boxes are the 4-row
 *     box); out-of-bounds rows and columns as in tile mode; 4 x row bytes
 *     credited.
 *
 * .im2col::w / .im2col::w::128 (PTX ISA 5.5.5): an im2col-wide map
 *     (cuTensorMapEncodeIm2colWide), im2colInfo {wHalo, wOffset}. The main
 *     pixels walk the bounding box as im2col does, with a box of 1 in H and
 *     D (5.5.5.1): W from W0 = coords[1] + wOffset by s = elementStrides[1]
 *     up to the box's upper W, hiW = globalDim[1] - 1 + upperW + wOffset,
 *     then from its lower W, loW = lowerW + wOffset, in the next image n + 1
 *     at the same (h, d), and so on (docs/load-modes.md 3 gives the reading):
 *
 *         ::w       rows 0..P-1 are main pixels 0..P-1 (P = pixelsPerColumn);
 *                   rows P..P+wHalo-1 the wHalo pixels after pixel P-1 in W
 *         ::w::128  4 groups: 32 main pixels, then the wHalo pixels after the
 *                   group's last one in W (r = g * (32 + wHalo) + j)
 *
 *     each row is channelsPerPixel elements from coords[0]; a pixel outside
 *     the tensor (n past the batch, W or H padding) is filled. The start may
 *     lie left of the box, not right of it ("The first element can lie
 *     outside of the Bounding Box in the W-dimension only and only on the
 *     left side").
 */
#ifndef PA_MODES_H
#define PA_MODES_H

#include "target.h"
#include "tensorcopy.h"

/* Directions of a tensor copy, for the target gate. */
typedef enum {
    PA_DIR_LOAD = 0,      /* global -> shared::cta */
    PA_DIR_LOAD_CLUSTER,  /* global -> shared::cluster (incl. .multicast::cluster) */
    PA_DIR_STORE,         /* shared::cta -> global */
    PA_DIR_REDUCE,        /* cp.reduce.async.bulk.tensor */
    PA_DIR_PREFETCH       /* cp.async.bulk.prefetch.tensor */
} pa_copy_dir;

/* Does target t execute this copy (mode, and the map's swizzle and type)?
 * PA_ERR_ILLEGAL_INSTRUCTION naming the targets that do. */
int pa_modes_target_check(pa_target t, const pa_tensormap *m, pa_load_mode mode, pa_copy_dir dir,
                          pa_error *err);

/* Copies this module moves: the modes above, and every copy through a map of
 * a packed sub-byte type (subbyte.h). */
static inline int pa_modes_handles(const pa_tensormap *m, pa_load_mode mode)
{
    const pa_dtype_info *di = pa_dtype_get(m->dtype);
    return mode >= PA_MODE_TILE_GATHER4 || (di && di->is_packed);
}

/* Issue-time checks and shared-memory layout of a copy in any mode (info:
 * the .im2col offsets, or im2colInfo {wHalo, wOffset}). */
int pa_copy_issue_checks(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                         const uint16_t info[PA_MAX_RANK - 2], int is_store, pa_box_layout *l,
                         pa_error *err);

/* The same for the copies pa_modes_handles names. */
int pa_modes_issue_checks(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                          const uint16_t info[PA_MAX_RANK - 2], int is_store, pa_box_layout *l,
                          pa_error *err);

/* Load / store of such a copy (after pa_modes_issue_checks). */
int pa_modes_load_exec(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                       const uint16_t info[PA_MAX_RANK - 2], const pa_global *g, pa_smem_view smem,
                       uint32_t dst, pa_error *err);
int pa_modes_store_exec(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                        const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn, void *ctx,
                        pa_error *err);

/* Every in-bounds run of global bytes a load in any mode reads, in box-row
 * order: fn(ctx, row, address, bytes). Returns the rows of the box. */
typedef int (*pa_range_fn)(void *ctx, uint64_t row, uint64_t addr, uint64_t nbytes, pa_error *err);
int pa_modes_ranges(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                    const uint16_t info[PA_MAX_RANK - 2], pa_range_fn fn, void *ctx, pa_error *err);

/* .cta_group::1 / ::2 on a load (cta_group 0: not given): the target has it,
 * and the mbarrier's CTA is the destination or its peer (rank ^ 1). */
int pa_modes_cta_group_check(pa_target t, int cta_group, uint32_t mbar, uint32_t dst_rank, int multicast,
                             uint32_t nctas, pa_error *err);

/* The name of a mode, ".tile::gather4". */
const char *pa_mode_name(pa_load_mode mode);

#endif
