/* launch.c - a grid of CTAs on the machine: threads, their registers, the
 * seeded scheduler, exits and the deadlock explanation (see launch.h). */
#include "ptx/exec/launch.h"
#include "check/watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s += 0x9E3779B97F4A7C15ull;   /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* rng_next(s) % n, the draw every seed has always made, through the cached
   reciprocal of n (pi_mod) rather than a 64-bit division each scheduler turn. */
static inline uint32_t rng_below(uint64_t *s, uint32_t n, uint64_t *inv)
{
    if (!*inv)
        *inv = pi_mod_inverse(n);
    return (uint32_t)pi_mod(rng_next(s), n, *inv);
}

static uint64_t special(const pi_launch_state *L, const pi_thread *t, int sr)
{
    const pi_launch_args *a = L->a;
    uint32_t tid = t->tid, bx = a->block[0], by = a->block[1];
    uint32_t lane = tid % 32;
    const uint32_t *cd = a->cluster, *ctaid = L->ctaid[t->cta];
    switch (sr) {
    case PI_SR_TID_X: return tid % bx;
    case PI_SR_TID_Y: return tid / bx % by;
    case PI_SR_TID_Z: return tid / (bx * by);
    case PI_SR_NTID_X: return a->block[0];
    case PI_SR_NTID_Y: return a->block[1];
    case PI_SR_NTID_Z: return a->block[2];
    case PI_SR_CTAID_X: return ctaid[0];
    case PI_SR_CTAID_Y: return ctaid[1];
    case PI_SR_CTAID_Z: return ctaid[2];
    case PI_SR_NCTAID_X: return a->grid[0];
    case PI_SR_NCTAID_Y: return a->grid[1];
    case PI_SR_NCTAID_Z: return a->grid[2];
    case PI_SR_LANEID: return lane;
    case PI_SR_WARPID: return tid / 32;
    case PI_SR_NWARPID: return (L->nthr + 31) / 32;
    case PI_SR_CLUSTER_CTARANK: return t->cta;
    case PI_SR_CLUSTER_NCTARANK: return L->csize;
    case PI_SR_CLUSTER_CTAID_X: return ctaid[0] % cd[0];
    case PI_SR_CLUSTER_CTAID_Y: return ctaid[1] % cd[1];
    case PI_SR_CLUSTER_CTAID_Z: return ctaid[2] % cd[2];
    case PI_SR_CLUSTER_NCTAID_X: return cd[0];
    case PI_SR_CLUSTER_NCTAID_Y: return cd[1];
    case PI_SR_CLUSTER_NCTAID_Z: return cd[2];
    case PI_SR_CLUSTERID_X: return ctaid[0] / cd[0];
    case PI_SR_CLUSTERID_Y: return ctaid[1] / cd[1];
    case PI_SR_CLUSTERID_Z: return ctaid[2] / cd[2];
    case PI_SR_NCLUSTERID_X: return a->grid[0] / cd[0];
    case PI_SR_NCLUSTERID_Y: return a->grid[1] / cd[1];
    case PI_SR_NCLUSTERID_Z: return a->grid[2] / cd[2];
    case PI_SR_IS_EXPLICIT_CLUSTER: return L->csize > 1;
    case PI_SR_LANEMASK_EQ: return 1u << lane;
    case PI_SR_LANEMASK_LT: return (1u << lane) - 1;
    case PI_SR_LANEMASK_LE: return lane == 31 ? 0xFFFFFFFFu : (2u << lane) - 1;
    case PI_SR_LANEMASK_GT: return lane == 31 ? 0 : ~((2u << lane) - 1) & 0xFFFFFFFFu;
    case PI_SR_LANEMASK_GE: return ~((1u << lane) - 1) & 0xFFFFFFFFu;
    case PI_SR_DYNAMIC_SMEM: return L->m->cluster.smem_bytes - L->p->dyn_smem;
    default: return 0;
    }
}

