/* tensormap.c - cuTensorMapEncode{Tiled,Im2col} validation, the 128-byte
 * CUtensorMap image, tensormap.replace edits.
 *
 * Sources: spec/driver-tensormap.md sections 2-5 (documented rules),
 * spec/tensormap-layout.md (field positions), golden/README.md observations
 * 15-17 and R1-R4 (what the sm_90 driver 580.159.04 and the H200 did). Where
 * they disagree the recordings win; such rules say "hw:" in their comment.
 * The limits marked "probe" were measured on the same driver (H200, driver
 * 580.159.04) with cuTensorMapEncode* calls around the boundary.
 */
#include "tensormap.h"

#include <string.h>

#include "target.h"

/* ---- limits ------------------------------------------------------------ */

#define MAX_GLOBAL_DIM (1ull << 32)  /* driver doc: globalDim <= 2^32 */
#define MAX_STRIDE (1ull << 40)      /* driver doc: globalStrides < 2^40 */
#define MAX_BOX 256u                 /* driver doc: boxDim <= 256 */
#define MAX_ESTRIDE 8u               /* driver doc: elementStrides <= 8 */
#define MAX_CPP 256u                 /* driver doc: channelsPerPixel <= 256 */
#define MAX_PPC 1024u                /* driver doc: pixelsPerColumn <= 1024 */
/* probe: the bytes one box moves (word 64 of the image, see box_word())
 * must fit the 228 KiB of sm_90 shared memory: 233472 accepted, 233488 and
 * up rejected, tiled and im2col alike (observation 15's "box of 256 in
 * several dims" is this rule: {32,256,256} x 8 B = 16 MiB). */
#define MAX_BOX_BYTES (228u * 1024u)

/* ---- small helpers ------------------------------------------------------ */

static uint32_t rd32(const uint8_t *b, unsigned off)
{
    return (uint32_t)b[off] | (uint32_t)b[off + 1] << 8 | (uint32_t)b[off + 2] << 16 |
           (uint32_t)b[off + 3] << 24;
}

static void wr32(uint8_t *b, unsigned off, uint32_t v)
{
    for (unsigned i = 0; i < 4; i++)
        b[off + i] = (uint8_t)(v >> (8 * i));
}

static uint64_t rd64(const uint8_t *b, unsigned off)
{
    return (uint64_t)rd32(b, off) | (uint64_t)rd32(b, off + 4) << 32;
}

static void wr64(uint8_t *b, unsigned off, uint64_t v)
{
    wr32(b, off, (uint32_t)v);
    wr32(b, off + 4, (uint32_t)(v >> 32));
}

/* Replace bits [lo, lo+width) of the word at byte `off`. */
static void set_bits(uint8_t *b, unsigned off, unsigned lo, unsigned width, uint32_t v)
{
    uint32_t mask = (width >= 32 ? 0xFFFFFFFFu : ((1u << width) - 1u)) << lo;
    wr32(b, off, (rd32(b, off) & ~mask) | ((v << lo) & mask));
}

static uint32_t get_bits(const uint8_t *b, unsigned off, unsigned lo, unsigned width)
{
    return (rd32(b, off) >> lo) & ((1u << width) - 1u);
}

static int32_t sign_extend(uint32_t v, unsigned bits)
{
    uint32_t m = 1u << (bits - 1);
    return (int32_t)((v ^ m) - m);
}

/* ---- byte layout (tensormap-layout.md, confirmed by golden R1/R2) ------- */

enum {
    OFF_ADDR = 0,       /* 64-bit global address (obs. 17) */
    OFF_FLAGS = 8,      /* word 8: type, rank, elemtype, il, swizzle, fill, tf32, l2 */
    OFF_STRIDE_LO = 12, /* words 12..24: globalStrides[k] >> 4 */
    OFF_STRIDE_HI = 28, /* word 28: nibble k = globalStrides[k] >> 36 */
    OFF_DIM = 32,       /* words 32..48: globalDim[k] - 1 */
    OFF_ESTRIDE = 52,   /* word 52: 3 bits per dim; byte 55: boxDim[0]-1 / cpp-1 */
    OFF_BOX0 = 55,
    OFF_BOXN = 56,      /* tiled: byte 55+k = boxDim[k]-1; im2col: corners */
    OFF_PPC = 60,       /* im2col: bits 9:0 = pixelsPerColumn - 1 */
    OFF_BOX_BYTES = 64, /* R2: elemsize x prod floor(boxDim/elementStrides) */
    OFF_SMEM_SPAN = 72, /* R2: 16, 256, 512, 1024 for swizzle none..128B */
    /* The model's own word for what no public source places (tensormap-layout.md:
     * "Nothing public shows where Blackwell additions live"): bits 1:0 the
     * swizzle atomicity (PTX .swizzle_atomicity numbering: 0 16B, 1 32B,
     * 2 32B + 8B flip, 3 64B; the 2-bit swizzle field then holds 128B),
     * bit 8 im2col-wide, bit 9 its W128 mode, bit 10 the 96B swizzle (PTX
     * .swizzle_mode 4, which the 2-bit swizzle field cannot hold; that field
     * then holds 0). Zero in every sm_90 map. */
    OFF_EXT = 120
};

#define F_EXT_ATOMICITY 0, 2
#define F_EXT_WIDE 8, 1
#define F_EXT_W128 9, 1
#define F_EXT_96B 10, 1

/* word 8 bit fields (R2) */
#define F_IM2COL 0, 1
#define F_RANK 4, 3
#define F_ELEMTYPE 7, 4
#define F_INTERLEAVE 11, 2
#define F_SWIZZLE 13, 2
#define F_FILL 15, 1
#define F_TF32 16, 1
#define F_L2 17, 2

/* PTX .elemtype numbering of the descriptor field (R1/R2): TFLOAT32 and
 * TFLOAT32_FTZ are stored as f32 (7) / f32.ftz (8) plus bit 16. */
static unsigned field_elemtype(pa_dtype dt)
{
    if (dt == PA_DTYPE_TFLOAT32)
        return 7;
    if (dt == PA_DTYPE_TFLOAT32_FTZ)
        return 8;
    return pa_dtype_get(dt)->ptx_elemtype;
}

static int is_tf32(pa_dtype dt)
{
    return dt == PA_DTYPE_TFLOAT32 || dt == PA_DTYPE_TFLOAT32_FTZ;
}

/* Inverse of field_elemtype(); -1 when no driver type has that number. */
static int dtype_from_field(unsigned elemtype, int tf32_bit)
{
    if (tf32_bit && elemtype == 7)
        return PA_DTYPE_TFLOAT32;
    if (tf32_bit && elemtype == 8)
        return PA_DTYPE_TFLOAT32_FTZ;
    for (int d = 0; d < PA_DTYPE_COUNT; d++)
        if (!is_tf32((pa_dtype)d) && pa_dtype_get(d)->ptx_elemtype == elemtype)
            return d;
    return -1;
}

