/* rules_call.c - what ptxas checks of a call beyond its syntax (ptxas 13.0's verdicts):
 *
 * - a direct target is a .func ("Unknown symbol 'g'"; an .entry: "Illegal call target, device
 *   function expected");
 * - an indirect target is a register, with a .callprototype label after the lists, or the label of
 *   a .calltargets list before the call in scope ("Call target not recognized" for anything else
 *   there, "Label expected for forward reference" for a list after it); the call fits each
 *   function of the list as it would fit a direct call of it;
 * - the return and argument lists have the callee's (or the prototype's) counts ("Call has wrong
 *   number of parameters");
 * - each entry matches its formal parameter: a .param variable of the same size, array-ness and
 *   alignment (the types .b/.u/.s/.f of one width are interchangeable), a register of the
 *   parameter's width, or an immediate ("Type of argument does not match formal parameter 'a'",
 *   "Alignment of argument does not match formal parameter 'a'"); a register's alignment is its
 *   width, so a formal of another .align takes none; an integer immediate fits no .f formal and a
 *   floating-point one no .u / .s formal (.b takes both);
 * - '_' may take a return value, never give an argument ("Illegal argument for formal parameter");
 * - the calling function's own .param formals are no entries ("Formal parameter 'a' declared in
 *   .param space cannot be used as argument to call");
 * - a .reg formal is 32 or 64 bits ("In ABI compilation, passing predicate, 8-bit and 16-bit
 *   parameters to device functions is not supported") and a scalar (a .v2 one takes no entry).
 */
#include "ptx/text/check.h"
#include "ptx/text/sig.h"

#include <stdio.h>
#include <string.h>

static const ptx_operand *op_named(const ptx_module *m, const ptx_item *it, const ptx_match *mt, const char *name)
{
    const ptx_form *f = &ptx_forms[mt->form];
    for (int k = 0; k < f->noperands; k++)
        if (!strcmp(f->operands[k].name, name))
            return mt->op_of[k] >= 0 ? &m->ops[it->op0 + mt->op_of[k]] : NULL;
    return NULL;
}

#define NAME(s) (int)((s).len > 64 ? 64 : (s).len), m->text + (s).off

/* a function's own parameter or return parameter: its symbol's item is the function's header (a
   return parameter) or a declaration right after the parameter list's '(' or a ',' of it */
static int is_formal(const ptx_module *m, const ptx_symbol *s)
{
    if (s->item >= m->nitems || !s->item)
        return 0;
    const ptx_item *it = &m->items[s->item], *prev = &m->items[s->item - 1];
    for (uint32_t t = it->tok0; t < it->tok0 + it->ntok && m->toks[t].kind == PTX_TK_DOT; t++)
        if (ptx_span_eq(m, m->toks[t].s, ".func") || ptx_span_eq(m, m->toks[t].s, ".entry"))
            return 1;
    return prev->kind == PTX_ITEM_DIRECTIVE && prev->ntok == 1 && m->toks[prev->tok0].kind == PTX_TK_PUNCT &&
           (m->text[m->toks[prev->tok0].s.off] == '(' || m->text[m->toks[prev->tok0].s.off] == ',');
}

