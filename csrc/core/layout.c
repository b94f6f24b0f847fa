/* layout.c - swizzle and box layout in shared memory. */
#include "layout.h"

uint32_t pa_swizzle_repeat(pa_swizzle sw)
{
    switch (sw) {
    case PA_SWIZZLE_32B: return 256;
    case PA_SWIZZLE_96B: return 256;
    case PA_SWIZZLE_64B: return 512;
    case PA_SWIZZLE_128B: return 1024;
    case PA_SWIZZLE_128B_ATOM_32B: return 512;
    case PA_SWIZZLE_128B_ATOM_32B_FLIP_8B: return 512;
    case PA_SWIZZLE_128B_ATOM_64B: return 256;
    default: return 1;
    }
}

uint32_t pa_swizzle_atom(pa_swizzle sw)
{
    return sw == PA_SWIZZLE_128B_ATOM_32B_FLIP_8B ? 8u : 16u;
}

static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* A map a copy of this kind can use: its kind, a rank from min_rank to 5, and
 * an element type the sm_90 copy engine moves (the packed 4/6-bit ones: no). */
static int copy_map_check(const pa_tensormap *m, pa_map_kind kind, uint32_t min_rank,
                          const pa_dtype_info **di, pa_error *err)
{
    const char *what = kind == PA_MAP_TILED ? ".tile" : ".im2col";
    *di = pa_dtype_get(m->dtype);
    if (!*di || (*di)->is_packed)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "%s copies of data type %d are not supported on sm_90",
                       what, (int)m->dtype);
    static const char *const kinds[] = {"tiled", "im2col", "im2col-wide (W)", "im2col-wide (W128)"};
    if (m->kind != kind)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "a %s copy needs a%s tensor map (this one is %s)", what,
                       kind == PA_MAP_TILED ? " tiled" : "n im2col", kinds[m->kind & 3]);
    if (m->rank < min_rank || m->rank > PA_MAX_RANK)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "%s tensor map rank %u is outside %u..5", what, m->rank,
                       min_rank);
    return PA_OK;
}

int pa_box_layout_tile(const pa_tensormap *m, pa_box_layout *out, pa_error *err)
{
    const pa_dtype_info *di;
    int rc = copy_map_check(m, PA_MAP_TILED, 1, &di, err);
    if (rc)
        return rc;
    const int il = m->interleave != PA_INTERLEAVE_NONE;
    out->esize = di->elem_bytes;
    out->unit = !il ? di->elem_bytes : (m->interleave == PA_INTERLEAVE_16B ? 16u : 32u);
    /* elementStrides[0] is ignored unless interleaved (driver doc, observation 2). */
    out->step0 = il ? m->element_strides[0] : 1u;
    out->rank = m->rank;
    out->swizzle = m->swizzle;
    out->rows = 1;
    for (uint32_t i = 0; i < PA_MAX_RANK; i++) {
        uint32_t box = i < m->rank ? m->box_dim[i] : 1;
        uint32_t es = i == 0 ? out->step0 : (i < m->rank ? m->element_strides[i] : 1);
        out->n[i] = ceil_div(box, es ? es : 1);
        /* Interleaved maps do not traverse dimension rank-2 (tile-mode.md 6.2). */
        if (il && m->rank >= 3 && i == m->rank - 2)
            out->n[i] = 1;
        if (i > 0)
            out->rows *= out->n[i];
    }
    out->row_bytes = out->n[0] * out->unit;
    uint32_t span = pa_swizzle_span(m->swizzle);
    /* A row narrower than the swizzle span is padded to it (observation 2);
     * interleaved rows are packed (tile-mode.md 6.3). */
    out->pitch = (!il && out->row_bytes < span) ? span : out->row_bytes;
    /* The mbarrier is credited with every row's bytes, padding excluded (7.1). */
    out->tx_bytes = (uint64_t)out->row_bytes * out->rows;
    return PA_OK;
}

uint32_t pa_im2col_pixel_bytes(const pa_tensormap *m)
{
    /* Not the documented channelsPerPixel * elemsize: an interleaved pixel is
     * the slice of the NC/xHWCx layout, moved (and credited) whole. */
    if (m->interleave == PA_INTERLEAVE_16B)
        return 16;
    if (m->interleave == PA_INTERLEAVE_32B)
        return 32;
    return m->channels_per_pixel * pa_dtype_get(m->dtype)->elem_bytes;
}

int pa_box_layout_im2col(const pa_tensormap *m, pa_box_layout *out, pa_error *err)
{
    const pa_dtype_info *di;
    int rc = copy_map_check(m, PA_MAP_IM2COL, 3, &di, err);
    if (rc)
        return rc;
    const int il = m->interleave != PA_INTERLEAVE_NONE;
    out->esize = out->unit = di->elem_bytes;
    out->step0 = 1;
    out->rank = 2;
    out->swizzle = m->swizzle;
    for (uint32_t i = 0; i < PA_MAX_RANK; i++)
        out->n[i] = 1;
    out->row_bytes = pa_im2col_pixel_bytes(m);
    out->n[0] = out->row_bytes / di->elem_bytes;
    out->n[1] = m->pixels_per_column;
    out->rows = m->pixels_per_column;
    uint32_t span = pa_swizzle_span(m->swizzle);
    out->pitch = (!il && out->row_bytes < span) ? span : out->row_bytes;
    out->tx_bytes = (uint64_t)out->row_bytes * out->rows;
    return PA_OK;
}

uint32_t pa_layout_forward(const pa_box_layout *l, uint32_t dst, const uint32_t k[PA_MAX_RANK],
                           uint32_t byte)
{
    uint64_t row = 0;
    for (int i = (int)l->rank - 1; i >= 1; i--)
        row = row * l->n[i] + k[i];
    uint32_t a = dst + (uint32_t)(row * l->pitch) + k[0] * l->unit + byte;
    return pa_swizzle_addr(l->swizzle, a);
}

int pa_layout_inverse(const pa_box_layout *l, uint32_t dst, uint32_t addr, uint32_t k[PA_MAX_RANK],
                      uint32_t *byte)
{
    uint32_t a = pa_unswizzle_addr(l->swizzle, addr);
    if (a < dst || l->pitch == 0)
        return 0;
    uint64_t off = a - dst;
    uint64_t row = off / l->pitch;
    uint32_t col = (uint32_t)(off % l->pitch);
    if (row >= l->rows || col >= l->row_bytes)
        return 0;
    for (uint32_t i = 0; i < PA_MAX_RANK; i++)
        k[i] = 0;
    k[0] = col / l->unit;
    *byte = col % l->unit;
    for (uint32_t i = 1; i < l->rank; i++) {
        k[i] = (uint32_t)(row % l->n[i]);
        row /= l->n[i];
    }
    return 1;
}
