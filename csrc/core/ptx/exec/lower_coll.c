/* lower_coll.c - the forms that involve more than one thread: bar.sync /
 * barrier{.cluster}, the warp collectives (elect, shfl, vote, ldmatrix,
 * stmatrix) and wgmma. The interpreter runs them at a rendezvous (coll.c),
 * so their lowering records who takes part rather than a per-thread effect.
 */
#include "ptx/exec/lower_int.h"
#include "ptx/exec/mma_exec.h"

#include "sem/mma.h"

#include <stdio.h>
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
    if (lw_has(P, "red")) {                 /* bar.red.popc.u32 d, a{, b}, {!}c; bar.red.op.pred p, a{, b}, {!}c */
        pi_ext *x = lw_ext(L, in, PX_BAR_RED);
        if (!x || lw_need_ops(L, it, "bar.red", 3, 4))
            return -1;
        x->sub = (int8_t)(lw_has(P, "popc") ? 0 : lw_has(P, "and") ? 1 : 2);
        x->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        x->s0 = lw_src(L, lw_op(L, it, 1), 32);
        if (it->nops == 4)
            x->s1 = lw_src(L, lw_op(L, it, 2), 32);
        ptx_operand c = *lw_op(L, it, it->nops - 1);
        x->flags = (uint8_t)(c.neg != 0);
        c.neg = 0;
        x->s2 = lw_src(L, &c, 1);
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
    /* wgmma.mma_async.sync.aligned.m64nNkK{.satfinite}.dtype.atype.btype{.and.popc} d, a-desc | {a},
       b-desc, scale-d {, imm-scale-a, imm-scale-b {, imm-trans-a}, imm-trans-b}: the trailing
       immediates as the types have them (f16 / bf16: scales and transposes, the transpose of A
       only with a descriptor; tf32 / fp8: scales; integers and b1: none) */
    const char *shape = NULL;
    if (!lw_has_prefix(P, "m64n", &shape))
        return lw_unsupported(L, it, "");
    /* .sp: d, a, b-desc, sp-meta, sp-sel, scale-d, ... (PTX ISA 9.7.15.6) */
    const int sp = lw_has(P, "sp"), spo = sp ? 2 : 0;
    unsigned nn = 0, kk = 0;
    if (sscanf(shape, "m64n%uk%u", &nn, &kk) != 2 || nn < 8 || nn > 256 || nn % 8)
        return lw_unsupported(L, it, "");
    int ty[3], nt = 0;
    for (int i = 1; i < P->n && nt < 3; i++) {
        static const struct { const char *n; int t; } T[] = {
            {"f16", SEM_T_F16}, {"bf16", SEM_T_BF16}, {"tf32", SEM_T_TF32}, {"f32", SEM_T_F32},
            {"e4m3", SEM_T_E4M3}, {"e5m2", SEM_T_E5M2}, {"s8", SEM_T_S8}, {"u8", SEM_T_U8},
            {"b1", SEM_MMA_T_B1}, {"s32", SEM_T_S32},
        };
        for (size_t j = 0; j < sizeof T / sizeof T[0]; j++)
            if (!strcmp(P->q[i], T[j].n))
                ty[nt++] = T[j].t;
    }
    if (nt != 3)
        return lw_unsupported(L, it, "");
    int dt = ty[0], at = ty[1], bt = ty[2];
    int f16ish = at == SEM_T_F16 || at == SEM_T_BF16, integer = dt == SEM_T_S32;
    pi_ext *x = lw_ext(L, in, PX_WGMMA_MMA);
    if (!x)
        return -1;
    const ptx_operand *ao = lw_op(L, it, 1);
    int areg = ao->kind == PTX_OP_VEC;
    int nimm = integer ? 0 : f16ish ? (areg ? 3 : 4) : 2;
    if (lw_need_ops(L, it, sp ? "wgmma.mma_async.sp" : "wgmma.mma_async", 4 + spo + nimm, 4 + spo + nimm))
        return -1;
    x->info[0] = (uint32_t)at | (uint32_t)bt << 16;
    x->info[1] = (uint32_t)dt | (uint32_t)kk << 16;
    x->s3 = nn;
    x->flags = (uint8_t)((lw_has(P, "satfinite") ? PI_WG_SATFINITE : 0) | (lw_has(P, "and") ? PI_WG_AND : 0) |
                         (areg ? PI_WG_AREG : 0));
    const ptx_operand *d = lw_op(L, it, 0);
    uint32_t nd = dt == SEM_T_F16 ? nn / 4 : nn / 2;
    if (d->kind != PTX_OP_VEC || (uint32_t)d->nelem != nd) {
        char want[32];
        snprintf(want, sizeof want, "%u", nd);
        lw_lerr(L, d->line, d->col, "m64n%s needs %s accumulator registers", shape + 4, want);
        return -1;
    }
    pi_prog *p = L->p;
    x->vbase = p->nvregs;
    x->vcount = nd;
    for (uint32_t i = 0; i < nd; i++) {
        if (GROWN(p->vregs, p->nvregs, L->capv)) {
            L->oom = 1;
            return -1;
        }
        p->vregs[p->nvregs++] = lw_dst(L, lw_el(L, d, (int)i), 0, NULL);
    }
    x = &p->ext[in->x];
    if (areg) {
        if (ao->nelem != 4) {
            lw_lerr(L, ao->line, ao->col, "wgmma.mma_async's A from registers is %s%s", "4 32-bit registers", "");
            return -1;
        }
        for (int i = 0; i < 4; i++)
            x->regs[i] = lw_src(L, lw_el(L, ao, i), 32);
        x->s0 = PI_NOREG;
    } else {
        x->s0 = lw_src(L, ao, 64);
    }
    x->s1 = lw_src(L, lw_op(L, it, 2), 64);
    x->s2 = lw_src(L, lw_op(L, it, 3 + spo), 1);
    if (sp) {
        const ptx_operand *f = lw_op(L, it, 4);
        if (f->kind != PTX_OP_IMM) {
            lw_lerr(L, f->line, f->col, "wgmma.mma_async.sp's sparsity selector is an integer constant%s%s", "", "");
            return -1;
        }
        if (f->imm < 0 || !pi_sp_selector_ok(at, kk, (uint32_t)f->imm)) {
            char msg[200];
            snprintf(msg, sizeof msg, "sparsity selector %lld: for k%u with this type it is %s (PTX ISA 9.7.15.6.1; "
                     "another value is undefined behavior)", (long long)f->imm, kk,
                     pi_sp_selector_ok(at, kk, 1) ? "0 or 1 (a thread pair)" : "0 (all four threads)");
            lw_lerr(L, f->line, f->col, "%s%s", msg, "");
            return -1;
        }
        uint32_t e = lw_src(L, lw_op(L, it, 3), 32);
        x = &p->ext[in->x];
        x->regs[4] = e;
        x->sub = (int8_t)f->imm;
        x->flags |= PI_WG_SP;
    }
    for (int i = 0; i < nimm; i++) {
        const ptx_operand *o = lw_op(L, it, 4 + spo + i);
        if (o->kind != PTX_OP_IMM) {
            lw_lerr(L, o->line, o->col, "expected an immediate%s%s", "", "");
            return -1;
        }
        /* which immediate: imm-scale-a, imm-scale-b, then imm-trans-a (descriptor A), imm-trans-b */
        int which = i < 2 ? i : (areg ? 3 : i);
        if (which < 2 && o->imm != 1 && o->imm != -1)
            return lw_unsupported(L, it, ": imm-scale must be 1 or -1");
        if (which >= 2 && o->imm != 0 && o->imm != 1)
            return lw_unsupported(L, it, ": imm-trans must be 0 or 1");
        if (which == 0 && o->imm < 0)
            x->flags |= PI_WG_NEG_A;
        if (which == 1 && o->imm < 0)
            x->flags |= PI_WG_NEG_B;
        if (which == 2 && o->imm)
            x->flags |= PI_WG_TRANS_A;
        if (which == 3 && o->imm)
            x->flags |= PI_WG_TRANS_B;
    }
    return 0;
}