/* im2col corner field width per rank (layout doc; = the documented ranges). */
static unsigned corner_bits(uint32_t rank)
{
    return rank == 3 ? 16 : rank == 4 ? 8 : 5;
}

/* ---- validation: shared rules ------------------------------------------ */

typedef struct {  /* the parameters the encode functions share */
    const char *fn;
    int target;       /* pa_target whose driver encodes */
    int dtype;
    uint32_t rank;
    uint64_t global_address;
    const uint64_t *global_dim;
    const uint64_t *global_strides;
    const uint32_t *element_strides;
    int interleave, swizzle, l2_promotion, oob_fill;
} common_params;

static int check_dtype(const common_params *c, pa_error *err)
{
    const pa_dtype_info *di = pa_dtype_get(c->dtype);
    if (!pa_target_name(c->target))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: target %d is not a known target", c->fn,
                       c->target);
    if (!pa_target_has((pa_target)c->target, PA_FEAT_TENSOR_MAP))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: tensor maps need %s; %s has none", c->fn,
                       pa_feature_needs(PA_FEAT_TENSOR_MAP), pa_target_name(c->target));
    if (!di)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: tensorDataType = %d is not a CUtensorMapDataType (0..15)", c->fn,
                       c->dtype);
    /* hw (obs. 15): the driver rejects every packed type on sm_90. */
    if (di->is_packed && !pa_target_has((pa_target)c->target, PA_FEAT_PACKED_TYPES))
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: tensorDataType = %s (%d): packed 16U4/16U6 types are not supported on "
                       "sm_90 (the driver rejects them on compute capability 9.0); they need %s, "
                       "this target is %s",
                       c->fn, di->name, c->dtype, pa_feature_needs(PA_FEAT_PACKED_TYPES),
                       pa_target_name(c->target));
    return PA_OK;
}

static int check_enums(const common_params *c, pa_error *err)
{
    if (!pa_interleave_name(c->interleave))
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: interleave = %d is not a CUtensorMapInterleave (0..2)", c->fn,
                       c->interleave);
    if (!pa_swizzle_name(c->swizzle))
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: swizzle = %d is not a CUtensorMapSwizzle (0..6, or the model's 96 for "
                       "96B)", c->fn, c->swizzle);
    /* driver (online cuTensorMapEncodeIm2colWide): "CU_TENSOR_MAP_SWIZZLE_96B is
     * supported only when mode is CU_TENSOR_MAP_IM2COL_WIDE_MODE_W" - no other
     * encoder takes it; seed: .swizzle_mode 4 is sm_103a's. */
    if (c->swizzle == PA_SWIZZLE_96B) {
        if (strcmp(c->fn, "cuTensorMapEncodeIm2colWide") != 0)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "%s: swizzle = 96B: CU_TENSOR_MAP_SWIZZLE_96B is supported only by "
                           "cuTensorMapEncodeIm2colWide with mode CU_TENSOR_MAP_IM2COL_WIDE_MODE_W",
                           c->fn);
        if (!pa_target_has((pa_target)c->target, PA_FEAT_SWIZZLE_96B))
            return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: swizzle = 96B needs %s; this target is %s",
                           c->fn, pa_feature_needs(PA_FEAT_SWIZZLE_96B), pa_target_name(c->target));
    }
    /* hw (obs. 15): every 128B_ATOM_* swizzle is rejected on sm_90; the driver
     * docs give them to compute capability 10.0 and later. */
    if (c->swizzle >= PA_SWIZZLE_128B_ATOM_32B && c->swizzle < PA_SWIZZLE_COUNT &&
        !pa_target_has((pa_target)c->target, PA_FEAT_SWIZZLE_ATOM))
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: swizzle = %s (%d): 128B_ATOM_* swizzles are not supported on sm_90 "
                       "(the driver rejects them on compute capability 9.0); they need %s, this "
                       "target is %s",
                       c->fn, pa_swizzle_name(c->swizzle), c->swizzle,
                       pa_feature_needs(PA_FEAT_SWIZZLE_ATOM), pa_target_name(c->target));
    if (!pa_l2promotion_name(c->l2_promotion))
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: l2Promotion = %d is not a CUtensorMapL2promotion (0..3)", c->fn,
                       c->l2_promotion);
    if (!pa_oobfill_name(c->oob_fill))
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: oobFill = %d is not a CUtensorMapFloatOOBfill (0..1)", c->fn,
                       c->oob_fill);
    /* driver doc: NaN fill only for floating-point types. */
    if (c->oob_fill == PA_OOB_FILL_NAN_REQUEST_ZERO_FMA && !pa_dtype_get(c->dtype)->is_float)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: oobFill = NAN_REQUEST_ZERO_FMA needs a floating-point type, "
                       "tensorDataType = %s",
                       c->fn, pa_dtype_get(c->dtype)->name);
    return PA_OK;
}

static int is_padded_type(int dt)
{
    return dt == PA_DTYPE_16U4_ALIGN16B || dt == PA_DTYPE_16U6_ALIGN16B;
}

/* A 16U6_ALIGN16B map for sm_103a, whose .b6p2x16 stores have their own rules
 * (seed, "restrictions for sm_103a while using type .b6p2x16"): the encoder
 * takes what those stores allow (16-byte address and strides, globalDim[0] a
 * multiple of 64, boxDim[0] 64 or 128, the 64B swizzle); each copy then checks
 * its own direction's rules (copy/packed.c). Inferred: the driver text predates
 * the override and says nothing of it. */
static int sm103_b6p2(const common_params *c)
{
    /* im2col-wide maps are for loads only: the general rules. */
    return c->dtype == PA_DTYPE_16U6_ALIGN16B && strcmp(c->fn, "cuTensorMapEncodeIm2colWide") != 0 &&
           pa_target_has((pa_target)c->target, PA_FEAT_B6P2X16_SM103A);
}

/* driver doc: 16-byte aligned, 32 with INTERLEAVE_32B (probe: 16 rejected);
 * 32 for 16U6_ALIGN16B / 16U4_ALIGN16B.
 * hw (obs. 16): a null address is accepted (0 is aligned). */
/* Why an alignment is 32 bytes: the interleave, or else the padded type. */
static const char *align32_reason(const common_params *c)
{
    if (c->interleave == PA_INTERLEAVE_32B)
        return " (INTERLEAVE_32B)";
    return c->dtype == PA_DTYPE_16U6_ALIGN16B ? " (16U6_ALIGN16B)" : " (16U4_ALIGN16B)";
}

