/* lower_coll.c - the forms that involve more than one thread: bar.sync /
 * barrier{.cluster}, the warp collectives (elect, shfl, vote, ldmatrix,
 * stmatrix) and wgmma. The interpreter runs them at a rendezvous (coll.c),
 * so their lowering records who takes part rather than a per-thread effect.
 */
#include "ptx/lower_int.h"

#include <stdlib.h>
#include <string.h>

int lw_bar(lw *L, const ptx_item *it, const parts *P)
{
    pi_ins *in = lw_emit(L);
    if (!in)
        return -1;
    if (lw_has(P, "cluster")) {
        pi_ext *x = lw_ext(L, in, lw_has(P, "arrive") ? PX_CLUSTER_ARRIVE : PX_CLUSTER_WAIT);
        if (!x)
            return -1;
        x->sub = (int8_t)lw_has(P, "relaxed");
        if (!lw_has(P, "arrive") && !lw_has(P, "wait"))
            return lw_unsupported(L, it, "");
        return 0;
    }
    if (!strcmp(P->q[0], "bar") && P->n > 1 && !strcmp(P->q[1], "warp")) {
        pi_ext *x = lw_ext(L, in, PX_WARP_SYNC);
        if (!x || lw_need_ops(L, it, "bar.warp.sync", 1, 1))
            return -1;
        x->s0 = lw_src(L, lw_op(L, it, 0), 32);
        return 0;
    }
    int arrive = lw_has(P, "arrive");
    if (!arrive && !lw_has(P, "sync") && !(P->n == 1))
        return lw_unsupported(L, it, "");
    pi_ext *x = lw_ext(L, in, arrive ? PX_BAR_ARRIVE : PX_BAR_SYNC);
    if (!x || lw_need_ops(L, it, "bar.sync", arrive ? 2 : 1, 2))
        return -1;
    x->s0 = lw_src(L, lw_op(L, it, 0), 32);
    if (it->nops == 2)
        x->s1 = lw_src(L, lw_op(L, it, 1), 32);
    return 0;
}

int lw_warp(lw *L, const ptx_item *it, const parts *P)
{
    pi_ins *in = lw_emit(L);
    if (!in)
        return -1;
    if (!strcmp(P->q[0], "elect")) {
        pi_ext *x = lw_ext(L, in, PX_ELECT);
        if (!x || lw_need_ops(L, it, "elect.sync", 2, 2))
            return -1;
        const ptx_operand *d = lw_op(L, it, 0);
        x->d = lw_dst(L, d, 1, NULL);
        x->s1 = PI_NOREG;
        if (d->nelem == 1)
            x->s1 = lw_dst(L, lw_el(L, d, 0), 1, NULL);     /* the predicate */
        x->s0 = lw_src(L, lw_op(L, it, 1), 32);
        return 0;
    }
    if (!strcmp(P->q[0], "shfl")) {
        pi_ext *x = lw_ext(L, in, PX_SHFL);
        if (!x || lw_need_ops(L, it, "shfl.sync", 5, 5))
            return -1;
        x->sub = lw_has(P, "up") ? 0 : lw_has(P, "down") ? 1 : lw_has(P, "bfly") ? 2 : lw_has(P, "idx") ? 3 : -1;
        if (x->sub < 0)
            return lw_unsupported(L, it, "");
        const ptx_operand *d = lw_op(L, it, 0);
        x->d = lw_dst(L, d, 1, NULL);
        if (d->nelem == 1)
            x->s3 = lw_dst(L, lw_el(L, d, 0), 1, NULL);
        x->s0 = lw_src(L, lw_op(L, it, 1), 32);
        x->s1 = lw_src(L, lw_op(L, it, 2), 32);
        x->s2 = lw_src(L, lw_op(L, it, 3), 32);
        x->regs[0] = lw_src(L, lw_op(L, it, 4), 32);
        return 0;
    }
    if (!strcmp(P->q[0], "vote")) {
        pi_ext *x = lw_ext(L, in, PX_VOTE);
        if (!x || lw_need_ops(L, it, "vote.sync", 3, 3))
            return -1;
        x->sub = lw_has(P, "all") ? 0 : lw_has(P, "any") ? 1 : lw_has(P, "uni") ? 2 : lw_has(P, "ballot") ? 3 : -1;
        if (x->sub < 0)
            return lw_unsupported(L, it, "");
        x->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        const ptx_operand *po = lw_op(L, it, 1);
        ptx_operand q = *po;
        q.neg = 0;
        x->s0 = lw_src(L, &q, 1);
        x->flags = po->neg;
        x->s1 = lw_src(L, lw_op(L, it, 2), 32);
        return 0;
    }
    if (!strcmp(P->q[0], "ldmatrix") || !strcmp(P->q[0], "stmatrix")) {
        int st = P->q[0][0] == 's';
        if (!lw_has(P, "m8n8") || !lw_has(P, "b16"))
            return lw_unsupported(L, it, ": only .m8n8 .b16 is modelled");
        pi_ext *x = lw_ext(L, in, st ? PX_STMATRIX : PX_LDMATRIX);
        if (!x || lw_need_ops(L, it, st ? "stmatrix" : "ldmatrix", 2, 2))
            return -1;
        x->n = (uint8_t)(lw_has(P, "x4") ? 4 : lw_has(P, "x2") ? 2 : 1);
        x->flags = (uint8_t)lw_has(P, "trans");
        x->a0 = lw_addr(L, lw_op(L, it, st ? 0 : 1));
        const ptx_operand *ro = lw_op(L, it, st ? 1 : 0);
        uint32_t regs[5];
        int n = lw_reg_list(L, ro, regs, 4, !st, 32);
        if (n != x->n) {
            if (!L->bad)
                lw_lerr(L, ro->line, ro->col, "the register vector does not match .x%s%s", "", "");
            return -1;
        }
        memcpy(x->regs, regs, sizeof(uint32_t) * 4);
        return 0;
    }
    return lw_unsupported(L, it, "");
}

