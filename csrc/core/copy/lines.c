/* lines.c - rows of one whole 128-byte line, a vector at a time (rows.h,
 * pa_lines_in / pa_line_out).
 *
 * With 16-byte atoms a line's chunk c lands at chunk c ^ k of the line
 * (k = xtab[line] >> 4), so a line moves as whole vectors with their 16-byte
 * lanes permuted:
 *
 *   AVX-512: two 64-byte halves; half h goes to half h ^ (k >> 2), lane j of
 *            it to lane j ^ (k & 3) (one vpermq: qword i from qword i ^ 2(k & 3))
 *   AVX2:    four 32-byte pairs; pair p goes to pair p ^ (k >> 1), its two
 *            lanes swapped when k is odd (one vpermd: dword i from i ^ 4(k & 1))
 *   SSE2:    eight chunks (rows.h, pa_rows_line)
 *
 * Fewer instructions a row than the SSE2 line keep more rows' loads in flight
 * (a box's rows are far apart in global memory: their misses overlapping is
 * most of a load's speed). TFLOAT32 rows are rounded in the same vectors
 * (pa_tf32_round: nearest-even at bit 13, NaN -> 0x7FFFE000). Every level
 * writes the same bytes; tests/copy/test_lines.py compares each with the
 * reference.
 */
#include "rows.h"

#include "../simd.h"

/* The portable line loop (SSE2 on x86-64 through the compiler's 16-byte moves). */
static void lines_in_sse2(uint8_t *smem, const uint32_t *xtab, uint32_t a, const uint8_t *src, int64_t stride,
                          uint32_t n, int tf32)
{
    const uint32_t ahead = pa_prefetch_ahead(n, stride);
    const int64_t pf = (int64_t)PA_PREFETCH_ROWS * stride;
    for (uint32_t r = 0; r < n; r++, a += 128, src += stride) {
        if (r < ahead)
            pa_prefetch_row(src + pf, 128);
        if (tf32)
            pa_rows_line_tf32(smem, a, xtab[(a >> 7) & 7], src);
        else
            pa_rows_line(smem, a, xtab[(a >> 7) & 7], (uint8_t *)src, 1);   /* read only */
    }
}

static void line_out_sse2(uint8_t *smem, uint32_t a, uint32_t x, uint8_t *dst)
{
    pa_rows_line(smem, a, x, dst, 0);
}

/* The row PA_GATHER_AHEAD on from r, if there is one: each of its lines. */
static PA_INLINE void gather_ahead(const uint8_t *const *src, uint32_t r, uint32_t nfetch)
{
    if (r + PA_GATHER_AHEAD < nfetch)
        pa_prefetch_row(src[r + PA_GATHER_AHEAD], 128);
}

static void rows_at_sse2(uint8_t *smem, const uint32_t *xtab, const uint32_t *a, const uint8_t *const *src,
                         uint32_t n, uint32_t nfetch)
{
    for (uint32_t r = 0; r < n; r++) {
        gather_ahead(src, r, nfetch);
        pa_rows_line(smem, a[r], xtab[(a[r] >> 7) & 7], (uint8_t *)src[r], 1);   /* read only */
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2")))

/* --- AVX2 ------------------------------------------------------------------ */

AVX2 static inline __m256i tf32_256(__m256i v)
{
    const __m256i mag = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
    const __m256i half = _mm256_set1_epi32(0xFFF), one = _mm256_set1_epi32(1);
    const __m256i keep = _mm256_set1_epi32(~0x1FFF), nan_out = _mm256_set1_epi32(0x7FFFE000);
    __m256i r = _mm256_add_epi32(v, _mm256_add_epi32(half, _mm256_and_si256(_mm256_srli_epi32(v, 13), one)));
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(v, mag), inf);
    return _mm256_blendv_epi8(_mm256_and_si256(r, keep), nan_out, nan);
}

AVX2 static void lines_in_avx2(uint8_t *smem, const uint32_t *xtab, uint32_t a, const uint8_t *src,
                               int64_t stride, uint32_t n, int tf32)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const uint32_t ahead = pa_prefetch_ahead(n, stride);
    const int64_t pf = (int64_t)PA_PREFETCH_ROWS * stride;
    for (uint32_t r = 0; r < n; r++, a += 128, src += stride) {
        if (r < ahead)
            pa_prefetch_row(src + pf, 128);
        const uint32_t k = xtab[(a >> 7) & 7] >> 4;
        const __m256i idx = _mm256_xor_si256(iota, _mm256_set1_epi32((int)(4 * (k & 1))));
        __m256i v[4];
        for (int p = 0; p < 4; p++)
            v[p] = _mm256_loadu_si256((const __m256i *)(const void *)(src + 32 * p));
        if (tf32)
            for (int p = 0; p < 4; p++)
                v[p] = tf32_256(v[p]);
        uint8_t *line = smem + a;
        const uint32_t kp = k >> 1;
        for (uint32_t p = 0; p < 4; p++)
            _mm256_storeu_si256((__m256i *)(void *)(line + 32 * (p ^ kp)), _mm256_permutevar8x32_epi32(v[p], idx));
    }
}