static void thread_start(pi_launch_state *L, pi_thread *t)
{
    const pi_prog *p = L->p;
    PI_REG(t, 0) = 1;                           /* the others are zero: the cluster's file was cleared */
    for (uint32_t i = p->first_init; i < p->nregs; i++) {
        const pi_init *in = &p->init[i - p->first_init];
        switch (in->kind) {
        case PI_INIT_CONST: PI_REG(t, i) = in->value; break;
        case PI_INIT_SPECIAL: PI_REG(t, i) = special(L, t, (int)in->value); break;
        case PI_INIT_SHARED_SYM: PI_REG(t, i) = ((uint64_t)t->cta << PA_SMEM_RANK_SHIFT) + in->value; break;
        case PI_INIT_GVAR: PI_REG(t, i) = L->a->gvar_base + in->value; break;
        default: break;
        }
    }
    pi_frame_start(p, t);                       /* its stack: the .entry's frame */
    t->nprintf = 0;
    t->pc = 0;
    t->state = PI_T_RUN;
    t->rpos = PI_NOREG;
    t->spin_epoch = 0;
    t->ws = NULL;
    t->cl_arrived = 0;
    t->cl_phase = 0;
    t->wg_commits = t->wg_done = 0;
    t->wg_watch = 0;
}

/* The instruction text of pc, for messages. */
static void instr_text(const pi_prog *p, uint32_t pc, char *buf, size_t cap)
{
    const ptx_module *m = p->mod;
    const ptx_item *it = &m->items[p->ins[pc].item];
    size_t n = it->opcode.len < cap - 1 ? it->opcode.len : cap - 1;
    if (it->kind != PTX_ITEM_INSTR)
        n = 0;
    memcpy(buf, m->text + it->opcode.off, n);
    buf[n] = 0;
}

/* Append " at PTX line N (instr), CTA c thread t" to an error from pc. */
static void annotate(const pi_launch_state *L, const pi_thread *t, uint32_t pc, pa_error *err)
{
    if (!err)
        return;
    char op[96];
    instr_text(L->p, pc, op, sizeof op);
    size_t n = strlen(err->msg);
    snprintf(err->msg + n, sizeof err->msg - n, " [PTX line %d: %s; CTA %u (ctaid %u,%u,%u) thread %u]",
             pi_line(L->p, pc), op, t->cta, L->ctaid[t->cta][0], L->ctaid[t->cta][1], L->ctaid[t->cta][2], t->tid);
}

static const char *wait_kind(int state)
{
    switch (state) {
    case PI_T_SPIN: return "on an mbarrier";
    case PI_T_BAR: return "at a barrier";
    case PI_T_COLL: return "for the rest of its warp";
    case PI_T_CLUSTER: return "at barrier.cluster";
    default: return "";
    }
}

/* Every thread is blocked and nothing pending can help: name each blocked
 * thread (runs of consecutive threads waiting at the same line together). */
static int deadlock(pi_launch_state *L, pa_error *err, int have_reason)
{
    char list[PA_ERRMSG_LEN];
    size_t n = 0;
    list[0] = 0;
    for (uint32_t i = 0; i < L->nt && n + 8 < sizeof list;) {
        const pi_thread *t = &L->t[i];
        if (t->state == PI_T_DONE) {
            i++;
            continue;
        }
        uint32_t pc = t->state == PI_T_SPIN && t->pc ? t->pc - 1 : t->pc;
        uint32_t j = i + 1;
        while (j < L->nt && L->t[j].cta == t->cta && L->t[j].state == t->state &&
               (L->t[j].state == PI_T_SPIN && L->t[j].pc ? L->t[j].pc - 1 : L->t[j].pc) == pc)
            j++;
        char op[80];
        instr_text(L->p, pc, op, sizeof op);
        if (j - i == 1)
            n += (size_t)snprintf(list + n, sizeof list - n, "%sCTA %u thread %u waits %s at line %d (%s)", n ? "; " : "",
                                  t->cta, t->tid, wait_kind(t->state), pi_line(L->p, pc), op);
        else
            n += (size_t)snprintf(list + n, sizeof list - n, "%sCTA %u threads %u-%u wait %s at line %d (%s)",
                                  n ? "; " : "", t->cta, t->tid, L->t[j - 1].tid, wait_kind(t->state),
                                  pi_line(L->p, pc), op);
        if (n >= sizeof list)
            n = sizeof list - 1;
        i = j;
    }
    if (have_reason) {
        size_t k = strlen(err->msg);
        snprintf(err->msg + k, sizeof err->msg - k, "; blocked PTX threads: %s", list);
        return PI_R_ERR;
    }
    pa_fail_rule(err, PA_ERR_DEADLOCK, "deadlock",
                 "every thread waits and no pending operation can release one: the kernel would hang; "
                 "blocked PTX threads: %s", list);
    return PI_R_ERR;
}

