/* check.c - validation of a parsed module as ptxas does it for the module's .target and .version:
   the module header, then each instruction matched against the generated forms (qualifiers in
   any order, operand shapes), then the rules ptxas adds (rules.c) and the target/version needs. */
#include "ptx/text/check.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The targets ptxas knows, with the lowest .version that takes each, as ptxas 13.0 and 13.5 say
   ("PTX .version X does not support .target T"); 0: that ptxas does not know the target
   ("Unsupported .target"); -1: it knows the target but generates no code for it (no -arch takes
   it). Targets below sm_75, which no -arch of these ptxas takes either, are assembled for the
   default sm_75 as ptxas does without -arch. */
static const struct { const char *target; short v130, v135; } targets[] = {
    {"sm_10", 10, 10}, {"sm_11", 10, 10}, {"sm_12", 12, 12}, {"sm_13", 12, 12}, {"sm_20", 20, 20},
    {"sm_21", 20, 20}, {"sm_30", 30, 30}, {"sm_32", 40, 40}, {"sm_35", 31, 31}, {"sm_37", 41, 41},
    {"sm_50", 40, 40}, {"sm_52", 41, 41}, {"sm_53", 42, 42}, {"sm_60", 50, 50}, {"sm_61", 50, 50},
    {"sm_62", 50, 50}, {"sm_70", 51, 51}, {"sm_72", 61, 61}, {"sm_75", 63, 63}, {"sm_80", 70, 70},
    {"sm_82", -1, -1}, {"sm_86", 71, 71}, {"sm_87", 74, 74}, {"sm_88", 73, 90}, {"sm_89", 78, 78},
    {"sm_90", 78, 78}, {"sm_90a", 80, 80}, {"sm_100", 86, 86}, {"sm_100a", 86, 86},
    {"sm_100f", 88, 88}, {"sm_101", -1, -1}, {"sm_101a", -1, -1}, {"sm_101f", -1, -1},
    {"sm_103", 88, 88}, {"sm_103a", 88, 88}, {"sm_103f", 88, 88}, {"sm_107", 0, 94},
    {"sm_107a", 0, 94}, {"sm_107f", 0, 94}, {"sm_110", 90, 90}, {"sm_110a", 90, 90},
    {"sm_110f", 90, 90}, {"sm_120", 87, 87}, {"sm_120a", 87, 87}, {"sm_120f", 88, 88},
    {"sm_121", 88, 88}, {"sm_121a", 88, 88}, {"sm_121f", 88, 88},
};

/* the PTX ISA versions each ptxas reads: the last minor of each major (1.0-1.5, 2.0-2.3, ...) */
static const signed char last_minor130[10] = {-1, 5, 3, 2, 3, 1, 5, 8, 8, 0};
static const signed char last_minor135[10] = {-1, 5, 3, 2, 3, 1, 5, 8, 8, 5};

int ptx_split(const char *s, size_t n, ptx_comp *c, int max)
{
    int k = 0;
    size_t i = 0;
    while (i < n && k < max) {
        size_t j = i;
        while (j < n && s[j] != '.')
            j++;
        c[k].p = s + i;
        c[k].n = (int)(j - i);
        k++;
        i = j + 1;
    }
    return k;
}

static int comp_eq(const ptx_comp *c, const char *lit, int n)
{
    return c->n == n && !memcmp(c->p, lit, (size_t)n);
}

/* does value ".async.global" match comps[i..]? returns the number of components, 0 if not */
static int value_match(const char *v, const ptx_comp *comps, int i, int ncomps)
{
    int k = 0;
    const char *p = v;
    while (*p == '.') {
        p++;
        const char *e = p;
        while (*e && *e != '.')
            e++;
        if (i + k >= ncomps || !comp_eq(&comps[i + k], p, (int)(e - p)))
            return 0;
        k++;
        p = e;
    }
    return k;
}

