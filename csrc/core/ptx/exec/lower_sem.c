/* lower_sem.c - an instruction whose row of the table names an operation of
 * the semantics library: its qualifiers (as the checker matched them against
 * the row) become a sem_ctl, sem_resolve picks the function and the operands'
 * widths, and one PI_SEM instruction runs it. No list of forms here: the row
 * says what the instruction is, the library what it does.
 */
#include "ptx/exec/lower_int.h"

#include <stdio.h>
#include <string.h>

#include "ptx/text/check.h"
#include "sem/video.h"

/* The immediate of an operand (lop3's table). */
static int imm_of(lw *L, const ptx_operand *o, uint32_t *out)
{
    if (o->kind != PTX_OP_IMM) {
        lw_lerr(L, o->line, o->col, "expected an immediate operand%s%s", "", "");
        return -1;
    }
    *out = (uint32_t)o->imm;
    return 0;
}

/* A video operand's selector into k->imm (sem/video.h's layout): operand j is d (0), a (1)
   or b (2); its kind says scalar (.b0 ... .h1) or SIMD (lanes .hxy / .bxyzw, or a mask). */
static void video_sel(sem_ctl *k, int kind, int j, uint32_t sel)
{
    const int nd = ptx_sel_digits(sel), h = (sel & PTX_SEL_H) != 0;
    if (kind == PTX_K_VSEL || kind == PTX_K_VNSEL || kind == PTX_K_VDSEL) {
        k->imm |= (uint32_t)((h ? SEM_VSEL_H0 : SEM_VSEL_B0) + ptx_sel_digit(sel, 0)) << (j == 0 ? 8 : 4 * (j - 1));
    } else if (kind == PTX_K_VSEL2 || kind == PTX_K_VSEL4) {
        for (int l = 0; l < nd; l++)
            k->imm |= (uint32_t)ptx_sel_digit(sel, l) << (3 * l + (j == 2 ? SEM_VID_B_SHIFT : 0));
        k->imm |= j == 2 ? SEM_VID_B_SET : SEM_VID_A_SET;
    } else if (kind == PTX_K_VMASK2 || kind == PTX_K_VMASK4) {
        for (int l = 0; l < nd; l++)
            k->imm |= 1u << (SEM_VID_MASK_SHIFT + ptx_sel_digit(sel, l));
        k->imm |= SEM_VID_MASK_SET;
    }
}

/* The interpreter's own instruction for the common integer forms (a switch
 * case instead of a call over lanes); -1: run the library's function. The two
 * compute the same (tests/ptx/test_sem_fast.py holds them equal). */
static int fast_op(const sem_ctl *k, uint8_t *sub)
{
    static const uint8_t CMP[] = {
        [SEM_CMP_EQ] = PI_CMP_EQ, [SEM_CMP_NE] = PI_CMP_NE, [SEM_CMP_LT] = PI_CMP_LT, [SEM_CMP_LE] = PI_CMP_LE,
        [SEM_CMP_GT] = PI_CMP_GT, [SEM_CMP_GE] = PI_CMP_GE, [SEM_CMP_LO] = PI_CMP_LT, [SEM_CMP_LS] = PI_CMP_LE,
        [SEM_CMP_HI] = PI_CMP_GT, [SEM_CMP_HS] = PI_CMP_GE,
    };
    const sem_type t = (sem_type)k->at;
    if (sem_type_is_float(t) || (k->flags & (SEM_F_SAT | SEM_F_CC)) || k->neg || k->aux2)
        return -1;
    const int sg = sem_type_is_signed(t), hi = (k->flags & SEM_F_HI) != 0, wide = (k->flags & SEM_F_WIDE) != 0;
    switch (k->op) {
    case SEM_OP_ADD: return PI_ADD;
    case SEM_OP_SUB: return PI_SUB;
    case SEM_OP_MUL: return wide ? (sg ? PI_MULWIDE_S : PI_MULWIDE_U) : hi ? (sg ? PI_MULHI_S : PI_MULHI_U) : PI_MULLO;
    case SEM_OP_MAD: return wide ? (sg ? PI_MADWIDE_S : PI_MADWIDE_U) : hi ? (sg ? PI_MADHI_S : PI_MADHI_U) : PI_MADLO;
    case SEM_OP_DIV: return sg ? PI_DIV_S : PI_DIV_U;
    case SEM_OP_REM: return sg ? PI_REM_S : PI_REM_U;
    case SEM_OP_AND: return PI_AND;
    case SEM_OP_OR: return PI_OR;
    case SEM_OP_XOR: return PI_XOR;
    case SEM_OP_NOT: return PI_NOT;
    case SEM_OP_SHL: return PI_SHL;
    case SEM_OP_SHR: return sg ? PI_SHR_S : PI_SHR_U;
    case SEM_OP_NEG: return PI_NEG;
    case SEM_OP_ABS: return PI_ABS;
    case SEM_OP_MIN: return sg ? PI_MIN_S : PI_MIN_U;
    case SEM_OP_MAX: return sg ? PI_MAX_S : PI_MAX_U;
    case SEM_OP_SELP: return PI_SELP;
    case SEM_OP_SETP:
        if (k->aux > SEM_CMP_HS)
            return -1;
        *sub = CMP[k->aux];
        return sg && k->aux < SEM_CMP_LO ? PI_SETP_S : PI_SETP_U;
    default:
        return -1;
    }
}

