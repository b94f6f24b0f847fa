/* tensor.c - the tensor engine: cp.async.bulk.tensor loads and stores,
 * cp.reduce.async.bulk.tensor. Each copy is planned at issue and its plan
 * executed at completion (copy/copy.h); the engine adds the machine's side:
 * CTAs, multicast, mbarriers and groups. */
#include "../defer.h"
#include "../engine.h"

#include <string.h>

static int load_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    const pa_tensor_payload *t = &op->u.tensor;
    int taken;   /* a replay on threads may copy the bytes later (defer.h) */
    int rc = pa_defer_load(m, op, &taken, err);
    if (!rc && !taken)
        rc = pa_copy_load(&t->plan, &m->global, pa_smem_of(m, op->dst_rank), pa_smem_offset(t->smem_addr), err);
    /* .cta_group::2: the mbarrier of the pair's CTA with mbar's rank parity */
    uint32_t bar = t->cta_group == 2 ? (op->dst_rank & ~1u) | t->bar_parity : op->dst_rank;
    return rc ? rc : pa_credit(m, bar, op->mbar_offset, op->tx_bytes, err);
}

/* Stores read the box's shared-memory span first (from a 4 KiB boundary, so
 * the swizzle, which follows the address bits, sees the same pattern). */
static int store_read(pa_machine *m, pa_op *op, pa_error *err)
{
    uint32_t off = pa_smem_offset(op->u.tensor.smem_addr);
    uint32_t base = off & ~4095u;
    return pa_stage_smem(m, op, op->cta, base, off - base + op->u.tensor.smem_span, err);
}

static void reduce_run(void *ctx, uint8_t *gdst, const uint8_t *ssrc, size_t n)
{
    const pa_reducer *r = ctx;   /* chosen once per operation */
    pa_reducer_apply(r, gdst, ssrc, n / r->esize);
}

static int store_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    const pa_tensor_payload *t = &op->u.tensor;
    pa_smem_view v = pa_smem_of(m, op->cta);
    uint32_t src = pa_smem_offset(t->smem_addr);
    if (op->read_done) {   /* write what the source read found */
        v.base = op->staged;
        v.size = op->staged_len;
        src -= op->staged_base;
    }
    if (op->kind == PA_OP_TILE_STORE)
        return pa_copy_store(&t->plan, &m->global, v, src, NULL, NULL, err);
    pa_reducer ctx;
    if (pa_reducer_tensor(&ctx, t->redop, t->plan.map.dtype))
        return pa_reduce_tensor_check(t->redop, t->plan.map.dtype, err);
    return pa_copy_store(&t->plan, &m->global, v, src, reduce_run, &ctx, err);
}

static const pa_engine tensor_load = {"cp.async.bulk.tensor (load)", NULL, load_complete, NULL};
static const pa_engine tensor_store = {"cp.async.bulk.tensor (store)", store_read, store_complete, NULL};
static const pa_engine tensor_reduce = {"cp.reduce.async.bulk.tensor", store_read, store_complete, NULL};

/* .cta_group::1 / ::2 on a load (cta_group 0: not given): the target has it,
 * and the mbarrier's CTA is the destination or its peer (rank ^ 1). */
static int cta_group_check(pa_target t, int cta_group, uint32_t mbar, uint32_t dst_rank, int multicast,
                           uint32_t nctas, pa_error *err)
{
    if (cta_group == 0)
        return PA_OK;
    if (cta_group != 1 && cta_group != 2)
        return pa_fail(err, PA_ERR_INVALID_VALUE, ".cta_group::%d does not exist (::1 or ::2)", cta_group);
    int rc = pa_target_require(t, PA_FEAT_CTA_GROUP, err);
    if (rc)
        return rc;
    const uint32_t bar = pa_smem_rank(mbar);
    /* "When .cta_group::1 is specified, the mbarrier object mbar that is specified must be in
     * the shared memory of the same CTA as the shared memory destination dstMem. When
     * .cta_group::2 is specified, the mbarrier object mbar can be in shared memory of either
     * the same CTA as the shared memory destination dstMem or in its peer-CTA." */
    if (!multicast && nctas > 1 && bar != dst_rank && (cta_group == 1 || bar != (dst_rank ^ 1u)))
        return pa_fail(err, PA_ERR_HAZARD,
                       ".cta_group::%d: the mbarrier is in CTA %u, neither the destination CTA %u%s "
                       "(undefined behaviour)", cta_group, bar, dst_rank,
                       cta_group == 2 ? " nor its peer" : "");
    if (cta_group == 2 && ((dst_rank | 1u) >= nctas || (bar | 1u) >= nctas))
        return pa_fail(err, PA_ERR_HAZARD,
                       ".cta_group::2 needs CTA pairs: the cluster of %u CTAs has no peer of CTA %u",
                       nctas, nctas > dst_rank ? dst_rank : bar);
    return PA_OK;
}

int pa_issue_tensor_load(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                         pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                         const uint16_t offsets[PA_MAX_RANK - 2], uint32_t dst, int cluster_space,
                         uint32_t mbar, int multicast, uint16_t cta_mask, pa_error *err)
{
    return pa_issue_tensor_load_group(m, cta, thread, map, mode, coords, -1, offsets, -1, dst, cluster_space,
                                      mbar, multicast, cta_mask, 0, err);
}

