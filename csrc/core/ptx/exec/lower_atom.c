/* lower_atom.c - atom and red: the operation, the element type, the vector
 * length, the state space and the memory order read once from the opcode
 * (tools/ptx_atom_rows.py has the forms the checker takes); atom.c runs them.
 */
#include "ptx/exec/lower_int.h"
#include "ptx/exec/atom.h"

#include <string.h>

static int atom_op(const parts *P)
{
    static const struct { const char *n; int op; } OPS[] = {
        {"add", PA_RED_ADD}, {"min", PA_RED_MIN}, {"max", PA_RED_MAX}, {"inc", PA_RED_INC},
        {"dec", PA_RED_DEC}, {"and", PA_RED_AND}, {"or", PA_RED_OR}, {"xor", PA_RED_XOR},
        {"exch", PI_AO_EXCH}, {"cas", PI_AO_CAS},
    };
    for (size_t i = 0; i < sizeof OPS / sizeof *OPS; i++)
        if (lw_has(P, OPS[i].n))
            return OPS[i].op;
    return -1;
}

/* the element kind and the bytes of one register of it */
static int atom_kind(const parts *P, int *bytes)
{
    static const struct { const char *n; int k, b; } T[] = {
        {"u32", PI_AK_U32, 4}, {"s32", PI_AK_S32, 4}, {"u64", PI_AK_U64, 8}, {"s64", PI_AK_S64, 8},
        {"b16", PI_AK_B16, 2}, {"b32", PI_AK_U32, 4}, {"b64", PI_AK_U64, 8}, {"b128", PI_AK_B128, 16},
        {"f16", PI_AK_F16, 2}, {"bf16", PI_AK_BF16, 2}, {"f16x2", PI_AK_F16X2, 4},
        {"bf16x2", PI_AK_BF16X2, 4}, {"f32", PI_AK_F32, 4}, {"f64", PI_AK_F64, 8},
    };
    for (size_t i = 0; i < sizeof T / sizeof *T; i++)
        if (lw_has(P, T[i].n)) {
            *bytes = T[i].b;
            return T[i].k;
        }
    return -1;
}

/* registers of operand o (one, or a { } vector of n) appended to vregs */
static int push_regs(lw *L, const ptx_operand *o, int n, int is_dst, int bits)
{
    pi_prog *p = L->p;
    int got = o->kind == PTX_OP_VEC ? o->nelem : 1;
    if (got != n) {
        lw_lerr(L, o->line, o->col, "the register vector does not match the .v%s of the instruction%s",
                n == 2 ? "2" : n == 4 ? "4" : n == 8 ? "8" : "1", "");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const ptx_operand *e = o->kind == PTX_OP_VEC ? lw_el(L, o, i) : o;
        if (GROWN(p->vregs, p->nvregs, L->capv)) {
            L->oom = 1;
            return -1;
        }
        p->vregs[p->nvregs++] = is_dst ? lw_dst(L, e, 1, NULL) : lw_src(L, e, bits);
    }
    return 0;
}

static int lw_atom128(lw *L, const ptx_item *it, int cas, pi_ext *x);

/* red.async...op.type [a], b, [mbar]: a reduction into another CTA's shared memory, completing on
 * its mbarrier (engine/redasync.c); .b32 reduces as .u32, .add.s64 as .add.u64 (ptxas emits
 * REDAS.ADD.64 for both) */
static int lw_red_async(lw *L, const ptx_item *it, const parts *P, int op)
{
    int kind = lw_has(P, "s32") ? PA_EK_S32 : lw_has(P, "u64") || lw_has(P, "s64") ? PA_EK_U64 : PA_EK_U32;
    if (lw_need_ops(L, it, "red.async", 3, 3))
        return -1;
    pi_ins *in = lw_emit(L);
    pi_ext *x = in ? lw_ext(L, in, PX_RED_ASYNC) : NULL;
    if (!x)
        return -1;
    x->sub = (int8_t)op;
    x->sub2 = (int8_t)kind;
    x->a0 = lw_addr(L, lw_op(L, it, 0));
    x->s0 = lw_src(L, lw_op(L, it, 1), kind == PA_EK_U64 ? 64 : 32);
    x->a2 = lw_addr(L, lw_op(L, it, 2));
    return 0;
}

