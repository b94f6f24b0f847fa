/* A warp's waits at once (pa_sync_wait_lanes, as the PTX interpreter's
 * converged warp does them, the lanes it stops at through pa_sync_wait_slot)
 * against the same waits thread by thread through every step of
 * pa_sync_wait_slot (the indexes marked stale before each, so that none takes
 * the few steps): after each step of random scripts of waits, arrivals, tx
 * counts, bulk copies and re-inits on three mbarriers (two sharing a direct
 * slot's way), the answers, the waiters, the blocked threads, the barriers'
 * checker fields, the clock, the trace, the hazards and the deadlock check
 * must be the same. */
#include "core.h"

#include <string.h>

#include "check.h"

static uint8_t gmem[4096];
static const uint32_t BARS[3] = {0x40, 0x48, 0x60};   /* 0x40 and 0x60: one way of the direct slots */

static uint64_t rng;
static size_t warp_lanes, warp_false, slow_lanes, missed, deadlocks, tracked;   /* what the scripts reached */
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11) % n;
}

static void setup(pa_machine *m, int trace)
{
    pa_error err;
    CHECK(pa_machine_init(m, 1, 1 << 14, &err) == PA_OK, "init");
    CHECK(pa_watch_attach(m, &err) == PA_OK, "watch");
    CHECK(pa_global_add(&m->global, 0x10000, sizeof gmem, gmem, NULL, &err) == PA_OK, "add");
    pa_machine_set_policy(m, PA_POLICY_IN_ORDER, 7);
    m->watch->hz.report = 1;                  /* hazards collected: the scripts run on past them */
    m->watch->trace.enabled = trace;
}

/* Lanes `mask` of the warp from thread `first`: the warp's way (a) or each
 * lane's every step (b). Both stop at the first lane that fails. */
static void warp_wait(pa_machine *a, pa_machine *b, uint32_t first, uint32_t mask, uint32_t addr,
                      uint32_t parity, int is_try, int step)
{
    pa_error ea, eb;
    pa_mbar_slot *sa = pa_machine_mbar_slot(a, 0, addr, 0, &ea), *sb = pa_machine_mbar_slot(b, 0, addr, 0, &eb);
    CHECK(sa && sb, "step %d: the slots", step);
    if (!sa || !sb)
        return;
    int ra[32] = {0}, rb[32] = {0}, rca = PA_OK, rcb = PA_OK;
    uint32_t fa = 32, fb = 32, fast = 0;
    for (uint32_t left = mask; left;) {
        uint32_t yes = 0, quick = pa_sync_wait_lanes(a, 0, first, left, sa, parity, is_try, &yes);
        fast |= quick;
        if (quick & (quick - 1))
            warp_lanes += (size_t)__builtin_popcount(quick);
        if (quick & ~yes & (quick - 1))
            warp_false++;
        for (uint32_t k = 0; k < 32; k++)
            if ((quick >> k) & 1)
                ra[k] = (int)((yes >> k) & 1);
        left &= ~quick;
        if (!left)
            break;
        uint32_t k = (uint32_t)__builtin_ctz(left);
        slow_lanes++;
        if ((rca = pa_sync_wait_slot(a, 0, first + k, sa, parity, is_try, &ra[k], &ea))) {
            fa = k;
            break;
        }
        left &= left - 1;
    }
    for (uint32_t bits = mask; bits; bits &= bits - 1) {
        uint32_t k = (uint32_t)__builtin_ctz(bits);
        b->watch->idx_stale = 1;
        if ((rcb = pa_sync_wait_slot(b, 0, first + k, sb, parity, is_try, &rb[k], &eb))) {
            fb = k;
            break;
        }
    }
    CHECK(rca == rcb && fa == fb, "step %d: rc %d / %d at lane %u / %u", step, rca, rcb, fa, fb);
    CHECK(!rca || !strcmp(ea.msg, eb.msg), "step %d: %s / %s", step, ea.msg, eb.msg);
    for (uint32_t k = 0; k < 32; k++)
        CHECK(ra[k] == rb[k], "step %d: lane %u answered %d / %d (fast lanes %08x)", step, k, ra[k], rb[k], fast);
}

/* The blocked record of machine m's direct slots against its waiters' flags:
 * a blocked waiter is the one its thread's slot names (a slot may still name
 * a waiter found unblocked since: the flag is the answer). */
