/* watch.h - what the machine keeps to catch synchronisation bugs and explain
 * them: the hazard sink, the trace, and the threads that wait on mbarriers.
 *
 * The mbarrier operations a thread performs go through pa_sync_* (sync.c):
 * they run the state machine of mbarrier.c unchanged, so every answer is the
 * hardware's, and around it check the rules of hazard.h, trace the event and
 * remember each waiting thread:
 *   - its last wait's phase (a waiter two phases behind has a parity that
 *     names two phases: missed-phase),
 *   - whether its last wait was a try_wait that returned False (it is
 *     blocked there: a blocked thread that nothing pending can release is a
 *     deadlock; test_wait only polls).
 */
#ifndef PA_CHECK_WATCH_H
#define PA_CHECK_WATCH_H

#include "../engine.h"
#include "hazard.h"
#include "pendidx.h"
#include "trace.h"

typedef struct {
    uint32_t cta, thread;       /* the waiting thread */
    uint32_t rank, offset;      /* the mbarrier it waits on */
    uint64_t last_phase;        /* the barrier's phase at its last wait */
    uint32_t parity;            /* parity of its last wait */
    int blocked;                /* its last wait was a try_wait that returned False */
} pa_waiter;

/* The same two answers for a PTX thread (thread id < PA_DIRECT_THREADS, CTA
 * rank in the cluster) without hashing: its blocked waiter, and its latest
 * waiters by the barrier's offset / 8 mod PA_DIRECT_WAYS (hints, checked
 * against the key: a ring of barriers side by side misses none); valid
 * while gen is the watch's. Positions + 1, 0: none. */
#define PA_DIRECT_THREADS 1024u
#define PA_DIRECT_WAYS 4u
typedef struct {
    uint32_t gen, blocked;
    uint32_t last[PA_DIRECT_WAYS];
} pa_tslot;

/* A memory range an operation reads or writes. */
typedef struct {
    uint8_t space;              /* 0 none, 1 shared (rank, offset), 2 global (addr) */
    uint32_t rank;
    uint64_t addr;
    uint64_t len;
} pa_range;

/* A run of global bytes. */
typedef struct {
    uint64_t addr, len;
} pa_grun;

/* The global side of a tensor copy (gbox.c): its runs, sorted by address,
 * and their bytes as they were (a load's source at issue, a store's or
 * reduction's destination after issue). */
typedef struct {
    pa_grun *runs;
    size_t n, cap;
    uint64_t lo, hi;            /* bounds of the runs */
    uint8_t *bytes;             /* the runs' bytes, back to back */
    uint64_t nbytes;
    int writes;                 /* the runs are written (a store or reduction), not read */
    int reduce;                 /* ... by a reduction (order-free with other reductions) */
} pa_gbox;

/* What the memory checks keep of a pending operation (checker.c). */
typedef struct {
    uint64_t seq;
    pa_range src, dst;
    int reduce;                 /* read-modify-write destination: never poisoned */
    uint8_t *src_copy;          /* the source at issue (owned); NULL once read */
    uint8_t *dst_copy;          /* the destination after issue (owned; poisoned or as it was) */
    pa_gbox gbox;               /* tensor copies: the global side (owned; n 0 otherwise) */
    int order_free;             /* a reduction: others into the same bytes may come first */
} pa_shadow;

/* Poison written over pending destinations by the adversarial policy: the
 * little-endian word 0xEFBEADDE (bytes DE AD BE EF), aligned to the offset. */
#define PA_POISON_WORD 0xEFBEADDEu
static inline uint8_t pa_poison_byte(uint64_t offset)
{
    return (uint8_t)(PA_POISON_WORD >> (8 * (offset & 3u)));
}

/* A line discard.global.L2 made indeterminate (discard.c): the bytes not written since. */
#define PA_DISCARD_BYTES 128u
typedef struct {
    uint64_t addr;
    uint64_t undef[2];          /* bit b: byte b still indeterminate */
    int line;                   /* the discard's PTX line (0: none) */
    uint32_t cta, thread;
} pa_discard;

