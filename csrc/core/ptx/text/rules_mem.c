/* rules_mem.c - what ptxas 13.0 checks beyond the syntax blocks for the loads, stores, cache
   hints and address queries of the data-movement chapter (ld, ld.global.nc, ldu, st, multimem.*,
   prefetch{u}, applypriority, discard, createpolicy, isspacep, cvta, mapa, getctarank), learnt
   from its verdicts on generated forms (tests/ptx/test_ptx_mem_ptxas.py); docs/loads-stores.md
   gives each rule with the case that shows it. */
#include "ptx/text/check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is(const char *v, const char *lit)
{
    return v && !strcmp(v, lit);
}

/* a type name's kind ('b' 'u' 's' 'f') and width in bits */
static int type_of(const char *t, char *kind)
{
    if (!t)
        return 0;
    t++;
    *kind = t[0] == 'f' || (t[0] == 'b' && t[1] == 'f') || t[0] == 'e' ? 'f' : t[0];
    if (!strcmp(t, "f16x2") || !strcmp(t, "bf16x2") || !strcmp(t, "e4m3x4") || !strcmp(t, "e5m2x4"))
        return 32;
    if (!strcmp(t, "e4m3x2") || !strcmp(t, "e5m2x2"))
        return 16;
    if (!strcmp(t, "e4m3") || !strcmp(t, "e5m2"))
        return 8;
    const char *d = t;
    while (*d && (*d < '0' || *d > '9'))
        d++;
    int bits = 0;
    while (*d >= '0' && *d <= '9')
        bits = bits * 10 + (*d++ - '0');
    return bits;
}

/* a register operand's width and kind; 0 when it is no declared register */
static int reg_of(const ptx_module *m, const ptx_operand *o, char *kind)
{
    const ptx_symbol *s = ptx_lookup(m, m->text + o->name.off, o->name.len);
    if (s) {
        *kind = s->cls == 1 ? 'p' : s->kind ? s->kind : 'b';
        return s->cls;
    }
    int c = ptx_reg_class(m, o);              /* special registers: unsigned */
    *kind = c == 1 ? 'p' : 'u';
    return c > 0 ? c : 0;
}

/* does register (bits rb, kind rk) hold a value of type (tb, tk)? relaxed: ld/st, whose register
   may be wider than the type (ptxas 13.0: a .b type takes any register at least as wide; .u/.s any
   integer or bit register at least as wide; .f a bit register at least as wide or a float register
   of the same width); exact: the width is the type's */
static int reg_fits(int rb, char rk, int tb, char tk, int relaxed)
{
    if (rk == 'p' || rb <= 0)
        return 0;
    if (relaxed ? rb < tb : rb != tb)
        return 0;
    if (tk == 'b')
        return 1;
    if (tk == 'u' || tk == 's')
        return rk != 'f';
    return rk == 'b' || (rk == 'f' && rb == tb);
}

/* an immediate of a .type: an integer for bit and integer types; a float literal for float
   types, a 0f literal for 32-bit bits, a decimal or 0d one for 64-bit bits */
static int imm_fits(const ptx_module *m, const ptx_operand *o, int tb, char tk)
{
    if (o->kind == PTX_OP_IMM)
        return tk != 'f';
    const char *s = m->text + o->name.off;
    if (*s == '-')
        s++;
    int f32 = s[0] == '0' && (s[1] == 'f' || s[1] == 'F');
    if (tk == 'f')
        return 1;
    if (tk == 'b')
        return f32 ? tb == 32 : tb == 64;
    return 0;
}

/* the value operand of a load or store: element count, each element's register or immediate, one
   register class for all ("Incompatible elements of vector expression"), sinks */
