/* plan.c - a tensor copy planned at issue, executed at completion (see copy.h). */
#include "mode.h"

#include <inttypes.h>
#include <string.h>

int pa_copy_plan_make(pa_copy_plan *p, pa_target t, const pa_tensormap *m, pa_load_mode mode, pa_copy_dir dir,
                      const int32_t coords[PA_MAX_RANK], const uint16_t info[PA_MAX_RANK - 2], pa_error *err)
{
    int rc = pa_copy_mode_check(mode, dir, err);
    if (rc)
        return rc;
    if (&p->map != m)
        p->map = *m;
    p->mode = mode;
    p->dir = dir;
    memcpy(p->coords, coords, sizeof p->coords);
    if (info)
        memcpy(p->info, info, sizeof p->info);
    else
        memset(p->info, 0, sizeof p->info);
    const pa_dtype_info *di = pa_dtype_get(m->dtype);
    p->packed = di && di->is_packed;
    return p->packed ? pa_packed_make(p, t, err) : pa_copy_modes[mode].make(p, err);
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

void pa_copy_prefetch(const pa_copy_plan *p, const pa_global *g)
{
    if (p->mode == PA_MODE_TILE_GATHER4 && !p->packed)
        pa_gather4_prefetch(p, g);
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
    int rc = pa_copy_plan_make(&p, PA_TARGET_SM_90A, m, mode, PA_DIR_LOAD, coords, info, err);
    if (rc || (rc = pa_copy_plan_place(&p, dst, smem.size, err)))
        return rc;
    return pa_copy_load(&p, g, smem, dst, err);
}