typedef struct pa_watch {
    pa_hazards hz;
    pa_trace trace;
    pa_waiter *waiters;
    size_t nwaiters, capwaiters;
    /* indexes of waiters (sync.c), so a wait or an arrive by one of thousands of
       threads costs O(1): (cta, thread, rank, offset) -> position + 1, and
       (cta, thread) -> position + 1 of its latest blocked wait (a thread is blocked
       in at most one); rebuilt after waiters are removed (idx_stale) */
    uint32_t *widx, *bidx;
    size_t capidx;
    int idx_stale;
    pa_tslot *tslot;            /* nctas * PA_DIRECT_THREADS, for PTX threads (sync.c) */
    size_t ntslot;
    uint32_t gen;
    /* a loop's thread waits on one barrier and arrives again: its waiter's
       position (checked against the entry before use), and the (cta, thread)
       last found blocked nowhere, at the count of blocking waits then */
    size_t last_waiter;
    uint64_t nblocking;         /* waits that left a thread blocked, so far */
    uint64_t free_at;           /* nblocking when free_cta / free_thread was found blocked nowhere */
    uint32_t free_cta, free_thread;
    int free_known;
    /* the operation being completed (its events name it) */
    uint64_t cur_op;
    uint32_t cur_cta, cur_thread;
    const char *cur_kind;       /* its PTX form */
    int cur_tracked;            /* it signals an mbarrier, in phase cur_phase at its issue */
    uint64_t cur_phase;
    pa_pendidx pend;            /* the pending operations' ranges by address (pending.c) */
    int pend_walk;              /* ... not all of them: the lookups walk the queue */
    /* memory checks: on by choice or under the adversarial policy */
    int memcheck;
    pa_shadow *shadows;
    size_t nshadows, capshadows;
    struct pa_hb *hb;           /* the memory model (hb.h, which sits above this header); NULL: off */
    int same_value;             /* same-value write/write races: PA_SAME_VALUE_* (hb.h) */
    pa_discard *discards;       /* discard.c */
    size_t ndiscards, capdiscards;
} pa_watch;

/* Give the machine its watch (raise mode, trace off) and install the queue
 * hooks (checker.c). */
int pa_watch_attach(pa_machine *m, pa_error *err);
void pa_watch_free(pa_machine *m);
/* Install the signal, group and free hooks (sync.c): mbarrier signals of
 * completing operations, group commits and waits, checked and traced
 * whether or not a watch is attached (machine.c, at init). */
void pa_watch_hooks(pa_machine *m);
/* The machine's hazard sink / trace; NULL without a watch. */
pa_hazards *pa_machine_hazards(pa_machine *m);
pa_trace *pa_machine_trace(pa_machine *m);

/* --- mbarrier operations by thread `thread` of CTA `cta` (addr as that CTA
 * sees it: its own shared::cta address, or a shared::cluster one) --------- */

int pa_sync_init(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t count,
                 pa_error *err);
int pa_sync_inval(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, pa_error *err);
/* CTA rank `rank` starts a new CTA of a grid in the slot the last one left (ptx/exec/launch.c): the
 * mbarriers in its shared memory are no longer initialised (a new CTA inits them again; one an
 * operation still signals stays), and the race checker forgets the old CTA's shared accesses. */
void pa_sync_cta_restart(pa_machine *m, uint32_t rank);
/* mbarrier.arrive{_drop}{.expect_tx|.noComplete} (flags of pa_mbar_arrive). */
int pa_sync_arrive(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t count,
                   uint32_t tx, unsigned flags, uint64_t *state, pa_error *err);
/* mbarrier.expect_tx (complete 0) / mbarrier.complete_tx (complete 1). */
int pa_sync_tx(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t tx, int complete,
               pa_error *err);
/* test_wait (is_try 0) / try_wait (1) on the phase of parity `parity`.
 * try_wait first completes the pending operations that signal the barrier
 * (in policy order) until the phase completes or none is left. */
int pa_sync_wait(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t parity,
                 int is_try, int *result, pa_error *err);
/* The same on the barrier of slot s (pa_machine_mbar_slot of addr as CTA cta < nctas sees it). */
int pa_sync_wait_slot(pa_machine *m, uint32_t cta, uint32_t thread, pa_mbar_slot *s, uint32_t parity,
                      int is_try, int *result, pa_error *err);
/* The same for threads first + i of CTA cta, lane i of `lanes` (i < 32), one
 * after another in lane order, as long as each wait needs only a few steps (its
 * waiter known, no phase missed, nothing to complete): returns the lanes done
 * (the lowest of the others needs pa_sync_wait_slot), adding those whose wait
 * answered True to *answered. The barrier does not change while they wait. */
