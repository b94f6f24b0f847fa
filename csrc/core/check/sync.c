/* sync.c - mbarrier operations of threads, checked and traced (see watch.h). */
#include "hb.h"
#include "watch.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pa_hazards *pa_machine_hazards(pa_machine *m)
{
    return m->watch ? &m->watch->hz : NULL;
}

pa_trace *pa_machine_trace(pa_machine *m)
{
    return m->watch ? &m->watch->trace : NULL;
}

/* Record an event and stamp later hazards with its time. */
static inline void event(pa_machine *m, pa_event_kind kind, uint32_t cta, uint32_t thread, uint32_t rank,
                         uint32_t off, uint64_t a, uint64_t b)
{
    if (m->watch && !m->watch->trace.enabled)   /* (inline: the trace off only advances the clock) */
        m->watch->trace.clock++;
    else if (m->watch)
        pa_trace_record(&m->watch->trace, kind, cta, thread, PA_NO_OP, rank, off, 1, a, b);
}

/* The barrier at addr as CTA cta sees it: its slot's (rank, offset). */
static pa_mbarrier *lookup(pa_machine *m, uint32_t cta, uint32_t addr, uint32_t *rank, uint32_t *off,
                           pa_error *err)
{
    if (cta >= m->cluster.nctas) {
        pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                m->cluster.nctas);
        return NULL;
    }
    pa_mbar_slot *s = pa_machine_mbar_slot(m, cta, addr, 0, err);
    if (!s)
        return NULL;
    *rank = s->cta;   /* the slot is (rank, offset) of addr as cta sees it */
    *off = s->offset;
    return &s->bar;
}

static int need_valid(pa_machine *m, const pa_mbarrier *b, uint32_t rank, uint32_t off, const char *op,
                      pa_error *err)
{
    if (b->valid)
        return PA_OK;
    return pa_hazard_fatal(pa_machine_hazards(m), err, PA_HZ_UNINITIALISED,
                           "mbarrier.%s on the mbarrier at 0x%x in CTA %u, which is not initialised "
                           "(undefined behaviour: PTX ISA, mbarrier)",
                           op, off, rank);
}

static void flips(pa_machine *m, uint64_t before, const pa_mbarrier *b, uint32_t rank, uint32_t off)
{
    for (uint64_t p = before + 1; p <= b->phase; p++)
        event(m, PA_EV_PHASE, PA_NO_THREAD, PA_NO_THREAD, rank, off, p, 0);
    if (m->watch && m->watch->hb)
        pa_hb_mbar_phase(m, rank, off);   /* its releases become what a wait acquires */
}

/* inline: most signals flip no phase */
static inline void trace_flips(pa_machine *m, uint64_t before, const pa_mbarrier *b, uint32_t rank, uint32_t off)
{
    if (b->phase > before)
        flips(m, before, b, rank, off);
}

/* mirage #705: all arrivals are in and more bytes were credited than were
 * expected: the phase waits for an expect_tx that a correct kernel never
 * issues, or completes at a moment the bytes happen to balance. */
static inline int synchronises(pa_machine *m, pa_mbarrier *b, uint32_t rank, uint32_t off, uint32_t cta,
                               uint32_t thread);

static int overdelivered(pa_machine *m, pa_mbarrier *b, uint32_t rank, uint32_t off, uint32_t cta,
                         uint32_t thread, pa_error *err)
{
    if (!synchronises(m, b, rank, off, cta, thread))
        return PA_OK;
    return pa_hazard(pa_machine_hazards(m), err, PA_HZ_TX_OVERDELIVERED,
                     "more bytes delivered to phase %" PRIu64 " of the mbarrier at 0x%x in CTA %u than "
                     "were expected: %" PRIu64 " tx bytes credited, %" PRIu64 " expected, all arrivals in: "
                     "the phase can complete early or never",
                     b->phase, off, rank, b->tx_credited, b->tx_expected);
}

/* inline: the common signal leaves bytes to come (tx >= 0) */
static inline int check_overdelivered(pa_machine *m, pa_mbarrier *b, uint32_t rank, uint32_t off, uint32_t cta,
                                      uint32_t thread, pa_error *err)
{
    if (!b->valid || b->pending != 0 || b->tx >= 0)
        return PA_OK;
    return overdelivered(m, b, rank, off, cta, thread, err);
}

/* A failure of the state machine (mbarrier.c names the rule): the message
 * gains who did it and where; recorded too in report mode. */
static int failed(pa_machine *m, int rc, pa_error *err, uint32_t cta, uint32_t thread, uint32_t rank,
                  uint32_t off)
{
    if (rc != PA_ERR_HAZARD || !err)
        return rc;
    const size_t k = err->rule ? strlen(err->rule) + 3 : 0;   /* the "[rule] " the message starts with */
    if (err->rule && strlen(err->msg) >= k) {
        char rest[PA_ERRMSG_LEN];
        snprintf(rest, sizeof rest, "%s", err->msg + k);
        if (thread == PA_NO_THREAD)
            snprintf(err->msg, sizeof err->msg, "[%s] on the mbarrier at 0x%x in CTA %u: %.400s", err->rule, off,
                     rank, rest);
        else
            snprintf(err->msg, sizeof err->msg, "[%s] thread %u of CTA %u, on the mbarrier at 0x%x in CTA %u: %.400s",
                     err->rule, thread, cta, off, rank, rest);
    }
    pa_hazard_note(pa_machine_hazards(m), err);
    return rc;
}

