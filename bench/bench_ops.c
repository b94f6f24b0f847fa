/* bench_ops.c - the bookkeeping of one operation, with almost no bytes moved.
 *
 *     gcc -std=c11 -O2 -Icsrc/core -Icsrc/include bench/bench_ops.c \
 *         $(find csrc/core -name '*.c') -o bench_ops -lm -pthread
 *     ./bench_ops [ROUNDS]
 *
 * replay: gemm_replay's record pattern (arrive.expect_tx, two .tile loads,
 * try_wait on one of four stages) through pa_replay, each load one 128-byte
 * row of one of two 4 MiB tensors (two maps taking turns, as A and B) that
 * stay in the caches: ns per load is the issue,
 * plan, queue, completion and mbarrier work of one replayed load.
 * cp.async: 2,048 16-byte cp.async.cg, commit, wait_all, 64 times: ns per
 * cp.async, each by its own call: scattered sources (one record each), then
 * one contiguous run (the calls extend one record, engine/cprun.c).
 * cp.async run: the same contiguous 2,048 as one pa_issue_cp_async_run:
 * ns per run of 32 KiB with its commit and wait (the bytes moved included).
 * gather4: .tile::gather4 (sm_100a) loads of four 128-byte rows of the same
 * tensor, 128B swizzle, 64 issued then run, with the arrive.expect_tx: ns
 * per load (issue, plan, queue, four rows, complete_tx).
 * Prints the best of ROUNDS (default 5) in thread CPU time. Not a
 * bench/run.py key (no baseline): a profile's driver (perf record ./bench_ops).
 */
#define _GNU_SOURCE
#include "batch.h"
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GBASE 0x100000000ull
#define ROWS 1024u
#define ROW_BYTES 4096u
#define STEPS 65536u

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what, const pa_error *e)
{
    fprintf(stderr, "bench_ops: %s: %s\n", what, e->msg);
    exit(1);
}

