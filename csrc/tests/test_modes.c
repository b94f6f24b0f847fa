/* C tests of the sm_100 modes and the sub-byte types (run under ASan/UBSan):
 * gather4 / scatter4, im2col::w::128, a .b6x16_p32 load and a .b6p2x16 store,
 * the prefetch, the target gate. The byte-exact checks are the Python
 * property tests; these walk every path once with the sanitizers on. */
#include <string.h>

#include "check.h"
#include "core.h"

static int count_ranges(void *ctx, uint64_t row, uint64_t addr, uint64_t n, pa_error *err)
{
    (void)row, (void)addr, (void)err;
    *(uint64_t *)ctx += n;
    return PA_OK;
}

static void test_gather4(void)
{
    static uint8_t t[16][64];
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 64; c++)
            t[r][c] = (uint8_t)(r * 16 + c);
    pa_machine mc;
    pa_error err;
    CHECK(pa_machine_init(&mc, 1, 8192, &err) == PA_OK, "machine");
    CHECK(pa_global_add(&mc.global, 0x10000, sizeof t, &t[0][0], NULL, &err) == PA_OK, "add");
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_UINT8;
    p.rank = 2;
    p.global_address = 0x10000;
    p.global_dim[0] = 64;
    p.global_dim[1] = 16;
    p.global_strides[0] = 64;
    p.box_dim[0] = 32;
    p.box_dim[1] = 1;
    p.element_strides[0] = p.element_strides[1] = 1;
    p.swizzle = PA_SWIZZLE_128B_ATOM_32B;
    pa_tensormap m;
    CHECK(pa_tensormap_encode_tiled(&m, &p, &err) == PA_ERR_INVALID_VALUE, "ATOM on sm_90");
    p.target = PA_TARGET_SM_100A;
    CHECK(pa_tensormap_encode_tiled(&m, &p, &err) == PA_OK, "encode: %s", err.msg);
    CHECK(pa_machine_mbar_init(&mc, 0, 8, 1, &err) == PA_OK, "mbar");
    int32_t c[PA_MAX_RANK] = {32, 3, 15, 16, 0};
    CHECK(pa_issue_tensor_load(&mc, 0, 0, &m, PA_MODE_TILE_GATHER4, c, NULL, 1024, 0, 8, 0, 0, &err) ==
              PA_ERR_ILLEGAL_INSTRUCTION, "sm_90a machine refuses gather4");
    CHECK(pa_machine_set_target(&mc, PA_TARGET_SM_100A, &err) == PA_OK, "target");
    CHECK(pa_issue_tensor_load(&mc, 0, 0, &m, PA_MODE_TILE_GATHER4, c, NULL, 1024, 0, 8, 0, 0, &err) ==
              PA_OK, "gather4: %s", err.msg);
    CHECK(pa_machine_run(&mc, &err) == PA_OK, "run");
    /* row 0 = t[3][32..63] at 1024 (line 8: the ATOM_32B XOR is 0) */
    CHECK(mc.cluster.smem[0][1024] == t[3][32], "row 0");
    CHECK(mc.cluster.smem[0][1024 + 3 * 128] == 0, "row 3 (16) out of bounds: zero-filled");
    CHECK(pa_issue_tensor_store(&mc, 0, 0, &m, PA_MODE_TILE_SCATTER4, c, -1, 1024, 0, PA_RED_ADD, &err) ==
              PA_OK, "scatter4: %s", err.msg);
    CHECK(pa_machine_run(&mc, &err) == PA_OK, "run");
    uint64_t bytes = 0;
    CHECK(pa_issue_prefetch_tensor(&mc, &m, PA_MODE_TILE_GATHER4, c, -1, NULL, -1, count_ranges, &bytes, &err) ==
              PA_OK && bytes == 3 * 32, "prefetch: %s", err.msg);
    pa_machine_free(&mc);
}

