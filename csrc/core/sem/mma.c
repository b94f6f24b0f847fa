/* mma.c - the tensor cores' dot products as an H200 computes them (mma.h).
 *
 * The native block (HMMA on f16 / bf16 / tf32, docs/tensor-cores.md):
 *   1. every product a[k]*b[k] is exact;
 *   2. E = the largest "nominal" exponent among the nonzero terms, a product's
 *      being ea + eb (the operands' unbiased exponents, a subnormal's taken as
 *      the format's emin) and c's its own exponent;
 *   3. every term, c included, is cut to a multiple of 2^(E-25) by dropping the
 *      bits below it from its magnitude (truncation toward zero);
 *   4. the cut terms are added exactly;
 *   5. the sum is rounded once: to f32 toward zero (an exponent past f32's range
 *      gives infinity, not the largest finite), or to f16 to nearest even;
 *      subnormal results are kept, and a zero result is +0 whatever its signs.
 * NaN operands, inf * 0 and inf - inf give the canonical NaN; otherwise an
 * infinite operand gives that infinity.
 *
 * fp8 (e4m3 / e5m2) is not a native block on sm_90: ptxas converts the elements
 * to f16 (exactly), runs two f16 blocks, the first over the k with k % 4 < 2 and
 * an accumulator of +0, the second over the rest on the first's result, and adds
 * c with an IEEE add (FADD / HADD2, round to nearest even).
 */
#include "sem/mma.h"

#include "sem/sem.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Canonical NaNs (sm90.h says the same for the scalar operations). */
#define MMA_NAN_F32 0x7FFFFFFFu
#define MMA_NAN_F16 0x7FFFu

/* Bits kept below the largest nominal exponent: terms are cut at 2^(E-P). */
#define MMA_P 25
/* wgmma's fp8 (QGMMA): terms cut at 2^(E-13), results of 13 fraction bits. */
#ifndef QGMMA_P
#define QGMMA_P 13
#endif
#ifndef QGMMA_FBITS
#define QGMMA_FBITS 13
#endif

enum { CLS_FIN, CLS_INF, CLS_NAN };

/* A number as the block sees it: value = (-1)^sign * sig * 2^(nexp - frac),
 * nexp the nominal exponent (emin for a subnormal), frac the fraction bits. */
typedef struct {
    int cls, sign;
    uint64_t sig;
    int nexp, frac;
} mma_num;

typedef struct { int ebits, mbits, bias, fn; } mma_fmt;   /* fn: e4m3's NaN-only top */

static const mma_fmt F_F16 = {5, 10, 15, 0};
static const mma_fmt F_BF16 = {8, 7, 127, 0};
static const mma_fmt F_TF32 = {8, 10, 127, 0};
static const mma_fmt F_F32 = {8, 23, 127, 0};
static const mma_fmt F_E4M3 = {4, 3, 7, 1};
static const mma_fmt F_E5M2 = {5, 2, 15, 0};

static mma_num unpack(const mma_fmt *f, uint32_t bits)
{
    mma_num v;
    uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
    uint32_t e = (bits >> f->mbits) & emask, m = bits & mmask;
    v.sign = (bits >> (f->ebits + f->mbits)) & 1;
    v.frac = f->mbits;
    v.cls = CLS_FIN;
    v.sig = 0;
    v.nexp = 1 - f->bias;
    if (f->fn) {
        if (e == emask && m == mmask) {
            v.cls = CLS_NAN;
            return v;
        }
    } else if (e == emask) {
        v.cls = m ? CLS_NAN : CLS_INF;
        return v;
    }
    if (e == 0) {
        v.sig = m;
    } else {
        v.sig = m | (1u << f->mbits);
        v.nexp = (int)e - f->bias;
    }
    return v;
}

static const mma_fmt *fmt_of(int t)
{
    switch (t) {
    case SEM_T_F16: return &F_F16;
    case SEM_T_BF16: return &F_BF16;
    case SEM_T_TF32: return &F_TF32;
    case SEM_T_F32: return &F_F32;
    case SEM_T_E4M3: return &F_E4M3;
    case SEM_T_E5M2: return &F_E5M2;
    default: return NULL;
    }
}

static mma_num unpack_t(int t, uint32_t bits)
{
    if (t == SEM_T_TF32)
        bits >>= 13;                    /* the low 13 bits of the register are not read */
    return unpack(fmt_of(t), bits);
}

static int msb64(uint64_t x)
{
    return x ? 63 - __builtin_clzll(x) : 0;
}

/* Round (-1)^sign * mag * 2^x to the format f: rz_inf (toward zero, past the
 * range infinity) or nearest even. A zero result is +0. */
