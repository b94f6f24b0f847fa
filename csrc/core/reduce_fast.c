/* reduce_fast.c - one loop per (redOp, element kind) (see reduce_fast.h).
 *
 * Elements are read and written as whole little-endian words (memcpy of a
 * constant size: one load, one store); the bitwise ops run 8 bytes at a time
 * whatever the element width. Float add:
 *   f32 / f64:    the host adder, NaN results replaced as the hardware does;
 *   f16 / bf16:   exact widening to f32, one f32 add, one RNE narrowing;
 *                 bit-identical to a single rounding of the exact sum because
 *                 24 >= 2p + 2 (p = 11, 8): docs/reductions.md, "Fast paths".
 * Float min/max on f16/bf16 compare integer keys: no float hardware at all.
 * Where the CPU has vector instructions, the adds and bitwise ops come from
 * reduce_x86.c instead (pa_simd_level() when the operation is set up).
 */
#include "reduce_fast.h"

#include <float.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(__FAST_MATH__) && \
    FLT_EVAL_METHOD == 0
#define PA_FAST_FLOAT 1   /* native words are the PTX little-endian layout; float is binary32 */
#else
#define PA_FAST_FLOAT 0
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PA_NATIVE_LE 1
#else
#define PA_NATIVE_LE 0
#endif

