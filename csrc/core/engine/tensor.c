/* tensor.c - the tensor engine: cp.async.bulk.tensor loads and stores,
 * cp.reduce.async.bulk.tensor. Each copy is planned at issue and its plan
 * executed at completion (copy/copy.h); the engine adds the machine's side:
 * CTAs, multicast, mbarriers and groups.
 *
 * Runs of loads: a .tile or .tile::gather4 load by the thread that issued
 * the machine's newest operation, a load of the same map (byte for byte),
 * mode and box layout into the same CTA, signalling the same mbarrier (in
 * the same phase) with the same bytes, joins that record (pa_op.merged)
 * where the queue allows runs (pa_queue_runs_merge: nothing watches single
 * operations, in_order or reverse): the record keeps each load's coordinates
 * and destination (pa_load_at) instead of a whole operation. Every check at
 * issue is the load's own, as before. Its loads complete one after another
 * in the policy's order (queue.c's complete_one), each moving its box and
 * crediting the mbarrier as its own record would: a failure names that
 * load and leaves the later ones pending, and a wait stops as soon as the
 * phase completes. Where none of that could show (no replay threads, no
 * checker, gather4 loads of whole lines, no phase completing before the
 * last of them), run() moves many of them in one pass and credits their
 * bytes at once (load_complete_many).
 */
#include "../defer.h"
#include "../engine.h"

#include <stdlib.h>
#include <string.h>

/* A .tile::gather4 load of whole lines moved as a run's loads are
 * (copy/gather4run.c: no buffer search a row; the same bytes) (1); 0: it is
 * pa_copy_load's. */
static int gather4_one(pa_machine *m, const pa_op *op)
{
    const pa_tensor_payload *t = &op->u.tensor;
    pa_copy_at at;
    if (t->plan.mode != PA_MODE_TILE_GATHER4)
        return 0;
    memcpy(at.coords, t->plan.coords, sizeof at.coords);
    at.smem_addr = t->smem_addr;
    return pa_gather4_load_run(&t->plan, &m->global, pa_smem_of(m, op->dst_rank), &at, 1, 1, 0) == 1;
}

static int load_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    const pa_tensor_payload *t = &op->u.tensor;
    int taken = 0, rc = PA_OK;   /* a replay on threads may copy the bytes later (defer.h) */
    if (m->defer)
        rc = pa_defer_load(m, op, &taken, err);
    if (!rc && !taken && !gather4_one(m, op))
        rc = pa_copy_load(&t->plan, &m->global, pa_smem_of(m, op->dst_rank), pa_smem_offset(t->smem_addr), err);
    /* .cta_group::2: the mbarrier of the pair's CTA with mbar's rank parity */
    uint32_t bar = t->cta_group == 2 ? (op->dst_rank & ~1u) | t->bar_parity : op->dst_rank;
    if (rc)
        return rc;
    /* the slot tracking it is the one signalled, unless .cta_group::2 moved it */
    if (op->track == PA_TRACK_MBAR && m->mbars[op->track_index]->cta == bar &&
        m->mbars[op->track_index]->offset == op->mbar_offset)
        return pa_signal_slot(m, op->track_index, op->tx_bytes, NULL, err);
    return pa_credit(m, bar, op->mbar_offset, op->tx_bytes, err);
}

static const pa_engine tensor_load;
static int cta_group_check(pa_target t, int cta_group, uint32_t mbar, uint32_t dst_rank, int multicast,
                           uint32_t nctas, pa_error *err);

/* One load of a run record: the oldest, or the newest under REVERSE; the
 * record then stands for the others, its plan at the oldest left. (Fetching
 * the rows of a load a few further on first measured slower here, with a
 * load's whole bookkeeping between two loads; load_complete_many's pass
 * does fetch ahead: docs/performance.md.) */