static uint32_t round_to(const mma_fmt *f, int sign, uint64_t mag, int x, int rz_inf)
{
    int emin = 1 - f->bias, msb, ex, qe, sh, biased;
    uint64_t q;
    if (mag == 0)
        return 0;
    msb = msb64(mag);
    ex = msb + x;
    qe = (ex < emin ? emin : ex) - f->mbits;
    sh = qe - x;
    if (sh > 0) {
        /* A shift over 40 only comes with a magnitude far below half its
         * unit (the callers' sums are below 2^58 and their units no finer
         * than 2^(E-25)): zero in both modes. */
        if (sh > 40) {
            q = 0;
        } else {
            uint64_t rem = mag & ((1ull << sh) - 1), half = 1ull << (sh - 1);
            q = mag >> sh;
            if (!rz_inf && (rem > half || (rem == half && (q & 1))))
                q++;
        }
    } else {
        q = mag << -sh;
    }
    if (q >> (f->mbits + 1)) {
        q >>= 1;
        qe++;
    }
    if (q == 0)
        return 0;
    if (!(q >> f->mbits))
        return ((uint32_t)sign << (f->ebits + f->mbits)) | (uint32_t)q;    /* subnormal */
    biased = qe + f->mbits + f->bias;
    if (biased >= (1 << f->ebits) - 1)
        return ((uint32_t)sign << (f->ebits + f->mbits)) | (((1u << f->ebits) - 1) << f->mbits);
    return ((uint32_t)sign << (f->ebits + f->mbits)) | ((uint32_t)biased << f->mbits) |
           (uint32_t)(q & ((1ull << f->mbits) - 1));
}

/* One native block: c + sum of n products; c is f32 or f16 (c_f32), the result
 * f32 or f16 (acc_f32); terms cut at 2^(E-p); an f32 result keeps fbits fraction
 * bits (23, or QGMMA's 13), cut toward zero. */
static uint32_t block_p(int atype, int btype, int c_f32, int acc_f32, int n, const uint32_t *a,
                        const uint32_t *b, uint32_t c, int p, int fbits)
{
    mma_num t[SEM_MMA_MAX_K + 1];
    int nt = 0, nan = 0, pinf = 0, ninf = 0, i, e = 0, have = 0;
    int64_t sum = 0;
    const mma_fmt *cf = acc_f32 ? &F_F32 : &F_F16;
    mma_num cv = unpack(c_f32 ? &F_F32 : &F_F16, c);

    for (i = 0; i < n; i++) {
        mma_num x = unpack_t(atype, a[i]), y = unpack_t(btype, b[i]);
        if (x.cls == CLS_NAN || y.cls == CLS_NAN) {
            nan = 1;
        } else if (x.cls == CLS_INF || y.cls == CLS_INF) {
            const mma_num *o = x.cls == CLS_INF ? &y : &x;
            if (o->cls == CLS_FIN && o->sig == 0)
                nan = 1;                /* inf * 0 */
            else if (x.sign ^ y.sign)
                ninf = 1;
            else
                pinf = 1;
        } else if (x.sig && y.sig) {
            mma_num p;
            p.cls = CLS_FIN;
            p.sign = x.sign ^ y.sign;
            p.sig = x.sig * y.sig;
            p.nexp = x.nexp + y.nexp;
            p.frac = x.frac + y.frac;
            t[nt++] = p;
        }
    }
    if (cv.cls == CLS_NAN)
        nan = 1;
    else if (cv.cls == CLS_INF && cv.sign)
        ninf = 1;
    else if (cv.cls == CLS_INF)
        pinf = 1;
    else if (cv.sig)
        t[nt++] = cv;
    if (nan || (pinf && ninf))
        return acc_f32 ? MMA_NAN_F32 : MMA_NAN_F16;
    if (pinf || ninf) {
        uint32_t s = (uint32_t)ninf;
        return acc_f32 ? (s << 31) | 0x7F800000u : (s << 15) | 0x7C00u;
    }
    for (i = 0; i < nt; i++)
        if (!have || t[i].nexp > e) {
            e = t[i].nexp;
            have = 1;
        }
    /* sum in units of 2^(e - MMA_P): a term is below 2^(e+2), so below 2^27
     * units; 17 (33) of them fit an int64 easily. */
    for (i = 0; i < nt; i++) {
        int sh = (e - t[i].nexp) + t[i].frac - p;         /* right shift of sig */
        uint64_t m;
        if (sh >= 64)
            m = 0;
        else if (sh >= 0)
            m = t[i].sig >> sh;
        else
            m = t[i].sig << -sh;
        sum += t[i].sign ? -(int64_t)m : (int64_t)m;
    }
    if (sum == 0)
        return 0;
    {
        uint32_t r = round_to(cf, sum < 0, sum < 0 ? (uint64_t)(-sum) : (uint64_t)sum, e - p, acc_f32);
        if (acc_f32 && fbits < 23 && (r & 0x7F800000u) != 0x7F800000u)
            r &= ~((1u << (23 - fbits)) - 1);
        return r;
    }
}