/* An error at the instruction limit says what the limit is. */
static void budget_note(const pi_launch_state *L, pa_error *err)
{
    if (L->budget || !err)
        return;
    char n[32];
    size_t k = strlen(err->msg);
    snprintf(err->msg + k, sizeof err->msg - k, " (max_instructions = %s)",
             pa_count_text(L->a->max_instructions ? L->a->max_instructions : PI_MAX_INSTRUCTIONS, n, sizeof n));
}

static void unready(pi_launch_state *L, pi_thread *t)
{
    if (t->rpos == PI_NOREG)
        return;
    uint32_t last = L->ready[--L->nready];
    L->ready[t->rpos] = last;
    L->t[last].rpos = t->rpos;
    t->rpos = PI_NOREG;
}

static int same_state(const pa_mbarrier *a, const pa_mbarrier *b)
{
    return a->phase == b->phase && a->valid == b->valid && a->pending == b->pending && a->tx == b->tx &&
           a->expected == b->expected;
}

/* t's wait returned False: it runs again when its mbarrier changes (or, for a
   try_wait, an operation that signals it is pending), or without one to
   watch, after any progress. */
static int block(pi_launch_state *L, pi_thread *t, pa_error *err)
{
    t->state = PI_T_SPIN;
    t->spin_epoch = L->epoch;
    unready(L, t);
    uint32_t id = (uint32_t)(t - L->t);
    if (!t->ws) {
        L->epoch_spin[L->nepoch_spin++] = id;
        return PA_OK;
    }
    pi_watched *w = NULL;
    for (uint32_t i = 0; i < L->nwatched && !w; i++)
        if (L->watched[i].ws == t->ws)
            w = &L->watched[i];
    if (!w) {
        if (L->nwatched == L->capwatched) {
            uint32_t cap = L->capwatched ? 2 * L->capwatched : 8;
            pi_watched *nw = realloc(L->watched, cap * sizeof *nw);
            if (!nw)
                return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the scheduler");
            memset(nw + L->capwatched, 0, (cap - L->capwatched) * sizeof *nw);
            L->watched = nw;
            L->capwatched = cap;
        }
        w = &L->watched[L->nwatched++];
        w->ws = t->ws;
        L->nwatching -= w->n;
        w->n = w->ntry = 0;
    }
    if (w->n && !same_state(&w->ws->bar, &w->snap)) {   /* those already there may go on */
        for (uint32_t i = 0; i < w->n; i++)
            pi_ready(L, &L->t[w->who[i]]);
        L->nwatching -= w->n;
        w->n = w->ntry = 0;
    }
    if (!w->n)
        w->snap = t->snap;
    if (!same_state(&w->ws->bar, &t->snap)) {          /* changed since its own wait */
        pi_ready(L, t);
        return PA_OK;
    }
    if (w->n == w->cap) {
        uint32_t cap = w->cap ? 2 * w->cap : 32;
        uint32_t *nw = realloc(w->who, cap * sizeof *nw);
        if (!nw)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the scheduler");
        w->who = nw;
        w->cap = cap;
    }
    w->who[w->n++] = id;
    L->nwatching++;
    w->ntry += (uint32_t)t->ws_try;
    return PA_OK;
}

/* Every blocked thread runs again. */
static void wake_all(pi_launch_state *L)
{
    for (uint32_t i = 0; i < L->nwatched; i++) {
        pi_watched *w = &L->watched[i];
        for (uint32_t k = 0; k < w->n; k++)
            pi_ready(L, &L->t[w->who[k]]);
        L->nwatching -= w->n;
        w->n = w->ntry = 0;
    }
    for (uint32_t i = 0; i < L->nepoch_spin; i++)
        pi_ready(L, &L->t[L->epoch_spin[i]]);
    L->nepoch_spin = 0;
}

