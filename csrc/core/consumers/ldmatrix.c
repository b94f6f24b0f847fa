/* ldmatrix.c - the ldmatrix / stmatrix fragment map (golden L1, L2). */
#include "ldmatrix.h"

#include <string.h>

int pa_ldmatrix_map(uint32_t num, int trans, const uint32_t addr[32], uint32_t *out, pa_error *err)
{
    if (num != 1 && num != 2 && num != 4)
        return pa_fail(err, PA_ERR_INVALID_VALUE, ".x%u: ldmatrix / stmatrix take .x1, .x2 or .x4", num);
    for (uint32_t u = 0; u < 8 * num; u++)
        if (addr[u] % 16)
            return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS,
                           "thread %u gives row %u of matrix %u at shared address 0x%x, not 16-byte aligned "
                           "(golden L2: the hardware faults)", u, u % 8, u / 8, addr[u]);
    for (uint32_t t = 0; t < 32; t++)
        for (uint32_t j = 0; j < num; j++) {
            uint32_t *o = out + (t * num + j) * 2;
            if (!trans) {
                o[0] = addr[8 * j + t / 4] + 4 * (t % 4);
                o[1] = o[0] + 2;
            } else {
                o[0] = addr[8 * j + 2 * (t % 4)] + 2 * (t / 4);
                o[1] = addr[8 * j + 2 * (t % 4) + 1] + 2 * (t / 4);
            }
        }
    return PA_OK;
}

/* Map, then check every used row lies inside shared memory. */
static int map_checked(uint32_t smem_bytes, uint32_t num, int trans, const uint32_t addr[32], uint32_t *map,
                       pa_error *err)
{
    int rc = pa_ldmatrix_map(num, trans, addr, map, err);
    if (rc)
        return rc;
    for (uint32_t u = 0; u < 8 * num; u++)
        if ((uint64_t)addr[u] + 16 > smem_bytes)
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                           "thread %u gives row %u of matrix %u at shared address 0x%x, outside the %u bytes "
                           "of shared memory", u, u % 8, u / 8, addr[u], smem_bytes);
    return PA_OK;
}

int pa_ldmatrix(const uint8_t *smem, uint32_t smem_bytes, uint32_t num, int trans, const uint32_t addr[32],
                uint32_t *regs, pa_error *err)
{
    uint32_t map[32 * 4 * 2];
    int rc = map_checked(smem_bytes, num, trans, addr, map, err);
    if (rc)
        return rc;
    for (uint32_t r = 0; r < 32 * num; r++) {
        uint16_t lo, hi;
        memcpy(&lo, smem + map[2 * r], 2);
        memcpy(&hi, smem + map[2 * r + 1], 2);
        regs[r] = (uint32_t)lo | (uint32_t)hi << 16;
    }
    return PA_OK;
}

int pa_stmatrix(uint8_t *smem, uint32_t smem_bytes, uint32_t num, int trans, const uint32_t addr[32],
                const uint32_t *regs, pa_error *err)
{
    uint32_t map[32 * 4 * 2];
    int rc = map_checked(smem_bytes, num, trans, addr, map, err);
    if (rc)
        return rc;
    for (uint32_t r = 0; r < 32 * num; r++) {
        uint16_t lo = (uint16_t)regs[r], hi = (uint16_t)(regs[r] >> 16);
        memcpy(smem + map[2 * r], &lo, 2);
        memcpy(smem + map[2 * r + 1], &hi, 2);
    }
    return PA_OK;
}