static int load_complete_one(pa_machine *m, pa_op *op, int newest, pa_error *err)
{
    pa_tensor_payload *t = &op->u.tensor;
    const uint32_t k = newest ? t->at_head + op->merged : t->at_head;
    memcpy(t->plan.coords, t->at[k].coords, sizeof t->plan.coords);
    t->smem_addr = t->at[k].smem_addr;
    int rc = load_complete(m, op, err);
    if (!newest)
        t->at_head++;
    memcpy(t->plan.coords, t->at[t->at_head].coords, sizeof t->plan.coords);
    t->smem_addr = t->at[t->at_head].smem_addr;
    return rc;
}

/* Loads of run record op moved and credited at once (pa_engine.complete_many):
 * where no replay takes loads aside, the slot that tracks them is the one
 * signalled, their credits can be one (pa_signal_slot_batch) and their rows
 * are whole lines in one buffer (pa_gather4_load_run). */
static uint32_t load_complete_many(pa_machine *m, pa_op *op, int newest)
{
    pa_tensor_payload *t = &op->u.tensor;
    const uint32_t bar = t->cta_group == 2 ? (op->dst_rank & ~1u) | t->bar_parity : op->dst_rank;
    if (m->defer || t->plan.mode != PA_MODE_TILE_GATHER4 || op->track != PA_TRACK_MBAR ||
        m->mbars[op->track_index]->cta != bar || m->mbars[op->track_index]->offset != op->mbar_offset)
        return 0;
    const uint32_t n = pa_signal_slot_batch(m, op->track_index, op->tx_bytes, op->merged);
    const uint32_t first = newest ? t->at_head + op->merged : t->at_head;
    const uint32_t k = n ? pa_gather4_load_run(&t->plan, &m->global, pa_smem_of(m, op->dst_rank), t->at + first,
                                               newest ? -1 : 1, n, op->merged + 1 - n)
                         : 0;
    if (!k)
        return 0;
    /* cannot fail: the slot is initialised and its count stays in range (pa_signal_slot_batch) */
    (void)pa_signal_slot(m, op->track_index, (uint64_t)k * op->tx_bytes, NULL, NULL);
    if (!newest) {   /* the record stands for the loads after them */
        t->at_head += k;
        memcpy(t->plan.coords, t->at[t->at_head].coords, sizeof t->plan.coords);
        t->smem_addr = t->at[t->at_head].smem_addr;
    }
    return k;
}

/* The machine's newest record, if it is a load by (cta, thread) that a
 * load issued now may join (NULL: none). */
static pa_op *run_tail(pa_machine *m, uint32_t cta, uint32_t thread)
{
    const uint32_t id = m->all.tail;
    if (id == PA_NIL || !pa_queue_runs_merge(m))
        return NULL;
    pa_op *r = &m->pool[id];
    const pa_copy_plan *rp = &r->u.tensor.plan;
    if (r->kind != PA_OP_TILE_LOAD || r->engine != &tensor_load || r->cta != cta || r->thread != thread ||
        r->track != PA_TRACK_MBAR || r->seq + r->merged + 1 != m->next_seq || r->merged >= UINT32_MAX / 2 - 1 ||
        rp->packed || (rp->mode != PA_MODE_TILE && rp->mode != PA_MODE_TILE_GATHER4))
        return NULL;
    return r;
}

/* Room in run record r for n more loads (1; 0: not that many, or no
 * memory: the caller queues them as records of their own). */
static int run_reserve(pa_machine *m, pa_op *r, uint32_t n)
{
    pa_tensor_payload *rt = &r->u.tensor;
    const pa_copy_plan *rp = &rt->plan;
    if (r->merged >= UINT32_MAX / 2 - 1 || n > UINT32_MAX / 2 - 1 - r->merged)
        return 0;
    if (!r->merged) {   /* a run begins: the record's own load is its first */
        rt->at_head = 0;
        if (!rt->at_cap && m->spare_at) {   /* the last run's array */
            rt->at = m->spare_at;
            rt->at_cap = m->spare_at_cap;
            m->spare_at = NULL;
        } else if (!rt->at_cap) {
            pa_load_at *a = malloc(64 * sizeof *a);
            if (!a)
                return 0;
            rt->at = a;
            rt->at_cap = 64;
        }
        memcpy(rt->at[0].coords, rp->coords, sizeof rp->coords);
        rt->at[0].smem_addr = rt->smem_addr;
    }
    const uint64_t live = (uint64_t)r->merged + 1 + n;   /* the loads then kept */
    if (rt->at_head + live <= rt->at_cap)
        return 1;
    if (rt->at_head >= rt->at_cap / 2) {   /* room before: the loads completed in order */
        memmove(rt->at, rt->at + rt->at_head, (size_t)(r->merged + 1) * sizeof *rt->at);
        rt->at_head = 0;
    }
    uint64_t cap = rt->at_cap;
    while (rt->at_head + live > cap)
        cap *= 2;
    if (cap > rt->at_cap) {
        pa_load_at *a = cap <= UINT32_MAX ? realloc(rt->at, (size_t)cap * sizeof *a) : NULL;
        if (!a)
            return 0;
        rt->at = a;
        rt->at_cap = (uint32_t)cap;
    }
    return 1;
}