static int value(const ptx_module *m, const ptx_operand *o, const char *type, int nvec, int store,
                 int relaxed, char *why, size_t cap)
{
    char tk = 'b';
    int tb = type_of(type, &tk);
    const ptx_operand *els = o;
    int n = 1;
    if (o->kind == PTX_OP_VEC) {
        els = &m->elems[o->elem];
        n = o->nelem;
        if (n != (nvec ? nvec : 1)) {
            snprintf(why, cap, "the value is a vector of %d elements, not %d (Arguments mismatch)",
                     nvec ? nvec : 1, n);
            return 1;
        }
    } else if (nvec) {
        snprintf(why, cap, "a .v%d value is a vector {..} of %d elements (Arguments mismatch)", nvec, nvec);
        return 1;
    }
    int cb = 0, sinks = 0, lit = 0;
    char ck = 0;
    for (int i = 0; i < n; i++) {
        const ptx_operand *e = &els[i];
        sinks += e->kind == PTX_OP_SINK;
        /* literals of one vector are of one kind: integers, 0f (32-bit) or decimal/0d (64-bit)
           floats ("Vector with elements of different types are not allowed") */
        int k = e->kind == PTX_OP_IMM ? 1 : e->kind != PTX_OP_FIMM ? 0 :
                (m->text[e->name.off] == '0' && (m->text[e->name.off + 1] | 32) == 'f') ? 2 : 3;
        if (k && lit && k != lit) {
            snprintf(why, cap, "the vector's literals are of different types");
            return 1;
        }
        if (k)
            lit = k;
    }
    if (sinks == n) {
        snprintf(why, cap, "a value of sinks only (ptxas: \"Unable to infer type of vector elements\")");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        const ptx_operand *e = &els[i];
        if (e->kind == PTX_OP_SINK) {
            /* a sink: a load's vector element, or a 256-bit store's (.v8 of 32 bits, .v4 of 64) */
            if (o->kind != PTX_OP_VEC || (store && nvec * tb != 256)) {
                snprintf(why, cap, "'_' is a value here only as an element of a load's vector or of a "
                         "256-bit store's");
                return 1;
            }
            continue;
        }
        if (e->kind == PTX_OP_IMM || e->kind == PTX_OP_FIMM) {
            /* a store's vector takes any literal as an element (ptxas 13.0), a scalar one of its type */
            if (!store || (o->kind != PTX_OP_VEC && !imm_fits(m, e, tb, tk))) {
                snprintf(why, cap, "the immediate '%.*s' is no %s value here (Arguments mismatch)",
                         (int)e->name.len, m->text + e->name.off, type);
                return 1;
            }
            continue;
        }
        char rk = 0;
        int rb = e->kind == PTX_OP_REG ? reg_of(m, e, &rk) : 0;
        if (!reg_fits(rb, rk, tb, tk, relaxed)) {
            snprintf(why, cap, "'%.*s' holds no %s value (Arguments mismatch: ptxas takes a register of the "
                     "type's kind, %s)", (int)e->name.len, m->text + e->name.off, type,
                     relaxed ? "at least as wide" : "as wide");
            return 1;
        }
        if (cb && (cb != rb || ck != rk)) {
            snprintf(why, cap, "the vector's registers are of different types (Incompatible elements of "
                     "vector expression)");
            return 1;
        }
        cb = rb, ck = rk;
    }
    return 0;
}

/* the state space of a variable, as an instruction's qualifier */
static char var_space(const ptx_module *m, const ptx_operand *o)
{
    if (!o->has_base || m->text[o->name.off] == '%')
        return 0;
    const ptx_symbol *s = ptx_lookup(m, m->text + o->name.off, o->name.len);
    return s ? s->space : 0;
}

/* whether [a] names an input parameter of a function (a .param of an .entry's or a .func's list,
   not a return parameter, not a call scope's .param variable) */
static int input_param(const ptx_module *m, const ptx_item *it, const ptx_operand *o)
{
    if (!o->has_base || m->text[o->name.off] == '%')
        return 0;
    const ptx_symbol *s = ptx_lookup_at(m, m->text + o->name.off, o->name.len, (uint32_t)(it - m->items));
    if (!s || s->space != 'p' || !s->item || s->item >= m->nitems)
        return 0;
    const ptx_item *prev = &m->items[s->item - 1];
    return prev->kind == PTX_ITEM_DIRECTIVE && prev->ntok == 1 && m->toks[prev->tok0].kind == PTX_TK_PUNCT &&
           strchr("(,", m->text[m->toks[prev->tok0].s.off]);
}

/* an address operand [a]: an immediate only to .local; a register of an integer or bit type; a
   generic or .global register 64 bits wide on sm_90 and later (ptxas: "32-Bit ABI ... is not
   supported on sm_90 or higher architectures"); a generic address of a variable not in .param or
   .const ("State space mismatch") */
