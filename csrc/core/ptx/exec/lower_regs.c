/* lower_regs.c - operands of the lowering: the program's registers, the { }
 * scopes that name them, and each operand form (register, special register,
 * parameter, shared variable, immediate, [address]) as a register index.
 * Every instruction form resolves its operands here, so a name means the
 * same register whatever instruction reads it.
 */
#include "ptx/exec/lower_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lw_spans_eq(const ptx_module *m, ptx_span a, ptx_span b)
{
    return a.len == b.len && !memcmp(m->text + a.off, m->text + b.off, a.len);
}

/* ---- registers of the program ------------------------------------------ */

uint32_t lw_new_regs(lw *L, uint32_t n, uint8_t cls)
{
    pi_prog *p = L->p;
    if (n > PI_MAX_REGS - p->nregs) {       /* constants and special registers past the declared ones */
        if (!L->regs_full)
            ptx_diag_add(L->ds, 1, L->m->items[L->item].line, L->m->items[L->item].col, "the kernel needs more "
                         "registers a thread than the interpreter holds (at most %u, 2^20)", PI_MAX_REGS);
        L->regs_full = L->bad = 1;
        return 0;
    }
    if (GROWN(L->cls, p->nregs + n - 1, L->capregs)) {
        L->oom = 1;
        return 0;
    }
    uint32_t base = p->nregs;
    for (uint32_t i = 0; i < n; i++)
        L->cls[base + i] = cls;
    p->nregs += n;
    return base;
}

/* A register that starts as (kind, value); constants are shared. */
static uint32_t init_reg(lw *L, uint8_t kind, uint64_t value)
{
    pi_prog *p = L->p;
    for (uint32_t i = p->first_init; i < p->nregs; i++) {
        const pi_init *in = &p->init[i - p->first_init];
        if (in->kind == kind && in->value == value)
            return i;
    }
    uint32_t r = lw_new_regs(L, 1, 64);
    if (L->oom)
        return 0;
    uint32_t k = r - p->first_init;
    if (GROWN(p->init, k, L->capinit)) {
        L->oom = 1;
        return 0;
    }
    p->init[k].kind = kind;
    p->init[k].value = value;
    return r;
}

static uint32_t const_reg(lw *L, uint64_t v)
{
    return init_reg(L, PI_INIT_CONST, v);
}

uint32_t lw_const(lw *L, uint64_t v)
{
    return const_reg(L, v);
}

/* ---- scopes and names ---------------------------------------------------- */

int lw_in_scope(const lw *L, int decl_scope, int scope)
{
    for (int s = scope; s >= 0; s = L->parent[s])
        if (s == decl_scope)
            return 1;
    return 0;
}

int lw_scope_depth(const lw *L, int s)
{
    int d = 0;
    for (; s >= 0; s = L->parent[s])
        d++;
    return d;
}

/* The register named `name` visible from scope, or PI_NOREG. */
uint32_t lw_find_reg(const lw *L, ptx_span name, int scope, uint8_t *cls)
{
    const ptx_module *m = L->m;
    const char *s = m->text + name.off;
    int best = -1;
    uint32_t found = PI_NOREG;
    for (uint32_t i = 0; i < L->nrd; i++) {
        const regdecl *r = &L->rd[i];
        uint32_t idx;
        if (!r->range) {
            if (!lw_spans_eq(m, r->name, name))
                continue;
            idx = r->base;
        } else {
            if (name.len <= r->name.len || memcmp(s, m->text + r->name.off, r->name.len))
                continue;
            uint64_t v = 0;
            size_t j;
            for (j = r->name.len; j < name.len && s[j] >= '0' && s[j] <= '9' && v < (1u << 30); j++)
                v = v * 10 + (uint64_t)(s[j] - '0');
            if (j != name.len || v >= r->range || (s[r->name.len] == '0' && name.len > r->name.len + 1))
                continue;
            idx = r->base + (uint32_t)v * (r->cls == 128 ? 2u : 1u);   /* a .b128 register takes two */
        }
        if (!lw_in_scope(L, r->scope, scope))
            continue;
        int d = lw_scope_depth(L, r->scope);
        if (d > best) {
            best = d;
            found = idx;
            if (cls)
                *cls = r->cls;
        }
    }
    return found;
}

