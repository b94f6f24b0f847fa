/* redasync.c - red.async: a reduction into another CTA's shared memory, completing on an
 * mbarrier there (sm_90, PTX 8.1).
 *
 * red.async.relaxed.cluster{.shared::cluster}.mbarrier::complete_tx::bytes.op.type [a], b, [mbar]:
 * like st.async (stasync.c), but at completion the destination becomes dest op b, by the rule
 * every reduction of the model uses (reduce.c: inc/dec wrap as atom's, min/max signed or not);
 * the mbarrier at mbar's offset in the destination CTA is credited with the bytes of .type (PTX
 * ISA, red.async: "complete-tx ... with completeCount equal to the amount of data stored in
 * bytes"). The ops and types are the ISA's table: .inc/.dec .u32; .min/.max .u32/.s32; .and/.or/
 * .xor .b32; .add .u32/.s32/.u64.
 */
#include "../engine.h"
#include "../reduce.h"

#include <string.h>

static int red_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    const pa_st_async_payload *s = &op->u.st;
    uint8_t *p = m->cluster.smem[op->dst_rank] + pa_smem_offset(s->dst);
    uint64_t d = 0, v = 0;
    memcpy(&d, p, s->size);             /* little-endian host: the model's byte order */
    memcpy(&v, s->bytes, s->size);
    uint64_t r = pa_reduce_elem((pa_redop)s->redop, (pa_ekind)s->ekind, d, v);
    memcpy(p, &r, s->size);
    return pa_credit(m, op->dst_rank, op->mbar_offset, op->tx_bytes, err);
}

static const pa_engine red_async = {"red.async", NULL, red_complete, NULL, 0, NULL};

static int in_table(pa_redop op, pa_ekind k)
{
    switch (op) {
    case PA_RED_INC:
    case PA_RED_DEC:
    case PA_RED_AND:
    case PA_RED_OR:
    case PA_RED_XOR: return k == PA_EK_U32;
    case PA_RED_MIN:
    case PA_RED_MAX: return k == PA_EK_U32 || k == PA_EK_S32;
    case PA_RED_ADD: return k == PA_EK_U32 || k == PA_EK_S32 || k == PA_EK_U64;
    default: return 0;
    }
}

int pa_issue_red_async(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint32_t mbar, uint64_t value,
                       pa_redop redop, pa_ekind kind, pa_error *err)
{
    int rc = pa_check_cta(m, cta, err);
    if (rc)
        return rc;
    if (!in_table(redop, kind))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "red.async.%s is not in the ISA's table for this type (.inc/.dec "
                       ".u32; .min/.max .u32/.s32; .and/.or/.xor .b32; .add .u32/.s32/.u64)",
                       pa_redop_name(redop) ? pa_redop_name(redop) : "?");
    uint32_t size = kind == PA_EK_U64 ? 8 : 4;
    /* Addresses as operands: aligned to the access size */
    if (dst % size)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "red.async address 0x%x is not %u-byte aligned", dst, size);
    uint32_t rank;
    if (!pa_smem_resolve(&m->cluster, cta, 1, dst, size, &rank, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    if ((rc = pa_check_mbar_addr(m, cta, pa_mapa(mbar, rank), err)))
        return rc;
    pa_op op;
    pa_op_begin(&op, &red_async, PA_OP_RED_ASYNC, cta, thread);
    op.u.st.dst = dst;
    op.u.st.size = size;
    op.u.st.redop = (uint8_t)redop;
    op.u.st.ekind = (uint8_t)kind;
    memcpy(op.u.st.bytes, &value, size);
    if ((rc = pa_op_track_mbar(m, &op, rank, mbar, size, err)))
        return rc;
    return pa_enqueue(m, &op, NULL, err);
}
