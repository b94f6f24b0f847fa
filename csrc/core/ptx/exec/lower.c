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
#include "ptx/exec/lower_int.h"
#include "ptx/text/check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* st.bulk [a], size, initval. */
static int lw_st_bulk(lw *L, const ptx_item *it, const parts *P)
{
    (void)P;
    pi_ins *in = lw_emit(L);
    pi_ext *x = in ? lw_ext(L, in, PX_ST_BULK) : NULL;
    if (!x || lw_need_ops(L, it, "st.bulk", 3, 3))
        return -1;
    x->a0 = lw_addr(L, lw_op(L, it, 0));
    x->s0 = lw_src(L, lw_op(L, it, 1), 64);
    x->s1 = lw_src(L, lw_op(L, it, 2), 64);
    return 0;
}

/* st.async: the .release form (to global, its own completion), the mbarrier form, and the
   form without [mbar], which ptxas assembles and emits no store for (rules.c warns). */
static int lw_st_async(lw *L, const ptx_item *it, const parts *P)
{
    tinfo t;
    if (lw_has(P, "release")) {
        pi_ins *in = lw_emit(L);
        pi_ext *x = in ? lw_ext(L, in, PX_ST_ASYNC_RELEASE) : NULL;
        if (!x || lw_need_ops(L, it, "st.async.release", 2, 2))
            return -1;
        if (!lw_last_type(P, 1, &t) || t.bits > 64 || t.bits < 8)
            return lw_unsupported(L, it, "");
        x->size = (uint8_t)(t.bits / 8);
        x->flags = (uint8_t)(lw_has(P, "sys") | (lw_has(P, "mmio") << 1));
        x->a0 = lw_addr(L, lw_op(L, it, 0));
        x->s0 = lw_src(L, lw_op(L, it, 1), t.bits);
        return 0;
    }
    if (it->nops == 2)
        return lw_emit(L) ? 0 : -1;
    pi_ins *in = lw_emit(L);
    pi_ext *x = in ? lw_ext(L, in, PX_ST_ASYNC) : NULL;
    if (!x || lw_need_ops(L, it, "st.async", 3, 3))
        return -1;
    if (!lw_last_type(P, 1, &t) || (t.bits != 32 && t.bits != 64))
        return lw_unsupported(L, it, "");
    x->size = (uint8_t)(t.bits / 8);
    x->a0 = lw_addr(L, lw_op(L, it, 0));
    int n = lw_reg_list(L, lw_op(L, it, 1), x->regs, 4, 0, t.bits);
    if (n != lw_vec_of(P))
        return lw_unsupported(L, it, ": the register vector does not match");
    x->n = (uint8_t)n;
    x->a2 = lw_addr(L, lw_op(L, it, 2));
    return 0;
}

static int lw_ld(lw *L, const ptx_item *it, const parts *P)
{
    return lw_ldst(L, it, P, P->q[0][0] == 's');
}

/* The lowering of each PTX_LOWER_* (tables.h): the row of the table says which runs a form. */
typedef int (*lowering)(lw *L, const ptx_item *it, const parts *P);
static const lowering LOWERINGS[PTX_LOWER_COUNT] = {
    [PTX_LOWER_SCALAR] = lw_scalar, [PTX_LOWER_LDST] = lw_ld, [PTX_LOWER_ST_ASYNC] = lw_st_async,
    [PTX_LOWER_ST_BULK] = lw_st_bulk, [PTX_LOWER_MBARRIER] = lw_mbarrier, [PTX_LOWER_CP] = lw_cp,
    [PTX_LOWER_FENCE] = lw_fence, [PTX_LOWER_TENSORMAP] = lw_tensormap, [PTX_LOWER_BAR] = lw_bar,
    [PTX_LOWER_WARP] = lw_warp, [PTX_LOWER_WARP_MORE] = lw_warp_more, [PTX_LOWER_WGMMA] = lw_wgmma,
    [PTX_LOWER_MMA] = lw_mma, [PTX_LOWER_ATOM] = lw_atom, [PTX_LOWER_MULTIMEM] = lw_multimem, [PTX_LOWER_CALL] = lw_call, [PTX_LOWER_SPACE] = lw_space,
    [PTX_LOWER_MISC] = lw_misc,
};

