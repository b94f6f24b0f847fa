/* rules.c - what ptxas 13.0 and 13.5 check beyond the syntax blocks, learnt from their verdicts
   (the assembler probe and local runs of ptxas; each rule names the case that shows it, and where
   the two differ, which does what: ptx_match.ptxas). */
#include "ptx/text/check.h"
#include "sem/mma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int in(const char *v, const char *const *set)
{
    for (; *set; set++)
        if (v && !strcmp(v, *set))
            return 1;
    return 0;
}

/* mma: the Syntax block writes .dtype and .ctype (and m16n8k8's .atype / .btype)
   as free choices; ptxas 13.0 takes a mixed pair only as m8n8k4's .f32 d with an
   .f16 c (".dtype must be '.f16' when .ctype is '.f16' for 'mma' instruction with
   shape '.m16n8k16'", "Incorrect instruction type specified for mma with shape
   '.m16n8k8'", "Unexpected instruction types specified for 'mma'" for fp8 with
   f16 d and f32 c), and the fixed layouts only as .row.col ("Illegal alayout
   '.col'") */
static int mma_types(const ptx_match *mt, char *why, size_t cap)
{
    const ptx_form *f = &ptx_forms[mt->form];
    const char *d = ptx_slot_value(mt, "dtype"), *c = ptx_slot_value(mt, "ctype");
    const char *a = ptx_slot_value(mt, "atype"), *b = ptx_slot_value(mt, "btype");
    int m8n8k4 = strstr(f->syntax, ".m8n8k4.") != NULL;
    if (d && c && strcmp(d, c) && !(m8n8k4 && !strcmp(d, ".f32"))) {
        snprintf(why, cap, "mma: .dtype %s with .ctype %s: ptxas takes a mixed pair only as m8n8k4's .f32 "
                 "with .f16", d, c);
        return 1;
    }
    if (a && b && strcmp(a, b) && (!strcmp(a, ".bf16") || !strcmp(a, ".tf32"))) {
        snprintf(why, cap, "mma: .atype %s and .btype %s must be the same type", a, b);
        return 1;
    }
    int row = -1, col = -1;
    for (int s = 0; s < f->nslots; s++) {
        if (!strcmp(f->slots[s].name, "row"))
            row = mt->slot_at[s];
        if (!strcmp(f->slots[s].name, "col"))
            col = mt->slot_at[s];
    }
    if (row >= 0 && col >= 0 && row > col) {
        snprintf(why, cap, "mma: the layouts of this shape are .row.col, in that order%s", "");
        return 1;
    }
    return 0;
}

/* A vector operand of n registers of `bits` bits (ptxas: "Arguments mismatch"); a source's
   elements may be immediates. */
static int reg_vector(const ptx_module *m, const ptx_operand *o, int n, int bits, int dst, const char *what,
                      char *why, size_t cap)
{
    int ok = o && o->kind == PTX_OP_VEC && o->nelem == n;
    for (int i = 0; ok && i < n; i++) {
        const ptx_operand *e = &m->elems[o->elem + i];
        ok = (e->kind == PTX_OP_REG && ptx_reg_class(m, e) == bits) || (!dst && e->kind == PTX_OP_IMM);
    }
    if (!ok)
        snprintf(why, cap, "%s is a vector of %d %d-bit registers { } (ptxas: Arguments mismatch)", what, n, bits);
    return !ok;
}

/* mma.sync's four fragments: as many registers a lane as the shape and types give
   (sem_mma_reg_counts, the PTX ISA's "Matrix fragments" sections; what the interpreter reads);
   mma.sp's A holds half the dense shape's (the ISA's "Matrix fragments for sparse mma"), and its
   types are read in the template's order, d a b c (ptxas: "Incorrect instruction type specified
   for mma with shape '.m16n8k128'" for .s4.s32.u4.s32) */
/* A type of mma's fragments; kind::f8f6f4's 6- and 4-bit types sit in 8-bit containers, so their
   fragments are those of .e4m3 (ptxas: "Argument vector size mismatch"). */
static int frag_type(const char *q)
{
    return !strcmp(q, "e2m1") || !strcmp(q, "e2m3") || !strcmp(q, "e3m2") ? SEM_T_E4M3 : sem_mma_type_of(q);
}

static int mma_fragments(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_form *f = &ptx_forms[mt->form];
    int sparse = !strncmp(f->root, "mma.sp", 6);
    char buf[160];
    size_t n = it->opcode.len < sizeof buf - 1 ? it->opcode.len : sizeof buf - 1;
    memcpy(buf, m->text + it->opcode.off, n);
    buf[n] = 0;
    int types[4], nt = 0;
    unsigned sm = 0, sn = 0, sk = 0;
    for (char *q = buf, *dot; q; q = dot) {            /* each qualifier of the opcode */
        if ((dot = strchr(q, '.')))
            *dot++ = 0;
        int t = frag_type(q);
        if (t && nt < 4)
            types[nt++] = t;
        else if (q[0] == 'm')
            sscanf(q, "m%un%uk%u", &sm, &sn, &sk);
    }
    if (nt != 4 || !sm || it->nops != (sparse ? 6 : 4))
        return 0;                               /* (the syntax says what is wrong) */
    /* mma.sp: e is a register, f a constant (ptxas 13.0: "Arguments mismatch for instruction 'mma'") */
    if (sparse && (m->ops[it->op0 + 4].kind != PTX_OP_REG || m->ops[it->op0 + 5].kind != PTX_OP_IMM)) {
        snprintf(why, cap, "%s: the metadata e is a register and the sparsity selector f an integer constant",
                 f->root);
        return 1;
    }
    for (int s = 0, i = 0; sparse && s < f->nslots; s++) {
        int t = mt->slot_at[s] >= 0 ? frag_type(f->slots[s].values[mt->slot_val[s]] + 1) : 0;
        if (t && (i >= 4 || types[i++] != t)) {
            snprintf(why, cap, "%s: the types are written d, a, b, c as in %s", f->root, f->syntax);
            return 1;
        }
    }
    int counts[4];
    sem_mma_reg_counts((int)sm, (int)sn, (int)sk, types[1], types[2], types[3], types[0], counts);
    if (sparse)
        counts[1] /= 2;
    static const char *const what[4] = {"mma's d", "mma's a", "mma's b", "mma's c"};
    const int tys[4] = {types[0], types[1], types[2], types[3]};
    for (int i = 0; i < 4; i++)
        if (reg_vector(m, &m->ops[it->op0 + i], counts[i], tys[i] == SEM_T_F64 ? 64 : 32, i == 0, what[i], why,
                       cap))
            return 1;
    return 0;
}