/* One more load of run record r, at coords / smem_addr, issued now (1; 0:
 * no memory for it, it is queued as a record of its own). */
static int run_append(pa_machine *m, pa_op *r, const int32_t coords[PA_MAX_RANK], uint32_t smem_addr)
{
    if (!run_reserve(m, r, 1))
        return 0;
    pa_load_at *at = &r->u.tensor.at[r->u.tensor.at_head + r->merged + 1];
    memcpy(at->coords, coords, sizeof at->coords);
    at->smem_addr = smem_addr;
    r->merged++;
    m->next_seq++;
    m->nops++;
    return 1;
}

/* The newest record, if op (checked, tracked, not yet queued) may join it:
 * op then counts as issued and is kept in it (1). */
static int join_run(pa_machine *m, const pa_op *op)
{
    pa_op *r = run_tail(m, op->cta, op->thread);
    if (!r)
        return 0;
    const pa_tensor_payload *rt = &r->u.tensor, *t = &op->u.tensor;
    const pa_copy_plan *rp = &rt->plan, *p = &t->plan;
    if (r->track_index != op->track_index || r->track_phase != op->track_phase || r->dst_rank != op->dst_rank ||
        r->mbar_offset != op->mbar_offset || r->tx_bytes != op->tx_bytes || rt->cta_group != t->cta_group ||
        rt->bar_parity != t->bar_parity || rt->target != t->target || p->mode != rp->mode || p->dir != rp->dir ||
        p->packed || memcmp(p->info, rp->info, sizeof p->info) || memcmp(&p->l, &rp->l, sizeof p->l) ||
        memcmp(&p->map, &rp->map, sizeof p->map))
        return 0;
    return run_append(m, r, p->coords, t->smem_addr);
}

/* The newest record, if loads issued now with these operands may join its
 * run: every check the issue below makes that does not depend on the load's
 * own operands passes for them and gives what the record's last load got
 * (the map byte for byte, mode, direction, target, so the same layout; the
 * mbarrier's address, slot and phase). The rest (operand count, coordinate
 * rules, the destination CTA and the box's place) is join_one's. Anything
 * else goes the whole way, which names what fails. */
static pa_op *run_for(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map, pa_load_mode mode,
                      int cluster_space, uint32_t mbar, int multicast, int cta_group)
{
    static const uint16_t no_info[PA_MAX_RANK - 2];
    const pa_copy_dir dir = cluster_space || multicast ? PA_DIR_LOAD_CLUSTER : PA_DIR_LOAD;
    pa_op *r = multicast || cta_group == 2 ? NULL : run_tail(m, cta, thread);
    if (!r)
        return NULL;
    const pa_tensor_payload *rt = &r->u.tensor;
    const pa_copy_plan *rp = &rt->plan;
    if (rp->mode != mode || rp->dir != dir || rt->target != m->target || rt->cta_group != (uint8_t)cta_group ||
        memcmp(rp->info, no_info, sizeof no_info) || memcmp(&rp->map, map, sizeof *map) ||
        cta_group_check(m->target, cta_group, mbar, r->dst_rank, 0, m->cluster.nctas, NULL) ||
        pa_check_mbar_addr(m, cta, pa_mapa(mbar, r->dst_rank), NULL))
        return NULL;
    const pa_mbar_slot *s = m->mbars[r->track_index];
    if (s->cta != r->dst_rank || s->offset != pa_smem_offset(mbar) || s->bar.phase != r->track_phase ||
        r->mbar_offset != s->offset)
        return NULL;
    return r;
}