/* --- waiters --------------------------------------------------------------- */

static size_t wslot(uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off, size_t cap)
{
    uint64_t h = (uint64_t)cta << 56 ^ (uint64_t)rank << 48 ^ (uint64_t)thread << 24 ^ off;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;   /* splitmix64's finaliser: every key bit moves */
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

/* Whether waiter x is (cta, thread)'s wait on the mbarrier at (rank, off). */
static inline int same_waiter(const pa_waiter *x, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off)
{
    return x->cta == cta && x->thread == thread && x->rank == rank && x->offset == off;
}

/* The direct slot of a PTX thread (NULL: not one, or no memory for the
 * table: the hash indexes serve it). */
static pa_tslot *direct(pa_watch *w, uint32_t cta, uint32_t thread)
{
    if (thread >= PA_DIRECT_THREADS || (size_t)cta * PA_DIRECT_THREADS >= w->ntslot)
        return NULL;
    pa_tslot *s = &w->tslot[(size_t)cta * PA_DIRECT_THREADS + thread];
    if (s->gen != w->gen) {
        s->gen = w->gen;
        s->blocked = 0;
        memset(s->last, 0, sizeof s->last);
    }
    return s;
}

/* Rebuild both indexes (after removals, or to grow them); -1 out of memory. */
static int reindex(pa_watch *w)
{
    size_t cap = w->capidx ? w->capidx : 64;
    while (cap < 2 * (w->nwaiters + 1))
        cap *= 2;
    if (cap != w->capidx) {
        uint32_t *a = realloc(w->widx, cap * sizeof *a), *b = a ? realloc(w->bidx, cap * sizeof *b) : NULL;
        if (a)
            w->widx = a;
        if (!a || !b)
            return -1;
        w->bidx = b;
        w->capidx = cap;
    }
    memset(w->widx, 0, cap * sizeof *w->widx);
    memset(w->bidx, 0, cap * sizeof *w->bidx);
    if (++w->gen == 0 && w->tslot) {  /* every direct slot starts empty */
        memset(w->tslot, 0, w->ntslot * sizeof *w->tslot);
        w->gen = 1;
    }
    for (size_t i = 0; i < w->nwaiters; i++) {
        const pa_waiter *x = &w->waiters[i];
        size_t k = wslot(x->cta, x->thread, x->rank, x->offset, cap);
        while (w->widx[k])
            k = (k + 1) & (cap - 1);
        w->widx[k] = (uint32_t)i + 1;
        pa_tslot *s = direct(w, x->cta, x->thread);
        if (s) {
            s->last[x->offset / 8 % PA_DIRECT_WAYS] = (uint32_t)i + 1;
            if (x->blocked)
                s->blocked = (uint32_t)i + 1;
        } else if (x->blocked) {
            k = wslot(x->cta, x->thread, 0, 0, cap);
            while (w->bidx[k] && !(w->waiters[w->bidx[k] - 1].cta == x->cta &&
                                   w->waiters[w->bidx[k] - 1].thread == x->thread))
                k = (k + 1) & (cap - 1);
            w->bidx[k] = (uint32_t)i + 1;
        }
    }
    w->idx_stale = 0;
    return 0;
}

/* The waiter a PTX thread's direct slot names, if the indexes are current
 * (NULL: ask waiter()). Most waits end here. */
static inline pa_waiter *known_waiter(pa_watch *w, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off)
{
    if (w->idx_stale || 2 * (w->nwaiters + 1) > w->capidx || thread >= PA_DIRECT_THREADS ||
        (size_t)cta * PA_DIRECT_THREADS >= w->ntslot)
        return NULL;
    const pa_tslot *s = &w->tslot[(size_t)cta * PA_DIRECT_THREADS + thread];
    uint32_t h = s->last[off / 8 % PA_DIRECT_WAYS];
    if (s->gen != w->gen || !h || h > w->nwaiters)
        return NULL;
    pa_waiter *x = &w->waiters[h - 1];
    return same_waiter(x, cta, thread, rank, off) ? x : NULL;
}

static pa_waiter *waiter(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off,
                         pa_error *err)
{
    pa_watch *w = m->watch;
    if (w->last_waiter < w->nwaiters) {
        pa_waiter *x = &w->waiters[w->last_waiter];
        if (same_waiter(x, cta, thread, rank, off))
            return x;
    }
    if (!w->tslot && m->cluster.nctas) {   /* no memory: the hash indexes serve every thread */
        w->tslot = calloc((size_t)m->cluster.nctas * PA_DIRECT_THREADS, sizeof *w->tslot);
        if (w->tslot) {
            w->ntslot = (size_t)m->cluster.nctas * PA_DIRECT_THREADS;
            w->idx_stale = 1;             /* the blocked move from the hash to their slots */
        }
    }
    if ((w->idx_stale || 2 * (w->nwaiters + 1) > w->capidx) && reindex(w)) {
        pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the hazard checker");
        return NULL;
    }
    pa_waiter *known = known_waiter(w, cta, thread, rank, off);   /* the indexes are current now */
    if (known)
        return known;
    pa_tslot *s = direct(w, cta, thread);
    uint32_t *hint = s ? &s->last[off / 8 % PA_DIRECT_WAYS] : NULL;
    size_t k = wslot(cta, thread, rank, off, w->capidx);
    for (; w->widx[k]; k = (k + 1) & (w->capidx - 1)) {
        pa_waiter *x = &w->waiters[w->widx[k] - 1];
        if (same_waiter(x, cta, thread, rank, off)) {
            if (hint)
                *hint = w->widx[k];
            w->last_waiter = (size_t)(x - w->waiters);
            return x;
        }
    }
    if (w->nwaiters == w->capwaiters) {
        size_t cap = w->capwaiters ? w->capwaiters * 2 : 16;
        pa_waiter *nw = realloc(w->waiters, cap * sizeof *nw);
        if (!nw) {
            pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the hazard checker");
            return NULL;
        }
        w->waiters = nw;
        w->capwaiters = cap;
    }
    w->widx[k] = (uint32_t)w->nwaiters + 1;
    if (hint)
        *hint = w->widx[k];
    w->last_waiter = w->nwaiters;
    pa_waiter *x = &w->waiters[w->nwaiters++];
    memset(x, 0, sizeof *x);
    x->cta = cta;
    x->thread = thread;
    x->rank = rank;
    x->offset = off;
    return x;   /* first wait: compared with phase 0, the phase at init */
}

/* The (cta, thread) slot of the blocked index. */
static uint32_t *blocked_slot(pa_watch *w, uint32_t cta, uint32_t thread)
{
    pa_tslot *s = direct(w, cta, thread);
    if (s)
        return &s->blocked;
    size_t k = wslot(cta, thread, 0, 0, w->capidx);
    while (w->bidx[k] && !(w->waiters[w->bidx[k] - 1].cta == cta && w->waiters[w->bidx[k] - 1].thread == thread))
        k = (k + 1) & (w->capidx - 1);
    return &w->bidx[k];
}

/* A thread that does anything else is not blocked in a wait (unblock_thread). */
static void unblock(pa_watch *w, uint32_t cta, uint32_t thread)
{
    if (w->idx_stale || !w->capidx) {
        if (reindex(w)) {             /* out of memory: the slow way */
            for (size_t i = 0; i < w->nwaiters; i++)
                if (w->waiters[i].cta == cta && w->waiters[i].thread == thread)
                    w->waiters[i].blocked = 0;
            return;
        }
    }
    uint32_t *b = blocked_slot(w, cta, thread);
    if (*b)
        w->waiters[*b - 1].blocked = 0;
    w->free_known = 1;
    w->free_at = w->nblocking;
    w->free_cta = cta;
    w->free_thread = thread;
}

/* inline: a thread found blocked nowhere, with no blocking wait since, is the
 * common case, and the whole answer */
static inline void unblock_thread(pa_machine *m, uint32_t cta, uint32_t thread)
{
    pa_watch *w = m->watch;
    if (!w || !w->nwaiters)
        return;
    /* a thread is blocked only by a wait that blocked it: none since it was found free */
    if (w->free_known && w->free_at == w->nblocking && w->free_cta == cta && w->free_thread == thread)
        return;
    unblock(w, cta, thread);
}

/* Note waiter x (just set blocked) in the blocked index. */
static void note_blocked(pa_watch *w, pa_waiter *x)
{
    if (w->idx_stale || !w->capidx)
        return;                       /* the next reindex reads the flag */
    *blocked_slot(w, x->cta, x->thread) = (uint32_t)(x - w->waiters) + 1;
}

/* init / inval: the barrier's waiters start again. */
static void forget_waiters(pa_machine *m, uint32_t rank, uint32_t off)
{
    if (!m->watch)
        return;
    pa_watch *w = m->watch;
    w->idx_stale = 1;
    for (size_t i = 0; i < w->nwaiters;)
        if (w->waiters[i].rank == rank && w->waiters[i].offset == off)
            w->waiters[i] = w->waiters[--w->nwaiters];
        else
            i++;
}

/* Does the barrier order anything: operations signal it, or more than one
 * thread uses it (a lone thread stepping the state machine orders nothing)? */
static inline int synchronises(pa_machine *m, pa_mbarrier *b, uint32_t rank, uint32_t off, uint32_t cta,
                               uint32_t thread)
{
    uint64_t tx;
    if (!b->async_tracked && pa_qv_signalers(m, rank, off, &tx, NULL))
        b->async_tracked = 1;
    if (cta != b->user_cta || thread != b->user_thread)
        b->shared_use = 1;
    return b->async_tracked || b->shared_use;
}

/* --- operations -------------------------------------------------------------- */

static int check_no_signalers(pa_machine *m, uint32_t rank, uint32_t off, const char *op, pa_error *err)
{
    uint64_t tx;
    size_t n = pa_qv_signalers(m, rank, off, &tx, NULL);
    if (!n)
        return PA_OK;
    return pa_hazard(pa_machine_hazards(m), err, PA_HZ_REINIT_PENDING,
                     "mbarrier.%s of the mbarrier at 0x%x in CTA %u while %zu pending operation(s) "
                     "that signal it (%" PRIu64 " tx bytes) have not completed (undefined behaviour: "
                     "they would signal a repurposed object)",
                     op, off, rank, n, tx);
}

int pa_sync_init(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t count,
                 pa_error *err)
{
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                       m->cluster.nctas);
    uint32_t rank = cta, off = pa_smem_offset(addr);
    /* Checked before the barrier changes: a raised hazard leaves the model as it was. */
    int rc = check_no_signalers(m, rank, off, "init", err);
    if (rc || (rc = pa_machine_mbar_init(m, cta, addr, count, err)))
        return rc;
    unblock_thread(m, cta, thread);
    forget_waiters(m, rank, off);
    pa_mbarrier *b = pa_machine_mbar(m, cta, addr, 0, err);
    if (b) {
        b->user_cta = cta;
        b->user_thread = thread;
    }
    event(m, PA_EV_INIT, cta, thread, rank, off, count, 0);
    pa_hb_mbar_init(m, cta, thread, rank, off);
    return PA_OK;
}

