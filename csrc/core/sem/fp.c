/* fp.c - floating-point formats, exact unpacking, and the one rounding. */
#include "sem/fp.h"

#include <math.h>
#include <string.h>

/*                              ebits mbits bias kind             NaN */
const sem_fmt SEM_FMT_F64   = {11, 52, 1023, SEM_KIND_IEEE, 0xFFF8000000000000ull, 0};
const sem_fmt SEM_FMT_F32   = {8, 23, 127, SEM_KIND_IEEE, 0x7FFFFFFFu, 0};
const sem_fmt SEM_FMT_TF32  = {8, 10, 127, SEM_KIND_IEEE, 0x7FFFE000u, 13};  /* in an f32's upper 19 bits */
const sem_fmt SEM_FMT_F16   = {5, 10, 15, SEM_KIND_IEEE, 0x7FFFu, 0};
const sem_fmt SEM_FMT_BF16  = {8, 7, 127, SEM_KIND_IEEE, 0x7FFFu, 0};
const sem_fmt SEM_FMT_E4M3  = {4, 3, 7, SEM_KIND_E4M3, 0x7Fu, 0};
const sem_fmt SEM_FMT_E5M2  = {5, 2, 15, SEM_KIND_IEEE, 0x7Fu, 0};
const sem_fmt SEM_FMT_E2M1  = {2, 1, 1, SEM_KIND_FINITE, 0, 0};
const sem_fmt SEM_FMT_E2M3  = {2, 3, 1, SEM_KIND_FINITE, 0, 0};
const sem_fmt SEM_FMT_E3M2  = {3, 2, 3, SEM_KIND_FINITE, 0, 0};
const sem_fmt SEM_FMT_UE8M0 = {8, 0, 127, SEM_KIND_UE8M0, 0xFFu, 0};

static inline int has_sign(const sem_fmt *f)
{
    return f->kind != SEM_KIND_UE8M0;
}

sem_fp sem_fp_unpack(const sem_fmt *f, uint64_t bits, int ftz)
{
    sem_fp v = {SEM_FP_ZERO, 0, 0, 0};
    bits >>= f->lshift;
    const uint64_t emask = (1ull << f->ebits) - 1, mmask = (1ull << f->mbits) - 1;
    uint64_t E = (bits >> f->mbits) & emask, M = bits & mmask;
    v.sign = has_sign(f) ? (int)((bits >> (f->ebits + f->mbits)) & 1) : 0;
    if (f->kind == SEM_KIND_IEEE && E == emask) {
        v.cls = M ? SEM_FP_NAN : SEM_FP_INF;
        return v;
    }
    if ((f->kind == SEM_KIND_E4M3 && E == emask && M == mmask) || (f->kind == SEM_KIND_UE8M0 && E == emask)) {
        v.cls = SEM_FP_NAN;
        return v;
    }
    if (f->kind == SEM_KIND_UE8M0) {           /* 2^(E - 127); no zero, no subnormal */
        v.cls = SEM_FP_FINITE;
        v.sig = 1;
        v.exp = (int)E - f->bias;
        return v;
    }
    if (E == 0) {
        if (!M || ftz)
            return v;                         /* a zero of its sign */
        v.cls = SEM_FP_FINITE;
        v.sig = M;
        v.exp = 1 - f->bias - f->mbits;
        return v;
    }
    v.cls = SEM_FP_FINITE;
    v.sig = M | (1ull << f->mbits);
    v.exp = (int)E - f->bias - f->mbits;
    return v;
}

static inline uint64_t enc(const sem_fmt *f, int sign, uint64_t E, uint64_t M)
{
    uint64_t b = (E << f->mbits) | M;
    if (has_sign(f) && sign)
        b |= 1ull << (f->ebits + f->mbits);
    return b << f->lshift;
}

uint64_t sem_fp_max_finite(const sem_fmt *f, int sign)
{
    const uint64_t emask = (1ull << f->ebits) - 1, mmask = (1ull << f->mbits) - 1;
    switch (f->kind) {
    case SEM_KIND_IEEE: return enc(f, sign, emask - 1, mmask);
    case SEM_KIND_E4M3: return enc(f, sign, emask, mmask - 1);
    case SEM_KIND_UE8M0: return enc(f, 0, emask - 1, 0);
    default: return enc(f, sign, emask, mmask);
    }
}

uint64_t sem_fp_inf(const sem_fmt *f, int sign)
{
    return f->kind == SEM_KIND_IEEE ? enc(f, sign, (1ull << f->ebits) - 1, 0) : f->nan;
}

/* The result of an overflow under rnd / flags. */
static uint64_t overflow(const sem_fmt *f, int sign, int rnd, uint32_t flags)
{
    if (flags & SEM_F_SATFINITE || f->kind == SEM_KIND_FINITE)
        return sem_fp_max_finite(f, sign);
    if (f->kind != SEM_KIND_IEEE)
        return f->nan;
    int to_inf = rnd == SEM_RZ ? 0 : rnd == SEM_RM ? sign : rnd == SEM_RP ? !sign : 1;
    return to_inf ? sem_fp_inf(f, sign) : sem_fp_max_finite(f, sign);
}

static inline int bitlen(uint64_t x)
{
    return x ? 64 - __builtin_clzll(x) : 0;
}

