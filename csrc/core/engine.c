/* engine.c - pending operations, completion, mbarrier table (see engine.h). */
#include "engine.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NO_GROUP UINT64_MAX

int pa_machine_init(pa_machine *m, uint32_t nctas, uint32_t smem_bytes, pa_error *err)
{
    memset(m, 0, sizeof *m);
    pa_global_init(&m->global);
    m->target = PA_TARGET_DEFAULT;
    m->policy = PA_POLICY_IN_ORDER;
    m->rng = 0x9E3779B97F4A7C15ull;
    return pa_cluster_init(&m->cluster, nctas, smem_bytes, err);
}

void pa_machine_free(pa_machine *m)
{
    pa_global_free(&m->global);
    pa_cluster_free(&m->cluster);
    free(m->ops);
    free(m->mbars);
    free(m->threads);
    memset(m, 0, sizeof *m);
}

void pa_machine_set_target(pa_machine *m, pa_target t)
{
    m->target = t;
}

void pa_machine_set_policy(pa_machine *m, pa_policy p, uint64_t seed)
{
    m->policy = p;
    m->rng = seed ? seed : 0x9E3779B97F4A7C15ull;
}

static uint64_t next_random(pa_machine *m)
{
    /* xorshift64* */
    m->rng ^= m->rng >> 12;
    m->rng ^= m->rng << 25;
    m->rng ^= m->rng >> 27;
    return m->rng * 0x2545F4914F6CDD1Dull;
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem, pa_error *err)
{
    if (need <= *cap)
        return PA_OK;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    void *p = realloc(*arr, nc * elem);
    if (!p)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the operation queue");
    *arr = p;
    *cap = nc;
    return PA_OK;
}

static int check_cta(const pa_machine *m, uint32_t cta, pa_error *err)
{
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs",
                       cta, m->cluster.nctas);
    return PA_OK;
}

static pa_thread_state *thread_state(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err)
{
    for (size_t i = 0; i < m->nthreads; i++)
        if (m->threads[i].cta == cta && m->threads[i].thread == thread)
            return &m->threads[i];
    if (grow((void **)&m->threads, &m->capthreads, m->nthreads + 1, sizeof *m->threads, err))
        return NULL;
    pa_thread_state *t = &m->threads[m->nthreads++];
    t->cta = cta;
    t->thread = thread;
    t->committed = 0;
    return t;
}

/* --- mbarrier table ------------------------------------------------------ */

pa_mbarrier *pa_machine_mbar(pa_machine *m, uint32_t cta, uint32_t addr, int create, pa_error *err)
{
    uint32_t rank;
    /* An mbarrier is a .b64 object: 8-byte aligned shared memory (PTX ISA). */
    if (addr % 8) {
        pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "mbarrier address 0x%x is not 8-byte aligned", addr);
        return NULL;
    }
    if (!pa_smem_resolve(&m->cluster, cta, 1, addr, 8, &rank, err))
        return NULL;
    uint32_t off = pa_smem_offset(addr);
    for (size_t i = 0; i < m->nmbars; i++)
        if (m->mbars[i].cta == rank && m->mbars[i].offset == off)
            return &m->mbars[i].bar;
    if (!create) {
        pa_fail(err, PA_ERR_HAZARD,
                "no mbarrier was initialised at shared address 0x%x of CTA %u (undefined behaviour)",
                off, rank);
        return NULL;
    }
    if (grow((void **)&m->mbars, &m->capmbars, m->nmbars + 1, sizeof *m->mbars, err))
        return NULL;
    pa_mbar_slot *s = &m->mbars[m->nmbars++];
    memset(s, 0, sizeof *s);
    s->cta = rank;
    s->offset = off;
    return &s->bar;
}

int pa_machine_mbar_init(pa_machine *m, uint32_t cta, uint32_t addr, uint32_t count, pa_error *err)
{
    const size_t nmbars = m->nmbars;
    pa_mbarrier *b = pa_machine_mbar(m, cta, addr, 1, err);
    if (!b)
        return err ? err->code : PA_ERR_INVALID_VALUE;
    int rc = pa_mbar_init(b, count, err);
    if (rc) {
        m->nmbars = nmbars;   /* a refused init leaves no new slot behind */
        return rc;
    }
    /* The object reads as zero through ld.shared in every state (observation 14). */
    uint8_t *p = pa_smem_resolve(&m->cluster, cta, 1, addr, 8, NULL, err);
    memset(p, 0, 8);
    return PA_OK;
}

