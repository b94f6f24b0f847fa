/* rules_sem.c - register widths: of a form the semantics library runs, and of mov.
 * A form of the semantics library: ptxas refuses a
 * register whose size is not the operand's ("Arguments mismatch for instruction 'add'"), the
 * sizes sem_resolve gives (d, then the sources in the row's order: mul.wide's d twice the
 * sources, a shift amount 32 bits, setp's d and c predicates). The ISA's exception: cvt's
 * destination and source may be wider registers than their types (PTX ISA 5.2.4, "operand
 * size exceeding instruction-type size"); ld and st, the other two, are not rows of the
 * semantics library. Immediates, variables and video operands (rules_video.c) are not
 * registers of a size here. */
#include "ptx/text/check.h"
#include "ptx/text/tables.h"

#include <stdio.h>
#include <string.h>

/* The register's size (ptx_reg_class's classes) and declared kind ('f' .f16 .. .f64, 'x' .f16x2,
   's', 'u', 'b' .b/.pred), the declaration in scope at the instruction (formals of several
   functions share names). */
static int reg_of(const ptx_module *m, const ptx_item *it, const ptx_operand *o, char *kind)
{
    const ptx_symbol *sym = ptx_lookup_at(m, m->text + o->name.off, o->name.len, (uint32_t)(it - m->items));
    *kind = sym && sym->kind ? sym->kind : 'b';   /* a special register: bits */
    if (sym)
        return sym->cls ? sym->cls : -2;
    return ptx_reg_class(m, o);
}

static int width_ok(const ptx_module *m, const ptx_item *it, const ptx_operand *o, int want, int wider_ok, int *got)
{
    if (o->kind != PTX_OP_REG || !want)
        return 1;
    char rk;
    int cls = reg_of(m, it, o, &rk);
    *got = cls;
    if (cls < 0)
        return 1;                               /* a variable or undeclared: said elsewhere */
    if (want == 1 || cls == 1)
        return cls == want;
    return cls == want || (wider_ok && cls > want);
}

/* PTX ISA 5.2.4's type checking as ptxas 13.0 and 13.5 do it: a .b register serves any type; .f16,
   .f32, .f64 take an .f register, .f16x2 a .f16x2 one, .bf16, .bf16x2, .tf32 and the 8-bit
   formats none; a signed or unsigned type a .s or .u register. cvt takes a wider .b, .s or .u
   register for an integer type and for .f16, .f16x2, .f32, .f64 (cvt.f32.f16 %f, %rd), never a
   wider .f register, and none when either type is .bf16, .tf32 or one of the 8-bit formats; its
   integer types also take a .f16x2 register as bits (cvt.u32.u16 %r, %hh), and its 8-bit ones an
   8-bit register of either sign (cvt.u16.u8 %h, %s8). */
static int kind_ok(sem_type t, char rk, int cvt)
{
    if (t == SEM_T_NONE || t == SEM_T_PRED || (t >= SEM_T_B8 && t <= SEM_T_B128) || rk == 'b')
        return 1;
    if (t == SEM_T_F16X2 || t == SEM_T_BF16X2)
        return t == SEM_T_F16X2 && rk == 'x';           /* a .f16x2 register, not an .f32 one */
    if (t == SEM_T_F16 || t == SEM_T_F32 || t == SEM_T_F64)
        return rk == 'f';
    if (sem_type_is_float(t) || t >= SEM_T_F16)
        return 0;                                       /* .bf16, .tf32, the 8-bit formats: .b only */
    return rk == 's' || rk == 'u' || (cvt && rk == 'x');
}

/* Whether cvt takes a register wider than the operand's type. The destination of
   cvt.{rz,rm,rp}.ftz.f32.f64 is exact: ptxas 13.0 and 13.5 refuse cvt.rm.ftz.f32.f64 %rd, %fd
   ("Arguments mismatch for instruction 'mov'", from a later pass than the other operand checks)
   and take it with .rn or without .ftz. */