static int check_address(const common_params *c, pa_error *err)
{
    unsigned align = c->interleave == PA_INTERLEAVE_32B || (is_padded_type(c->dtype) && !sm103_b6p2(c)) ? 32 : 16;
    if (c->global_address % align)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: globalAddress = 0x%llx is not %u-byte aligned%s", c->fn,
                       (unsigned long long)c->global_address, align,
                       align == 32 ? align32_reason(c) : "");
    return PA_OK;
}

static int check_global_dims(const common_params *c, pa_error *err)
{
    for (uint32_t i = 0; i < c->rank; i++) /* driver doc: 1 <= globalDim <= 2^32 */
        if (c->global_dim[i] == 0 || c->global_dim[i] > MAX_GLOBAL_DIM)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "%s: globalDim[%u] = %llu is outside 1..2^32", c->fn, i,
                           (unsigned long long)c->global_dim[i]);
    return PA_OK;
}

/* driver doc: multiple of 16 (32 with INTERLEAVE_32B), < 2^40.
 * hw (obs. 16): 0, smaller than the row and non-monotonic are accepted. */
static int check_global_strides(const common_params *c, pa_error *err)
{
    unsigned mult = c->interleave == PA_INTERLEAVE_32B || (is_padded_type(c->dtype) && !sm103_b6p2(c)) ? 32 : 16;
    for (uint32_t i = 0; i + 1 < c->rank; i++) {
        uint64_t s = c->global_strides[i];
        if (s % mult)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "%s: globalStrides[%u] = %llu is not a multiple of %u%s", c->fn, i,
                           (unsigned long long)s, mult, mult == 32 ? align32_reason(c) : "");
        if (s >= MAX_STRIDE)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "%s: globalStrides[%u] = %llu is not below 2^40", c->fn, i,
                           (unsigned long long)s);
    }
    return PA_OK;
}

static int check_element_strides(const common_params *c, pa_error *err)
{
    for (uint32_t i = 0; i < c->rank; i++) /* driver doc: 1..8 */
        if (c->element_strides[i] == 0 || c->element_strides[i] > MAX_ESTRIDE)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "%s: elementStrides[%u] = %u is outside 1..8", c->fn, i,
                           c->element_strides[i]);
    return PA_OK;
}

/* driver doc, for the packed types (target has them: check_dtype). */
static int check_packed(const common_params *c, int wide, pa_error *err)
{
    const pa_dtype_info *di = pa_dtype_get(c->dtype);
    if (!di->is_packed)
        return PA_OK;
    /* "When tensorDataType is ..._16U6_ALIGN16B or ..._16U4_ALIGN16B, globalDim[0] must be a
     * multiple of 128"; "..._16U4_ALIGN8B, globalDim[0] must be a multiple of 2". */
    unsigned mult = is_padded_type(c->dtype) ? (sm103_b6p2(c) && !wide ? 64 : 128) : 2;
    if (c->global_dim[0] % mult)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: globalDim[0] = %llu of %s is not a multiple of %u",
                       c->fn, (unsigned long long)c->global_dim[0], di->name, mult);
    /* "16U6_ALIGN16B requires interleave to be CU_TENSOR_MAP_INTERLEAVE_NONE"; the
     * model takes no interleaved packed map at all (inferred: PTX 5.5.6 slices count
     * whole bytes of C). */
    if (c->interleave != PA_INTERLEAVE_NONE)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: interleave = %s with %s: packed types need INTERLEAVE_NONE", c->fn,
                       pa_interleave_name(c->interleave), di->name);
    /* Swizzles the driver lists for the padded types (tiled / im2col:
     * 16U6: NONE, 128B, 128B_ATOM_32B, 128B_ATOM_64B (store only); 16U4_ALIGN16B: NONE,
     * 128B, 128B_ATOM_32B; im2col-wide: 128B and 128B_ATOM_32B only). */
    if (is_padded_type(c->dtype)) {
        int sw = c->swizzle;
        int ok = sw == PA_SWIZZLE_128B || sw == PA_SWIZZLE_128B_ATOM_32B ||
                 (!wide && sw == PA_SWIZZLE_NONE) ||
                 (!wide && c->dtype == PA_DTYPE_16U6_ALIGN16B && sw == PA_SWIZZLE_128B_ATOM_64B) ||
                 (!wide && sm103_b6p2(c) && sw == PA_SWIZZLE_64B);
        if (!ok)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "%s: swizzle = %s is not supported with %s (the driver lists %s)", c->fn,
                           pa_swizzle_name(sw), di->name,
                           wide ? "128B and 128B_ATOM_32B"
                           : c->dtype == PA_DTYPE_16U6_ALIGN16B
                               ? "NONE, 128B, 128B_ATOM_32B and, for stores, 128B_ATOM_64B"
                               : "NONE, 128B and 128B_ATOM_32B");
    }
    return PA_OK;
}

/* The inner extent (boxDim[0] or channelsPerPixel) of a padded type: "must be 128". */
static int check_packed_inner(const common_params *c, const char *what, uint32_t n, pa_error *err)
{
    if (is_padded_type(c->dtype) && n != 128 && !(sm103_b6p2(c) && n == 64))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: %s = %u: %s needs 128", c->fn, what, n,
                       pa_dtype_get(c->dtype)->name);
    return PA_OK;
}

/* Bytes of n elements in global memory (packed types: n values). */
static uint64_t elem_bytes_of(int dtype, uint64_t n)
{
    const pa_dtype_info *di = pa_dtype_get(dtype);
    return di->is_packed ? pa_packed_global_bytes((pa_dtype)dtype, n) : n * di->elem_bytes;
}

/* Rank-independent checks of both functions, in a fixed order. */
static int check_common(const common_params *c, pa_error *err)
{
    int rc;
    if ((rc = check_dtype(c, err)) || (rc = check_enums(c, err)) ||
        (rc = check_address(c, err)) || (rc = check_global_dims(c, err)) ||
        (rc = check_global_strides(c, err)) || (rc = check_element_strides(c, err)))
        return rc;
    return PA_OK;
}

/* The inner extent in bytes (boxDim[0] or channelsPerPixel times the element
 * size): a multiple of 16 and, without interleave, within the swizzle span. */
static int check_inner(const common_params *c, const char *what, uint64_t bytes, pa_error *err)
{
    unsigned span = pa_swizzle_span((pa_swizzle)c->swizzle);
    /* hw (probe, tile_load/encode_errors): the multiple-of-16 rule holds for
     * interleaved maps too (the doc states it for INTERLEAVE_NONE only). */
    if (bytes % 16)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: %s * elementSize = %llu B is not a multiple of 16", c->fn, what,
                       (unsigned long long)bytes);
    /* driver doc: INTERLEAVE_NONE + swizzle => inner bytes <= span.
     * hw (probe): interleaved maps have no such limit. */
    if (c->interleave == PA_INTERLEAVE_NONE && span && bytes > span)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: %s * elementSize = %llu B exceeds the %u B swizzle span", c->fn, what,
                       (unsigned long long)bytes, span);
    return PA_OK;
}

