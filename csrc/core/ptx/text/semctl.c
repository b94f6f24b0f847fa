/* semctl.c - what an instruction's qualifiers say to the semantics library:
 * the values of the slots its row matched, read into a sem_ctl (the operation
 * the row names, its types in the order written, rounding, flags, comparison).
 */
#include "ptx/text/check.h"

#include <string.h>

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
        {".r", SEM_F_RIGHT}, {".pack", SEM_F_PACK}, {".po", SEM_F_PO},
    };
    int i;
    if (!strcmp(slot, "convertType") && v[2] != '8' && v[2] != '1') {
        /* .u2 .s2 .u4 .s4: no sem_type of their own; the signedness as .u8 / .s8, the bits in aux */
        *dt = (uint8_t)(v[1] == 'u' ? SEM_T_U8 : SEM_T_S8);
        k->aux = (uint8_t)(v[2] - '0');
        return;
    }
    if (!strcmp(slot, "CmpOp") && (i = word_of(v, CMP, 18)) >= 0) {
        k->aux = (uint8_t)i;
        return;
    }
    if (!strcmp(slot, "op2") || !strcmp(slot, "add")) {      /* a video instruction's secondary op */
        static const char *const OP2[] = {"", ".add", ".min", ".max"};
        k->aux2 = (uint8_t)(word_of(v, OP2, 4) > 0 ? word_of(v, OP2, 4) : 0);
        return;
    }
    if (!strcmp(slot, "scale")) {                             /* vmad's .shr7 / .shr15 */
        k->aux = (uint8_t)(strcmp(v, ".shr7") ? 15 : 7);
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
    if (!strcmp(slot, "dtype") || !strcmp(slot, "convertType"))
        *dt = (uint8_t)t;
    else if (!strcmp(slot, "btype"))
        *bt = (uint8_t)t;
    else if (*ntypes < 3)
        types[(*ntypes)++] = (uint8_t)t;
}

void ptx_sem_ctl(const ptx_match *mt, sem_ctl *k)
{
    const ptx_form *f = &ptx_forms[mt->form];
    memset(k, 0, sizeof *k);
    k->op = (uint8_t)sem_op_from_name(f->sem);
    uint8_t types[3] = {0}, dt = 0, bt = 0;
    int ntypes = 0;
    for (int s = 0; s < f->nslots; s++)
        if (mt->slot_at[s] >= 0)
            take(k, f->slots[s].name, f->slots[s].values[mt->slot_val[s]], types, &ntypes, &dt, &bt);
    /* the types in the order written: one is the operation's; two dtype.atype; three
       dtype.atype.btype (cvt.pack) */
    if (dt) {
        k->dt = dt;
        k->at = ntypes ? types[0] : dt;
        if (ntypes == 2)
            k->bt = types[1];
    } else if (ntypes == 1) {
        k->dt = k->at = types[0];
    } else if (ntypes >= 2) {
        k->dt = types[0];
        k->at = types[1];
        if (ntypes == 3)
            k->bt = types[2];
    }
    if (bt)
        k->bt = bt;
    if (k->op == SEM_OP_SHF && (k->flags & SEM_F_RIGHT))
        k->flags &= ~(uint32_t)SEM_F_LEFT;
}
