/* hbstate.h - what the memory model keeps (hb.c: clocks and edges; proxy.c:
 * the accesses and the checks). Private to check/. */
#ifndef PA_CHECK_HBSTATE_H
#define PA_CHECK_HBSTATE_H

#include "shadow.h"
#include "watch.h"

#include <stdlib.h>

/* The kinds of knowledge a thread's clock holds, one vector each:
 *   VC  happens-before: entry s is the latest epoch of slot s ordered before
 *   FS  ... and a fence.proxy.async (shared) lies between (or completion observed)
 *   FG  the same for global memory
 *   TR  ... and a fence.proxy.tensormap::generic.release lies between
 *   IK  ... and a fence.mbarrier_init.release.cluster lies between (mbarrier.init only)
 *   RS  ordered for the slot's accesses to its own CTA's shared memory only: released by a
 *       fence.release.sync_restrict::shared::cta (and a relaxed release after it) */
enum { HB_VC = 0, HB_FS, HB_FG, HB_TR, HB_IK, HB_RS, HB_NK };
enum { HB_GENERIC = 0, HB_ASYNC = 1, HB_TENSORMAP = 2 };
/* How an access's clock entry is observed. */
enum { HB_BY_THREAD = 0, HB_BY_MBAR, HB_BY_BULK, HB_BY_BULK_READ, HB_BY_CP, HB_BY_WGMMA };
#define HB_NONE UINT32_MAX

typedef struct {
    uint32_t *v[HB_NK];         /* one block: v[k] = v[0] + k * n */
    uint32_t n;                 /* entries of each vector, 0 or a multiple of 8 (missing ones are 0) */
    uint32_t hi;                /* a multiple of 8, at most n: every entry from hi on is 0 (joins and
                                 * fences stop there: an atomic's acquire and release each joined a
                                 * capacity's worth, most of a checked split-K GEMM) */
    unsigned nz;                /* bit k clear: vector k is all 0 (joins and clears skip it) */
} hb_clock;

typedef struct {
    uint32_t cta, thread;
    uint32_t slot;              /* its own entry */
    uint32_t bslot, brslot, cslot;  /* its bulk group writes / reads, its cp.async groups */
    uint32_t wslot;             /* a warpgroup's first thread: its wgmma-groups (epoch: the group number) */
    hb_clock cl;
    hb_clock fc;                /* clock at its last fence.acq_rel / fence.sc / fence.release at cluster scope
                                   or wider */
    int has_fc;
    hb_clock rs;                /* clock at its last fence.release.sync_restrict::shared::cta.cluster */
    int has_rs;
    hb_clock pa;                /* what its relaxed atomics read had been released: a later fence with
                                   acquire semantics (.acquire, .acq_rel, .sc) acquires it */
    uint32_t bulk_n, cp_n;      /* operations issued into bulk / cp.async groups */
    uint32_t *bulk_at, *cp_at;  /* bulk_n / cp_n at each commit_group */
    size_t nb, capb, nc, capc;
} hb_thread;

typedef struct {
    uint32_t rank, off;
    uint32_t slot;              /* entry of its current incarnation (a new one at each init) */
    hb_clock acc, done;         /* releases of the open phase / of the completed phases */
    int inited;
    uint32_t init_slot, init_epoch, init_cta, init_thread;
    uint64_t init_time;
} hb_bar;


/* A location atomics with .release / .acquire synchronise through: what its
 * releases (and relaxed atomics after a fence.acq_rel) published. */
typedef struct {
    uint8_t space;              /* 1 shared, 2 global; 0 a free entry */
    uint32_t rank;
    uint64_t addr;
    hb_clock cl;
} hb_sync;

typedef struct {
    uint64_t addr;
    uint32_t cta, slot, epoch;
    uint32_t *tr;               /* the acquiring thread's TR vector at the fence */
    uint32_t ntr;
} hb_tmacq;

