/* modes.c - .tile::gather4 / .tile::scatter4, .im2col::w / ::w::128, the
 * target gate of every tensor copy (see modes.h). */
#include "modes.h"
#include "subbyte.h"

#include <stdlib.h>
#include <string.h>

static const char *const mode_names[PA_MODE_COUNT] = {
    ".tile", ".im2col", ".im2col_no_offs", ".tile::gather4", ".tile::scatter4", ".im2col::w",
    ".im2col::w::128"};

const char *pa_mode_name(pa_load_mode mode)
{
    return (unsigned)mode < PA_MODE_COUNT ? mode_names[mode] : "an unknown mode";
}

/* ---- targets -------------------------------------------------------------- */

static int require(pa_target t, pa_feature f, pa_error *err)
{
    return pa_target_require(t, f, err);
}

static pa_feature mode_feature(pa_load_mode mode, pa_copy_dir dir)
{
    const int cluster = dir == PA_DIR_LOAD_CLUSTER;
    switch (mode) {
    case PA_MODE_TILE_GATHER4:
        return dir == PA_DIR_PREFETCH ? PA_FEAT_PREFETCH_GATHER4
               : cluster             ? PA_FEAT_GATHER4_CLUSTER
                                     : PA_FEAT_GATHER4_CTA;
    case PA_MODE_TILE_SCATTER4: return PA_FEAT_SCATTER4;
    case PA_MODE_IM2COL_W:
        return dir == PA_DIR_PREFETCH ? PA_FEAT_PREFETCH_IM2COL_W
               : cluster             ? PA_FEAT_IM2COL_W_CLUSTER
                                     : PA_FEAT_IM2COL_W_CTA;
    case PA_MODE_IM2COL_W128:
        return dir == PA_DIR_PREFETCH ? PA_FEAT_PREFETCH_IM2COL_W : PA_FEAT_IM2COL_W128;
    default:
        return dir == PA_DIR_PREFETCH ? PA_FEAT_PREFETCH_TENSOR : PA_FEAT_TENSOR_COPY;
    }
}

int pa_modes_target_check(pa_target t, const pa_tensormap *m, pa_load_mode mode, pa_copy_dir dir,
                          pa_error *err)
{
    int rc;
    if ((unsigned)mode >= PA_MODE_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "load mode %d does not exist", (int)mode);
    /* PTX cp.reduce.async.bulk.tensor: ".load_mode = { .tile, .im2col_no_offs }" */
    if (dir == PA_DIR_REDUCE && mode >= PA_MODE_TILE_GATHER4)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "cp.reduce.async.bulk.tensor takes no %s mode (.load_mode = { .tile, "
                       ".im2col_no_offs })", pa_mode_name(mode));
    if ((rc = require(t, mode_feature(mode, dir), err)))
        return rc;
    /* A map the sm_90 driver would not encode can still reach an sm_90a
     * machine (made for another target, or edited): the copy is refused. */
    if (m->swizzle >= PA_SWIZZLE_128B_ATOM_32B && m->swizzle < PA_SWIZZLE_COUNT) {
        if ((rc = require(t, PA_FEAT_SWIZZLE_ATOM, err)))
            return rc;
        /* Seed, restrictions for sm_120a: loads to .shared::cluster take no
         * .swizzle_atomicity. */
        if (dir == PA_DIR_LOAD_CLUSTER && (rc = require(t, PA_FEAT_SWIZZLE_ATOM_CLUSTER, err)))
            return rc;
    }
    const pa_dtype_info *di = pa_dtype_get(m->dtype);
    if (m->swizzle == PA_SWIZZLE_96B) {
        /* seed tensormap.replace: .swizzle_mode 4 is sm_103a's. */
        if ((rc = require(t, PA_FEAT_SWIZZLE_96B, err)))
            return rc;
        /* seed, "restrictions on the 96B swizzle mode" 5: "The .load_mode must not
         * be set to .im2col::w::128." */
        if (mode == PA_MODE_IM2COL_W128)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "the 96B swizzle does not support .im2col::w::128 (\"The .load_mode must "
                           "not be set to .im2col::w::128\")");
        /* 4: "The type must not be among following: .b4x16_p64, .b6x16_p32 and .b6p2x16." */
        if (m->dtype == PA_DTYPE_16U4_ALIGN16B || m->dtype == PA_DTYPE_16U6_ALIGN16B)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "the 96B swizzle does not support the type %s", di ? di->name : "?");
        /* 3: "Box-Size[0] must be less than or equal to 96B." */
        uint64_t inner = di && !di->is_packed
                             ? (uint64_t)(m->kind == PA_MAP_TILED ? m->box_dim[0] : m->channels_per_pixel) *
                                   di->elem_bytes
                             : 0;
        if (inner > 96)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "the 96B swizzle: Box-Size[0] = %llu B exceeds 96 B (\"Box-Size[0] must be "
                           "less than or equal to 96B\")", (unsigned long long)inner);
    }
    if (di && di->is_packed) {
        /* seed restriction 1: "cp.reduce.async.bulk doesn't support the types .b4x16,
         * .b4x16_p64, .b6x16_p32 and .b6p2x16" */
        if (dir == PA_DIR_REDUCE)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "cp.reduce.async.bulk.tensor does not support the sub-byte type %s",
                           di->name);
        if ((rc = require(t, PA_FEAT_PACKED_TYPES, err)))
            return rc;
        if (dir == PA_DIR_LOAD_CLUSTER && (rc = require(t, PA_FEAT_PACKED_CLUSTER, err)))
            return rc;
    }
    if (PA_MAP_IS_WIDE(m->kind) && (rc = require(t, PA_FEAT_IM2COL_WIDE_MAP, err)))
        return rc;
    return PA_OK;
}

