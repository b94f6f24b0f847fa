/* rules_tex.c - the operand shapes of the texture and surface instructions as ptxas 13.0 and
 * 13.5 check them (PTX ISA 9.7.10, 9.7.11; the verdicts swept by tools/rows_verdicts.py):
 * a coordinate vector of 1, 2 or 4 elements, no fewer than the geometry needs (1d 1, 2d 2, a1d 2,
 * 3d / a2d / cube / acube / 2dms / a2dms 4: "Operand vector size doesn't match geometry"), 32-bit
 * registers, floating-point ones only for tex / tld4 with .f32 coordinates and not an array's
 * index (the first);
 * tex's destination four (.v2.f16x2: two) registers of the type's size and kind; offset a vector
 * of 32-bit integer registers, the gradients exactly the geometry's dimensions of .f32 / .b32
 * ones, lod a register of the coordinates' kind (.b32 for integer ones with an explicit
 * sampler), depth (with .f32 coordinates only) a .f32 or .b32 one; a surface's data .vec registers no narrower than
 * the type, at most 128 bits ("Vector type too large"). */
#include "ptx/text/check.h"
#include "ptx/text/tables.h"

#include <stdio.h>
#include <string.h>

/* A register's size and kind ('f' floating point, 'x' .f16x2, 's', 'u', 'b'), in the
   instruction's scope; 0 for what is not a declared register (an immediate, a sink). */
static int reg(const ptx_module *m, const ptx_item *it, const ptx_operand *o, char *kind)
{
    *kind = 'b';
    if (o->kind != PTX_OP_REG)
        return 0;
    const ptx_symbol *s = ptx_lookup_at(m, m->text + o->name.off, o->name.len, (uint32_t)(it - m->items));
    if (!s)
        return ptx_reg_class(m, o) > 0 ? ptx_reg_class(m, o) : 0;
    *kind = s->kind ? s->kind : 'b';
    return s->cls > 0 ? s->cls : 0;
}

static const ptx_operand *elem(const ptx_module *m, const ptx_operand *o, int i)
{
    return o->kind == PTX_OP_VEC || o->kind == PTX_OP_ADDR ? &m->elems[o->elem + i] : o;
}

static int count(const ptx_operand *o)
{
    return o->kind == PTX_OP_VEC || o->kind == PTX_OP_ADDR ? o->nelem : 1;
}

#define NAME(o) (int)(o)->name.len, m->text + (o)->name.off

/* Each element of o: a register of `bits` (at least, if `wider`) of a kind in `kinds`. */
static int elems_ok(const ptx_module *m, const ptx_item *it, const ptx_operand *o, const char *what, int bits,
                    int wider, const char *kinds, char *why, size_t cap)
{
    for (int i = 0; i < count(o); i++) {
        const ptx_operand *e = elem(m, o, i);
        char k;
        int cls = reg(m, it, e, &k);
        if (!cls)
            continue;
        if (wider ? cls < bits : cls != bits) {
            snprintf(why, cap, "%s: '%.*s' is a %d-bit register; %s %d bits (ptxas: Arguments mismatch)", what,
                     NAME(e), cls, wider ? "the type needs at least" : "it takes", bits);
            return 1;
        }
        if (!strchr(kinds, k)) {
            snprintf(why, cap, "%s: '%.*s' is a%s register, not one of this operand's kinds (ptxas: Arguments "
                     "mismatch)", what, NAME(e), k == 'f' ? " floating-point" : k == 'x' ? " .f16x2" :
                     k == 's' ? " signed" : k == 'u' ? "n unsigned" : " bit-size");
            return 1;
        }
    }
    return 0;
}

static int n_ok(const ptx_module *m, const ptx_operand *o, const char *what, int lo, int exact, char *why,
                size_t cap)
{
    int n = count(o);
    if (exact ? n == lo : (n == 1 || n == 2 || n == 4) && n >= lo)
        return 0;
    if (exact)
        snprintf(why, cap, "%s: '%.*s...' has %d element%s; the form takes %d (ptxas: Operand vector size doesn't "
                 "match)", what, NAME(elem(m, o, 0)), n, n == 1 ? "" : "s", lo);
    else
        snprintf(why, cap, "%s: %d element%s; the geometry takes 1, 2 or 4, at least %d (ptxas: Operand vector size "
                 "doesn't match geometry)", what, n, n == 1 ? "" : "s", lo);
    return 1;
}

/* txq's [a]: a .texref or a 64-bit register ("Argument 1 of instruction 'txq': .texref or .u64
   register expected"); .force_unnormalized_coords a 64-bit register only */
static int txq_handle(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_operand *a = ptx_operand_named(m, it, mt, "[a]");
    if (!a || a->kind != PTX_OP_ADDR || !a->has_base)
        return 0;
    const ptx_symbol *s = ptx_lookup_at(m, m->text + a->name.off, a->name.len, (uint32_t)(it - m->items));
    const int sampler = ptx_has_qualifier(mt, ".force_unnormalized_coords");
    if (!s || s->cls || (!sampler && s->kind == 'T'))
        return 0;                               /* a register: the address check says its width */
    if (sampler)      /* ptxas names a .samplerref for a .texref, and a .texref for a .samplerref */
        snprintf(why, cap, "txq.force_unnormalized_coords: '%.*s' is a variable; ptxas 13.0 and 13.5 take a "
                 "64-bit register only", NAME(a));
    else
        snprintf(why, cap, "txq: '%.*s' is not a .texref; the query takes one or a 64-bit register", NAME(a));
    return 1;
}

