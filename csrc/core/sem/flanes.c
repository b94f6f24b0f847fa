/* flanes.c - the floating-point operations on lanes: each a loop of one
 * element's function (farith.c) over the lanes, the packed x2 forms once per
 * half. */
#include "sem/flanes.h"

#include <string.h>

#include "sem/farith.h"

#define LANES(name, body)                                                                          \
    void name(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)        \
    {                                                                                              \
        for (size_t i = 0; i < n; i++) {                                                           \
            const uint64_t a = s[0][i], b = s[1][i], c = s[2][i];                                  \
            (void)a; (void)b; (void)c;                                                             \
            body;                                                                                  \
        }                                                                                          \
    }

LANES(sem_arith_f32, d[0][i] = sem_farith1(k, &SEM_FMT_F32, a & 0xFFFFFFFFu, b & 0xFFFFFFFFu, c & 0xFFFFFFFFu))
LANES(sem_arith_f16, d[0][i] = sem_farith1(k, &SEM_FMT_F16, a & 0xFFFF, b & 0xFFFF, c & 0xFFFF))
LANES(sem_arith_bf16, d[0][i] = sem_farith1(k, &SEM_FMT_BF16, a & 0xFFFF, b & 0xFFFF, c & 0xFFFF))
LANES(sem_arith_f16x2, d[0][i] = sem_farith1(k, &SEM_FMT_F16, a & 0xFFFF, b & 0xFFFF, c & 0xFFFF) |
                                 sem_farith1(k, &SEM_FMT_F16, (a >> 16) & 0xFFFF, (b >> 16) & 0xFFFF,
                                             (c >> 16) & 0xFFFF) << 16)
LANES(sem_arith_bf16x2, d[0][i] = sem_farith1(k, &SEM_FMT_BF16, a & 0xFFFF, b & 0xFFFF, c & 0xFFFF) |
                                  sem_farith1(k, &SEM_FMT_BF16, (a >> 16) & 0xFFFF, (b >> 16) & 0xFFFF,
                                              (c >> 16) & 0xFFFF) << 16)
LANES(sem_arith_f64, d[0][i] = sem_f64arith1(k, a, b, c))

LANES(sem_minmax_f32, d[0][i] = sem_fminmax1(k, &SEM_FMT_F32, a & 0xFFFFFFFFu, b & 0xFFFFFFFFu))
LANES(sem_minmax_f64, d[0][i] = sem_fminmax1(k, &SEM_FMT_F64, a, b))
LANES(sem_minmax_f16, d[0][i] = sem_fminmax1(k, &SEM_FMT_F16, a & 0xFFFF, b & 0xFFFF))
LANES(sem_minmax_bf16, d[0][i] = sem_fminmax1(k, &SEM_FMT_BF16, a & 0xFFFF, b & 0xFFFF))
LANES(sem_minmax_f16x2, d[0][i] = sem_fminmax1(k, &SEM_FMT_F16, a & 0xFFFF, b & 0xFFFF) |
                                  sem_fminmax1(k, &SEM_FMT_F16, (a >> 16) & 0xFFFF, (b >> 16) & 0xFFFF) << 16)
LANES(sem_minmax_bf16x2, d[0][i] = sem_fminmax1(k, &SEM_FMT_BF16, a & 0xFFFF, b & 0xFFFF) |
                                   sem_fminmax1(k, &SEM_FMT_BF16, (a >> 16) & 0xFFFF, (b >> 16) & 0xFFFF) << 16)

/* neg / abs: the sign bit of each element (.ftz: a subnormal is a zero first).
 * A NaN operand is no sign operation on an H200: an f32, f16 or bf16 NaN (each
 * half of an x2) gives the canonical NaN, an f64 NaN comes through quieted with
 * its sign (random programs, tests/data/randprog: 144,211 of 144,384 neg/abs
 * results of 1,500 programs, 23,556 NaN elements among their operands; the 173
 * others are in the test's list of known differences). */
static uint64_t sign_op(const sem_ctl *k, const sem_fmt *f, uint64_t a)
{
    const unsigned sbit = (unsigned)f->ebits + f->mbits;
    const uint64_t emax = (1ull << f->ebits) - 1;
    if (((a >> f->mbits) & emax) == emax && (a & ((1ull << f->mbits) - 1)))
        return f == &SEM_FMT_F64 ? a | 1ull << (f->mbits - 1) : (1ull << sbit) - 1;
    if ((k->flags & SEM_F_FTZ) && !((a >> f->mbits) & ((1ull << f->ebits) - 1)))
        a &= 1ull << sbit;
    return k->op == SEM_OP_NEG ? a ^ (1ull << sbit) : a & ((1ull << sbit) - 1);
}

static void sign_lanes(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const sem_fmt *f = sem_fmt_of(k->at);
    const int x2 = k->at == SEM_T_F16X2 || k->at == SEM_T_BF16X2;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = s[0][i];
        d[0][i] = x2 ? sign_op(k, f, a & 0xFFFF) | sign_op(k, f, (a >> 16) & 0xFFFF) << 16 : sign_op(k, f, a);
    }
}
sem_fn sem_sign_lanes = sign_lanes;

static double val(const sem_fmt *f, uint64_t x, int ftz)
{
    sem_fp v = sem_fp_unpack(f, x, ftz);
    return sem_fp_to_double(&v);
}

