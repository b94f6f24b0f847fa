/* gather4run.c - the loads of a run of .tile::gather4 loads (one plan, each
 * load its own coordinates and destination: engine/tensor.c's run records)
 * moved in one pass.
 *
 * Where every row of a load is a whole 128-byte line inside the tensor and
 * the tensor lies in one registered buffer, a row's bytes are found by
 * address arithmetic (no buffer search a row) and the rows of many loads go
 * through one call of the vector level's row mover, which fetches the rows
 * a few loads on first: their misses overlap as a memcpy loop's do. The
 * rows' addresses of a pass are worked out first, a load's four in one
 * vector where the CPU has AVX-512. The bytes written, and the order they
 * are written in, are pa_gather4_load's for each load in turn.
 */
#include "mode.h"
#include "rows.h"

#include "../simd.h"

/* Loads a pass takes: their rows' addresses stay on the stack (3 KiB). */
#define PASS 64

/* The tensor as a run's loads see it: byte 0 in host memory and its shape. */
typedef struct {
    const uint8_t *base;
    uint64_t cols;      /* the last column a row may start at, + 1 */
    uint64_t dim1, stride, unit;
    uint32_t pitch, line_mask;   /* under a swizzle 127 (the place must be line-aligned), else 0 */
} tensor_rows;

/* The four rows of the load at x and their shared addresses, if each is a
 * whole line inside the tensor at a line-aligned place (1; 0: it is
 * pa_gather4_load's). A negative coordinate is past every bound as uint64. */
static PA_INLINE int load_rows(const tensor_rows *t, const pa_copy_at *x, const uint8_t **src, uint32_t *a)
{
    const uint64_t col = (uint64_t)(int64_t)x->coords[0];
    const uint32_t dst = pa_smem_offset(x->smem_addr);
    const uint64_t r0 = (uint64_t)(int64_t)x->coords[1], r1 = (uint64_t)(int64_t)x->coords[2];
    const uint64_t r2 = (uint64_t)(int64_t)x->coords[3], r3 = (uint64_t)(int64_t)x->coords[4];
    if (col >= t->cols || (dst & t->line_mask) || r0 >= t->dim1 || r1 >= t->dim1 || r2 >= t->dim1 || r3 >= t->dim1)
        return 0;
    const uint8_t *p = t->base + col * t->unit;
    src[0] = p + r0 * t->stride;
    src[1] = p + r1 * t->stride;
    src[2] = p + r2 * t->stride;
    src[3] = p + r3 * t->stride;
    a[0] = dst;
    a[1] = dst + t->pitch;
    a[2] = dst + 2 * t->pitch;
    a[3] = dst + 3 * t->pitch;
    return 1;
}

/* The rows of loads at[step * i], i = from .. to - 1, into src / a (four a
 * load, from src[4 * from]), up to the first load that is not whole lines
 * (load_rows); returns the index it stopped at. */
typedef uint32_t (*rows_fill_fn)(const tensor_rows *t, const pa_copy_at *at, int step, uint32_t from, uint32_t to,
                                 const uint8_t **src, uint32_t *a);

static uint32_t rows_fill(const tensor_rows *t, const pa_copy_at *at, int step, uint32_t from, uint32_t to,
                          const uint8_t **src, uint32_t *a)
{
    uint32_t i = from;
    for (; i < to; i++)
        if (!load_rows(t, at + (ptrdiff_t)step * (ptrdiff_t)i, src + 4 * i, a + 4 * i))
            break;
    return i;
}

#if defined(__x86_64__) && UINTPTR_MAX == UINT64_MAX && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* load_rows with a load's four rows in one vector (AVX-512 F and VL):
 *
 *     coords[1..4] -> sign-extended to u64 -> each < dim1?   (one compare)
 *     src = base + col * unit + row * stride                  (64-bit lanes)
 *     a   = dst + {0, 1, 2, 3} * pitch
 *
 * row * stride as one 32 x 32 -> 64-bit product (AVX-512 F has no 64-bit
 * multiply): a row that passes is a non-negative 32-bit coordinate, and the
 * pick below takes this only for a stride below 2^32, so the product is
 * exact. */