static int check_box_bytes(const common_params *c, uint64_t bytes, pa_error *err)
{
    if (bytes > MAX_BOX_BYTES)  /* probe: see MAX_BOX_BYTES */
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: the box moves %llu B (elementSize x prod floor(box/elementStrides)), "
                       "more than the %u B of shared memory",
                       c->fn, (unsigned long long)bytes, MAX_BOX_BYTES);
    return PA_OK;
}

/* ---- filling the decoded map -------------------------------------------- */

static void fill_common(pa_tensormap *m, pa_map_kind kind, const common_params *c)
{
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->dtype = (pa_dtype)c->dtype;
    m->rank = c->rank;
    m->global_address = c->global_address;
    for (uint32_t i = 0; i < PA_MAX_RANK; i++) {
        int used = i < c->rank;
        m->global_dim[i] = used ? c->global_dim[i] : 1;
        m->global_strides[i] = i + 1 < c->rank ? c->global_strides[i] : 0;
        m->element_strides[i] = used ? c->element_strides[i] : 1;
        m->box_dim[i] = 1;
    }
    m->interleave = (pa_interleave)c->interleave;
    m->swizzle = (pa_swizzle)c->swizzle;
    m->l2_promotion = (pa_l2promotion)c->l2_promotion;
    m->oob_fill = (pa_oobfill)c->oob_fill;
}

/* R2 word 64: elementSize x prod over all dims of floor(boxDim/elementStrides)
 * (dimension 0 included, 0 when a box is smaller than its stride). */
static uint64_t box_word_tiled(const pa_tensormap *m)
{
    uint64_t n = pa_dtype_get(m->dtype)->elem_bytes;
    /* packed types: the shared bytes of the box (the model's choice) */
    if (pa_dtype_get(m->dtype)->is_packed) {
        n = pa_packed_smem_bytes(m->dtype, m->box_dim[0]);
        for (unsigned i = 1; i < PA_MAX_RANK; i++)
            n *= m->box_dim[i] / (m->element_strides[i] ? m->element_strides[i] : 1);
        return n;
    }
    for (unsigned i = 0; i < PA_MAX_RANK; i++)
        n *= m->box_dim[i] / (m->element_strides[i] ? m->element_strides[i] : 1);
    return n;
}

static uint64_t box_word_im2col(const pa_tensormap *m)
{
    const pa_dtype_info *di = pa_dtype_get(m->dtype);
    uint64_t row = di->is_packed ? pa_packed_smem_bytes(m->dtype, m->channels_per_pixel)
                                 : (uint64_t)di->elem_bytes * m->channels_per_pixel;
    return row * m->pixels_per_column;
}

static uint64_t box_word(const pa_tensormap *m)
{
    return m->kind == PA_MAP_TILED ? box_word_tiled(m) : box_word_im2col(m);
}

/* ---- cuTensorMapEncodeTiled --------------------------------------------- */

static int check_tiled_rank(const common_params *c, pa_error *err)
{
    if (c->rank < 1 || c->rank > PA_MAX_RANK)  /* driver doc: 1..5 */
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: tensorRank = %u is outside 1..5", c->fn, c->rank);
    /* driver doc: interleave needs rank >= 3. */
    if (c->interleave > PA_INTERLEAVE_NONE && c->interleave < PA_INTERLEAVE_COUNT &&
        c->rank < 3)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: tensorRank = %u with interleave %s: interleaved maps need rank >= 3",
                       c->fn, c->rank, pa_interleave_name(c->interleave));
    return PA_OK;
}

static int check_box_dims(const common_params *c, const uint32_t *box, pa_error *err)
{
    /* driver doc: 1..256. hw (obs. 16 / encode_errors): boxDim > globalDim is fine. */
    for (uint32_t i = 0; i < c->rank; i++)
        if (box[i] == 0 || box[i] > MAX_BOX)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "%s: boxDim[%u] = %u is outside 1..256", c->fn, i, box[i]);
    int rc = check_packed_inner(c, "boxDim[0]", box[0], err);
    return rc ? rc : check_inner(c, "boxDim[0]", elem_bytes_of(c->dtype, box[0]), err);
}

int pa_tensormap_encode_tiled(pa_tensormap *out, const pa_tiled_params *p, pa_error *err)
{
    const common_params c = {"cuTensorMapEncodeTiled", p->target, p->dtype, p->rank, p->global_address,
                             p->global_dim, p->global_strides, p->element_strides,
                             p->interleave, p->swizzle, p->l2_promotion, p->oob_fill};
    pa_tensormap m;
    int rc;
    /* tensormap_address: the doc asks for 64-byte alignment, but the driver
     * accepted misaligned CUtensorMap pointers (obs. 16), so it is not checked. */
    if ((rc = check_tiled_rank(&c, err)) || (rc = check_common(&c, err)) ||
        (rc = check_packed(&c, 0, err)) || (rc = check_box_dims(&c, p->box_dim, err)))
        return rc;
    fill_common(&m, PA_MAP_TILED, &c);
    for (uint32_t i = 0; i < p->rank; i++)
        m.box_dim[i] = p->box_dim[i];
    if ((rc = check_box_bytes(&c, box_word_tiled(&m), err)))
        return rc;
    if (out)
        *out = m;
    return PA_OK;
}

/* ---- cuTensorMapEncodeIm2col -------------------------------------------- */

static int check_im2col_rank(const common_params *c, pa_error *err)
{
    if (c->rank < 3 || c->rank > PA_MAX_RANK)  /* driver doc: 3..5 */
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: tensorRank = %u is outside 3..5", c->fn, c->rank);
    return PA_OK;
}

/* driver doc: corners in [-2^15, 2^15) (rank 3), [-2^7, 2^7) (rank 4),
 * [-2^4, 2^4) (rank 5). */
static int check_corner_range(const common_params *c, const char *name, const int32_t *v,
                              pa_error *err)
{
    int32_t lim = (int32_t)1 << (corner_bits(c->rank) - 1);
    for (uint32_t i = 0; i + 2 < c->rank; i++)
        if (v[i] < -lim || v[i] >= lim)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "%s: %s[%u] = %d is outside [%d, %d] for rank %u", c->fn, name, i,
                           v[i], -lim, lim - 1, c->rank);
    return PA_OK;
}

/* driver doc: the pixel box must have non-zero area. hw (obs. 15, probe):
 * per dimension, globalDim + upper - lower must be > 0 (no product; negative
 * extents are not "areas"). hw (probe): with interleave the driver compares
 * corner i with globalDim[i] instead of globalDim[i+1] (an off-by-one it
 * applies to interleaved im2col maps only). */