/* setp.cmp{.bool}.ftype p|q, a, b{, c}: p = (a cmp b) bool c, q = !(a cmp b) bool c.
 * An x2 type compares each half (9.7.4, half precision setp): p = (a.lo cmp b.lo) bool c,
 * q = (a.hi cmp b.hi) bool c. .ftz flushes a subnormal operand to a zero of its sign. */
void sem_setp_float(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const sem_fmt *f = sem_fmt_of(k->at);
    const int ftz = (k->flags & SEM_F_FTZ) != 0, x2 = k->at == SEM_T_F16X2 || k->at == SEM_T_BF16X2;
    for (size_t i = 0; i < n; i++) {
        const uint64_t a = s[0][i], b = s[1][i];
        int c = (int)((s[2][i] ^ (k->neg >> 2)) & 1);
        if (x2) {
            int lo = sem_fcmp(k->aux, val(f, a & 0xFFFF, ftz), val(f, b & 0xFFFF, ftz));
            int hi = sem_fcmp(k->aux, val(f, (a >> 16) & 0xFFFF, ftz), val(f, (b >> 16) & 0xFFFF, ftz));
            d[1][i] = (uint64_t)sem_combine(k->aux2, hi, c);
            d[0][i] = (uint64_t)sem_combine(k->aux2, lo, c);
            continue;
        }
        int v = sem_fcmp(k->aux, val(f, a, ftz), val(f, b, ftz));
        d[1][i] = (uint64_t)sem_combine(k->aux2, !v, c);
        d[0][i] = (uint64_t)sem_combine(k->aux2, v, c);
    }
}

void sem_setp_int(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const int bits = sem_type_bits(k->at), sg = sem_type_is_signed(k->at);
    for (size_t i = 0; i < n; i++) {
        int v = sem_icmp(k->aux, s[0][i], s[1][i], bits, sg);
        int c = (int)((s[2][i] ^ (k->neg >> 2)) & 1);
        d[1][i] = (uint64_t)sem_combine(k->aux2, !v, c);
        d[0][i] = (uint64_t)sem_combine(k->aux2, v, c);
    }
}

/* What set writes for true: 1.0 in a float dtype, all ones in an integer one
 * (9.7.3.x, 9.7.4.x); of an x2 source, per half: 1.0 of the x2 dtype or 0xFFFF. */
static uint64_t set_true(int dt, int x2)
{
    switch (dt) {
    case SEM_T_F32: return 0x3F800000u;
    case SEM_T_F16: case SEM_T_F16X2: return 0x3C00;
    case SEM_T_BF16: case SEM_T_BF16X2: return 0x3F80;
    case SEM_T_U16: case SEM_T_S16: return 0xFFFF;
    default: return x2 ? 0xFFFF : 0xFFFFFFFFu;
    }
}

/* set.cmp{.bool}.dtype.stype d, a, b{, c}: set_true or 0; an x2 source writes each half from
 * its halves' compare. */
void sem_set(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const sem_fmt *f = sem_fmt_of(k->at);
    const int ftz = (k->flags & SEM_F_FTZ) != 0, bits = sem_type_bits(k->at), sg = sem_type_is_signed(k->at);
    const int x2 = k->at == SEM_T_F16X2 || k->at == SEM_T_BF16X2;
    const uint64_t yes = set_true(k->dt, x2);
    for (size_t i = 0; i < n; i++) {
        const uint64_t a = s[0][i], b = s[1][i];
        const int c = (int)((s[2][i] ^ (k->neg >> 2)) & 1);
        if (x2) {
            int lo = sem_fcmp(k->aux, val(f, a & 0xFFFF, ftz), val(f, b & 0xFFFF, ftz));
            int hi = sem_fcmp(k->aux, val(f, (a >> 16) & 0xFFFF, ftz), val(f, (b >> 16) & 0xFFFF, ftz));
            d[0][i] = (sem_combine(k->aux2, lo, c) ? yes : 0) | (sem_combine(k->aux2, hi, c) ? yes : 0) << 16;
            continue;
        }
        int v = f ? sem_fcmp(k->aux, val(f, a, ftz), val(f, b, ftz)) : sem_icmp(k->aux, a, b, bits, sg);
        d[0][i] = sem_combine(k->aux2, v, c) ? yes : 0;
    }
}

/* testp.class.ftype p, a. */
void sem_testp(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const sem_fmt *f = sem_fmt_of(k->at);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = s[0][i];
        uint64_t E = (x >> f->mbits) & ((1ull << f->ebits) - 1), M = x & ((1ull << f->mbits) - 1);
        uint64_t emax = (1ull << f->ebits) - 1;
        int r;
        switch (k->aux) {
        case 0: r = E != emax; break;                      /* finite */
        case 1: r = E == emax && !M; break;                /* infinite */
        case 2: r = !(E == emax && M); break;              /* number */
        case 3: r = E == emax && M; break;                 /* notanumber */
        case 4: r = (E && E != emax) || (!E && !M); break; /* normal, +-0 too (sm90.h) */
        default: r = !E && M; break;                       /* subnormal */
        }
        d[0][i] = (uint64_t)r;
    }
}

/* copysign.ftype d, a, b: b with a's sign. */
void sem_copysign(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const sem_fmt *f = sem_fmt_of(k->at);
    const uint64_t sb = 1ull << (f->ebits + f->mbits);
    for (size_t i = 0; i < n; i++)
        d[0][i] = (s[1][i] & (sb - 1)) | (s[0][i] & sb);
}
