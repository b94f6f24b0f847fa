/* farith.c - IEEE arithmetic of f64, f32, f16 and bf16 (scalar and x2) with
 * every rounding and .ftz / .sat / .relu, min / max, compares and tests.
 *
 * f32, f16 and bf16: the exact result rounded to odd in a double (fp.c), then
 * rounded once into the format (sem_fp_round), so every rounding mode is
 * exact. f64: the host's IEEE double arithmetic, under the rounding mode asked.
 */
#include "sem/farith.h"

#include <fenv.h>
#include <math.h>
#include <string.h>

#include "sem/fp.h"
#include "sem/resolve_parts.h"
#include "sem/sm90.h"

const sem_fmt *sem_fmt_of(int t)
{
    switch (t) {
    case SEM_T_F64: return &SEM_FMT_F64;
    case SEM_T_F32: return &SEM_FMT_F32;
    case SEM_T_F16: case SEM_T_F16X2: return &SEM_FMT_F16;
    case SEM_T_BF16: case SEM_T_BF16X2: return &SEM_FMT_BF16;
    case SEM_T_TF32: return &SEM_FMT_TF32;
    case SEM_T_E4M3: case SEM_T_E4M3X2: case SEM_T_E4M3X4: return &SEM_FMT_E4M3;
    case SEM_T_E5M2: case SEM_T_E5M2X2: case SEM_T_E5M2X4: return &SEM_FMT_E5M2;
    case SEM_T_E2M1X2: case SEM_T_E2M1X4: return &SEM_FMT_E2M1;
    case SEM_T_E2M3X2: case SEM_T_E2M3X4: return &SEM_FMT_E2M3;
    case SEM_T_E3M2X2: case SEM_T_E3M2X4: return &SEM_FMT_E3M2;
    case SEM_T_UE8M0X2: return &SEM_FMT_UE8M0;
    default: return NULL;
    }
}

double sem_fp_to_double(const sem_fp *v)
{
    switch (v->cls) {
    case SEM_FP_ZERO: return v->sign ? -0.0 : 0.0;
    case SEM_FP_INF: return v->sign ? -INFINITY : INFINITY;
    case SEM_FP_NAN: return NAN;
    default: {
        double d = ldexp((double)v->sig, v->exp);
        return v->sign ? -d : d;
    }
    }
}

uint64_t sem_double_to(const sem_fmt *f, double r, int rnd, uint32_t flags)
{
    sem_fp v = sem_fp_unpack(&SEM_FMT_F64, sem_dbits(r), 0);
    return sem_fp_pack(f, &v, rnd == SEM_RND_NONE ? SEM_RN : rnd, flags);
}

/* ---- one element of f32 / f16 / bf16 ---- */

static inline uint64_t fmt_one(const sem_fmt *f)
{
    return f == &SEM_FMT_F32 ? 0x3F800000u : f == &SEM_FMT_F16 ? 0x3C00u : 0x3F80u;
}

static inline int is_nan(const sem_fp *v)
{
    return v->cls == SEM_FP_NAN;
}

/* .sat: [0, 1], NaN to +0 (bits of f). */
static uint64_t sat(const sem_fmt *f, uint64_t x)
{
    sem_fp v = sem_fp_unpack(f, x, 0);
    if (v.cls == SEM_FP_NAN || v.sign)
        return 0;
    return x > fmt_one(f) ? fmt_one(f) : x;
}

/* The sign of an exact zero sum a + b of the rounding rnd (IEEE 754 6.3). */
static inline int zero_sum_sign(int za, int sa, int zb, int sb, int rnd)
{
    if (za && zb && sa == sb)
        return sa;
    return rnd == SEM_RM;
}

