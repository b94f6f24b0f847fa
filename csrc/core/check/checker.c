/* checker.c - the queue hooks: every issue, source read and completion is
 * traced; with the memory checks on (Machine(checks=True), or the adversarial
 * policy) they also keep, per pending operation, a copy of its source at
 * issue and of its destination after issue, and report
 *   source-changed       the source differs when it is read,
 *   destination-changed  the destination was written by someone else,
 *   destination-overlap  two pending operations write the same bytes,
 *   destination-read     an operation reads a pending destination.
 * The adversarial policy fills each pending destination with poison at issue
 * (PA_POISON_WORD), so a premature read through a NumPy view sees poison,
 * never the right data by luck. Reductions and masked copies keep their
 * destination (its old bytes are operands), so they are not poisoned.
 */
#include "hb.h"
#include "watch.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pa_check_free(pa_watch *w)
{
    for (size_t i = 0; i < w->nshadows; i++) {
        free(w->shadows[i].src_copy);
        free(w->shadows[i].dst_copy);
        pa_gbox_free(&w->shadows[i].gbox);
    }
    free(w->shadows);
    w->shadows = NULL;
    pa_pend_free(&w->pend);
    w->nshadows = w->capshadows = 0;
}

/* Host bytes of a range (NULL if it no longer resolves). */
static uint8_t *bytes_of(pa_machine *m, const pa_range *r)
{
    if (r->space == 1)
        return r->rank < m->cluster.nctas && r->addr + r->len <= m->cluster.smem_bytes
                   ? m->cluster.smem[r->rank] + r->addr
                   : NULL;
    if (r->space == 2)
        return pa_global_resolve(&m->global, r->addr, r->len, NULL);
    return NULL;
}

static int overlaps(const pa_range *a, const pa_range *b)
{
    return a->space && a->space == b->space && a->rank == b->rank && a->addr < b->addr + b->len &&
           b->addr < a->addr + a->len;
}

static const char *where(const pa_range *r, char *buf, size_t n)
{
    if (r->space == 1)
        snprintf(buf, n, "shared bytes [0x%" PRIx64 ", 0x%" PRIx64 ") of CTA %u", r->addr, r->addr + r->len,
                 r->rank);
    else
        snprintf(buf, n, "global bytes [0x%" PRIx64 ", 0x%" PRIx64 ")", r->addr, r->addr + r->len);
    return buf;
}

static const char *kind_name(const pa_op *op)
{
    return op->engine && op->engine->name ? op->engine->name : "operation";
}

static pa_shadow *shadow_of(pa_watch *w, uint64_t seq)
{
    for (size_t i = 0; i < w->nshadows; i++)
        if (w->shadows[i].seq == seq)
            return &w->shadows[i];
    return NULL;
}

static void drop_shadow(pa_watch *w, pa_shadow *s)
{
    free(s->src_copy);
    free(s->dst_copy);
    pa_gbox_free(&s->gbox);
    *s = w->shadows[--w->nshadows];
}

static uint8_t *copy_of(pa_machine *m, const pa_range *r)
{
    const uint8_t *p = bytes_of(m, r);
    uint8_t *c = p && r->len ? malloc(r->len) : NULL;
    if (c)
        memcpy(c, p, r->len);
    return c;
}

/* inline, the trace off tested first: most events of most runs only advance the clock */
static inline void trace_op(pa_machine *m, pa_event_kind kind, const pa_op *op, uint64_t seq, const pa_range *r,
                            uint64_t a)
{
    if (!m->watch->trace.enabled) {
        m->watch->trace.clock++;
        return;
    }
    pa_trace_record(&m->watch->trace, kind, op->cta, op->thread, seq, r ? r->rank : 0,
                 r && r->space == 1 ? (uint32_t)r->addr : 0, r ? r->space : 0,
                 r && r->space == 2 ? r->addr : a, r ? r->len : 0);
}

/* Reductions into the same bytes are order-free; anything else is not. */
static int is_reduction(const pa_op *o)
{
    return o->kind == PA_OP_BULK_REDUCE_GLOBAL || o->kind == PA_OP_BULK_REDUCE_CLUSTER ||
           o->kind == PA_OP_TENSOR_REDUCE || o->kind == PA_OP_RED_ASYNC;
}