/* --- queue ----------------------------------------------------------------- */

static int complete_op(pa_machine *m, const pa_op *op, pa_error *err);

static int enqueue(pa_machine *m, pa_op *op, pa_error *err)
{
    op->seq = m->next_seq++;
    if (m->policy == PA_POLICY_IMMEDIATE) {
        /* Group bookkeeping still counts it, but it is already done. */
        return complete_op(m, op, err);
    }
    int rc = grow((void **)&m->ops, &m->capops, m->nops + 1, sizeof *m->ops, err);
    if (rc)
        return rc;
    m->ops[m->nops++] = *op;
    return PA_OK;
}

static int complete_at(pa_machine *m, size_t idx, pa_error *err)
{
    pa_op op = m->ops[idx];
    memmove(&m->ops[idx], &m->ops[idx + 1], (m->nops - idx - 1) * sizeof *m->ops);
    m->nops--;
    return complete_op(m, &op, err);
}

typedef int (*op_match)(const pa_op *op, const void *arg);

/* Complete one pending operation that matches, chosen by the policy among the
 * matches in issue order (oldest, newest, or a seeded random one). */
static int complete_one(pa_machine *m, op_match match, const void *arg, int *found, pa_error *err)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nops; i++)
        n += match(&m->ops[i], arg) != 0;
    *found = n > 0;
    if (n == 0)
        return PA_OK;
    size_t k = m->policy == PA_POLICY_REVERSE ? n - 1
               : m->policy == PA_POLICY_RANDOM ? next_random(m) % n
                                                : 0;
    for (size_t i = 0; i < m->nops; i++)
        if (match(&m->ops[i], arg) && k-- == 0)
            return complete_at(m, i, err);
    return PA_OK;
}

static int match_any(const pa_op *op, const void *arg)
{
    (void)op;
    (void)arg;
    return 1;
}

int pa_machine_step(pa_machine *m, int *done, pa_error *err)
{
    return complete_one(m, match_any, NULL, done, err);
}

int pa_machine_run(pa_machine *m, pa_error *err)
{
    int done = 1;
    while (done) {
        int rc = pa_machine_step(m, &done, err);
        if (rc)
            return rc;
    }
    return PA_OK;
}

/* Does op signal the mbarrier at (rank, offset)? */
typedef struct {
    uint32_t rank, offset;
} bar_ref;

static int signals(const pa_op *op, const void *arg)
{
    const bar_ref *b = arg;
    if (pa_smem_offset(op->mbar_addr) != b->offset)
        return 0;
    if (op->kind == PA_OP_TILE_LOAD)
        return (op->cta_mask >> b->rank) & 1u;
    if (op->kind == PA_OP_BULK_REDUCE_CLUSTER)
        return pa_smem_rank(op->smem_dst) == b->rank;
    return 0;
}

int pa_machine_try_wait_parity(pa_machine *m, uint32_t cta, uint32_t addr, uint32_t parity,
                               int *result, pa_error *err)
{
    pa_mbarrier *b = pa_machine_mbar(m, cta, addr, 0, err);
    if (!b)
        return err ? err->code : PA_ERR_HAZARD;
    if (!b->valid)
        return pa_fail(err, PA_ERR_HAZARD,
                       "mbarrier.try_wait on an mbarrier that is not initialised (undefined behaviour)");
    const bar_ref ref = {pa_smem_rank(addr), pa_smem_offset(addr)};
    int found = 1;
    while (found && !pa_mbar_test_parity(b, parity)) {
        int rc = complete_one(m, signals, &ref, &found, err);
        if (rc)
            return rc;
        /* completing may have grown (moved) the mbarrier table */
        if (!(b = pa_machine_mbar(m, cta, addr, 0, err)))
            return err ? err->code : PA_ERR_HAZARD;
    }
    *result = pa_mbar_test_parity(b, parity);
    return PA_OK;
}

int pa_machine_try_wait_state(pa_machine *m, uint32_t cta, uint32_t addr, uint64_t state,
                              int *result, pa_error *err)
{
    return pa_machine_try_wait_parity(m, cta, addr, pa_mbar_state_parity(state), result, err);
}

/* --- completion -------------------------------------------------------------- */

/* Credit tx bytes to the mbarrier at mbar's offset in CTA rank: the hardware
 * signals the barrier of the destination CTA (golden C3, C15). */
