/* lower_b128.c - mov.b128: a .b128 register (two 64-bit registers, its low half first) copied,
 * packed from two 64-bit or four 32-bit values, unpacked into them (`_` sinks one), or set from
 * an immediate (zero-extended, as ptxas does). One PX_MOV128 (ops.c): the sources' pieces,
 * lowest first, in s0..s3 (x->sub of them), the destinations' in regs[] (x->n of them).
 */
#include "ptx/exec/lower_int.h"

int lw_mov128(lw *L, const ptx_item *it, const ptx_operand *d, const ptx_operand *a)
{
    pi_ins *in = lw_emit(L);
    pi_ext *x = in ? lw_ext(L, in, PX_MOV128) : NULL;
    if (!x)
        return -1;
    if (a->kind == PTX_OP_VEC) {
        if (a->nelem != 2 && a->nelem != 4)
            return lw_unsupported(L, it, ": a .b128 packs 2 x 64 or 4 x 32 bits");
        uint32_t *s[4] = {&x->s0, &x->s1, &x->s2, &x->s3};
        for (int i = 0; i < a->nelem; i++)
            *s[i] = lw_src(L, lw_el(L, a, i), 128 / a->nelem);
        x->sub = (int8_t)a->nelem;
    } else {
        if (lw_b128_halves(L, a, 0, &x->s0, &x->s1))
            return -1;
        x->sub = 2;
    }
    if (d->kind == PTX_OP_VEC) {
        if (d->nelem != 2 && d->nelem != 4)
            return lw_unsupported(L, it, ": a .b128 unpacks into 2 x 64 or 4 x 32 bits");
        for (int i = 0; i < d->nelem; i++)
            x->regs[i] = lw_dst(L, lw_el(L, d, i), 1, NULL);
        x->n = (uint8_t)d->nelem;
    } else {
        if (lw_b128_halves(L, d, 1, &x->regs[0], &x->regs[1]))
            return -1;
        x->n = 2;
    }
    return 0;
}