static const pa_op *op_of_seq(pa_machine *m, uint64_t seq)
{
    for (uint32_t id = m->all.head; id != PA_NIL; id = m->pool[id].link_all.next)
        if (m->pool[id].seq == seq)
            return &m->pool[id];
    return NULL;
}

/* The first pending operation (in issue order) whose plain global
 * destination a tensor box's runs meet (reductions into a reduction's box
 * are order-free). */
typedef struct {
    const pa_gbox *gb;
    int skip_reductions;
    const pa_op *first;
    pa_grun hit;
} box_ctx;

static int box_meets_dst(void *ctx, const pa_op *x, int reduce)
{
    box_ctx *c = ctx;
    pa_range s2, d2;
    int r2;
    pa_grun hit;
    (void)reduce;
    if (c->first && c->first->seq < x->seq)
        return 0;
    pa_qv_ranges(x, &s2, &d2, &r2);
    if (d2.space != 2 || !pa_gbox_hits(c->gb, d2.addr, d2.len, &hit) || (c->skip_reductions && is_reduction(x)))
        return 0;
    c->first = x;
    c->hit = hit;
    return 0;
}

/* The global side of tensor copies against the other pending operations:
 * writes of the same global bytes with no order between them
 * (global-write-overlap), and reads of global bytes a pending write has not
 * written yet (destination-read). gb: op's tensor box (n 0 if none); dst /
 * src: op's plain ranges. */
static int check_global_side(pa_machine *m, const pa_op *op, uint64_t seq, const pa_gbox *gb,
                             const pa_range *src, const pa_range *dst, pa_error *err)
{
    pa_watch *w = m->watch;
    const pa_op *o = NULL;
    pa_grun hit;
    int write = 0;                 /* 1: both write the bytes; 0: op reads what o writes */
    const int red = is_reduction(op);
    /* pending tensor stores and reductions (their boxes) */
    for (size_t i = 0; i < w->nshadows && !o; i++) {
        const pa_gbox *x = &w->shadows[i].gbox;
        if (!x->writes)
            continue;
        if ((gb->writes && !(red && x->reduce) && pa_gbox_meets(gb, x, &hit)) ||
            (dst->space == 2 && !(red && x->reduce) && pa_gbox_hits(x, dst->addr, dst->len, &hit)))
            write = 1;
        else if (!((gb->n && !gb->writes && pa_gbox_meets(gb, x, &hit)) ||
                   (src->space == 2 && pa_gbox_hits(x, src->addr, src->len, &hit))))
            continue;
        o = op_of_seq(m, w->shadows[i].seq);
    }
    /* a tensor box against the plain global ranges of pending operations */
    if (!o && gb->n) {
        box_ctx c = {gb, gb->writes && red, NULL, {0, 0}};
        for (size_t i = 0; i < gb->n; i++) {   /* run by run: a box's rows may lie far apart */
            pa_range r = {2, 0, gb->runs[i].addr, gb->runs[i].len};
            pa_pend_each(m, PA_PEND_DST, &r, box_meets_dst, &c);
        }
        if (c.first) {
            o = c.first;
            hit = c.hit;
            write = gb->writes;
        }
    }
    if (!o)
        return PA_OK;
    if (write)
        return pa_hazard(&w->hz, err, PA_HZ_GLOBAL_WRITE_OVERLAP,
                         "%s #%" PRIu64 " (CTA %u thread %u) and pending %s #%" PRIu64 " (CTA %u thread %u) "
                         "both write global bytes [0x%" PRIx64 ", 0x%" PRIx64 "), with no order between them "
                         "(PTX ISA: asynchronous operations are not ordered with each other; wait for the "
                         "first, e.g. cp.async.bulk.wait_group, before issuing the second)",
                         kind_name(op), seq, op->cta, op->thread, kind_name(o), o->seq, o->cta, o->thread,
                         hit.addr, hit.addr + hit.len);
    return pa_hazard(&w->hz, err, PA_HZ_DESTINATION_READ,
                     "%s #%" PRIu64 " (CTA %u thread %u) reads global bytes [0x%" PRIx64 ", 0x%" PRIx64
                     "), a destination of pending %s #%" PRIu64 " that has not completed (its bytes are not "
                     "there yet)",
                     kind_name(op), seq, op->cta, op->thread, hit.addr, hit.addr + hit.len, kind_name(o),
                     o->seq);
}

