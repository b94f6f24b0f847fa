/* resolve_parts.h - the families' own resolvers, called by sem_resolve. */
#ifndef PA_SEM_RESOLVE_PARTS_H
#define PA_SEM_RESOLVE_PARTS_H

#include "sem/sem.h"

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
