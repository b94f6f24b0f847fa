/* queue.h - the machine's queue core: pending operations, their order, the
 * completion policies, per-thread async-groups and the mbarrier table.
 *
 * An operation is a common header (issuer, issue order, what tracks it, the
 * engine that executes it) plus a per-kind payload. The queue knows nothing
 * of what an operation does: each engine module (tensor.c, bulkreduce.c,
 * bulkcopy.c, cpasync.c, stasync.c) fills a payload and supplies the
 * functions that read its source and complete it.
 *
 * Every pending operation sits in two lists:
 *     all      issue order; step()/run() choose from it
 *     tracker  what completes it: the mbarrier it signals (one per operation:
 *              a multicast is queued as one operation per destination CTA),
 *              or its thread's open / committed bulk or cp.async groups
 * Each list is doubly linked (oldest / newest in O(1)) and mirrored by a
 * dense array (a uniform random member in O(1)), so the cost of choosing and
 * removing an operation does not grow with the number pending.
 *
 *     policy     chooses among the candidates of a list
 *     IN_ORDER   head (oldest)      REVERSE  tail (newest)
 *     RANDOM     dense[rand % n]    IMMEDIATE  completes at issue
 *
 * Hooks (pa_queue_hooks) are called at issue, at the source read, before
 * completion and after it, when a completing operation signals an mbarrier,
 * and when a thread commits or waits on a group, so a checker or a trace can
 * watch every operation without the engines or the queue knowing about it:
 * the queue calls nothing above it by name. A machine made by
 * pa_machine_init (machine.c) has the checker's signal hooks (check/sync.c);
 * the memory and hazard checks join with pa_watch_attach, and a replay's
 * threads (defer.h) hang on a second set, m->aside, called first.
 */
#ifndef PA_ENGINE_QUEUE_H
#define PA_ENGINE_QUEUE_H

#include "../mbarrier.h"
#include "../memory.h"
#include "../reduce.h"
#include "../target.h"
#include "../copy/copy.h"

#include <stddef.h>
#include <string.h>

#define PA_NIL UINT32_MAX
#define PA_NO_GROUP UINT64_MAX
/* The code of a failure reported through err (which may be NULL). */
#define PA_ERRC(err, dflt) ((err) ? (int)(err)->code : (int)(dflt))

typedef enum {
    PA_OP_TILE_LOAD = 0,      /* cp.async.bulk.tensor.Nd.shared::{cta,cluster}.global.{tile,im2col} */
    PA_OP_TILE_STORE,         /* cp.async.bulk.tensor.Nd.global.shared::cta.{tile,im2col_no_offs} */
    PA_OP_TENSOR_REDUCE,      /* cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<op>.{tile,..} */
    PA_OP_BULK_REDUCE_GLOBAL, /* cp.reduce.async.bulk.global.shared::cta.bulk_group */
    PA_OP_BULK_REDUCE_CLUSTER,/* cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier */
    PA_OP_BULK_COPY_G2S,      /* cp.async.bulk.shared::{cta,cluster}.global.mbarrier */
    PA_OP_BULK_COPY_S2S,      /* cp.async.bulk.shared::cluster.shared::cta.mbarrier */
    PA_OP_BULK_COPY_S2G,      /* cp.async.bulk.global.shared::cta.bulk_group */
    PA_OP_CP_ASYNC,           /* cp.async.{ca,cg}.shared.global */
    PA_OP_CP_ASYNC_ARRIVE,    /* cp.async.mbarrier.arrive{.noinc} */
    PA_OP_ST_ASYNC,           /* st.async.shared::cluster.mbarrier::complete_tx::bytes */
    PA_OP_ST_ASYNC_RELEASE,   /* st.async{.mmio}.release.{gpu,sys}.global (sm_100) */
    PA_OP_RED_ASYNC,          /* red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes */
    PA_OP_KIND_COUNT
} pa_opkind;