AVX2 static void rows_at_avx2(uint8_t *smem, const uint32_t *xtab, const uint32_t *a, const uint8_t *const *src,
                              uint32_t n, uint32_t nfetch)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (uint32_t r = 0; r < n; r++) {
        gather_ahead(src, r, nfetch);
        const uint32_t k = xtab[(a[r] >> 7) & 7] >> 4, kp = k >> 1;
        const __m256i idx = _mm256_xor_si256(iota, _mm256_set1_epi32((int)(4 * (k & 1))));
        __m256i v[4];
        for (int p = 0; p < 4; p++)
            v[p] = _mm256_loadu_si256((const __m256i *)(const void *)(src[r] + 32 * p));
        uint8_t *line = smem + a[r];
        for (uint32_t p = 0; p < 4; p++)
            _mm256_storeu_si256((__m256i *)(void *)(line + 32 * (p ^ kp)), _mm256_permutevar8x32_epi32(v[p], idx));
    }
}

AVX2 static void line_out_avx2(uint8_t *smem, uint32_t a, uint32_t x, uint8_t *dst)
{
    if ((uintptr_t)dst & 31) {   /* split stores: the 16-byte line (see line_out_avx512) */
        pa_rows_line(smem, a, x, dst, 0);
        return;
    }
    const uint32_t k = x >> 4, kp = k >> 1;
    const __m256i idx = _mm256_xor_si256(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                         _mm256_set1_epi32((int)(4 * (k & 1))));
    const uint8_t *line = smem + a;
    __m256i v[4];
    for (uint32_t p = 0; p < 4; p++)   /* pair p of the image is at pair p ^ kp, lanes swapped if k odd */
        v[p] = _mm256_loadu_si256((const __m256i *)(const void *)(line + 32 * (p ^ kp)));
    for (int p = 0; p < 4; p++)
        _mm256_storeu_si256((__m256i *)(void *)(dst + 32 * p), _mm256_permutevar8x32_epi32(v[p], idx));
}

/* --- AVX-512 --------------------------------------------------------------- */

AVX512 static inline __m512i tf32_512(__m512i v)
{
    const __m512i mag = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
    const __m512i half = _mm512_set1_epi32(0xFFF), one = _mm512_set1_epi32(1);
    const __m512i keep = _mm512_set1_epi32(~0x1FFF), nan_out = _mm512_set1_epi32(0x7FFFE000);
    __m512i r = _mm512_add_epi32(v, _mm512_add_epi32(half, _mm512_and_si512(_mm512_srli_epi32(v, 13), one)));
    __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(v, mag), inf);
    return _mm512_mask_mov_epi32(_mm512_and_si512(r, keep), nan, nan_out);
}

/* Row r's line of the swizzle repeat: its lane permutation and the half its
 * first 64 bytes go to. */
#define PERM512(xtab, a, idx, hx)                                                            \
    do {                                                                                     \
        const uint32_t k_ = (xtab)[((a) >> 7) & 7] >> 4;                                     \
        idx = _mm512_xor_si512(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),                    \
                               _mm512_set1_epi64((long long)(2 * (k_ & 3))));                \
        hx = (k_ >> 2) * 64;                                                                 \
    } while (0)

/* Rows that all start q = 1..7 qwords past a 64-byte line (a box at a
 * column 16 bytes into a row, the stride a multiple of 64): a 64-byte load
 * there spans two lines, and such split loads measured 0.77 of memcpy where
 * the rows are in cache. Each row is read as its three lines instead, the
 * first and last masked to the row's own qwords (nothing outside the row is
 * read), and every 64-byte half of the row is put together by one two-source
 * permute that also applies the swizzle:
 *
 *   lines:   | l0: . . q q q q q q | l1: whole | l2: q q . . . . . . |
 *   half 0 = qwords q .. q+7 of l0:l1,  half 1 = qwords q .. q+7 of l1:l2
 *   stored qword j of a half = its qword j ^ 2(k & 3)
 */