int pa_modes_cta_group_check(pa_target t, int cta_group, uint32_t mbar, uint32_t dst_rank, int multicast,
                             uint32_t nctas, pa_error *err)
{
    if (cta_group == 0)
        return PA_OK;
    if (cta_group != 1 && cta_group != 2)
        return pa_fail(err, PA_ERR_INVALID_VALUE, ".cta_group::%d does not exist (::1 or ::2)", cta_group);
    int rc = require(t, PA_FEAT_CTA_GROUP, err);
    if (rc)
        return rc;
    const uint32_t bar = pa_smem_rank(mbar);
    /* "When .cta_group::1 is specified, the mbarrier object mbar that is specified must be in
     * the shared memory of the same CTA as the shared memory destination dstMem. When
     * .cta_group::2 is specified, the mbarrier object mbar can be in shared memory of either
     * the same CTA as the shared memory destination dstMem or in its peer-CTA." */
    if (!multicast && nctas > 1 && bar != dst_rank && (cta_group == 1 || bar != (dst_rank ^ 1u)))
        return pa_fail(err, PA_ERR_HAZARD,
                       ".cta_group::%d: the mbarrier is in CTA %u, neither the destination CTA %u%s "
                       "(undefined behaviour)", cta_group, bar, dst_rank,
                       cta_group == 2 ? " nor its peer" : "");
    if (cta_group == 2 && ((dst_rank | 1u) >= nctas || (bar | 1u) >= nctas))
        return pa_fail(err, PA_ERR_HAZARD,
                       ".cta_group::2 needs CTA pairs: the cluster of %u CTAs has no peer of CTA %u",
                       nctas, nctas > dst_rank ? dst_rank : bar);
    return PA_OK;
}

/* ---- issue checks and layouts --------------------------------------------- */

/* PTX 5.5.3.4: "these modes work only on 2D tensor data", "The size of the
 * bounding box in the dimension 1 must be one", "The interleave layout is
 * not supported for .tile::scatter4 and .tile::gather4 modes", "All other
 * constraints and rules of the tile mode apply to these modes as well." */