/* What completes an operation (the list it waits in besides `all`). */
typedef enum {
    PA_TRACK_NONE = 0,
    PA_TRACK_MBAR,            /* signals the mbarrier slot `index` */
    PA_TRACK_BULK_OPEN,       /* bulk async-group not yet committed (thread `index`) */
    PA_TRACK_BULK_COMMITTED,  /* in bulk async-group op->group of thread `index` */
    PA_TRACK_CP_OPEN,         /* cp.async group not yet committed */
    PA_TRACK_CP_COMMITTED,    /* in cp.async group op->group */
    PA_TRACK_COUNT
} pa_track;

/* A list of pending operations: linked in issue order, plus a dense array. */
typedef struct {
    uint32_t head, tail, n, cap;
    uint32_t *dense;
} pa_oplist;

typedef struct {
    uint32_t prev, next, pos;    /* neighbours in the list, index in its dense array */
} pa_oplink;

struct pa_machine;
struct pa_op;

/* The functions of one kind of operation. */
typedef struct {
    const char *name;            /* the PTX form, for messages and traces */
    /* Read the source into op->staged (two-step operations: stores and
     * reductions read shared memory, then write); NULL: read at completion. */
    int (*read)(struct pa_machine *m, struct pa_op *op, pa_error *err);
    /* Move the bytes and signal (mbarrier credit / arrival). */
    int (*complete)(struct pa_machine *m, struct pa_op *op, pa_error *err);
    /* A record that stands for a run of operations (op->merged > 0):
     * complete only its oldest (newest 0) or its newest one and shrink the
     * payload to the others; the queue keeps the header. NULL: the kind
     * never merges. */
    int (*complete_one)(struct pa_machine *m, struct pa_op *op, int newest, pa_error *err);
    /* 1: a run record completes through complete_one, one operation after
     * another, so a failure leaves the later ones pending as separate
     * records would; 0: complete() moves the whole run at once. */
    int runs_one_by_one;
    /* Of a run record that completes one by one: complete at once, in
     * complete_one's order, as many of its operations but the record's last
     * as nothing could tell from complete_one of each in turn (none can
     * fail, no hook or trace sees them, no phase completes before the last
     * of them), shrink the payload to the others and return how many (0:
     * none; complete_one goes on). NULL: always one by one. */
    uint32_t (*complete_many)(struct pa_machine *m, struct pa_op *op, int newest);
} pa_engine;

/* One load of a run record of tensor loads (engine/tensor.c): what differs
 * from the record's first load. */
typedef pa_copy_at pa_load_at;

/* Payloads, one per engine. */
typedef struct {
    pa_copy_plan plan;           /* planned at issue (copy/copy.h), executed at completion */
    uint32_t smem_addr;          /* shared operand (dst of loads, src of stores) */
    uint32_t smem_span;          /* stores: bytes of shared memory the box spans */
    pa_redop redop;              /* reductions */
    uint8_t cta_group;           /* loads: .cta_group::N (0: not given) */
    uint8_t bar_parity;          /* .cta_group::2: the signalled CTA of dst_rank's pair */
    /* a run record of loads (merged > 0): its loads at[head .. head + merged],
     * oldest first; plan.coords and smem_addr are at[head]'s (owned, freed
     * with the record) */
    pa_load_at *at;
    uint32_t at_head, at_cap;
    pa_target target;            /* loads: the target the plan was made for */
} pa_tensor_payload;

typedef struct {
    uint64_t dst;                /* global address or shared::cluster address */
    uint64_t src;                /* global address or shared::cta address */
    uint32_t size;
    pa_redop redop;              /* reductions */
    pa_rtype rtype;
    int cp_mask;                 /* copies to global: .cp_mask with byte_mask */
    uint16_t byte_mask;
    int cache_hint;              /* .L2::cache_hint (recorded only) */
} pa_bulk_payload;

typedef struct {
    uint64_t src;                /* global */
    uint32_t dst;                /* shared::cta */
    uint8_t cp_size, src_size;   /* bytes copied / read (the rest zero-filled) */
    uint8_t cache;               /* 0 = .ca, 1 = .cg */
    uint16_t prefetch;           /* .L2::{64B,128B,256B}: 64/128/256, 0 = none */
    uint8_t hint;                /* .L2::cache_hint given */
} pa_cp_async_payload;

