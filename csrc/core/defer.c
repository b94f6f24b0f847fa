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

/* A batch is handed to the threads after this many jobs (bounded memory,
 * bounded latency) or when a job needs a lane past the last. 2,048 rather
 * than 512: a hand-over wakes every worker and waits for the batch before,
 * and on the 16-core host 8 threads went from 34 to 56 GB/s with the larger
 * batches and the caller out of the copying (docs/performance.md). */
#define MAX_JOBS 2048
#define MAX_LANES 64
#define MAX_PIECES 256
#define MAX_PROTOS 8
/* Lanes remembered by the destination's 128-byte line (pa_defer_load). */
#define LANE_HINTS 64   /* hint_of: 6 bits */
#define MAX_THREADS 64
/* No thread is woken for less than this (split_lines). */
#define MIN_SHARE (64u << 10)
/* A tile load (copy/tile.c) allocates a stage for rows over 8 KiB: such a
 * load could fail for want of memory, so it is not taken aside. */
#define MAX_ROW_BYTES 8192

/* The plan a batch's loads of one map share: a .tile plan made through the
 * memo is the map's, the direction's and the operands' (copy.h), so a job
 * keeps only its coordinates and the thread that copies it makes the rest. */
typedef struct {
    pa_copy_plan plan;           /* coordinates: those of the first load */
} proto_t;

typedef struct {
    int32_t coords[PA_MAX_RANK];
    uint32_t proto;              /* its plan: the batch's protos[proto] with these coordinates */
    uint32_t rank, dst;          /* the CTA written, the box's shared offset */
    uint32_t lane;
    uint32_t cut;                /* the dimension whose rows a piece may take (0: none) */
} job_t;

/* Jobs that may write the same bytes. Its bytes [lo, hi) are cut into pieces
 * (slices of whole 128-byte lines) when every job of it can be cut by rows. */
typedef struct {
    uint32_t rank;
    uint64_t lo, hi;             /* shared bytes its jobs may write */
    uint64_t bytes;              /* bytes its jobs move (balancing) */
    int whole;                   /* a job of it cannot be cut: one piece */
    uint32_t first, npieces;     /* its pieces */
} lane_t;

/* A slice of a lane's bytes, copied by one thread: of every job of the lane,
 * in issue order, the rows that lie in the slice. Pieces are disjoint, so
 * the last write of every byte is the one of the sequential replay. */
typedef struct {
    uint64_t lo, hi, bytes;
    unsigned thread;
} piece_t;

typedef struct {
    job_t *jobs;
    uint32_t njobs;
    lane_t lanes[MAX_LANES];
    uint32_t nlanes;
    piece_t pieces[MAX_PIECES];
    uint32_t npieces;
    proto_t protos[MAX_PROTOS];
    uint32_t nprotos, last_proto;
    uint8_t lane_hint[LANE_HINTS]; /* a lane that held a job at this line (checked before use) */
    uint64_t serial;             /* batches started before it (error order) */
} batch_t;

struct pa_defer;
typedef struct {
    struct pa_defer *d;
    unsigned index;              /* 1..threads-1; the caller is thread 0 */
    pthread_t tid;
} worker_t;

/* Two batches: the caller adds jobs to `fill` while the workers copy their
 * pieces of `fly` (handed over when `fill` was full); the caller copies its
 * own, smaller, share of `fly` at the next hand-over or flush, then waits for
 * the workers, so batches complete in issue order. */
typedef struct pa_defer {
    pa_machine *m;
    batch_t b[2];
    batch_t *fill, *fly;         /* fly: NULL when no batch is out */
    uint64_t batches;
    worker_t *workers;
    unsigned nworkers;
    pthread_mutex_t mu;
    pthread_cond_t go, done;     /* a batch is out / the last worker is done */
    batch_t *work;               /* the batch the workers copy, under mu */
    uint64_t gen;                /* batches handed out */
    unsigned busy;               /* workers still copying */
    int quit;
    pa_tensormap ok_map[4];      /* the last maps found to qualify (qualifies) */
    unsigned n_ok_map;
    int rc;                      /* first failed job (by issue order), under mu */
    uint64_t rc_serial;
    uint32_t rc_job;
    pa_error err;
} pa_defer;

