/* tensormap.h - the 128-byte tensor-map descriptor (CUtensorMap).
 *
 * Two views of one object:
 *   - pa_tensormap: the decoded fields (what the copy engine reads);
 *   - 128 bytes: the image cuTensorMapEncode* writes, byte-compatible with the
 *     sm_90 driver (golden/README.md R1, R2, observation 17).
 * Encoding validates exactly like the driver on sm_90 (accepts what it
 * accepts, rejects what it rejects) and names the rule that failed.
 *
 * Index convention (driver and PTX): dimension 0 is the innermost, contiguous
 * one. global_strides[i] is the byte stride of dimension i+1 (rank-1 entries).
 */
#ifndef PA_TENSORMAP_H
#define PA_TENSORMAP_H

#include "types.h"

#define PA_TENSORMAP_BYTES 128

typedef enum {
    PA_MAP_TILED = 0,      /* cuTensorMapEncodeTiled */
    PA_MAP_IM2COL = 1,     /* cuTensorMapEncodeIm2col */
    PA_MAP_IM2COL_W = 2,   /* cuTensorMapEncodeIm2colWide, CU_TENSOR_MAP_IM2COL_WIDE_MODE_W */
    PA_MAP_IM2COL_W128 = 3 /* cuTensorMapEncodeIm2colWide, CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128 */
} pa_map_kind;

/* Is this an im2col-wide map (the W corner is pixel_box_lower/upper[0])? */
#define PA_MAP_IS_WIDE(k) ((k) == PA_MAP_IM2COL_W || (k) == PA_MAP_IM2COL_W128)

typedef struct pa_tensormap {
    pa_map_kind kind;
    pa_dtype dtype;
    uint32_t rank;                        /* 1..5 */
    uint64_t global_address;
    uint64_t global_dim[PA_MAX_RANK];     /* elements; unused dims 1 */
    uint64_t global_strides[PA_MAX_RANK]; /* bytes, [i] = stride of dim i+1; unused 0 */
    uint32_t box_dim[PA_MAX_RANK];        /* tiled only; unused dims 1 */
    uint32_t element_strides[PA_MAX_RANK];/* 1..8; unused dims 1 */
    /* im2col only: corners of dims 1..rank-2 (index 0 = dim 1, i.e. W) */
    int32_t pixel_box_lower[PA_MAX_RANK - 2];
    int32_t pixel_box_upper[PA_MAX_RANK - 2];
    uint32_t channels_per_pixel;
    uint32_t pixels_per_column;
    pa_interleave interleave;
    pa_swizzle swizzle;
    pa_l2promotion l2_promotion;
    pa_oobfill oob_fill;
} pa_tensormap;

/* Parameters of cuTensorMapEncodeTiled, as the driver takes them. Arrays are
 * read up to `rank` entries (global_strides: rank-1). Enum fields are plain
 * ints so that out-of-range values reach validation. */
typedef struct {
    int dtype;
    uint32_t rank;
    uint64_t global_address;
    uint64_t global_dim[PA_MAX_RANK];
    uint64_t global_strides[PA_MAX_RANK];
    uint32_t box_dim[PA_MAX_RANK];
    uint32_t element_strides[PA_MAX_RANK];
    int interleave, swizzle, l2_promotion, oob_fill;
    uint64_t tensormap_address;  /* where the CUtensorMap lives (alignment rule); 0 = aligned */
    int target;                  /* pa_target whose driver encodes (0 = sm_90: the sm_90 rules) */
} pa_tiled_params;

/* Parameters of cuTensorMapEncodeIm2col. */
typedef struct {
    int dtype;
    uint32_t rank;
    uint64_t global_address;
    uint64_t global_dim[PA_MAX_RANK];
    uint64_t global_strides[PA_MAX_RANK];
    int32_t pixel_box_lower[PA_MAX_RANK - 2];
    int32_t pixel_box_upper[PA_MAX_RANK - 2];
    uint32_t channels_per_pixel;
    uint32_t pixels_per_column;
    uint32_t element_strides[PA_MAX_RANK];
    int interleave, swizzle, l2_promotion, oob_fill;
    uint64_t tensormap_address;
    int target;                  /* as in pa_tiled_params */
} pa_im2col_params;

