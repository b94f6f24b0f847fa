/* packed.c - copies through maps of the packed sub-byte types (PTX ISA 5.5.1.1, driver CUtensorMapDataType).
 *
 *   driver            PTX           global (16 values)     shared (16 values)
 *   16U4_ALIGN8B      .b4x16        8 B packed             the same 8 B
 *   16U4_ALIGN16B     .b4x16_p64    8 B packed             8 B + 8 B padding (loads only)
 *   16U6_ALIGN16B     .b6x16_p32    12 B packed            12 B + 4 B padding (loads)
 *                     .b6p2x16      12 B packed            16 B, one value per byte in bits
 *                                                          5:0, bits 7:6 dropped (stores)
 *
 * Dimensions count values. Value i of a group sits in bits [b*i, b*i + b) of
 * the little-endian group (b = 4 or 6; the bit order is not documented,
 * tensors.md: "inferred: little-endian, element 0 in the least-significant
 * bits"). The padding a load appends is "un-initialized": the model leaves
 * those shared bytes as they were.
 *
 * A copy of a packed map is the copy of an equivalent byte-typed map (u8
 * for .b4x16, u64 per group for .b4x16_p64, three u32 per group for
 * .b6x16_p32) into a packed image, then spread into the padded shared layout
 * (loads) or packed from it (stores).
 */
#include "mode.h"
#include "rows.h"

#include <stdlib.h>

/* Values of dim 0 per element of the equivalent map, as a fraction num/den. */
static void ratio(pa_dtype dt, pa_dtype *edt, uint32_t *num, uint32_t *den)
{
    switch (dt) {
    case PA_DTYPE_16U4_ALIGN8B: *edt = PA_DTYPE_UINT8; *num = 2; *den = 1; break;   /* 2 values per byte */
    case PA_DTYPE_16U4_ALIGN16B: *edt = PA_DTYPE_UINT64; *num = 16; *den = 1; break; /* a group per u64 */
    default: *edt = PA_DTYPE_UINT32; *num = 16; *den = 3; break;                     /* a group per 3 u32 */
    }
}

/* The equivalent byte-typed copy of plan p (what the packed map's global
 * side is, read as ordinary elements); its box is p->inner. */
static void equivalent(const pa_copy_plan *p, pa_copy_plan *e)
{
    const pa_tensormap *m = &p->map;
    pa_dtype edt;
    uint32_t num, den;
    ratio(m->dtype, &edt, &num, &den);
    *e = *p;
    e->packed = 0;
    e->map.dtype = edt;
    e->map.swizzle = PA_SWIZZLE_NONE;
    e->map.oob_fill = PA_OOB_FILL_NONE;
    e->map.global_dim[0] = m->global_dim[0] * den / num;
    if (m->kind == PA_MAP_TILED)
        e->map.box_dim[0] = (uint32_t)((uint64_t)m->box_dim[0] * den / num);
    else
        e->map.channels_per_pixel = (uint32_t)((uint64_t)m->channels_per_pixel * den / num);
    e->coords[0] = (int32_t)((int64_t)p->coords[0] * den / num);   /* coordinate 0 is dimension 0 in every mode */
    e->l = p->inner;
}

static int is_padded(pa_dtype dt)
{
    return dt == PA_DTYPE_16U4_ALIGN16B || dt == PA_DTYPE_16U6_ALIGN16B;
}

static const char *ptx_name(pa_dtype dt, int is_store)
{
    return dt == PA_DTYPE_16U6_ALIGN16B && is_store ? "b6p2x16" : pa_dtype_get(dt)->ptx;
}

static int general_rules(const pa_tensormap *m, const char *t, pa_error *err);

/* PTX "Restriction on Tensor Copy instructions" (seed 9.7.9.25.5.1) and the
 * direction notes of the driver's swizzle lists. */
