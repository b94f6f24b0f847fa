/* rules_misc.c - what ptxas 13.0 checks of fns, brx.idx, movmatrix, alloca, stacksave,
 * stackrestore, setmaxnreg and pmevent beyond their Syntax blocks (tools/video_verdicts.py
 * sweeps them; each rule quotes the ISA's words or ptxas's message). */
#include "ptx/text/check.h"

#include <stdio.h>
#include <string.h>

static const ptx_operand *op_at(const ptx_module *m, const ptx_item *it, const ptx_match *mt, int k)
{
    return mt->op_of[k] >= 0 ? &m->ops[it->op0 + mt->op_of[k]] : NULL;
}

/* a register of `bits` (an immediate too where imm_ok): ptxas, "Arguments mismatch" */
static int reg_of(const ptx_module *m, const ptx_operand *o, int bits, int imm_ok, const char *root, int k,
                  char *why, size_t cap)
{
    if (!o || (imm_ok && o->kind == PTX_OP_IMM))
        return 0;
    if (o->kind == PTX_OP_REG && ptx_reg_class(m, o) == bits)
        return 0;
    snprintf(why, cap, "%s: operand %d is a %d-bit register%s", root, k + 1, bits, imm_ok ? " or an immediate" : "");
    return 1;
}

/* qualifiers in the template's order (ptxas refuses setmaxnreg.aligned.sync.dec.u32) */
static int in_order(const ptx_match *mt)
{
    const ptx_form *f = &ptx_forms[mt->form];
    for (int s = 0, last = -1; s < f->nslots; s++) {
        if (mt->slot_at[s] < 0)
            continue;
        if (mt->slot_at[s] < last)
            return 0;
        last = mt->slot_at[s];
    }
    return 1;
}

static int immediate(const ptx_operand *o, long long lo, long long hi)
{
    return o && o->kind == PTX_OP_IMM && o->imm >= lo && o->imm <= hi;
}

int ptx_rules_misc(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const ptx_form *f = &ptx_forms[mt->form];
    const char *root = f->root;
    const ptx_operand *o0 = op_at(m, it, mt, 0), *o1 = f->noperands > 1 ? op_at(m, it, mt, 1) : NULL;
    if (!strcmp(root, "fns")) {          /* 9.7.1.17: d .b32, mask 32-bit, base and offset 32-bit */
        for (int k = 0; k < 4; k++)
            if (reg_of(m, op_at(m, it, mt, k), 32, k > 0, root, k, why, cap))
                return 1;
        return 0;
    }
    if (!strcmp(root, "movmatrix"))      /* 9.7.14.5.17: a and d are 32-bit registers */
        return reg_of(m, o0, 32, 0, root, 0, why, cap) || reg_of(m, o1, 32, 0, root, 1, why, cap);
    const char *t = ptx_slot_value(mt, "type");
    const int bits = t && !strcmp(t, ".u32") ? 32 : 64;
    if (!strcmp(root, "stacksave") || !strcmp(root, "stackrestore"))
        return reg_of(m, o0, bits, 0, root, 0, why, cap);
    if (!strcmp(root, "alloca")) {       /* 9.7.17.3: ptr and size of the type, immAlign a power of 2 <= 2^23 */
        const ptx_operand *al = op_at(m, it, mt, 2);
        if (reg_of(m, o0, bits, 0, root, 0, why, cap) || reg_of(m, o1, bits, 1, root, 1, why, cap))
            return 1;
        if (al && (al->imm <= 0 || (al->imm & (al->imm - 1)) || al->imm > (1 << 23))) {
            snprintf(why, cap, "alloca: immAlign %lld is not a power of 2 of at most 2^23", (long long)al->imm);
            return 1;
        }
        return 0;
    }
    if (!strcmp(root, "setmaxnreg")) {   /* 9.7.19.5: 24 to 256, a multiple of 8 */
        if (!in_order(mt)) {
            snprintf(why, cap, "setmaxnreg: the qualifiers are written .action.sync.aligned.u32%s", "");
            return 1;
        }
        if (!immediate(o0, 24, 256) || (o0->imm & 7)) {
            snprintf(why, cap, "setmaxnreg: imm-reg-count %lld is not a multiple of 8 in 24 to 256",
                     (long long)(o0 ? o0->imm : 0));
            return 1;
        }
        return 0;
    }
    if (!strcmp(root, "pmevent") || !strcmp(root, "pmevent.mask")) {   /* 9.7.19.4: 16 events */
        int mask = root[7] == '.';
        if (!immediate(o0, 0, mask ? 0xFFFF : 15)) {
            snprintf(why, cap, mask ? "pmevent.mask: the mask %lld is not a 16-bit immediate"
                                    : "pmevent: the event %lld is not an immediate in 0 to 15",
                     (long long)(o0 ? o0->imm : 0));
            return 1;
        }
        return 0;
    }
    if (!strcmp(root, "brx.idx")) {      /* 9.7.12.4: index .u32, tlist a .branchtargets label */
        ptx_span names[64];
        const uint32_t at = (uint32_t)(it - m->items);
        if (reg_of(m, o0, 32, 1, root, 0, why, cap))
            return 1;
        int n = o1 && o1->kind == PTX_OP_SYM ? ptx_branch_targets(m, o1->name, at, names, 64) : -1;
        if (n < 1) {
            snprintf(why, cap, "brx.idx: tlist '%.*s' is not the label of a .branchtargets directive before it",
                     o1 ? (int)o1->name.len : 0, o1 ? m->text + o1->name.off : "");
            return 1;
        }
        for (int i = 0; i < n && i < 64; i++) {   /* "It must refer to labels within the current function" */
            const ptx_symbol *s = ptx_lookup_at(m, m->text + names[i].off, names[i].len, at);
            if (!s || s->cls || s->space || m->items[s->item].kind != PTX_ITEM_LABEL) {
                snprintf(why, cap, "brx.idx: '%.*s' in the .branchtargets list is not a label of this function",
                         (int)names[i].len, m->text + names[i].off);
                return 1;
            }
        }
        return 0;
    }
    return 0;
}
