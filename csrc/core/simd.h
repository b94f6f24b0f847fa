/* simd.h - which vector instructions the host CPU offers (internal).
 *
 * The fast loops that have vector versions (reduce_x86.c) pick one when an
 * operation is set up, by pa_simd_level(): the best level this CPU runs,
 * found once with the compiler's CPU probe, lowered by pa_simd_cap() (tests
 * run every level on one machine). Every level computes the same bytes.
 */
#ifndef PA_SIMD_H
#define PA_SIMD_H

typedef enum {
    PA_SIMD_NONE = 0,   /* portable C only */
    PA_SIMD_SSE2 = 1,   /* x86-64 baseline */
    PA_SIMD_AVX2 = 2,   /* AVX2 with F16C (every AVX2 x86-64 CPU has both) */
    PA_SIMD_AVX512 = 3, /* AVX-512 F, BW and VL, with AVX2 and F16C */
    PA_SIMD_COUNT
} pa_simd;

/* min(the CPU's level, the cap) */
pa_simd pa_simd_level(void);
/* the CPU's own level */
pa_simd pa_simd_cpu(void);
/* Use at most `level` from now on (PA_SIMD_COUNT - 1: no cap); returns the
 * previous cap. Affects operations set up afterwards. */
pa_simd pa_simd_cap(pa_simd level);
/* "none", "sse2", "avx2", "avx512" */
const char *pa_simd_name(pa_simd level);

/* AVX512_BF16 (with AVX-512 DQ) beside the AVX512 level: the bf16 add narrows
 * with its conversion instruction (reduce_x86.c). pa_simd_bf16(): the CPU has
 * it, the level in use is AVX512 and it is allowed; pa_simd_bf16_cpu(): the
 * CPU has it (and the compiler knows it: PA_SIMD_HAS_BF16). pa_simd_bf16_allow(0 / 1) switches its use off / on (tests run
 * both loops; both compute the same bytes) and returns the previous setting.
 * Like the cap, it affects operations set up afterwards. */
#if defined(__x86_64__) && ((defined(__clang__) && __clang_major__ >= 9) || \
                             (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 10))
#define PA_SIMD_HAS_BF16 1   /* this compiler knows AVX512_BF16 */
#else
#define PA_SIMD_HAS_BF16 0
#endif
int pa_simd_bf16(void);
int pa_simd_bf16_cpu(void);
int pa_simd_bf16_allow(int on);

/* AVX512_FP16 beside the AVX512 level, the same way: the f16 add is one
 * binary16 add (reduce_x86.c). GCC 12 knows it; clang 14's immintrin.h
 * declares its intrinsics only where the whole file is built for it. */
#if defined(__x86_64__) && ((defined(__clang__) && __clang_major__ >= 14 && defined(__AVX512FP16__)) || \
                             (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 12))
#define PA_SIMD_HAS_FP16 1   /* this compiler knows AVX512_FP16 */
#else
#define PA_SIMD_HAS_FP16 0
#endif
int pa_simd_fp16(void);
int pa_simd_fp16_cpu(void);
int pa_simd_fp16_allow(int on);

#endif