/* Blocked threads whose mbarrier changed (or whose progress came) run again. */
static void wake(pi_launch_state *L)
{
    for (uint32_t i = 0, left = L->nwatching; left && i < L->nwatched; i++) {   /* left: still to look at */
        pi_watched *w = &L->watched[i];
        left -= w->n;
        if (!w->n || (same_state(&w->ws->bar, &w->snap) && !(w->ntry && w->ws->ops.n)))
            continue;
        for (uint32_t k = 0; k < w->n; k++)
            pi_ready(L, &L->t[w->who[k]]);
        L->nwatching -= w->n;
        w->n = w->ntry = 0;
    }
    for (uint32_t i = 0; i < L->nepoch_spin;) {
        pi_thread *t = &L->t[L->epoch_spin[i]];
        if (t->spin_epoch != L->epoch) {
            pi_ready(L, t);
            L->epoch_spin[i] = L->epoch_spin[--L->nepoch_spin];
        } else {
            i++;
        }
    }
}

static int thread_exit(pi_launch_state *L, pi_thread *t, pa_error *err)
{
    if (pa_watch_exit(L->m, t->cta, t->tid, err))
        return PI_R_ERR;
    t->state = PI_T_DONE;
    unready(L, t);
    L->live[t->cta]--;
    L->exited[t->cta]++;
    L->wlive[t->cta * L->nwarps + t->tid / 32] &= ~(1u << (t->tid % 32));
    L->epoch++;
    if (pi_coll_thread_exit(L, t, err))
        return PI_R_ERR;
    if (!L->live[t->cta] && pa_watch_exit(L->m, t->cta, PA_NO_THREAD, err))
        return PI_R_ERR;
    return PA_OK;
}

/* The lanes of warp wi, from lane 0's thread. */
static pi_thread *warp_lanes(pi_launch_state *L, uint32_t wi)
{
    return &L->t[wi / L->nwarps * L->nthr + wi % L->nwarps * 32];
}

/* Warp wi's lanes met together: if they all still stand ready at one
   instruction, they run on as one unit (the lowest lane in the ready list). */
static void converge(pi_launch_state *L, uint32_t wi)
{
    uint32_t lanes = L->wlive[wi];
    L->wconv[wi] = PI_W_APART;
    if (lanes & (lanes - 1)) {                   /* two lanes or more */
        pi_thread *T = warp_lanes(L, wi);
        uint32_t lead = (uint32_t)__builtin_ctz(lanes), pc = T[lead].pc;
        for (uint32_t bits = lanes; bits; bits &= bits - 1) {
            const pi_thread *u = &T[__builtin_ctz(bits)];
            if (u->state != PI_T_RUN || u->pc != pc)
                return;
        }
        for (uint32_t bits = lanes & (lanes - 1); bits; bits &= bits - 1)
            unready(L, &T[__builtin_ctz(bits)]);
        L->wconv[wi] = PI_W_CONVERGED;
    }
}

/* A turn of converged warp wi. */
static int warp_turn(pi_launch_state *L, uint32_t wi, pa_error *err)
{
    pi_thread *T = warp_lanes(L, wi), *failed = NULL;
    uint32_t lanes = L->wlive[wi];
    pi_thread *lead = &T[__builtin_ctz(lanes)];
    switch (pi_run_warp(L, T, lanes, &failed, err)) {
    case PI_R_PROGRESS:
        return PA_OK;
    case PI_R_SPIN:                              /* the warp waits as one */
        return block(L, lead, err);
    case PI_R_SPLIT:                             /* each lane on its own from here */
        L->wconv[wi] = PI_W_APART;
        for (uint32_t bits = lanes; bits; bits &= bits - 1) {
            pi_thread *u = &T[__builtin_ctz(bits)];
            if (u->state == PI_T_SPIN) {
                if (block(L, u, err))
                    return PI_R_ERR;
            } else {
                pi_ready(L, u);
            }
        }
        return PA_OK;
    default:
        budget_note(L, err);
        annotate(L, failed, failed->pc, err);
        return PI_R_ERR;
    }
}

