/* lower.c - a parsed .entry -> the interpreter's program (prog.h).
 *
 * Two passes over the body: the first gives every item its { } scope and
 * records labels and register declarations (a name declared in a scope
 * hides outer ones: Triton's inline asm declares `complete` and `waitLoop`
 * in a block of their own); the second lowers each instruction, resolving
 * every operand to a register index. An instruction the interpreter does
 * not run is an error naming its line, never a silent no-op.
 *
 * This file is the driver: the declarations, the two passes and the dispatch
 * of each instruction to its form's lowering (lower_mem.c, lower_coll.c,
 * lower_scalar.c; operands in lower_regs.c, opcode parts in lower_parts.c).
 */
#include "ptx/lower_int.h"

#include <stdlib.h>
#include <string.h>

static int lower_instr(lw *L, const ptx_item *it)
{
    parts P;
    lw_split(L->m, it->opcode, &P);
    uint32_t first = L->p->nins;
    int rc;
    const char *op = P.q[0];
    rc = lw_sem(L, it);
    if (rc != 1) {
        /* lowered from its row of the table */
    } else if (!strcmp(op, "ld") || !strcmp(op, "ldu") || (!strcmp(op, "st") && !(P.n > 1 && (!strcmp(P.q[1], "async") || !strcmp(P.q[1], "bulk")))))
        rc = lw_ldst(L, it, &P, op[0] == 's');
    else if (!strcmp(op, "st")) {
        if (!strcmp(P.q[1], "bulk")) {
            pi_ins *in = lw_emit(L);
            pi_ext *x = in ? lw_ext(L, in, PX_ST_BULK) : NULL;
            if (!x || lw_need_ops(L, it, "st.bulk", 3, 3))
                return -1;
            x->a0 = lw_addr(L, lw_op(L, it, 0));
            x->s0 = lw_src(L, lw_op(L, it, 1), 64);
            x->s1 = lw_src(L, lw_op(L, it, 2), 64);
            rc = 0;
        } else if (lw_has(&P, "release")) {
            tinfo t;
            pi_ins *in = lw_emit(L);
            pi_ext *x = in ? lw_ext(L, in, PX_ST_ASYNC_RELEASE) : NULL;
            if (!x || lw_need_ops(L, it, "st.async.release", 2, 2))
                return -1;
            if (!lw_last_type(&P, 1, &t) || t.bits > 64 || t.bits < 8)
                return lw_unsupported(L, it, "");
            x->size = (uint8_t)(t.bits / 8);
            x->flags = (uint8_t)(lw_has(&P, "sys") | (lw_has(&P, "mmio") << 1));
            x->a0 = lw_addr(L, lw_op(L, it, 0));
            x->s0 = lw_src(L, lw_op(L, it, 1), t.bits);
            rc = 0;
        } else {
            tinfo t;
            pi_ins *in = lw_emit(L);
            pi_ext *x = in ? lw_ext(L, in, PX_ST_ASYNC) : NULL;
            if (!x || lw_need_ops(L, it, "st.async", 3, 3))
                return -1;
            if (!lw_last_type(&P, 1, &t) || (t.bits != 32 && t.bits != 64))
                return lw_unsupported(L, it, "");
            x->size = (uint8_t)(t.bits / 8);
            x->a0 = lw_addr(L, lw_op(L, it, 0));
            int n = lw_reg_list(L, lw_op(L, it, 1), x->regs, 4, 0, t.bits);
            if (n != lw_vec_of(&P))
                return lw_unsupported(L, it, ": the register vector does not match");
            x->n = (uint8_t)n;
            x->a2 = lw_addr(L, lw_op(L, it, 2));
            rc = 0;
        }
    } else if (!strcmp(op, "mbarrier"))
        rc = lw_mbarrier(L, it, &P);
    else if (!strcmp(op, "cp"))
        rc = lw_cp(L, it, &P);
    else if (!strcmp(op, "fence") || !strcmp(op, "membar"))
        rc = lw_fence(L, it, &P);
    else if (!strcmp(op, "tensormap"))
        rc = lw_tensormap(L, it, &P);
    else if (!strcmp(op, "bar") || !strcmp(op, "barrier"))
        rc = lw_bar(L, it, &P);
    else if (!strcmp(op, "elect") || !strcmp(op, "shfl") || !strcmp(op, "vote") || !strcmp(op, "ldmatrix") ||
             !strcmp(op, "stmatrix"))
        rc = lw_warp(L, it, &P);
    else if (!strcmp(op, "redux") || !strcmp(op, "match") || !strcmp(op, "activemask"))
        rc = lw_warp_more(L, it, &P);
    else if (!strcmp(op, "wgmma"))
        rc = lw_wgmma(L, it, &P);
    else if (!strcmp(op, "atom") || !strcmp(op, "red"))
        rc = lw_atom(L, it, &P);
    else
        rc = lw_scalar(L, it, &P);
    if (L->p->nins == first && !L->oom) {      /* every instruction holds one slot: labels count on it */
        if (!L->bad)
            lw_unsupported(L, it, "");
        pi_ins *in = lw_emit(L);
        (void)in;
    }
    if (L->p->nins > first + 1)
        L->p->nins = first + 1;
    if (L->p->nins == first + 1 && it->has_pred) {
        pi_ins *in = &L->p->ins[first];
        ptx_operand po;
        memset(&po, 0, sizeof po);
        po.kind = PTX_OP_REG;
        po.name = it->pred;
        po.line = it->line;
        po.col = it->col;
        in->guard = lw_name_reg(L, &po, NULL);
        in->pneg = it->pred_neg;
        if (in->guard == PI_NOREG) {    /* (an error already: the kernel never runs) */
            in->guard = 0;
            in->pneg = 0;               /* guard 0 is always true, never negated */
        }
    }
    return rc;
}