/* wgmma.mma_async (PTX ISA 9.7.15.5.2, "Register fragments"; ptxas 13.0's messages): d holds
   N/4 registers of 32 bits for an f16 accumulator, N/2 otherwise; A from registers is 4 of 32
   bits; imm-scale-a/b are -1 or 1 and imm-trans-a/b 0 or 1. */
static int wgmma_regs(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_form *f = &ptx_forms[mt->form];
    const char *shape = ptx_slot_value(mt, "shape"), *dtype = ptx_slot_value(mt, "dtype");
    unsigned n = 0;
    if (!shape || sscanf(shape, ".m64n%u", &n) != 1)
        return 0;
    int f16 = dtype && !strcmp(dtype, ".f16");
    const char *at = ptx_slot_value(mt, "atype"), *bt = ptx_slot_value(mt, "btype");
    if (at && bt && at[1] != 'e' && strcmp(at, bt) && m->version < 84) {     /* .s8 with .u8 */
        snprintf(why, cap, "wgmma with mixed integer types (%s with %s) requires PTX ISA 8.4; this module is "
                 ".version %d.%d", at, bt, m->version / 10, m->version % 10);
        return 1;
    }
    /* the .b1 form reads its types and operation in order: .s32 before the .b1s ("Unexpected
       instruction types specified for 'wgmma.mma_async'"), .and before .popc ("Illegal reduction
       operation") */
    int s32 = -1, b1 = 99, op = -1, popc = 99;
    for (int s = 0; s < f->nslots; s++) {
        int at_ = mt->slot_at[s];
        const char *sn = f->slots[s].name;
        if (!strcmp(sn, "s32"))
            s32 = at_;
        else if (!strcmp(sn, "b1") && at_ >= 0 && at_ < b1)
            b1 = at_;
        else if (!strcmp(sn, "op"))
            op = at_;
        else if (!strcmp(sn, "popc"))
            popc = at_;
    }
    if (b1 < 99 && (s32 > b1 || op > popc)) {
        snprintf(why, cap, "wgmma.mma_async with .b1: the qualifiers are in the order .s32.b1.b1.and.popc");
        return 1;
    }
    for (int k = 0; k < f->noperands; k++) {
        if (mt->op_of[k] < 0)
            continue;
        const ptx_operand *o = &m->ops[it->op0 + mt->op_of[k]];
        const char *name = f->operands[k].name;
        const int sparse = !strcmp(f->root, "wgmma.mma_async.sp");
        if ((!strcmp(name, "vd") || (sparse && !strcmp(name, "d"))) &&
            reg_vector(m, o, (int)(f16 ? n / 4 : n / 2), 32, 1, "wgmma's d", why, cap))
            return 1;
        /* the sparse selector: 0 or 1 for the 16- and 32-bit types, 0 for the 8-bit ones (ptxas:
           "Argument 4 of instruction 'Sparse wgmma.mma_async with FP8 types': unexpected value '1',
           expected to be 0") */
        if (sparse && !strcmp(name, "sp-sel") && o->kind == PTX_OP_IMM) {
            int narrow = at && (at[1] == 'e' || at[2] == '8');
            if (o->imm < 0 || o->imm > (narrow ? 0 : 1)) {
                snprintf(why, cap, "wgmma.mma_async.sp's sp-sel is %lld; it must be %s", (long long)o->imm,
                         narrow ? "0 with 8-bit types" : "0 or 1");
                return 1;
            }
        }
        if (!strcmp(name, "va") && reg_vector(m, o, 4, 32, 0, "wgmma's a", why, cap))
            return 1;
        /* .sp: sp-meta a register, sp-sel a constant, 0 or 1 for 16-bit and tf32 A, 0 for 8-bit
           (ptxas 13.0: "Arguments mismatch", "unexpected value '2', expected to be 0 or 1") */
        if (!strcmp(name, "sp-meta") && o->kind != PTX_OP_REG) {
            snprintf(why, cap, "wgmma.mma_async.sp's sp-meta is a 32-bit register");
            return 1;
        }
        if (!strcmp(name, "sp-sel")) {
            long long top = at && (!strcmp(at, ".e4m3") || !strcmp(at, ".e5m2") || !strcmp(at, ".s8") ||
                                   !strcmp(at, ".u8")) ? 0 : 1;
            if (o->kind != PTX_OP_IMM || o->imm < 0 || o->imm > top) {
                snprintf(why, cap, "wgmma.mma_async.sp's sp-sel is an integer constant, %s", top ? "0 or 1" : "0");
                return 1;
            }
        }
        int scale = !strncmp(name, "imm-scale", 9), trans = !strncmp(name, "imm-trans", 9);
        if ((scale || trans) && o->kind == PTX_OP_IMM &&
            (scale ? o->imm != 1 && o->imm != -1 : o->imm != 0 && o->imm != 1)) {
            snprintf(why, cap, "wgmma's %s is %lld; it must be %s", name, (long long)o->imm,
                     scale ? "-1 or 1" : "0 or 1");
            return 1;
        }
    }
    return 0;
}

/* ldmatrix / stmatrix .m8n8: .x1/.x2/.x4 matrices, one 32-bit register a lane each */
static int matrix_regs(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const char *shape = ptx_slot_value(mt, "shape"), *num = ptx_slot_value(mt, "num");
    if (!shape || strcmp(shape, ".m8n8") || !num || it->nops != 2)
        return 0;
    int st = !strcmp(ptx_forms[mt->form].root, "stmatrix");
    return reg_vector(m, &m->ops[it->op0 + (st ? 1 : 0)], num[2] - '0', 32, !st,
                      st ? "stmatrix's r" : "ldmatrix's r", why, cap);
}

/* cp.reduce.async.bulk: which (redOp, type) pairs each destination takes (probe groups
   bulk_reduce_global, bulk_reduce_cluster; golden README observation 18) */
/* The size of cp.async.bulk, cp.reduce.async.bulk and cp.async.bulk.prefetch as an immediate:
   in [0, 1048560] and a multiple of 16 ("value '-16' out of range, expected to be in range
   [0..1048560]", "unexpected value '20', expected to be multiple of 16"); ptxas 13.0 reads it
   as a 32-bit integer (2^32 is 0), ptxas 13.5 as it is written. A register is checked at run
   time. */