/* The first pending operation (in issue order) that has not read its
 * source yet, where that source meets dst or a tensor store's runs gb. */
typedef struct {
    const pa_range *dst;
    const pa_gbox *gb;
    const pa_op *first;
} unread_ctx;

static int unread_one(void *ctx, const pa_op *x, int reduce)
{
    unread_ctx *c = ctx;
    pa_range s2, d2;
    int r2;
    pa_grun hit;
    (void)reduce;
    if (x->read_done || (c->first && c->first->seq < x->seq))
        return 0;
    pa_qv_ranges(x, &s2, &d2, &r2);
    if ((c->dst->space && overlaps(c->dst, &s2)) ||
        (c->gb && s2.space == 2 && pa_gbox_hits(c->gb, s2.addr, s2.len, &hit)))
        c->first = x;
    return 0;
}

/* An asynchronous write of bytes that a pending operation has not read yet:
 * the two are not ordered, so the write may land before the read
 * (source-changed, found at the write's issue rather than by luck at the
 * read). op writes dst (a plain range) and/or gb (a tensor store's box). */
static int check_unread_sources(pa_machine *m, const pa_op *op, uint64_t seq, const pa_gbox *gb,
                                const pa_range *dst, pa_error *err)
{
    pa_watch *w = m->watch;
    const int gw = gb->writes && gb->n;
    if (!dst->space && !gw)
        return PA_OK;
    pa_grun hit = {0, 0};
    pa_range at = {0, 0, 0, 0};
    const pa_op *o = NULL;
    unread_ctx c = {dst, gw ? gb : NULL, NULL};
    pa_pend_each(m, PA_PEND_SRC, dst, unread_one, &c);
    for (size_t i = 0; gw && i < gb->n; i++) {
        pa_range r = {2, 0, gb->runs[i].addr, gb->runs[i].len};
        pa_pend_each(m, PA_PEND_SRC, &r, unread_one, &c);
    }
    if ((o = c.first)) {   /* what it reads that op writes: the plain range first, as the walk said it */
        pa_range s2, d2;
        int r2;
        pa_qv_ranges(o, &s2, &d2, &r2);
        if (dst->space && overlaps(dst, &s2)) {
            at.space = s2.space;
            at.rank = s2.rank;
            at.addr = dst->addr > s2.addr ? dst->addr : s2.addr;
            at.len = (dst->addr + dst->len < s2.addr + s2.len ? dst->addr + dst->len : s2.addr + s2.len) - at.addr;
        } else {
            pa_gbox_hits(gb, s2.addr, s2.len, &hit);
        }
    }
    /* pending tensor loads: their global boxes */
    for (size_t i = 0; !o && i < w->nshadows; i++) {
        const pa_gbox *x = &w->shadows[i].gbox;
        if (x->writes || !x->n)
            continue;
        if ((dst->space == 2 && pa_gbox_hits(x, dst->addr, dst->len, &hit)) || (gw && pa_gbox_meets(gb, x, &hit)))
            o = op_of_seq(m, w->shadows[i].seq);
    }
    if (!o)
        return PA_OK;
    if (!at.space) {
        at.space = 2;
        at.addr = hit.addr;
        at.len = hit.len;
    }
    char b1[96];
    return pa_hazard(&w->hz, err, PA_HZ_SOURCE_CHANGED,
                     "%s #%" PRIu64 " (CTA %u thread %u) writes %s, the source of pending %s #%" PRIu64
                     " (CTA %u thread %u), which has not read it yet: the two are not ordered, so the "
                     "write may land first (PTX ISA: the source must not change until the read "
                     "completes; wait for it first, e.g. its mbarrier or cp.async.bulk.wait_group.read)",
                     kind_name(op), seq, op->cta, op->thread, where(&at, b1, sizeof b1), kind_name(o), o->seq,
                     o->cta, o->thread);
}