/* one operand against its kind; 0 ok, else writes why (when why is not NULL) */
#define WHY(...) (why ? (void)snprintf(why, cap, __VA_ARGS__) : (void)0)
static int operand_ok(const ptx_module *m, const ptx_operand *o, int kind, char *why, size_t cap)
{
    int cls = 0, base_cls = 0;
    if (kind >= PTX_K_VREG)
        return ptx_video_operand(m, o, kind, why, cap);
    if (o->sel) {        /* ptxas: "Video selector is not allowed on source operand for instruction 'add'" */
        WHY("a video selector (.b0, .h1, ...) is an operand of the video instructions only");
        return 1;
    }
    if (o->neg == 2) {   /* ptxas: "Operand negation not allowed for instruction 'add'" */
        WHY("operand negation -reg is vmad's only");
        return 1;
    }
    if (o->kind == PTX_OP_REG || (o->kind == PTX_OP_ADDR && o->has_base &&
                                  m->text[o->name.off] == '%')) {
        int c = cls = base_cls = ptx_reg_class(m, o);
        if (c == -1) {
            WHY("'%.*s' is not a declared register", (int)o->name.len, m->text + o->name.off);
            return 1;
        }
    }
    if (o->kind == PTX_OP_SYM && !ptx_lookup(m, m->text + o->name.off, o->name.len)) {
        WHY("'%.*s' is not a declared symbol", (int)o->name.len, m->text + o->name.off);
        return 1;
    }
    if (o->kind == PTX_OP_ADDR && o->has_base && m->text[o->name.off] != '%' &&
        !ptx_lookup(m, m->text + o->name.off, o->name.len)) {
        WHY("'%.*s' is not a declared symbol", (int)o->name.len, m->text + o->name.off);
        return 1;
    }
    if (o->kind != PTX_OP_REG)
        cls = 0;
    if (o->kind == PTX_OP_VEC) {         /* {a, b}: registers, immediates or sinks */
        for (int i = 0; i < o->nelem; i++) {
            const ptx_operand *e = &m->elems[o->elem + i];
            if (e->kind == PTX_OP_REG && ptx_reg_class(m, e) == -1) {
                WHY("'%.*s' in the vector is not a declared register", (int)e->name.len, m->text + e->name.off);
                return 1;
            }
            if (e->sel || e->neg == 2) {
                WHY("'%.*s' in the vector: a video selector or -reg is not an element", (int)e->name.len,
                    m->text + e->name.off);
                return 1;
            }
            if (e->kind == PTX_OP_SYM) {
                WHY("'%.*s' in the vector is not a register or an immediate", (int)e->name.len,
                    m->text + e->name.off);
                return 1;
            }
        }
    }
    if (kind == PTX_K_A) {
        if (o->kind != PTX_OP_ADDR || o->nelem) {
            WHY("an address [reg], [reg+imm] or [var] is expected");
            return 1;
        }
        if (o->has_base && m->text[o->name.off] == '%') {
            int c = base_cls;         /* the base register's class, found above */
            if (c != 32 && c != 64) {
                WHY("the address register must be 32 or 64 bits wide");
                return 1;
            }
        }
        return 0;
    }
    if (kind == PTX_K_T || kind == PTX_K_TS) {
        if (o->kind != PTX_OP_ADDR || !o->nelem || o->sampler != (kind == PTX_K_TS)) {
            WHY(kind == PTX_K_TS ? "[texture, sampler, {coordinates}] is expected"
                                 : "[tensorMap, {coordinates}] is expected");
            return 1;
        }
        if (o->sampler) {
            const ptx_operand *smp = &m->elems[o->elem - 1];
            int sc = smp->kind == PTX_OP_REG ? ptx_reg_class(m, smp) : 0;
            if (smp->kind == PTX_OP_REG ? sc != 64
                                        : !ptx_lookup(m, m->text + smp->name.off, smp->name.len)) {
                WHY("the sampler '%.*s' is neither a 64-bit register nor a declared .samplerref",
                    (int)smp->name.len, m->text + smp->name.off);
                return 1;
            }
        }
        for (int i = 0; i < o->nelem; i++) {
            const ptx_operand *e = &m->elems[o->elem + i];
            if (e->kind == PTX_OP_IMM)
                continue;
            if (e->kind != PTX_OP_REG || ptx_reg_class(m, e) != 32) {
                WHY("tensor coordinates are 32-bit registers or immediates");
                return 1;
            }
        }
        return 0;
    }
    if (kind == PTX_K_V) {
        if (o->kind != PTX_OP_VEC) {
            WHY("a vector {..} is expected");
            return 1;
        }
        return 0;
    }
    if (kind == PTX_K_S32) {
        if (o->kind == PTX_OP_IMM || (o->kind == PTX_OP_REG && cls == 32))
            return 0;
        WHY("a 32-bit register or an immediate is expected");
        return 1;
    }
    if (kind == PTX_K_S3264) {
        if (o->kind == PTX_OP_IMM || (o->kind == PTX_OP_REG && (cls == 32 || cls == 64)))
            return 0;
        WHY("a 32- or 64-bit register or an immediate is expected");
        return 1;
    }
    if (kind == PTX_K_R64 || kind == PTX_K_R16) {
        int want = kind == PTX_K_R64 ? 64 : 16;
        if (o->kind == PTX_OP_IMM || (o->kind == PTX_OP_REG && cls == want))
            return 0;
        WHY("a %d-bit register is expected", want);
        return 1;
    }
    if (kind == PTX_K_R64_) {
        if (o->kind == PTX_OP_SINK || (o->kind == PTX_OP_REG && cls == 64))
            return 0;
        WHY("a 64-bit register or '_' is expected");
        return 1;
    }
    if (kind == PTX_K_SINK) {
        if (o->kind == PTX_OP_SINK)
            return 0;
        WHY("the sink '_' is expected");
        return 1;
    }
    if (kind == PTX_K_P) {
        if (o->kind == PTX_OP_IMM || (o->kind == PTX_OP_REG && cls == 1))
            return 0;
        WHY("a predicate or an immediate is expected");
        return 1;
    }
    if (kind == PTX_K_PR) {
        if (o->kind == PTX_OP_REG && cls == 1)
            return 0;
        WHY("a predicate register is expected");
        return 1;
    }
    if (kind == PTX_K_PD) {
        if (o->kind == PTX_OP_REG && cls == 1)
            return 0;
        WHY("a predicate register is expected");
        return 1;
    }
    if (kind == PTX_K_I || kind == PTX_K_I0) {
        if (o->kind == PTX_OP_IMM && (kind != PTX_K_I0 || o->imm == 0))
            return 0;
        WHY(kind == PTX_K_I0 ? "the immediate 0 is expected" : "an immediate is expected");
        return 1;
    }
    if (kind == PTX_K_D && o->kind == PTX_OP_REG && o->nelem == 1) {
        /* p|q where the form writes one destination (setp.f16: ptxas "Predicate output not allowed") */
        WHY("one destination is expected: this form writes no predicate output (d|p)");
        return 1;
    }
    if (kind == PTX_K_D || kind == PTX_K_DP) {
        if (o->kind == PTX_OP_REG || o->kind == PTX_OP_SINK || o->kind == PTX_OP_VEC)
            return 0;
        WHY("a destination register is expected");
        return 1;
    }
    if (kind == PTX_K_L) {
        if (o->kind == PTX_OP_SYM)
            return 0;
        WHY("a label is expected");
        return 1;
    }
    if (kind == PTX_K_LIST) {           /* call's ( ): what each entry is, rules_call.c says */
        if (o->kind == PTX_OP_LIST)
            return 0;
        WHY("a ( ) list is expected");
        return 1;
    }
    if (kind == PTX_K_FN) {
        if (o->kind == PTX_OP_SYM || o->kind == PTX_OP_REG)
            return 0;
        WHY("a function name or a register holding a function's address is expected");
        return 1;
    }
    if (kind == PTX_K_PROTO) {
        if (o->kind == PTX_OP_SYM)
            return 0;
        WHY("a .callprototype label or a table of call targets is expected");
        return 1;
    }
    if (o->kind == PTX_OP_LIST) {
        WHY("a ( ) list is not an operand of this instruction");
        return 1;
    }
    /* "S", "?": any value */
    if (o->kind == PTX_OP_ADDR && kind == PTX_K_S) {
        WHY("a value, not an address, is expected");
        return 1;
    }
    return 0;
}
#undef WHY

