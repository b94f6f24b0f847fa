/* coll.c - instructions threads execute together: bar.sync / bar.arrive,
 * barrier.cluster, and the warp (elect, shfl, vote, ldmatrix, stmatrix,
 * mma.sync) and warpgroup (wgmma.mma_async) collectives.
 *
 * A collective is a meeting: each member thread arrives and parks; when the
 * last member arrives the instruction runs once for all of them, with every
 * member's registers, and they all move on. Members are the lanes of the
 * membermask (elect, shfl, vote, bar.warp.sync) or every thread of the warp
 * / warpgroup (.aligned forms), less those that have exited. The memory
 * accesses go through the same checked paths as ld/st.shared.
 */
#include "ptx/exec/launch.h"
#include "ptx/exec/coll_warp.h"
#include "check/hb.h"
#include "check/watch.h"
#include "consumers/ldmatrix.h"
#include "consumers/wgmma_desc.h"
#include "ptx/exec/mma_exec.h"
#include "ptx/exec/wgpend.h"
#include "sem/mma.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t ea(const pi_thread *t, const pi_addr *a)
{
    return (a->base == PI_NOREG ? 0 : PI_REG(t, a->base)) + (uint64_t)a->off;
}

static inline pi_thread *thread_at(pi_launch_state *L, uint32_t cta, uint32_t tid)
{
    return &L->t[cta * L->nthr + tid];
}

static int done_progress(pi_launch_state *L, pi_thread *t)
{
    (void)t;
    L->epoch++;
    L->st->ext++;
    return --L->burst > 0 ? PI_R_AGAIN : PI_R_PROGRESS;
}

/* A meeting that released others: the thread that completed it yields, so that
   a warp whose lanes all met can run on as one (launch.c, converge). */
static int met_progress(pi_launch_state *L)
{
    L->epoch++;
    L->st->ext++;
    return PI_R_PROGRESS;
}

/* ---- bar.sync / bar.arrive ------------------------------------------------- */

/* Barriers count warps (PTX ISA 9.7.13.1, sm_70 and up): "barrier{.cta} instruction causes
 * executing thread to wait for all non-exited threads from its warp and marks warps' arrival at
 * barrier"; .sync and .red then wait "for non-exited threads of all other warps participating in
 * the barrier to arrive", .arrive does not. Operand b, the thread count, is "a multiple of the
 * warp size": the barrier completes when b / 32 warp arrivals are marked (a warp with exited
 * lanes counts whole), or without b when every warp of the CTA with a thread left has arrived.
 * bar.red's .popc / .and / .or are over the threads that executed it. */

/* bar.red's result in thread w (PTX ISA 9.7.13.1: written to every thread of the barrier once
   the count is reached): .popc the number of arrived threads whose predicate was true, .and
   whether all were, .or whether any was. */
static void bar_red_result(pi_launch_state *L, pi_thread *w, const pi_bar *b)
{
    const pi_ins *in = &L->p->ins[w->pc];
    if (in->op != PI_EXT || L->p->ext[in->x].kind != PX_BAR_RED)
        return;
    const pi_ext *x = &L->p->ext[in->x];
    uint64_t v = x->sub == 0 ? b->red_true : x->sub == 1 ? b->red_true == b->nthreads : b->red_true != 0;
    if (x->d != PI_NOREG)
        PI_REG(w, x->d) = v;
}

static int bar_waits_at(const pi_thread *w, uint32_t id, int sync)
{
    return w->state == PI_T_BAR && w->bar_id == id && w->bar_sync == sync;
}

static int bar_complete(pi_launch_state *L, uint32_t cta, uint32_t id, pa_error *err)
{
    pi_bar *b = &L->bar[cta][id];
    int rc = PA_OK;                      /* who: the threads that wait (bar.arrive released at its arrival) */
    if (b->nwho)
        rc = pa_hb_bar_sync(L->m, cta, id, b->who, b->nwho, err);
    else
        pa_hb_bar_forget(L->m, cta, id);
    for (uint32_t i = 0; i < b->nwho; i++) {
        pi_thread *w = thread_at(L, cta, b->who[i]);
        int waits = bar_waits_at(w, id, 1);
        if (waits || i == b->nwho - 1)   /* the last to arrive completes it */
            bar_red_result(L, w, b);
        if (waits) {
            w->pc++;
            pi_ready(L, w);
            L->wconv[cta * L->nwarps + w->tid / 32] = PI_W_MET;
        }
    }
    b->warps = 0;
    b->nwho = b->nthreads = 0;
    b->expected = 0;
    b->red_true = 0;
    memset(b->lanes, 0, L->nwarps * sizeof *b->lanes);
    L->epoch++;
    return rc;
}

