/* rows.h - the one swizzled row writer: every byte a tensor copy moves
 * between a row image and shared memory goes through pa_rows_copy.
 *
 * A swizzle permutes whole atoms (16 bytes; 8 for the flip mode, 32/64 for the
 * 128B atomicity modes) inside a 128-byte line, so with 16-byte atoms every
 * chunk of one line takes the same XOR:
 *
 *   line L of the box:  | c0 | c1 | .. | c7 |   16-byte chunks of the row image
 *   shared memory:      chunk c at ((L*128 + c*16) ^ xor(L))
 *
 * A whole line is read before any of it is written: a store between two loads
 * of far-apart global rows makes the CPU wait on possible aliasing.
 * Internal to copy/.
 */
#ifndef PA_COPY_ROWS_H
#define PA_COPY_ROWS_H

#include "copy.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__GNUC__)
#define PA_INLINE inline __attribute__((always_inline))   /* the per-row hot path */
#else
#define PA_INLINE inline
#endif

/* n rows of one whole 128-byte line each, row r from src + r * stride into
 * the line at pre-swizzle a + 128 r (16-byte atoms, or no swizzle), TF32
 * values rounded if tf32, the rows PA_PREFETCH_ROWS ahead prefetched; and one
 * line at pre-swizzle a (XOR x) out to the image dst. The vector level's
 * versions (copy/lines.c). */
typedef void (*pa_lines_in_fn)(uint8_t *smem, const uint32_t *xtab, uint32_t a, const uint8_t *src,
                               int64_t stride, uint32_t n, int tf32);
typedef void (*pa_line_out_fn)(uint8_t *smem, uint32_t a, uint32_t x, uint8_t *dst);
/* n rows of one whole 128-byte line each at no common stride (gather4's),
 * row r from src[r] into the line at pre-swizzle a[r], in order (each line
 * read whole before it is written, as pa_lines_in does), the row
 * PA_GATHER_AHEAD further on fetched first; rows src[n .. nfetch) are only
 * fetched (the next ones' copies). */
typedef void (*pa_rows_at_fn)(uint8_t *smem, const uint32_t *xtab, const uint32_t *a, const uint8_t *const *src,
                              uint32_t n, uint32_t nfetch);

/* Shared memory as one copy sees it: the swizzle's XOR of each of the 8
 * lines of its repeat (every mode XORs address bits [7, 10) into lower ones),
 * looked up once per copy instead of per line, and the line movers of the
 * CPU's vector level. */
typedef struct pa_swz_view {
    uint8_t *smem;
    pa_swizzle sw;
    uint32_t atom;
    uint32_t xtab[8];
    pa_lines_in_fn lines_in;
    pa_line_out_fn line_out;
    pa_rows_at_fn rows_at;
} pa_swz_view;

/* The line movers of the vector level in use (pa_simd_level). */
void pa_lines_pick(pa_swz_view *v);

static inline void pa_swz_init(pa_swz_view *v, uint8_t *smem, pa_swizzle sw)
{
    v->smem = smem;
    v->sw = sw;
    v->atom = pa_swizzle_atom(sw);
    if (sw == PA_SWIZZLE_128B) {   /* the common one: no switch per line */
        for (uint32_t line = 0; line < 8; line++)
            v->xtab[line] = line << 4;
    } else {
        for (uint32_t line = 0; line < 8; line++)
            v->xtab[line] = pa_swizzle_xor(sw, line);
    }
    pa_lines_pick(v);
}

/* Rows fetched ahead of their copy. Not further: the rows of a box column a
 * power-of-two pitch apart share one L1 set (8 ways on the machines
 * measured), so rows fetched far ahead are evicted before their turn; 8
 * ahead measured faster than 16 (docs/performance.md). */
#define PA_PREFETCH_ROWS 8

/* Rows of no common stride fetched ahead of their copy, each row's every
 * 64-byte line. A harness of the gather4 pass (random 16-byte-aligned 128-byte
 * rows, against a memcpy of each): on the Intel host the rows' first and last
 * line alone measured 0.90-0.92 of memcpy, every line 0.97-1.03 (16 rows
 * ahead 0.99-1.03, 24 ahead 0.97-1.02); on the AMD machine 1.17 and 1.18-1.19
 * (docs/performance.md). */
#define PA_GATHER_AHEAD 16

/* Rows at most this far apart are left to the hardware prefetchers, which
 * follow such a stream by themselves: software prefetches there only cost
 * instructions (an im2col run of contiguous pixels measured 0.65 -> 0.53 of
 * memcpy with them). */
#define PA_PREFETCH_MIN_STRIDE 2048

/* The number of rows of n, `stride` bytes apart, that prefetch the row
 * PA_PREFETCH_ROWS ahead of them. */
