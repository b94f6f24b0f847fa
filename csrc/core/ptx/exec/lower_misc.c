/* lower_misc.c - movmatrix (a warp collective: coll_warp.c), brx.idx (a branch through
 * its .branchtargets table) and alloca / stacksave / stackrestore (the thread's stack:
 * stack.c), from their rows of the table (tools/ptx_rows/misc.py; the checker has
 * validated the operands).
 */
#include "ptx/exec/lower_int.h"
#include "ptx/text/check.h"

#include <string.h>

int lw_misc(lw *L, const ptx_item *it, const parts *P)
{
    const char *op = P->q[0];
    pi_ins *in = lw_emit(L);
    if (!in)
        return -1;
    if (!strcmp(op, "movmatrix")) {
        pi_ext *x = lw_ext(L, in, PX_MOVMATRIX);
        if (!x || lw_need_ops(L, it, "movmatrix", 2, 2))
            return -1;
        x->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        x->s0 = lw_src(L, lw_op(L, it, 1), 32);
        return 0;
    }
    if (!strcmp(op, "brx")) {
        ptx_span names[256];
        pi_ext *x = lw_ext(L, in, PX_BRX);
        if (!x || lw_need_ops(L, it, "brx.idx", 2, 2))
            return -1;
        const ptx_operand *tl = lw_op(L, it, 1);
        int n = ptx_branch_targets(L->m, tl->name, (uint32_t)(it - L->m->items), names, 256);
        if (n < 1 || n > 256)
            return lw_unsupported(L, it, n > 256 ? ": a .branchtargets table of more than 256 labels"
                                                 : ": tlist is not a .branchtargets label");
        x->s0 = lw_src(L, lw_op(L, it, 0), 32);
        x->vbase = L->p->nvregs;
        x->vcount = (uint32_t)n;
        for (int i = 0; i < n; i++) {
            uint32_t pc = lw_label(L, names[i], it->line, it->col);
            if (pc == PI_NOREG)
                return -1;
            if (GROWN(L->p->vregs, L->p->nvregs, L->capv)) {
                L->oom = 1;
                return -1;
            }
            L->p->vregs[L->p->nvregs++] = pc;
        }
        return 0;
    }
    /* alloca / stacksave / stackrestore: the type's width is the pointer's */
    tinfo t;
    if (!lw_last_type(P, 1, &t))
        return lw_unsupported(L, it, ": no type");
    pi_ext *x = lw_ext(L, in, PX_STACK);
    if (!x)
        return -1;
    x->size = (uint8_t)(t.bits / 8);
    x->d = PI_NOREG;
    x->s0 = PI_NOREG;
    if (!strcmp(op, "alloca")) {
        if (lw_need_ops(L, it, "alloca", 2, 3))
            return -1;
        x->sub = 0;
        x->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        x->s0 = lw_src(L, lw_op(L, it, 1), t.bits);
        x->a0.off = it->nops > 2 ? lw_op(L, it, 2)->imm : 8;     /* immAlign (8 when absent) */
        return 0;
    }
    if (lw_need_ops(L, it, op, 1, 1))
        return -1;
    if (op[5] == 's') {             /* stacksave */
        x->sub = 1;
        x->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
    } else {
        x->sub = 2;
        x->s0 = lw_src(L, lw_op(L, it, 0), t.bits);
    }
    return 0;
}
