/* reduce_x86.c - SSE2, AVX2 and AVX-512 versions of reduce_fast.c's hottest loops.
 *
 * The same arithmetic as the scalar loops, a vector of elements at a time
 * (docs/reductions.md, "Fast paths"): f32 add on the host adder with NaN made
 * canonical, f16 / bf16 add through one f32 add and one round-to-nearest-even
 * narrowing, FTZ maps flushing inputs and result; integer add and the bitwise
 * ops wrap. The float loops are chosen only where the scalar ones would be
 * (the thread's float environment probed exact: reduce.c), so the vector
 * adder sees the same MXCSR as the scalar one. A tail shorter than a vector
 * goes through the same vector code on a zero-padded copy. AVX-512 (F, BW,
 * VL) runs the float adds and the 32-bit integer add (a 128-byte line in two
 * vectors; the AVX2 loop measured 0.52-0.55 of memcpy against 0.72-0.75,
 * docs/performance.md); the other integer ops stay AVX2. f16 writes whole
 * 64-byte vectors: two 32-byte stores to one line of a row that is still
 * arriving measured 0.45-0.52 of memcpy against 0.73 (z_add_f16 says how it
 * reads). Beside AVX-512, AVX512_BF16 narrows the bf16 sums
 * and AVX512_FP16 adds f16 as binary16 (simd.h), where the CPU has them.
 *
 * f16 <-> f32 without F16C (SSE2): widening scales the 15 magnitude bits,
 * shifted into f32 position, by 2^112 (exact, subnormals included) and sets
 * the exponent of infinities and NaNs; narrowing rebiases normals and rounds
 * them with integer adds (as f32_to_f16 in reduce_fast.c), and rounds
 * subnormal results by adding 0.5f, whose ulp 2^-24 is the f16 subnormal
 * step, so the host adder rounds to nearest-even at exactly that position.
 */
#include "reduce_fast.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__FAST_MATH__)
#include <immintrin.h>
#include <string.h>

#define AVX2 __attribute__((target("avx2,f16c")))

/* A loop over n elements of esize bytes, `STEP` bytes per call of BODY(d, s)
 * (pointers to STEP bytes, unaligned), the tail through a padded block. */
#define LOOP(name, ATTR, STEP, BODY)                                                         \
    ATTR static void name(const pa_reducer *r, uint8_t *dst, const uint8_t *src, size_t n)   \
    {                                                                                        \
        size_t bytes = n * r->esize, i = 0;                                                  \
        for (; i + 2 * STEP <= bytes; i += 2 * STEP) {                                       \
            BODY(dst + i, src + i);                                                          \
            BODY(dst + i + STEP, src + i + STEP);                                            \
        }                                                                                    \
        for (; i + STEP <= bytes; i += STEP)                                                 \
            BODY(dst + i, src + i);                                                          \
        if (i < bytes) {                                                                     \
            uint8_t d[STEP], s[STEP];                                                        \
            memset(d, 0, STEP);                                                              \
            memset(s, 0, STEP);                                                              \
            memcpy(d, dst + i, bytes - i);                                                   \
            memcpy(s, src + i, bytes - i);                                                   \
            BODY(d, s);                                                                      \
            memcpy(dst + i, d, bytes - i);                                                   \
        }                                                                                    \
    }

/* ------------------------------------------------------------------ SSE2 */

#define LD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define ST(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))

static inline __m128i sel(__m128i m, __m128i a, __m128i b)   /* m ? a : b, per bit */
{
    return _mm_or_si128(_mm_and_si128(m, a), _mm_andnot_si128(m, b));
}

/* 32-bit lanes: NaN (|x| > inf) */
static inline __m128i isnan32(__m128i v)
{
    return _mm_cmpgt_epi32(_mm_and_si128(v, _mm_set1_epi32(0x7FFFFFFF)), _mm_set1_epi32(0x7F800000));
}

/* 32-bit lanes: a subnormal (or zero) becomes the zero of its sign */
static inline __m128i ftz32(__m128i x)
{
    __m128i tiny = _mm_cmpeq_epi32(_mm_and_si128(x, _mm_set1_epi32(0x7F800000)), _mm_setzero_si128());
    return _mm_andnot_si128(_mm_and_si128(tiny, _mm_set1_epi32(0x7FFFFFFF)), x);
}

static inline __m128i addf(__m128i a, __m128i b)
{
    return _mm_castps_si128(_mm_add_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b)));
}