static int bar_full(const pi_launch_state *L, uint32_t cta, const pi_bar *b)
{
    if (b->expected)
        return 32 * b->warps >= b->expected;
    uint32_t gone = 0;                   /* warps whose threads have all exited */
    for (uint32_t w = 0; w < L->nwarps; w++)
        gone += L->wlive[cta * L->nwarps + w] == 0;
    return b->warps + gone >= L->nwarps;
}

/* Warp w's live lanes have all arrived: its arrival is marked, its lanes at bar.arrive go on. */
static void bar_warp_check(pi_launch_state *L, uint32_t cta, uint32_t id, uint32_t w)
{
    pi_bar *b = &L->bar[cta][id];
    uint32_t live = L->wlive[cta * L->nwarps + w];
    if (!b->lanes[w] || (b->lanes[w] & live) != live)
        return;
    b->lanes[w] = 0;
    b->warps++;
    for (uint32_t k = 0; k < 32 && 32 * w + k < L->nthr; k++) {
        pi_thread *x = thread_at(L, cta, 32 * w + k);
        if ((live >> k & 1) && bar_waits_at(x, id, 0)) {
            x->pc++;
            pi_ready(L, x);
        }
    }
    L->epoch++;
}

static int bar_arrive(pi_launch_state *L, pi_thread *t, const pi_ext *x, int wait, pa_error *err)
{
    uint32_t id = (uint32_t)PI_REG(t, x->s0);
    if (id > 15)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "barrier %u is not one of the 16 named barriers", id) ?
               PI_R_ERR : PI_R_ERR;
    uint32_t count = x->s1 == PI_NOREG ? 0 : (uint32_t)PI_REG(t, x->s1);
    if (x->s1 != PI_NOREG && (count == 0 || count % 32 || count > 32 * L->nwarps))
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "bar thread count %u must be a non-zero multiple of 32 no larger than the CTA's %u warps "
                       "of 32", count, L->nwarps) ? PI_R_ERR : PI_R_ERR;
    pi_bar *b = &L->bar[t->cta][id];
    if (b->nthreads && b->expected != count)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "barrier %u is used with thread counts %u and %u at once", id, b->expected, count) ?
               PI_R_ERR : PI_R_ERR;
    uint32_t w = t->tid / 32, lane = 1u << (t->tid % 32);
    if (b->nthreads == L->nthr || (b->lanes[w] & lane))
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "thread %u arrives at barrier %u again before it completed: its warp executed more "
                       "barrier instructions than the barrier counts (PTX ISA: bar.arrive followed by another "
                       "barrier instruction on the same barrier before its reset)", t->tid, id) ?
               PI_R_ERR : PI_R_ERR;
    b->expected = count;
    b->lanes[w] |= lane;
    b->nthreads++;
    if (wait)
        b->who[b->nwho++] = t->tid;
    else if (pa_hb_bar_arrive(L->m, t->cta, t->tid, id, err))
        return PI_R_ERR;
    if (x->kind == PX_BAR_RED)
        b->red_true += (uint32_t)((PI_REG(t, x->s2) ^ (x->flags & 1)) & 1);
    t->bar_id = (uint8_t)id;
    t->bar_sync = (uint8_t)wait;
    int marked = b->warps;
    bar_warp_check(L, t->cta, id, w);
    marked = b->warps != (uint32_t)marked;
    if (marked && bar_full(L, t->cta, b)) {
        if (bar_complete(L, t->cta, id, err))
            return PI_R_ERR;
        t->pc++;
        return met_progress(L);
    }
    if (!wait && marked) {               /* its warp has arrived: bar.arrive goes on */
        t->pc++;
        return done_progress(L, t);
    }
    t->state = PI_T_BAR;                 /* waits for its warp (bar.arrive) or the barrier */
    return PI_R_PARK;
}

/* ---- barrier.cluster ---------------------------------------------------------- */

static uint32_t cluster_exited(const pi_launch_state *L)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < L->csize; c++)
        n += L->exited[c];
    return n;
}

static int cluster_check(pi_launch_state *L, int relaxed, pa_error *err)
{
    if (!L->cl_count || L->cl_count + cluster_exited(L) < L->nt)
        return PA_OK;
    int rc = pa_hb_barrier_cluster(L->m, relaxed, err);
    L->cl_phase++;
    L->cl_count = 0;
    for (uint32_t i = 0; i < L->nt; i++)
        if (L->t[i].state == PI_T_CLUSTER)
            pi_ready(L, &L->t[i]);           /* it runs its wait again, which now passes */
    L->epoch++;
    return rc;
}

/* ---- warp and warpgroup meetings --------------------------------------------------- */

