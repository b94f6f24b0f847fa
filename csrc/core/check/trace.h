/* trace.h - the machine's event log: every issue, source read, destination
 * write, mbarrier operation, phase flip and wait outcome, in order, with its
 * issuer and a logical time.
 *
 * Off by default: a disabled trace only advances the clock (hazards are
 * stamped with it), so it costs one branch per event. Events are fixed-size
 * records; what a and b hold depends on the kind (see pa_event_kind).
 */
#ifndef PA_CHECK_TRACE_H
#define PA_CHECK_TRACE_H

#include "../types.h"

#define PA_NO_OP UINT64_MAX     /* event not caused by an asynchronous operation */
#define PA_NO_THREAD UINT32_MAX /* event of the asynchronous side, no thread */

typedef enum {
    PA_EV_ISSUE = 0,    /* op issued: a = operation kind */
    PA_EV_READ,         /* op read its source: rank/addr (shared) or a (global), b = bytes */
    PA_EV_WRITE,        /* op wrote its destination: rank/addr (shared) or a (global), b = bytes */
    PA_EV_INIT,         /* mbarrier.init: a = count */
    PA_EV_INVAL,        /* mbarrier.inval */
    PA_EV_ARRIVE,       /* arrive-on: a = count, b = tx added by .expect_tx */
    PA_EV_EXPECT_TX,    /* expect-tx: a = bytes */
    PA_EV_COMPLETE_TX,  /* complete-tx (a thread's, or an operation's credit): a = bytes */
    PA_EV_PHASE,        /* the barrier completed a phase: a = phases completed now */
    PA_EV_WAIT,         /* test_wait / try_wait: a = parity, b = result | 2 if try_wait */
    PA_EV_COMMIT,       /* commit_group: a = groups committed now */
    PA_EV_WAIT_GROUP,   /* wait_group: a = N */
    PA_EV_HAZARD,       /* a hazard was seen: a = rule */
    PA_EV_FENCE,        /* a fence by a thread: a = pa_fence_kind, b = its operand (space, scope, address) */
    PA_EV_BARRIER,      /* bar.sync (a = barrier, b = threads listed, 0: all) or barrier.cluster
                         * (a = 16, b = 1 if .relaxed) */
    PA_EV_COUNT
} pa_event_kind;

typedef enum {
    PA_FENCE_KIND_PROXY_ASYNC = 0,      /* fence.proxy.async{.space}: b = 0 all, 1 global, 2 cta, 3 cluster */
    PA_FENCE_KIND_TENSORMAP_RELEASE,    /* fence.proxy.tensormap::generic.release */
    PA_FENCE_KIND_TENSORMAP_ACQUIRE,    /* fence.proxy.tensormap::generic.acquire [b], 128 */
    PA_FENCE_KIND_MBARRIER_INIT,        /* fence.mbarrier_init.release.cluster */
    PA_FENCE_KIND_ACQ_REL,              /* fence.acq_rel.scope: b = 0 cta, 1 cluster, 2 gpu, 3 sys */
    PA_FENCE_KIND_SC,                   /* fence.sc.scope */
    PA_FENCE_KIND_COUNT
} pa_fence_kind;

typedef struct {
    uint64_t time;
    uint64_t op;            /* issue number of the operation, PA_NO_OP if none */
    uint64_t a, b;
    uint32_t cta, thread;   /* issuer: the thread, or for operations' events the issuing thread */
    uint32_t rank, addr;    /* mbarrier or shared location: CTA rank and offset */
    uint8_t kind;           /* pa_event_kind */
    uint8_t space;          /* 0 none, 1 shared, 2 global */
} pa_event;

typedef struct {
    int enabled;
    uint64_t clock;         /* logical time: events so far, recorded or not */
    pa_event *ev;
    size_t n, cap;
    size_t dropped;         /* events lost to a failed allocation */
} pa_trace;

void pa_trace_free(pa_trace *t);
void pa_trace_clear(pa_trace *t);
/* The event's readable kind ("issue", "phase", ...); NULL past the end. */
const char *pa_event_name(int kind);

/* Record an event; returns its logical time. */
uint64_t pa_trace_record(pa_trace *t, pa_event_kind kind, uint32_t cta, uint32_t thread, uint64_t op,
                         uint32_t rank, uint32_t addr, uint8_t space, uint64_t a, uint64_t b);

/* The same, inline where the trace is off (every issue, arrive and wait passes here). */
static inline uint64_t pa_trace_add(pa_trace *t, pa_event_kind kind, uint32_t cta, uint32_t thread, uint64_t op,
                                    uint32_t rank, uint32_t addr, uint8_t space, uint64_t a, uint64_t b)
{
    if (!t->enabled)
        return t->clock++;
    return pa_trace_record(t, kind, cta, thread, op, rank, addr, space, a, b);
}

#endif