void pa_sync_cta_restart(pa_machine *m, uint32_t rank)
{
    for (size_t i = 0; i < m->nmbars; i++) {
        pa_mbar_slot *s = m->mbars[i];
        if (s && s->cta == rank && !s->ops.n && s->bar.valid) {
            pa_mbar_inval(&s->bar);
            forget_waiters(m, s->cta, s->offset);
        }
    }
    pa_hb_cta_restart(m, rank);
}

int pa_sync_inval(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, pa_error *err)
{
    uint32_t rank, off;
    pa_mbarrier *b = lookup(m, cta, addr, &rank, &off, err);
    if (!b)
        return err ? err->code : PA_ERR_HAZARD;
    int rc = check_no_signalers(m, rank, off, "inval", err);   /* before the change, as for init */
    if (rc)
        return rc;
    pa_mbar_inval(b);
    unblock_thread(m, cta, thread);
    forget_waiters(m, rank, off);
    event(m, PA_EV_INVAL, cta, thread, rank, off, 0, 0);
    return PA_OK;
}

int pa_sync_arrive(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t count,
                   uint32_t tx, unsigned flags, uint64_t *state, pa_error *err)
{
    uint32_t rank, off;
    int rc;
    if (tx && (rc = pa_target_require(m->target, PA_FEAT_MBAR_TX, err)))
        return rc;
    pa_mbarrier *b = lookup(m, cta, addr, &rank, &off, err);
    if (!b)
        return err ? err->code : PA_ERR_HAZARD;
    if ((rc = need_valid(m, b, rank, off, "arrive", err)))
        return rc;
    /* PTX ISA, phase of the mbarrier object: each phase needs a test_wait or
     * try_wait returning True before an arrive-on in the next phase. Checked
     * where the barrier synchronises something: asynchronous operations
     * signal it, or another thread waits on it (a lone thread stepping the
     * state machine synchronises nothing). */
    int orders = synchronises(m, b, rank, off, cta, thread);
    if (b->phase > 0 && b->observed < b->phase && orders &&
        (rc = pa_hazard(pa_machine_hazards(m), err, PA_HZ_PHASE_UNOBSERVED,
                        "thread %u of CTA %u arrives on phase %" PRIu64 " of the mbarrier at 0x%x in "
                        "CTA %u, but no test_wait / try_wait returned True for phase %" PRIu64
                        " (PTX ISA: a wait must observe each phase complete before an arrive-on "
                        "in the next)",
                        thread, cta, b->phase, off, rank, b->phase - 1)))
        return rc;
    uint64_t before = b->phase;
    if ((rc = pa_mbar_arrive(b, count, tx, flags, state, err)))
        return failed(m, rc, err, cta, thread, rank, off);
    unblock_thread(m, cta, thread);
    if (m->watch && m->watch->hb)
        pa_hb_mbar_arrive(m, cta, thread, rank, off);   /* .release (the default) */
    event(m, PA_EV_ARRIVE, cta, thread, rank, off, count, tx);
    trace_flips(m, before, b, rank, off);
    return check_overdelivered(m, b, rank, off, cta, thread, err);
}

