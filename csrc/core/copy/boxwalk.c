/* boxwalk.c - the row walks of tile and im2col boxes (see boxwalk.h). */
#include "boxwalk.h"

#include <string.h>

static void walk_common(pa_walk *w, const pa_tensormap *m)
{
    /* cleared in 64-byte blocks: one memset of this length is a string
     * instruction, slow to start for a walk set up per load */
    static const pa_walk zero;
    size_t i = 0;
    for (; i + 64 <= sizeof *w; i += 64)
        memcpy((char *)w + i, (const char *)&zero + i, 64);
    memcpy((char *)w + i, (const char *)&zero + i, sizeof *w % 64);
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