/* an f32 sum (32-bit lanes) to bf16, rounded to nearest-even, sign-extended
 * in its lane (for the signed pack); NaN gives 0x7FFF */
static inline __m128i bf16_round(__m128i v)
{
    __m128i lsb = _mm_and_si128(_mm_srli_epi32(v, 16), _mm_set1_epi32(1));
    __m128i r = _mm_srai_epi32(_mm_add_epi32(v, _mm_add_epi32(lsb, _mm_set1_epi32(0x7FFF))), 16);
    return sel(isnan32(v), _mm_set1_epi32(0x7FFF), r);
}

/* f16 (in the low half of 32-bit lanes, high half zero) -> f32, exact */
static inline __m128i f16_widen(__m128i h)
{
    __m128i mag = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x7FFF)), 13);
    __m128i v = _mm_castps_si128(_mm_mul_ps(_mm_castsi128_ps(mag), _mm_set1_ps(0x1p112f)));
    __m128i special = _mm_cmpgt_epi32(mag, _mm_set1_epi32(0x0F7FFFFF));        /* exponent 31 */
    v = sel(special, _mm_or_si128(mag, _mm_set1_epi32(0x7F800000)), v);
    return _mm_or_si128(v, _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16));
}

/* f32 sum -> f16, nearest-even, overflow to infinity, NaN to 0x7FFF;
 * sign-extended in its lane (for the signed pack) */
static inline __m128i f16_narrow(__m128i x)
{
    __m128i ax = _mm_and_si128(x, _mm_set1_epi32(0x7FFFFFFF));
    __m128i r = _mm_sub_epi32(ax, _mm_set1_epi32(112 << 23));
    r = _mm_add_epi32(r, _mm_add_epi32(_mm_set1_epi32(0xFFF), _mm_and_si128(_mm_srli_epi32(r, 13),
                                                                             _mm_set1_epi32(1))));
    r = _mm_srli_epi32(r, 13);
    r = sel(_mm_cmpgt_epi32(r, _mm_set1_epi32(0x7C00)), _mm_set1_epi32(0x7C00), r);
    __m128i sub = _mm_sub_epi32(addf(ax, _mm_set1_epi32(0x3F000000)), _mm_set1_epi32(0x3F000000));
    r = sel(_mm_cmplt_epi32(ax, _mm_set1_epi32(0x38800000)), sub, r);
    r = _mm_or_si128(r, _mm_srai_epi32(_mm_and_si128(x, _mm_set1_epi32((int)0x80000000u)), 16));
    return sel(isnan32(x), _mm_set1_epi32(0x7FFF), r);
}

#define S_ADD_U32(d, s) ST(d, _mm_add_epi32(LD(d), LD(s)))
#define S_ADD_U64(d, s) ST(d, _mm_add_epi64(LD(d), LD(s)))
#define S_AND(d, s) ST(d, _mm_and_si128(LD(d), LD(s)))
#define S_OR(d, s) ST(d, _mm_or_si128(LD(d), LD(s)))
#define S_XOR(d, s) ST(d, _mm_xor_si128(LD(d), LD(s)))

static inline void s_add_f32(uint8_t *d, const uint8_t *s)
{
    __m128i v = addf(LD(d), LD(s));
    ST(d, sel(isnan32(v), _mm_set1_epi32(0x7FFFFFFF), v));
}

static inline void s_add_f32_ftz(uint8_t *d, const uint8_t *s)
{
    __m128i v = addf(ftz32(LD(d)), ftz32(LD(s)));
    ST(d, sel(isnan32(v), _mm_set1_epi32(0x7FFFFFFF), ftz32(v)));
}

/* bf16 pairs in 32-bit lanes: the even element shifted up, the odd one masked,
 * each added as f32 and rounded in place (no shuffles) */
static inline void s_add_bf16(uint8_t *d, const uint8_t *s)
{
    const __m128i top = _mm_set1_epi32((int)0xFFFF0000u);
    __m128i a = LD(d), b = LD(s);
    __m128i ev = bf16_round(addf(_mm_slli_epi32(a, 16), _mm_slli_epi32(b, 16)));
    __m128i od = bf16_round(addf(_mm_and_si128(a, top), _mm_and_si128(b, top)));
    ST(d, _mm_or_si128(_mm_and_si128(ev, _mm_set1_epi32(0xFFFF)), _mm_slli_epi32(od, 16)));
}