uint64_t sem_farith1(const sem_ctl *k, const sem_fmt *f, uint64_t a, uint64_t b, uint64_t c)
{
    const int ftz = (k->flags & SEM_F_FTZ) != 0, rnd = k->rnd == SEM_RND_NONE ? SEM_RN : k->rnd;
    sem_fp A = sem_fp_unpack(f, a, ftz), B = sem_fp_unpack(f, b, ftz), C = sem_fp_unpack(f, c, ftz);
    const uint32_t rflags = k->flags & (SEM_F_FTZ | SEM_F_RELU);
    double x = sem_fp_to_double(&A), y = sem_fp_to_double(&B), z = sem_fp_to_double(&C), r;
    int op = k->op, nan;
    switch (op) {
    case SEM_OP_SUB:
        y = -y;
        B.sign ^= 1;
        /* fall through */
    case SEM_OP_ADD:
        nan = is_nan(&A) || is_nan(&B);
        r = sem_odd_add(x, y);
        if (r == 0 && !nan)
            r = zero_sum_sign(A.cls == SEM_FP_ZERO, A.sign, B.cls == SEM_FP_ZERO, B.sign, rnd) ? -0.0 : 0.0;
        break;
    case SEM_OP_MUL:
        nan = is_nan(&A) || is_nan(&B);
        r = sem_odd_mul(x, y);
        break;
    case SEM_OP_MAD:
    case SEM_OP_FMA: {
        nan = is_nan(&A) || is_nan(&B) || is_nan(&C);
        double p = x * y;                    /* exact: at most 2 x 24 bits */
        r = sem_odd_add(p, z);
        if (r == 0 && !nan && !isnan(r))
            r = zero_sum_sign(p == 0, signbit(p) != 0, C.cls == SEM_FP_ZERO, C.sign, rnd) ? -0.0 : 0.0;
        break;
    }
    case SEM_OP_DIV:
        nan = is_nan(&A) || is_nan(&B);
        r = sem_odd_div(x, y);
        break;
    case SEM_OP_RCP:
        nan = is_nan(&A);
        r = sem_odd_div(1.0, x);
        break;
    case SEM_OP_SQRT:
        nan = is_nan(&A);
        r = A.cls == SEM_FP_ZERO ? x : sem_odd_sqrt(x);
        break;
    default:
        return f->nan;
    }
    uint64_t d = nan || isnan(r) ? f->nan : sem_double_to(f, r, rnd, rflags);
    if (k->flags & SEM_F_SAT)
        d = sat(f, d);
    return d;
}

/* min / max of one element: one NaN gives the other operand, two the
 * canonical NaN (f64: the second quieted; .NaN: either); -0 < +0; .xorsign.abs:
 * the larger (smaller) magnitude with the operands' signs xored. */
uint64_t sem_fminmax1(const sem_ctl *k, const sem_fmt *f, uint64_t a, uint64_t b)
{
    const int ftz = (k->flags & SEM_F_FTZ) != 0, is_max = k->op == SEM_OP_MAX;
    const unsigned sbit = (unsigned)f->ebits + f->mbits;
    const uint64_t mag = (1ull << sbit) - 1;
    if (ftz) {
        if (!((a >> f->mbits) & ((1ull << f->ebits) - 1)))
            a &= 1ull << sbit;
        if (!((b >> f->mbits) & ((1ull << f->ebits) - 1)))
            b &= 1ull << sbit;
    }
    sem_fp A = sem_fp_unpack(f, a, 0), B = sem_fp_unpack(f, b, 0);
    uint64_t xs = ((a ^ b) >> sbit) & 1;
    if (k->flags & SEM_F_XORSIGN) {
        a &= mag;
        b &= mag;
        A.sign = B.sign = 0;
    }
    uint64_t d;
    if ((k->flags & SEM_F_SAME) && sm90_minmax_self_is_move(k->at, k->flags))
        return a;                          /* min(x, x): ptxas's move */
    if (is_nan(&A) || is_nan(&B)) {
        if (f == &SEM_FMT_F64 && is_nan(&A) && is_nan(&B) && !(k->flags & SEM_F_NAN))
            return sm90_quiet_f64(b);
        if ((k->flags & SEM_F_NAN) || (is_nan(&A) && is_nan(&B)))
            return f->nan;
        d = is_nan(&A) ? b : a;
    } else {
        /* order of IEEE bit patterns: sign-magnitude */
        double x = sem_fp_to_double(&A), y = sem_fp_to_double(&B);
        int a_less = x < y || (x == y && A.sign && !B.sign);
        d = (a_less == is_max) ? b : a;
    }
    if (k->flags & SEM_F_XORSIGN)
        d = (d & mag) | (xs << sbit);
    if ((k->flags & SEM_F_RELU) && ((d >> sbit) & 1))
        d = 0;
    return d;
}

/* ---- f64 ---- */

static int fe_mode(int rnd)
{
    switch (rnd) {
    case SEM_RZ: return FE_TOWARDZERO;
    case SEM_RM: return FE_DOWNWARD;
    case SEM_RP: return FE_UPWARD;
    default: return FE_TONEAREST;
    }
}