/* Parameters of cuTensorMapEncodeIm2colWide (compute capability 10.0+). */
typedef struct {
    int dtype;
    uint32_t rank;
    uint64_t global_address;
    uint64_t global_dim[PA_MAX_RANK];
    uint64_t global_strides[PA_MAX_RANK];
    int32_t pixel_box_lower_w, pixel_box_upper_w;
    uint32_t channels_per_pixel;
    uint32_t pixels_per_column;
    uint32_t element_strides[PA_MAX_RANK];
    int interleave, mode, swizzle, l2_promotion, oob_fill;  /* mode: 0 = W, 1 = W128 */
    uint64_t tensormap_address;
    int target;
} pa_im2col_wide_params;

/* Validate like the sm_90 driver and fill *out. Returns PA_OK or
 * PA_ERR_INVALID_VALUE with err->msg naming the rule and the value. */
int pa_tensormap_encode_tiled(pa_tensormap *out, const pa_tiled_params *p, pa_error *err);
int pa_tensormap_encode_im2col(pa_tensormap *out, const pa_im2col_params *p, pa_error *err);
int pa_tensormap_encode_im2col_wide(pa_tensormap *out, const pa_im2col_wide_params *p, pa_error *err);

/* The 128-byte image the driver writes for *m. */
void pa_tensormap_pack(const pa_tensormap *m, uint8_t out[PA_TENSORMAP_BYTES]);

/* Decode a 128-byte image (driver-made or edited by tensormap.replace) into
 * the fields the copy engine uses. Fails only on values no field can hold. */
int pa_tensormap_unpack(const uint8_t in[PA_TENSORMAP_BYTES], pa_tensormap *out, pa_error *err);

/* tensormap.replace.tile fields (PTX ISA). */
typedef enum {
    PA_FIELD_GLOBAL_ADDRESS = 0,
    PA_FIELD_RANK,
    PA_FIELD_BOX_DIM,
    PA_FIELD_GLOBAL_DIM,
    PA_FIELD_GLOBAL_STRIDE,
    PA_FIELD_ELEMENT_STRIDE,
    PA_FIELD_ELEMTYPE,
    PA_FIELD_INTERLEAVE_LAYOUT,
    PA_FIELD_SWIZZLE_MODE,
    PA_FIELD_SWIZZLE_ATOMICITY,
    PA_FIELD_FILL_MODE,
    PA_FIELD_COUNT
} pa_tmap_field;

/* tensormap.replace.tile.<field>{ord} on a 128-byte image, changing exactly
 * the bits the sm_90a hardware changes (golden R1). Values outside the PTX
 * value table, ord > 4, or fields sm_90a rejects are PA_ERR_INVALID_VALUE. */
int pa_tensormap_replace(uint8_t map[PA_TENSORMAP_BYTES], pa_tmap_field field, int ord,
                         uint64_t new_val, pa_error *err);
/* The same as compiled for target (a pa_target): sm_90a is the above; the
 * sm_100 targets also take .swizzle_atomicity (0 16B, 1 32B, 2 32B + 8B flip,
 * 3 64B) and .elemtype 13..15 (seed tensormap.replace, Target ISA Notes). */
int pa_tensormap_replace_target(uint8_t map[PA_TENSORMAP_BYTES], pa_tmap_field field, int ord,
                                uint64_t new_val, int target, pa_error *err);

/* Bytes one tile load moves into shared memory and credits to the mbarrier
 * (the documented formula for non-interleaved maps). */
uint64_t pa_tensormap_box_bytes(const pa_tensormap *m);

#endif