int lw_sem(lw *L, const ptx_item *it, const ptx_match *match)
{
    ptx_match mt = *match;
    const ptx_form *f = &ptx_forms[mt.form];
    sem_ctl k;
    ptx_sem_ctl(&mt, &k);
    sem_impl im;
    const char *why = "";
    int rc = sem_resolve(&k, &im, &why);
    if (rc) {
        char msg[160];
        snprintf(msg, sizeof msg, ": %s", why);
        return lw_unsupported(L, it, msg);
    }
    pi_ins *in = lw_emit(L);
    if (!in || GROWN(L->p->sems, L->p->nsems, L->capsems)) {
        L->oom = 1;
        return -1;
    }
    pi_sem *ps = &L->p->sems[L->p->nsems];
    ps->fn = im.fn;
    ps->ctl = k;
    in->op = PI_SEM;
    in->x = L->p->nsems++;
    /* operands in the row's order: the destination (p|q: two), then the sources (a
       vector operand's elements one by one); a fifth source comes in d[1] (sem.h) */
    uint32_t src[5] = {0, 0, 0, 0, 0};
    int ns = 0;
    for (int j = 0; j < f->noperands; j++) {
        if (mt.op_of[j] < 0)
            continue;
        const ptx_operand *o = lw_op(L, it, mt.op_of[j]);
        if (o->sel)
            video_sel(&ps->ctl, f->operands[j].kind, j, o->sel);
        if (j == 0) {
            in->d = lw_dst(L, o, 0, NULL);
            if (im.wd[1] == 1)        /* a second destination: q of p|q, or the sink */
                in->e = o->nelem == 1 ? lw_dst(L, lw_el(L, o, 0), 1, NULL) : PI_NOREG;
            continue;
        }
        if (!strcmp(f->operands[j].name, "immLut")) {
            if (imm_of(L, o, &ps->ctl.imm))
                return -1;
            continue;
        }
        int nel = o->kind == PTX_OP_VEC ? o->nelem : 1;
        for (int e = 0; e < nel && ns < 5; e++) {
            ptx_operand po = o->kind == PTX_OP_VEC ? *lw_el(L, o, e) : *o;
            if (po.neg) {             /* !p, vmad's -r: the operation negates it */
                po.neg = 0;
                ps->ctl.neg |= (uint8_t)(1u << ns);
            }
            src[ns] = lw_src(L, &po, ns < 4 && im.ws[ns] ? im.ws[ns] : 32);
            ns++;
        }
    }
    if ((im.cc & SEM_CC_IN) && ns < 5)   /* the carry flag: a source after the written ones */
        src[ns++] = PI_REG_CC;
    if (im.cc & SEM_CC_OUT)
        in->e = PI_REG_CC;
    if (ns == 5)
        in->e = src[4];
    if ((k.op == SEM_OP_MIN || k.op == SEM_OP_MAX) && ns >= 2 && src[0] == src[1])
        ps->ctl.flags |= SEM_F_SAME;  /* min(x, x): ptxas folds some (sm90.h) */
    in->a = src[0];
    in->b = src[1];
    in->c = src[2];
    in->f = src[3];
    in->w = im.wd[0];
    in->mask = lw_wmask(im.wd[0] ? im.wd[0] : 64);
    uint8_t sub = 0;
    int fast = L->sem_only ? -1 : fast_op(&k, &sub);
    if (fast >= 0) {                  /* the same operation, as the interpreter's own case */
        in->op = (uint8_t)fast;
        in->sub = sub;
        in->w = (uint8_t)im.ws[0];    /* the operation's width: its sources' */
        if (fast == PI_SETP_S || fast == PI_SETP_U)
            in->mask = lw_wmask(im.ws[0]);
        in->x = 0;
        L->p->nsems--;
    }
    return 0;
}