static int check_pixel_box_area(const common_params *c, const int32_t *lo, const int32_t *up,
                                pa_error *err)
{
    unsigned shift = c->interleave == PA_INTERLEAVE_NONE ? 1 : 0;
    for (uint32_t i = 0; i + 2 < c->rank; i++) {
        int64_t extent = (int64_t)c->global_dim[i + shift] + up[i] - lo[i];
        if (extent <= 0)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "%s: pixel box has no area: globalDim[%u] + pixelBoxUpperCorner[%u] - "
                           "pixelBoxLowerCorner[%u] = %lld (must be > 0)",
                           c->fn, i + shift, i, i, (long long)extent);
    }
    return PA_OK;
}

static int check_pixels(const common_params *c, const pa_im2col_params *p, pa_error *err)
{
    if (p->channels_per_pixel == 0 || p->channels_per_pixel > MAX_CPP)  /* doc: <= 256 */
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: channelsPerPixel = %u is outside 1..256",
                       c->fn, p->channels_per_pixel);
    if (p->pixels_per_column == 0 || p->pixels_per_column > MAX_PPC)  /* doc: <= 1024 */
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: pixelsPerColumn = %u is outside 1..1024",
                       c->fn, p->pixels_per_column);
    /* hw (obs. 15): channelsPerPixel * elementSize must be a multiple of 16. */
    int rc = check_packed_inner(c, "channelsPerPixel", p->channels_per_pixel, err);
    return rc ? rc : check_inner(c, "channelsPerPixel", elem_bytes_of(c->dtype, p->channels_per_pixel), err);
}

int pa_tensormap_encode_im2col(pa_tensormap *out, const pa_im2col_params *p, pa_error *err)
{
    const common_params c = {"cuTensorMapEncodeIm2col", p->target, p->dtype, p->rank, p->global_address,
                             p->global_dim, p->global_strides, p->element_strides,
                             p->interleave, p->swizzle, p->l2_promotion, p->oob_fill};
    pa_tensormap m;
    int rc;
    /* tensormap_address is not checked: see pa_tensormap_encode_tiled. */
    if ((rc = check_im2col_rank(&c, err)) || (rc = check_common(&c, err)) ||
        (rc = check_corner_range(&c, "pixelBoxLowerCorner", p->pixel_box_lower, err)) ||
        (rc = check_corner_range(&c, "pixelBoxUpperCorner", p->pixel_box_upper, err)) ||
        (rc = check_pixel_box_area(&c, p->pixel_box_lower, p->pixel_box_upper, err)) ||
        (rc = check_packed(&c, 0, err)) || (rc = check_pixels(&c, p, err)))
        return rc;
    fill_common(&m, PA_MAP_IM2COL, &c);
    for (uint32_t i = 0; i + 2 < p->rank; i++) {
        m.pixel_box_lower[i] = p->pixel_box_lower[i];
        m.pixel_box_upper[i] = p->pixel_box_upper[i];
    }
    m.channels_per_pixel = p->channels_per_pixel;
    m.pixels_per_column = p->pixels_per_column;
    if ((rc = check_box_bytes(&c, box_word_im2col(&m), err)))
        return rc;
    if (out)
        *out = m;
    return PA_OK;
}

/* ---- cuTensorMapEncodeIm2colWide ------------------------------------------ */

#define WIDE_CORNER_LIM 32768  /* driver doc: each W corner in [-32768, 32767] */

/* The rules of driver-tensormap.md section 7 (cuTensorMapEncodeIm2colWide)
 * that differ from cuTensorMapEncodeIm2col. */
static int check_wide(const common_params *c, const pa_im2col_wide_params *p, pa_error *err)
{
    /* "This API is only supported on devices of compute capability 10.0 or higher." */
    int rc = pa_target_has((pa_target)c->target, PA_FEAT_IM2COL_WIDE_MAP)
                 ? PA_OK
                 : pa_fail(err, PA_ERR_INVALID_VALUE, "%s needs %s; this target is %s", c->fn,
                           pa_feature_needs(PA_FEAT_IM2COL_WIDE_MAP), pa_target_name(c->target));
    if (rc)
        return rc;
    if (p->mode != 0 && p->mode != 1)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: mode = %d is not a CUtensorMapIm2ColWideMode (0 = W, 1 = W128)", c->fn,
                       p->mode);
    /* PTX 5.5.6: "The interleave layout is not supported for .im2col::w and
     * .im2col::w::128 modes." */
    if (c->interleave != PA_INTERLEAVE_NONE)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: interleave = %s: im2col::w maps take no interleave (PTX ISA 5.5.6)",
                       c->fn, pa_interleave_name(c->interleave) ? pa_interleave_name(c->interleave) : "?");
    /* "swizzle ... must be one of ... 64B, 128B, 128B_ATOM_32B (other swizzle
     * modes are not supported)". */
    if (c->swizzle == PA_SWIZZLE_96B && p->mode != 0)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: swizzle = 96B with mode W128: \"CU_TENSOR_MAP_SWIZZLE_96B is supported "
                       "only when mode is CU_TENSOR_MAP_IM2COL_WIDE_MODE_W\"", c->fn);
    if (c->swizzle != PA_SWIZZLE_64B && c->swizzle != PA_SWIZZLE_128B &&
        c->swizzle != PA_SWIZZLE_128B_ATOM_32B && c->swizzle != PA_SWIZZLE_96B)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: swizzle = %s (%d): only 64B, 128B and 128B_ATOM_32B are supported "
                       "(and 96B with mode W)",
                       c->fn, pa_swizzle_name(c->swizzle) ? pa_swizzle_name(c->swizzle) : "?",
                       c->swizzle);
    const char *names[2] = {"pixelBoxLowerCornerWidth", "pixelBoxUpperCornerWidth"};
    const int32_t v[2] = {p->pixel_box_lower_w, p->pixel_box_upper_w};
    for (int i = 0; i < 2; i++)
        if (v[i] < -WIDE_CORNER_LIM || v[i] >= WIDE_CORNER_LIM)
            return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: %s = %d is outside [-32768, 32767]",
                           c->fn, names[i], v[i]);
    /* "must have non-zero area": per dimension as the im2col rule (obs. 15). */
    int64_t extent = (int64_t)c->global_dim[1] + p->pixel_box_upper_w - p->pixel_box_lower_w;
    if (extent <= 0)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s: pixel box has no area: globalDim[1] + pixelBoxUpperCornerWidth - "
                       "pixelBoxLowerCornerWidth = %lld (must be > 0)",
                       c->fn, (long long)extent);
    if (p->channels_per_pixel == 0 || p->channels_per_pixel > MAX_CPP)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: channelsPerPixel = %u is outside 1..256",
                       c->fn, p->channels_per_pixel);
    /* "This field is ignored when mode is CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128." */
    if (p->mode == 0 && (p->pixels_per_column == 0 || p->pixels_per_column > MAX_PPC))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: pixelsPerColumn = %u is outside 1..1024",
                       c->fn, p->pixels_per_column);
    rc = check_packed_inner(c, "channelsPerPixel", p->channels_per_pixel, err);
    return rc ? rc : check_inner(c, "channelsPerPixel", elem_bytes_of(c->dtype, p->channels_per_pixel), err);
}

