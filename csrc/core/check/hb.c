/* hb.c - happens-before: vector clocks of threads, mbarriers, groups, and the
 * edges between them (see hb.h). */
#include "hb.h"
#include "hbmax.h"
#include "hbstate.h"

#include <stdlib.h>
#include <string.h>

static pa_hb *hb_of(const pa_machine *m)
{
    return m->watch ? m->watch->hb : NULL;
}

int pa_hb_enabled(const pa_machine *m)
{
    return hb_of(m) != NULL;
}

uint64_t hb_now(pa_machine *m)
{
    return m->watch->trace.clock;
}

/* --- clocks ------------------------------------------------------------------ */

/* A clock's vectors lie in one block, kind after kind (v[k] = v[0] + k * n),
 * n a multiple of 8: two clocks of one size join in one pass the compiler
 * vectorises (a join runs at every arrive, phase and wait). */
static int grow_clock_to(hb_clock *c, uint32_t n)
{
    uint32_t cap = c->n ? c->n : 8;
    while (cap < n)
        cap *= 2;
    uint32_t *v = calloc((size_t)HB_NK * cap, sizeof *v);
    if (!v)
        return -1;
    for (int k = 0; k < HB_NK && c->n; k++)
        memcpy(v + (size_t)k * cap, c->v[k], c->n * sizeof *v);
    free(c->v[0]);
    for (int k = 0; k < HB_NK; k++)
        c->v[k] = v + (size_t)k * cap;
    c->n = cap;
    return 0;
}

static inline int grow_clock(hb_clock *c, uint32_t n)
{
    return n <= c->n ? 0 : grow_clock_to(c, n);
}

int hb_raise(hb_clock *c, int k, uint32_t s, uint32_t v)
{
    if (s >= c->n && grow_clock(c, s + 1))
        return -1;
    if (c->v[k][s] < v) {
        c->v[k][s] = v;
        c->nz |= 1u << k;
        hb_cover(c, s);
    }
    return 0;
}

/* The kinds [*lo, *hi) that hold every vector of c that is not all 0. */
static inline void nz_span(unsigned nz, int *lo, int *hi)
{
    *lo = 0;
    while (*lo < HB_NK && !(nz >> *lo & 1))
        ++*lo;
    *hi = HB_NK;
    while (*hi > *lo && !(nz >> (*hi - 1) & 1))
        --*hi;
}

static int join_kind(hb_clock *d, const hb_clock *s, int k)
{
    if (grow_clock(d, s->n))
        return -1;
    if (s->nz >> k & 1) {
        pa_hb_max_into(d->v[k], s->v[k], s->hi);
        d->nz |= 1u << k;
        if (d->hi < s->hi)
            d->hi = s->hi;
    }
    return 0;
}

static int join(hb_clock *d, const hb_clock *s)
{
    if (grow_clock(d, s->n))
        return -1;
    int lo, hi;
    nz_span(s->nz, &lo, &hi);
    if (d->n == s->n && 2 * s->hi > s->n) {   /* one block: the kinds from the first to the last in use, in one pass */
        if (lo < hi)
            pa_hb_max_into(d->v[lo], s->v[lo], (size_t)(hi - lo) * s->n);
    } else {
        for (int k = lo; k < hi; k++)
            if (s->nz >> k & 1)
                pa_hb_max_into(d->v[k], s->v[k], s->hi);
    }
    d->nz |= s->nz;
    if (d->hi < s->hi)
        d->hi = s->hi;
    return 0;
}

static void clear_clock(hb_clock *c)
{
    int lo, hi;
    nz_span(c->nz, &lo, &hi);
    if (lo < hi)
        memset(c->v[lo], 0, (size_t)(hi - lo) * c->n * sizeof *c->v[0]);
    c->nz = 0;
    c->hi = 0;
}

static void free_clock(hb_clock *c)
{
    free(c->v[0]);
    memset(c, 0, sizeof *c);
}

/* k gains what VC knows: a fence of kind k lies after everything known now. */
static int fence_kind(hb_clock *c, int k)
{
    if (!(c->nz & 1u << HB_VC))
        return 0;
    for (uint32_t i = 0; i < c->hi; i++)
        if (c->v[k][i] < c->v[HB_VC][i])
            c->v[k][i] = c->v[HB_VC][i];
    c->nz |= 1u << k;
    return 0;
}

