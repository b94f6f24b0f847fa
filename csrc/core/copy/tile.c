/* tile.c - .tile, .im2col and .im2col_no_offs: the rules and the box walk
 * (boxwalk.h) of the sm_90 modes.
 *
 *   element k of the box  <->  global element g:
 *       g_i = c_i + k_i * elementStrides[i]      (elementStrides[0] = 1 unless interleaved)
 *       address = globalAddress + g_0 * esize + sum_{i>=1} g_i * globalStrides[i-1]
 *   load:  out-of-bounds elements (any g_i outside [0, globalDim[i])) are filled
 *   store: in dims >= 1 bounds are exact; in dim 0 the bytes up to the end of
 *          the 16-byte chunk holding the row's last in-bounds byte are written
 *          too (golden observation 9)
 *
 * Inside a row the in-bounds elements are one contiguous run of global
 * memory, so each row is moved with at most three wide operations (fill,
 * copy, fill), split only where the swizzle moves 16-byte chunks apart.
 */
#include "mode.h"
#include "rows.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- rules ---------------------------------------------------------------- */

int pa_tile_start_rules(const pa_tensormap *m, const int32_t *coords, uint32_t n, const char *const *operand,
                        int is_store, const char *what, pa_error *err)
{
    if (is_store) {
        /* PTX: "Starting co-ordinates for Bounding Box must be non-negative" (store
         * direction); the hardware raised IllegalInstruction (observations 8, 10). */
        for (uint32_t i = 0; i < n; i++)
            if (coords[i] < 0) {
                char name[16];
                snprintf(name, sizeof name, "c%u", i);
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               "%s coordinate %s = %d is negative (the store direction needs non-negative "
                               "coordinates)", what, operand ? operand[i] : name, coords[i]);
            }
    }
    if (m->interleave == PA_INTERLEAVE_NONE) {
        /* Observations 1, 6 and 8: the innermost start offset (the channel start
         * of an im2col pixel) must be 16-byte aligned. */
        const pa_dtype_info *di = pa_dtype_get(m->dtype);
        int64_t off = (int64_t)coords[0] * (di ? di->elem_bytes : 1);
        if (off % 16 != 0)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "innermost start offset c0 * elemsize = %d * %u = %lld B is not a multiple of "
                           "16 bytes (%s%s; the hardware faults)", coords[0], di ? di->elem_bytes : 1,
                           (long long)off, what, m->kind == PA_MAP_TILED ? "" : ": the channel start of a pixel");
    }
    return PA_OK;
}

static int zero_rows(const pa_copy_plan *p, pa_error *err)
{
    if (pa_copy_is_store(p->dir) && (p->l.row_bytes == 0 || p->l.unit == 0))
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "the box lays out rows of 0 bytes (data type %d, interleave %d): no copy can place it",
                       (int)p->map.dtype, (int)p->map.interleave);
    return PA_OK;
}

int pa_tile_make(pa_copy_plan *p, pa_error *err)
{
    int rc = pa_tile_start_rules(&p->map, p->coords, p->map.rank, NULL, pa_copy_is_store(p->dir),
                                 pa_copy_is_store(p->dir) ? "tensor store/reduction" : ".tile", err);
    if (rc || (rc = pa_box_layout_tile(&p->map, &p->l, err)))
        return rc;
    return zero_rows(p, err);
}

/* PTX ISA 5.5.4.1: im2col offsets are 16, 8 and 5 bits wide for 3D, 4D, 5D. */
static const uint32_t offset_limit[PA_MAX_RANK + 1] = {0, 0, 0, 1u << 16, 1u << 8, 1u << 5};

/* Faults an im2col copy raises at issue (docs/im2col-mode.md). */
int pa_im2col_make(pa_copy_plan *p, pa_error *err)
{
    int rc = pa_box_layout_im2col(&p->map, &p->l, err);   /* the kind, rank and type */
    return rc ? rc : pa_im2col_start_rules(p, err);
}

/* Do all of start_rules' checks pass for a non-interleaved .im2col load?
 * One pass over W, H, D (every such load makes them); 0: one fails, or
 * another mode or map, and start_rules names the rule. p->l is planned. */
static inline int im2col_load_passes(const pa_copy_plan *p)
{
    const pa_tensormap *m = &p->map;
    const uint32_t r = m->rank;
    if (p->mode != PA_MODE_IM2COL || m->interleave != PA_INTERLEAVE_NONE || pa_copy_is_store(p->dir) || r < 3 ||
        r > PA_MAX_RANK)
        return 0;
    for (uint32_t i = 0; i + 2 < r; i++) {
        const int64_t c = p->coords[1 + i];
        if (p->info[i] >= offset_limit[r] || c < m->pixel_box_lower[i] ||
            c > (int64_t)m->global_dim[1 + i] - 1 + m->pixel_box_upper[i])
            return 0;
    }
    return (int64_t)p->coords[0] * p->l.esize % 16 == 0;   /* esize: the map type's element bytes */
}

static int start_rules(const pa_copy_plan *p, pa_error *err);

int pa_im2col_start_rules(const pa_copy_plan *p, pa_error *err)
{
    return im2col_load_passes(p) ? PA_OK : start_rules(p, err);
}

