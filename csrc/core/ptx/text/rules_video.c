/* rules_video.c - the video instructions' operands (PTX ISA 9.7.18) and what ptxas 13.0
 * checks of them beyond the Syntax blocks: selectors on 32-bit registers, vmad's negated
 * operands, and the qualifier pairs it refuses (each rule quotes its message). */
#include "ptx/text/check.h"

#include <stdio.h>
#include <string.h>

#define WHY(...) (why ? (void)snprintf(why, cap, __VA_ARGS__) : (void)0)

/* the selector as written, for messages */
static void sel_text(uint32_t sel, char *buf, size_t cap)
{
    snprintf(buf, cap, ".%c%0*x", (sel & PTX_SEL_H) ? 'h' : 'b', ptx_sel_digits(sel), sel & 0xFFFFu);
}

/* A scalar selector: .b0-.b3, .h0, .h1 (9.7.18.1). */
static int scalar_sel(uint32_t sel)
{
    int h = (sel & PTX_SEL_H) != 0, d = ptx_sel_digit(sel, 0);
    return ptx_sel_digits(sel) == 1 && d <= (h ? 1 : 3);
}

/* A SIMD source selector: .hxy, x, y in 0-3 (two lanes); .bxyzw, each in 0-7 (four). */
static int simd_sel(uint32_t sel, int lanes)
{
    if (ptx_sel_digits(sel) != lanes || ((sel & PTX_SEL_H) != 0) != (lanes == 2))
        return 0;
    for (int i = 0; i < lanes; i++)
        if (ptx_sel_digit(sel, i) >= 2 * lanes)
            return 0;
    return 1;
}

/* A SIMD mask: lanes named once each, in decreasing order (.h10 .h1 .h0; .b3210, .b31,
   ... ptxas: "Incorrect video selector for operand 0" for .b3201 or .h01). */
static int simd_mask(uint32_t sel, int lanes)
{
    int n = ptx_sel_digits(sel);
    if (n > lanes || ((sel & PTX_SEL_H) != 0) != (lanes == 2))
        return 0;
    for (int i = 0; i < n; i++) {
        int d = ptx_sel_digit(sel, i);
        if (d >= lanes || (i && d <= ptx_sel_digit(sel, i - 1)))
            return 0;
    }
    return 1;
}

int ptx_video_operand(const ptx_module *m, const ptx_operand *o, int kind, char *why, size_t cap)
{
    char s[32];
    const int imm_ok = kind == PTX_K_VSEL || kind == PTX_K_VNSEL || kind == PTX_K_VNC;
    if (o->kind == PTX_OP_IMM && imm_ok)
        return 0;
    if (o->kind != PTX_OP_REG) {
        WHY(imm_ok ? "a 32-bit register or an immediate is expected" : "a 32-bit register is expected");
        return 1;
    }
    /* a declared register: ptxas, "Special register argument not allowed for instruction 'vadd'" */
    const ptx_symbol *sym = ptx_lookup(m, m->text + o->name.off, o->name.len);
    if (!sym || sym->cls != 32) {
        WHY(sym ? "a 32-bit register is expected" : "a declared 32-bit register is expected (no special register)");
        return 1;
    }
    if (o->neg == 2 && kind != PTX_K_VNSEL && kind != PTX_K_VNC && kind != PTX_K_VSEL && kind != PTX_K_VSEL2 &&
        kind != PTX_K_VSEL4) {
        WHY("operand negation -reg is an operand of vmad, or of a and b together (ptxas: \"Operand negation not "
            "allowed\")");
        return 1;
    }
    if (o->neg == 1) {
        WHY("'!' negates a predicate, not a video operand");
        return 1;
    }
    if (!o->sel)
        return 0;
    sel_text(o->sel, s, sizeof s);
    switch (kind) {
    case PTX_K_VSEL: case PTX_K_VNSEL: case PTX_K_VDSEL:
        if (scalar_sel(o->sel))
            return 0;
        WHY("'%s' is not a selector of a scalar video operand (one of .b0 .b1 .b2 .b3 .h0 .h1)", s);
        return 1;
    case PTX_K_VSEL2: case PTX_K_VSEL4:
        if (simd_sel(o->sel, kind == PTX_K_VSEL2 ? 2 : 4))
            return 0;
        WHY(kind == PTX_K_VSEL2 ? "'%s' is not a half-word selector .hxy (x, y in 0-3)"
                                : "'%s' is not a byte selector .bxyzw (each in 0-7)", s);
        return 1;
    case PTX_K_VMASK2: case PTX_K_VMASK4:
        if (simd_mask(o->sel, kind == PTX_K_VMASK2 ? 2 : 4))
            return 0;
        WHY(kind == PTX_K_VMASK2 ? "'%s' is not a mask of .h0 .h1 .h10"
                                 : "'%s' is not a byte mask (.b0 ... .b3210: lanes once each, highest first)", s);
        return 1;
    default:
        WHY("a video selector ('%s') is not allowed on this operand (ptxas: \"Video selector is not "
            "allowed\")", s);
        return 1;
    }
}

static const ptx_operand *op_at(const ptx_module *m, const ptx_item *it, const ptx_match *mt, int k)
{
    return mt->op_of[k] >= 0 ? &m->ops[it->op0 + mt->op_of[k]] : NULL;
}

int ptx_rules_video(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_form *f = &ptx_forms[mt->form];
    const ptx_operand *d = op_at(m, it, mt, 0);
    /* "Video instruction cannot have destination selector and secondary operation" */
    if (ptx_slot_value(mt, "op2") && d && d->sel) {
        snprintf(why, cap, "%s: a destination selector (merge) and a secondary operation %s exclude each other",
                 f->root, ptx_slot_value(mt, "op2"));
        return 1;
    }
    /* "Illegal combination of .sat and .add modifiers" (9.7.18.2: saturation cannot be used with
       the secondary accumulate operation) */
    if (ptx_has_qualifier(mt, ".sat") && ptx_slot_value(mt, "add")) {
        snprintf(why, cap, "%s: .sat cannot be used with the accumulate .add", f->root);
        return 1;
    }
    if (strcmp(f->root, "vmad")) {
        /* -a with -b: the negation of the product a*b twice (9.7.18.1.3), which ptxas 13.0 takes on
           every video instruction and assembles as a, b (the same cubin); one alone it refuses,
           "Operand negation not allowed for instruction 'vadd'" */
        const ptx_operand *a = op_at(m, it, mt, 1), *b = op_at(m, it, mt, 2);
        if (a && b && (a->neg == 2) != (b->neg == 2)) {
            snprintf(why, cap, "%s negates no operand (-a with -b, which cancel, only)", f->root);
            return 1;
        }
    } else {
        const ptx_operand *a = op_at(m, it, mt, 1), *b = op_at(m, it, mt, 2), *c = op_at(m, it, mt, 3);
        int na = a && a->neg == 2, nb = b && b->neg == 2, nc = c && c->neg == 2;
        /* "Operand negation limited to either (source A xor source B) or source C" */
        if ((na ^ nb) && nc) {
            snprintf(why, cap, "vmad negates either the product (a xor b) or c, not both%s", "");
            return 1;
        }
        /* "Conflicting use of '.po' modifier with operand negation" */
        if (ptx_has_qualifier(mt, ".po") && ((na ^ nb) || nc)) {     /* -a with -b cancel: taken */
            snprintf(why, cap, "vmad.po takes no negated operand%s", "");
            return 1;
        }
    }
    return 0;
}