static int credit(pa_machine *m, uint32_t rank, uint32_t mbar, uint64_t tx, pa_error *err)
{
    pa_mbarrier *b = pa_machine_mbar(m, rank, pa_mapa(mbar, rank), 0, err);
    if (!b)
        return err ? err->code : PA_ERR_HAZARD;
    return pa_mbar_complete_tx(b, (uint32_t)tx, err);
}

static void copy_run(void *ctx, uint8_t *gdst, const uint8_t *ssrc, size_t n)
{
    (void)ctx;
    memcpy(gdst, ssrc, n);
}

typedef struct {
    pa_redop op;
    pa_dtype dtype;
    uint32_t esize;
} reduce_ctx;

static void reduce_run(void *ctx, uint8_t *gdst, const uint8_t *ssrc, size_t n)
{
    const reduce_ctx *r = ctx;
    pa_reduce_tensor_apply(r->op, r->dtype, gdst, ssrc, n / r->esize);
}

static pa_smem_view smem_of(pa_machine *m, uint32_t rank)
{
    pa_smem_view v = {m->cluster.smem[rank], m->cluster.smem_bytes};
    return v;
}

static int complete_op(pa_machine *m, const pa_op *op, pa_error *err)
{
    int rc = PA_OK;
    m->completed++;
    switch (op->kind) {
    case PA_OP_TILE_LOAD:
        for (uint32_t r = 0; r < m->cluster.nctas && !rc; r++) {
            if (!((op->cta_mask >> r) & 1u))
                continue;
            rc = pa_tensor_load_exec(&op->map, op->mode, op->coords, op->offsets, &m->global,
                                     smem_of(m, r), pa_smem_offset(op->smem_addr), err);
            if (!rc)
                rc = credit(m, r, op->mbar_addr, op->tx_bytes, err);
        }
        return rc;
    case PA_OP_TILE_STORE:
        return pa_tensor_store_exec(&op->map, op->mode, op->coords, &m->global, smem_of(m, op->cta),
                                    pa_smem_offset(op->smem_addr), copy_run, NULL, err);
    case PA_OP_TENSOR_REDUCE: {
        reduce_ctx ctx = {op->redop, op->map.dtype, pa_dtype_get(op->map.dtype)->elem_bytes};
        return pa_tensor_store_exec(&op->map, op->mode, op->coords, &m->global, smem_of(m, op->cta),
                                    pa_smem_offset(op->smem_addr), reduce_run, &ctx, err);
    }
    case PA_OP_BULK_REDUCE_GLOBAL: {
        const uint8_t *src = pa_smem_resolve(&m->cluster, op->cta, 0, op->smem_addr, op->size, NULL, err);
        uint8_t *dst = src ? pa_global_resolve(&m->global, op->global_addr, op->size, err) : NULL;
        if (!dst)
            return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
        pa_reduce_bulk_apply(op->redop, op->rtype, dst, src, op->size / pa_rtype_bytes(op->rtype));
        return PA_OK;
    }
    case PA_OP_BULK_REDUCE_CLUSTER: {
        uint32_t rank;
        const uint8_t *src = pa_smem_resolve(&m->cluster, op->cta, 0, op->smem_addr, op->size, NULL, err);
        uint8_t *dst = src ? pa_smem_resolve(&m->cluster, op->cta, 1, op->smem_dst, op->size, &rank, err) : NULL;
        if (!dst)
            return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
        pa_reduce_bulk_apply(op->redop, op->rtype, dst, src, op->size / pa_rtype_bytes(op->rtype));
        return credit(m, rank, op->mbar_addr, op->size, err);
    }
    }
    return pa_fail(err, PA_ERR_STATE, "unknown operation kind %d", (int)op->kind);
}

/* --- issue ------------------------------------------------------------------------ */

/* An mbarrier operand: 8-byte aligned shared memory of the cluster (PTX ISA).
 * Whether it is initialised is checked when the operation signals it. */
static int check_mbar_addr(pa_machine *m, uint32_t cta, uint32_t addr, pa_error *err)
{
    if (addr % 8)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "mbarrier address 0x%x is not 8-byte aligned", addr);
    if (!pa_smem_resolve(&m->cluster, cta, 1, addr, 8, NULL, err))
        return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
    return PA_OK;
}