int lw_atom(lw *L, const ptx_item *it, const parts *P)
{
    int red = !strcmp(P->q[0], "red");
    int op = atom_op(P), bytes = 0, kind = atom_kind(P, &bytes);
    if (op < 0 || kind < 0)
        return lw_unsupported(L, it, "");
    if (red && lw_has(P, "async"))
        return lw_red_async(L, it, P, op);
    int sp = lw_space_of(P);
    if (sp < 0 || sp == PI_SP_PARAM)
        return lw_unsupported(L, it, ": atomics work on .global and .shared memory");
    int n = lw_vec_of(P);
    int cas = op == PI_AO_CAS;
    int nops = (red ? 0 : 1) + 2 + cas;
    int hint = lw_has(P, "L2::cache_hint");
    if (lw_need_ops(L, it, red ? "red" : "atom", nops + hint, nops + hint))
        return -1;
    pi_ins *in = lw_emit(L);
    pi_ext *x = in ? lw_ext(L, in, PX_ATOM) : NULL;
    if (!x)
        return -1;
    x->space = (uint8_t)sp;
    x->sub = (int8_t)op;
    x->mode = (uint8_t)kind;
    x->size = (uint8_t)bytes;
    x->n = (uint8_t)n;
    x->flags = (uint8_t)((red ? PI_AF_RED : 0) |
                         (lw_has(P, "acquire") || lw_has(P, "acq_rel") ? PI_AF_ACQUIRE : 0) |
                         (lw_has(P, "release") || lw_has(P, "acq_rel") ? PI_AF_RELEASE : 0));
    if (kind == PI_AK_B128)
        return lw_atom128(L, it, cas, x);
    int k = 0;
    x->d = PI_NOREG;
    x->vbase = L->p->nvregs;
    if (!red) {
        if (push_regs(L, lw_op(L, it, k++), n, 1, bytes * 8))
            return -1;
    } else {
        for (int i = 0; i < n; i++) {
            if (GROWN(L->p->vregs, L->p->nvregs, L->capv)) {
                L->oom = 1;
                return -1;
            }
            L->p->vregs[L->p->nvregs++] = PI_NOREG;
        }
    }
    x->a0 = lw_addr(L, lw_op(L, it, k++));
    if (push_regs(L, lw_op(L, it, k++), n, 0, bytes * 8))
        return -1;
    x->vcount = (uint32_t)(2 * n);
    x->s1 = cas ? lw_src(L, lw_op(L, it, k++), bytes * 8) : PI_NOREG;
    return 0;
}

/* atom.cas.b128 d, [a], b, c and atom.exch.b128 d, [a], b (sm_90): the halves of each .b128 operand,
 * low first: d's in vregs[0..1], b's in vregs[2..3], c's in s1, s2 (atom.c) */
static int lw_atom128(lw *L, const ptx_item *it, int cas, pi_ext *x)
{
    uint32_t h[6] = {PI_NOREG, PI_NOREG, PI_NOREG, PI_NOREG, PI_NOREG, PI_NOREG};
    x->size = 8;
    x->n = 2;
    x->d = PI_NOREG;
    if (lw_b128_halves(L, lw_op(L, it, 0), 1, &h[0], &h[1]))
        return -1;
    x->a0 = lw_addr(L, lw_op(L, it, 1));
    if (lw_b128_halves(L, lw_op(L, it, 2), 0, &h[2], &h[3]) ||
        (cas && lw_b128_halves(L, lw_op(L, it, 3), 0, &h[4], &h[5])))
        return -1;
    x->vbase = L->p->nvregs;
    for (int i = 0; i < 4; i++) {
        if (GROWN(L->p->vregs, L->p->nvregs, L->capv)) {
            L->oom = 1;
            return -1;
        }
        L->p->vregs[L->p->nvregs++] = h[i];
    }
    x->vcount = 4;
    x->s1 = h[4];
    x->s2 = h[5];
    return 0;
}