/* What s's VC knows, into d's kind k (a restricted release: RS). */
static int vc_into_kind(hb_clock *d, const hb_clock *s, int k)
{
    if (grow_clock(d, s->n))
        return -1;
    if (s->nz >> HB_VC & 1) {
        pa_hb_max_into(d->v[k], s->v[HB_VC], s->hi);
        d->nz |= 1u << k;
        if (d->hi < s->hi)      /* (d's entries past hi are 0 by the clocks' invariant) */
            d->hi = s->hi;
    }
    return 0;
}

/* --- threads, barriers ----------------------------------------------------------- */

static uint32_t new_slot(pa_hb *hb)
{
    return hb->nslots++;
}

uint32_t hb_group_slot(pa_hb *hb, uint32_t *slot)
{
    if (*slot == HB_NONE)
        *slot = new_slot(hb);
    return *slot;
}

/* The thread's own epoch moves on: later accesses are not covered by what it
 * has released or fenced so far. */
static void tick(hb_thread *t)
{
    t->cl.v[HB_VC][t->slot]++;
    t->cl.nz |= 1u << HB_VC;
}

/* A table of `size`-byte entries with twice its capacity (8 at first), or
 * NULL when the host is out of memory (the table and *cap left as they were). */
static void *grow(void *table, size_t *cap, size_t size)
{
    size_t n = *cap ? *cap * 2 : 8;
    void *t = realloc(table, n * size);
    if (t)
        *cap = n;
    return t;
}

/* A thread's slot in the hash of th (a kernel of many threads asks for each in
 * turn: a scan of th took an eighth of a checked launch). */
static size_t th_home(const pa_hb *hb, uint32_t cta, uint32_t thread)
{
    return ((thread * 0x9E3779B1u) ^ (cta * 0x85EBCA77u)) & (hb->capthash - 1);
}

/* Index th[i] (i = nth: the thread being added) in the hash, doubling it
 * first when it would be more than half full. */
static int th_hash_add(pa_hb *hb, size_t i)
{
    if (2 * (hb->nth + 1) > hb->capthash) {
        size_t cap = hb->capthash ? 2 * hb->capthash : 64;
        uint32_t *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        free(hb->thash);
        hb->thash = t;
        hb->capthash = cap;
        for (size_t k = 0; k < hb->nth; k++)
            if (th_hash_add(hb, k))
                return -1;
    }
    size_t h = th_home(hb, hb->th[i].cta, hb->th[i].thread);
    while (hb->thash[h])
        h = (h + 1) & (hb->capthash - 1);
    hb->thash[h] = (uint32_t)i + 1;
    return 0;
}

hb_thread *hb_thread_find(pa_machine *m, uint32_t cta, uint32_t thread)
{
    pa_hb *hb = hb_of(m);
    for (size_t h = hb->capthash ? th_home(hb, cta, thread) : 0; hb->capthash && hb->thash[h];
         h = (h + 1) & (hb->capthash - 1)) {
        const size_t i = hb->thash[h] - 1;
        if (hb->th[i].cta == cta && hb->th[i].thread == thread) {
            hb->last = i;
            return &hb->th[i];
        }
    }
    if (cta >= hb->nctas)
        return NULL;
    if (thread < HB_TDIR && !hb->tdir[cta] && !(hb->tdir[cta] = calloc(HB_TDIR, sizeof *hb->tdir[cta])))
        return NULL;
    if (hb->nth == hb->capth) {
        hb_thread *n = grow(hb->th, &hb->capth, sizeof *n);
        if (!n)
            return NULL;
        hb->th = n;
    }
    hb_thread *t = &hb->th[hb->nth];
    memset(t, 0, sizeof *t);
    t->cta = cta;
    t->thread = thread;
    t->slot = new_slot(hb);
    t->bslot = t->brslot = t->cslot = t->wslot = HB_NONE;
    /* it took part in every CTA-wide barrier so far */
    if (join(&t->cl, &hb->cta_all[cta]) || hb_raise(&t->cl, HB_VC, t->slot, 1) ||
        th_hash_add(hb, hb->nth)) {
        free_clock(&t->cl);
        return NULL;
    }
    if (thread < HB_TDIR)
        hb->tdir[cta][thread] = (uint32_t)hb->nth + 1;
    hb->last = hb->nth++;
    return t;
}

