/* lower_space.c - isspacep and getctarank (run by space.c: they need the launch's
 * windows and the thread's CTA) and createpolicy (a constant: its value depends on
 * its qualifiers and immediates only).
 */
#include "ptx/exec/lower_int.h"
#include "sem/fp.h"

#include <math.h>
#include <string.h>

/* isspacep's spaces, in the order space.c tests them. */
static const char *const SPACES[] = {"global", "shared", "shared::cta", "shared::cluster", "local", "const",
                                     "param", "param::entry"};

/* createpolicy.fractional's 64-bit value, as an H200 gives it (tests/data/isa/createpolicy.json, 614
 * forms): bits 56-63 hold 0x10 | primary priority (evict_unchanged 0, evict_first 2, evict_normal 6,
 * evict_last 4) | 1 for a secondary evict_first; bits 52-55 the fraction in sixteenths, rounded up,
 * less one, from the fraction taken as an f16 (1.0 when absent). */
static uint64_t fractional_policy(const parts *P, uint32_t fraction_f32)
{
    /* the first L2::evict_* qualifier is the primary priority, a second one the secondary */
    unsigned prim = 0, first = 0;
    for (int i = 1, seen = 0; i < P->n; i++) {
        const char *q = P->q[i];
        if (strncmp(q, "L2::evict_", 10))
            continue;
        if (seen++)
            first = !strcmp(q, "L2::evict_first");
        else
            prim = !strcmp(q, "L2::evict_last") ? 4 : !strcmp(q, "L2::evict_normal") ? 6 :
                   !strcmp(q, "L2::evict_first") ? 2 : 0;
    }
    sem_fp v = sem_fp_unpack(&SEM_FMT_F32, fraction_f32, 0);
    sem_fp h = sem_fp_unpack(&SEM_FMT_F16, sem_fp_pack(&SEM_FMT_F16, &v, SEM_RN, 0), 0);
    double f = h.cls == SEM_FP_FINITE ? ldexp((double)h.sig, h.exp) : 0.0;
    int n = (int)ceil(f * 16) - 1;
    n = n < 0 ? 0 : n > 15 ? 15 : n;
    return (uint64_t)(0x10 | prim | first) << 56 | (uint64_t)n << 52;
}

int lw_space(lw *L, const ptx_item *it, const parts *P)
{
    const char *op = P->q[0];
    pi_ins *in = lw_emit(L);
    if (!in)
        return -1;
    if (!strcmp(op, "createpolicy")) {       /* .fractional with an immediate (text/notyet.c: the rest) */
        if (lw_need_ops(L, it, "createpolicy.fractional", 1, 2))
            return -1;
        uint32_t frac = 0x3F800000u;                 /* 1.0 */
        if (it->nops == 2)
            frac = (uint32_t)lw_float_bits(L->m, lw_op(L, it, 1)->name, 32);
        in->op = PI_MOV;
        in->w = 64;
        in->mask = ~0ull;
        in->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        in->a = lw_const(L, fractional_policy(P, frac));
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