static int bulk_size(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_operand *s = ptx_operand_named(m, it, mt, "size");
    if (!s || s->kind != PTX_OP_IMM)
        return 0;
    int64_t v = mt->ptxas >= 135 ? s->imm : (int32_t)(uint32_t)s->imm;
    if (v < 0 || v > 1048560 || v % 16) {
        if (v == s->imm)
            snprintf(why, cap, "%s: size %lld must be a multiple of 16 in [0, 1048560]", ptx_forms[mt->form].root,
                     (long long)v);
        else
            snprintf(why, cap, "%s: size %lld must be a multiple of 16 in [0, 1048560] (ptxas 13.0 reads it as "
                     "a 32-bit integer: %lld)", ptx_forms[mt->form].root, (long long)s->imm, (long long)v);
        return 1;
    }
    return 0;
}

static int reduce_bulk(const ptx_match *mt, char *why, size_t cap)
{
    const char *dst = ptx_slot_value(mt, "dst");
    const char *op = ptx_slot_value(mt, "redOp");
    const char *type = ptx_slot_value(mt, "type");
    if (!op)
        op = ".add";                                   /* the .add.noftz form */
    int noftz = ptx_has_qualifier(mt, ".noftz");
    static const char *const add_g[] = {".u32", ".s32", ".u64", ".f32", ".f64", ".f16", ".bf16", 0};
    static const char *const minmax_g[] = {".u32", ".s32", ".u64", ".s64", ".f16", ".bf16", 0};
    static const char *const incdec[] = {".u32", 0};
    static const char *const bits[] = {".b32", ".b64", 0};
    static const char *const add_c[] = {".u32", ".s32", ".u64", 0};
    static const char *const minmax_c[] = {".u32", ".s32", 0};
    static const char *const bits_c[] = {".b32", 0};
    static const char *const half[] = {".f16", ".bf16", 0};
    int cluster = dst && !strcmp(dst, ".shared::cluster");
    const char *const *ok;
    if (!strcmp(op, ".add")) ok = cluster ? add_c : add_g;
    else if (!strcmp(op, ".min") || !strcmp(op, ".max")) ok = cluster ? minmax_c : minmax_g;
    else if (!strcmp(op, ".inc") || !strcmp(op, ".dec")) ok = incdec;
    else ok = cluster ? bits_c : bits;
    if (!in(type, ok)) {
        snprintf(why, cap, "cp.reduce.async.bulk to %s has no %s%s (incorrect type for the operation)",
                 dst ? dst : "?", op, type ? type : "");
        return 1;
    }
    if (!strcmp(op, ".add") && in(type, half) && !noftz) {
        snprintf(why, cap, "cp.reduce.async.bulk .add%s needs .noftz", type);
        return 1;
    }
    return 0;
}

/* cp.async: cp-size is 4, 8 or 16, .cg copies 16 only; an immediate src-size is in [0, cp-size]
   (probe group cp_async; ptxas: "unexpected value '12', expected to be 4 or 8 or 16") */
static int cp_async(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_operand *sz = ptx_operand_named(m, it, mt, "cp-size");
    if (!sz)
        sz = ptx_operand_named(m, it, mt, "16");
    if (!sz || sz->kind != PTX_OP_IMM) {
        snprintf(why, cap, "cp.async: cp-size must be the immediate 4, 8 or 16");
        return 1;
    }
    int cg = ptx_has_qualifier(mt, ".cg");
    if (cg ? sz->imm != 16 : (sz->imm != 4 && sz->imm != 8 && sz->imm != 16)) {
        snprintf(why, cap, "cp.async%s: cp-size %lld is not %s", cg ? ".cg" : ".ca", (long long)sz->imm,
                 cg ? "16 (.cg copies 16 bytes)" : "4, 8 or 16");
        return 1;
    }
    const ptx_operand *src = ptx_operand_named(m, it, mt, "src-size");
    if (src && src->kind == PTX_OP_IMM && (src->imm < 0 || src->imm > sz->imm)) {
        snprintf(why, cap, "cp.async: src-size %lld is outside [0, %lld]", (long long)src->imm,
                 (long long)sz->imm);
        return 1;
    }
    return 0;
}

static int dims_of(const ptx_match *mt)
{
    const char *d = ptx_slot_value(mt, "dim");
    return d ? d[1] - '0' : 0;
}

/* the tensor copies: coordinates per .dim, the load mode's dimensions (probe groups
   tensor_load_im2col, tensor_store, tensor_reduce: im2col forms need .3d to .5d) */
static int tensor(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    int dim = dims_of(mt);
    const char *mode = ptx_slot_value(mt, "load_mode");
    if (!mode)
        mode = ".tile";
    const ptx_operand *t = ptx_operand_named(m, it, mt, "[tensorMap, tensorCoords]");
    int is_im2col = !strncmp(mode, ".im2col", 7);
    int gather = !strcmp(mode, ".tile::gather4") || !strcmp(mode, ".tile::scatter4");
    if (is_im2col && dim < 3) {
        snprintf(why, cap, "%s needs .3d, .4d or .5d, not .%dd", mode, dim);
        return 1;
    }
    if (gather && dim != 2) {
        snprintf(why, cap, "%s needs .2d, not .%dd", mode, dim);
        return 1;
    }
    /* "Qualifiers .tile::gather4 and .im2col::w require: sm_100a when destination state space is
       .shared::cluster (sm_100f from PTX ISA 8.8); sm_100 or higher when it is .shared::cta";
       ptxas 13.0 and 13.5 also take sm_110a and the sm_110f family there, as the ISA notes of
       .tile::scatter4 and .im2col::w::128 list them */
    const char *dst = ptx_slot_value(mt, "dst");
    if (dst && (!strcmp(mode, ".tile::gather4") || !strcmp(mode, ".im2col::w"))) {
        if (!strcmp(dst, ".shared::cluster") && !(ptx_target_in(m, "sm_100a sm_110a") ||
                                                 (m->version >= 88 && ptx_target_in(m, "sm_100f+ sm_110f+")))) {
            snprintf(why, cap, "%s with destination .shared::cluster needs sm_100a or sm_110a (the sm_100f "
                     "and sm_110f families from PTX ISA 8.8); this module targets %s", mode, m->target);
            return 1;
        }
        if (!strcmp(dst, ".shared::cta") && m->sm < 100) {
            snprintf(why, cap, "%s with destination .shared::cta needs sm_100 or later; this module targets %s",
                     mode, m->target);
            return 1;
        }
    }
    int want = gather ? 5 : dim;
    if (t && t->nelem != want) {
        snprintf(why, cap, "the tensor coordinates of a .%dd %s copy are %d, not %d", dim, mode + 1, want,
                 t->nelem);
        return 1;
    }
    const ptx_operand *info = ptx_operand_named(m, it, mt, "im2colInfo");
    int want_info = !strcmp(mode, ".im2col") ? dim - 2 : (!strncmp(mode, ".im2col::w", 10) ? 2 : 0);
    if (!info && want_info && strcmp(mode, ".im2col_no_offs")) {
        snprintf(why, cap, "%s needs the im2col offsets {..} (%d of them)", mode, want_info);
        return 1;
    }
    if (info && (!want_info || info->nelem != want_info)) {
        if (!want_info)
            snprintf(why, cap, "%s takes no im2col offsets", mode);
        else
            snprintf(why, cap, "a .%dd %s copy takes %d im2col offsets, not %d", dim, mode, want_info,
                     info->nelem);
        return 1;
    }
    return 0;
}

