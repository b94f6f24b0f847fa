/* Baselines of the Python keys: plain memcpy of the rows the loads read.
 *
 * memcpy_rows: the rows of each tile, from the same positions, into one
 * contiguous destination (bench_tile_load.py's, and gemm_replay's first).
 *
 * memcpy_rows_staged: gemm_replay's loads as the replay issues them - the A
 * tile and the B tile of each step, in the same order - into the same
 * destination offsets a stage apart (stage i % stages at dst + i * 2 * tile
 * for A, + tile for B): the same bytes read in the same order and written to
 * the same places as the model's, without the swizzle. */
#include <stdint.h>
#include <string.h>

void memcpy_rows(uint8_t *dst, const uint8_t *src, const int64_t *tile_offsets, int64_t ntiles,
                 int64_t rows, int64_t row_bytes, int64_t stride)
{
    for (int64_t t = 0; t < ntiles; t++) {
        const uint8_t *s = src + tile_offsets[t];
        for (int64_t r = 0; r < rows; r++)
            memcpy(dst + r * row_bytes, s + r * stride, (size_t)row_bytes);
    }
}

void memcpy_rows_staged(uint8_t *dst, const uint8_t *a, const int64_t *a_off, const uint8_t *b,
                        const int64_t *b_off, int64_t nsteps, int64_t stages, int64_t rows, int64_t row_bytes,
                        int64_t stride)
{
    const int64_t tile = rows * row_bytes;
    for (int64_t i = 0; i < nsteps; i++) {
        uint8_t *d = dst + i % stages * 2 * tile;
        memcpy_rows(d, a, a_off + i, 1, rows, row_bytes, stride);
        memcpy_rows(d + tile, b, b_off + i, 1, rows, row_bytes, stride);
    }
}
