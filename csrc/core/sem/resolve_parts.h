/* resolve_parts.h - the families' own resolvers, called by sem_resolve. */
#ifndef PA_SEM_RESOLVE_PARTS_H
#define PA_SEM_RESOLVE_PARTS_H

#include "sem/sem.h"

/* What a resolver answers when it has the operation: the function, the
 * destination's register width and the first three sources' (0: absent). */
static inline int sem_found(sem_impl *o, sem_fn fn, int wd, int s0, int s1, int s2)
{
    o->fn = fn;
    o->wd[0] = (uint8_t)wd;
    o->wd[1] = 0;
    o->ws[0] = (uint8_t)s0;
    o->ws[1] = (uint8_t)s1;
    o->ws[2] = (uint8_t)s2;
    o->ws[3] = 0;
    return 0;
}

/* cvt and cvt.pack (cvt.c). */
int sem_resolve_cvt(const sem_ctl *k, sem_impl *out, const char **why);
/* The special-function unit: ex2, lg2, sin, cos, tanh, rsqrt and the .approx /
 * .full forms of rcp, sqrt, div (sfu.c). */
int sem_resolve_sfu(const sem_ctl *k, sem_impl *out, const char **why);
/* Extended-precision add / sub / mad through the carry flag (carry.c). */
int sem_is_carry(const sem_ctl *k);
int sem_resolve_carry(const sem_ctl *k, sem_impl *out, const char **why);
/* Whether t has a float format (farith.c). */
int sem_fmt_known(int t);

#endif