struct pa_hb {
    uint32_t nslots;
    hb_thread *th;
    size_t nth, capth, last;
    uint32_t *thash;            /* th by (cta, thread): index + 1, 0 empty; open addressing */
    uint32_t **tdir;            /* per CTA rank (NULL: none yet): th by thread < HB_TDIR, index + 1, 0 none
                                 * (a warp's lanes ask for one thread after another: no hashing) */
    size_t capthash;            /* a power of two, at least twice nth (0: none yet) */
    hb_bar *bars;
    size_t nbars, capbars, lastbar;
    hb_clock *cta_all;          /* per CTA: what every thread of it knows (CTA-wide barriers) */
    hb_clock *bar_rel;          /* per CTA and named barrier: the releases of its bar.arrive threads */
    uint32_t nctas;
    hb_shadow *smem;            /* who accessed each byte: per CTA rank's shared memory */
    hb_shadow global;           /* ... and global memory */
    hb_tmacq *tm;
    size_t ntm, captm;
    int tm_pending;             /* the next tensor copy of tm_cta/tm_thread reads a map at tm_addr */
    uint64_t tm_addr, tm_time;
    uint32_t tm_cta, tm_thread;
    pa_hb_race *races;
    size_t nraces, capraces;
    int oom;
    uint64_t inst, ninst;       /* the open warp instruction instance (0: none), the last one numbered */
    uint32_t line;              /* the PTX line of the instruction executing (0: none given, pa_hb_line) */
    hb_sync *syncs;             /* atomics' locations (hb_atomic_order) */
    size_t nsyncs, capsyncs;
    uint32_t *synchash;         /* syncs by location: index + 1, 0 empty; open addressing */
    size_t capsynchash;         /* a power of two, at least twice nsyncs (0: none yet) */
};

enum { HB_TDIR = 1024 };       /* threads of a CTA */

/* hb.c */
/* hi once slot s holds a nonzero entry */
static inline void hb_cover(hb_clock *c, uint32_t s)
{
    if (s >= c->hi)
        c->hi = (s + 8) & ~7u;
}

static inline uint32_t hb_get(const hb_clock *c, int k, uint32_t s)
{
    return s < c->n ? c->v[k][s] : 0;
}
int hb_raise(hb_clock *c, int k, uint32_t s, uint32_t v);
hb_thread *hb_thread_find(pa_machine *m, uint32_t cta, uint32_t thread);
hb_bar *hb_bar_find(pa_machine *m, uint32_t rank, uint32_t off, int create);

/* The thread's / barrier's entry (created if new; NULL out of memory or, for
 * a barrier not created, absent): the last one asked for, inline. */
static inline hb_thread *hb_thread_of(pa_machine *m, uint32_t cta, uint32_t thread)
{
    pa_hb *hb = m->watch->hb;
    if (hb->last < hb->nth && hb->th[hb->last].cta == cta && hb->th[hb->last].thread == thread)
        return &hb->th[hb->last];
    const uint32_t *d = cta < hb->nctas && thread < HB_TDIR ? hb->tdir[cta] : NULL;
    if (d && d[thread]) {
        hb->last = d[thread] - 1;
        return &hb->th[hb->last];
    }
    return hb_thread_find(m, cta, thread);
}

static inline hb_bar *hb_bar_of(pa_machine *m, uint32_t rank, uint32_t off, int create)
{
    pa_hb *hb = m->watch->hb;
    if (hb->lastbar < hb->nbars && hb->bars[hb->lastbar].rank == rank && hb->bars[hb->lastbar].off == off)
        return &hb->bars[hb->lastbar];
    return hb_bar_find(m, rank, off, create);
}
uint32_t hb_group_slot(pa_hb *hb, uint32_t *slot);
uint64_t hb_now(pa_machine *m);

/* The memory order of an atomic by thread t at (space, rank, addr): sem's
 * PA_HB_RELEASE publishes t's clock there, PA_HB_ACQUIRE takes what was
 * published; 0 or -1 out of memory. */
int hb_atomic_order(pa_machine *m, hb_thread *t, uint8_t space, uint32_t rank, uint64_t addr, int sem);

/* The shadows proxy.c checks accesses against, freed with the rest. */
static inline void hb_shadows_free(pa_hb *hb)
{
    for (uint32_t r = 0; hb->smem && r < hb->nctas; r++)
        hb_shadow_free(&hb->smem[r]);
    free(hb->smem);
    hb->smem = NULL;
    hb_shadow_free(&hb->global);
}

#endif