static uint32_t block2(int atype, int btype, int c_f32, int acc_f32, int n, const uint32_t *a,
                       const uint32_t *b, uint32_t c)
{
    return block_p(atype, btype, c_f32, acc_f32, n, a, b, c, MMA_P, 23);
}

static uint32_t block(int atype, int btype, int acc_f32, int n, const uint32_t *a,
                      const uint32_t *b, uint32_t c)
{
    return block2(atype, btype, acc_f32, acc_f32, n, a, b, c);
}

/* An fp8 element as f16 bits (exact: every e4m3 / e5m2 value is an f16). */
static uint32_t fp8_to_f16(int t, uint32_t bits)
{
    mma_num v = unpack(fmt_of(t), bits & 0xFF);
    if (v.cls == CLS_NAN)
        return MMA_NAN_F16;
    if (v.cls == CLS_INF)
        return ((uint32_t)v.sign << 15) | 0x7C00u;
    if (v.sig == 0)
        return (uint32_t)v.sign << 15;
    return ((uint32_t)v.sign << 15) |
           round_to(&F_F16, 0, v.sig, v.nexp - v.frac, 0);
}

/* IEEE add, round to nearest even, of two f32 / f16 bit patterns (FADD, HADD2
 * without .ftz): canonical NaN. */
static uint32_t ieee_add(int f32, uint32_t x, uint32_t y)
{
    const mma_fmt *f = f32 ? &F_F32 : &F_F16;
    mma_num u = unpack(f, x), v = unpack(f, y);
    int e;
    uint64_t mu, mv, mag;
    int sign;
    if (u.cls == CLS_NAN || v.cls == CLS_NAN ||
        (u.cls == CLS_INF && v.cls == CLS_INF && u.sign != v.sign))
        return f32 ? MMA_NAN_F32 : MMA_NAN_F16;
    if (u.cls == CLS_INF)
        return x;
    if (v.cls == CLS_INF)
        return y;
    if (u.sig == 0 && v.sig == 0)
        return (u.sign & v.sign) ? (f32 ? 0x80000000u : 0x8000u) : 0;
    if (u.sig == 0)
        return y;
    if (v.sig == 0)
        return x;
    /* Both nonzero finite: align to the smaller exponent when they are at most
     * 32 apart (exact, below 2^57); further apart, the smaller is below the
     * larger's last bit by 2^8 or more, and a sticky unit under the larger's
     * bits stands in for it (enough to round to nearest). */
    if (u.nexp < v.nexp) {
        mma_num w = u;
        u = v;
        v = w;
    }
    e = u.nexp - v.nexp;
    if (e > 32) {
        mu = u.sig << 34;
        mv = 1;
        e = u.nexp - u.frac - 34;
    } else {
        mu = u.sig << e;
        mv = v.sig;
        e = v.nexp - v.frac;
    }
    if (u.sign == v.sign) {
        mag = mu + mv;
        sign = u.sign;
    } else if (mu >= mv) {
        mag = mu - mv;
        sign = u.sign;
    } else {
        mag = mv - mu;
        sign = v.sign;
    }
    if (mag == 0)
        return 0;                       /* x - x is +0 to nearest */
    return round_to(f, sign, mag, e, 0);
}

static int is_int8(int t)
{
    return t == SEM_T_S8 || t == SEM_T_U8;
}

static int is_int4(int t)
{
    return t == SEM_MMA_T_S4 || t == SEM_MMA_T_U4;
}

/* An integer element's value (s8 / u8 / s4 / u4 in the low bits). */
static int32_t int_elem(int t, uint32_t v)
{
    switch (t) {
    case SEM_T_S8: return (int32_t)(int8_t)(v & 0xFF);
    case SEM_T_U8: return (int32_t)(v & 0xFF);
    case SEM_MMA_T_S4: return (int32_t)((v & 0xF) ^ 8u) - 8;
    default: return (int32_t)(v & 0xF);
    }
}

int sem_mma_row_len(int type, int k)
{
    return type == SEM_MMA_T_B1 ? (k + 31) / 32 : k;
}