static int begin_op(pa_machine *m, pa_op *op, pa_opkind kind, uint32_t cta, uint32_t thread,
                    int uses_group, pa_error *err)
{
    memset(op, 0, sizeof *op);
    op->kind = kind;
    op->cta = cta;
    op->thread = thread;
    op->uses_group = uses_group;
    op->group = NO_GROUP;
    int rc = check_cta(m, cta, err);
    if (!rc && uses_group && !thread_state(m, cta, thread, err))
        rc = err ? err->code : PA_ERR_NO_MEMORY;
    return rc;
}

/* The layout of a tensor copy after its issue-time checks (faults named). */
static int tensor_issue_checks(const pa_tensormap *map, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                               const uint16_t offsets[PA_MAX_RANK - 2], int is_store, pa_box_layout *l,
                               pa_error *err)
{
    if (mode == PA_MODE_TILE) {
        int rc = pa_tile_check_coords(map, coords, is_store, err);
        return rc ? rc : pa_box_layout_tile(map, l, err);
    }
    if (mode == (is_store ? PA_MODE_IM2COL : PA_MODE_IM2COL_NO_OFFS) || mode > PA_MODE_IM2COL_NO_OFFS)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "load mode %d is not a %s mode (.tile, %s)", (int)mode,
                       is_store ? "store-direction" : "load-direction",
                       is_store ? ".im2col_no_offs" : ".im2col");
    int rc = pa_box_layout_im2col(map, l, err);
    return rc ? rc : pa_im2col_check(map, mode, coords, offsets, err);
}

int pa_issue_tensor_load(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                         pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                         const uint16_t offsets[PA_MAX_RANK - 2], uint32_t dst, int cluster_space,
                         uint32_t mbar, int multicast, uint16_t cta_mask, pa_error *err)
{
    pa_op op;
    int rc = begin_op(m, &op, PA_OP_TILE_LOAD, cta, thread, 0, err);
    if (rc)
        return rc;
    pa_box_layout l;
    if ((rc = tensor_issue_checks(map, mode, coords, offsets, 0, &l, err)))
        return rc;
    uint32_t dst_rank;
    if (!pa_smem_resolve(&m->cluster, cta, cluster_space, dst, 1, &dst_rank, err))
        return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
    if ((rc = pa_tile_check_smem(map, &l, pa_smem_offset(dst), m->cluster.smem_bytes, err)))
        return rc;
    if (multicast) {
        /* A ctaMask bit at or above the cluster size: the hardware fails the
         * launch (golden C10, cudaErrorLaunchFailure); the model faults at issue. */
        if (cta_mask >> m->cluster.nctas)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "ctaMask 0x%x names a CTA rank outside the cluster of %u CTAs "
                           "(the hardware fails the launch)",
                           cta_mask, m->cluster.nctas);
        /* ctaMask 0 is no error: the load reaches no CTA and signals no
         * mbarrier (golden C9). */
    } else {
        cta_mask = (uint16_t)(1u << dst_rank);
    }
    if ((rc = check_mbar_addr(m, cta, pa_mapa(mbar, dst_rank), err)))
        return rc;
    op.map = *map;
    op.mode = mode;
    memcpy(op.coords, coords, sizeof op.coords);
    if (offsets)
        memcpy(op.offsets, offsets, sizeof op.offsets);
    op.smem_addr = dst;
    op.mbar_addr = mbar;
    op.cta_mask = cta_mask;
    op.tx_bytes = l.tx_bytes;
    return enqueue(m, &op, err);
}

int pa_issue_tile_load(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                       const int32_t coords[PA_MAX_RANK], uint32_t dst, int cluster_space,
                       uint32_t mbar, int multicast, uint16_t cta_mask, pa_error *err)
{
    return pa_issue_tensor_load(m, cta, thread, map, PA_MODE_TILE, coords, NULL, dst, cluster_space,
                                mbar, multicast, cta_mask, err);
}