static int address(const ptx_module *m, const ptx_operand *a, const char *ss, const char *root,
                   char *why, size_t cap)
{
    if (!a || a->kind != PTX_OP_ADDR)
        return 0;
    if (!a->has_base) {
        if (!is(ss, ".local") && (!strcmp(root, "ld") || !strcmp(root, "st") || !strcmp(root, "ldu") ||
                                  !strcmp(root, "ld.global.nc") || !strncmp(root, "multimem.", 9))) {
            snprintf(why, cap, "%s: an immediate address is taken for .local only", root);
            return 1;
        }
        return 0;
    }
    if (m->text[a->name.off] == '%') {
        ptx_operand r = *a;
        r.kind = PTX_OP_REG;
        char rk = 0;
        int rb = reg_of(m, &r, &rk);
        if (rk == 'f' || rk == 'p') {
            snprintf(why, cap, "%s: the address register '%.*s' is not of an integer or bit type", root,
                     (int)a->name.len, m->text + a->name.off);
            return 1;
        }
        if (rb == 32 && (!ss || is(ss, ".global"))) {
            snprintf(why, cap, "%s: a %s address in a 32-bit register under .address_size 64 (ptxas: \"uses "
                     "32-bit address ... conflicting with .address_size 64\")", root, ss ? ss : "generic");
            return 1;
        }
        return 0;
    }
    char vs = var_space(m, a);
    char want = !ss ? 0 : !strncmp(ss, ".shared", 7) ? 's' : !strncmp(ss, ".param", 6) ? 'p' : ss[1];
    if (want && vs && vs != want) {
        snprintf(why, cap, "%s: '%.*s' is not in %s (State space mismatch)", root, (int)a->name.len,
                 m->text + a->name.off, ss);
        return 1;
    }
    if (!ss && (vs == 'p' || vs == 'c')) {
        snprintf(why, cap, "%s: a generic address of the %s variable '%.*s' (State space mismatch)", root,
                 vs == 'p' ? ".param" : ".const", (int)a->name.len, m->text + a->name.off);
        return 1;
    }
    return 0;
}

static int global_or_generic(const char *ss)
{
    return !ss || is(ss, ".global");
}

/* ld, st, ldu, ld.global.nc */
static int ldst(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const char *root = ptx_forms[mt->form].root;
    int store = root[0] == 's';
    const char *ss = ptx_slot_value(mt, "ss");
    if (!ss)
        ss = ptx_slot_value(mt, "global");
    if (!strcmp(root, "ld.global.nc"))
        ss = ".global";
    const char *type = ptx_slot_value(mt, "type");
    const char *vec = ptx_slot_value(mt, "vec");
    int nvec = vec ? vec[2] - '0' : 0;
    char tk = 'b';
    int tb = type_of(type, &tk);
    int bits = (nvec ? nvec : 1) * tb;
    const ptx_operand *a = ptx_operand_named(m, it, mt, "[a]");
    if (address(m, a, ss, root, why, cap))
        return 1;
    /* st.param to a kernel's or a function's input parameter: "Illegal to write to function input
       parameter" (a .func's return parameters and a call scope's .param variables take stores) */
    if (store && a && var_space(m, a) == 'p' && input_param(m, it, a)) {
        snprintf(why, cap, "st: '%.*s' is an input parameter of its function, which is read-only",
                 (int)a->name.len, m->text + a->name.off);
        return 1;
    }
    int sync = ptx_has_qualifier(mt, ".volatile") || ptx_has_qualifier(mt, ".relaxed") ||
               ptx_has_qualifier(mt, ".acquire") || ptx_has_qualifier(mt, ".release");
    if (sync && ss && strncmp(ss, ".shared", 7) && !is(ss, ".global")) {
        snprintf(why, cap, "%s: .volatile, .relaxed, .acquire and .release take .global, .shared or a generic "
                 "address, not %s", root, ss);
        return 1;
    }
    if (ptx_has_qualifier(mt, ".L2::cache_hint") && !global_or_generic(ss)) {
        snprintf(why, cap, "%s: .L2::cache_hint takes .global or a generic address, not %s", root, ss);
        return 1;
    }
    if (ptx_slot_value(mt, "level::prefetch_size") && !global_or_generic(ss)) {
        snprintf(why, cap, "%s: .level::prefetch_size takes .global or a generic address, not %s (State space "
                 "incorrect for feature 'cache prefetching')", root, ss);
        return 1;
    }
    if (ptx_slot_value(mt, "level1::eviction_priority") && !global_or_generic(ss)) {
        snprintf(why, cap, "%s: an eviction priority takes .global or a generic address, not %s", root, ss);
        return 1;
    }
    if (ptx_operand_named(m, it, mt, ".unified") && !global_or_generic(ss)) {
        snprintf(why, cap, "%s: .unified takes .global or a generic address, not %s", root, ss);
        return 1;
    }
    /* 256-bit accesses: .v8 of 32 bits, .v4 of 64 ("Feature '256 bit wide load/store' requires
       .target sm_100 or higher") */
    if (is(type, ".b128") && ptx_has_qualifier(mt, ".sys") && m->version < 84) {
        snprintf(why, cap, "%s: .b128 with .sys needs PTX ISA version 8.4 or later", root);
        return 1;
    }
    if (bits == 256 && (tb == 32 || tb == 64)) {
        if (m->sm < 100) {
            snprintf(why, cap, "%s: a 256-bit access (%s%s) needs sm_100 or later; this module targets %s", root,
                     vec, type, m->target);
            return 1;
        }
        if (m->version < 88) {
            snprintf(why, cap, "%s: a 256-bit access (%s%s) needs PTX ISA version 8.8 or later", root, vec, type);
            return 1;
        }
        if (!global_or_generic(ss)) {
            snprintf(why, cap, "%s: a 256-bit access takes .global or a generic address, not %s", root, ss);
            return 1;
        }
    } else if (nvec && bits > 128) {
        snprintf(why, cap, "%s%s%s: a vector of at most 128 bits (or a 256-bit .v8 of 32 bits, .v4 of 64)",
                 root, vec, type);
        return 1;
    }
    /* "Instruction 'ld' requires '.v8.b32/.v4.b64' type with '.L2::evict_last' modifier" */
    if (ptx_slot_value(mt, "level2::eviction_priority") && bits != 256) {
        snprintf(why, cap, "%s: an .L2:: eviction priority needs a 256-bit access (.v8 of 32 bits, .v4 of 64)", root);
        return 1;
    }
    const ptx_operand *v = ptx_operand_named(m, it, mt, store ? "b" : "d");
    if (v && value(m, v, type, nvec, store, 1, why, cap))
        return 1;
    return 0;
}