int sem_mma_dot(int atype, int btype, int ctype, int dtype, int k, unsigned flags,
                const uint32_t *a, const uint32_t *b, uint64_t c, uint64_t *d)
{
    int i;
    if (atype == SEM_MMA_T_B1 && btype == SEM_MMA_T_B1) {
        uint32_t s = (uint32_t)c;
        if (k <= 0 || k > SEM_MMA_MAX_K_B1 || k % 32 || ctype != SEM_T_S32 || dtype != SEM_T_S32)
            return -1;
        for (i = 0; i < k / 32; i++)
            s += (uint32_t)__builtin_popcount((flags & SEM_MMA_AND) ? a[i] & b[i] : a[i] ^ b[i]);
        *d = s;                         /* wraps */
        return 0;
    }
    if (k <= 0 || k > SEM_MMA_MAX_K)
        return -1;
    if (ctype != dtype && !(atype == SEM_T_F16 && btype == SEM_T_F16 &&
                            (ctype == SEM_T_F16 || ctype == SEM_T_F32) &&
                            (dtype == SEM_T_F16 || dtype == SEM_T_F32)))
        return -1;

    if ((is_int8(atype) && is_int8(btype)) || (is_int4(atype) && is_int4(btype))) {
        int64_t s;
        if (dtype != SEM_T_S32)
            return -1;
        s = (int64_t)(int32_t)(uint32_t)c;
        for (i = 0; i < k; i++)
            s += (int64_t)int_elem(atype, a[i]) * int_elem(btype, b[i]);
        if (flags & SEM_MMA_SATFINITE) {
            if (s > INT32_MAX)
                s = INT32_MAX;
            if (s < INT32_MIN)
                s = INT32_MIN;
        }
        *d = (uint32_t)(uint64_t)s;     /* wraps */
        return 0;
    }
    if (dtype != SEM_T_F32 && dtype != SEM_T_F16)
        return -1;

    if ((atype == SEM_T_E4M3 || atype == SEM_T_E5M2) && (btype == SEM_T_E4M3 || btype == SEM_T_E5M2)) {
        uint32_t al[SEM_MMA_MAX_K], bl[SEM_MMA_MAX_K], ah[SEM_MMA_MAX_K], bh[SEM_MMA_MAX_K];
        int nl = 0, nh = 0, f32 = dtype == SEM_T_F32;
        uint32_t acc;
        for (i = 0; i < k; i++) {
            if (i % 4 < 2) {
                al[nl] = fp8_to_f16(atype, a[i]);
                bl[nl++] = fp8_to_f16(btype, b[i]);
            } else {
                ah[nh] = fp8_to_f16(atype, a[i]);
                bh[nh++] = fp8_to_f16(btype, b[i]);
            }
        }
        acc = block(SEM_T_F16, SEM_T_F16, f32, nl, al, bl, 0);
        acc = block(SEM_T_F16, SEM_T_F16, f32, nh, ah, bh, acc);
        *d = ieee_add(f32, (uint32_t)c, acc);
        return 0;
    }

    if (atype != btype || (atype != SEM_T_F16 && atype != SEM_T_BF16 && atype != SEM_T_TF32))
        return -1;
    if (dtype == SEM_T_F16 && atype != SEM_T_F16)
        return -1;
    {
        /* One fused block takes up to 16 products (m16n8k16); a longer k is
         * taken as blocks of 16 in order, each on the last's rounded result
         * (an assumption: no recorded shape has more). */
        int f32 = dtype == SEM_T_F32, c32 = ctype == SEM_T_F32;
        uint32_t acc = (uint32_t)c;
        for (i = 0; i < k; i += 16) {
            int n = k - i < 16 ? k - i : 16;
            acc = block2(atype, btype, i ? f32 : c32, f32, n, a + i, b + i, acc);
        }
        *d = acc;
    }
    return 0;
}

/* ---- whole tiles: the native block with its operands decoded once --------------
 *
 * The same block as block_p, computed in doubles (in floats where both formats
 * are narrow: fast_chunk). Every f16 / bf16 / tf32 / fp8 element, every product of
 * two of them (22 significant bits at most) and every such product or f32 / f16 c
 * times 2^(p-E) is a normal double (exponents within +-700), so each step is exact
 * whatever the rounding mode or flush-to-zero setting. A term in units of 2^(E-p)
 * is x * 2^(p-E), and the cut toward zero is C's conversion to an integer
 * (truncation). The outputs of a row are taken
 * FAST_J at a time, one lane each (B is kept k-major), so the loops over a chunk
 * vectorise. A row of A or a column of B holding a NaN or an infinity, or such a
 * c, takes block_p itself. */

#define FAST_J 16
/* A zero element's nominal exponent: a product with it is below every other term
 * (real nominal exponents lie within +-300), and two of them still fit an int16. */
#define FAST_ZERO_NEXP (-(1 << 13))
/* A chunk's E below this: every term is zero (the scale is then taken at it). */
#define FAST_E_FLOOR (-600)