hb_bar *hb_bar_find(pa_machine *m, uint32_t rank, uint32_t off, int create)
{
    pa_hb *hb = hb_of(m);
    for (size_t i = 0; i < hb->nbars; i++)
        if (hb->bars[i].rank == rank && hb->bars[i].off == off) {
            hb->lastbar = i;
            return &hb->bars[i];
        }
    if (!create)
        return NULL;
    if (hb->nbars == hb->capbars) {
        hb_bar *n = grow(hb->bars, &hb->capbars, sizeof *n);
        if (!n)
            return NULL;
        hb->bars = n;
    }
    hb_bar *b = &hb->bars[hb->nbars];
    memset(b, 0, sizeof *b);
    b->rank = rank;
    b->off = off;
    b->slot = new_slot(hb);
    hb->lastbar = hb->nbars++;
    return b;
}

/* --- on / off -------------------------------------------------------------------- */

void pa_hb_free(pa_hb *hb)
{
    if (!hb)
        return;
    for (size_t i = 0; i < hb->nth; i++) {
        free_clock(&hb->th[i].cl);
        free_clock(&hb->th[i].fc);
        free_clock(&hb->th[i].rs);
        free_clock(&hb->th[i].pa);
        free(hb->th[i].bulk_at);
        free(hb->th[i].cp_at);
    }
    free(hb->th);
    free(hb->thash);
    for (uint32_t r = 0; hb->tdir && r < hb->nctas; r++)
        free(hb->tdir[r]);
    free(hb->tdir);
    for (size_t i = 0; i < hb->nbars; i++) {
        free_clock(&hb->bars[i].acc);
        free_clock(&hb->bars[i].done);
    }
    free(hb->bars);
    for (uint32_t r = 0; hb->cta_all && r < hb->nctas; r++)
        free_clock(&hb->cta_all[r]);
    free(hb->cta_all);
    for (uint32_t r = 0; hb->bar_rel && r < 16 * hb->nctas; r++)
        free_clock(&hb->bar_rel[r]);
    free(hb->bar_rel);
    hb_shadows_free(hb);
    for (size_t i = 0; i < hb->ntm; i++)
        free(hb->tm[i].tr);
    free(hb->tm);
    free(hb->races);
    for (size_t i = 0; i < hb->nsyncs; i++)
        free_clock(&hb->syncs[i].cl);
    free(hb->syncs);
    free(hb->synchash);
    free(hb);
}

int pa_hb_set(pa_machine *m, int on, pa_error *err)
{
    if (!m->watch)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "the machine has no checker");
    if (!on || m->watch->hb) {
        if (!on) {
            pa_hb_free(m->watch->hb);
            m->watch->hb = NULL;
        }
        return PA_OK;
    }
    pa_hb *hb = calloc(1, sizeof *hb);
    if (hb) {
        hb->nctas = m->cluster.nctas;
        hb->cta_all = calloc(hb->nctas, sizeof *hb->cta_all);
        hb->bar_rel = calloc(16 * (size_t)hb->nctas, sizeof *hb->bar_rel);
        hb->smem = calloc(hb->nctas, sizeof *hb->smem);
        hb->tdir = calloc(hb->nctas, sizeof *hb->tdir);
    }
    if (!hb || !hb->cta_all || !hb->bar_rel || !hb->smem || !hb->tdir) {
        pa_hb_free(hb);
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the race checker");
    }
    m->watch->hb = hb;
    return PA_OK;
}

int pa_hb_set_same_value(pa_machine *m, int mode, pa_error *err)
{
    if (!m->watch)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "the machine has no checker");
    if (mode < PA_SAME_VALUE_RACE || mode > PA_SAME_VALUE_ACCEPT)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "same-value store mode %d is not 0 (race), 1 (record) or "
                       "2 (accept)", mode);
    m->watch->same_value = mode;
    return PA_OK;
}

