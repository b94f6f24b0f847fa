/* hbmax.c - the vector clocks' join loop (see hbmax.h): AVX2's unsigned
 * maximum, eight words an instruction, where the CPU has it; else four words
 * at a time through the compiler's vector types (SSE2 has no unsigned 32-bit
 * maximum: a compare and a select), or one by one. */
#include "hbmax.h"

#include "../simd.h"

#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
typedef uint32_t hb_u32x4 __attribute__((vector_size(16)));

static void max_generic(uint32_t *d, const uint32_t *s, size_t n)
{
    for (size_t i = 0; i < n; i += 4) {
        hb_u32x4 a, b;
        memcpy(&a, d + i, sizeof a);
        memcpy(&b, s + i, sizeof b);
        hb_u32x4 lt = (hb_u32x4)(a < b);
        a = (b & lt) | (a & ~lt);
        memcpy(d + i, &a, sizeof a);
    }
}
#else
static void max_generic(uint32_t *d, const uint32_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        d[i] = d[i] < s[i] ? s[i] : d[i];
}
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

__attribute__((target("avx2"))) static void max_avx2(uint32_t *d, const uint32_t *s, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(d + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i));
        _mm256_storeu_si256((__m256i *)(d + i), _mm256_max_epu32(a, b));
    }
}

void pa_hb_max_into(uint32_t *d, const uint32_t *s, size_t n)
{
    if (pa_simd_level() >= PA_SIMD_AVX2)
        max_avx2(d, s, n);
    else
        max_generic(d, s, n);
}
#else
void pa_hb_max_into(uint32_t *d, const uint32_t *s, size_t n)
{
    max_generic(d, s, n);
}
#endif