static inline void s_add_f16(uint8_t *d, const uint8_t *s)
{
    __m128i a = LD(d), b = LD(s), z = _mm_setzero_si128();
    __m128i lo = f16_narrow(addf(f16_widen(_mm_unpacklo_epi16(a, z)), f16_widen(_mm_unpacklo_epi16(b, z))));
    __m128i hi = f16_narrow(addf(f16_widen(_mm_unpackhi_epi16(a, z)), f16_widen(_mm_unpackhi_epi16(b, z))));
    ST(d, _mm_packs_epi32(lo, hi));
}

LOOP(sse2_add_u32, , 16, S_ADD_U32)
LOOP(sse2_add_u64, , 16, S_ADD_U64)
LOOP(sse2_and, , 16, S_AND)
LOOP(sse2_or, , 16, S_OR)
LOOP(sse2_xor, , 16, S_XOR)
LOOP(sse2_add_f32, , 16, s_add_f32)
LOOP(sse2_add_f32_ftz, , 16, s_add_f32_ftz)
LOOP(sse2_add_bf16, , 16, s_add_bf16)
LOOP(sse2_add_f16, , 16, s_add_f16)

/* ------------------------------------------------------------------ AVX2 */

#define LD8(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define ST8(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))

AVX2 static inline __m256i isnan32x8(__m256i v)
{
    return _mm256_cmpgt_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0x7FFFFFFF)),
                              _mm256_set1_epi32(0x7F800000));
}

AVX2 static inline __m256i ftz32x8(__m256i x)
{
    __m256i tiny = _mm256_cmpeq_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7F800000)),
                                      _mm256_setzero_si256());
    return _mm256_andnot_si256(_mm256_and_si256(tiny, _mm256_set1_epi32(0x7FFFFFFF)), x);
}

AVX2 static inline __m256i addf8(__m256i a, __m256i b)
{
    return _mm256_castps_si256(_mm256_add_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b)));
}

/* an f32 sum to bf16 in the top 16 bits of its lane (nearest-even; NaN 0x7FFF) */
AVX2 static inline __m256i bf16_round8(__m256i v)
{
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(v, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(v, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7FFF)));
    __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(_mm256_castsi256_ps(v), _mm256_castsi256_ps(v), _CMP_UNORD_Q));
    return _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7FFF0000), nan);
}

#define A_ADD_U32(d, s) ST8(d, _mm256_add_epi32(LD8(d), LD8(s)))
#define A_ADD_U64(d, s) ST8(d, _mm256_add_epi64(LD8(d), LD8(s)))
#define A_AND(d, s) ST8(d, _mm256_and_si256(LD8(d), LD8(s)))
#define A_OR(d, s) ST8(d, _mm256_or_si256(LD8(d), LD8(s)))
#define A_XOR(d, s) ST8(d, _mm256_xor_si256(LD8(d), LD8(s)))

AVX2 static inline void a_add_f32(uint8_t *d, const uint8_t *s)
{
    __m256i v = addf8(LD8(d), LD8(s));
    ST8(d, _mm256_blendv_epi8(v, _mm256_set1_epi32(0x7FFFFFFF), isnan32x8(v)));
}

AVX2 static inline void a_add_f32_ftz(uint8_t *d, const uint8_t *s)
{
    __m256i v = addf8(ftz32x8(LD8(d)), ftz32x8(LD8(s)));
    ST8(d, _mm256_blendv_epi8(ftz32x8(v), _mm256_set1_epi32(0x7FFFFFFF), isnan32x8(v)));
}

AVX2 static inline void a_add_bf16(uint8_t *d, const uint8_t *s)
{
    const __m256i top = _mm256_set1_epi32((int)0xFFFF0000u);
    __m256i a = LD8(d), b = LD8(s);
    __m256i ev = bf16_round8(addf8(_mm256_slli_epi32(a, 16), _mm256_slli_epi32(b, 16)));
    __m256i od = bf16_round8(addf8(_mm256_and_si256(a, top), _mm256_and_si256(b, top)));
    ST8(d, _mm256_blend_epi16(_mm256_srli_epi32(ev, 16), od, 0xAA));
}