static const struct { const char *name; int sr; } SPECIAL[] = {
    {"%tid.x", PI_SR_TID_X}, {"%tid.y", PI_SR_TID_Y}, {"%tid.z", PI_SR_TID_Z},
    {"%ntid.x", PI_SR_NTID_X}, {"%ntid.y", PI_SR_NTID_Y}, {"%ntid.z", PI_SR_NTID_Z},
    {"%ctaid.x", PI_SR_CTAID_X}, {"%ctaid.y", PI_SR_CTAID_Y}, {"%ctaid.z", PI_SR_CTAID_Z},
    {"%nctaid.x", PI_SR_NCTAID_X}, {"%nctaid.y", PI_SR_NCTAID_Y}, {"%nctaid.z", PI_SR_NCTAID_Z},
    {"%laneid", PI_SR_LANEID}, {"%warpid", PI_SR_WARPID}, {"%nwarpid", PI_SR_NWARPID},
    {"%cluster_ctarank", PI_SR_CLUSTER_CTARANK}, {"%cluster_nctarank", PI_SR_CLUSTER_NCTARANK},
    {"%cluster_ctaid.x", PI_SR_CLUSTER_CTAID_X}, {"%cluster_ctaid.y", PI_SR_CLUSTER_CTAID_Y},
    {"%cluster_ctaid.z", PI_SR_CLUSTER_CTAID_Z}, {"%cluster_nctaid.x", PI_SR_CLUSTER_NCTAID_X},
    {"%cluster_nctaid.y", PI_SR_CLUSTER_NCTAID_Y}, {"%cluster_nctaid.z", PI_SR_CLUSTER_NCTAID_Z},
    {"%clusterid.x", PI_SR_CLUSTERID_X}, {"%clusterid.y", PI_SR_CLUSTERID_Y},
    {"%clusterid.z", PI_SR_CLUSTERID_Z}, {"%nclusterid.x", PI_SR_NCLUSTERID_X},
    {"%nclusterid.y", PI_SR_NCLUSTERID_Y}, {"%nclusterid.z", PI_SR_NCLUSTERID_Z},
    {"%is_explicit_cluster", PI_SR_IS_EXPLICIT_CLUSTER}, {"%lanemask_eq", PI_SR_LANEMASK_EQ},
    {"%lanemask_lt", PI_SR_LANEMASK_LT}, {"%lanemask_le", PI_SR_LANEMASK_LE},
    {"%lanemask_gt", PI_SR_LANEMASK_GT}, {"%lanemask_ge", PI_SR_LANEMASK_GE},
    {"%smid", PI_SR_SMID}, {"%gridid", PI_SR_GRIDID}, {"%dynamic_smem_size", PI_SR_DYNAMIC_SMEM},
};

static const pi_param *find_param(const lw *L, ptx_span name)
{
    for (uint32_t i = 0; i < L->p->nparams; i++)
        if (lw_span_is(L->m, name, L->p->params[i].name))
            return &L->p->params[i];
    return NULL;
}

static const shvar *find_shared(const lw *L, ptx_span name)
{
    for (uint32_t i = 0; i < L->nsh; i++)
        if (lw_span_is(L->m, name, L->sh[i].name))
            return &L->sh[i];
    return NULL;
}

/* A name (register, special register, parameter, shared variable) as a
 * register index; PI_NOREG with the error reported. */
