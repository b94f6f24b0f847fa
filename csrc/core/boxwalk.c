/* boxwalk.c - the row walks of tile and im2col boxes (see boxwalk.h). */
#include "boxwalk.h"

#include <string.h>

static void walk_common(pa_walk *w, const pa_tensormap *m)
{
    memset(w, 0, sizeof *w);
    for (uint32_t i = 0; i < PA_MAX_RANK; i++) {
        w->dim[i] = i < m->rank ? m->global_dim[i] : 1;
        w->bytes[i] = i >= 1 && i < m->rank ? m->global_strides[i - 1] : 0;
    }
    w->last = m->rank - 1;
}

void pa_walk_tile(pa_walk *w, const pa_tensormap *m, const pa_box_layout *l,
                  const int32_t coords[PA_MAX_RANK])
{
    walk_common(w, m);
    w->first = 1;
    w->c0 = coords[0];
    w->limit0 = m->global_dim[0];
    for (uint32_t i = 0; i < m->rank; i++) {
        w->g[i] = coords[i];
        w->n[i] = l->n[i];
        w->step[i] = m->element_strides[i];
    }
}

void pa_walk_im2col(pa_walk *w, const pa_tensormap *m, const int32_t coords[PA_MAX_RANK],
                    const uint16_t offsets[PA_MAX_RANK - 2])
{
    walk_common(w, m);
    w->im2col = 1;
    const uint32_t r = m->rank;
    if (m->interleave == PA_INTERLEAVE_NONE) {
        /* C | W H D | N */
        w->first = 1;
        w->walk_lo = 1;
        w->walk_hi = r - 2;
        w->c0 = coords[0];
        w->limit0 = m->global_dim[0];
    } else {
        /* W H D | C/x (kept) | N; dim 0 counts slices, and a pixel is one
         * whole slice (docs/im2col-mode.md 3, 3.1) */
        w->first = 0;
        w->walk_lo = 0;
        w->walk_hi = r - 3;
        w->bytes[0] = m->interleave == PA_INTERLEAVE_16B ? 16u : 32u;
        w->c0 = 0;
        w->limit0 = pa_im2col_pixel_bytes(m) / pa_dtype_get(m->dtype)->elem_bytes;
    }
    w->image = r - 1;
    w->step[w->image] = m->element_strides[w->image];
    for (uint32_t i = w->first; i < r; i++)
        w->g[i] = coords[i];
    for (uint32_t i = w->walk_lo; i <= w->walk_hi; i++) {
        uint32_t c = i - w->walk_lo;   /* corner index: W, H, D */
        w->off[i] = offsets ? offsets[c] : 0;
        w->step[i] = m->element_strides[i];
        w->lo[i] = m->pixel_box_lower[c];
        w->hi[i] = (int64_t)m->global_dim[i] - 1 + m->pixel_box_upper[c];
    }
}

void pa_walk_next(pa_walk *w)
{
    if (w->im2col) {
        for (uint32_t i = w->walk_lo; i <= w->walk_hi; i++) {
            w->g[i] += w->step[i];
            if (w->g[i] <= w->hi[i])
                return;
            w->g[i] = w->lo[i];
        }
        w->g[w->image] += w->step[w->image];
        return;
    }
    for (uint32_t i = 1; i <= w->last; i++) {
        if (++w->k[i] < w->n[i]) {
            w->g[i] += w->step[i];
            return;
        }
        w->g[i] -= (int64_t)(w->k[i] - 1) * w->step[i];
        w->k[i] = 0;
    }
}

/* PTX ISA 5.5.4.1: im2col offsets are 16, 8 and 5 bits wide for 3D, 4D, 5D. */
static const uint32_t offset_limit[PA_MAX_RANK + 1] = {0, 0, 0, 1u << 16, 1u << 8, 1u << 5};

int pa_im2col_check(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                    const uint16_t offsets[PA_MAX_RANK - 2], pa_error *err)
{
    const uint32_t r = m->rank;
    const int il = m->interleave != PA_INTERLEAVE_NONE;
    const uint32_t esize = pa_dtype_get(m->dtype)->elem_bytes;
    if (mode == PA_MODE_IM2COL) {
        for (uint32_t i = 0; offsets && i + 2 < r; i++)
            if (offsets[i] >= offset_limit[r])
                return pa_fail(err, PA_ERR_INVALID_VALUE,
                               "im2col offset %u = %u is outside [0, %u] for a %uD copy "
                               "(PTX ISA 5.5.4.1)", i, offsets[i], offset_limit[r] - 1, r);
    } else {
        /* PTX ISA cp.async.bulk.tensor, .im2col_no_offs in the store direction:
         * "Bounding-Box Lower-Corner must be non-negative. Bounding-Box
         * Upper-Corner must be non-positive", and coordinates non-negative. The
         * 23 recorded stores and reductions that broke one of these raised
         * IllegalInstruction (golden observation 10). */
        for (uint32_t i = 0; i < r; i++)
            if (coords[i] < 0)
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               ".im2col_no_offs coordinate c%u = %d is negative", i, coords[i]);
        for (uint32_t i = 0; i + 2 < r; i++) {
            if (m->pixel_box_lower[i] < 0)
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               ".im2col_no_offs needs pixelBoxLowerCorner[%u] = %d >= 0 (the box "
                               "must stay inside the tensor)", i, m->pixel_box_lower[i]);
            if (m->pixel_box_upper[i] > 0)
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               ".im2col_no_offs needs pixelBoxUpperCorner[%u] = %d <= 0 (the box "
                               "must stay inside the tensor)", i, m->pixel_box_upper[i]);
        }
    }
    /* Golden observation 6 (loads; 15/15 .im2col_no_offs stores probed on an
     * H200 too): the start pixel must lie in the bounding box, and the channel
     * start must be 16-byte aligned; otherwise the copy faults. For
     * interleaved maps the pixel is coords[0..r-3] (boxwalk.h). */
    const uint32_t first = il ? 0 : 1;
    for (uint32_t i = 0; i + 2 < r; i++) {
        int64_t c = coords[first + i];
        int64_t lo = m->pixel_box_lower[i];
        int64_t hi = (int64_t)m->global_dim[first + i] - 1 + m->pixel_box_upper[i];
        if (c < lo || c > hi)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "im2col start pixel coordinate c%u = %lld lies outside the bounding box "
                           "[%lld, %lld] (the hardware faults)",
                           first + i, (long long)c, (long long)lo, (long long)hi);
    }
    if (!il && ((int64_t)coords[0] * esize) % 16 != 0)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "im2col channel start c0 * elemsize = %d * %u B is not a multiple of 16 bytes "
                       "(the hardware faults)", coords[0], esize);
    return PA_OK;
}