static int cvt_wider_ok(const sem_ctl *k, sem_type t, char rk, int dest)
{
    if (rk == 'f' || (rk == 'x' && !(t >= SEM_T_U8 && t <= SEM_T_S64)))
        return 0;
    if (dest && k->dt == SEM_T_F32 && k->at == SEM_T_F64 && (k->flags & SEM_F_FTZ) && k->rnd != SEM_RN)
        return 0;
    for (int i = 0; i < 2; i++) {               /* a conversion to or from the newer formats: exact */
        sem_type u = (sem_type)(i ? k->dt : k->at);
        if (u >= SEM_T_F16 && u != SEM_T_F16 && u != SEM_T_F16X2 && u != SEM_T_F32 && u != SEM_T_F64)
            return 0;
    }
    return t < SEM_T_F16 || t == SEM_T_F16 || t == SEM_T_F16X2 || t == SEM_T_F32 || t == SEM_T_F64;
}

static const char *kind_name(char rk)
{
    return rk == 'f' ? "floating-point" : rk == 'x' ? ".f16x2" : rk == 's' ? "signed" : rk == 'u' ? "unsigned" :
           "bit-size";
}

/* An operation the semantics library does not run yet still has its operands' widths: those of
   its type, for the same-type operations (rsqrt.approx.f64, ...). */
static int same_type_op(int op)
{
    switch (op) {
    case SEM_OP_ADD: case SEM_OP_SUB: case SEM_OP_MUL: case SEM_OP_FMA: case SEM_OP_MAD: case SEM_OP_DIV:
    case SEM_OP_MIN: case SEM_OP_MAX: case SEM_OP_NEG: case SEM_OP_ABS: case SEM_OP_RCP: case SEM_OP_SQRT:
    case SEM_OP_RSQRT: case SEM_OP_EX2: case SEM_OP_LG2: case SEM_OP_SIN: case SEM_OP_COS: case SEM_OP_TANH:
        return 1;
    default:
        return 0;
    }
}