int pa_hb_same_value(const pa_machine *m)
{
    return m->watch ? m->watch->same_value : PA_SAME_VALUE_RACE;
}

static int oom(pa_error *err)
{
    return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the race checker");
}

static hb_thread *thread_or_fail(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err)
{
    if (cta >= m->cluster.nctas) {
        pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta, m->cluster.nctas);
        return NULL;
    }
    hb_thread *t = hb_thread_of(m, cta, thread);
    if (!t)
        oom(err);
    return t;
}

static void trace_sync(pa_machine *m, pa_event_kind kind, uint32_t cta, uint32_t thread, uint64_t a, uint64_t b)
{
    pa_trace_add(&m->watch->trace, kind, cta, thread, PA_NO_OP, 0, 0, 0, a, b);
}

/* --- fences ---------------------------------------------------------------------- */

int pa_hb_fence_proxy_async(pa_machine *m, uint32_t cta, uint32_t thread, int space, pa_error *err)
{
    if (space < 0 || space > 3)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "fence.proxy.async state space %d is not one of "
                       "none, .global, .shared::cta, .shared::cluster", space);
    if (m->watch)
        trace_sync(m, PA_EV_FENCE, cta, thread, PA_FENCE_KIND_PROXY_ASYNC, (uint64_t)space);
    if (!hb_of(m))
        return cta < m->cluster.nctas ? PA_OK
                                      : pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the "
                                                "cluster of %u CTAs", cta, m->cluster.nctas);
    hb_thread *t = thread_or_fail(m, cta, thread, err);
    if (!t)
        return PA_ERRC(err, PA_ERR_NO_MEMORY);
    if (space != PA_FENCE_GLOBAL)
        fence_kind(&t->cl, HB_FS);
    if (space == PA_FENCE_ALL || space == PA_FENCE_GLOBAL)
        fence_kind(&t->cl, HB_FG);
    tick(t);
    return PA_OK;
}

int pa_hb_fence_proxy_tensormap(pa_machine *m, uint32_t cta, uint32_t thread, int acquire, uint64_t addr,
                                uint32_t size, pa_error *err)
{
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                       m->cluster.nctas);
    if (acquire && size != 128)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "fence.proxy.tensormap::generic.acquire size %u: the only "
                       "supported value is 128 (PTX ISA, membar/fence)", size);
    if (acquire && !pa_global_resolve(&m->global, addr, size, NULL))
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "fence.proxy.tensormap::generic.acquire [0x%llx], %u: the "
                       "address must fall within the .global state space (PTX ISA, membar/fence)",
                       (unsigned long long)addr, size);
    if (m->watch)
        trace_sync(m, PA_EV_FENCE, cta, thread,
                   acquire ? PA_FENCE_KIND_TENSORMAP_ACQUIRE : PA_FENCE_KIND_TENSORMAP_RELEASE, addr);
    pa_hb *hb = hb_of(m);
    if (!hb)
        return PA_OK;
    hb_thread *t = thread_or_fail(m, cta, thread, err);
    if (!t)
        return PA_ERRC(err, PA_ERR_NO_MEMORY);
    if (!acquire) {
        fence_kind(&t->cl, HB_TR);
        tick(t);
        return PA_OK;
    }
    if (hb->ntm == hb->captm) {
        size_t cap = hb->captm ? hb->captm * 2 : 4;
        hb_tmacq *n = realloc(hb->tm, cap * sizeof *n);
        if (!n)
            return oom(err);
        hb->tm = n;
        hb->captm = cap;
    }
    hb_tmacq *a = &hb->tm[hb->ntm];
    a->tr = malloc((t->cl.n ? t->cl.n : 1) * sizeof *a->tr);
    if (!a->tr)
        return oom(err);
    if (t->cl.n)
        memcpy(a->tr, t->cl.v[HB_TR], t->cl.n * sizeof *a->tr);
    a->ntr = t->cl.n;
    a->addr = addr;
    a->cta = cta;
    a->slot = t->slot;
    a->epoch = hb_get(&t->cl, HB_VC, t->slot);
    hb->ntm++;
    return PA_OK;
}