static int start_rules(const pa_copy_plan *p, pa_error *err)
{
    const pa_tensormap *m = &p->map;
    const int32_t *coords = p->coords;
    int rc;
    const uint32_t r = m->rank;
    const int il = m->interleave != PA_INTERLEAVE_NONE;
    if (p->mode == PA_MODE_IM2COL) {
        for (uint32_t i = 0; i + 2 < r; i++)
            if (p->info[i] >= offset_limit[r])
                return pa_fail(err, PA_ERR_INVALID_VALUE,
                               "im2col offset %u = %u is outside [0, %u] for a %uD copy "
                               "(PTX ISA 5.5.4.1)", i, p->info[i], offset_limit[r] - 1, r);
    } else {
        /* PTX ISA cp.async.bulk.tensor, .im2col_no_offs in the store direction:
         * "Bounding-Box Lower-Corner must be non-negative. Bounding-Box
         * Upper-Corner must be non-positive", and coordinates non-negative. The
         * 23 recorded stores and reductions that broke one of these raised
         * IllegalInstruction (golden observation 10). */
        for (uint32_t i = 0; i < r; i++)
            if (coords[i] < 0)
                return pa_tile_start_rules(m, coords, r, NULL, 1, ".im2col_no_offs", err);
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
    if ((rc = pa_tile_start_rules(m, coords, r, NULL, 0, pa_mode_name(p->mode), err)))
        return rc;
    return zero_rows(p, err);
}

/* ---- loads ---------------------------------------------------------------- */

/* n whole rows of global memory, `stride` bytes apart, into shared memory at
 * pre-swizzle addresses a, a + pitch, ...; the rows PA_PREFETCH_ROWS ahead are
 * prefetched (box rows are far apart in global memory: overlapping their
 * cache misses is most of the speed of a load). */
#define PREFETCH_ROWS PA_PREFETCH_ROWS
#define prefetch_row pa_prefetch_row

/* pa_tf32_round without a branch (vectorisable) */
static inline uint32_t tf32_word(uint32_t b)
{
    uint32_t r = (b + 0xFFFu + ((b >> 13) & 1u)) & ~0x1FFFu;
    return (b & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFE000u : r;
}

/* TF32 rows are rounded (observation 4) 128 bytes at a time on the way in. */
static void put_row_tf32(const pa_swz_view *v, uint32_t a, const uint8_t *src, uint32_t n)
{
    uint32_t w[32];
    for (; n >= 128; n -= 128, a += 128, src += 128) {
        memcpy(w, src, 128);
        for (uint32_t i = 0; i < 32; i++)
            w[i] = tf32_word(w[i]);
        pa_rows_copy(v, a, (uint8_t *)w, 128, 1);
    }
    for (uint32_t i = 0; i < n / 4; i++) {
        memcpy(&w[i], src + 4 * i, 4);
        w[i] = tf32_word(w[i]);
    }
    if (n)
        pa_rows_copy(v, a, (uint8_t *)w, n, 1);
}

static void put_rows(const pa_swz_view *v, uint32_t a, uint32_t pitch, const uint8_t *src, int64_t stride,
                     uint32_t n, uint32_t row_bytes, int round_tf32)
{
    /* Rows that follow each other in global and in unswizzled shared memory
     * are one run of bytes: the C library's memcpy moves it (on the AMD
     * machine, from L3, 64-byte vector loops reach 0.84-0.86 of it:
     * docs/performance.md). */
    if (v->sw == PA_SWIZZLE_NONE && stride == (int64_t)row_bytes && pitch == row_bytes && !round_tf32) {
        memcpy(v->smem + a, src, (size_t)n * row_bytes);
        return;
    }
    /* the first rows, when far enough apart that the hardware does not follow them (rows.h) */
    if (pa_prefetch_ahead(PREFETCH_ROWS + 1, stride))
        pa_prefetch_rows(src, stride, n < PREFETCH_ROWS ? n : PREFETCH_ROWS, row_bytes);
    const uint32_t ahead = n > PREFETCH_ROWS ? n - PREFETCH_ROWS : 0;   /* rows with one to prefetch */
    const int64_t pf = (int64_t)PREFETCH_ROWS * stride;
    if (row_bytes == 128 && pitch == 128 &&
        (v->sw == PA_SWIZZLE_NONE || (v->atom == 16 && a % 128 == 0))) {   /* one line a row */
        v->lines_in(v->smem, v->xtab, a, src, stride, n, round_tf32);
        return;
    }
    for (uint32_t r = 0; r < n; r++, a += pitch, src += stride) {
        if (r < ahead)
            prefetch_row(src + pf, row_bytes);
        if (round_tf32)
            put_row_tf32(v, a, src, row_bytes);
        else   /* read only: the cast serves the two-way signature */
            pa_rows_copy(v, a, (uint8_t *)src, row_bytes, 1);
    }
}

/* Global address of item k0 of a row at byte offset `off` (dims >= 1);
 * k0 is an in-bounds item (index >= 0). Saturates rather than wraps (memory.h). */
static uint64_t item_addr(const pa_tensormap *m, const pa_box_layout *l, uint64_t off, int64_t c0,
                          uint32_t k0)
{
    return pa_gaddr(m->global_address, off, (uint64_t)(c0 + (int64_t)k0 * l->step0), l->unit);
}

/* The buffer that held the last row: rows of one box almost always share it. */
typedef struct {
    uint64_t base, size;
    uint8_t *data;
} buf_cache;

static inline const uint8_t *resolve_cached(buf_cache *c, const pa_global *g, uint64_t addr, uint64_t len,
                                            pa_error *err)
{
    if (addr - c->base < c->size && len <= c->size - (addr - c->base))
        return c->data + (addr - c->base);
    const pa_gbuf *b = pa_global_find(g, addr);
    if (b)
        *c = (buf_cache){b->base, b->size, b->data};
    return pa_global_resolve(g, addr, len, err);
}

/* Build the image of a row that is in bounds in dims >= 1 but not whole in
 * dim 0 (or strided): fill for out-of-bounds items, the global bytes for
 * in-bounds ones (one run when contiguous), TF32 rounding of loaded f32
 * values (observation 4; fill values are not rounded). */
static int build_row(const pa_tensormap *m, const pa_box_layout *l, const pa_global *g, buf_cache *bc,
                     uint8_t *buf, uint64_t off, int64_t c0, uint32_t lo, uint32_t hi, int nan_fill,
                     pa_error *err)
{
    const uint32_t u = l->unit;
    pa_rows_fill(buf, (size_t)lo * u, nan_fill);
    uint32_t per = l->step0 == 1 ? hi - lo : 1;
    for (uint32_t k = lo; k < hi; k += per) {
        const uint8_t *src = resolve_cached(bc, g, item_addr(m, l, off, c0, k), (uint64_t)per * u, err);
        if (!src)
            return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
        memcpy(buf + (size_t)k * u, src, (size_t)per * u);
    }
    if (pa_is_tf32(m->dtype))
        pa_rows_tf32(buf + (size_t)lo * u, (hi - lo) * u);
    pa_rows_fill(buf + (size_t)hi * u, (size_t)(l->n[0] - hi) * u, nan_fill);
    return PA_OK;
}

/* Is every row of a tile box out of bounds (all fill)? Either dim 0 has no
 * item inside, or a dim >= 1 lies wholly below 0 or at/after globalDim.
 * (Strides that step over the tensor are left to the row walk.) */
static int box_all_fill(const pa_walk *w, uint32_t lo, uint32_t hi)
{
    if (lo == hi)
        return 1;
    if (w->im2col)
        return 0;
    for (uint32_t i = w->first; i <= w->last; i++) {
        int64_t last = w->g[i] + (int64_t)(w->n[i] - 1) * w->step[i];
        if (last < 0 || (w->g[i] >= 0 && (uint64_t)w->g[i] >= w->dim[i]))
            return 1;
    }
    return 0;
}

/* Whole rows of a tile box: in each dim >= 1 the rows inside the tensor are
 * the box indices [klo, khi); when the global range of those rows lies in one
 * buffer, returns the bytes of the first of them (k = klo), else NULL. */
static const uint8_t *box_rows(const pa_tensormap *m, const pa_box_layout *l, const pa_walk *w,
                               const pa_global *g, uint32_t klo[PA_MAX_RANK], uint32_t khi[PA_MAX_RANK])
{
    if (w->im2col)
        return NULL;
    uint64_t lo = 0, hi = 0;
    for (uint32_t d = w->first; d <= w->last; d++) {
        pa_dim0_range(w->g[d], (uint32_t)w->step[d], w->n[d], w->dim[d], &klo[d], &khi[d]);
        if (klo[d] == khi[d])
            return NULL;
        lo += (uint64_t)(w->g[d] + (int64_t)klo[d] * w->step[d]) * w->bytes[d];
        hi += (uint64_t)(w->g[d] + (int64_t)(khi[d] - 1) * w->step[d]) * w->bytes[d];
    }
    return pa_global_resolve(g, item_addr(m, l, lo, w->c0, 0), hi - lo + l->row_bytes, NULL);
}

/* The shared-memory side of a load: where box row r goes (dst + r * pitch,
 * row_bytes of it, through the swizzle) and what its fill is. */
typedef struct {
    const pa_swz_view *sv;
    uint32_t dst, pitch, row_bytes;
    int nan_fill;
    int in_place;   /* fill rows cover whole 128-byte lines: see pa_rows_fill_box */
} box_out;

static void fill_rows(const box_out *o, uint64_t from, uint64_t to)
{
    pa_rows_fill_box(o->sv, o->dst, o->pitch, o->row_bytes, from, to, o->nan_fill, o->in_place);
}

/* Whole rows of a tile box whose in-bounds rows lie in one buffer (box_rows):
 * the in-bounds indices [klo, khi) of each dim >= 2 are walked by an
 * odometer, and each position is one run of khi[1] - klo[1] rows along dim 1,
 * a fixed stride apart in global memory and consecutive in shared memory; the
 * rows between runs are fill. No per-row bounds check or buffer lookup. n:
 * the box's rows per dim, carry: the global bytes between two of them, last:
 * the outermost dim. */
static void load_direct(const box_out *o, uint32_t last, const uint32_t n[PA_MAX_RANK],
                        const int64_t carry[PA_MAX_RANK], const uint8_t *direct, const uint32_t klo[PA_MAX_RANK],
                        const uint32_t khi[PA_MAX_RANK], uint64_t rows, int round_tf32)
{
    uint32_t k[PA_MAX_RANK];
    for (uint32_t d = 0; d < PA_MAX_RANK; d++)
        k[d] = klo[d];
    const uint32_t run = last >= 1 ? khi[1] - klo[1] : 1;   /* rank 1: one row */
    const int64_t stride = last >= 1 ? carry[1] : 0;
    uint64_t gap = 0;   /* the first row not yet written */
    for (;;) {
        uint64_t row = 0;
        int64_t rel = 0;   /* bytes from the first in-bounds row */
        for (uint32_t d = last; d >= 1; d--) {
            row = row * n[d] + k[d];
            rel += (int64_t)(k[d] - klo[d]) * carry[d];
        }
        fill_rows(o, gap, row);
        put_rows(o->sv, o->dst + (uint32_t)(row * o->pitch), o->pitch, direct + rel, stride, run, o->row_bytes,
                 round_tf32);
        gap = row + run;
        uint32_t d = 2;
        while (d <= last && ++k[d] == khi[d]) {
            k[d] = klo[d];
            d++;
        }
        if (d > last)
            break;
    }
    fill_rows(o, gap, rows);
}

/* An im2col column of whole pixels (non-interleaved): the pixels along W
 * from the current one to the end of the bounding box's W line, or to the
 * tensor's edge, are a run a fixed stride apart in global memory (one buffer
 * lookup, the rows prefetched ahead); a padding pixel is a fill row. A run
 * whose bytes are not all in one buffer is cut to one pixel, resolved alone
 * (a missing one faults as in the row walk). A run whose first pixel follows
 * the last one's bytes at the same stride (the next W line of a dense image)
 * joins it: the rows move in one call of the line mover. */
typedef struct {
    const uint8_t *src;
    int64_t stride;
    uint64_t row, n;   /* the first box row, the number of rows */
} pixel_run;

static void put_run(const box_out *o, pixel_run *p, int round_tf32)
{
    if (p->n)
        put_rows(o->sv, o->dst + (uint32_t)(p->row * o->pitch), o->pitch, p->src, p->stride, (uint32_t)p->n,
                 o->row_bytes, round_tf32);
    p->n = 0;
}

static int load_pixels(const box_out *o, const pa_tensormap *m, const pa_box_layout *l, pa_walk *w,
                       const pa_global *g, int round_tf32, pa_error *err)
{
    const uint32_t W = w->walk_lo;
    const int64_t s = w->step[W];
    buf_cache bc = {0, 0, NULL};
    pixel_run p = {NULL, 0, 0, 0};
    for (uint64_t row = 0; row < l->rows;) {
        uint64_t off;
        if (!pa_walk_row(w, &off)) {
            fill_rows(o, row, row + 1);
            pa_walk_next(w);
            row++;
            continue;
        }
        const int64_t x = w->g[W] + w->off[W];   /* in [0, dim) here */
        const int64_t to_end = w->hi[W] - w->g[W], to_edge = (int64_t)w->dim[W] - 1 - x;
        uint64_t run = (uint64_t)(s == 1 ? to_end : to_end / s) + 1;             /* to the W line's end */
        const uint64_t inside = (uint64_t)(s == 1 ? to_edge : to_edge / s) + 1;  /* to the tensor's edge */
        if (run > inside)
            run = inside;
        if (run > l->rows - row)
            run = l->rows - row;
        const uint64_t addr = item_addr(m, l, off, w->c0, 0);
        const int64_t stride = s * (int64_t)w->bytes[W];
        const uint8_t *src = resolve_cached(&bc, g, addr, (run - 1) * (uint64_t)stride + l->row_bytes, NULL);
        if (!src) {
            run = 1;
            if (!(src = resolve_cached(&bc, g, addr, l->row_bytes, err))) {
                put_run(o, &p, round_tf32);   /* the pixels before the fault are written */
                return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
            }
        }
        if (p.n && (stride != p.stride || row != p.row + p.n || src != p.src + (int64_t)p.n * stride))
            put_run(o, &p, round_tf32);
        if (p.n)
            p.n += run;
        else
            p = (pixel_run){src, stride, row, run};
        w->g[W] += (int64_t)(run - 1) * s;
        pa_walk_next(w);
        row += run;
    }
    put_run(o, &p, round_tf32);
    return PA_OK;
}

/* Other boxes (partial or strided rows, im2col, rows in several buffers):
 * rows are resolved a batch at a time - a pointer to the global row when it
 * is whole, an image built in the stage when it is partly out of bounds in
 * dim 0, NULL for a row that is all fill - then placed in shared memory while
 * the rows a few ahead are prefetched (the first rows of a batch are
 * prefetched as they resolve). */
#define LOAD_BATCH_ROWS 256
#define STAGE_BYTES 16384

static int load_walk(const box_out *op, const pa_tensormap *m, const pa_box_layout *lp, pa_walk *w,
                     const pa_global *g, uint32_t lo, uint32_t hi, int whole, int round_tf32, pa_error *err);

int pa_tile_load_box(const pa_tensormap *m, const pa_box_layout *lp, pa_walk *w, const pa_global *g,
                     pa_smem_view smem, uint32_t dst, pa_error *err)
{
    const pa_box_layout l = *lp;
    if (l.row_bytes == 0)   /* nothing to move (a map only a fuzzer makes) */
        return PA_OK;
    uint32_t lo, hi;
    pa_dim0_range(w->c0, l.step0, l.n[0], w->limit0, &lo, &hi);
    /* A row is read straight from global memory when all of it is in bounds
     * and contiguous (TF32 values are rounded on the way in). */
    const int whole = lo == 0 && hi == l.n[0] && l.step0 == 1;
    const int round_tf32 = whole && pa_is_tf32(m->dtype);
    pa_swz_view sv;
    pa_swz_init(&sv, smem.base, l.swizzle);
    const box_out o = {&sv, dst, l.pitch, l.row_bytes, m->oob_fill == PA_OOB_FILL_NAN_REQUEST_ZERO_FMA,
                       l.pitch == l.row_bytes &&
                           (l.swizzle == PA_SWIZZLE_NONE || (dst % 128 == 0 && l.row_bytes % 128 == 0))};
    if (o.in_place && box_all_fill(w, lo, hi)) {   /* nothing to read: no walk */
        fill_rows(&o, 0, l.rows);
        return PA_OK;
    }
    uint32_t klo[PA_MAX_RANK] = {0}, khi[PA_MAX_RANK] = {0};
    const uint8_t *direct = whole ? box_rows(m, &l, w, g, klo, khi) : NULL;
    if (direct) {
        int64_t carry[PA_MAX_RANK];
        for (uint32_t d = 0; d < PA_MAX_RANK; d++)
            carry[d] = w->step[d] * (int64_t)w->bytes[d];
        load_direct(&o, w->last, w->n, carry, direct, klo, khi, l.rows, round_tf32);
        return PA_OK;
    }
    if (whole && w->im2col && w->first == 1)
        return load_pixels(&o, m, &l, w, g, round_tf32, err);
    return load_walk(&o, m, &l, w, g, lo, hi, whole, round_tf32, err);
}

/* The batched row walk of pa_tile_load_box, apart: its 18 KiB of stage and
 * row pointers stay off the stack of the whole-row paths. */
static __attribute__((noinline)) int load_walk(const box_out *op, const pa_tensormap *m, const pa_box_layout *lp,
                                               pa_walk *w, const pa_global *g, uint32_t lo, uint32_t hi, int whole,
                                               int round_tf32, pa_error *err)
{
    const box_out o = *op;
    const pa_box_layout l = *lp;
    const pa_swz_view sv = *o.sv;
    const uint32_t dst = o.dst;
    int rc = PA_OK;
    /* the stage: images of partial rows */
    uint8_t stage_local[STAGE_BYTES], *stage = stage_local;
    uint32_t batch = STAGE_BYTES / l.row_bytes;
    if (l.row_bytes > STAGE_BYTES) {
        if (!(stage = malloc(l.row_bytes)))
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a tile load");
        batch = 1;
    }
    if (batch > LOAD_BATCH_ROWS)
        batch = LOAD_BATCH_ROWS;
    const uint8_t *src[LOAD_BATCH_ROWS];
    buf_cache bc = {0, 0, NULL};
    for (uint64_t first = 0; first < l.rows && !rc; first += batch) {
        uint32_t count = l.rows - first < batch ? (uint32_t)(l.rows - first) : batch;
        for (uint32_t i = 0; i < count && !rc; i++, pa_walk_next(w)) {
            uint64_t off = 0;
            if (!pa_walk_row(w, &off) || lo == hi) {
                src[i] = NULL;
            } else if (whole) {
                src[i] = resolve_cached(&bc, g, item_addr(m, &l, off, w->c0, 0), l.row_bytes, err);
                if (!src[i])
                    rc = err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
                else if (i < PREFETCH_ROWS)
                    prefetch_row(src[i], l.row_bytes);
            } else {
                uint8_t *row = stage + (size_t)i * l.row_bytes;
                src[i] = row;
                rc = build_row(m, &l, g, &bc, row, off, w->c0, lo, hi, o.nan_fill, err);
            }
        }
        for (uint32_t i = 0; i < count && !rc;) {
            if (!src[i]) {   /* a run of fill rows */
                uint32_t j = i + 1;
                while (j < count && !src[j])
                    j++;
                fill_rows(&o, first + i, first + j);
                i = j;
                continue;
            }
            if (i + PREFETCH_ROWS < count && src[i + PREFETCH_ROWS])
                prefetch_row(src[i + PREFETCH_ROWS], l.row_bytes);
            put_rows(&sv, dst + (uint32_t)((first + i) * l.pitch), l.pitch, src[i], 0, 1, l.row_bytes, round_tf32);
            i++;
        }
    }
    if (stage != stage_local)
        free(stage);
    return rc;
}

/* The walk of a planned .tile / .im2col / .im2col_no_offs box. */
static void walk_of(const pa_copy_plan *p, pa_walk *w)
{
    if (p->mode == PA_MODE_TILE)
        pa_walk_tile(w, &p->map, &p->l, p->coords);
    else
        pa_walk_im2col(w, &p->map, p->coords, p->mode == PA_MODE_IM2COL ? p->info : NULL);
}

/* The box's dim-0 items from c0 on all inside the tensor. */
static inline int dim0_inside(const pa_tensormap *m, const pa_box_layout *l, int64_t c0)
{
    return c0 >= 0 && (uint64_t)c0 <= m->global_dim[0] && m->global_dim[0] - (uint64_t)c0 >= l->n[0];
}

/* A .tile box wholly inside the tensor, its rows whole and contiguous, all in
 * one buffer (a GEMM's every load): pa_tile_load_box would find no fill and
 * box_rows klo = 0, khi = n in every dim, so load_direct's runs of n[1] rows
 * follow one another with no fill between them. The same conditions, sums
 * and row moves without the walk's set-up. 0: any other box, which the walk
 * takes. */
static int load_inside(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst)
{
    const pa_tensormap *m = &p->map;
    const pa_box_layout *l = &p->l;
    const int64_t c0 = p->coords[0];
    if (p->mode != PA_MODE_TILE || l->row_bytes == 0 || l->step0 != 1 || m->rank < 1 || m->rank > PA_MAX_RANK ||
        !dim0_inside(m, l, c0))
        return 0;
    const uint32_t last = m->rank - 1;
    int64_t carry[PA_MAX_RANK] = {0};
    uint64_t lo = 0, hi = 0;
    for (uint32_t d = 1; d <= last; d++) {   /* box_rows' sums, every row inside */
        const int64_t gd = p->coords[d], step = (uint32_t)m->element_strides[d];
        const uint64_t bytes = m->global_strides[d - 1];
        if (gd < 0 || l->n[d] == 0 || (uint64_t)(gd + (int64_t)(l->n[d] - 1) * step) >= m->global_dim[d])
            return 0;
        carry[d] = step * (int64_t)bytes;
        lo += (uint64_t)gd * bytes;
        hi += (uint64_t)(gd + (int64_t)(l->n[d] - 1) * step) * bytes;
    }
    const uint8_t *src = pa_global_resolve(g, item_addr(m, l, lo, c0, 0), hi - lo + l->row_bytes, NULL);
    if (!src)
        return 0;
    pa_swz_view sv;
    pa_swz_init(&sv, smem.base, l->swizzle);
    const box_out o = {&sv, dst, l->pitch, l->row_bytes, 0, 0};   /* no fill: every row is inside */
    const uint32_t klo[PA_MAX_RANK] = {0};
    load_direct(&o, last, l->n, carry, src, klo, l->n, l->rows, pa_is_tf32(m->dtype));
    return 1;
}

/* ---- .im2col columns wholly inside the tensor ---- */

/* The pixel walk of a non-interleaved .im2col column (boxwalk.h) is an
 * odometer: W, H, D each step through the bounding box [lo, hi] of its dim,
 * back to lo past hi with a carry into the next, the image N last. */
static int64_t box_lo(const pa_tensormap *m, uint32_t i)
{
    return m->pixel_box_lower[i - 1];
}

static int64_t box_hi(const pa_tensormap *m, uint32_t i)
{
    return (int64_t)m->global_dim[i] - 1 + m->pixel_box_upper[i - 1];
}

/* The values c, c + s, ... up to hi: how many (c <= hi). */
static uint64_t box_count(int64_t c, int64_t hi, int64_t s)
{
    return (uint64_t)(s == 1 ? hi - c : (hi - c) / s) + 1;   /* no division in a dense walk */
}

/* The values a walked dim takes in t steps from c (lo <= c <= hi, as
 * pa_im2col_start_rules has it), stepping by s: their least and greatest;
 * returns the carries into the next dim. */
static uint64_t dim_visits(int64_t c, int64_t lo, int64_t hi, int64_t s, uint64_t t, int64_t *min, int64_t *max)
{
    const uint64_t first = box_count(c, hi, s);
    if (t < first) {
        *min = c;
        *max = c + (int64_t)t * s;
        return 0;
    }
    const uint64_t per = box_count(lo, hi, s), rest = t - first;   /* steps past the first wrap */
    const int64_t top = lo + (int64_t)(rest < per - 1 ? rest : per - 1) * s, end = c + (int64_t)(first - 1) * s;
    *min = lo;
    *max = top > end ? top : end;
    return 1 + rest / per;
}

/* Is every pixel of the column inside the tensor (no padding, no image past
 * N)? Then [*lo, *hi]: byte offsets (dims >= 1) that hold every pixel's
 * first byte, from the least and greatest coordinate of each dim, and *at
 * the first pixel's. */
static int column_range(const pa_copy_plan *p, uint64_t *lo, uint64_t *hi, uint64_t *at)
{
    const pa_tensormap *m = &p->map;
    const uint32_t image = m->rank - 1;
    uint64_t t = p->l.rows - 1;   /* steps of the walk */
    *lo = *hi = *at = 0;
    for (uint32_t i = 1; i <= image; i++) {
        const int64_t c = p->coords[i], s = m->element_strides[i], off = i < image ? p->info[i - 1] : 0;
        int64_t min = c, max = c + (int64_t)t * s;   /* the image dim: no box */
        if (i < image) {
            if (c < box_lo(m, i) || c > box_hi(m, i))
                return 0;
            t = dim_visits(c, box_lo(m, i), box_hi(m, i), s, t, &min, &max);
        }
        if (min + off < 0 || (uint64_t)(max + off) >= m->global_dim[i])
            return 0;
        *lo = pa_gaddr(*lo, 0, (uint64_t)(min + off), m->global_strides[i - 1]);
        *hi = pa_gaddr(*hi, 0, (uint64_t)(max + off), m->global_strides[i - 1]);
        *at += (uint64_t)(c + off) * m->global_strides[i - 1];   /* <= *hi */
    }
    return *hi != PA_GADDR_OVERFLOW;
}

/* From a W line's first pixel (g, before the offsets) to the next line's, as
 * pa_walk_next steps past the line's last: W back to the box's lower W, H
 * and D on as an odometer, past D the image. Returns the byte distance
 * (modulo 2^64: a step may pass the top of a dim before it wraps). */
static uint64_t next_line(const pa_tensormap *m, int64_t g[PA_MAX_RANK])
{
    const uint32_t image = m->rank - 1;
    uint64_t d = 0 - (uint64_t)(g[1] - box_lo(m, 1)) * m->global_strides[0];
    g[1] = box_lo(m, 1);
    for (uint32_t i = 2; i < image; i++) {
        const int64_t s = m->element_strides[i];
        if (g[i] + s <= box_hi(m, i)) {
            g[i] += s;
            return d + (uint64_t)s * m->global_strides[i - 1];
        }
        d -= (uint64_t)(g[i] - box_lo(m, i)) * m->global_strides[i - 1];
        g[i] = box_lo(m, i);
    }
    return d + (uint64_t)m->element_strides[image] * m->global_strides[image - 1];
}

/* The column's W lines into shared memory as runs of rows `stride` apart
 * (the first line from the start pixel, the others whole, the last cut at
 * the column's end), a line joined to the run before it when it follows it
 * in memory (a dense image's consecutive lines). src: the first pixel's
 * bytes. */
static void column_runs(const box_out *o, const pa_copy_plan *p, const uint8_t *src, int round_tf32)
{
    const pa_tensormap *m = &p->map;
    const uint64_t rows = p->l.rows;
    const int64_t s = m->element_strides[1], stride = s * (int64_t)m->global_strides[0];
    const uint64_t per = box_count(box_lo(m, 1), box_hi(m, 1), s);
    int64_t g[PA_MAX_RANK];   /* copied, not zeroed first: `= {0}` compiled to a rep stos, slow to start */
    for (uint32_t i = 0; i < PA_MAX_RANK; i++)
        g[i] = p->coords[i];
    pixel_run run = {src, stride, 0, 0};
    for (uint64_t row = 0, n = box_count(g[1], box_hi(m, 1), s);;) {
        n = n < rows - row ? n : rows - row;
        if (src != run.src + (int64_t)run.n * stride)
            put_run(o, &run, round_tf32);   /* leaves run.n = 0 */
        if (!run.n)
            run = (pixel_run){src, stride, row, 0};
        run.n += n;
        if ((row += n) == rows)
            break;
        src += (int64_t)next_line(m, g);   /* to a pixel inside the buffer */
        n = per;
    }
    put_run(o, &run, round_tf32);
}

/* A non-interleaved .im2col column whose pixels are all inside the tensor,
 * all of their channels too, in one buffer (a convolution's loads away from
 * the image's edges): load_pixels would find no fill and every run in that
 * buffer; its runs are the W lines, joined where one follows the last in
 * memory. The same runs from the plan, without the walk's set-up. 0: any
 * other column, which the walk takes. */
static int column_inside(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst)
{
    const pa_tensormap *m = &p->map;
    const pa_box_layout *l = &p->l;
    const int64_t c0 = p->coords[0];
    uint64_t lo, hi, at;
    if (p->mode != PA_MODE_IM2COL || m->interleave != PA_INTERLEAVE_NONE || l->row_bytes == 0 || l->rows == 0 ||
        m->rank < 3 || m->rank > PA_MAX_RANK || !dim0_inside(m, l, c0) || !column_range(p, &lo, &hi, &at))
        return 0;
    const uint64_t first = item_addr(m, l, lo, c0, 0), last = item_addr(m, l, hi, c0, 0);
    if (last == PA_GADDR_OVERFLOW || last > PA_GADDR_OVERFLOW - l->row_bytes)
        return 0;
    const uint8_t *base = pa_global_resolve(g, first, last - first + l->row_bytes, NULL);
    if (!base)
        return 0;
    pa_swz_view sv;
    pa_swz_init(&sv, smem.base, l->swizzle);
    const box_out o = {&sv, dst, l->pitch, l->row_bytes, 0, 0};   /* no fill */
    column_runs(&o, p, base + (at - lo), pa_is_tf32(m->dtype));
    return 1;
}

int pa_tile_load(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err)
{
    if (p->mode == PA_MODE_TILE ? load_inside(p, g, smem, dst) : column_inside(p, g, smem, dst))
        return PA_OK;
    pa_walk w;
    walk_of(p, &w);
    return pa_tile_load_box(&p->map, &p->l, &w, g, smem, dst, err);
}

/* ---- stores and reductions -------------------------------------------------- */

/* Hand one run of shared bytes (pre-swizzle address a) to global memory:
 * unswizzled straight into gdst (fn NULL: a store), or through a stage to fn
 * (a reduction), one call per run of up to 2 KiB. */
static void store_run(const pa_swz_view *v, uint32_t a, uint8_t *gdst, uint32_t n, pa_run_fn fn, void *ctx)
{
    if (!fn) {
        pa_rows_copy(v, a, gdst, n, 0);
        return;
    }
    if (v->sw == PA_SWIZZLE_NONE) {
        fn(ctx, gdst, v->smem + a, n);
        return;
    }
    _Alignas(64) uint8_t stage[2048];   /* whole lines: the vector line writer's stores (lines.c) */
    while (n) {
        uint32_t len = n < sizeof stage ? n : (uint32_t)sizeof stage;
        pa_rows_copy(v, a, stage, len, 0);
        fn(ctx, gdst, stage, len);
        gdst += len;
        a += len;
        n -= len;
    }
}

#define STORE_BATCH_RUNS 64
#define STORE_PREFETCH_RUNS 8

typedef struct {
    uint8_t *g;           /* global destination */
    uint32_t a, len;      /* pre-swizzle shared address, bytes */
} store_run_t;

typedef struct {
    store_run_t r[STORE_BATCH_RUNS];
    uint32_t n;
} store_runs;

/* A run's global bytes fetched for writing: its first line, the next, and the
 * one holding its end, so every line of a 128-byte row at any 16-byte place
 * (three lines when it is not 64-byte aligned). A row's middle line left to
 * the hardware arrived late on the Intel host, as gather4's reads did
 * (docs/performance.md, round 13). */
static void prefetch_run(const uint8_t *g, uint64_t len)
{
    __builtin_prefetch(g, 1);
    if (len > 64)
        __builtin_prefetch(g + 64, 1);
    __builtin_prefetch(g + len - 1, 1);
}

static void flush_runs(const pa_swz_view *sv, store_runs *q, pa_run_fn fn, void *ctx)
{
    for (uint32_t i = 0; i < q->n; i++) {
        if (i + STORE_PREFETCH_RUNS < q->n)
            prefetch_run(q->r[i + STORE_PREFETCH_RUNS].g, q->r[i + STORE_PREFETCH_RUNS].len);
        store_run(sv, q->r[i].a, q->r[i].g, q->r[i].len, fn, ctx);
    }
    q->n = 0;
}

/* Whole rows of a tile box whose in-bounds rows lie in one buffer (box_rows):
 * as load_direct walks them, each row written straight from shared memory
 * (one line through the vector writer when it is one 128-byte line), the
 * global rows PREFETCH_ROWS ahead fetched for writing; rows outside the
 * tensor are not written. The rows go in the row walk's order, so rows that
 * overlap in global memory end as the walk leaves them. */
static void store_direct(const pa_swz_view *sv, const pa_walk *w, uint8_t *direct, const uint32_t klo[PA_MAX_RANK],
                         const uint32_t khi[PA_MAX_RANK], uint32_t src, uint32_t pitch, uint32_t row_bytes,
                         pa_run_fn fn, void *ctx)
{
    uint32_t k[PA_MAX_RANK];
    int64_t carry[PA_MAX_RANK];
    for (uint32_t d = 0; d < PA_MAX_RANK; d++) {
        k[d] = klo[d];
        carry[d] = w->step[d] * (int64_t)w->bytes[d];
    }
    const uint32_t run = w->last >= 1 ? khi[1] - klo[1] : 1;
    const int64_t stride = w->last >= 1 ? carry[1] : 0;
    const int whole_line = row_bytes == 128 &&
                           (sv->sw == PA_SWIZZLE_NONE || (sv->atom == 16 && src % 128 == 0 && pitch % 128 == 0));
    const int line = !fn && whole_line, line_fn = fn && whole_line && sv->sw != PA_SWIZZLE_NONE;
    for (;;) {
        uint64_t row = 0;
        int64_t rel = 0;
        for (uint32_t d = w->last; d >= 1; d--) {
            row = row * w->n[d] + k[d];
            rel += (int64_t)(k[d] - klo[d]) * carry[d];
        }
        uint8_t *gd = direct + rel;
        uint32_t a = src + (uint32_t)(row * pitch);
        for (uint32_t r = 0; r < run && r < PREFETCH_ROWS; r++)
            prefetch_run(gd + r * stride, row_bytes);
        for (uint32_t r = 0; r < run; r++, gd += stride, a += pitch) {
            if (r + PREFETCH_ROWS < run)
                prefetch_run(gd + PREFETCH_ROWS * stride, row_bytes);
            if (line) {
                sv->line_out(sv->smem, a, sv->xtab[(a >> 7) & 7], gd);
            } else if (line_fn) {   /* the line unswizzled, then handed to fn */
                _Alignas(64) uint8_t stage[128];   /* one line: the vector writer's stores (lines.c) */
                sv->line_out(sv->smem, a, sv->xtab[(a >> 7) & 7], stage);
                fn(ctx, gd, stage, 128);
            } else {
                store_run(sv, a, gd, row_bytes, fn, ctx);
            }
        }
        uint32_t d = 2;
        while (d <= w->last && ++k[d] == khi[d]) {
            k[d] = klo[d];
            d++;
        }
        if (d > w->last)
            break;
    }
}

int pa_tile_store_box(const pa_tensormap *m, const pa_box_layout *lp, pa_walk *w, const pa_global *g,
                      pa_smem_view smem, uint32_t src, pa_run_fn fn, void *ctx, pa_error *err)
{
    const pa_box_layout l = *lp;
    int rc = PA_OK;
    const uint32_t u = l.unit;
    /* Observation 9: dim 0 is written up to the end of the 16-byte chunk that
     * holds the row's last in-bounds byte (exact for interleaved slices). */
    const uint64_t limit = (w->limit0 * u + 15) / 16 * 16 / u;
    uint32_t lo, hi, lo_exact, hi_exact;
    pa_dim0_range(w->c0, l.step0, l.n[0], limit, &lo, &hi);
    pa_dim0_range(w->c0, l.step0, l.n[0], w->limit0, &lo_exact, &hi_exact);
    const uint32_t per = l.step0 == 1 ? UINT32_MAX : 1;
    buf_cache bc = {0, 0, NULL};
    pa_swz_view sv;
    pa_swz_init(&sv, smem.base, l.swizzle);
    if (l.step0 == 1 && lo_exact == 0 && hi_exact == l.n[0] && l.row_bytes) {   /* whole rows */
        uint32_t klo[PA_MAX_RANK] = {0}, khi[PA_MAX_RANK] = {0};
        const uint8_t *direct = box_rows(m, &l, w, g, klo, khi);
        if (direct) {   /* writable: global memory, resolved read-only by box_rows */
            store_direct(&sv, w, (uint8_t *)(uintptr_t)direct, klo, khi, src, l.pitch, l.row_bytes, fn, ctx);
            return PA_OK;
        }
    }
    /* Runs are collected a batch at a time and their global bytes prefetched
     * ahead (a reduction reads them; a store owns their lines sooner): box
     * rows are far apart in global memory. */
    store_runs q;
    q.n = 0;
    for (uint64_t row = 0; row < l.rows && !rc; row++, pa_walk_next(w)) {
        uint64_t off;
        if (!pa_walk_row(w, &off))
            continue;
        uint32_t a = src + (uint32_t)(row * l.pitch);
        for (uint32_t k = lo; k < hi;) {
            uint32_t cnt = per < hi - k ? per : hi - k;
            uint64_t len = (uint64_t)cnt * u;
            uint64_t gaddr = item_addr(m, &l, off, w->c0, k);
            uint8_t *gdst = (uint8_t *)resolve_cached(&bc, g, gaddr, len, NULL);
            if (!gdst) {
                /* The bytes past globalDim[0] may lie past the end of the
                 * registered buffer: only the in-bounds ones must exist. */
                uint32_t end = hi_exact > k ? (hi_exact - k < cnt ? hi_exact - k : cnt) : 0;
                len = (uint64_t)end * u;
                if (end == 0)
                    break;
                if (!(gdst = pa_global_resolve(g, gaddr, len, err))) {
                    rc = err ? err->code : PA_ERR_ILLEGAL_ADDRESS;   /* the runs before it are written */
                    break;
                }
            }
            if (q.n == STORE_BATCH_RUNS)
                flush_runs(&sv, &q, fn, ctx);
            if (q.n < STORE_PREFETCH_RUNS)
                prefetch_run(gdst, len);
            q.r[q.n++] = (store_run_t){gdst, a + k * u, (uint32_t)len};
            k += cnt;
        }
    }
    flush_runs(&sv, &q, fn, ctx);
    return rc;
}

int pa_tile_store(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                  void *ctx, pa_error *err)
{
    pa_walk w;
    walk_of(p, &w);
    return pa_tile_store_box(&p->map, &p->l, &w, g, smem, src, fn, ctx, err);
}

/* ---- what a load reads ------------------------------------------------------ */

int pa_tile_walk_ranges(const pa_tensormap *m, const pa_box_layout *l, pa_walk *w, uint64_t first_row,
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

int pa_tile_ranges(const pa_copy_plan *p, pa_range_fn fn, void *ctx, pa_error *err)
{
    pa_walk w;
    walk_of(p, &w);
    return pa_tile_walk_ranges(&p->map, &p->l, &w, 0, fn, ctx, err);
}
