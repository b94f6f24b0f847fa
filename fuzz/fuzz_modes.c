/* fuzz_modes.c - the sm_100 load modes on a small machine: tile::gather4 /
 * scatter4, im2col, im2col::w and im2col::w::128 loads (cta_group too),
 * stores in every mode, cp.async.bulk.prefetch.tensor.
 *
 * Input: cuTensorMapEncodeIm2colWide parameters (if refused, a small valid
 * wide map), a tiled map for gather4 (from a few bytes), then operations.
 * Properties beyond "no crash, no sanitizer report": every error has a
 * message; a prefetch names only bytes of registered global memory (what a
 * load would read: the in-bounds box) and moves none; a refused load or
 * store queues nothing. Global memory: two heap buffers of exactly their
 * registered size. */
#include "fuzz.h"

#define SMEM 8192u
#define G0 0x10000ull
#define G1 (0x7f0000000000ull)

typedef struct {
    uint64_t lo0, hi0, lo1, hi1;
    int outside;
} span_check;

static int in_buffers(void *ctx, uint64_t row, uint64_t addr, uint64_t nbytes, pa_error *err)
{
    span_check *s = ctx;
    (void)row;
    (void)err;
    const int in0 = addr >= s->lo0 && addr + nbytes <= s->hi0, in1 = addr >= s->lo1 && addr + nbytes <= s->hi1;
    s->outside |= !(in0 || in1) && nbytes > 0;
    return PA_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    pa_error err = {0};
    pa_im2col_wide_params wp;
    memset(&wp, 0, sizeof wp);
    wp.dtype = fz_u8(&in) % 16;
    wp.rank = 3 + fz_u8(&in) % 3;
    for (uint32_t i = 0; i < wp.rank; i++)
        wp.global_dim[i] = 1 + fz_u16(&in) % 64;
    wp.global_strides[0] = 16 * (1 + fz_u8(&in) % 16);
    for (uint32_t i = 1; i + 1 < wp.rank; i++)
        wp.global_strides[i] = wp.global_strides[i - 1] * wp.global_dim[i];
    wp.pixel_box_lower_w = (int8_t)fz_u8(&in);
    wp.pixel_box_upper_w = (int8_t)fz_u8(&in);
    wp.channels_per_pixel = 1 + fz_u8(&in) % 128;
    wp.pixels_per_column = 1 + fz_u8(&in) % 256;
    for (uint32_t i = 0; i < wp.rank; i++)
        wp.element_strides[i] = 1 + fz_u8(&in) % 3;
    wp.mode = fz_u8(&in) % 3;
    wp.swizzle = fz_u8(&in) % 8;
    wp.oob_fill = fz_u8(&in) % 2;
    wp.target = PA_TARGET_SM_100A;
    wp.global_address = fz_u8(&in) & 1 ? G1 : G0;
    pa_tensormap maps[3];
    if (pa_tensormap_encode_im2col_wide(&maps[0], &wp, &err) != PA_OK) {
        FZ_CHECK(err.msg[0], "an im2col-wide refusal without a message");
        pa_im2col_wide_params v = {.dtype = PA_DTYPE_FLOAT16, .rank = 4, .global_address = G0,
                                   .global_dim = {32, 16, 8, 2}, .global_strides = {64, 1024, 8192},
                                   .channels_per_pixel = 32, .pixels_per_column = 16,
                                   .element_strides = {1, 1, 1, 1}, .swizzle = PA_SWIZZLE_64B,
                                   .target = PA_TARGET_SM_100A};
        if (pa_tensormap_encode_im2col_wide(&maps[0], &v, &err) != PA_OK)
            abort();
    } else {
        fz_check_map(&maps[0]);
    }
    const uint8_t gb = fz_u8(&in);
    pa_tiled_params tp = {.dtype = (int)(gb % 3), .rank = 2, .global_address = gb & 8 ? G1 : G0,
                          .global_dim = {64u << (gb >> 6), 40}, .global_strides = {256},
                          .box_dim = {16u << (gb >> 6 & 1), 1}, .element_strides = {1, 1},
                          .swizzle = (gb >> 4) % 4, .target = PA_TARGET_SM_100A};
    if (pa_tensormap_encode_tiled(&maps[1], &tp, &err) != PA_OK) {
        tp.dtype = PA_DTYPE_UINT8;
        tp.swizzle = 0;
        tp.global_dim[0] = 64;
        tp.box_dim[0] = 16;
        if (pa_tensormap_encode_tiled(&maps[1], &tp, &err) != PA_OK)
            abort();
    }
    pa_im2col_params ip = {.dtype = PA_DTYPE_FLOAT16, .rank = 4, .global_address = G0,
                           .global_dim = {16, 8, 8, 2}, .global_strides = {32, 256, 2048},
                           .pixel_box_lower = {-1, -1}, .pixel_box_upper = {1, 1}, .channels_per_pixel = 16,
                           .pixels_per_column = 8, .element_strides = {1, 1, 1, 1}};
    if (pa_tensormap_encode_im2col(&maps[2], &ip, &err) != PA_OK)
        abort();

    const uint32_t nctas = 1 + fz_u8(&in) % 2;
    pa_machine m;
    if (pa_machine_init(&m, nctas, SMEM, &err) != PA_OK)
        abort();
    pa_machine_set_policy(&m, (pa_policy)(fz_u8(&in) % 4), fz_u8(&in));
    if (pa_machine_set_target(&m, fz_u8(&in) % 4 ? PA_TARGET_SM_100A : PA_TARGET_SM_90A, &err) != PA_OK)
        abort();
    const uint64_t n0 = 1 + fz_u16(&in) % 65536, n1 = 1 + fz_u16(&in) % 8192;
    uint8_t *b0 = malloc(n0), *b1 = malloc(n1);
    memset(b0, 0xA5, n0);
    memset(b1, 0x5A, n1);
    pa_global_add(&m.global, G0, n0, b0, NULL, &err);
    pa_global_add(&m.global, G1, n1, b1, NULL, &err);
    pa_machine_mbar_init(&m, 0, 4096, 1, &err);

    for (int step = 0; step < 16 && in.n; step++) {
        const uint8_t op = fz_u8(&in);
        const pa_tensormap *map = &maps[fz_u8(&in) % 3];
        const uint32_t cta = fz_u8(&in) % 3;
        int32_t coords[PA_MAX_RANK];
        for (int i = 0; i < PA_MAX_RANK; i++)
            coords[i] = (int8_t)fz_u8(&in) * (op & 0x80 ? 1 : 16);
        uint16_t info[PA_MAX_RANK - 2];
        for (int i = 0; i < PA_MAX_RANK - 2; i++)
            info[i] = fz_u8(&in) % 20;
        const uint32_t dst = (fz_u16(&in) % (2 * SMEM)) & ~(op & 0x40 ? 15u : 1023u);
        const uint32_t x = fz_u32(&in);
        const pa_load_mode mode = (pa_load_mode)(x % PA_MODE_COUNT);
        const size_t pending = m.nops;
        int rc = PA_OK;
        err.msg[0] = 0;
        switch (op % 5) {
        case 0: case 1:
            rc = pa_issue_tensor_load_group(&m, cta, 0, map, mode, coords, -1, info, -1, dst, (x >> 8) & 1,
                                            (x >> 9) & 1 ? 4096 : (x >> 10) % SMEM, (x >> 12) & 1,
                                            (uint16_t)((x >> 13) % 4), (x >> 16) % 3, &err);
            FZ_CHECK(rc == PA_OK || m.nops == pending, "a refused load queued %zu operations", m.nops - pending);
            break;
        case 2:
            rc = pa_issue_tensor_store(&m, cta, 0, map, mode, coords, -1, dst, (x >> 8) & 1,
                                       (pa_redop)((x >> 9) % PA_RED_COUNT), &err);
            FZ_CHECK(rc == PA_OK || m.nops == pending, "a refused store queued %zu operations", m.nops - pending);
            break;
        case 3: {
            span_check s = {G0, G0 + n0, G1, G1 + n1, 0};
            const uint8_t before0 = b0[0], before1 = b1[n1 - 1];
            rc = pa_issue_prefetch_tensor(&m, map, mode, coords, -1, info, -1, in_buffers, &s, &err);
            FZ_CHECK(rc != PA_OK || !s.outside, "a prefetch named bytes outside global memory");
            FZ_CHECK(b0[0] == before0 && b1[n1 - 1] == before1, "a prefetch moved bytes");
            break;
        }
        default: {
            int done;
            rc = x & 1 ? pa_machine_run(&m, &err) : pa_machine_step(&m, &done, &err);
            break;
        }
        }
        FZ_ERR_OK(rc, err);
    }
    pa_machine_run(&m, &err);
    pa_machine_free(&m);
    free(b0);
    free(b1);
    return 0;
}
