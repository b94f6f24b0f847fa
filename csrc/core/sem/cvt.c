/* cvt.c - conversions between every pair of types (cvt, cvt.pack).
 *
 * One element at a time: the source is taken apart into an exact value
 * (sem_fp: an integer source too), then put together in the destination type,
 * rounded by sem_fp_round (a float) or by the integer roundings below (an
 * integer). The packed forms run the same element conversion per element.
 * docs/conversions.md gives each rule with its evidence.
 */
#include "sem/cvt.h"

#include "sem/farith.h"
#include "sem/fp.h"
#include "sem/resolve_parts.h"
#include "sem/sm90.h"

static inline uint64_t mask(int bits)
{
    return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

static inline int bitlen(uint64_t x)
{
    return x ? 64 - __builtin_clzll(x) : 0;
}

/* One side of a conversion: a float format, or an integer of bits. */
typedef struct {
    const sem_fmt *f;   /* NULL: an integer */
    int bits;           /* of one element */
    int is_signed;
} side;

static side side_of(int t)
{
    side s = {sem_fmt_of(t), sem_type_bits((sem_type)t), sem_type_is_signed((sem_type)t)};
    if (s.f)
        s.bits = s.f->ebits + s.f->mbits + (s.f->kind != SEM_KIND_UE8M0) + s.f->lshift;
    return s;
}

/* ---- the source: an exact value ---- */

static sem_fp int_value(uint64_t x, int bits, int is_signed)
{
    sem_fp v = {SEM_FP_ZERO, 0, 0, 0};
    x &= mask(bits);
    if (is_signed && (x >> (bits - 1)) & 1) {
        v.sign = 1;
        x = (~x + 1) & mask(bits);
        if (!x)
            x = 1ull << (bits - 1);            /* bits == 64: -2^63 */
    }
    if (x) {
        v.cls = SEM_FP_FINITE;
        v.sig = x;
    }
    return v;
}

static sem_fp value_of(const side *s, uint64_t x, int ftz)
{
    if (!s->f)
        return int_value(x, s->bits, s->is_signed);
    return sem_fp_unpack(s->f, x & mask(s->bits), ftz);
}

/* ---- integer results ---- */

/* The magnitude of v rounded to an integer by rnd (SEM_RNI..; RN.. too).
 * *big: it does not fit 64 bits. */
static uint64_t round_int(const sem_fp *v, int rnd, int *big)
{
    *big = 0;
    if (v->cls != SEM_FP_FINITE)
        return 0;
    if (v->exp >= 0) {
        if (bitlen(v->sig) + v->exp > 64) {
            *big = 1;
            return 0;
        }
        return v->sig << v->exp;
    }
    int sh = -v->exp;
    uint64_t kept;
    int rbit, st;
    if (sh > 64) {
        kept = 0;
        rbit = 0;
        st = 1;
    } else if (sh == 64) {
        kept = 0;
        rbit = (int)(v->sig >> 63);
        st = (v->sig << 1) != 0;
    } else {
        kept = v->sig >> sh;
        rbit = (int)((v->sig >> (sh - 1)) & 1);
        st = (v->sig & mask(sh - 1)) != 0;
    }
    int inc;
    switch (rnd) {
    case SEM_RZI: case SEM_RZ: inc = 0; break;
    case SEM_RMI: case SEM_RM: inc = v->sign && (rbit || st); break;
    case SEM_RPI: case SEM_RP: inc = !v->sign && (rbit || st); break;
    case SEM_RNA: inc = rbit; break;
    default: inc = rbit && (st || (kept & 1)); break;
    }
    return kept + (uint64_t)inc;
}

/* sign * mag (mag <= 2^64 - 1; big: beyond) clamped to an integer type. */
static uint64_t clamp_int(int sign, uint64_t mag, int big, int bits, int is_signed)
{
    if (is_signed) {
        uint64_t lim = 1ull << (bits - 1);
        if (sign)
            return (big || mag >= lim) ? lim : (~mag + 1);
        return (big || mag >= lim) ? lim - 1 : mag;
    }
    if (sign)
        return 0;
    return (big || mag > mask(bits)) ? mask(bits) : mag;
}

/* An integer result in its register: the type's bits; a signed 8-bit result is
 * sign-extended to its 16-bit register. */
static uint64_t int_reg(const side *d, uint64_t x)
{
    x &= mask(d->bits);
    if (d->is_signed && d->bits == 8 && (x & 0x80))
        x |= 0xFF00u;
    return x;
}

/* ---- float results ---- */

static uint64_t fmt_one(const sem_fmt *f)
{
    return sem_fp_round(f, 0, 1, 0, 0, SEM_RN, 0);
}

/* .sat of a float result: [0.0, 1.0], NaN to +0. */
static uint64_t sat_float(const sem_fmt *f, uint64_t x)
{
    sem_fp v = sem_fp_unpack(f, x, 0);
    if (v.cls == SEM_FP_NAN || v.sign)
        return 0;
    if (v.cls == SEM_FP_ZERO)
        return x;
    if (v.cls == SEM_FP_INF || (v.exp + bitlen(v.sig) - 1) >= 0)
        return fmt_one(f);                     /* >= 1 */
    return x;
}

/* v (from a float or an integer) into the float format f. */
static uint64_t to_float(const sem_ctl *k, const sem_fmt *f, const sem_fp *v)
{
    const int rnd = k->rnd;
    uint32_t fl = k->flags & (SEM_F_RELU | SEM_F_SATFINITE);
    if ((k->flags & SEM_F_FTZ) && f == &SEM_FMT_F32)
        fl |= SEM_F_FTZ;
    uint64_t r;
    if (rnd >= SEM_RNI && rnd <= SEM_RPI && v->cls == SEM_FP_FINITE) {
        int big;
        uint64_t m = round_int(v, rnd, &big);
        if (big || v->exp >= 0)
            r = sem_fp_pack(f, v, SEM_RN, fl);          /* already an integer */
        else if (!m)
            r = sem_fp_round(f, v->sign, 0, 0, 0, SEM_RN, fl);
        else
            r = sem_fp_round(f, v->sign, m, 0, 0, SEM_RN, fl);
    } else {
        r = sem_fp_pack(f, v, rnd == SEM_RND_NONE || rnd >= SEM_RNI ? SEM_RN : rnd, fl);
    }
    if (k->flags & SEM_F_SAT)
        r = sat_float(f, r);
    return r;
}

/* ---- NaN ---- */

/* A NaN's bits moved into f as the hardware's widening / narrowing does: the
 * sign and the payload's top bits kept, the quiet bit set if quiet. */
static uint64_t nan_moved(const sem_fmt *a, const sem_fmt *f, uint64_t x, int quiet)
{
    x >>= a->lshift;
    const int wa = a->ebits + a->mbits;
    uint64_t sign = (x >> wa) & 1, pay = x & mask(a->mbits);
    pay = f->mbits >= a->mbits ? pay << (f->mbits - a->mbits) : pay >> (a->mbits - f->mbits);
    if (quiet)
        pay |= 1ull << (f->mbits - 1);
    uint64_t r = (sign << (f->ebits + f->mbits)) | (mask(f->ebits) << f->mbits) | pay;
    return r << f->lshift;
}

/* The result of a NaN source x converted to the float format f. */
static uint64_t nan_to_float(const sem_ctl *k, const sem_fmt *a, const sem_fmt *f, uint64_t x)
{
    if (f->kind == SEM_KIND_FINITE)
        return sem_fp_max_finite(f, 0);        /* e2m1/e2m3/e3m2 .satfinite: NaN to +MAX_NORM */
    const int plain = k->rnd == SEM_RND_NONE && !(k->flags & (SEM_F_FTZ | SEM_F_SAT));
    if (a == &SEM_FMT_F64 && f == &SEM_FMT_F64)   /* f64 keeps its NaN; an integer rounding quietens it */
        return k->rnd >= SEM_RNI && k->rnd <= SEM_RPI ? x | (1ull << 51) : x;
    if (f == &SEM_FMT_TF32 && k->rnd == SEM_RNA) {
        /* .rna: the bits cut to tf32 (a NaN may become an infinity); .satfinite
         * then takes one unit off the all-ones exponent */
        uint64_t r = x & ~0x1FFFull;
        return (k->flags & SEM_F_SATFINITE) ? r - 0x2000u : r;
    }
    if (a == &SEM_FMT_F64)
        return nan_moved(a, f, x, 1);          /* narrowed: sign and payload's top kept, quiet */
    if (f == &SEM_FMT_F64)
        return (k->flags & SEM_F_FTZ) ? nan_moved(&SEM_FMT_F32, f, SM90_NAN_F32, 1)
                                      : nan_moved(a, f, x, 1);
    if (a == &SEM_FMT_F32 && f == &SEM_FMT_F32 && plain)
        return x;                              /* cvt.f32.f32: the bits as they are */
    if (a == &SEM_FMT_BF16 && f == &SEM_FMT_F32 && !(k->flags & SEM_F_FTZ))
        return x << 16;                        /* bf16 to f32: the bits shifted, not quietened */
    return f->nan;
}

/* ---- one element ---- */

static uint64_t cvt1(const sem_ctl *k, const side *d, const side *a, uint64_t x)
{
    /* .ftz flushes a subnormal f32 source, except into f16 (there .ftz does nothing) */
    int ftz_in = (k->flags & SEM_F_FTZ) && a->f == &SEM_FMT_F32 && d->f != &SEM_FMT_F16;
    sem_fp v = value_of(a, x, ftz_in);
    if (d->f == &SEM_FMT_UE8M0 && v.cls != SEM_FP_NAN) {
        /* ue8m0 holds no sign: .relu takes a negative to 0 (then the smallest,
         * 2^-127), otherwise the magnitude converts (ISA: "a positive MAX_NORM
         * in .ue8m0x2 for which the destination sign is not supported") */
        if ((k->flags & SEM_F_RELU) && v.sign)
            v.cls = SEM_FP_ZERO;
        v.sign = 0;
    }
    if (d->f) {
        if (v.cls == SEM_FP_NAN && !(k->flags & SEM_F_SAT))
            return nan_to_float(k, a->f, d->f, x & mask(a->bits));
        return to_float(k, d->f, &v);
    }
    if (!a->f) {                               /* integer to integer */
        if (k->flags & SEM_F_SAT)
            return int_reg(d, clamp_int(v.sign, v.sig, 0, d->bits, d->is_signed));
        uint64_t b = v.sign ? ~v.sig + 1 : v.sig;
        return int_reg(d, b);
    }
    if (v.cls == SEM_FP_NAN) {                 /* f64: the smallest signed; 64 bits: 2^63 */
        if (a->f == &SEM_FMT_F64 || d->bits == 64)
            return int_reg(d, 1ull << (d->bits - 1));
        return 0;
    }
    int big;
    uint64_t m = round_int(&v, k->rnd, &big);
    if (v.cls == SEM_FP_INF)
        big = 1;                               /* saturates */
    return int_reg(d, clamp_int(v.sign, m, big, d->bits, d->is_signed));
}

/* ---- stochastic rounding (.rs) ---- */

/* v (an f32's value) into f rounded by .rs: toward zero, or away from zero
 * when adding the R random bits r to the discarded bits of the significand
 * (their top R bits, under the result's last place) carries out. */
static uint64_t round_rs(const sem_ctl *k, const sem_fmt *f, const sem_fp *v, uint32_t r, int R)
{
    if (v->cls == SEM_FP_NAN)
        return f->kind == SEM_KIND_FINITE ? sem_fp_max_finite(f, 0) : f->nan;
    if (v->cls != SEM_FP_FINITE)
        return to_float(k, f, v);
    uint32_t fl = k->flags & (SEM_F_RELU | SEM_F_SATFINITE);
    int L = v->exp + bitlen(v->sig) - 1;
    int emin = 1 - f->bias;
    int q = (L >= emin ? L : emin) - f->mbits;  /* the result's last place */
    int away = 0;
    if (v->exp < q) {
        int sh = q - v->exp;                   /* discarded bits */
        uint64_t frac = sh >= 64 ? v->sig : v->sig & mask(sh);
        uint64_t top = sh < R ? frac << (R - sh) : sh - R >= 64 ? 0 : frac >> (sh - R);
        away = top + (r & mask(R)) >= (1ull << R);
    }
    int rnd = away ? (v->sign ? SEM_RM : SEM_RP) : SEM_RZ;
    return sem_fp_round(f, v->sign, v->sig, v->exp, 0, rnd, fl);
}

/* ---- lane functions ---- */

static void cvt_scalar(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    side D = side_of(k->dt), A = side_of(k->at);
    for (size_t i = 0; i < n; i++)
        d[0][i] = cvt1(k, &D, &A, s[0][i]);
}

/* Two f32 sources into an x2 type: a to the upper element, b to the lower.
 * .rs (f16x2 / bf16x2): rbits in s[2], a's random bits in its upper half (f16:
 * the 13 low bits of each half, bf16: all 16). */
static void cvt_pair(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    side D = side_of(k->dt), A = side_of(k->at);
    const int w = sem_type_bits((sem_type)k->dt) / 2;
    const int R = D.f == &SEM_FMT_F16 ? 13 : 16;
    for (size_t i = 0; i < n; i++) {
        uint64_t hi, lo;
        if (k->rnd == SEM_RS) {
            uint32_t r = (uint32_t)s[2][i];
            sem_fp va = value_of(&A, s[0][i], 0), vb = value_of(&A, s[1][i], 0);
            hi = round_rs(k, D.f, &va, r >> 16, R);
            lo = round_rs(k, D.f, &vb, r & 0xFFFFu, R);
        } else {
            hi = cvt1(k, &D, &A, s[0][i]);
            lo = cvt1(k, &D, &A, s[1][i]);
        }
        d[0][i] = (hi << w) | lo;
    }
}

/* cvt.rs{.relu}.satfinite.{e4m3x4,e5m2x4,e2m3x4,e3m2x4,e2m1x4}.f32 d, {a, b,
 * e, f}, rbits: a in the top element. rbits (in d[1], cvt.h): the upper 16
 * bits for a and b, the lower for e and f; e2m1x4: 8 bits each, a [31:24],
 * b [15:8], e [23:16], f [7:0]. */
static void cvt_x4_rs(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    side D = side_of(k->dt), A = side_of(k->at);
    const int w = sem_type_bits((sem_type)k->dt) / 4;
    const int f4 = D.f == &SEM_FMT_E2M1;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = (uint32_t)d[1][i], rb[4];
        if (f4) {
            rb[0] = r >> 24;
            rb[1] = (r >> 8) & 0xFF;
            rb[2] = (r >> 16) & 0xFF;
            rb[3] = r & 0xFF;
        } else {
            rb[0] = rb[1] = r >> 16;
            rb[2] = rb[3] = r & 0xFFFF;
        }
        uint64_t out = 0;
        for (int j = 0; j < 4; j++) {
            sem_fp v = value_of(&A, s[j][i], 0);
            out = (out << w) | round_rs(k, D.f, &v, rb[j], f4 ? 8 : 16);
        }
        d[0][i] = out;
    }
}