typedef struct {
    uint32_t thread_index;       /* the issuing thread's state */
    int noinc;
    int incremented;             /* the pending count was raised at issue */
} pa_cp_arrive_payload;

typedef struct {
    uint32_t dst;                /* shared::cluster address */
    uint8_t bytes[16];           /* the register values, little-endian */
    uint32_t size;
    uint64_t gdst;               /* .release.global: the global address (dst unused) */
    uint8_t scope_sys, mmio;     /* .release.global: .sys (else .gpu), .mmio (recorded) */
    uint8_t redop, ekind;        /* red.async: the reduction (pa_redop) and its element kind (pa_ekind) */
} pa_st_async_payload;

typedef struct pa_op {
    /* header */
    pa_opkind kind;
    /* further operations this record stands for: a run issued back to back
     * with seq + 1 .. seq + merged (cp.async copies each continuing the last,
     * cprun.c; tensor loads of one map, mbarrier and thread, tensor.c);
     * counted one by one in nops and completed, and step() completes one */
    uint32_t merged;
    const pa_engine *engine;
    uint32_t cta, thread;        /* issuer: CTA rank and thread id */
    uint64_t seq;                /* issue order */
    uint64_t group;              /* committed async-group number, PA_NO_GROUP before */
    pa_track track;
    uint32_t track_index;        /* mbarrier slot or thread index */
    uint32_t dst_rank;           /* the CTA written (shared destinations) */
    uint32_t mbar_offset;        /* signalled mbarrier: offset in CTA dst_rank */
    uint64_t tx_bytes;           /* complete_tx credited at completion */
    uint64_t track_phase;        /* the tracking mbarrier's phase at issue (check: tx-wrong-phase) */
    int pending;                 /* in the queue */
    int read_done;               /* two-step operations: source read into staged */
    uint8_t *staged;             /* the source bytes read (owned) */
    uint32_t staged_base;        /* shared offset of staged[0] */
    uint32_t staged_len;
    pa_oplink link_all, link_track;
    union {
        pa_tensor_payload tensor;
        pa_bulk_payload bulk;
        pa_cp_async_payload cp;
        pa_cp_arrive_payload arrive;
        pa_st_async_payload st;
    } u;
} pa_op;

typedef struct {
    uint32_t cta, offset;        /* where the mbarrier object lives */
    pa_mbarrier bar;
    pa_oplist ops;               /* pending operations that signal it */
} pa_mbar_slot;

/* A thread's async-groups of one kind (bulk, or cp.async). */
typedef struct {
    pa_oplist open;              /* issued since the last commit, in issue order */
    pa_oplist committed;         /* committed and pending; groups in order */
    uint64_t ncommitted;         /* groups committed so far */
} pa_groups;

typedef struct {
    uint32_t cta, thread;
    pa_groups bulk, cp;
    /* cp.async.mbarrier.arrive operations waiting for this thread's earlier
     * cp.async copies, oldest first: (slot, seq) pairs. */
    uint32_t *arrive_ids;
    uint64_t *arrive_seqs;
    uint32_t narrive, arrive_head, caparrive;
} pa_thread_state;

/* Watchers of the queue (a hazard checker, a trace). A non-zero return
 * aborts the operation with err set. Every function may be NULL. */
