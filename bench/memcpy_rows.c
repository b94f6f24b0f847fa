/* Baseline for bench_tile_load.py: plain memcpy of the same rows a tile load
 * reads, from the same positions, into one contiguous destination. */
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