/* Rows [r0, r1) of job j (its plan: proto with j's coordinates): the whole
 * plan, or one cut along dimension j->cut (the box's only dimension of more
 * than one row beyond dim 0, traversed with its element stride). */
static int copy_rows(pa_machine *m, const job_t *j, const pa_copy_plan *proto, uint64_t r0, uint64_t r1,
                     pa_error *e)
{
    const pa_box_layout *l = &proto->l;
    const int whole = r0 == 0 && r1 == l->rows;
    if (r0 >= r1 && !whole)
        return PA_OK;
    pa_copy_plan p = *proto;
    memcpy(p.coords, j->coords, sizeof p.coords);
    uint32_t dst = j->dst;
    if (!whole) {
        const uint32_t c = j->cut;
        p.coords[c] = (int32_t)((int64_t)p.coords[c] + (int64_t)r0 * p.map.element_strides[c]);
        p.l.n[c] = (uint32_t)(r1 - r0);
        p.l.rows = r1 - r0;
        dst += (uint32_t)(r0 * l->pitch);
    }
    return pa_copy_load(&p, &m->global, pa_smem_of(m, j->rank), dst, e);
}

/* The rows of a job of layout l at dst that lie in [lo, hi) (cut jobs: a row
 * is one line). */
static void rows_in(const pa_box_layout *l, uint64_t dst, uint64_t lo, uint64_t hi, uint64_t *r0, uint64_t *r1)
{
    const uint64_t pitch = l->pitch, rows = l->rows;
    uint64_t a = lo <= dst ? 0 : (lo - dst + pitch - 1) / pitch;
    uint64_t b = hi <= dst ? 0 : (hi - dst + pitch - 1) / pitch;
    *r0 = a < rows ? a : rows;
    *r1 = b < rows ? b : rows;
}