/* The meeting of t's group: 32 lanes of its warp or 128 threads of its warpgroup. */
static pi_meet *meet_of(pi_launch_state *L, pi_thread *t, int wg, uint32_t *first, uint32_t *size)
{
    if (wg) {
        *first = t->tid / 128 * 128;
        *size = 128;
        return &L->wg[t->cta * L->nwgs + t->tid / 128];
    }
    *first = t->tid / 32 * 32;
    *size = 32;
    return &L->warp[t->cta * L->nwarps + t->tid / 32];
}

static int is_member(const pi_meet *g, uint32_t i)
{
    return (int)((g->members >> (i < 64 ? i : 63)) & 1) || i >= 64;
}

static int arrived(const pi_meet *g, uint32_t i)
{
    return (int)((g->arrived[i / 64] >> (i % 64)) & 1);
}

/* Every live member arrived? (Masks: a warp's live lanes are kept as threads exit.) */
static int meet_full(pi_launch_state *L, const pi_meet *g, uint32_t cta, uint32_t first, uint32_t size)
{
    const uint32_t *live = &L->wlive[cta * L->nwarps + first / 32];
    if (size == 32) {
        uint64_t need = g->members & live[0];
        return (g->arrived[0] & need) == need;
    }
    for (uint32_t w = 0; w < 4 && first + 32 * w < L->nthr; w++) {
        uint64_t got = (g->arrived[w / 2] >> (32 * (w % 2))) & 0xFFFFFFFFu;
        if ((got & live[w]) != live[w])
            return 0;
    }
    return 1;
}

static int run_collective(pi_launch_state *L, uint32_t cta, uint32_t first, uint32_t size, pi_meet *g,
                          const pi_ext *x, pa_error *err);

/* t arrives at its group's meeting for the instruction at t->pc. */
static int meet(pi_launch_state *L, pi_thread *t, const pi_ext *x, int wg, uint64_t members, pa_error *err)
{
    uint32_t first, size;
    pi_meet *g = meet_of(L, t, wg, &first, &size);
    uint32_t i = t->tid - first;
    if (g->pc == PI_NOREG) {
        g->pc = t->pc;
        g->members = members;
        g->arrived[0] = g->arrived[1] = 0;
    } else if (g->pc != t->pc) {
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "threads of one %s meet at different collectives (lines %d and %d): a .sync.aligned "
                       "instruction must be executed by all of them together", wg ? "warpgroup" : "warp",
                       pi_line(L->p, g->pc), pi_line(L->p, t->pc)) ? PI_R_ERR : PI_R_ERR;
    }
    if (!wg && !is_member(g, i))
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "lane %u executes a warp collective at line %d whose membermask 0x%llx leaves it out", i,
                       pi_line(L->p, t->pc), (unsigned long long)g->members) ? PI_R_ERR : PI_R_ERR;
    g->arrived[i / 64] |= 1ull << (i % 64);
    t->state = PI_T_COLL;
    if (!meet_full(L, g, t->cta, first, size))
        return PI_R_PARK;
    uint32_t wi = t->cta * L->nwarps + t->tid / 32;
    int whole = !wg && (g->arrived[0] & L->wlive[wi]) == L->wlive[wi];
    if (run_collective(L, t->cta, first, size, g, x, err))
        return PI_R_ERR;
    if (whole) {                 /* the warp met whole: it may run on as one */
        L->wconv[wi] = PI_W_MET;
        return met_progress(L);
    }
    /* t goes on running: its pc has moved with the others' */
    return done_progress(L, t);
}

/* ---- what the collectives do ---------------------------------------------------------- */

/* tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned
 * [dst], [src], 128: each lane copies the 128 bytes of a tensor map from its CTA's shared
 * memory to global memory, then releases them to the tensor-map proxy (as its own
 * fence.proxy.tensormap::generic.release would). Lanes naming the same two addresses copy the
 * same bytes: the lowest of them writes (one write, not a race of identical stores). */