/* One load of run_for's record at coords / dst: its own operands' checks,
 * then appended (1); 0: it is left to the whole way. */
static int join_one(pa_machine *m, pa_op *r, uint32_t cta, const int32_t coords[PA_MAX_RANK], int ncoords,
                    uint32_t dst, int cluster_space)
{
    const pa_copy_plan *rp = &r->u.tensor.plan;
    uint32_t dst_rank;
    if (pa_copy_plan_recheck(rp, coords, ncoords, NULL) ||
        !pa_smem_resolve(&m->cluster, cta, cluster_space, dst, 1, &dst_rank, NULL) || dst_rank != r->dst_rank ||
        pa_copy_plan_place(rp, pa_smem_offset(dst), m->cluster.smem_bytes, NULL))
        return 0;
    return run_append(m, r, coords, dst);
}

/* Loads of a run (pa_issue_tensor_load_run) joining run_for's record r:
 * as join_one of each in turn, with the checks of their own operands that
 * join_one makes written out once for the run (the column start's 16-byte
 * rule of a non-interleaved map, the destination in the issuing CTA's
 * shared memory, aligned, the box inside it). A load that does not pass
 * them goes through join_one, which either joins it or leaves it, and
 * those after it, to the whole way. Returns how many joined. */
static uint32_t join_many(pa_machine *m, pa_op *r, uint32_t cta, const int32_t (*coords)[PA_MAX_RANK],
                          const uint32_t *dst, uint32_t n)
{
    const pa_copy_plan *rp = &r->u.tensor.plan;
    const pa_box_layout *l = &rp->l;
    const pa_dtype_info *di = pa_dtype_get(rp->map.dtype);
    const int64_t esize = di ? di->elem_bytes : 1;   /* as pa_tile_start_rules */
    const int cols = rp->map.interleave == PA_INTERLEAVE_NONE;
    const uint32_t align = l->swizzle == PA_SWIZZLE_128B_ATOM_32B || l->swizzle == PA_SWIZZLE_128B_ATOM_32B_FLIP_8B
                               ? 32 : l->swizzle == PA_SWIZZLE_128B_ATOM_64B ? 64 : 16;   /* pa_copy_plan_place's */
    const uint64_t ext = (l->rows ? (l->rows - 1) * l->pitch : 0) + l->row_bytes;   /* pa_copy_span */
    const uint32_t size = m->cluster.smem_bytes;
    uint32_t k = 0;
    while (k < n && run_reserve(m, r, n - k)) {
        pa_load_at *at = &r->u.tensor.at[r->u.tensor.at_head + r->merged + 1];
        uint32_t j = k;
        for (; j < n; j++, at++) {
            const uint32_t off = pa_smem_offset(dst[j]);
            uint64_t hi = off + ext;
            if (l->swizzle != PA_SWIZZLE_NONE)
                hi = (hi + 127) & ~(uint64_t)127;
            if (pa_smem_rank(dst[j]) != cta || cta != r->dst_rank || off >= size || (off & (align - 1)) || hi > size ||
                (cols && (int64_t)coords[j][0] * esize % 16))
                break;
            memcpy(at->coords, coords[j], sizeof at->coords);
            at->smem_addr = dst[j];
        }
        r->merged += j - k;
        m->next_seq += j - k;
        m->nops += j - k;
        k = j;
        if (k < n && !join_one(m, r, cta, coords[k], -1, dst[k], 0))
            break;
        k += k < n;
    }
    return k;
}

/* Stores read the box's shared-memory span first (from a 4 KiB boundary, so
 * the swizzle, which follows the address bits, sees the same pattern). */
static int store_read(pa_machine *m, pa_op *op, pa_error *err)
{
    uint32_t off = pa_smem_offset(op->u.tensor.smem_addr);
    uint32_t base = off & ~4095u;
    return pa_stage_smem(m, op, op->cta, base, off - base + op->u.tensor.smem_span, err);
}

