/* lower_multimem.c - multimem.ld_reduce, multimem.st, multimem.red (ISA 9.7.9.14): the
 * operation, element kind, packing, vector length, accumulation and memory order read
 * once from the opcode (the checker, rules_mem.c, has refused every form ptxas refuses);
 * multimem.c runs them.
 */
#include "ptx/exec/lower_int.h"
#include "ptx/exec/multimem.h"
#include "reduce.h"

#include <string.h>

/* The element kind of the type part, and the bytes of one register of it (a packed x2 / x4
 * type fills one register). */
static int mm_kind(const parts *P, int *bytes)
{
    static const struct { const char *n; int k, b; } T[] = {
        {"u32", PI_MK_U32, 4}, {"s32", PI_MK_S32, 4}, {"b32", PI_MK_U32, 4}, {"u64", PI_MK_U64, 8},
        {"s64", PI_MK_S64, 8}, {"b64", PI_MK_U64, 8}, {"f16", PI_MK_F16, 2}, {"f16x2", PI_MK_F16, 4},
        {"bf16", PI_MK_BF16, 2}, {"bf16x2", PI_MK_BF16, 4}, {"f32", PI_MK_F32, 4}, {"f64", PI_MK_F64, 8},
        {"e4m3", PI_MK_E4M3, 1}, {"e4m3x2", PI_MK_E4M3, 2}, {"e4m3x4", PI_MK_E4M3, 4},
        {"e5m2", PI_MK_E5M2, 1}, {"e5m2x2", PI_MK_E5M2, 2}, {"e5m2x4", PI_MK_E5M2, 4},
    };
    for (size_t i = 0; i < sizeof T / sizeof *T; i++)
        if (lw_has(P, T[i].n)) {
            *bytes = T[i].b;
            return T[i].k;
        }
    return -1;
}

static int mm_op(const parts *P)
{
    static const struct { const char *n; int op; } OPS[] = {
        {"add", PA_RED_ADD}, {"min", PA_RED_MIN}, {"max", PA_RED_MAX},
        {"and", PA_RED_AND}, {"or", PA_RED_OR}, {"xor", PA_RED_XOR},
    };
    for (size_t i = 0; i < sizeof OPS / sizeof *OPS; i++)
        if (lw_has(P, OPS[i].n))
            return OPS[i].op;
    return -1;
}

int lw_multimem(lw *L, const ptx_item *it, const parts *P)
{
    int kind = !strcmp(P->q[1], "ld_reduce") ? PI_MM_LD_REDUCE : !strcmp(P->q[1], "st") ? PI_MM_ST : PI_MM_RED;
    int bytes = 0, mk = mm_kind(P, &bytes), op = kind == PI_MM_ST ? -1 : mm_op(P);
    if (mk < 0 || (kind != PI_MM_ST && op < 0))
        return lw_unsupported(L, it, "");
    int n = lw_vec_of(P);
    if (lw_need_ops(L, it, P->q[0], 2, 2))
        return -1;
    int acq = lw_has(P, "acquire"), rel = lw_has(P, "release");
    int strong = acq || rel || lw_has(P, "relaxed") || (kind == PI_MM_RED && !lw_has(P, "weak"));
    pi_ins *in = lw_emit(L);
    pi_ext *x = in ? lw_ext(L, in, PX_MULTIMEM) : NULL;
    if (!x)
        return -1;
    x->space = (uint8_t)lw_space_of(P);
    x->sub = (int8_t)op;
    x->mode = (uint8_t)mk;
    x->size = (uint8_t)bytes;
    x->n = (uint8_t)n;
    /* red's .acc_prec: ptxas takes it on every type and ignores it (tables: red_acc_prec); so does the model */
    x->sub2 = (int8_t)(kind == PI_MM_RED ? PI_MM_ACC_TYPE : lw_has(P, "acc::f32") ? PI_MM_ACC_F32
                       : lw_has(P, "acc::f16") ? PI_MM_ACC_F16 : PI_MM_ACC_TYPE);
    x->flags = (uint8_t)(kind | (strong ? PI_MM_STRONG : 0) | (acq ? PI_MM_ACQUIRE : 0) | (rel ? PI_MM_RELEASE : 0));
    x->d = PI_NOREG;
    const ptx_operand *v = lw_op(L, it, kind == PI_MM_LD_REDUCE ? 0 : 1);
    x->a0 = lw_addr(L, lw_op(L, it, kind == PI_MM_LD_REDUCE ? 1 : 0));
    if ((v->kind == PTX_OP_VEC ? v->nelem : 1) != n) {
        lw_lerr(L, v->line, v->col, "the register vector does not match the .vN of the instruction%s%s", "", "");
        return -1;
    }
    x->vbase = L->p->nvregs;
    for (int i = 0; i < n; i++) {
        const ptx_operand *e = v->kind == PTX_OP_VEC ? lw_el(L, v, i) : v;
        if (GROWN(L->p->vregs, L->p->nvregs, L->capv)) {
            L->oom = 1;
            return -1;
        }
        L->p->vregs[L->p->nvregs++] = kind == PI_MM_LD_REDUCE ? lw_dst(L, e, 1, NULL) : lw_src(L, e, bytes * 8);
    }
    x->vcount = (uint32_t)n;
    return 0;
}
