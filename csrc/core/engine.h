/* engine.h - the machine: memory, mbarriers and pending asynchronous operations.
 *
 * Issuing an operation validates it (faults the hardware raises at issue are
 * errors here, with the rule named) and queues it. It completes - moves its
 * bytes, then signals its mbarrier(s) or bulk async-group - only when the model
 * advances (pa_machine_step / pa_machine_run) or a wait needs it
 * (mbarrier try_wait, cp.async.bulk.wait_group), unless the completion policy
 * is IMMEDIATE. Which pending operation completes first is the policy's choice,
 * so code that relies on a lucky order can be exposed.
 */
#ifndef PA_ENGINE_H
#define PA_ENGINE_H

#include "mbarrier.h"
#include "memory.h"
#include "reduce.h"
#include "target.h"
#include "tensorcopy.h"

typedef enum {
    PA_POLICY_IMMEDIATE = 0,  /* complete at issue */
    PA_POLICY_IN_ORDER = 1,   /* oldest pending first */
    PA_POLICY_REVERSE = 2,    /* newest pending first */
    PA_POLICY_RANDOM = 3      /* seeded pseudo-random order */
} pa_policy;

typedef enum {
    PA_OP_TILE_LOAD = 0,      /* cp.async.bulk.tensor.Nd.shared::{cta,cluster}.global.{tile,im2col} */
    PA_OP_TILE_STORE,         /* cp.async.bulk.tensor.Nd.global.shared::cta.{tile,im2col_no_offs} */
    PA_OP_TENSOR_REDUCE,      /* cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<op>.{tile,..} */
    PA_OP_BULK_REDUCE_GLOBAL, /* cp.reduce.async.bulk.global.shared::cta.bulk_group */
    PA_OP_BULK_REDUCE_CLUSTER /* cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier */
} pa_opkind;

typedef struct {
    pa_opkind kind;
    uint32_t cta, thread;         /* issuing thread */
    uint64_t seq;                 /* issue order */
    uint64_t group;               /* bulk async-group number; UINT64_MAX = not committed */
    int uses_group;               /* completes through a bulk async-group */
    pa_tensormap map;             /* tensor ops */
    pa_load_mode mode;
    int32_t coords[PA_MAX_RANK];
    uint16_t offsets[PA_MAX_RANK - 2];  /* .im2col offsets (W, H, D) */
    uint32_t smem_addr;           /* shared operand (dst of loads, src of stores) */
    uint64_t global_addr;         /* bulk reduce to global: destination */
    uint32_t smem_dst;            /* bulk reduce to shared::cluster: destination */
    uint32_t size;                /* bulk ops: bytes */
    uint32_t mbar_addr;           /* mbarrier operand (shared::cluster address) */
    uint16_t cta_mask;            /* destination CTAs (loads); bit r = rank r */
    pa_redop redop;
    pa_rtype rtype;
    uint64_t tx_bytes;            /* bytes credited to each destination mbarrier */
    uint8_t cta_group;            /* loads: 0 (none) / 1 / 2 (.cta_group::2: the barrier is in
                                     the CTA of the pair with mbar's rank parity) */
} pa_op;

typedef struct {
    uint32_t cta, offset;         /* where the mbarrier object lives */
    pa_mbarrier bar;
} pa_mbar_slot;

typedef struct {
    uint32_t cta, thread;
    uint64_t committed;           /* bulk async-groups committed so far */
} pa_thread_state;

typedef struct {
    pa_global global;
    pa_cluster cluster;
    pa_target target;             /* which forms the machine executes (sm_90a by default) */
    pa_policy policy;
    uint64_t rng;
    pa_op *ops;                   /* pending operations */
    size_t nops, capops;
    uint64_t next_seq;
    pa_mbar_slot *mbars;
    size_t nmbars, capmbars;
    pa_thread_state *threads;
    size_t nthreads, capthreads;
    uint64_t completed;           /* operations completed so far */
} pa_machine;

