/* lower.c - a parsed .entry -> the interpreter's program (prog.h).
 *
 * Two passes over the body: the first gives every item its { } scope and
 * records labels and register declarations (a name declared in a scope
 * hides outer ones: Triton's inline asm declares `complete` and `waitLoop`
 * in a block of their own); the second lowers each instruction, resolving
 * every operand to a register index. An instruction the interpreter does
 * not run is an error naming its line, never a silent no-op.
 */
#include "ptx/prog.h"
#include "check/hb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    ptx_span name;
    uint32_t range, base;
    int scope;
    uint8_t cls;
} regdecl;

typedef struct {
    ptx_span name;
    int scope;
    uint32_t ins;
} labeldecl;

typedef struct {
    char name[64];
    uint32_t offset;
} shvar;

typedef struct {
    pi_prog *p;
    const ptx_module *m;
    ptx_diags *ds;
    regdecl *rd;
    uint32_t nrd, caprd;
    labeldecl *lb;
    uint32_t nlb, caplb;
    int *parent;                /* scope tree */
    int nscopes, capscopes;
    int *item_scope;            /* per item */
    shvar *sh;
    uint32_t nsh, capsh;
    uint8_t *cls;               /* per register: declared bits */
    uint32_t capregs, capinit;
    uint32_t capins, capext, capv, capparams, capshv;
    int oom;
    uint32_t item;              /* being lowered */
    int bad;                    /* this instruction already reported */
} lw;

#define GROWN(arr, n, cap)                                                            \
    ((n) < (cap) ? 0 : grow_((void **)&(arr), &(cap), sizeof *(arr), (n) + 1))