/* the state space an address operand names: the form's dst/src/ss slot; NULL generic */
static const char *operand_space(const ptx_match *mt, const char *name, int *has_space_slot)
{
    const ptx_form *f = &ptx_forms[mt->form];
    *has_space_slot = 0;
    if (strstr(name, "mbar"))
        return ".shared";
    if (strstr(name, "dst") && ptx_slot_value(mt, "dst"))
        return ptx_slot_value(mt, "dst");
    if (strstr(name, "src") && ptx_slot_value(mt, "src"))
        return ptx_slot_value(mt, "src");
    if (strstr(name, "src") && ptx_slot_value(mt, "global"))       /* cp.async [dst], [src] */
        return ".global";
    if (strstr(name, "dst") && ptx_slot_value(mt, "shared"))
        return ".shared";
    static const char *const slots[] = {"ss", "space", "shared", "shared::cluster", "shared::cta",
                                        "global", "src", 0};
    for (int s = 0; s < f->nslots; s++)
        for (int k = 0; slots[k]; k++)
            if (!strcmp(f->slots[s].name, slots[k])) {
                const char *v = ptx_slot_value(mt, slots[k]);
                if (v && (!strncmp(v, ".shared", 7) || !strcmp(v, ".global") || !strcmp(v, ".param") ||
                          !strcmp(v, ".const") || !strcmp(v, ".local")))
                    return v;
                *has_space_slot = 1;
            }
    return NULL;
}

/* addresses: a variable of another state space is "State space mismatch"; a generic address
   is 64 bits wide under .address_size 64 (ptxas: "uses 32-bit address ... conflicting with
   .address_size 64") */
static int addresses(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_form *f = &ptx_forms[mt->form];
    for (int k = 0; k < f->noperands; k++) {
        if (mt->op_of[k] < 0 || f->operands[k].kind != PTX_K_A)
            continue;
        const ptx_operand *o = &m->ops[it->op0 + mt->op_of[k]];
        if (!o->has_base)
            continue;
        int has_slot = mt->space_slot[k];
        const char *sp = mt->space_of[k];
        int is_reg = m->text[o->name.off] == '%';
        if (is_reg) {
            ptx_operand r = *o;
            r.kind = PTX_OP_REG;
            if (!sp && has_slot && !strncmp(f->root, "mbarrier.", 9)) {
                if (ptx_reg_class(m, &r) != 64) {
                    snprintf(why, cap, "operand %s of %s is a generic address (no state space "
                             "qualifier): it needs a 64-bit register under .address_size 64",
                             f->operands[k].name, f->root);
                    return 1;
                }
            }
            continue;
        }
        const ptx_symbol *sym = ptx_lookup(m, m->text + o->name.off, o->name.len);
        if (!sym || !sp)
            continue;
        char want = !strncmp(sp, ".shared", 7) ? 's' : sp[1];
        if (want == 'p')
            want = 'p';
        if (sym->space && sym->space != want) {
            snprintf(why, cap, "state space mismatch: %.*s is not in %s, the space of operand %s of %s",
                     (int)o->name.len, m->text + o->name.off, sp, f->operands[k].name, f->root);
            return 1;
        }
    }
    return 0;
}

/* mbarrier.{test,try}_wait.parity: the immediate phaseParity is 0 or 1 */
static int parity(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_operand *p = ptx_operand_named(m, it, mt, "phaseParity");
    if (p && p->kind == PTX_OP_IMM && p->imm != 0 && p->imm != 1) {
        snprintf(why, cap, "%s: phaseParity %lld is not 0 or 1", ptx_forms[mt->form].root,
                 (long long)p->imm);
        return 1;
    }
    return 0;
}

static int type_bits(const char *t)
{
    if (!t) return 0;
    if (strstr(t, "8")) return strstr(t, "128") ? 128 : 8;
    if (strstr(t, "16")) return 16;
    if (strstr(t, "32")) return 32;
    if (strstr(t, "64")) return 64;
    return 0;
}

/* a value operand's register width is the .type's (ptxas "Arguments mismatch") */
static int value_width_f(const ptx_module *m, const ptx_operand *o, int bits, int nvec, int float_type,
                         const char *what, char *why, size_t cap)
{
    if (nvec > 1 && (o->kind == PTX_OP_FIMM || (o->kind == PTX_OP_IMM && !float_type)))
        return 0;                    /* ptxas 13.0 takes a scalar for st.async.v2/.v4 */
    if (nvec > 1 && o->kind == PTX_OP_REG)
        nvec = 1;                    /* ... a register of the element's width */
    if (nvec > 1) {
        if (o->kind != PTX_OP_VEC || o->nelem != nvec) {
            snprintf(why, cap, "%s: the value is a vector of %d elements", what, nvec);
            return 1;
        }
        for (int i = 0; i < o->nelem; i++)
            if (value_width_f(m, &m->elems[o->elem + i], bits, 1, float_type, what, why, cap))
                return 1;
        return 0;
    }
    if (o->kind == PTX_OP_IMM && float_type) {
        snprintf(why, cap, "%s: a floating-point value takes a 0f/0d immediate, not an integer", what);
        return 1;
    }
    if (o->kind == PTX_OP_IMM || o->kind == PTX_OP_FIMM)
        return 0;
    if (o->kind != PTX_OP_REG) {
        snprintf(why, cap, "%s: the value is a register or an immediate", what);
        return 1;
    }
    int c = ptx_reg_class(m, o);
    int want = bits < 16 ? 16 : bits;        /* .b8 values live in 16-bit registers */
    if (c != want && !(bits == 8 && c == 32)) {
        snprintf(why, cap, "%s: the value register is %d bits wide, the type %d", what, c, bits);
        return 1;
    }
    return 0;
}

