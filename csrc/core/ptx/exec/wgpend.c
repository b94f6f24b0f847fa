/* wgpend.c - the wgmma.mma_async operations no wgmma.wait_group has retired.
 *
 * PTX ISA, wgmma.wait_group: "Accessing the accumulator register or the input
 * register containing the fragments of matrix A of a wgmma.mma_async
 * instruction without first performing a wgmma.wait_group instruction that
 * waits on a wgmma-group including that wgmma.mma_async instruction is
 * undefined behavior." The model computes D when the warpgroup meets at the
 * wgmma (coll.c), so a kernel that reads D before its wait sees the right
 * values where the GPU's are undefined. So, while the race checker is on, each
 * warpgroup keeps its pending operations with their wgmma-group, each thread
 * the groups it committed and retired (wgmma.commit_group and wait_group are
 * per thread), and a thread with an operation pending runs instruction by
 * instruction, each checked against the registers pending (wgmma-pending).
 * wgmma.fence's exception: "accumulator register accesses across multiple
 * wgmma.mma_async instructions of the same shape" are ordered by the
 * hardware, so a wgmma naming the same accumulators with the same shape is not
 * a hazard. The shared memory a pending wgmma reads is the race checker's
 * (pa_hb_wgmma_read): a write there before the wait that retires it races.
 */
#include "ptx/exec/wgpend.h"
#include "ptx/exec/wgmma_ext.h"
#include "check/hb.h"
#include "check/watch.h"

#include <stdlib.h>
#include <string.h>

static pi_wgpend *wg_of(const pi_launch_state *L, uint32_t cta, uint32_t tid)
{
    return &L->wgp[cta * L->nwgs + tid / 128];
}

int pi_wg_start(pi_launch_state *L, pa_error *err)
{
    L->wgp = NULL;
    if (!pa_hb_enabled(L->m))
        return PA_OK;
    int uses = 0;
    for (uint32_t i = 0; i < L->p->next && !uses; i++)
        uses = L->p->ext[i].kind == PX_WGMMA_MMA;
    if (!uses)
        return PA_OK;
    size_t n = (size_t)L->csize * L->nwgs, words = (L->p->nregs + 63) / 64;
    L->wgp = calloc(n, sizeof *L->wgp);
    if (!L->wgp)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the wgmma checks");
    for (size_t i = 0; i < n; i++)
        if (!(L->wgp[i].bits = calloc(words ? words : 1, sizeof(uint64_t))))
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the wgmma checks");
    return PA_OK;
}

void pi_wg_free(pi_launch_state *L)
{
    for (size_t i = 0; L->wgp && i < (size_t)L->csize * L->nwgs; i++) {
        free(L->wgp[i].ops);
        free(L->wgp[i].bits);
    }
    free(L->wgp);
    L->wgp = NULL;
}

static void set_bits(pi_launch_state *L, pi_wgpend *w)
{
    const pi_prog *p = L->p;
    memset(w->bits, 0, (p->nregs + 63) / 64 * sizeof(uint64_t));
    for (uint32_t i = 0; i < w->n; i++) {
        const pi_ext *x = &p->ext[p->ins[w->ops[i].pc].x];
        for (uint32_t e = 0; e < x->vcount; e++) {
            uint32_t r = p->vregs[x->vbase + e];
            w->bits[r / 64] |= 1ull << (r % 64);
        }
        for (int e = 0; e < 4 && (x->flags & PI_WG_AREG); e++)
            w->bits[x->regs[e] / 64] |= 1ull << (x->regs[e] % 64);
    }
}

void pi_wg_restart(pi_launch_state *L)
{
    for (uint32_t i = 0; L->wgp && i < L->csize * L->nwgs; i++) {
        pi_wgpend *w = &L->wgp[i];
        uint32_t top = 0, cta = i / L->nwgs, first = i % L->nwgs * 128;
        for (uint32_t k = first; k < first + 128 && k < L->nthr; k++)
            if (L->t[cta * L->nthr + k].wg_commits > top)
                top = L->t[cta * L->nthr + k].wg_commits;
        w->base += top + 1;      /* past the last CTA's groups, its uncommitted one included */
        w->n = 0;
        set_bits(L, w);
    }
}

uint32_t pi_wg_group(const pi_launch_state *L, uint32_t cta, uint32_t first)
{
    if (!L->wgp)
        return 0;
    return wg_of(L, cta, first)->base + L->t[cta * L->nthr + first].wg_commits + 1;
}

int pi_wg_issue(pi_launch_state *L, uint32_t cta, uint32_t first, uint32_t pc, pa_error *err)
{
    if (!L->wgp)
        return PA_OK;
    pi_wgpend *w = wg_of(L, cta, first);
    pi_thread *t = &L->t[cta * L->nthr];
    /* the operations every thread of the warpgroup has retired go */
    uint32_t done = UINT32_MAX;
    for (uint32_t k = first; k < first + 128 && k < L->nthr; k++)
        if (t[k].wg_done < done)
            done = t[k].wg_done;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < w->n; i++)
        if (w->ops[i].group > w->base + done)
            w->ops[keep++] = w->ops[i];
    int pruned = keep != w->n;
    w->n = keep;
    if (w->n == w->cap) {
        uint32_t cap = w->cap ? 2 * w->cap : 8;
        pi_wgop *o = realloc(w->ops, cap * sizeof *o);
        if (!o)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the wgmma checks");
        w->ops = o;
        w->cap = cap;
    }
    w->ops[w->n].pc = pc;
    w->ops[w->n].group = pi_wg_group(L, cta, first);
    w->ops[w->n].said = 0;
    w->n++;
    if (pruned)
        set_bits(L, w);
    else {
        const pi_prog *p = L->p;
        const pi_ext *x = &p->ext[p->ins[pc].x];
        for (uint32_t e = 0; e < x->vcount; e++) {
            uint32_t r = p->vregs[x->vbase + e];
            w->bits[r / 64] |= 1ull << (r % 64);
        }
        for (int e = 0; e < 4 && (x->flags & PI_WG_AREG); e++)
            w->bits[x->regs[e] / 64] |= 1ull << (x->regs[e] % 64);
    }
    for (uint32_t k = first; k < first + 128 && k < L->nthr; k++)
        t[k].wg_watch = 1;
    return PA_OK;
}

