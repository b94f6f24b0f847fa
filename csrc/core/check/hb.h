/* hb.h - the memory model: which accesses are ordered, and through which proxy.
 *
 * Every thread has a vector clock (hb.c); edges come from the PTX ISA's
 * release / acquire patterns: mbarrier.arrive -> a test_wait / try_wait that
 * returns True for that phase, bar.sync, barrier.cluster, wait_group, and the
 * completion of an asynchronous operation observed through its mbarrier or
 * its group (which also carries the implicit generic-async proxy fence).
 *
 * An asynchronous operation is not part of its thread's program order: it is
 * ordered after the thread's earlier accesses at issue, and its own accesses
 * become visible only to a thread that observed its completion. Its clock
 * entry says how: the mbarrier phase it credits (slot of the barrier, phase
 * + 1), or the number of operations of its thread's bulk / cp.async groups
 * that a wait_group has covered. So a race does not depend on when the bytes
 * moved: it is found under every completion policy, "immediate" included.
 *
 * Every access through the model (proxy.c) is generic (ld/st.shared through
 * CTA.read / CTA.write, ld/st.global, tensormap.replace, st.async, cp.async),
 * async (cp.async.bulk{.tensor}, cp.reduce.async.bulk{.tensor}) or tensormap
 * (a tensor copy reading its map from global memory). Two accesses to the
 * same bytes, at least one a write, must be ordered by happens-before
 * (data-race); a write followed by an access through another proxy needs a
 * proxy fence on the path between them (proxy-fence-missing: fence.proxy.async;
 * tensormap-fence-missing: fence.proxy.tensormap::generic release + acquire);
 * an mbarrier an operation signals must have been initialised before, in
 * happens-before (mbarrier-init-unordered: fence.mbarrier_init and a cluster
 * barrier across CTAs).
 */
#ifndef PA_CHECK_HB_H
#define PA_CHECK_HB_H

#include "../engine.h"

typedef struct pa_hb pa_hb;

/* Race checking on or off (off: nothing kept, nothing costs). Turning it on
 * starts from a clean slate. */
int pa_hb_set(pa_machine *m, int on, pa_error *err);
int pa_hb_enabled(const pa_machine *m);
void pa_hb_free(pa_hb *hb);

/* --- accesses of threads through the model ------------------------------ */

/* Thread `thread` of CTA `cta` reads (write 0) or writes [off, off+len) of
 * CTA rank's shared memory with `instr` ("ld.shared", "st.shared"). */
int pa_hb_smem(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off, uint32_t len,
               int write, const char *instr, pa_error *err);
/* The same for global memory (instr "ld.global", "st.global", "tensormap.replace"). */
int pa_hb_global(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t addr, uint64_t len, int write,
                 const char *instr, pa_error *err);
/* wgmma.mma_async of the warpgroup whose first thread is `first` reads [off,
 * off+len) of its CTA's shared memory (PTX line `line`) in wgmma-group `group`
 * (its commit_groups before it + 1): checked now, seen by an access only after
 * a wgmma.wait_group retiring that group; pa_hb_wgmma_wait: thread `thread`
 * of that warpgroup has retired its groups up to `group`. */
int pa_hb_wgmma_read(pa_machine *m, uint32_t cta, uint32_t first, uint32_t off, uint32_t len, uint32_t group,
                     uint32_t line, pa_error *err);
void pa_hb_wgmma_wait(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t first, uint32_t group);
/* A plain store (st.shared / st.global) of the bytes val, before they land:
 * the same as a write of pa_hb_smem / pa_hb_global, the bytes kept (up to 16)
 * for same-value write/write races. */
int pa_hb_store_smem(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off, uint32_t len,
                     const uint8_t *val, const char *instr, pa_error *err);
int pa_hb_store_global(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t addr, uint64_t len,
                       const uint8_t *val, const char *instr, pa_error *err);

/* Two plain stores by threads, in the generic proxy, of the same bytes, not
 * ordered by happens-before, that write the same values where they overlap
 * (Triton stores a value replicated across threads so): a data race of the
 * PTX memory model, yet the bytes are those of either store whichever lands
 * last. PA_SAME_VALUE_RACE (the default): a data-race like any other;
 * _RECORD: recorded as a same-value-store race (pa_hb_races), never raised, and
 * only where the access meets no other race or missing fence; _ACCEPT: not
 * reported. Stores of different values, a store of more than 16 bytes, and
 * atomics, operations and reads are judged as ever. Kept while the checker
 * is turned off and on. */
enum { PA_SAME_VALUE_RACE = 0, PA_SAME_VALUE_RECORD = 1, PA_SAME_VALUE_ACCEPT = 2 };
int pa_hb_set_same_value(pa_machine *m, int mode, pa_error *err);
int pa_hb_same_value(const pa_machine *m);
/* The tensor copy that the thread issues next reads its 128-byte tensor map
 * at global address addr in the tensormap proxy: checked now, recorded with
 * that operation's completion (PA_NO_OP-like: addr UINT64_MAX forgets it). */
int pa_hb_tensormap_read(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t addr, pa_error *err);

/* One instruction of a converged warp runs for several lanes (begin 1) or
 * has run (begin 0): the accesses between are one operation of the hardware
 * (one lane's value wins where lanes store to one word), so lanes of it never
 * race with each other; other instructions, warps and diverged lanes are
 * checked as ever. Costs one store; nothing while the checker is off. */
void pa_hb_instance(pa_machine *m, int begin);
/* The PTX line (0: none) of the instruction whose accesses come next: a report names it. */
void pa_hb_line(pa_machine *m, uint32_t line);

