/* match.c - what the checker and the rules ask of a matched form and of the
 * module: a form's qualifiers and slot values, a register's width class, a
 * target in an architecture list. Below check.c and rules*.c, which both call
 * it. */
#include "ptx/text/check.h"

#include <string.h>

int ptx_target_in(const ptx_module *m, const char *list)
{
    /* "sm_90a sm_100a sm_100f+": exact a-targets, or a family (same major, >= the given sm,
       suffix a or f) */
    const char *p = list;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        int sm = 0;
        const char *q = p + 3;
        while (q < e && *q >= '0' && *q <= '9')
            sm = sm * 10 + (*q++ - '0');
        char suf = q < e && (*q == 'a' || *q == 'f') ? *q : 0;
        int family = e[-1] == '+';
        if (family) {
            if (m->sm / 10 == sm / 10 && m->sm >= sm && m->suffix != 0)
                return 1;
        } else if (m->sm == sm && m->suffix == suf) {
            return 1;
        }
        p = e;
    }
    return 0;
}

int ptx_reg_class(const ptx_module *m, const ptx_operand *o)
{
    const char *s = m->text + o->name.off;
    size_t n = o->name.len;
    const ptx_symbol *sym = ptx_lookup(m, s, n);
    if (sym)
        return sym->cls ? sym->cls : -2;       /* -2: a variable used as a value */
    /* special registers */
    static const struct { const char *name; int cls; } sregs[] = {
        {"%tid", 32}, {"%ntid", 32}, {"%ctaid", 32}, {"%nctaid", 32}, {"%laneid", 32},
        {"%warpid", 32}, {"%nwarpid", 32}, {"%smid", 32}, {"%nsmid", 32}, {"%gridid", 64},
        {"%cluster_ctarank", 32}, {"%cluster_nctarank", 32}, {"%clusterid", 32},
        {"%nclusterid", 32}, {"%cluster_ctaid", 32}, {"%cluster_nctaid", 32},
        {"%is_explicit_cluster", 1}, {"%lanemask_eq", 32}, {"%lanemask_lt", 32},
        {"%lanemask_le", 32}, {"%lanemask_gt", 32}, {"%lanemask_ge", 32}, {"%clock", 32},
        {"%clock64", 64}, {"%globaltimer", 64}, {"%globaltimer_lo", 32}, {"%globaltimer_hi", 32}, {"%dynamic_smem_size", 32},
        {"%total_smem_size", 32}, {"%aggr_smem_size", 32},
    };
    size_t base = n;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '.') {
            base = i;
            break;
        }
    for (size_t i = 0; i < sizeof sregs / sizeof sregs[0]; i++)
        if (strlen(sregs[i].name) == base && !memcmp(sregs[i].name, s, base))
            return sregs[i].cls;
    return -1;
}

int ptx_has_qualifier(const ptx_match *mt, const char *q)
{
    const ptx_form *f = &ptx_forms[mt->form];
    for (int s = 0; s < f->nslots; s++) {
        if (mt->slot_at[s] < 0)
            continue;
        const char *v = f->slots[s].values[mt->slot_val[s]];
        if (q[0] && v[1] == q[1] && !strcmp(v, q))   /* every value starts with a dot */
            return 1;
    }
    return 0;
}

const char *ptx_slot_value(const ptx_match *mt, const char *slot)
{
    const ptx_form *f = &ptx_forms[mt->form];
    for (int s = 0; s < f->nslots; s++)
        if (f->slots[s].name[0] == slot[0] && !strcmp(f->slots[s].name, slot))
            return mt->slot_at[s] >= 0 ? f->slots[s].values[mt->slot_val[s]] : NULL;
    return NULL;
}

/* the names a `label: .branchtargets ...;` or `label: .calltargets ...;` lists */
static int target_list(const ptx_module *m, const char *directive, ptx_span tlist, uint32_t at_item, ptx_span *names,
                       int cap)
{
    const ptx_symbol *s = ptx_lookup_at(m, m->text + tlist.off, tlist.len, at_item);
    if (!s || s->cls || s->space || s->item + 1 >= m->nitems || m->items[s->item].kind != PTX_ITEM_LABEL)
        return -1;
    const ptx_item *d = &m->items[s->item + 1];
    if (d->kind != PTX_ITEM_DIRECTIVE || !d->ntok || !ptx_span_eq(m, m->toks[d->tok0].s, directive))
        return -1;
    if (directive[2] == 'a') {         /* .calltargets: a list before the call, in a block still open */
        if (s->item >= at_item)
            return -1;
        int depth = 0;
        for (uint32_t i = s->item + 1; i < at_item; i++)
            if (m->items[i].kind == PTX_ITEM_OPEN)
                depth++;
            else if (m->items[i].kind == PTX_ITEM_CLOSE && --depth < 0)
                return -1;
    }
    int n = 0;
    for (uint32_t t = d->tok0 + 1; t < d->tok0 + d->ntok; t++) {
        const ptx_token *k = &m->toks[t];
        if (k->kind == PTX_TK_IDENT) {
            if (n < cap)
                names[n] = k->s;
            n++;
        } else if (!(k->kind == PTX_TK_PUNCT && (m->text[k->s.off] == ',' || m->text[k->s.off] == ';'))) {
            return -1;
        }
    }
    return n;
}

int ptx_branch_targets(const ptx_module *m, ptx_span tlist, uint32_t at_item, ptx_span *names, int cap)
{
    return target_list(m, ".branchtargets", tlist, at_item, names, cap);
}

int ptx_call_targets(const ptx_module *m, ptx_span flist, uint32_t at_item, ptx_span *names, int cap)
{
    return target_list(m, ".calltargets", flist, at_item, names, cap);
}

const ptx_operand *ptx_operand_named(const ptx_module *m, const ptx_item *it, const ptx_match *mt, const char *name)
{
    const ptx_form *f = &ptx_forms[mt->form];
    for (int k = 0; k < f->noperands; k++)
        if (!strcmp(f->operands[k].name, name))
            return mt->op_of[k] >= 0 ? &m->ops[it->op0 + mt->op_of[k]] : NULL;
    return NULL;
}