static int packed_rules(const pa_tensormap *m, const int32_t coords[PA_MAX_RANK], int is_store,
                        pa_error *err)
{
    const char *t = ptx_name(m->dtype, is_store);
    /* A map image the driver would not encode (unpacked or edited bytes): packed
     * values are never interleaved (driver-tensormap.md: INTERLEAVE_NONE). */
    if (m->interleave != PA_INTERLEAVE_NONE)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "a .%s map is interleaved; packed types are copied only with INTERLEAVE_NONE", t);
    /* Restriction 4: "OOB-NaN fill mode doesn't support the types .b4x16,
     * .b4x16_p64, .b6x16_p32 and .b6p2x16" (an edited map's fill_mode). */
    if (m->oob_fill != PA_OOB_FILL_NONE)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "a .%s map has OOB-NaN fill, which packed types do not support (PTX tensor "
                       "copy restriction 4)", t);
    /* A map made from bytes (tensormap.replace, from_bytes) may hold what the
     * driver would not encode: the box must be whole 16-byte groups of values. */
    const uint32_t inner = m->kind == PA_MAP_TILED ? m->box_dim[0] : m->channels_per_pixel;
    /* A .b6p2x16 store may use the sm_103a shapes (64 values, 48 B); which
     * target allows them is store_target_rules' question. */
    const int b6p2 = is_store && m->dtype == PA_DTYPE_16U6_ALIGN16B;
    const int ok_inner = is_padded(m->dtype) ? inner == 128 || (b6p2 && inner == 64)
                                             : inner >= 32 && inner % 32 == 0;
    const uint64_t dim_mult = is_padded(m->dtype) ? (b6p2 ? 64 : 128) : 2;
    if (!ok_inner || m->global_dim[0] % dim_mult)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "a .%s copy needs %s = %s and globalDim[0] a multiple of %llu; this map has %u "
                       "and %llu (the driver would not encode it)",
                       t, m->kind == PA_MAP_TILED ? "boxDim[0]" : "channelsPerPixel",
                       is_padded(m->dtype) ? (b6p2 ? "64 or 128" : "128") : "a multiple of 32",
                       (unsigned long long)dim_mult,
                       inner, (unsigned long long)m->global_dim[0]);
    if (is_store && m->dtype == PA_DTYPE_16U4_ALIGN16B)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "cp.async.bulk.tensor .global.shared::cta does not support the type .b4x16_p64 "
                       "(PTX tensor copy restriction 2)");
    if (is_padded(m->dtype) && coords[0] % (b6p2 ? 64 : 128) != 0)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "the first coordinate c0 = %d of a .%s copy is not a multiple of %d "
                       "(PTX tensor copy restriction 7%s)", coords[0], t, b6p2 ? 64 : 128,
                       b6p2 ? "; 64 is the sm_103a rule" : "");
    /* Restrictions 8 and 9 for loads (a map encoded for sm_103a's .b6p2x16 stores
     * may hold less): "the global memory address must be 32B aligned ... tensor
     * stride in every dimension must be 32B aligned"; swizzle None or 128B. */
    if (is_padded(m->dtype) && !is_store) {
        int rc = general_rules(m, t, err);
        if (rc)
            return rc;
    }
    /* .b4x16: the tile rule, a 16-byte aligned start (32 values). */
    if (m->dtype == PA_DTYPE_16U4_ALIGN8B && coords[0] % 32 != 0)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "innermost start offset c0 = %d values of .b4x16 (%d.%d B) is not a multiple "
                       "of 16 bytes (the hardware faults)", coords[0], coords[0] / 2,
                       coords[0] % 2 ? 5 : 0);
    /* driver: 16U6_ALIGN16B "128B_ATOM_64B (Store only)". */
    if (!is_store && m->dtype == PA_DTYPE_16U6_ALIGN16B && m->swizzle == PA_SWIZZLE_128B_ATOM_64B)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "a 16U6_ALIGN16B map with swizzle 128B_ATOM_64B is for stores only "
                       "(driver: \"CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B (Store only)\")");
    return PA_OK;
}

static int general_rules(const pa_tensormap *m, const char *t, pa_error *err)
{
    if (m->global_address % 32)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "a .%s copy needs a 32-byte aligned global address (0x%llx; PTX tensor copy "
                       "restriction 8)", t, (unsigned long long)m->global_address);
    for (uint32_t k = 0; k + 1 < m->rank; k++)
        if (m->global_strides[k] % 32)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "a .%s copy needs 32-byte aligned strides (globalStrides[%u] = %llu; PTX "
                           "tensor copy restriction 8)", t, k, (unsigned long long)m->global_strides[k]);
    /* 9: "None. 128B (With all potential swizzle atomicity values except: 32B
     * with 8B flip)": the encoder refuses the others, an edited map may hold them. */
    if (m->swizzle == PA_SWIZZLE_32B || m->swizzle == PA_SWIZZLE_64B ||
        m->swizzle == PA_SWIZZLE_128B_ATOM_32B_FLIP_8B)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "a .%s copy takes swizzle None or 128B (any atomicity but 32B with 8B flip), "
                       "not %s (PTX tensor copy restriction 9)", t, pa_swizzle_name(m->swizzle));
    return PA_OK;
}

