/* test_im2col_pixel.c - the size of an im2col pixel (docs/im2col-mode.md 3.1):
 * channelsPerPixel * elemsize without interleave, one whole 16/32-byte slice
 * with INTERLEAVE_16B/32B (a 16-byte pixel of a 32B map moves its 32-byte slice
 * and credits 32 bytes; recorded im2col_interleaved and the H100 probe). Built
 * and run under ASan/UBSan by csrc/tests/Makefile.
 */
#include <stdio.h>
#include <string.h>

#include "core.h"

#include "check.h"

/* A rank-3 map W (slices), C/x, N of n slices; u16, pixel of cpp elements. */
static int encode(pa_tensormap *m, int il, uint32_t cpp, uint32_t ppc, uint64_t n, pa_error *err)
{
    pa_im2col_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_UINT16;
    p.rank = 3;
    p.global_address = 0x10000;
    p.global_dim[0] = n, p.global_dim[1] = 1, p.global_dim[2] = 1;
    p.global_strides[0] = p.global_strides[1] = n * 32;
    p.channels_per_pixel = cpp;
    p.pixels_per_column = ppc;
    p.element_strides[0] = p.element_strides[1] = p.element_strides[2] = 1;
    p.interleave = il;
    p.swizzle = il == PA_INTERLEAVE_32B ? PA_SWIZZLE_32B : PA_SWIZZLE_NONE;
    return pa_tensormap_encode_im2col(m, &p, err);
}

static void test_pixel_bytes(void)
{
    pa_tensormap m;
    pa_box_layout l;
    pa_error err;
    /* 16-byte pixel (8 x u16) of a 32B map: rows of 32 bytes, 32 credited per pixel */
    CHECK(encode(&m, PA_INTERLEAVE_32B, 8, 5, 8, &err) == PA_OK, "encode: %s", err.msg);
    CHECK(pa_im2col_pixel_bytes(&m) == 32, "16-byte pixel of a 32B map: %u", pa_im2col_pixel_bytes(&m));
    CHECK(pa_box_layout_im2col(&m, &l, &err) == PA_OK, "layout: %s", err.msg);
    CHECK(l.row_bytes == 32 && l.pitch == 32 && l.tx_bytes == 5 * 32, "row %u pitch %u tx %llu",
          l.row_bytes, l.pitch, (unsigned long long)l.tx_bytes);
    /* 64-byte pixel of a 32B map, 48-byte pixel of a 16B map: one slice */
    CHECK(encode(&m, PA_INTERLEAVE_32B, 32, 3, 8, &err) == PA_OK, "encode: %s", err.msg);
    CHECK(pa_box_layout_im2col(&m, &l, &err) == PA_OK && l.row_bytes == 32 && l.tx_bytes == 3 * 32,
          "64-byte pixel of a 32B map: row %u", l.row_bytes);
    CHECK(encode(&m, PA_INTERLEAVE_16B, 24, 3, 8, &err) == PA_OK, "encode: %s", err.msg);
    CHECK(pa_box_layout_im2col(&m, &l, &err) == PA_OK && l.row_bytes == 16 && l.tx_bytes == 3 * 16,
          "48-byte pixel of a 16B map: row %u", l.row_bytes);
}

/* The load writes the whole slice of every pixel, and nothing past the column. */
static void test_load_moves_slices(void)
{
    static uint8_t tensor[8 * 32];
    static uint8_t smem[4096];
    for (unsigned i = 0; i < sizeof tensor; i++)
        tensor[i] = (uint8_t)(i * 7 + 1);
    pa_global g;
    pa_error err;
    pa_tensormap m;
    pa_global_init(&g);
    CHECK(pa_global_add(&g, 0x10000, sizeof tensor, tensor, NULL, &err) == PA_OK, "add");
    CHECK(encode(&m, PA_INTERLEAVE_32B, 8, 3, 8, &err) == PA_OK, "encode: %s", err.msg);
    int32_t coords[PA_MAX_RANK] = {2, 0, 0, 0, 0};
    uint16_t offsets[PA_MAX_RANK - 2] = {0, 0, 0};
    memset(smem, 0xA5, sizeof smem);
    const uint32_t dst = 1024;   /* 1024-aligned: the 32B swizzle leaves rows 0-3 in place */
    CHECK(pa_copy_load_once(&m, PA_MODE_IM2COL, coords, offsets, &g, (pa_smem_view){smem, sizeof smem},
                              dst, &err) == PA_OK, "load: %s", err.msg);
    CHECK(memcmp(smem + dst, tensor + 2 * 32, 3 * 32) == 0, "slices W = 2, 3, 4");
    CHECK(smem[dst - 1] == 0xA5 && smem[dst + 3 * 32] == 0xA5, "nothing outside the column written");
    pa_global_free(&g);
}

int main(void)
{
    test_pixel_bytes();
    test_load_moves_slices();
    if (failures)
        printf("%d check(s) failed\n", failures);
    else
        printf("test_im2col_pixel: all passed\n");
    return failures != 0;
}
