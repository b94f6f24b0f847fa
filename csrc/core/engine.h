/* engine.h - the machine: memory, mbarriers and pending asynchronous operations.
 *
 * The queue core (engine/queue.h) holds the pending operations; one module
 * per engine issues and completes its kind: engine/tensor.c (tensor loads,
 * stores, reductions), engine/bulkreduce.c, engine/bulkcopy.c,
 * engine/cpasync.c, engine/stasync.c, engine/prefetch.c.
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

#include "engine/queue.h"
#include "reduce_fast.h"


/* A machine of nctas CTAs with smem_bytes of shared memory each, its queue
 * hooked to the checker (machine.c); pa_machine_free releases it. */
int pa_machine_init(pa_machine *m, uint32_t nctas, uint32_t smem_bytes, pa_error *err);

/* Unregister global buffer id (memory.h: pa_global_remove), refused
 * (PA_ERR_INVALID_VALUE, the model unchanged) while a pending operation may
 * still reach its bytes at completion: a tensor copy whose map's tensor
 * overlaps the buffer, or a bulk copy or reduction, cp.async or
 * st.async.release whose global range does. Completing later, it would read
 * or write whatever is registered at those addresses next (machine.c). */
int pa_machine_remove_buffer(pa_machine *m, uint64_t id, pa_error *err);

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

/* A thread's loop of n loads of one map, mode and mbarrier (the k-th at
 * coords[k] into the executing CTA's dst[k], no im2col offsets, no
 * multicast): the same as n calls of pa_issue_tensor_load in that order,
 * stopping at the first that fails with its error (*issued: the loads before
 * it, which stay issued, as the calls would leave them). Where nothing
 * watches single operations, loads continuing the newest record's run join
 * it (tensor.c), the checks they share made once. */
int pa_issue_tensor_load_run(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                             pa_load_mode mode, const int32_t (*coords)[PA_MAX_RANK], const uint32_t *dst, uint32_t n,
                             uint32_t mbar, uint32_t *issued, pa_error *err);

/* The same with .cta_group::1 / ::2 (cta_group 0: the qualifier left out).
 * With ::2 each destination CTA's signal goes to the mbarrier at mbar's
 * offset in the CTA of its pair (ranks 2k, 2k+1) whose rank has the parity
 * of mbar's CTA (PTX cp.async.bulk.tensor, .cta_group). ncoords / noffsets:
 * how many coordinates and im2colInfo values the caller was given (checked
 * against the mode's, copy.h: pa_copy_plan_make; -1: as many as it takes). */
int pa_issue_tensor_load_group(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                               pa_load_mode mode, const int32_t coords[PA_MAX_RANK], int ncoords,
                               const uint16_t offsets[PA_MAX_RANK - 2], int noffsets, uint32_t dst,
                               int cluster_space,
                               uint32_t mbar, int multicast, uint16_t cta_mask, int cta_group,
                               pa_error *err);

/* Tile store (or tensor reduction when is_reduce) from shared::cta src
 * (ncoords as pa_issue_tensor_load_group's). */
int pa_issue_tensor_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                          pa_load_mode mode, const int32_t coords[PA_MAX_RANK], int ncoords, uint32_t src,
                          int is_reduce, pa_redop op, pa_error *err);
int pa_issue_tile_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                        const int32_t coords[PA_MAX_RANK], uint32_t src, int is_reduce,
                        pa_redop op, pa_error *err);

/* cp.reduce.async.bulk to global (bulk_group) or to shared::cluster (mbarrier). */
int pa_issue_bulk_reduce(pa_machine *m, uint32_t cta, uint32_t thread, pa_rdst dst_kind,
                         uint64_t dst, uint32_t src, uint32_t size, uint32_t mbar, pa_redop op,
                         pa_rtype type, int noftz, pa_error *err);

/* cp.async.bulk.commit_group / wait_group N (machine init/free/policy: engine/queue.h). */
int pa_bulk_commit_group(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err);
int pa_bulk_wait_group(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t n, pa_error *err);
/* cp.async.bulk.wait_group.read N: the sources of all but the n most recent
 * groups have been read (the writes may still be pending). */
int pa_bulk_wait_group_read(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t n, pa_error *err);

/* --- cp.async (engine/cpasync.c) --------------------------------------- */

typedef struct {
    uint32_t cp_size;             /* 4, 8 or 16 */
    uint32_t src_size;            /* bytes read (default cp_size); the rest zero-filled */
    int ignore_src;               /* the ignore-src predicate: read nothing, write zeros */
    int cg;                       /* .cg (else .ca) */
    uint32_t prefetch;            /* .L2::64B/128B/256B: 64/128/256; 0 = none */
    int cache_hint;               /* .L2::cache_hint with a cache-policy operand */
} pa_cp_async_args;

int pa_issue_cp_async(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint64_t src,
                      const pa_cp_async_args *a, pa_error *err);