int pa_issue_tensor_load_group(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                               pa_load_mode mode, const int32_t coords[PA_MAX_RANK], int ncoords,
                               const uint16_t offsets[PA_MAX_RANK - 2], int noffsets, uint32_t dst,
                               int cluster_space,
                               uint32_t mbar, int multicast, uint16_t cta_mask, int cta_group,
                               pa_error *err)
{
    const pa_copy_dir dir = cluster_space || multicast ? PA_DIR_LOAD_CLUSTER : PA_DIR_LOAD;
    int rc = pa_check_cta(m, cta, err);
    if (rc)
        return rc;
    pa_op op;
    pa_op_begin(&op, &tensor_load, PA_OP_TILE_LOAD, cta, thread);
    pa_tensor_payload *t = &op.u.tensor;
    if ((rc = pa_copy_plan_make_memo(&t->plan, &m->tile_memo, m->target, map, mode, dir, coords, ncoords, offsets,
                                     noffsets, err)))
        return rc;
    const pa_box_layout *l = &t->plan.l;
    uint32_t dst_rank;
    if (!pa_smem_resolve(&m->cluster, cta, cluster_space, dst, 1, &dst_rank, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    if ((rc = pa_copy_plan_place(&t->plan, pa_smem_offset(dst), m->cluster.smem_bytes, err)))
        return rc;
    if (multicast) {
        /* A ctaMask bit at or above the cluster size: the hardware fails the
         * launch (golden C10, cudaErrorLaunchFailure); the model faults at issue. */
        if (cta_mask >> m->cluster.nctas)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "ctaMask 0x%x names a CTA rank outside the cluster of %u CTAs "
                           "(the hardware fails the launch)",
                           cta_mask, m->cluster.nctas);
        /* ctaMask 0 is no error: the load reaches no CTA and signals no
         * mbarrier (golden C9). */
    } else {
        cta_mask = (uint16_t)(1u << dst_rank);
    }
    if ((rc = cta_group_check(m->target, cta_group, mbar, dst_rank, multicast, m->cluster.nctas, err)))
        return rc;
    /* the CTA whose mbarrier destination r signals */
    const uint32_t parity = pa_smem_rank(mbar) & 1u;
#define BAR_RANK(r) (cta_group == 2 ? ((r) & ~1u) | parity : (r))
    for (uint32_t r = 0; cta_group == 2 && r < m->cluster.nctas; r++)
        if (((cta_mask >> r) & 1u) && (rc = pa_check_mbar_addr(m, cta, pa_mapa(mbar, BAR_RANK(r)), err)))
            return rc;
    if (cta_group != 2 && (rc = pa_check_mbar_addr(m, cta, pa_mapa(mbar, dst_rank), err)))
        return rc;
    /* One operation per destination CTA: each gets the box at dst's offset and
     * credits its own mbarrier at mbar's offset with the whole box (golden C3). */
    t->smem_addr = dst;
    t->cta_group = (uint8_t)cta_group;
    t->bar_parity = (uint8_t)parity;
    pa_copy_prefetch(&t->plan, &m->global);
    for (uint32_t r = 0; r < m->cluster.nctas && !rc; r++) {
        if (!((cta_mask >> r) & 1u))
            continue;
        rc = pa_op_track_mbar(m, &op, BAR_RANK(r), mbar, l->tx_bytes, err);
        op.dst_rank = r;   /* the CTA written; the mbarrier tracked is BAR_RANK(r)'s */
        if (!rc)
            rc = pa_enqueue(m, &op, NULL, err);
    }
#undef BAR_RANK
    return rc;
}

int pa_issue_tile_load(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                       const int32_t coords[PA_MAX_RANK], uint32_t dst, int cluster_space,
                       uint32_t mbar, int multicast, uint16_t cta_mask, pa_error *err)
{
    return pa_issue_tensor_load(m, cta, thread, map, PA_MODE_TILE, coords, NULL, dst, cluster_space,
                                mbar, multicast, cta_mask, err);
}

int pa_issue_tensor_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                          pa_load_mode mode, const int32_t coords[PA_MAX_RANK], int ncoords, uint32_t src,
                          int is_reduce, pa_redop redop, pa_error *err)
{
    const pa_copy_dir dir = is_reduce ? PA_DIR_REDUCE : PA_DIR_STORE;
    int rc = pa_check_cta(m, cta, err);
    if (rc || (rc = pa_copy_target_check(m->target, map, mode, dir, err)))
        return rc;
    if (is_reduce && (rc = pa_reduce_tensor_check(redop, map->dtype, err)))
        return rc;
    pa_op op;
    pa_op_begin(&op, is_reduce ? &tensor_reduce : &tensor_store,
                is_reduce ? PA_OP_TENSOR_REDUCE : PA_OP_TILE_STORE, cta, thread);
    pa_tensor_payload *t = &op.u.tensor;
    if ((rc = pa_copy_plan_make(&t->plan, m->target, map, mode, dir, coords, ncoords, NULL, 0, err)))
        return rc;
    if (!pa_smem_resolve(&m->cluster, cta, 0, src, 1, NULL, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    uint32_t off = pa_smem_offset(src);
    if ((rc = pa_copy_plan_place(&t->plan, off, m->cluster.smem_bytes, err)))
        return rc;
    t->smem_addr = src;
    t->redop = redop;
    uint64_t lo, hi;   /* the span pa_copy_plan_place accepted */
    pa_copy_span(&t->plan.l, off, &lo, &hi);
    t->smem_span = (uint32_t)(hi - off);
    if ((rc = pa_op_track_group(m, &op, 0, err)))
        return rc;
    return pa_enqueue(m, &op, NULL, err);
}

int pa_issue_tile_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                        const int32_t coords[PA_MAX_RANK], uint32_t src, int is_reduce,
                        pa_redop redop, pa_error *err)
{
    return pa_issue_tensor_store(m, cta, thread, map, PA_MODE_TILE, coords, -1, src, is_reduce, redop, err);
}
