/* lower_scalar.c - the register forms no row of the table hands to the
 * semantics library: branches, ret / exit, hints with no effect on the bytes,
 * cvta, mapa and mov (arithmetic, compares, selects and conversions are rows
 * with a semantics entry: lower_sem.c).
 */
#include "ptx/exec/lower_int.h"

#include <string.h>

/* Branches, hints, address conversions and moves. */
int lw_scalar(lw *L, const ptx_item *it, const parts *P)
{
    const char *op = P->q[0];
    tinfo t;
    int typed = lw_last_type(P, 1, &t);
    pi_ins *in;
#define NEED(lo, hi)                          \
    do {                                      \
        if (lw_need_ops(L, it, op, lo, hi))      \
            return -1;                        \
    } while (0)
#define NEW()                                 \
    do {                                      \
        in = lw_emit(L);                         \
        if (!in)                              \
            return -1;                        \
    } while (0)
    if (!strcmp(op, "bra")) {
        NEED(1, 1);
        const ptx_operand *o = lw_op(L, it, 0);
        if (o->kind != PTX_OP_SYM) {
            lw_lerr(L, o->line, o->col, "bra takes a label%s%s", "", "");
            return -1;
        }
        uint32_t target = lw_label(L, o->name, o->line, o->col);
        if (target == PI_NOREG)
            return -1;
        NEW();
        in->op = PI_BRA;
        in->x = target;
        return 0;
    }
    if (!strcmp(op, "ret") || !strcmp(op, "exit")) {
        NEW();
        in->op = op[0] == 'r' && L->fn ? PI_RET : PI_EXIT;    /* ret in a .func: to its caller */
        return 0;
    }
    if (!strcmp(op, "trap") || !strcmp(op, "brkpt")) {
        NEW();
        pi_ext *x = lw_ext(L, in, PX_TRAP);
        if (!x)
            return -1;
        x->sub = op[0] == 'b';
        return 0;
    }
    if (!strcmp(op, "discard")) {
        /* a weak write of indeterminate values to the 128-byte line (check/discard.c) */
        NEED(2, 2);
        NEW();
        pi_ext *x = lw_ext(L, in, PX_DISCARD);
        if (!x)
            return -1;
        x->space = (uint8_t)(lw_has(P, "global") ? PI_SP_GLOBAL : PI_SP_GENERIC);
        x->a0 = lw_addr(L, lw_op(L, it, 0));
        return 0;
    }
    if (!strcmp(op, "nanosleep") || (!strcmp(op, "prefetch") || !strcmp(op, "prefetchu")) ||
        !strcmp(op, "griddepcontrol") || !strcmp(op, "pmevent") || !strcmp(op, "applypriority") ||
        !strcmp(op, "setmaxnreg")) {
        /* hints with no effect on the bytes: done (pmevent signals a profiler the model has not;
           setmaxnreg moves registers between a CTA's warps, and the model allocates none: every
           register a thread declares is always there) */
        NEW();
        in->op = PI_NOP;
        return 0;
    }
    if (!strcmp(op, "cvta")) {
        NEED(2, 2);
        int to = lw_has(P, "to");
        uint64_t base;
        if (lw_has(P, "shared") || lw_has(P, "shared::cta") || lw_has(P, "shared::cluster"))
            base = PI_SHARED_BASE;
        else if (lw_has(P, "param") || lw_has(P, "param::entry"))
            base = 0;    /* parameter addresses are generic already */
        else if (lw_has(P, "global") || lw_has(P, "const"))
            base = 0;    /* .const variables are in global memory, read-only (lower_vars.c) */
        else if (lw_has(P, "local"))
            base = PI_LOCAL_BASE;
        else
            return lw_unsupported(L, it, ": no such window");
        NEW();
        in->op = to ? PI_CVTA_TO : PI_CVTA_FROM;
        in->imm = base;
        in->w = (uint8_t)(typed ? t.bits : 64);
        in->mask = lw_wmask(in->w);
        in->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        in->a = lw_src(L, lw_op(L, it, 1), 64);
        if (lw_has(P, "param") || lw_has(P, "param::entry")) {
            /* a parameter's address is its offset in the window; a parameter symbol's value
               (mov.u64 %rd, param) is its generic address already, and Triton's
               mov.b32 %r, param; cvt.u64.u32 keeps the offset: cvta.param takes both into the
               window, cvta.to.param both out of it */
            in->op = to ? PI_AND : PI_OR;
            in->b = lw_const(L, to ? PI_WINDOW_SIZE - 1 : PI_PARAM_BASE);
        }
        return 0;
    }
    if (!strcmp(op, "mapa")) {
        NEED(3, 3);
        NEW();
        in->op = PI_MAPA;
        in->w = (uint8_t)(typed ? t.bits : 32);
        in->mask = lw_wmask(in->w);
        in->sub = (uint8_t)!lw_has(P, "shared::cluster");    /* generic addresses */
        in->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        in->a = lw_src(L, lw_op(L, it, 1), 64);
        in->b = lw_src(L, lw_op(L, it, 2), 32);
        return 0;
    }
    if (!typed)
        return lw_unsupported(L, it, ": no operand type");
    int w = t.bits;
    if (!strcmp(op, "mov")) {
        NEED(2, 2);
        const ptx_operand *d = lw_op(L, it, 0), *a = lw_op(L, it, 1);
        if (w == 128)
            return lw_mov128(L, it, d, a);
        NEW();
        static const char *const TIMERS[] = {"%globaltimer", "%globaltimer_lo", "%globaltimer_hi", "%clock",
                                             "%clock64"};
        for (int k = 0; a->kind == PTX_OP_REG && k < (int)(sizeof TIMERS / sizeof TIMERS[0]); k++)
            if (lw_span_is(L->m, a->name, TIMERS[k])) {      /* read when it runs (ops.c) */
                pi_ext *x = lw_ext(L, in, PX_TIMER);
                if (!x)
                    return -1;
                x->sub = (int8_t)k;
                x->d = lw_dst(L, d, 0, NULL);
                return 0;
            }
        /* PTX ISA mov: a b16 / b32 / b64 register packs or unpacks two or four elements of
           width / n bits, the first in the low bits; `_` sinks an unpacked element */
        const ptx_operand *v = a->kind == PTX_OP_VEC ? a : d->kind == PTX_OP_VEC ? d : NULL;
        if (v) {
            if (w > 64 || (v->nelem != 2 && v->nelem != 4) || w / v->nelem < 8)
                return lw_unsupported(L, it, ": packs b16 from 2 x 8, b32 from 2 x 16 or 4 x 8, b64 from 2 x 32 "
                                      "or 4 x 16 bits");
            int sw = w / v->nelem;
            if (v == a) {
                in->op = PI_MOV_PACK;
                in->sw = (uint8_t)sw;
                in->sub = (uint8_t)v->nelem;
                in->d = lw_dst(L, d, 0, NULL);
                in->a = lw_src(L, lw_el(L, a, 0), sw);
                in->b = lw_src(L, lw_el(L, a, 1), sw);
                if (v->nelem == 4) {
                    in->c = lw_src(L, lw_el(L, a, 2), sw);
                    in->f = lw_src(L, lw_el(L, a, 3), sw);
                }
                return 0;
            }
            in->op = PI_MOV_UNPACK;
            in->sw = (uint8_t)sw;
            in->sub = (uint8_t)v->nelem;
            in->a = lw_src(L, a, w);
            in->d = lw_dst(L, lw_el(L, d, 0), 1, NULL);
            in->e = lw_dst(L, lw_el(L, d, 1), 1, NULL);
            if (v->nelem == 4) {            /* c and f are destinations here; a sink writes register 1 */
                in->c = lw_dst(L, lw_el(L, d, 2), 1, NULL);
                in->f = lw_dst(L, lw_el(L, d, 3), 1, NULL);
                in->c = in->c == PI_NOREG ? 1 : in->c;
                in->f = in->f == PI_NOREG ? 1 : in->f;
            }
            return 0;
        }
        in->op = PI_MOV;
        in->w = (uint8_t)w;
        in->mask = lw_wmask(w);
        in->d = lw_dst(L, d, 0, NULL);
        in->a = lw_src(L, a, w);
        return 0;
    }
    return lw_unsupported(L, it, "");
#undef NEED
#undef NEW
}