uint64_t sem_fp_round(const sem_fmt *f, int sign, uint64_t sig, int exp, int sticky, int rnd, uint32_t flags)
{
    if (!has_sign(f) && sign && (sig || sticky))
        return f->nan;                        /* ue8m0 holds no negative value */
    if (flags & SEM_F_RELU && sign)
        return 0;
    if (!sig && !sticky)
        return enc(f, sign, 0, 0);
    if (sticky) {                              /* above sig by less than half its last bit: a quarter */
        if (bitlen(sig) > 61) {
            sig = (sig >> 1) | (sig & 1);      /* keep the dropped bit as sticky: still below half */
            exp++;
        }
        sig = (sig << 2) | 1;
        exp -= 2;
    }
    const int emin = f->kind == SEM_KIND_UE8M0 ? -f->bias : 1 - f->bias;
    int L = exp + bitlen(sig) - 1;             /* value in [2^L, 2^(L+1)) */
    int q = (L >= emin ? L : emin) - f->mbits; /* the quantum of the result */
    uint64_t kept;
    int rbit = 0, st = 0;
    if (exp >= q) {
        kept = sig << (exp - q);
    } else {
        int sh = q - exp;
        if (sh > 64) {
            kept = 0;
            st = 1;
        } else if (sh == 64) {
            kept = 0;
            rbit = (int)(sig >> 63);
            st = (sig << 1) != 0;
        } else {
            kept = sig >> sh;
            rbit = (int)((sig >> (sh - 1)) & 1);
            st = (sig & ((1ull << (sh - 1)) - 1)) != 0;
        }
    }
    int inc;
    switch (rnd) {
    case SEM_RZ: inc = 0; break;
    case SEM_RM: inc = sign && (rbit || st); break;
    case SEM_RP: inc = !sign && (rbit || st); break;
    case SEM_RNA: inc = rbit; break;
    default: inc = rbit && (st || (kept & 1)); break;
    }
    kept += (uint64_t)inc;
    if (f->kind == SEM_KIND_UE8M0) {           /* one significand bit: kept is 0, 1 or 2 */
        if (kept >= 2) {
            kept >>= 1;
            q++;
        }
        if (!kept)
            return enc(f, 0, 0, 0);           /* below 2^-127: the smallest (no zero) */
        long E = (long)q + f->bias;
        if (E > (long)((1u << f->ebits) - 2))
            return overflow(f, sign, rnd, flags);
        return enc(f, 0, E < 0 ? 0 : (uint64_t)E, 0);
    }
    if (kept >> (f->mbits + 1)) {              /* rounded up to the next binade */
        kept >>= 1;
        q++;
    }
    uint64_t E = kept >> f->mbits ? (uint64_t)(q + f->mbits + f->bias) : 0;
    uint64_t M = kept & ((1ull << f->mbits) - 1);
    const uint64_t emask = (1ull << f->ebits) - 1;
    if (f->kind == SEM_KIND_IEEE ? E >= emask
        : f->kind == SEM_KIND_E4M3 ? (E > emask || (E == emask && M == (1ull << f->mbits) - 1))
        : E > emask)
        return overflow(f, sign, rnd, flags);
    if (!E && flags & SEM_F_FTZ)
        return enc(f, sign, 0, 0);            /* a subnormal result flushed */
    return enc(f, sign, E, M);
}

uint64_t sem_fp_pack(const sem_fmt *f, const sem_fp *v, int rnd, uint32_t flags)
{
    switch (v->cls) {
    case SEM_FP_NAN:
        return f->nan ? f->nan : 0;
    case SEM_FP_INF:
        if (flags & SEM_F_RELU && v->sign)
            return 0;
        if (flags & SEM_F_SATFINITE || f->kind == SEM_KIND_FINITE)
            return sem_fp_max_finite(f, v->sign);
        return sem_fp_inf(f, v->sign);
    case SEM_FP_ZERO:
        if (!has_sign(f))
            return enc(f, 0, 0, 0);
        return enc(f, (flags & SEM_F_RELU) ? 0 : v->sign, 0, 0);
    default:
        return sem_fp_round(f, v->sign, v->sig, v->exp, 0, rnd, flags);
    }
}

/* ---- doubles rounded to odd ---- */

/* s, the nearest double of an exact value s + err (err != 0, the exact value
 * beyond s in err's direction or short of it): the odd neighbour. */
static double odd(double s, double dir)
{
    uint64_t u = sem_dbits(s);
    if (u & 1)
        return s;
    /* away from zero when dir has s's sign, else toward zero */
    int away = (dir > 0) == (s > 0);
    return sem_dval(away ? u + 1 : u - 1);
}

double sem_odd_add(double a, double b)
{
    double s = a + b;
    if (!isfinite(s) || s == 0)
        return s;
    double bb = s - a;
    double err = (a - (s - bb)) + (b - bb);
    return err == 0 ? s : odd(s, err);
}

double sem_odd_mul(double a, double b)
{
    double p = a * b;
    if (!isfinite(p) || p == 0)
        return p;
    double err = fma(a, b, -p);
    return err == 0 ? p : odd(p, err);
}

double sem_odd_div(double a, double b)
{
    double q = a / b;
    if (!isfinite(q) || q == 0)
        return q;
    double r = fma(-q, b, a);                 /* a - q*b, exact */
    if (r == 0)
        return q;
    return odd(q, (r > 0) == (b > 0) ? 1.0 : -1.0);
}

double sem_odd_sqrt(double a)
{
    double s = sqrt(a);
    if (!isfinite(s) || s == 0)
        return s;
    double r = fma(-s, s, a);
    return r == 0 ? s : odd(s, r);
}
