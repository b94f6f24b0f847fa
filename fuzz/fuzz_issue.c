/* fuzz_issue.c - every issue function on a small machine: tile/im2col loads,
 * stores, tensor and bulk reductions, cp.async, cp.async.bulk (every
 * direction, prefetch), st.async, st.bulk, mbarriers, groups, completion.
 *
 * Input: a 128-byte map image (decoded as is; if it does not decode, a
 * small valid map is used), then operations, one byte of opcode each. Global
 * memory is two heap buffers of exactly their registered size, so ASan
 * catches any access past them; shared memory is the machine's own. */
#include "fuzz.h"

#define SMEM 4096u
#define G0 0x10000ull
#define G1 (0x7f0000000000ull)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    uint8_t img[PA_TENSORMAP_BYTES];
    fz_bytes(&in, img, sizeof img);
    pa_error err = {0};
    pa_tensormap map;
    if (pa_tensormap_unpack(img, &map, &err) != PA_OK) {
        pa_tiled_params p = {.dtype = PA_DTYPE_UINT8, .rank = 2, .global_address = G0,
                             .global_dim = {64, 64}, .global_strides = {64}, .box_dim = {32, 8},
                             .element_strides = {1, 1}};
        if (pa_tensormap_encode_tiled(&map, &p, &err) != PA_OK)
            abort();
    }
    /* globalAddress: keep the recorded one, or point it at one of our buffers. */
    uint8_t where = fz_u8(&in);
    if (where % 3 == 1)
        map.global_address = G0 + (fz_u16(&in) & ~15u);
    else if (where % 3 == 2)
        map.global_address = G1 + (fz_u16(&in) & ~15u);

    const uint32_t nctas = 1 + fz_u8(&in) % 2;
    pa_machine m;
    if (pa_machine_init(&m, nctas, SMEM, &err) != PA_OK)
        abort();
    pa_machine_set_policy(&m, (pa_policy)(fz_u8(&in) % 4), fz_u8(&in));
    if (fz_u8(&in) & 1)
        if (pa_machine_set_target(&m, PA_TARGET_SM_100A, &err) != PA_OK)   /* the forms newer targets add */
            abort();
    const uint64_t n0 = 1 + fz_u16(&in) % 8192, n1 = 1 + fz_u16(&in) % 8192;
    uint8_t *b0 = malloc(n0), *b1 = malloc(n1);
    memset(b0, 0xA5, n0);
    memset(b1, 0x5A, n1);
    pa_global_add(&m.global, G0, n0, b0, NULL, &err);
    pa_global_add(&m.global, G1, n1, b1, NULL, &err);

    for (int step = 0; step < 24 && in.n; step++) {
        uint8_t op = fz_u8(&in);
        uint32_t cta = fz_u8(&in) % 3, thread = fz_u8(&in) % 2;
        int32_t coords[PA_MAX_RANK];
        for (int i = 0; i < PA_MAX_RANK; i++)
            coords[i] = (int32_t)fz_u32(&in);
        uint16_t offs[PA_MAX_RANK - 2];
        for (int i = 0; i < PA_MAX_RANK - 2; i++)
            offs[i] = fz_u16(&in);
        uint32_t a = fz_u32(&in), mbar = fz_u32(&in), x = fz_u32(&in);
        uint64_t g = fz_u64(&in);
        int rc = PA_OK;
        err.msg[0] = 0;
        /* global operands: near one of our buffers (or anywhere) */
        const uint64_t ga = g % 4 == 0 ? g : (g % 4 == 1 ? G0 : G1) + ((g >> 8) % 16384) - 64;
        switch (op % 18) {
        case 0: case 1:
            rc = pa_issue_tensor_load(&m, cta, thread, &map, (pa_load_mode)(op / 12 % 2), coords, offs, a,
                                      op & 16, mbar, op & 32, (uint16_t)x, &err);
            break;
        case 2:
            rc = pa_issue_tensor_store(&m, cta, thread, &map, (pa_load_mode)(op / 12 % 3), coords, -1, a, 0,
                                       PA_RED_ADD, &err);
            break;
        case 3:
            rc = pa_issue_tensor_store(&m, cta, thread, &map, (pa_load_mode)(op / 12 % 3), coords, -1, a, 1,
                                       (pa_redop)(x % PA_RED_COUNT), &err);
            break;
        case 4:
            rc = pa_issue_bulk_reduce(&m, cta, thread, (pa_rdst)(op / 12 % 2), g % 2 ? G0 + (g >> 50) : g,
                                      a, x % 8192, mbar, (pa_redop)(x % PA_RED_COUNT),
                                      (pa_rtype)((x >> 8) % PA_RT_COUNT), op & 64, &err);
            break;
        case 5:
            rc = pa_machine_mbar_init(&m, cta, mbar % (2 * SMEM), 1 + x % 4, &err);
            break;
        case 6: {
            pa_mbarrier *b = pa_machine_mbar(&m, cta, mbar % (2 * SMEM), 0, &err);
            uint64_t state;
            if (b)
                rc = pa_mbar_arrive(b, x % 4, (uint32_t)g % 70000, (op >> 4) & 3, &state, &err);
            else
                rc = err.code;
            break;
        }
        case 7: {
            int res;
            rc = pa_machine_try_wait_parity(&m, cta, mbar % (2 * SMEM), x & 1, &res, &err);
            break;
        }
        case 8:
            rc = pa_bulk_commit_group(&m, cta, thread, &err);
            break;
        case 9:
            rc = pa_bulk_wait_group(&m, cta, thread, x % 3, &err);
            break;
        case 10: {
            int done;
            rc = pa_machine_step(&m, &done, &err);
            break;
        }
        case 11:
            rc = pa_machine_run(&m, &err);
            break;
        case 12: {   /* cp.async */
            static const uint32_t sizes[4] = {4, 8, 16, 3};
            pa_cp_async_args ca = {sizes[x % 4], (x >> 2) % 20, (x >> 7) & 1, (x >> 8) & 1,
                                   ((x >> 9) % 4) * 64, (x >> 11) & 1};
            rc = pa_issue_cp_async(&m, cta, thread, a % (2 * SMEM), ga, &ca, &err);
            break;
        }
        case 13:
            rc = (x & 3) == 0   ? pa_cp_async_commit_group(&m, cta, thread, &err)
                 : (x & 3) == 1 ? pa_cp_async_wait_group(&m, cta, thread, (x >> 2) % 3, &err)
                 : (x & 3) == 2 ? pa_cp_async_wait_all(&m, cta, thread, &err)
                                : pa_cp_async_mbarrier_arrive(&m, cta, thread, mbar % (2 * SMEM), (x >> 2) & 1,
                                                              &err);
            break;
        case 14: {   /* cp.async.bulk in every direction */
            pa_bulk_dir dir = (pa_bulk_dir)(op / 18 % PA_BULK_DIR_COUNT);
            pa_bulk_copy_args ba = {(x >> 16) & 1, (uint16_t)x, (x >> 17) & 1, (uint16_t)(g >> 48),
                                    (x >> 18) & 1};
            uint64_t sh = a % (2 * SMEM) | (uint64_t)((x >> 20) % 3) << 24;
            uint64_t dst = dir == PA_BULK_S2G ? ga : sh, src = dir == PA_BULK_S2G || dir == PA_BULK_S2S
                                                                 ? a % (2 * SMEM) : ga;
            rc = pa_issue_bulk_copy(&m, cta, thread, dir, dst, src, x % 8200, mbar % (2 * SMEM), &ba, &err);
            break;
        }
        case 15:
            rc = (x & 1) ? pa_bulk_prefetch_l2(&m, cta, thread, ga, x % 8200, &err)
                         : pa_bulk_wait_group_read(&m, cta, thread, (x >> 1) % 3, &err);
            break;
        case 16: {   /* st.async */
            uint8_t bytes[16];
            memcpy(bytes, coords, sizeof bytes);
            rc = pa_issue_st_async(&m, cta, thread, a % (2 * SMEM) | ((x >> 20) % 3) << 24, mbar % (2 * SMEM),
                                   bytes, 1u << (x % 4), 1u << ((x >> 2) % 4), &err);
            break;
        }
        default:     /* st.bulk */
            rc = pa_st_bulk(&m, cta, thread, a % (2 * SMEM), g % 9000, x & 1 ? 0 : x, &err);
            break;
        }
        FZ_ERR_OK(rc, err);
    }
    pa_machine_run(&m, &err);
    pa_machine_free(&m);
    free(b0);
    free(b1);
    return 0;
}