/* match one form: fills mt; returns 0 if the instruction is this form, else the error in mt */
static int match_qualifiers(const ptx_comp *comps, int ncomps, int nroot, int fi, ptx_match *mt)
{
    const ptx_form *f = &ptx_forms[fi];
    memset(mt, 0, sizeof *mt);
    mt->form = fi;
    mt->nroot = nroot;
    mt->ncomps = ncomps;
    for (int s = 0; s < f->nslots; s++)
        mt->slot_at[s] = -1;
    for (int i = nroot; i < ncomps;) {
        int best_s = -1, best_len = 0, best_v = -1, dup = -1;
        for (int s = 0; s < f->nslots; s++) {
            for (int v = 0; v < f->slots[s].nvalues; v++) {
                int k = value_match(f->slots[s].values[v], comps, i, ncomps);
                if (k > best_len || (k == best_len && k && best_s >= 0 && mt->slot_at[best_s] >= 0 &&
                                     mt->slot_at[s] < 0)) {
                    if (mt->slot_at[s] >= 0) {
                        if (k > best_len || best_s < 0) dup = s;
                        if (best_s >= 0 && mt->slot_at[best_s] < 0 && k == best_len)
                            continue;
                    }
                    best_s = s, best_len = k, best_v = v;
                }
            }
        }
        if (best_s < 0) {
            snprintf(mt->msg, sizeof mt->msg, "'.%.*s' is not a qualifier of %s (%s)", comps[i].n,
                     comps[i].p, f->root, f->syntax);
            mt->unknown = 1;
            return 1;
        }
        if (mt->slot_at[best_s] >= 0 && mt->slot_val[best_s] == best_v &&
            (!strcmp(f->slots[best_s].values[best_v], ".sat") || !strcmp(f->slots[best_s].values[best_v], ".NaN") ||
             !strcmp(f->slots[best_s].values[best_v], ".sync"))) {
            i += best_len;      /* ptxas 13.0 takes .sat, .NaN and .sync again (add.sat.sat.f32, max.NaN.NaN.f32,
                                   mma.sync.sync, shfl.sync.sync) */
            continue;
        }
        if (mt->slot_at[best_s] >= 0) {
            (void)dup;
            snprintf(mt->msg, sizeof mt->msg, "more than one .%s qualifier ('.%.*s') on %s",
                     f->slots[best_s].name, comps[i].n, comps[i].p, f->root);
            return 1;
        }
        mt->slot_at[best_s] = i;
        mt->slot_val[best_s] = best_v;
        mt->score++;
        i += best_len;
    }
    for (int s = 0; s < f->nslots; s++) {
        const ptx_slot *sl = &f->slots[s];
        if (mt->slot_at[s] < 0 && !sl->optional && sl->nvalues) {
            char vals[160] = "";
            for (int v = 0; v < sl->nvalues && strlen(vals) < 120; v++)
                snprintf(vals + strlen(vals), sizeof vals - strlen(vals), "%s%s", v ? " " : "", sl->values[v]);
            snprintf(mt->msg, sizeof mt->msg, "%s needs its .%s qualifier (one of %s)", f->root,
                     sl->name, vals);
            return 1;
        }
        if (sl->optional && sl->group) {
            for (int t = 0; t < f->nslots; t++)
                if (t != s && f->slots[t].group == sl->group &&
                    (mt->slot_at[t] < 0) != (mt->slot_at[s] < 0)) {
                    snprintf(mt->msg, sizeof mt->msg, "%s: qualifiers .%s and .%s must be given together",
                             f->root, sl->name, f->slots[t].name);
                    return 1;
                }
        }
    }
    /* types are written in the template's order (cvt.f32.bf16 is not cvt.bf16.f32) */
    for (int s = 0, last = -1; s < f->nslots; s++) {
        if (mt->slot_at[s] < 0 || sem_type_from_name(f->slots[s].values[mt->slot_val[s]]) == SEM_T_NONE)
            continue;
        if (mt->slot_at[s] < last) {
            snprintf(mt->msg, sizeof mt->msg, "%s: the types are out of order (%s)", f->root, f->syntax);
            return 1;
        }
        last = mt->slot_at[s];
    }
    /* two state spaces: the destination is written before the source */
    int sd = -1, ss = -1;
    for (int s = 0; s < f->nslots; s++) {
        if (!strcmp(f->slots[s].name, "dst") || (!strcmp(f->slots[s].name, "shared") && sd < 0)) sd = s;
        if (!strcmp(f->slots[s].name, "src") || !strcmp(f->slots[s].name, "global")) ss = s;
    }
    if (sd >= 0 && ss >= 0 && mt->slot_at[sd] >= 0 && mt->slot_at[ss] >= 0 &&
        mt->slot_at[sd] > mt->slot_at[ss]) {
        snprintf(mt->msg, sizeof mt->msg, "%s: the destination state space comes before the source "
                 "(%s)", f->root, f->syntax);
        return 1;
    }
    mt->matched = 1;
    return 0;
}