uint32_t pa_sync_wait_lanes(pa_machine *m, uint32_t cta, uint32_t first, uint32_t lanes, pa_mbar_slot *s,
                            uint32_t parity, int is_try, uint32_t *answered);

/* Why a wait on `parity` answers as it does. */
typedef struct {
    uint32_t rank, offset;      /* the barrier */
    uint64_t phase;             /* current (open) phase */
    uint32_t parity;            /* the parity asked about */
    int complete;               /* the wait returns True */
    int32_t pending, expected;  /* arrivals missing in the open phase / per phase */
    int32_t tx;                 /* tx-count: > 0 bytes missing, < 0 credited beyond expected */
    uint64_t tx_expected, tx_credited;  /* in the open phase */
    size_t nsignal;             /* pending operations that signal it */
    uint64_t signal_tx;         /* bytes they credit */
    uint32_t signal_arrivals;   /* arrive-ons they make (cp.async.mbarrier.arrive) */
    int can_complete;           /* what is pending completes the open phase */
} pa_wait_why;

int pa_sync_why(pa_machine *m, uint32_t cta, uint32_t addr, uint32_t parity, pa_wait_why *w,
                pa_error *err);
/* The explanation in words ("nothing pending can complete phase 1 of the
 * mbarrier at 0x40 in CTA 0: 1 arrival and 1024 tx bytes missing: the kernel
 * would hang"). */
void pa_sync_why_text(const pa_wait_why *w, char *buf, size_t len);

/* PA_ERR_DEADLOCK naming the first blocked waiter that nothing pending can
 * release; PA_OK if there is none. */
int pa_sync_check_deadlock(pa_machine *m, pa_error *err);

/* step / run that report a deadlock: run completes every pending operation,
 * then fails (PA_ERR_DEADLOCK) if a blocked waiter's phase cannot complete;
 * step does the same when nothing is left to complete (*done = 0). */
int pa_watch_step(pa_machine *m, int *done, pa_error *err);
int pa_watch_run(pa_machine *m, pa_error *err);

/* --- memory checks (checker.c) ------------------------------------------ */

/* The queue hooks. */
int pa_check_on_issue(void *ctx, pa_machine *m, const pa_op *op, pa_error *err);
int pa_check_on_read(void *ctx, pa_machine *m, const pa_op *op, pa_error *err);
int pa_check_on_complete(void *ctx, pa_machine *m, const pa_op *op, pa_error *err);
/* A reduction has written its destination: the other pending reductions
 * into those bytes take them as their own (reductions are order-free). */
void pa_check_on_done(void *ctx, pa_machine *m, const pa_op *op);
void pa_check_free(pa_watch *w);
/* Are the memory checks (and, under the adversarial policy, poisoning) on? */
static inline int pa_check_memory_on(const pa_machine *m)
{
    return m->watch && (m->watch->memcheck || m->policy == PA_POLICY_ADVERSARIAL);
}

/* A thread reads [off, off+len) of CTA rank's shared memory through the
 * model: a hazard if a pending operation has not yet written it. */
int pa_check_read(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off, uint32_t len,
                  pa_error *err);
/* The same for a wgmma.mma_async operand (PTX line `line`, wgmma-group `group` of the warpgroup whose
 * first thread is `first`): the race checker keeps the read until a wgmma.wait_group retires it. */
int pa_check_wgmma_read(pa_machine *m, uint32_t cta, uint32_t first, uint32_t off, uint32_t len, uint32_t group,
                        uint32_t line, pa_error *err);

/* discard.global.L2 [addr], 128 by a thread at PTX line `line` (discard.c): a write for the race
 * checker; with the memory checks on its bytes are indeterminate (poison under the adversarial
 * policy) until written. pa_check_global_bytes: a thread's read (write 0) of global bytes is
 * discard-read where one is still indeterminate; a write defines them. */
int pa_check_discard(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t addr, int line, pa_error *err);
int pa_check_global_bytes(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t addr, uint64_t len, int write,
                          const char *instr, pa_error *err);

/* commit_group / wait_group of thread index ti (the queue calls them first):
 * traced; a wait_group 0 that leaves operations of the thread in no group is
 * a hazard (wait-uncommitted). */
void pa_check_commit(pa_machine *m, uint32_t ti, int cp_async);
int pa_check_wait_group(pa_machine *m, uint32_t ti, int cp_async, uint32_t n, int read_only, pa_error *err);