/* entry e of a list against formal parameter p: 0, or 1 with why */
static int entry_ok(const ptx_module *m, uint32_t at, const ptx_operand *e, const ptx_fparam *p, const char *what,
                    int k, char *why, size_t cap)
{
    char pname[80];
    snprintf(pname, sizeof pname, "%.*s", NAME(p->name));
    int is_ret = !strcmp(what, "return value");
    if (e->kind == PTX_OP_IMM || e->kind == PTX_OP_FIMM) {
        if (is_ret) {
            snprintf(why, cap, "call: return value %d is an immediate; it must be a .param variable or a register",
                     k + 1);
            return 1;
        }
        int fimm = e->kind == PTX_OP_FIMM;
        if ((p->kind == 'f' && !fimm) || ((p->kind == 'u' || p->kind == 's') && fimm) || p->array || p->vec) {
            snprintf(why, cap, "call: the type of argument %d, %s immediate, does not match formal parameter '%s' "
                     "(ptxas: Type of argument does not match formal parameter)", k + 1,
                     fimm ? "a floating-point" : "an integer", pname);
            return 1;
        }
        return 0;
    }
    if (e->kind == PTX_OP_SINK) {
        if (is_ret)
            return 0;                      /* the value is dropped */
        snprintf(why, cap, "call: argument %d is '_' (ptxas: Illegal argument for formal parameter '%s')", k + 1,
                 pname);
        return 1;
    }
    const ptx_symbol *s = ptx_lookup_at(m, m->text + e->name.off, e->name.len, at);
    if (!s) {
        snprintf(why, cap, "call: %s %d, '%.*s', is not declared", what, k + 1, NAME(e->name));
        return 1;
    }
    int type_bad, align_bad;
    if (s->cls) {                          /* a register: a scalar of the parameter's width */
        uint64_t bytes = s->cls == 1 ? 1 : s->cls / 8u;
        type_bad = p->array || p->vec || bytes != p->size;
        align_bad = type_bad || p->align != p->ebytes;
    } else if (s->space == 'p' && is_formal(m, s)) {
        snprintf(why, cap, "call: %s %d, '%.*s', is a formal parameter of the calling function in .param space "
                 "(ptxas: Formal parameter '%.*s' declared in .param space cannot be used as argument to call)",
                 what, k + 1, NAME(e->name), NAME(e->name));
        return 1;
    } else if (s->space == 'p') {
        uint64_t bytes;              /* its elements' bytes (as check.c's ptx_var_bytes counts them) */
        if (__builtin_mul_overflow(s->count, (uint64_t)(s->ebytes ? s->ebytes : 1), &bytes))
            bytes = UINT64_MAX;
        uint32_t align = s->align ? s->align : s->ebytes;
        type_bad = (s->array != 0) != (p->array != 0) || bytes != p->size;
        align_bad = align != p->align;
    } else {
        snprintf(why, cap, "call: %s %d, '%.*s', is neither a .param variable nor a register", what, k + 1,
                 NAME(e->name));
        return 1;
    }
    if (type_bad || align_bad) {
        snprintf(why, cap, "call: %s of %s %d, '%.*s', does not match formal parameter '%s' (%llu bytes%s, "
                 "aligned to %u)", type_bad ? "the type" : "the alignment", what, k + 1, NAME(e->name), pname,
                 (unsigned long long)p->size, p->array ? ", an array" : "", p->align);
        return 1;
    }
    return 0;
}

/* the call's lists against signature sig (a function's or a prototype's): 0, or 1 with why */
static int fits(const ptx_module *m, uint32_t at, const ptx_operand *rets, const ptx_operand *args, const ptx_sig *sig,
                char *why, size_t cap)
{
    if (sig->too_many) {
        snprintf(why, cap, "call: the callee has more than %d parameters, which the checker does not follow",
                 PTX_SIG_MAX);
        return 1;
    }
    int nr = rets ? rets->nelem : 0, na = args ? args->nelem : 0;
    if (nr != sig->nret || na != sig->nparam) {
        snprintf(why, cap, "call: wrong number of parameters: '%.*s' takes %d return value%s and %d argument%s; "
                 "the call gives %d and %d", NAME(sig->name), sig->nret, sig->nret == 1 ? "" : "s", sig->nparam,
                 sig->nparam == 1 ? "" : "s", nr, na);
        return 1;
    }
    for (int k = 0; k < nr + na; k++) {
        const ptx_fparam *p = k < nr ? &sig->ret[k] : &sig->param[k - nr];
        if (p->is_reg && (p->pred || p->ebytes < 4)) {
            snprintf(why, cap, "call: '%.*s' %s a .reg %s of %s (ptxas: In ABI compilation, %s predicate, 8-bit "
                     "and 16-bit %s device functions is not supported)", NAME(sig->name),
                     k < nr ? "returns" : "takes", k < nr ? "value" : "parameter",
                     p->pred ? "a .pred" : p->ebytes == 1 ? "8 bits" : "16 bits", k < nr ? "returning" : "passing",
                     k < nr ? "values from" : "parameters to");
            return 1;
        }
    }
    for (int k = 0; k < nr; k++)
        if (entry_ok(m, at, &m->elems[rets->elem + k], &sig->ret[k], "return value", k, why, cap))
            return 1;
    for (int k = 0; k < na; k++)
        if (entry_ok(m, at, &m->elems[args->elem + k], &sig->param[k], "argument", k, why, cap))
            return 1;
    return 0;
}

