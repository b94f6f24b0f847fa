/* wide.c - .im2col::w / .im2col::w::128 (PTX ISA 5.5.5): an im2col-wide map
 * (cuTensorMapEncodeIm2colWide), im2colInfo {wHalo, wOffset}. The main
 * pixels walk the bounding box as im2col does, with a box of 1 in H and D
 * (5.5.5.1): W from W0 = coords[1] + wOffset by s = elementStrides[1] up to
 * the box's upper W, hiW = globalDim[1] - 1 + upperW + wOffset, then from its
 * lower W, loW = lowerW + wOffset, in the next image n + 1 at the same
 * (h, d), and so on (docs/load-modes.md 3 gives the reading):
 *
 *     ::w       rows 0..P-1 are main pixels 0..P-1 (P = pixelsPerColumn);
 *               rows P..P+wHalo-1 the wHalo pixels after pixel P-1 in W
 *     ::w::128  4 groups: 32 main pixels, then the wHalo pixels after the
 *               group's last one in W (r = g * (32 + wHalo) + j)
 *
 * each row is channelsPerPixel elements from coords[0]; a pixel outside the
 * tensor (n past the batch, W or H padding) is filled. The start may lie
 * left of the box, not right of it ("The first element can lie outside of
 * the Bounding Box in the W-dimension only and only on the left side").
 */
#include "mode.h"
#include "rows.h"

#include <stdlib.h>

/* Rows of an im2col::w column: the pixels and their halo. */
static uint32_t wide_rows(const pa_tensormap *m, pa_load_mode mode, uint32_t halo)
{
    return mode == PA_MODE_IM2COL_W ? m->pixels_per_column + halo : 128 + 4 * halo;
}

/* Row r of a column: main pixel k of the walk, plus `extra` steps of W past
 * it for a halo row. */
static void wide_pixel(const pa_tensormap *m, pa_load_mode mode, uint32_t halo, uint32_t r,
                       uint32_t *k, uint32_t *extra)
{
    const uint32_t group = mode == PA_MODE_IM2COL_W ? m->pixels_per_column : 32;
    const uint32_t g = mode == PA_MODE_IM2COL_W ? 0 : r / (32 + halo);
    const uint32_t j = mode == PA_MODE_IM2COL_W ? r : r % (32 + halo);
    *k = group * g + (j < group ? j : group - 1);
    *extra = j < group ? 0 : j - group + 1;
}

/* Main pixel k of the walk: W from W0 to the box's upper W, then from its
 * lower W in the next image, H and D kept. */
static void wide_walk(const pa_copy_plan *p, uint32_t k, int64_t *w, int64_t *n)
{
    const pa_tensormap *m = &p->map;
    const int64_t s = m->element_strides[1];
    const int64_t w0 = (int64_t)p->coords[1] + p->info[1];
    const int64_t lo = (int64_t)m->pixel_box_lower[0] + p->info[1];
    const int64_t hi = (int64_t)m->global_dim[1] - 1 + m->pixel_box_upper[0] + p->info[1];
    const int64_t first = (hi - w0) / s + 1;       /* w0 <= hi (pa_wide_make) */
    const int64_t per = hi >= lo ? (hi - lo) / s + 1 : 0;
    *n = p->coords[m->rank - 1];
    *w = w0 + (int64_t)k * s;
    if ((int64_t)k >= first && per) {
        const int64_t j = (int64_t)k - first;
        *n += 1 + j / per;
        *w = lo + (j % per) * s;
    }
}