int pa_tensormap_encode_im2col_wide(pa_tensormap *out, const pa_im2col_wide_params *p, pa_error *err)
{
    const common_params c = {"cuTensorMapEncodeIm2colWide", p->target, p->dtype, p->rank,
                             p->global_address, p->global_dim, p->global_strides,
                             p->element_strides, p->interleave, p->swizzle, p->l2_promotion,
                             p->oob_fill};
    pa_tensormap m;
    int rc;
    if ((rc = check_im2col_rank(&c, err)) || (rc = check_common(&c, err)) ||
        (rc = check_packed(&c, 1, err)) || (rc = check_wide(&c, p, err)))
        return rc;
    fill_common(&m, p->mode ? PA_MAP_IM2COL_W128 : PA_MAP_IM2COL_W, &c);
    m.pixel_box_lower[0] = p->pixel_box_lower_w;
    m.pixel_box_upper[0] = p->pixel_box_upper_w;
    m.channels_per_pixel = p->channels_per_pixel;
    /* W128 loads 128 pixels; the field is ignored and stored as 128. */
    m.pixels_per_column = p->mode ? 128 : p->pixels_per_column;
    if ((rc = check_box_bytes(&c, box_word_im2col(&m), err)))
        return rc;
    if (out)
        *out = m;
    return PA_OK;
}

/* ---- pack ---------------------------------------------------------------- */

static void pack_flags(const pa_tensormap *m, uint8_t *b)
{
    set_bits(b, OFF_FLAGS, F_IM2COL, m->kind != PA_MAP_TILED);
    set_bits(b, OFF_FLAGS, F_RANK, m->rank - 1);
    set_bits(b, OFF_FLAGS, F_ELEMTYPE, field_elemtype(m->dtype));
    set_bits(b, OFF_FLAGS, F_INTERLEAVE, (uint32_t)m->interleave);
    /* 128B_ATOM_*: the 128B mode plus an atomicity (PTX .swizzle_atomicity). */
    const int atom = m->swizzle >= PA_SWIZZLE_128B_ATOM_32B && m->swizzle < PA_SWIZZLE_COUNT;
    set_bits(b, OFF_FLAGS, F_SWIZZLE,
             atom ? (uint32_t)PA_SWIZZLE_128B
                  : m->swizzle == PA_SWIZZLE_96B ? 0u : (uint32_t)m->swizzle);
    if (atom)
        set_bits(b, OFF_EXT, F_EXT_ATOMICITY, (uint32_t)m->swizzle - 3);
    set_bits(b, OFF_EXT, F_EXT_96B, m->swizzle == PA_SWIZZLE_96B);
    set_bits(b, OFF_EXT, F_EXT_WIDE, PA_MAP_IS_WIDE(m->kind));
    set_bits(b, OFF_EXT, F_EXT_W128, m->kind == PA_MAP_IM2COL_W128);
    set_bits(b, OFF_FLAGS, F_FILL, (uint32_t)m->oob_fill);
    set_bits(b, OFF_FLAGS, F_TF32, (uint32_t)is_tf32(m->dtype));
    set_bits(b, OFF_FLAGS, F_L2, (uint32_t)m->l2_promotion);
}

/* Strides are stored /16 in 36 bits: low 32 in word 12+4k, high 4 in nibble k
 * of word 28 (layout doc, R1). */
static void pack_stride(uint8_t *b, unsigned k, uint64_t stride)
{
    wr32(b, OFF_STRIDE_LO + 4 * k, (uint32_t)(stride >> 4));
    set_bits(b, OFF_STRIDE_HI, 4 * k, 4, (uint32_t)(stride >> 36) & 0xF);
}

static void pack_dims(const pa_tensormap *m, uint8_t *b)
{
    for (unsigned i = 0; i < PA_MAX_RANK; i++) {
        if (i + 1 < PA_MAX_RANK && i + 1 < m->rank)
            pack_stride(b, i, m->global_strides[i]);
        wr32(b, OFF_DIM + 4 * i, (uint32_t)(m->global_dim[i] - 1));
        set_bits(b, OFF_ESTRIDE, 3 * i, 3, m->element_strides[i] - 1);
    }
}

static void pack_tiled_box(const pa_tensormap *m, uint8_t *b)
{
    b[OFF_BOX0] = (uint8_t)(m->box_dim[0] - 1);
    for (unsigned i = 1; i < m->rank && i < PA_MAX_RANK; i++)
        b[OFF_BOX0 + i] = (uint8_t)(m->box_dim[i] - 1);
}

static void pack_im2col_box(const pa_tensormap *m, uint8_t *b)
{
    /* im2col-wide: one 16-bit W corner pair at any rank (driver range). */
    unsigned bits = PA_MAP_IS_WIDE(m->kind) ? 16 : corner_bits(m->rank);
    for (unsigned i = 0; i + 2 < m->rank && (i == 0 || bits < 16); i++) {
        set_bits(b, OFF_BOXN, bits * i, bits, (uint32_t)m->pixel_box_lower[i]);
        set_bits(b, OFF_BOXN, 16 + bits * i, bits, (uint32_t)m->pixel_box_upper[i]);
    }
    b[OFF_BOX0] = (uint8_t)(m->channels_per_pixel - 1);
    set_bits(b, OFF_PPC, 0, 10, m->pixels_per_column - 1);
}

/* R2 word 72: 16, 256, 512, 1024 for swizzle none, 32B, 64B, 128B. */
static uint32_t smem_span_word(pa_swizzle sw)
{
    unsigned span = pa_swizzle_span(sw);
    return span ? span * 8 : 16;
}

void pa_tensormap_pack(const pa_tensormap *m, uint8_t out[PA_TENSORMAP_BYTES])
{
    memset(out, 0, PA_TENSORMAP_BYTES);
    wr64(out, OFF_ADDR, m->global_address);
    pack_flags(m, out);
    pack_dims(m, out);
    if (m->kind != PA_MAP_TILED)
        pack_im2col_box(m, out);
    else
        pack_tiled_box(m, out);
    wr32(out, OFF_BOX_BYTES, (uint32_t)box_word(m));
    wr32(out, OFF_SMEM_SPAN, smem_span_word(m->swizzle));
}

/* ---- unpack -------------------------------------------------------------- */

