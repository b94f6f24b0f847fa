/* batch.c - tile-load batches and operation-list replay (see batch.h). */
#include "batch.h"

#include "check/watch.h"
#include "defer.h"

#include <inttypes.h>
#include <string.h>

/* --- tile-load batch ---------------------------------------------------- */

/* The issue-time checks of pa_issue_tensor_load for one .tile load to a
 * shared::cta address, in the same order (so the first failure is the same
 * error), without issuing anything: the copy's plan (copy/copy.h), then
 * the machine's side. */
static int check_tile_load(pa_machine *m, uint32_t cta, const pa_tensormap *map,
                           const int32_t coords[PA_MAX_RANK], int ncoords, pa_copy_plan *p, uint32_t dst,
                           uint32_t mbar, pa_error *err)
{
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                       m->cluster.nctas);
    /* the issue's own plan (through the machine's memo: the map's checks once a batch) */
    int rc = pa_copy_plan_make_memo(p, &m->tile_memo, m->target, map, PA_MODE_TILE, PA_DIR_LOAD, coords, ncoords,
                                    NULL, 0, err);
    if (rc)
        return rc;
    uint32_t rank;
    if (!pa_smem_resolve(&m->cluster, cta, 0, dst, 1, &rank, err))
        return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
    if ((rc = pa_copy_plan_place(p, pa_smem_offset(dst), m->cluster.smem_bytes, err)))
        return rc;
    const uint32_t bar = pa_mapa(mbar, rank);
    if (bar % 8)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "mbarrier address 0x%x is not 8-byte aligned", bar);
    if (!pa_smem_resolve(&m->cluster, cta, 1, bar, 8, NULL, err))
        return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
    return PA_OK;
}

int pa_issue_tile_load_batch(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                             size_t n, const int32_t *coords, int ncoords, const uint32_t *dst, uint32_t mbar,
                             size_t *failed, pa_error *err)
{
    pa_copy_plan p;
    *failed = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = check_tile_load(m, cta, map, coords + i * PA_MAX_RANK, ncoords, &p, dst[i], mbar, err);
        if (rc) {
            *failed = i;
            return rc;
        }
    }
    for (size_t i = 0; i < n; i++) {
        /* only a host allocation (or, with the immediate policy, a completion)
         * can fail here; the loads before it stay issued */
        int rc = pa_issue_tile_load(m, cta, thread, map, coords + i * PA_MAX_RANK, dst[i], 0, mbar, 0, 0, err);
        if (rc) {
            *failed = i;
            return rc;
        }
    }
    return PA_OK;
}

/* --- operation lists ------------------------------------------------------ */

static const char *const REC_NAMES[PA_REC_KIND_COUNT] = {
    "cp.async.bulk.tensor load", "cp.async.bulk.tensor store", "cp.reduce.async.bulk.tensor",
    "cp.reduce.async.bulk", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", "mbarrier.init",
    "mbarrier.arrive", "mbarrier.expect_tx", "mbarrier.try_wait", "run"};

const char *pa_rec_kind_name(int kind)
{
    return kind >= 0 && kind < PA_REC_KIND_COUNT ? REC_NAMES[kind] : NULL;
}

static const char *const FIELD_NAMES[PA_REC_FIELDS] = {
    "kind", "cta", "thread", "map", "c0", "c1", "c2", "c3", "c4", "smem", "mbar", "a", "b", "gaddr", "flags",
    "cta_mask"};

/* Field i of r as an unsigned value below 2^bits. */
static int field_u(const pa_rec *r, int i, unsigned bits, uint64_t *out, pa_error *err)
{
    const int64_t v = r->f[i];
    if (v < 0 || (bits < 64 && (uint64_t)v >> bits))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "field %s = %" PRId64 " does not fit in .u%u", FIELD_NAMES[i],
                       v, bits);
    *out = (uint64_t)v;
    return PA_OK;
}

#define U32(i, var)                                                   \
    do {                                                              \
        uint64_t t_ = 0;                                                \
        if ((rc = field_u(r, (i), 32, &t_, err)))                     \
            return rc;                                                \
        (var) = (uint32_t)t_;                                         \
    } while (0)

static int rec_coords(const pa_rec *r, int32_t coords[PA_MAX_RANK], pa_error *err)
{
    /* every coordinate in .s32 range, in one test; field by field only when
     * one is not, to name the first */
    _Static_assert(PA_MAX_RANK == 5, "the five coordinate fields c0..c4");
    const int64_t *c = r->f + PA_REC_C0;
#define S32(v) (((uint64_t)(v) + 0x80000000u) >> 32)   /* 0: in .s32 range */
    if (!(S32(c[0]) | S32(c[1]) | S32(c[2]) | S32(c[3]) | S32(c[4]))) {
        coords[0] = (int32_t)c[0];
        coords[1] = (int32_t)c[1];
        coords[2] = (int32_t)c[2];
        coords[3] = (int32_t)c[3];
        coords[4] = (int32_t)c[4];
        return PA_OK;
    }
#undef S32
    for (int i = 0; i < PA_MAX_RANK; i++) {
        int64_t v = r->f[PA_REC_C0 + i];
        if (v < INT32_MIN || v > INT32_MAX)
            return pa_fail(err, PA_ERR_INVALID_VALUE, "tensor coordinate c%d = %" PRId64 " does not fit in .s32",
                           i, v);
        coords[i] = (int32_t)v;
    }
    return PA_OK;
}