/* One f64 operation under rnd: the host's IEEE arithmetic (volatile keeps the
 * operation between the mode's setting and its reset). */
static double f64_op(int op, double a, double b, double c, int rnd)
{
    volatile double va = a, vb = b, vc = c, r;
    int mode = fe_mode(rnd), old = fegetround();
    if (mode != old)
        fesetround(mode);
    switch (op) {
    case SEM_OP_ADD: r = va + vb; break;
    case SEM_OP_SUB: r = va - vb; break;
    case SEM_OP_MUL: r = va * vb; break;
    case SEM_OP_MAD:
    case SEM_OP_FMA: r = fma(va, vb, vc); break;
    case SEM_OP_DIV: r = va / vb; break;
    case SEM_OP_RCP: r = 1.0 / va; break;
    default: r = sqrt(va); break;
    }
    double out = r;
    if (mode != old)
        fesetround(old);
    return out;
}

static inline uint64_t ftz64(uint64_t x)
{
    return (x & 0x7FF0000000000000ull) ? x : (x & 0x8000000000000000ull);
}

uint64_t sem_f64arith1(const sem_ctl *k, uint64_t a, uint64_t b, uint64_t c)
{
    if (k->flags & SEM_F_FTZ) {
        a = ftz64(a);
        b = ftz64(b);
        c = ftz64(c);
    }
    uint64_t d;
    const int n = k->op == SEM_OP_MAD || k->op == SEM_OP_FMA ? 3 : 2;
    if (k->op == SEM_OP_DIV || k->op == SEM_OP_RCP || k->op == SEM_OP_SQRT || !sm90_nan_f64(a, b, c, n, &d))
        d = sem_dbits(f64_op(k->op, sem_dval(a), sem_dval(b), sem_dval(c), k->rnd));   /* NaNs as IEEE */
    if (k->flags & SEM_F_FTZ)
        d = ftz64(d);
    if (k->flags & SEM_F_SAT)
        d = sm90_sat_f64(d);
    return d;
}

/* ---- compares and tests ---- */

/* a cmp b on values (NaN: unordered). */
int sem_fcmp(int cmp, double a, double b)
{
    int un = isnan(a) || isnan(b);
    switch (cmp) {
    case SEM_CMP_EQ: return !un && a == b;
    case SEM_CMP_NE: return !un && a != b;
    case SEM_CMP_LT: return !un && a < b;
    case SEM_CMP_LE: return !un && a <= b;
    case SEM_CMP_GT: return !un && a > b;
    case SEM_CMP_GE: return !un && a >= b;
    case SEM_CMP_EQU: return un || a == b;
    case SEM_CMP_NEU: return un || a != b;
    case SEM_CMP_LTU: return un || a < b;
    case SEM_CMP_LEU: return un || a <= b;
    case SEM_CMP_GTU: return un || a > b;
    case SEM_CMP_GEU: return un || a >= b;
    case SEM_CMP_NUM: return !un;
    case SEM_CMP_NAN: return un;
    default: return 0;
    }
}

int sem_icmp(int cmp, uint64_t a, uint64_t b, int bits, int is_signed)
{
    if (cmp >= SEM_CMP_LO && cmp <= SEM_CMP_HS) {
        is_signed = 0;
        cmp = cmp - SEM_CMP_LO + SEM_CMP_LT;
    }
    uint64_t m = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    a &= m;
    b &= m;
    if (is_signed && bits < 64) {
        uint64_t s = 1ull << (bits - 1);
        a ^= s;                               /* order signed values as unsigned */
        b ^= s;
    } else if (is_signed) {
        a ^= 1ull << 63;
        b ^= 1ull << 63;
    }
    switch (cmp) {
    case SEM_CMP_EQ: return a == b;
    case SEM_CMP_NE: return a != b;
    case SEM_CMP_LT: return a < b;
    case SEM_CMP_LE: return a <= b;
    case SEM_CMP_GT: return a > b;
    case SEM_CMP_GE: return a >= b;
    default: return 0;
    }
}

int sem_combine(int boolop, int v, int c)
{
    switch (boolop) {
    case SEM_BOOL_AND: return v && c;
    case SEM_BOOL_OR: return v || c;
    case SEM_BOOL_XOR: return v != c;
    default: return v;
    }
}

int sem_fmt_known(int t)
{
    return sem_fmt_of(t) != NULL;
}