int ptx_rules_tex(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_form *f = &ptx_forms[mt->form];
    const char *root = f->root, *geom = ptx_slot_value(mt, "geom");
    const int tex = !strncmp(root, "tex", 3) || !strcmp(root, "tld4");
    const int surf = !strncmp(root, "su", 2) && strcmp(root, "suq");
    if (!strcmp(root, "txq"))
        return txq_handle(m, it, mt, why, cap);
    if ((!tex && !surf) || !geom)
        return 0;
    const int array = geom[1] == 'a';
    const char *g = geom + 1 + array;                  /* 1d 2d 3d cube 2dms */
    const int dims = !strcmp(g, "1d") ? 1 : !strcmp(g, "2d") || !strcmp(g, "2dms") ? 2 : 3;
    int need = dims + array + !strcmp(g, "2dms");
    need = need == 3 ? 4 : need;
    const int dvec = dims == 3 ? 4 : dims;             /* offset's and the gradients' size */
    const char *ctype = ptx_slot_value(mt, "ctype");
    const int fcoord = tex && (!ctype || !strcmp(ctype, ".f32"));              /* tld4: .f32 */
    int sampler = 0;
    for (int j = 0; j < f->noperands; j++)
        sampler |= f->operands[j].kind == PTX_K_TS;
    for (int j = 0; j < f->noperands; j++) {
        if (mt->op_of[j] < 0)
            continue;
        const ptx_operand *o = &m->ops[it->op0 + mt->op_of[j]];
        const char *name = f->operands[j].name;
        int kind = f->operands[j].kind;
        if (kind == PTX_K_T || kind == PTX_K_TS) {
            if (tex && !strcmp(geom, ".a2dms"))
                continue;                       /* ptxas 13.0 and 13.5 take any coordinates of .a2dms */
            if (o->kind != PTX_OP_ADDR || !o->nelem)
                continue;
            ptx_operand index = *o, rest = *o;   /* an array's index first: an integer */
            index.nelem = array;
            rest.elem += (uint32_t)array;
            rest.nelem -= array;
            if (n_ok(m, o, "the coordinates", need, 0, why, cap) ||
                elems_ok(m, it, &index, "the array index", 32, 0, "bsu", why, cap) ||
                elems_ok(m, it, &rest, "a coordinate", 32, 0, fcoord ? "fbsu" : "bsu", why, cap))
                return 1;
        } else if (tex && !strcmp(name, "d")) {
            const char *dt = ptx_slot_value(mt, "dtype");
            int pair = strstr(f->syntax, ".f16x2") != NULL, h = dt && !strcmp(dt, ".f16");
            if (n_ok(m, o, "the destination", pair ? 2 : 4, 1, why, cap) ||
                elems_ok(m, it, o, "the destination", h ? 16 : 32, 0,
                         pair ? "bx" : h ? "bf" : dt && !strcmp(dt, ".f32") ? "fbsu" : "bsu", why, cap))
                return 1;
        } else if (!strcmp(name, "offset")) {
            if (n_ok(m, o, "offset", dvec, 0, why, cap) || elems_ok(m, it, o, "offset", 32, 0, "bsu", why, cap))
                return 1;
        } else if (!strcmp(name, "dPdx") || !strcmp(name, "dPdy")) {
            if (n_ok(m, o, name, dvec, 1, why, cap) || elems_ok(m, it, o, name, 32, 0, "bf", why, cap))
                return 1;
        } else if (!strcmp(name, "lod") || !strcmp(name, "depth")) {
            if (!strcmp(name, "depth") && !fcoord) {
                snprintf(why, cap, "%s: a depth compare takes .f32 coordinates (ptxas: Arguments mismatch)", root);
                return 1;
            }
            /* lod: the coordinates' kind; with an explicit sampler .b32 for integer coordinates */
            if (elems_ok(m, it, o, name, 32, 0, fcoord ? "bf" : sampler ? "b" : "bsu", why, cap))
                return 1;
        } else if (surf && strncmp(root, "sured", 5) && (!strcmp(name, "d") || !strcmp(name, "c"))) {
            const char *vec = ptx_slot_value(mt, "vec"), *t = ptx_slot_value(mt, root[3] == 'd' ? "dtype" : "ctype");
            int n = vec ? vec[2] - '0' : 1, bits = 32;
            if (t && (t[1] == 'b' || t[1] == 'u' || t[1] == 's'))
                bits = t[2] == '8' ? 8 : t[2] == '1' ? 16 : t[2] == '3' ? 32 : 64;
            if (n * bits > 128) {
                snprintf(why, cap, "%s%s%s: %d bits; a surface access moves at most 128 (ptxas: Vector type too "
                         "large, exceeds 128 bit limit)", root, vec, t ? t : "", n * bits);
                return 1;
            }
            if ((n > 1 ? o->kind != PTX_OP_VEC || o->nelem != n : o->kind == PTX_OP_VEC)) {
                snprintf(why, cap, "%s: the data is %d register%s (ptxas: Arguments mismatch)", root, n,
                         n == 1 ? "" : "s in a vector");
                return 1;
            }
            if (elems_ok(m, it, o, "the data", bits, 1, "bsufx", why, cap))
                return 1;
        }
    }
    return 0;
}