static int value_width(const ptx_module *m, const ptx_operand *o, int bits, int nvec, const char *what,
                       char *why, size_t cap)
{
    return value_width_f(m, o, bits, nvec, 0, what, why, cap);
}

/* st.async without [mbar] and without .release: ptxas 13.0 assembles it (sm_90 on, PTX 8.1 on)
   although the spec's only two-operand form is the .release one, and emits no store for it
   (the cubin's code is that of the kernel without the line). Which qualifiers go together,
   from ptxas's verdicts on every combination of .weak, .cluster/.gpu/.sys, the state spaces and
   the completion mechanism, on sm_90a and sm_100a. */
static int st_async_two(const char *scope, const char *ss, const char *cm, char *why, size_t cap)
{
    int cluster = scope && !strcmp(scope, ".cluster"), sys = scope && !cluster;
    if (cluster && !cm) {
        snprintf(why, cap, "st.async.cluster without [mbar] needs .mbarrier::complete_tx::bytes");
        return 1;
    }
    if (cluster && ss && strcmp(ss, ".shared::cluster")) {
        snprintf(why, cap, "st.async.cluster without [mbar] takes no %s (only .shared::cluster)", ss);
        return 1;
    }
    if (sys && cm) {
        snprintf(why, cap, "st.async%s takes no completion mechanism", scope);
        return 1;
    }
    if (sys && ss && strcmp(ss, ".global")) {
        snprintf(why, cap, "st.async%s takes no %s (only .global)", scope, ss);
        return 1;
    }
    if (ss && !strcmp(ss, ".shared::cluster") && !cm) {
        snprintf(why, cap, "st.async.shared::cluster needs .mbarrier::complete_tx::bytes");
        return 1;
    }
    if (ss && !strcmp(ss, ".global") && cm) {
        snprintf(why, cap, "st.async.global takes no completion mechanism");
        return 1;
    }
    return 0;
}

static int st_async(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    /* the weak (mbarrier) form names its completion mechanism; .weak takes no scope */
    const char *sem = ptx_slot_value(mt, "sem");
    const char *scope = ptx_slot_value(mt, "scope");
    int weak = !sem || !strcmp(sem, ".weak");
    if (weak && !ptx_slot_value(mt, "completion_mechanism") && ptx_operand_named(m, it, mt, "[mbar]") &&
        !ptx_has_qualifier(mt, ".shared::cta")) {           /* ptxas takes .shared::cta without it */
        snprintf(why, cap, "st.async to shared::cluster needs .mbarrier::complete_tx::bytes");
        return 1;
    }
    if (sem && !strcmp(sem, ".weak") && scope) {
        snprintf(why, cap, "st.async: .weak cannot be combined with %s", scope);
        return 1;
    }
    /* the spec: "If .mmio is specified, .scope must be .sys"; ptxas 13.0 also takes .gpu */
    if (ptx_has_qualifier(mt, ".mmio") && scope && strcmp(scope, ".sys") &&
        (mt->ptxas >= 135 || strcmp(scope, ".gpu"))) {
        snprintf(why, cap, "st.async.mmio takes the .sys scope only, not %s", scope);
        return 1;
    }
    if (weak && !ptx_operand_named(m, it, mt, "[mbar]") &&
        st_async_two(scope, ptx_slot_value(mt, "ss"), ptx_slot_value(mt, "completion_mechanism"), why, cap))
        return 1;
    const char *vec = ptx_slot_value(mt, "vec");
    const ptx_operand *b = ptx_operand_named(m, it, mt, "b");
    if (!b)
        return 0;
    const char *type = ptx_slot_value(mt, "type");
    int is_float = type && type[1] == 'f';
    if (vec && (vec[2] - '0') * type_bits(type) > 128) {
        snprintf(why, cap, "st.async%s%s: the vector is %d bits, over the 128-bit limit", vec, type,
                 (vec[2] - '0') * type_bits(type));
        return 1;
    }
    if (b->kind == PTX_OP_REG && type_bits(type) == 8) {
        /* ptxas: "Arguments mismatch" for a 16-, 32- or 64-bit register; an immediate is taken */
        snprintf(why, cap, "st.async%s: ptxas takes an 8-bit value as an immediate only", type);
        return 1;
    }
    return value_width_f(m, b, type_bits(type), vec ? vec[2] - '0' : 1, is_float, "st.async", why, cap);
}

/* red.async: b is a register of the type's width or an integer immediate (ptxas: "Arguments
   mismatch" for a wider or narrower register and for a floating-point literal) */
static int red_async(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_operand *b = ptx_operand_named(m, it, mt, "b");
    if (!b)
        return 0;
    if (b->kind == PTX_OP_FIMM) {
        snprintf(why, cap, "red.async: b is an integer register or immediate, not a floating-point literal");
        return 1;
    }
    return value_width(m, b, type_bits(ptx_slot_value(mt, "type")), 1, "red.async", why, cap);
}

/* tensormap.replace: .global_address and .global_stride are .b64 fields, the rest .b32
   (ptxas: "Illegal modifier '.box_dim' for instruction 'tensormap.replace' with type '.b64'") */