/* Copy the pieces of batch b given to thread t, each in issue order. */
static void run_share(pa_defer *d, batch_t *b, unsigned t)
{
    pa_machine *m = d->m;
    for (uint32_t i = 0; i < b->njobs; i++) {
        const job_t *j = &b->jobs[i];
        const lane_t *ln = &b->lanes[j->lane];
        const pa_copy_plan *proto = &b->protos[j->proto].plan;
        for (uint32_t k = ln->first; k < ln->first + ln->npieces; k++) {
            const piece_t *pc = &b->pieces[k];
            if (pc->thread != t)
                continue;
            uint64_t r0 = 0, r1 = proto->l.rows;
            if (!ln->whole)
                rows_in(&proto->l, j->dst, pc->lo, pc->hi, &r0, &r1);
            pa_error e;
            int rc = copy_rows(m, j, proto, r0, r1, &e);
            if (rc) {   /* cannot happen for a load that qualified (defer.h); reported all the same */
                pthread_mutex_lock(&d->mu);
                if (!d->rc || b->serial < d->rc_serial || (b->serial == d->rc_serial && i < d->rc_job)) {
                    d->rc = rc;
                    d->rc_serial = b->serial;
                    d->rc_job = i;
                    d->err = e;
                }
                pthread_mutex_unlock(&d->mu);
            }
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
        batch_t *b = d->work;
        pthread_mutex_unlock(&d->mu);
        run_share(d, b, w->index);
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
    free(d->b[0].jobs);
    free(d->b[1].jobs);
    free(d);
}

/* The queue's aside hooks: what is pending is copied before a source is read
 * (a load taken aside may write it) and before any other completion moves
 * bytes (defer.h). */
static int aside_read(void *ctx, pa_machine *m, const pa_op *op, pa_error *err)
{
    (void)ctx, (void)op;
    return pa_defer_flush(m, err);
}

static int aside_complete(void *ctx, pa_machine *m, const pa_op *op, pa_error *err)
{
    (void)ctx;
    return op->kind == PA_OP_TILE_LOAD ? PA_OK : pa_defer_flush(m, err);
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
    d->b[0].jobs = malloc(MAX_JOBS * sizeof *d->b[0].jobs);
    d->b[1].jobs = malloc(MAX_JOBS * sizeof *d->b[1].jobs);
    d->workers = calloc(threads - 1, sizeof *d->workers);
    if (!d->b[0].jobs || !d->b[1].jobs || !d->workers || pthread_mutex_init(&d->mu, NULL)) {
        free(d->b[0].jobs);
        free(d->b[1].jobs);
        free(d->workers);
        free(d);
        return PA_OK;
    }
    d->fill = &d->b[0];
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
    m->aside = (pa_queue_hooks){.ctx = d, .on_read = aside_read, .on_complete = aside_complete};
    return PA_OK;
}

/* Every lane of b cut by whole lines: the lanes' lines, one lane after the
 * other, go in consecutive slices to the threads 1, 2, .., n-1, then 0 (`own`
 * bytes of them to thread 0, equal parts of the rest to the others; a line
 * goes where its middle falls), so each thread's bytes are its share within
 * a line, in at most nlanes + nthreads pieces; fewer threads when the parts
 * would be under MIN_SHARE. Returns how many threads have pieces. */
static unsigned split_lines(pa_defer *d, batch_t *b, uint64_t own)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < b->nlanes; i++) {
        const lane_t *ln = &b->lanes[i];
        const uint64_t lines = (ln->hi - ln->lo) / 128;
        total += lines * (ln->bytes / (lines ? lines : 1) + 1);
    }
    /* workers given a part: none below MIN_SHARE bytes each (waking one costs more) */
    own = own < total ? own : total;
    uint64_t nw = (total - own) / MIN_SHARE;
    nw = nw < d->nworkers ? nw : d->nworkers;
    const unsigned nslices = (unsigned)nw + 1;
    uint64_t end[MAX_THREADS];   /* slice k ends at end[k]; slice k is thread (k + 1) % nslices */
    for (unsigned k = 0; k + 1 < nslices; k++)
        end[k] = (total - own) / nw * (k + 1);
    end[nslices - 1] = UINT64_MAX;
    unsigned k = 0, used = 0;
    uint64_t pos = 0;
    b->npieces = 0;
    for (uint32_t i = 0; i < b->nlanes; i++) {
        lane_t *ln = &b->lanes[i];
        const uint64_t lines = (ln->hi - ln->lo) / 128, per = ln->bytes / (lines ? lines : 1) + 1;
        ln->first = b->npieces;
        for (uint64_t at = 0; at < lines;) {
            uint64_t n = 0;
            while (k + 1 < nslices && pos + per / 2 >= end[k])
                k++;
            while (at + n < lines && pos + per / 2 < end[k]) {
                n++;
                pos += per;
            }
            piece_t *pc = &b->pieces[b->npieces++];
            pc->lo = ln->lo + at * 128;
            pc->hi = pc->lo + n * 128;
            pc->bytes = n * per;
            pc->thread = (k + 1) % nslices;
            used = pc->thread + 1 > used ? pc->thread + 1 : used;
            at += n;
        }
        ln->npieces = b->npieces - ln->first;
    }
    return used;
}

/* Cut the lanes of b into pieces of about a thread's share and give them to
 * the threads, the largest first to the least loaded. Thread 0 starts with
 * `bias` bytes of other work (UINT64_MAX: it takes none). Returns how many
 * threads have pieces. */