static int rec_map(const pa_rec *r, const pa_tensormap *const *maps, size_t nmaps, const pa_tensormap **out,
                   pa_error *err)
{
    int64_t k = r->f[PA_REC_MAP];
    if (k < 0 || (uint64_t)k >= nmaps || !maps[k])
        return pa_fail(err, PA_ERR_INVALID_VALUE, "tensor map index %" PRId64 " is not one of the %zu maps given",
                       k, nmaps);
    *out = maps[k];
    return PA_OK;
}

static pa_mbar_slot *rec_mbar(pa_machine *m, uint32_t cta, uint32_t addr, pa_error *err)
{
    if (cta >= m->cluster.nctas) {
        pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta, m->cluster.nctas);
        return NULL;
    }
    return pa_machine_mbar_slot(m, cta, addr, 0, err);
}

static int run_rec(pa_machine *m, const pa_rec *r, const pa_tensormap *const *maps, size_t nmaps, pa_error *err)
{
    int rc;
    uint32_t cta, thread, smem, mbar, a, b, flags, mask;
    uint64_t gaddr = 0;
    int32_t coords[PA_MAX_RANK];
    const pa_tensormap *map = NULL;
    const int64_t kind = r->f[PA_REC_KIND];
    const int64_t *f = r->f;
    /* every .u32 field below 2^32 and gaddr not negative, in one test (a
     * negative value sets the high bits); only a record that fails it is
     * checked field by field, in the order that names the first bad one */
    if (((uint64_t)(f[PA_REC_CTA] | f[PA_REC_THREAD] | f[PA_REC_SMEM] | f[PA_REC_MBAR] | f[PA_REC_A] |
                    f[PA_REC_B] | f[PA_REC_FLAGS] | f[PA_REC_MASK]) >> 32) == 0 &&
        f[PA_REC_GADDR] >= 0) {
        cta = (uint32_t)f[PA_REC_CTA];
        thread = (uint32_t)f[PA_REC_THREAD];
        smem = (uint32_t)f[PA_REC_SMEM];
        mbar = (uint32_t)f[PA_REC_MBAR];
        a = (uint32_t)f[PA_REC_A];
        b = (uint32_t)f[PA_REC_B];
        flags = (uint32_t)f[PA_REC_FLAGS];
        mask = (uint32_t)f[PA_REC_MASK];
        gaddr = (uint64_t)f[PA_REC_GADDR];
    } else {
        U32(PA_REC_CTA, cta);
        U32(PA_REC_THREAD, thread);
        U32(PA_REC_SMEM, smem);
        U32(PA_REC_MBAR, mbar);
        U32(PA_REC_A, a);
        U32(PA_REC_B, b);
        U32(PA_REC_FLAGS, flags);
        U32(PA_REC_MASK, mask);
        if ((rc = field_u(r, PA_REC_GADDR, 64, &gaddr, err)))
            return rc;
    }
    if (kind >= PA_REC_TENSOR_LOAD && kind <= PA_REC_TENSOR_REDUCE &&
        ((rc = rec_map(r, maps, nmaps, &map, err)) || (rc = rec_coords(r, coords, err))))
        return rc;
    const int ncoords = b && b <= PA_MAX_RANK ? (int)b : b ? PA_MAX_RANK + 1 : -1;   /* 0: the map's rank */
    switch (kind) {
    case PA_REC_TENSOR_LOAD:
        if (mask > 0xFFFF)
            return pa_fail(err, PA_ERR_INVALID_VALUE, "ctaMask 0x%x does not fit in 16 bits", mask);
        return pa_issue_tensor_load_group(m, cta, thread, map, PA_MODE_TILE, coords, ncoords, NULL, 0, smem,
                                          flags & 1u, mbar, (flags >> 1) & 1u, (uint16_t)mask, 0, err);
    case PA_REC_TENSOR_STORE:
        return pa_issue_tensor_store(m, cta, thread, map, PA_MODE_TILE, coords, ncoords, smem, 0, PA_RED_ADD,
                                     err);
    case PA_REC_TENSOR_REDUCE:
        if (a >= PA_RED_COUNT)
            return pa_fail(err, PA_ERR_INVALID_VALUE, "redOp %u is not a PTX .redOp", a);
        return pa_issue_tensor_store(m, cta, thread, map, PA_MODE_TILE, coords, ncoords, smem, 1, (pa_redop)a,
                                     err);
    case PA_REC_BULK_REDUCE: {
        const uint32_t op = b & 0xFF, type = (b >> 8) & 0xFF;
        if (op >= PA_RED_COUNT || type >= PA_RT_COUNT)
            return pa_fail(err, PA_ERR_INVALID_VALUE, "unknown reduction op %u or type %u", op, type);
        if ((flags & 1u) && gaddr > UINT32_MAX)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "shared::cluster address %" PRIu64 " does not fit in 32 bits", gaddr);
        return pa_issue_bulk_reduce(m, cta, thread, (flags & 1u) ? PA_RDST_SHARED_CLUSTER : PA_RDST_GLOBAL, gaddr,
                                    smem, a, mbar, (pa_redop)op, (pa_rtype)type, (b >> 16) & 1u, err);
    }
    case PA_REC_COMMIT_GROUP:
        return pa_bulk_commit_group(m, cta, thread, err);
    case PA_REC_WAIT_GROUP:
        return pa_bulk_wait_group(m, cta, thread, a, err);
    /* the mbarrier records go through the synchronisation layer, as the
     * one-by-one calls do: the same hazard checks and trace, and the race
     * checker sees the arrivals and waits that order the loads */
    case PA_REC_MBAR_INIT:
        return pa_sync_init(m, cta, thread, mbar, a, err);
    case PA_REC_MBAR_ARRIVE: {
        uint64_t state;
        return pa_sync_arrive(m, cta, thread, mbar, a, b, flags, &state, err);
    }
    case PA_REC_MBAR_EXPECT_TX:
        return pa_sync_tx(m, cta, thread, mbar, a, 0, err);
    case PA_REC_MBAR_WAIT: {
        int done = 0;
        if (a > 1)
            return pa_fail(err, PA_ERR_INVALID_VALUE, "phase parity %u must be 0 or 1", a);
        /* pa_sync_wait's own checks and lookup, made once: a slot never moves */
        pa_mbar_slot *s = rec_mbar(m, cta, mbar, err);
        if (!s)
            return err ? (int)err->code : PA_ERR_HAZARD;
        if ((rc = pa_sync_wait_slot(m, cta, thread, s, a, 1, &done, err)))
            return rc;
        if (!done)
            return pa_fail(err, PA_ERR_HAZARD,
                           "mbarrier at 0x%x (CTA %u) cannot complete phase parity %u: %d arrival(s) pending, "
                           "tx-count %d, no pending operation signals it (the wait would never return)",
                           mbar, cta, a, s->bar.pending, s->bar.tx);
        return PA_OK;
    }
    case PA_REC_RUN:
        return pa_machine_run(m, err);
    default:
        return pa_fail(err, PA_ERR_INVALID_VALUE, "operation kind %" PRId64 " is not one of 0..%d", kind,
                       PA_REC_KIND_COUNT - 1);
    }
}

