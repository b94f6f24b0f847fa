/* lower_sem.c - an instruction whose row of the table names an operation of
 * the semantics library: its qualifiers (as the checker matched them against
 * the row) become a sem_ctl, sem_resolve picks the function and the operands'
 * widths, and one PI_SEM instruction runs it. No list of forms here: the row
 * says what the instruction is, the library what it does.
 */
#include "ptx/lower_int.h"

#include <stdio.h>
#include <string.h>

#include "ptx/check.h"
#include "sem/intops.h"

static int word_of(const char *v, const char *const *list, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, list[i]))
            return i;
    return -1;
}

/* One qualifier value of slot `slot` into k; types are collected in order. */
static void take(sem_ctl *k, const char *slot, const char *v, uint8_t *types, int *ntypes, uint8_t *dt, uint8_t *bt)
{
    static const char *const RND[] = {"", ".rn", ".rz", ".rm", ".rp", ".rna", ".rs", ".rni", ".rzi", ".rmi", ".rpi"};
    static const char *const CMP[] = {".eq", ".ne", ".lt", ".le", ".gt", ".ge", ".lo", ".ls", ".hi", ".hs",
                                      ".equ", ".neu", ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan"};
    static const char *const BOOL[] = {"", ".and", ".or", ".xor"};
    static const char *const PRMT[] = {"", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"};
    static const char *const TESTP[] = {".finite", ".infinite", ".number", ".notanumber", ".normal", ".subnormal"};
    static const struct { const char *v; uint32_t f; } FLAG[] = {
        {".ftz", SEM_F_FTZ}, {".sat", SEM_F_SAT}, {".relu", SEM_F_RELU}, {".satfinite", SEM_F_SATFINITE},
        {".NaN", SEM_F_NAN}, {".xorsign", SEM_F_XORSIGN}, {".abs", SEM_F_ABS}, {".approx", SEM_F_APPROX},
        {".full", SEM_F_FULL}, {".hi", SEM_F_HI}, {".lo", SEM_F_LO}, {".wide", SEM_F_WIDE}, {".cc", SEM_F_CC},
        {".shiftamt", SEM_F_SHIFTAMT}, {".wrap", SEM_F_WRAP}, {".clamp", SEM_F_CLAMP}, {".l", SEM_F_LEFT},
        {".r", SEM_F_RIGHT}, {".pack", SEM_F_PACK},
    };
    int i;
    if (!strcmp(slot, "CmpOp") && (i = word_of(v, CMP, 18)) >= 0) {
        k->aux = (uint8_t)i;
        return;
    }
    if (!strcmp(slot, "BoolOp") && (i = word_of(v, BOOL, 4)) >= 0) {
        k->aux2 = (uint8_t)i;
        return;
    }
    if (k->op == SEM_OP_PRMT && (i = word_of(v, PRMT, 7)) > 0) {
        k->aux = (uint8_t)i;
        return;
    }
    if (k->op == SEM_OP_TESTP && (i = word_of(v, TESTP, 6)) >= 0) {
        k->aux = (uint8_t)i;
        return;
    }
    if ((i = word_of(v, RND, 11)) > 0) {
        k->rnd = (uint8_t)i;
        return;
    }
    for (size_t j = 0; j < sizeof FLAG / sizeof FLAG[0]; j++)
        if (!strcmp(v, FLAG[j].v)) {
            k->flags |= FLAG[j].f;
            return;
        }
    sem_type t = sem_type_from_name(v);
    if (t == SEM_T_NONE)
        return;
    if (!strcmp(slot, "dtype"))
        *dt = (uint8_t)t;
    else if (!strcmp(slot, "btype"))
        *bt = (uint8_t)t;
    else if (*ntypes < 3)
        types[(*ntypes)++] = (uint8_t)t;
}

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

int lw_sem(lw *L, const ptx_item *it)
{
    ptx_match mt;
    if (ptx_match_semantic(L->m, it, &mt))
        return 1;
    const ptx_form *f = &ptx_forms[mt.form];
    sem_ctl k;
    memset(&k, 0, sizeof k);
    k.op = (uint8_t)sem_op_from_name(f->sem);
    uint8_t types[3] = {0}, dt = 0, bt = 0;
    int ntypes = 0;
    for (int s = 0; s < f->nslots; s++)
        if (mt.slot_at[s] >= 0)
            take(&k, f->slots[s].name, f->slots[s].values[mt.slot_val[s]], types, &ntypes, &dt, &bt);
    /* the types in the order written: one is the operation's; two dtype.atype; three
       dtype.atype.btype (cvt.pack) */
    if (dt) {
        k.dt = dt;
        k.at = ntypes ? types[0] : dt;
    } else if (ntypes == 1) {
        k.dt = k.at = types[0];
    } else if (ntypes >= 2) {
        k.dt = types[0];
        k.at = types[1];
        if (ntypes == 3)
            k.bt = types[2];
    }
    if (bt)
        k.bt = bt;
    if (k.op == SEM_OP_SHF && (k.flags & SEM_F_RIGHT))
        k.flags &= ~(uint32_t)SEM_F_LEFT;
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
    /* operands in the row's order: the destination (p|q: two), then the sources */
    uint32_t src[4] = {0, 0, 0, 0};
    int ns = 0;
    for (int j = 0; j < f->noperands; j++) {
        if (mt.op_of[j] < 0)
            continue;
        const ptx_operand *o = lw_op(L, it, mt.op_of[j]);
        if (j == 0) {
            in->d = lw_dst(L, o, 0, NULL);
            if (im.wd[1])             /* a second destination: q of p|q, or the sink */
                in->e = o->nelem == 1 ? lw_dst(L, lw_el(L, o, 0), 1, NULL) : PI_NOREG;
            continue;
        }
        if (!strcmp(f->operands[j].name, "immLut")) {
            if (imm_of(L, o, &ps->ctl.imm))
                return -1;
            continue;
        }
        if (ns >= 4)
            break;
        ptx_operand po = *o;
        if (po.neg) {                 /* !p: the operation negates it */
            po.neg = 0;
            ps->ctl.neg |= (uint8_t)(1u << ns);
        }
        src[ns] = lw_src(L, &po, im.ws[ns] ? im.ws[ns] : 32);
        ns++;
    }
    in->a = src[0];
    in->b = src[1];
    in->c = src[2];
    in->f = src[3];
    in->w = im.wd[0];
    in->mask = lw_wmask(im.wd[0] ? im.wd[0] : 64);
    return 0;
}