static void blocked_index(pa_machine *m, int step)
{
    pa_watch *w = m->watch;
    if (w->idx_stale || !w->tslot)
        return;
    for (uint32_t t = 0; t < 64; t++) {
        uint32_t want = 0;
        for (size_t i = 0; i < w->nwaiters; i++)
            if (w->waiters[i].thread == t && w->waiters[i].blocked)
                want = (uint32_t)i + 1;
        const pa_tslot *s = &w->tslot[t];
        uint32_t has = s->gen == w->gen ? s->blocked : 0;
        CHECK(!want || has == want, "step %d: thread %u's slot names waiter %u, the flags %u", step, t, has, want);
    }
}

static void same_state(pa_machine *a, pa_machine *b, int step)
{
    pa_watch *x = a->watch, *y = b->watch;
    CHECK(x->nwaiters == y->nwaiters, "step %d: %zu / %zu waiters", step, x->nwaiters, y->nwaiters);
    for (size_t i = 0; i < x->nwaiters && i < y->nwaiters; i++) {
        const pa_waiter *p = &x->waiters[i], *q = &y->waiters[i];
        CHECK(p->cta == q->cta && p->thread == q->thread && p->rank == q->rank && p->offset == q->offset &&
                  p->last_phase == q->last_phase && p->parity == q->parity && p->blocked == q->blocked,
              "step %d: waiter %zu: thread %u phase %llu parity %u blocked %d / thread %u phase %llu parity %u "
              "blocked %d", step, i, p->thread, (unsigned long long)p->last_phase, p->parity, p->blocked,
              q->thread, (unsigned long long)q->last_phase, q->parity, q->blocked);
    }
    CHECK(x->nblocking == y->nblocking, "step %d: nblocking", step);
    CHECK(x->free_known == y->free_known && (!x->free_known || (x->free_at == y->free_at &&
                                                                 x->free_cta == y->free_cta &&
                                                                 x->free_thread == y->free_thread)),
          "step %d: the thread found free: %u at %llu / %u at %llu", step, x->free_thread,
          (unsigned long long)x->free_at, y->free_thread, (unsigned long long)y->free_at);
    CHECK(x->trace.clock == y->trace.clock, "step %d: clock %llu / %llu", step,
          (unsigned long long)x->trace.clock, (unsigned long long)y->trace.clock);
    CHECK(x->trace.n == y->trace.n, "step %d: %zu / %zu events", step, x->trace.n, y->trace.n);
    for (size_t i = 0; i < x->trace.n && i < y->trace.n; i++) {
        const pa_event *p = &x->trace.ev[i], *q = &y->trace.ev[i];
        CHECK(p->time == q->time && p->op == q->op && p->a == q->a && p->b == q->b && p->cta == q->cta &&
                  p->thread == q->thread && p->rank == q->rank && p->addr == q->addr && p->kind == q->kind &&
                  p->space == q->space, "step %d: event %zu", step, i);
    }
    CHECK(x->hz.n == y->hz.n, "step %d: %zu / %zu hazards", step, x->hz.n, y->hz.n);
    for (size_t i = 0; i < x->hz.n && i < y->hz.n; i++)
        CHECK(x->hz.recs[i].rule == y->hz.recs[i].rule && x->hz.recs[i].time == y->hz.recs[i].time &&
                  !strcmp(x->hz.recs[i].msg, y->hz.recs[i].msg),
              "step %d: hazard %zu: %s / %s", step, i, x->hz.recs[i].msg, y->hz.recs[i].msg);
    for (int i = 0; i < 3; i++) {
        pa_error e;
        const pa_mbarrier *p = pa_machine_mbar(a, 0, BARS[i], 0, &e), *q = pa_machine_mbar(b, 0, BARS[i], 0, &e);
        CHECK(!p == !q, "step %d: barrier %d", step, i);
        if (p && q)
            CHECK(p->valid == q->valid && p->phase == q->phase && p->pending == q->pending && p->tx == q->tx &&
                      p->observed == q->observed && p->async_tracked == q->async_tracked &&
                      p->shared_use == q->shared_use && p->user_thread == q->user_thread,
                  "step %d: barrier %d's state", step, i);
    }
    pa_error da, db;
    int ra = pa_sync_check_deadlock(a, &da), rb = pa_sync_check_deadlock(b, &db);
    CHECK(ra == rb && (!ra || !strcmp(da.msg, db.msg)), "step %d: deadlock %d / %d", step, ra, rb);
    deadlocks += ra != PA_OK;
    blocked_index(a, step);
}