int pa_sync_tx(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t tx, int complete,
               pa_error *err)
{
    uint32_t rank, off;
    int rc = pa_target_require(m->target, PA_FEAT_MBAR_TX, err);
    if (rc)
        return rc;
    pa_mbarrier *b = lookup(m, cta, addr, &rank, &off, err);
    if (!b)
        return err ? err->code : PA_ERR_HAZARD;
    const char *op = complete ? "complete_tx" : "expect_tx";
    if ((rc = need_valid(m, b, rank, off, op, err)))
        return rc;
    synchronises(m, b, rank, off, cta, thread);   /* note the thread */
    uint64_t before = b->phase;
    rc = complete ? pa_mbar_complete_tx(b, tx, err) : pa_mbar_expect_tx(b, tx, err);
    if (rc)
        return failed(m, rc, err, cta, thread, rank, off);
    unblock_thread(m, cta, thread);
    event(m, complete ? PA_EV_COMPLETE_TX : PA_EV_EXPECT_TX, cta, thread, rank, off, tx, 0);
    trace_flips(m, before, b, rank, off);
    return check_overdelivered(m, b, rank, off, cta, thread, err);
}

int pa_sync_wait(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t parity,
                 int is_try, int *result, pa_error *err)
{
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                       m->cluster.nctas);
    pa_mbar_slot *s = pa_machine_mbar_slot(m, cta, addr, 0, err);   /* a slot never moves */
    if (!s)
        return err ? err->code : PA_ERR_HAZARD;
    return pa_sync_wait_slot(m, cta, thread, s, parity, is_try, result, err);
}

