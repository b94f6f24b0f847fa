/* queueview.c - what the checker reads of the pending operations: the one
 * file that knows the queue's layout (see watch.h). */
#include "watch.h"

size_t pa_qv_signalers(const pa_machine *m, uint32_t rank, uint32_t offset, uint64_t *tx,
                       uint32_t *arrivals)
{
    *tx = 0;
    if (arrivals)
        *arrivals = 0;
    for (size_t i = 0; i < m->nmbars; i++) {
        const pa_mbar_slot *s = m->mbars[i];
        if (s->cta != rank || s->offset != offset)
            continue;
        size_t n = 0;
        for (uint32_t k = 0; k < s->ops.n; k++) {
            const pa_op *op = &m->pool[s->ops.dense[k]];
            n += 1 + (size_t)op->merged;   /* a run record: its loads, each crediting tx_bytes */
            *tx += op->tx_bytes * (1 + (uint64_t)op->merged);
            /* cp.async.mbarrier.arrive: an arrive-on once the thread's copies are done */
            if (arrivals && op->kind == PA_OP_CP_ASYNC_ARRIVE &&
                (op->u.arrive.noinc || op->u.arrive.incremented))
                ++*arrivals;
        }
        return n;
    }
    return 0;
}

static pa_range shared(uint32_t rank, uint64_t addr, uint64_t len)
{
    pa_range r = {1, rank, pa_smem_offset((uint32_t)addr), len};
    return r;
}

static pa_range global(uint64_t addr, uint64_t len)
{
    pa_range r = {2, 0, addr, len};
    return r;
}

void pa_qv_ranges(const pa_op *op, pa_range *src, pa_range *dst, int *reduce)
{
    const pa_range none = {0, 0, 0, 0};
    *src = none;   /* not *src = *dst = none: that reads *dst back while its stores are in flight */
    *dst = none;
    *reduce = 0;   /* 1: the destination keeps what it held (reductions, masked copies) */
    const pa_bulk_payload *b = &op->u.bulk;
    switch (op->kind) {
    case PA_OP_TILE_LOAD:   /* the box lands contiguously at dst (global side: strided, not tracked) */
        *dst = shared(op->dst_rank, op->u.tensor.smem_addr, op->tx_bytes);
        break;
    case PA_OP_TENSOR_REDUCE:
        *reduce = 1;
        /* fall through */
    case PA_OP_TILE_STORE:
        *src = shared(op->cta, op->u.tensor.smem_addr, op->u.tensor.smem_span);
        break;
    case PA_OP_BULK_REDUCE_GLOBAL:
        *reduce = 1;
        *src = shared(op->cta, b->src, b->size);
        *dst = global(b->dst, b->size);
        break;
    case PA_OP_BULK_REDUCE_CLUSTER:
        *reduce = 1;
        *src = shared(op->cta, b->src, b->size);
        *dst = shared(op->dst_rank, b->dst, b->size);
        break;
    case PA_OP_BULK_COPY_G2S:
        *src = global(b->src, b->size);
        *dst = shared(op->dst_rank, b->dst, b->size);
        break;
    case PA_OP_BULK_COPY_S2S:
        *src = shared(op->cta, b->src, b->size);
        *dst = shared(op->dst_rank, b->dst, b->size);
        break;
    case PA_OP_BULK_COPY_S2G:
        *src = shared(op->cta, b->src, b->size);
        *dst = global(b->dst, b->size);
        *reduce = b->cp_mask && b->byte_mask != 0xFFFF;   /* keeps the bytes it masks out */
        break;
    case PA_OP_CP_ASYNC:   /* a run record (engine/cprun.c): its copies' ranges, back to back */
        *src = global(op->u.cp.src, (uint64_t)op->u.cp.src_size * (op->merged + 1));
        *dst = shared(op->dst_rank, op->u.cp.dst, (uint64_t)op->u.cp.cp_size * (op->merged + 1));
        break;
    case PA_OP_ST_ASYNC:
        *dst = shared(op->dst_rank, op->u.st.dst, op->u.st.size);
        break;
    case PA_OP_RED_ASYNC:          /* read-modify-write: the old bytes are an operand */
        *dst = shared(op->dst_rank, op->u.st.dst, op->u.st.size);
        *reduce = 1;
        break;
    case PA_OP_ST_ASYNC_RELEASE:   /* a strong store: never poisoned (a reader sees old or new) */
        *dst = global(op->u.st.gdst, op->u.st.size);
        *reduce = 1;
        break;
    default:
        break;
    }
}

uint32_t pa_qv_slot_of(const pa_machine *m, const pa_op *op)
{
    if (m->pool && op >= m->pool && op < m->pool + m->cappool)
        return (uint32_t)(op - m->pool);
    /* pa_enqueue copies it into the free list's head, or into the first slot the pool grows by */
    return m->free_head != PA_NIL ? m->free_head : m->cappool;
}
