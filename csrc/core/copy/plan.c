/* plan.c - a tensor copy planned at issue, executed at completion (see copy.h). */
#include "mode.h"

#include <inttypes.h>
#include <string.h>

/* How many tensorCoords and im2colInfo values the mode takes (rules
 * "tensor-coords" and "im2col-info"): the coordinates are a vector of .dim
 * elements, the map's rank, except .tile::gather4 / ::scatter4's five
 * {col_idx, row_idx0..3} (PTX ISA 5.5.3.4); .im2col takes one offset per
 * dimension between C and N (rank - 2; 5.5.4.1),
 * .im2col::w / ::w::128 the two {wHalo, wOffset}, any other mode none. */
static int operand_counts_of(const pa_tensormap *m, pa_load_mode mode, int ncoords, int ninfo, pa_error *err)
{
    const int four = mode == PA_MODE_TILE_GATHER4 || mode == PA_MODE_TILE_SCATTER4;
    const int want = four ? 5 : (int)m->rank;
    if (ncoords >= 0 && ncoords != want)
        return pa_fail_rule(err, PA_ERR_INVALID_VALUE, "tensor-coords", "%d coordinates given; %s needs %d (%s)",
                            ncoords, pa_mode_name(mode), want,
                            four ? "{col_idx, row_idx0, row_idx1, row_idx2, row_idx3}" : "the tensor map's rank");
    if (ninfo < 0)
        return PA_OK;
    const int wide = mode == PA_MODE_IM2COL_W || mode == PA_MODE_IM2COL_W128;
    if (mode == PA_MODE_IM2COL && m->rank < 3)
        return PA_OK;   /* no im2col map: the mode's map check says so (layout.c) */
    const int need = wide ? 2 : mode == PA_MODE_IM2COL ? (int)m->rank - 2 : 0;
    if (ninfo == need)
        return PA_OK;
    if (wide)
        return pa_fail_rule(err, PA_ERR_INVALID_VALUE, "im2col-info",
                            "%d im2colInfo values given; %s takes 2, {wHalo, wOffset}", ninfo, pa_mode_name(mode));
    if (mode == PA_MODE_IM2COL)
        return pa_fail_rule(err, PA_ERR_INVALID_VALUE, "im2col-info",
                            "%d im2col offsets given; .im2col with a rank-%u map takes %d (one per W/H/D "
                            "dimension)", ninfo, m->rank, need);
    return pa_fail_rule(err, PA_ERR_INVALID_VALUE, "im2col-info",
                        "%d im2col offsets given; %s takes none (they are operands of .im2col loads)", ninfo,
                        pa_mode_name(mode));
}

/* inline: a .tile copy given its rank's coordinates (or -1) and no
 * im2colInfo, or an .im2col copy given them and its rank - 2 offsets (or -1),
 * passes them all (operand_counts_of: want = rank, need = 0 or rank - 2) */
static inline int operand_counts(const pa_tensormap *m, pa_load_mode mode, int ncoords, int ninfo, pa_error *err)
{
    const int rank = (int)m->rank;
    if ((ncoords < 0 || ncoords == rank) &&
        ((mode == PA_MODE_TILE && ninfo <= 0) || (mode == PA_MODE_IM2COL && (ninfo < 0 || ninfo == rank - 2))))
        return PA_OK;
    return operand_counts_of(m, mode, ncoords, ninfo, err);
}

/* The plan's map, mode, direction and operands (no im2colInfo: zeros). */
static inline void set_operands(pa_copy_plan *p, const pa_tensormap *m, pa_load_mode mode, pa_copy_dir dir,
                                const int32_t coords[PA_MAX_RANK], const uint16_t info[PA_MAX_RANK - 2])
{
    if (&p->map != m)
        p->map = *m;
    p->mode = mode;
    p->dir = dir;
    memcpy(p->coords, coords, sizeof p->coords);
    if (info)
        memcpy(p->info, info, sizeof p->info);
    else
        memset(p->info, 0, sizeof p->info);
}