static int tensormap_replace(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why,
                             size_t cap)
{
    const char *field = ptx_slot_value(mt, "field1");
    if (!field) field = ptx_slot_value(mt, "field2");
    if (!field) field = ptx_slot_value(mt, "field3");
    const char *type = ptx_slot_value(mt, "type");
    int want = field && (!strcmp(field, ".global_address") || !strcmp(field, ".global_stride")) ? 64 : 32;
    if (type_bits(type) != want) {
        snprintf(why, cap, "tensormap.replace%s is a .b%d field, not %s", field, want, type);
        return 1;
    }
    const ptx_operand *v = ptx_operand_named(m, it, mt, "new_val");
    if (v && value_width(m, v, want, 1, "tensormap.replace", why, cap))
        return 1;
    const ptx_operand *ord = ptx_operand_named(m, it, mt, "ord");
    if (ord && (ord->kind != PTX_OP_IMM || ord->imm < 0 || ord->imm > 4)) {
        snprintf(why, cap, "tensormap.replace%s: ord is an immediate in [0, 4]", field);
        return 1;
    }
    if (ptx_slot_value(mt, "field3")) {
        /* the enumerated fields take immediates in their enum's range */
        static const struct { const char *f; int max; } r[] = {
            {".elemtype", 15}, {".interleave_layout", 2}, {".swizzle_mode", 4},
            {".swizzle_atomicity", 3}, {".fill_mode", 1}};
        if (!v || v->kind != PTX_OP_IMM) {
            snprintf(why, cap, "tensormap.replace%s: new_val is an integer constant", field);
            return 1;
        }
        for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
            if (strcmp(field, r[i].f))
                continue;
            int max = r[i].max;
            if (!strcmp(field, ".swizzle_mode") && !ptx_target_in(m, "sm_103a"))
                max = 3;                   /* 96B swizzle (4): sm_103a only */
            if (!strcmp(field, ".elemtype") && m->sm > 0 && m->sm < 100)
                max = 12;                  /* ptxas 13.0 on sm_90a: "expected to be in range [0..12]" */
            if (v->imm < 0 || v->imm > max) {
                snprintf(why, cap, "tensormap.replace%s: new_val %lld is outside [0, %d]", field,
                         (long long)v->imm, max);
                return 1;
            }
            if (!strcmp(field, ".elemtype") && v->imm >= 13 && m->version < 87) {
                snprintf(why, cap, "tensormap.replace.elemtype %lld needs PTX ISA version 8.7 or later; "
                         "this module is .version %d.%d", (long long)v->imm, m->version / 10, m->version % 10);
                return 1;
            }
        }
    }
    return 0;
}

/* Does the address operand's base name a variable (not a register)? */
static int is_variable(const ptx_module *m, const ptx_operand *a)
{
    return ptx_reg_class(m, a) == -2;
}

/* st.bulk: the ISA notes give a 32-bit size from PTX 9.0; ptxas 13.5 takes it so ("Feature
   'st.bulk with 32-bit size argument' requires PTX ISA 9.0"), ptxas 13.0 rejects a 32-bit size
   register at every version ("Arguments mismatch for instruction 'mov'"); neither takes a variable
   as the address ("Argument 1 of instruction 'add': must be register") */
static int st_bulk(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_operand *s = ptx_operand_named(m, it, mt, "size");
    int cls = s && s->kind == PTX_OP_REG ? ptx_reg_class(m, s) : 64;
    if (cls == 32 && mt->ptxas >= 135 && m->version < 90) {
        snprintf(why, cap, "st.bulk with a 32-bit size needs PTX ISA version 9.0 or later; this module is "
                 ".version %d.%d", m->version / 10, m->version % 10);
        return 1;
    }
    if (cls != 64 && !(cls == 32 && mt->ptxas >= 135)) {
        snprintf(why, cap, "st.bulk: ptxas %s takes the size in a %s register or as an immediate",
                 mt->ptxas >= 135 ? "13.5" : "13.0", mt->ptxas >= 135 ? "32- or 64-bit" : "64-bit");
        return 1;
    }
    const ptx_operand *a = ptx_operand_named(m, it, mt, "[a]");
    if (a && a->has_base && is_variable(m, a)) {
        snprintf(why, cap, "st.bulk: the address is a register (ptxas takes no variable here)");
        return 1;
    }
    return 0;
}

/* mbarrier.arrive{_drop} with a count: sm_8x needs .noComplete (mbarrier.md) */
static int arrive_count(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    if (m->sm > 0 && m->sm < 90 && ptx_operand_named(m, it, mt, "count") && !ptx_has_qualifier(mt, ".noComplete") &&
        !strstr(ptx_forms[mt->form].root, ".noComplete")) {
        snprintf(why, cap, "%s with a count argument and without .noComplete needs sm_90 or later; this module "
                 "targets %s", ptx_forms[mt->form].root, m->target);
        return 1;
    }
    return 0;
}

/* fence.proxy.tensormap::generic.acquire [addr], 128: size is the immediate 128 */
static int fence_size(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_operand *s = ptx_operand_named(m, it, mt, "size");
    if (s && (s->kind != PTX_OP_IMM || s->imm != 128)) {
        snprintf(why, cap, "fence.proxy.tensormap::generic.acquire: size must be the immediate 128");
        return 1;
    }
    return 0;
}

void ptx_advice(const ptx_module *m, const ptx_item *it, const ptx_match *mt, ptx_diags *ds)
{
    /* st.async without [mbar], not .release: assembled, but no store is emitted (see
       st_async_two); a .gpu/.sys scope on sm_100 or later is the release store */
    if (mt->rule == PTX_RULE_ST_ASYNC && !ptx_operand_named(m, it, mt, "[mbar]")) {
        const char *sem = ptx_slot_value(mt, "sem"), *scope = ptx_slot_value(mt, "scope");
        int release = (sem && !strcmp(sem, ".release")) ||
                      (scope && strcmp(scope, ".cluster") && m->sm >= 100);
        if (!release)
            ptx_diag_add(ds, 0, it->line, it->col, "st.async without [mbar]: ptxas assembles this form "
                         "but emits no store for it (the code is that of the kernel without the line)");
    }
    /* "Advisory: '.multicast::cluster' modifier on instruction 'cp.async.bulk{.tensor}' should be
       used on .target 'sm_90a'..." (the Target ISA notes list the targets) */
    if (ptx_has_qualifier(mt, ".multicast::cluster") &&
        !ptx_target_in(m, "sm_90a sm_100a sm_100f+ sm_103a sm_110a sm_110f+"))
        ptx_diag_add(ds, 0, it->line, it->col, ".multicast::cluster on %s is advised for sm_90a, sm_100a, "
                     "sm_100f, sm_103a, sm_110a only; this module targets %s", ptx_forms[mt->form].root,
                     m->target);
}

/* atom / red: each value operand (d, b, c) is a register of the type's width (f16x2 / bf16x2: 32
   bits), a { } of .vN of them in a vector form (ptxas: "Vector expected for argument"); an f16 /
   bf16 type takes no immediate, f32 / f64 a 0f / 0d one; .L2::cache_hint is not for shared memory
   ("cannot be applied to '.shared' space"); a generic or .global address is a 64-bit
   register under .address_size 64 (ptxas: "Arguments mismatch", "uses 32-bit address") */
