/* rules_funcs.c - what ptxas checks of function headers and .calltargets lists, call or no call
 * (ptxas 13.0's and 13.5's verdicts, alike):
 *
 * - an .entry's parameters are .param ones ("Entry parameter 'a' must have .param state space");
 * - a .reg parameter of a .func is no array ("Variable 'a' cannot be allocated into a register");
 * - `label: .calltargets f, g;` names functions (.func or .entry, with or without a body) declared
 *   before it ("Unknown symbol 'f'", "Illegal call target, device function expected"); the list
 *   has a label and at least one name (a syntax error otherwise).
 * What a call through a list must fit is rules_call.c's.
 */
#include "ptx/text/check.h"
#include "ptx/text/sig.h"

#include <string.h>

#define NAME(s) (int)((s).len > 64 ? 64 : (s).len), m->text + (s).off

static int first_is(const ptx_module *m, const ptx_item *it, const char *tok)
{
    return it->kind == PTX_ITEM_DIRECTIVE && it->ntok && ptx_span_eq(m, m->toks[it->tok0].s, tok);
}

static int is_header(const ptx_module *m, const ptx_item *it)
{
    static const char *const LEAD[] = {".func", ".entry", ".visible", ".extern", ".weak"};
    for (size_t k = 0; k < sizeof LEAD / sizeof LEAD[0]; k++)
        if (first_is(m, it, LEAD[k]))
            return 1;
    return 0;
}

static void check_header_params(const ptx_module *m, uint32_t i, ptx_diags *ds)
{
    ptx_fparam params[PTX_SIG_MAX];
    ptx_sig sig;
    if (ptx_sig_at(m, i, &sig, params) || sig.kind == PTX_SIG_PROTO)
        return;
    for (int k = 0; k < sig.nparam + sig.nret; k++) {
        const ptx_fparam *p = k < sig.nparam ? &sig.param[k] : &sig.ret[k - sig.nparam];
        if (!p->is_reg)
            continue;
        if (sig.kind == PTX_SIG_ENTRY)
            ptx_diag_add(ds, 1, sig.line, sig.col, "entry parameter '%.*s' must have .param state space, not .reg",
                         NAME(p->name));
        else if (p->array)
            ptx_diag_add(ds, 1, sig.line, sig.col, "the .reg parameter '%.*s' of '%.*s' is an array; ptxas: "
                         "Variable '%.*s' cannot be allocated into a register", NAME(p->name), NAME(sig.name),
                         NAME(p->name));
    }
}

/* a function named `name` whose header is an item before `before` */
static int declared_before(const ptx_module *m, ptx_span name, uint32_t before)
{
    ptx_fparam params[PTX_SIG_MAX];
    ptx_sig sig;
    int kind;
    if (ptx_sig_of(m, name, &sig, params, &kind))
        return 0;
    if (sig.kind != PTX_SIG_PROTO && sig.header < before)
        return 1;
    for (uint32_t i = 0; i < before; i++)    /* (the latest is later: an earlier declaration of it) */
        if (is_header(m, &m->items[i]) && !ptx_sig_at(m, i, &sig, params) && sig.kind != PTX_SIG_PROTO &&
            sig.name.len == name.len && !memcmp(m->text + sig.name.off, m->text + name.off, name.len))
            return 1;
    return 0;
}

static void check_calltargets(const ptx_module *m, uint32_t i, ptx_diags *ds)
{
    const ptx_item *it = &m->items[i];
    if (!i || m->items[i - 1].kind != PTX_ITEM_LABEL) {
        ptx_diag_add(ds, 1, it->line, it->col, "syntax error: a .calltargets list needs a label (flist: "
                     ".calltargets f, g;)");
        return;
    }
    int n = 0;
    for (uint32_t t = it->tok0 + 1; t < it->tok0 + it->ntok; t++) {
        const ptx_token *k = &m->toks[t];
        if (k->kind != PTX_TK_IDENT)
            continue;
        n++;
        int kind;
        ptx_fparam params[PTX_SIG_MAX];
        ptx_sig sig;
        if (declared_before(m, k->s, i))
            continue;
        if (ptx_sig_of(m, k->s, &sig, params, &kind) && !kind)
            ptx_diag_add(ds, 1, k->line, k->col, "'%.*s' in the .calltargets list is not a declared symbol "
                         "(ptxas: Unknown symbol)", NAME(k->s));
        else
            ptx_diag_add(ds, 1, k->line, k->col, "'%.*s' in the .calltargets list is not a function declared "
                         "before it (ptxas: Illegal call target, device function expected)", NAME(k->s));
    }
    if (!n)
        ptx_diag_add(ds, 1, it->line, it->col, "syntax error: the .calltargets list names no function");
}

void ptx_check_funcs(const ptx_module *m, ptx_diags *ds)
{
    for (uint32_t i = 0; i < m->nitems; i++) {
        const ptx_item *it = &m->items[i];
        if (first_is(m, it, ".calltargets"))
            check_calltargets(m, i, ds);
        else if (is_header(m, it))
            check_header_params(m, i, ds);
    }
}
