/* tensor.c - the tensor engine: cp.async.bulk.tensor loads and stores,
 * cp.reduce.async.bulk.tensor (layouts and walks: tensorcopy.c). */
#include "../defer.h"
#include "../engine.h"
#include "../modes.h"
#include "../subbyte.h"

#include <string.h>

static int load_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    const pa_tensor_payload *t = &op->u.tensor;
    int taken;   /* a replay on threads may copy the bytes later (defer.h) */
    int rc = pa_defer_load(m, op, &taken, err);
    if (!rc && !taken)
        rc = pa_tensor_load_exec(&t->map, t->mode, t->coords, t->offsets, &m->global,
                                 pa_smem_of(m, op->dst_rank), pa_smem_offset(t->smem_addr), err);
    /* .cta_group::2: the mbarrier of the pair's CTA with mbar's rank parity (modes.h) */
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
        return pa_tensor_store_exec(&t->map, t->mode, t->coords, &m->global, v, src, NULL, NULL, err);
    pa_reducer ctx;
    if (pa_reducer_tensor(&ctx, t->redop, t->map.dtype))
        return pa_reduce_tensor_check(t->redop, t->map.dtype, err);
    return pa_tensor_store_exec(&t->map, t->mode, t->coords, &m->global, v, src, reduce_run, &ctx, err);
}

static const pa_engine tensor_load = {"cp.async.bulk.tensor (load)", NULL, load_complete};
static const pa_engine tensor_store = {"cp.async.bulk.tensor (store)", store_read, store_complete};
static const pa_engine tensor_reduce = {"cp.reduce.async.bulk.tensor", store_read, store_complete};

/* The layout of a tensor copy after its issue-time checks (faults named). */
static int tensor_issue_checks(const pa_tensormap *map, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                               const uint16_t offsets[PA_MAX_RANK - 2], int is_store, pa_box_layout *l,
                               pa_error *err)
{
    if (pa_modes_handles(map, mode))   /* the sm_100 modes, sub-byte types (modes.h) */
        return pa_modes_issue_checks(map, mode, coords, offsets, is_store, l, err);
    if (mode == PA_MODE_TILE) {
        int rc = pa_tile_check_coords(map, coords, is_store, err);
        return rc ? rc : pa_box_layout_tile(map, l, err);
    }
    if (mode == (is_store ? PA_MODE_IM2COL : PA_MODE_IM2COL_NO_OFFS) || mode > PA_MODE_IM2COL_NO_OFFS)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "load mode %d is not a %s mode (.tile, %s)", (int)mode,
                       is_store ? "store-direction" : "load-direction",
                       is_store ? ".im2col_no_offs" : ".im2col");
    int rc = pa_box_layout_im2col(map, l, err);
    return rc ? rc : pa_im2col_check(map, mode, coords, offsets, err);
}

int pa_issue_tensor_load(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                         pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                         const uint16_t offsets[PA_MAX_RANK - 2], uint32_t dst, int cluster_space,
                         uint32_t mbar, int multicast, uint16_t cta_mask, pa_error *err)
{
    return pa_issue_tensor_load_group(m, cta, thread, map, mode, coords, offsets, dst, cluster_space, mbar,
                                      multicast, cta_mask, 0, err);
}

int pa_issue_tensor_load_group(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                               pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                               const uint16_t offsets[PA_MAX_RANK - 2], uint32_t dst, int cluster_space,
                               uint32_t mbar, int multicast, uint16_t cta_mask, int cta_group,
                               pa_error *err)
{
    int rc = pa_check_cta(m, cta, err);
    if (rc || (rc = pa_modes_target_check(m->target, map, mode,
                                          cluster_space || multicast ? PA_DIR_LOAD_CLUSTER : PA_DIR_LOAD,
                                          err)))
        return rc;
    pa_box_layout l;
    if ((rc = tensor_issue_checks(map, mode, coords, offsets, 0, &l, err)))
        return rc;
    uint32_t dst_rank;
    if (!pa_smem_resolve(&m->cluster, cta, cluster_space, dst, 1, &dst_rank, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    if ((rc = pa_tile_check_smem(map, &l, pa_smem_offset(dst), m->cluster.smem_bytes, err)))
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
    if ((rc = pa_modes_cta_group_check(m->target, cta_group, mbar, dst_rank, multicast, m->cluster.nctas,
                                       err)))
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
    pa_op op;
    pa_op_begin(&op, &tensor_load, PA_OP_TILE_LOAD, cta, thread);
    pa_tensor_payload *t = &op.u.tensor;
    t->map = *map;
    t->mode = mode;
    memcpy(t->coords, coords, sizeof t->coords);
    if (offsets)
        memcpy(t->offsets, offsets, sizeof t->offsets);
    t->smem_addr = dst;
    t->cta_group = (uint8_t)cta_group;
    t->bar_parity = (uint8_t)parity;
    for (uint32_t r = 0; r < m->cluster.nctas && !rc; r++) {
        if (!((cta_mask >> r) & 1u))
            continue;
        rc = pa_op_track_mbar(m, &op, BAR_RANK(r), mbar, l.tx_bytes, err);
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
                          pa_load_mode mode, const int32_t coords[PA_MAX_RANK], uint32_t src,
                          int is_reduce, pa_redop redop, pa_error *err)
{
    int rc = pa_check_cta(m, cta, err);
    if (rc || (rc = pa_modes_target_check(m->target, map, mode, is_reduce ? PA_DIR_REDUCE : PA_DIR_STORE,
                                          err)))
        return rc;
    pa_box_layout l;
    if (is_reduce && (rc = pa_reduce_tensor_check(redop, map->dtype, err)))
        return rc;
    if ((rc = tensor_issue_checks(map, mode, coords, NULL, 1, &l, err)))
        return rc;
    if (!is_reduce && (rc = pa_subbyte_store_target_check(m->target, map, coords, err)))
        return rc;

    if (!pa_smem_resolve(&m->cluster, cta, 0, src, 1, NULL, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    uint32_t off = pa_smem_offset(src);
    if ((rc = pa_tile_check_smem(map, &l, off, m->cluster.smem_bytes, err)))
        return rc;
    pa_op op;
    pa_op_begin(&op, is_reduce ? &tensor_reduce : &tensor_store,
                is_reduce ? PA_OP_TENSOR_REDUCE : PA_OP_TILE_STORE, cta, thread);
    pa_tensor_payload *t = &op.u.tensor;
    t->map = *map;
    t->mode = mode;
    memcpy(t->coords, coords, sizeof t->coords);
    t->smem_addr = src;
    t->redop = redop;
    /* The span pa_tile_check_smem accepted: rows, then the swizzle's 128-byte line. */
    uint64_t end = (uint64_t)off + (l.rows ? (l.rows - 1) * l.pitch : 0) + l.row_bytes;
    if (l.swizzle != PA_SWIZZLE_NONE)
        end = (end + 127) & ~(uint64_t)127;
    t->smem_span = (uint32_t)(end - off);
    if ((rc = pa_op_track_group(m, &op, 0, err)))
        return rc;
    return pa_enqueue(m, &op, NULL, err);
}

int pa_issue_tile_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                        const int32_t coords[PA_MAX_RANK], uint32_t src, int is_reduce,
                        pa_redop redop, pa_error *err)
{
    return pa_issue_tensor_store(m, cta, thread, map, PA_MODE_TILE, coords, src, is_reduce, redop, err);
}