static unsigned make_pieces(pa_defer *d, batch_t *b, uint64_t bias)
{
    const unsigned nthreads = d->nworkers + 1;
    const int out = bias == UINT64_MAX;   /* the caller takes none */
    uint64_t total = 0;
    int whole = 0;
    for (uint32_t i = 0; i < b->nlanes; i++) {
        total += b->lanes[i].bytes;
        whole |= b->lanes[i].whole;
    }
    const uint64_t share = out ? total / d->nworkers + 1 : (total + bias) / nthreads + 1;
    if (!whole && b->nlanes + nthreads <= MAX_PIECES)
        return split_lines(d, b, out || bias >= share ? 0 : share - bias);
    const uint64_t cut = share;
    b->npieces = 0;
    for (uint32_t i = 0; i < b->nlanes; i++) {
        lane_t *ln = &b->lanes[i];
        uint64_t k = 1, lines = (ln->hi - ln->lo) / 128;
        if (!ln->whole && ln->bytes > cut + cut / 4) {
            k = (ln->bytes + cut - 1) / cut;
            k = k < lines ? k : lines;
            if (b->npieces + k > MAX_PIECES - (b->nlanes - i - 1))
                k = 1;
        }
        ln->first = b->npieces;
        ln->npieces = (uint32_t)k;
        for (uint64_t q = 0; q < k; q++) {
            piece_t *pc = &b->pieces[b->npieces++];
            pc->lo = k == 1 ? ln->lo : ln->lo + lines * q / k * 128;
            pc->hi = k == 1 ? ln->hi : ln->lo + lines * (q + 1) / k * 128;
            pc->bytes = k == 1 ? ln->bytes : ln->bytes * (pc->hi - pc->lo) / (ln->hi - ln->lo);
        }
    }
    uint64_t load[MAX_THREADS] = {0};
    uint16_t order[MAX_PIECES];
    load[0] = out ? UINT64_MAX / 2 : bias;
    for (uint32_t i = 0; i < b->npieces; i++) {
        uint32_t k = i;
        for (; k > 0 && b->pieces[order[k - 1]].bytes < b->pieces[i].bytes; k--)
            order[k] = order[k - 1];
        order[k] = (uint16_t)i;
    }
    unsigned used = 0;
    for (uint32_t i = 0; i < b->npieces; i++) {
        unsigned best = 0;
        for (unsigned t = 1; t < nthreads; t++)
            if (load[t] < load[best])
                best = t;
        load[best] += b->pieces[order[i]].bytes;
        b->pieces[order[i]].thread = best;
        used = best + 1 > used ? best + 1 : used;
    }
    return used;
}

/* Hand b to the workers (they start on their pieces at once). */
static void hand_out(pa_defer *d, batch_t *b)
{
    pthread_mutex_lock(&d->mu);
    d->work = b;
    d->gen++;
    d->busy = d->nworkers;
    pthread_cond_broadcast(&d->go);
    pthread_mutex_unlock(&d->mu);
}

/* Thread 0's share of b, then wait for the workers'. */
static void finish(pa_defer *d, batch_t *b)
{
    run_share(d, b, 0);
    pthread_mutex_lock(&d->mu);
    while (d->busy)
        pthread_cond_wait(&d->done, &d->mu);
    pthread_mutex_unlock(&d->mu);
}

static int take_rc(pa_defer *d, pa_error *err)
{
    int rc = d->rc;
    if (rc) {
        if (err)
            *err = d->err;
        d->rc = 0;
    }
    return rc;
}

static void reset(pa_defer *d, batch_t *b)
{
    b->njobs = b->nlanes = b->npieces = b->nprotos = 0;
    b->serial = ++d->batches;
}

/* The batch being filled is full: finish the one out, hand this one to the
 * workers and fill the other. Thread 0 has the next batch's bookkeeping to
 * do meanwhile: with one or two workers it keeps half a share for later,
 * with three or more none (its books for a load measured about a quarter of
 * the load's copy: three workers already copy faster than it keeps them). */
static int hand_over(pa_defer *d, pa_error *err)
{
    if (d->fly)
        finish(d, d->fly);
    batch_t *b = d->fill;
    d->fly = NULL;
    if (b->njobs) {
        uint64_t total = 0;
        for (uint32_t i = 0; i < b->nlanes; i++)
            total += b->lanes[i].bytes;
        make_pieces(d, b, d->nworkers >= 3 ? UINT64_MAX : total / (d->nworkers + 1) / 2);
        hand_out(d, b);
        d->fly = b;
        d->fill = b == &d->b[0] ? &d->b[1] : &d->b[0];
        reset(d, d->fill);
    }
    return take_rc(d, err);
}