typedef struct {
    void *ctx;
    int (*on_issue)(void *ctx, struct pa_machine *m, const pa_op *op, pa_error *err);
    int (*on_read)(void *ctx, struct pa_machine *m, const pa_op *op, pa_error *err);
    int (*on_complete)(void *ctx, struct pa_machine *m, const pa_op *op, pa_error *err);
    /* after the operation has written its bytes (it is no longer pending) */
    void (*on_done)(void *ctx, struct pa_machine *m, const pa_op *op);
    /* a completing operation signals mbarrier slot `slot`: complete_tx of tx
     * bytes (op_arrive 0) or, for a cp.async.mbarrier.arrive of sequence
     * number seq by (cta, thread), one arrival. The hook performs the signal
     * (checked, traced); without one the queue runs the bare state machine. */
    int (*on_signal)(void *ctx, struct pa_machine *m, size_t slot, uint64_t tx, int op_arrive, uint64_t seq,
                     uint32_t cta, uint32_t thread, pa_error *err);
    /* thread ti commits (wait 0) or waits on (wait 1: wait_group n, read_only
     * for .read) its bulk or cp.async groups, before the queue acts */
    int (*on_group)(void *ctx, struct pa_machine *m, uint32_t ti, int cp_async, int wait, uint32_t n,
                    int read_only, pa_error *err);
    /* the machine is freed */
    void (*on_free)(void *ctx, struct pa_machine *m);
} pa_queue_hooks;

#define PA_MBAR_HINTS 8
static inline unsigned pa_mbar_hint_of(uint32_t addr) { return (addr >> 3) % PA_MBAR_HINTS; }

typedef struct pa_machine {
    pa_global global;
    pa_cluster cluster;
    pa_target target;            /* which forms the machine executes (sm_90a by default) */
    pa_policy policy;
    uint64_t rng;
    pa_op *pool;                 /* operation slots; free ones chained through link_all.next */
    uint32_t cappool, free_head;
    pa_oplist all;               /* every pending operation */
    size_t nops;                 /* pending operations */
    uint64_t next_seq;
    pa_mbar_slot **mbars;        /* each slot allocated once: its mbarrier never moves */
    size_t nmbars, capmbars;
    /* the slots the last lookups found, by the address's bits 3..5: threads of a
       pipeline look up the same few barriers, side by side, over and over (its
       stages take turns, so one entry missed on every turn). By address as a CTA
       sees it (pa_machine_mbar_slot; its checks passed), and by (rank, offset)
       (pa_mbar_slot_index: the slot's index + 1, 0 none) */
    struct {
        pa_mbar_slot *slot;
        uint32_t cta, addr;
    } hint[PA_MBAR_HINTS];
    struct {
        uint32_t rank, offset, index1;
    } slot_hint[PA_MBAR_HINTS];
    pa_thread_state *threads;
    size_t nthreads, capthreads;
    uint32_t *thash;             /* threads by (cta, thread): index + 1, 0 empty; open addressing */
    size_t capthash;             /* a power of two, at least twice nthreads (0: none yet) */
    uint64_t completed;          /* operations completed so far */
    pa_queue_hooks hooks;        /* the checker's (check/watch.h) */
    pa_queue_hooks aside;        /* a replay's threads (defer.h): called before hooks */
    struct pa_watch *watch;      /* hazard checker and trace (check/watch.h); NULL: none */
    struct pa_defer *defer;      /* a replay's load bytes moved later, on threads (defer.h) */
    pa_tile_memo tile_memo;      /* the last .tile / gather4 maps planned (copy/copy.h) */
    /* the loads array of the last run record freed, for the next run: a
       thread's runs of loads follow one another (engine/tensor.c) */
    pa_load_at *spare_at;
    uint32_t spare_at_cap;
} pa_machine;

/* A machine with its queue and nothing hung on it (machine.c's
 * pa_machine_init adds the checker's signal hooks). */
int pa_queue_init(pa_machine *m, uint32_t nctas, uint32_t smem_bytes, pa_error *err);
void pa_machine_free(pa_machine *m);
void pa_machine_set_policy(pa_machine *m, pa_policy p, uint64_t seed);
/* The target whose forms the machine executes; its CTAs must fit it (shared memory per CTA,
 * a cluster only from sm_90): PA_ERR_INVALID_VALUE naming the limit, the target unchanged. */
int pa_machine_set_target(pa_machine *m, pa_target t, pa_error *err);

/* --- advancing --------------------------------------------------------- */

/* Complete one pending operation chosen by the policy; *done = 0 if none. */
int pa_machine_step(pa_machine *m, int *done, pa_error *err);
int pa_machine_run(pa_machine *m, pa_error *err);