int pa_hb_fence_mbarrier_init(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err)
{
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                       m->cluster.nctas);
    if (m->watch)
        trace_sync(m, PA_EV_FENCE, cta, thread, PA_FENCE_KIND_MBARRIER_INIT, 0);
    if (!hb_of(m))
        return PA_OK;
    hb_thread *t = thread_or_fail(m, cta, thread, err);
    if (!t)
        return PA_ERRC(err, PA_ERR_NO_MEMORY);
    fence_kind(&t->cl, HB_IK);
    tick(t);
    return PA_OK;
}

int pa_hb_fence(pa_machine *m, uint32_t cta, uint32_t thread, int sem, int scope, pa_error *err)
{
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                       m->cluster.nctas);
    if (scope < 0 || scope > 3)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "fence scope %d is not .cta, .cluster, .gpu or .sys", scope);
    if (m->watch)
        trace_sync(m, PA_EV_FENCE, cta, thread, sem == 1 ? PA_FENCE_KIND_SC : PA_FENCE_KIND_ACQ_REL, (uint64_t)scope);
    if (!hb_of(m))
        return PA_OK;
    hb_thread *t = thread_or_fail(m, cta, thread, err);
    if (!t)
        return PA_ERRC(err, PA_ERR_NO_MEMORY);
    /* The release half: with a relaxed cluster barrier or a relaxed atomic after it, the
     * release pattern; a .cta fence does not reach the other CTAs. fence.acquire has none. */
    if (scope >= 1 && sem != PA_HB_FENCE_ACQUIRE) {
        clear_clock(&t->fc);
        if (join(&t->fc, &t->cl))
            return oom(err);
        t->has_fc = 1;
    }
    /* The acquire half: relaxed atomics before it that read a location releases had written
     * (the acquire pattern); fence.release has none. */
    if (sem != PA_HB_FENCE_RELEASE && join(&t->cl, &t->pa))
        return oom(err);
    tick(t);
    return PA_OK;
}

/* fence.release.sync_restrict::shared::cta.cluster: a release fence whose "effect ... only
 * applies to operations performed on objects in .shared::cta state space" (PTX ISA, membar /
 * fence): a relaxed release after it (barrier.cluster.arrive.relaxed, a relaxed atomic) orders
 * the thread's earlier accesses to its own CTA's shared memory (kind RS), not the others.
 * fence.acquire.sync_restrict::shared::cluster.cluster: the model's waits acquire already
 * (mbarrier waits with .relaxed included), so it adds no order. */
int pa_hb_fence_restricted(pa_machine *m, uint32_t cta, uint32_t thread, int acquire, pa_error *err)
{
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                       m->cluster.nctas);
    if (m->watch)
        trace_sync(m, PA_EV_FENCE, cta, thread, PA_FENCE_KIND_ACQ_REL, 1);
    if (!hb_of(m))
        return PA_OK;
    hb_thread *t = thread_or_fail(m, cta, thread, err);
    if (!t)
        return PA_ERRC(err, PA_ERR_NO_MEMORY);
    if (!acquire) {
        clear_clock(&t->rs);
        if (join(&t->rs, &t->cl))
            return oom(err);
        t->has_rs = 1;
    }
    tick(t);
    return PA_OK;
}

/* --- atomics --------------------------------------------------------------------- */

static size_t sync_home(const pa_hb *hb, uint8_t space, uint32_t rank, uint64_t addr)
{
    uint64_t k = (addr ^ (uint64_t)rank << 40 ^ (uint64_t)space << 56) * 0x9E3779B97F4A7C15ull;
    return (size_t)(k >> 32) & (hb->capsynchash - 1);
}

/* Index syncs[i] in the hash (a kernel of many atomics' locations asks for
 * each in turn: a scan of syncs took a quarter of a checked split-K GEMM). */
static void sync_hash_put(pa_hb *hb, size_t i)
{
    const hb_sync *q = &hb->syncs[i];
    size_t h = sync_home(hb, q->space, q->rank, q->addr);
    while (hb->synchash[h])
        h = (h + 1) & (hb->capsynchash - 1);
    hb->synchash[h] = (uint32_t)i + 1;
}

static int sync_rehash(pa_hb *hb, size_t cap)
{
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    free(hb->synchash);
    hb->synchash = t;
    hb->capsynchash = cap;
    for (size_t i = 0; i < hb->nsyncs; i++)
        sync_hash_put(hb, i);
    return 0;
}