/* a vector operand {..} where the form names a scalar (kind S or any value): only mov packs one
   (mov.b32 d, {h0, h1}: the elements' widths make the .bN type's), and forms with a .v2/.v4
   qualifier take one; 0 ok, else writes why (ptxas: "Vector operand is not allowed for
   instruction 'add'", "Argument vector size mismatch for instruction 'mov'") */
static int vector_ok(const ptx_module *m, const ptx_form *f, const ptx_match *mt, const ptx_operand *o,
                     char *why, size_t cap)
{
    if (strcmp(f->root, "mov")) {
        if (ptx_slot_value(mt, "vec"))
            return 0;
        for (int s = 0; s < f->nslots; s++)      /* ld/st without .vN take {a}: a vector of one */
            if (!strcmp(f->slots[s].name, "vec") && o->nelem == 1)
                return 0;
        snprintf(why, cap, o->nelem == 1 ? "a vector operand { } is not allowed for %s"
                                         : "a vector operand { } is not allowed for %s without .v2 / .v4", f->root);
        return 1;
    }
    const char *t = ptx_slot_value(mt, "type");
    int bits = 0;
    if (t && t[1] == 'b')
        bits = atoi(t + 2);
    int sum = 0;
    for (int i = 0; i < o->nelem && bits; i++) {
        const ptx_operand *e = &m->elems[o->elem + i];
        int c = e->kind == PTX_OP_REG ? ptx_reg_class(m, e) : e->kind == PTX_OP_SINK ? -1 : bits / o->nelem;
        if (c <= 1) {
            snprintf(why, cap, "mov: element %d of the vector is not a value register or an immediate", i + 1);
            return 1;
        }
        sum += c;
    }
    if (!bits || sum != bits) {
        snprintf(why, cap, "mov packs a vector into a .b16, .b32, .b64 or .b128 register of the elements' "
                 "total width (%d elements, %d bits; the type is %s)", o->nelem, sum, t ? t : "none");
        return 1;
    }
    return 0;
}

/* the operands of an instruction whose qualifiers matched form mt->form; quiet: no message */
static int match_operands(const ptx_module *m, const ptx_item *it, ptx_match *mt, int quiet)
{
    const ptx_form *f = &ptx_forms[mt->form];
    int n = it->nops, req = 0, linked = 0, freeopt = 0;
    int present[24];
    for (int k = 0; k < f->noperands && k < 24; k++) {
        const ptx_operand_spec *os = &f->operands[k];
        present[k] = 0;
        if (!os->optional) {
            req++;
            present[k] = 1;
        } else if (os->qualifier[0]) {
            present[k] = ptx_has_qualifier(mt, os->qualifier);
            linked += present[k];
        } else {
            freeopt++;
        }
    }
    int extra = n - req - linked;
    if (extra < 0 || extra > freeopt) {
        mt->operands_bad = 1;
        if (quiet)
            return 1;
        snprintf(mt->msg, sizeof mt->msg, "%s takes %d operand%s here, not %d (%s)", f->root,
                 req + linked + (freeopt ? 0 : 0), req + linked == 1 ? "" : "s", n, f->syntax);
        if (freeopt)
            snprintf(mt->msg + strlen(mt->msg), sizeof mt->msg - strlen(mt->msg), "; up to %d more optional",
                     freeopt);
        mt->operands_bad = 1;
        return 1;
    }
    for (int k = 0; k < f->noperands && k < 24; k++)
        if (f->operands[k].optional && !f->operands[k].qualifier[0] && extra > 0) {
            present[k] = 1;
            extra--;
        }
    int oi = 0;
    for (int k = 0; k < f->noperands && k < 24; k++) {
        if (!present[k]) {
            mt->op_of[k] = -1;
            continue;
        }
        const ptx_operand *o = &m->ops[it->op0 + oi];
        char why[160];
        int kind = f->operands[k].kind;
        if (operand_ok(m, o, kind, quiet ? NULL : why, sizeof why) ||
            (o->kind == PTX_OP_VEC && (kind == PTX_K_S || kind == PTX_K_ANY) &&
             vector_ok(m, f, mt, o, why, sizeof why))) {
            mt->operands_bad = 1;
            mt->bad_line = o->line;
            mt->bad_col = o->col;
            if (quiet)
                return 1;
            snprintf(mt->msg, sizeof mt->msg, "operand %d (%s) of %s: %s", oi + 1, f->operands[k].name,
                     f->root, why);
            mt->operands_bad = 1;
            mt->bad_line = o->line;
            mt->bad_col = o->col;
            return 1;
        }
        mt->op_of[k] = oi;
        oi++;
    }
    return 0;
}

static void target_name(const ptx_module *m, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", m->target[0] ? m->target : "no .target");
}

