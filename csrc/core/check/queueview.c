/* queueview.c - what the checker reads of the pending operations: the one
 * file that knows the queue's layout (see watch.h). */
#include "watch.h"

/* Does op credit the mbarrier at (rank, offset)? (The hardware signals the
 * barrier at the operand's offset in each destination CTA, golden C3, C15.) */
static int credits(const pa_op *op, uint32_t rank, uint32_t offset)
{
    if (pa_smem_offset(op->mbar_addr) != offset)
        return 0;
    if (op->kind == PA_OP_TILE_LOAD)
        return (op->cta_mask >> rank) & 1u;
    if (op->kind == PA_OP_BULK_REDUCE_CLUSTER)
        return pa_smem_rank(op->smem_dst) == rank;
    return 0;
}

size_t pa_qv_signalers(const pa_machine *m, uint32_t rank, uint32_t offset, uint64_t *tx)
{
    size_t n = 0;
    *tx = 0;
    for (size_t i = 0; i < m->nops; i++) {
        const pa_op *op = &m->ops[i];
        if (!credits(op, rank, offset))
            continue;
        n++;
        *tx += op->kind == PA_OP_TILE_LOAD ? op->tx_bytes : op->size;
    }
    return n;
}
