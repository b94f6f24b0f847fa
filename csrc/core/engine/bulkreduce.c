/* bulkreduce.c - cp.reduce.async.bulk to global (bulk_group) and to
 * shared::cluster (mbarrier); the arithmetic is reduce.c's. */
#include "../engine.h"

#include <inttypes.h>

/* The source as the reduction sees it: the bytes read by an earlier step, or
 * shared memory now. */
const uint8_t *pa_bulk_source(pa_machine *m, const pa_op *op)
{
    if (op->read_done)
        return op->staged;
    return m->cluster.smem[op->cta] + pa_smem_offset((uint32_t)op->u.bulk.src);
}

int pa_bulk_read(pa_machine *m, pa_op *op, pa_error *err)
{
    return pa_stage_smem(m, op, op->cta, pa_smem_offset((uint32_t)op->u.bulk.src), op->u.bulk.size, err);
}

static int reduce_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    const pa_bulk_payload *b = &op->u.bulk;
    uint8_t *dst;
    if (op->kind == PA_OP_BULK_REDUCE_GLOBAL)
        dst = pa_global_resolve(&m->global, b->dst, b->size, err);
    else
        dst = m->cluster.smem[op->dst_rank] + pa_smem_offset((uint32_t)b->dst);
    if (!dst)
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    pa_reduce_bulk_apply(b->redop, b->rtype, dst, pa_bulk_source(m, op), b->size / pa_rtype_bytes(b->rtype));
    if (op->kind == PA_OP_BULK_REDUCE_CLUSTER)
        return pa_credit(m, op->dst_rank, op->mbar_offset, op->tx_bytes, err);
    return PA_OK;
}

static const pa_engine bulk_reduce = {"cp.reduce.async.bulk", pa_bulk_read, reduce_complete, NULL, 0, NULL};

int pa_issue_bulk_reduce(pa_machine *m, uint32_t cta, uint32_t thread, pa_rdst dst_kind,
                         uint64_t dst, uint32_t src, uint32_t size, uint32_t mbar, pa_redop redop,
                         pa_rtype type, int noftz, pa_error *err)
{
    int to_global = dst_kind == PA_RDST_GLOBAL;
    int rc = pa_check_cta(m, cta, err);
    if (rc || (rc = pa_target_require(m->target, PA_FEAT_BULK_COPY, err)) ||
        (rc = pa_reduce_bulk_check(redop, type, noftz, dst_kind, err)))
        return rc;
    /* PTX cp.reduce.async.bulk: size a multiple of 16, addresses 16-byte aligned. */
    if (size % 16)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "size %u is not a multiple of 16", size);
    if (src % 16)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "srcMem 0x%x is not 16-byte aligned", src);
    if (dst % 16)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "dstMem 0x%" PRIx64 " is not 16-byte aligned", dst);
    if (!pa_smem_resolve(&m->cluster, cta, 0, src, size, NULL, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    pa_op op;
    pa_op_begin(&op, &bulk_reduce, to_global ? PA_OP_BULK_REDUCE_GLOBAL : PA_OP_BULK_REDUCE_CLUSTER, cta,
                thread);
    if (to_global) {
        if (!pa_global_resolve(&m->global, dst, size, err))
            return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
        rc = pa_op_track_group(m, &op, 0, err);
    } else {
        uint32_t rank;
        if (!pa_smem_resolve(&m->cluster, cta, 1, (uint32_t)dst, size, &rank, err))
            return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
        if ((rc = pa_check_mbar_addr(m, cta, pa_mapa(mbar, rank), err)))
            return rc;
        /* The destination CTA's mbarrier at mbar's offset is credited (golden C15). */
        rc = pa_op_track_mbar(m, &op, rank, mbar, size, err);
    }
    if (rc)
        return rc;
    op.u.bulk.dst = dst;
    op.u.bulk.src = src;
    op.u.bulk.size = size;
    op.u.bulk.redop = redop;
    op.u.bulk.rtype = type;
    return pa_enqueue(m, &op, NULL, err);
}