static int unpack_flags(const uint8_t *b, pa_tensormap *m, pa_error *err)
{
    uint32_t et = get_bits(b, OFF_FLAGS, F_ELEMTYPE);
    int dt = dtype_from_field(et, (int)get_bits(b, OFF_FLAGS, F_TF32));
    uint32_t il = get_bits(b, OFF_FLAGS, F_INTERLEAVE);
    m->kind = get_bits(b, OFF_FLAGS, F_IM2COL) ? PA_MAP_IM2COL : PA_MAP_TILED;
    if (m->kind == PA_MAP_IM2COL && get_bits(b, OFF_EXT, F_EXT_WIDE))
        m->kind = get_bits(b, OFF_EXT, F_EXT_W128) ? PA_MAP_IM2COL_W128 : PA_MAP_IM2COL_W;
    m->rank = get_bits(b, OFF_FLAGS, F_RANK) + 1;
    /* R1: .rank stores new_val & 7, so 6..8 can appear; no map holds them. */
    if (m->rank > PA_MAX_RANK)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "tensor map: rank field = %u (rank %u) exceeds the maximum rank 5",
                       m->rank - 1, m->rank);
    if (dt < 0)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "tensor map: elemtype field = %u names no element type", et);
    if (il >= PA_INTERLEAVE_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "tensor map: interleave field = %u is not a layout (0..2)", il);
    /* R1: bit 16 only means tf32 with elemtype 7/8; an edit to another type
     * keeps the bit, which is then ignored here. */
    m->dtype = (pa_dtype)dt;
    m->interleave = (pa_interleave)il;
    m->swizzle = (pa_swizzle)get_bits(b, OFF_FLAGS, F_SWIZZLE);
    if (m->swizzle == PA_SWIZZLE_128B && get_bits(b, OFF_EXT, F_EXT_ATOMICITY))
        m->swizzle = (pa_swizzle)(3 + get_bits(b, OFF_EXT, F_EXT_ATOMICITY));
    if (get_bits(b, OFF_EXT, F_EXT_96B)) {
        /* seed, restrictions on the 96B swizzle mode: "The .swizzle_atomicity
         * must be 16B", "The .interleave_layout must not be set". */
        if (get_bits(b, OFF_EXT, F_EXT_ATOMICITY))
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "tensor map: the 96B swizzle needs .swizzle_atomicity 16B (field = %u)",
                           get_bits(b, OFF_EXT, F_EXT_ATOMICITY));
        if (il != PA_INTERLEAVE_NONE)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "tensor map: the 96B swizzle takes no .interleave_layout (field = %u)", il);
        m->swizzle = PA_SWIZZLE_96B;
    }
    m->oob_fill = (pa_oobfill)get_bits(b, OFF_FLAGS, F_FILL);
    m->l2_promotion = (pa_l2promotion)get_bits(b, OFF_FLAGS, F_L2);
    return PA_OK;
}

static void unpack_dims(const uint8_t *b, pa_tensormap *m)
{
    for (unsigned i = 0; i < PA_MAX_RANK; i++) {
        m->global_dim[i] = (uint64_t)rd32(b, OFF_DIM + 4 * i) + 1;
        m->element_strides[i] = get_bits(b, OFF_ESTRIDE, 3 * i, 3) + 1;
        m->global_strides[i] = 0;
        m->box_dim[i] = 1;
    }
    for (unsigned k = 0; k + 1 < m->rank; k++)
        m->global_strides[k] = ((uint64_t)rd32(b, OFF_STRIDE_LO + 4 * k) << 4) |
                               ((uint64_t)get_bits(b, OFF_STRIDE_HI, 4 * k, 4) << 36);
}

static void unpack_tiled_box(const uint8_t *b, pa_tensormap *m)
{
    for (unsigned i = 0; i < m->rank; i++)
        m->box_dim[i] = (uint32_t)b[OFF_BOX0 + i] + 1;
}

static void unpack_im2col_box(const uint8_t *b, pa_tensormap *m)
{
    unsigned bits = PA_MAP_IS_WIDE(m->kind) ? 16 : corner_bits(m->rank);
    for (unsigned i = 0; i + 2 < m->rank && (i == 0 || bits < 16); i++) {
        m->pixel_box_lower[i] = sign_extend(get_bits(b, OFF_BOXN, bits * i, bits), bits);
        m->pixel_box_upper[i] = sign_extend(get_bits(b, OFF_BOXN, 16 + bits * i, bits), bits);
    }
    m->channels_per_pixel = (uint32_t)b[OFF_BOX0] + 1;
    m->pixels_per_column = get_bits(b, OFF_PPC, 0, 10) + 1;
}

int pa_tensormap_unpack(const uint8_t in[PA_TENSORMAP_BYTES], pa_tensormap *out, pa_error *err)
{
    pa_tensormap m;
    int rc;
    memset(&m, 0, sizeof m);
    if ((rc = unpack_flags(in, &m, err)))
        return rc;
    m.global_address = rd64(in, OFF_ADDR);
    unpack_dims(in, &m);
    if (m.kind != PA_MAP_TILED)
        unpack_im2col_box(in, &m);
    else
        unpack_tiled_box(in, &m);
    *out = m;
    return PA_OK;
}

/* ---- tensormap.replace (R1 bits, R4 ptxas rules for sm_90a) ------------- */

static const char *const FIELD_NAMES[PA_FIELD_COUNT] = {
    "global_address", "rank", "box_dim", "global_dim", "global_stride", "element_stride",
    "elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode"};

static int field_has_ord(pa_tmap_field f)
{
    return f == PA_FIELD_BOX_DIM || f == PA_FIELD_GLOBAL_DIM || f == PA_FIELD_GLOBAL_STRIDE ||
           f == PA_FIELD_ELEMENT_STRIDE;
}

/* R4: the PTX value tables ptxas 13.0 enforces for sm_90a (immediates). */
static int check_replace(pa_tmap_field f, int ord, uint64_t v, pa_error *err)
{
    static const uint64_t max_val[PA_FIELD_COUNT] = {
        [PA_FIELD_ELEMTYPE] = 12, [PA_FIELD_INTERLEAVE_LAYOUT] = 2,
        [PA_FIELD_SWIZZLE_MODE] = 3, [PA_FIELD_FILL_MODE] = 1};
    if ((int)f < 0 || f >= PA_FIELD_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "tensormap.replace: field %d does not exist",
                       (int)f);
    if (f == PA_FIELD_SWIZZLE_ATOMICITY)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "tensormap.replace.tile.swizzle_atomicity is not supported on sm_90a "
                       "(ptxas: sm_100a and later)");
    if (field_has_ord(f) && (ord < 0 || ord > 4))
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "tensormap.replace.tile.%s: ord = %d is outside 0..4", FIELD_NAMES[f], ord);
    if (max_val[f] && v > max_val[f])
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "tensormap.replace.tile.%s: new_val = %llu is outside 0..%llu on sm_90a%s",
                       FIELD_NAMES[f], (unsigned long long)v, (unsigned long long)max_val[f],
                       f == PA_FIELD_ELEMTYPE ? " (13..15 need sm_100a)" : "");
    return PA_OK;
}

