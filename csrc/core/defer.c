/* defer.c - a replay's tile-load bytes moved on several threads (see defer.h). */
#include "defer.h"

#include "check/watch.h"
#include "copy/boxwalk.h"

#include <stdlib.h>
#include <string.h>

#ifdef _WIN32   /* no POSIX threads: a replay completes everything on its own thread */

int pa_defer_start(pa_machine *m, unsigned threads, pa_error *err)
{
    (void)m, (void)threads, (void)err;
    return PA_OK;
}
int pa_defer_stop(pa_machine *m, pa_error *err) { (void)m, (void)err; return PA_OK; }
int pa_defer_flush(pa_machine *m, pa_error *err) { (void)m, (void)err; return PA_OK; }
int pa_defer_load(pa_machine *m, const pa_op *op, int *taken, pa_error *err)
{
    (void)m, (void)op, (void)err;
    *taken = 0;
    return PA_OK;
}

#else

#include <pthread.h>

/* A flush is due after this many jobs (bounded memory, bounded latency) or
 * when a job needs a lane past the last. */
#define MAX_JOBS 512
#define MAX_LANES 64
#define MAX_THREADS 64
/* A tile load (copy/tile.c) allocates a stage for rows over 8 KiB: such a
 * load could fail for want of memory, so it is not taken aside. */
#define MAX_ROW_BYTES 8192

typedef struct {
    pa_copy_plan plan;           /* the load's plan, made at issue */
    uint32_t rank, dst;          /* the CTA written, the box's shared offset */
    uint32_t lane;
} job_t;

/* Jobs that may write the same bytes: one thread copies them in issue order. */
typedef struct {
    uint32_t rank;
    uint64_t lo, hi;             /* shared bytes its jobs may write */
    uint64_t bytes;              /* bytes its jobs move (balancing) */
    unsigned thread;
} lane_t;

struct pa_defer;
typedef struct {
    struct pa_defer *d;
    unsigned index;              /* 1..threads-1; the caller is thread 0 */
    pthread_t tid;
} worker_t;

typedef struct pa_defer {
    pa_machine *m;
    job_t *jobs;
    uint32_t njobs;
    lane_t lanes[MAX_LANES];
    uint32_t nlanes;
    worker_t *workers;
    unsigned nworkers;
    pthread_mutex_t mu;
    pthread_cond_t go, done;     /* a flush starts / the last worker is done */
    uint64_t gen;                /* flushes started */
    unsigned busy;               /* workers still copying */
    int quit;
    int rc;                      /* first failed job (by issue order), under mu */
    uint32_t rc_job;
    pa_error err;
} pa_defer;

/* Copy the jobs of the lanes given to thread t, each lane in issue order. */
static void run_share(pa_defer *d, unsigned t)
{
    pa_machine *m = d->m;
    for (uint32_t i = 0; i < d->njobs; i++) {
        const job_t *j = &d->jobs[i];
        if (d->lanes[j->lane].thread != t)
            continue;
        pa_error e;
        int rc = pa_copy_load(&j->plan, &m->global, pa_smem_of(m, j->rank), j->dst, &e);
        if (rc) {   /* cannot happen for a load that qualified (defer.h); reported all the same */
            pthread_mutex_lock(&d->mu);
            if (!d->rc || i < d->rc_job) {
                d->rc = rc;
                d->rc_job = i;
                d->err = e;
            }
            pthread_mutex_unlock(&d->mu);
        }
    }
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    pa_defer *d = w->d;
    uint64_t seen = 0;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->quit && d->gen == seen)
            pthread_cond_wait(&d->go, &d->mu);
        if (d->quit)
            break;
        seen = d->gen;
        pthread_mutex_unlock(&d->mu);
        run_share(d, w->index);
        pthread_mutex_lock(&d->mu);
        if (--d->busy == 0)
            pthread_cond_signal(&d->done);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

static void stop_workers(pa_defer *d)
{
    pthread_mutex_lock(&d->mu);
    d->quit = 1;
    pthread_cond_broadcast(&d->go);
    pthread_mutex_unlock(&d->mu);
    for (unsigned i = 0; i < d->nworkers; i++)
        pthread_join(d->workers[i].tid, NULL);
    d->nworkers = 0;
}

static void destroy(pa_defer *d)
{
    pthread_cond_destroy(&d->done);
    pthread_cond_destroy(&d->go);
    pthread_mutex_destroy(&d->mu);
    free(d->workers);
    free(d->jobs);
    free(d);
}

int pa_defer_start(pa_machine *m, unsigned threads, pa_error *err)
{
    (void)err;
    if (threads < 2 || m->defer || pa_check_memory_on(m))
        return PA_OK;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    pa_defer *d = calloc(1, sizeof *d);
    if (!d)
        return PA_OK;   /* no room for the pool: the replay runs on this thread */
    d->m = m;
    d->jobs = malloc(MAX_JOBS * sizeof *d->jobs);
    d->workers = calloc(threads - 1, sizeof *d->workers);
    if (!d->jobs || !d->workers || pthread_mutex_init(&d->mu, NULL)) {
        free(d->jobs);
        free(d->workers);
        free(d);
        return PA_OK;
    }
    pthread_cond_init(&d->go, NULL);
    pthread_cond_init(&d->done, NULL);
    for (unsigned i = 0; i < threads - 1; i++) {
        d->workers[i].d = d;
        d->workers[i].index = i + 1;
        if (pthread_create(&d->workers[i].tid, NULL, worker_main, &d->workers[i]))
            break;
        d->nworkers++;
    }
    if (d->nworkers == 0) {
        destroy(d);
        return PA_OK;
    }
    m->defer = d;
    return PA_OK;
}