/* The lanes' own steps of pa_sync_wait_lanes, for lanes `lanes` of the
 * threads from `first`: each one's waiter, named by its direct slot, and the
 * slot's blocked record, in lane order; stops before the first lane whose slot
 * does not name its waiter or that missed a phase. Apart, and with no calls,
 * so that its values stay in registers. Returns the lanes done. */
typedef struct {
    pa_tslot *ts;              /* the slot of thread first */
    pa_waiter *ws;
    size_t nw;
    uint64_t phase;
    uint32_t first, cta, rank, off, way, gen, par, skip;
    int blocked;
} wait_run;

/* (the waiter's parity and blocked flag written as one word) */
_Static_assert(offsetof(pa_waiter, blocked) == offsetof(pa_waiter, parity) + 4 && sizeof(int) == 4,
               "pa_waiter's parity and blocked flag");

static __attribute__((noinline)) uint32_t wait_run_lanes(const wait_run *c, uint32_t lanes)
{
    pa_tslot *const ts = c->ts;
    pa_waiter *const ws = c->ws;
    const size_t nw = c->nw;
    const uint64_t phase = c->phase;
    const uint32_t first = c->first, cta = c->cta, rank = c->rank, off = c->off, way = c->way, gen = c->gen;
    const uint32_t pb[2] = {c->par, (uint32_t)c->blocked};   /* parity, blocked: one store */
    uint64_t par_blocked;
    memcpy(&par_blocked, pb, 8);
    uint32_t skip = c->skip, bits = lanes;
    for (; bits; bits &= bits - 1) {
        const uint32_t k = (uint32_t)__builtin_ctz(bits), thread = first + k;
        pa_tslot *const t = &ts[k];
        const uint32_t h = t->last[way];
        if (t->gen != gen || (size_t)(h - 1u) >= nw)   /* (h 0: none) */
            break;
        pa_waiter *const x = &ws[h - 1];
        if (!same_waiter(x, cta, thread, rank, off) || phase >= x->last_phase + 2)
            break;
        if (thread != skip && t->blocked) {   /* unblock_thread: blocked in no wait now, */
            ws[t->blocked - 1].blocked = 0;    /* its slot current: no lookups */
            t->blocked = 0;
        }
        skip = UINT32_MAX;
        x->last_phase = phase;
        memcpy((char *)x + offsetof(pa_waiter, parity), &par_blocked, 8);
        if (c->blocked)                /* note_blocked: the direct slot is current */
            t->blocked = h;
    }
    return lanes & ~bits;                /* the lanes before the one it stopped at */
}

/* The common wait in a few steps, for threads first + i of CTA cta (lane i of
 * `lanes`) one after another: the thread's waiter known through its direct
 * slot (the indexes current), no phase missed, and nothing to complete (the
 * phase complete, or a test_wait, or no operation pending on the barrier).
 * Each does pa_sync_wait_slot's steps below, in its order, with nothing that
 * can fail; none of them changes the barrier, the indexes or the queue, so
 * what they depend on is read once. Stops before the first lane that needs
 * the slow path; returns the lanes done. What only the lanes' last step
 * leaves (the barrier's flags and observed phase, the last thread found
 * free, the clock with the trace off) is written once after them: nothing
 * between reads it. */
