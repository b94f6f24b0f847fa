/* batch.h - many operations in one call: a batch of tile loads, and the
 * replay of a kernel's operation list.
 *
 * Same semantics and errors as issuing the operations one by one through
 * engine.h, in order. A tile-load batch is checked whole before anything is
 * issued: if any load would fault at issue, none is issued and *failed names
 * the first that would (its error is the one a one-by-one issue raises). An
 * operation list cannot be checked ahead (its later operations depend on the
 * state the earlier ones leave): it runs in order and stops at the first
 * operation that fails; *failed names it, and the ones before it have taken
 * effect, exactly as if issued one by one.
 */
#ifndef PA_BATCH_H
#define PA_BATCH_H

#include "engine.h"

/* cp.async.bulk.tensor.Nd.shared::cta.global.tile.mbarrier::complete_tx::bytes
 * for n boxes of one map: box i at coords[i * PA_MAX_RANK ...] into the
 * shared::cta address dst[i], all completing on the mbarrier at mbar.
 * ncoords: how many coordinates each row was given (checked against the
 * map's rank by the copy plan; -1: as many as the rank). */
int pa_issue_tile_load_batch(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                             size_t n, const int32_t *coords, int ncoords, const uint32_t *dst, uint32_t mbar,
                             size_t *failed, pa_error *err);

/* One operation of a list: 16 signed 64-bit fields (a row of an int64
 * array). Unused fields are 0. */
typedef enum {
    PA_REC_TENSOR_LOAD = 0,   /* .tile load: map, coords, smem = dst, mbar; flags bit 0 shared::cluster
                                 dst, bit 1 multicast to cta_mask; b = how many coords were given
                                 (checked against the map's rank; 0: as many as the rank), as for
                                 the store and the reduction */
    PA_REC_TENSOR_STORE = 1,  /* .tile store: map, coords, smem = src, b */
    PA_REC_TENSOR_REDUCE = 2, /* .tile reduction: map, coords, smem = src, a = redOp, b */
    PA_REC_BULK_REDUCE = 3,   /* cp.reduce.async.bulk: gaddr = dst, smem = src, a = size,
                                 b = redOp | type << 8 | noftz << 16, flags bit 0 shared::cluster
                                 (then mbar) */
    PA_REC_COMMIT_GROUP = 4,  /* cp.async.bulk.commit_group */
    PA_REC_WAIT_GROUP = 5,    /* cp.async.bulk.wait_group a */
    PA_REC_MBAR_INIT = 6,     /* mbarrier.init [mbar], a */
    PA_REC_MBAR_ARRIVE = 7,   /* mbarrier.arrive{_drop}{.expect_tx}: a = count, b = tx, flags as
                                 pa_mbar_arrive's */
    PA_REC_MBAR_EXPECT_TX = 8,/* mbarrier.expect_tx [mbar], a */
    PA_REC_MBAR_WAIT = 9,     /* try_wait.parity a that must succeed (else PA_ERR_HAZARD) */
    PA_REC_RUN = 10,          /* complete every pending operation */
    PA_REC_KIND_COUNT = 11
} pa_rec_kind;

enum {
    PA_REC_KIND = 0, PA_REC_CTA, PA_REC_THREAD, PA_REC_MAP, PA_REC_C0, /* C0..C0+4: coords */
    PA_REC_SMEM = 9, PA_REC_MBAR, PA_REC_A, PA_REC_B, PA_REC_GADDR, PA_REC_FLAGS, PA_REC_MASK,
    PA_REC_FIELDS = 16
};

typedef struct {
    int64_t f[PA_REC_FIELDS];
} pa_rec;

const char *pa_rec_kind_name(int kind);

/* Run recs[0..n) in order; tensor operations use maps[rec.f[PA_REC_MAP]],
 * which must not change during the call (the machine's plan memo compares
 * each map with its plans once a call: copy.h, pa_tile_memo_freeze). */
int pa_replay(pa_machine *m, const pa_rec *recs, size_t n, const pa_tensormap *const *maps, size_t nmaps,
              size_t *failed, pa_error *err);
/* The same, the bytes of .tile loads moved by `threads` threads (the caller
 * and threads - 1 more) where no one can tell (defer.h): every result, state,
 * trace and error is that of pa_replay. threads <= 1: pa_replay. */
int pa_replay_threads(pa_machine *m, const pa_rec *recs, size_t n, const pa_tensormap *const *maps,
                      size_t nmaps, unsigned threads, size_t *failed, pa_error *err);

#endif