/* Nothing watches single operations and the policy completes in issue
 * order or its reverse: one record may stand for a run of operations issued
 * back to back (cprun.c, tensor.c), which then complete back to back
 * whichever way, with nothing between them that could tell. */
static inline int pa_queue_runs_merge(const pa_machine *m)
{
    const pa_queue_hooks *h = &m->hooks, *x = &m->aside;
    return (m->policy == PA_POLICY_IN_ORDER || m->policy == PA_POLICY_REVERSE) && !h->on_issue && !h->on_read &&
           !h->on_complete && !h->on_done && !x->on_issue && !x->on_read && !x->on_complete && !x->on_done;
}

/* --- mbarriers (addr: shared address as seen by CTA cta) --------------- */

pa_mbarrier *pa_machine_mbar(pa_machine *m, uint32_t cta, uint32_t addr, int create,
                             pa_error *err);
/* The slot of the mbarrier (its pending operations with it); a slot never moves.
 * Inline: the hint of the address (m->hint) answers most lookups; the checks
 * and the table are pa_machine_mbar_lookup's. */
pa_mbar_slot *pa_machine_mbar_lookup(pa_machine *m, uint32_t cta, uint32_t addr, int create, pa_error *err);
static inline pa_mbar_slot *pa_machine_mbar_slot(pa_machine *m, uint32_t cta, uint32_t addr, int create,
                                                 pa_error *err)
{
    const unsigned h = pa_mbar_hint_of(addr);
    if (m->hint[h].slot && m->hint[h].addr == addr && m->hint[h].cta == cta)
        return m->hint[h].slot;   /* the lookup's address checks passed for it already */
    return pa_machine_mbar_lookup(m, cta, addr, create, err);
}
int pa_machine_mbar_init(pa_machine *m, uint32_t cta, uint32_t addr, uint32_t count,
                         pa_error *err);
/* try_wait.parity: completes the pending operations that signal this barrier
 * (in policy order) until the phase completes or none is left. */
int pa_machine_try_wait_parity(pa_machine *m, uint32_t cta, uint32_t addr, uint32_t parity,
                               int *result, pa_error *err);
/* try_wait with a state: try_wait.parity on the parity of the state's phase (R6). */
/* The same on a slot already looked up (pa_machine_mbar_slot). */
int pa_slot_try_wait_parity(pa_machine *m, pa_mbar_slot *s, uint32_t parity, int *result, pa_error *err);
int pa_machine_try_wait_state(pa_machine *m, uint32_t cta, uint32_t addr, uint64_t state,
                              int *result, pa_error *err);

/* --- inspecting pending operations ------------------------------------- */

/* Pending operations in issue order:
 *     for (uint32_t id = pa_pending_first(m); id != PA_NIL; id = pa_pending_next(m, id))
 *         ... m->pool[id] ...
 * Those tracked by mbarrier slot i: m->mbars[i]->ops, linked through link_track;
 * a thread's groups: m->threads[t].{bulk,cp}.{open,committed}. The policy's
 * choice among candidates is pick() in queue.c (a new policy goes there). */
static inline uint32_t pa_pending_first(const pa_machine *m) { return m->all.head; }
static inline uint32_t pa_pending_next(const pa_machine *m, uint32_t id) { return m->pool[id].link_all.next; }

/* --- for engines ------------------------------------------------------- */

int pa_check_cta(const pa_machine *m, uint32_t cta, pa_error *err);
/* Index of the issuing thread's state (created on first use), or -1. */
long pa_thread_index(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err);
/* The same after checking that the CTA is in the cluster (group instructions). */
long pa_issuer_index(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err);
/* Index of the mbarrier slot at (rank, offset), created (not initialised) if
 * create; -1 if absent (no error set) or out of memory. */