static int tensormap_cp(pi_launch_state *L, uint32_t cta, uint32_t first, pi_thread *const *lane,
                        const pi_ext *x, pa_error *err)
{
    pa_machine *m = L->m;
    uint64_t dst[32], src[32];
    for (uint32_t i = 0; i < 32; i++) {
        if (!lane[i])
            continue;
        dst[i] = ea(lane[i], &x->a0);
        src[i] = ea(lane[i], &x->a1);
        uint32_t size = (uint32_t)PI_REG(lane[i], x->s0);
        if (size != 128)
            return pa_fail(err, PA_ERR_INVALID_VALUE, "tensormap.cp_fenceproxy: size is %u; a tensor map is 128 "
                           "bytes (the only size the instruction takes)", size);
        if (dst[i] % 64 || src[i] % 64)
            return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "tensormap.cp_fenceproxy: lane %u's addresses 0x%llx, "
                           "0x%llx are not 64-byte aligned (a tensor map's alignment)", i,
                           (unsigned long long)dst[i], (unsigned long long)src[i]);
        uint64_t s = src[i];
        if (s >= PI_SHARED_BASE && s < PI_SHARED_BASE + PI_WINDOW_SIZE)
            s -= PI_SHARED_BASE;
        if (s > UINT32_MAX || pa_smem_rank((uint32_t)s) != cta ||
            pa_smem_offset((uint32_t)s) + 128 > m->cluster.smem_bytes)
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "tensormap.cp_fenceproxy: lane %u's source 0x%llx is not "
                           "128 bytes of its CTA's shared memory", i, (unsigned long long)src[i]);
        uint32_t off = pa_smem_offset((uint32_t)s);
        int dup = 0;
        for (uint32_t j = 0; j < i && !dup; j++)
            dup = lane[j] && dst[j] == dst[i] && src[j] == src[i];
        if (!dup) {
            uint8_t *g = pa_global_resolve(&m->global, dst[i], 128, err);
            if (!g || pa_check_read(m, cta, first + i, cta, off, 128, err) ||
                pa_hb_global(m, cta, first + i, dst[i], 128, 1, "tensormap.cp_fenceproxy", err))
                return PI_R_ERR;
            memcpy(g, m->cluster.smem[cta] + off, 128);
        }
        if (pa_hb_fence_proxy_tensormap(m, cta, first + i, 0, dst[i], 128, err))
            return PI_R_ERR;
    }
    return PA_OK;
}