static int grow_shadows(pa_watch *w, pa_error *err)
{
    size_t cap = w->capshadows ? w->capshadows * 2 : 16;
    pa_shadow *ns = realloc(w->shadows, cap * sizeof *ns);
    if (!ns)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the memory checks");
    w->shadows = ns;
    w->capshadows = cap;
    return PA_OK;
}

int pa_check_on_issue(void *ctx, pa_machine *m, const pa_op *op, pa_error *err)
{
    pa_watch *w = ctx;
    uint64_t seq = m->next_seq;   /* the issue number pa_enqueue gives it */
    pa_range src, dst;
    int reduce, rc;
    trace_op(m, PA_EV_ISSUE, op, seq, NULL, (uint64_t)op->kind);
    if (pa_pend_issue(m, op, seq, pa_check_memory_on(m)))
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the hazard checker");
    const size_t nhz = w->hz.n;   /* the race checker speaks only where these rules did not */
    if (!pa_check_memory_on(m))
        return w->hb ? pa_hb_on_issue(m, op, seq, err) : PA_OK;   /* the race checker off: nothing to note */
    pa_qv_ranges(op, &src, &dst, &reduce);
    char b1[96];
    const pa_op *o;
    if (dst.space && (o = pa_pend_writer(m, &dst, seq, reduce)) &&
        (rc = pa_hazard(&w->hz, err, PA_HZ_DESTINATION_OVERLAP,
                        "%s #%" PRIu64 " (CTA %u thread %u) and pending %s #%" PRIu64 " (CTA %u thread %u) "
                        "both write %s, with no order between them (PTX ISA: asynchronous operations "
                        "are not ordered with each other)",
                        kind_name(op), seq, op->cta, op->thread, kind_name(o), o->seq, o->cta, o->thread,
                        where(&dst, b1, sizeof b1))))
        return rc;
    if (src.space && (o = pa_pend_writer(m, &src, seq, 0)) &&
        (rc = pa_hazard(&w->hz, err, PA_HZ_DESTINATION_READ,
                        "%s #%" PRIu64 " (CTA %u thread %u) reads %s, a destination of pending %s #%" PRIu64
                        " that has not completed (its bytes are not there yet)",
                        kind_name(op), seq, op->cta, op->thread, where(&src, b1, sizeof b1), kind_name(o),
                        o->seq)))
        return rc;
    pa_gbox gb;
    if (pa_gbox_take(m, op, &gb))
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the memory checks");
    if ((rc = check_global_side(m, op, seq, &gb, &src, &dst, err)) ||
        (rc = check_unread_sources(m, op, seq, &gb, &dst, err)) ||
        (w->nshadows == w->capshadows && (rc = grow_shadows(w, err)))) {
        pa_gbox_free(&gb);
        return rc;
    }
    if (dst.space && !reduce && m->policy == PA_POLICY_ADVERSARIAL) {
        uint8_t *p = bytes_of(m, &dst);
        for (uint64_t i = 0; p && i < dst.len; i++)
            p[i] = pa_poison_byte(dst.addr + i);
    }
    if (w->hz.n == nhz && (rc = pa_hb_on_issue(m, op, seq, err))) {
        pa_gbox_free(&gb);
        return rc;
    }
    if (gb.writes && !gb.reduce && m->policy == PA_POLICY_ADVERSARIAL) {
        pa_gbox_poison(m, &gb);   /* a store's global rows: poison until it writes them */
        pa_gbox_snapshot(m, &gb);
    }
    pa_shadow *s = &w->shadows[w->nshadows++];
    s->seq = seq;
    s->src = src;
    s->dst = dst;
    s->reduce = reduce;
    s->src_copy = copy_of(m, &src);
    s->dst_copy = copy_of(m, &dst);
    s->gbox = gb;
    s->order_free = is_reduction(op);
    return PA_OK;
}

