/* gemm_replay.c - the gemm_replay key in C: its 262,144 records replayed by
 * pa_replay_threads, against memcpy of the same rows, with no Python around.
 *
 *     gcc -std=c11 -O2 -Icsrc/core -Icsrc/include bench/gemm_replay.c \
 *         $(find csrc/core -name '*.c') -o gemm_replay -lm -pthread
 *     ./gemm_replay [OFFSET [THREADS [ROUNDS]]]
 *
 * A and B (4096 x 4096 bf16) start OFFSET bytes (default 16, as a NumPy
 * array's data does) past a 2 MiB boundary. Three sides, in alternation:
 *   replay     the records (arrive.expect_tx, the A and B tile loads, the wait;
 *              4 stages of 32 KiB from shared address 1024), THREADS threads
 *   memcpy     bench/memcpy_rows.c's order (every A tile, then every B tile)
 *              into one 16 KiB buffer: the key's baseline
 *   same dst   memcpy of the same rows in the replay's order into the same
 *              shared-memory offsets (the stages), unswizzled
 *   writer     the model's row writer alone (copy/rows.h: the first rows
 *              prefetched, then lines_in), the same rows, order and stages
 * Prints GB/s (median of ROUNDS, default 5; thread CPU time, wall time when
 * THREADS > 1) and the ns a load takes. */
#define _GNU_SOURCE
#include "batch.h"
#include "copy/rows.h"
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define DIM 4096u
#define TB 128u   /* tile rows */
#define BK 64u    /* k-step, elements */
#define TILE (TB * BK * 2u)
#define NK (DIM / BK)
#define NT (DIM / TB)
#define LOADS (2u * NT * NT * NK)