int ptx_rules_sem(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_form *f = &ptx_forms[mt->form];
    sem_ctl k;
    sem_impl im;
    const char *w = "";
    ptx_sem_ctl(mt, &k);
    if (sem_resolve(&k, &im, &w)) {
        if (!same_type_op(k.op))
            return 0;                           /* the not-yet warning says the rest */
        int tb = sem_type_reg_bits((sem_type)k.at);
        memset(&im, 0, sizeof im);
        im.wd[0] = (uint8_t)tb;
        for (int i = 0; i < 4; i++)
            im.ws[i] = (uint8_t)tb;
    }
    const int cvt = k.op == SEM_OP_CVT || k.op == SEM_OP_CVT_PACK;
    const int u32_all = k.op == SEM_OP_BMSK;     /* ptxas reads bmsk.b32's operands as .u32 */
    const sem_type dtype = k.op == SEM_OP_CLZ || k.op == SEM_OP_POPC || k.op == SEM_OP_BFIND || u32_all ? SEM_T_U32 :
                           (sem_type)(cvt || k.op == SEM_OP_SET || k.op == SEM_OP_SLCT ? k.dt : k.at);
    const int abits = sem_type_reg_bits((sem_type)k.at);
    int ns = 0;
    for (int j = 0; j < f->noperands; j++) {
        if (mt->op_of[j] < 0 || f->operands[j].kind >= PTX_K_VREG || !strcmp(f->operands[j].name, "immLut"))
            continue;
        const ptx_operand *o = &m->ops[it->op0 + mt->op_of[j]];
        int nel = o->kind == PTX_OP_VEC ? o->nelem : 1;
        for (int e = 0; e < nel; e++) {
            const ptx_operand *x = o->kind == PTX_OP_VEC ? &m->elems[o->elem + e] : o;
            int want = j == 0 ? im.wd[e < 2 ? e : 1] : ns < 4 ? im.ws[ns] : 0, got = 0;
            /* the operand's type: the destination's, a source of the operation's width the source
               type's; others (a shift amount, a predicate, bfe's positions) have no kind here */
            sem_type t = j == 0 ? (want == 1 ? SEM_T_PRED : dtype)
                                : u32_all ? SEM_T_U32
                                : (k.op == SEM_OP_CVT_PACK && ns >= 2) ? SEM_T_NONE   /* its .b32 c */
                                : (want == abits || cvt) ? (sem_type)k.at
                                : (k.op == SEM_OP_SHL || k.op == SEM_OP_SHR || k.op == SEM_OP_BFE ||
                                   k.op == SEM_OP_BFI) ? SEM_T_U32 : SEM_T_NONE;    /* amounts, positions */
            if (j)
                ns++;
            if (x->kind != PTX_OP_REG)
                continue;
            char rk = 'b';
            const int rbits = cvt && !strcmp(f->operands[j].name, "rbits");
            if (rbits || (cvt && t == SEM_T_E2M1X2)) {
                /* cvt.rs's random bits: a .b32 register; an .e2m1x2 pair: a .b8 one (ptxas 13.0, 13.5) */
                int w = rbits ? 32 : 8, cls = reg_of(m, it, x, &rk);
                if (cls > 0 && (cls != w || rk != 'b')) {
                    snprintf(why, cap, "%s: operand %d ('%.*s') must be a .b%d register (ptxas: Arguments mismatch)",
                             f->root, mt->op_of[j] + 1, (int)x->name.len, m->text + x->name.off, w);
                    return 1;
                }
                continue;
            }
            if (cvt && mt->ptxas < 135 && t == SEM_T_BF16X2 && (k.dt == SEM_T_UE8M0X2 || k.at == SEM_T_UE8M0X2)) {
                int cls = reg_of(m, it, x, &rk);      /* ptxas 13.0 takes any 32-bit register, a predicate too */
                if (cls > 0 && cls != 32 && cls != 1) {
                    snprintf(why, cap, "%s: operand %d ('%.*s') is a %d-bit register; the form needs a 32-bit "
                             "register (ptxas: Arguments mismatch)", f->root, mt->op_of[j] + 1, (int)x->name.len,
                             m->text + x->name.off, cls);
                    return 1;
                }
                continue;
            }
            if (reg_of(m, it, x, &rk) > 1 && !kind_ok(t, rk, cvt)) {
                snprintf(why, cap, "%s: operand %d ('%.*s') is a %s register, not one for its type (ptxas: "
                         "Arguments mismatch)", f->root, mt->op_of[j] + 1, (int)x->name.len, m->text + x->name.off,
                         kind_name(rk));
                return 1;
            }
            if (width_ok(m, it, x, want, cvt && cvt_wider_ok(&k, t, rk, j == 0), &got))
                continue;
            if (cvt && got == 8 && want == 16 && (t == SEM_T_U8 || t == SEM_T_S8))
                continue;                       /* an 8-bit type in an 8-bit register */
            if (want == 1)
                snprintf(why, cap, "%s: operand %d ('%.*s') must be a predicate (ptxas: Arguments mismatch)", f->root,
                         mt->op_of[j] + 1, (int)x->name.len, m->text + x->name.off);
            else if (got == 1)
                snprintf(why, cap, "%s: operand %d ('%.*s') is a predicate; the form needs a %d-bit register "
                         "(ptxas: Arguments mismatch)", f->root, mt->op_of[j] + 1, (int)x->name.len,
                         m->text + x->name.off, want);
            else
                snprintf(why, cap, "%s: operand %d ('%.*s') is %s %d-bit register; the form needs a %d-bit register%s "
                         "(ptxas: Arguments mismatch)", f->root, mt->op_of[j] + 1, (int)x->name.len,
                         m->text + x->name.off, got == 8 ? "an" : "a", got, want, got > want ? ", no wider one here" : "");
            return 1;
        }
    }
    return 0;
}

/* mov.type d, a (not packing): d a register of the type's size, a one too, or an immediate; a
   special register of 32 bits also moves as .u16 (ptxas 13.0 takes mov.u16 %h, %tid.x), one of
   64 bits only as a 64-bit type; a .global variable's address is 64 bits (.address_size 64;
   ptxas 13.0 takes another space's, or a function's, in any size: Triton's mov.b32 %r,
   global_smem). ptxas: "Arguments mismatch for instruction 'mov'". */