/* the form's and its qualifiers' PTX version and target needs */
static void check_needs(const ptx_module *m, const ptx_item *it, const ptx_match *mt, ptx_diags *ds)
{
    const ptx_form *f = &ptx_forms[mt->form];
    char tgt[32];
    target_name(m, tgt, sizeof tgt);
    if (m->version && m->version < f->version) {
        ptx_diag_add(ds, 1, it->line, it->col, "%s needs PTX ISA version %d.%d or later; this module is "
                     ".version %d.%d", f->root, f->version / 10, f->version % 10, m->version / 10,
                     m->version % 10);
        return;
    }
    if (f->arch[0] && !ptx_target_in(m, f->arch)) {
        ptx_diag_add(ds, 1, it->line, it->col, "%s is supported on %s only; this module targets %s",
                     f->root, f->arch, tgt);
        return;
    }
    if (m->sm > 0 && m->sm < f->sm) {
        ptx_diag_add(ds, 1, it->line, it->col, "%s needs sm_%d or later; this module targets %s", f->root,
                     f->sm, tgt);
        return;
    }
    for (int r = 0; r < f->nreqs; r++) {
        const ptx_qual_req *q = &f->reqs[r];
        if (!ptx_has_qualifier(mt, q->qualifier))
            continue;
        if (!strcmp(q->context, "dst")) {
            const char *d = ptx_slot_value(mt, "dst");
            if (!d || strcmp(d, q->qualifier))
                continue;
        }
        if (q->version && m->version && m->version < q->version) {
            ptx_diag_add(ds, 1, it->line, it->col, "%s%s%s needs PTX ISA version %d.%d or later; this "
                         "module is .version %d.%d", f->root, q->qualifier, q->context[0] ? " as destination" : "",
                         q->version / 10, q->version % 10, m->version / 10, m->version % 10);
            return;
        }
        if (q->sm && m->sm > 0 && m->sm < q->sm) {
            ptx_diag_add(ds, 1, it->line, it->col, "%s%s needs sm_%d or later; this module targets %s",
                         f->root, q->qualifier, q->sm, tgt);
            return;
        }
        if (q->arch[0] && !ptx_target_in(m, q->arch)) {
            ptx_diag_add(ds, 1, it->line, it->col, "%s%s is supported on %s only; this module targets %s",
                         f->root, q->qualifier, q->arch, tgt);
            return;
        }
    }
}

/* the root opcode of every form, split once per check */
typedef struct { ptx_comp c[8]; int n; } root_comps;

/* What an opcode text's qualifiers match, kept per distinct opcode: kernels repeat them. */
#define PTX_CACHE_FORMS 8
typedef struct {
    const char *op;          /* the opcode text (in the module) */
    uint32_t len, hash;
    int found;               /* some form has this root */
    int npass;
    ptx_match pass[PTX_CACHE_FORMS];
    ptx_match fail;          /* the best of those that did not match (when npass == 0) */
    const char *not_modelled[PTX_CACHE_FORMS];   /* pass[k] valid but not run by the semantics library:
                                                    why; NULL runs (or not asked yet: asked[k]) */
    uint8_t asked[PTX_CACHE_FORMS];
} op_entry;

typedef struct {
    op_entry **e;            /* open addressing; NULL empty */
    uint32_t cap, count;     /* cap a power of two */
    const root_comps *roots;
    const ptx_module *m;
    int ptxas;
} op_cache;

/* 8 bytes a step: opcodes are long ("cp.async.bulk.tensor.2d.shared::cluster...") */
static uint32_t hash_span(const char *p, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, p, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h ^ h >> 29);
}

static void fill_entry(op_entry *e, const root_comps *roots, const ptx_module *m, int ptxas)
{
    ptx_comp comps[PTX_MAX_COMPS];
    int ncomps = ptx_split(e->op, e->len, comps, PTX_MAX_COMPS);
    ptx_match mt;
    int have = 0, best_root = 0;
    for (int fi = 0; fi < ptx_nforms; fi++) {
        const ptx_comp *rc = roots[fi].c;
        int nr = roots[fi].n;
        if (nr > ncomps || rc[0].n != comps[0].n || memcmp(rc[0].p, comps[0].p, (size_t)rc[0].n))
            continue;
        int ok = 1;
        for (int k = 1; k < nr && ok; k++)
            ok = comps[k].n == rc[k].n && !memcmp(comps[k].p, rc[k].p, (size_t)rc[k].n);
        if (!ok)
            continue;
        e->found = 1;
        int nomatch = match_qualifiers(comps, ncomps, nr, fi, &mt);
        mt.ptxas = ptxas;
        if (!nomatch) {
            if (e->npass < PTX_CACHE_FORMS) {
                /* what depends on the form and the module only: the rule to run, the operands'
                   state spaces, whether the target and version have the form */
                ptx_rules_prepare(&mt);
                ptx_diags scratch = {0};
                ptx_item none = {0};
                check_needs(m, &none, &mt, &scratch);
                mt.needs_err = scratch.nerrors > 0;
                ptx_diags_free(&scratch);
                e->pass[e->npass++] = mt;
            }
            continue;
        }
        if (!have || nr > best_root || (nr == best_root && mt.score > e->fail.score)) {
            e->fail = mt;
            best_root = nr;
            have = 1;
        }
    }
}

static int cache_grow(op_cache *c)
{
    uint32_t cap = c->cap ? c->cap * 2 : 64;
    op_entry **e = calloc(cap, sizeof *e);
    if (!e)
        return -1;
    for (uint32_t i = 0; i < c->cap; i++) {
        if (!c->e[i])
            continue;
        uint32_t j = c->e[i]->hash & (cap - 1);
        while (e[j])
            j = (j + 1) & (cap - 1);
        e[j] = c->e[i];
    }
    free(c->e);
    c->e = e;
    c->cap = cap;
    return 0;
}

static void cache_free(op_cache *c)
{
    for (uint32_t i = 0; i < c->cap; i++)
        free(c->e[i]);
    free(c->e);
}

/* the entry of an opcode text; NULL out of memory */
static op_entry *lookup_op(op_cache *c, ptx_span op)
{
    const char *p = c->m->text + op.off;
    uint32_t h = hash_span(p, op.len);
    uint32_t i = h & (c->cap - 1);
    for (;; i = (i + 1) & (c->cap - 1)) {
        op_entry *e = c->e[i];
        if (!e)
            break;
        if (e->hash == h && e->len == op.len && !memcmp(e->op, p, op.len))
            return e;
    }
    if (2 * (c->count + 1) > c->cap) {
        if (cache_grow(c))
            return NULL;
        for (i = h & (c->cap - 1); c->e[i]; i = (i + 1) & (c->cap - 1))
            ;
    }
    op_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->op = p;
    e->len = op.len;
    e->hash = h;
    fill_entry(e, c->roots, c->m, c->ptxas);
    c->e[i] = e;
    c->count++;
    return e;
}

