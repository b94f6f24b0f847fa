/* machine.c - a machine assembled: the queue (engine/queue.h) with the
 * checker's signal, group and free hooks (check/watch.h), so the queue and
 * the engines call the checker without naming it. */
#include "engine.h"
#include "check/watch.h"

#include <inttypes.h>

int pa_machine_init(pa_machine *m, uint32_t nctas, uint32_t smem_bytes, pa_error *err)
{
    int rc = pa_queue_init(m, nctas, smem_bytes, err);
    pa_watch_hooks(m);   /* also on failure: pa_machine_free then frees what init made */
    return rc;
}

/* The global bytes [*lo, *hi) a pending operation may still reach; 0 if none. */
static int global_reach(const pa_op *op, uint64_t *lo, uint64_t *hi)
{
    if (op->kind == PA_OP_TILE_LOAD || op->kind == PA_OP_TILE_STORE || op->kind == PA_OP_TENSOR_REDUCE) {
        pa_copy_tensor_extent(&op->u.tensor.plan.map, lo, hi);
        return 1;
    }
    pa_range src, dst;
    int reduce;
    pa_qv_ranges(op, &src, &dst, &reduce);
    const pa_range *r = src.space == 2 ? &src : dst.space == 2 ? &dst : NULL;
    if (!r || !r->len)
        return 0;
    *lo = r->addr;
    *hi = r->addr + r->len;
    return 1;
}

int pa_machine_remove_buffer(pa_machine *m, uint64_t id, pa_error *err)
{
    const pa_gbuf *b = NULL;
    for (size_t i = 0; i < m->global.n && !b; i++)
        if (m->global.bufs[i].id == id)
            b = &m->global.bufs[i];
    if (!b)
        return pa_global_remove(&m->global, id, err);   /* names the unknown id */
    const uint64_t blo = b->base, bhi = b->base + b->size;
    for (uint32_t k = m->all.head; k != PA_NIL; k = m->pool[k].link_all.next) {
        const pa_op *op = &m->pool[k];
        uint64_t lo, hi;
        if (global_reach(op, &lo, &hi) && lo < bhi && blo < hi)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "the global buffer [0x%" PRIx64 ", 0x%" PRIx64 ") cannot be freed: operation #%" PRIu64
                           " (%s) is still pending on global [0x%" PRIx64 ", 0x%" PRIx64 ")%s; wait for it "
                           "(or Machine.run()) first: completing later, it would reach whatever is registered "
                           "there next",
                           blo, bhi, op->seq, op->engine->name, lo, hi,
                           op->kind <= PA_OP_TENSOR_REDUCE ? ", its tensor map's tensor" : "");
    }
    return pa_global_remove(&m->global, id, err);
}
