/* banks.h - shared-memory bank conflicts: wavefronts of one warp-wide access.
 *
 * 32 banks of 4-byte words: byte address a is in bank (a / 4) % 32.
 *
 *   address bits:  ... 7 | 6 5 4 3 2 | 1 0
 *                   row     bank       byte in word
 *
 * A request is served in phases: groups of consecutive threads whose data
 * fits one 128-byte wavefront; a phase takes as many wavefronts as the largest
 * number of DISTINCT 4-byte words it touches in one bank (threads reading the
 * same word share it). The request takes the sum over its phases:
 *
 *   wavefronts = sum over phases  max over banks  |distinct words in the bank|
 *
 *   op                    phase                                     golden
 *   ld / st, 4 bytes      the warp                                   K1
 *   st, 8 / 16 bytes      half-warps / quarter-warps                 K3
 *   ld, 8 / 16 bytes      half / quarter warps, or twice as wide     K4
 *                         when the warp's addresses come in equal
 *                         pairs (t, t^1 all equal, or t, t^2 all
 *                         equal: the return path packs two
 *                         registers per wavefront)
 *   ldmatrix, stmatrix    each 8x8 matrix (8 rows of 16 bytes)       K2
 *
 * The packed-load case was worked out from the recorded counts (K4 leaves it
 * to the data): it reproduces all 158 public cases, among them every load
 * whose count is below the plain half / quarter rule. stmatrix is not
 * recorded: it follows ldmatrix's per-matrix rule (the ISA's mirror).
 */
#ifndef PA_BANKS_H
#define PA_BANKS_H

#include "../types.h"

typedef enum {
    PA_SMEM_LD = 0,
    PA_SMEM_ST = 1,
    PA_SMEM_LDMATRIX = 2,
    PA_SMEM_STMATRIX = 3
} pa_smem_op;

typedef struct {
    uint32_t wavefronts;    /* as l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st} counts them */
    uint32_t phases;        /* phases the request splits into (the minimum wavefront count) */
    uint32_t phase_threads; /* threads per phase (ldmatrix: 8 row addresses) */
    uint32_t packed;        /* 1: an 8/16-byte load served at twice the width (K4) */
    uint32_t per_phase[32]; /* wavefronts of each phase */
} pa_bank_report;

/* One warp-wide access: addr[t] is thread t's shared address (ldmatrix /
 * stmatrix: the row address of thread t; num matrices 1, 2, 4). width 4, 8, 16
 * bytes per thread (ldmatrix: 16). An address not aligned to its width is
 * PA_ERR_MISALIGNED_ADDRESS. */
int pa_bank_wavefronts(pa_smem_op op, uint32_t width, uint32_t num, const uint32_t addr[32],
                       pa_bank_report *out, pa_error *err);

#endif
