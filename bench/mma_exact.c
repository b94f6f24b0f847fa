/* mma_exact.c - the bench key mma_exact (bench/run.py): one wgmma-shaped product
 * D[64][256] += A[64][16] * B[16][256] of f16 values with f32 accumulators, as the
 * interpreter computes it (sem_mma_tile: the H200's block, docs/tensor-cores.md)
 * and as it did before (the products summed in f32 in k order, then added to D). */
#include "sem/mma.h"
#include "sem/sem.h"

#include <stdint.h>
#include <string.h>

#define M 64
#define N 256
#define K 16

static float h2f(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 0x3FF, b;
    float f;
    if (e == 31)
        b = s | 0x7F800000u | (m << 13);
    else if (e)
        b = s | ((e + 112) << 23) | (m << 13);
    else if (!m)
        b = s;
    else {
        e = 113;
        while (!(m & 0x400)) {
            m <<= 1;
            e--;
        }
        b = s | (e << 23) | ((m & 0x3FF) << 13);
    }
    memcpy(&f, &b, 4);
    return f;
}

/* n tiles by the semantics library (A row-major, B column-major, C/D row-major bits) */
void exact_tiles(int n, const uint32_t *a, const uint32_t *b, uint64_t *acc)
{
    for (int it = 0; it < n; it++)
        sem_mma_tile(SEM_T_F16, SEM_T_F16, SEM_T_F32, SEM_T_F32, M, N, K, 0, a, b, acc, acc);
}

/* n tiles the previous way: f16 -> f32, k products summed in order, added to D */
void f32_tiles(int n, const uint32_t *a, const uint32_t *b, float *acc)
{
    static float af[M * K], bf[N * K];
    for (int it = 0; it < n; it++) {
        for (int i = 0; i < M * K; i++)
            af[i] = h2f((uint16_t)a[i]);
        for (int i = 0; i < N * K; i++)
            bf[i] = h2f((uint16_t)b[i]);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float s = 0.0f;
                for (int k = 0; k < K; k++)
                    s += af[i * K + k] * bf[j * K + k];
                acc[i * N + j] += s;
            }
    }
}