/* ---- s2f6: 8-bit two's complement fixed point, value = s8 * 2^-6 ---- */

/* The ue8m0 scale of element j (1 the upper) of the scale-factor operand
 * (.scaled::n2::ue8m0, cvt.h), else 0x7F (1.0). */
static unsigned scale_of(const sem_ctl *k, const uint64_t *sf, size_t i, int j)
{
    return k->aux ? (unsigned)(sf[i] >> (8 * j)) & 0xFF : 0x7F;
}

/* v / 2^(E - 127) into s2f6: rounded to nearest even, clamped to
 * [-2.0, 1.984375]; NaN (or a NaN scale) to +MAX_NORM; .relu: negative to 0. */
static uint64_t to_s2f6(const sem_ctl *k, sem_fp v, unsigned E)
{
    if (v.cls == SEM_FP_NAN || E == 0xFF)
        return 0x7F;
    if ((k->flags & SEM_F_RELU) && v.sign)
        return 0;
    int big = v.cls == SEM_FP_INF;
    uint64_t m = 0;
    if (v.cls == SEM_FP_FINITE) {
        v.exp += 6 - ((int)E - 127);
        m = round_int(&v, SEM_RN, &big);
    }
    return clamp_int(v.sign, m, big, 8, 1) & 0xFF;
}