static void reduce_run(void *ctx, uint8_t *gdst, const uint8_t *ssrc, size_t n)
{
    const pa_reducer *r = ctx;   /* chosen once per operation */
    pa_reducer_apply(r, gdst, ssrc, n / r->esize);
}

static int store_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    const pa_tensor_payload *t = &op->u.tensor;
    pa_smem_view v = pa_smem_of(m, op->cta);
    uint32_t src = pa_smem_offset(t->smem_addr);
    if (op->read_done) {   /* write what the source read found */
        v.base = op->staged;
        v.size = op->staged_len;
        src -= op->staged_base;
    }
    if (op->kind == PA_OP_TILE_STORE)
        return pa_copy_store(&t->plan, &m->global, v, src, NULL, NULL, err);
    pa_reducer ctx;
    if (pa_reducer_tensor(&ctx, t->redop, t->plan.map.dtype))
        return pa_reduce_tensor_check(t->redop, t->plan.map.dtype, err);
    return pa_copy_store(&t->plan, &m->global, v, src, reduce_run, &ctx, err);
}

static const pa_engine tensor_load = {"cp.async.bulk.tensor (load)", NULL, load_complete, load_complete_one, 1,
                                      load_complete_many};
static const pa_engine tensor_store = {"cp.async.bulk.tensor (store)", store_read, store_complete, NULL, 0, NULL};
static const pa_engine tensor_reduce = {"cp.reduce.async.bulk.tensor", store_read, store_complete, NULL, 0, NULL};

/* .cta_group::1 / ::2 on a load (cta_group 0: not given): the target has it,
 * and the mbarrier's CTA is the destination or its peer (rank ^ 1). */
static int cta_group_check(pa_target t, int cta_group, uint32_t mbar, uint32_t dst_rank, int multicast,
                           uint32_t nctas, pa_error *err)
{
    if (cta_group == 0)
        return PA_OK;
    if (cta_group != 1 && cta_group != 2)
        return pa_fail(err, PA_ERR_INVALID_VALUE, ".cta_group::%d does not exist (::1 or ::2)", cta_group);
    int rc = pa_target_require(t, PA_FEAT_CTA_GROUP, err);
    if (rc)
        return rc;
    const uint32_t bar = pa_smem_rank(mbar);
    /* "When .cta_group::1 is specified, the mbarrier object mbar that is specified must be in
     * the shared memory of the same CTA as the shared memory destination dstMem. When
     * .cta_group::2 is specified, the mbarrier object mbar can be in shared memory of either
     * the same CTA as the shared memory destination dstMem or in its peer-CTA." */
    if (!multicast && nctas > 1 && bar != dst_rank && (cta_group == 1 || bar != (dst_rank ^ 1u)))
        return pa_fail(err, PA_ERR_HAZARD,
                       ".cta_group::%d: the mbarrier is in CTA %u, neither the destination CTA %u%s "
                       "(undefined behaviour)", cta_group, bar, dst_rank,
                       cta_group == 2 ? " nor its peer" : "");
    if (cta_group == 2 && ((dst_rank | 1u) >= nctas || (bar | 1u) >= nctas))
        return pa_fail(err, PA_ERR_HAZARD,
                       ".cta_group::2 needs CTA pairs: the cluster of %u CTAs has no peer of CTA %u",
                       nctas, nctas > dst_rank ? dst_rank : bar);
    return PA_OK;
}

int pa_issue_tensor_load(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                         pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                         const uint16_t offsets[PA_MAX_RANK - 2], uint32_t dst, int cluster_space,
                         uint32_t mbar, int multicast, uint16_t cta_mask, pa_error *err)
{
    return pa_issue_tensor_load_group(m, cta, thread, map, mode, coords, -1, offsets, -1, dst, cluster_space,
                                      mbar, multicast, cta_mask, 0, err);
}

/* pa_issue_tensor_load_group past the runs: op (pa_op_begin not yet made)
 * is a record on the stack, or with one destination (id not PA_NIL) its
 * queue slot, queued there (*queued: the slot was taken by the queue, or
 * freed by it on a failure). */