static int in(const char *v, const char *const *set)
{
    for (; *set; set++)
        if (is(v, *set))
            return 1;
    return 0;
}

/* multimem.ld_reduce / st / red, from ptxas's verdicts on every (op, .acc, .vec, .type) on sm_100a
   and the integer forms on sm_90a: a .sem and a .scope go together; an access of 32 to 128 bits
   (16-bit types in .v2-.v8, 32-bit ones alone or in .v2/.v4, f64 alone (no .v2.f64); no 8-bit type);
   .add on u32/s32/u64, .min/.max on u32/s32/u64/s64, bitwise ops on b32/b64; floating .min/.max
   on the 16-bit kinds only; .acc::f32 for f16/bf16 kinds, .acc::f16 for the fp8 pairs and quads,
   neither with .min/.max; registers of the type's width; the address .global or generic in a
   64-bit register */
static int multimem(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const char *root = ptx_forms[mt->form].root;
    const char *sem = ptx_slot_value(mt, "ldsem");
    if (!sem) sem = ptx_slot_value(mt, "stsem");
    if (!sem) sem = ptx_slot_value(mt, "redsem");
    const char *scope = ptx_slot_value(mt, "scope");
    if (!sem != !scope) {
        snprintf(why, cap, "%s: %s needs %s (ptxas: \"Modifier '%s' requires %s\")", root, sem ? sem : scope,
                 sem ? "a scope" : "a .relaxed/.acquire/.release order", sem ? sem : scope, sem ? "scope" : "order");
        return 1;
    }
    const char *type = ptx_slot_value(mt, "type");
    if (!type) type = ptx_slot_value(mt, "redtype");
    const char *op = ptx_slot_value(mt, "op");
    if (!op) op = ptx_slot_value(mt, "redop");
    const char *vec = ptx_slot_value(mt, "vec");
    const char *acc = ptx_slot_value(mt, "acc_prec");
    int nvec = vec ? vec[2] - '0' : 0;
    char tk = 'b';
    int tb = type_of(type, &tk);
    int bits = (nvec ? nvec : 1) * tb;
    if (tb == 8 || bits < 32 || bits > 128) {
        snprintf(why, cap, "%s: %s%s is a %d-bit access; multimem takes 32 to 128 bits (no 8-bit type)", root,
                 vec ? vec : "", type, bits);
        return 1;
    }
    if (tb == 64 && nvec) {
        /* ISA: "Type .f64 cannot be used with .vec qualifier" (ptxas 13.0: "Inconsistent type '.f64'
           with vector .v2") */
        snprintf(why, cap, "%s: %s takes no vector qualifier (%s)", root, type, vec);
        return 1;
    }
    if (tk != 'f' && op) {
        static const char *const add[] = {".u32", ".s32", ".u64", 0};
        static const char *const minmax[] = {".u32", ".s32", ".u64", ".s64", 0};
        static const char *const bit[] = {".b32", ".b64", 0};
        const char *const *ok = is(op, ".add") ? add : is(op, ".min") || is(op, ".max") ? minmax : bit;
        if (!in(type, ok)) {
            snprintf(why, cap, "%s: incorrect type %s for %s", root, type, op);
            return 1;
        }
    }
    if (tk == 'f' && op && !is(op, ".add") && tb != 16 && !strstr(type, "x")) {
        snprintf(why, cap, "%s: %s takes no %s (floating .min/.max on the 16-bit kinds only)", root, type, op);
        return 1;
    }
    if (acc && strcmp(root, "multimem.red")) {       /* red: taken on every type and ignored, as ptxas does */
        int fp8 = type[1] == 'e';
        if (!is(op, ".add") || is(acc, ".acc::f32") == fp8 || tb > 32 || (tb == 32 && !strstr(type, "x"))) {
            snprintf(why, cap, "%s: %s does not go with %s%s", root, acc, op ? op : "", type);
            return 1;
        }
    }
    const ptx_operand *a = ptx_operand_named(m, it, mt, "[a]");
    if (a && a->has_base == 3 && strcmp(root, "multimem.red")) {
        /* ptxas 13.0: "<builtin>: Parsing error near '['" for ld_reduce and st; red takes it */
        snprintf(why, cap, "%s: the address is written [var+imm] (ptxas: a syntax error at var[imm])", root);
        return 1;
    }
    if (address(m, a, ptx_slot_value(mt, "ss"), root, why, cap))
        return 1;
    if (a && a->has_base && m->text[a->name.off] == '%') {
        ptx_operand r = *a;
        r.kind = PTX_OP_REG;
        char rk;
        if (reg_of(m, &r, &rk) != 64) {
            snprintf(why, cap, "%s: the multimem address is a 64-bit register", root);
            return 1;
        }
    }
    const ptx_operand *v = ptx_operand_named(m, it, mt, strstr(root, "ld_reduce") ? "d" : "b");
    if (v && value(m, v, type, nvec, !strstr(root, "ld_reduce"), 0, why, cap))
        return 1;
    if (v && v->kind == PTX_OP_VEC) {
        for (int i = 0; i < v->nelem; i++)
            if (m->elems[v->elem + i].kind != PTX_OP_REG) {
                snprintf(why, cap, "%s: the vector's elements are registers of one type", root);
                return 1;
            }
    }
    return 0;
}