long pa_mbar_slot_find(pa_machine *m, uint32_t rank, uint32_t offset, int create, pa_error *err);
static inline long pa_mbar_slot_index(pa_machine *m, uint32_t rank, uint32_t offset, int create, pa_error *err)
{
    const unsigned h = pa_mbar_hint_of(offset);   /* inline: the hint answers most */
    if (m->slot_hint[h].index1 && m->slot_hint[h].rank == rank && m->slot_hint[h].offset == offset)
        return (long)m->slot_hint[h].index1 - 1;
    return pa_mbar_slot_find(m, rank, offset, create, err);
}
/* An mbarrier operand: 8-byte aligned shared memory of the cluster (PTX ISA). */
int pa_check_mbar_addr(pa_machine *m, uint32_t cta, uint32_t addr, pa_error *err);

/* A completing operation signals mbarrier slot i (pa_queue_hooks.on_signal):
 * complete_tx of tx bytes, or one arrival of cp.async.mbarrier.arrive op. */
static inline int pa_signal_slot(pa_machine *m, size_t i, uint64_t tx, const pa_op *a, pa_error *err)
{
    if (m->hooks.on_signal)   /* checked and traced */
        return m->hooks.on_signal(m->hooks.ctx, m, i, tx, a != NULL, a ? a->seq : 0, a ? a->cta : 0,
                                  a ? a->thread : 0, err);
    pa_mbarrier *b = &m->mbars[i]->bar;
    int rc = a ? pa_mbar_arrive(b, 1, 0, 0, NULL, err) : pa_mbar_complete_tx(b, (uint32_t)tx, err);
    if (!rc)
        b->async_tracked = 1;
    return rc;
}
/* How many of n complete_tx credits of tx bytes each to slot i may be made
 * as one pa_signal_slot of their sum, nothing able to tell: no checker
 * watches (its trace records each credit), the mbarrier is initialised, its
 * tx-count stays in range, and no phase completes before the last of them.
 * 0: credit one by one. */
uint32_t pa_signal_slot_batch(const pa_machine *m, size_t i, uint64_t tx, uint32_t n);

/* Bytes of an operation record that its kind uses: the header and its own
 * payload (a cp.async record is a quarter of a tensor copy's); the rest of
 * the union is another kind's and never read. */
#define PA_OP_BYTES(payload) (offsetof(pa_op, u) + sizeof(payload))
static inline size_t pa_op_bytes(pa_opkind kind)
{
    switch (kind) {
    case PA_OP_TILE_LOAD:
    case PA_OP_TILE_STORE:
    case PA_OP_TENSOR_REDUCE: return PA_OP_BYTES(pa_tensor_payload);
    case PA_OP_CP_ASYNC: return PA_OP_BYTES(pa_cp_async_payload);
    case PA_OP_CP_ASYNC_ARRIVE: return PA_OP_BYTES(pa_cp_arrive_payload);
    case PA_OP_ST_ASYNC:
    case PA_OP_ST_ASYNC_RELEASE:
    case PA_OP_RED_ASYNC: return PA_OP_BYTES(pa_st_async_payload);
    case PA_OP_BULK_REDUCE_GLOBAL:
    case PA_OP_BULK_REDUCE_CLUSTER:
    case PA_OP_BULK_COPY_G2S:
    case PA_OP_BULK_COPY_S2S:
    case PA_OP_BULK_COPY_S2G: return PA_OP_BYTES(pa_bulk_payload);
    default: return sizeof(pa_op);
    }
}

/* A blank operation of `kind` issued by (cta, thread) (inline: with a
 * constant kind the clearing is a few vector stores). A tensor copy's map
 * is left as it is: the plan, made next, copies the issued map over it
 * (pa_copy_plan_make), and an operation whose plan fails is never queued. */