static int gather4_checks(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                          int is_store, pa_box_layout *l, pa_error *err)
{
    const char *name = pa_mode_name(mode);
    int rc = pa_box_layout_tile(m, l, err);   /* a tiled map of a type the engine moves */
    if (rc)
        return rc;
    if (m->rank != 2)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s needs a rank-2 tensor map (\"these modes work only on 2D tensor data\", "
                       "PTX ISA 5.5.3.4); this one has rank %u", name, m->rank);
    if (m->box_dim[1] != 1)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s needs boxDim[1] = 1 (\"The size of the bounding box in the dimension 1 "
                       "must be one\", PTX ISA 5.5.3.4.1); this map has boxDim[1] = %u",
                       name, m->box_dim[1]);
    if (m->interleave != PA_INTERLEAVE_NONE)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s takes no interleaved map (\"The interleave layout is not supported for "
                       ".tile::scatter4 and .tile::gather4 modes\", PTX ISA 5.5.3.4); this map is %s",
                       name, pa_interleave_name(m->interleave));
    /* Tile rules per row: the column start is 16-byte aligned; the store
     * direction takes non-negative coordinates (all five). */
    static const char *const operand[5] = {"col_idx", "row_idx0", "row_idx1", "row_idx2", "row_idx3"};
    if (is_store)
        for (int i = 0; i < 5; i++)
            if (coords[i] < 0)
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               "%s coordinate %s = %d is negative (the store direction needs "
                               "non-negative coordinates)", name, operand[i], coords[i]);
    const int32_t first[PA_MAX_RANK] = {coords[0], coords[1], 0, 0, 0};
    if ((rc = pa_tile_check_coords(m, first, is_store, err)))
        return rc;
    /* four rows one after another: a 4-row box */
    l->n[1] = 4;
    l->rows = 4;
    l->tx_bytes = 4ull * l->row_bytes;
    return PA_OK;
}

/* PTX cp.async.bulk.tensor: "wHalo ... Im2col::w mode : valid range is
 * [0, 512). Im2col::w::128 mode : valid range is [0, 32)"; "wOffset ...
 * valid range of values is [0, 32)". */
static int wide_info_checks(pa_load_mode mode, const uint16_t info[PA_MAX_RANK - 2], pa_error *err)
{
    const uint32_t halo_max = mode == PA_MODE_IM2COL_W ? 512 : 32;
    if (info[0] >= halo_max)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: wHalo = %u is outside [0, %u)",
                       pa_mode_name(mode), info[0], halo_max);
    if (info[1] >= 32)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: wOffset = %u is outside [0, 32)",
                       pa_mode_name(mode), info[1]);
    return PA_OK;
}

/* Rows of an im2col::w column: the pixels and their halo. */
static uint32_t wide_rows(const pa_tensormap *m, pa_load_mode mode, uint32_t halo)
{
    return mode == PA_MODE_IM2COL_W ? m->pixels_per_column + halo : 128 + 4 * halo;
}

/* Row r of a column (modes.h): main pixel k of the walk, plus `extra` steps
 * of W past it for a halo row. */
static void wide_pixel(const pa_tensormap *m, pa_load_mode mode, uint32_t halo, uint32_t r,
                       uint32_t *k, uint32_t *extra)
{
    const uint32_t group = mode == PA_MODE_IM2COL_W ? m->pixels_per_column : 32;
    const uint32_t g = mode == PA_MODE_IM2COL_W ? 0 : r / (32 + halo);
    const uint32_t j = mode == PA_MODE_IM2COL_W ? r : r % (32 + halo);
    *k = group * g + (j < group ? j : group - 1);
    *extra = j < group ? 0 : j - group + 1;
}