/* R1 .elemtype: 0-10 written as given (bit 16 untouched); 11 (tf32) and
 * 12 (tf32.ftz) write 7 / 8 and set bit 16; 13-15 (sm_100 targets) as given. */
static void replace_elemtype(uint8_t *b, uint64_t v)
{
    if (v == 11 || v == 12) {
        set_bits(b, OFF_FLAGS, F_ELEMTYPE, (uint32_t)v - 4);
        set_bits(b, OFF_FLAGS, F_TF32, 1);
    } else {
        set_bits(b, OFF_FLAGS, F_ELEMTYPE, (uint32_t)v);
    }
}

/* The sm_100 forms: .swizzle_atomicity and .elemtype 13..15; the 96B
 * .swizzle_mode 4 of sm_103a. */
static int check_replace_new(pa_tmap_field f, int ord, uint64_t v, int target, pa_error *err)
{
    const char *tn = pa_target_name(target);
    if (!tn)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "tensormap.replace: target %d is not a known target",
                       target);
    if (!pa_target_has((pa_target)target, PA_FEAT_TMAP_REPLACE))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "tensormap.replace needs %s; this target is %s",
                       pa_feature_needs(PA_FEAT_TMAP_REPLACE), tn);
    if (!pa_target_has((pa_target)target, PA_FEAT_TMAP_REPLACE_NEW))
        return check_replace(f, ord, v, err);   /* sm_90a: golden R4 */
    if (f == PA_FIELD_SWIZZLE_ATOMICITY)
        return v > 3 ? pa_fail(err, PA_ERR_INVALID_VALUE,
                               "tensormap.replace.tile.swizzle_atomicity: new_val = %llu is outside 0..3",
                               (unsigned long long)v)
                     : PA_OK;
    if (f == PA_FIELD_ELEMTYPE)
        return v > 15 ? pa_fail(err, PA_ERR_INVALID_VALUE,
                                "tensormap.replace.tile.elemtype: new_val = %llu is outside 0..15",
                                (unsigned long long)v)
                      : PA_OK;
    /* seed: ".swizzle_mode corresponding to new_val value 4 is supported on
     * following architectures: sm_103a" */
    if (f == PA_FIELD_SWIZZLE_MODE && v == 4)
        return pa_target_has((pa_target)target, PA_FEAT_SWIZZLE_96B)
                   ? PA_OK
                   : pa_fail(err, PA_ERR_INVALID_VALUE,
                             "tensormap.replace.tile.swizzle_mode 4 (96B swizzle) needs %s; this "
                             "target is %s", pa_feature_needs(PA_FEAT_SWIZZLE_96B), tn);
    return check_replace(f, ord, v, err);
}

int pa_tensormap_replace(uint8_t map[PA_TENSORMAP_BYTES], pa_tmap_field field, int ord,
                         uint64_t new_val, pa_error *err)
{
    return pa_tensormap_replace_target(map, field, ord, new_val, PA_TARGET_SM_90A, err);
}

int pa_tensormap_replace_target(uint8_t map[PA_TENSORMAP_BYTES], pa_tmap_field field, int ord,
                                uint64_t new_val, int target, pa_error *err)
{
    uint32_t v32 = (uint32_t)new_val;
    int rc = check_replace_new(field, ord, new_val, target, err);
    if (rc)
        return rc;
    switch (field) {
    case PA_FIELD_GLOBAL_ADDRESS: wr64(map, OFF_ADDR, new_val); break; /* any value */
    case PA_FIELD_RANK: set_bits(map, OFF_FLAGS, F_RANK, v32); break;  /* rank-1, & 7 */
    case PA_FIELD_ELEMTYPE: replace_elemtype(map, new_val); break;
    case PA_FIELD_INTERLEAVE_LAYOUT: set_bits(map, OFF_FLAGS, F_INTERLEAVE, v32); break;
    /* 4 (96B) lives in the model's own bit; 0..3 clear it. */
    case PA_FIELD_SWIZZLE_MODE:
        set_bits(map, OFF_FLAGS, F_SWIZZLE, v32 == 4 ? 0u : v32);
        set_bits(map, OFF_EXT, F_EXT_96B, v32 == 4);
        break;
    case PA_FIELD_FILL_MODE: set_bits(map, OFF_FLAGS, F_FILL, v32); break;
    /* bytes; low 4 bits and bits >= 40 dropped silently. For ord 4 the low
     * word is word 28 itself, then nibble 4 of it is written. */
    case PA_FIELD_GLOBAL_STRIDE: pack_stride(map, (unsigned)ord, new_val); break;
    case PA_FIELD_GLOBAL_DIM: wr32(map, OFF_DIM + 4 * (unsigned)ord, v32 - 1); break;
    case PA_FIELD_BOX_DIM: map[OFF_BOX0 + ord] = (uint8_t)(v32 - 1); break;
    case PA_FIELD_ELEMENT_STRIDE: set_bits(map, OFF_ESTRIDE, 3 * (unsigned)ord, 3, v32 - 1); break;
    /* the model's own place for it (OFF_EXT, see the layout enum) */
    case PA_FIELD_SWIZZLE_ATOMICITY: set_bits(map, OFF_EXT, F_EXT_ATOMICITY, v32); break;
    default: break;
    }
    return PA_OK;
}

/* ---- box bytes ------------------------------------------------------------ */

/* tile: boxDim[0]*elemsize * prod_{i>=1} ceil(boxDim[i]/elementStrides[i])
 * (golden README, expect_tx; elementStrides[0] ignored, obs. 2); interleaved:
 * ceil(boxDim[0]/elementStrides[0]) for dim 0 (provisional, obs. 5);
 * im2col: pixelsPerColumn*channelsPerPixel*elemsize. */
uint64_t pa_tensormap_box_bytes(const pa_tensormap *m)
{
    uint64_t es = pa_dtype_get(m->dtype)->elem_bytes, n;
    if (m->kind != PA_MAP_TILED)
        return box_word_im2col(m);
    n = m->box_dim[0];
    if (pa_dtype_get(m->dtype)->is_packed) {   /* shared bytes (types.h) */
        n = pa_packed_smem_bytes(m->dtype, n);
        es = 1;
    }
    if (m->interleave != PA_INTERLEAVE_NONE && m->element_strides[0] != 1)
        n = (n + m->element_strides[0] - 1) / m->element_strides[0];
    n *= es;
    for (uint32_t i = 1; i < m->rank; i++)   /* a stride of 1 (the usual) needs no division */
        n *= m->element_strides[i] == 1 ? m->box_dim[i]
                                        : (m->box_dim[i] + m->element_strides[i] - 1) / m->element_strides[i];
    return n;
}