static hb_sync *sync_find(pa_hb *hb, uint8_t space, uint32_t rank, uint64_t addr)
{
    for (size_t h = hb->capsynchash ? sync_home(hb, space, rank, addr) : 0; hb->capsynchash && hb->synchash[h];
         h = (h + 1) & (hb->capsynchash - 1)) {
        hb_sync *q = &hb->syncs[hb->synchash[h] - 1];
        if (q->space == space && q->rank == rank && q->addr == addr)
            return q;
    }
    return NULL;
}

int hb_atomic_order(pa_machine *m, hb_thread *t, uint8_t space, uint32_t rank, uint64_t addr, int sem)
{
    pa_hb *hb = hb_of(m);
    const int reads = !(sem & PA_HB_NO_READ);
    sem &= PA_HB_ACQUIRE | PA_HB_RELEASE;
    hb_sync *s = sync_find(hb, space, rank, addr);
    if (!sem && !t->has_fc)                      /* relaxed: orders nothing until a fence acquires */
        return s && reads && join(&t->pa, &s->cl) ? -1 : 0;
    if (!s) {
        if (!(sem & PA_HB_RELEASE) && !t->has_fc)
            return 0;                            /* an acquire of what nothing released */
        if (hb->nsyncs == hb->capsyncs) {
            size_t cap = hb->capsyncs ? hb->capsyncs * 2 : 8;
            hb_sync *n = realloc(hb->syncs, cap * sizeof *n);
            if (!n)
                return -1;
            hb->syncs = n;
            hb->capsyncs = cap;
        }
        if (2 * (hb->nsyncs + 1) > hb->capsynchash &&
            sync_rehash(hb, hb->capsynchash ? 2 * hb->capsynchash : 64))
            return -1;
        s = &hb->syncs[hb->nsyncs++];
        memset(s, 0, sizeof *s);
        s->space = space;
        s->rank = rank;
        s->addr = addr;
        sync_hash_put(hb, hb->nsyncs - 1);
    }
    if (sem & PA_HB_RELEASE) {
        if (join(&s->cl, &t->cl))
            return -1;
        tick(t);
    } else if ((t->has_fc && join(&s->cl, &t->fc)) ||   /* fence.acq_rel; atom.relaxed */
               (t->has_rs && vc_into_kind(&s->cl, &t->rs, HB_RS))) {
        return -1;
    }
    if ((sem & PA_HB_ACQUIRE) && join(&t->cl, &s->cl))
        return -1;
    if (!(sem & PA_HB_ACQUIRE) && reads && join(&t->pa, &s->cl))   /* for a later fence's acquire */
        return -1;
    return 0;
}

/* --- barriers -------------------------------------------------------------------- */

int pa_hb_bar_sync(pa_machine *m, uint32_t cta, uint32_t barrier, const uint32_t *threads, size_t n,
                   pa_error *err)
{
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                       m->cluster.nctas);
    if (barrier > 15)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "bar.sync barrier %u is outside [0, 15] (PTX ISA, bar)", barrier);
    if (m->watch)
        trace_sync(m, PA_EV_BARRIER, cta, n ? threads[0] : PA_NO_THREAD, barrier, n);
    pa_hb *hb = hb_of(m);
    if (!hb)
        return PA_OK;
    for (size_t i = 0; i < n; i++)
        if (!hb_thread_of(m, cta, threads[i]))
            return oom(err);
    hb_clock j = {0};
    hb_clock *rel = &hb->bar_rel[16 * cta + barrier];   /* the bar.arrive threads' releases */
    int bad = join(&j, rel);
    free_clock(rel);
    for (size_t i = 0; i < hb->nth && !bad; i++) {
        const hb_thread *t = &hb->th[i];
        int in = 0;
        for (size_t k = 0; k < n && !in; k++)
            in = t->thread == threads[k];
        if (t->cta == cta && (n == 0 || in))
            bad = join(&j, &t->cl);
    }
    if (!bad && n == 0)
        bad = join(&j, &hb->cta_all[cta]) || join(&hb->cta_all[cta], &j);
    for (size_t i = 0; i < hb->nth && !bad; i++) {
        hb_thread *t = &hb->th[i];
        int in = 0;
        for (size_t k = 0; k < n && !in; k++)
            in = t->thread == threads[k];
        if (t->cta == cta && (n == 0 || in)) {
            bad = join(&t->cl, &j);
            tick(t);
        }
    }
    free_clock(&j);
    return bad ? oom(err) : PA_OK;
}