uint32_t pa_sync_wait_lanes(pa_machine *m, uint32_t cta, uint32_t first, uint32_t lanes, pa_mbar_slot *s,
                            uint32_t parity, int is_try, uint32_t *answered)
{
    pa_mbarrier *b = &s->bar;
    pa_watch *w = m->watch;
    if (!lanes || !b->valid || !w || w->idx_stale || 2 * (w->nwaiters + 1) > w->capidx ||
        first + 31 - (uint32_t)__builtin_clz(lanes) >= PA_DIRECT_THREADS ||
        (size_t)cta * PA_DIRECT_THREADS >= w->ntslot)
        return 0;
    const int done = pa_mbar_test_parity(b, parity);
    if (!done && is_try && s->ops.n)
        return 0;                                      /* try_wait completes operations */
    const uint32_t rank = s->cta, off = s->offset, way = off / 8 % PA_DIRECT_WAYS;
    const uint32_t par = parity & 1u;
    const int blocked = is_try && !done;
    const uint64_t phase = b->phase;
    const wait_run run = {
        .ts = &w->tslot[(size_t)cta * PA_DIRECT_THREADS + first], .ws = w->waiters, .nw = w->nwaiters,
        .phase = phase, .first = first, .cta = cta, .rank = rank, .off = off, .way = way, .gen = w->gen,
        .par = par, .blocked = blocked,
        /* unblock_thread's shortcut: only the first lane can be the thread last
           found free (each lane after it follows another thread found free) */
        .skip = w->free_known && w->free_at == w->nblocking && w->free_cta == cta ? w->free_thread : UINT32_MAX};
    const uint32_t did = wait_run_lanes(&run, lanes);
    if (!did)
        return 0;
    /* (a lone lane, the per-thread API's wait, counts without a popcount call) */
    const uint32_t n = did & (did - 1) ? (uint32_t)__builtin_popcount(did) : 1;
    const uint32_t last = first + 31 - (uint32_t)__builtin_clz(did);
    const int acquire = done && w->hb, trace = w->trace.enabled;
    /* each lane's acquire and event in lane order (neither reads the waiters) */
    if (acquire || trace)
        for (uint32_t bits = did; bits; bits &= bits - 1) {
            const uint32_t thread = first + (uint32_t)__builtin_ctz(bits);
            if (acquire)
                pa_hb_mbar_acquire(m, cta, thread, rank, off, phase);
            if (trace)
                event(m, PA_EV_WAIT, cta, thread, rank, off, par, (uint64_t)done | (is_try ? 2u : 0u));
        }
    /* synchronises for each lane: the queue is the same for all, and more than one
       thread, or one not the barrier's user, shares it */
    synchronises(m, b, rank, off, cta, last);
    if (n > 1)
        b->shared_use = 1;
    if (done) {
        b->observed = phase;
        *answered |= did;
    }
    /* unblock_thread's record: the last lane, found free before its own wait blocked it */
    w->free_known = 1;
    w->free_at = w->nblocking + (blocked ? n - 1 : 0);
    w->free_cta = cta;
    w->free_thread = last;
    if (blocked)
        w->nblocking += n;
    if (!trace)
        w->trace.clock += n;
    return did;
}

int pa_sync_wait_slot(pa_machine *m, uint32_t cta, uint32_t thread, pa_mbar_slot *s, uint32_t parity,
                      int is_try, int *result, pa_error *err)
{
    uint32_t yes = 0;
    /* (a try_wait with operations to complete is never one of the few steps) */
    if (!(is_try && s->ops.n && !pa_mbar_test_parity(&s->bar, parity)) &&
        pa_sync_wait_lanes(m, cta, thread, 1, s, parity, is_try, &yes)) {   /* the few steps do */
        *result = (int)yes;
        return PA_OK;
    }
    pa_mbarrier *b = &s->bar;
    uint32_t rank = s->cta, off = s->offset;
    int rc = need_valid(m, b, rank, off, is_try ? "try_wait" : "test_wait", err);
    if (rc)
        return rc;
    synchronises(m, b, rank, off, cta, thread);   /* note the waiting thread */
    pa_waiter *w = NULL;
    if (m->watch && !(w = known_waiter(m->watch, cta, thread, rank, off)) &&
        !(w = waiter(m, cta, thread, rank, off, err)))
        return err ? err->code : PA_ERR_NO_MEMORY;
    const pa_waiter *waiters = w ? m->watch->waiters : NULL;
    uint64_t last = w ? w->last_phase : 0, now = b->phase;
    if (w && now >= last + 2 &&
        (rc = pa_hazard(pa_machine_hazards(m), err, PA_HZ_MISSED_PHASE,
                        "thread %u of CTA %u waits on parity %u of the mbarrier at 0x%x in CTA %u: phases "
                        "%" PRIu64 " and %" PRIu64 " completed since its last wait, so the parity names "
                        "a phase it missed (PTX ISA: a wait is valid only for the current or the "
                        "immediately preceding phase)",
                        thread, cta, parity & 1u, off, rank, last, last + 1)))
        return rc;
    *result = pa_mbar_test_parity(b, parity);
    int completed = 0;                                 /* try_wait completed operations */
    if (is_try && !*result) {
        completed = 1;
        if ((rc = pa_slot_try_wait_parity(m, s, parity, result, err)))
            return rc;                                 /* (the credits traced their phase flips) */
    }
    if (*result) {
        b->observed = b->phase;
        if (m->watch && m->watch->hb)
            pa_hb_mbar_acquire(m, cta, thread, rank, off, b->phase);   /* .acquire (the default) */
    }
    if (w) {
        /* completing may have moved the table or re-indexed it: look again only then */
        if (completed && (waiters != m->watch->waiters || m->watch->idx_stale || w->cta != cta ||
                          w->thread != thread || w->rank != rank || w->offset != off))
            w = waiter(m, cta, thread, rank, off, err);
        if (!w)
            return err ? err->code : PA_ERR_NO_MEMORY;
        unblock_thread(m, cta, thread);
        w->last_phase = b->phase;
        w->parity = parity & 1u;
        w->blocked = is_try && !*result;   /* test_wait never blocks: it polls */
        if (w->blocked) {
            m->watch->nblocking++;
            note_blocked(m->watch, w);
        }
    }
    event(m, PA_EV_WAIT, cta, thread, rank, off, parity & 1u, (uint64_t)(*result != 0) | (is_try ? 2u : 0u));
    return PA_OK;
}