static int lower_instr(lw *L, const ptx_item *it)
{
    parts P;
    lw_split(L->m, it->opcode, &P);
    uint32_t first = L->p->nins;
    int rc;
    ptx_match mt;
    const char *notyet = ptx_not_modelled(L->m, it);      /* the checker's list (text/notyet.c) */
    if (notyet) {
        char why[160];
        snprintf(why, sizeof why, ": not modelled yet: %s", notyet);
        rc = lw_unsupported(L, it, why);
    } else if (ptx_match_form(L->m, it, &mt)) {
        rc = lw_unsupported(L, it, ": no form of the instruction table matches it");
    } else {
        int k = ptx_forms[mt.form].lower;
        if (k == PTX_LOWER_SEM)
            rc = lw_sem(L, it, &mt);
        else if (k > PTX_LOWER_NONE && k < PTX_LOWER_COUNT && LOWERINGS[k])
            rc = LOWERINGS[k](L, it, &P);
        else
            rc = lw_unsupported(L, it, ": its form has no lowering");
    }
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
    if (k->s.len >= sizeof buf)
        return 0;
    lw_span_str(L->m, k->s, buf, sizeof buf);
    errno = 0;
    *v = strtoull(buf, NULL, 0);
    return errno == 0;
}

/* The elements of the array whose first '[' is token i (the product of its [N]s, 0 for an
   unsized []), token *end past the last ']'; UINT64_MAX when it does not fit in 64 bits. */
static uint64_t decl_count(const lw *L, uint32_t i, uint32_t end, uint32_t *next)
{
    uint64_t count = 1, v;
    while (i + 1 < end && L->m->text[tok(L, i)->s.off] == '[' && tok(L, i)->kind == PTX_TK_PUNCT) {
        if (!tok_int(L, i + 1, &v))
            v = 0;
        else
            i++;
        if (__builtin_mul_overflow(count, v, &count))
            count = UINT64_MAX;
        i += 2;                       /* ']' and on */
    }
    *next = i;
    return count;
}

/* offset `at` rounded up to `align` (nonzero) */
static uint64_t align_up(uint64_t at, uint64_t align)
{
    return at > UINT64_MAX - (align - 1) ? UINT64_MAX : (at + align - 1) / align * align;
}

static void decl_limit(lw *L, const ptx_item *it, const char *what, uint64_t need, uint64_t max)
{
    ptx_diag_add(L->ds, 1, it->line, it->col, "%s %llu bytes; the limit is %llu bytes on %s", what,
                 (unsigned long long)need, (unsigned long long)max, L->m->target);
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
    uint64_t align = 0, bits = 0, count = 0;
    int array = 0, saw_type = 0;
    ptx_span name = {0, 0};
    uint32_t end = it->tok0 + it->ntok;
    for (uint32_t i = it->tok0; i < end; i++) {
        const ptx_token *k = tok(L, i);
        uint64_t v;
        if (tok_is(L, i, ".align") && !saw_type && i + 1 < end && tok_int(L, i + 1, &v)) {
            align = v;
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
            count = decl_count(L, i, end, &i) ;
            i--;
        }
    }
    if (!name.len || !bits)
        return;
    uint64_t esize = bits < 8 ? 1 : bits / 8, size, off = align_up(p->param_bytes, align ? align : esize);
    if (!array)
        size = esize;
    else if (__builtin_mul_overflow(esize, count, &size))
        size = UINT64_MAX;
    uint64_t max = ptx_max_param_bytes(L->m);
    if (off > max || size > max - off) {
        decl_limit(L, it, "the parameters take", size > UINT64_MAX - off ? UINT64_MAX : off + size, max);
        return;
    }
    if (GROWN(p->params, p->nparams, L->capparams)) {
        L->oom = 1;
        return;
    }
    pi_param *pa = &p->params[p->nparams++];
    memset(pa, 0, sizeof *pa);
    if (!(pa->name = lw_span_dup(L, name))) {
        p->nparams--;
        return;
    }
    pa->size = (uint32_t)size;                  /* within the parameter space: 32,764 bytes */
    pa->align = (uint32_t)(align ? align : esize);
    pa->array = array;
    pa->offset = (uint32_t)off;
    p->param_bytes = (uint32_t)(off + size);
}