int pa_wide_make(pa_copy_plan *p, pa_error *err)
{
    const pa_tensormap *m = &p->map;
    const pa_load_mode mode = p->mode;
    const uint16_t *info = p->info;
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
    /* PTX cp.async.bulk.tensor: "wHalo ... Im2col::w mode : valid range is
     * [0, 512). Im2col::w::128 mode : valid range is [0, 32)"; "wOffset ...
     * valid range of values is [0, 32)". */
    const uint32_t halo_max = mode == PA_MODE_IM2COL_W ? 512 : 32;
    if (info[0] >= halo_max)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: wHalo = %u is outside [0, %u)", name, info[0], halo_max);
    if (info[1] >= 32)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "%s: wOffset = %u is outside [0, 32)", name, info[1]);
    /* im2col rule (golden observation 6): the channel start is 16-byte aligned. */
    int rc = pa_tile_start_rules(m, p->coords, 0, NULL, 0, name, err);
    if (rc)
        return rc;
    /* PTX 5.5.5.1: "The first element can lie outside of the Bounding Box in
     * the W-dimension only and only on the left side" (box and start both
     * moved by wOffset, 5.5.5.4). */
    const int64_t w0 = (int64_t)p->coords[1] + info[1];
    const int64_t hi = (int64_t)m->global_dim[1] - 1 + m->pixel_box_upper[0] + info[1];
    if (w0 > hi)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "%s start pixel W = c1 + wOffset = %lld lies right of the bounding box "
                       "(upper W = %lld; the first element may lie outside it only on the left)",
                       name, (long long)w0, (long long)hi);
    pa_box_layout *l = &p->l;
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

/* Where row r of an im2col::w column reads: 1 and its byte offset from
 * globalAddress (without the channel start), or 0 if the pixel is outside
 * the tensor. */
static int wide_row(const pa_copy_plan *p, uint32_t r, uint64_t *off)
{
    const pa_tensormap *m = &p->map;
    uint32_t k, extra;
    int64_t w, n;
    wide_pixel(m, p->mode, p->info[0], r, &k, &extra);
    wide_walk(p, k, &w, &n);
    w += (int64_t)extra * m->element_strides[1];   /* a halo pixel follows its run in W */
    uint64_t o = 0;
    for (uint32_t i = 1; i < m->rank; i++) {
        const int64_t x = i == 1 ? w : i == m->rank - 1 ? n : p->coords[i];
        if (x < 0 || (uint64_t)x >= m->global_dim[i])
            return 0;
        o += (uint64_t)x * m->global_strides[i - 1];
    }
    *off = o;
    return 1;
}

int pa_wide_load(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err)
{
    const pa_tensormap *m = &p->map;
    const pa_box_layout *l = &p->l;
    const int nan_fill = m->oob_fill == PA_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    const uint32_t u = l->unit;
    int rc = PA_OK;
    uint32_t lo, hi;
    pa_dim0_range(p->coords[0], 1, l->n[0], m->global_dim[0], &lo, &hi);
    uint8_t *buf = malloc(l->row_bytes ? l->row_bytes : 1);
    if (!buf)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for an im2col::w load");
    pa_swz_view sv;
    pa_swz_init(&sv, smem.base, l->swizzle);
    for (uint32_t r = 0; r < l->rows && !rc; r++) {
        uint64_t off;
        if (!wide_row(p, r, &off) || lo == hi) {
            pa_rows_fill(buf, l->row_bytes, nan_fill);
        } else {
            const uint8_t *src = pa_global_resolve(
                g, m->global_address + off + (uint64_t)((int64_t)p->coords[0] + lo) * u, (uint64_t)(hi - lo) * u,
                err);
            if (!src) {
                rc = err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
                break;
            }
            pa_rows_fill(buf, (size_t)lo * u, nan_fill);
            memcpy(buf + (size_t)lo * u, src, (size_t)(hi - lo) * u);
            if (pa_is_tf32(m->dtype))
                pa_rows_tf32(buf + (size_t)lo * u, (hi - lo) * u);
            pa_rows_fill(buf + (size_t)hi * u, (size_t)(l->n[0] - hi) * u, nan_fill);
        }
        pa_rows_copy(&sv, dst + r * l->pitch, buf, l->row_bytes, 1);
    }
    free(buf);
    return rc;
}

int pa_wide_ranges(const pa_copy_plan *p, pa_range_fn fn, void *ctx, pa_error *err)
{
    const pa_box_layout *l = &p->l;
    uint32_t lo, hi;
    pa_dim0_range(p->coords[0], 1, l->n[0], p->map.global_dim[0], &lo, &hi);
    for (uint32_t r = 0; r < l->rows && lo < hi; r++) {
        uint64_t off;
        int rc;
        if (wide_row(p, r, &off) &&
            (rc = fn(ctx, r, p->map.global_address + off + (uint64_t)((int64_t)p->coords[0] + lo) * l->unit,
                     (uint64_t)(hi - lo) * l->unit, err)))
            return rc;
    }
    return PA_OK;
}