int lw_wgmma(lw *L, const ptx_item *it, const parts *P)
{
    pi_ins *in = lw_emit(L);
    if (!in || P->n < 2)
        return -1;
    const char *k = P->q[1];
    if (!strcmp(k, "fence"))
        return lw_ext(L, in, PX_WGMMA_FENCE) ? 0 : -1;
    if (!strcmp(k, "commit_group"))
        return lw_ext(L, in, PX_WGMMA_COMMIT) ? 0 : -1;
    if (!strcmp(k, "wait_group")) {
        pi_ext *x = lw_ext(L, in, PX_WGMMA_WAIT);
        if (!x || lw_need_ops(L, it, "wgmma.wait_group", 1, 1))
            return -1;
        x->s0 = lw_src(L, lw_op(L, it, 0), 32);
        return 0;
    }
    if (strcmp(k, "mma_async"))
        return lw_unsupported(L, it, "");
    /* wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16} d, a-desc, b-desc,
       scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b */
    const char *shape = NULL;
    if (!lw_has_prefix(P, "m64n", &shape))
        return lw_unsupported(L, it, "");
    int nn = atoi(shape + 4);
    tinfo dt, at, bt;
    if (P->n < 3 || !lw_type_of(P->q[P->n - 3], &dt) || !lw_type_of(P->q[P->n - 2], &at) ||
        !lw_type_of(P->q[P->n - 1], &bt))
        return lw_unsupported(L, it, "");
    if (dt.is_float != 1 || !((at.is_float == 2 && bt.is_float == 2) || (at.is_float == 3 && bt.is_float == 3)))
        return lw_unsupported(L, it, ": the model runs .f32 accumulators with .f16 or .bf16 inputs");
    if (lw_has(P, "sp") || lw_has(P, "satfinite"))
        return lw_unsupported(L, it, "");
    pi_ext *x = lw_ext(L, in, PX_WGMMA_MMA);
    if (!x || lw_need_ops(L, it, "wgmma.mma_async", 8, 8))
        return -1;
    x->sub = (int8_t)(at.is_float == 3);
    x->s3 = (uint32_t)nn;
    const ptx_operand *d = lw_op(L, it, 0);
    if (d->kind != PTX_OP_VEC || d->nelem != nn / 2) {
        lw_lerr(L, d->line, d->col, "m64n%s needs %s accumulator registers", shape + 4, "N/2");
        return -1;
    }
    pi_prog *p = L->p;
    x->vbase = p->nvregs;
    x->vcount = d->nelem;
    for (int i = 0; i < d->nelem; i++) {
        if (GROWN(p->vregs, p->nvregs, L->capv)) {
            L->oom = 1;
            return -1;
        }
        p->vregs[p->nvregs++] = lw_dst(L, lw_el(L, d, i), 0, NULL);
    }
    const ptx_operand *ao = lw_op(L, it, 1);
    if (ao->kind == PTX_OP_VEC)
        return lw_unsupported(L, it, ": A from registers is not modelled (A must be a descriptor)");
    x->s0 = lw_src(L, ao, 64);
    x->s1 = lw_src(L, lw_op(L, it, 2), 64);
    x->s2 = lw_src(L, lw_op(L, it, 3), 1);
    for (int i = 0; i < 4; i++) {
        const ptx_operand *o = lw_op(L, it, 4 + i);
        if (o->kind != PTX_OP_IMM) {
            lw_lerr(L, o->line, o->col, "expected an immediate%s%s", "", "");
            return -1;
        }
        x->info[i < 3 ? i : 2] = 0;
        if (i < 2 && o->imm != 1 && o->imm != -1)
            return lw_unsupported(L, it, ": imm-scale must be 1 or -1");
        if (i == 0)
            x->flags |= (uint8_t)(o->imm < 0 ? 1 : 0);
        if (i == 1)
            x->flags |= (uint8_t)(o->imm < 0 ? 2 : 0);
        if (i == 2)
            x->flags |= (uint8_t)(o->imm ? 4 : 0);
        if (i == 3)
            x->flags |= (uint8_t)(o->imm ? 8 : 0);
    }
    return 0;
}