int pa_hb_bar_arrive(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t barrier, pa_error *err)
{
    pa_hb *hb = hb_of(m);
    if (!hb || cta >= hb->nctas || barrier > 15)
        return PA_OK;
    hb_thread *t = hb_thread_of(m, cta, thread);
    if (!t || join(&hb->bar_rel[16 * cta + barrier], &t->cl))
        return oom(err);
    tick(t);
    return PA_OK;
}

void pa_hb_bar_forget(pa_machine *m, uint32_t cta, uint32_t barrier)
{
    pa_hb *hb = hb_of(m);
    if (hb && cta < hb->nctas && barrier <= 15)
        free_clock(&hb->bar_rel[16 * cta + barrier]);
}

int pa_hb_barrier_cluster(pa_machine *m, int relaxed, pa_error *err)
{
    if (m->watch)
        trace_sync(m, PA_EV_BARRIER, PA_NO_THREAD, PA_NO_THREAD, 16, (uint64_t)(relaxed != 0));
    pa_hb *hb = hb_of(m);
    if (!hb)
        return PA_OK;
    hb_clock j = {0};
    int bad = 0;
    for (uint32_t r = 0; r < hb->nctas && !bad; r++)
        bad = join(&j, &hb->cta_all[r]);
    for (size_t i = 0; i < hb->nth && !bad; i++) {
        const hb_thread *t = &hb->th[i];
        if (!relaxed)
            bad = join(&j, &t->cl);
        else   /* .relaxed releases only what a fence released before it */
            bad = (t->has_fc && join(&j, &t->fc)) || join_kind(&j, &t->cl, HB_IK) ||
                  (t->has_rs && vc_into_kind(&j, &t->rs, HB_RS));
    }
    for (uint32_t r = 0; r < hb->nctas && !bad; r++)
        bad = join(&hb->cta_all[r], &j);
    for (size_t i = 0; i < hb->nth && !bad; i++) {
        bad = join(&hb->th[i].cl, &j);
        tick(&hb->th[i]);
    }
    free_clock(&j);
    return bad ? oom(err) : PA_OK;
}

/* --- mbarriers and groups (told by sync.c / checker.c) ------------------------------ */

void pa_hb_cta_restart(pa_machine *m, uint32_t rank)
{
    pa_hb *hb = hb_of(m);
    if (!hb)
        return;
    if (hb->smem && rank < hb->nctas)
        hb_shadow_clear(&hb->smem[rank]);
    for (uint32_t b = 0; rank < hb->nctas && b < 16; b++)
        free_clock(&hb->bar_rel[16 * rank + b]);
    size_t kept = 0;                             /* its shared memory's atomics published nothing yet */
    for (size_t i = 0; i < hb->nsyncs; i++) {
        if (hb->syncs[i].space == 1 && hb->syncs[i].rank == rank)
            free_clock(&hb->syncs[i].cl);
        else
            hb->syncs[kept++] = hb->syncs[i];
    }
    if (kept != hb->nsyncs) {
        hb->nsyncs = kept;
        if (sync_rehash(hb, hb->capsynchash)) {  /* the same size: cannot need more */
            free(hb->synchash);
            hb->synchash = NULL;
            hb->capsynchash = 0;
            hb->oom = 1;
        }
    }
    for (size_t i = 0; i < hb->nbars; i++)
        if (hb->bars[i].rank == rank)
            hb->bars[i].inited = 0;
}