AVX512 static void lines_in_avx512_off(uint8_t *smem, const uint32_t *xtab, uint32_t a, const uint8_t *src,
                                       int64_t stride, uint32_t n, int tf32)
{
    const uint32_t q = (uint32_t)((uintptr_t)src & 63) >> 3;
    const __mmask8 head = (__mmask8)(0xFFu << q), tail = (__mmask8)~head;
    const __m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i qv = _mm512_set1_epi64((long long)q);
    const uint32_t ahead = pa_prefetch_ahead(n, stride);
    const int64_t pf = (int64_t)PA_PREFETCH_ROWS * stride;
    const uint8_t *b = src - 8 * q;
    for (uint32_t r = 0; r < n; r++, a += 128, b += stride) {
        if (r < ahead)
            pa_prefetch_row(b + 8 * q + pf, 128);
        const __m512i l0 = _mm512_maskz_loadu_epi64(head, (const void *)b);
        const __m512i l1 = _mm512_loadu_si512((const void *)(b + 64));
        const __m512i l2 = _mm512_maskz_loadu_epi64(tail, (const void *)(b + 128));
        const uint32_t k = xtab[(a >> 7) & 7] >> 4, h = (k >> 2) * 64;
        const __m512i idx = _mm512_add_epi64(_mm512_xor_si512(iota, _mm512_set1_epi64((long long)(2 * (k & 3)))), qv);
        __m512i lo = _mm512_permutex2var_epi64(l0, idx, l1);
        __m512i hi = _mm512_permutex2var_epi64(l1, idx, l2);
        if (tf32) {
            lo = tf32_512(lo);
            hi = tf32_512(hi);
        }
        _mm512_storeu_si512((void *)(smem + a + h), lo);
        _mm512_storeu_si512((void *)(smem + a + (64 ^ h)), hi);
    }
}

/* Two rows a step: both rows' four loads before their stores (half the loop
 * branches, more loads in flight; tile_load_c measured 0.75-0.93 -> 1.02-1.10
 * of memcpy, docs/performance.md). Inlined into one loop per (prefetch, tf32)
 * pair, ahead and tf32 a constant 0 where they are off: the loop with neither
 * (rows close together, as an .im2col column's, which the hardware prefetcher
 * follows) carries no per-row test; that measured 0.90 -> 0.94 of memcpy on
 * the AMD machine. */
AVX512 static PA_INLINE void lines_in_avx512_loop(uint8_t *smem, const uint32_t *xtab, uint32_t a, const uint8_t *src,
                                                  int64_t stride, uint32_t n, const uint32_t ahead, const int tf32)
{
    const int64_t pf = (int64_t)PA_PREFETCH_ROWS * stride;
    uint32_t r = 0;
    for (; r + 2 <= n; r += 2, a += 256, src += 2 * stride) {
        if (r < ahead)
            pa_prefetch_row(src + pf, 128);
        if (r + 1 < ahead)
            pa_prefetch_row(src + stride + pf, 128);
        __m512i v0 = _mm512_loadu_si512((const void *)src);
        __m512i v1 = _mm512_loadu_si512((const void *)(src + 64));
        __m512i v2 = _mm512_loadu_si512((const void *)(src + stride));
        __m512i v3 = _mm512_loadu_si512((const void *)(src + stride + 64));
        if (tf32) {
            v0 = tf32_512(v0);
            v1 = tf32_512(v1);
            v2 = tf32_512(v2);
            v3 = tf32_512(v3);
        }
        __m512i i0, i1;
        uint32_t h0, h1;
        PERM512(xtab, a, i0, h0);
        PERM512(xtab, a + 128, i1, h1);
        uint8_t *line = smem + a;
        _mm512_storeu_si512((void *)(line + h0), _mm512_permutexvar_epi64(i0, v0));
        _mm512_storeu_si512((void *)(line + (64 ^ h0)), _mm512_permutexvar_epi64(i0, v1));
        _mm512_storeu_si512((void *)(line + 128 + h1), _mm512_permutexvar_epi64(i1, v2));
        _mm512_storeu_si512((void *)(line + 128 + (64 ^ h1)), _mm512_permutexvar_epi64(i1, v3));
    }
    if (r < n) {   /* an odd last row (nothing left to prefetch) */
        __m512i lo = _mm512_loadu_si512((const void *)src);
        __m512i hi = _mm512_loadu_si512((const void *)(src + 64));
        if (tf32) {
            lo = tf32_512(lo);
            hi = tf32_512(hi);
        }
        __m512i idx;
        uint32_t h;
        PERM512(xtab, a, idx, h);
        _mm512_storeu_si512((void *)(smem + a + h), _mm512_permutexvar_epi64(idx, lo));
        _mm512_storeu_si512((void *)(smem + a + (64 ^ h)), _mm512_permutexvar_epi64(idx, hi));
    }
}

