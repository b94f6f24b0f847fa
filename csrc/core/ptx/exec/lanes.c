/* lanes.c - a converged warp's register-only instructions as passes over rows
 * (lanes.h), compiled once per vector level from lanes_body.h: the baseline,
 * and on x86-64 AVX2 and AVX-512 (F, BW, VL) by target attributes, the one a
 * launch uses chosen by pa_simd_level(). The C is the same in each; only the
 * instructions the compiler may pick differ, so every level computes the same
 * bits.
 */
#include "ptx/exec/lanes.h"
#include "ptx/exec/alu.h"

#include <string.h>

/* The loop's lanes carry no dependency (rows are the same or apart): let the
   vectoriser go without run-time overlap checks. */
#if defined(__clang__)
#define PI_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#pragma clang diagnostic ignored "-Wpass-failed"   /* a pass it cannot vectorise (division) stays scalar */
#elif defined(__GNUC__)
#define PI_IVDEP _Pragma("GCC ivdep")
#else
#define PI_IVDEP
#endif

/* The lanes of a row of 32 predicates that are nonzero. */
static inline uint32_t guard32(const uint64_t *g)
{
    uint32_t on = 0;
    for (uint32_t l = 0; l < 32; l++)
        on |= (uint32_t)(g[l] != 0) << l;
    return on;
}

#define LV(name) lanes_##name
#define LV_ATTR
#define LV_GUARD32 guard32
#include "ptx/exec/lanes_body.h"
#undef LV
#undef LV_ATTR
#undef LV_GUARD32

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define PI_LANES_X86 1
#define AVX2 __attribute__((target("avx2")))
#define AVX512 __attribute__((target("avx2,avx512f,avx512bw,avx512vl")))

/* guard32 four lanes a compare (the vectoriser's own pass builds the mask a lane at a time) */
AVX2 static inline uint32_t guard32_avx2(const uint64_t *g)
{
    const __m256i z = _mm256_setzero_si256();
    uint32_t off = 0;
    for (int i = 0; i < 8; i++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(g + 4 * i));
        off |= (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(v, z))) << (4 * i);
    }
    return ~off;
}

/* ... and eight a test */
AVX512 static inline uint32_t guard32_avx512(const uint64_t *g)
{
    uint32_t on = 0;
    for (int i = 0; i < 4; i++) {
        __m512i v = _mm512_loadu_si512((const void *)(g + 8 * i));
        on |= (uint32_t)_mm512_test_epi64_mask(v, v) << (8 * i);
    }
    return on;
}

#define LV(name) lanes_avx2_##name
#define LV_ATTR AVX2
#define LV_GUARD32 guard32_avx2
#include "ptx/exec/lanes_body.h"
#undef LV
#undef LV_ATTR
#undef LV_GUARD32

#define LV(name) lanes_avx512_##name
#define LV_ATTR AVX512
#define LV_GUARD32 guard32_avx512
#include "ptx/exec/lanes_body.h"
#undef LV
#undef LV_ATTR
#undef LV_GUARD32
#endif

const pi_lanes *pi_lanes_for(pa_simd level)
{
#ifdef PI_LANES_X86
    if (level >= PA_SIMD_AVX512)
        return &lanes_avx512_table;
    if (level >= PA_SIMD_AVX2)
        return &lanes_avx2_table;
#endif
    (void)level;
    return &lanes_table;
}

/* Where the lanes are one run, the operation reads and writes their rows in
   place: its functions take each lane's sources before writing that lane's
   results (sem.h), so a destination that is also a source is fine. Else (a
   guard left holes) the sources are gathered and the results put back lane by
   lane, as they are where d and e are one register (e written last). A
   destination e of 0 or 1 (none, the sink) is never written: the operation
   gets a copy of its row. */
void pi_sem_lanes(const pi_prog *p, const pi_ins *in, uint64_t *R, unsigned sh, uint32_t on)
{
    const pi_sem *s = &p->sems[in->x];
    const uint32_t lo = (uint32_t)__builtin_ctz(on), n = (uint32_t)__builtin_popcount(on);
#define ROW(k) (R + ((size_t)(k) << sh))
    const int two = in->e > 1;   /* 0: none; 1: the sink */
    if (on >> lo == (n == 32 ? 0xFFFFFFFFu : (1u << n) - 1) && !(two && in->e == in->d)) {
        uint64_t e[32];
        uint64_t *const dd[2] = {ROW(in->d) + lo, two ? ROW(in->e) + lo : e};
        const uint64_t *const ss[4] = {ROW(in->a) + lo, ROW(in->b) + lo, ROW(in->c) + lo, ROW(in->f) + lo};
        if (!two)                /* a fifth source, where the operation reads one there */
            memcpy(e, ROW(in->e) + lo, n * sizeof *e);
        s->fn(&s->ctl, dd, ss, n);
        return;
    }
    uint64_t a[32], b[32], c[32], f[32], d[32], e[32];
    uint32_t lane[32];
    size_t k = 0;
    for (uint32_t bits = on; bits; bits &= bits - 1, k++) {
        uint32_t l = (uint32_t)__builtin_ctz(bits);
        lane[k] = l;
        a[k] = ROW(in->a)[l];
        b[k] = ROW(in->b)[l];
        c[k] = ROW(in->c)[l];
        f[k] = ROW(in->f)[l];
        e[k] = ROW(in->e)[l];
    }
    uint64_t *const dd[2] = {d, e};
    const uint64_t *const ss[4] = {a, b, c, f};
    s->fn(&s->ctl, dd, ss, k);
    for (size_t i = 0; i < k; i++) {
        ROW(in->d)[lane[i]] = d[i];
        if (two)
            ROW(in->e)[lane[i]] = e[i];
    }
#undef ROW
}