static int warp_op(pi_launch_state *L, uint32_t cta, uint32_t first, const pi_meet *g, const pi_ext *x,
                   pa_error *err)
{
    pi_thread *lane[32] = {0};
    for (uint32_t i = 0; i < 32 && first + i < L->nthr; i++)
        if (arrived(g, i))
            lane[i] = thread_at(L, cta, first + i);
    if (x->kind == PX_WARP_SYNC) {
        /* bar.warp.sync: the meeting, which orders memory among the lanes that meet (PTX ISA,
           bar.warp.sync: "guarantees memory ordering among threads participating"), as a
           bar.sync of those lanes does */
        uint32_t who[32], n = 0;
        for (uint32_t i = 0; i < 32; i++)
            if (lane[i])
                who[n++] = first + i;
        return n ? pa_hb_bar_sync(L->m, cta, 0, who, n, err) : PA_OK;
    }
    switch (x->kind) {
    case PX_ELECT: {
        uint32_t leader = 32;
        for (uint32_t i = 0; i < 32 && leader == 32; i++)
            if (lane[i])
                leader = i;
        for (uint32_t i = 0; i < 32; i++) {
            if (!lane[i])
                continue;
            if (x->d != PI_NOREG)
                PI_REG(lane[i], x->d) = leader;
            if (x->s1 != PI_NOREG)
                PI_REG(lane[i], x->s1) = i == leader;
        }
        return PA_OK;
    }
    case PX_SHFL: {
        uint64_t val[32], outv[32];
        int pv[32];
        for (uint32_t i = 0; i < 32; i++)
            val[i] = lane[i] ? PI_REG(lane[i], x->s0) & 0xFFFFFFFFu : 0;
        for (uint32_t i = 0; i < 32; i++) {
            if (!lane[i])
                continue;
            uint32_t bv = (uint32_t)PI_REG(lane[i], x->s1) & 31, c = (uint32_t)PI_REG(lane[i], x->s2);
            uint32_t cv = c & 31, mk = (c >> 8) & 31;
            int maxl = (int)((i & mk) | (cv & ~mk)), minl = (int)(i & mk), j;
            int p;
            switch (x->sub) {
            case 0: j = (int)i - (int)bv; p = j >= maxl; break;
            case 1: j = (int)i + (int)bv; p = j <= maxl; break;
            case 2: j = (int)(i ^ bv); p = j <= maxl; break;
            default: j = minl | (int)(bv & ~mk); p = j <= maxl; break;
            }
            if (!p)
                j = (int)i;
            if (j < 0 || j > 31 || !lane[j])
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               "shfl.sync: lane %u reads lane %d, which is not in the membermask", i, j);
            outv[i] = val[j];
            pv[i] = p;
        }
        for (uint32_t i = 0; i < 32; i++) {
            if (!lane[i])
                continue;
            if (x->d != PI_NOREG)
                PI_REG(lane[i], x->d) = outv[i];
            if (x->s3 != PI_NOREG)
                PI_REG(lane[i], x->s3) = (uint64_t)pv[i];
        }
        return PA_OK;
    }
    case PX_VOTE: {
        uint32_t ballot = 0, n = 0, yes = 0;
        for (uint32_t i = 0; i < 32; i++)
            if (lane[i]) {
                int v = (PI_REG(lane[i], x->s0) != 0) ^ (x->flags & 1);
                ballot |= (uint32_t)v << i;
                n++;
                yes += (uint32_t)v;
            }
        uint64_t res = x->sub == 0 ? yes == n : x->sub == 1 ? yes > 0 : x->sub == 2 ? (yes == 0 || yes == n)
                                                                                    : ballot;
        for (uint32_t i = 0; i < 32; i++)
            if (lane[i])
                PI_REG(lane[i], x->d) = res;
        return PA_OK;
    }
    case PX_WARP_SYNC:
        return PA_OK;
    case PX_REDUX:
    case PX_MATCH:
        return pi_warp_values(x, lane, err);
    case PX_TENSORMAP_CP:
        return tensormap_cp(L, cta, first, lane, x, err);
    case PX_MMA:
        for (uint32_t i = 0; i < 32; i++)
            if (!lane[i])
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               "mma.sync is .aligned: every lane of the warp executes it (lane %u has exited)", i);
        return pi_mma_exec(L->p, lane, x, err) ? PI_R_ERR : PA_OK;
    case PX_MOVMATRIX:
        return pi_movmatrix(lane, x, err) ? PI_R_ERR : PA_OK;
    case PX_LDMATRIX:
    case PX_STMATRIX: {
        uint32_t addr[32] = {0}, regs[32 * 4];
        uint32_t rank = cta;
        for (uint32_t i = 0; i < 32; i++) {
            if (!lane[i])
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               "%s is .aligned: every lane of the warp executes it (lane %u has exited)",
                               x->kind == PX_LDMATRIX ? "ldmatrix" : "stmatrix", i);
            uint64_t a = ea(lane[i], &x->a0);
            if (a > UINT32_MAX || pa_smem_rank((uint32_t)a) != cta)
                return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                               "%s: lane %u's address 0x%llx is not in its CTA's shared memory",
                               x->kind == PX_LDMATRIX ? "ldmatrix" : "stmatrix", i, (unsigned long long)a);
            addr[i] = pa_smem_offset((uint32_t)a);
        }
        uint8_t *smem = L->m->cluster.smem[rank];
        uint32_t bytes = L->m->cluster.smem_bytes;
        uint32_t rows = 8u * x->n;
        if (x->kind == PX_LDMATRIX) {
            for (uint32_t i = 0; i < rows; i++)
                if (addr[i] + 16 <= bytes &&
                    pa_check_read(L->m, cta, first + i, rank, addr[i], 16, err))
                    return PI_R_ERR;
            if (pa_ldmatrix(smem, bytes, x->n, x->flags & 1, addr, regs, err))
                return PI_R_ERR;
            for (uint32_t i = 0; i < 32; i++)
                for (uint32_t j = 0; j < x->n; j++)
                    if (x->regs[j] != PI_NOREG)
                        PI_REG(lane[i], x->regs[j]) = regs[i * x->n + j];
            return PA_OK;
        }
        for (uint32_t i = 0; i < 32; i++)
            for (uint32_t j = 0; j < x->n; j++)
                regs[i * x->n + j] = (uint32_t)PI_REG(lane[i], x->regs[j]);
        uint32_t map[32 * 4 * 2];
        if (pa_ldmatrix_map(x->n, x->flags & 1, addr, map, err))
            return PI_R_ERR;
        for (uint32_t i = 0; i < rows; i++)
            if (addr[i] + 16 <= bytes &&
                pa_hb_smem(L->m, cta, first + i, rank, addr[i], 16, 1, "stmatrix", err))
                return PI_R_ERR;
        return pa_stmatrix(smem, bytes, x->n, x->flags & 1, addr, regs, err) ? PI_R_ERR : PA_OK;
    }
    default:
        return pa_fail(err, PA_ERR_STATE, "unknown warp collective %u", x->kind);
    }
}

/* The descriptor reader's type of a wgmma element type (b1: bytes of 8 bits). */
static int wg_read_type(int t, pa_wgmma_type *out)
{
    switch (t) {
    case SEM_T_F16: *out = PA_WG_F16; return 0;
    case SEM_T_BF16: *out = PA_WG_BF16; return 0;
    case SEM_T_TF32: *out = PA_WG_TF32; return 0;
    case SEM_T_E4M3: *out = PA_WG_E4M3; return 0;
    case SEM_T_E5M2: *out = PA_WG_E5M2; return 0;
    case SEM_T_S8: *out = PA_WG_S8; return 0;
    case SEM_T_U8: case SEM_MMA_T_B1: *out = PA_WG_U8; return 0;
    default: return -1;
    }
}

