/* im2col_parts.c - bench_core's im2col_load key taken apart, in one process
 * and the same conditions: the whole model (issue + run), the library's
 * line mover alone on the same 256 rows of each column, and a copy of that
 * mover with the destination lines fetched for writing (and the source
 * fetched) ahead, each against the key's memcpy in the same round.
 * docs/performance.md ("The swizzled .im2col column on the AMD machine").
 *
 *   gcc -std=gnu11 -O2 -Icsrc/core -Icsrc/include -c bench/harness/im2col_parts.c -o /tmp/parts.o
 *   gcc -O2 -flto=auto -Icsrc/core -Icsrc/include $(find csrc/core -name '*.c') /tmp/parts.o -o /tmp/parts -lm -pthread
 *   /tmp/parts [rounds]
 *
 * Printed: the median over the rounds of memcpy time / variant time. x86-64
 * with AVX-512 only.
 */
#define main bench_main
#include "../bench_core.c"
#undef main
#include "copy/rows.h"
#include <immintrin.h>
/* the AVX-512 line loop of copy/lines.c (aligned rows), destination lines fetched for writing dpf ahead, source spf ahead */
__attribute__((target("avx512f,avx512bw,avx512vl,avx2,prfchw"),noinline))
static void mover(uint8_t *smem, const uint32_t *xtab, uint32_t a, const uint8_t *src, int64_t stride, uint32_t n, int dpf, int spf)
{
    for (uint32_t r = 0; r + 2 <= n; r += 2, a += 256, src += 2 * stride) {
        if (dpf && r * 128 + dpf < n * 128) { __builtin_prefetch(smem + a + dpf, 1); __builtin_prefetch(smem + a + dpf + 64, 1); __builtin_prefetch(smem + a + dpf + 128, 1); __builtin_prefetch(smem + a + dpf + 192, 1); }
        if (spf && r * 128 + spf < n * 128) { __builtin_prefetch(src + spf); __builtin_prefetch(src + spf + 64); __builtin_prefetch(src + spf + 128); __builtin_prefetch(src + spf + 192); }
        __m512i v0 = _mm512_loadu_si512((const void *)src), v1 = _mm512_loadu_si512((const void *)(src + 64));
        __m512i v2 = _mm512_loadu_si512((const void *)(src + stride)), v3 = _mm512_loadu_si512((const void *)(src + stride + 64));
        uint32_t k0 = xtab[(a >> 7) & 7] >> 4, k1 = xtab[((a + 128) >> 7) & 7] >> 4;
        const __m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
        __m512i i0 = _mm512_xor_si512(iota, _mm512_set1_epi64(2 * (k0 & 3))), i1 = _mm512_xor_si512(iota, _mm512_set1_epi64(2 * (k1 & 3)));
        uint32_t h0 = (k0 >> 2) * 64, h1 = (k1 >> 2) * 64;
        uint8_t *line = smem + a;
        _mm512_storeu_si512((void *)(line + h0), _mm512_permutexvar_epi64(i0, v0));
        _mm512_storeu_si512((void *)(line + (64 ^ h0)), _mm512_permutexvar_epi64(i0, v1));
        _mm512_storeu_si512((void *)(line + 128 + h1), _mm512_permutexvar_epi64(i1, v2));
        _mm512_storeu_si512((void *)(line + 128 + (64 ^ h1)), _mm512_permutexvar_epi64(i1, v3));
    }
}
static int DPF, SPF, LIB;
static void mover_run(void)
{
    pa_swz_view sv;
    pa_swz_init(&sv, smem.base, PA_SWIZZLE_128B);
    for (int i = 0; i < NTILES; i++) {
        const uint8_t *src = tensor + ((size_t)c0s[i] * 64 + r0s[i]) * 64 * 128;
        if (LIB) sv.lines_in(sv.smem, sv.xtab, 1024, src, 128, 256, 0);
        else mover(sv.smem, sv.xtab, 1024, src, 128, 256, DPF, SPF);
    }
}
int main(int argc, char **argv)
{
    int R = argc > 1 ? atoi(argv[1]) : 101;
    if (posix_memalign((void **)&tensor, 2u << 20, TENSOR_BYTES)) return 1;
    madvise(tensor, TENSOR_BYTES, MADV_HUGEPAGE);
    scratch = malloc(SCRATCH_BYTES);
    fill_tensor();
    pa_error e;
    if (machine_setup(&e)) return 1;
    im2col_setup();
    im2col_model(); im2col_base();
    enum { NV = 6 };
    const char *nm[NV] = {"model", "lib mover", "mover", "mover dst8k", "mover dst8k src4k", "mover dst16k"};
    static double rat[NV][1001];
    for (int r = 0; r < R; r++)
        for (int v = 0; v < NV; v++) {
            double t0 = now(); im2col_base(); double t1 = now();
            LIB = v == 1; DPF = v == 3 || v == 4 ? 8192 : v == 5 ? 16384 : 0; SPF = v == 4 ? 4096 : 0;
            if (v == 0) im2col_model(); else mover_run();
            double t2 = now();
            rat[v][r] = (t1 - t0) / (t2 - t1);
        }
    for (int v = 0; v < NV; v++) { printf("%-20s %.3f\n", nm[v], median(rat[v], R)); }
    /* the model's own cost a load, with and without 64 KiB of copy through L1 between loads */
    static double tb[1001], tm[1001], tl[1001], ts[1001];
    for (int r = 0; r < R; r++) {
        double t0 = now(); im2col_base(); double t1 = now(); im2col_model(); double t2 = now();
        LIB = 1; mover_run(); double t3 = now();
        tb[r] = t1 - t0, tm[r] = t2 - t1, tl[r] = t3 - t2;
    }
    printf("memcpy %.0f ns, model %.0f ns, lib mover %.0f ns a load\n", 1e9 * median(tb, R) / NTILES,
           1e9 * median(tm, R) / NTILES, 1e9 * median(tl, R) / NTILES);
    pa_im2col_params p;   /* 8 pixels a column (1 KiB): the copy small, the same issue and run */
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_BFLOAT16, p.rank = 4, p.global_address = GBASE;
    p.global_dim[0] = 64, p.global_dim[1] = 64, p.global_dim[2] = 64, p.global_dim[3] = 64;
    p.global_strides[0] = 128, p.global_strides[1] = 128 * 64, p.global_strides[2] = 128 * 64 * 64;
    p.channels_per_pixel = 64, p.pixels_per_column = 8;
    for (int d = 0; d < 4; d++)
        p.element_strides[d] = 1;
    p.swizzle = PA_SWIZZLE_128B;
    if (pa_tensormap_encode_im2col(&cur, &p, &e))
        return 1;
    for (int r = 0; r < R; r++) {
        double t0 = now();
        const uint16_t offs[PA_MAX_RANK - 2] = {0, 0, 0};
        for (int i = 0; i < NTILES; i++) {
            int32_t c[PA_MAX_RANK] = {0, 0, (int32_t)r0s[i], (int32_t)c0s[i], 0};
            arrive_tx(1024);
            if (pa_issue_tensor_load(&mach, 0, 0, &cur, PA_MODE_IM2COL, c, offs, 1024, 0, COPY_BAR, 0, 0, &e) ||
                pa_machine_run(&mach, &e))
                return 1;
        }
        ts[r] = now() - t0;
    }
    printf("the model with 1 KiB columns: %.0f ns a load\n", 1e9 * median(ts, R) / NTILES);
    return 0;
}