/* seed, "restrictions for sm_103a while using type .b6p2x16 on cp.async.bulk.tensor with
 * the direction .global.shared::cta": 1. Box-Size[0] 48B or 96B; 2. address 16B aligned;
 * 3. strides 16B aligned; 4. first coordinate a multiple of 64; 5. Tensor-Size[0] a
 * multiple of 48B; 6. swizzle None, 128B (not 32B + 8B flip) or 64B with 16B atomicity.
 * 1, 4 and 5 packed_rules checks for every .b6p2x16 store; here the target decides. */
static int store_target_rules(pa_target tgt, const pa_tensormap *m, const int32_t coords[PA_MAX_RANK],
                              pa_error *err)
{
    if (m->dtype != PA_DTYPE_16U6_ALIGN16B)
        return PA_OK;
    if (pa_target_has(tgt, PA_FEAT_B6P2X16_SM103A)) {
        if (m->global_address % 16)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "a .b6p2x16 store on sm_103a needs a 16-byte aligned global address (0x%llx)",
                           (unsigned long long)m->global_address);
        for (uint32_t k = 0; k + 1 < m->rank; k++)
            if (m->global_strides[k] % 16)
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               "a .b6p2x16 store on sm_103a needs 16-byte aligned strides "
                               "(globalStrides[%u] = %llu)", k, (unsigned long long)m->global_strides[k]);
        if (m->swizzle == PA_SWIZZLE_32B || m->swizzle == PA_SWIZZLE_128B_ATOM_32B_FLIP_8B)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "a .b6p2x16 store on sm_103a takes swizzle None, 128B (not 32B + 8B flip) "
                           "or 64B, not %s", pa_swizzle_name(m->swizzle));
        return PA_OK;
    }
    /* Any other target: the general rules (box 128 values, c0 a multiple of 128, ...). */
    const uint32_t inner = m->kind == PA_MAP_TILED ? m->box_dim[0] : m->channels_per_pixel;
    if (inner != 128 || m->global_dim[0] % 128 || coords[0] % 128 || m->swizzle == PA_SWIZZLE_64B ||
        m->global_address % 32)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "%s needs %s; this machine is %s (elsewhere a .b6p2x16 store needs Box-Size[0] "
                       "96B, Tensor-Size[0] a multiple of 96B, c0 a multiple of 128, a 32B aligned "
                       "address and swizzle None or 128B)",
                       pa_feature_name(PA_FEAT_B6P2X16_SM103A), pa_feature_needs(PA_FEAT_B6P2X16_SM103A),
                       pa_target_name((int)tgt) ? pa_target_name((int)tgt) : "?");
    return general_rules(m, "b6p2x16", err);
}

/* The shape of the shared side from the equivalent map's layout. */
static void shared_layout(const pa_tensormap *m, const pa_box_layout *el, pa_box_layout *l)
{
    pa_dtype edt;
    uint32_t num, den;
    ratio(m->dtype, &edt, &num, &den);
    const uint64_t values = (uint64_t)el->n[0] * num / den;
    *l = *el;
    l->esize = l->unit = 1;            /* bytes (a value is not a whole byte) */
    l->n[0] = (uint32_t)pa_packed_smem_bytes(m->dtype, values);
    l->row_bytes = l->n[0];
    const uint32_t span = pa_swizzle_span(m->swizzle);
    l->pitch = l->row_bytes < span ? span : l->row_bytes;
    l->swizzle = m->swizzle;
    /* Whether the padding counts is not documented (tensors.md flags it): the
     * model credits the bytes of the shared box, padding included. */
    l->tx_bytes = (uint64_t)l->row_bytes * l->rows;
}

