/* exit.c - a thread or a CTA exits (PTX exit): what it leaves pending and
 * nobody can wait for any more is never-waited, reported there rather than
 * only when the whole kernel ends (finish).
 *
 *   a thread exits   the operations its async-groups track (bulk and cp.async
 *                    groups are per thread: no other thread can wait for
 *                    them). Operations that signal an mbarrier are not its
 *                    alone: another thread may wait on the barrier.
 *   a CTA exits      the operations its threads' groups track, and every
 *                    operation that reads or writes its shared memory or
 *                    signals an mbarrier in it, whoever issued it (the memory
 *                    is gone). An operation of its threads between global
 *                    memory and other CTAs is not its memory's: not reported.
 *                    st.async.release.global is the exception the ISA makes:
 *                    its completion "synchronizes with the end of the CTA",
 *                    so the exit completes it.
 *
 * In raise mode the first one raises and nothing changes (the thread has not
 * exited); in report mode each is recorded, then the operations complete
 * (the hardware finishes them some time) and the threads' waits are
 * forgotten (an exited thread is blocked nowhere).
 */
#include "watch.h"

#include <inttypes.h>
#include <stdlib.h>

/* A copy or reduction from shared memory into global memory whose source has
 * been read (cp.async.bulk.wait_group.read covered it): nothing of the CTA is
 * left to it, and the hardware finishes the write after the thread exits
 * (how CUTLASS's and Triton's epilogues end: wait_group.read 0, then exit). */
static int read_and_global(const pa_op *op)
{
    return op->read_done && (op->kind == PA_OP_TILE_STORE || op->kind == PA_OP_TENSOR_REDUCE ||
                             op->kind == PA_OP_BULK_REDUCE_GLOBAL || op->kind == PA_OP_BULK_COPY_S2G);
}

/* 0: not left behind by the exit; 1: left behind, never waited for; 2: the
 * exit completes it (st.async.release.global of the exiting CTA, a store to
 * global memory whose source was read). */
static int leaves(const pa_machine *m, const pa_op *op, uint32_t cta, uint32_t thread)
{
    int grouped = op->track != PA_TRACK_MBAR && op->track != PA_TRACK_NONE;
    if (thread != PA_NO_THREAD)
        return op->cta == cta && op->thread == thread && grouped ? (read_and_global(op) ? 2 : 1) : 0;
    if (op->cta == cta && (op->kind == PA_OP_ST_ASYNC_RELEASE || (grouped && read_and_global(op))))
        return 2;
    if (op->cta == cta && grouped)
        return 1;
    pa_range src, dst;
    int reduce;
    pa_qv_ranges(op, &src, &dst, &reduce);
    return (src.space == 1 && src.rank == cta) || (dst.space == 1 && dst.rank == cta) ||
           (op->track == PA_TRACK_MBAR && m->mbars[op->track_index]->cta == cta);
}

static const char *why(const pa_op *op, uint32_t thread)
{
    if (op->track == PA_TRACK_BULK_OPEN || op->track == PA_TRACK_CP_OPEN)
        return "it was issued after the thread's last commit_group";
    if (op->track == PA_TRACK_BULK_COMMITTED || op->track == PA_TRACK_CP_COMMITTED)
        return thread != PA_NO_THREAD ? "its async-group was never waited for, and only its thread can wait"
                                      : "its async-group was never waited for";
    return "it reads or writes the exiting CTA's shared memory, or signals an mbarrier there, and "
           "its mbarrier phase was never waited on";
}

static void forget_waits(pa_machine *m, uint32_t cta, uint32_t thread)
{
    pa_watch *w = m->watch;
    w->idx_stale = 1;
    pa_waiter *const x = w->waiters;   /* every thread's exit reads the whole table: */
    size_t n = w->nwaiters;            /* one test a waiter, the thread first */
    if (thread == PA_NO_THREAD) {
        for (size_t i = 0; i < n;)
            if (x[i].cta == cta)
                x[i] = x[--n];
            else
                i++;
    } else {
        for (size_t i = 0; i < n;)
            if (x[i].thread == thread && x[i].cta == cta)
                x[i] = x[--n];
            else
                i++;
    }
    w->nwaiters = n;
}

int pa_watch_exit(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err)
{
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                       m->cluster.nctas);
    if (!m->watch)
        return PA_OK;
    size_t n = 0;
    for (uint32_t id = m->all.head; id != PA_NIL; id = m->pool[id].link_all.next)
        n += leaves(m, &m->pool[id], cta, thread) != 0;
    uint32_t *ids = n ? malloc(n * sizeof *ids) : NULL;
    if (n && !ids)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the exit");
    size_t k = 0;
    for (uint32_t id = m->all.head; id != PA_NIL; id = m->pool[id].link_all.next) {
        const pa_op *op = &m->pool[id];
        if (!leaves(m, op, cta, thread))
            continue;
        ids[k++] = id;
        if (leaves(m, op, cta, thread) == 2)
            continue;   /* synchronizes with the end of the CTA: the exit completes it */
        int rc;
        if (thread != PA_NO_THREAD)
            rc = pa_hazard(&m->watch->hz, err, PA_HZ_NEVER_WAITED,
                           "thread %u of CTA %u exits with %s #%" PRIu64 " pending: %s",
                           thread, cta, op->engine && op->engine->name ? op->engine->name : "operation",
                           op->seq, why(op, thread));
        else
            rc = pa_hazard(&m->watch->hz, err, PA_HZ_NEVER_WAITED,
                           "CTA %u exits with %s #%" PRIu64 " (CTA %u thread %u) pending: %s (its shared "
                           "memory is gone before the operation reads or writes it)",
                           cta, op->engine && op->engine->name ? op->engine->name : "operation", op->seq,
                           op->cta, op->thread, why(op, thread));
        if (rc) {
            free(ids);
            return rc;
        }
    }
    int rc = PA_OK;
    for (size_t i = 0; i < k && !rc; i++)   /* issue order; a slot is reused only after it completes */
        if (m->pool[ids[i]].pending)
            rc = pa_complete_id(m, ids[i], err);
    free(ids);
    if (!rc)
        forget_waits(m, cta, thread);
    return rc;
}