__attribute__((target("avx512f,avx512vl,avx2"))) static uint32_t rows_fill_avx512(
    const tensor_rows *t, const pa_copy_at *at, int step, uint32_t from, uint32_t to, const uint8_t **src,
    uint32_t *a)
{
    const __m256i dim1 = _mm256_set1_epi64x((long long)t->dim1);
    const __m256i stride = _mm256_set1_epi64x((long long)t->stride);
    const __m128i pitch = _mm_setr_epi32(0, (int)t->pitch, (int)(2 * t->pitch), (int)(3 * t->pitch));
    uint32_t i = from;
    for (; i < to; i++) {
        const pa_copy_at *x = at + (ptrdiff_t)step * (ptrdiff_t)i;
        const uint64_t col = (uint64_t)(int64_t)x->coords[0];
        const uint32_t dst = pa_smem_offset(x->smem_addr);
        const __m256i r = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)&x->coords[1]));
        if (col >= t->cols || (dst & t->line_mask) || _mm256_cmpge_epu64_mask(r, dim1))
            break;
        const __m256i off = _mm256_mul_epu32(r, stride);
        const __m256i p = _mm256_set1_epi64x((long long)(uintptr_t)(t->base + col * t->unit));
        _mm256_storeu_si256((__m256i *)(void *)(src + 4 * i), _mm256_add_epi64(p, off));
        _mm_storeu_si128((__m128i *)(void *)(a + 4 * i), _mm_add_epi32(_mm_set1_epi32((int)dst), pitch));
    }
    return i;
}
#endif

/* The vector level's rows_fill (pa_simd_level, when a run starts); rows
 * 4 GiB or more apart are load_rows's. */
static rows_fill_fn rows_fill_pick(const tensor_rows *t)
{
#if defined(__x86_64__) && UINTPTR_MAX == UINT64_MAX && (defined(__GNUC__) || defined(__clang__))
    if (pa_simd_level() >= PA_SIMD_AVX512 && t->stride <= UINT32_MAX)
        return rows_fill_avx512;
#endif
    return rows_fill;
}

uint32_t pa_gather4_load_run(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, const pa_copy_at *at,
                             int step, uint32_t n, uint32_t more)
{
    const pa_tensormap *m = &p->map;
    const pa_box_layout *l = &p->l;
    const pa_swizzle sw = l->swizzle;
    /* the rows pa_gather4_load moves through the line mover: whole lines of bytes as they are */
    if (p->mode != PA_MODE_TILE_GATHER4 || p->packed || pa_copy_is_store(p->dir) || m->rank != 2 ||
        l->step0 != 1 || l->row_bytes != 128 || (uint64_t)l->n[0] * l->unit != 128 || pa_is_tf32(m->dtype) ||
        (sw != PA_SWIZZLE_NONE && (pa_swizzle_atom(sw) != 16 || l->pitch % 128)))
        return 0;
    const uint64_t dim0 = m->global_dim[0];
    tensor_rows t = {NULL, dim0 >= l->n[0] ? dim0 - l->n[0] + 1 : 0, m->global_dim[1], m->global_strides[0], l->unit,
                     l->pitch, sw == PA_SWIZZLE_NONE ? 0 : 127};
    /* the tensor's bytes: globalAddress to the end of its last row, in one buffer */
    const uint64_t end = t.dim1 ? pa_gaddr(m->global_address, pa_gaddr_mul(t.dim1 - 1, t.stride), dim0, t.unit)
                                : PA_GADDR_OVERFLOW;
    if (end == PA_GADDR_OVERFLOW || end <= m->global_address ||
        !(t.base = pa_global_resolve(g, m->global_address, end - m->global_address, NULL)))
        return 0;
    pa_swz_view sv;
    pa_swz_init(&sv, smem.base, sw);
    const uint32_t fetch = PA_GATHER_AHEAD / 4;   /* loads whose rows are fetched past a pass */
    const rows_fill_fn fill = rows_fill_pick(&t);
    uint32_t done = 0;
    for (;;) {
        const uint8_t *src[4 * (PASS + PA_GATHER_AHEAD / 4)];
        uint32_t a[4 * (PASS + PA_GATHER_AHEAD / 4)];
        const pa_copy_at *first = at + (ptrdiff_t)step * (ptrdiff_t)done;
        const uint32_t k = fill(&t, first, step, 0, n - done < PASS ? n - done : PASS, src, a);
        /* the next pass's first rows, or the loads after the run's, fetched as the last rows move */
        const uint32_t rest = k < PASS && done + k < n ? 0 : n - done - k + more;
        const uint32_t f = fill(&t, first, step, k, k + (rest < fetch ? rest : fetch), src, a);
        sv.rows_at(sv.smem, sv.xtab, a, src, 4 * k, 4 * f);
        done += k;
        if (k < PASS || done == n)
            return done;
    }
}