static int wide_checks(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                       const uint16_t info[PA_MAX_RANK - 2], pa_box_layout *l, pa_error *err)
{
    const char *name = pa_mode_name(mode);
    const pa_map_kind want = mode == PA_MODE_IM2COL_W ? PA_MAP_IM2COL_W : PA_MAP_IM2COL_W128;
    if (m->kind != want)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s needs an im2col-wide map of mode %s (cuTensorMapEncodeIm2colWide); this "
                       "map is %s",
                       name, want == PA_MAP_IM2COL_W ? "W" : "W128",
                       m->kind == PA_MAP_TILED ? "tiled" : m->kind == PA_MAP_IM2COL ? "im2col"
                       : m->kind == PA_MAP_IM2COL_W ? "im2col-wide mode W" : "im2col-wide mode W128");
    const pa_dtype_info *di = pa_dtype_get(m->dtype);
    if (!di || di->is_packed)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "%s copies of data type %d are not modelled",
                       name, (int)m->dtype);
    /* PTX 5.5.6: "The interleave layout is not supported for .im2col::w and
     * .im2col::w::128 modes" (the encoder refuses it; an edited map may hold it). */
    if (m->interleave != PA_INTERLEAVE_NONE)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "%s does not support an interleaved map (interleave %s; PTX ISA 5.5.6)", name,
                       pa_interleave_name(m->interleave));
    int rc = wide_info_checks(mode, info, err);
    if (rc)
        return rc;
    /* im2col rule (golden observation 6): the channel start is 16-byte aligned. */
    if (((int64_t)coords[0] * di->elem_bytes) % 16 != 0)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "%s channel start c0 * elemsize = %d * %u B is not a multiple of 16 bytes",
                       name, coords[0], di->elem_bytes);
    /* PTX 5.5.5.1: "The first element can lie outside of the Bounding Box in
     * the W-dimension only and only on the left side" (box and start both
     * moved by wOffset, 5.5.5.4). */
    const int64_t w0 = (int64_t)coords[1] + info[1];
    const int64_t hi = (int64_t)m->global_dim[1] - 1 + m->pixel_box_upper[0] + info[1];
    if (w0 > hi)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "%s start pixel W = c1 + wOffset = %lld lies right of the bounding box "
                       "(upper W = %lld; the first element may lie outside it only on the left)",
                       name, (long long)w0, (long long)hi);
    memset(l, 0, sizeof *l);
    l->esize = l->unit = di->elem_bytes;
    l->step0 = 1;
    l->rank = 2;
    for (uint32_t i = 0; i < PA_MAX_RANK; i++)
        l->n[i] = 1;
    l->n[0] = m->channels_per_pixel;
    l->n[1] = wide_rows(m, mode, info[0]);
    l->rows = l->n[1];
    l->row_bytes = m->channels_per_pixel * di->elem_bytes;
    const uint32_t span = pa_swizzle_span(m->swizzle);
    l->pitch = l->row_bytes < span ? span : l->row_bytes;
    l->swizzle = m->swizzle;
    l->tx_bytes = (uint64_t)l->row_bytes * l->rows;
    return PA_OK;
}

static int new_mode_checks(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                           const uint16_t info[PA_MAX_RANK - 2], int is_store, pa_box_layout *l,
                           pa_error *err)
{
    static const uint16_t none[PA_MAX_RANK - 2] = {0, 0, 0};
    const int store_mode = mode == PA_MODE_TILE_SCATTER4;
    if (mode < PA_MODE_TILE_GATHER4 || mode >= PA_MODE_COUNT || store_mode != !!is_store)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s is not a %s mode", pa_mode_name(mode),
                       is_store ? "store-direction (.tile, .tile::scatter4, .im2col_no_offs)"
                                : "load-direction (.tile, .tile::gather4, .im2col, .im2col::w, "
                                  ".im2col::w::128)");
    if (mode == PA_MODE_TILE_GATHER4 || mode == PA_MODE_TILE_SCATTER4)
        return gather4_checks(m, mode, coords, is_store, l, err);
    return wide_checks(m, mode, coords, info ? info : none, l, err);
}