void pi_wg_commit(pi_launch_state *L, pi_thread *t)
{
    if (L->wgp)
        t->wg_commits++;
}

void pi_wg_wait(pi_launch_state *L, pi_thread *t, uint32_t n)
{
    if (!L->wgp)
        return;
    const pi_wgpend *w = wg_of(L, t->cta, t->tid);
    if (t->wg_commits > n && t->wg_commits - n > t->wg_done) {
        t->wg_done = t->wg_commits - n;
        pa_hb_wgmma_wait(L->m, t->cta, t->tid, t->tid / 128 * 128, w->base + t->wg_done);
    }
    t->wg_watch = 0;
    for (uint32_t i = 0; i < w->n && !t->wg_watch; i++)
        t->wg_watch = w->ops[i].group > w->base + t->wg_done;
}

/* The registers instruction `in` names (its guard first; only the guard if it is off). */
static uint32_t ins_regs(const pi_launch_state *L, const pi_thread *t, const pi_ins *in, uint32_t *r,
                         const uint32_t **v, uint32_t *nv)
{
    uint32_t n = 0;
    *v = NULL;
    *nv = 0;
    r[n++] = in->guard;
    if (in->guard && (PI_REG(t, in->guard) != 0) == in->pneg)
        return n;
    if (in->op == PI_CALL || in->op == PI_RET)
        return n;
    if (in->op != PI_EXT) {
        r[n++] = in->d, r[n++] = in->e, r[n++] = in->a, r[n++] = in->b, r[n++] = in->c, r[n++] = in->f;
        return n;
    }
    const pi_ext *x = &L->p->ext[in->x];
    r[n++] = x->d, r[n++] = x->s0, r[n++] = x->s1, r[n++] = x->s2, r[n++] = x->s3;
    r[n++] = x->a0.base, r[n++] = x->a1.base, r[n++] = x->a2.base;
    for (int i = 0; i < 5; i++)
        r[n++] = x->regs[i];
    if (x->kind == PX_WGMMA_MMA) {
        *v = L->p->vregs + x->vbase;
        *nv = x->vcount;
    }
    return n;
}

static int in_list(const uint32_t *v, uint32_t n, uint32_t r, uint32_t *at)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == r) {
            *at = i;
            return 1;
        }
    return 0;
}

/* Register r of `in` against pending operation o: 0 fine, else 1 (accumulator k) or 2 (A fragment k). */
static int touches(const pi_launch_state *L, const pi_wgop *o, const pi_ins *in, uint32_t r, int acc_of_in,
                   uint32_t *k)
{
    const pi_prog *p = L->p;
    const pi_ext *x = &p->ext[p->ins[o->pc].x];
    if ((x->flags & PI_WG_AREG) && in_list(x->regs, 4, r, k))
        return 2;
    if (!in_list(p->vregs + x->vbase, x->vcount, r, k))
        return 0;
    if (acc_of_in) {             /* the same accumulators with the same shape: ordered by the hardware */
        const pi_ext *y = &p->ext[in->x];
        if (y->s3 == x->s3 && y->info[0] == x->info[0] && y->info[1] == x->info[1] && y->vcount == x->vcount &&
            !memcmp(p->vregs + y->vbase, p->vregs + x->vbase, x->vcount * sizeof(uint32_t)))
            return 0;
    }
    return 1;
}

int pi_wg_check(pi_launch_state *L, pi_thread *t, const pi_ins *in, pa_error *err)
{
    pi_wgpend *w = wg_of(L, t->cta, t->tid);
    uint32_t r[16];
    const uint32_t *v;
    uint32_t nv, n = ins_regs(L, t, in, r, &v, &nv);
    for (uint32_t i = 0; i < n + nv; i++) {
        uint32_t reg = i < n ? r[i] : v[i - n];
        if (!reg || reg == PI_NOREG || reg >= L->p->nregs || !((w->bits[reg / 64] >> (reg % 64)) & 1))
            continue;
        for (uint32_t j = w->n; j-- > 0;) {
            pi_wgop *o = &w->ops[j];
            uint32_t k = 0;
            int what;
            if (o->group <= w->base + t->wg_done || o->said || !(what = touches(L, o, in, reg, i >= n, &k)))
                continue;
            uint32_t group = o->group - w->base;
            int line = pi_line(L->p, o->pc);
            o->said = 1;
            return pa_hazard(L->m->watch ? &L->m->watch->hz : NULL, err, PA_HZ_WGMMA_PENDING,
                             "thread %u of CTA %u accesses %s %u of the wgmma.mma_async at PTX line %d "
                             "(wgmma-group %u of its warpgroup), which no wgmma.wait_group of the thread has "
                             "retired (%u retired): its value is undefined until then",
                             t->tid, t->cta, what == 1 ? "accumulator register" : "A fragment register", k, line,
                             group, t->wg_done);
        }
    }
    return PA_OK;
}
