/* lower_space.c - isspacep and getctarank (run by space.c: they need the launch's
 * windows and the thread's CTA) and createpolicy (policy.c: a constant when its fraction is an
 * immediate, run by space.c when it is a register; .cvt.L2 a move).
 */
#include "ptx/exec/lower_int.h"

#include <string.h>

/* isspacep's spaces, in the order space.c tests them. */
static const char *const SPACES[] = {"global", "shared", "shared::cta", "shared::cluster", "local", "const",
                                     "param", "param::entry"};

int lw_space(lw *L, const ptx_item *it, const parts *P)
{
    const char *op = P->q[0];
    pi_ins *in = lw_emit(L);
    if (!in)
        return -1;
    if (!strcmp(op, "createpolicy") && lw_has(P, "cvt")) {
        /* .cvt.L2: an H200 returns the access property unchanged (tools/device/record_policy_forms.py:
         * 6039 words, the libcu++ constants, every createpolicy value recorded, random ones) */
        if (lw_need_ops(L, it, "createpolicy.cvt", 2, 2))
            return -1;
        in->op = PI_MOV;
        in->w = 64;
        in->mask = ~0ull;
        in->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        in->a = lw_src(L, lw_op(L, it, 1), 64);
        return 0;
    }
    if (!strcmp(op, "createpolicy")) {       /* .fractional (text/notyet.c: .range) */
        if (lw_need_ops(L, it, "createpolicy.fractional", 1, 2))
            return -1;
        unsigned top = pi_policy_top(P);
        const ptx_operand *f = it->nops == 2 ? lw_op(L, it, 1) : NULL;
        if (f && f->kind == PTX_OP_REG) {    /* its value is known when the thread runs it (space.c) */
            pi_ext *x = lw_ext(L, in, PX_POLICY);
            if (!x)
                return -1;
            x->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
            x->s0 = lw_src(L, f, 32);
            x->sub = (int8_t)top;
            return 0;
        }
        uint32_t frac = 0x3F800000u;                 /* 1.0 when absent */
        if (f)
            frac = (uint32_t)lw_float_bits(L->m, f->name, 32);
        in->op = PI_MOV;
        in->w = 64;
        in->mask = ~0ull;
        in->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        in->a = lw_const(L, pi_policy_fractional(top, frac));
        return 0;
    }
    if (lw_need_ops(L, it, op, 2, 2))
        return -1;
    pi_ext *x = lw_ext(L, in, !strcmp(op, "isspacep") ? PX_ISSPACEP : PX_GETCTARANK);
    if (!x)
        return -1;
    x->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
    x->s0 = lw_src(L, lw_op(L, it, 1), 64);
    if (x->kind == PX_ISSPACEP) {
        x->sub = -1;
        for (int k = 0; k < (int)(sizeof SPACES / sizeof SPACES[0]); k++)
            if (lw_has(P, SPACES[k]))
                x->sub = (int8_t)k;
        if (x->sub < 0)
            return lw_unsupported(L, it, ": no address space");
    } else {
        x->flags = (uint8_t)lw_has(P, "shared::cluster");    /* a shared::cluster address, not a generic one */
    }
    return 0;
}