int pa_copy_issue_checks(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                         const uint16_t info[PA_MAX_RANK - 2], int is_store, pa_box_layout *l,
                         pa_error *err)
{
    const pa_dtype_info *di = pa_dtype_get(m->dtype);
    if (di && di->is_packed)
        return pa_subbyte_issue_checks(m, mode, coords, info, is_store, l, err);
    if (mode >= PA_MODE_TILE_GATHER4)
        return new_mode_checks(m, mode, coords, info, is_store, l, err);
    if (mode == PA_MODE_TILE) {
        int rc = pa_tile_check_coords(m, coords, is_store, err);
        return rc ? rc : pa_box_layout_tile(m, l, err);
    }
    if (mode != (is_store ? PA_MODE_IM2COL_NO_OFFS : PA_MODE_IM2COL))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s is not a %s mode", pa_mode_name(mode),
                       is_store ? "store-direction" : "load-direction");
    int rc = pa_box_layout_im2col(m, l, err);
    return rc ? rc : pa_im2col_check(m, mode, coords, info, err);
}

int pa_modes_issue_checks(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                          const uint16_t info[PA_MAX_RANK - 2], int is_store, pa_box_layout *l,
                          pa_error *err)
{
    return pa_copy_issue_checks(m, mode, coords, info, is_store, l, err);
}

/* ---- rows ----------------------------------------------------------------- */

/* Where row r of an im2col::w column reads: 1 and its byte offset from
 * globalAddress (without the channel start), or 0 if the pixel is outside
 * the tensor. */
/* Main pixel k of the walk (modes.h): W from W0 to the box's upper W, then
 * from its lower W in the next image, H and D kept. */
static void wide_walk(const pa_tensormap *m, const int32_t coords[PA_MAX_RANK],
                      const uint16_t info[PA_MAX_RANK - 2], uint32_t k, int64_t *w, int64_t *n)
{
    const int64_t s = m->element_strides[1];
    const int64_t w0 = (int64_t)coords[1] + info[1];
    const int64_t lo = (int64_t)m->pixel_box_lower[0] + info[1];
    const int64_t hi = (int64_t)m->global_dim[1] - 1 + m->pixel_box_upper[0] + info[1];
    const int64_t first = (hi - w0) / s + 1;       /* w0 <= hi (wide_checks) */
    const int64_t per = hi >= lo ? (hi - lo) / s + 1 : 0;
    *n = coords[m->rank - 1];
    *w = w0 + (int64_t)k * s;
    if ((int64_t)k >= first && per) {
        const int64_t j = (int64_t)k - first;
        *n += 1 + j / per;
        *w = lo + (j % per) * s;
    }
}

static int wide_row(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                    const uint16_t info[PA_MAX_RANK - 2], uint32_t r, uint64_t *off)
{
    uint32_t k, extra;
    int64_t w, n;
    wide_pixel(m, mode, info[0], r, &k, &extra);
    wide_walk(m, coords, info, k, &w, &n);
    w += (int64_t)extra * m->element_strides[1];   /* a halo pixel follows its run in W */
    uint64_t o = 0;
    for (uint32_t i = 1; i < m->rank; i++) {
        const int64_t x = i == 1 ? w : i == m->rank - 1 ? n : coords[i];
        if (x < 0 || (uint64_t)x >= m->global_dim[i])
            return 0;
        o += (uint64_t)x * m->global_strides[i - 1];
    }
    *off = o;
    return 1;
}

/* Fill pattern of out-of-bounds elements (golden observation 3): zero, or
 * the 16-bit 0x7FF7 repeated for OOB_FILL_NAN_REQUEST_ZERO_FMA. */
