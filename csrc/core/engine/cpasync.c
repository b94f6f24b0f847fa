/* cpasync.c - the cp.async engine: cp.async.{ca,cg}.shared.global, its
 * per-thread cp.async-groups and cp.async.mbarrier.arrive{.noinc}.
 *
 *   dst[0, src-size)        = global[src, src + src-size)
 *   dst[src-size, cp-size)  = 0                 (ignore-src: src-size = 0)
 * golden observation 13 (136 of 136 cases). The copy reads and writes when
 * it completes; the cache operator, .L2::cache_hint and .L2::{64B,128B,256B}
 * are performance hints, recorded in the operation and otherwise ignored.
 */
#include "cprun.h"

#include <inttypes.h>
#include <string.h>

/* A copy that continues the run of the machine's newest record grows it
 * (cprun.h; a run of copies is one record, cprun.c). */
int pa_cp_extend_run(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint64_t src,
                     const pa_cp_async_args *a, uint32_t n)
{
    const uint32_t id = m->all.tail;
    if (id == PA_NIL || !pa_queue_runs_merge(m))
        return 0;
    pa_op *op = &m->pool[id];
    const pa_cp_async_payload *c = &op->u.cp;
    if (a->ignore_src || a->src_size != a->cp_size || op->kind != PA_OP_CP_ASYNC || op->track != PA_TRACK_CP_OPEN || op->cta != cta || op->thread != thread ||
        c->cp_size != a->cp_size || c->src_size != c->cp_size || c->cache != (a->cg != 0) ||
        c->prefetch != a->prefetch || c->hint != (a->cache_hint != 0) || n > UINT32_MAX / 32 - op->merged)
        return 0;
    const uint64_t len = (uint64_t)c->cp_size * (op->merged + 1);
    /* the whole run in one global buffer: its completion is one move */
    if ((uint64_t)c->dst + len != dst || c->src + len != src ||
        !pa_global_resolve(&m->global, c->src, len + (uint64_t)n * c->cp_size, NULL))
        return 0;
    op->merged += n;
    m->next_seq += n;
    m->nops += n;
    return 1;
}

static int copy_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    const pa_cp_async_payload *c = &op->u.cp;
    uint8_t *dst = m->cluster.smem[op->cta] + pa_smem_offset(c->dst);
    if (op->merged) {   /* a run of whole copies (extend_run): one long move */
        const size_t n = (size_t)c->cp_size * ((size_t)op->merged + 1);
        const uint8_t *src = pa_global_resolve(&m->global, c->src, n, err);
        if (!src)
            return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
        memcpy(dst, src, n);
        return PA_OK;
    }
    if (c->src_size) {
        const uint8_t *src = pa_global_resolve(&m->global, c->src, c->src_size, err);
        if (!src)
            return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
        if (c->src_size == 16) {   /* the common whole 16 bytes: one fixed-size move, not a string one */
            memcpy(dst, src, 16);
            return PA_OK;
        }
        memcpy(dst, src, c->src_size);
    }
    memset(dst + c->src_size, 0, (size_t)(c->cp_size - c->src_size));
    return PA_OK;
}

/* The arrive-on happens once every earlier cp.async of the thread has
 * completed: complete those first (oldest first), then arrive. */
static int arrive_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    int rc = pa_cp_complete_before(m, op->u.arrive.thread_index, op->seq, err);
    if (rc)
        return rc;
    if (!op->u.arrive.noinc && !op->u.arrive.incremented)
        return PA_OK;   /* nothing was pending at issue: +1 and -1 cancel */
    long i = pa_mbar_slot_index(m, op->dst_rank, op->mbar_offset, 0, err);
    if (i < 0)
        return pa_fail(err, PA_ERR_HAZARD, "cp.async.mbarrier.arrive: no mbarrier at 0x%x (undefined behaviour)",
                       op->mbar_offset);
    return pa_signal_slot(m, (size_t)i, 0, op, err);   /* the arrive-on (checked and traced by the hook) */
}