/* Read one operand through its descriptor into elements (uint32 each; b1: 32 bits
   packed to a word), [rows][k] (b1: [rows][k / 32]); the reads go to the race
   checker as runs of consecutive addresses. */
static int wg_operand(pi_launch_state *L, uint32_t cta, uint32_t first, uint32_t pc, uint64_t desc, int type,
                      int b, uint32_t rows, uint32_t k, int trans, uint32_t *out, pa_error *err)
{
    pa_wgmma_operand o;
    memset(&o, 0, sizeof o);
    pa_wgmma_desc_decode(desc, &o.desc);
    if (wg_read_type(type, &o.type))
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "wgmma.mma_async: no descriptor read for this type");
    o.major = trans ? PA_MAJOR_MN : PA_MAJOR_K;
    o.operand_b = b;
    o.rows = rows;
    o.k = k;
    if (pa_wgmma_operand_check(&o, err))
        return PI_R_ERR;
    uint32_t es = pa_wgmma_type_bytes(o.type), kb = k ? k : pa_wgmma_type_k(o.type), cnt = rows * kb;
    uint8_t *raw = malloc((size_t)cnt * es);
    uint64_t *addr = malloc((size_t)cnt * sizeof *addr);
    int rc = PI_R_ERR;
    if (!raw || !addr) {
        pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a wgmma");
        goto out;
    }
    uint8_t *smem = L->m->cluster.smem[cta];
    if (pa_wgmma_read(&o, smem, L->m->cluster.smem_bytes, raw, err) || pa_wgmma_addresses(&o, addr, err))
        goto out;
    for (uint32_t i = 0; i < cnt;) {
        uint32_t j = i + 1;
        while (j < cnt && addr[j] == addr[j - 1] + es)
            j++;
        if (pa_check_wgmma_read(L->m, cta, first, (uint32_t)addr[i], (uint32_t)(addr[j - 1] + es - addr[i]),
                                pi_wg_group(L, cta, first), (uint32_t)pi_line(L->p, pc), err))
            goto out;
        i = j;
    }
    if (type == SEM_MMA_T_B1) {
        for (uint32_t i = 0; i < cnt / 4; i++)
            out[i] = (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 | (uint32_t)raw[4 * i + 2] << 16 |
                     (uint32_t)raw[4 * i + 3] << 24;
    } else {
        for (uint32_t i = 0; i < cnt; i++)
            out[i] = es == 1 ? raw[i] : es == 2 ? (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8
                                                : (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 |
                                                  (uint32_t)raw[4 * i + 2] << 16 | (uint32_t)raw[4 * i + 3] << 24;
    }
    rc = PA_OK;
out:
    free(raw);
    free(addr);
    return rc;
}

/* wgmma.mma_async: B (and A, or A from the registers of the four warps) and D
 * gathered into whole matrices, then each element of D by the semantics library
 * (mma_exec.c, sem/mma.c), D scattered back. Accumulator fragment: thread T (warp
 * w, lane l), element e (register e, or e / 2 for f16): row 16w + l/4 + 8((e/2)%2),
 * column 8(e/4) + 2(l%4) + e%2. A in registers: as mma.m16n8kK's A fragment, rows
 * 16w .. 16w + 15. */
static int wgmma(pi_launch_state *L, uint32_t cta, uint32_t first, const pi_meet *g, const pi_ext *x, pa_error *err)
{
    pi_thread *th[128];
    for (uint32_t i = 0; i < 128; i++) {
        if (first + i >= L->nthr || !arrived(g, i))
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "wgmma.mma_async is executed by all 128 threads of a warpgroup (thread %u is missing)",
                           first + i);
        th[i] = thread_at(L, cta, first + i);
    }
    int areg = (x->flags & PI_WG_AREG) != 0;
    uint64_t da = areg ? 0 : PI_REG(th[0], x->s0), db = PI_REG(th[0], x->s1);
    int scale_d = PI_REG(th[0], x->s2) != 0;
    for (uint32_t i = 1; i < 128; i++)
        if ((!areg && PI_REG(th[i], x->s0) != da) || PI_REG(th[i], x->s1) != db || (PI_REG(th[i], x->s2) != 0) != scale_d)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "wgmma.mma_async: thread %u's descriptors or scale-d differ from thread %u's: they "
                           "must be the same in the whole warpgroup", first + i, first);
    int at = (int)(x->info[0] & 0xFFFF), bt = (int)(x->info[0] >> 16), dt = (int)(x->info[1] & 0xFFFF);
    uint32_t k = x->info[1] >> 16, n = x->s3;
    const int sp = (x->flags & PI_WG_SP) != 0;
    uint32_t lda = at == SEM_MMA_T_B1 ? k / 32 : sp ? k / 2 : k, ldb = bt == SEM_MMA_T_B1 ? k / 32 : k;
    uint32_t *a = malloc((size_t)64 * lda * sizeof *a), *b = malloc((size_t)n * ldb * sizeof *b);
    uint32_t *pos = sp ? malloc((size_t)64 * lda * sizeof *pos) : NULL;
    uint64_t *acc = malloc((size_t)64 * n * sizeof *acc);
    int rc = PI_R_ERR;
    if (!a || !b || !acc || (sp && !pos)) {
        pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a wgmma");
        goto out;
    }
    if (sp) {
        /* warp w of the warpgroup gives the metadata of rows 16w .. 16w + 15, laid as mma.sp's
           m16n8k(k) (PTX ISA 9.7.15.6.2) */
        for (uint32_t w = 0; w < 4; w++) {
            uint32_t meta[32];
            for (uint32_t l = 0; l < 32; l++)
                meta[l] = (uint32_t)PI_REG(th[32 * w + l], x->regs[4]);
            for (uint32_t r = 0; r < 16; r++)
                if (pi_sp_positions("wgmma.mma_async.sp", at, k, (uint32_t)x->sub, 0, meta, r,
                                    pos + (16 * w + r) * lda, err))
                    goto out;
        }
    }
    /* .sp: B holds all k of K, A the k/2 non-zero elements of each row (the dense form's k/2) */
    if (wg_operand(L, cta, first, g->pc, db, bt, 1, n, sp ? k : 0, (x->flags & PI_WG_TRANS_B) != 0, b, err))
        goto out;
    if (!areg) {
        if (wg_operand(L, cta, first, g->pc, da, at, 0, 64, 0, (x->flags & PI_WG_TRANS_A) != 0, a, err))
            goto out;
    } else {
        int bits = sem_mma_type_bits(at);
        uint32_t epr = bits >= 32 ? 1 : 32u / (uint32_t)bits;
        for (uint32_t T = 0; T < 128; T++) {
            uint32_t w = T / 32, l = T % 32, gq = l >> 2, t = l & 3;
            for (uint32_t r = 0; r < 4; r++) {
                uint32_t v = (uint32_t)PI_REG(th[T], x->regs[r]);
                uint32_t row = 16 * w + gq + 8 * (r & 1), col0 = 4 * epr * (r >> 1) + t * epr;
                if (at == SEM_MMA_T_B1)
                    a[row * lda + col0 / 32] = v;
                else
                    for (uint32_t j = 0; j < epr; j++)
                        a[row * lda + col0 + j] = (v >> (j * (uint32_t)bits)) & (uint32_t)((1ull << bits) - 1);
            }
        }
    }
    int f16 = dt == SEM_T_F16;
    uint32_t nel = n / 2;               /* accumulator elements per thread */
    for (uint32_t T = 0; T < 128; T++)
        for (uint32_t e = 0; e < nel; e++) {
            uint32_t w = T / 32, l = T % 32;
            uint32_t row = 16 * w + l / 4 + 8 * ((e / 2) % 2), col = 8 * (e / 4) + 2 * (l % 4) + e % 2;
            uint64_t v = PI_REG(th[T], L->p->vregs[x->vbase + (f16 ? e / 2 : e)]);
            acc[row * n + col] = f16 ? (v >> (16 * (e & 1))) & 0xFFFF : v & 0xFFFFFFFFu;
        }
    unsigned fl = ((x->flags & PI_WG_SATFINITE) ? SEM_MMA_SATFINITE : 0) | ((x->flags & PI_WG_AND) ? SEM_MMA_AND : 0);
    if (sp ? pi_wgmma_sp_math(at, bt, dt, n, k, fl, scale_d, (x->flags & PI_WG_NEG_A) != 0,
                              (x->flags & PI_WG_NEG_B) != 0, a, pos, b, acc, err)
           : pi_wgmma_math(at, bt, dt, n, k, fl, scale_d, (x->flags & PI_WG_NEG_A) != 0,
                           (x->flags & PI_WG_NEG_B) != 0, a, b, acc, err))
        goto out;
    for (uint32_t T = 0; T < 128; T++) {
        if (f16)
            for (uint32_t e = 0; e < nel; e += 2)
                PI_REG(th[T], L->p->vregs[x->vbase + e / 2]) = 0;
        for (uint32_t e = 0; e < nel; e++) {
            uint32_t w = T / 32, l = T % 32;
            uint32_t row = 16 * w + l / 4 + 8 * ((e / 2) % 2), col = 8 * (e / 4) + 2 * (l % 4) + e % 2;
            uint64_t *r = &PI_REG(th[T], L->p->vregs[x->vbase + (f16 ? e / 2 : e)]);
            if (f16)
                *r |= acc[row * n + col] << (16 * (e & 1));
            else
                *r = acc[row * n + col];
        }
    }
    rc = pi_wg_issue(L, cta, first, g->pc, err) ? PI_R_ERR : PA_OK;
out:
    free(a);
    free(b);
    free(pos);
    free(acc);
    return rc;
}

