/* prefetch.c - cp.async.bulk.prefetch.tensor on a machine.
 *
 * The prefetch is a hint to L2: it moves no data and signals nothing, so the
 * model completes it at issue. It is planned exactly like a load in the same
 * mode (the target gate, the issue-time faults, every in-bounds byte it
 * names must be global memory), and hands back what it would have fetched:
 * the in-bounds runs of global bytes, box row by box row.
 */
#include "../engine.h"

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
                             const int32_t coords[PA_MAX_RANK], int ncoords,
                             const uint16_t info[PA_MAX_RANK - 2], int ninfo, pa_range_fn fn, void *ctx, pa_error *err)
{
    pa_copy_plan p;
    int rc = pa_copy_target_check(m->target, map, mode, PA_DIR_PREFETCH, err);
    if (rc || (rc = pa_copy_plan_make(&p, m->target, map, mode, PA_DIR_PREFETCH, coords, ncoords, info, ninfo, err)))
        return rc;
    prefetch_ctx c = {&m->global, fn, ctx};
    return pa_copy_ranges(&p, check_range, &c, err);
}
