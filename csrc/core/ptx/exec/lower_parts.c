/* lower_parts.c - what every instruction form's lowering starts from: the
 * opcode split into its dot parts, the type facts of a part, and appending an
 * instruction (and its extension record) to the program. Kept apart from the
 * forms so that each form file holds only its own semantics.
 */
#include "ptx/exec/lower_int.h"

#include <stdio.h>
#include <string.h>

/* ---- opcode parts ----------------------------------------------------------- */

void lw_split(const ptx_module *m, ptx_span op, parts *P)
{
    lw_span_str(m, op, P->buf, sizeof P->buf);
    P->n = 0;
    char *s = P->buf;
    while (P->n < MAXPARTS) {
        P->q[P->n++] = s;
        char *dot = strchr(s, '.');
        if (!dot)
            break;
        *dot = 0;
        s = dot + 1;
    }
}

int lw_has(const parts *P, const char *q)
{
    for (int i = 1; i < P->n; i++)
        if (!strcmp(P->q[i], q))
            return 1;
    return 0;
}

int lw_has_prefix(const parts *P, const char *q, const char **out)
{
    size_t n = strlen(q);
    for (int i = 1; i < P->n; i++)
        if (!strncmp(P->q[i], q, n)) {
            if (out)
                *out = P->q[i];
            return 1;
        }
    return 0;
}

/* The last type part (k = 1) or the one before it (k = 2). */
int lw_last_type(const parts *P, int k, tinfo *t)
{
    for (int i = P->n - 1; i >= 1; i--) {
        if (lw_type_of(P->q[i], t) && --k == 0)
            return 1;
    }
    return 0;
}

uint64_t lw_wmask(int bits)
{
    return bits >= 64 ? ~0ull : bits <= 1 ? 1ull : (1ull << bits) - 1;
}
/* ---- the lowering of one instruction --------------------------------------------- */

pi_ins *lw_emit(lw *L)
{
    pi_prog *p = L->p;
    if (GROWN(p->ins, p->nins, L->capins)) {
        L->oom = 1;
        return NULL;
    }
    pi_ins *in = &p->ins[p->nins++];
    memset(in, 0, sizeof *in);
    in->d = in->e = in->a = in->b = in->c = PI_NOREG;
    in->item = L->item;
    in->op = PI_NOP;
    return in;
}

pi_ext *lw_ext(lw *L, pi_ins *in, int kind)
{
    pi_prog *p = L->p;
    if (GROWN(p->ext, p->next, L->capext)) {
        L->oom = 1;
        return NULL;
    }
    pi_ext *x = &p->ext[p->next];
    memset(x, 0, sizeof *x);
    x->kind = (uint8_t)kind;
    x->d = x->s0 = x->s1 = x->s2 = x->s3 = PI_NOREG;
    x->a0.base = x->a1.base = x->a2.base = PI_NOREG;
    for (int i = 0; i < 5; i++)
        x->regs[i] = PI_NOREG;
    for (int i = 0; i < 3; i++)
        x->info[i] = PI_NOREG;
    in->op = PI_EXT;
    in->x = p->next++;
    return x;
}

const ptx_operand *lw_op(lw *L, const ptx_item *it, int i)
{
    return &L->m->ops[it->op0 + (uint32_t)i];
}

const ptx_operand *lw_el(lw *L, const ptx_operand *o, int i)
{
    return &L->m->elems[o->elem + (uint32_t)i];
}

int lw_need_ops(lw *L, const ptx_item *it, const char *name, int lo, int hi)
{
    if (it->nops < lo || it->nops > hi) {
        char b[32];
        snprintf(b, sizeof b, "%d..%d", lo, hi);
        lw_lerr(L, it->line, it->col, "%s takes %s operands here", name, b);
        return -1;
    }
    return 0;
}

int lw_unsupported(lw *L, const ptx_item *it, const char *why)
{
    char op[128];
    lw_span_str(L->m, it->opcode, op, sizeof op);
    lw_lerr(L, it->line, it->col, "the interpreter does not run '%s'%s", op, why);
    return -1;
}

int lw_space_of(const parts *P)
{
    if (lw_has(P, "shared::cluster"))
        return PI_SP_SHARED_CLUSTER;
    if (lw_has(P, "shared") || lw_has(P, "shared::cta"))
        return PI_SP_SHARED;
    if (lw_has(P, "global"))
        return PI_SP_GLOBAL;
    if (lw_has(P, "param") || lw_has(P, "param::entry") || lw_has(P, "param::func"))
        return PI_SP_PARAM;
    if (lw_has(P, "local"))
        return PI_SP_LOCAL;
    if (lw_has(P, "const"))
        return PI_SP_CONST;
    return PI_SP_GENERIC;
}

int lw_vec_of(const parts *P)
{
    return lw_has(P, "v2") ? 2 : lw_has(P, "v4") ? 4 : lw_has(P, "v8") ? 8 : 1;
}

/* Registers of a { } operand (or one register) into out[]; returns the count. */
int lw_reg_list(lw *L, const ptx_operand *o, uint32_t *out, int max, int is_dst, int w)
{
    if (o->kind != PTX_OP_VEC) {
        if (max < 1)
            return -1;
        out[0] = is_dst ? lw_dst(L, o, 1, NULL) : lw_src(L, o, w);
        return 1;
    }
    if (o->nelem > max) {
        lw_lerr(L, o->line, o->col, "the vector has more elements than the instruction takes%s%s", "", "");
        return -1;
    }
    for (int i = 0; i < o->nelem; i++)
        out[i] = is_dst ? lw_dst(L, lw_el(L, o, i), 1, NULL) : lw_src(L, lw_el(L, o, i), w);
    return o->nelem;
}