static int run_cluster(pi_launch_state *L, pa_error *err)
{
    uint32_t max_burst = L->a->max_burst ? L->a->max_burst : 8;
    uint64_t burst_inv = 0;
    uint32_t live = L->nt;
    while (live) {
        wake(L);
        if (!L->nready) {
            /* every thread waits: the machine completes one pending operation */
            int done = 0;
            if (pa_machine_step(L->m, &done, err))
                return PI_R_ERR;
            if (done) {
                L->st->steps++;
                L->epoch++;
                continue;
            }
            /* nothing left to complete: a thread whose wait answered False may not be in a
               loop (a probe goes on): every blocked thread runs once more; only if none of
               them makes progress is it the deadlock, explained as the model explains it */
            if (L->forced != L->epoch + 1) {
                L->forced = L->epoch + 1;
                wake_all(L);
                continue;
            }
            if (pa_sync_check_deadlock(L->m, err))
                return deadlock(L, err, 1);
            return deadlock(L, err, 0);
        }
        /* a random thread (or converged warp) that can run, for a random number of operations */
        pi_thread *t = &L->t[L->ready[rng_below(&L->rng, L->nready, &L->inv[L->nready])]];
        L->burst = 1 + rng_below(&L->rng, max_burst, &burst_inv);
        uint32_t wi = t->cta * L->nwarps + t->tid / 32;
        if (L->wconv[wi] == PI_W_MET)
            converge(L, wi);
        if (L->wconv[wi] == PI_W_CONVERGED) {
            if (warp_turn(L, wi, err))
                return PI_R_ERR;
            continue;
        }
        int rc = pi_run_thread(L, t, err);
        switch (rc) {
        case PI_R_SPIN:
            if (block(L, t, err))
                return PI_R_ERR;
            break;
        case PI_R_PARK:
            unready(L, t);
            break;
        case PI_R_EXIT:
            if (thread_exit(L, t, err)) {
                annotate(L, t, t->pc, err);
                return PI_R_ERR;
            }
            live--;
            break;
        case PI_R_ERR:
            budget_note(L, err);
            annotate(L, t, t->pc, err);
            return PI_R_ERR;
        default:
            break;
        }
    }
    return pa_watch_run(L->m, err) ? PI_R_ERR : PA_OK;
}

