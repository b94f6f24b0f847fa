/* lower_mma.c - mma.sync: the form's shape, layouts and types, and the
 * registers of its four vector operands, into one PI_EXT record (mma_exec.h
 * says which field holds what). The warp meets at the instruction (coll.c) and
 * mma_exec.c computes D from every lane's fragments.
 */
#include "ptx/exec/lower_int.h"
#include "ptx/exec/mma_exec.h"

#include "sem/mma.h"

#include <stdio.h>
#include <string.h>

/* The registers of a vector operand {r0, r1, ...} of n elements of `bits`-bit
 * registers, appended to prog->vregs. */
static int vec_regs(lw *L, const ptx_item *it, int opi, const char *what, int n, int bits, int dst)
{
    const ptx_operand *o = lw_op(L, it, opi);
    if (o->kind != PTX_OP_VEC || o->nelem != n) {
        char want[48];
        snprintf(want, sizeof want, "%d %d-bit registers { }", n, bits);
        lw_lerr(L, o->line, o->col, "mma.sync's %s is a vector of %s", what, want);
        return -1;
    }
    pi_prog *p = L->p;
    for (int i = 0; i < n; i++) {
        const ptx_operand *e = lw_el(L, o, i);
        uint8_t cls = 0;
        uint32_t r;
        if (dst) {
            r = lw_dst(L, e, 0, &cls);
        } else if (e->kind == PTX_OP_REG) {
            r = lw_name_reg(L, e, &cls);
        } else {
            r = lw_src(L, e, bits);
            cls = (uint8_t)bits;
        }
        if (r == PI_NOREG)
            return -1;
        if (cls != bits) {
            char want[48];
            snprintf(want, sizeof want, "%d-bit registers", bits);
            lw_lerr(L, e->line, e->col, "mma.sync's %s takes %s", what, want);
            return -1;
        }
        if (GROWN(p->vregs, p->nvregs, L->capv)) {
            L->oom = 1;
            return -1;
        }
        p->vregs[p->nvregs++] = r;
    }
    return 0;
}

int lw_mma(lw *L, const ptx_item *it, const parts *P)
{
    pi_ins *in = lw_emit(L);
    if (!in)
        return -1;
    if (!lw_has(P, "sync") || !lw_has(P, "aligned"))
        return lw_unsupported(L, it, "");
    const char *kind = NULL;
    if (lw_has_prefix(P, "kind::", &kind) || lw_has(P, "block_scale"))
        return lw_unsupported(L, it, ": the sm_120a forms (.kind, .block_scale) are not modelled");
    int sp = lw_has(P, "sp") || lw_has(P, "sp::ordered_metadata");
    unsigned m = 0, n = 0, k = 0, flags = 0;
    int types[4], nt = 0, nlayout = 0;
    for (int i = 1; i < P->n; i++) {
        const char *q = P->q[i];
        int t = sem_mma_type_of(q);
        if (t && nt < 4)
            types[nt++] = t;
        else if (q[0] == 'm' && sscanf(q, "m%un%uk%u", &m, &n, &k) == 3)
            ;
        else if (!strcmp(q, "row") || !strcmp(q, "col")) {
            if (nlayout == 0 && q[0] == 'c')
                flags |= PI_MMA_ACOL;
            if (nlayout == 1 && q[0] == 'r')
                flags |= PI_MMA_BROW;
            nlayout++;
        } else if (!strcmp(q, "satfinite"))
            flags |= PI_MMA_SATFINITE;
        else if (!strcmp(q, "and"))
            flags |= PI_MMA_AND;
    }
    if (nt != 4 || !m || !n || !k)
        return lw_unsupported(L, it, "");
    int dt = types[0], at = types[1], bt = types[2], ct = types[3];
    int counts[4];
    sem_mma_reg_counts((int)m, (int)n, (int)k, at, bt, ct, dt, counts);
    if (sp)
        counts[1] /= 2;                  /* A holds the k/2 non-zero elements of its rows (PTX ISA 9.7.14.6) */
    pi_ext *x = lw_ext(L, in, PX_MMA);
    if (!x || lw_need_ops(L, it, sp ? "mma.sp" : "mma.sync", sp ? 6 : 4, sp ? 6 : 4))
        return -1;
    if (sp) {
        /* e: the metadata (a register or a constant), f: the sparsity selector, a constant */
        const ptx_operand *f = lw_op(L, it, 5);
        if (f->kind != PTX_OP_IMM) {
            lw_lerr(L, f->line, f->col, "mma.sp's sparsity selector is an integer constant%s%s", "", "");
            return -1;
        }
        if (f->imm < 0 || !pi_sp_selector_ok(at, k, (uint32_t)f->imm)) {
            char msg[200];
            snprintf(msg, sizeof msg, "sparsity selector %lld: for m16n8k%u with this type it names %s (PTX ISA "
                     "9.7.14.6.1; another value is undefined behavior)", (long long)f->imm, k,
                     pi_sp_selector_ok(at, k, 1) ? pi_sp_selector_ok(at, k, 2) ? "one thread of four, 0..3"
                                                                             : "a thread pair, 0 or 1"
                                                 : "all four threads: 0");
            lw_lerr(L, f->line, f->col, "%s%s", msg, "");
            return -1;
        }
        x->s0 = lw_src(L, lw_op(L, it, 4), 32);
        if (x->s0 == PI_NOREG)
            return -1;
        x = &L->p->ext[in->x];
        x->sub = (int8_t)f->imm;
        flags |= PI_MMA_SP | (lw_has(P, "sp::ordered_metadata") ? PI_MMA_SP_ORDERED : 0);
    }
    x->flags = (uint8_t)flags;
    x->info[0] = m | n << 8 | k << 16;
    x->info[1] = (uint32_t)at | (uint32_t)bt << 16;
    x->info[2] = (uint32_t)ct | (uint32_t)dt << 16;
    x->vbase = L->p->nvregs;
    static const char *const what[4] = {"d", "a", "b", "c"};
    const int tys[4] = {dt, at, bt, ct};
    for (int i = 0; i < 4; i++) {
        x->regs[i] = (uint32_t)counts[i];
        if (vec_regs(L, it, i, what[i], counts[i], tys[i] == SEM_T_F64 ? 64 : 32, i == 0))
            return -1;
        x = &L->p->ext[in->x];           /* (vregs grew; the ext array did not move, but be plain) */
    }
    x->vcount = L->p->nvregs - x->vbase;
    return 0;
}