static inline uint32_t pa_prefetch_ahead(uint32_t n, int64_t stride)
{
    const int far = stride > PA_PREFETCH_MIN_STRIDE || stride < -PA_PREFETCH_MIN_STRIDE;
    return far && n > PA_PREFETCH_ROWS ? n - PA_PREFETCH_ROWS : 0;
}

/* Every cache line of the row's first 128 bytes: three when the row does not
 * start on a 64-byte line (a NumPy array's data starts 16 bytes into a page),
 * else two. Always inlined: GCC finds a function of prefetches alone "const"
 * (no effect it models) and drops the calls it did not inline - the vector
 * row writers (lines.c) had lost every prefetch that way. */
static PA_INLINE void pa_prefetch_row(const uint8_t *src, uint32_t row_bytes)
{
    const uint32_t n = row_bytes < 128 ? row_bytes : 128;
    const uint8_t *second = n > 64 ? src + 64 : src;
    __builtin_prefetch(src);
    if (second != src)
        __builtin_prefetch(second);
    if (n && ((uintptr_t)(src + n - 1) >> 6) != ((uintptr_t)second >> 6))
        __builtin_prefetch(src + n - 1);   /* the line holding the end */
}

/* pa_prefetch_row of n rows `stride` bytes apart, from src: rows a multiple of
 * 64 bytes apart start at the same place in a line, so the first row's lines
 * say which of every row's to fetch (the same prefetches, the tests made once) */
static PA_INLINE void pa_prefetch_rows(const uint8_t *src, int64_t stride, uint32_t n, uint32_t row_bytes)
{
    if (stride % 64) {
        for (uint32_t r = 0; r < n; r++)
            pa_prefetch_row(src + r * stride, row_bytes);
        return;
    }
    const uint32_t b = row_bytes < 128 ? row_bytes : 128;
    const int two = b > 64;
    const int end = b && ((uintptr_t)(src + b - 1) >> 6) != ((uintptr_t)(two ? src + 64 : src) >> 6);
    for (uint32_t r = 0; r < n; r++, src += stride) {
        __builtin_prefetch(src);
        if (two)
            __builtin_prefetch(src + 64);
        if (end)
            __builtin_prefetch(src + b - 1);
    }
}

typedef struct { uint8_t b[16]; } pa_chunk16;

/* One 128-byte line between the image buf and shared memory at line-aligned
 * pre-swizzle address a, its chunk c at (a + 16c) ^ x (x: the line's XOR,
 * pa_swz_view.xtab). All eight loads come before the stores. */
static PA_INLINE void pa_rows_line(uint8_t *smem, uint32_t a, uint32_t x, uint8_t *buf, int to_smem)
{
    pa_chunk16 t0, t1, t2, t3, t4, t5, t6, t7;   /* named: the line stays in registers */
    uint8_t *s = to_smem ? buf : smem;            /* read side, then write side */
    uint8_t *d = to_smem ? smem : buf;
#define PA_LINE_SRC(c) (to_smem ? (size_t)16 * (c) : (size_t)((a + 16 * (c)) ^ x))
#define PA_LINE_DST(c) (to_smem ? (size_t)((a + 16 * (c)) ^ x) : (size_t)16 * (c))
    memcpy(&t0, s + PA_LINE_SRC(0), 16);
    memcpy(&t1, s + PA_LINE_SRC(1), 16);
    memcpy(&t2, s + PA_LINE_SRC(2), 16);
    memcpy(&t3, s + PA_LINE_SRC(3), 16);
    memcpy(&t4, s + PA_LINE_SRC(4), 16);
    memcpy(&t5, s + PA_LINE_SRC(5), 16);
    memcpy(&t6, s + PA_LINE_SRC(6), 16);
    memcpy(&t7, s + PA_LINE_SRC(7), 16);
    memcpy(d + PA_LINE_DST(0), &t0, 16);
    memcpy(d + PA_LINE_DST(1), &t1, 16);
    memcpy(d + PA_LINE_DST(2), &t2, 16);
    memcpy(d + PA_LINE_DST(3), &t3, 16);
    memcpy(d + PA_LINE_DST(4), &t4, 16);
    memcpy(d + PA_LINE_DST(5), &t5, 16);
    memcpy(d + PA_LINE_DST(6), &t6, 16);
    memcpy(d + PA_LINE_DST(7), &t7, 16);
#undef PA_LINE_SRC
#undef PA_LINE_DST
}

/* One 128-byte line of f32 values from global memory into shared memory as
 * pa_rows_line puts it, each value rounded as a TFLOAT32 load does
 * (pa_tf32_round: nearest-even at bit 13, NaN -> 0x7FFFE000): four values a
 * step with SSE2 (every x86-64 CPU), one at a time elsewhere. */