static int issue_load(pa_machine *m, pa_op *op, uint32_t id, int *queued, int runs, uint32_t cta, uint32_t thread,
                      const pa_tensormap *map, pa_load_mode mode, const int32_t coords[PA_MAX_RANK], int ncoords,
                      const uint16_t offsets[PA_MAX_RANK - 2], int noffsets, uint32_t dst, int cluster_space,
                      uint32_t mbar, int multicast, uint16_t cta_mask, int cta_group, pa_error *err)
{
    const pa_copy_dir dir = cluster_space || multicast ? PA_DIR_LOAD_CLUSTER : PA_DIR_LOAD;
    int rc = pa_check_cta(m, cta, err);
    if (rc)
        return rc;
    pa_op_begin(op, &tensor_load, PA_OP_TILE_LOAD, cta, thread);
    pa_tensor_payload *t = &op->u.tensor;
    if ((rc = pa_copy_plan_make_memo(&t->plan, &m->tile_memo, m->target, map, mode, dir, coords, ncoords, offsets,
                                     noffsets, err)))
        return rc;
    const pa_box_layout *l = &t->plan.l;
    uint32_t dst_rank;
    if (!pa_smem_resolve(&m->cluster, cta, cluster_space, dst, 1, &dst_rank, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    if ((rc = pa_copy_plan_place(&t->plan, pa_smem_offset(dst), m->cluster.smem_bytes, err)))
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
    if (cta_group && (rc = cta_group_check(m->target, cta_group, mbar, dst_rank, multicast, m->cluster.nctas, err)))
        return rc;
    /* the CTA whose mbarrier destination r signals */
    const uint32_t parity = pa_smem_rank(mbar) & 1u;
#define BAR_RANK(r) (cta_group == 2 ? ((r) & ~1u) | parity : (r))
    for (uint32_t r = 0; cta_group == 2 && r < m->cluster.nctas; r++)
        if (((cta_mask >> r) & 1u) && (rc = pa_check_mbar_addr(m, cta, pa_mapa(mbar, BAR_RANK(r)), err)))
            return rc;
    if (cta_group != 2 && (rc = pa_check_mbar_addr(m, cta, pa_mapa(mbar, dst_rank), err)))
        return rc;
    /* One operation per destination CTA: each gets the box at dst's offset and
     * credits its own mbarrier at mbar's offset with the whole box (golden C3). */
    t->smem_addr = dst;
    t->target = m->target;
    t->cta_group = (uint8_t)cta_group;
    t->bar_parity = (uint8_t)parity;
    for (uint32_t r = 0; r < m->cluster.nctas && !rc; r++) {
        if (!((cta_mask >> r) & 1u))
            continue;
        rc = pa_op_track_mbar(m, op, BAR_RANK(r), mbar, l->tx_bytes, err);
        op->dst_rank = r;   /* the CTA written; the mbarrier tracked is BAR_RANK(r)'s */
        if (rc || (!multicast && runs && join_run(m, op)))
            continue;
        if (id == PA_NIL) {
            rc = pa_enqueue(m, op, NULL, err);
        } else {
            *queued = 1;
            rc = pa_enqueue_slot(m, id, NULL, err);
        }
    }
#undef BAR_RANK
    return rc;
}

int pa_issue_tensor_load_group(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                               pa_load_mode mode, const int32_t coords[PA_MAX_RANK], int ncoords,
                               const uint16_t offsets[PA_MAX_RANK - 2], int noffsets, uint32_t dst,
                               int cluster_space,
                               uint32_t mbar, int multicast, uint16_t cta_mask, int cta_group,
                               pa_error *err)
{
    const int runs = pa_queue_runs_merge(m);   /* asked once: an issue changes no hook or policy */
    pa_op *r = runs && !offsets && noffsets <= 0 ? run_for(m, cta, thread, map, mode, cluster_space, mbar, multicast,
                                                          cta_group) : NULL;
    if (r && join_one(m, r, cta, coords, ncoords, dst, cluster_space))
        return PA_OK;
    /* One destination: the load is made in its queue slot, which saves the
     * copy of its ~500-byte record at the queueing. A multicast's records are
     * copies of one made on the stack (a copy's slot may move the pool). */
    uint32_t id = PA_NIL;
    int queued = 0;
    if (!multicast && pa_op_slot(m, &id))
        id = PA_NIL;   /* no memory now: the stack, which names the failure where it always did */
    pa_op stack_op;
    pa_op *op = id == PA_NIL ? &stack_op : &m->pool[id];
    int rc = issue_load(m, op, id, &queued, runs, cta, thread, map, mode, coords, ncoords, offsets, noffsets, dst,
                        cluster_space, mbar, multicast, cta_mask, cta_group, err);
    if (id != PA_NIL && !queued)   /* failed before the queueing, or joined a run */
        pa_op_slot_release(m, id);
    return rc;
}

int pa_issue_tensor_load_run(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                             pa_load_mode mode, const int32_t (*coords)[PA_MAX_RANK], const uint32_t *dst, uint32_t n,
                             uint32_t mbar, uint32_t *issued, pa_error *err)
{
    uint32_t k = 0;
    int rc = PA_OK;
    while (k < n && !rc) {
        /* what the loads share is checked once a run: nothing between them completes or changes */
        pa_op *r = run_for(m, cta, thread, map, mode, 0, mbar, 0, 0);
        if (r)
            k += join_many(m, r, cta, coords + k, dst + k, n - k);
        if (k < n && !(rc = pa_issue_tensor_load(m, cta, thread, map, mode, coords[k], NULL, dst[k], 0, mbar, 0, 0,
                                                 err)))
            k++;
    }
    if (issued)
        *issued = k;
    return rc;
}

int pa_issue_tile_load(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                       const int32_t coords[PA_MAX_RANK], uint32_t dst, int cluster_space,
                       uint32_t mbar, int multicast, uint16_t cta_mask, pa_error *err)
{
    return pa_issue_tensor_load(m, cta, thread, map, PA_MODE_TILE, coords, NULL, dst, cluster_space,
                                mbar, multicast, cta_mask, err);
}

int pa_issue_tensor_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                          pa_load_mode mode, const int32_t coords[PA_MAX_RANK], int ncoords, uint32_t src,
                          int is_reduce, pa_redop redop, pa_error *err)
{
    const pa_copy_dir dir = is_reduce ? PA_DIR_REDUCE : PA_DIR_STORE;
    int rc = pa_check_cta(m, cta, err);
    if (rc || (rc = pa_copy_target_check(m->target, map, mode, dir, err)))
        return rc;
    if (is_reduce && (rc = pa_reduce_tensor_check(redop, map->dtype, err)))
        return rc;
    pa_op op;
    pa_op_begin(&op, is_reduce ? &tensor_reduce : &tensor_store,
                is_reduce ? PA_OP_TENSOR_REDUCE : PA_OP_TILE_STORE, cta, thread);
    pa_tensor_payload *t = &op.u.tensor;
    if ((rc = pa_copy_plan_make(&t->plan, m->target, map, mode, dir, coords, ncoords, NULL, 0, err)))
        return rc;
    if (!pa_smem_resolve(&m->cluster, cta, 0, src, 1, NULL, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    uint32_t off = pa_smem_offset(src);
    if ((rc = pa_copy_plan_place(&t->plan, off, m->cluster.smem_bytes, err)))
        return rc;
    t->smem_addr = src;
    t->redop = redop;
    uint64_t lo, hi;   /* the span pa_copy_plan_place accepted */
    pa_copy_span(&t->plan.l, off, &lo, &hi);
    t->smem_span = (uint32_t)(hi - off);
    if ((rc = pa_op_track_group(m, &op, 0, err)))
        return rc;
    return pa_enqueue(m, &op, NULL, err);
}

int pa_issue_tile_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                        const int32_t coords[PA_MAX_RANK], uint32_t src, int is_reduce,
                        pa_redop redop, pa_error *err)
{
    return pa_issue_tensor_store(m, cta, thread, map, PA_MODE_TILE, coords, -1, src, is_reduce, redop, err);
}
