/* fp.h - floating-point formats as bit fields, and exact rounding into any of
 * them: the one place a result is rounded (every operation computes an exact
 * or round-to-odd value, then calls sem_fp_round).
 *
 *   value = (-1)^sign * sig * 2^exp          (sig an integer, exact)
 *
 * A format: ebits exponent bits, mbits fraction bits, bias; whether the all-ones
 * exponent is infinity/NaN (IEEE), or only S.1111.111 is NaN (e4m3), or there
 * is no infinity and no NaN (e2m1, e2m3, e3m2), or unsigned (ue8m0).
 */
#ifndef PA_SEM_FP_H
#define PA_SEM_FP_H

#include <stdint.h>

#include "sem/sem.h"

typedef enum { SEM_KIND_IEEE, SEM_KIND_E4M3, SEM_KIND_FINITE, SEM_KIND_UE8M0 } sem_fmt_kind;

typedef struct {
    uint8_t ebits, mbits;
    int16_t bias;
    uint8_t kind;       /* sem_fmt_kind */
    uint64_t nan;       /* canonical NaN's bits (0: none) */
    uint8_t lshift;     /* stored shifted left (tf32 in an f32) */
} sem_fmt;

extern const sem_fmt SEM_FMT_F64, SEM_FMT_F32, SEM_FMT_TF32, SEM_FMT_F16, SEM_FMT_BF16,
    SEM_FMT_E4M3, SEM_FMT_E5M2, SEM_FMT_E2M1, SEM_FMT_E2M3, SEM_FMT_E3M2, SEM_FMT_UE8M0;

/* A value taken apart. cls: zero, finite (sig != 0), infinity or NaN. */
enum { SEM_FP_ZERO, SEM_FP_FINITE, SEM_FP_INF, SEM_FP_NAN };
typedef struct {
    int cls, sign;
    uint64_t sig;        /* finite: value = sig * 2^exp */
    int exp;
} sem_fp;

/* Bits -> parts (exact). A subnormal is finite unless ftz (then zero). */
sem_fp sem_fp_unpack(const sem_fmt *f, uint64_t bits, int ftz);

/* The largest finite value's bits of a format, with a sign. */
uint64_t sem_fp_max_finite(const sem_fmt *f, int sign);
uint64_t sem_fp_inf(const sem_fmt *f, int sign);

/* Round sign * (sig + sticky/2 ulp of sig's last bit... ) * 2^exp into f:
 * sticky says that the true value lies strictly above sig*2^exp in magnitude
 * (by less than 2^exp). rnd: SEM_RN/RZ/RM/RP/RNA (others as RN).
 * flags: SEM_F_FTZ (subnormal result -> zero), SEM_F_SATFINITE (overflow to
 * the largest finite), SEM_F_RELU (negative -> +0). A format with no infinity
 * saturates on overflow if satfinite, else gives its NaN (e4m3) as the
 * hardware does for cvt without .satfinite. */
uint64_t sem_fp_round(const sem_fmt *f, int sign, uint64_t sig, int exp, int sticky, int rnd, uint32_t flags);

/* Parts -> bits of f (NaN: f's canonical NaN; infinity per the format). */
uint64_t sem_fp_pack(const sem_fmt *f, const sem_fp *v, int rnd, uint32_t flags);

/* A double's bits and back. */
static inline uint64_t sem_dbits(double d)
{
    uint64_t u;
    __builtin_memcpy(&u, &d, 8);
    return u;
}

static inline double sem_dval(uint64_t u)
{
    double d;
    __builtin_memcpy(&d, &u, 8);
    return d;
}

/* Double arithmetic rounded to odd: the exact result's nearest double toward
 * zero with its last bit set if inexact, so one more rounding into any format
 * of at most 51 fraction bits is correctly rounded. */
double sem_odd_add(double a, double b);
double sem_odd_mul(double a, double b);
double sem_odd_div(double a, double b);
double sem_odd_sqrt(double a);

#endif