static int check_source(pa_machine *m, pa_shadow *s, const pa_op *op, pa_error *err)
{
    if (!s->src_copy)
        return PA_OK;
    const uint8_t *p = bytes_of(m, &s->src);
    int same = !p || !memcmp(p, s->src_copy, s->src.len);
    free(s->src_copy);
    s->src_copy = NULL;
    if (same)
        return PA_OK;
    char b1[96];
    return pa_hazard(&m->watch->hz, err, PA_HZ_SOURCE_CHANGED,
                     "the source of pending %s #%" PRIu64 " (CTA %u thread %u), %s, was written before the "
                     "operation read it (PTX ISA: the source must not change until the read completes; "
                     "wait for it, e.g. cp.async.bulk.wait_group.read)",
                     kind_name(op), op->seq, op->cta, op->thread, where(&s->src, b1, sizeof b1));
}

int pa_check_on_read(void *ctx, pa_machine *m, const pa_op *op, pa_error *err)
{
    pa_watch *w = ctx;
    pa_range src, dst;
    int reduce;
    pa_qv_ranges(op, &src, &dst, &reduce);
    trace_op(m, PA_EV_READ, op, op->seq, &src, 0);
    pa_shadow *s = pa_check_memory_on(m) ? shadow_of(w, op->seq) : NULL;
    return s ? check_source(m, s, op, err) : PA_OK;
}

int pa_check_on_complete(void *ctx, pa_machine *m, const pa_op *op, pa_error *err)
{
    pa_watch *w = ctx;
    pa_range src, dst;
    int reduce, rc = PA_OK;
    w->cur_op = op->seq;
    w->cur_cta = op->cta;
    w->cur_thread = op->thread;
    w->cur_kind = kind_name(op);
    w->cur_tracked = op->track == PA_TRACK_MBAR;
    w->cur_phase = op->track_phase;
    /* a tile load (no source range, its box in shared memory), untraced and
     * with no copies kept: its one event, the write, only advances the clock */
    if (op->kind == PA_OP_TILE_LOAD && !w->trace.enabled && !w->nshadows) {
        w->trace.clock++;
        pa_pend_done(m, op);
        return PA_OK;
    }
    pa_qv_ranges(op, &src, &dst, &reduce);
    if (w->ndiscards) {         /* a discarded line read before a write; written (discard.c) */
        if (!op->read_done && src.space == 2 &&
            (rc = pa_check_global_bytes(m, op->cta, op->thread, src.addr, src.len, 0, kind_name(op), err)))
            return rc;
        if (dst.space == 2)
            pa_check_global_bytes(m, op->cta, op->thread, dst.addr, dst.len, 1, kind_name(op), err);
    }
    if (!op->read_done && src.space)
        trace_op(m, PA_EV_READ, op, op->seq, &src, 0);
    if (dst.space)
        trace_op(m, PA_EV_WRITE, op, op->seq, &dst, 0);
    pa_shadow *s = shadow_of(w, op->seq);
    if (!s) {
        pa_pend_done(m, op);
        return PA_OK;
    }
    if (!op->read_done)
        rc = check_source(m, s, op, err);
    const uint8_t *p = bytes_of(m, &s->dst);
    if (!rc && s->dst_copy && p && memcmp(p, s->dst_copy, s->dst.len)) {
        char b1[96];
        rc = pa_hazard(&w->hz, err, PA_HZ_DESTINATION_CHANGED,
                       "the destination of pending %s #%" PRIu64 " (CTA %u thread %u), %s, was written by "
                       "someone else before the operation completed",
                       kind_name(op), op->seq, op->cta, op->thread, where(&s->dst, b1, sizeof b1));
    }
    const pa_grun *r = !rc && s->gbox.n ? pa_gbox_changed(m, &s->gbox) : NULL;
    if (r && s->gbox.writes)
        rc = pa_hazard(&w->hz, err, PA_HZ_TENSOR_DESTINATION_CHANGED,
                       "the global destination of pending %s #%" PRIu64 " (CTA %u thread %u), global bytes "
                       "[0x%" PRIx64 ", 0x%" PRIx64 ") of its box, was written by someone else before the "
                       "operation completed (PTX ISA: the destination belongs to the operation until it "
                       "completes)",
                       kind_name(op), op->seq, op->cta, op->thread, r->addr, r->addr + r->len);
    else if (r)
        rc = pa_hazard(&w->hz, err, PA_HZ_TENSOR_SOURCE_CHANGED,
                       "the global source of pending %s #%" PRIu64 " (CTA %u thread %u), global bytes "
                       "[0x%" PRIx64 ", 0x%" PRIx64 ") of its box, was written before the operation read it "
                       "(PTX ISA: modifying the source before the asynchronous operation completes is "
                       "undefined; write it after the mbarrier wait)",
                       kind_name(op), op->seq, op->cta, op->thread, r->addr, r->addr + r->len);
    drop_shadow(w, s);
    if (!rc)   /* else it stays pending (raise mode) */
        pa_pend_done(m, op);
    return rc;
}

