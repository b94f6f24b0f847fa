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
        const pa_mbar_slot *s = &m->mbars[i];
        if (s->cta != rank || s->offset != offset)
            continue;
        for (uint32_t k = 0; k < s->ops.n; k++) {
            const pa_op *op = &m->pool[s->ops.dense[k]];
            *tx += op->tx_bytes;
            /* cp.async.mbarrier.arrive: an arrive-on once the thread's copies are done */
            if (arrivals && op->kind == PA_OP_CP_ASYNC_ARRIVE &&
                (op->u.arrive.noinc || op->u.arrive.incremented))
                ++*arrivals;
        }
        return s->ops.n;
    }
    return 0;
}