static PA_INLINE void pa_rows_line_tf32(uint8_t *smem, uint32_t a, uint32_t x, const uint8_t *src)
{
#if defined(__SSE2__)
    const __m128i mag = _mm_set1_epi32(0x7FFFFFFF), inf = _mm_set1_epi32(0x7F800000);
    const __m128i half = _mm_set1_epi32(0xFFF), one = _mm_set1_epi32(1), keep = _mm_set1_epi32(~0x1FFF);
    const __m128i nan_out = _mm_set1_epi32(0x7FFFE000);
    __m128i t[8];
    for (int c = 0; c < 8; c++)   /* every load first: the line's misses overlap */
        t[c] = _mm_loadu_si128((const __m128i *)(const void *)(src + 16 * c));
    for (int c = 0; c < 8; c++) {
        __m128i v = t[c];
        __m128i r = _mm_add_epi32(v, _mm_add_epi32(half, _mm_and_si128(_mm_srli_epi32(v, 13), one)));
        __m128i nan = _mm_cmpgt_epi32(_mm_and_si128(v, mag), inf);
        t[c] = _mm_or_si128(_mm_and_si128(nan, nan_out), _mm_andnot_si128(nan, _mm_and_si128(r, keep)));
    }
    for (int c = 0; c < 8; c++)
        _mm_storeu_si128((__m128i *)(void *)(smem + ((a + 16 * c) ^ x)), t[c]);
#else
    uint32_t w[32];
    memcpy(w, src, 128);
    for (int i = 0; i < 32; i++)
        w[i] = pa_tf32_round(w[i]);
    pa_rows_line(smem, a, x, (uint8_t *)w, 1);
#endif
}

/* Move n bytes of one row between shared memory at pre-swizzle offset a and
 * the contiguous image buf (to_smem: into shared memory; else out of it). */
static PA_INLINE void pa_rows_copy(const pa_swz_view *v, uint32_t a, uint8_t *buf, uint32_t n, int to_smem)
{
    uint8_t *const smem = v->smem;
    if (v->sw == PA_SWIZZLE_NONE) {
        if (to_smem)
            memcpy(smem + a, buf, n);
        else
            memcpy(buf, smem + a, n);
        return;
    }
    const uint32_t atom = v->atom;
    if (atom == 16 && (a & 15) == 0) {
        while (n >= 16) {
            uint32_t len = 128 - (a & 127);
            if (len > (n & ~15u))
                len = n & ~15u;
            const uint32_t x = v->xtab[(a >> 7) & 7];
            if (len == 128) {
                if (to_smem)
                    v->lines_in(smem, v->xtab, a, buf, 0, 1, 0);
                else
                    v->line_out(smem, a, x, buf);
            } else {
                for (uint32_t c = 0; c < len / 16; c++) {
                    uint8_t *sp = smem + ((a + 16 * c) ^ x);
                    if (to_smem)
                        memcpy(sp, buf + 16 * c, 16);
                    else
                        memcpy(buf + 16 * c, sp, 16);
                }
            }
            a += len;
            buf += len;
            n -= len;
        }
    }
    while (n) {
        uint32_t len = atom - (a & (atom - 1));   /* atoms are powers of two */
        if (len > n)
            len = n;
        const uint32_t at = a ^ v->xtab[(a >> 7) & 7];
        if (to_smem)
            memcpy(smem + at, buf, len);
        else
            memcpy(buf, smem + at, len);
        buf += len;
        a += len;
        n -= len;
    }
}

/* Fill pattern of out-of-bounds elements (golden observation 3): zero, or the
 * 16-bit 0x7FF7 repeated for OOB_FILL_NAN_REQUEST_ZERO_FMA. p is even (rows
 * start at even offsets), so byte parity == address parity. */
void pa_rows_fill(uint8_t *p, size_t n, int nan_fill);

/* Rows [from, to) of a box at pre-swizzle dst, pitch apart, row_bytes each,
 * are fill: in place when they cover whole 128-byte lines (fill looks the
 * same under every swizzle: atoms move inside a line and the pattern repeats
 * every 2 bytes), else each row through the writer. */
void pa_rows_fill_box(const pa_swz_view *v, uint32_t dst, uint32_t pitch, uint32_t row_bytes, uint64_t from,
                      uint64_t to, int nan_fill, int in_place);

/* Round the f32 values of an image in place (TFLOAT32 maps, observation 4). */
void pa_rows_tf32(uint8_t *p, uint32_t n);

static inline int pa_is_tf32(pa_dtype d)
{
    return d == PA_DTYPE_TFLOAT32 || d == PA_DTYPE_TFLOAT32_FTZ;
}

#endif