/* Copy again the bytes of x's destination inside r (a plain range). */
static void refresh_shadow(pa_machine *m, pa_shadow *x, const pa_range *r)
{
    if (x->gbox.writes && r->space == 2)
        pa_gbox_refresh(m, &x->gbox, r->addr, r->len);
    if (!x->dst_copy || !overlaps(&x->dst, r))
        return;
    uint64_t lo = x->dst.addr > r->addr ? x->dst.addr : r->addr;
    uint64_t hi = x->dst.addr + x->dst.len < r->addr + r->len ? x->dst.addr + x->dst.len : r->addr + r->len;
    const uint8_t *p = bytes_of(m, &x->dst);
    if (p)
        memcpy(x->dst_copy + (lo - x->dst.addr), p + (lo - x->dst.addr), hi - lo);
}

void pa_check_on_done(void *ctx, pa_machine *m, const pa_op *op)
{
    pa_watch *w = ctx;
    if (!w->nshadows || !is_reduction(op))
        return;
    pa_range src, dst;
    int reduce;
    pa_qv_ranges(op, &src, &dst, &reduce);
    pa_gbox gb;
    if (op->kind == PA_OP_TENSOR_REDUCE && pa_gbox_take(m, op, &gb))
        return;   /* out of memory: the next compare may name a change another reduction made */
    for (size_t i = 0; i < w->nshadows; i++) {
        pa_shadow *x = &w->shadows[i];
        if (x->seq == op->seq || !x->order_free)
            continue;
        if (dst.space)
            refresh_shadow(m, x, &dst);
        for (size_t k = 0; op->kind == PA_OP_TENSOR_REDUCE && k < gb.n; k++) {
            pa_range r = {2, 0, gb.runs[k].addr, gb.runs[k].len};
            refresh_shadow(m, x, &r);
        }
    }
    if (op->kind == PA_OP_TENSOR_REDUCE)
        pa_gbox_free(&gb);
}

int pa_check_read(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off, uint32_t len,
                  pa_error *err)
{
    pa_range r = {1, rank, off, len};
    if (rank >= m->cluster.nctas || (uint64_t)off + len > m->cluster.smem_bytes)
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                       "shared bytes [0x%x, 0x%" PRIx64 ") of CTA %u are outside its %u bytes", off,
                       (uint64_t)off + len, rank, m->cluster.smem_bytes);
    const pa_op *o = pa_pend_writer(m, &r, PA_NO_OP, 0);
    if (!o || !m->watch)   /* the bytes are there: is the read ordered after their write? */
        return pa_hb_smem(m, cta, thread, rank, off, len, 0, "ld.shared", err);
    char b1[96];
    return pa_hazard(&m->watch->hz, err, PA_HZ_DESTINATION_READ,
                     "thread %u of CTA %u reads %s, a destination of pending %s #%" PRIu64
                     " (CTA %u thread %u) that has not completed: wait for its mbarrier or group first",
                     thread, cta, where(&r, b1, sizeof b1), kind_name(o), o->seq, o->cta, o->thread);
}