/* s2f6 x into bf16, times 2^(E - 127). */
static uint64_t from_s2f6(const sem_ctl *k, uint64_t x, unsigned E)
{
    if (E == 0xFF)
        return SM90_NAN_BF16;
    sem_fp v = int_value(x, 8, 1);
    v.exp = -6 + ((int)E - 127);
    return to_float(k, &SEM_FMT_BF16, &v);
}

static void cvt_s2f6_pair(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    side A = side_of(k->at);
    for (size_t i = 0; i < n; i++) {
        uint64_t hi = to_s2f6(k, value_of(&A, s[0][i], 0), scale_of(k, s[2], i, 1));
        uint64_t lo = to_s2f6(k, value_of(&A, s[1][i], 0), scale_of(k, s[2], i, 0));
        d[0][i] = (hi << 8) | lo;
    }
}

static void cvt_s2f6_x2(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    side A = side_of(k->at);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = s[0][i];
        uint64_t hi = to_s2f6(k, value_of(&A, x >> 16, 0), scale_of(k, s[1], i, 1));
        uint64_t lo = to_s2f6(k, value_of(&A, x & 0xFFFF, 0), scale_of(k, s[1], i, 0));
        d[0][i] = (hi << 8) | lo;
    }
}

static void cvt_from_s2f6(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = s[0][i];
        uint64_t hi = from_s2f6(k, (x >> 8) & 0xFF, scale_of(k, s[1], i, 1));
        uint64_t lo = from_s2f6(k, x & 0xFF, scale_of(k, s[1], i, 0));
        d[0][i] = (hi << 16) | lo;
    }
}