/* Give the lanes to threads, the largest first to the least loaded
 * (lanes are few: a handful per pipeline stage). */
static unsigned assign_lanes(pa_defer *d)
{
    const unsigned nthreads = d->nworkers + 1;
    uint64_t load[MAX_THREADS] = {0};
    uint32_t order[MAX_LANES];
    for (uint32_t i = 0; i < d->nlanes; i++) {
        uint32_t k = i;
        for (; k > 0 && d->lanes[order[k - 1]].bytes < d->lanes[i].bytes; k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
    unsigned used = 0;
    for (uint32_t i = 0; i < d->nlanes; i++) {
        unsigned best = 0;
        for (unsigned t = 1; t < nthreads; t++)
            if (load[t] < load[best])
                best = t;
        load[best] += d->lanes[order[i]].bytes;
        d->lanes[order[i]].thread = best;
        if (best + 1 > used)
            used = best + 1;
    }
    return used;
}

int pa_defer_flush(pa_machine *m, pa_error *err)
{
    pa_defer *d = m->defer;
    if (!d || d->njobs == 0)
        return PA_OK;
    if (assign_lanes(d) <= 1) {   /* one lane's worth: no one to wake */
        run_share(d, 0);
    } else {
        pthread_mutex_lock(&d->mu);
        d->gen++;
        d->busy = d->nworkers;
        pthread_cond_broadcast(&d->go);
        pthread_mutex_unlock(&d->mu);
        run_share(d, 0);
        pthread_mutex_lock(&d->mu);
        while (d->busy)
            pthread_cond_wait(&d->done, &d->mu);
        pthread_mutex_unlock(&d->mu);
    }
    d->njobs = d->nlanes = 0;
    int rc = d->rc;
    if (rc) {
        if (err)
            *err = d->err;
        d->rc = 0;
    }
    return rc;
}

int pa_defer_stop(pa_machine *m, pa_error *err)
{
    pa_defer *d = m->defer;
    if (!d)
        return PA_OK;
    int rc = pa_defer_flush(m, err);
    stop_workers(d);
    m->defer = NULL;
    destroy(d);
    return rc;
}

/* Can this load's copy not fail, and read nothing a job writes? (defer.h) */
static int qualifies(pa_machine *m, const pa_op *op)
{
    const pa_copy_plan *p = &op->u.tensor.plan;
    const pa_box_layout *l = &p->l;
    if (p->mode != PA_MODE_TILE || p->packed || p->map.kind != PA_MAP_TILED || l->row_bytes > MAX_ROW_BYTES)
        return 0;
    /* Every item a load reads is inside the tensor (boxwalk.h):
     *   globalAddress + sum_{d>=1} g_d * bytes_d + i * unit,  g_d < dim_d, i < limit0 */
    pa_walk w;
    pa_walk_tile(&w, &p->map, l, p->coords);
    uint64_t extent = pa_gaddr_mul(w.limit0, l->unit);
    for (uint32_t d = w.first; d <= w.last; d++) {
        if (w.dim[d] == 0)
            return 0;
        extent = pa_gaddr_add(extent, pa_gaddr_mul(w.dim[d] - 1, w.bytes[d]));
    }
    if (extent == PA_GADDR_OVERFLOW)
        return 0;
    const uint8_t *ptr = pa_global_resolve(&m->global, p->map.global_address, extent ? extent : 1, NULL);
    if (!ptr)
        return 0;
    /* A buffer registered over the model's own shared memory would be a
     * source that jobs write. */
    const uintptr_t a = (uintptr_t)ptr, b = a + (uintptr_t)extent;
    for (uint32_t r = 0; r < m->cluster.nctas; r++) {
        const uintptr_t s = (uintptr_t)m->cluster.smem[r];
        if (a < s + m->cluster.smem_bytes && s < b)
            return 0;
    }
    return 1;
}

int pa_defer_load(pa_machine *m, const pa_op *op, int *taken, pa_error *err)
{
    pa_defer *d = m->defer;
    *taken = 0;
    if (!d)
        return PA_OK;
    if (!qualifies(m, op))
        return pa_defer_flush(m, err);   /* the caller copies now: what is pending goes first */
    const pa_box_layout *l = &op->u.tensor.plan.l;
    uint64_t lo, hi;   /* the shared bytes written (whole 128-byte lines under a swizzle) */
    pa_copy_span(l, pa_smem_offset(op->u.tensor.smem_addr), &lo, &hi);
    const uint32_t none = MAX_LANES;
    uint32_t lane = none;
    int two = 0;
    for (uint32_t i = 0; i < d->nlanes; i++) {
        const lane_t *ln = &d->lanes[i];
        if (ln->rank == op->dst_rank && lo < ln->hi && ln->lo < hi) {
            two |= lane != none;
            lane = i;
        }
    }
    int rc;
    if (two || d->njobs == MAX_JOBS || (lane == none && d->nlanes == MAX_LANES)) {
        if ((rc = pa_defer_flush(m, err)))
            return rc;
        lane = none;
    }
    if (lane == none) {
        lane = d->nlanes++;
        d->lanes[lane] = (lane_t){op->dst_rank, lo, hi, 0, 0};
    } else {
        lane_t *ln = &d->lanes[lane];
        ln->lo = lo < ln->lo ? lo : ln->lo;
        ln->hi = hi > ln->hi ? hi : ln->hi;
    }
    d->lanes[lane].bytes += l->rows * l->row_bytes;
    job_t *j = &d->jobs[d->njobs++];
    j->plan = op->u.tensor.plan;
    j->rank = op->dst_rank;
    j->dst = pa_smem_offset(op->u.tensor.smem_addr);
    j->lane = lane;
    *taken = 1;
    return PA_OK;
}

#endif