/* --- explanations ---------------------------------------------------------------- */

int pa_sync_why(pa_machine *m, uint32_t cta, uint32_t addr, uint32_t parity, pa_wait_why *w,
                pa_error *err)
{
    uint32_t rank, off;
    pa_mbarrier *b = lookup(m, cta, addr, &rank, &off, err);
    if (!b)
        return err ? err->code : PA_ERR_HAZARD;
    int rc = need_valid(m, b, rank, off, "try_wait", err);
    if (rc)
        return rc;
    memset(w, 0, sizeof *w);
    w->rank = rank;
    w->offset = off;
    w->phase = b->phase;
    w->parity = parity & 1u;
    w->complete = pa_mbar_test_parity(b, parity);
    w->pending = b->pending;
    w->expected = b->expected;
    w->tx = b->tx;
    w->tx_expected = b->tx_expected;
    w->tx_credited = b->tx_credited;
    w->nsignal = pa_qv_signalers(m, rank, off, &w->signal_tx, &w->signal_arrivals);
    /* Bulk operations only credit bytes; arrivals come from threads or from
     * pending cp.async.mbarrier.arrive operations. */
    w->can_complete = w->complete || ((int64_t)w->signal_arrivals >= b->pending &&
                                      (b->tx > 0 ? w->signal_tx >= (uint64_t)b->tx : b->tx == 0));
    return PA_OK;
}

void pa_sync_why_text(const pa_wait_why *w, char *buf, size_t len)
{
    char what[160];
    if (w->complete) {
        snprintf(buf, len,
                 "phase %" PRIu64 " of the mbarrier at 0x%x in CTA %u has completed (parity %u): "
                 "the wait returns True",
                 w->phase - 1, w->offset, w->rank, w->parity);
        return;
    }
    int k = 0;
    if (w->pending > 0)
        k += snprintf(what + k, sizeof what - (size_t)k, "%d arrival%s", w->pending,
                      w->pending == 1 ? "" : "s");
    if (w->tx > 0)
        k += snprintf(what + k, sizeof what - (size_t)k, "%s%d tx bytes", k ? " and " : "", w->tx);
    if (w->tx < 0)
        k += snprintf(what + k, sizeof what - (size_t)k, "%s%d tx bytes credited beyond the %" PRIu64
                      " expected (an expect_tx missing)", k ? " and " : "", -w->tx, w->tx_expected);
    if (!k)
        snprintf(what, sizeof what, "nothing");
    const char *tail = w->tx < 0 ? "" : " missing";
    if (w->can_complete)
        snprintf(buf, len,
                 "phase %" PRIu64 " of the mbarrier at 0x%x in CTA %u is open: %s%s; %zu pending "
                 "operation%s credit%s it %" PRIu64 " tx bytes (the wait completes them)",
                 w->phase, w->offset, w->rank, what, tail, w->nsignal, w->nsignal == 1 ? "" : "s",
                 w->nsignal == 1 ? "s" : "", w->signal_tx);
    else if (w->nsignal)
        snprintf(buf, len,
                 "nothing pending can complete phase %" PRIu64 " of the mbarrier at 0x%x in CTA %u: "
                 "%s%s (%zu pending operation%s credit only %" PRIu64 " tx bytes and no arrival): "
                 "the kernel would hang",
                 w->phase, w->offset, w->rank, what, tail, w->nsignal, w->nsignal == 1 ? "" : "s",
                 w->signal_tx);
    else
        snprintf(buf, len,
                 "nothing pending can complete phase %" PRIu64 " of the mbarrier at 0x%x in CTA %u: "
                 "%s%s: the kernel would hang",
                 w->phase, w->offset, w->rank, what, tail);
}