/* One x2 source into an x2 type, element by element. */
static void cvt_x2(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    side D = side_of(k->dt), A = side_of(k->at);
    const int wd = sem_type_bits((sem_type)k->dt) / 2, wa = sem_type_bits((sem_type)k->at) / 2;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = s[0][i];
        uint64_t hi = cvt1(k, &D, &A, x >> wa), lo = cvt1(k, &D, &A, x & mask(wa));
        d[0][i] = (hi << wd) | lo;
    }
}

/* cvt.pack.sat: a and b clamped to the convertType, a above b, then c above
 * both (the 8-bit and narrower forms). */
static void cvt_pack(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const int w = sem_cvt_pack_bits(k), sg = sem_type_is_signed((sem_type)k->dt);
    const int with_c = k->bt != SEM_T_NONE;
    for (size_t i = 0; i < n; i++) {
        sem_fp a = int_value(s[0][i], 32, 1), b = int_value(s[1][i], 32, 1);
        uint64_t ta = clamp_int(a.sign, a.sig, 0, w, sg) & mask(w);
        uint64_t tb = clamp_int(b.sign, b.sig, 0, w, sg) & mask(w);
        uint64_t r = (ta << w) | tb;
        if (with_c)
            r |= s[2][i] << (2 * w);
        d[0][i] = r & 0xFFFFFFFFu;
    }
}