static int run_collective(pi_launch_state *L, uint32_t cta, uint32_t first, uint32_t size, pi_meet *g,
                          const pi_ext *x, pa_error *err)
{
    int rc = x->kind == PX_WGMMA_MMA ? wgmma(L, cta, first, g, x, err) : warp_op(L, cta, first, g, x, err);
    /* the arrived members, lowest lane first (the ready list's order is the schedule's); on an
       error they stay at the instruction, which the report names */
    for (uint32_t k = 0; k < 2 && !rc; k++)
        for (uint64_t bits = g->arrived[k]; bits; bits &= bits - 1) {
            uint32_t i = 64 * k + (uint32_t)__builtin_ctzll(bits);
            if (i >= size || first + i >= L->nthr)
                break;
            pi_thread *w = thread_at(L, cta, first + i);
            if (w->state == PI_T_COLL) {
                w->pc++;
                pi_ready(L, w);
            }
        }
    g->pc = PI_NOREG;
    g->arrived[0] = g->arrived[1] = 0;
    return rc;
}

int pi_coll_exec(pi_launch_state *L, pi_thread *t, const pi_ins *in, const pi_ext *x, pa_error *err)
{
    (void)in;
    switch (x->kind) {
    case PX_BAR_SYNC:
        return bar_arrive(L, t, x, 1, err);
    case PX_BAR_ARRIVE:
        return bar_arrive(L, t, x, 0, err);
    case PX_BAR_RED:
        return bar_arrive(L, t, x, 1, err);
    case PX_CLUSTER_ARRIVE:
        if (t->cl_arrived)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "barrier.cluster.arrive twice without a barrier.cluster.wait between") ? PI_R_ERR : PI_R_ERR;
        t->cl_arrived = 1;
        t->cl_phase = L->cl_phase;
        L->cl_count++;
        if (cluster_check(L, x->sub, err))
            return PI_R_ERR;
        t->pc++;
        return done_progress(L, t);
    case PX_CLUSTER_WAIT:
        if (t->cl_arrived && L->cl_phase > t->cl_phase) {
            t->cl_arrived = 0;
            t->pc++;
            return done_progress(L, t);
        }
        t->state = PI_T_CLUSTER;
        return PI_R_PARK;
    case PX_ELECT:
    case PX_SHFL:
    case PX_VOTE:
    case PX_REDUX:
    case PX_MATCH:
    case PX_WARP_SYNC: {
        uint32_t mask = (uint32_t)PI_REG(t, x->kind == PX_SHFL ? x->regs[0]
                                     : x->kind == PX_VOTE || x->kind == PX_REDUX || x->kind == PX_MATCH ? x->s1 : x->s0);
        return meet(L, t, x, 0, mask, err);
    }
    case PX_MMA:
    case PX_LDMATRIX:
    case PX_MOVMATRIX:
    case PX_STMATRIX:
    case PX_TENSORMAP_CP:
        return meet(L, t, x, 0, 0xFFFFFFFFu, err);
    case PX_WGMMA_MMA:
        return meet(L, t, x, 1, ~0ull, err);
    case PX_ACTIVEMASK:
        return pi_activemask(L, t, x);
    default:
        return pa_fail(err, PA_ERR_STATE, "unknown instruction kind %u", x->kind) ? PI_R_ERR : PI_R_ERR;
    }
}

int pi_coll_thread_exit(pi_launch_state *L, pi_thread *t, pa_error *err)
{
    /* its warp's arrival may now be complete ("all non-exited threads from its warp"), and a
       barrier that counted on every warp of the CTA may be */
    for (uint32_t id = 0; id < 16; id++) {
        pi_bar *b = &L->bar[t->cta][id];
        bar_warp_check(L, t->cta, id, t->tid / 32);
        if (b->nthreads && bar_full(L, t->cta, b) && bar_complete(L, t->cta, id, err))
            return PI_R_ERR;
    }
    if (cluster_check(L, 0, err))
        return PI_R_ERR;
    for (int wg = 0; wg < 2; wg++) {
        uint32_t first, size;
        pi_meet *g = meet_of(L, t, wg, &first, &size);
        if (g->pc != PI_NOREG && meet_full(L, g, t->cta, first, size)) {
            const pi_ins *in = &L->p->ins[g->pc];
            if (run_collective(L, t->cta, first, size, g, &L->p->ext[in->x], err))
                return PI_R_ERR;
            L->epoch++;
        }
    }
    return PA_OK;
}