AVX512 static void lines_in_avx512(uint8_t *smem, const uint32_t *xtab, uint32_t a, const uint8_t *src,
                                   int64_t stride, uint32_t n, int tf32)
{
    const uint32_t ahead = pa_prefetch_ahead(n, stride);   /* rows with one to prefetch */
    if (((uintptr_t)src & 63) && ((uintptr_t)src & 7) == 0 && (stride & 63) == 0)
        lines_in_avx512_off(smem, xtab, a, src, stride, n, tf32);
    else if (ahead)
        lines_in_avx512_loop(smem, xtab, a, src, stride, n, ahead, tf32);
    else if (tf32)
        lines_in_avx512_loop(smem, xtab, a, src, stride, n, 0, 1);
    else
        lines_in_avx512_loop(smem, xtab, a, src, stride, n, 0, 0);
}

AVX512 static void rows_at_avx512(uint8_t *smem, const uint32_t *xtab, const uint32_t *a,
                                  const uint8_t *const *src, uint32_t n, uint32_t nfetch)
{
    for (uint32_t r = 0; r < n; r++) {
        gather_ahead(src, r, nfetch);
        const __m512i lo = _mm512_loadu_si512((const void *)src[r]);
        const __m512i hi = _mm512_loadu_si512((const void *)(src[r] + 64));
        __m512i idx;
        uint32_t h;
        PERM512(xtab, a[r], idx, h);
        _mm512_storeu_si512((void *)(smem + a[r] + h), _mm512_permutexvar_epi64(idx, lo));
        _mm512_storeu_si512((void *)(smem + a[r] + (64 ^ h)), _mm512_permutexvar_epi64(idx, hi));
    }
}

/* A vector store that crosses a 64-byte line costs two, and more where the
 * lines are not yet in L1: a global row 16 bytes off a line moves as sixteen-
 * byte stores instead (tile_store 0.71 -> 0.88 of memcpy on the development
 * machine, docs/performance.md). */
AVX512 static void line_out_avx512(uint8_t *smem, uint32_t a, uint32_t x, uint8_t *dst)
{
    if ((uintptr_t)dst & 63) {
        pa_rows_line(smem, a, x, dst, 0);
        return;
    }
    const uint32_t k = x >> 4, h = (k >> 2) * 64;
    const __m512i idx = _mm512_xor_si512(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
                                         _mm512_set1_epi64((long long)(2 * (k & 3))));
    const uint8_t *line = smem + a;
    __m512i lo = _mm512_loadu_si512((const void *)(line + h));
    __m512i hi = _mm512_loadu_si512((const void *)(line + (64 ^ h)));
    _mm512_storeu_si512((void *)dst, _mm512_permutexvar_epi64(idx, lo));
    _mm512_storeu_si512((void *)(dst + 64), _mm512_permutexvar_epi64(idx, hi));
}
#endif

void pa_lines_pick(pa_swz_view *v)
{
    v->lines_in = lines_in_sse2;
    v->line_out = line_out_sse2;
    v->rows_at = rows_at_sse2;
    if (v->atom != 16 && v->sw != PA_SWIZZLE_NONE)
        return;   /* only whole 16-byte chunks permute as vector lanes */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    switch (pa_simd_level()) {
    case PA_SIMD_AVX512:
        v->lines_in = lines_in_avx512;
        v->line_out = line_out_avx512;
        v->rows_at = rows_at_avx512;
        break;
    case PA_SIMD_AVX2:
        v->lines_in = lines_in_avx2;
        v->line_out = line_out_avx2;
        v->rows_at = rows_at_avx2;
        break;
    default:
        break;
    }
#endif
}