static void script(uint64_t seed, int trace, int steps)
{
    pa_machine a, b;
    pa_error err;
    setup(&a, trace);
    setup(&b, trace);
    rng = seed;
    for (int i = 0; i < 3; i++) {
        CHECK(pa_sync_init(&a, 0, 0, BARS[i], 2, &err) == PA_OK, "init");
        CHECK(pa_sync_init(&b, 0, 0, BARS[i], 2, &err) == PA_OK, "init");
    }
    pa_bulk_copy_args args;
    memset(&args, 0, sizeof args);
    uint32_t dst = 1024;
    for (int step = 0; step < steps && !failures; step++) {
        uint32_t r = rnd(100), bar = BARS[rnd(3)], thread = rnd(64);
        pa_mbarrier *mb = pa_machine_mbar(&a, 0, bar, 0, &err);
        uint32_t cur = mb ? (uint32_t)(mb->phase & 1) : 0;
        if (r < 45) {                          /* a warp waits: mostly the whole warp, on the current phase */
            uint32_t mask = rnd(2) ? 0xFFFFFFFFu : (uint32_t)rng | 1u << rnd(32);
            uint32_t parity = rnd(4) ? cur : cur ^ 1u;
            warp_wait(&a, &b, rnd(2) * 32, mask, bar, parity, rnd(4) != 0, step);
        } else if (r < 75) {
            int x = pa_sync_arrive(&a, 0, thread, bar, 1, 0, 0, NULL, &err);
            int y = pa_sync_arrive(&b, 0, thread, bar, 1, 0, 0, NULL, &err);
            CHECK(x == y, "step %d: arrive %d / %d", step, x, y);
        } else if (r < 83) {
            uint32_t tx = 16 * (1 + rnd(2));
            int x = pa_sync_arrive(&a, 0, thread, bar, 1, tx, 0, NULL, &err);
            int y = pa_sync_arrive(&b, 0, thread, bar, 1, tx, 0, NULL, &err);
            CHECK(x == y, "step %d: arrive.expect_tx %d / %d", step, x, y);
        } else if (r < 95) {                   /* a bulk copy signals the barrier: operations pending */
            dst = dst + 16 >= 4096 ? 1024 : dst + 16;
            int x = pa_issue_bulk_copy(&a, 0, thread, PA_BULK_G2S_CTA, dst, 0x10000, 16, bar, &args, &err);
            int y = pa_issue_bulk_copy(&b, 0, thread, PA_BULK_G2S_CTA, dst, 0x10000, 16, bar, &args, &err);
            CHECK(x == y, "step %d: bulk copy %d / %d", step, x, y);
        } else if (r < 98) {
            int complete = (int)rnd(2);
            int x = pa_sync_tx(&a, 0, thread, bar, 16, complete, &err);
            int y = pa_sync_tx(&b, 0, thread, bar, 16, complete, &err);
            CHECK(x == y, "step %d: %s_tx %d / %d", step, complete ? "complete" : "expect", x, y);
        } else {                               /* the barrier starts again: its waiters are forgotten */
            uint32_t count = 1 + rnd(3);
            int x = pa_sync_init(&a, 0, thread, bar, count, &err);
            int y = pa_sync_init(&b, 0, thread, bar, count, &err);
            CHECK(x == y, "step %d: init %d / %d", step, x, y);
        }
        same_state(&a, &b, step);
    }
    for (size_t i = 0; i < a.watch->hz.n; i++)
        missed += a.watch->hz.recs[i].rule == PA_HZ_MISSED_PHASE;
    for (int i = 0; i < 3; i++) {
        const pa_mbarrier *p = pa_machine_mbar(&a, 0, BARS[i], 0, &err);
        tracked += p && p->async_tracked;
    }
    pa_machine_free(&a);
    pa_machine_free(&b);
}

int main(void)
{
    for (uint64_t seed = 1; seed <= 12; seed++)
        script(seed * 0x9E3779B97F4A7C15ull, (int)(seed & 1), 1500);
    /* the scripts reach what they compare */
    CHECK(warp_lanes > 10000 && warp_false > 100 && slow_lanes > 1000, "lanes at once %zu, warps answered False "
          "%zu, lanes one by one %zu", warp_lanes, warp_false, slow_lanes);
    CHECK(missed > 10 && deadlocks > 10 && tracked > 3, "missed phases %zu, deadlocks %zu, barriers signalled by "
          "copies %zu", missed, deadlocks, tracked);
    if (failures)
        printf("%d failure(s)\n", failures);
    return failures != 0;
}