uint32_t lw_name_reg(lw *L, const ptx_operand *o, uint8_t *cls)
{
    const ptx_module *m = L->m;
    if (cls)
        *cls = 64;
    uint32_t r = lw_find_reg(L, o->name, L->item_scope[L->item], cls);
    if (r != PI_NOREG)
        return r;
    for (size_t i = 0; i < sizeof SPECIAL / sizeof SPECIAL[0]; i++)
        if (lw_span_is(m, o->name, SPECIAL[i].name)) {
            if (cls)
                *cls = 32;
            return init_reg(L, PI_INIT_SPECIAL, (uint64_t)SPECIAL[i].sr);
        }
    const pi_param *pa = find_param(L, o->name);
    if (pa)
        return const_reg(L, PI_PARAM_BASE + pa->offset);
    const shvar *sv = find_shared(L, o->name);
    if (sv) {
        if (cls)
            *cls = 32;
        return init_reg(L, PI_INIT_SHARED_SYM, sv->offset);
    }
    int vk;
    uint64_t vv;
    if (lw_var_addr(L, o->name, &vk, &vv))
        return init_reg(L, vk, vv);
    for (uint32_t f = 1; f < L->p->nfuncs; f++)      /* a function's address (indirect calls) */
        if (lw_span_is(m, o->name, L->p->funcs[f].name))
            return const_reg(L, PI_FUNC_BASE + 16ull * (f + 1));
    char name[96];                                  /* (a message: the name's start is enough) */
    lw_span_str(m, o->name, name, sizeof name);
    lw_lerr(L, o->line, o->col, "the interpreter cannot resolve '%s'%s", name,
         name[0] == '%' ? " (not a declared or special register it models)" : "");
    return PI_NOREG;
}

/* A source operand as a register (immediates become constant registers). */
uint32_t lw_src(lw *L, const ptx_operand *o, int w)
{
    switch (o->kind) {
    case PTX_OP_REG:
    case PTX_OP_SYM: {
        uint32_t r = lw_name_reg(L, o, NULL);
        if (r != PI_NOREG && o->has_base == 2)
            lw_lerr(L, o->line, o->col, "the interpreter takes '%s' with an offset only inside [ ]%s", "symbol", "");
        if (r != PI_NOREG && o->neg) {      /* !%p as a source: a register of its own would be stale */
            lw_lerr(L, o->line, o->col, "a negated predicate operand is not supported here%s%s", "", "");
            return PI_NOREG;
        }
        return r;
    }
    case PTX_OP_IMM:
        return const_reg(L, (uint64_t)o->imm);
    case PTX_OP_FIMM:
        return const_reg(L, lw_float_bits(L->m, o->name, w));
    default:
        lw_lerr(L, o->line, o->col, "expected a register or an immediate operand%s%s", "", "");
        return PI_NOREG;
    }
}

/* A destination register (a sink gives PI_NOREG without error when allowed). */
uint32_t lw_dst(lw *L, const ptx_operand *o, int sink_ok, uint8_t *cls)
{
    if (o->kind == PTX_OP_SINK && sink_ok)
        return PI_NOREG;
    if (o->kind != PTX_OP_REG) {
        lw_lerr(L, o->line, o->col, "expected a destination register%s%s", "", "");
        return PI_NOREG;
    }
    uint8_t c = 64;
    uint32_t r = lw_find_reg(L, o->name, L->item_scope[L->item], &c);
    if (r == PI_NOREG) {
        char name[96];
        lw_span_str(L->m, o->name, name, sizeof name);
        lw_lerr(L, o->line, o->col, "'%s' is not a declared register%s", name, "");
    }
    if (cls)
        *cls = c;
    return r;
}

pi_addr lw_addr(lw *L, const ptx_operand *o)
{
    pi_addr a = {PI_NOREG, 0};
    if (o->kind != PTX_OP_ADDR) {
        lw_lerr(L, o->line, o->col, "expected an address operand [ ]%s%s", "", "");
        return a;
    }
    a.off = o->imm;
    if (o->has_base) {
        ptx_operand b = *o;
        b.kind = PTX_OP_REG;
        a.base = lw_name_reg(L, &b, NULL);
    }
    return a;
}

uint32_t lw_label(lw *L, ptx_span name, int line, int col)
{
    int scope = L->item_scope[L->item], best = -1;
    uint32_t target = PI_NOREG;
    for (uint32_t i = 0; i < L->nlb; i++) {
        if (!lw_spans_eq(L->m, L->lb[i].name, name) || !lw_in_scope(L, L->lb[i].scope, scope))
            continue;
        int d = lw_scope_depth(L, L->lb[i].scope);
        if (d > best) {
            best = d;
            target = L->lb[i].ins;
        }
    }
    if (target == PI_NOREG) {
        char s[64];
        lw_span_str(L->m, name, s, sizeof s);
        lw_lerr(L, line, col, "no label '%s' in scope%s", s, "");
    }
    return target;
}