/* ---- which ---- */

static int is_x2(int t)
{
    switch (t) {
    case SEM_T_F16X2: case SEM_T_BF16X2: case SEM_T_E4M3X2: case SEM_T_E5M2X2:
    case SEM_T_E2M1X2: case SEM_T_E2M3X2: case SEM_T_E3M2X2: case SEM_T_UE8M0X2:
        return 1;
    default:
        return 0;
    }
}

static int is_x4(int t)
{
    switch (t) {
    case SEM_T_E4M3X4: case SEM_T_E5M2X4: case SEM_T_E2M1X4: case SEM_T_E2M3X4: case SEM_T_E3M2X4:
        return 1;
    default:
        return 0;
    }
}

static int is_scalar(int t)
{
    switch (t) {
    case SEM_T_U8: case SEM_T_U16: case SEM_T_U32: case SEM_T_U64:
    case SEM_T_S8: case SEM_T_S16: case SEM_T_S32: case SEM_T_S64:
    case SEM_T_F16: case SEM_T_BF16: case SEM_T_F32: case SEM_T_F64:
        return 1;
    default:
        return 0;
    }
}

int sem_resolve_cvt(const sem_ctl *k, sem_impl *out, const char **why)
{
    const int dt = k->dt, at = k->at;
    const int wd = sem_type_reg_bits((sem_type)dt), wa = sem_type_reg_bits((sem_type)at);
    if (k->op == SEM_OP_CVT_PACK) {
        int w = sem_cvt_pack_bits(k);
        if (at != SEM_T_S32 || !(dt == SEM_T_U8 || dt == SEM_T_S8 || dt == SEM_T_U16 || dt == SEM_T_S16) ||
            !(w == 2 || w == 4 || w == 8 || w == 16) || (w == 16) != (k->bt == SEM_T_NONE)) {
            *why = "cvt.pack converts two .s32 to .u16/.s16, or with a .b32 to .u2/.s2/.u4/.s4/.u8/.s8";
            return -1;
        }
        return sem_found(out, cvt_pack, 32, 32, 32, w == 16 ? 0 : 32);
    }
    if (k->rnd == SEM_RS) {
        if ((dt == SEM_T_F16X2 || dt == SEM_T_BF16X2) && at == SEM_T_F32)
            return sem_found(out, cvt_pair, 32, 32, 32, 32);
        if (is_x4(dt) && at == SEM_T_F32) {
            sem_found(out, cvt_x4_rs, wd, 32, 32, 32);
            out->ws[3] = 32;
            out->wd[1] = 32;                   /* rbits, read from d[1] (cvt.h) */
            return 0;
        }
        *why = ".rs converts .f32 to .f16x2, .bf16x2 or a four-element type";
        return -1;
    }
    if (dt == SEM_T_S2F6X2 && at == SEM_T_F32)
        return sem_found(out, cvt_s2f6_pair, 16, 32, 32, k->aux ? 16 : 0);
    if (dt == SEM_T_S2F6X2 && at == SEM_T_BF16X2)
        return sem_found(out, cvt_s2f6_x2, 16, 32, k->aux ? 16 : 0, 0);
    if (dt == SEM_T_BF16X2 && at == SEM_T_S2F6X2)
        return sem_found(out, cvt_from_s2f6, 32, 16, k->aux ? 16 : 0, 0);
    if (dt == SEM_T_TF32 && at == SEM_T_F32)
        return sem_found(out, cvt_scalar, 32, 32, 0, 0);
    if (is_scalar(dt) && is_scalar(at))
        return sem_found(out, cvt_scalar, wd, wa, 0, 0);
    if (is_x2(dt) && at == SEM_T_F32)
        return sem_found(out, cvt_pair, wd, 32, 32, 0);
    if (is_x2(dt) && is_x2(at))
        return sem_found(out, cvt_x2, wd, wa, 0, 0);
    *why = "this conversion is not modelled yet";
    return 1;
}