int pa_machine_init(pa_machine *m, uint32_t nctas, uint32_t smem_bytes, pa_error *err);
void pa_machine_free(pa_machine *m);
void pa_machine_set_policy(pa_machine *m, pa_policy p, uint64_t seed);
void pa_machine_set_target(pa_machine *m, pa_target t);

/* --- issue ----------------------------------------------------------- */

/* Tile load into shared memory at dst (a shared::cta address of CTA `cta`,
 * or with cluster_space a shared::cluster address), completing complete_tx
 * on the mbarrier at mbar. multicast: .multicast::cluster to the CTAs in
 * cta_mask (each gets the box at dst's offset, and its mbarrier at mbar's
 * offset); a mask of 0 reaches no CTA. */
int pa_issue_tile_load(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                       const int32_t coords[PA_MAX_RANK], uint32_t dst, int cluster_space,
                       uint32_t mbar, int multicast, uint16_t cta_mask, pa_error *err);

/* The same for any load mode: .tile, or .im2col with offsets (W, H, D). */
int pa_issue_tensor_load(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                         pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                         const uint16_t offsets[PA_MAX_RANK - 2], uint32_t dst, int cluster_space,
                         uint32_t mbar, int multicast, uint16_t cta_mask, pa_error *err);

/* The same with .cta_group::1 / ::2 (cta_group 0: the qualifier left out).
 * With ::2 each destination CTA's signal goes to the mbarrier at mbar's
 * offset in the CTA of its pair (ranks 2k, 2k+1) whose rank has the parity
 * of mbar's CTA (PTX cp.async.bulk.tensor, .cta_group). */
int pa_issue_tensor_load_group(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                               pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                               const uint16_t offsets[PA_MAX_RANK - 2], uint32_t dst, int cluster_space,
                               uint32_t mbar, int multicast, uint16_t cta_mask, int cta_group,
                               pa_error *err);

/* Tile store (or tensor reduction when is_reduce) from shared::cta src. */
int pa_issue_tensor_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                          pa_load_mode mode, const int32_t coords[PA_MAX_RANK], uint32_t src,
                          int is_reduce, pa_redop op, pa_error *err);
int pa_issue_tile_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                        const int32_t coords[PA_MAX_RANK], uint32_t src, int is_reduce,
                        pa_redop op, pa_error *err);

/* cp.reduce.async.bulk to global (bulk_group) or to shared::cluster (mbarrier). */
int pa_issue_bulk_reduce(pa_machine *m, uint32_t cta, uint32_t thread, pa_rdst dst_kind,
                         uint64_t dst, uint32_t src, uint32_t size, uint32_t mbar, pa_redop op,
                         pa_rtype type, int noftz, pa_error *err);

/* cp.async.bulk.commit_group / wait_group{.read} N. */
int pa_bulk_commit_group(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err);
int pa_bulk_wait_group(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t n, pa_error *err);

/* --- advancing --------------------------------------------------------- */

/* Complete one pending operation chosen by the policy; *done = 0 if none. */
int pa_machine_step(pa_machine *m, int *done, pa_error *err);
int pa_machine_run(pa_machine *m, pa_error *err);

/* --- mbarriers (addr: shared address as seen by CTA cta) --------------- */

pa_mbarrier *pa_machine_mbar(pa_machine *m, uint32_t cta, uint32_t addr, int create,
                             pa_error *err);
int pa_machine_mbar_init(pa_machine *m, uint32_t cta, uint32_t addr, uint32_t count,
                         pa_error *err);
/* try_wait.parity: completes the pending operations that signal this barrier
 * (in policy order) until the phase completes or none is left. */
int pa_machine_try_wait_parity(pa_machine *m, uint32_t cta, uint32_t addr, uint32_t parity,
                               int *result, pa_error *err);
/* try_wait with a state: try_wait.parity on the parity of the state's phase (R6). */
int pa_machine_try_wait_state(pa_machine *m, uint32_t cta, uint32_t addr, uint64_t state,
                              int *result, pa_error *err);

#endif