int pa_packed_make(pa_copy_plan *p, pa_target t, pa_error *err)
{
    const int is_store = pa_copy_is_store(p->dir);
    int rc = packed_rules(&p->map, p->coords, is_store, err);
    if (rc)
        return rc;
    pa_copy_plan e;
    p->inner = p->l;   /* not yet known: equivalent() copies it */
    equivalent(p, &e);
    if ((rc = pa_copy_modes[p->mode].make(&e, err)))
        return rc;
    p->inner = e.l;
    shared_layout(&p->map, &e.l, &p->l);
    return p->dir == PA_DIR_STORE ? store_target_rules(t, &p->map, p->coords, err) : PA_OK;
}

/* Global bytes of one group of 16 values (the whole row for .b4x16). */
static uint32_t group_bytes(pa_dtype dt, uint32_t row)
{
    return dt == PA_DTYPE_16U4_ALIGN8B ? row : dt == PA_DTYPE_16U4_ALIGN16B ? 8 : 12;
}

int pa_packed_load(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err)
{
    pa_copy_plan e;
    equivalent(p, &e);
    const pa_box_layout *l = &p->l, *el = &e.l;
    /* the packed image: rows of the equivalent map, back to back */
    const uint64_t grow = el->row_bytes, size = grow * el->rows;
    uint8_t *img = calloc(size + 16, 1);   /* + a group: the last one may run past a short row */
    if (!img)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a sub-byte load");
    pa_smem_view v = {img, (uint32_t)size};
    int rc = pa_copy_modes[e.mode].load(&e, g, v, 0, err);
    const uint32_t gb = group_bytes(p->map.dtype, (uint32_t)grow);
    const uint32_t slot = p->map.dtype == PA_DTYPE_16U4_ALIGN8B ? gb : 16;
    pa_swz_view sv;
    pa_swz_init(&sv, smem.base, l->swizzle);
    for (uint64_t r = 0; r < el->rows && !rc; r++)
        for (uint32_t k = 0; k * gb < grow; k++)   /* padding bytes: left as they were */
            pa_rows_copy(&sv, dst + (uint32_t)(r * l->pitch) + k * slot, img + r * grow + k * gb, gb, 1);
    free(img);
    return rc;
}

/* .b6p2x16: 16 bytes of shared memory (value in bits 5:0) -> 12 packed bytes. */
static void pack6(const uint8_t in[16], uint8_t out[12])
{
    memset(out, 0, 12);
    for (unsigned i = 0; i < 16; i++)
        for (unsigned b = 0; b < 6; b++)
            if ((in[i] >> b) & 1u)
                out[(6 * i + b) / 8] |= (uint8_t)(1u << ((6 * i + b) % 8));
}

int pa_packed_store(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                    void *ctx, pa_error *err)
{
    pa_copy_plan e;
    equivalent(p, &e);
    const pa_box_layout *l = &p->l, *el = &e.l;
    const uint64_t grow = el->row_bytes, size = grow * el->rows;
    uint8_t *img = calloc(size + 16, 1);   /* + a group: the last one may run past a short row */
    if (!img)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a sub-byte store");
    pa_swz_view sv;
    pa_swz_init(&sv, smem.base, l->swizzle);
    for (uint64_t r = 0; r < el->rows; r++) {
        const uint32_t a = src + (uint32_t)(r * l->pitch);
        if (p->map.dtype == PA_DTYPE_16U4_ALIGN8B) {
            pa_rows_copy(&sv, a, img + r * grow, (uint32_t)grow, 0);
            continue;
        }
        for (uint32_t k = 0; k * 12 < grow; k++) {   /* .b6p2x16 */
            uint8_t vals[16];
            pa_rows_copy(&sv, a + 16 * k, vals, 16, 0);
            pack6(vals, img + r * grow + 12 * k);
        }
    }
    pa_smem_view v = {img, (uint32_t)size};
    int rc = pa_copy_modes[e.mode].store(&e, g, v, 0, fn, ctx, err);
    free(img);
    return rc;
}

int pa_packed_ranges(const pa_copy_plan *p, pa_range_fn fn, void *ctx, pa_error *err)
{
    pa_copy_plan e;   /* the same global bytes as its equivalent map */
    equivalent(p, &e);
    return pa_copy_modes[e.mode].ranges(&e, fn, ctx, err);
}
