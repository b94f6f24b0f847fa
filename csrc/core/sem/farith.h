/* farith.h - the floating-point arithmetic of one element, shared by the lane
 * functions (flanes.c) and the conversions. */
#ifndef PA_SEM_FARITH_H
#define PA_SEM_FARITH_H

#include <stdint.h>

#include "sem/fp.h"
#include "sem/sem.h"

/* The format of a float type (an x2 / x4 type: of one element); NULL if none. */
const sem_fmt *sem_fmt_of(int t);
double sem_fp_to_double(const sem_fp *v);
/* A double rounded into f (rnd NONE: .rn), flags as sem_fp_round. */
uint64_t sem_double_to(const sem_fmt *f, double r, int rnd, uint32_t flags);

/* add, sub, mul, mad, fma, div, rcp, sqrt of one f32 / f16 / bf16 element. */
uint64_t sem_farith1(const sem_ctl *k, const sem_fmt *f, uint64_t a, uint64_t b, uint64_t c);
/* min / max of one element (.NaN, .xorsign.abs, .ftz, .relu). */
uint64_t sem_fminmax1(const sem_ctl *k, const sem_fmt *f, uint64_t a, uint64_t b);
/* The same operations of f64. */
uint64_t sem_f64arith1(const sem_ctl *k, uint64_t a, uint64_t b, uint64_t c);

int sem_fcmp(int cmp, double a, double b);
int sem_icmp(int cmp, uint64_t a, uint64_t b, int bits, int is_signed);
int sem_combine(int boolop, int v, int c);

#endif