static inline uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t dbits(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
static inline double bitsd(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

int pa_host_float_exact(void)
{
#if PA_FAST_FLOAT
    /* volatile: computed now, in this thread's environment, never folded */
    volatile float one = 1.0f, half_ulp = 0x1p-24f, three_quarter_ulp = 0x1.8p-24f;
    volatile float sub = 0x1p-149f, norm = 0x1.000002p-126f, min_norm = 0x1p-126f;
    volatile double done = 1.0, dhalf = 0x1p-53, dsub = 0x1p-1074;
    /* results compared as bit patterns: under DAZ a float compare would flush too */
    return fbits(one + half_ulp) == 0x3F800000u &&              /* tie -> even (not up) */
           fbits(one + three_quarter_ulp) == 0x3F800001u &&     /* above half -> up (not toward 0/-inf) */
           fbits(-one - three_quarter_ulp) == 0xBF800001u &&    /* symmetric (not toward +inf) */
           fbits(sub + sub) == 0x00000002u &&                   /* subnormal inputs kept (no DAZ) */
           fbits(norm - min_norm) == 0x00000001u &&             /* subnormal results kept (no FTZ) */
           dbits(done + dhalf) == dbits(1.0) &&
           dbits(dsub + dsub) == 2u;
#else
    return 0;
#endif
}

int pa_ekind_uses_host_float(pa_redop op, pa_ekind k)
{
    return op == PA_RED_ADD &&
           (k == PA_EK_F16 || k == PA_EK_BF16 || k == PA_EK_F32 || k == PA_EK_F32_FTZ || k == PA_EK_F64);
}

/* ------------------------------------------------------------ integers */

/* One loop per (op, kind): blocks of 64 bytes with a constant trip count (the
 * compiler turns them into vector code), then the tail one element at a time. */
#define KERNEL(name, T, f)                                                                  \
    static void name(const pa_reducer *r, uint8_t *dst, const uint8_t *src, size_t n)      \
    {                                                                                       \
        enum { B = 64 / sizeof(T) };                                                        \
        size_t i = 0;                                                                       \
        (void)r;                                                                            \
        for (; i + B <= n; i += B) {                                                        \
            T d[B], s[B];                                                                   \
            memcpy(d, dst + i * sizeof(T), sizeof d);                                       \
            memcpy(s, src + i * sizeof(T), sizeof s);                                       \
            for (size_t j = 0; j < B; j++)                                                  \
                d[j] = f(d[j], s[j]);                                                       \
            memcpy(dst + i * sizeof(T), d, sizeof d);                                       \
        }                                                                                   \
        for (; i < n; i++) {                                                                \
            T d, s;                                                                         \
            memcpy(&d, dst + i * sizeof(T), sizeof(T));                                     \
            memcpy(&s, src + i * sizeof(T), sizeof(T));                                     \
            d = f(d, s);                                                                    \
            memcpy(dst + i * sizeof(T), &d, sizeof(T));                                     \
        }                                                                                   \
    }

#define ELEM(name, T, expr) static inline T name(T d, T s) { return (expr); }

ELEM(e_add_u32, uint32_t, d + s)
ELEM(e_add_u64, uint64_t, d + s)
ELEM(e_min_u32, uint32_t, s < d ? s : d)
ELEM(e_max_u32, uint32_t, s > d ? s : d)
ELEM(e_min_u64, uint64_t, s < d ? s : d)
ELEM(e_max_u64, uint64_t, s > d ? s : d)
ELEM(e_min_s32, int32_t, s < d ? s : d)
ELEM(e_max_s32, int32_t, s > d ? s : d)
ELEM(e_min_s64, int64_t, s < d ? s : d)
ELEM(e_max_s64, int64_t, s > d ? s : d)
ELEM(e_inc_u32, uint32_t, d >= s ? 0u : d + 1u)
ELEM(e_dec_u32, uint32_t, (d == 0 || d > s) ? s : d - 1u)
ELEM(e_and, uint64_t, d & s)
ELEM(e_or, uint64_t, d | s)
ELEM(e_xor, uint64_t, d ^ s)

KERNEL(add_u32, uint32_t, e_add_u32)
KERNEL(add_u64, uint64_t, e_add_u64)
KERNEL(min_u32, uint32_t, e_min_u32)
KERNEL(max_u32, uint32_t, e_max_u32)
KERNEL(min_u64, uint64_t, e_min_u64)
KERNEL(max_u64, uint64_t, e_max_u64)
KERNEL(min_s32, int32_t, e_min_s32)
KERNEL(max_s32, int32_t, e_max_s32)
KERNEL(min_s64, int64_t, e_min_s64)
KERNEL(max_s64, int64_t, e_max_s64)
KERNEL(inc_u32, uint32_t, e_inc_u32)
KERNEL(dec_u32, uint32_t, e_dec_u32)
KERNEL(and_words, uint64_t, e_and)
KERNEL(or_words, uint64_t, e_or)
KERNEL(xor_words, uint64_t, e_xor)

/* and/or/xor: the same bits whatever the element width (4 or 8 bytes) */
#define BITWISE(name, words, OP)                                                     \
    static void name(const pa_reducer *r, uint8_t *dst, const uint8_t *src, size_t n) \
    {                                                                                \
        size_t bytes = n * r->esize, i = bytes & ~(size_t)7;                         \
        words(r, dst, src, bytes / 8);                                               \
        for (; i < bytes; i++)                                                       \
            dst[i] = (uint8_t)(dst[i] OP src[i]);                                    \
    }

BITWISE(and_bits, and_words, &)
BITWISE(or_bits, or_words, |)
BITWISE(xor_bits, xor_words, ^)

/* ------------------------------------------------------- f16 / bf16 keys */

/* A signed key monotonic in the value, -0 below +0 (the order min/max use). */
static inline int32_t half_key(uint32_t x)
{
    return (x & 0x8000u) ? -(int32_t)(x & 0x7FFFu) - 1 : (int32_t)(x & 0x7FFFu);
}

/* one NaN gives the other operand, two give 0x7FFF; ties keep d */
static inline uint16_t half_minmax(uint16_t d, uint16_t s, uint32_t exp_mask, int is_max)
{
    int nd = (d & 0x7FFFu) > exp_mask, ns = (s & 0x7FFFu) > exp_mask;
    int32_t kd = half_key(d), ks = half_key(s);
    uint16_t v = is_max ? (kd >= ks ? d : s) : (kd <= ks ? d : s);
    return nd ? (ns ? 0x7FFFu : s) : (ns ? d : v);
}

ELEM(e_min_f16, uint16_t, half_minmax(d, s, 0x7C00u, 0))
ELEM(e_max_f16, uint16_t, half_minmax(d, s, 0x7C00u, 1))
ELEM(e_min_bf16, uint16_t, half_minmax(d, s, 0x7F80u, 0))
ELEM(e_max_bf16, uint16_t, half_minmax(d, s, 0x7F80u, 1))
KERNEL(min_f16, uint16_t, e_min_f16)
KERNEL(max_f16, uint16_t, e_max_f16)
KERNEL(min_bf16, uint16_t, e_min_bf16)
KERNEL(max_bf16, uint16_t, e_max_bf16)

#if PA_FAST_FLOAT
/* ------------------------------------------------------------ float add */

/* f16 -> f32, exact. Subnormals: m * 2^-24 (both steps exact, result normal). */
static inline float f16_to_f32(uint32_t h)
{
    uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0)
        return bitsf(fbits((float)m * 0x1p-24f) | sign);
    if (e == 0x1F)
        return bitsf(sign | 0x7F800000u | (m << 13));
    return bitsf(sign | ((e + 112u) << 23) | (m << 13));
}

/* f32 (not NaN) -> f16, round to nearest even, overflow to infinity. */
static inline uint32_t f32_to_f16(uint32_t x)
{
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
    if (ax >= 0x38800000u) {                      /* >= 2^-14: an f16 normal, or overflow */
        uint32_t r = ax - (112u << 23);           /* rebias 127 -> 15 */
        r = (r + 0xFFFu + ((r >> 13) & 1u)) >> 13;
        return sign | (r < 0x7C00u ? r : 0x7C00u);
    }
    if (ax <= 0x33000000u)                        /* <= 2^-25: rounds to zero (2^-25 ties to even 0) */
        return sign;
    /* f16 subnormal: ax = m * 2^(E-150), the result n * 2^-24 with n = m >> (126 - E) rounded */
    uint32_t m = (ax & 0x7FFFFFu) | 0x800000u, shift = 126u - (ax >> 23);
    uint32_t n = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    n += rem > half || (rem == half && (n & 1u));
    return sign | n;
}

static inline uint16_t e_add_f16(uint16_t d, uint16_t s)
{
    uint32_t sum = fbits(f16_to_f32(d) + f16_to_f32(s));
    return (sum & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFu : (uint16_t)f32_to_f16(sum);
}

static inline uint16_t e_add_bf16(uint16_t d, uint16_t s)
{
    uint32_t sum = fbits(bitsf((uint32_t)d << 16) + bitsf((uint32_t)s << 16));
    /* RNE to the top 16 bits; a carry out of the largest finite gives infinity */
    uint32_t v = (sum + 0x7FFFu + ((sum >> 16) & 1u)) >> 16;
    return (sum & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFu : (uint16_t)v;
}

static inline uint32_t e_add_f32(uint32_t d, uint32_t s)
{
    uint32_t v = fbits(bitsf(d) + bitsf(s));
    return (v & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFFFFFu : v;   /* canonical NaN */
}

/* FLOAT32_FTZ maps: subnormal inputs and results become the zero of their sign */
static inline uint32_t ftz32(uint32_t x)
{
    return (x & 0x7F800000u) ? x : (x & 0x80000000u);
}

static inline uint32_t e_add_f32_ftz(uint32_t d, uint32_t s)
{
    uint32_t v = fbits(bitsf(ftz32(d)) + bitsf(ftz32(s)));
    return (v & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFFFFFu : ftz32(v);
}

/* f64: a NaN operand passes unchanged (the source's first), inf + -inf gives
 * 0xFFF8000000000000 */
static inline uint64_t e_add_f64(uint64_t d, uint64_t s)
{
    const uint64_t inf = UINT64_C(0x7FF0000000000000), mag = ~(UINT64_C(1) << 63);
    uint64_t v = dbits(bitsd(d) + bitsd(s));
    if ((v & mag) > inf)
        v = (s & mag) > inf ? s : (d & mag) > inf ? d : UINT64_C(0xFFF8000000000000);
    return v;
}

KERNEL(add_f16, uint16_t, e_add_f16)
KERNEL(add_bf16, uint16_t, e_add_bf16)
KERNEL(add_f32, uint32_t, e_add_f32)
KERNEL(add_f32_ftz, uint32_t, e_add_f32_ftz)
KERNEL(add_f64, uint64_t, e_add_f64)
#endif

pa_reduce_loop pa_reduce_fast_loop(pa_redop op, pa_ekind k)
{
    if (!PA_NATIVE_LE)
        return NULL;
    /* the vector loops of the float adds stand for the host-adder loops below */
    pa_reduce_loop vec = PA_FAST_FLOAT || !pa_ekind_uses_host_float(op, k) ?
                         pa_reduce_vec_loop(op, k, pa_simd_level()) : NULL;
    if (vec)
        return vec;
    const int w64 = k == PA_EK_U64 || k == PA_EK_S64;
    switch (op) {
    case PA_RED_AND: return k <= PA_EK_S64 ? and_bits : NULL;
    case PA_RED_OR: return k <= PA_EK_S64 ? or_bits : NULL;
    case PA_RED_XOR: return k <= PA_EK_S64 ? xor_bits : NULL;
    case PA_RED_INC: return k == PA_EK_U32 ? inc_u32 : NULL;
    case PA_RED_DEC: return k == PA_EK_U32 ? dec_u32 : NULL;
    case PA_RED_MIN:
        switch (k) {
        case PA_EK_U32: return min_u32;
        case PA_EK_S32: return min_s32;
        case PA_EK_U64: return min_u64;
        case PA_EK_S64: return min_s64;
        case PA_EK_F16: return min_f16;
        case PA_EK_BF16: return min_bf16;
        default: return NULL;
        }
    case PA_RED_MAX:
        switch (k) {
        case PA_EK_U32: return max_u32;
        case PA_EK_S32: return max_s32;
        case PA_EK_U64: return max_u64;
        case PA_EK_S64: return max_s64;
        case PA_EK_F16: return max_f16;
        case PA_EK_BF16: return max_bf16;
        default: return NULL;
        }
    case PA_RED_ADD:
        if (k <= PA_EK_S64)
            return w64 ? add_u64 : add_u32;
#if PA_FAST_FLOAT
        switch (k) {
        case PA_EK_F16: return add_f16;
        case PA_EK_BF16: return add_bf16;
        case PA_EK_F32: return add_f32;
        case PA_EK_F32_FTZ: return add_f32_ftz;
        case PA_EK_F64: return add_f64;
        default: return NULL;
        }
#else
        return NULL;
#endif
    default:
        return NULL;
    }
}