/* A valid form the semantics library does not run yet: ptxas takes it, a
 * Kernel() would refuse it; said here as a warning, with why. Asked once per
 * distinct opcode text and form (the qualifiers decide it, not the operands). */
static void advise_not_modelled(const ptx_module *m, const ptx_item *it, op_entry *e, int k, ptx_diags *ds)
{
    const ptx_match *mt = &e->pass[k];
    const char *named = ptx_not_modelled(m, it);
    if (named) {
        ptx_diag_add(ds, 0, it->line, it->col, "'%.*s' is valid but not modelled yet (%s): Kernel() refuses it",
                     (int)it->opcode.len > 80 ? 80 : (int)it->opcode.len, m->text + it->opcode.off, named);
        return;
    }
    if (!ptx_forms[mt->form].sem[0])
        return;
    if (!e->asked[k]) {
        sem_ctl c;
        sem_impl im;
        const char *why = "";
        ptx_sem_ctl(mt, &c);
        e->not_modelled[k] = sem_resolve(&c, &im, &why) == 1 ? why : NULL;
        e->asked[k] = 1;
    }
    if (e->not_modelled[k])
        ptx_diag_add(ds, 0, it->line, it->col, "'%.*s' is valid but not modelled yet (%s): Kernel() refuses it",
                     (int)it->opcode.len > 80 ? 80 : (int)it->opcode.len, m->text + it->opcode.off,
                     e->not_modelled[k]);
}

/* quiet: no messages (the first try; an instruction that fails is checked again for them).
   Returns 1 when it stopped quietly at an error, 0 when done (diagnostics added as needed). */
static int check_against(const ptx_module *m, const ptx_item *it, op_entry *e, ptx_diags *ds, int quiet)
{
    ptx_match best;
    int have = 0, best_rules = 0, best_root = 0;
    for (int k = 0; k < e->npass; k++) {
        /* matched in place: the operands' fields are written for this instruction */
        ptx_match *pm = &e->pass[k];
#define mt (*pm)
        mt.operands_bad = mt.bad_line = mt.bad_col = 0;
        if (!match_operands(m, it, &mt, quiet)) {
            char why[240];
            /* the target and version first: ptxas names a missing feature before its details */
            if (mt.needs_err) {
                check_needs(m, it, &mt, ds);
                return 0;
            }
            if (ptx_rules(m, it, &mt, why, sizeof why)) {
                if (!best_rules || mt.nroot >= best_root) {
                    best = mt;
                    snprintf(best.msg, sizeof best.msg, "%s", why);
                    best.bad_line = 0;
                    best_rules = 1;
                    best_root = mt.nroot;
                    have = 1;
                }
                continue;
            }
            ptx_advice(m, it, &mt, ds);
            advise_not_modelled(m, it, e, k, ds);
            return 0;
        }
        if (!best_rules && (!have || mt.nroot > best_root || (mt.nroot == best_root && mt.score > best.score))) {
            best = mt;
            best_root = mt.nroot;
            have = 1;
        }
    }
#undef mt
    if (quiet)
        return 1;
    if (!have)
        best = e->fail;
    int line = best.bad_line ? best.bad_line : it->line, col = best.bad_line ? best.bad_col : it->col;
    ptx_diag_add(ds, 1, line, col, "%s", best.msg);
    return 0;
}

static void check_instruction(const ptx_module *m, const ptx_item *it, op_cache *cache, ptx_diags *ds)
{
    if (it->has_pred) {
        ptx_operand p = {0};
        p.kind = PTX_OP_REG;
        p.name = it->pred;
        int c = ptx_reg_class(m, &p);
        if (c != 1) {
            ptx_diag_add(ds, 1, it->line, it->col, "'@%.*s' is not a declared predicate register",
                         (int)it->pred.len, m->text + it->pred.off);
            return;
        }
    }
    op_entry *e = lookup_op(cache, it->opcode);
    if (!e) {
        ptx_diag_add(ds, 1, it->line, it->col, "out of memory");
        return;
    }
    if (!e->found) {
        ptx_comp comps[2] = {{m->text + it->opcode.off, 0}, {m->text + it->opcode.off, 0}};
        int n = ptx_split(m->text + it->opcode.off, it->opcode.len, comps, 2);
        if (comps[0].n == 3 && !memcmp(comps[0].p, "brx", 3)) {    /* ptxas: brx is brx.idx only */
            ptx_diag_add(ds, 1, it->line, it->col, "'%.*s' is not an instruction: brx.idx{.uni} index, tlist",
                         (int)it->opcode.len > 80 ? 80 : (int)it->opcode.len, m->text + it->opcode.off);
            return;
        }
        /* every instruction of the PTX ISA has a row: a name no row has is no instruction */
        ptx_diag_add(ds, 1, it->line, it->col, "unknown instruction '%.*s'", comps[0].n + (n > 1 ? 1 + comps[1].n : 0),
                     comps[0].p);
        return;
    }
    if (check_against(m, it, e, ds, 1))
        check_against(m, it, e, ds, 0);
}

static int is_directive(const ptx_module *m, const ptx_item *it, const char *name)
{
    return it->kind == PTX_ITEM_DIRECTIVE && it->ntok && ptx_span_eq(m, m->toks[it->tok0].s, name);
}

/* the module header as ptxas `ptxas` (130, 135) reads it: .version first, then .target, each
   diagnostic on the line ptxas names */