int pa_sync_check_deadlock(pa_machine *m, pa_error *err)
{
    if (!m->watch)
        return PA_OK;
    for (size_t i = 0; i < m->watch->nwaiters; i++) {
        pa_waiter *x = &m->watch->waiters[i];
        if (!x->blocked)
            continue;
        pa_wait_why w;
        pa_error e2;
        uint32_t addr = m->cluster.nctas == 1 ? x->offset : pa_mapa(x->offset, x->rank);
        if (pa_sync_why(m, x->cta, addr, x->parity, &w, &e2) || w.complete || w.can_complete)
            continue;
        char why[PA_ERRMSG_LEN];
        pa_sync_why_text(&w, why, sizeof why);
        pa_hazard_note_rule(pa_machine_hazards(m), PA_HZ_DEADLOCK, why);
        return pa_fail_rule(err, PA_ERR_DEADLOCK, "deadlock", "thread %u of CTA %u is blocked in a wait on "
                       "parity %u: %s", x->thread, x->cta, x->parity, why);
    }
    return PA_OK;
}

int pa_sync_credit(pa_machine *m, size_t slot, uint64_t tx, pa_error *err)
{
    pa_mbar_slot *s = m->mbars[slot];
    pa_mbarrier *b = &s->bar;
    uint32_t rank = s->cta, off = s->offset;
    pa_watch *w = m->watch;
    uint64_t op = w ? w->cur_op : PA_NO_OP;
    uint32_t cta = w ? w->cur_cta : PA_NO_THREAD, thread = w ? w->cur_thread : PA_NO_THREAD;
    if (!b->valid)
        return pa_hazard_fatal(pa_machine_hazards(m), err, PA_HZ_UNINITIALISED,
                               "an operation completes %" PRIu64 " tx bytes on the mbarrier at 0x%x in "
                               "CTA %u, which is not initialised (undefined behaviour: PTX ISA, mbarrier)",
                               tx, off, rank);
    uint64_t before = b->phase;
    int rc = pa_mbar_complete_tx(b, (uint32_t)tx, err);
    if (rc)
        return failed(m, rc, err, cta, PA_NO_THREAD, rank, off);
    b->async_tracked = 1;
    if (w)
        pa_trace_add(&w->trace, PA_EV_COMPLETE_TX, cta, thread, op, rank, off, 1, tx, 0);
    trace_flips(m, before, b, rank, off);
    /* PTX ISA 9.7.13.15.5: tx-count counts the transactions "tracked by the
     * current phase", and complete-tx signals those "tracked by the current
     * phase". An operation issued in phase k whose bytes arrive in a later
     * phase was not counted by the phase it lands in: phase k completed
     * without it (its expect_tx was short, or other bytes stood in), and the
     * later phase now gets bytes nobody expected there. Checked against the
     * phase the operation saw at issue (a barrier re-initialised since is
     * reinit-pending's business). */
    if (w && w->cur_tracked && before > w->cur_phase &&
        (rc = pa_hazard(&w->hz, err, PA_HZ_TX_WRONG_PHASE,
                        "%s #%" PRIu64 " (CTA %u thread %u) was issued in phase %" PRIu64 " of the "
                        "mbarrier at 0x%x in CTA %u, but its %" PRIu64 " tx bytes land in phase %" PRIu64
                        ": phase %" PRIu64 " completed without them (PTX ISA: complete-tx signals the "
                        "transactions tracked by the current phase; count them with that phase's "
                        "expect_tx, and issue the next phase's operations after its wait)",
                        w->cur_kind ? w->cur_kind : "operation", op, cta, thread, w->cur_phase, off, rank,
                        tx, before, w->cur_phase)))
        return rc;
    return check_overdelivered(m, b, rank, off, cta, thread, err);
}

int pa_sync_op_arrive(pa_machine *m, size_t slot, uint64_t op, uint32_t cta, uint32_t thread,
                      pa_error *err)
{
    pa_mbar_slot *s = m->mbars[slot];
    pa_mbarrier *b = &s->bar;
    uint32_t rank = s->cta, off = s->offset;
    pa_watch *w = m->watch;
    if (!b->valid)
        return pa_hazard_fatal(pa_machine_hazards(m), err, PA_HZ_UNINITIALISED,
                               "cp.async.mbarrier.arrive arrives on the mbarrier at 0x%x in CTA %u, which "
                               "is not initialised (undefined behaviour: PTX ISA, mbarrier)",
                               off, rank);
    uint64_t before = b->phase;
    int rc = pa_mbar_arrive(b, 1, 0, 0, NULL, err);
    if (rc)
        return failed(m, rc, err, cta, PA_NO_THREAD, rank, off);
    b->async_tracked = 1;
    if (w)
        pa_trace_add(&w->trace, PA_EV_ARRIVE, cta, thread, op, rank, off, 1, 1, 0);
    trace_flips(m, before, b, rank, off);
    return check_overdelivered(m, b, rank, off, cta, thread, err);
}