/* F16C: both conversions are IEEE (nearest-even, subnormals, overflow to inf) */
AVX2 static inline void a_add_f16(uint8_t *d, const uint8_t *s)
{
    __m256 v = _mm256_add_ps(_mm256_cvtph_ps(LD(d)), _mm256_cvtph_ps(LD(s)));
    __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256i nan = isnan32x8(_mm256_castps_si256(v));
    __m128i nan16 = _mm_packs_epi32(_mm256_castsi256_si128(nan), _mm256_extracti128_si256(nan, 1));
    ST(d, _mm_blendv_epi8(h, _mm_set1_epi16(0x7FFF), nan16));
}

LOOP(avx2_add_u32, AVX2, 32, A_ADD_U32)
LOOP(avx2_add_u64, AVX2, 32, A_ADD_U64)
LOOP(avx2_and, AVX2, 32, A_AND)
LOOP(avx2_or, AVX2, 32, A_OR)
LOOP(avx2_xor, AVX2, 32, A_XOR)
LOOP(avx2_add_f32, AVX2, 32, a_add_f32)
LOOP(avx2_add_f32_ftz, AVX2, 32, a_add_f32_ftz)
LOOP(avx2_add_bf16, AVX2, 32, a_add_bf16)
LOOP(avx2_add_f16, AVX2, 16, a_add_f16)

/* ---------------------------------------------------------------- AVX-512 */

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,f16c")))
#define LD16(p) _mm512_loadu_si512((const void *)(p))
#define ST16(p, v) _mm512_storeu_si512((void *)(p), (v))

AVX512 static inline __mmask16 isnan32x16(__m512i v)
{
    return _mm512_cmp_ps_mask(_mm512_castsi512_ps(v), _mm512_castsi512_ps(v), _CMP_UNORD_Q);
}

/* a subnormal (or zero) becomes the zero of its sign */
AVX512 static inline __m512i ftz32x16(__m512i x)
{
    __mmask16 tiny = _mm512_testn_epi32_mask(x, _mm512_set1_epi32(0x7F800000));
    return _mm512_mask_and_epi32(x, tiny, x, _mm512_set1_epi32((int)0x80000000u));
}

AVX512 static inline __m512i addf16x(__m512i a, __m512i b)
{
    return _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b)));
}

/* an f32 sum to bf16 in the top 16 bits of its lane (nearest-even; NaN 0x7FFF) */
AVX512 static inline __m512i bf16_round16(__m512i v)
{
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(v, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(v, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF)));
    return _mm512_mask_mov_epi32(r, isnan32x16(v), _mm512_set1_epi32(0x7FFF0000));
}

AVX512 static inline void z_add_f32(uint8_t *d, const uint8_t *s)
{
    __m512i v = addf16x(LD16(d), LD16(s));
    ST16(d, _mm512_mask_mov_epi32(v, isnan32x16(v), _mm512_set1_epi32(0x7FFFFFFF)));
}

AVX512 static inline void z_add_f32_ftz(uint8_t *d, const uint8_t *s)
{
    __m512i v = addf16x(ftz32x16(LD16(d)), ftz32x16(LD16(s)));
    ST16(d, _mm512_mask_mov_epi32(ftz32x16(v), isnan32x16(v), _mm512_set1_epi32(0x7FFFFFFF)));
}

/* the binary32 sums of the even (low) and odd (high) bf16 of each word, narrowed
 * with the integer add and put back in place */
AVX512 static inline __m512i bf16_pack16(__m512i ev, __m512i od)
{
    return _mm512_mask_blend_epi16(0xAAAAAAAAu, _mm512_srli_epi32(bf16_round16(ev), 16), bf16_round16(od));
}

AVX512 static inline void z_add_bf16(uint8_t *d, const uint8_t *s)
{
    const __m512i top = _mm512_set1_epi32((int)0xFFFF0000u);
    __m512i a = LD16(d), b = LD16(s);
    ST16(d, bf16_pack16(addf16x(_mm512_slli_epi32(a, 16), _mm512_slli_epi32(b, 16)),
                        addf16x(_mm512_and_si512(a, top), _mm512_and_si512(b, top))));
}

/* 16 f16 sums of f32 lanes, narrowed (nearest-even) */
AVX512 static inline __m256i f16_sum16(const uint8_t *d, const uint8_t *s)
{
    __m512 v = _mm512_add_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)d)),
                             _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)s)));
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/* A 64-byte line written whole (as one vector). Each 32-byte half is widened
 * straight from memory (the load folded into VCVTPH2PS, no lane extract), and
 * a NaN is found once in the 32 narrowed values: a NaN sum narrows to a NaN
 * (quieted, so its mantissa is not 0) and nothing else does. On the AMD
 * machine, where F16C is the limit: 34.9 -> 39.0 GB/s in L1, the bulk f16
 * add 32.5 -> 37 GB/s, the tensor one no slower (docs/performance.md). */