void pa_hb_mbar_init(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off)
{
    pa_hb *hb = hb_of(m);
    hb_thread *t = hb ? hb_thread_of(m, cta, thread) : NULL;
    uint32_t tslot = t ? t->slot : 0, epoch = t ? hb_get(&t->cl, HB_VC, t->slot) : 0;
    hb_bar *b = t ? hb_bar_of(m, rank, off, 1) : NULL;
    if (!b) {
        if (hb)
            hb->oom = 1;
        return;
    }
    b->slot = new_slot(hb);   /* a new object: its phases count from 0 again */
    clear_clock(&b->acc);
    clear_clock(&b->done);
    b->inited = 1;
    b->init_slot = tslot;
    b->init_epoch = epoch;
    b->init_cta = cta;
    b->init_thread = thread;
    b->init_time = hb_now(m);
}

void pa_hb_mbar_arrive(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off)
{
    pa_hb *hb = hb_of(m);
    hb_thread *t = hb ? hb_thread_of(m, cta, thread) : NULL;
    if (!t)
        return;
    size_t ti = (size_t)(t - hb->th);
    hb_bar *b = hb_bar_of(m, rank, off, 1);
    if (!b || join(&b->acc, &hb->th[ti].cl))
        hb->oom = 1;
    tick(&hb->th[ti]);
}

void pa_hb_mbar_phase(pa_machine *m, uint32_t rank, uint32_t off)
{
    pa_hb *hb = hb_of(m);
    hb_bar *b = hb ? hb_bar_of(m, rank, off, 1) : NULL;
    if (!b)
        return;
    if (join(&b->done, &b->acc))
        hb->oom = 1;
    clear_clock(&b->acc);
}

void pa_hb_mbar_acquire(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off,
                        uint64_t phases_done)
{
    pa_hb *hb = hb_of(m);
    hb_thread *t = hb ? hb_thread_of(m, cta, thread) : NULL;
    if (!t)
        return;
    size_t ti = (size_t)(t - hb->th);
    hb_bar *b = hb_bar_of(m, rank, off, 1);
    if (!b) {
        hb->oom = 1;
        return;
    }
    t = &hb->th[ti];
    uint32_t p = phases_done > UINT32_MAX ? UINT32_MAX : (uint32_t)phases_done;
    /* the arrivals' releases, and the operations that completed the phases,
     * with the implicit generic-async proxy fence of their completion */
    if (join(&t->cl, &b->done) || hb_raise(&t->cl, HB_VC, b->slot, p) || hb_raise(&t->cl, HB_FS, b->slot, p) ||
        hb_raise(&t->cl, HB_FG, b->slot, p))
        hb->oom = 1;
}

static int push_u32(uint32_t **a, size_t *n, size_t *cap, uint32_t v)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        uint32_t *x = realloc(*a, c * sizeof *x);
        if (!x)
            return -1;
        *a = x;
        *cap = c;
    }
    (*a)[(*n)++] = v;
    return 0;
}

void pa_hb_commit(pa_machine *m, uint32_t cta, uint32_t thread, int cp_async)
{
    pa_hb *hb = hb_of(m);
    hb_thread *t = hb ? hb_thread_of(m, cta, thread) : NULL;
    if (!t)
        return;
    if (cp_async ? push_u32(&t->cp_at, &t->nc, &t->capc, t->cp_n) : push_u32(&t->bulk_at, &t->nb, &t->capb, t->bulk_n))
        hb->oom = 1;
}

void pa_hb_wait_group(pa_machine *m, uint32_t cta, uint32_t thread, int cp_async, uint32_t n, int read_only)
{
    pa_hb *hb = hb_of(m);
    hb_thread *t = hb ? hb_thread_of(m, cta, thread) : NULL;
    if (!t)
        return;
    size_t groups = cp_async ? t->nc : t->nb;
    if (groups <= n)
        return;
    uint32_t upto = cp_async ? t->cp_at[groups - n - 1] : t->bulk_at[groups - n - 1];
    uint32_t s1 = hb_group_slot(hb, cp_async ? &t->cslot : read_only ? &t->brslot : &t->bslot);
    uint32_t s2 = cp_async || read_only ? HB_NONE : hb_group_slot(hb, &t->brslot);
    for (int k = HB_VC; k <= HB_FG; k++)   /* completion observed: with its implicit proxy fence */
        if (hb_raise(&t->cl, k, s1, upto) || (s2 != HB_NONE && hb_raise(&t->cl, k, s2, upto)))
            hb->oom = 1;
}