/* ---- declarations ---------------------------------------------------------- */

static const ptx_token *tok(const lw *L, uint32_t i)
{
    return &L->m->toks[i];
}

static int tok_is(const lw *L, uint32_t i, const char *s)
{
    return lw_span_is(L->m, tok(L, i)->s, s);
}

static int tok_int(const lw *L, uint32_t i, uint64_t *v)
{
    const ptx_token *k = tok(L, i);
    if (k->kind != PTX_TK_INT)
        return 0;
    char buf[32];
    lw_span_str(L->m, k->s, buf, sizeof buf);
    *v = strtoull(buf, NULL, 0);
    return 1;
}

static int decl_bits(const lw *L, uint32_t i)
{
    char buf[16];
    const ptx_token *k = tok(L, i);
    if (k->kind != PTX_TK_DOT || k->s.len > 10)
        return 0;
    lw_span_str(L->m, k->s, buf, sizeof buf);
    tinfo t;
    return lw_type_of(buf + 1, &t) ? t.bits : 0;
}

/* .param [.align N] .type [.ptr ...] name[[N]] */
static void param_decl(lw *L, const ptx_item *it)
{
    pi_prog *p = L->p;
    uint32_t align = 0, bits = 0, count = 0;
    int array = 0, saw_type = 0;
    ptx_span name = {0, 0};
    for (uint32_t i = it->tok0; i < it->tok0 + it->ntok; i++) {
        const ptx_token *k = tok(L, i);
        uint64_t v;
        if (tok_is(L, i, ".align") && !saw_type && i + 1 < it->tok0 + it->ntok && tok_int(L, i + 1, &v)) {
            align = (uint32_t)v;
            i++;
        } else if (tok_is(L, i, ".align")) {
            i++;
        } else if (!saw_type && decl_bits(L, i)) {
            bits = (uint32_t)decl_bits(L, i);
            saw_type = 1;
        } else if (k->kind == PTX_TK_IDENT && !name.len) {
            name = k->s;
        } else if (k->kind == PTX_TK_PUNCT && L->m->text[k->s.off] == '[' && tok_int(L, i + 1, &v)) {
            array = 1;
            count = (uint32_t)v;
        }
    }
    if (!name.len || !bits)
        return;
    if (GROWN(p->params, p->nparams, L->capparams)) {
        L->oom = 1;
        return;
    }
    pi_param *pa = &p->params[p->nparams++];
    memset(pa, 0, sizeof *pa);
    lw_span_str(L->m, name, pa->name, sizeof pa->name);
    uint32_t esize = bits < 8 ? 1 : bits / 8;
    pa->size = array ? esize * count : esize;
    pa->align = align ? align : esize;
    pa->array = array;
    uint32_t off = (p->param_bytes + pa->align - 1) / pa->align * pa->align;
    pa->offset = off;
    p->param_bytes = off + pa->size;
}