static void check_header(const ptx_module *m, int ptxas, ptx_diags *ds)
{
    const char *rel = ptxas == 130 ? "13.0" : "13.5";
    const signed char *last_minor = ptxas == 130 ? last_minor130 : last_minor135;
    int newest = 90 + last_minor[9];
    if (!m->nitems || !is_directive(m, &m->items[0], ".version")) {
        /* ptxas names the line where it stops reading: after a .target, the next statement's */
        int line = !m->nitems ? 1 : is_directive(m, &m->items[0], ".target") && m->nitems > 1 ? m->items[1].line
                                                                                          : m->items[0].line;
        ptx_diag_add(ds, 1, line, 1, "the module does not start with a .version directive");
        return;
    }
    int vline = m->items[0].line, major = m->version / 10, minor = m->version % 10;
    if (m->version > newest) {
        ptx_diag_add(ds, 1, vline, 1, "unsupported .version %d.%d; ptxas %s reads up to %d.%d", major, minor,
                     rel, newest / 10, newest % 10);
        return;
    }
    if (minor > last_minor[major]) {
        if (last_minor[major] < 0)
            ptx_diag_add(ds, 1, vline, 1, "unsupported .version %d.%d; there is no PTX ISA %d.x", major, minor, major);
        else
            ptx_diag_add(ds, 1, vline, 1, "unsupported .version %d.%d; PTX ISA %d.x goes up to %d.%d", major, minor,
                         major, major, last_minor[major]);
        return;
    }
    if (m->nitems < 2 || !is_directive(m, &m->items[1], ".target")) {
        ptx_diag_add(ds, 1, m->nitems < 2 ? vline : m->items[1].line, 1,
                     "the module has no .target directive after its .version");
        return;
    }
    int tline = m->items[1].line;
    /* .address_size: 64 (ptxas compiles no 32-bit code), from PTX 2.3 */
    for (uint32_t i = 2; i < m->nitems; i++) {
        const ptx_item *it = &m->items[i];
        if (!is_directive(m, it, ".address_size"))
            continue;
        const ptx_token *v = it->ntok > 1 ? &m->toks[it->tok0 + 1] : NULL;
        if (!v || !(ptx_span_eq(m, v->s, "64") || ptx_span_eq(m, v->s, "32")))
            ptx_diag_add(ds, 1, it->line, 1, ".address_size must be 32 or 64");
        else if (ptx_span_eq(m, v->s, "32"))
            ptx_diag_add(ds, 1, it->line, 1, ".address_size 32: ptxas %s compiles no 32-bit code", rel);
        if (m->version < 23)
            ptx_diag_add(ds, 1, it->line, 1, ".address_size needs PTX ISA version 2.3 or later; this module is "
                         ".version %d.%d", major, minor);
        break;
    }
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        if (strcmp(targets[i].target, m->target))
            continue;
        int need = ptxas == 130 ? targets[i].v130 : targets[i].v135;
        if (need < 0)
            ptx_diag_add(ds, 1, tline, 1, "ptxas %s generates no code for .target %s (no -arch takes it)", rel,
                         m->target);
        else if (need == 0)
            ptx_diag_add(ds, 1, tline, 1, "ptxas %s does not know .target %s", rel, m->target);
        else if (m->version < need)
            ptx_diag_add(ds, 1, tline, 1, ".target %s needs PTX ISA version %d.%d or later; this module is "
                         ".version %d.%d", m->target, need / 10, need % 10, major, minor);
        return;
    }
    ptx_diag_add(ds, 1, tline, 1, "unknown .target '%s'", m->target);
}

/* ---- variables: sizes, parameter space, initialisers ---- */

/* ptxas 13.0: "Entry function 'k' uses too much parameter space (0x7ffd bytes, 0x7ffc max)" on
   every target it has (sm_75 on) from PTX ISA 8.1, 0x1100 max before ("Feature 'Kernel parameter
   size larger than 4352 bytes' requires PTX ISA .version 8.1 or later"). CUDA 12.1 raised the
   kernel parameter limit from 4,096 to 32,764 bytes on Volta and later. */
uint64_t ptx_max_param_bytes(const ptx_module *m)
{
    return m->version >= 81 ? 32764 : 4352;
}

/* ptxas 13.0: "Entry function 'k' uses too much shared data (0x38c01 bytes, 0x38c00 max)": 227 KiB
   on sm_90a, sm_100a, sm_103a and sm_110a, 99 KiB on sm_120a and sm_121a, 48 KiB on every other
   target (sm_90 and sm_100f too): the static shared memory a CTA may declare (the CUDA
   programming guide's shared memory per block, 227 KB on compute capability 9.0 and 10.x; more
   than 48 KB elsewhere only as dynamic shared memory). */
uint64_t ptx_max_shared_bytes(const ptx_module *m)
{
    if (m->suffix == 'a' && m->sm >= 120)
        return 0x18c00;
    if (m->suffix == 'a' && m->sm >= 90)
        return 0x38c00;
    return 0xc000;
}

uint64_t ptx_var_bytes(const ptx_symbol *s)
{
    uint64_t n;
    return __builtin_mul_overflow(s->count, (uint64_t)(s->ebytes ? s->ebytes : 1), &n) ? UINT64_MAX : n;
}

/* offset `at` rounded up to `align`, plus `size`; UINT64_MAX past 64 bits */
static uint64_t place(uint64_t at, uint64_t align, uint64_t size)
{
    uint64_t r;
    if (!align)
        align = 1;
    if (at > UINT64_MAX - (align - 1))
        return UINT64_MAX;
    at = (at + align - 1) / align * align;
    return __builtin_add_overflow(at, size, &r) ? UINT64_MAX : r;
}

static int is_entry_header(const ptx_module *m, const ptx_item *it, ptx_span *name)
{
    for (uint32_t k = it->tok0; k + 1 < it->tok0 + it->ntok; k++)
        if (ptx_span_eq(m, m->toks[k].s, ".entry")) {
            *name = m->toks[k + 1].s;
            return 1;
        }
    return 0;
}

