/* copy_dest.c - bench_core's im2col_load columns (32 KiB from L3) copied in
 * several ways, into the key's one shared-memory destination and into stage
 * buffers taken in turn (4 or 8 of 32 KiB, as a pipeline's stages are), each
 * against the key's memcpy in the same round. docs/performance.md, "Round 11:
 * the column's destination".
 *
 *   gcc -std=gnu11 -O2 -Icsrc/core -Icsrc/include -c bench/harness/copy_dest.c -o /tmp/cd.o
 *   gcc -O2 -flto=auto -Icsrc/core -Icsrc/include $(find csrc/core -name '*.c') /tmp/cd.o -o /tmp/cd -lm -pthread
 *   /tmp/cd [rounds [stages]]      (stages 0: the key's one destination)
 *
 * Printed: the median over the rounds of memcpy time / variant time and the
 * variant's time a column. x86-64 with AVX-512 only.
 */
#define main bench_main
#include "../bench_core.c"
#undef main
#include "copy/rows.h"
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,prfchw"), noinline))

/* 64-byte loads and stores, four a step; the destination fetched for writing
 * `ahead` bytes on (0: not) */
AVX512 static void vector_copy(uint8_t *d, const uint8_t *s, size_t n, size_t ahead)
{
    for (size_t i = 0; i < n; i += 256) {
        if (ahead && i + ahead + 256 <= n)
            for (size_t p = 0; p < 256; p += 64)
                __builtin_prefetch(d + i + ahead + p, 1);
        __m512i a = _mm512_loadu_si512((const void *)(s + i)), b = _mm512_loadu_si512((const void *)(s + i + 64));
        __m512i c = _mm512_loadu_si512((const void *)(s + i + 128)), e = _mm512_loadu_si512((const void *)(s + i + 192));
        _mm512_storeu_si512((void *)(d + i), a);
        _mm512_storeu_si512((void *)(d + i + 64), b);
        _mm512_storeu_si512((void *)(d + i + 128), c);
        _mm512_storeu_si512((void *)(d + i + 192), e);
    }
}

static void rep_movsb(uint8_t *d, const uint8_t *s, size_t n)
{
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

enum { MODEL, MOVER, REP_MOVSB, VECTOR, AHEAD_2K, AHEAD_4K, AHEAD_8K, AHEAD_16K, NV };
static const char *const NAME[NV] = {"model (issue + run)", "library line mover", "rep movsb", "vector copy",
                                     "vector, dst 2 KiB ahead", "vector, dst 4 KiB ahead",
                                     "vector, dst 8 KiB ahead", "vector, dst 16 KiB ahead"};
static int stages;
static uint8_t *stage;   /* 16 x 32 KiB + 1 KiB, 4 KiB-aligned: stage k's shared memory from stage + k * 32 KiB */

static void columns(int v)
{
    if (v == MODEL) {
        im2col_model();
        return;
    }
    pa_swz_view sv;
    for (int i = 0; i < NTILES; i++) {
        const uint8_t *src = tensor + ((size_t)c0s[i] * 64 + r0s[i]) * 64 * 128;
        uint8_t *base = stages ? stage + (size_t)TILE * (size_t)(i % stages) : smem.base;
        uint8_t *d = base + 1024;   /* the key's destination: shared offset 1024 */
        switch (v) {
        case MOVER:
            pa_swz_init(&sv, base, PA_SWIZZLE_128B);
            sv.lines_in(sv.smem, sv.xtab, 1024, src, 128, 256, 0);
            break;
        case REP_MOVSB: rep_movsb(d, src, TILE); break;
        case VECTOR: vector_copy(d, src, TILE, 0); break;
        case AHEAD_2K: vector_copy(d, src, TILE, 2048); break;
        case AHEAD_4K: vector_copy(d, src, TILE, 4096); break;
        case AHEAD_8K: vector_copy(d, src, TILE, 8192); break;
        default: vector_copy(d, src, TILE, 16384); break;
        }
    }
}

int main(int argc, char **argv)
{
    int R = argc > 1 ? atoi(argv[1]) : 101;
    stages = argc > 2 ? atoi(argv[2]) : 0;
    if (R < 1 || R > 1001 || stages < 0 || stages > 16)
        return 2;
    if (posix_memalign((void **)&tensor, 2u << 20, TENSOR_BYTES) || posix_memalign((void **)&stage, 4096, 16 * TILE + 1024))
        return 1;
    madvise(tensor, TENSOR_BYTES, MADV_HUGEPAGE);
    memset(stage, 0, 16 * TILE + 1024);
    scratch = malloc(SCRATCH_BYTES);
    fill_tensor();
    pa_error e;
    if (machine_setup(&e))
        return 1;
    im2col_setup();
    im2col_model();
    im2col_base();
    static double ratio[NV][1001], t[NV][1001];
    for (int r = 0; r < R; r++)
        for (int i = 0; i < NV; i++) {
            const int v = (i + r) % NV;   /* each variant after each other in turn */
            double t0 = now();
            im2col_base();
            double t1 = now();
            columns(v);
            double t2 = now();
            ratio[v][r] = (t1 - t0) / (t2 - t1);
            t[v][r] = t2 - t1;
        }
    printf("destination: %s\n", stages ? "stage buffers in turn" : "the key's one buffer");
    if (stages)
        printf("stages: %d of 32 KiB (the model still writes its one buffer)\n", stages);
    for (int v = 0; v < NV; v++)
        printf("%-26s %.3f  %4.0f ns a column\n", NAME[v], median(ratio[v], R), 1e9 * median(t[v], R) / NTILES);
    return 0;
}
