/* banks.c - wavefront count of one warp-wide shared-memory access (golden K1-K5). */
#include "banks.h"

#include <string.h>

/* Max over banks of the distinct words that threads [t0, t0+n) touch, each
 * touching `words` consecutive words from addr[t] / 4. */
static uint32_t phase_wavefronts(const uint32_t addr[32], uint32_t t0, uint32_t n, uint32_t words)
{
    uint32_t seen[32 * 4];   /* distinct words of the phase (at most 32 threads x 4) */
    uint32_t nseen = 0, per_bank[32] = {0}, worst = 0;
    for (uint32_t t = t0; t < t0 + n; t++)
        for (uint32_t w = 0; w < words; w++) {
            uint32_t word = addr[t] / 4 + w;
            uint32_t j = 0;
            while (j < nseen && seen[j] != word)
                j++;
            if (j < nseen)
                continue;   /* the same word: one read serves every thread (broadcast) */
            seen[nseen++] = word;
            uint32_t c = ++per_bank[word % 32];
            if (c > worst)
                worst = c;
        }
    return worst;
}

static int pairs_equal(const uint32_t addr[32], uint32_t x)
{
    for (uint32_t t = 0; t < 32; t++)
        if (addr[t] != addr[t ^ x])
            return 0;
    return 1;
}

int pa_bank_wavefronts(pa_smem_op op, uint32_t width, uint32_t num, const uint32_t addr[32],
                       pa_bank_report *out, pa_error *err)
{
    memset(out, 0, sizeof *out);
    const int matrix = op == PA_SMEM_LDMATRIX || op == PA_SMEM_STMATRIX;
    if ((unsigned)op > PA_SMEM_STMATRIX)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "unknown shared-memory op %d", (int)op);
    if (matrix) {
        if (num != 1 && num != 2 && num != 4)
            return pa_fail(err, PA_ERR_INVALID_VALUE, ".x%u: ldmatrix / stmatrix take .x1, .x2 or .x4", num);
        width = 16;
    } else if (width != 4 && width != 8 && width != 16) {
        return pa_fail(err, PA_ERR_INVALID_VALUE, "access width %u bytes: 4, 8 or 16 (.v2 / .v4 of 32 bits)",
                       width);
    }
    uint32_t used = matrix ? 8 * num : 32;
    for (uint32_t t = 0; t < used; t++)
        if (addr[t] % width)
            return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS,
                           "thread %u: shared address 0x%x is not aligned to its %u-byte access", t, addr[t],
                           width);
    if (matrix) {
        out->phases = num;
        out->phase_threads = 8;
    } else {
        /* One phase carries 128 bytes: 32 / 16 / 8 threads of 4 / 8 / 16 bytes. */
        out->phase_threads = 128 / width;
        if (op == PA_SMEM_LD && width > 4 && (pairs_equal(addr, 1) || pairs_equal(addr, 2))) {
            out->packed = 1;   /* K4: equal pairs return two registers per wavefront */
            out->phase_threads *= 2;
        }
        out->phases = 32 / out->phase_threads;
    }
    for (uint32_t p = 0; p < out->phases; p++) {
        out->per_phase[p] = phase_wavefronts(addr, p * out->phase_threads, out->phase_threads, width / 4);
        out->wavefronts += out->per_phase[p];
    }
    return PA_OK;
}