/* .shared [.align N] .type name[[N]] (.extern: dynamic, placed after the rest) */
static void shared_decl(lw *L, const ptx_item *it, int pass_dynamic)
{
    pi_prog *p = L->p;
    uint32_t align = 0, bits = 0, count = 1;
    int is_extern = 0, is_shared = 0, array = 0;
    ptx_span name = {0, 0};
    for (uint32_t i = it->tok0; i < it->tok0 + it->ntok; i++) {
        const ptx_token *k = tok(L, i);
        uint64_t v;
        if (tok_is(L, i, ".extern"))
            is_extern = 1;
        else if (tok_is(L, i, ".shared"))
            is_shared = 1;
        else if (tok_is(L, i, ".align") && tok_int(L, i + 1, &v)) {
            align = (uint32_t)v;
            i++;
        } else if (decl_bits(L, i))
            bits = (uint32_t)decl_bits(L, i);
        else if (k->kind == PTX_TK_IDENT && !name.len)
            name = k->s;
        else if (k->kind == PTX_TK_PUNCT && L->m->text[k->s.off] == '[') {
            array = 1;
            count = tok_int(L, i + 1, &v) ? (uint32_t)v : 0;
        } else if (k->kind == PTX_TK_PUNCT && L->m->text[k->s.off] == '=')
            break;
    }
    if (!is_shared || !name.len || !bits)
        return;
    int dynamic = is_extern && array && count == 0;
    if (dynamic != pass_dynamic)
        return;
    if (GROWN(L->sh, L->nsh, L->capshv)) {
        L->oom = 1;
        return;
    }
    shvar *s = &L->sh[L->nsh++];
    lw_span_str(L->m, name, s->name, sizeof s->name);
    uint32_t esize = bits / 8 ? bits / 8 : 1;
    if (!align)
        align = esize;
    if (dynamic) {
        /* every dynamic array starts after the static ones (pass 0 placed them all) */
        s->offset = (p->static_smem + align - 1) / align * align;
        if (!p->dyn_smem)
            p->dyn_smem = s->offset;
        return;
    }
    uint32_t off = (p->static_smem + align - 1) / align * align;
    s->offset = off;
    p->static_smem = off + esize * count;
}

void pi_prog_free(pi_prog *p)
{
    free(p->ins);
    free(p->ext);
    free(p->vregs);
    free(p->init);
    free(p->params);
    free(p->sems);
    memset(p, 0, sizeof *p);
}

static int find_entry(const ptx_module *m, const char *entry, ptx_diags *ds, uint32_t *hdr)
{
    int found = 0;
    for (uint32_t i = 0; i < m->nitems; i++) {
        const ptx_item *it = &m->items[i];
        if (it->kind != PTX_ITEM_DIRECTIVE)
            continue;
        for (uint32_t k = it->tok0; k + 1 < it->tok0 + it->ntok; k++) {
            if (!ptx_span_eq(m, m->toks[k].s, ".entry"))
                continue;
            const ptx_token *n = &m->toks[k + 1];
            if (n->kind != PTX_TK_IDENT)
                break;
            if (entry) {
                size_t len = strlen(entry);
                if (n->s.len != len || memcmp(m->text + n->s.off, entry, len))
                    break;
            }
            found++;
            if (found == 1)
                *hdr = i;
            break;
        }
    }
    if (!found) {
        if (entry)
            ptx_diag_add(ds, 1, 1, 1, "the module has no .entry named '%s'", entry);
        else
            ptx_diag_add(ds, 1, 1, 1, "the module has no .entry");
        return -1;
    }
    if (found > 1 && !entry) {
        ptx_diag_add(ds, 1, 1, 1, "the module has %d .entry functions: name the one to run", found);
        return -1;
    }
    return 0;
}