/* A thread's copy loop in one call (engine/cprun.c): n cp.async, the k-th
 * from src + k * src_stride to dst + k * dst_stride, the same as n calls of
 * pa_issue_cp_async in that order, except that every copy is checked before
 * any is issued (the first that breaks a rule is named and none is issued;
 * only a hazard raised by the checker at the k-th issue leaves the k before
 * it queued, as k calls would). Where nothing watches single operations, a
 * contiguous run of whole copies is one record in the queue (cprun.c). */
int pa_issue_cp_async_run(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint32_t dst_stride,
                          uint64_t src, uint64_t src_stride, uint32_t n, const pa_cp_async_args *a, pa_error *err);
int pa_cp_async_commit_group(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err);
int pa_cp_async_wait_group(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t n, pa_error *err);
int pa_cp_async_wait_all(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err);
/* cp.async.mbarrier.arrive{.noinc}.shared::cta.b64 [mbar]. */
int pa_cp_async_mbarrier_arrive(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t mbar, int noinc,
                                pa_error *err);

/* --- cp.async.bulk (engine/bulkcopy.c) ----------------------------------- */

typedef enum {
    PA_BULK_G2S_CTA = 0,          /* .shared::cta.global.mbarrier::complete_tx::bytes */
    PA_BULK_G2S_CLUSTER,          /* .shared::cluster.global.mbarrier::complete_tx::bytes{.multicast::cluster} */
    PA_BULK_S2S,                  /* .shared::cluster.shared::cta.mbarrier::complete_tx::bytes */
    PA_BULK_S2G,                  /* .global.shared::cta.bulk_group{.cp_mask} */
    PA_BULK_DIR_COUNT
} pa_bulk_dir;

typedef struct {
    int multicast;                /* .multicast::cluster with cta_mask (G2S_CLUSTER) */
    uint16_t cta_mask;
    int cp_mask;                  /* .cp_mask with byte_mask (S2G; sm_100 or later) */
    uint16_t byte_mask;
    int cache_hint;               /* .L2::cache_hint with a cache-policy operand */
} pa_bulk_copy_args;

/* dst / src: global addresses or shared addresses as the direction says;
 * mbar: the mbarrier operand (ignored for S2G). */
int pa_issue_bulk_copy(pa_machine *m, uint32_t cta, uint32_t thread, pa_bulk_dir dir, uint64_t dst,
                       uint64_t src, uint32_t size, uint32_t mbar, const pa_bulk_copy_args *a, pa_error *err);
/* cp.async.bulk.prefetch.L2.global [src], size: checked, then a no-op (a cache hint). */
int pa_bulk_prefetch_l2(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t src, uint32_t size,
                        pa_error *err);

/* --- st.async, st.bulk (engine/stasync.c) -------------------------------- */

/* st.async{.weak}.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type
 * [dst], {bytes}, [mbar]: elem_bytes 4 or 8, vec 1, 2 or 4 (at most 16 bytes). */
int pa_issue_st_async(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint32_t mbar,
                      const uint8_t *bytes, uint32_t elem_bytes, uint32_t vec, pa_error *err);
/* st.async{.mmio}.release.{gpu,sys}{.global}.type [dst], b (sm_100 or later):
 * a release store of size 1, 2, 4 or 8 bytes to global memory, completing by
 * the end of the CTA (no mbarrier, no group); .mmio needs .sys. */
int pa_issue_st_async_release(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t dst,
                              const uint8_t *bytes, uint32_t size, int scope_sys, int mmio, pa_error *err);
/* red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.op.type [dst], value, [mbar]
 * (engine/redasync.c): redop and kind as the ISA's table has them (kind PA_EK_U32 for .b32). */
int pa_issue_red_async(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint32_t mbar, uint64_t value,
                       pa_redop redop, pa_ekind kind, pa_error *err);
/* st.bulk{.weak}.shared::cta [dst], size, initval (sm_100 or later): zeroes at once. */
int pa_st_bulk(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint64_t size, uint64_t initval,
               pa_error *err);

/* --- cp.async.bulk.prefetch.tensor (engine/prefetch.c) ------------------ */

/* cp.async.bulk.prefetch.tensor.Nd.L2.global{.load_mode} [map, coords]{, im2colInfo}:
 * planned like a load in the same mode, completed at issue; info holds the
 * .im2col offsets (W, H, D) or {wHalo, wOffset}; fn (may be NULL) receives
 * every in-bounds run of global bytes it names (the counts as
 * pa_issue_tensor_load_group's). */
int pa_issue_prefetch_tensor(pa_machine *m, const pa_tensormap *map, pa_load_mode mode,
                             const int32_t coords[PA_MAX_RANK], int ncoords,
                             const uint16_t info[PA_MAX_RANK - 2], int ninfo, pa_range_fn fn, void *ctx, pa_error *err);

#endif