static int grow_(void **p, uint32_t *cap, size_t size, uint32_t need)
{
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static void span_str(const ptx_module *m, ptx_span s, char *buf, size_t cap)
{
    size_t n = s.len < cap - 1 ? s.len : cap - 1;
    memcpy(buf, m->text + s.off, n);
    buf[n] = 0;
}

static int span_is(const ptx_module *m, ptx_span s, const char *lit)
{
    return ptx_span_eq(m, s, lit);
}

static int spans_eq(const ptx_module *m, ptx_span a, ptx_span b)
{
    return a.len == b.len && !memcmp(m->text + a.off, m->text + b.off, a.len);
}

static void lerr(lw *L, int line, int col, const char *fmt, const char *a, const char *b)
{
    char buf[200];
    snprintf(buf, sizeof buf, fmt, a, b);
    ptx_diag_add(L->ds, 1, line, col, "%s", buf);
    L->bad = 1;
}

/* ---- registers of the program ------------------------------------------ */

static uint32_t new_regs(lw *L, uint32_t n, uint8_t cls)
{
    pi_prog *p = L->p;
    if (p->nregs + n < p->nregs || GROWN(L->cls, p->nregs + n - 1, L->capregs)) {
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
    uint32_t r = new_regs(L, 1, 64);
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

/* ---- scopes and names ---------------------------------------------------- */

static int in_scope(const lw *L, int decl_scope, int scope)
{
    for (int s = scope; s >= 0; s = L->parent[s])
        if (s == decl_scope)
            return 1;
    return 0;
}

static int scope_depth(const lw *L, int s)
{
    int d = 0;
    for (; s >= 0; s = L->parent[s])
        d++;
    return d;
}

/* The register named `name` visible from scope, or PI_NOREG. */
static uint32_t find_reg(const lw *L, ptx_span name, int scope, uint8_t *cls)
{
    const ptx_module *m = L->m;
    const char *s = m->text + name.off;
    int best = -1;
    uint32_t found = PI_NOREG;
    for (uint32_t i = 0; i < L->nrd; i++) {
        const regdecl *r = &L->rd[i];
        uint32_t idx;
        if (!r->range) {
            if (!spans_eq(m, r->name, name))
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
            idx = r->base + (uint32_t)v;
        }
        if (!in_scope(L, r->scope, scope))
            continue;
        int d = scope_depth(L, r->scope);
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

static const pi_param *find_param(const pi_prog *p, const char *name)
{
    for (uint32_t i = 0; i < p->nparams; i++)
        if (!strcmp(p->params[i].name, name))
            return &p->params[i];
    return NULL;
}

static const shvar *find_shared(const lw *L, const char *name)
{
    for (uint32_t i = 0; i < L->nsh; i++)
        if (!strcmp(L->sh[i].name, name))
            return &L->sh[i];
    return NULL;
}

/* A name (register, special register, parameter, shared variable) as a
 * register index; PI_NOREG with the error reported. */
static uint32_t name_reg(lw *L, const ptx_operand *o, uint8_t *cls)
{
    const ptx_module *m = L->m;
    char name[96];
    span_str(m, o->name, name, sizeof name);
    if (cls)
        *cls = 64;
    uint32_t r = find_reg(L, o->name, L->item_scope[L->item], cls);
    if (r != PI_NOREG)
        return r;
    for (size_t i = 0; i < sizeof SPECIAL / sizeof SPECIAL[0]; i++)
        if (!strcmp(name, SPECIAL[i].name)) {
            if (cls)
                *cls = 32;
            return init_reg(L, PI_INIT_SPECIAL, (uint64_t)SPECIAL[i].sr);
        }
    const pi_param *pa = find_param(L->p, name);
    if (pa)
        return const_reg(L, PI_PARAM_BASE + pa->offset);
    const shvar *sv = find_shared(L, name);
    if (sv) {
        if (cls)
            *cls = 32;
        return init_reg(L, PI_INIT_SHARED_SYM, sv->offset);
    }
    lerr(L, o->line, o->col, "the interpreter cannot resolve '%s'%s", name,
         name[0] == '%' ? " (not a declared or special register it models)" : "");
    return PI_NOREG;
}

static uint64_t float_bits(const ptx_module *m, ptx_span s, int w)
{
    char buf[64];
    span_str(m, s, buf, sizeof buf);
    if ((buf[0] == '0') && (buf[1] == 'f' || buf[1] == 'F')) {
        uint32_t v = (uint32_t)strtoul(buf + 2, NULL, 16);
        if (w == 64) {
            float f;
            memcpy(&f, &v, 4);
            double d = f;
            uint64_t b;
            memcpy(&b, &d, 8);
            return b;
        }
        return v;
    }
    double d;
    if ((buf[0] == '0') && (buf[1] == 'd' || buf[1] == 'D')) {
        uint64_t v = strtoull(buf + 2, NULL, 16);
        memcpy(&d, &v, 8);
    } else {
        d = strtod(buf, NULL);
    }
    if (w == 64) {
        uint64_t b;
        memcpy(&b, &d, 8);
        return b;
    }
    float f = (float)d;
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* A source operand as a register (immediates become constant registers). */
static uint32_t src(lw *L, const ptx_operand *o, int w)
{
    switch (o->kind) {
    case PTX_OP_REG:
    case PTX_OP_SYM: {
        uint32_t r = name_reg(L, o, NULL);
        if (r != PI_NOREG && o->has_base == 2)
            lerr(L, o->line, o->col, "the interpreter takes '%s' with an offset only inside [ ]%s", "symbol", "");
        if (r != PI_NOREG && o->neg) {      /* !%p as a source: a register of its own would be stale */
            lerr(L, o->line, o->col, "a negated predicate operand is not supported here%s%s", "", "");
            return PI_NOREG;
        }
        return r;
    }
    case PTX_OP_IMM:
        return const_reg(L, (uint64_t)o->imm);
    case PTX_OP_FIMM:
        return const_reg(L, float_bits(L->m, o->name, w));
    default:
        lerr(L, o->line, o->col, "expected a register or an immediate operand%s%s", "", "");
        return PI_NOREG;
    }
}

/* A destination register (a sink gives PI_NOREG without error when allowed). */
static uint32_t dst(lw *L, const ptx_operand *o, int sink_ok, uint8_t *cls)
{
    if (o->kind == PTX_OP_SINK && sink_ok)
        return PI_NOREG;
    if (o->kind != PTX_OP_REG) {
        lerr(L, o->line, o->col, "expected a destination register%s%s", "", "");
        return PI_NOREG;
    }
    uint8_t c = 64;
    uint32_t r = find_reg(L, o->name, L->item_scope[L->item], &c);
    if (r == PI_NOREG) {
        char name[96];
        span_str(L->m, o->name, name, sizeof name);
        lerr(L, o->line, o->col, "'%s' is not a declared register%s", name, "");
    }
    if (cls)
        *cls = c;
    return r;
}

static pi_addr addr(lw *L, const ptx_operand *o)
{
    pi_addr a = {PI_NOREG, 0};
    if (o->kind != PTX_OP_ADDR) {
        lerr(L, o->line, o->col, "expected an address operand [ ]%s%s", "", "");
        return a;
    }
    a.off = o->imm;
    if (o->has_base) {
        ptx_operand b = *o;
        b.kind = PTX_OP_REG;
        a.base = name_reg(L, &b, NULL);
    }
    return a;
}

/* ---- opcode parts ----------------------------------------------------------- */

#define MAXPARTS 20
typedef struct {
    char buf[160];
    const char *q[MAXPARTS];
    int n;
} parts;

static void split(const ptx_module *m, ptx_span op, parts *P)
{
    span_str(m, op, P->buf, sizeof P->buf);
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

static int has(const parts *P, const char *q)
{
    for (int i = 1; i < P->n; i++)
        if (!strcmp(P->q[i], q))
            return 1;
    return 0;
}

static int has_prefix(const parts *P, const char *q, const char **out)
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

/* Type facts of a PTX type name: bits, signed, float (0 none, 1 f32-like ...). */
typedef struct {
    int bits, is_signed, is_float, is_pred;
} tinfo;

static int type_of(const char *s, tinfo *t)
{
    static const struct { const char *n; int bits, sg, fl; } T[] = {
        {"b8", 8, 0, 0}, {"u8", 8, 0, 0}, {"s8", 8, 1, 0}, {"b16", 16, 0, 0}, {"u16", 16, 0, 0},
        {"s16", 16, 1, 0}, {"b32", 32, 0, 0}, {"u32", 32, 0, 0}, {"s32", 32, 1, 0}, {"b64", 64, 0, 0},
        {"u64", 64, 0, 0}, {"s64", 64, 1, 0}, {"f16", 16, 0, 2}, {"bf16", 16, 0, 3}, {"f32", 32, 0, 1},
        {"f64", 64, 0, 4}, {"f16x2", 32, 0, 5}, {"bf16x2", 32, 0, 6}, {"b128", 128, 0, 0},
        {"tf32", 32, 0, 7}, {"e4m3", 8, 0, 8}, {"e5m2", 8, 0, 9},
    };
    memset(t, 0, sizeof *t);
    if (!strcmp(s, "pred")) {
        t->bits = 1;
        t->is_pred = 1;
        return 1;
    }
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        if (!strcmp(s, T[i].n)) {
            t->bits = T[i].bits;
            t->is_signed = T[i].sg;
            t->is_float = T[i].fl;
            return 1;
        }
    return 0;
}

/* The last type part (k = 1) or the one before it (k = 2). */
static int last_type(const parts *P, int k, tinfo *t)
{
    for (int i = P->n - 1; i >= 1; i--) {
        if (type_of(P->q[i], t) && --k == 0)
            return 1;
    }
    return 0;
}

static uint64_t wmask(int bits)
{
    return bits >= 64 ? ~0ull : bits <= 1 ? 1ull : (1ull << bits) - 1;
}

/* ---- the lowering of one instruction --------------------------------------------- */

static pi_ins *emit(lw *L)
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

static pi_ext *ext(lw *L, pi_ins *in, int kind)
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

static const ptx_operand *OP(lw *L, const ptx_item *it, int i)
{
    return &L->m->ops[it->op0 + (uint32_t)i];
}

static const ptx_operand *EL(lw *L, const ptx_operand *o, int i)
{
    return &L->m->elems[o->elem + (uint32_t)i];
}

static int need_ops(lw *L, const ptx_item *it, const char *name, int lo, int hi)
{
    if (it->nops < lo || it->nops > hi) {
        char b[32];
        snprintf(b, sizeof b, "%d..%d", lo, hi);
        lerr(L, it->line, it->col, "%s takes %s operands here", name, b);
        return -1;
    }
    return 0;
}

static int unsupported(lw *L, const ptx_item *it, const char *why)
{
    char op[128];
    span_str(L->m, it->opcode, op, sizeof op);
    lerr(L, it->line, it->col, "the interpreter does not run '%s'%s", op, why);
    return -1;
}

static int space_of(const parts *P)
{
    if (has(P, "shared::cluster"))
        return PI_SP_SHARED_CLUSTER;
    if (has(P, "shared") || has(P, "shared::cta"))
        return PI_SP_SHARED;
    if (has(P, "global"))
        return PI_SP_GLOBAL;
    if (has(P, "param") || has(P, "param::entry") || has(P, "param::func"))
        return PI_SP_PARAM;
    if (has(P, "local") || has(P, "const"))
        return -1;
    return PI_SP_GENERIC;
}

static int vec_of(const parts *P)
{
    return has(P, "v2") ? 2 : has(P, "v4") ? 4 : has(P, "v8") ? 8 : 1;
}

/* Registers of a { } operand (or one register) into out[]; returns the count. */
static int reg_list(lw *L, const ptx_operand *o, uint32_t *out, int max, int is_dst, int w)
{
    if (o->kind != PTX_OP_VEC) {
        if (max < 1)
            return -1;
        out[0] = is_dst ? dst(L, o, 1, NULL) : src(L, o, w);
        return 1;
    }
    if (o->nelem > max) {
        lerr(L, o->line, o->col, "the vector has more elements than the instruction takes%s%s", "", "");
        return -1;
    }
    for (int i = 0; i < o->nelem; i++)
        out[i] = is_dst ? dst(L, EL(L, o, i), 1, NULL) : src(L, EL(L, o, i), w);
    return o->nelem;
}

static int lower_ldst(lw *L, const ptx_item *it, const parts *P, int is_st)
{
    tinfo t;
    int sp = space_of(P);
    if (sp < 0)
        return unsupported(L, it, ": .local and .const memory are not modelled");
    if (!last_type(P, 1, &t) || t.bits > 64 || t.is_pred)
        return unsupported(L, it, ": the type is not one it loads");
    if (need_ops(L, it, is_st ? "st" : "ld", 2, 2))
        return -1;
    pi_ins *in = emit(L);
    pi_ext *x = in ? ext(L, in, is_st ? PX_ST : PX_LD) : NULL;
    if (!x)
        return -1;
    x->space = (uint8_t)sp;
    x->size = (uint8_t)(t.bits / 8);
    x->sext = (uint8_t)t.is_signed;
    int v = vec_of(P);
    const ptx_operand *ao = OP(L, it, is_st ? 0 : 1), *ro = OP(L, it, is_st ? 1 : 0);
    x->a0 = addr(L, ao);
    int n = reg_list(L, ro, x->regs, 4, !is_st, t.bits);
    if (n != v) {
        if (!L->bad)
            lerr(L, ro->line, ro->col, "the register vector does not match .v%s%s", v == 2 ? "2" : "4", "");
        return -1;
    }
    x->n = (uint8_t)n;
    if (!is_st) {
        uint8_t c = 64;
        if (ro->kind == PTX_OP_REG)
            dst(L, ro, 0, &c);
        else if (ro->kind == PTX_OP_VEC && ro->nelem)
            dst(L, EL(L, ro, 0), 1, &c);
        x->sub2 = (int8_t)(c > 64 ? 64 : c);
    }
    return 0;
}

static int lower_mbarrier(lw *L, const ptx_item *it, const parts *P)
{
    const char *k = P->n > 1 ? P->q[1] : "";
    pi_ins *in = emit(L);
    if (!in)
        return -1;
    if (!strcmp(k, "init")) {
        pi_ext *x = ext(L, in, PX_MBAR_INIT);
        if (!x || need_ops(L, it, "mbarrier.init", 2, 2))
            return -1;
        x->a0 = addr(L, OP(L, it, 0));
        x->s0 = src(L, OP(L, it, 1), 32);
        return 0;
    }
    if (!strcmp(k, "inval")) {
        pi_ext *x = ext(L, in, PX_MBAR_INVAL);
        if (!x || need_ops(L, it, "mbarrier.inval", 1, 1))
            return -1;
        x->a0 = addr(L, OP(L, it, 0));
        return 0;
    }
    if (!strcmp(k, "arrive") || !strcmp(k, "arrive_drop")) {
        pi_ext *x = ext(L, in, PX_MBAR_ARRIVE);
        if (!x || need_ops(L, it, "mbarrier.arrive", 2, 3))
            return -1;
        x->flags = (uint8_t)((!strcmp(k, "arrive_drop") ? PA_MBAR_DROP : 0) |
                             (has(P, "noComplete") ? PA_MBAR_NO_COMPLETE : 0));
        x->d = dst(L, OP(L, it, 0), 1, NULL);
        x->a0 = addr(L, OP(L, it, 1));
        if (has(P, "expect_tx")) {
            if (it->nops != 3)
                return unsupported(L, it, ": .expect_tx needs a tx-count operand");
            x->s1 = src(L, OP(L, it, 2), 32);
        } else if (it->nops == 3) {
            x->s0 = src(L, OP(L, it, 2), 32);
        }
        return 0;
    }
    if (!strcmp(k, "expect_tx") || !strcmp(k, "complete_tx")) {
        pi_ext *x = ext(L, in, PX_MBAR_TX);
        if (!x || need_ops(L, it, "mbarrier.expect_tx", 2, 2))
            return -1;
        x->sub = (int8_t)(k[0] == 'c');
        x->a0 = addr(L, OP(L, it, 0));
        x->s0 = src(L, OP(L, it, 1), 32);
        return 0;
    }
    if (!strcmp(k, "test_wait") || !strcmp(k, "try_wait")) {
        pi_ext *x = ext(L, in, PX_MBAR_WAIT);
        if (!x || need_ops(L, it, "mbarrier.try_wait", 3, 4))
            return -1;
        x->flags = (uint8_t)((k[1] == 'r' ? 1 : 0) | (has(P, "parity") ? 2 : 0));
        x->d = dst(L, OP(L, it, 0), 0, NULL);
        x->a0 = addr(L, OP(L, it, 1));
        x->s0 = src(L, OP(L, it, 2), 64);
        return 0;
    }
    if (!strcmp(k, "pending_count")) {
        pi_ext *x = ext(L, in, PX_MBAR_PENDING);
        if (!x || need_ops(L, it, "mbarrier.pending_count", 2, 2))
            return -1;
        x->d = dst(L, OP(L, it, 0), 0, NULL);
        x->s0 = src(L, OP(L, it, 1), 64);
        return 0;
    }
    return unsupported(L, it, "");
}

static int load_mode(const parts *P)
{
    if (has(P, "im2col::w::128"))
        return PA_MODE_IM2COL_W128;
    if (has(P, "im2col::w"))
        return PA_MODE_IM2COL_W;
    if (has(P, "im2col_no_offs"))
        return PA_MODE_IM2COL_NO_OFFS;
    if (has(P, "im2col"))
        return PA_MODE_IM2COL;
    if (has(P, "tile::gather4"))
        return PA_MODE_TILE_GATHER4;
    if (has(P, "tile::scatter4"))
        return PA_MODE_TILE_SCATTER4;
    return PA_MODE_TILE;
}

static int redop_of(const parts *P)
{
    for (int op = 0; op < PA_RED_COUNT; op++)
        if (has(P, pa_redop_name(op)))
            return op;
    return -1;
}

static int rtype_of(const parts *P)
{
    for (int t = 0; t < PA_RT_COUNT; t++)
        if (has(P, pa_rtype_name(t)))
            return t;
    return -1;
}

/* [map, {coords}] */
static int tensor_operand(lw *L, const ptx_operand *o, pi_ext *x)
{
    if (o->kind != PTX_OP_ADDR || !o->nelem || o->nelem > 5) {
        lerr(L, o->line, o->col, "expected [tensorMap, {coordinates}]%s%s", "", "");
        return -1;
    }
    x->a1 = addr(L, o);
    x->n = o->nelem;
    for (int i = 0; i < o->nelem; i++)
        x->regs[i] = src(L, EL(L, o, i), 32);
    return 0;
}

static int lower_cp(lw *L, const ptx_item *it, const parts *P)
{
    int reduce = !strcmp(P->q[0], "cp") && P->n > 1 && !strcmp(P->q[1], "reduce");
    int tensor = has(P, "tensor");
    int bulk = has(P, "bulk");
    pi_ins *in = emit(L);
    if (!in)
        return -1;
    if (bulk && has(P, "prefetch")) {
        if (tensor) {
            pi_ext *x = ext(L, in, PX_TENSOR_PREFETCH);
            if (!x || need_ops(L, it, "cp.async.bulk.prefetch.tensor", 1, 3))
                return -1;
            x->mode = (uint8_t)load_mode(P);
            if (tensor_operand(L, OP(L, it, 0), x))
                return -1;
            if (it->nops >= 2 && OP(L, it, 1)->kind == PTX_OP_VEC) {
                const ptx_operand *v = OP(L, it, 1);
                x->ninfo = (uint8_t)(v->nelem > 3 ? 3 : v->nelem);
                for (int i = 0; i < x->ninfo; i++)
                    x->info[i] = src(L, EL(L, v, i), 16);
            }
            return 0;
        }
        pi_ext *x = ext(L, in, PX_BULK_PREFETCH);
        if (!x || need_ops(L, it, "cp.async.bulk.prefetch", 2, 3))
            return -1;
        x->a1 = addr(L, OP(L, it, 0));
        x->s0 = src(L, OP(L, it, 1), 32);
        return 0;
    }
    if (bulk && has(P, "commit_group")) {
        return ext(L, in, PX_BULK_COMMIT) ? 0 : -1;
    }
    if (bulk && has(P, "wait_group")) {
        pi_ext *x = ext(L, in, PX_BULK_WAIT);
        if (!x || need_ops(L, it, "cp.async.bulk.wait_group", 1, 1))
            return -1;
        x->flags = (uint8_t)has(P, "read");
        x->s0 = src(L, OP(L, it, 0), 32);
        return 0;
    }
    if (tensor) {
        /* cp.async.bulk.tensor.Nd.dst.src: dst is part 5 (6 after .reduce) */
        int dpart = reduce ? 6 : 5;
        int to_global = P->n > dpart && !strcmp(P->q[dpart], "global");
        if (to_global) {
            pi_ext *x = ext(L, in, PX_TENSOR_STORE);
            if (!x || need_ops(L, it, "cp.async.bulk.tensor (store)", 2, 3))
                return -1;
            x->mode = (uint8_t)load_mode(P);
            x->sub = -1;
            if (reduce) {
                x->sub = (int8_t)redop_of(P);
                if (x->sub < 0)
                    return unsupported(L, it, ": no reduction operation");
            }
            if (tensor_operand(L, OP(L, it, 0), x))
                return -1;
            x->a0 = addr(L, OP(L, it, 1));
            return 0;
        }
        if (reduce)
            return unsupported(L, it, "");
        pi_ext *x = ext(L, in, PX_TENSOR_LOAD);
        if (!x || need_ops(L, it, "cp.async.bulk.tensor (load)", 3, 6))
            return -1;
        x->mode = (uint8_t)load_mode(P);
        x->space = has(P, "shared::cluster") ? PI_SP_SHARED_CLUSTER : PI_SP_SHARED;
        x->flags = (uint8_t)has(P, "multicast::cluster");
        const char *cg = NULL;
        x->sub = 0;
        if (has_prefix(P, "cta_group::", &cg))
            x->sub = (int8_t)(cg[11] - '0');
        x->a0 = addr(L, OP(L, it, 0));
        if (tensor_operand(L, OP(L, it, 1), x))
            return -1;
        x->a2 = addr(L, OP(L, it, 2));
        int k = 3;
        if (k < it->nops && OP(L, it, k)->kind == PTX_OP_VEC) {
            const ptx_operand *v = OP(L, it, k);
            x->ninfo = (uint8_t)(v->nelem > 3 ? 3 : v->nelem);
            for (int i = 0; i < x->ninfo; i++)
                x->info[i] = src(L, EL(L, v, i), 16);
            k++;
        }
        if (x->flags) {
            if (k >= it->nops)
                return unsupported(L, it, ": .multicast::cluster needs a ctaMask operand");
            x->s0 = src(L, OP(L, it, k), 16);
        }
        return 0;
    }
    if (bulk) {
        /* cp{.reduce}.async.bulk.dst.src... */
        if (P->n < 5)
            return unsupported(L, it, "");
        const char *d = P->q[reduce ? 4 : 3], *s = P->q[reduce ? 5 : 4];
        if (reduce) {
            pi_ext *x = ext(L, in, PX_BULK_REDUCE);
            if (!x || need_ops(L, it, "cp.reduce.async.bulk", 3, 4))
                return -1;
            x->sub = (int8_t)redop_of(P);
            x->sub2 = (int8_t)rtype_of(P);
            if (x->sub < 0 || x->sub2 < 0)
                return unsupported(L, it, ": no reduction operation or type");
            x->flags = (uint8_t)has(P, "noftz");
            x->space = !strcmp(d, "global") ? PI_SP_GLOBAL : PI_SP_SHARED_CLUSTER;
            x->a0 = addr(L, OP(L, it, 0));
            x->a1 = addr(L, OP(L, it, 1));
            x->s0 = src(L, OP(L, it, 2), 32);
            if (x->space != PI_SP_GLOBAL) {
                if (it->nops < 4)
                    return unsupported(L, it, ": the mbarrier operand is missing");
                x->a2 = addr(L, OP(L, it, 3));
            }
            return 0;
        }
        pi_ext *x = ext(L, in, PX_BULK_COPY);
        if (!x || need_ops(L, it, "cp.async.bulk", 3, 6))
            return -1;
        if (!strcmp(d, "global"))
            x->sub = PA_BULK_S2G;
        else if (!strcmp(s, "global"))
            x->sub = !strcmp(d, "shared::cta") ? PA_BULK_G2S_CTA : PA_BULK_G2S_CLUSTER;
        else
            x->sub = PA_BULK_S2S;
        x->a0 = addr(L, OP(L, it, 0));
        x->a1 = addr(L, OP(L, it, 1));
        x->s0 = src(L, OP(L, it, 2), 32);
        int k = 3;
        if (x->sub != PA_BULK_S2G) {
            if (it->nops < 4)
                return unsupported(L, it, ": the mbarrier operand is missing");
            x->a2 = addr(L, OP(L, it, 3));
            k = 4;
        }
        x->flags = (uint8_t)(has(P, "multicast::cluster") | (has(P, "cp_mask") << 1) |
                             (has(P, "L2::cache_hint") << 2));
        if ((x->flags & 1) && k < it->nops)
            x->s1 = src(L, OP(L, it, k++), 16);
        if (x->flags & 4)
            k++;
        if ((x->flags & 2) && k < it->nops)
            x->s2 = src(L, OP(L, it, k++), 16);
        return 0;
    }
    /* non-bulk cp.async */
    if (has(P, "commit_group"))
        return ext(L, in, PX_CP_COMMIT) ? 0 : -1;
    if (has(P, "wait_group")) {
        pi_ext *x = ext(L, in, PX_CP_WAIT);
        if (!x || need_ops(L, it, "cp.async.wait_group", 1, 1))
            return -1;
        x->s0 = src(L, OP(L, it, 0), 32);
        return 0;
    }
    if (has(P, "wait_all"))
        return ext(L, in, PX_CP_WAIT_ALL) ? 0 : -1;
    if (has(P, "mbarrier")) {
        pi_ext *x = ext(L, in, PX_CP_MBAR_ARRIVE);
        if (!x || need_ops(L, it, "cp.async.mbarrier.arrive", 1, 1))
            return -1;
        x->flags = (uint8_t)has(P, "noinc");
        x->a0 = addr(L, OP(L, it, 0));
        return 0;
    }
    if (has(P, "ca") || has(P, "cg")) {
        pi_ext *x = ext(L, in, PX_CP_ASYNC);
        if (!x || need_ops(L, it, "cp.async", 3, 5))
            return -1;
        x->flags = (uint8_t)has(P, "cg");
        const char *pf = NULL;
        x->sub2 = 0;
        if (has_prefix(P, "L2::64B", &pf))
            x->sub2 = 1;
        else if (has_prefix(P, "L2::128B", &pf))
            x->sub2 = 2;
        else if (has_prefix(P, "L2::256B", &pf))
            x->sub2 = 3;
        x->a0 = addr(L, OP(L, it, 0));
        x->a1 = addr(L, OP(L, it, 1));
        x->s0 = src(L, OP(L, it, 2), 32);
        int hint = has(P, "L2::cache_hint");
        int k = 3;
        int last = it->nops - (hint ? 1 : 0);
        if (k < last) {
            const ptx_operand *o = OP(L, it, k);
            uint8_t c = 32;
            if (o->kind == PTX_OP_REG)
                find_reg(L, o->name, L->item_scope[L->item], &c);
            if (c == 1) {
                x->s2 = src(L, o, 1);          /* ignore-src predicate */
            } else {
                x->s1 = src(L, o, 32);         /* src-size */
            }
        }
        x->sub = (int8_t)hint;
        return 0;
    }
    return unsupported(L, it, "");
}

static int lower_fence(lw *L, const ptx_item *it, const parts *P)
{
    pi_ins *in = emit(L);
    if (!in)
        return -1;
    if (!strcmp(P->q[0], "membar")) {
        pi_ext *x = ext(L, in, PX_FENCE);
        if (!x)
            return -1;
        x->sub = 1;
        x->sub2 = has(P, "cta") ? 0 : has(P, "sys") ? 3 : 2;
        return 0;
    }
    if (has(P, "proxy")) {
        const char *tm = NULL;
        if (has_prefix(P, "tensormap::generic", &tm)) {
            pi_ext *x = ext(L, in, PX_FENCE_TENSORMAP);
            if (!x)
                return -1;
            x->sub = (int8_t)has(P, "acquire");
            if (x->sub) {
                if (need_ops(L, it, "fence.proxy.tensormap::generic.acquire", 2, 2))
                    return -1;
                x->a0 = addr(L, OP(L, it, 0));
                x->s0 = src(L, OP(L, it, 1), 32);
            }
            return 0;
        }
        if (has(P, "async") || has_prefix(P, "async::", NULL) || has(P, "async::generic")) {
            pi_ext *x = ext(L, in, PX_FENCE_PROXY_ASYNC);
            if (!x)
                return -1;
            x->sub = has(P, "global") ? PA_FENCE_GLOBAL : has(P, "shared::cta") ? PA_FENCE_SHARED_CTA :
                     has(P, "shared::cluster") ? PA_FENCE_SHARED_CLUSTER : PA_FENCE_ALL;
            return 0;
        }
        return unsupported(L, it, "");
    }
    if (has(P, "mbarrier_init")) {
        return ext(L, in, PX_FENCE_MBAR_INIT) ? 0 : -1;
    }
    pi_ext *x = ext(L, in, PX_FENCE);
    if (!x)
        return -1;
    x->sub = (int8_t)has(P, "sc");
    x->sub2 = has(P, "cta") ? 0 : has(P, "cluster") ? 1 : has(P, "sys") ? 3 : 2;
    return 0;
}

static const char *const TMAP_FIELDS[PA_FIELD_COUNT] = {
    "global_address", "rank", "box_dim", "global_dim", "global_stride", "element_stride",
    "elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode"};

static int lower_tensormap(lw *L, const ptx_item *it, const parts *P)
{
    if (P->n < 2 || strcmp(P->q[1], "replace"))
        return unsupported(L, it, "");
    int field = -1;
    for (int f = 0; f < PA_FIELD_COUNT; f++)
        if (has(P, TMAP_FIELDS[f]))
            field = f;
    if (field < 0)
        return unsupported(L, it, ": no field it knows");
    pi_ins *in = emit(L);
    pi_ext *x = in ? ext(L, in, PX_TENSORMAP_REPLACE) : NULL;
    if (!x || need_ops(L, it, "tensormap.replace", 2, 3))
        return -1;
    x->sub = (int8_t)field;
    x->space = has(P, "shared::cta") ? PI_SP_SHARED : PI_SP_GLOBAL;
    x->a0 = addr(L, OP(L, it, 0));
    if (it->nops == 3) {
        x->s1 = src(L, OP(L, it, 1), 32);
        x->s0 = src(L, OP(L, it, 2), 64);
    } else {
        x->s0 = src(L, OP(L, it, 1), 64);
    }
    return 0;
}

static int lower_bar(lw *L, const ptx_item *it, const parts *P)
{
    pi_ins *in = emit(L);
    if (!in)
        return -1;
    if (has(P, "cluster")) {
        pi_ext *x = ext(L, in, has(P, "arrive") ? PX_CLUSTER_ARRIVE : PX_CLUSTER_WAIT);
        if (!x)
            return -1;
        x->sub = (int8_t)has(P, "relaxed");
        if (!has(P, "arrive") && !has(P, "wait"))
            return unsupported(L, it, "");
        return 0;
    }
    if (!strcmp(P->q[0], "bar") && P->n > 1 && !strcmp(P->q[1], "warp")) {
        pi_ext *x = ext(L, in, PX_WARP_SYNC);
        if (!x || need_ops(L, it, "bar.warp.sync", 1, 1))
            return -1;
        x->s0 = src(L, OP(L, it, 0), 32);
        return 0;
    }
    int arrive = has(P, "arrive");
    if (!arrive && !has(P, "sync") && !(P->n == 1))
        return unsupported(L, it, "");
    pi_ext *x = ext(L, in, arrive ? PX_BAR_ARRIVE : PX_BAR_SYNC);
    if (!x || need_ops(L, it, "bar.sync", arrive ? 2 : 1, 2))
        return -1;
    x->s0 = src(L, OP(L, it, 0), 32);
    if (it->nops == 2)
        x->s1 = src(L, OP(L, it, 1), 32);
    return 0;
}

static int lower_warp(lw *L, const ptx_item *it, const parts *P)
{
    pi_ins *in = emit(L);
    if (!in)
        return -1;
    if (!strcmp(P->q[0], "elect")) {
        pi_ext *x = ext(L, in, PX_ELECT);
        if (!x || need_ops(L, it, "elect.sync", 2, 2))
            return -1;
        const ptx_operand *d = OP(L, it, 0);
        x->d = dst(L, d, 1, NULL);
        x->s1 = PI_NOREG;
        if (d->nelem == 1)
            x->s1 = dst(L, EL(L, d, 0), 1, NULL);     /* the predicate */
        x->s0 = src(L, OP(L, it, 1), 32);
        return 0;
    }
    if (!strcmp(P->q[0], "shfl")) {
        pi_ext *x = ext(L, in, PX_SHFL);
        if (!x || need_ops(L, it, "shfl.sync", 5, 5))
            return -1;
        x->sub = has(P, "up") ? 0 : has(P, "down") ? 1 : has(P, "bfly") ? 2 : has(P, "idx") ? 3 : -1;
        if (x->sub < 0)
            return unsupported(L, it, "");
        const ptx_operand *d = OP(L, it, 0);
        x->d = dst(L, d, 1, NULL);
        if (d->nelem == 1)
            x->s3 = dst(L, EL(L, d, 0), 1, NULL);
        x->s0 = src(L, OP(L, it, 1), 32);
        x->s1 = src(L, OP(L, it, 2), 32);
        x->s2 = src(L, OP(L, it, 3), 32);
        x->regs[0] = src(L, OP(L, it, 4), 32);
        return 0;
    }
    if (!strcmp(P->q[0], "vote")) {
        pi_ext *x = ext(L, in, PX_VOTE);
        if (!x || need_ops(L, it, "vote.sync", 3, 3))
            return -1;
        x->sub = has(P, "all") ? 0 : has(P, "any") ? 1 : has(P, "uni") ? 2 : has(P, "ballot") ? 3 : -1;
        if (x->sub < 0)
            return unsupported(L, it, "");
        x->d = dst(L, OP(L, it, 0), 0, NULL);
        const ptx_operand *po = OP(L, it, 1);
        ptx_operand q = *po;
        q.neg = 0;
        x->s0 = src(L, &q, 1);
        x->flags = po->neg;
        x->s1 = src(L, OP(L, it, 2), 32);
        return 0;
    }
    if (!strcmp(P->q[0], "ldmatrix") || !strcmp(P->q[0], "stmatrix")) {
        int st = P->q[0][0] == 's';
        if (!has(P, "m8n8") || !has(P, "b16"))
            return unsupported(L, it, ": only .m8n8 .b16 is modelled");
        pi_ext *x = ext(L, in, st ? PX_STMATRIX : PX_LDMATRIX);
        if (!x || need_ops(L, it, st ? "stmatrix" : "ldmatrix", 2, 2))
            return -1;
        x->n = (uint8_t)(has(P, "x4") ? 4 : has(P, "x2") ? 2 : 1);
        x->flags = (uint8_t)has(P, "trans");
        x->a0 = addr(L, OP(L, it, st ? 0 : 1));
        const ptx_operand *ro = OP(L, it, st ? 1 : 0);
        uint32_t regs[5];
        int n = reg_list(L, ro, regs, 4, !st, 32);
        if (n != x->n) {
            if (!L->bad)
                lerr(L, ro->line, ro->col, "the register vector does not match .x%s%s", "", "");
            return -1;
        }
        memcpy(x->regs, regs, sizeof(uint32_t) * 4);
        return 0;
    }
    return unsupported(L, it, "");
}

static int lower_wgmma(lw *L, const ptx_item *it, const parts *P)
{
    pi_ins *in = emit(L);
    if (!in || P->n < 2)
        return -1;
    const char *k = P->q[1];
    if (!strcmp(k, "fence"))
        return ext(L, in, PX_WGMMA_FENCE) ? 0 : -1;
    if (!strcmp(k, "commit_group"))
        return ext(L, in, PX_WGMMA_COMMIT) ? 0 : -1;
    if (!strcmp(k, "wait_group")) {
        pi_ext *x = ext(L, in, PX_WGMMA_WAIT);
        if (!x || need_ops(L, it, "wgmma.wait_group", 1, 1))
            return -1;
        x->s0 = src(L, OP(L, it, 0), 32);
        return 0;
    }
    if (strcmp(k, "mma_async"))
        return unsupported(L, it, "");
    /* wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16} d, a-desc, b-desc,
       scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b */
    const char *shape = NULL;
    if (!has_prefix(P, "m64n", &shape))
        return unsupported(L, it, "");
    int nn = atoi(shape + 4);
    tinfo dt, at, bt;
    if (P->n < 3 || !type_of(P->q[P->n - 3], &dt) || !type_of(P->q[P->n - 2], &at) ||
        !type_of(P->q[P->n - 1], &bt))
        return unsupported(L, it, "");
    if (dt.is_float != 1 || !((at.is_float == 2 && bt.is_float == 2) || (at.is_float == 3 && bt.is_float == 3)))
        return unsupported(L, it, ": the model runs .f32 accumulators with .f16 or .bf16 inputs");
    if (has(P, "sp") || has(P, "satfinite"))
        return unsupported(L, it, "");
    pi_ext *x = ext(L, in, PX_WGMMA_MMA);
    if (!x || need_ops(L, it, "wgmma.mma_async", 8, 8))
        return -1;
    x->sub = (int8_t)(at.is_float == 3);
    x->s3 = (uint32_t)nn;
    const ptx_operand *d = OP(L, it, 0);
    if (d->kind != PTX_OP_VEC || d->nelem != nn / 2) {
        lerr(L, d->line, d->col, "m64n%s needs %s accumulator registers", shape + 4, "N/2");
        return -1;
    }
    pi_prog *p = L->p;
    x->vbase = p->nvregs;
    x->vcount = d->nelem;
    for (int i = 0; i < d->nelem; i++) {
        if (GROWN(p->vregs, p->nvregs, L->capv)) {
            L->oom = 1;
            return -1;
        }
        p->vregs[p->nvregs++] = dst(L, EL(L, d, i), 0, NULL);
    }
    const ptx_operand *ao = OP(L, it, 1);
    if (ao->kind == PTX_OP_VEC)
        return unsupported(L, it, ": A from registers is not modelled (A must be a descriptor)");
    x->s0 = src(L, ao, 64);
    x->s1 = src(L, OP(L, it, 2), 64);
    x->s2 = src(L, OP(L, it, 3), 1);
    for (int i = 0; i < 4; i++) {
        const ptx_operand *o = OP(L, it, 4 + i);
        if (o->kind != PTX_OP_IMM) {
            lerr(L, o->line, o->col, "expected an immediate%s%s", "", "");
            return -1;
        }
        x->info[i < 3 ? i : 2] = 0;
        if (i < 2 && o->imm != 1 && o->imm != -1)
            return unsupported(L, it, ": imm-scale must be 1 or -1");
        if (i == 0)
            x->flags |= (uint8_t)(o->imm < 0 ? 1 : 0);
        if (i == 1)
            x->flags |= (uint8_t)(o->imm < 0 ? 2 : 0);
        if (i == 2)
            x->flags |= (uint8_t)(o->imm ? 4 : 0);
        if (i == 3)
            x->flags |= (uint8_t)(o->imm ? 8 : 0);
    }
    return 0;
}

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
static int lower_scalar(lw *L, const ptx_item *it, const parts *P)
{
    const char *op = P->q[0];
    tinfo t;
    int typed = last_type(P, 1, &t);
    pi_ins *in;
#define NEED(lo, hi)                          \
    do {                                      \
        if (need_ops(L, it, op, lo, hi))      \
            return -1;                        \
    } while (0)
#define NEW()                                 \
    do {                                      \
        in = emit(L);                         \
        if (!in)                              \
            return -1;                        \
    } while (0)
    if (!strcmp(op, "bra")) {
        NEED(1, 1);
        const ptx_operand *o = OP(L, it, 0);
        if (o->kind != PTX_OP_SYM) {
            lerr(L, o->line, o->col, "bra takes a label%s%s", "", "");
            return -1;
        }
        int scope = L->item_scope[L->item], best = -1;
        uint32_t target = PI_NOREG;
        for (uint32_t i = 0; i < L->nlb; i++) {
            if (!spans_eq(L->m, L->lb[i].name, o->name) || !in_scope(L, L->lb[i].scope, scope))
                continue;
            int d = scope_depth(L, L->lb[i].scope);
            if (d > best) {
                best = d;
                target = L->lb[i].ins;
            }
        }
        if (target == PI_NOREG) {
            char name[64];
            span_str(L->m, o->name, name, sizeof name);
            lerr(L, o->line, o->col, "no label '%s' in scope%s", name, "");
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
        int to = has(P, "to");
        uint64_t base;
        if (has(P, "shared") || has(P, "shared::cta") || has(P, "shared::cluster"))
            base = PI_SHARED_BASE;
        else if (has(P, "param") || has(P, "param::entry"))
            base = 0;    /* parameter addresses are generic already */
        else if (has(P, "global"))
            base = 0;
        else
            return unsupported(L, it, ": .local and .const windows are not modelled");
        NEW();
        in->op = to ? PI_CVTA_TO : PI_CVTA_FROM;
        in->imm = base;
        in->w = (uint8_t)(typed ? t.bits : 64);
        in->mask = wmask(in->w);
        in->d = dst(L, OP(L, it, 0), 0, NULL);
        in->a = src(L, OP(L, it, 1), 64);
        return 0;
    }
    if (!strcmp(op, "mapa")) {
        NEED(3, 3);
        NEW();
        in->op = PI_MAPA;
        in->w = (uint8_t)(typed ? t.bits : 32);
        in->mask = wmask(in->w);
        in->sub = (uint8_t)!has(P, "shared::cluster");    /* generic addresses */
        in->d = dst(L, OP(L, it, 0), 0, NULL);
        in->a = src(L, OP(L, it, 1), 64);
        in->b = src(L, OP(L, it, 2), 32);
        return 0;
    }
    if (!typed)
        return unsupported(L, it, ": no operand type");
    int w = t.bits;
    if (!strcmp(op, "mov")) {
        NEED(2, 2);
        const ptx_operand *d = OP(L, it, 0), *a = OP(L, it, 1);
        NEW();
        if (a->kind == PTX_OP_VEC) {
            if (w != 64 || a->nelem != 2)
                return unsupported(L, it, ": only mov.b64 d, {lo, hi} packs");
            in->op = PI_MOV_PACK;
            in->d = dst(L, d, 0, NULL);
            in->a = src(L, EL(L, a, 0), 32);
            in->b = src(L, EL(L, a, 1), 32);
            return 0;
        }
        if (d->kind == PTX_OP_VEC) {
            if (w != 64 || d->nelem != 2)
                return unsupported(L, it, ": only mov.b64 {lo, hi}, d unpacks");
            in->op = PI_MOV_UNPACK;
            in->d = dst(L, EL(L, d, 0), 1, NULL);
            in->e = dst(L, EL(L, d, 1), 1, NULL);
            in->a = src(L, a, 64);
            return 0;
        }
        in->op = PI_MOV;
        in->w = (uint8_t)w;
        in->mask = wmask(w);
        in->d = dst(L, d, 0, NULL);
        in->a = src(L, a, w);
        return 0;
    }
    if (t.is_float && t.is_float != 1 && strcmp(op, "cvt"))
        return unsupported(L, it, ": only .f32 arithmetic is modelled");
    if (t.is_pred && strcmp(op, "and") && strcmp(op, "or") && strcmp(op, "xor") && strcmp(op, "not") &&
        strcmp(op, "selp") && strcmp(op, "setp"))
        return unsupported(L, it, "");
    if (!strcmp(op, "setp")) {
        int u;
        int c = P->n > 1 ? cmp_of(P->q[1], &u) : -1;
        if (c < 0)
            return unsupported(L, it, ": the comparison is not modelled");
        if (P->n > 2 && (!strcmp(P->q[2], "and") || !strcmp(P->q[2], "or") || !strcmp(P->q[2], "xor")))
            return unsupported(L, it, ": the combining forms are not modelled");
        NEED(3, 3);
        NEW();
        in->op = t.is_float ? PI_SETP_F32 : (t.is_signed && !u) ? PI_SETP_S : PI_SETP_U;
        in->sub = (uint8_t)c;
        in->w = (uint8_t)w;
        in->mask = wmask(w);
        const ptx_operand *d = OP(L, it, 0);
        in->d = dst(L, d, 1, NULL);
        if (d->nelem == 1)
            in->e = dst(L, EL(L, d, 0), 1, NULL);
        in->a = src(L, OP(L, it, 1), w);
        in->b = src(L, OP(L, it, 2), w);
        return 0;
    }
    if (!strcmp(op, "selp")) {
        NEED(4, 4);
        NEW();
        in->op = PI_SELP;
        in->w = (uint8_t)w;
        in->mask = wmask(w);
        in->d = dst(L, OP(L, it, 0), 0, NULL);
        in->a = src(L, OP(L, it, 1), w);
        in->b = src(L, OP(L, it, 2), w);
        in->c = src(L, OP(L, it, 3), 1);
        return 0;
    }
    if (!strcmp(op, "cvt")) {
        tinfo st;
        if (!last_type(P, 1, &st) || !last_type(P, 2, &t))
            return unsupported(L, it, "");
        w = t.bits;
        if (has(P, "sat"))
            return unsupported(L, it, ": .sat is not modelled");
        NEW();
        in->w = (uint8_t)w;
        in->sw = (uint8_t)st.bits;
        in->mask = wmask(w);
        if (t.is_float == 5 && st.is_float == 1) {           /* cvt.rn.f16x2.f32 d, a, b */
            NEED(3, 3);
            if (!has(P, "rn"))
                return unsupported(L, it, ": only .rn rounding is modelled");
            in->op = PI_CVT_F16X2_F32;
            in->d = dst(L, OP(L, it, 0), 0, NULL);
            in->a = src(L, OP(L, it, 1), 32);
            in->b = src(L, OP(L, it, 2), 32);
            return 0;
        }
        NEED(2, 2);
        in->d = dst(L, OP(L, it, 0), 0, NULL);
        in->a = src(L, OP(L, it, 1), st.bits);
        if (!t.is_float && !st.is_float)
            in->op = st.is_signed ? PI_CVT_SX : PI_CVT_ZX;
        else if (t.is_float == 1 && st.is_float == 2)
            in->op = PI_CVT_F32_F16;
        else if (t.is_float == 1 && !st.is_float && (has(P, "rn") || st.bits <= 16))
            in->op = st.is_signed ? PI_CVT_F32_S : PI_CVT_F32_U;
        else if (!t.is_float && st.is_float == 1 && has(P, "rzi"))
            in->op = t.is_signed ? PI_CVT_S_F32 : PI_CVT_U_F32;
        else if (t.is_float == 1 && st.is_float == 1)
            in->op = PI_MOV;
        else
            return unsupported(L, it, ": this conversion is not modelled");
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
        else if (has(P, "lo"))
            opc = mad ? PI_MADLO : PI_MULLO;
        else if (has(P, "hi"))
            opc = t.is_signed ? (mad ? PI_MADHI_S : PI_MULHI_S) : (mad ? PI_MADHI_U : PI_MULHI_U);
        else if (has(P, "wide"))
            opc = t.is_signed ? (mad ? PI_MADWIDE_S : PI_MULWIDE_S) : (mad ? PI_MADWIDE_U : PI_MULWIDE_U);
        if ((opc == PI_MULWIDE_S || opc == PI_MULWIDE_U || opc == PI_MADWIDE_S || opc == PI_MADWIDE_U) && w > 32)
            return unsupported(L, it, ": .wide takes 16- or 32-bit sources");
    }
    if (opc < 0 || (!strcmp(op, "add") && (has(P, "cc") || has(P, "sat"))) ||
        (!strcmp(op, "sub") && (has(P, "cc") || has(P, "sat"))) || (!strcmp(op, "mad") && has(P, "cc")))
        return unsupported(L, it, "");
    if (t.is_pred && opc != PI_AND && opc != PI_OR && opc != PI_XOR && opc != PI_NOT)
        return unsupported(L, it, "");
    NEED(nops, nops);
    NEW();
    in->op = (uint8_t)opc;
    in->w = (uint8_t)w;
    in->mask = wmask(w);
    if (opc == PI_MULWIDE_S || opc == PI_MULWIDE_U || opc == PI_MADWIDE_S || opc == PI_MADWIDE_U)
        in->mask = wmask(2 * w);
    int sw = (opc == PI_SHL || opc == PI_SHR_S || opc == PI_SHR_U) ? 32 : w;
    in->d = dst(L, OP(L, it, 0), 0, NULL);
    in->a = src(L, OP(L, it, 1), w);
    if (nops >= 3)
        in->b = src(L, OP(L, it, 2), (opc == PI_BFE_S || opc == PI_BFE_U) ? 32 : sw);
    if (nops >= 4)
        in->c = src(L, OP(L, it, 3), (opc == PI_BFE_S || opc == PI_BFE_U) ? 32 :
                                     (opc == PI_MADWIDE_S || opc == PI_MADWIDE_U) ? 2 * w : w);
    if (nops >= 5)
        in->e = src(L, OP(L, it, 4), 32);
    if (opc == PI_BFI) {      /* bfi d, a(insert), b(base), c(pos), e(len) */
        in->sw = 0;
    }
    return 0;
#undef NEED
#undef NEW
}

static int lower_instr(lw *L, const ptx_item *it)
{
    parts P;
    split(L->m, it->opcode, &P);
    uint32_t first = L->p->nins;
    int rc;
    const char *op = P.q[0];
    if (!strcmp(op, "ld") || (!strcmp(op, "st") && !(P.n > 1 && (!strcmp(P.q[1], "async") || !strcmp(P.q[1], "bulk")))))
        rc = lower_ldst(L, it, &P, op[0] == 's');
    else if (!strcmp(op, "st")) {
        if (!strcmp(P.q[1], "bulk")) {
            pi_ins *in = emit(L);
            pi_ext *x = in ? ext(L, in, PX_ST_BULK) : NULL;
            if (!x || need_ops(L, it, "st.bulk", 3, 3))
                return -1;
            x->a0 = addr(L, OP(L, it, 0));
            x->s0 = src(L, OP(L, it, 1), 64);
            x->s1 = src(L, OP(L, it, 2), 64);
            rc = 0;
        } else if (has(&P, "release")) {
            tinfo t;
            pi_ins *in = emit(L);
            pi_ext *x = in ? ext(L, in, PX_ST_ASYNC_RELEASE) : NULL;
            if (!x || need_ops(L, it, "st.async.release", 2, 2))
                return -1;
            if (!last_type(&P, 1, &t) || t.bits > 64 || t.bits < 8)
                return unsupported(L, it, "");
            x->size = (uint8_t)(t.bits / 8);
            x->flags = (uint8_t)(has(&P, "sys") | (has(&P, "mmio") << 1));
            x->a0 = addr(L, OP(L, it, 0));
            x->s0 = src(L, OP(L, it, 1), t.bits);
            rc = 0;
        } else {
            tinfo t;
            pi_ins *in = emit(L);
            pi_ext *x = in ? ext(L, in, PX_ST_ASYNC) : NULL;
            if (!x || need_ops(L, it, "st.async", 3, 3))
                return -1;
            if (!last_type(&P, 1, &t) || (t.bits != 32 && t.bits != 64))
                return unsupported(L, it, "");
            x->size = (uint8_t)(t.bits / 8);
            x->a0 = addr(L, OP(L, it, 0));
            int n = reg_list(L, OP(L, it, 1), x->regs, 4, 0, t.bits);
            if (n != vec_of(&P))
                return unsupported(L, it, ": the register vector does not match");
            x->n = (uint8_t)n;
            x->a2 = addr(L, OP(L, it, 2));
            rc = 0;
        }
    } else if (!strcmp(op, "mbarrier"))
        rc = lower_mbarrier(L, it, &P);
    else if (!strcmp(op, "cp"))
        rc = lower_cp(L, it, &P);
    else if (!strcmp(op, "fence") || !strcmp(op, "membar"))
        rc = lower_fence(L, it, &P);
    else if (!strcmp(op, "tensormap"))
        rc = lower_tensormap(L, it, &P);
    else if (!strcmp(op, "bar") || !strcmp(op, "barrier"))
        rc = lower_bar(L, it, &P);
    else if (!strcmp(op, "elect") || !strcmp(op, "shfl") || !strcmp(op, "vote") || !strcmp(op, "ldmatrix") ||
             !strcmp(op, "stmatrix"))
        rc = lower_warp(L, it, &P);
    else if (!strcmp(op, "wgmma"))
        rc = lower_wgmma(L, it, &P);
    else
        rc = lower_scalar(L, it, &P);
    if (L->p->nins == first && !L->oom) {      /* every instruction holds one slot: labels count on it */
        if (!L->bad)
            unsupported(L, it, "");
        pi_ins *in = emit(L);
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
        in->guard = name_reg(L, &po, NULL);
        in->pneg = it->pred_neg;
        if (in->guard == PI_NOREG)
            in->guard = 0;
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
    return span_is(L->m, tok(L, i)->s, s);
}

static int tok_int(const lw *L, uint32_t i, uint64_t *v)
{
    const ptx_token *k = tok(L, i);
    if (k->kind != PTX_TK_INT)
        return 0;
    char buf[32];
    span_str(L->m, k->s, buf, sizeof buf);
    *v = strtoull(buf, NULL, 0);
    return 1;
}

static int decl_bits(const lw *L, uint32_t i)
{
    char buf[16];
    const ptx_token *k = tok(L, i);
    if (k->kind != PTX_TK_DOT || k->s.len > 10)
        return 0;
    span_str(L->m, k->s, buf, sizeof buf);
    tinfo t;
    return type_of(buf + 1, &t) ? t.bits : 0;
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
    span_str(L->m, name, pa->name, sizeof pa->name);
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
    span_str(L->m, name, s->name, sizeof s->name);
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
            span_str(m, m->toks[k + 1].s, p->entry, sizeof p->entry);
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
    new_regs(&L, 1, 1);                  /* register 0: the constant 1 (unguarded) */
    new_regs(&L, 1, 64);                 /* register 1: where a sink `_` writes */
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
                    r->base = new_regs(&L, range ? range : 1, r->cls);
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
        pi_ins *in = emit(&L);
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
            in->e = in->op == PI_SETP_S || in->op == PI_SETP_U || in->op == PI_SETP_F32 ||
                    in->op == PI_MOV_UNPACK ? 1 : 0;
        if (in->a == PI_NOREG)
            in->a = 0;
        if (in->b == PI_NOREG)
            in->b = 0;
        if (in->c == PI_NOREG)
            in->c = 0;
    }
    free(L.rd);
    free(L.lb);
    free(L.parent);
    free(L.item_scope);
    free(L.sh);
    free(L.cls);
    return 0;
oom:
    free(L.rd);
    free(L.lb);
    free(L.parent);
    free(L.item_scope);
    free(L.sh);
    free(L.cls);
    return -1;
}