static void check_variables(const ptx_module *m, ptx_diags *ds)
{
    /* each .entry's parameter space; symbols are in the order of their items */
    uint32_t s = 0;
    for (uint32_t i = 0; i < m->nitems; i++) {
        const ptx_item *it = &m->items[i];
        ptx_span name;
        if (it->kind != PTX_ITEM_DIRECTIVE || !it->ntok || !is_entry_header(m, it, &name))
            continue;
        uint64_t size = 0;
        for (uint32_t j = i + 1; j < m->nitems && m->items[j].kind == PTX_ITEM_DIRECTIVE; j++) {
            if (!m->items[j].ntok || !ptx_span_eq(m, m->toks[m->items[j].tok0].s, ".param"))
                continue;
            while (s < m->nsyms && (m->syms[s].space != 'p' || m->syms[s].item < j))
                s++;
            for (; s < m->nsyms && m->syms[s].space == 'p' && m->syms[s].item == j; s++) {
                const ptx_symbol *p = &m->syms[s];
                size = place(size, p->align ? p->align : p->ebytes, ptx_var_bytes(p));
            }
        }
        uint64_t max = ptx_max_param_bytes(m);
        if (size > max)
            ptx_diag_add(ds, 1, it->line, it->col, "entry function '%.*s' uses too much parameter space: %llu bytes; "
                         "ptxas 13.0 allows %llu (PTX ISA %s)", (int)(name.len > 64 ? 64 : name.len),
                         m->text + name.off, (unsigned long long)size, (unsigned long long)max,
                         m->version >= 81 ? "8.1 and later; 4352 before" : "before 8.1; 32764 from 8.1 on");
    }
    uint64_t smax = ptx_max_shared_bytes(m);
    for (uint32_t k = 0; k < m->nsyms; k++) {
        const ptx_symbol *v = &m->syms[k];
        uint64_t bytes = ptx_var_bytes(v);
        if (v->space == 's' && v->cls == 0 && bytes > smax)
            ptx_diag_add(ds, 1, v->line, v->col, "the .shared variable '%.*s' takes %llu bytes; a CTA's static "
                         "shared data is at most %llu bytes on %s", (int)(v->name.len > 64 ? 64 : v->name.len),
                         m->text + v->name.off, (unsigned long long)bytes, (unsigned long long)smax, m->target);
    }
    for (uint32_t k = 0; k < m->ninits; k++) {
        const ptx_init *in = &m->inits[k];
        const ptx_symbol *v = &m->syms[in->sym];
        if (v->space != 'g' && v->space != 'c') {        /* ptxas: "No initial value is allowed" */
            ptx_diag_add(ds, 1, v->line, v->col, "no initial value is allowed for '%.*s' in this state space "
                         "(only .global and .const variables take one)", (int)(v->name.len > 64 ? 64 : v->name.len),
                         m->text + v->name.off);
            continue;
        }
        for (uint32_t j = in->val0; j < in->val0 + in->nval; j++) {
            const ptx_operand *o = &m->ivals[j].v;
            if (o->kind == PTX_OP_SYM && !ptx_lookup(m, m->text + o->name.off, o->name.len))
                ptx_diag_add(ds, 1, o->line, o->col, "initial value '%.*s' is not a declared variable or function",
                             (int)(o->name.len > 64 ? 64 : o->name.len), m->text + o->name.off);
        }
    }
}

void ptx_check(const ptx_module *m, ptx_diags *ds)
{
    ptx_check_as(m, PTX_PTXAS_NEWEST, ds);
}

void ptx_check_as(const ptx_module *m, int ptxas, ptx_diags *ds)
{
    ptxas = ptxas == 130 ? 130 : 135;
    check_header(m, ptxas, ds);
    if (ds->nerrors)
        return;              /* ptxas stops at a bad header too */
    root_comps *roots = malloc((size_t)ptx_nforms * sizeof *roots);
    if (!roots) {
        ptx_diag_add(ds, 1, 1, 1, "out of memory");
        return;
    }
    for (int fi = 0; fi < ptx_nforms; fi++)
        roots[fi].n = ptx_split(ptx_forms[fi].root, strlen(ptx_forms[fi].root), roots[fi].c, 8);
    op_cache cache = {NULL, 0, 0, roots, m, ptxas};
    if (cache_grow(&cache)) {
        free(roots);
        ptx_diag_add(ds, 1, 1, 1, "out of memory");
        return;
    }
    check_variables(m, ds);
    ptx_check_funcs(m, ds);
    for (uint32_t i = 0; i < m->nitems; i++)
        if (m->items[i].kind == PTX_ITEM_INSTR && m->items[i].opcode.len)
            check_instruction(m, &m->items[i], &cache, ds);
    cache_free(&cache);
    free(roots);
}

int ptx_match_form(const ptx_module *m, const ptx_item *it, ptx_match *out)
{
    ptx_comp comps[PTX_MAX_COMPS];
    const char *op = m->text + it->opcode.off;
    int ncomps = ptx_split(op, it->opcode.len, comps, PTX_MAX_COMPS);
    for (int fi = 0; fi < ptx_nforms; fi++) {
        const ptx_form *f = &ptx_forms[fi];
        if (strncmp(f->root, comps[0].p, (size_t)comps[0].n) ||
            (f->root[comps[0].n] && f->root[comps[0].n] != '.'))
            continue;                  /* another instruction: no need to split its root */
        ptx_comp rc[8];
        int nr = ptx_split(f->root, strlen(f->root), rc, 8), ok = nr <= ncomps;
        for (int k = 0; k < nr && ok; k++)
            ok = comps[k].n == rc[k].n && !memcmp(comps[k].p, rc[k].p, (size_t)rc[k].n);
        if (!ok || match_qualifiers(comps, ncomps, nr, fi, out))
            continue;
        ptx_rules_prepare(out);
        if (!match_operands(m, it, out, 1))
            return 0;
    }
    return 1;
}