/* PTX exit of thread `thread` of CTA `cta` (PA_NO_THREAD: every thread of
 * the CTA): what it leaves pending that nobody can wait for any more is
 * never-waited (exit.c); in report mode those then complete. */
int pa_watch_exit(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err);

/* The kernel exits: every operation still pending was never waited for
 * (never-waited, one report each: pa_check_finish, checker.c); then run()
 * (deadlock reported). */
int pa_check_finish(pa_machine *m, pa_error *err);
int pa_watch_finish(pa_machine *m, pa_error *err);

/* The global side of a tensor copy (gbox.c): runs and bytes now (n 0 for
 * other operations or a box that resolves to nothing); PA_ERR_NO_MEMORY. */
int pa_gbox_take(pa_machine *m, const pa_op *op, pa_gbox *g);
void pa_gbox_free(pa_gbox *g);
/* Fill its runs with poison / copy their bytes again (after poisoning). */
void pa_gbox_poison(pa_machine *m, const pa_gbox *g);
void pa_gbox_snapshot(pa_machine *m, pa_gbox *g);
/* Copy again only the bytes of its runs inside [addr, addr+len). */
void pa_gbox_refresh(pa_machine *m, pa_gbox *g, uint64_t addr, uint64_t len);
/* The first run whose bytes differ from those kept, or NULL. */
const pa_grun *pa_gbox_changed(pa_machine *m, const pa_gbox *g);
/* Do [addr, addr+len) / another box meet its runs? *hit: the first bytes shared. */
int pa_gbox_hits(const pa_gbox *g, uint64_t addr, uint64_t len, pa_grun *hit);
int pa_gbox_meets(const pa_gbox *a, const pa_gbox *b, pa_grun *hit);

/* --- the pending operations by address (pending.c) ---------------------- */

/* Operation op, about to be queued as seq / completed: its ranges indexed /
 * forgotten (its source only with `sources`: the memory checks ask about
 * sources). pa_pend_issue: 0, or -1 out of memory. */
int pa_pend_issue(pa_machine *m, const pa_op *op, uint64_t seq, int sources);
void pa_pend_done(pa_machine *m, const pa_op *op);
/* The watch is attached: what is pending already. */
void pa_pend_attach(pa_machine *m);
/* Each pending operation whose source (PA_PEND_SRC) or destination
 * (PA_PEND_DST) meets range r, to visit (reduce: a reduction's
 * destination), until it returns nonzero; an operation may come more than
 * once, in no particular order. */
typedef int (*pa_pend_visitor)(void *ctx, const pa_op *op, int reduce);
void pa_pend_each(pa_machine *m, int which, const pa_range *r, pa_pend_visitor visit, void *ctx);
/* The first pending operation in issue order, other than seq, whose
 * destination meets r (skip_reduce: not a reduction's); NULL if none. */
const pa_op *pa_pend_writer(pa_machine *m, const pa_range *r, uint64_t seq, int skip_reduce);

/* The ranges op reads and writes (queueview.c); *reduce: the write is a
 * reduction into the destination. */
void pa_qv_ranges(const pa_op *op, pa_range *src, pa_range *dst, int *reduce);
/* The pool slot of op: where it is, or (a copy about to be queued) where
 * pa_enqueue will put it. */
uint32_t pa_qv_slot_of(const pa_machine *m, const pa_op *op);

/* complete_tx of an operation's bytes on mbarrier slot `slot` (the queue's
 * pa_credit): checked and traced like a thread's complete_tx. */
int pa_sync_credit(pa_machine *m, size_t slot, uint64_t tx, pa_error *err);

/* The arrive-on of operation `seq` (cp.async.mbarrier.arrive, issued by
 * thread `thread` of CTA `cta`) on slot `slot`. */
int pa_sync_op_arrive(pa_machine *m, size_t slot, uint64_t seq, uint32_t cta, uint32_t thread,
                      pa_error *err);

/* Pending operations that signal the mbarrier at (rank, offset): how many,
 * the bytes they credit and the arrivals they make (arrivals may be NULL)
 * (queueview.c: the one place that walks the queue). */
size_t pa_qv_signalers(const pa_machine *m, uint32_t rank, uint32_t offset, uint64_t *tx,
                       uint32_t *arrivals);

#endif