/* .shared [.align N] .type name[[N]] (.extern: dynamic, placed after the rest) */
static void shared_decl(lw *L, const ptx_item *it, int pass_dynamic)
{
    pi_prog *p = L->p;
    uint64_t align = 0, bits = 0, count = 1;
    int is_extern = 0, is_shared = 0, array = 0;
    ptx_span name = {0, 0};
    uint32_t end = it->tok0 + it->ntok;
    for (uint32_t i = it->tok0; i < end; i++) {
        const ptx_token *k = tok(L, i);
        uint64_t v;
        if (tok_is(L, i, ".extern"))
            is_extern = 1;
        else if (tok_is(L, i, ".shared"))
            is_shared = 1;
        else if (tok_is(L, i, ".align") && i + 1 < end && tok_int(L, i + 1, &v)) {
            align = v ? v : 1;
            i++;
        } else if (decl_bits(L, i))
            bits = (uint32_t)decl_bits(L, i);
        else if (k->kind == PTX_TK_IDENT && !name.len)
            name = k->s;
        else if (k->kind == PTX_TK_PUNCT && L->m->text[k->s.off] == '[') {
            array = 1;
            count = decl_count(L, i, end, &i);
            i--;
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
    uint64_t esize = bits / 8 ? bits / 8 : 1, size;
    if (!align)
        align = esize;
    /* every dynamic array starts after the static ones (pass 0 placed them all) */
    uint64_t off = align_up(p->static_smem, align), max = ptx_max_shared_bytes(L->m);
    if (__builtin_mul_overflow(esize, count, &size))
        size = UINT64_MAX;
    if (dynamic)
        size = 0;
    if (off > max || size > max - off) {
        char what[128];
        snprintf(what, sizeof what, "the .shared variables up to '%.*s' take", (int)(name.len > 64 ? 64 : name.len),
                 L->m->text + name.off);
        decl_limit(L, it, what, size > UINT64_MAX - off ? UINT64_MAX : off + size, max);
        return;
    }
    shvar *s = &L->sh[L->nsh];
    if (!(s->name = lw_span_dup(L, name)))
        return;
    L->nsh++;
    s->offset = (uint32_t)off;                  /* within a CTA's shared data: 227 KiB at most */
    if (dynamic) {
        if (!p->dyn_smem)
            p->dyn_smem = s->offset;
        return;
    }
    p->static_smem = (uint32_t)(off + size);
}

void pi_prog_free(pi_prog *p)
{
    for (uint32_t i = 0; p->params && i < p->nparams; i++)
        free(p->params[i].name);
    for (uint32_t i = 0; p->vars && i < p->nvars; i++)
        free(p->vars[i].name);
    for (uint32_t i = 0; p->funcs && i < p->nfuncs; i++)
        free(p->funcs[i].name);
    free(p->entry);
    free(p->ins);
    free(p->ext);
    free(p->vregs);
    free(p->init);
    free(p->params);
    free(p->sems);
    free(p->gimage);
    free(p->relocs);
    free(p->vars);
    free(p->funcs);
    free(p->fsyms);
    free(p->slots);
    free(p->calls);
    free(p->cargs);
    free(p->ctargets);
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

/* Pass 1 over one function's body (items open..close): every item's { } scope, the labels
 * (at the instruction count *nins on), the registers and the frame variables (lower_call.c).
 * 0, or -1 out of memory. */
static int scan_body(lw *L, uint32_t open, uint32_t close, uint32_t *nins)
{
    const ptx_module *m = L->m;
    pi_prog *p = L->p;
    ptx_diags *ds = L->ds;
    int scope = -1;
    for (uint32_t i = open; i <= close && i < m->nitems && !L->oom; i++) {
        const ptx_item *it = &m->items[i];
        if (it->kind == PTX_ITEM_OPEN) {
            if (GROWN(L->parent, (uint32_t)L->nscopes, L->capscope))
                return -1;
            L->parent[L->nscopes] = scope;
            scope = L->nscopes++;
            if (i == open && lw_frame_formals(L, scope))
                return -1;
        } else if (it->kind == PTX_ITEM_CLOSE) {
            scope = scope >= 0 ? L->parent[scope] : -1;
        }
        L->item_scope[i] = scope;
        if (it->kind == PTX_ITEM_LABEL) {
            if (GROWN(L->lb, L->nlb, L->caplb))
                return -1;
            L->lb[L->nlb].name = it->opcode;
            L->lb[L->nlb].scope = scope;
            L->lb[L->nlb].ins = *nins;
            L->nlb++;
        } else if (it->kind == PTX_ITEM_INSTR) {
            (*nins)++;
        } else if (it->kind == PTX_ITEM_DIRECTIVE && it->ntok && (ptx_span_eq(m, m->toks[it->tok0].s, ".local") ||
                                                                   ptx_span_eq(m, m->toks[it->tok0].s, ".param"))) {
            if (lw_frame_decl(L, it, scope))
                return -1;
        } else if (it->kind == PTX_ITEM_DIRECTIVE && it->ntok && ptx_span_eq(m, m->toks[it->tok0].s, ".reg")) {
            int bits = 0;
            for (uint32_t k = it->tok0 + 1; k < it->tok0 + it->ntok; k++) {
                const ptx_token *t = &m->toks[k];
                if (decl_bits(L, k)) {
                    bits = decl_bits(L, k);
                } else if (t->kind == PTX_TK_DOT && ptx_span_eq(m, t->s, ".v2")) {
                    ptx_diag_add(ds, 1, t->line, t->col, "vector registers are not modelled by the interpreter");
                } else if (t->kind == PTX_TK_IDENT) {
                    uint64_t range = 0, v;
                    if (k + 3 < it->tok0 + it->ntok && m->text[m->toks[k + 1].s.off] == '<') {
                        range = tok_int(L, k + 2, &v) ? v : UINT64_MAX;
                        k += 3;
                        if (!range)
                            continue;               /* %r<0> names no register */
                    }
                    uint64_t n = range ? range : 1;
                    if (n > (PI_MAX_REGS - p->nregs) / (bits > 64 ? 2 : 1)) {
                        ptx_diag_add(ds, 1, t->line, t->col, "%.*s<%llu>: the kernel declares more registers "
                                     "a thread than the interpreter holds (at most %u, 2^20)",
                                     (int)(t->s.len > 64 ? 64 : t->s.len), m->text + t->s.off, (unsigned long long)n,
                                     PI_MAX_REGS);
                        break;
                    }
                    if (GROWN(L->rd, L->nrd, L->caprd))
                        return -1;
                    regdecl *r = &L->rd[L->nrd++];
                    r->name = t->s;
                    r->range = (uint32_t)range;
                    r->scope = scope;
                    /* a .b128 register is two 64-bit ones side by side: its low half, then its high */
                    r->cls = (uint8_t)(bits > 64 ? 128 : bits);
                    r->base = lw_new_regs(L, (uint32_t)(r->cls == 128 ? 2 * n : n), r->cls);
                    if (n > p->reg_decl_regs) {          /* the largest declaration, for messages */
                        p->reg_decl_regs = (uint32_t)n;
                        p->reg_decl_line = t->line;
                    }
                }
            }
        }
    }
    return L->oom ? -1 : 0;
}

/* The lowering's own tables (the program keeps what it was given). */
static void free_state(lw *L)
{
    free(L->vinits);
    free(L->rd);
    free(L->lb);
    free(L->parent);
    free(L->item_scope);
    for (uint32_t i = 0; L->sh && i < L->nsh; i++)
        free(L->sh[i].name);
    free(L->sh);
    for (uint32_t i = 0; L->gv && i < L->ngv; i++)
        free(L->gv[i].name);
    free(L->gv);
    free(L->cls);
    free(L->fopen);
    free(L->fclose);
    free(L->fhdr);
}

int pi_lower(pi_prog *p, const ptx_module *m, const char *entry, ptx_diags *ds)
{
    memset(p, 0, sizeof *p);
    p->mod = m;
    lw L;
    memset(&L, 0, sizeof L);
    L.p = p;
    L.m = m;
    const char *only = getenv("PTXASYNC_SEM_ONLY");    /* tests: every row through the library */
    L.sem_only = only && *only == '1';
    L.ds = ds;
    uint32_t hdr = 0;
    if (find_entry(m, entry, ds, &hdr))
        return 0;
    for (uint32_t k = m->items[hdr].tok0; k + 1 < m->items[hdr].tok0 + m->items[hdr].ntok; k++)
        if (ptx_span_eq(m, m->toks[k].s, ".entry"))
            if (!p->entry && !(p->entry = lw_span_dup(&L, m->toks[k + 1].s)))
                goto oom;
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
    if (lw_vars(&L, body, end)) {      /* reported, or out of memory */
        if (L.oom)
            goto oom;
        free_state(&L);
        return 0;
    }
    /* the functions: the .entry and each .func it reaches (lower_call.c) */
    L.item_scope = calloc(m->nitems, sizeof(int));
    if (!L.item_scope)
        goto oom;
    lw_new_regs(&L, 1, 1);                  /* register 0: the constant 1 (unguarded) */
    lw_new_regs(&L, 1, 64);                 /* register 1: where a sink `_` writes */
    lw_new_regs(&L, 1, 1);                  /* register 2: the condition code (PI_REG_CC) */
    if (lw_funcs(&L, hdr, body, end) || lw_var_inits(&L)) {
        if (L.oom)
            goto oom;
        free_state(&L);
        return 0;
    }
    /* pass 1, each function: scopes, labels, registers, frame variables */
    uint32_t nins = 0;
    for (uint32_t f = 0; f < p->nfuncs && !L.oom; f++) {
        pi_func *F = &p->funcs[f];
        if (!L.fopen[f])
            continue;                       /* no body: the runtime's, or never called */
        F->pc = nins;
        F->reg0 = p->nregs;
        L.fn = f;
        if (scan_body(&L, L.fopen[f], L.fclose[f], &nins))
            goto oom;
        F->nregs = p->nregs - F->reg0;
        nins++;                             /* the ret after its last instruction */
    }
    if (L.oom)
        goto oom;
    if (lw_frames_done(&L))
        goto oom;
    p->first_init = p->nregs;
    /* pass 2: instructions, each function's after the last */
    for (uint32_t f = 0; f < p->nfuncs && !L.oom; f++) {
        if (!L.fopen[f])
            continue;
        L.fn = f;
        for (i = L.fopen[f]; i <= L.fclose[f] && i < m->nitems && !L.oom; i++) {
            const ptx_item *it = &m->items[i];
            if (it->kind != PTX_ITEM_INSTR)
                continue;
            L.item = i;
            L.bad = 0;
            lower_instr(&L, it);
        }
        /* a body that runs off its end returns */
        pi_ins *in = lw_emit(&L);
        if (!in)
            goto oom;
        in->op = f ? PI_RET : PI_EXIT;
        in->item = L.fclose[f] < m->nitems ? L.fclose[f] : L.fopen[f];
    }
    if (L.oom)
        goto oom;
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