/* an operand that must be a register of `bits` (0: any width) or, where imm_ok, an immediate */
static int reg_width(const ptx_module *m, const ptx_operand *o, int bits, int imm_ok, const char *root,
                     const char *what, char *why, size_t cap)
{
    if (!o)
        return 0;
    if (o->kind == PTX_OP_IMM && imm_ok)
        return 0;
    char rk = 0;
    int rb = o->kind == PTX_OP_REG ? reg_of(m, o, &rk) : 0;
    if (!rb || rk == 'p' || rk == 'f' || (bits && rb != bits)) {
        snprintf(why, cap, "%s: %s is a %d-bit integer register%s (Arguments mismatch)", root, what, bits,
                 imm_ok ? " or an immediate" : "");
        return 1;
    }
    return 0;
}

/* a qualifier that names the instruction's kind comes right after the root (cvta.to,
   createpolicy.range / .fractional / .cvt): elsewhere ptxas says "Unknown modifier" */
static int first_not(const ptx_match *mt, const char *slot, const char *root, char *why, size_t cap)
{
    const ptx_form *f = &ptx_forms[mt->form];
    for (int s = 0; s < f->nslots; s++)
        if (!strcmp(f->slots[s].name, slot) && mt->slot_at[s] >= 0 && mt->slot_at[s] != mt->nroot) {
            snprintf(why, cap, "%s: .%s comes right after %s (ptxas: \"Unknown modifier '.%s'\")", root, slot,
                     root, slot);
            return 1;
        }
    return 0;
}

