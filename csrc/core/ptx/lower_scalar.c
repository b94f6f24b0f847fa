/* lower_scalar.c - the scalar forms around the copies: integer and f32
 * arithmetic, moves, compares, selects, conversions and branches, each one
 * interpreter instruction on registers. The largest table of forms, and the
 * one with no memory or thread interplay, hence its own file.
 */
#include "ptx/lower_int.h"

#include <string.h>

static int cmp_of(const char *s, int *is_unsigned_alias)
{
    static const struct { const char *n; int c, u; } C[] = {
        {"eq", PI_CMP_EQ, 0}, {"ne", PI_CMP_NE, 0}, {"lt", PI_CMP_LT, 0}, {"le", PI_CMP_LE, 0},
        {"gt", PI_CMP_GT, 0}, {"ge", PI_CMP_GE, 0}, {"lo", PI_CMP_LT, 1}, {"ls", PI_CMP_LE, 1},
        {"hi", PI_CMP_GT, 1}, {"hs", PI_CMP_GE, 1},
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++)
        if (!strcmp(s, C[i].n)) {
            *is_unsigned_alias = C[i].u;
            return C[i].c;
        }
    return -1;
}

/* Integer and f32 arithmetic, moves, compares, conversions, branches. */
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
        int scope = L->item_scope[L->item], best = -1;
        uint32_t target = PI_NOREG;
        for (uint32_t i = 0; i < L->nlb; i++) {
            if (!lw_spans_eq(L->m, L->lb[i].name, o->name) || !lw_in_scope(L, L->lb[i].scope, scope))
                continue;
            int d = lw_scope_depth(L, L->lb[i].scope);
            if (d > best) {
                best = d;
                target = L->lb[i].ins;
            }
        }
        if (target == PI_NOREG) {
            char name[64];
            lw_span_str(L->m, o->name, name, sizeof name);
            lw_lerr(L, o->line, o->col, "no label '%s' in scope%s", name, "");
            return -1;
        }
        NEW();
        in->op = PI_BRA;
        in->x = target;
        return 0;
    }
    if (!strcmp(op, "ret") || !strcmp(op, "exit")) {
        NEW();
        in->op = PI_EXIT;
        return 0;
    }
    if (!strcmp(op, "nanosleep") || (!strcmp(op, "prefetch") || !strcmp(op, "prefetchu")) ||
        !strcmp(op, "griddepcontrol") || !strcmp(op, "pmevent")) {
        NEW();          /* hints with no effect on the bytes: done */
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
        else if (lw_has(P, "global"))
            base = 0;
        else
            return lw_unsupported(L, it, ": .local and .const windows are not modelled");
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
        NEW();
        if (a->kind == PTX_OP_VEC) {
            if (w != 64 || a->nelem != 2)
                return lw_unsupported(L, it, ": only mov.b64 d, {lo, hi} packs");
            in->op = PI_MOV_PACK;
            in->d = lw_dst(L, d, 0, NULL);
            in->a = lw_src(L, lw_el(L, a, 0), 32);
            in->b = lw_src(L, lw_el(L, a, 1), 32);
            return 0;
        }
        if (d->kind == PTX_OP_VEC) {
            if (w != 64 || d->nelem != 2)
                return lw_unsupported(L, it, ": only mov.b64 {lo, hi}, d unpacks");
            in->op = PI_MOV_UNPACK;
            in->d = lw_dst(L, lw_el(L, d, 0), 1, NULL);
            in->e = lw_dst(L, lw_el(L, d, 1), 1, NULL);
            in->a = lw_src(L, a, 64);
            return 0;
        }
        in->op = PI_MOV;
        in->w = (uint8_t)w;
        in->mask = lw_wmask(w);
        in->d = lw_dst(L, d, 0, NULL);
        in->a = lw_src(L, a, w);
        return 0;
    }
    if (t.is_float && t.is_float != 1 && strcmp(op, "cvt"))
        return lw_unsupported(L, it, ": only .f32 arithmetic is modelled");
    if (t.is_pred && strcmp(op, "and") && strcmp(op, "or") && strcmp(op, "xor") && strcmp(op, "not") &&
        strcmp(op, "selp") && strcmp(op, "setp"))
        return lw_unsupported(L, it, "");
    if (!strcmp(op, "setp")) {
        int u;
        int c = P->n > 1 ? cmp_of(P->q[1], &u) : -1;
        if (c < 0)
            return lw_unsupported(L, it, ": the comparison is not modelled");
        if (P->n > 2 && (!strcmp(P->q[2], "and") || !strcmp(P->q[2], "or") || !strcmp(P->q[2], "xor")))
            return lw_unsupported(L, it, ": the combining forms are not modelled");
        NEED(3, 3);
        NEW();
        in->op = t.is_float ? PI_SETP_F32 : (t.is_signed && !u) ? PI_SETP_S : PI_SETP_U;
        in->sub = (uint8_t)c;
        in->w = (uint8_t)w;
        in->mask = lw_wmask(w);
        const ptx_operand *d = lw_op(L, it, 0);
        in->d = lw_dst(L, d, 1, NULL);
        if (d->nelem == 1)
            in->e = lw_dst(L, lw_el(L, d, 0), 1, NULL);
        in->a = lw_src(L, lw_op(L, it, 1), w);
        in->b = lw_src(L, lw_op(L, it, 2), w);
        return 0;
    }
    if (!strcmp(op, "selp")) {
        NEED(4, 4);
        NEW();
        in->op = PI_SELP;
        in->w = (uint8_t)w;
        in->mask = lw_wmask(w);
        in->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        in->a = lw_src(L, lw_op(L, it, 1), w);
        in->b = lw_src(L, lw_op(L, it, 2), w);
        in->c = lw_src(L, lw_op(L, it, 3), 1);
        return 0;
    }
    if (!strcmp(op, "cvt")) {
        tinfo st;
        if (!lw_last_type(P, 1, &st) || !lw_last_type(P, 2, &t))
            return lw_unsupported(L, it, "");
        w = t.bits;
        if (lw_has(P, "sat"))
            return lw_unsupported(L, it, ": .sat is not modelled");
        NEW();
        in->w = (uint8_t)w;
        in->sw = (uint8_t)st.bits;
        in->mask = lw_wmask(w);
        if (t.is_float == 5 && st.is_float == 1) {           /* cvt.rn.f16x2.f32 d, a, b */
            NEED(3, 3);
            if (!lw_has(P, "rn"))
                return lw_unsupported(L, it, ": only .rn rounding is modelled");
            in->op = PI_CVT_F16X2_F32;
            in->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
            in->a = lw_src(L, lw_op(L, it, 1), 32);
            in->b = lw_src(L, lw_op(L, it, 2), 32);
            return 0;
        }
        NEED(2, 2);
        in->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        in->a = lw_src(L, lw_op(L, it, 1), st.bits);
        if (!t.is_float && !st.is_float)
            in->op = st.is_signed ? PI_CVT_SX : PI_CVT_ZX;
        else if (t.is_float == 1 && st.is_float == 2)
            in->op = PI_CVT_F32_F16;
        else if (t.is_float == 1 && !st.is_float && (lw_has(P, "rn") || st.bits <= 16))
            in->op = st.is_signed ? PI_CVT_F32_S : PI_CVT_F32_U;
        else if (!t.is_float && st.is_float == 1 && lw_has(P, "rzi"))
            in->op = t.is_signed ? PI_CVT_S_F32 : PI_CVT_U_F32;
        else if (t.is_float == 1 && st.is_float == 1)
            in->op = PI_MOV;
        else
            return lw_unsupported(L, it, ": this conversion is not modelled");
        return 0;
    }
    struct { const char *n; int nops, s, u, f; } A[] = {
        {"add", 3, PI_ADD, PI_ADD, PI_FADD}, {"sub", 3, PI_SUB, PI_SUB, PI_FSUB},
        {"and", 3, PI_AND, PI_AND, -1}, {"or", 3, PI_OR, PI_OR, -1}, {"xor", 3, PI_XOR, PI_XOR, -1},
        {"not", 2, PI_NOT, PI_NOT, -1}, {"neg", 2, PI_NEG, PI_NEG, PI_FNEG}, {"abs", 2, PI_ABS, PI_ABS, PI_FABS},
        {"shl", 3, PI_SHL, PI_SHL, -1}, {"shr", 3, PI_SHR_S, PI_SHR_U, -1},
        {"min", 3, PI_MIN_S, PI_MIN_U, PI_FMIN}, {"max", 3, PI_MAX_S, PI_MAX_U, PI_FMAX},
        {"div", 3, PI_DIV_S, PI_DIV_U, -1}, {"rem", 3, PI_REM_S, PI_REM_U, -1},
        {"bfe", 4, PI_BFE_S, PI_BFE_U, -1}, {"bfi", 5, PI_BFI, PI_BFI, -1},
        {"popc", 2, PI_POPC, PI_POPC, -1}, {"clz", 2, PI_CLZ, PI_CLZ, -1}, {"brev", 2, PI_BREV, PI_BREV, -1},
        {"fma", 4, -1, -1, PI_FFMA},
    };
    int opc = -1, nops = 0;
    for (size_t i = 0; i < sizeof A / sizeof A[0]; i++)
        if (!strcmp(op, A[i].n)) {
            opc = t.is_float ? A[i].f : t.is_signed ? A[i].s : A[i].u;
            nops = A[i].nops;
        }
    if (!strcmp(op, "mul") || !strcmp(op, "mad")) {
        int mad = op[1] == 'a';
        nops = mad ? 4 : 3;
        if (t.is_float)
            opc = mad ? PI_FFMA : PI_FMUL;
        else if (lw_has(P, "lo"))
            opc = mad ? PI_MADLO : PI_MULLO;
        else if (lw_has(P, "hi"))
            opc = t.is_signed ? (mad ? PI_MADHI_S : PI_MULHI_S) : (mad ? PI_MADHI_U : PI_MULHI_U);
        else if (lw_has(P, "wide"))
            opc = t.is_signed ? (mad ? PI_MADWIDE_S : PI_MULWIDE_S) : (mad ? PI_MADWIDE_U : PI_MULWIDE_U);
        if ((opc == PI_MULWIDE_S || opc == PI_MULWIDE_U || opc == PI_MADWIDE_S || opc == PI_MADWIDE_U) && w > 32)
            return lw_unsupported(L, it, ": .wide takes 16- or 32-bit sources");
    }
    if (opc < 0 || (!strcmp(op, "add") && (lw_has(P, "cc") || lw_has(P, "sat"))) ||
        (!strcmp(op, "sub") && (lw_has(P, "cc") || lw_has(P, "sat"))) || (!strcmp(op, "mad") && lw_has(P, "cc")))
        return lw_unsupported(L, it, "");
    if (t.is_pred && opc != PI_AND && opc != PI_OR && opc != PI_XOR && opc != PI_NOT)
        return lw_unsupported(L, it, "");
    NEED(nops, nops);
    NEW();
    in->op = (uint8_t)opc;
    in->w = (uint8_t)w;
    in->mask = lw_wmask(w);
    if (opc == PI_MULWIDE_S || opc == PI_MULWIDE_U || opc == PI_MADWIDE_S || opc == PI_MADWIDE_U)
        in->mask = lw_wmask(2 * w);
    int sw = (opc == PI_SHL || opc == PI_SHR_S || opc == PI_SHR_U) ? 32 : w;
    in->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
    in->a = lw_src(L, lw_op(L, it, 1), w);
    if (nops >= 3)
        in->b = lw_src(L, lw_op(L, it, 2), (opc == PI_BFE_S || opc == PI_BFE_U) ? 32 : sw);
    if (nops >= 4)
        in->c = lw_src(L, lw_op(L, it, 3), (opc == PI_BFE_S || opc == PI_BFE_U) ? 32 :
                                     (opc == PI_MADWIDE_S || opc == PI_MADWIDE_U) ? 2 * w : w);
    if (nops >= 5)
        in->e = lw_src(L, lw_op(L, it, 4), 32);
    if (opc == PI_BFI) {      /* bfi d, a(insert), b(base), c(pos), e(len) */
        in->sw = 0;
    }
    return 0;
#undef NEED
#undef NEW
}
