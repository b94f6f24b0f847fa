/* mma_exec.h - the tensor-core instructions as the interpreter runs them:
 * mma.sync (a warp collective) and wgmma.mma_async's arithmetic (a warpgroup
 * collective), the fragments of every lane gathered into whole matrices by the
 * PTX ISA's fragment layouts, each element of D computed by the semantics
 * library (sem/mma.c, the H200's bits: docs/tensor-cores.md), and D scattered
 * back into the lanes' registers.
 *
 * lower_mma.c records an mma.sync in a pi_ext:
 *   flags     PI_MMA_* below
 *   info[0]   m | n << 8 | k << 16
 *   info[1]   atype | btype << 16    (sem_type, or SEM_MMA_T_S4 / U4 / B1)
 *   info[2]   ctype | dtype << 16
 *   regs[0..3] the register counts of d, a, b, c
 *   vbase     prog->vregs[vbase ..]: the registers of d, then a, b, c
 */
#ifndef PA_PTX_MMA_EXEC_H
#define PA_PTX_MMA_EXEC_H

#include "ptx/exec/launch.h"
#include "ptx/exec/wgmma_ext.h"

enum {
    PI_MMA_SATFINITE = 1,        /* integer .satfinite */
    PI_MMA_AND = 2,              /* b1 .and.popc (else .xor.popc) */
    PI_MMA_ACOL = 4,             /* m8n8k4 .f16: A is .col */
    PI_MMA_BROW = 8,             /* m8n8k4 .f16: B is .row */
    PI_MMA_SP = 16,              /* mma.sp: sparse A; s0 the metadata register, sub the sparsity selector */
    PI_MMA_SP_ORDERED = 32,      /* mma.sp::ordered_metadata */
};

/* Sparse A (PTX ISA 9.7.14.6, 9.7.15.6): A's rows hold k/2 packed elements, the non-zero ones of
 * each chunk (2 of 4; tf32 1 of 2; s4 / u4 two 2-wide pairs of 8), and a warp's metadata names
 * their positions. pi_sp_selector_ok: whether sparsity selector sel names threads for this type and
 * k. pi_sp_positions: the K position of each packed element of row `row` (0..15) of a warp's
 * 16 rows, from the metadata registers of its 32 lanes; an index the ISA leaves undefined (equal
 * indices, out of order under ::ordered_metadata, a tf32 nibble other than 0b0100 / 0b1110) is
 * PA_ERR_ILLEGAL_INSTRUCTION naming the lane and bits. */
int pi_sp_selector_ok(int atype, uint32_t k, uint32_t sel);
int pi_sp_positions(const char *what, int atype, uint32_t k, uint32_t sel, int ordered, const uint32_t meta[32],
                    uint32_t row, uint32_t *pos, pa_error *err);

/* wgmma.mma_async.sp's arithmetic: A packed [64][k/2] with its positions pos [64][k/2], B [n][k],
 * the rest as pi_wgmma_math. */
int pi_wgmma_sp_math(int atype, int btype, int dtype, uint32_t n, uint32_t k, unsigned flags, int scale_d,
                     int neg_a, int neg_b, const uint32_t *a, const uint32_t *pos, const uint32_t *b, uint64_t *d,
                     pa_error *err);

/* mma.sync for the 32 lanes of a warp (all present). */
int pi_mma_exec(const pi_prog *p, pi_thread *const lane[32], const pi_ext *x, pa_error *err);

/* One warpgroup's wgmma D = A * B + D on whole matrices: A row-major [64][k]
 * and B [n][k] (element bits in uint32 each; b1 packed 32 to a word, k/32 words
 * a row), D row-major [64][n] as bit patterns (f32 / s32 / f16). scale_d 0: D
 * starts at +0. neg_a / neg_b: imm-scale -1 (floating-point types). */
int pi_wgmma_math(int atype, int btype, int dtype, uint32_t n, uint32_t k, unsigned flags, int scale_d,
                  int neg_a, int neg_b, const uint32_t *a, const uint32_t *b, uint64_t *d, pa_error *err);

#endif