/* cvta, mapa, getctarank, isspacep: operands of the .size / .type's width; a variable of the
   instruction's state space; .u32 addresses under .address_size 64 are 32-bit addresses (ptxas:
   "conflicting with .address_size 64") */
static int address_query(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_form *f = &ptx_forms[mt->form];
    const char *root = f->root;
    const char *size = ptx_slot_value(mt, "size");
    if (!size) size = ptx_slot_value(mt, "type");
    int w = is(size, ".u32") ? 32 : 64;
    const char *sp = ptx_slot_value(mt, "space");
    if (!sp) sp = ptx_slot_value(mt, "shared::cluster");
    if (first_not(mt, "to", root, why, cap))
        return 1;
    if (!strcmp(root, "cvta") && w == 32) {
        snprintf(why, cap, "cvta.u32: a 32-bit address under .address_size 64");
        return 1;
    }
    for (int k = 0; k < f->noperands; k++) {
        if (mt->op_of[k] < 0)
            continue;
        const char *n = f->operands[k].name;
        const ptx_operand *o = &m->ops[it->op0 + mt->op_of[k]];
        if (o->kind == PTX_OP_SYM || (o->kind == PTX_OP_REG && o->has_base == 2) ||
            (o->kind == PTX_OP_SYM && o->has_base)) {
            /* a variable: cvta's var / var+imm, mapa's and getctarank's a */
            if (!strcmp(root, "isspacep") || ptx_has_qualifier(mt, ".to")) {
                snprintf(why, cap, "%s: '%.*s' must be a register here", root, (int)o->name.len,
                         m->text + o->name.off);
                return 1;
            }
            const ptx_symbol *s = ptx_lookup(m, m->text + o->name.off, o->name.len);
            char want = !sp ? 's' : !strncmp(sp, ".shared", 7) ? 's' : !strncmp(sp, ".param", 6) ? 'p' : sp[1];
            if (s && s->space && s->space != want) {
                snprintf(why, cap, "%s: '%.*s' is not in %s (State space mismatch)", root, (int)o->name.len,
                         m->text + o->name.off, sp ? sp : ".shared");
                return 1;
            }
            continue;
        }
        if (!strcmp(root, "isspacep")) {
            char rk = 0;
            if (!strcmp(n, "p") && (o->kind != PTX_OP_REG || reg_of(m, o, &rk) != 1)) {
                snprintf(why, cap, "isspacep: the result is a predicate register");
                return 1;
            }
            if (!strcmp(n, "a") && reg_width(m, o, 0, 1, root, "the address", why, cap))
                return 1;
            continue;
        }
        if (!strcmp(n, "b")) {                  /* mapa's rank */
            if (reg_width(m, o, 32, 1, root, "the rank", why, cap))
                return 1;
        } else if (!strcmp(root, "getctarank") && !strcmp(n, "d")) {
            if (reg_width(m, o, 32, 0, root, "the rank", why, cap))
                return 1;
        } else if (reg_width(m, o, w, strcmp(n, "p") && strcmp(n, "d"), root, n, why, cap)) {
            return 1;
        }
    }
    return 0;
}