AVX512 static inline void z_add_f16(uint8_t *d, const uint8_t *s)
{
    const __m512i mag = _mm512_set1_epi16(0x7FFF), inf = _mm512_set1_epi16(0x7C00);
    __m512i h = _mm512_inserti64x4(_mm512_castsi256_si512(f16_sum16(d, s)), f16_sum16(d + 32, s + 32), 1);
    ST16(d, _mm512_mask_mov_epi16(h, _mm512_cmpgt_epu16_mask(_mm512_and_si512(h, mag), inf), mag));
}

#define Z_ADD_U32(d, s) ST16(d, _mm512_add_epi32(LD16(d), LD16(s)))

#if PA_SIMD_HAS_BF16
/* AVX512_BF16 (and DQ): VCVTNE2PS2BF16 narrows both sums in one instruction,
 * rounding to nearest-even as the integer add does (overflow to infinity
 * included), and one word permute puts the halves back in place. It does not
 * give the hardware's bytes for two kinds of sum: NaN (it keeps a quieted
 * payload, not 0x7FFF) and binary32 subnormals (it flushes them to zero; such
 * a sum of two bf16 is exact, a multiple of 2^-133). A block holding either
 * narrows with the integer add instead (fpclass: NaN 0x81, subnormal 0x20). */
#define AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,f16c")))

AVX512BF16 static inline void zb_add_bf16(uint8_t *d, const uint8_t *s)
{
    const __m512i top = _mm512_set1_epi32((int)0xFFFF0000u);
    /* word 2i from the even sums' i-th bf16 (low half of the result), 2i+1 from the odd ones' */
    const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
                                         23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    __m512i a = LD16(d), b = LD16(s);
    __m512i ev = addf16x(_mm512_slli_epi32(a, 16), _mm512_slli_epi32(b, 16));
    __m512i od = addf16x(_mm512_and_si512(a, top), _mm512_and_si512(b, top));
    if (__builtin_expect((_mm512_fpclass_ps_mask(_mm512_castsi512_ps(ev), 0xA1) |
                          _mm512_fpclass_ps_mask(_mm512_castsi512_ps(od), 0xA1)) != 0, 0)) {
        ST16(d, bf16_pack16(ev, od));
        return;
    }
    __m512i h = (__m512i)_mm512_cvtne2ps_pbh(_mm512_castsi512_ps(od), _mm512_castsi512_ps(ev));
    ST16(d, _mm512_permutexvar_epi16(idx, h));
}
#endif

/* AVX-512 loops over a bulk reduction's long runs also prefetch the
 * destination 1 KiB ahead: the read-modify-write of lines from the last-level
 * cache measured 1.3-1.4x faster with it for the bf16 add (docs/performance.md);
 * the last 1 KiB, and short runs, go through the plain loop (_near). */
#define PF_AHEAD 1024
#define LOOP_PF(name, rest, ATTR, STEP, BODY)                                                \
    ATTR static void name(const pa_reducer *r, uint8_t *dst, const uint8_t *src, size_t n)   \
    {                                                                                        \
        size_t bytes = n * r->esize, i = 0;                                                  \
        for (; i + PF_AHEAD + 2 * STEP <= bytes; i += 2 * STEP) {                            \
            for (size_t p = 0; p < 2 * STEP; p += 64)                                        \
                _mm_prefetch((const char *)dst + i + PF_AHEAD + p, _MM_HINT_T0);             \
            BODY(dst + i, src + i);                                                          \
            BODY(dst + i + STEP, src + i + STEP);                                            \
        }                                                                                    \
        rest(r, dst + i, src + i, (bytes - i) / r->esize);                                   \
    }

LOOP(avx512_add_u32, AVX512, 64, Z_ADD_U32)
LOOP(avx512_add_f32_ftz, AVX512, 64, z_add_f32_ftz)
LOOP(avx512_add_f32_near, AVX512, 64, z_add_f32)
LOOP(avx512_add_bf16_near, AVX512, 64, z_add_bf16)
LOOP(avx512_add_f16_near, AVX512, 64, z_add_f16)
LOOP_PF(avx512_add_f32, avx512_add_f32_near, AVX512, 64, z_add_f32)
LOOP_PF(avx512_add_bf16, avx512_add_bf16_near, AVX512, 64, z_add_bf16)
#if PA_SIMD_HAS_BF16
LOOP(avx512bf16_add_bf16_near, AVX512BF16, 64, zb_add_bf16)
LOOP_PF(avx512bf16_add_bf16, avx512bf16_add_bf16_near, AVX512BF16, 64, zb_add_bf16)
#endif
LOOP_PF(avx512_add_f16, avx512_add_f16_near, AVX512, 64, z_add_f16)

