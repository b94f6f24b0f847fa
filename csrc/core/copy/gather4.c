/* gather4.c - .tile::gather4 / .tile::scatter4 (PTX ISA 5.5.3.4): a rank-2
 * tiled map whose boxDim[1] is 1; coordinates {col, row0, row1, row2, row3}
 * (the operand list; the prose swaps them, tensors.md flags it). The four
 * rows of boxDim[0] elements are placed one after another and swizzled as one
 * 4-row box:
 *
 *     row i (global row row_i, columns col .. col+boxDim[0]-1)
 *         -> dst + i * pitch,   pitch = max(row bytes, swizzle span)
 *
 * each row exactly as a 1-row tile box at dst + i * pitch (the swizzle works
 * on absolute addresses, so the four 1-row boxes are the 4-row box);
 * out-of-bounds rows and columns as in tile mode; 4 x row bytes credited.
 */
#include "mode.h"
#include "rows.h"

/* PTX 5.5.3.4: "these modes work only on 2D tensor data", "The size of the
 * bounding box in the dimension 1 must be one", "The interleave layout is
 * not supported for .tile::scatter4 and .tile::gather4 modes", "All other
 * constraints and rules of the tile mode apply to these modes as well." */
int pa_gather4_make(pa_copy_plan *p, pa_error *err)
{
    const pa_tensormap *m = &p->map;
    const char *name = pa_mode_name(p->mode);
    pa_box_layout *l = &p->l;
    int rc = pa_box_layout_tile(m, l, err);   /* a tiled map of a type the engine moves */
    if (rc)
        return rc;
    if (m->rank != 2)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s needs a rank-2 tensor map (\"these modes work only on 2D tensor data\", "
                       "PTX ISA 5.5.3.4); this one has rank %u", name, m->rank);
    if (m->box_dim[1] != 1)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s needs boxDim[1] = 1 (\"The size of the bounding box in the dimension 1 "
                       "must be one\", PTX ISA 5.5.3.4.1); this map has boxDim[1] = %u",
                       name, m->box_dim[1]);
    if (m->interleave != PA_INTERLEAVE_NONE)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s takes no interleaved map (\"The interleave layout is not supported for "
                       ".tile::scatter4 and .tile::gather4 modes\", PTX ISA 5.5.3.4); this map is %s",
                       name, pa_interleave_name(m->interleave));
    if ((rc = pa_gather4_start_rules(p, err)))
        return rc;
    /* four rows one after another: a 4-row box */
    l->n[1] = 4;
    l->rows = 4;
    l->tx_bytes = 4ull * l->row_bytes;
    return PA_OK;
}

/* Tile rules per row: the column start is 16-byte aligned; the store
 * direction takes non-negative coordinates (all five). */
int pa_gather4_start_rules(const pa_copy_plan *p, pa_error *err)
{
    return pa_gather4_coord_rules(&p->map, p->coords, p->mode, p->dir, err);
}

int pa_gather4_coord_rules(const pa_tensormap *m, const int32_t coords[5], pa_load_mode mode, pa_copy_dir dir,
                           pa_error *err)
{
    static const char *const operand[5] = {"col_idx", "row_idx0", "row_idx1", "row_idx2", "row_idx3"};
    return pa_tile_start_rules(m, coords, 5, operand, pa_copy_is_store(dir), pa_mode_name(mode), err);
}

/* Row i of the box: a 1-row tile box and its walk. */
static void row_box(const pa_copy_plan *p, uint32_t i, pa_box_layout *rl, pa_walk *w)
{
    *rl = p->l;
    rl->n[1] = 1;
    rl->rows = 1;
    rl->tx_bytes = rl->row_bytes;
    const int32_t row[PA_MAX_RANK] = {p->coords[0], p->coords[1 + i], 0, 0, 0};
    pa_walk_tile(w, &p->map, rl, row);
}

/* Each row whole in dim 0 and inside the tensor is moved straight from its
 * global bytes (one line through the vector writer when it is one 128-byte
 * line); a row cut by the tensor's edge, past it, or of a TFLOAT32 map goes
 * through the tile box walk as a 1-row box. The four rows are found first
 * and their first bytes fetched, so their misses overlap (fetching them at
 * issue measured slower: docs/performance.md; a run's loads fetch further
 * ahead in copy/gather4run.c's pass). */
int pa_gather4_load(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err)
{
    const pa_tensormap *m = &p->map;
    const pa_box_layout *l = &p->l;
    uint32_t lo, hi;
    pa_dim0_range(p->coords[0], l->step0, l->n[0], m->global_dim[0], &lo, &hi);
    const int whole = l->step0 == 1 && lo == 0 && hi == l->n[0] && l->row_bytes && !pa_is_tf32(m->dtype);
    const uint8_t *src[4] = {NULL, NULL, NULL, NULL};
    for (uint32_t i = 0; i < 4 && whole; i++) {
        const int64_t row = p->coords[1 + i];
        if (row < 0 || (uint64_t)row >= m->global_dim[1])
            continue;
        uint64_t addr = pa_gaddr(m->global_address, pa_gaddr_mul((uint64_t)row, m->global_strides[0]),
                                 (uint64_t)p->coords[0], l->unit);
        if ((src[i] = pa_global_resolve(g, addr, l->row_bytes, NULL)))
            __builtin_prefetch(src[i]);
    }
    pa_swz_view sv;
    if (whole)
        pa_swz_init(&sv, smem.base, l->swizzle);
    int rc = PA_OK;
    for (uint32_t i = 0; i < 4 && !rc; i++) {
        const uint32_t a = dst + i * l->pitch;
        if (src[i]) {
            if (l->row_bytes == 128 && (sv.sw == PA_SWIZZLE_NONE || (sv.atom == 16 && a % 128 == 0)))
                sv.lines_in(sv.smem, sv.xtab, a, src[i], 0, 1, 0);
            else   /* read only: the cast serves the two-way signature */
                pa_rows_copy(&sv, a, (uint8_t *)src[i], l->row_bytes, 1);
            continue;
        }
        pa_box_layout rl;
        pa_walk w;
        row_box(p, i, &rl, &w);
        rc = pa_tile_load_box(&p->map, &rl, &w, g, smem, a, err);
    }
    return rc;
}

int pa_gather4_store(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                     void *ctx, pa_error *err)
{
    int rc = PA_OK;
    for (uint32_t i = 0; i < 4 && !rc; i++) {
        pa_box_layout rl;
        pa_walk w;
        row_box(p, i, &rl, &w);
        rc = pa_tile_store_box(&p->map, &rl, &w, g, smem, src + i * p->l.pitch, fn, ctx, err);
    }
    return rc;
}

int pa_gather4_ranges(const pa_copy_plan *p, pa_range_fn fn, void *ctx, pa_error *err)
{
    int rc = PA_OK;
    for (uint32_t i = 0; i < 4 && !rc; i++) {
        pa_box_layout rl;
        pa_walk w;
        row_box(p, i, &rl, &w);
        rc = pa_tile_walk_ranges(&p->map, &rl, &w, i, fn, ctx, err);
    }
    return rc;
}