int main(int argc, char **argv)
{
    const int rounds = argc > 1 ? atoi(argv[1]) : 5;
    uint8_t *t = aligned_alloc(64, (size_t)ROWS * ROW_BYTES);
    if (!t)
        return 1;
    memset(t, 1, (size_t)ROWS * ROW_BYTES);
    pa_machine m;
    pa_error e;
    uint64_t id;
    uint8_t *t2 = aligned_alloc(64, (size_t)ROWS * ROW_BYTES);
    if (!t2)
        return 1;
    memset(t2, 2, (size_t)ROWS * ROW_BYTES);
    if (pa_machine_init(&m, 1, 200 * 1024, &e) || pa_global_add(&m.global, GBASE, (uint64_t)ROWS * ROW_BYTES, t, &id, &e) ||
        pa_global_add(&m.global, GBASE + 2 * (uint64_t)ROWS * ROW_BYTES, (uint64_t)ROWS * ROW_BYTES, t2, &id, &e))
        die("machine", &e);
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_BFLOAT16;
    p.rank = 2;
    p.global_address = GBASE;
    p.global_dim[0] = ROW_BYTES / 2;
    p.global_dim[1] = ROWS;
    p.global_strides[0] = ROW_BYTES;
    p.box_dim[0] = 64;
    p.box_dim[1] = 1;
    p.element_strides[0] = p.element_strides[1] = 1;
    p.swizzle = PA_SWIZZLE_128B;
    pa_tensormap a, b;
    if (pa_tensormap_encode_tiled(&a, &p, &e))
        die("encode", &e);
    p.global_address = GBASE + 2 * (uint64_t)ROWS * ROW_BYTES;   /* a second tensor: two maps, as A and B */
    if (pa_tensormap_encode_tiled(&b, &p, &e))
        die("encode", &e);
    const pa_tensormap *maps[2] = {&a, &b};
    for (uint32_t s = 0; s < 5; s++)   /* four stages, and gather4's */
        if (pa_machine_mbar_init(&m, 0, 8 + 8 * s, 1, &e))
            die("mbarrier.init", &e);
    const size_t n = (size_t)STEPS * 4;
    pa_rec *r = calloc(n, sizeof *r);
    if (!r)
        return 1;
    int parity[4] = {0};
    for (uint32_t k = 0; k < STEPS; k++) {
        const uint32_t s = k % 4;
        pa_rec *q = r + 4 * (size_t)k;
        const int64_t bar = 8 + 8 * s, base = 1024 + 256 * s;
        q[0].f[PA_REC_KIND] = PA_REC_MBAR_ARRIVE;
        q[0].f[PA_REC_MBAR] = bar;
        q[0].f[PA_REC_A] = 1;
        q[0].f[PA_REC_B] = 256;
        for (int j = 1; j < 3; j++) {
            q[j].f[PA_REC_KIND] = PA_REC_TENSOR_LOAD;
            q[j].f[PA_REC_MAP] = j - 1;
            q[j].f[PA_REC_C0] = 64 * (k % 32);
            q[j].f[PA_REC_C0 + 1] = (k * 7 + (uint32_t)j) % ROWS;
            q[j].f[PA_REC_SMEM] = base + 128 * (j - 1);
            q[j].f[PA_REC_MBAR] = bar;
        }
        q[3].f[PA_REC_KIND] = PA_REC_MBAR_WAIT;
        q[3].f[PA_REC_MBAR] = bar;
        q[3].f[PA_REC_A] = parity[s];
        parity[s] ^= 1;
    }
    pa_tensormap g4map;
    pa_tiled_params g4 = p;
    g4.target = PA_TARGET_SM_100A;
    if (pa_tensormap_encode_tiled(&g4map, &g4, &e))
        die("encode gather4", &e);
    double best_replay = 1e30, best_g4 = 1e30, best_cp = 1e30, best_cont = 1e30, best_run = 1e30;
    pa_cp_async_args ca;
    memset(&ca, 0, sizeof ca);
    ca.cp_size = ca.src_size = 16;
    ca.cg = 1;
    for (int i = 0; i < rounds; i++) {
        size_t failed;
        double t0 = now();
        if (pa_replay(&m, r, n, maps, 2, &failed, &e))
            die("replay", &e);
        double dt = now() - t0;
        best_replay = dt < best_replay ? dt : best_replay;
        t0 = now();
        for (uint32_t k = 0; k < 64; k++) {
            for (uint32_t j = 0; j < 2048; j++)
                if (pa_issue_cp_async(&m, 0, 0, 1024 + 16 * j, GBASE + 16ull * ((j * 37u + k) % (ROWS * ROW_BYTES / 16)),
                                      &ca, &e))
                    die("cp.async", &e);
            if (pa_cp_async_wait_all(&m, 0, 0, &e))
                die("cp.async.wait_all", &e);
        }
        dt = now() - t0;
        best_cp = dt < best_cp ? dt : best_cp;
        t0 = now();
        for (uint32_t k = 0; k < 64; k++) {
            for (uint32_t j = 0; j < 2048; j++)
                if (pa_issue_cp_async(&m, 0, 0, 1024 + 16 * j, GBASE + 16ull * (j + 2048 * (k % 8)), &ca, &e))
                    die("cp.async", &e);
            if (pa_cp_async_wait_all(&m, 0, 0, &e))
                die("cp.async.wait_all", &e);
        }
        dt = now() - t0;
        best_cont = dt < best_cont ? dt : best_cont;
        t0 = now();
        for (uint32_t k = 0; k < 64; k++)
            if (pa_issue_cp_async_run(&m, 0, 0, 1024, 16, GBASE + 16ull * 2048 * (k % 8), 16, 2048, &ca, &e) ||
                pa_cp_async_wait_all(&m, 0, 0, &e))
                die("cp.async run", &e);
        dt = now() - t0;
        best_run = dt < best_run ? dt : best_run;
        if (pa_machine_set_target(&m, PA_TARGET_SM_100A, &e))
            die("target", &e);
        t0 = now();
        for (uint32_t i = 0; i < STEPS; i += 64) {
            uint64_t state;
            pa_mbarrier *bar = pa_machine_mbar(&m, 0, 40, 0, &e);
            if (!bar || pa_mbar_arrive(bar, 1, 64 * 512, 0, &state, &e))
                die("arrive", &e);
            for (uint32_t j = i; j < i + 64; j++) {
                const int32_t c[PA_MAX_RANK] = {(int32_t)(64 * (j % 32)), (int32_t)((j * 7) % ROWS),
                                                (int32_t)((j * 11 + 1) % ROWS), (int32_t)((j * 13 + 2) % ROWS),
                                                (int32_t)((j * 17 + 3) % ROWS)};
                if (pa_issue_tensor_load(&m, 0, 0, &g4map, PA_MODE_TILE_GATHER4, c, NULL, 1024 + 512 * (j - i), 0,
                                         40, 0, 0, &e))
                    die("gather4", &e);
            }
            if (pa_machine_run(&m, &e))
                die("run", &e);
        }
        dt = now() - t0;
        best_g4 = dt < best_g4 ? dt : best_g4;
        if (pa_machine_set_target(&m, PA_TARGET_SM_90A, &e))
            die("target", &e);
    }
    printf("replayed .tile load: %.1f ns\ncp.async: %.1f ns\ncp.async, contiguous: %.1f ns\n"
           "cp.async run of 2,048 (32 KiB), commit, wait: %.1f ns\ngather4 load: %.1f ns\n",
           best_replay / (2.0 * STEPS) * 1e9, best_cp / (64.0 * 2048) * 1e9, best_cont / (64.0 * 2048) * 1e9,
           best_run / 64.0 * 1e9, best_g4 / STEPS * 1e9);
    free(r);
    pa_machine_free(&m);
    free(t);
    free(t2);
    return 0;
}
