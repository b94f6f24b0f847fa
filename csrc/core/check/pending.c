/* pending.c - the pending operations by the bytes they read and write: the
 * index (pendidx.h) kept from the queue hooks, and the lookups the checker
 * makes through it (watch.h). */
#include "watch.h"

static uint64_t key_of(const pa_range *r)
{
    return pa_pend_key(r->space, r->rank, r->addr);
}

/* Index op's ranges; its source only where sources are asked about (the
 * memory checks), else it is counted as left out. */
static int index_op(pa_watch *w, const pa_op *op, uint32_t id, uint64_t seq, int sources)
{
    pa_range src, dst;
    int reduce;
    pa_qv_ranges(op, &src, &dst, &reduce);
    pa_pend_remove(&w->pend, id);
    if (src.space && !sources)
        pa_pend_skip(&w->pend, id);
    else if (src.space && pa_pend_add(&w->pend, id, seq, PA_PEND_SRC, key_of(&src), key_of(&src) + src.len, 0))
        return -1;
    if (dst.space && pa_pend_add(&w->pend, id, seq, PA_PEND_DST, key_of(&dst), key_of(&dst) + dst.len, reduce))
        return -1;
    return 0;
}

int pa_pend_issue(pa_machine *m, const pa_op *op, uint64_t seq, int sources)
{
    pa_watch *w = m->watch;
    if (w->pend_walk && m->all.n == 0)
        w->pend_walk = 0;   /* the runs pending at the attach are done: the index holds everything */
    return w->pend_walk ? 0 : index_op(w, op, pa_qv_slot_of(m, op), seq, sources);
}

void pa_pend_done(pa_machine *m, const pa_op *op)
{
    pa_pend_remove(&m->watch->pend, pa_qv_slot_of(m, op));
}

void pa_pend_attach(pa_machine *m)
{
    /* a run record (issued unwatched) moves its range as it completes one by
     * one: until the queue empties, the lookups walk it */
    for (uint32_t id = m->all.head; id != PA_NIL; id = m->pool[id].link_all.next)
        if (m->pool[id].merged || index_op(m->watch, &m->pool[id], id, m->pool[id].seq, 1)) {
            m->watch->pend_walk = 1;
            return;
        }
}

typedef struct {
    const pa_machine *m;
    pa_pend_visitor visit;
    void *ctx;
} each_ctx;

static int each_one(void *ctx, const pa_pend_ent *e)
{
    const each_ctx *c = ctx;
    if (e->seq >= c->m->next_seq || e->id >= c->m->cappool)
        return 0;   /* the operation being issued (or one whose issue failed) */
    const pa_op *o = &c->m->pool[e->id];
    if (!o->pending || o->seq != e->seq)
        return 0;   /* the same, or an issue that failed after the hook saw it */
    return c->visit(c->ctx, o, e->reduce);
}

void pa_pend_each(pa_machine *m, int which, const pa_range *r, pa_pend_visitor visit, void *ctx)
{
    if (!r->space || !r->len)
        return;
    const uint64_t lo = key_of(r), hi = lo + r->len;
    /* sources left out while the memory checks were off: walk until they complete */
    if (!m->watch->pend_walk && !(which == PA_PEND_SRC && m->watch->pend.nunindexed)) {
        each_ctx c = {m, visit, ctx};
        pa_pend_visit(&m->watch->pend, which, lo, hi, each_one, &c);
        return;
    }
    for (uint32_t id = m->all.head; id != PA_NIL; id = m->pool[id].link_all.next) {
        pa_range src, dst;
        int reduce;
        pa_qv_ranges(&m->pool[id], &src, &dst, &reduce);
        const pa_range *x = which == PA_PEND_SRC ? &src : &dst;
        if (x->space && key_of(x) < hi && lo < key_of(x) + x->len &&
            visit(ctx, &m->pool[id], which == PA_PEND_DST && reduce))
            return;
    }
}

typedef struct {
    uint64_t seq;
    int skip_reduce;
    const pa_op *first;
} writer_ctx;

static int writer_one(void *ctx, const pa_op *o, int reduce)
{
    writer_ctx *c = ctx;
    if (o->seq != c->seq && !(c->skip_reduce && reduce) && (!c->first || o->seq < c->first->seq))
        c->first = o;
    return 0;
}

const pa_op *pa_pend_writer(pa_machine *m, const pa_range *r, uint64_t seq, int skip_reduce)
{
    writer_ctx c = {seq, skip_reduce, NULL};
    if (m->watch)
        pa_pend_each(m, PA_PEND_DST, r, writer_one, &c);
    return c.first;
}