static inline void pa_op_begin(pa_op *op, const pa_engine *engine, pa_opkind kind, uint32_t cta, uint32_t thread)
{
    /* cleared by copies from a zero record: compilers turn a fixed-size
     * memset of this length into a string instruction, whose start-up cost
     * is a tenth of a cp.async's issue; a fixed-size memcpy is vector moves */
    static const pa_op zero;
    if (kind == PA_OP_TILE_LOAD || kind == PA_OP_TILE_STORE || kind == PA_OP_TENSOR_REDUCE) {
        const size_t map_at = offsetof(pa_op, u.tensor.plan.map), map_end = map_at + sizeof(pa_tensormap);
        memcpy(op, &zero, map_at);
        memcpy((char *)op + map_end, (const char *)&zero + map_end, PA_OP_BYTES(pa_tensor_payload) - map_end);
    } else {
        memcpy(op, &zero, pa_op_bytes(kind));
    }
    op->kind = kind;
    op->engine = engine;
    op->cta = cta;
    op->thread = thread;
    op->group = PA_NO_GROUP;
    op->track = PA_TRACK_NONE;
}
/* Track by the mbarrier at `mbar`'s offset in CTA dst_rank (its slot is created). */
int pa_op_track_mbar(pa_machine *m, pa_op *op, uint32_t dst_rank, uint32_t mbar, uint64_t tx,
                     pa_error *err);
/* Track by the issuing thread's open bulk / cp.async group. */
int pa_op_track_group(pa_machine *m, pa_op *op, int cp_async, pa_error *err);

/* Queue op (copied); with IMMEDIATE it completes at once. *id receives its
 * slot (PA_NIL if it completed). */
int pa_enqueue(pa_machine *m, const pa_op *op, uint32_t *id, pa_error *err);
/* The same for an operation built in its slot (no copy of its record): a
 * slot taken by pa_op_slot (non-zero: no memory; nothing is taken), then
 * either pa_enqueue_slot, which queues it exactly as pa_enqueue would a copy
 * (on failure the slot is free again), or pa_op_slot_release (which frees
 * nothing the record points to: a record owns no memory before it is queued). */
int pa_op_slot(pa_machine *m, uint32_t *id);
void pa_op_slot_release(pa_machine *m, uint32_t id);
int pa_enqueue_slot(pa_machine *m, uint32_t id, uint32_t *id_out, pa_error *err);
/* Complete the pending operation in slot id (read first if not yet read). */
int pa_complete_id(pa_machine *m, uint32_t id, pa_error *err);
/* The source read of a two-step operation (no-op if done or not two-step). */
int pa_read_op(pa_machine *m, pa_op *op, pa_error *err);
/* Complete tx bytes on the mbarrier at `offset` of CTA rank. */
int pa_credit(pa_machine *m, uint32_t rank, uint32_t offset, uint64_t tx, pa_error *err);
/* Snapshot [off, off+len) of CTA rank's shared memory into op->staged. */
int pa_stage_smem(pa_machine *m, pa_op *op, uint32_t rank, uint32_t off, uint32_t len, pa_error *err);

/* The shared memory of CTA rank as a copy sees it. */
pa_smem_view pa_smem_of(pa_machine *m, uint32_t rank);

/* commit_group of the thread's bulk (cp_async 0) or cp.async groups. */
int pa_groups_commit(pa_machine *m, uint32_t thread_index, int cp_async, pa_error *err);
/* wait_group n: complete (read_only: only read the sources of) the operations
 * of every group but the n most recent. */
int pa_groups_wait(pa_machine *m, uint32_t thread_index, int cp_async, uint32_t n, int read_only,
                   pa_error *err);

/* Complete, oldest first, the issuing thread's pending cp.async copies issued
 * before `seq` (cp.async.mbarrier.arrive waits for them). */
int pa_cp_complete_before(pa_machine *m, uint32_t thread_index, uint64_t seq, pa_error *err);
/* Queue a cp.async.mbarrier.arrive behind the thread's pending copies. */
int pa_cp_add_arrive(pa_machine *m, uint32_t thread_index, uint32_t id, uint64_t seq, pa_error *err);
/* Is any cp.async copy issued before seq by the thread still pending? */
int pa_cp_pending_before(const pa_machine *m, uint32_t thread_index, uint64_t seq);

/* Bulk engines' shared source handling (bulkreduce.c): the bytes read by an
 * earlier step, or the live shared memory; and the read step itself. */
const uint8_t *pa_bulk_source(pa_machine *m, const pa_op *op);
int pa_bulk_read(pa_machine *m, pa_op *op, pa_error *err);

#endif