/* An atomic (atom / red) of [lo, lo+len) in space 1 (shared of CTA rank) or 2
 * (global) by a thread, with sem PA_HB_ACQUIRE / PA_HB_RELEASE bits (.acq_rel:
 * both; 0 relaxed). Atomics never race with each other; an atomic and a plain
 * access, unordered, do. A release atomic then an acquire atomic of the same
 * location that reads it is a happens-before edge, as is a fence.acq_rel then
 * a relaxed atomic on the releasing side (the scope is not followed: every
 * scope is taken to include both threads). */
enum { PA_HB_ACQUIRE = 1, PA_HB_RELEASE = 2, PA_HB_NO_READ = 4 /* red: a later fence acquires nothing by it */ };
int pa_hb_atomic(pa_machine *m, uint32_t cta, uint32_t thread, uint8_t space, uint32_t rank, uint64_t lo,
                 uint32_t len, int sem, const char *instr, pa_error *err);

/* --- fences and barriers -------------------------------------------------- */

/* fence.proxy.async{.global|.shared::cta|.shared::cluster}: space 0 (all), 1, 2, 3. */
enum { PA_FENCE_ALL = 0, PA_FENCE_GLOBAL = 1, PA_FENCE_SHARED_CTA = 2, PA_FENCE_SHARED_CLUSTER = 3 };
int pa_hb_fence_proxy_async(pa_machine *m, uint32_t cta, uint32_t thread, int space, pa_error *err);
/* fence.proxy.tensormap::generic.release.scope / .acquire.scope [addr], size. */
int pa_hb_fence_proxy_tensormap(pa_machine *m, uint32_t cta, uint32_t thread, int acquire, uint64_t addr,
                                uint32_t size, pa_error *err);
/* fence.mbarrier_init.release.cluster */
int pa_hb_fence_mbarrier_init(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err);
/* fence{.sem}.scope: sem 0 .acq_rel, 1 .sc, 2 .acquire, 3 .release (PA_HB_FENCE_*); scope 0 cta,
 * 1 cluster, 2 gpu, 3 sys. The release half (not .acquire's): a relaxed atomic or relaxed cluster
 * barrier after it releases what the thread knew at the fence (cluster scope or wider); the acquire
 * half (not .release's): the thread acquires what its relaxed atomics before it read. */
enum { PA_HB_FENCE_ACQ_REL = 0, PA_HB_FENCE_SC = 1, PA_HB_FENCE_ACQUIRE = 2, PA_HB_FENCE_RELEASE = 3,
       PA_HB_FENCE_RESTRICT_RELEASE = 4, PA_HB_FENCE_RESTRICT_ACQUIRE = 5 };   /* pa_hb_fence_restricted's */
int pa_hb_fence(pa_machine *m, uint32_t cta, uint32_t thread, int sem, int scope, pa_error *err);
/* fence.release.sync_restrict::shared::cta.cluster (acquire 0) and
 * fence.acquire.sync_restrict::shared::cluster.cluster (acquire 1): hb.c says what they order. */
int pa_hb_fence_restricted(pa_machine *m, uint32_t cta, uint32_t thread, int acquire, pa_error *err);
/* bar.sync / barrier.sync a{, b}: the n threads listed (n 0: every thread of the CTA). */
int pa_hb_bar_sync(pa_machine *m, uint32_t cta, uint32_t barrier, const uint32_t *threads, size_t n,
                   pa_error *err);
/* bar.arrive by a thread: its accesses so far are released to the threads that wait at the
 * barrier's completion (pa_hb_bar_sync, which lists those; it acquires nothing: it does not
 * wait). pa_hb_bar_forget: the barrier completed with no thread waiting. */
int pa_hb_bar_arrive(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t barrier, pa_error *err);
void pa_hb_bar_forget(pa_machine *m, uint32_t cta, uint32_t barrier);
/* barrier.cluster.arrive{.release|.relaxed} + barrier.cluster.wait by every thread of the cluster. */
int pa_hb_barrier_cluster(pa_machine *m, int relaxed, pa_error *err);

/* --- what the rest of the checker tells it (sync.c, checker.c) ---------- */

void pa_hb_mbar_init(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off);
/* CTA rank `rank` starts a new CTA (the next of a grid, in the slot the last one left): the
 * accesses to its shared memory and the mbarriers in it are the old CTA's, not the new one's. */
void pa_hb_cta_restart(pa_machine *m, uint32_t rank);
void pa_hb_mbar_arrive(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off);
void pa_hb_mbar_phase(pa_machine *m, uint32_t rank, uint32_t off);
void pa_hb_mbar_acquire(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off,
                        uint64_t phases_done);
void pa_hb_commit(pa_machine *m, uint32_t cta, uint32_t thread, int cp_async);
void pa_hb_wait_group(pa_machine *m, uint32_t cta, uint32_t thread, int cp_async, uint32_t n, int read_only);
/* An operation about to be queued (issue number seq): its accesses checked and recorded. */
int pa_hb_on_issue(pa_machine *m, const pa_op *op, uint64_t seq, pa_error *err);

/* --- the races found (for pictures) ------------------------------------- */

typedef struct {
    uint64_t time;              /* logical time of the access */
    uint32_t cta, thread;       /* the thread, or the operation's issuer */
    uint64_t op;                /* issue number, PA_NO_OP for a thread's own access */
    uint8_t space, write, proxy;/* 1 shared, 2 global; 0 generic, 1 async, 2 tensormap */
    uint32_t rank;
    uint64_t lo, hi;            /* the bytes both touch */
    const char *instr;
} pa_hb_access;

typedef struct {
    int rule;
    uint64_t time;              /* the hazard's logical time */
    pa_hb_access first, second; /* earlier access, the one that found the race */
} pa_hb_race;

size_t pa_hb_races(const pa_machine *m, const pa_hb_race **out);

#endif