/* 2^x as a double, -1022 <= x <= 1023. */
static double pow2(int x)
{
    uint64_t u = (uint64_t)(x + 1023) << 52;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* An element of format f (tf32 already shifted down) as the fast path keeps it:
 * its value and nominal exponent (FAST_ZERO_NEXP for a zero); 0 for a NaN or an
 * infinity. */
static inline int fast_decode(const mma_fmt *f, uint32_t bits, double *x, int *nexp)
{
    uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
    uint32_t e = (bits >> f->mbits) & emask, m = bits & mmask;
    if (e == emask && (!f->fn || m == mmask))
        return 0;
    if (e == 0 && m == 0) {
        *x = 0.0;
        *nexp = FAST_ZERO_NEXP;
        return 1;
    }
    *nexp = e ? (int)e - f->bias : 1 - f->bias;
    if (f == &F_F32 && e) {
        float v;                        /* a normal f32 widens exactly (no DAZ: it is normal) */
        memcpy(&v, &bits, 4);
        *x = v;
        return 1;
    }
    *x = (double)(e ? m | (1u << f->mbits) : m) * pow2(*nexp - f->mbits);
    if ((bits >> (f->ebits + f->mbits)) & 1)
        *x = -*x;
    return 1;
}

/* An operand decoded: element (r, q) of `rows` rows of k at val / nexp[r * rs + q * qs];
 * special[r]: a NaN or an infinity in row r. */
typedef struct {
    double *val;
    float *valf;                 /* or as floats (both operands of 5 exponent bits or fewer) */
    int16_t *nexp;               /* int16: 8 to an SSE2 register */
    uint8_t *special;
} fast_ops;

/* Decode `rows` rows of k elements of format f (tf32: shift 13, the bits the register
 * does not read) into o; inlined per format so its fields are constants. */
static inline __attribute__((always_inline)) void fast_rows(const mma_fmt *f, int shift, int rows, int k,
                                                           const uint32_t *x, size_t rs, size_t qs, fast_ops *o)
{
    for (int r = 0; r < rows; r++)
        for (int q = 0; q < k; q++) {
            double v;
            int e;
            if (!fast_decode(f, x[(size_t)r * k + q] >> shift, &v, &e)) {
                o->special[r] = 1;
                continue;
            }
            if (o->valf)
                o->valf[r * rs + q * qs] = (float)v;       /* exact: at most 11 bits, 2^-24 .. 2^16 */
            else
                o->val[r * rs + q * qs] = v;
            o->nexp[r * rs + q * qs] = (int16_t)e;
        }
}

/* An operand of type t decoded: values as floats where narrow (fast_chunk), else doubles. */
static int fast_unpack(int t, int narrow, int rows, int k, const uint32_t *x, size_t rs, size_t qs, size_t len,
                       fast_ops *o)
{
    o->val = narrow ? NULL : calloc(len, sizeof *o->val);
    o->valf = narrow ? calloc(len, sizeof *o->valf) : NULL;
    o->nexp = malloc(len * sizeof *o->nexp);
    o->special = calloc((size_t)rows, 1);
    if ((!o->val && !o->valf) || !o->nexp || !o->special)
        return -1;
    for (size_t i = 0; i < len; i++)
        o->nexp[i] = FAST_ZERO_NEXP;                       /* padding: zeros */
    switch (t) {
    case SEM_T_F16: fast_rows(&F_F16, 0, rows, k, x, rs, qs, o); break;
    case SEM_T_BF16: fast_rows(&F_BF16, 0, rows, k, x, rs, qs, o); break;
    case SEM_T_TF32: fast_rows(&F_TF32, 13, rows, k, x, rs, qs, o); break;
    case SEM_T_E4M3: fast_rows(&F_E4M3, 0, rows, k, x, rs, qs, o); break;
    default: fast_rows(&F_E5M2, 0, rows, k, x, rs, qs, o); break;
    }
    return 0;
}

static void fast_free(fast_ops *o)
{
    free(o->val);
    free(o->valf);
    free(o->nexp);
    free(o->special);
}

/* sum * 2^x rounded to f32 toward zero, past the range infinity: round_to(&F_F32, ...,
 * rz_inf) for sum != 0, with its normal results done here in a few integer steps. */
static uint32_t f32_rz(int64_t sum, int x)
{
    uint32_t sign = sum < 0 ? 0x80000000u : 0;
    uint64_t mag = sum < 0 ? -(uint64_t)sum : (uint64_t)sum;
    int msb = msb64(mag), ex = msb + x;
    if (ex > 127)
        return sign | 0x7F800000u;
    if (ex < -126)
        return round_to(&F_F32, sum < 0, mag, x, 1);     /* subnormal */
    uint64_t q = msb > 23 ? mag >> (msb - 23) : mag << (23 - msb);
    return sign | ((uint32_t)(ex + 127) << 23) | (uint32_t)(q & 0x7FFFFF);
}

/* FAST_J elements of a row: E and the products' terms summed, in units of 2^(E-p), of
 * row i of A and the chunk's columns j0.. of B (k-major, row stride bs); e holds c's
 * nominal exponents on entry, E on return. A term is below 2^(p+2), so k of them fit
 * an int32 (fast_tile checks k * 2^(p+2) <= 2^31). Where both formats have at most 5
 * exponent bits (A->valf) the products are taken in floats: each product (22 bits at
 * most, 2^-48 .. 2^32) and its term are exact there too, or a term below 1 (cut to 0
 * whatever its rounding); E is at most 127 (an f32 c's), so 2^(p-E) is a normal float. */
static void fast_chunk(int k, int p, const fast_ops *A, size_t i, const fast_ops *B, size_t j0, size_t bs,
                       int16_t e[FAST_J], double s[FAST_J], int32_t t[FAST_J])
{
    const int16_t *an = A->nexp + i * k, *bn = B->nexp + j0;
    for (int q = 0; q < k; q++)
        for (int j = 0; j < FAST_J; j++) {
            int16_t pe = (int16_t)(an[q] + bn[q * bs + j]);
            e[j] = pe > e[j] ? pe : e[j];
        }
    int32_t tl[FAST_J] = {0};           /* the sums, held in registers over the k loop */
    for (int j = 0; j < FAST_J; j++)
        s[j] = pow2(p - (e[j] < FAST_E_FLOOR ? FAST_E_FLOOR : e[j]));
    if (A->valf) {
        /* E below -60 has no nonzero product (their nominal exponents are -48 or more):
           the scale is taken at -60 there, to stay a float */
        const float *av = A->valf + i * k, *bv = B->valf + j0;
        float sf[FAST_J];
        for (int j = 0; j < FAST_J; j++)
            sf[j] = (float)pow2(p - (e[j] < -60 ? -60 : e[j]));
        for (int q = 0; q < k; q++)
#pragma GCC unroll 16
            for (int j = 0; j < FAST_J; j++)
                tl[j] += (int32_t)(av[q] * bv[q * bs + j] * sf[j]);
    } else {
        const double *av = A->val + i * k, *bv = B->val + j0;
        for (int q = 0; q < k; q++)
#pragma GCC unroll 16
            for (int j = 0; j < FAST_J; j++)
                tl[j] += (int32_t)(av[q] * bv[q * bs + j] * s[j]);
    }
    memcpy(t, tl, sizeof tl);
}

/* D = A * B + C by one native block per element (f16 / bf16 / tf32 / fp8, c and d both
 * f32 or both f16): the same bits as block_p, without unpacking per element.
 * Returns 1 when the form is not one it takes, -1 out of memory. */
static int fast_tile(int atype, int btype, int ctype, int dtype, int m, int n, int k, const uint32_t *a,
                     const uint32_t *b, const uint64_t *c, uint64_t *d, int p, int fbits)
{
    int nat = atype == SEM_T_F16 || atype == SEM_T_BF16 || atype == SEM_T_TF32 || atype == SEM_T_E4M3 ||
              atype == SEM_T_E5M2;
    int nbt = btype == SEM_T_F16 || btype == SEM_T_BF16 || btype == SEM_T_TF32 || btype == SEM_T_E4M3 ||
              btype == SEM_T_E5M2;
    if (!nat || !nbt || k > SEM_MMA_MAX_K || (int64_t)k << (p + 2) > (int64_t)1 << 31 || ctype != dtype ||
        (dtype != SEM_T_F32 && dtype != SEM_T_F16))
        return 1;
    int acc_f32 = dtype == SEM_T_F32;
    size_t np = ((size_t)n + FAST_J - 1) / FAST_J * FAST_J;     /* B's columns, padded with zeros */
    fast_ops A, B;
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    int narrow = fmt_of(atype)->ebits <= 5 && fmt_of(btype)->ebits <= 5;
    if (fast_unpack(atype, narrow, m, k, a, (size_t)k, 1, (size_t)m * k, &A) ||
        fast_unpack(btype, narrow, n, k, b, 1, np, np * k, &B)) {
        fast_free(&A);
        fast_free(&B);
        return -1;
    }
    for (int i = 0; i < m; i++)
        for (size_t j0 = 0; j0 < (size_t)n; j0 += FAST_J) {
            int16_t e[FAST_J];
            double cx[FAST_J], s[FAST_J];
            int32_t t[FAST_J];
            uint8_t slow[FAST_J];
            int jn = n - j0 < FAST_J ? (int)(n - j0) : FAST_J, any = A.special[i];
            for (int j = 0; j < FAST_J; j++) {
                int ce = FAST_ZERO_NEXP;
                uint32_t cb = j < jn ? (uint32_t)c[(size_t)i * n + j0 + j] : 0;
                slow[j] = j < jn && (B.special[j0 + j] || !(acc_f32 ? fast_decode(&F_F32, cb, &cx[j], &ce)
                                                                   : fast_decode(&F_F16, cb, &cx[j], &ce)));
                any |= slow[j];
                e[j] = (int16_t)ce;
            }
            if (!A.special[i])
                fast_chunk(k, p, &A, (size_t)i, &B, j0, np, e, s, t);
            for (int j = 0; j < jn; j++) {
                size_t o = (size_t)i * n + j0 + j;
                uint32_t r;
                if (any && (A.special[i] || slow[j])) {
                    d[o] = block_p(atype, btype, acc_f32, acc_f32, k, a + (size_t)i * k, b + (j0 + j) * k,
                                   (uint32_t)c[o], p, fbits);
                    continue;
                }
                int64_t sum = (int64_t)t[j] + (int64_t)(cx[j] * s[j]);
                if (sum == 0)
                    r = 0;
                else if (acc_f32)
                    r = f32_rz(sum, e[j] - p);
                else
                    r = round_to(&F_F16, sum < 0, sum < 0 ? (uint64_t)-sum : (uint64_t)sum, e[j] - p, 0);
                if (acc_f32 && fbits < 23 && (r & 0x7F800000u) != 0x7F800000u)
                    r &= ~((1u << (23 - fbits)) - 1);
                d[o] = r;
            }
        }
    fast_free(&A);
    fast_free(&B);
    return 0;
}

int sem_mma_tile(int atype, int btype, int ctype, int dtype, int m, int n, int k,
                 unsigned flags, const uint32_t *a, const uint32_t *b,
                 const uint64_t *c, uint64_t *d)
{
    int i, j;
    size_t ra = (size_t)sem_mma_row_len(atype, k), rb = (size_t)sem_mma_row_len(btype, k);
    if (k <= 16 && atype == btype && atype != SEM_T_E4M3 && atype != SEM_T_E5M2) {
        int rc = fast_tile(atype, btype, ctype, dtype, m, n, k, a, b, c, d, MMA_P, 23);
        if (rc <= 0)
            return rc;
    }
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++)
            if (sem_mma_dot(atype, btype, ctype, dtype, k, flags, a + (size_t)i * ra,
                            b + (size_t)j * rb, c[(size_t)i * n + j], &d[(size_t)i * n + j]))
                return -1;
    return 0;
}