static void test_wide_and_subbyte(void)
{
    static uint8_t t[2 * 40 * 64 * 2];
    for (size_t i = 0; i < sizeof t; i++)
        t[i] = (uint8_t)(i * 7);
    pa_machine mc;
    pa_error err;
    CHECK(pa_machine_init(&mc, 1, 65536, &err) == PA_OK, "machine");
    CHECK(pa_machine_set_target(&mc, PA_TARGET_SM_100A, &err) == PA_OK, "target");
    CHECK(pa_global_add(&mc.global, 0x20000, sizeof t, t, NULL, &err) == PA_OK, "add");
    CHECK(pa_machine_mbar_init(&mc, 0, 8, 1, &err) == PA_OK, "mbar");
    pa_im2col_wide_params w;
    memset(&w, 0, sizeof w);
    w.dtype = PA_DTYPE_FLOAT16;
    w.rank = 3;   /* C, W, N */
    w.global_address = 0x20000;
    w.global_dim[0] = 64, w.global_dim[1] = 40, w.global_dim[2] = 2;
    w.global_strides[0] = 128, w.global_strides[1] = 128 * 40;
    w.pixel_box_lower_w = -1;
    w.channels_per_pixel = 64;
    w.pixels_per_column = 1;
    w.element_strides[0] = w.element_strides[1] = w.element_strides[2] = 1;
    w.mode = 1;
    w.swizzle = PA_SWIZZLE_128B;
    w.target = PA_TARGET_SM_100A;
    pa_tensormap m;
    CHECK(pa_tensormap_encode_im2col_wide(&m, &w, &err) == PA_OK, "wide: %s", err.msg);
    int32_t c[PA_MAX_RANK] = {0, -1, 1, 0, 0};
    uint16_t info[3] = {2, 0, 0};
    CHECK(pa_issue_tensor_load(&mc, 0, 0, &m, PA_MODE_IM2COL_W128, c, info, 0, 0, 8, 0, 0, &err) == PA_OK,
          "im2col::w::128: %s", err.msg);
    CHECK(pa_machine_run(&mc, &err) == PA_OK, "run");
    /* .b6x16_p32 load and .b6p2x16 store of one 128-value row */
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_16U6_ALIGN16B;
    p.rank = 2;
    p.global_address = 0x20000;
    p.global_dim[0] = 256, p.global_dim[1] = 4;
    p.global_strides[0] = 192;
    p.box_dim[0] = 128, p.box_dim[1] = 2;
    p.element_strides[0] = p.element_strides[1] = 1;
    p.swizzle = PA_SWIZZLE_128B;
    p.target = PA_TARGET_SM_100A;
    CHECK(pa_tensormap_encode_tiled(&m, &p, &err) == PA_OK, "packed: %s", err.msg);
    int32_t pc[PA_MAX_RANK] = {128, 3, 0, 0, 0};
    memset(mc.cluster.smem[0] + 32768, 0xAB, 256);
    CHECK(pa_issue_tensor_load(&mc, 0, 0, &m, PA_MODE_TILE, pc, NULL, 32768, 0, 8, 0, 0, &err) == PA_OK,
          "packed load: %s", err.msg);
    CHECK(pa_machine_run(&mc, &err) == PA_OK, "run");
    CHECK(mc.cluster.smem[0][32768] == t[3 * 192 + 96] && mc.cluster.smem[0][32768 + 12] == 0xAB,
          "data then untouched padding");
    CHECK(mc.cluster.smem[0][32768 + 128] == 0, "row 4: out of bounds");
    CHECK(pa_issue_tensor_store(&mc, 0, 0, &m, PA_MODE_TILE, pc, -1, 32768, 0, PA_RED_ADD, &err) == PA_OK,
          "b6p2x16 store: %s", err.msg);
    CHECK(pa_machine_run(&mc, &err) == PA_OK, "run");
    CHECK(pa_issue_tensor_store(&mc, 0, 0, &m, PA_MODE_TILE, pc, -1, 32768, 1, PA_RED_ADD, &err) ==
              PA_ERR_ILLEGAL_INSTRUCTION, "no sub-byte reduction");
    pa_machine_free(&mc);
}

int main(void)
{
    test_gather4();
    test_wide_and_subbyte();
    if (failures)
        printf("%d failure(s)\n", failures);
    else
        printf("test_modes: all passed\n");
    return failures != 0;
}