/* One copy of a run: its first (the run then starts a copy later) or its last. */
static int copy_complete_one(pa_machine *m, pa_op *op, int newest, pa_error *err)
{
    pa_cp_async_payload *c = &op->u.cp;
    pa_op one = *op;
    one.merged = 0;
    if (newest) {
        one.u.cp.dst += op->merged * (uint32_t)c->cp_size;
        one.u.cp.src += op->merged * (uint64_t)c->cp_size;
    }
    int rc = copy_complete(m, &one, err);
    if (!newest) {   /* failed or not, the copy is done */
        c->dst += c->cp_size;
        c->src += c->cp_size;
    }
    return rc;
}

static const pa_engine cp_async = {"cp.async", NULL, copy_complete, copy_complete_one, 0, NULL};
static const pa_engine cp_async_arrive = {"cp.async.mbarrier.arrive", NULL, arrive_complete, NULL, 0, NULL};

int pa_cp_check(pa_machine *m, uint32_t cta, uint32_t dst, uint64_t src, const pa_cp_async_args *a, pa_error *err)
{
    int rc = pa_check_cta(m, cta, err);
    if (rc)
        return rc;
    /* PTX ISA cp.async: "cp-size can only be 4, 8 and 16". */
    if (a->cp_size != 4 && a->cp_size != 8 && a->cp_size != 16)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "cp.async cp-size %u is not 4, 8 or 16", a->cp_size);
    /* PTX ISA syntax: cp.async.cg takes cp-size 16 only (ptxas agrees, observation 18). */
    if (a->cg && a->cp_size != 16)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "cp.async.cg needs cp-size 16, not %u", a->cp_size);
    /* PTX ISA: "Specifying src-size larger than cp-size results in undefined behavior". */
    if (a->src_size > a->cp_size)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "cp.async src-size %u is larger than cp-size %u (undefined behaviour)", a->src_size,
                       a->cp_size);
    if (a->prefetch != 0 && a->prefetch != 64 && a->prefetch != 128 && a->prefetch != 256)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "cp.async .L2::prefetch_size %uB is not 64B, 128B or 256B", a->prefetch);
    /* Addresses as operands: both naturally aligned to the access size, cp-size. */
    if (dst & (a->cp_size - 1))
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "cp.async dst 0x%x is not %u-byte aligned (cp-size)",
                       dst, a->cp_size);
    if (src & (a->cp_size - 1))
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS,
                       "cp.async src 0x%" PRIx64 " is not %u-byte aligned (cp-size)", src, a->cp_size);
    /* dst is .shared::cta: the executing CTA's own shared memory. */
    if (!pa_smem_resolve(&m->cluster, cta, 0, dst, a->cp_size, NULL, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    return PA_OK;
}

int pa_issue_cp_async(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint64_t src,
                      const pa_cp_async_args *a, pa_error *err)
{
    int rc = pa_cp_check(m, cta, dst, src, a, err);
    if (rc)
        return rc;
    uint32_t nread = a->ignore_src ? 0 : a->src_size;
    /* the newest record a cp.async whose run ends where this copy starts: it may continue it */
    const uint32_t last = m->all.tail;
    const pa_op *lo = last != PA_NIL ? &m->pool[last] : NULL;
    if (nread == a->cp_size && lo && lo->kind == PA_OP_CP_ASYNC &&
        lo->u.cp.src + (uint64_t)lo->u.cp.cp_size * (lo->merged + 1) == src &&
        pa_cp_extend_run(m, cta, thread, dst, src, a, 1))
        return PA_OK;
    if (nread && !pa_global_resolve(&m->global, src, nread, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    return pa_cp_queue(m, cta, thread, dst, src, a, 0, err);
}

int pa_cp_queue(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint64_t src, const pa_cp_async_args *a,
                uint32_t more, pa_error *err)
{
    pa_op op;
    int rc;
    pa_op_begin(&op, &cp_async, PA_OP_CP_ASYNC, cta, thread);
    op.merged = more;
    op.dst_rank = cta;
    op.u.cp.src = src;
    op.u.cp.dst = dst;
    op.u.cp.cp_size = (uint8_t)a->cp_size;
    op.u.cp.src_size = (uint8_t)(a->ignore_src ? 0 : a->src_size);
    op.u.cp.cache = (uint8_t)(a->cg != 0);
    op.u.cp.prefetch = (uint16_t)a->prefetch;
    op.u.cp.hint = (uint8_t)(a->cache_hint != 0);
    if ((rc = pa_op_track_group(m, &op, 1, err)) || (rc = pa_enqueue(m, &op, NULL, err)))
        return rc;
    if (more) {   /* the run's other copies: issued with it, counted one by one */
        m->next_seq += more;
        m->nops += more;
    }
    return PA_OK;
}

int pa_cp_async_commit_group(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err)
{
    long ti = pa_issuer_index(m, cta, thread, err);
    return ti < 0 ? PA_ERRC(err, PA_ERR_NO_MEMORY) : pa_groups_commit(m, (uint32_t)ti, 1, err);
}

int pa_cp_async_wait_group(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t n, pa_error *err)
{
    long ti = pa_issuer_index(m, cta, thread, err);
    return ti < 0 ? PA_ERRC(err, PA_ERR_NO_MEMORY) : pa_groups_wait(m, (uint32_t)ti, 1, n, 0, err);
}

int pa_cp_async_wait_all(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err)
{
    /* PTX ISA: cp.async.wait_all = cp.async.commit_group; cp.async.wait_group 0. */
    int rc = pa_cp_async_commit_group(m, cta, thread, err);
    return rc ? rc : pa_cp_async_wait_group(m, cta, thread, 0, err);
}

int pa_cp_async_mbarrier_arrive(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t mbar, int noinc,
                                pa_error *err)
{
    long ti = pa_issuer_index(m, cta, thread, err);
    if (ti < 0)
        return PA_ERRC(err, PA_ERR_NO_MEMORY);
    /* .shared{::cta}: an mbarrier of the executing CTA (ptxas rejects
     * .shared::cluster, golden M1). */
    int rc = pa_check_mbar_addr(m, cta, mbar, err);
    if (rc)
        return rc;
    uint32_t rank;
    if (!pa_smem_resolve(&m->cluster, cta, 0, mbar, 8, &rank, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    long si = pa_mbar_slot_index(m, rank, pa_smem_offset(mbar), 0, err);
    if (si < 0 || !m->mbars[si]->bar.valid)
        return pa_fail(err, PA_ERR_HAZARD,
                       "cp.async.mbarrier.arrive on an mbarrier that is not initialised at 0x%x of CTA %u "
                       "(undefined behaviour)",
                       pa_smem_offset(mbar), rank);
    pa_op op;
    pa_op_begin(&op, &cp_async_arrive, PA_OP_CP_ASYNC_ARRIVE, cta, thread);
    op.u.arrive.thread_index = (uint32_t)ti;
    op.u.arrive.noinc = noinc;
    if ((rc = pa_op_track_mbar(m, &op, rank, mbar, 0, err)))
        return rc;
    int waits = pa_cp_pending_before(m, (uint32_t)ti, m->next_seq);
    /* Without .noinc the pending count rises by 1 now and the arrive-on takes
     * it back: no net change (golden M3). With nothing pending the two happen
     * together, so neither is applied. */
    if (!noinc && waits) {
        if ((rc = pa_mbar_pending_inc(&m->mbars[si]->bar, err)))
            return rc;
        op.u.arrive.incremented = 1;
    }
    uint32_t id;
    if ((rc = pa_enqueue(m, &op, &id, err)) || id == PA_NIL)
        return rc;
    if (!waits)   /* every earlier copy done: arrives now (golden M2, M4) */
        return pa_complete_id(m, id, err);
    return pa_cp_add_arrive(m, (uint32_t)ti, id, m->pool[id].seq, err);
}