int pa_replay(pa_machine *m, const pa_rec *recs, size_t n, const pa_tensormap *const *maps, size_t nmaps,
              size_t *failed, pa_error *err)
{
    return pa_replay_threads(m, recs, n, maps, nmaps, 1, failed, err);
}

/* Records after which loads taken aside may stay pending: they move bytes
 * only through completions and source reads, which copy the pending loads
 * first (defer.h). mbarrier.init writes shared memory itself. */
static int keeps_deferred(int64_t kind)
{
    return kind >= PA_REC_TENSOR_LOAD && kind < PA_REC_KIND_COUNT && kind != PA_REC_MBAR_INIT;
}

int pa_replay_threads(pa_machine *m, const pa_rec *recs, size_t n, const pa_tensormap *const *maps,
                      size_t nmaps, unsigned threads, size_t *failed, pa_error *err)
{
    *failed = 0;
    int rc = pa_defer_start(m, threads, err);
    pa_tile_memo_freeze(&m->tile_memo, 1);   /* the maps cannot change while the records run */
    for (size_t i = 0; i < n && !rc; i++) {
        const pa_rec r = recs[i];   /* one read of the caller's record */
        if (m->defer && !keeps_deferred(r.f[PA_REC_KIND]))
            rc = pa_defer_flush(m, err);
        if (!rc)
            rc = run_rec(m, &r, maps, nmaps, err);
        if (rc)
            *failed = i;
    }
    pa_tile_memo_freeze(&m->tile_memo, 0);
    /* the loads before a failure have landed, as one by one */
    pa_error stop_err;
    int stop_rc = pa_defer_stop(m, rc ? &stop_err : err);
    if (!rc && stop_rc)
        *failed = n ? n - 1 : 0;
    return rc ? rc : stop_rc;
}
