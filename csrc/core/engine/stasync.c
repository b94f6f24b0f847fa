/* stasync.c - st.async (a register store to another CTA's shared memory with
 * complete_tx) and st.bulk (zero a range of shared memory).
 *
 * st.async{.weak}.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type:
 * the bytes are the register values unchanged (golden C7, NaN payloads
 * included); the mbarrier at mbar's offset in the destination CTA is credited
 * with the bytes stored (C7, C15: where mbar names another CTA, the hardware
 * still credited the destination's barrier).
 */
#include "../engine.h"

#include <string.h>

static int st_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    const pa_st_async_payload *s = &op->u.st;
    memcpy(m->cluster.smem[op->dst_rank] + pa_smem_offset(s->dst), s->bytes, s->size);
    return pa_credit(m, op->dst_rank, op->mbar_offset, op->tx_bytes, err);
}

static const pa_engine st_async = {"st.async", NULL, st_complete, NULL, 0, NULL};

int pa_issue_st_async(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint32_t mbar,
                      const uint8_t *bytes, uint32_t elem_bytes, uint32_t vec, pa_error *err)
{
    int rc = pa_check_cta(m, cta, err);
    if (rc)
        return rc;
    /* .type: .b32 .u32 .s32 .f32 .b64 .u64 .s64 .f64; .vec: none, .v2, .v4
     * (ptxas: .v4 of a 64-bit type "exceeds 128 bit limit", golden C17). */
    if (elem_bytes != 4 && elem_bytes != 8)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "st.async stores 32- or 64-bit elements, not %u bytes",
                       elem_bytes);
    if (vec != 1 && vec != 2 && vec != 4)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "st.async vector length %u is not 1, 2 or 4", vec);
    if (elem_bytes * vec > 16)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "st.async.v4 of a 64-bit type exceeds the 128-bit limit (ptxas rejects it)");
    /* PTX ISA st.async (.weak): "The number of CTAs within the cluster is
     * strictly greater than one", otherwise undefined. */
    if (m->cluster.nctas < 2)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "st.async needs a cluster of more than one CTA (%%cluster_nctarank > 1); "
                       "this machine has 1");
    uint32_t size = elem_bytes * vec;
    /* Addresses as operands: aligned to the access size (golden C16: a .v2.s32
     * store at 4 mod 8 raised cudaErrorMisalignedAddress). */
    if (dst % size)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "st.async address 0x%x is not %u-byte aligned", dst,
                       size);
    uint32_t rank;
    if (!pa_smem_resolve(&m->cluster, cta, 1, dst, size, &rank, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    if ((rc = pa_check_mbar_addr(m, cta, pa_mapa(mbar, rank), err)))
        return rc;
    pa_op op;
    pa_op_begin(&op, &st_async, PA_OP_ST_ASYNC, cta, thread);
    op.u.st.dst = dst;
    op.u.st.size = size;
    memcpy(op.u.st.bytes, bytes, size);
    if ((rc = pa_op_track_mbar(m, &op, rank, mbar, size, err)))
        return rc;
    return pa_enqueue(m, &op, NULL, err);
}

/* st.async{.mmio}.release.scope{.global}.type [a], b: "a release store to
 * global memory", strong, .release at .gpu or .sys scope; with no completion
 * mechanism "the completion of the store synchronizes with the end of the
 * CTA": nothing waits for it, and it is done by the time the CTA exits
 * (Machine.finish, run, step). The model has no memory-order model beyond
 * that: the value lands whole when the operation completes. */
static int st_release_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    const pa_st_async_payload *s = &op->u.st;
    uint8_t *p = pa_global_resolve(&m->global, s->gdst, s->size, err);
    if (!p)
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);   /* the buffer was removed meanwhile */
    memcpy(p, s->bytes, s->size);
    return PA_OK;
}

static const pa_engine st_async_release = {"st.async.release.global", NULL, st_release_complete, NULL, 0, NULL};

int pa_issue_st_async_release(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t dst,
                              const uint8_t *bytes, uint32_t size, int scope_sys, int mmio, pa_error *err)
{
    int rc = pa_check_cta(m, cta, err);
    if (rc || (rc = pa_target_require(m->target, PA_FEAT_ST_ASYNC_RELEASE, err)))
        return rc;
    /* .type: .b8 .b16 .b32 .b64 (.u, .s alike), .f32 .f64; no vector form. */
    if (size != 1 && size != 2 && size != 4 && size != 8)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "st.async.release.global stores 8-, 16-, 32- or 64-bit values, not %u bytes", size);
    /* PTX ISA st.async: "If .mmio is specified, .scope must be .sys". */
    if (mmio && !scope_sys)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "st.async.mmio.release needs .scope .sys, not .gpu");
    /* Addresses as Operands: aligned to the access size. */
    if (dst % size)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS,
                       "st.async.release.global address 0x%llx is not %u-byte aligned",
                       (unsigned long long)dst, size);
    /* .global (or a generic address in the .global window; else undefined):
     * the bytes must be global memory. */
    if (!pa_global_resolve(&m->global, dst, size, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    pa_op op;
    pa_op_begin(&op, &st_async_release, PA_OP_ST_ASYNC_RELEASE, cta, thread);
    op.u.st.gdst = dst;
    op.u.st.size = size;
    op.u.st.scope_sys = (uint8_t)(scope_sys != 0);
    op.u.st.mmio = (uint8_t)(mmio != 0);
    memcpy(op.u.st.bytes, bytes, size);
    return pa_enqueue(m, &op, NULL, err);   /* tracked by nothing: done by the CTA's end */
}

int pa_st_bulk(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint64_t size, uint64_t initval,
               pa_error *err)
{
    (void)thread;
    int rc = pa_check_cta(m, cta, err);
    if (rc || (rc = pa_target_require(m->target, PA_FEAT_ST_BULK, err)))
        return rc;
    /* PTX ISA st.bulk: "The only numeric value allowed for operand initval is 0";
     * "size must be a multiple of 8"; "The maximum value of size operand can be 16777216". */
    if (initval != 0)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "st.bulk initval %llu: the only value allowed is 0",
                       (unsigned long long)initval);
    if (size % 8)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "st.bulk size %llu is not a multiple of 8",
                       (unsigned long long)size);
    if (size > 16777216u)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "st.bulk size %llu is larger than 16777216",
                       (unsigned long long)size);
    /* .shared::cta: the executing CTA's shared memory. */
    uint8_t *p = pa_smem_resolve(&m->cluster, cta, 0, dst, size ? (uint32_t)size : 1, NULL, err);
    if (!p)
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    memset(p, 0, (size_t)size);   /* a weak store: done when the instruction is */
    return PA_OK;
}
