/* test_tensormap.c - hand-written cases for csrc/core/tensormap.c, one or more
 * per rule, each citing it. Plain C, no framework: prints failures, returns
 * non-zero if any.
 *
 *   gcc -std=c11 -Wall -Wextra -Werror -I csrc/core csrc/core/types.c \
 *       csrc/core/tensormap.c csrc/tests/test_tensormap.c -o /tmp/test_tensormap
 */
#include "tensormap.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

/* ---- helpers ---------------------------------------------------------------- */

/* Recorded maps: the first 80 bytes (hex); bytes 80-127 were zero (R2). */
static void from_hex(const char *hex, uint8_t out[PA_TENSORMAP_BYTES])
{
    memset(out, 0, PA_TENSORMAP_BYTES);
    for (size_t i = 0; hex[2 * i] && hex[2 * i + 1] && i < PA_TENSORMAP_BYTES; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

static uint32_t word(const uint8_t *b, unsigned off)
{
    return (uint32_t)b[off] | (uint32_t)b[off + 1] << 8 | (uint32_t)b[off + 2] << 16 |
           (uint32_t)b[off + 3] << 24;
}

/* A valid rank-3 FLOAT32 tiled map to mutate. */
static pa_tiled_params tiled_base(void)
{
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_FLOAT32;
    p.rank = 3;
    p.global_address = 0x7f0000001000ull;
    p.global_dim[0] = 64, p.global_dim[1] = 32, p.global_dim[2] = 8;
    p.global_strides[0] = 256, p.global_strides[1] = 256 * 32;
    p.box_dim[0] = 16, p.box_dim[1] = 8, p.box_dim[2] = 2;
    for (int i = 0; i < 3; i++)
        p.element_strides[i] = 1;
    p.swizzle = PA_SWIZZLE_64B;
    return p;
}

/* A valid rank-4 FLOAT16 im2col map (NHWC) to mutate. */
static pa_im2col_params im2col_base(void)
{
    pa_im2col_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_FLOAT16;
    p.rank = 4;
    p.global_address = 0x7f0000002000ull;
    p.global_dim[0] = 32, p.global_dim[1] = 8, p.global_dim[2] = 8, p.global_dim[3] = 2;
    p.global_strides[0] = 64, p.global_strides[1] = 512, p.global_strides[2] = 4096;
    p.pixel_box_lower[0] = -1, p.pixel_box_lower[1] = -1;
    p.pixel_box_upper[0] = 1, p.pixel_box_upper[1] = 1;
    p.channels_per_pixel = 32;
    p.pixels_per_column = 64;
    for (int i = 0; i < 4; i++)
        p.element_strides[i] = 1;
    p.swizzle = PA_SWIZZLE_64B;
    return p;
}

static int tiled(const pa_tiled_params *p, pa_error *e)
{
    pa_tensormap m;
    memset(e, 0, sizeof *e);
    return pa_tensormap_encode_tiled(&m, p, e);
}

static int im2col(const pa_im2col_params *p, pa_error *e)
{
    pa_tensormap m;
    memset(e, 0, sizeof *e);
    return pa_tensormap_encode_im2col(&m, p, e);
}

#define ACCEPT_T(p, why)                                                             \
    do {                                                                             \
        pa_error e_;                                                                 \
        int rc_ = tiled(&(p), &e_);                                                  \
        CHECK(rc_ == PA_OK, "tiled should be accepted (%s): %s", why, e_.msg);      \
    } while (0)
#define REJECT_T(p, needle)                                                          \
    do {                                                                             \
        pa_error e_;                                                                 \
        int rc_ = tiled(&(p), &e_);                                                  \
        CHECK(rc_ == PA_ERR_INVALID_VALUE && e_.code == PA_ERR_INVALID_VALUE &&      \
                  strstr(e_.msg, needle),                                            \
              "tiled should be rejected with \"%s\": rc %d msg \"%s\"", needle, rc_, \
              e_.msg);                                                               \
    } while (0)
#define ACCEPT_I(p, why)                                                             \
    do {                                                                             \
        pa_error e_;                                                                 \
        int rc_ = im2col(&(p), &e_);                                                 \
        CHECK(rc_ == PA_OK, "im2col should be accepted (%s): %s", why, e_.msg);     \
    } while (0)
#define REJECT_I(p, needle)                                                          \
    do {                                                                             \
        pa_error e_;                                                                 \
        int rc_ = im2col(&(p), &e_);                                                 \
        CHECK(rc_ == PA_ERR_INVALID_VALUE && strstr(e_.msg, needle),                 \
              "im2col should be rejected with \"%s\": rc %d msg \"%s\"", needle, rc_, \
              e_.msg);                                                               \
    } while (0)

/* ---- encode: documented rules ------------------------------------------------- */

static void test_tiled_documented(void)
{
    pa_tiled_params p = tiled_base();
    ACCEPT_T(p, "base");

    p = tiled_base(), p.dtype = 16;  /* dtype outside CUtensorMapDataType */
    REJECT_T(p, "tensorDataType = 16");
    p = tiled_base(), p.rank = 0;    /* rank 1..5 */
    REJECT_T(p, "tensorRank = 0");
    p = tiled_base(), p.rank = 6;
    REJECT_T(p, "tensorRank = 6");
    p = tiled_base(), p.rank = 2, p.interleave = PA_INTERLEAVE_16B, p.swizzle = 0;
    REJECT_T(p, "rank >= 3");        /* interleave needs rank >= 3 */
    p = tiled_base(), p.interleave = 3;
    REJECT_T(p, "interleave = 3");
    p = tiled_base(), p.swizzle = 7;
    REJECT_T(p, "swizzle = 7");
    p = tiled_base(), p.l2_promotion = 4;
    REJECT_T(p, "l2Promotion = 4");
    p = tiled_base(), p.oob_fill = 2;
    REJECT_T(p, "oobFill = 2");
    p = tiled_base(), p.dtype = PA_DTYPE_INT32, p.oob_fill = 1;  /* NaN fill: floats only */
    REJECT_T(p, "floating-point");
    p = tiled_base(), p.global_address += 8;  /* 16-byte aligned address */
    REJECT_T(p, "not 16-byte aligned");
    p = tiled_base(), p.interleave = PA_INTERLEAVE_32B, p.swizzle = PA_SWIZZLE_32B;
    p.box_dim[0] = 8, p.global_address += 16;  /* 32-byte aligned with INTERLEAVE_32B */
    REJECT_T(p, "not 32-byte aligned");
    p = tiled_base(), p.global_dim[1] = 0;     /* globalDim 1..2^32 */
    REJECT_T(p, "globalDim[1] = 0");
    p = tiled_base(), p.global_dim[0] = (1ull << 32) + 1;
    REJECT_T(p, "globalDim[0] = 4294967297");
    p = tiled_base(), p.global_dim[0] = 1ull << 32;
    ACCEPT_T(p, "globalDim = 2^32");
    p = tiled_base(), p.global_strides[1] = 40;  /* strides multiple of 16 */
    REJECT_T(p, "globalStrides[1] = 40 is not a multiple of 16");
    p = tiled_base(), p.global_strides[1] = 1ull << 40;  /* strides < 2^40 */
    REJECT_T(p, "not below 2^40");
    p = tiled_base(), p.global_strides[1] = (1ull << 40) - 16;
    ACCEPT_T(p, "stride 2^40 - 16");
    p = tiled_base(), p.interleave = PA_INTERLEAVE_32B, p.swizzle = PA_SWIZZLE_32B;
    p.box_dim[0] = 8, p.global_strides[0] = 48;  /* multiple of 32 with INTERLEAVE_32B */
    REJECT_T(p, "globalStrides[0] = 48 is not a multiple of 32");
    p = tiled_base(), p.element_strides[2] = 0;  /* elementStrides 1..8 */
    REJECT_T(p, "elementStrides[2] = 0");
    p = tiled_base(), p.element_strides[2] = 9;
    REJECT_T(p, "elementStrides[2] = 9");
    p = tiled_base(), p.element_strides[2] = 8;
    ACCEPT_T(p, "elementStrides 8");
    p = tiled_base(), p.box_dim[1] = 0;  /* boxDim 1..256 */
    REJECT_T(p, "boxDim[1] = 0");
    p = tiled_base(), p.box_dim[1] = 257;
    REJECT_T(p, "boxDim[1] = 257");
    p = tiled_base(), p.box_dim[1] = 256;
    ACCEPT_T(p, "boxDim 256");
    p = tiled_base(), p.box_dim[1] = 100, p.global_dim[1] = 4;
    ACCEPT_T(p, "boxDim > globalDim (not a driver rule)");
    p = tiled_base(), p.box_dim[0] = 6;  /* boxDim[0]*elemsize multiple of 16 */
    REJECT_T(p, "boxDim[0] * elementSize = 24 B is not a multiple of 16");
    p = tiled_base(), p.box_dim[0] = 40, p.swizzle = PA_SWIZZLE_128B;  /* <= swizzle span */
    REJECT_T(p, "boxDim[0] * elementSize = 160 B exceeds the 128 B swizzle span");
    p = tiled_base(), p.box_dim[0] = 32, p.swizzle = PA_SWIZZLE_128B;
    ACCEPT_T(p, "inner box = span");
    p = tiled_base(), p.box_dim[0] = 64, p.swizzle = PA_SWIZZLE_NONE;
    ACCEPT_T(p, "no span limit without swizzle");
}

/* ---- encode: what the sm_90 driver did (golden obs. 15/16, probes) ------------- */

static void test_tiled_hardware(void)
{
    pa_tiled_params p;
    /* obs. 15: packed types and 128B_ATOM_* swizzles rejected on sm_90. */
    p = tiled_base(), p.dtype = PA_DTYPE_16U4_ALIGN8B;
    REJECT_T(p, "not supported on sm_90");
    p = tiled_base(), p.dtype = PA_DTYPE_16U6_ALIGN16B;
    REJECT_T(p, "packed 16U4/16U6");
    p = tiled_base(), p.swizzle = PA_SWIZZLE_128B_ATOM_32B;
    REJECT_T(p, "128B_ATOM_* swizzles are not supported on sm_90");
    p = tiled_base(), p.swizzle = PA_SWIZZLE_128B_ATOM_64B;
    REJECT_T(p, "swizzle = 128B_ATOM_64B (6)");

    /* obs. 16: accepted against the documentation. */
    p = tiled_base(), p.global_strides[0] = 0;
    ACCEPT_T(p, "stride 0");
    p = tiled_base(), p.global_strides[0] = 16;
    ACCEPT_T(p, "stride smaller than the row");
    p = tiled_base(), p.global_strides[1] = 128;
    ACCEPT_T(p, "non-monotonic strides");
    p = tiled_base(), p.global_address = 0;
    ACCEPT_T(p, "null globalAddress");
    p = tiled_base(), p.interleave = PA_INTERLEAVE_32B, p.swizzle = PA_SWIZZLE_64B;
    p.box_dim[0] = 8;
    ACCEPT_T(p, "INTERLEAVE_32B with 64B swizzle");
    p = tiled_base(), p.tensormap_address = 0x1008;
    ACCEPT_T(p, "CUtensorMap pointer not 64-byte aligned");

    /* obs. 15 "box of 256 in several dims" = box bytes (word 64) > 228 KiB. */
    p = tiled_base(), p.dtype = PA_DTYPE_UINT8, p.swizzle = 0;
    p.box_dim[0] = 256, p.box_dim[1] = 228, p.box_dim[2] = 4;  /* 233472 B */
    ACCEPT_T(p, "box of exactly 228 KiB");
    p.box_dim[0] = 16, p.box_dim[1] = 229, p.box_dim[2] = 64;  /* 234496 B */
    REJECT_T(p, "the box moves 234496 B");
    p.box_dim[0] = 256, p.box_dim[1] = 256, p.box_dim[2] = 7;
    p.element_strides[2] = 2;  /* floor(7/2) = 3 -> 196608 B: counted with floor */
    ACCEPT_T(p, "elementStrides shrink the box bytes (floor)");
    p = tiled_base(), p.dtype = PA_DTYPE_UINT64, p.swizzle = 0;
    p.box_dim[0] = 32, p.box_dim[1] = 256, p.box_dim[2] = 256;  /* encode_errors big_box */
    p.element_strides[0] = 4;
    REJECT_T(p, "more than the 233472 B");

    /* probe + golden: interleaved maps need boxDim[0]*elemsize % 16 == 0 as
     * well, but have no swizzle span limit. */
    p = tiled_base(), p.interleave = PA_INTERLEAVE_16B, p.swizzle = 0, p.box_dim[0] = 3;
    REJECT_T(p, "boxDim[0] * elementSize = 12 B is not a multiple of 16");
    p = tiled_base(), p.interleave = PA_INTERLEAVE_16B, p.swizzle = PA_SWIZZLE_32B;
    p.box_dim[0] = 64;
    ACCEPT_T(p, "interleaved box beyond the swizzle span");
}

static void test_im2col_rules(void)
{
    pa_im2col_params p = im2col_base();
    ACCEPT_I(p, "base");
    p = im2col_base(), p.rank = 2;  /* rank 3..5 */
    REJECT_I(p, "tensorRank = 2 is outside 3..5");
    p = im2col_base(), p.rank = 6;
    REJECT_I(p, "tensorRank = 6");
    /* corner ranges: rank 4 -> [-128, 127] */
    p = im2col_base(), p.pixel_box_lower[1] = -129, p.global_dim[2] = 300;
    REJECT_I(p, "pixelBoxLowerCorner[1] = -129 is outside [-128, 127]");
    p = im2col_base(), p.pixel_box_upper[0] = 127;
    ACCEPT_I(p, "corner 127 at rank 4");
    p = im2col_base(), p.rank = 5, p.global_dim[4] = 2, p.global_strides[3] = 8192;
    p.element_strides[4] = 1, p.pixel_box_upper[2] = 16;  /* rank 5 -> [-16, 15] */
    REJECT_I(p, "pixelBoxUpperCorner[2] = 16");
    /* cpp 1..256, ppc 1..1024 */
    p = im2col_base(), p.channels_per_pixel = 0;
    REJECT_I(p, "channelsPerPixel = 0");
    p = im2col_base(), p.channels_per_pixel = 264, p.swizzle = 0;
    REJECT_I(p, "channelsPerPixel = 264");
    p = im2col_base(), p.pixels_per_column = 1025;
    REJECT_I(p, "pixelsPerColumn = 1025");
    p = im2col_base(), p.pixels_per_column = 1024;
    ACCEPT_I(p, "pixelsPerColumn 1024");
    /* obs. 15: cpp*elemsize multiple of 16 */
    p = im2col_base(), p.channels_per_pixel = 12;
    REJECT_I(p, "channelsPerPixel * elementSize = 24 B is not a multiple of 16");
    /* doc: cpp*elemsize <= swizzle span without interleave */
    p = im2col_base(), p.channels_per_pixel = 64;
    REJECT_I(p, "channelsPerPixel * elementSize = 128 B exceeds the 64 B swizzle span");
    /* obs. 15: zero / negative pixel-box area, per dimension:
     * globalDim[i+1] + upper[i] - lower[i] must be > 0 */
    p = im2col_base(), p.pixel_box_lower[0] = 2, p.pixel_box_upper[0] = -6;
    REJECT_I(p, "globalDim[1] + pixelBoxUpperCorner[0] - pixelBoxLowerCorner[0] = 0");
    p = im2col_base(), p.pixel_box_lower[0] = 2, p.pixel_box_upper[0] = -5;
    ACCEPT_I(p, "extent 1 with lower > upper");
    p = im2col_base(), p.pixel_box_lower[0] = 10, p.pixel_box_lower[1] = 10;
    p.pixel_box_upper[0] = -10, p.pixel_box_upper[1] = -10;  /* product of negatives */
    REJECT_I(p, "no area");
    /* probe: interleaved im2col compares corner i with globalDim[i] */
    p = im2col_base(), p.interleave = PA_INTERLEAVE_16B, p.swizzle = 0;
    p.channels_per_pixel = 8, p.global_dim[0] = 8;
    p.pixel_box_lower[0] = 0, p.pixel_box_upper[0] = -8;  /* gd[0] 8 - 8 = 0 */
    REJECT_I(p, "globalDim[0] + pixelBoxUpperCorner[0]");
    p.pixel_box_upper[0] = -7, p.global_dim[1] = 1;  /* gd[1] + up - lo < 0 is fine */
    ACCEPT_I(p, "interleaved: corner 0 against globalDim[0]");
    /* probe: box bytes cpp*ppc*elemsize <= 228 KiB */
    p = im2col_base(), p.swizzle = 0, p.channels_per_pixel = 128, p.pixels_per_column = 912;
    ACCEPT_I(p, "233472 B");
    p.pixels_per_column = 913;
    REJECT_I(p, "the box moves 233728 B");
    /* obs. 15 applies to im2col too */
    p = im2col_base(), p.dtype = PA_DTYPE_16U4_ALIGN16B;
    REJECT_I(p, "not supported on sm_90");
}

/* ---- pack / unpack (R2, obs. 17) ----------------------------------------------- */

/* tensormap_replace.pub.0000 base map: FLOAT16 rank 2, 128B swizzle, L2_128B. */
static const char *MAP_A =
    "0036811cc17f0000106304007800000000000000000000000000000000000000bf0300002b010000"
    "0000000000000000000000000000003f3f0000000000000000200000000000000004000000000000";
/* encode_errors.pub.0043: TFLOAT32_FTZ im2col rank 5, corners {1,-2,1}/{-2,2,0}. */
static const char *MAP_I2C =
    "000081e4c97f000041c405000200000008000000100000005000000000000000070000000300000001"
    "000000040000000200000000000003c1075e00ff03000000400000000000000002000000000000";
/* tile_load.pub.0079: TFLOAT32 rank 4, INTERLEAVE_16B, 128B swizzle. */
static const char *MAP_TF32 =
    "00008124cb7f0000b06b01000200000006000000060000000000000000000000030000000200000000"
    "000000020000000000000000000003040000000000000050000000000000000004000000000000";

static void test_pack(void)
{
    uint8_t exp[128], got[128];
    pa_tensormap m;
    pa_error e;
    pa_tiled_params t;
    pa_im2col_params i;

    memset(&t, 0, sizeof t);  /* MAP_A's parameters */
    t.dtype = PA_DTYPE_FLOAT16, t.rank = 2, t.global_address = 0x7fc11c813600ull;
    t.global_dim[0] = 960, t.global_dim[1] = 300, t.global_strides[0] = 1920;
    t.box_dim[0] = 64, t.box_dim[1] = 64, t.element_strides[0] = t.element_strides[1] = 1;
    t.swizzle = PA_SWIZZLE_128B, t.l2_promotion = PA_L2_PROMOTION_L2_128B;
    CHECK(pa_tensormap_encode_tiled(&m, &t, &e) == PA_OK, "MAP_A encode: %s", e.msg);
    /* unused dims: globalDim 1, boxDim 1, elementStrides 1, strides 0 */
    CHECK(m.global_dim[4] == 1 && m.box_dim[3] == 1 && m.element_strides[2] == 1 &&
              m.global_strides[1] == 0 && m.global_strides[0] == 1920,
          "unused dimension defaults");
    pa_tensormap_pack(&m, got);
    from_hex(MAP_A, exp);
    CHECK(memcmp(got, exp, 128) == 0, "MAP_A bytes differ");
    CHECK(word(got, 64) == 8192 && word(got, 72) == 1024, "R2 words 64/72");

    memset(&i, 0, sizeof i);  /* MAP_I2C's parameters */
    i.dtype = PA_DTYPE_TFLOAT32_FTZ, i.rank = 5, i.global_address = 0x7fc9e4810000ull;
    {
        const uint64_t gd[5] = {8, 4, 2, 5, 3}, gs[4] = {32, 128, 256, 1280};
        memcpy(i.global_dim, gd, sizeof gd);
        memcpy(i.global_strides, gs, sizeof gs);
    }
    i.pixel_box_lower[0] = 1, i.pixel_box_lower[1] = -2, i.pixel_box_lower[2] = 1;
    i.pixel_box_upper[0] = -2, i.pixel_box_upper[1] = 2, i.pixel_box_upper[2] = 0;
    i.channels_per_pixel = 4, i.pixels_per_column = 1024;
    for (int k = 0; k < 5; k++)
        i.element_strides[k] = 1;
    i.swizzle = PA_SWIZZLE_64B, i.l2_promotion = 2, i.oob_fill = 1;
    CHECK(pa_tensormap_encode_im2col(&m, &i, &e) == PA_OK, "MAP_I2C encode: %s", e.msg);
    pa_tensormap_pack(&m, got);
    from_hex(MAP_I2C, exp);
    CHECK(memcmp(got, exp, 128) == 0, "MAP_I2C bytes differ");
    CHECK(got[8] & 1, "im2col descriptor-type bit");
    CHECK(word(got, 8) & (1u << 16), "bit 16 for TFLOAT32_FTZ (R2)");
}

static void test_unpack(void)
{
    const char *maps[3] = {MAP_A, MAP_I2C, MAP_TF32};
    uint8_t raw[128], again[128];
    pa_tensormap m;
    pa_error e;
    for (int k = 0; k < 3; k++) {  /* unpack then pack = the recorded bytes */
        from_hex(maps[k], raw);
        CHECK(pa_tensormap_unpack(raw, &m, &e) == PA_OK, "unpack %d: %s", k, e.msg);
        pa_tensormap_pack(&m, again);
        CHECK(memcmp(raw, again, 128) == 0, "round trip %d", k);
    }
    from_hex(MAP_I2C, raw);
    pa_tensormap_unpack(raw, &m, &e);
    CHECK(m.kind == PA_MAP_IM2COL && m.rank == 5 && m.dtype == PA_DTYPE_TFLOAT32_FTZ &&
              m.pixel_box_lower[1] == -2 && m.pixel_box_upper[0] == -2 &&
              m.channels_per_pixel == 4 && m.pixels_per_column == 1024 &&
              m.global_strides[3] == 1280,
          "im2col fields decoded");
    from_hex(MAP_TF32, raw);
    pa_tensormap_unpack(raw, &m, &e);
    CHECK(m.kind == PA_MAP_TILED && m.dtype == PA_DTYPE_TFLOAT32 &&
              m.interleave == PA_INTERLEAVE_16B && m.box_dim[1] == 5 && m.box_dim[4] == 1,
          "tiled tf32 fields decoded");
    /* R1: .rank can store 5..7 (rank 6..8): no pa_tensormap holds it. */
    from_hex(MAP_A, raw);
    pa_tensormap_replace(raw, PA_FIELD_RANK, 0, 6, &e);
    CHECK(pa_tensormap_unpack(raw, &m, &e) == PA_ERR_INVALID_VALUE && strstr(e.msg, "rank"),
          "rank 7 map: %s", e.msg);
}

/* ---- tensormap.replace (R1, R4) ------------------------------------------------ */

static void test_replace(void)
{
    uint8_t b[128], before[128];
    pa_tensormap m;
    pa_error e;
    from_hex(MAP_A, before);

    memcpy(b, before, 128);  /* global_address: any value, bytes 0-7 */
    CHECK(pa_tensormap_replace(b, PA_FIELD_GLOBAL_ADDRESS, 0, 0x123, &e) == PA_OK, "addr");
    CHECK(b[0] == 0x23 && b[1] == 0x01 && b[2] == 0 && memcmp(b + 8, before + 8, 120) == 0,
          "address bytes");

    memcpy(b, before, 128);  /* rank: bits 4-6 = new_val & 7 */
    pa_tensormap_replace(b, PA_FIELD_RANK, 0, 2, &e);
    CHECK(((word(b, 8) >> 4) & 7) == 2 && memcmp(b + 12, before + 12, 116) == 0, "rank");

    memcpy(b, before, 128);  /* elemtype 11 (tf32): writes 7 and sets bit 16 */
    pa_tensormap_replace(b, PA_FIELD_ELEMTYPE, 0, 11, &e);
    CHECK(((word(b, 8) >> 7) & 15) == 7 && (word(b, 8) >> 16 & 1), "elemtype tf32");
    pa_tensormap_unpack(b, &m, &e);
    CHECK(m.dtype == PA_DTYPE_TFLOAT32, "edited tf32 decodes as TFLOAT32");
    pa_tensormap_replace(b, PA_FIELD_ELEMTYPE, 0, 9, &e);  /* 0-10 keep bit 16 */
    CHECK(((word(b, 8) >> 7) & 15) == 9 && (word(b, 8) >> 16 & 1), "elemtype keeps bit 16");
    pa_tensormap_unpack(b, &m, &e);
    CHECK(m.dtype == PA_DTYPE_FLOAT64, "ptx elemtype 9 = FLOAT64");

    memcpy(b, before, 128);  /* global_stride ord k: /16 low word + nibble k of word 28 */
    pa_tensormap_replace(b, PA_FIELD_GLOBAL_STRIDE, 1, 0x3456789ab8ull, &e);
    CHECK(word(b, 16) == 0x456789ab && ((word(b, 28) >> 4) & 15) == 3, "stride ord 1");
    pa_tensormap_replace(b, PA_FIELD_GLOBAL_STRIDE, 1, 1ull << 40, &e);
    CHECK(word(b, 16) == 0 && ((word(b, 28) >> 4) & 15) == 0, "stride 2^40 wraps to 0");
    /* hw probe: ord 4 writes word 28 whole, then its nibble 4 (bits 16-19) */
    memcpy(b, before, 128);
    pa_tensormap_replace(b, PA_FIELD_GLOBAL_STRIDE, 4, 0x3456789ab0ull, &e);
    CHECK(word(b, 28) == 0x456389ab, "stride ord 4: word 28 = %08x", word(b, 28));

    memcpy(b, before, 128);  /* global_dim ord k: word 32+4k = new_val - 1 */
    pa_tensormap_replace(b, PA_FIELD_GLOBAL_DIM, 3, 0, &e);
    CHECK(word(b, 44) == 0xFFFFFFFFu, "global_dim 0 -> 0xFFFFFFFF");
    /* box_dim ord k: byte 55+k = (new_val - 1) & 0xFF */
    pa_tensormap_replace(b, PA_FIELD_BOX_DIM, 0, 256, &e);
    pa_tensormap_replace(b, PA_FIELD_BOX_DIM, 2, 257, &e);
    CHECK(b[55] == 0xFF && b[57] == 0, "box_dim 256 / 257");
    /* element_stride ord k: bits 3k..3k+2 of word 52 = (new_val - 1) & 7 */
    pa_tensormap_replace(b, PA_FIELD_ELEMENT_STRIDE, 4, 9, &e);
    CHECK(((word(b, 52) >> 12) & 7) == 0, "element_stride 9 -> 0");
    pa_tensormap_replace(b, PA_FIELD_ELEMENT_STRIDE, 1, 8, &e);
    CHECK(((word(b, 52) >> 3) & 7) == 7, "element_stride 8");
    /* interleave bits 11-12, swizzle 13-14, fill 15 */
    pa_tensormap_replace(b, PA_FIELD_INTERLEAVE_LAYOUT, 0, 2, &e);
    pa_tensormap_replace(b, PA_FIELD_SWIZZLE_MODE, 0, 1, &e);
    pa_tensormap_replace(b, PA_FIELD_FILL_MODE, 0, 1, &e);
    CHECK(((word(b, 8) >> 11) & 31) == (2 | 1 << 2 | 1 << 4), "il/swizzle/fill bits");
    CHECK(word(b, 64) == word(before, 64) && word(b, 72) == word(before, 72),
          "words 64/72 untouched (R3)");

    /* R4: what ptxas rejects for sm_90a */
    memcpy(b, before, 128);
    CHECK(pa_tensormap_replace(b, PA_FIELD_SWIZZLE_ATOMICITY, 0, 0, &e) &&
              strstr(e.msg, "not supported on sm_90a"), "swizzle_atomicity");
    CHECK(pa_tensormap_replace(b, PA_FIELD_ELEMTYPE, 0, 13, &e) && strstr(e.msg, "0..12"),
          "elemtype 13");
    CHECK(pa_tensormap_replace(b, PA_FIELD_SWIZZLE_MODE, 0, 4, &e) && strstr(e.msg, "0..3"),
          "swizzle_mode 4");
    CHECK(pa_tensormap_replace(b, PA_FIELD_INTERLEAVE_LAYOUT, 0, 3, &e), "interleave 3");
    CHECK(pa_tensormap_replace(b, PA_FIELD_FILL_MODE, 0, 2, &e), "fill_mode 2");
    CHECK(pa_tensormap_replace(b, PA_FIELD_BOX_DIM, 5, 1, &e) && strstr(e.msg, "ord = 5"),
          "ord 5");
    CHECK(memcmp(b, before, 128) == 0, "rejected edits change nothing");
}

/* ---- box bytes ------------------------------------------------------------------- */

static void test_box_bytes(void)
{
    pa_tensormap m;
    pa_error e;
    pa_tiled_params t = tiled_base();
    pa_im2col_params i = im2col_base();
    t.box_dim[1] = 7, t.element_strides[1] = 2, t.element_strides[0] = 3;
    pa_tensormap_encode_tiled(&m, &t, &e);
    /* 16*4 * ceil(7/2) * 2; elementStrides[0] ignored without interleave */
    CHECK(pa_tensormap_box_bytes(&m) == 16 * 4 * 4 * 2, "tiled box bytes");
    t = tiled_base(), t.interleave = PA_INTERLEAVE_16B, t.swizzle = 0;
    t.box_dim[0] = 8, t.element_strides[0] = 3;
    pa_tensormap_encode_tiled(&m, &t, &e);
    CHECK(pa_tensormap_box_bytes(&m) == 3 * 4 * 8 * 2, "interleaved box bytes");
    pa_tensormap_encode_im2col(&m, &i, &e);
    CHECK(pa_tensormap_box_bytes(&m) == 64 * 32 * 2, "im2col box bytes");
}

int main(void)
{
    test_tiled_documented();
    test_tiled_hardware();
    test_im2col_rules();
    test_pack();
    test_unpack();
    test_replace();
    test_box_bytes();
    if (failures)
        printf("%d failure(s)\n", failures);
    else
        printf("test_tensormap: all passed\n");
    return failures ? 1 : 0;
}
