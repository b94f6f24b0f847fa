/* mma.h - the tensor cores' dot products, to the bit, as an H200 (sm_90)
 * computes them for mma.sync (docs/tensor-cores.md has every rule and the
 * recordings that pin it down).
 *
 * The unit of work is one output element: d = c + sum_k a[k] * b[k] over one
 * row of A and one column of B. An mma.sync lowering calls it once per element
 * of D (sem_mma_tile does the loops); wgmma can call it the same way.
 *
 * Types are sem_type values (sem.h). Elements arrive as their bit patterns in
 * the low bits of a uint32_t: f16 / bf16 in 16 bits, e4m3 / e5m2 / s8 / u8 in 8,
 * tf32 as the whole 32-bit register (its low 13 bits are ignored, as the
 * hardware ignores them). c and d are bit patterns too: f32 / s32 in 32 bits,
 * f16 in 16.
 *
 * Forms (atype, btype -> ctype = dtype):
 *   f16 f16 -> f32 or f16;  bf16 bf16 -> f32;  tf32 tf32 -> f32     one fused block
 *   e4m3 / e5m2 (any pair) -> f32 or f16      two f16 blocks and an add (ptxas's
 *                                               lowering of mma.sync on sm_90)
 *   s8 / u8 (any pair) -> s32                  exact, wrapping (SEM_MMA_SATFINITE clamps)
 *
 * What is verified on the hardware (docs/tensor-cores.md): k = 16 (f16, bf16),
 * k = 8 (f16, bf16, tf32), k = 32 (e4m3, e5m2, s8, u8). Assumed, not recorded:
 * tf32 k = 4 (one block of 4), fp8 k = 16 (two blocks of 8), integer k = 16, and
 * any use by wgmma (whose fp8 forms run natively on Hopper, not through f16).
 */
#ifndef PA_SEM_MMA_H
#define PA_SEM_MMA_H

#include <stdint.h>

/* flags */
#define SEM_MMA_SATFINITE 1u   /* integer forms: clamp to [INT32_MIN, INT32_MAX] */

/* The largest k of one call (m16n8k32's 8-bit forms). */
#define SEM_MMA_MAX_K 32

/* One element of D. Returns 0, or -1 for a form the tensor cores do not have
 * (then *d is untouched). */
int sem_mma_dot(int atype, int btype, int ctype, int dtype, int k, unsigned flags,
                const uint32_t *a, const uint32_t *b, uint64_t c, uint64_t *d);

/* The whole product D (m x n) = A (m x k) * B (k x n) + C, element by element:
 * A row-major (a[i*k + kk]), B column-major (b[j*k + kk], so a column of B is
 * contiguous as the .col layout has it), C and D row-major (c[i*n + j]). */
int sem_mma_tile(int atype, int btype, int ctype, int dtype, int m, int n, int k,
                 unsigned flags, const uint32_t *a, const uint32_t *b,
                 const uint64_t *c, uint64_t *d);

#endif