int pa_issue_tensor_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                          pa_load_mode mode, const int32_t coords[PA_MAX_RANK], uint32_t src,
                          int is_reduce, pa_redop redop, pa_error *err)
{
    pa_op op;
    int rc = begin_op(m, &op, is_reduce ? PA_OP_TENSOR_REDUCE : PA_OP_TILE_STORE, cta, thread, 1, err);
    if (rc)
        return rc;
    pa_box_layout l;
    if (is_reduce && (rc = pa_reduce_tensor_check(redop, map->dtype, err)))
        return rc;
    if ((rc = tensor_issue_checks(map, mode, coords, NULL, 1, &l, err)))
        return rc;
    if (!pa_smem_resolve(&m->cluster, cta, 0, src, 1, NULL, err))
        return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
    if ((rc = pa_tile_check_smem(map, &l, pa_smem_offset(src), m->cluster.smem_bytes, err)))
        return rc;
    op.map = *map;
    op.mode = mode;
    memcpy(op.coords, coords, sizeof op.coords);
    op.smem_addr = src;
    op.redop = redop;
    return enqueue(m, &op, err);
}

int pa_issue_tile_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                        const int32_t coords[PA_MAX_RANK], uint32_t src, int is_reduce,
                        pa_redop redop, pa_error *err)
{
    return pa_issue_tensor_store(m, cta, thread, map, PA_MODE_TILE, coords, src, is_reduce, redop, err);
}

int pa_issue_bulk_reduce(pa_machine *m, uint32_t cta, uint32_t thread, pa_rdst dst_kind,
                         uint64_t dst, uint32_t src, uint32_t size, uint32_t mbar, pa_redop redop,
                         pa_rtype type, int noftz, pa_error *err)
{
    pa_op op;
    int to_global = dst_kind == PA_RDST_GLOBAL;
    int rc = begin_op(m, &op, to_global ? PA_OP_BULK_REDUCE_GLOBAL : PA_OP_BULK_REDUCE_CLUSTER, cta,
                      thread, to_global, err);
    if (rc || (rc = pa_reduce_bulk_check(redop, type, noftz, dst_kind, err)))
        return rc;
    /* PTX cp.reduce.async.bulk: size a multiple of 16, addresses 16-byte aligned. */
    if (size % 16)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "size %u is not a multiple of 16", size);
    if (src % 16)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "srcMem 0x%x is not 16-byte aligned", src);
    if (dst % 16)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "dstMem 0x%" PRIx64 " is not 16-byte aligned", dst);
    if (!pa_smem_resolve(&m->cluster, cta, 0, src, size, NULL, err))
        return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
    if (to_global) {
        if (!pa_global_resolve(&m->global, dst, size, err))
            return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
    } else {
        uint32_t rank;
        if (!pa_smem_resolve(&m->cluster, cta, 1, (uint32_t)dst, size, &rank, err))
            return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
        if ((rc = check_mbar_addr(m, cta, pa_mapa(mbar, rank), err)))
            return rc;
    }
    op.global_addr = dst;
    op.smem_dst = (uint32_t)dst;
    op.smem_addr = src;
    op.size = size;
    op.mbar_addr = mbar;
    op.redop = redop;
    op.rtype = type;
    return enqueue(m, &op, err);
}

int pa_bulk_commit_group(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err)
{
    int rc = check_cta(m, cta, err);
    if (rc)
        return rc;
    pa_thread_state *t = thread_state(m, cta, thread, err);
    if (!t)
        return err ? err->code : PA_ERR_NO_MEMORY;
    /* Every uncommitted bulk operation of this thread joins the new group;
     * with none, the group is empty (PTX ISA). */
    for (size_t i = 0; i < m->nops; i++) {
        pa_op *op = &m->ops[i];
        if (op->uses_group && op->group == NO_GROUP && op->cta == cta && op->thread == thread)
            op->group = t->committed;
    }
    t->committed++;
    return PA_OK;
}

/* Is op in one of the thread's committed groups older than `limit`? */
typedef struct {
    uint32_t cta, thread;
    uint64_t limit;
} group_ref;

static int in_old_group(const pa_op *op, const void *arg)
{
    const group_ref *g = arg;
    return op->uses_group && op->cta == g->cta && op->thread == g->thread && op->group != NO_GROUP &&
           op->group < g->limit;
}

int pa_bulk_wait_group(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t n, pa_error *err)
{
    int rc = check_cta(m, cta, err);
    if (rc)
        return rc;
    pa_thread_state *t = thread_state(m, cta, thread, err);
    if (!t)
        return err ? err->code : PA_ERR_NO_MEMORY;
    if (t->committed <= n)
        return PA_OK;
    /* Wait until at most n of the most recent groups are pending. */
    const group_ref ref = {cta, thread, t->committed - n};
    int found = 1;
    while (found)
        if ((rc = complete_one(m, in_old_group, &ref, &found, err)))
            return rc;
    return PA_OK;
}