int pa_defer_flush(pa_machine *m, pa_error *err)
{
    pa_defer *d = m->defer;
    if (!d)
        return PA_OK;
    if (d->fly) {
        finish(d, d->fly);
        d->fly = NULL;
    }
    batch_t *b = d->fill;
    if (b->njobs) {
        if (make_pieces(d, b, 0) <= 1) {   /* one piece's worth: no one to wake */
            run_share(d, b, 0);
        } else {
            hand_out(d, b);
            finish(d, b);
        }
        reset(d, b);
    }
    return take_rc(d, err);
}

int pa_defer_stop(pa_machine *m, pa_error *err)
{
    pa_defer *d = m->defer;
    if (!d)
        return PA_OK;
    int rc = pa_defer_flush(m, err);
    stop_workers(d);
    m->defer = NULL;
    memset(&m->aside, 0, sizeof m->aside);
    destroy(d);
    return rc;
}

/* Can this load's copy not fail, and read nothing a job writes? (defer.h)
 * What follows the plan's own rules depends on the map alone (the whole
 * tensor, not the box) and on the buffers, which a replay does not change:
 * the last four maps that qualified are kept (a GEMM's A and B take turns),
 * and a byte-identical one qualifies without the walk. */
static int qualifies(pa_machine *m, pa_defer *d, const pa_op *op)
{
    const pa_copy_plan *p = &op->u.tensor.plan;
    const pa_box_layout *l = &p->l;
    if (p->mode != PA_MODE_TILE || p->packed || p->map.kind != PA_MAP_TILED || l->row_bytes > MAX_ROW_BYTES)
        return 0;
    for (unsigned i = 0; i < d->n_ok_map && i < 4; i++)
        if (!memcmp(&d->ok_map[i], &p->map, sizeof p->map))
            return 1;
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
    d->ok_map[d->n_ok_map++ % 4] = p->map;
    return 1;
}

/* The dimension a job may be cut along, or 0: every row one whole 128-byte
 * line (so a slice of whole lines holds whole rows of every job of a lane),
 * one dimension of more than one row, its coordinates within .s32. */
static uint32_t cut_dim(const pa_copy_plan *p, uint32_t dst)
{
    const pa_box_layout *l = &p->l;
    if (l->rows < 2 || l->row_bytes != 128 || l->pitch != 128 || dst % 128 ||
        p->map.interleave != PA_INTERLEAVE_NONE)
        return 0;
    uint32_t c = 0;
    for (uint32_t i = 1; i < l->rank; i++)
        if (l->n[i] > 1) {
            if (c)
                return 0;
            c = i;
        }
    if (!c || l->n[c] != l->rows)
        return 0;
    int64_t last = (int64_t)p->coords[c] + (int64_t)(l->rows - 1) * p->map.element_strides[c];
    return last <= INT32_MAX ? c : 0;
}

/* The batch's plan for loads like p (the same map, mode, direction and
 * operands but the coordinates), or -1: one of the same memo tag (copy.h),
 * else one compared field by field. A GEMM's loads take turns between its
 * maps: the search starts after the last one found. */
static int find_proto(const batch_t *b, const pa_copy_plan *p)
{
    for (uint32_t k = 1; p->memo_tag && k <= b->nprotos; k++) {
        const uint32_t i = b->last_proto + k < b->nprotos ? b->last_proto + k : b->last_proto + k - b->nprotos;
        const pa_copy_plan *q = &b->protos[i].plan;
        if (q->memo_tag == p->memo_tag && !memcmp(q->info, p->info, sizeof q->info))
            return (int)i;
    }
    for (uint32_t i = 0; i < b->nprotos; i++) {
        const pa_copy_plan *q = &b->protos[i].plan;
        if (q->mode == p->mode && q->dir == p->dir && !memcmp(q->info, p->info, sizeof q->info) &&
            !memcmp(&q->map, &p->map, sizeof q->map))
            return (int)i;
    }
    return -1;
}