/* prefetch, prefetchu, applypriority, discard, createpolicy */
static int hints(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const char *root = ptx_forms[mt->form].root;
    const ptx_operand *a = ptx_operand_named(m, it, mt, "[a]");
    const char *ss = ptx_slot_value(mt, "space");
    if (!ss) ss = ptx_slot_value(mt, "global");
    if (!ss) ss = ptx_slot_value(mt, "tensormap_space");
    int tensormap = ptx_has_qualifier(mt, ".tensormap");
    if (a && a->has_base == 3) {
        snprintf(why, cap, "%s: the address is written [var+imm] here (ptxas takes no var[imm]: Arguments "
                 "mismatch)", root);
        return 1;
    }
    if (a && !a->has_base && !is(ss, ".local")) {
        snprintf(why, cap, "%s: an immediate address is taken for .local only", root);
        return 1;
    }
    if (!tensormap && strcmp(root, "createpolicy") && address(m, a, ss, root, why, cap))
        return 1;
    if (!strcmp(root, "prefetchu") && a && var_space(m, a) && var_space(m, a) != 'g') {
        snprintf(why, cap, "prefetchu: a generic address (Non-generic address is not supported)");
        return 1;
    }
    if (!strcmp(root, "createpolicy") && is(ss, ".global") && a && a->has_base && var_space(m, a) == 's') {
        snprintf(why, cap, "createpolicy.range: the address is .global (State space mismatch)");
        return 1;
    }
    const ptx_operand *size = ptx_operand_named(m, it, mt, "size");
    if (size && (size->kind != PTX_OP_IMM || size->imm != 128)) {
        snprintf(why, cap, "%s: size is the immediate 128", root);
        return 1;
    }
    if (!strcmp(root, "createpolicy")) {
        if (first_not(mt, "range", root, why, cap) || first_not(mt, "fractional", root, why, cap) ||
            first_not(mt, "cvt", root, why, cap))
            return 1;
        const ptx_operand *d = ptx_operand_named(m, it, mt, "cache-policy");
        if (reg_width(m, d, 64, 0, root, "cache-policy", why, cap))
            return 1;
        const ptx_operand *p = ptx_operand_named(m, it, mt, "access-property");
        if (reg_width(m, p, 64, 1, root, "access-property", why, cap))
            return 1;
        const ptx_operand *ps = ptx_operand_named(m, it, mt, "primary-size"), *ts = ptx_operand_named(m, it, mt, "total-size");
        if (reg_width(m, ps, 32, 1, root, "primary-size", why, cap) ||
            reg_width(m, ts, 32, 1, root, "total-size", why, cap))
            return 1;
        if (ps && ts && ps->kind == PTX_OP_IMM && ts->kind == PTX_OP_IMM && ps->imm > ts->imm) {
            snprintf(why, cap, "createpolicy.range: primary-size %lld is more than total-size %lld",
                     (long long)ps->imm, (long long)ts->imm);
            return 1;
        }
        const ptx_operand *fr = ptx_operand_named(m, it, mt, "fraction");
        if (fr) {
            if (fr->kind == PTX_OP_IMM) {
                snprintf(why, cap, "createpolicy.fractional: fraction is a float (Arguments mismatch)");
                return 1;
            }
            if (fr->kind == PTX_OP_REG) {
                char rk;
                if (reg_of(m, fr, &rk) != 32 || (rk != 'f' && rk != 'b')) {
                    snprintf(why, cap, "createpolicy.fractional: fraction is an f32 or b32 register or a literal");
                    return 1;
                }
            } else if (fr->kind == PTX_OP_FIMM) {
                char buf[48];
                size_t n = fr->name.len < sizeof buf - 1 ? fr->name.len : sizeof buf - 1;
                memcpy(buf, m->text + fr->name.off, n);
                buf[n] = 0;
                double v;
                if ((buf[0] == '0') && (buf[1] == 'f' || buf[1] == 'F')) {
                    unsigned long u = strtoul(buf + 2, NULL, 16);
                    float x;
                    uint32_t u32 = (uint32_t)u;
                    memcpy(&x, &u32, 4);
                    v = x;
                } else if ((buf[0] == '0') && (buf[1] == 'd' || buf[1] == 'D')) {
                    unsigned long long u = strtoull(buf + 2, NULL, 16);
                    memcpy(&v, &u, 8);
                } else {
                    v = strtod(buf, NULL);
                }
                if (!(v > 0.0 && v <= 1.0)) {
                    snprintf(why, cap, "createpolicy.fractional: fraction %s is not in (0, 1]", buf);
                    return 1;
                }
            }
        }
    }
    return 0;
}

int ptx_rules_mem(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const char *root = ptx_forms[mt->form].root;
    if (!strcmp(root, "ld") || !strcmp(root, "st") || !strcmp(root, "ldu") || !strcmp(root, "ld.global.nc"))
        return ldst(m, it, mt, why, cap);
    if (!strncmp(root, "multimem.", 9))
        return multimem(m, it, mt, why, cap);
    if (!strcmp(root, "cvta") || !strcmp(root, "mapa") || !strcmp(root, "getctarank") || !strcmp(root, "isspacep"))
        return address_query(m, it, mt, why, cap);
    return hints(m, it, mt, why, cap);
}
