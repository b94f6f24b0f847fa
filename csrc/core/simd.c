/* simd.c - the host CPU's vector level (see simd.h). */
#include "simd.h"

#include <stdatomic.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

/* F16C (CPUID.1:ECX bit 29); not every compiler's CPU probe names it. Its
 * registers are AVX's, whose OS support the AVX2 probe has checked. */
static int has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1u);
}
#endif

static atomic_int cap = PA_SIMD_COUNT - 1;
static atomic_int cpu = -1;          /* not probed yet */

pa_simd pa_simd_cpu(void)
{
    int c = atomic_load_explicit(&cpu, memory_order_relaxed);
    if (c >= 0)
        return (pa_simd)c;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    c = PA_SIMD_SSE2;
    if (__builtin_cpu_supports("avx2") && has_f16c()) {
        c = PA_SIMD_AVX2;
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl"))
            c = PA_SIMD_AVX512;
    }
#else
    c = PA_SIMD_NONE;
#endif
    atomic_store_explicit(&cpu, c, memory_order_relaxed);   /* every thread finds the same */
    return (pa_simd)c;
}

pa_simd pa_simd_level(void)
{
    int c = (int)pa_simd_cpu(), m = atomic_load_explicit(&cap, memory_order_relaxed);
    return (pa_simd)(c < m ? c : m);
}

pa_simd pa_simd_cap(pa_simd level)
{
    int l = (int)level < 0 ? 0 : (int)level >= PA_SIMD_COUNT ? PA_SIMD_COUNT - 1 : (int)level;
    return (pa_simd)atomic_exchange_explicit(&cap, l, memory_order_relaxed);
}

/* An instruction set extension beside the AVX512 level: probed once, used
 * when the level in use is AVX512, the CPU has it and it is allowed. */
typedef struct {
    atomic_int allowed;
    atomic_int cpu;                  /* -1: not probed yet */
    int (*probe)(void);
} extension;

static int ext_cpu(extension *x)
{
    int c = atomic_load_explicit(&x->cpu, memory_order_relaxed);
    if (c < 0) {
        c = pa_simd_cpu() >= PA_SIMD_AVX512 && x->probe();
        atomic_store_explicit(&x->cpu, c, memory_order_relaxed);
    }
    return c;
}

static int ext_on(extension *x)
{
    return pa_simd_level() >= PA_SIMD_AVX512 && ext_cpu(x) && atomic_load_explicit(&x->allowed, memory_order_relaxed);
}

static int ext_allow(extension *x, int on)
{
    return atomic_exchange_explicit(&x->allowed, on != 0, memory_order_relaxed);
}

/* Their registers are AVX-512's, whose OS support the level's probe has checked. */
static int probe_bf16(void)
{
#if PA_SIMD_HAS_BF16
    unsigned a, b, c, d;   /* AVX512_BF16: CPUID.(7,1):EAX bit 5 (with AVX-512 DQ) */
    return __builtin_cpu_supports("avx512dq") && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 5 & 1u);
#else
    return 0;
#endif
}

static int probe_fp16(void)
{
#if PA_SIMD_HAS_FP16
    unsigned a, b, c, d;   /* AVX512_FP16: CPUID.(7,0):EDX bit 23 */
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 23 & 1u);
#else
    return 0;
#endif
}

static extension bf16 = {1, -1, probe_bf16}, fp16 = {1, -1, probe_fp16};

int pa_simd_bf16_cpu(void) { return ext_cpu(&bf16); }
int pa_simd_bf16(void) { return ext_on(&bf16); }
int pa_simd_bf16_allow(int on) { return ext_allow(&bf16, on); }
int pa_simd_fp16_cpu(void) { return ext_cpu(&fp16); }
int pa_simd_fp16(void) { return ext_on(&fp16); }
int pa_simd_fp16_allow(int on) { return ext_allow(&fp16, on); }

const char *pa_simd_name(pa_simd level)
{
    static const char *const names[PA_SIMD_COUNT] = {"none", "sse2", "avx2", "avx512"};
    return (int)level >= 0 && level < PA_SIMD_COUNT ? names[level] : "?";
}
