/* rows.c - fill and TF32 rounding of row images (see rows.h). */
#include "rows.h"

#include "../simd.h"

#include <wchar.h>

uint32_t pa_tf32_round(uint32_t bits)
{
    if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu))
        return 0x7FFFE000u;                           /* any NaN */
    uint32_t lsb = (bits >> 13) & 1u;                 /* ties to even */
    return (bits + 0xFFFu + lsb) & ~0x1FFFu;          /* carries into the exponent: overflow -> inf */
}

void pa_rows_tf32(uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i + 4 <= n; i += 4) {
        uint32_t v;
        memcpy(&v, p + i, 4);
        v = pa_tf32_round(v);
        memcpy(p + i, &v, 4);
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* The bytes [0, returned) of p as the NaN pattern, 64 at a time: the first
 * vector where p is, the rest from the next 64-byte line on (an even offset,
 * so the 2-byte pattern keeps its phase). On the 16-core Intel host the C
 * library's wmemset moved 60-95 GB/s into shared memory where this loop moved
 * 143-190 (docs/performance.md). */
__attribute__((target("avx512f"))) static size_t fill_nan_avx512(uint8_t *p, size_t n)
{
    if (n < 64)
        return 0;
    const __m512i v = _mm512_set1_epi32(0x7FF77FF7);
    _mm512_storeu_si512((void *)p, v);
    size_t i = 64 - ((uintptr_t)p & 63);
    for (; i + 256 <= n; i += 256) {   /* four a step: as fast as wmemset on the AMD machine */
        _mm512_store_si512((void *)(p + i), v);
        _mm512_store_si512((void *)(p + i + 64), v);
        _mm512_store_si512((void *)(p + i + 128), v);
        _mm512_store_si512((void *)(p + i + 192), v);
    }
    for (; i + 64 <= n; i += 64)
        _mm512_store_si512((void *)(p + i), v);
    return i;
}
#endif

void pa_rows_fill(uint8_t *p, size_t n, int nan_fill)
{
    if (!nan_fill) {
        memset(p, 0, n);
        return;
    }
    uint8_t pat[64];
    for (size_t i = 0; i < sizeof pat; i++)
        pat[i] = (i & 1) ? 0x7F : 0xF7;
    size_t i = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (pa_simd_level() >= PA_SIMD_AVX512)
        i = fill_nan_avx512(p, n);
#endif
    /* A 4-byte wchar_t holds two periods of the pattern: wmemset stores it
     * with the C library's widest vectors, as memset does zero (the loop
     * below moves 16 bytes at a time on the x86-64 baseline). */
    if (!i && sizeof(wchar_t) == 4 && (uintptr_t)p % sizeof(wchar_t) == 0 && n >= 256) {
        wchar_t w;
        memcpy(&w, pat, sizeof w);
        i = n / sizeof w * sizeof w;
        wmemset((wchar_t *)(void *)p, w, n / sizeof w);
    }
    for (; i + 64 <= n; i += 64)
        memcpy(p + i, pat, 64);
    memcpy(p + i, pat, n - i);
}

void pa_rows_fill_box(const pa_swz_view *v, uint32_t dst, uint32_t pitch, uint32_t row_bytes, uint64_t from,
                      uint64_t to, int nan_fill, int in_place)
{
    if (from >= to)
        return;
    if (in_place) {
        pa_rows_fill(v->smem + dst + from * pitch, (size_t)(to - from) * row_bytes, nan_fill);
        return;
    }
    uint8_t pat[256];
    pa_rows_fill(pat, sizeof pat, nan_fill);
    for (uint64_t r = from; r < to; r++)
        for (uint32_t done = 0; done < row_bytes; done += sizeof pat) {
            uint32_t len = row_bytes - done < sizeof pat ? row_bytes - done : (uint32_t)sizeof pat;
            pa_rows_copy(v, dst + (uint32_t)(r * pitch) + done, pat, len, 1);
        }
}
