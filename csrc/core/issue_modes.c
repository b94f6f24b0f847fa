/* issue_modes.c - cp.async.bulk.prefetch.tensor (see issue_modes.h). */
#include "issue_modes.h"

typedef struct {
    const pa_global *g;
    pa_range_fn fn;
    void *ctx;
} prefetch_ctx;

/* A prefetch of memory that is not there faults like the load would. */
static int check_range(void *vctx, uint64_t row, uint64_t addr, uint64_t n, pa_error *err)
{
    const prefetch_ctx *c = vctx;
    if (!pa_global_resolve(c->g, addr, n, err))
        return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
    return c->fn ? c->fn(c->ctx, row, addr, n, err) : PA_OK;
}

int pa_issue_prefetch_tensor(pa_machine *m, const pa_tensormap *map, pa_load_mode mode,
                             const int32_t coords[PA_MAX_RANK], const uint16_t info[PA_MAX_RANK - 2],
                             pa_range_fn fn, void *ctx, pa_error *err)
{
    static const uint16_t none[PA_MAX_RANK - 2] = {0, 0, 0};
    pa_box_layout l;
    int rc;
    /* PTX: .load_mode = { .tile, .tile::gather4, .im2col, .im2col::w, .im2col::w::128 } */
    if (mode == PA_MODE_IM2COL_NO_OFFS || mode == PA_MODE_TILE_SCATTER4 || (unsigned)mode >= PA_MODE_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "cp.async.bulk.prefetch.tensor takes no %s mode (.tile, .tile::gather4, "
                       ".im2col, .im2col::w, .im2col::w::128)", pa_mode_name(mode));
    if ((rc = pa_modes_target_check(m->target, map, mode, PA_DIR_PREFETCH, err)))
        return rc;
    info = info ? info : none;
    /* the issue-time faults of a load in the same mode */
    if ((rc = pa_copy_issue_checks(map, mode, coords, info, 0, &l, err)))
        return rc;
    prefetch_ctx c = {&m->global, fn, ctx};
    return pa_modes_ranges(map, mode, coords, info, check_range, &c, err);
}