static int atom_value(const ptx_module *m, const ptx_operand *o, const char *root, int bits, int nvec,
                      int half, int flt, int dst, char *why, size_t cap)
{
    if (!o || (dst && o->kind == PTX_OP_SINK && nvec == 1))
        return 0;
    if (nvec > 1) {
        if (o->kind != PTX_OP_VEC || o->nelem != nvec) {
            snprintf(why, cap, "%s: a vector of %d values is expected (ptxas: \"Vector expected\")", root, nvec);
            return 1;
        }
        for (int i = 0; i < o->nelem; i++)
            if (atom_value(m, &m->elems[o->elem + i], root, bits, 1, half, flt, dst, why, cap))
                return 1;
        return 0;
    }
    if (o->kind == PTX_OP_IMM || o->kind == PTX_OP_FIMM) {
        if (dst || half || (flt && o->kind == PTX_OP_IMM)) {
            snprintf(why, cap, "%s: %s", root, dst ? "the destination is a register" : half ?
                     "an f16 / bf16 value is a register, not an immediate" :
                     "a floating-point value takes a 0f/0d immediate, not an integer");
            return 1;
        }
        return 0;
    }
    if (o->kind != PTX_OP_REG) {
        snprintf(why, cap, "%s: a value is a register%s", root, dst ? "" : " or an immediate");
        return 1;
    }
    int c = ptx_reg_class(m, o), want = bits < 16 ? 16 : bits;
    if (c != want) {
        snprintf(why, cap, "%s: the value register is %d bits wide, the type %d", root, c, bits);
        return 1;
    }
    return 0;
}

static int atom_rule(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    static const char *const types[] = {".b16", ".b32", ".b64", ".b128", ".u32", ".s32", ".u64", ".s64", ".f16",
                                        ".bf16", ".f16x2", ".bf16x2", ".f32", ".f64", 0};
    const ptx_form *f = &ptx_forms[mt->form];
    const char *type = NULL;
    for (int s = 0; s < f->nslots; s++)
        if (mt->slot_at[s] >= 0 && in(f->slots[s].values[mt->slot_val[s]], types))
            type = f->slots[s].values[mt->slot_val[s]];
    if (!type)
        return 0;
    if (!strcmp(type, ".b128"))          /* ptxas: "Arguments mismatch" for a floating-point literal */
        for (uint32_t k = 0; k < it->nops; k++)
            if (m->ops[it->op0 + k].kind == PTX_OP_FIMM) {
                snprintf(why, cap, "%s.b128: operand %u is a floating-point literal; a .b128 value is a .b128 "
                         "register or an integer immediate", f->root, k + 1);
                return 1;
            }
    const char *vec = ptx_slot_value(mt, "vec");
    int nvec = vec ? vec[2] - '0' : 1;
    int half = type[1] == 'b' ? type[2] == 'f' : !strncmp(type, ".f16", 4);
    int flt = !half && type[1] == 'f';
    int bits = strstr(type, "x2") ? 32 : type_bits(type);
    if (atom_value(m, ptx_operand_named(m, it, mt, "d"), f->root, bits, nvec, half, flt, 1, why, cap) ||
        atom_value(m, ptx_operand_named(m, it, mt, "b"), f->root, bits, nvec, half, flt, 0, why, cap) ||
        atom_value(m, ptx_operand_named(m, it, mt, "c"), f->root, bits, 1, half, flt, 0, why, cap))
        return 1;
    const ptx_operand *a = ptx_operand_named(m, it, mt, "[a]");
    const char *sp = ptx_slot_value(mt, "space");
    if (!sp)
        sp = ptx_slot_value(mt, "global");
    if (sp && !strncmp(sp, ".shared", 7) && ptx_slot_value(mt, "hint")) {
        snprintf(why, cap, "%s: .L2::cache_hint cannot be applied to the %s space", f->root, sp);
        return 1;
    }
    if (a && a->has_base && m->text[a->name.off] == '%' && (!sp || !strcmp(sp, ".global"))) {
        ptx_operand r = *a;
        r.kind = PTX_OP_REG;
        if (ptx_reg_class(m, &r) != 64) {
            snprintf(why, cap, "%s: a %s address in a 32-bit register under .address_size 64 (ptxas: \"uses "
                     "32-bit address ... conflicting with .address_size 64\")", f->root, sp ? sp : "generic");
            return 1;
        }
    }
    return 0;
}

/* the roots whose rules are in rules_mem.c */
static int is_mem_root(const char *root)
{
    static const char *const roots[] = {"ld", "st", "ldu", "ld.global.nc", "multimem.ld_reduce", "multimem.st",
                                        "multimem.red", "prefetch", "prefetchu", "applypriority", "discard",
                                        "createpolicy", "isspacep", "cvta", "mapa", "getctarank", 0};
    return in(root, roots);
}

static const char *const MISC_ROOTS[] = {"fns", "brx.idx", "movmatrix", "alloca", "stacksave", "stackrestore",
                                         "setmaxnreg", "pmevent", "pmevent.mask", 0};