/* A lane hint's slot: the line's number, hashed (a pipeline's stage buffers
 * are a power of two apart). */
static inline uint32_t hint_of(uint64_t lo)
{
    return (uint32_t)(lo >> 7) * 0x9E3779B1u >> 26;
}

/* The lane of b that bytes [lo, hi) of CTA rank overlap: *two when more
 * than one. Lanes never overlap one another (a job that meets two starts a
 * new batch; one that meets one widens it to their union, an interval that
 * meets no other), so a lane that holds [lo, hi) whole is the only one. */
static uint32_t find_lane(batch_t *b, uint32_t rank, uint64_t lo, uint64_t hi, int *two)
{
    const uint32_t none = MAX_LANES;
    const uint32_t h = b->lane_hint[hint_of(lo)];
    *two = 0;
    if (h < b->nlanes) {
        const lane_t *ln = &b->lanes[h];
        if (ln->rank == rank && ln->lo <= lo && hi <= ln->hi)
            return h;
    }
    uint32_t lane = none;
    for (uint32_t i = 0; i < b->nlanes; i++) {
        const lane_t *ln = &b->lanes[i];
        if (ln->rank == rank && lo < ln->hi && ln->lo < hi) {
            *two |= lane != none;
            lane = i;
        }
    }
    return lane;
}

int pa_defer_load(pa_machine *m, const pa_op *op, int *taken, pa_error *err)
{
    pa_defer *d = m->defer;
    *taken = 0;
    if (!d)
        return PA_OK;
    const pa_copy_plan *p = &op->u.tensor.plan;
    batch_t *b = d->fill;
    int proto = find_proto(b, p);   /* a plan of the batch qualified (the map decides) */
    if (proto < 0 && !qualifies(m, d, op))
        return pa_defer_flush(m, err);   /* the caller copies now: what is pending goes first */
    const pa_box_layout *l = &p->l;
    const uint32_t dst = pa_smem_offset(op->u.tensor.smem_addr);
    uint64_t lo, hi;   /* the shared bytes written (whole 128-byte lines under a swizzle) */
    pa_copy_span(l, dst, &lo, &hi);
    const uint32_t none = MAX_LANES;
    int two;
    uint32_t lane = find_lane(b, op->dst_rank, lo, hi, &two);
    int rc;
    if (two || b->njobs == MAX_JOBS || (lane == none && b->nlanes == MAX_LANES) ||
        (proto < 0 && b->nprotos == MAX_PROTOS)) {
        if ((rc = hand_over(d, err)))
            return rc;
        b = d->fill;
        lane = none;
        proto = -1;
    }
    if (proto < 0) {
        proto = (int)b->nprotos++;
        b->protos[proto].plan = *p;
    }
    b->last_proto = (uint32_t)proto;
    const uint32_t cut = cut_dim(p, dst);
    if (lane == none) {
        lane = b->nlanes++;
        b->lanes[lane] = (lane_t){op->dst_rank, lo, hi, 0, 0, 0, 0};
    } else {
        lane_t *ln = &b->lanes[lane];
        ln->lo = lo < ln->lo ? lo : ln->lo;
        ln->hi = hi > ln->hi ? hi : ln->hi;
    }
    b->lane_hint[hint_of(lo)] = (uint8_t)lane;
    b->lanes[lane].bytes += l->rows * l->row_bytes;
    b->lanes[lane].whole |= !cut;
    job_t *j = &b->jobs[b->njobs++];
    memcpy(j->coords, p->coords, sizeof j->coords);
    j->proto = (uint32_t)proto;
    j->rank = op->dst_rank;
    j->dst = dst;
    j->lane = lane;
    j->cut = cut;
    *taken = 1;
    return PA_OK;
}

#endif
