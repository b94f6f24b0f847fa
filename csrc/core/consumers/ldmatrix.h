/* ldmatrix.h - ldmatrix / stmatrix .m8n8 .b16: which shared bytes each thread's
 * registers hold.
 *
 * Matrix j (0..num-1) is 8 rows of 8 b16 values; row r of matrix j starts at the
 * address thread 8j + r gives (each row 16 contiguous bytes). Register j of
 * thread t holds two b16 values, low half first (golden L1):
 *
 *   no .trans:  addr[8j + t/4] + 4*(t%4) + {0, 2}        row t/4, columns 2(t%4), +1
 *   .trans:     addr[8j + 2*(t%4) + {0, 1}] + 2*(t/4)    column t/4 of rows 2(t%4), +1
 *
 *   thread:  0  1  2  3 | 4  5  6  7 | ...      (no .trans, one matrix)
 *   row 0:  c0c1 c2c3 c4c5 c6c7  <- threads 0..3
 *   row 1:  threads 4..7, ...
 *
 * The instruction adds no swizzle: swizzled rows come from the addresses alone.
 * Every row address an instruction uses (threads 0..8*num-1) must be 16-byte
 * aligned: one at 8 mod 16 faults with a misaligned address (L2); the addresses
 * of threads it does not use are ignored (L2, .x2 with threads 16-31 at 8 mod 16).
 * stmatrix (not recorded) is the mirror the PTX ISA describes: the same fragment
 * layout, registers written to the addresses ldmatrix would read.
 */
#ifndef PA_LDMATRIX_H
#define PA_LDMATRIX_H

#include "../types.h"

/* Addresses of the two b16 halves of register j of thread t:
 * out[(t * num + j) * 2 + h], h = 0 low, 1 high. Checks num (1, 2, 4) and the
 * alignment of the used rows (L2: PA_ERR_MISALIGNED_ADDRESS naming the thread). */
int pa_ldmatrix_map(uint32_t num, int trans, const uint32_t addr[32], uint32_t *out, pa_error *err);

/* ldmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16: regs[t * num + j]. */
int pa_ldmatrix(const uint8_t *smem, uint32_t smem_bytes, uint32_t num, int trans, const uint32_t addr[32],
                uint32_t *regs, pa_error *err);

/* stmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16: writes regs[t * num + j]. */
int pa_stmatrix(uint8_t *smem, uint32_t smem_bytes, uint32_t num, int trans, const uint32_t addr[32],
                const uint32_t *regs, pa_error *err);

#endif