void ptx_rules_prepare(ptx_match *mt)
{
    const ptx_form *f = &ptx_forms[mt->form];
    const char *root = f->root;
    mt->rule = !strncmp(root, "mbarrier.test_wait", 18) || !strncmp(root, "mbarrier.try_wait", 17) ? PTX_RULE_WAIT :
               !strcmp(root, "st.async") ? PTX_RULE_ST_ASYNC :
               !strcmp(root, "red.async") ? PTX_RULE_RED_ASYNC :
               !strcmp(root, "tensormap.replace") ? PTX_RULE_TENSORMAP_REPLACE :
               !strcmp(root, "fence.proxy") ? PTX_RULE_FENCE_PROXY :
               !strcmp(root, "st.bulk") ? PTX_RULE_ST_BULK :
               !strncmp(root, "mbarrier.arrive", 15) ? PTX_RULE_ARRIVE :
               !strcmp(root, "cp.reduce.async.bulk") ? PTX_RULE_REDUCE_BULK :
               !strcmp(root, "cp.async.bulk") || !strcmp(root, "cp.async.bulk.prefetch") ? PTX_RULE_BULK :
               !strcmp(root, "cp.async") ? PTX_RULE_CP_ASYNC :
               !strcmp(root, "cp.async.bulk.tensor") || !strcmp(root, "cp.reduce.async.bulk.tensor") ||
               !strcmp(root, "cp.async.bulk.prefetch.tensor") ? PTX_RULE_TENSOR :
               is_mem_root(root) ? PTX_RULE_MEM : !strcmp(root, "mma") || !strncmp(root, "mma.sp", 6) ? PTX_RULE_MMA :
               !strncmp(root, "wmma.", 5) || !strcmp(root, "tcgen05.ld") || !strcmp(root, "tcgen05.st") ||
               !strcmp(root, "tcgen05.cp") || !strncmp(root, "tcgen05.mma", 11) ? PTX_RULE_TC :
               !strcmp(root, "atom") || !strcmp(root, "red") ? PTX_RULE_ATOM :
               !strcmp(root, "call") ? PTX_RULE_CALL :
               !strcmp(root, "ldmatrix") || !strcmp(root, "stmatrix") ? PTX_RULE_MATRIX :
               !strcmp(root, "vote") || !strcmp(root, "shfl") ? PTX_RULE_NOSYNC :
               !strncmp(root, "wgmma.mma_async", 15) ? PTX_RULE_WGMMA :
               !strncmp(root, "tex", 3) || !strcmp(root, "tld4") || !strcmp(root, "txq") ||
               !strncmp(root, "suld", 4) || !strncmp(root, "sust", 4) || !strncmp(root, "sured", 5) ? PTX_RULE_TEX :
               f->noperands && f->operands[0].kind >= PTX_K_VREG ? PTX_RULE_VIDEO :
               in(root, MISC_ROOTS) ? PTX_RULE_MISC : PTX_RULE_NONE;
    for (int k = 0; k < f->noperands && k < 24; k++) {
        int has_slot = 0;
        mt->space_of[k] = f->operands[k].kind == PTX_K_A ? operand_space(mt, f->operands[k].name, &has_slot) : NULL;
        mt->space_slot[k] = (int8_t)has_slot;
    }
}

/* vote and shfl without .sync: ptxas 13.0 refuses them for sm_70 and later from PTX 6.4
   ("Instruction 'vote' without '.sync' is not supported on .target sm_70 and higher from PTX ISA
   version 6.4") */
static int legacy_warp(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    /* vote.pred's d and a are predicates, shfl.b32's 32-bit registers ("Arguments mismatch"); the
       .sync forms' operands are checked by their own rows */
    const char *root = ptx_forms[mt->form].root;
    const int vote = !strcmp(root, "vote"), ballot = vote && ptx_has_qualifier(mt, ".ballot");
    for (int k = 0; k < 2 && k < it->nops; k++) {
        const ptx_operand *o = &m->ops[it->op0 + k];
        int want = vote && (k == 1 || !ballot) ? 1 : 32;
        int cls = o->kind == PTX_OP_REG ? ptx_reg_class(m, o) : 0;
        if (o->kind == PTX_OP_VEC || (cls > 0 && cls != want)) {
            snprintf(why, cap, "%s: operand %d must be %s (ptxas: Arguments mismatch)", root, k + 1,
                     want == 1 ? "a predicate" : "a 32-bit register");
            return 1;
        }
    }
    if (m->sm < 70 || m->version < 64)
        return 0;
    snprintf(why, cap, "%s without .sync is not supported on sm_70 and later from PTX ISA 6.4; use %s.sync",
             ptx_forms[mt->form].root, ptx_forms[mt->form].root);
    return 1;
}

int ptx_rules(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    if (addresses(m, it, mt, why, cap))
        return 1;
    if (ptx_forms[mt->form].sem[0] && ptx_rules_sem(m, it, mt, why, cap))
        return 1;
    if (!strcmp(ptx_forms[mt->form].root, "mov") && ptx_rules_mov(m, it, mt, why, cap))
        return 1;
    /* fence.release / fence.acquire: ptxas 13.5 wants PTX 8.6 ("Modifier '.release' on 'fence'
       requires PTX ISA .version 8.6 or later"), 13.0 takes them from the fence's own version */
    if (mt->ptxas >= 135 && m->version < 86 && !strcmp(ptx_forms[mt->form].root, "fence") &&
        (ptx_has_qualifier(mt, ".release") || ptx_has_qualifier(mt, ".acquire"))) {
        snprintf(why, cap, "fence%s requires PTX ISA 8.6 to ptxas 13.5; this module is .version %d.%d",
                 ptx_has_qualifier(mt, ".release") ? ".release" : ".acquire", m->version / 10, m->version % 10);
        return 1;
    }
    switch (mt->rule) {
    case PTX_RULE_WAIT: return parity(m, it, mt, why, cap);
    case PTX_RULE_ST_ASYNC: return st_async(m, it, mt, why, cap);
    case PTX_RULE_RED_ASYNC: return red_async(m, it, mt, why, cap);
    case PTX_RULE_TENSORMAP_REPLACE: return tensormap_replace(m, it, mt, why, cap);
    case PTX_RULE_FENCE_PROXY: return fence_size(m, it, mt, why, cap);
    case PTX_RULE_ST_BULK: return st_bulk(m, it, mt, why, cap);
    case PTX_RULE_ARRIVE: return arrive_count(m, it, mt, why, cap);
    case PTX_RULE_REDUCE_BULK: return bulk_size(m, it, mt, why, cap) || reduce_bulk(mt, why, cap);
    case PTX_RULE_BULK: return bulk_size(m, it, mt, why, cap);
    case PTX_RULE_CP_ASYNC: return cp_async(m, it, mt, why, cap);
    case PTX_RULE_TENSOR: return tensor(m, it, mt, why, cap);
    case PTX_RULE_MEM: return ptx_rules_mem(m, it, mt, why, cap);
    case PTX_RULE_MMA: return mma_types(mt, why, cap) || mma_fragments(m, it, mt, why, cap);
    case PTX_RULE_MATRIX: return matrix_regs(m, it, mt, why, cap);
    case PTX_RULE_WGMMA: return wgmma_regs(m, it, mt, why, cap);
    case PTX_RULE_TC: return ptx_rules_tc(m, it, mt, why, cap);
    case PTX_RULE_ATOM: return atom_rule(m, it, mt, why, cap);
    case PTX_RULE_CALL: return ptx_rules_call(m, it, mt, why, cap);
    case PTX_RULE_NOSYNC: return legacy_warp(m, it, mt, why, cap);
    case PTX_RULE_VIDEO: return ptx_rules_video(m, it, mt, why, cap);
    case PTX_RULE_MISC: return ptx_rules_misc(m, it, mt, why, cap);
    case PTX_RULE_TEX: return ptx_rules_tex(m, it, mt, why, cap);
    default: return 0;
    }
}
