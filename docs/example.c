/* example.c - ptxasync from C, through the public header alone.
 *
 *   cc -std=c11 -Icsrc/include docs/example.c <the core's objects> -lm -pthread
 *
 * A 64 x 64 tensor of 16-bit values in global memory; a tensor map with a
 * 64 x 16 box and the 128-byte swizzle; one CTA loads box row 16 with
 * cp.async.bulk.tensor, tracked by an mbarrier, and reads the swizzled
 * shared memory back; a misaligned load is refused, naming the rule. */
#include <stdio.h>
#include <string.h>

#include "ptxasync.h"

#define N 64

static int fail(const char *what, const pa_error *err)
{
    fprintf(stderr, "%s: %s\n", what, err->msg);
    return 1;
}

int main(void)
{
    static uint16_t tensor[N][N];
    for (int r = 0; r < N; r++)
        for (int c = 0; c < N; c++)
            tensor[r][c] = (uint16_t)(r * N + c);
    pa_error err;
    pa_machine *m = pa_machine_new(1, 64 * 1024, &err);
    if (!m)
        return fail("machine", &err);
    if (pa_machine_add_global(m, 0x100000, sizeof tensor, tensor, &err))
        return fail("global", &err);
    const uint64_t dim[2] = {N, N}, stride[1] = {N * 2};
    const uint32_t box[2] = {64, 16}, estride[2] = {1, 1};
    pa_tensormap *map = pa_tensormap_new_tiled(PA_DTYPE_UINT16, 2, 0x100000, dim, stride, box, estride,
                                               PA_INTERLEAVE_NONE, PA_SWIZZLE_128B, PA_L2_PROMOTION_NONE,
                                               PA_OOB_FILL_NONE, &err);
    if (!map)
        return fail("tensor map", &err);

    const uint32_t bar = 0, dst = 1024, bytes = 64 * 16 * 2;
    const int32_t coords[PA_MAX_RANK] = {0, 16, 0, 0, 0};   /* c0 innermost: column 0, row 16 */
    int done = 0;
    if (pa_mbarrier_init(m, 0, 0, bar, 1, &err) || pa_mbarrier_arrive(m, 0, 0, bar, bytes, NULL, &err) ||
        pa_issue_tile_load(m, 0, 0, map, coords, dst, 0, bar, 0, 0, &err) ||
        pa_mbarrier_try_wait_parity(m, 0, 0, bar, 0, &done, &err))
        return fail("load", &err);
    if (!done) {
        fprintf(stderr, "the phase did not complete\n");
        return 1;
    }
    /* Element (row r, column c) of the box sits at dst + r * 128 + 2c, its
     * 16-byte chunk XORed with the line's low three bits (128B swizzle). */
    uint32_t size;
    const uint8_t *smem = pa_machine_smem(m, 0, &size);
    int bad = 0;
    for (uint32_t r = 0; r < 16; r++)
        for (uint32_t c = 0; c < 64; c++) {
            uint32_t a = dst + r * 128 + 2 * c;
            a ^= ((a >> 7) & 7u) << 4;
            uint16_t v;
            memcpy(&v, smem + a, 2);
            bad += v != tensor[16 + r][c];
        }
    printf("box of %u bytes loaded, %d element(s) differ\n", bytes, bad);

    /* c0 * 2 bytes = 6: not 16-byte aligned, the hardware faults at issue */
    const int32_t odd[PA_MAX_RANK] = {3, 0, 0, 0, 0};
    int rc = pa_issue_tile_load(m, 0, 0, map, odd, dst, 0, bar, 0, 0, &err);
    printf("misaligned load: %s (%s)\n", rc == PA_ERR_ILLEGAL_INSTRUCTION ? "refused" : "accepted", err.msg);

    pa_tensormap_delete(map);
    pa_machine_delete(m);
    return bad || rc != PA_ERR_ILLEGAL_INSTRUCTION;
}