static void fill_bytes(uint8_t *p, size_t n, int nan_fill)
{
    if (!nan_fill) {
        memset(p, 0, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (i & 1) ? 0x7F : 0xF7;
}

/* Place one row image at pre-swizzle shared offset a, atom by atom. */
static void put_row(uint8_t *smem, pa_swizzle sw, uint32_t a, const uint8_t *src, uint32_t n)
{
    if (sw == PA_SWIZZLE_NONE) {
        memcpy(smem + a, src, n);
        return;
    }
    const uint32_t atom = pa_swizzle_atom(sw);
    while (n) {
        uint32_t len = atom - (a & (atom - 1));
        if (len > n)
            len = n;
        memcpy(smem + pa_swizzle_addr(sw, a), src, len);
        src += len;
        a += len;
        n -= len;
    }
}

static int wide_load(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                     const uint16_t info[PA_MAX_RANK - 2], const pa_global *g, pa_smem_view smem,
                     uint32_t dst, pa_error *err)
{
    pa_box_layout l;
    int rc = wide_checks(m, mode, coords, info, &l, err);
    if (rc || (rc = pa_tile_check_smem(m, &l, dst, smem.size, err)))
        return rc;
    const int nan_fill = m->oob_fill == PA_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    const int tf32 = m->dtype == PA_DTYPE_TFLOAT32 || m->dtype == PA_DTYPE_TFLOAT32_FTZ;
    const uint32_t u = l.unit;
    uint32_t lo, hi;
    pa_dim0_range(coords[0], 1, l.n[0], m->global_dim[0], &lo, &hi);
    uint8_t *buf = malloc(l.row_bytes);
    if (!buf)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for an im2col::w load");
    for (uint32_t r = 0; r < l.rows && !rc; r++) {
        uint64_t off;
        if (!wide_row(m, mode, coords, info, r, &off) || lo == hi) {
            fill_bytes(buf, l.row_bytes, nan_fill);
        } else {
            const uint8_t *src = pa_global_resolve(
                g, m->global_address + off + (uint64_t)((int64_t)coords[0] + lo) * u,
                (uint64_t)(hi - lo) * u, err);
            if (!src) {
                rc = err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
                break;
            }
            fill_bytes(buf, (size_t)lo * u, nan_fill);
            memcpy(buf + (size_t)lo * u, src, (size_t)(hi - lo) * u);
            for (uint32_t i = lo * u; tf32 && i < hi * u; i += 4) {
                uint32_t v;
                memcpy(&v, buf + i, 4);
                v = pa_tf32_round(v);
                memcpy(buf + i, &v, 4);
            }
            fill_bytes(buf + (size_t)hi * u, (size_t)(l.n[0] - hi) * u, nan_fill);
        }
        put_row(smem.base, l.swizzle, dst + r * l.pitch, buf, l.row_bytes);
    }
    free(buf);
    return rc;
}

/* The four rows of a gather4 / scatter4 box, each a 1-row tile box. */
static uint32_t gather4_pitch(const pa_tensormap *m)
{
    const uint32_t row = m->box_dim[0] * pa_dtype_get(m->dtype)->elem_bytes;
    const uint32_t span = pa_swizzle_span(m->swizzle);
    return row < span ? span : row;
}

int pa_modes_load_exec(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                       const uint16_t info[PA_MAX_RANK - 2], const pa_global *g, pa_smem_view smem,
                       uint32_t dst, pa_error *err)
{
    static const uint16_t none[PA_MAX_RANK - 2] = {0, 0, 0};
    if (pa_dtype_get(m->dtype)->is_packed)
        return pa_subbyte_load_exec(m, mode, coords, info, g, smem, dst, err);
    pa_box_layout l;
    int rc = pa_modes_issue_checks(m, mode, coords, info, 0, &l, err);
    if (rc || (rc = pa_tile_check_smem(m, &l, dst, smem.size, err)))
        return rc;
    if (mode != PA_MODE_TILE_GATHER4)
        return wide_load(m, mode, coords, info ? info : none, g, smem, dst, err);
    const uint32_t pitch = gather4_pitch(m);
    for (uint32_t i = 0; i < 4 && !rc; i++) {
        const int32_t row[PA_MAX_RANK] = {coords[0], coords[1 + i], 0, 0, 0};
        rc = pa_tensor_load_exec(m, PA_MODE_TILE, row, NULL, g, smem, dst + i * pitch, err);
    }
    return rc;
}

int pa_modes_store_exec(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                        const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn, void *ctx,
                        pa_error *err)
{
    if (pa_dtype_get(m->dtype)->is_packed)
        return pa_subbyte_store_exec(m, mode, coords, g, smem, src, fn, ctx, err);
    pa_box_layout l;
    int rc = pa_modes_issue_checks(m, mode, coords, NULL, 1, &l, err);
    if (rc || (rc = pa_tile_check_smem(m, &l, src, smem.size, err)))
        return rc;
    const uint32_t pitch = gather4_pitch(m);
    for (uint32_t i = 0; i < 4 && !rc; i++) {
        const int32_t row[PA_MAX_RANK] = {coords[0], coords[1 + i], 0, 0, 0};
        rc = pa_tensor_store_exec(m, PA_MODE_TILE, row, g, smem, src + i * pitch, fn, ctx, err);
    }
    return rc;
}

/* ---- what a load reads ------------------------------------------------------ */

/* The in-bounds runs of one walked box (tile or im2col). */
static int walk_ranges(const pa_tensormap *m, const pa_box_layout *l, pa_walk *w, uint64_t first_row,
                       pa_range_fn fn, void *ctx, pa_error *err)
{
    uint32_t lo, hi;
    pa_dim0_range(w->c0, l->step0, l->n[0], w->limit0, &lo, &hi);
    for (uint64_t r = 0; r < l->rows; r++, pa_walk_next(w)) {
        uint64_t off;
        if (!pa_walk_row(w, &off) || lo == hi)
            continue;
        const uint32_t per = l->step0 == 1 ? hi - lo : 1;
        for (uint32_t k = lo; k < hi; k += per) {
            uint64_t a = m->global_address + off + (uint64_t)(w->c0 + (int64_t)k * l->step0) * l->unit;
            int rc = fn(ctx, first_row + r, a, (uint64_t)per * l->unit, err);
            if (rc)
                return rc;
        }
    }
    return PA_OK;
}

int pa_modes_ranges(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                    const uint16_t info[PA_MAX_RANK - 2], pa_range_fn fn, void *ctx, pa_error *err)
{
    static const uint16_t none[PA_MAX_RANK - 2] = {0, 0, 0};
    pa_box_layout l;
    pa_walk w;
    int rc;
    info = info ? info : none;
    if (pa_dtype_get(m->dtype)->is_packed) {   /* the same global bytes as its equivalent map */
        pa_tensormap e;
        int32_t ec[PA_MAX_RANK];
        pa_subbyte_equivalent(m, mode, coords, &e, ec);
        return pa_modes_ranges(&e, mode, ec, info, fn, ctx, err);
    }
    switch (mode) {
    case PA_MODE_TILE:
        if ((rc = pa_box_layout_tile(m, &l, err)))
            return rc;
        pa_walk_tile(&w, m, &l, coords);
        return walk_ranges(m, &l, &w, 0, fn, ctx, err);
    case PA_MODE_IM2COL:
        if ((rc = pa_box_layout_im2col(m, &l, err)))
            return rc;
        pa_walk_im2col(&w, m, coords, info);
        return walk_ranges(m, &l, &w, 0, fn, ctx, err);
    case PA_MODE_TILE_GATHER4:
        if ((rc = pa_box_layout_tile(m, &l, err)))
            return rc;
        for (uint32_t i = 0; i < 4; i++) {
            const int32_t row[PA_MAX_RANK] = {coords[0], coords[1 + i], 0, 0, 0};
            pa_walk_tile(&w, m, &l, row);
            if ((rc = walk_ranges(m, &l, &w, i, fn, ctx, err)))
                return rc;
        }
        return PA_OK;
    case PA_MODE_IM2COL_W:
    case PA_MODE_IM2COL_W128: {
        if ((rc = wide_checks(m, mode, coords, info, &l, err)))
            return rc;
        uint32_t lo, hi;
        pa_dim0_range(coords[0], 1, l.n[0], m->global_dim[0], &lo, &hi);
        for (uint32_t r = 0; r < l.rows && lo < hi; r++) {
            uint64_t off;
            if (wide_row(m, mode, coords, info, r, &off) &&
                (rc = fn(ctx, r, m->global_address + off + (uint64_t)((int64_t)coords[0] + lo) * l.unit,
                         (uint64_t)(hi - lo) * l.unit, err)))
                return rc;
        }
        return PA_OK;
    }
    default:
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s is not a load mode", pa_mode_name(mode));
    }
}