int pa_check_wgmma_read(pa_machine *m, uint32_t cta, uint32_t first, uint32_t off, uint32_t len, uint32_t group,
                        uint32_t line, pa_error *err)
{
    pa_range r = {1, cta, off, len};
    if (cta >= m->cluster.nctas || (uint64_t)off + len > m->cluster.smem_bytes)
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                       "shared bytes [0x%x, 0x%" PRIx64 ") of CTA %u are outside its %u bytes", off,
                       (uint64_t)off + len, cta, m->cluster.smem_bytes);
    const pa_op *o = pa_pend_writer(m, &r, PA_NO_OP, 0);
    if (!o || !m->watch)
        return pa_hb_wgmma_read(m, cta, first, off, len, group, line, err);
    char b1[96];
    return pa_hazard(&m->watch->hz, err, PA_HZ_DESTINATION_READ,
                     "the wgmma.mma_async at PTX line %u (warpgroup of thread %u of CTA %u) reads %s, a "
                     "destination of pending %s #%" PRIu64 " (CTA %u thread %u) that has not completed: wait for "
                     "its mbarrier or group first",
                     line, first, cta, where(&r, b1, sizeof b1), kind_name(o), o->seq, o->cta, o->thread);
}

void pa_check_commit(pa_machine *m, uint32_t ti, int cp_async)
{
    if (!m->watch)
        return;
    const pa_thread_state *t = &m->threads[ti];
    const pa_groups *g = cp_async ? &t->cp : &t->bulk;
    pa_trace_add(&m->watch->trace, PA_EV_COMMIT, t->cta, t->thread, PA_NO_OP, 0, 0, 0, g->ncommitted + 1,
                 (uint64_t)cp_async);
    pa_hb_commit(m, t->cta, t->thread, cp_async);
}

int pa_check_wait_group(pa_machine *m, uint32_t ti, int cp_async, uint32_t n, int read_only, pa_error *err)
{
    if (!m->watch)
        return PA_OK;
    const pa_thread_state *t = &m->threads[ti];
    const pa_groups *g = cp_async ? &t->cp : &t->bulk;
    pa_trace_add(&m->watch->trace, PA_EV_WAIT_GROUP, t->cta, t->thread, PA_NO_OP, 0, 0, 0, n,
                 (uint64_t)cp_async | (read_only ? 2u : 0u));
    pa_hb_wait_group(m, t->cta, t->thread, cp_async, n, read_only);
    if (n != 0 || g->open.n == 0)
        return PA_OK;
    return pa_hazard(&m->watch->hz, err, PA_HZ_WAIT_UNCOMMITTED,
                     "%s 0 by thread %u of CTA %u: %u operation(s) it issued since its last commit_group "
                     "are in no group, so the wait does not cover them (PTX ISA: wait_group waits for "
                     "committed groups only; commit_group first)",
                     cp_async ? "cp.async.wait_group" : read_only ? "cp.async.bulk.wait_group.read"
                                                                  : "cp.async.bulk.wait_group",
                     t->thread, t->cta, g->open.n);
}

int pa_check_finish(pa_machine *m, pa_error *err)
{
    if (m->watch) {
        for (uint32_t id = m->all.head; id != PA_NIL; id = m->pool[id].link_all.next) {
            const pa_op *op = &m->pool[id];
            /* st.async.release.global: its completion synchronizes with the end of the CTA */
            if (op->kind == PA_OP_ST_ASYNC_RELEASE)
                continue;
            const char *how = op->track == PA_TRACK_MBAR ? "its mbarrier phase was never waited on"
                              : op->track == PA_TRACK_BULK_OPEN || op->track == PA_TRACK_CP_OPEN
                                  ? "it was issued after the thread's last commit_group"
                                  : "its group was never waited for";
            int rc = pa_hazard(&m->watch->hz, err, PA_HZ_NEVER_WAITED,
                               "the kernel exits with %s #%" PRIu64 " (CTA %u thread %u) pending: %s "
                               "(its shared memory may be gone before it is read or written)",
                               kind_name(op), op->seq, op->cta, op->thread, how);
            if (rc)
                return rc;
        }
    }
    return PA_OK;
}