/* ---- wgmma (HGMMA, QGMMA, IGMMA) --------------------------------------------- */

int sem_wgmma_dot(int atype, int btype, int dtype, int k, unsigned flags, const uint32_t *a,
                  const uint32_t *b, uint64_t c, uint64_t *d)
{
    if ((atype == SEM_T_E4M3 || atype == SEM_T_E5M2) && (btype == SEM_T_E4M3 || btype == SEM_T_E5M2)) {
        /* QGMMA: one block of all k products and c in the fp8 formats themselves (a
           subnormal's nominal exponent is its format's emin), cut at 2^(E-13), the f32
           result kept to 13 fraction bits toward zero */
        if (k <= 0 || k > SEM_MMA_MAX_K || (dtype != SEM_T_F32 && dtype != SEM_T_F16))
            return -1;
        *d = block_p(atype, btype, dtype == SEM_T_F32, dtype == SEM_T_F32, k, a, b, (uint32_t)c, QGMMA_P,
                     QGMMA_FBITS);
        return 0;
    }
    return sem_mma_dot(atype, btype, dtype, dtype, k, flags, a, b, c, d);
}

int sem_wgmma_tile(int atype, int btype, int dtype, int m, int n, int k, unsigned flags, const uint32_t *a,
                   const uint32_t *b, const uint64_t *c, uint64_t *d)
{
    size_t ra = (size_t)sem_mma_row_len(atype, k), rb = (size_t)sem_mma_row_len(btype, k);
    int fp8 = (atype == SEM_T_E4M3 || atype == SEM_T_E5M2) && (btype == SEM_T_E4M3 || btype == SEM_T_E5M2);
    if (fp8 || (k <= 16 && atype == btype)) {
        int rc = fast_tile(atype, btype, dtype, dtype, m, n, k, a, b, c, d, fp8 ? QGMMA_P : MMA_P,
                           fp8 ? QGMMA_FBITS : 23);
        if (rc <= 0)
            return rc;
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            if (sem_wgmma_dot(atype, btype, dtype, k, flags, a + (size_t)i * ra, b + (size_t)j * rb,
                              c[(size_t)i * n + j], &d[(size_t)i * n + j]))
                return -1;
    return 0;
}

/* ---- fragments --------------------------------------------------------------- */

int sem_mma_type_bits(int t)
{
    switch (t) {
    case SEM_T_F64: return 64;
    case SEM_T_F32: case SEM_T_S32: case SEM_T_TF32: return 32;
    case SEM_T_F16: case SEM_T_BF16: return 16;
    case SEM_T_E4M3: case SEM_T_E5M2: case SEM_T_S8: case SEM_T_U8: return 8;
    case SEM_MMA_T_S4: case SEM_MMA_T_U4: return 4;
    case SEM_MMA_T_B1: return 1;
    default: return 0;
    }
}

int sem_mma_type_of(const char *q)
{
    static const struct { const char *n; int t; } T[] = {
        {"f16", SEM_T_F16}, {"bf16", SEM_T_BF16}, {"tf32", SEM_T_TF32}, {"f32", SEM_T_F32},
        {"f64", SEM_T_F64}, {"e4m3", SEM_T_E4M3}, {"e5m2", SEM_T_E5M2}, {"s8", SEM_T_S8},
        {"u8", SEM_T_U8}, {"s4", SEM_MMA_T_S4}, {"u4", SEM_MMA_T_U4}, {"b1", SEM_MMA_T_B1},
        {"s32", SEM_T_S32},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        if (!strcmp(q, T[i].n))
            return T[i].t;
    return 0;
}

static int regs_of(int rows, int cols, int bits, int quads)
{
    int total = rows * cols * bits * quads / 32;      /* bits of the whole warp / 32 lanes */
    return bits == 64 ? total / 64 : total / 32;
}

void sem_mma_reg_counts(int m, int n, int k, int atype, int btype, int ctype, int dtype, int counts[4])
{
    int q = (m == 8 && n == 8 && k == 4 && atype == SEM_T_F16) ? 4 : 1;
    counts[0] = regs_of(m, n, sem_mma_type_bits(dtype), q);
    counts[1] = regs_of(m, k, sem_mma_type_bits(atype), q);
    counts[2] = regs_of(n, k, sem_mma_type_bits(btype), q);
    counts[3] = regs_of(m, n, sem_mma_type_bits(ctype), q);
}

/* ---- f64 (DMMA) ------------------------------------------------------------ */

static int nan64(uint64_t x)
{
    return (x & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
}

int sem_mma_dot_f64(int k, const uint64_t *a, const uint64_t *b, uint64_t c, uint64_t *d)
{
    double acc, x, y;
    uint64_t r;
    int i;
    /* a NaN operand comes out quieted, payload and sign kept (recorded: every NaN output
       of the four shapes, each with one NaN operand); which of several wins is assumed */
    for (i = 0; i < k; i++) {
        if (nan64(a[i])) {
            *d = a[i] | 0x0008000000000000ull;
            return 0;
        }
        if (nan64(b[i])) {
            *d = b[i] | 0x0008000000000000ull;
            return 0;
        }
    }
    if (nan64(c)) {
        *d = c | 0x0008000000000000ull;
        return 0;
    }
    memcpy(&acc, &c, 8);
    for (i = 0; i < k; i++) {
        memcpy(&x, &a[i], 8);
        memcpy(&y, &b[i], 8);
        acc = fma(x, y, acc);
    }
    memcpy(&r, &acc, 8);
    if (nan64(r))
        r = 0x7FFFFFFFFFFFFFFFull;      /* inf * 0, inf - inf: assumed canonical */
    *d = r;
    return 0;
}

/* ---- m8n8k4 .f16 (no HMMA.884 on sm_80+: f32 FFMA / FADD) --------------------- */

static float f32_of(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static float f16_to_f32(uint32_t h)
{
    mma_num v = unpack(&F_F16, h & 0xFFFF);
    uint32_t bits;
    if (v.cls == CLS_NAN)
        return f32_of(0x7FFFFFFFu);
    if (v.cls == CLS_INF)
        return f32_of(((uint32_t)v.sign << 31) | 0x7F800000u);
    bits = v.sig ? round_to(&F_F32, v.sign, v.sig, v.nexp - v.frac, 0) : 0;
    return f32_of(bits | ((uint32_t)v.sign << 31));
}

int sem_mma_dot_m8n8k4(int ctype, int dtype, const uint32_t *a, const uint32_t *b, uint64_t c, uint64_t *d)
{
    float s = 0.0f, cf;
    uint32_t r;
    int i;
    if ((ctype != SEM_T_F16 && ctype != SEM_T_F32) || (dtype != SEM_T_F16 && dtype != SEM_T_F32))
        return -1;
    cf = ctype == SEM_T_F32 ? f32_of((uint32_t)c) : f16_to_f32((uint32_t)c);
    if (dtype == SEM_T_F32) {
        for (i = 0; i < 4; i++)
            s = fmaf(f16_to_f32(a[i]), f16_to_f32(b[i]), s);
        s = s + cf;
    } else {
        float lo = fmaf(f16_to_f32(a[1]), f16_to_f32(b[1]), fmaf(f16_to_f32(a[0]), f16_to_f32(b[0]), 0.0f));
        float hi = fmaf(f16_to_f32(a[3]), f16_to_f32(b[3]), fmaf(f16_to_f32(a[2]), f16_to_f32(b[2]), 0.0f));
        s = (lo + cf) + hi;
    }
    memcpy(&r, &s, 4);
    if ((r & 0x7FFFFFFFu) > 0x7F800000u) {
        *d = dtype == SEM_T_F32 ? MMA_NAN_F32 : MMA_NAN_F16;
        return 0;
    }
    if (dtype == SEM_T_F32) {
        *d = r;
        return 0;
    }
    {
        mma_num v = unpack(&F_F32, r);
        if (v.cls == CLS_INF)
            *d = ((uint32_t)v.sign << 15) | 0x7C00u;
        else
            *d = ((uint32_t)v.sign << 15) |
                 (v.sig ? round_to(&F_F16, 0, v.sig, v.nexp - v.frac, 0) : 0);
    }
    return 0;
}