/* The lowering's own tables (the program keeps what it was given). */
static void free_state(lw *L)
{
    free(L->rd);
    free(L->lb);
    free(L->parent);
    free(L->item_scope);
    free(L->sh);
    free(L->cls);
}

int pi_lower(pi_prog *p, const ptx_module *m, const char *entry, ptx_diags *ds)
{
    memset(p, 0, sizeof *p);
    p->mod = m;
    lw L;
    memset(&L, 0, sizeof L);
    L.p = p;
    L.m = m;
    L.ds = ds;
    uint32_t hdr = 0;
    if (find_entry(m, entry, ds, &hdr))
        return 0;
    for (uint32_t k = m->items[hdr].tok0; k + 1 < m->items[hdr].tok0 + m->items[hdr].ntok; k++)
        if (ptx_span_eq(m, m->toks[k].s, ".entry"))
            lw_span_str(m, m->toks[k + 1].s, p->entry, sizeof p->entry);
    /* header: params and performance directives up to the body's '{' */
    uint32_t i = hdr + 1, body = 0;
    for (; i < m->nitems; i++) {
        const ptx_item *it = &m->items[i];
        if (it->kind == PTX_ITEM_OPEN) {
            body = i;
            break;
        }
        if (it->kind != PTX_ITEM_DIRECTIVE || !it->ntok)
            continue;
        if (ptx_span_eq(m, m->toks[it->tok0].s, ".param"))
            param_decl(&L, it);
        else if (ptx_span_eq(m, m->toks[it->tok0].s, ".reqntid") ||
                 ptx_span_eq(m, m->toks[it->tok0].s, ".maxntid")) {
            int n = 0;
            uint64_t v;
            for (uint32_t k = it->tok0 + 1; k < it->tok0 + it->ntok && n < 3; k++)
                if (tok_int(&L, k, &v))
                    p->reqntid[n++] = (uint32_t)v;
            for (; n < 3; n++)
                p->reqntid[n] = 1;
            p->has_reqntid = ptx_span_eq(m, m->toks[it->tok0].s, ".reqntid") ? 1 : 2;
        }
    }
    if (!body) {
        ptx_diag_add(ds, 1, m->items[hdr].line, m->items[hdr].col, "the .entry has no body");
        return 0;
    }
    /* shared variables: module scope and the body (static first, then dynamic) */
    uint32_t end = body;
    {
        int depth = 0;
        for (end = body; end < m->nitems; end++) {
            if (m->items[end].kind == PTX_ITEM_OPEN)
                depth++;
            if (m->items[end].kind == PTX_ITEM_CLOSE && --depth == 0)
                break;
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        int depth = 0;
        for (uint32_t k = 0; k < m->nitems && !L.oom; k++) {
            const ptx_item *it = &m->items[k];
            if (it->kind == PTX_ITEM_OPEN)
                depth++;
            if (it->kind == PTX_ITEM_CLOSE)
                depth--;
            if (it->kind != PTX_ITEM_DIRECTIVE || !it->ntok)
                continue;
            if (depth > 0 && (k < body || k > end))
                continue;        /* another function's body */
            shared_decl(&L, it, pass);
        }
    }
    /* pass 1: scopes, labels, registers */
    L.item_scope = calloc(m->nitems, sizeof(int));
    uint32_t capscopes = 0;
    if (!L.item_scope)
        goto oom;
    lw_new_regs(&L, 1, 1);                  /* register 0: the constant 1 (unguarded) */
    lw_new_regs(&L, 1, 64);                 /* register 1: where a sink `_` writes */
    lw_new_regs(&L, 1, 1);                  /* register 2: the condition code (PI_REG_CC) */
    int scope = -1;
    uint32_t nins = 0;
    for (i = body; i <= end && i < m->nitems && !L.oom; i++) {
        const ptx_item *it = &m->items[i];
        if (it->kind == PTX_ITEM_OPEN) {
            if (GROWN(L.parent, (uint32_t)L.nscopes, capscopes))
                goto oom;
            L.parent[L.nscopes] = scope;
            scope = L.nscopes++;
        } else if (it->kind == PTX_ITEM_CLOSE) {
            scope = scope >= 0 ? L.parent[scope] : -1;
        }
        L.item_scope[i] = scope;
        if (it->kind == PTX_ITEM_LABEL) {
            if (GROWN(L.lb, L.nlb, L.caplb))
                goto oom;
            L.lb[L.nlb].name = it->opcode;
            L.lb[L.nlb].scope = scope;
            L.lb[L.nlb].ins = nins;
            L.nlb++;
        } else if (it->kind == PTX_ITEM_INSTR) {
            nins++;
        } else if (it->kind == PTX_ITEM_DIRECTIVE && it->ntok && ptx_span_eq(m, m->toks[it->tok0].s, ".reg")) {
            int bits = 0;
            for (uint32_t k = it->tok0 + 1; k < it->tok0 + it->ntok; k++) {
                const ptx_token *t = &m->toks[k];
                if (decl_bits(&L, k)) {
                    bits = decl_bits(&L, k);
                } else if (t->kind == PTX_TK_DOT && ptx_span_eq(m, t->s, ".v2")) {
                    ptx_diag_add(ds, 1, t->line, t->col, "vector registers are not modelled by the interpreter");
                } else if (t->kind == PTX_TK_IDENT) {
                    uint32_t range = 0;
                    uint64_t v;
                    if (k + 3 < it->tok0 + it->ntok && m->text[m->toks[k + 1].s.off] == '<' &&
                        tok_int(&L, k + 2, &v)) {
                        range = (uint32_t)v;
                        k += 3;
                    }
                    if (GROWN(L.rd, L.nrd, L.caprd))
                        goto oom;
                    regdecl *r = &L.rd[L.nrd++];
                    r->name = t->s;
                    r->range = range;
                    r->scope = scope;
                    r->cls = (uint8_t)(bits > 64 ? 64 : bits);
                    r->base = lw_new_regs(&L, range ? range : 1, r->cls);
                }
            }
        }
    }
    if (L.oom)
        goto oom;
    p->first_init = p->nregs;
    /* pass 2: instructions */
    for (i = body; i <= end && i < m->nitems && !L.oom; i++) {
        const ptx_item *it = &m->items[i];
        if (it->kind != PTX_ITEM_INSTR)
            continue;
        L.item = i;
        L.bad = 0;
        lower_instr(&L, it);
    }
    if (L.oom)
        goto oom;
    /* a body that runs off its end returns */
    {
        pi_ins *in = lw_emit(&L);
        if (!in)
            goto oom;
        in->op = PI_EXIT;
        in->item = end < m->nitems ? end : body;
    }
    /* branch targets that point past the last instruction land on that ret;
       absent operands of the scalar instructions read register 0, a sink writes register 1 */
    for (uint32_t k = 0; k < p->nins; k++) {
        pi_ins *in = &p->ins[k];
        if (in->d == PI_NOREG)
            in->d = 1;
        if (in->e == PI_NOREG)
            in->e = in->op == PI_SETP_S || in->op == PI_SETP_U ||
                    in->op == PI_MOV_UNPACK || in->op == PI_SEM ? 1 : 0;
        if (in->a == PI_NOREG)
            in->a = 0;
        if (in->b == PI_NOREG)
            in->b = 0;
        if (in->c == PI_NOREG)
            in->c = 0;
        if (in->f == PI_NOREG)
            in->f = 0;
    }
    free_state(&L);
    return 0;
oom:
    free_state(&L);
    return -1;
}
