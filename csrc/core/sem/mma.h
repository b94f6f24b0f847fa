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
 *     (f16 also with ctype != dtype, m8n8k4's .f32.f16.f16.f16 and
 *     .f16.f16.f16.f32: c enters the block in its own format, the block rounds
 *     to dtype's)
 *   e4m3 / e5m2 (any pair) -> f32 or f16      two f16 blocks and an add (ptxas's
 *                                               lowering of mma.sync on sm_90)
 *   s8 / u8, s4 / u4 (any pair) -> s32         exact, wrapping (SEM_MMA_SATFINITE clamps)
 *   b1 b1 -> s32                               c + popc(a XOR b) (SEM_MMA_AND: AND),
 *                                               a and b packed: k/32 words, element
 *                                               32w + j in bit j of word w; wrapping
 *   f64 (sem_mma_dot_f64)                      IEEE fma in k order on c
 *
 * Every form here was recorded on an H200 and matches it bit for bit
 * (docs/tensor-cores.md, Findings 1-8): every mma.sync shape and type of sm_80..sm_90
 * and wgmma.mma_async's types (QGMMA's fp8 block differs from mma.sync's: sem_wgmma_dot).
 */
#ifndef PA_SEM_MMA_H
#define PA_SEM_MMA_H

#include <stdint.h>

/* The bits of an element of type t (sem_type, SEM_MMA_T_*); 0 for one mma has not. */
int sem_mma_type_bits(int t);
/* The element type a qualifier names for mma ("f16", "s4", ... without the dot); 0 none. */
int sem_mma_type_of(const char *q);
/* The registers a lane holds of mma.sync's d, a, b and c for shape m x n x k: 32-bit
 * registers (64-bit for f64), each lane's share of the warp's fragment (PTX ISA, "Matrix
 * fragments for mma.m*n*k*"; m8n8k4 with f16 operands: one fragment per quad-pair). */
void sem_mma_reg_counts(int m, int n, int k, int atype, int btype, int ctype, int dtype, int counts[4]);

/* flags */
#define SEM_MMA_SATFINITE 1u   /* integer forms: clamp to [INT32_MIN, INT32_MAX] */
#define SEM_MMA_AND 2u         /* b1: .and.popc (without it .xor.popc) */

/* Element types the scalar instructions do not have (no sem_type): the 4-bit
 * integers of mma's m8n8k32 / m16n8k32 / m16n8k64 and the single bit. */
#define SEM_MMA_T_S4 0x100
#define SEM_MMA_T_U4 0x101
#define SEM_MMA_T_B1 0x102

/* The largest k of one call (m16n8k64's 4-bit forms; b1 up to 2048 bits). */
#define SEM_MMA_MAX_K 64
#define SEM_MMA_MAX_K_B1 2048

/* One element of D. Returns 0, or -1 for a form the tensor cores do not have
 * (then *d is untouched). */
int sem_mma_dot(int atype, int btype, int ctype, int dtype, int k, unsigned flags,
                const uint32_t *a, const uint32_t *b, uint64_t c, uint64_t *d);

/* One f64 element (DMMA): acc = c, then acc = fma(a[k], b[k], acc) for k = 0, 1,
 * ... each rounded to nearest even; a NaN operand comes out quieted with its sign
 * and payload. Returns 0. */
int sem_mma_dot_f64(int k, const uint64_t *a, const uint64_t *b, uint64_t c, uint64_t *d);

/* One element of mma.m8n8k4 with .f16 inputs: sm_80 and later have no HMMA.884,
 * and ptxas computes it on the f32 pipes (the products of f16 values are exact in
 * f32; every step rounds to nearest even; an .f16 c is widened exactly):
 *   .f32 d:  s = fma(a0, b0, +0), s = fma(ak, bk, s) for k = 1..3, d = s + c
 *   .f16 d:  d = f16((p01 + c) + p23), p01 = fma(a1, b1, a0*b0), p23 likewise
 * NaN canonical. Returns 0 or -1. */
int sem_mma_dot_m8n8k4(int ctype, int dtype, const uint32_t *a, const uint32_t *b, uint64_t c, uint64_t *d);

/* One element of wgmma.mma_async's D (c = d's last value, +0 when scale-d is
 * false): f16 / bf16 (k 16), tf32 (k 8), s8 / u8 (k 32), b1 (k 256) as
 * sem_mma_dot, on the guess that HGMMA / IGMMA share HMMA / IMMA's block;
 * e4m3 / e5m2 (k 32, QGMMA, native on sm_90, not ptxas's f16 lowering of
 * mma.sync): docs/tensor-cores.md says what is known. Returns 0 or -1. */
int sem_wgmma_dot(int atype, int btype, int dtype, int k, unsigned flags, const uint32_t *a,
                  const uint32_t *b, uint64_t c, uint64_t *d);

/* sem_wgmma_dot over a whole tile (layouts as sem_mma_tile's); the native block's
 * operands are unpacked once. Returns 0, or -1 (a form it does not have, or out of
 * memory). */
int sem_wgmma_tile(int atype, int btype, int dtype, int m, int n, int k, unsigned flags, const uint32_t *a,
                   const uint32_t *b, const uint64_t *c, uint64_t *d);

/* Words of one row of A or column of B in sem_mma_tile's arrays: k elements,
 * or k/32 words for b1. */
int sem_mma_row_len(int type, int k);

/* The whole product D (m x n) = A (m x k) * B (k x n) + C, element by element:
 * A row-major (a[i*k + kk]), B column-major (b[j*k + kk], so a column of B is
 * contiguous as the .col layout has it), C and D row-major (c[i*n + j]); b1
 * rows of k/32 words (sem_mma_row_len). */
int sem_mma_tile(int atype, int btype, int ctype, int dtype, int m, int n, int k,
                 unsigned flags, const uint32_t *a, const uint32_t *b,
                 const uint64_t *c, uint64_t *d);

#endif