int pi_launch(pa_machine *m, const pi_prog *p, const pi_launch_args *a, pi_stats *st, pa_error *err)
{
    memset(st, 0, sizeof *st);                 /* an output: pi_stats_free it, whatever the result */
    uint64_t nthr = (uint64_t)a->block[0] * a->block[1] * a->block[2];
    uint64_t csize = (uint64_t)a->cluster[0] * a->cluster[1] * a->cluster[2];
    char why[200];
    if (p->mod->sm && !pa_target_runs(m->target, p->mod->sm, p->mod->suffix, why, sizeof why))
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "%s; Machine(target=...) names the machine's target", why);
    for (int i = 0; i < 3; i++) {
        if (!a->grid[i] || !a->block[i] || !a->cluster[i])
            return pa_fail(err, PA_ERR_INVALID_VALUE, "grid, block and cluster dimensions must be at least 1");
        if (a->grid[i] % a->cluster[i])
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "grid dimension %c = %u is not a multiple of the cluster's %u", "xyz"[i], a->grid[i],
                           a->cluster[i]);
    }
    if (nthr > 1024)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "a CTA has at most 1024 threads; block gives %llu",
                       (unsigned long long)nthr);
    if (csize > m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "a cluster of %llu CTAs does not fit the machine's %u CTAs (Machine(ctas=...))",
                       (unsigned long long)csize, m->cluster.nctas);
    if (p->has_reqntid == 1 &&
        (a->block[0] != p->reqntid[0] || a->block[1] != p->reqntid[1] || a->block[2] != p->reqntid[2]))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "the kernel requires a block of %u x %u x %u threads (.reqntid)",
                       p->reqntid[0], p->reqntid[1], p->reqntid[2]);
    if (p->has_reqntid == 2 && nthr > (uint64_t)p->reqntid[0] * p->reqntid[1] * p->reqntid[2])
        return pa_fail(err, PA_ERR_INVALID_VALUE, "the kernel takes at most %u threads a CTA (.maxntid)",
                       p->reqntid[0] * p->reqntid[1] * p->reqntid[2]);
    if (p->static_smem > m->cluster.smem_bytes || p->dyn_smem > m->cluster.smem_bytes)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "the kernel's .shared variables take %u bytes; the machine's CTAs have %u",
                       p->static_smem > p->dyn_smem ? p->static_smem : p->dyn_smem, m->cluster.smem_bytes);
    if (p->gvar_bytes && !a->gvar_base)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "the module's .global / .const variables need a global buffer of "
                       "%llu bytes (launch's gvar_base)", (unsigned long long)p->gvar_bytes);
    pi_launch_state L;
    memset(&L, 0, sizeof L);
    L.m = m;
    L.p = p;
    L.a = a;
    L.st = st;
    L.nthr = (uint32_t)nthr;
    L.csize = (uint32_t)csize;
    L.nt = L.nthr * L.csize;
    L.nwarps = (L.nthr + 31) / 32;
    L.nwgs = (L.nthr + 127) / 128;
    L.rng = a->seed;
    L.budget = a->max_instructions ? a->max_instructions : PI_MAX_INSTRUCTIONS;
    L.max_pending = a->max_pending ? a->max_pending : PI_MAX_PENDING;
    L.lanes = pi_lanes_for(pa_simd_level());
    /* the register file: every thread of a cluster holds nregs 64-bit registers */
    uint64_t reg_bytes = (uint64_t)L.nt * p->nregs * sizeof(uint64_t);
    if (reg_bytes > PI_MAX_REG_BYTES) {
        char a1[32], a2[32], a3[32], a4[32];
        return pa_fail(err, PA_ERR_NO_MEMORY,
                       "the launch's registers would take %s bytes (%u threads of a cluster x %s registers x 8 "
                       "bytes; the largest declaration, %s registers, at PTX line %d); the interpreter holds at "
                       "most %s bytes (1 GiB)", pa_count_text(reg_bytes, a1, sizeof a1), L.nt,
                       pa_count_text(p->nregs, a2, sizeof a2), pa_count_text(p->reg_decl_regs, a3, sizeof a3),
                       p->reg_decl_line, pa_count_text(PI_MAX_REG_BYTES, a4, sizeof a4));
    }
    int rc = PA_OK;
    /* lane-major per warp (launch.h): 32 lanes a warp, or the power of two that holds a smaller CTA */
    unsigned lsh = 0;
    while ((1u << lsh) < L.nthr && lsh < 5)
        lsh++;
    const size_t warp_regs = (size_t)p->nregs << lsh, file_regs = (size_t)L.csize * L.nwarps * warp_regs;
    L.t = calloc(L.nt, sizeof *L.t);
    uint64_t *regs = calloc(file_regs, sizeof(uint64_t));
    uint32_t *who = calloc((size_t)L.csize * 16 * L.nthr, sizeof(uint32_t));
    uint32_t *bar_lanes = calloc((size_t)L.csize * 16 * L.nwarps, sizeof(uint32_t));
    L.warp = calloc((size_t)L.csize * L.nwarps, sizeof *L.warp);
    L.wg = calloc((size_t)L.csize * L.nwgs, sizeof *L.wg);
    L.ready = calloc(L.nt, sizeof *L.ready);
    L.wlive = calloc((size_t)L.csize * L.nwarps, sizeof *L.wlive);
    L.wconv = calloc((size_t)L.csize * L.nwarps, 1);
    L.epoch_spin = calloc(L.nt, sizeof *L.epoch_spin);
    L.inv = calloc((size_t)L.nt + 1, sizeof *L.inv);
    L.maps = calloc(p->nparams ? p->nparams : 1, sizeof *L.maps);
    L.map_ok = calloc(p->nparams ? p->nparams : 1, 1);
    int lmem_bad = 0;
    if (L.t)                                 /* each thread's stack: room for the .entry's frame */
        for (uint32_t i = 0; i < L.nt && !lmem_bad; i++) {
            L.t[i].stack_cap = p->local_bytes ? p->local_bytes : 0;
            L.t[i].local = p->local_bytes ? malloc(p->local_bytes) : NULL;
            lmem_bad = p->local_bytes && !L.t[i].local;
        }
    if (lmem_bad || !L.t || !regs || !who || !bar_lanes || !L.warp || !L.wg || !L.maps || !L.map_ok || !L.ready || !L.epoch_spin || !L.wlive || !L.wconv ||
        !L.inv) {
        rc = pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the launch: %u threads of %u registers each",
                     L.nt, p->nregs);
        goto out;
    }
    if ((rc = pi_wg_start(&L, err)))
        goto out;
    for (uint32_t c = 0; c < L.csize; c++)
        for (uint32_t b = 0; b < 16; b++) {
            L.bar[c][b].who = who + ((size_t)c * 16 + b) * L.nthr;
            L.bar[c][b].lanes = bar_lanes + ((size_t)c * 16 + b) * L.nwarps;
        }
    for (uint32_t i = 0; i < L.nt; i++) {
        L.t[i].cta = i / L.nthr;
        L.t[i].tid = i % L.nthr;
        L.t[i].lr = regs + ((size_t)L.t[i].cta * L.nwarps + L.t[i].tid / 32) * warp_regs + L.t[i].tid % 32;
        L.t[i].lsh = (uint8_t)lsh;
    }
    const uint32_t *cd = a->cluster;
    uint32_t ncl[3] = {a->grid[0] / cd[0], a->grid[1] / cd[1], a->grid[2] / cd[2]};
    uint64_t nclusters = (uint64_t)ncl[0] * ncl[1] * ncl[2];
    for (uint64_t k = 0; k < nclusters && !rc; k++) {
        uint32_t cx = (uint32_t)(k % ncl[0]), cy = (uint32_t)(k / ncl[0] % ncl[1]),
                 cz = (uint32_t)(k / ((uint64_t)ncl[0] * ncl[1]));
        for (uint32_t r = 0; r < L.csize; r++) {
            L.ctaid[r][0] = cx * cd[0] + r % cd[0];
            L.ctaid[r][1] = cy * cd[1] + r / cd[0] % cd[1];
            L.ctaid[r][2] = cz * cd[2] + r / (cd[0] * cd[1]);
            L.live[r] = L.nthr;
            L.exited[r] = 0;
            for (uint32_t b = 0; b < 16; b++) {
                L.bar[r][b].warps = L.bar[r][b].expected = L.bar[r][b].nwho = L.bar[r][b].nthreads = 0;
                memset(L.bar[r][b].lanes, 0, L.nwarps * sizeof(uint32_t));
            }
            if (k)                               /* a new CTA in the slot the last one left */
                pa_sync_cta_restart(m, r);
        }
        for (uint32_t w = 0; w < L.csize * L.nwarps; w++) {
            L.warp[w].pc = PI_NOREG;
            uint32_t lanes = L.nthr - (w % L.nwarps) * 32;
            L.wlive[w] = lanes >= 32 ? 0xFFFFFFFFu : (1u << lanes) - 1;
            L.wconv[w] = PI_W_MET;               /* every warp starts together */
        }
        for (uint32_t w = 0; w < L.csize * L.nwgs; w++)
            L.wg[w].pc = PI_NOREG;
        L.cl_count = 0;
        L.nready = L.nepoch_spin = 0;
        for (uint32_t i = 0; i < L.nwatched; i++)
            L.watched[i].n = L.watched[i].ntry = 0;
        L.nwatching = 0;
        if (k) {                                 /* the last cluster's registers */
            memset(regs, 0, file_regs * sizeof(uint64_t));
            pi_wg_restart(&L);
        }
        for (uint32_t i = 0; i < L.nt; i++) {
            thread_start(&L, &L.t[i]);
            pi_ready(&L, &L.t[i]);
        }
        L.cluster_index = (uint32_t)k;
        if (run_cluster(&L, err))
            rc = err ? (int)err->code : PA_ERR_STATE;
    }
out:
    pi_prints_sort(st);
    for (uint32_t i = 0; L.t && i < L.nt; i++) {
        free(L.t[i].local);
        free(L.t[i].frames);
        free(L.t[i].saved);
    }
    free(L.chunks);
    pi_wg_free(&L);
    for (uint32_t i = 0; i < L.nwatched; i++)
        free(L.watched[i].who);
    free(L.watched);
    free(L.ready);
    free(L.epoch_spin);
    free(L.inv);
    free(L.wlive);
    free(L.wconv);
    free(L.t);
    free(regs);
    free(who);
    free(bar_lanes);
    free(L.warp);
    free(L.wg);
    free(L.maps);
    free(L.map_ok);
    return rc;
}