#define MAX_TARGETS 256                /* functions of a .calltargets list the checker follows */

/* a call through a .calltargets list: it fits each function the list names */
static int fits_list(const ptx_module *m, uint32_t at, const ptx_operand *rets, const ptx_operand *args,
                     const ptx_operand *fl, int n, char *why, size_t cap)
{
    ptx_span names[MAX_TARGETS];
    ptx_fparam params[PTX_SIG_MAX];
    ptx_sig sig;
    int kind;
    if (n > MAX_TARGETS) {
        snprintf(why, cap, "call: the .calltargets list '%.*s' names %d functions; the checker follows %d", NAME(fl->name),
                 n, MAX_TARGETS);
        return 1;
    }
    ptx_call_targets(m, fl->name, at, names, MAX_TARGETS);
    for (int k = 0; k < n; k++) {
        if (ptx_sig_of(m, names[k], &sig, params, &kind) || sig.kind == PTX_SIG_PROTO) {
            snprintf(why, cap, "call: '%.*s' in the .calltargets list '%.*s' is not a function (ptxas: Call target "
                     "not recognized)", NAME(names[k]), NAME(fl->name));
            return 1;
        }
        if (fits(m, at, rets, args, &sig, why, cap))
            return 1;
    }
    return 0;
}

int ptx_rules_call(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_operand *rets = op_named(m, it, mt, "(ret-param)"), *args = op_named(m, it, mt, "(param-list)");
    const ptx_operand *fn = op_named(m, it, mt, "func"), *fp = op_named(m, it, mt, "fptr");
    const ptx_operand *proto = op_named(m, it, mt, "fproto");
    ptx_fparam params[PTX_SIG_MAX];
    ptx_sig sig;
    int kind = 0;
    uint32_t at = (uint32_t)(it - m->items);
    if (fn) {
        if (fn->kind != PTX_OP_SYM) {
            snprintf(why, cap, "call: a call through a register names a .callprototype or a .calltargets list "
                     "after its lists (ptxas: Call target not recognized)");
            return 1;
        }
        if (ptx_sig_of(m, fn->name, &sig, params, &kind)) {
            snprintf(why, cap, kind ? "call: '%.*s' is not a function" : "call: unknown function '%.*s'",
                     NAME(fn->name));
            return 1;
        }
        if (sig.kind != PTX_SIG_FUNC) {
            snprintf(why, cap, "call: '%.*s' is an %s; a call's target is a .func (ptxas: Illegal call target, "
                     "device function expected)", NAME(fn->name), sig.kind == PTX_SIG_ENTRY ? ".entry" :
                     ".callprototype");
            return 1;
        }
    } else {
        if (!fp || fp->kind != PTX_OP_REG) {
            snprintf(why, cap, "call: the target of a call with a .callprototype or a .calltargets list is a "
                     "register holding a function's address");
            return 1;
        }
        int c = ptx_reg_class(m, fp);
        if (c != 32 && c != 64) {
            snprintf(why, cap, "call: the target register '%.*s' must be 32 or 64 bits wide", NAME(fp->name));
            return 1;
        }
        int n = proto && proto->kind == PTX_OP_SYM ? ptx_call_targets(m, proto->name, at, NULL, 0) : -1;
        if (n >= 0)
            return fits_list(m, at, rets, args, proto, n, why, cap);
        if (!proto || ptx_sig_of(m, proto->name, &sig, params, &kind) || sig.kind != PTX_SIG_PROTO) {
            ptx_span none = {0, 0};
            snprintf(why, cap, "call: '%.*s' is neither a .callprototype label nor the label of a .calltargets "
                     "list before the call (ptxas: Call target not recognized)", NAME(proto ? proto->name : none));
            return 1;
        }
    }
    return fits(m, at, rets, args, &sig, why, cap);
}