static int wall;
static double now(void)
{
    struct timespec t;
    clock_gettime(wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what, const pa_error *e)
{
    fprintf(stderr, "gemm_replay: %s: %s\n", what, e ? e->msg : "out of memory");
    exit(1);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint8_t *tensor(size_t off, unsigned seed)
{
    const size_t sz = (size_t)DIM * DIM * 2;
    uint8_t *p = aligned_alloc(2u << 20, sz + (2u << 20));
    if (!p)
        die("tensor", NULL);
#ifdef MADV_HUGEPAGE
    madvise(p, sz + (2u << 20), MADV_HUGEPAGE);
#endif
    for (size_t i = 0; i < sz; i++)
        p[off + i] = (uint8_t)(i * seed);
    return p + off;
}

static void rows(uint8_t *dst, const uint8_t *src)
{
    for (uint32_t r = 0; r < TB; r++)
        memcpy(dst + (size_t)r * BK * 2, src + (size_t)r * DIM * 2, BK * 2);
}

int main(int argc, char **argv)
{
    const size_t off = argc > 1 ? (size_t)atoi(argv[1]) % 4096 : 16;
    const unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    rounds = rounds < 1 ? 1 : rounds > 99 ? 99 : rounds;
    wall = threads > 1;
    uint8_t *A = tensor(off, 7), *B = tensor(off, 13), *buf = malloc(TILE);
    pa_machine m;
    pa_error e;
    uint64_t id;
    const uint64_t ga = 0x100000000ull, gb = 0x200000000ull, sz = (uint64_t)DIM * DIM * 2;
    if (!buf || pa_machine_init(&m, 1, 200 * 1024, &e) || pa_global_add(&m.global, ga, sz, A, &id, &e) ||
        pa_global_add(&m.global, gb, sz, B, &id, &e))
        die("machine", &e);
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_BFLOAT16;
    p.rank = 2;
    p.global_dim[0] = p.global_dim[1] = DIM;
    p.global_strides[0] = DIM * 2;
    p.box_dim[0] = BK;
    p.box_dim[1] = TB;
    p.element_strides[0] = p.element_strides[1] = 1;
    p.swizzle = PA_SWIZZLE_128B;
    pa_tensormap ma, mb;
    p.global_address = ga;
    if (pa_tensormap_encode_tiled(&ma, &p, &e))
        die("encode", &e);
    p.global_address = gb;
    if (pa_tensormap_encode_tiled(&mb, &p, &e))
        die("encode", &e);
    const pa_tensormap *maps[2] = {&ma, &mb};
    for (uint32_t s = 0; s < 4; s++)
        if (pa_machine_mbar_init(&m, 0, 8 + 8 * s, 1, &e))
            die("mbarrier.init", &e);
    const size_t n = (size_t)LOADS * 2;
    pa_rec *r = calloc(n, sizeof *r);
    if (!r)
        die("records", NULL);
    int parity[4] = {0};
    size_t step = 0;
    for (uint32_t mi = 0; mi < NT; mi++)
        for (uint32_t ni = 0; ni < NT; ni++)
            for (uint32_t k = 0; k < NK; k++, step++) {
                const uint32_t s = step % 4;
                pa_rec *q = r + 4 * step;
                const int64_t bar = 8 + 8 * s, base = 1024 + 2 * TILE * s;
                q[0].f[PA_REC_KIND] = PA_REC_MBAR_ARRIVE;
                q[0].f[PA_REC_MBAR] = bar;
                q[0].f[PA_REC_A] = 1;
                q[0].f[PA_REC_B] = 2 * TILE;
                for (int j = 1; j < 3; j++) {
                    q[j].f[PA_REC_KIND] = PA_REC_TENSOR_LOAD;
                    q[j].f[PA_REC_MAP] = j - 1;
                    q[j].f[PA_REC_C0] = BK * k;
                    q[j].f[PA_REC_C0 + 1] = TB * (j == 1 ? mi : ni);
                    q[j].f[PA_REC_SMEM] = base + TILE * (j - 1);
                    q[j].f[PA_REC_MBAR] = bar;
                }
                q[3].f[PA_REC_KIND] = PA_REC_MBAR_WAIT;
                q[3].f[PA_REC_MBAR] = bar;
                q[3].f[PA_REC_A] = parity[s];
                parity[s] ^= 1;
            }
    uint8_t *smem = m.cluster.smem[0];
    pa_swz_view sv;
    pa_swz_init(&sv, smem, PA_SWIZZLE_128B);
    double t[4][99];
    for (int i = -1; i < rounds; i++) {   /* round -1: warm-up */
        size_t failed;
        double t0 = now();
        if (pa_replay_threads(&m, r, n, maps, 2, threads, &failed, &e))
            die("replay", &e);
        double t1 = now();
        for (int w = 0; w < 2; w++)
            for (uint32_t mi = 0; mi < NT; mi++)
                for (uint32_t ni = 0; ni < NT; ni++)
                    for (uint32_t k = 0; k < NK; k++)
                        rows(buf, (w ? B + (size_t)ni * TB * DIM * 2 : A + (size_t)mi * TB * DIM * 2) + k * BK * 2);
        double t2 = now();
        step = 0;
        for (uint32_t mi = 0; mi < NT; mi++)
            for (uint32_t ni = 0; ni < NT; ni++)
                for (uint32_t k = 0; k < NK; k++, step++) {
                    uint8_t *d = smem + 1024 + 2 * TILE * (step % 4);
                    rows(d, A + (size_t)mi * TB * DIM * 2 + k * BK * 2);
                    rows(d + TILE, B + (size_t)ni * TB * DIM * 2 + k * BK * 2);
                }
        double t3 = now();
        step = 0;
        for (uint32_t mi = 0; mi < NT; mi++)
            for (uint32_t ni = 0; ni < NT; ni++)
                for (uint32_t k = 0; k < NK; k++, step++)
                    for (int w = 0; w < 2; w++) {
                        const uint32_t a = 1024 + 2 * TILE * (step % 4) + TILE * (uint32_t)w;
                        const uint8_t *src = (w ? B + (size_t)ni * TB * DIM * 2 : A + (size_t)mi * TB * DIM * 2) +
                                             k * BK * 2;
                        for (uint32_t q = 0; q < PA_PREFETCH_ROWS; q++)
                            pa_prefetch_row(src + (size_t)q * DIM * 2, 128);
                        sv.lines_in(smem, sv.xtab, a, src, DIM * 2, TB, 0);
                    }
        double t4 = now();
        if (i >= 0) {
            t[0][i] = t1 - t0;
            t[1][i] = t2 - t1;
            t[2][i] = t3 - t2;
            t[3][i] = t4 - t3;
        }
    }
    const double bytes = (double)LOADS * TILE;
    printf("A, B %zu bytes past 2 MiB; %u thread(s); median of %d (%s time)\n", off, threads, rounds,
           wall ? "wall" : "thread CPU");
    static const char *const what[4] = {"replay", "memcpy (key's baseline)", "memcpy, same rows and dst",
                                        "row writer alone"};
    for (int s = 0; s < 4; s++) {
        qsort(t[s], (size_t)rounds, sizeof(double), cmp);
        const double med = t[s][rounds / 2];
        printf("%-26s %7.2f GB/s %7.1f ns/load\n", what[s], bytes / med / 1e9, med / LOADS * 1e9);
    }
    pa_machine_free(&m);
    free(r);
    free(buf);
    return 0;
}