int pa_copy_plan_make(pa_copy_plan *p, pa_target t, const pa_tensormap *m, pa_load_mode mode, pa_copy_dir dir,
                      const int32_t coords[PA_MAX_RANK], int ncoords, const uint16_t info[PA_MAX_RANK - 2],
                      int ninfo, pa_error *err)
{
    int rc = pa_copy_mode_check(mode, dir, err);
    if (rc || (rc = operand_counts(m, mode, ncoords, ninfo, err)))
        return rc;
    set_operands(p, m, mode, dir, coords, info);
    p->memo_tag = 0;
    const pa_dtype_info *di = pa_dtype_get(m->dtype);
    p->packed = di && di->is_packed;
    return p->packed ? pa_packed_make(p, t, err) : pa_copy_modes[mode].make(p, err);
}

int pa_copy_plan_make_memo(pa_copy_plan *p, pa_tile_memo *memo, pa_target t, const pa_tensormap *m,
                           pa_load_mode mode, pa_copy_dir dir, const int32_t coords[PA_MAX_RANK], int ncoords,
                           const uint16_t info[PA_MAX_RANK - 2], int ninfo, pa_error *err)
{
    const int four = mode == PA_MODE_TILE_GATHER4 || mode == PA_MODE_TILE_SCATTER4;
    const int im2col = mode == PA_MODE_IM2COL || mode == PA_MODE_IM2COL_NO_OFFS;
    const int memoised = mode == PA_MODE_TILE || four || im2col;   /* a layout of the map alone */
    pa_tile_memo_entry *hit = NULL;
    const int frozen = memo && (memo->span & 1u);
    for (unsigned i = 0; memo && memoised && i < PA_TILE_MEMO && !hit; i++) {
        pa_tile_memo_entry *e = &memo->e[i];
        if (e->map.global_address == m->global_address &&   /* another map's entry: one compare */
            e->valid && e->mode == mode && e->target == t && e->dir == dir &&
            ((frozen && e->same == m && e->same_span == memo->span) || !memcmp(&e->map, m, sizeof *m)))
            hit = e;
    }
    if (hit && frozen) {   /* equal now, so equal for the rest of the span */
        hit->same = m;
        hit->same_span = memo->span;
    }
    if (hit) {
        /* the map, mode, target and direction passed every check of theirs
         * (the memo keeps no other): what is left is pa_copy_plan_make's and
         * the mode's rules of the operands, in their order */
        int rc = operand_counts(m, mode, ncoords, ninfo, err);
        if (rc)
            return rc;
        set_operands(p, m, mode, dir, coords, info);
        p->packed = 0;
        p->l = hit->l;
        p->memo_tag = hit->tag;
        if (four)
            return pa_gather4_start_rules(p, err);
        if (im2col)
            return pa_im2col_start_rules(p, err);
        return pa_tile_start_rules(m, p->coords, m->rank, NULL, pa_copy_is_store(dir),
                                   pa_copy_is_store(dir) ? "tensor store/reduction" : ".tile", err);
    }
    int rc = pa_copy_target_check(t, m, mode, dir, err);
    if (rc || (rc = pa_copy_plan_make(p, t, m, mode, dir, coords, ncoords, info, ninfo, err)))
        return rc;
    if (memo && memoised && !p->packed) {
        pa_tile_memo_entry *e = &memo->e[memo->next++ % PA_TILE_MEMO];
        e->valid = 1;
        e->target = t;
        e->mode = mode;
        e->dir = dir;
        memcpy(&e->map, m, sizeof *m);
        e->l = p->l;
        e->same = frozen ? m : NULL;
        e->same_span = memo->span;
        e->tag = p->memo_tag = ++memo->fills;
    }
    return PA_OK;
}

int pa_copy_plan_recheck(const pa_copy_plan *p, const int32_t coords[PA_MAX_RANK], int ncoords, pa_error *err)
{
    const pa_tensormap *m = &p->map;
    int rc = operand_counts(m, p->mode, ncoords, -1, err);
    if (rc)
        return rc;
    if (p->mode == PA_MODE_TILE_GATHER4 || p->mode == PA_MODE_TILE_SCATTER4)
        return pa_gather4_coord_rules(m, coords, p->mode, p->dir, err);
    return pa_tile_start_rules(m, coords, m->rank, NULL, pa_copy_is_store(p->dir),
                               pa_copy_is_store(p->dir) ? "tensor store/reduction" : ".tile", err);
}