int ptx_rules_mov(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    (void)mt;
    const char *op = m->text + it->opcode.off, *t = NULL;   /* the type: the opcode's last qualifier */
    for (size_t i = it->opcode.len; i-- > 0;)
        if (op[i] == '.') {
            t = op + i;
            break;
        }
    char tb[8];
    size_t tn = t ? (size_t)(op + it->opcode.len - t) : 0;
    if (!t || tn >= sizeof tb || it->nops != 2)
        return 0;
    memcpy(tb, t, tn);
    tb[tn] = 0;
    t = tb;
    int w = !strcmp(t, ".pred") ? 1 : !strcmp(t, ".b128") ? 128 : strstr(t, "16") ? 16 : strstr(t, "32") ? 32 :
            strstr(t, "64") ? 64 : 0;
    const ptx_operand *d = &m->ops[it->op0], *a = &m->ops[it->op0 + 1];
    if (!w)
        return 0;
    int got = 0;
    if (a->kind == PTX_OP_FIMM && strcmp(t, ".f32") && strcmp(t, ".f64")) {
        /* ptxas 13.0 takes a floating-point literal for .f32 / .f64, for .b32 a 0f one, for .b64 a
           double one (0d or decimal), and none for another type ("Arguments mismatch") */
        const char *lit = m->text + a->name.off;
        int f32 = a->name.len > 1 && lit[0] == '0' && (lit[1] == 'f' || lit[1] == 'F');
        if (!(!strcmp(t, ".b32") && f32) && !(!strcmp(t, ".b64") && !f32)) {
            snprintf(why, cap, "mov%s: a floating-point literal moves as .f32 / .f64, a 0f one as .b32, a double one as "
                     ".b64 (ptxas: Arguments mismatch)", t);
            return 1;
        }
    }
    if (d->kind == PTX_OP_VEC || a->kind == PTX_OP_VEC) {      /* a pack or unpack: the whole is w bits */
        const ptx_operand *parts = d->kind == PTX_OP_VEC ? d : a;
        int sinks = 0;
        for (int i = 0; i < parts->nelem; i++) {
            const ptx_operand *e = &m->elems[parts->elem + i];
            sinks += e->kind == PTX_OP_SINK;
            /* ptxas: "Arguments mismatch" for a 64- or 128-bit value's piece of another width */
            if (w >= 64 && e->kind == PTX_OP_REG && !width_ok(m, it, e, w / parts->nelem, 0, &got)) {
                snprintf(why, cap, "mov%s: '%.*s' is a %d-bit register; %d pieces of %d bits make the value "
                         "(ptxas: Arguments mismatch)", t, (int)e->name.len, m->text + e->name.off, got,
                         parts->nelem, w / parts->nelem);
                return 1;
            }
        }
        if (sinks == parts->nelem) {
            snprintf(why, cap, "mov%s: every piece is `_` (ptxas: Unable to infer type of vector elements)", t);
            return 1;
        }
        const ptx_operand *whole = d->kind == PTX_OP_VEC ? a : d;
        if (whole->kind != PTX_OP_VEC && !width_ok(m, it, whole, w, 0, &got)) {
            snprintf(why, cap, "mov%s: '%.*s' is a %d-bit register; the packed value is %d bits (ptxas: Arguments "
                     "mismatch)", t, (int)whole->name.len, m->text + whole->name.off, got, w);
            return 1;
        }
        return 0;
    }
    if (!width_ok(m, it, d, w, 0, &got)) {
        snprintf(why, cap, "mov%s: d ('%.*s') is a %d-bit %s (ptxas: Arguments mismatch)", t, (int)d->name.len,
                 m->text + d->name.off, got, got == 1 ? "predicate" : "register");
        return 1;
    }
    if (a->kind == PTX_OP_REG || (a->kind == PTX_OP_SYM && !a->imm)) {   /* ptxas 13.0 takes mov.u32 %r, var+4 */
        char ak;
        int cls = a->kind == PTX_OP_SYM ? -2 : reg_of(m, it, a, &ak);
        const ptx_symbol *sym = ptx_lookup_at(m, m->text + a->name.off, a->name.len, (uint32_t)(it - m->items));
        int special = a->kind == PTX_OP_REG && cls > 0 && !sym;
        int function = sym && !sym->cls && !sym->space;          /* mov.u32 d, kernel: the ISA's form */
        int global = sym && sym->space == 'g';                   /* ptxas bounds a .global one only */
        int ok = cls == -1 || (cls == -2 ? w == 64 || function || !global : cls == w ||
                               (special && cls == 32 && w == 16));
        if (!ok) {
            if (cls == -2)
                snprintf(why, cap, "mov%s: '%.*s' is an address, 64 bits under .address_size 64", t,
                         (int)a->name.len, m->text + a->name.off);
            else
                snprintf(why, cap, "mov%s: a ('%.*s') is a %d-bit %s (ptxas: Arguments mismatch)", t,
                         (int)a->name.len, m->text + a->name.off, cls, cls == 1 ? "predicate" : "register");
            return 1;
        }
    }
    return 0;
}
