/* C tests of the copy plan (csrc/core/copy/): a copy's rules are checked
 * when it is planned, its place when it is placed, and executing the plan
 * moves the bytes of the map as planned. */
#include <string.h>

#include "check.h"
#include "copy/copy.h"

static pa_tensormap map_u16_128b(pa_error *err)
{
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_UINT16;
    p.rank = 2;
    p.global_address = 0x10000;
    p.global_dim[0] = 64;
    p.global_dim[1] = 32;
    p.global_strides[0] = 128;
    p.box_dim[0] = 64;
    p.box_dim[1] = 8;
    p.element_strides[0] = p.element_strides[1] = 1;
    p.swizzle = PA_SWIZZLE_128B;
    pa_tensormap m;
    CHECK(pa_tensormap_encode_tiled(&m, &p, err) == PA_OK, "encode: %s", err->msg);
    return m;
}

/* PTX .load_mode of each form: one rule, one message naming the form's modes. */
static void test_mode_belongs_to_direction(void)
{
    pa_error err;
    pa_tensormap m = map_u16_128b(&err);
    pa_copy_plan p;
    const int32_t c[PA_MAX_RANK] = {0, 0, 0, 0, 0};
    CHECK(pa_copy_plan_make(&p, PA_TARGET_DEFAULT, &m, PA_MODE_IM2COL_NO_OFFS, PA_DIR_LOAD, c, -1, NULL, -1, &err) ==
              PA_ERR_INVALID_VALUE, "a store mode on a load");
    CHECK(strstr(err.msg, "takes no .im2col_no_offs mode") && strstr(err.msg, "load-direction"), "%s", err.msg);
    CHECK(pa_copy_plan_make(&p, PA_TARGET_DEFAULT, &m, PA_MODE_TILE_SCATTER4, PA_DIR_REDUCE, c, -1, NULL, -1, &err) ==
              PA_ERR_INVALID_VALUE && strstr(err.msg, "cp.reduce.async.bulk.tensor takes no .tile::scatter4"),
          "%s", err.msg);
    CHECK(pa_copy_plan_make(&p, PA_TARGET_DEFAULT, &m, PA_MODE_COUNT, PA_DIR_LOAD, c, -1, NULL, -1, &err) ==
              PA_ERR_INVALID_VALUE, "no such mode");
}

/* The span a box may touch: its rows, widened to 128-byte lines under a swizzle. */
static void test_span(void)
{
    pa_box_layout l;
    memset(&l, 0, sizeof l);
    l.rows = 3;
    l.pitch = 128;
    l.row_bytes = 64;
    l.swizzle = PA_SWIZZLE_128B;
    uint64_t lo, hi;
    pa_copy_span(&l, 0x410, &lo, &hi);
    CHECK(lo == 0x400 && hi == 0x580, "swizzled span [0x%llx, 0x%llx)", (unsigned long long)lo,
          (unsigned long long)hi);
    l.swizzle = PA_SWIZZLE_NONE;
    pa_copy_span(&l, 0x410, &lo, &hi);
    CHECK(lo == 0x410 && hi == 0x410 + 2 * 128 + 64, "unswizzled span");
}

/* Plan once, place, execute: the bytes are those of the map as planned, even
 * when the caller's map changes afterwards (the plan keeps its own). */
static void test_plan_then_execute(void)
{
    pa_error err;
    pa_tensormap m = map_u16_128b(&err);
    static uint16_t t[32][64];
    for (int r = 0; r < 32; r++)
        for (int c = 0; c < 64; c++)
            t[r][c] = (uint16_t)(r * 64 + c);
    pa_global g;
    pa_global_init(&g);
    CHECK(pa_global_add(&g, 0x10000, sizeof t, (uint8_t *)t, NULL, &err) == PA_OK, "add");
    static uint8_t a[8192], b[8192];
    const int32_t c[PA_MAX_RANK] = {0, 28, 0, 0, 0};   /* rows 28..35: the last 4 out of bounds */
    pa_copy_plan p;
    CHECK(pa_copy_plan_make(&p, PA_TARGET_DEFAULT, &m, PA_MODE_TILE, PA_DIR_LOAD, c, -1, NULL, -1, &err) == PA_OK,
          "plan: %s", err.msg);
    CHECK(p.l.rows == 8 && p.l.row_bytes == 128 && p.l.tx_bytes == 1024, "layout");
    CHECK(pa_copy_plan_place(&p, 1032, sizeof a, &err) == PA_ERR_MISALIGNED_ADDRESS, "16-byte rule");
    CHECK(pa_copy_plan_place(&p, 8192 - 512, sizeof a, &err) == PA_ERR_ILLEGAL_ADDRESS, "past the end");
    CHECK(pa_copy_plan_place(&p, 1024, sizeof a, &err) == PA_OK, "place: %s", err.msg);
    m.global_address = 0xdead0000;   /* the caller's map moves on; the plan does not */
    CHECK(pa_copy_load(&p, &g, (pa_smem_view){a, sizeof a}, 1024, &err) == PA_OK, "load: %s", err.msg);
    m.global_address = 0x10000;
    CHECK(pa_copy_load_once(&m, PA_MODE_TILE, c, NULL, &g, (pa_smem_view){b, sizeof b}, 1024, &err) == PA_OK,
          "load once: %s", err.msg);
    CHECK(memcmp(a, b, sizeof a) == 0, "plan and one-shot load agree");
    /* row 1 (global row 29), element 5, through the 128B swizzle: line 9, XOR (9 & 7) << 4 */
    uint16_t v;
    memcpy(&v, a + ((1024 + 128 + 10) ^ (1u << 4)), 2);
    CHECK(v == 29 * 64 + 5, "swizzled element %u", v);
    memcpy(&v, a + 1024 + 5 * 128, 2);
    CHECK(v == 0, "out-of-bounds row filled");
    CHECK(pa_copy_store(&p, &g, (pa_smem_view){a, sizeof a}, 1024, NULL, NULL, &err) == PA_ERR_INVALID_VALUE,
          "a load plan cannot store");
    pa_global_free(&g);
}

int main(void)
{
    test_mode_belongs_to_direction();
    test_span();
    test_plan_then_execute();
    if (failures)
        printf("%d failure(s)\n", failures);
    else
        printf("test_copy: all passed\n");
    return failures != 0;
}