void pa_copy_tensor_extent(const pa_tensormap *m, uint64_t *lo, uint64_t *hi)
{
    const pa_dtype_info *di = pa_dtype_get(m->dtype);
    const uint64_t unit = di && di->elem_bytes ? di->elem_bytes : 1;   /* packed: at most a byte a value */
    /* dims < 2^32, strides < 2^40: each term fits; the sum saturates at 2^64 - 1 */
    uint64_t end = m->global_address, add = m->global_dim[0] * unit;
    for (uint32_t i = 0; i < m->rank && i < PA_MAX_RANK; i++) {
        if (i)
            add = m->global_dim[i] ? (m->global_dim[i] - 1) * m->global_strides[i - 1] : 0;
        end = add > UINT64_MAX - end ? UINT64_MAX : end + add;
    }
    *lo = m->global_address;
    *hi = end;
}

void pa_copy_span(const pa_box_layout *l, uint32_t off, uint64_t *lo, uint64_t *hi)
{
    uint64_t a = off, b = (uint64_t)off + (l->rows ? (l->rows - 1) * l->pitch : 0) + l->row_bytes;
    if (l->swizzle != PA_SWIZZLE_NONE) {   /* a swizzle moves bytes within a 128-byte line */
        a &= ~(uint64_t)127;
        b = (b + 127) & ~(uint64_t)127;
    }
    *lo = a;
    *hi = b;
}

int pa_copy_plan_place(const pa_copy_plan *p, uint32_t off, uint32_t smem_size, pa_error *err)
{
    const pa_box_layout *l = &p->l;
    /* PTX 5.5.3.1: "The address of the bounding Box must also be aligned to 16 bytes";
     * the 128B sub-modes with 32B / 64B atomicity need 32 / 64 (PTX 5.5.7). */
    uint32_t align = 16;
    if (l->swizzle == PA_SWIZZLE_128B_ATOM_32B || l->swizzle == PA_SWIZZLE_128B_ATOM_32B_FLIP_8B)
        align = 32;
    else if (l->swizzle == PA_SWIZZLE_128B_ATOM_64B)
        align = 64;
    if (off % align)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS,
                       "shared-memory box address 0x%x is not %u-byte aligned", off, align);
    uint64_t lo, hi;
    pa_copy_span(l, off, &lo, &hi);
    if (hi > smem_size)
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                       "the box [0x%x, 0x%" PRIx64 ") runs past the end of shared memory (%u bytes)",
                       off, hi, smem_size);
    return PA_OK;
}

int pa_copy_load(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err)
{
    if (p->packed)
        return pa_packed_load(p, g, smem, dst, err);
    if (pa_copy_is_store(p->dir))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "a %s store plan cannot load", pa_mode_name(p->mode));
    return pa_copy_modes[p->mode].load(p, g, smem, dst, err);
}

int pa_copy_store(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                  void *ctx, pa_error *err)
{
    if (!pa_copy_is_store(p->dir))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "a %s load plan cannot store", pa_mode_name(p->mode));
    if (p->packed)
        return pa_packed_store(p, g, smem, src, fn, ctx, err);
    return pa_copy_modes[p->mode].store(p, g, smem, src, fn, ctx, err);
}

int pa_copy_ranges(const pa_copy_plan *p, pa_range_fn fn, void *ctx, pa_error *err)
{
    if (pa_copy_is_store(p->dir))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "a %s store plan reads no global memory", pa_mode_name(p->mode));
    if (p->packed)
        return pa_packed_ranges(p, fn, ctx, err);
    return pa_copy_modes[p->mode].ranges(p, fn, ctx, err);
}

int pa_copy_load_once(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                      const uint16_t info[PA_MAX_RANK - 2], const pa_global *g, pa_smem_view smem, uint32_t dst,
                      pa_error *err)
{
    pa_copy_plan p;
    int rc = pa_copy_plan_make(&p, PA_TARGET_SM_90A, m, mode, PA_DIR_LOAD, coords, -1, info, -1, err);
    if (rc || (rc = pa_copy_plan_place(&p, dst, smem.size, err)))
        return rc;
    return pa_copy_load(&p, g, smem, dst, err);
}