#if PA_SIMD_HAS_FP16
/* AVX512_FP16: VADDPH is binary16 addition itself, rounded once to
 * nearest-even under MXCSR (the reducer's probe has found it so), subnormal
 * operands and results kept whatever DAZ / FTZ say, overflow to infinity: the
 * correctly rounded sum that the widened add and its narrowing give
 * (docs/reductions.md). Only a NaN result differs (a quieted operand, not
 * 0x7FFF). 32 adds an instruction where F16C took two widenings and one
 * narrowing a 16: the bulk f16 add on the 16-core host, 512 destinations of
 * 32 KiB, 10.6 -> 14.1 GB/s (docs/performance.md). */
#define AVX512FP16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512fp16,avx2,f16c")))

AVX512FP16 static inline void zh_add_f16(uint8_t *d, const uint8_t *s)
{
    __m512h v = _mm512_add_ph(_mm512_castsi512_ph(LD16(d)), _mm512_castsi512_ph(LD16(s)));
    __mmask32 nan = _mm512_cmp_ph_mask(v, v, _CMP_UNORD_Q);
    ST16(d, _mm512_mask_mov_epi16(_mm512_castph_si512(v), nan, _mm512_set1_epi16(0x7FFF)));
}

LOOP(avx512fp16_add_f16_near, AVX512FP16, 64, zh_add_f16)
LOOP_PF(avx512fp16_add_f16, avx512fp16_add_f16_near, AVX512FP16, 64, zh_add_f16)
#endif

pa_reduce_loop pa_reduce_vec_loop(pa_redop op, pa_ekind k, pa_simd level)
{
    if (level < PA_SIMD_SSE2)
        return NULL;
    if (level >= PA_SIMD_AVX512 && op == PA_RED_ADD) {   /* a 128-byte line in two vectors */
        switch (k) {
        case PA_EK_U32: case PA_EK_S32: return avx512_add_u32;
#if PA_SIMD_HAS_FP16
        case PA_EK_F16: return pa_simd_fp16() ? avx512fp16_add_f16 : avx512_add_f16;
#else
        case PA_EK_F16: return avx512_add_f16;
#endif
#if PA_SIMD_HAS_BF16
        case PA_EK_BF16: return pa_simd_bf16() ? avx512bf16_add_bf16 : avx512_add_bf16;
#else
        case PA_EK_BF16: return avx512_add_bf16;
#endif
        case PA_EK_F32: return avx512_add_f32;
        case PA_EK_F32_FTZ: return avx512_add_f32_ftz;
        default: break;
        }
    }
    const int avx = level >= PA_SIMD_AVX2, ints = k <= PA_EK_S64, w64 = k == PA_EK_U64 || k == PA_EK_S64;
    switch (op) {
    case PA_RED_AND: return ints ? (avx ? avx2_and : sse2_and) : NULL;
    case PA_RED_OR: return ints ? (avx ? avx2_or : sse2_or) : NULL;
    case PA_RED_XOR: return ints ? (avx ? avx2_xor : sse2_xor) : NULL;
    case PA_RED_ADD:
        if (ints)
            return w64 ? (avx ? avx2_add_u64 : sse2_add_u64) : (avx ? avx2_add_u32 : sse2_add_u32);
        switch (k) {
        case PA_EK_F16: return avx ? avx2_add_f16 : sse2_add_f16;
        case PA_EK_BF16: return avx ? avx2_add_bf16 : sse2_add_bf16;
        case PA_EK_F32: return avx ? avx2_add_f32 : sse2_add_f32;
        case PA_EK_F32_FTZ: return avx ? avx2_add_f32_ftz : sse2_add_f32_ftz;
        default: return NULL;
        }
    default:
        return NULL;
    }
}

#else

pa_reduce_loop pa_reduce_vec_loop(pa_redop op, pa_ekind k, pa_simd level)
{
    (void)op; (void)k; (void)level;
    return NULL;
}

#endif
