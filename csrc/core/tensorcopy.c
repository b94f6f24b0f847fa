/* tensorcopy.c - tile-mode box walk (see tensorcopy.h). */
#include "tensorcopy.h"
#include "modes.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

uint32_t pa_tf32_round(uint32_t bits)
{
    if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu))
        return 0x7FFFE000u;                           /* any NaN */
    uint32_t lsb = (bits >> 13) & 1u;                 /* ties to even */
    return (bits + 0xFFFu + lsb) & ~0x1FFFu;          /* carries into the exponent: overflow -> inf */
}

static int is_tf32(pa_dtype d)
{
    return d == PA_DTYPE_TFLOAT32 || d == PA_DTYPE_TFLOAT32_FTZ;
}

int pa_tile_check_coords(const pa_tensormap *m, const int32_t coords[PA_MAX_RANK], int is_store,
                         pa_error *err)
{
    const pa_dtype_info *di = pa_dtype_get(m->dtype);
    if (is_store) {
        /* PTX: "Starting co-ordinates for Bounding Box must be non-negative" (store
         * direction); the hardware raised IllegalInstruction (observation 8). */
        for (uint32_t i = 0; i < m->rank; i++)
            if (coords[i] < 0)
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               "tensor store/reduction coordinate c%u = %d is negative "
                               "(the store direction needs non-negative box coordinates)",
                               i, coords[i]);
    }
    if (m->interleave == PA_INTERLEAVE_NONE) {
        /* Observations 1 and 8: the innermost start offset must be 16-byte aligned. */
        int64_t off = (int64_t)coords[0] * di->elem_bytes;
        if (off % 16 != 0)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "innermost start offset c0 * elemsize = %d * %u = %lld B is not a "
                           "multiple of 16 bytes (the hardware faults)",
                           coords[0], di->elem_bytes, (long long)off);
    }
    return PA_OK;
}

int pa_tile_check_smem(const pa_tensormap *m, const pa_box_layout *l, uint32_t dst,
                       uint32_t smem_size, pa_error *err)
{
    (void)m;
    /* PTX 5.5.3.1: "The address of the bounding Box must also be aligned to 16 bytes";
     * the 128B sub-modes with 32B / 64B atomicity need 32 / 64 (PTX 5.5.7). */
    uint32_t align = 16;
    if (l->swizzle == PA_SWIZZLE_128B_ATOM_32B || l->swizzle == PA_SWIZZLE_128B_ATOM_32B_FLIP_8B)
        align = 32;
    else if (l->swizzle == PA_SWIZZLE_128B_ATOM_64B)
        align = 64;
    if (dst % align)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS,
                       "shared-memory box address 0x%x is not %u-byte aligned", dst, align);
    uint64_t end = (uint64_t)dst + (l->rows ? (l->rows - 1) * l->pitch : 0) + l->row_bytes;
    if (l->swizzle != PA_SWIZZLE_NONE)
        end = (end + 127) & ~(uint64_t)127;   /* a swizzle moves bytes within a 128-byte line */
    if (end > smem_size)
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                       "the box [0x%x, 0x%" PRIx64 ") runs past the end of shared memory (%u bytes)",
                       dst, end, smem_size);
    return PA_OK;
}

/* Fill pattern of out-of-bounds elements (observation 3): zero, or the
 * 16-bit 0x7FF7 repeated for OOB_FILL_NAN_REQUEST_ZERO_FMA. p is even (rows
 * start at even offsets), so byte parity == address parity. */
static void fill_bytes(uint8_t *p, size_t n, int nan_fill)
{
    if (!nan_fill) {
        memset(p, 0, n);
        return;
    }
    uint8_t pat[64];
    for (size_t i = 0; i < sizeof pat; i++)
        pat[i] = (i & 1) ? 0x7F : 0xF7;
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        memcpy(p + i, pat, 64);
    memcpy(p + i, pat, n - i);
}

/* Move `n` bytes of one row between shared memory at pre-swizzle offset a
 * and the contiguous bytes buf (to_smem: into shared memory; else out of it).
 * A swizzle permutes whole atoms (16 bytes; 8 for the flip mode) inside a
 * 128-byte line, so with 16-byte atoms every chunk of one line takes the
 * same XOR:
 *
 *   line L of the box:  | c0 | c1 | .. | c7 |   16-byte chunks of buf
 *   shared memory:      chunk c at ((L*128 + c*16) ^ xor(L))
 *
 * A whole line is read before any of it is written: a store between two
 * loads of far-apart global rows makes the CPU wait on possible aliasing. */
typedef struct { uint8_t b[16]; } chunk16;

#if defined(__GNUC__)
#define PA_INLINE inline __attribute__((always_inline))   /* the per-row hot path */
#else
#define PA_INLINE inline
#endif

/* Shared memory as one copy sees it: the swizzle's XOR of each of the 8
 * lines of its repeat (every mode XORs address bits [7, 10) into lower ones),
 * looked up once per copy instead of per line. */
typedef struct {
    uint8_t *smem;
    pa_swizzle sw;
    uint32_t atom;
    uint32_t xtab[8];
} swz_view;

static void swz_init(swz_view *v, uint8_t *smem, pa_swizzle sw)
{
    v->smem = smem;
    v->sw = sw;
    v->atom = pa_swizzle_atom(sw);
    for (uint32_t line = 0; line < 8; line++)
        v->xtab[line] = pa_swizzle_xor(sw, line);
}

static PA_INLINE void swizzled_copy(const swz_view *v, uint32_t a, uint8_t *buf, uint32_t n, int to_smem)
{
    uint8_t *const smem = v->smem;
    if (v->sw == PA_SWIZZLE_NONE) {
        if (to_smem)
            memcpy(smem + a, buf, n);
        else
            memcpy(buf, smem + a, n);
        return;
    }
    const uint32_t atom = v->atom;
    if (atom == 16 && (a & 15) == 0) {
        while (n >= 16) {
            uint32_t len = 128 - (a & 127);
            if (len > (n & ~15u))
                len = n & ~15u;
            const uint32_t x = v->xtab[(a >> 7) & 7];
            if (len == 128) {   /* eight named chunks: the line stays in registers */
                chunk16 t0, t1, t2, t3, t4, t5, t6, t7;
                uint8_t *s = to_smem ? buf : smem;   /* read side, then write side */
                uint8_t *d = to_smem ? smem : buf;
#define PA_LINE_ADDR(c) (to_smem ? (size_t)16 * (c) : (size_t)((a + 16 * (c)) ^ x))
#define PA_LINE_DEST(c) (to_smem ? (size_t)((a + 16 * (c)) ^ x) : (size_t)16 * (c))
                memcpy(&t0, s + PA_LINE_ADDR(0), 16);
                memcpy(&t1, s + PA_LINE_ADDR(1), 16);
                memcpy(&t2, s + PA_LINE_ADDR(2), 16);
                memcpy(&t3, s + PA_LINE_ADDR(3), 16);
                memcpy(&t4, s + PA_LINE_ADDR(4), 16);
                memcpy(&t5, s + PA_LINE_ADDR(5), 16);
                memcpy(&t6, s + PA_LINE_ADDR(6), 16);
                memcpy(&t7, s + PA_LINE_ADDR(7), 16);
                memcpy(d + PA_LINE_DEST(0), &t0, 16);
                memcpy(d + PA_LINE_DEST(1), &t1, 16);
                memcpy(d + PA_LINE_DEST(2), &t2, 16);
                memcpy(d + PA_LINE_DEST(3), &t3, 16);
                memcpy(d + PA_LINE_DEST(4), &t4, 16);
                memcpy(d + PA_LINE_DEST(5), &t5, 16);
                memcpy(d + PA_LINE_DEST(6), &t6, 16);
                memcpy(d + PA_LINE_DEST(7), &t7, 16);
#undef PA_LINE_ADDR
#undef PA_LINE_DEST
            } else {
                for (uint32_t c = 0; c < len / 16; c++) {
                    uint8_t *sp = smem + ((a + 16 * c) ^ x);
                    if (to_smem)
                        memcpy(sp, buf + 16 * c, 16);
                    else
                        memcpy(buf + 16 * c, sp, 16);
                }
            }
            a += len;
            buf += len;
            n -= len;
        }
    }
    while (n) {
        uint32_t len = atom - (a & (atom - 1));   /* atoms are powers of two */
        if (len > n)
            len = n;
        const uint32_t at = a ^ v->xtab[(a >> 7) & 7];
        if (to_smem)
            memcpy(smem + at, buf, len);
        else
            memcpy(buf, smem + at, len);
        buf += len;
        a += len;
        n -= len;
    }
}

/* pa_tf32_round without a branch (vectorisable) */
static inline uint32_t tf32_word(uint32_t b)
{
    uint32_t r = (b + 0xFFFu + ((b >> 13) & 1u)) & ~0x1FFFu;
    return (b & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFE000u : r;
}

/* TF32 rows are rounded (observation 4) 128 bytes at a time on the way in. */
static void put_row_tf32(const swz_view *v, uint32_t a, const uint8_t *src, uint32_t n)
{
    uint32_t w[32];
    for (; n >= 128; n -= 128, a += 128, src += 128) {
        memcpy(w, src, 128);
        for (uint32_t i = 0; i < 32; i++)
            w[i] = tf32_word(w[i]);
        swizzled_copy(v, a, (uint8_t *)w, 128, 1);
    }
    for (uint32_t i = 0; i < n / 4; i++) {
        memcpy(&w[i], src + 4 * i, 4);
        w[i] = tf32_word(w[i]);
    }
    if (n)
        swizzled_copy(v, a, (uint8_t *)w, n, 1);
}

/* One 128-byte line into shared memory at line-aligned pre-swizzle address
 * a, its chunk c at (a + 16c) ^ x: the swizzle of 16-byte atoms, with x the
 * line's XOR (swz_view.xtab). All eight loads come before the stores. */
static PA_INLINE void put_line(uint8_t *smem, uint32_t a, uint32_t x, const uint8_t *src)
{
    chunk16 t0, t1, t2, t3, t4, t5, t6, t7;   /* named: the line stays in registers */
    memcpy(&t0, src, 16);
    memcpy(&t1, src + 16, 16);
    memcpy(&t2, src + 32, 16);
    memcpy(&t3, src + 48, 16);
    memcpy(&t4, src + 64, 16);
    memcpy(&t5, src + 80, 16);
    memcpy(&t6, src + 96, 16);
    memcpy(&t7, src + 112, 16);
    memcpy(smem + (a ^ x), &t0, 16);
    memcpy(smem + ((a + 16) ^ x), &t1, 16);
    memcpy(smem + ((a + 32) ^ x), &t2, 16);
    memcpy(smem + ((a + 48) ^ x), &t3, 16);
    memcpy(smem + ((a + 64) ^ x), &t4, 16);
    memcpy(smem + ((a + 80) ^ x), &t5, 16);
    memcpy(smem + ((a + 96) ^ x), &t6, 16);
    memcpy(smem + ((a + 112) ^ x), &t7, 16);
}

/* n whole rows of global memory, `stride` bytes apart, into shared memory at
 * pre-swizzle addresses a, a + pitch, ...; the rows PREFETCH_ROWS ahead are
 * prefetched (box rows are far apart in global memory: overlapping their
 * cache misses is most of the speed of a load). Not further: the rows of a
 * box column a power-of-two pitch apart share one L1 set (8 ways on the
 * machines measured), so rows fetched far ahead are evicted before their
 * turn; 8 ahead measured faster than 16 (docs/performance.md). */
#define PREFETCH_ROWS 8

static void prefetch_row(const uint8_t *src, uint32_t row_bytes)
{
    __builtin_prefetch(src);
    if (row_bytes > 64)
        __builtin_prefetch(src + 64);   /* the row's second cache line */
}

static void put_rows(const swz_view *v, uint32_t a, uint32_t pitch, const uint8_t *src, int64_t stride,
                     uint32_t n, uint32_t row_bytes, int round_tf32)
{
    for (uint32_t r = 0; r < n && r < PREFETCH_ROWS; r++)
        prefetch_row(src + r * stride, row_bytes);
    const uint32_t ahead = n > PREFETCH_ROWS ? n - PREFETCH_ROWS : 0;   /* rows with one to prefetch */
    const int64_t pf = (int64_t)PREFETCH_ROWS * stride;
    if (!round_tf32 && row_bytes == 128 && pitch == 128 &&
        (v->sw == PA_SWIZZLE_NONE || (v->atom == 16 && a % 128 == 0))) {   /* one line a row */
        for (uint32_t r = 0; r < n; r++, a += 128, src += stride) {
            if (r < ahead)
                prefetch_row(src + pf, 128);
            put_line(v->smem, a, v->xtab[(a >> 7) & 7], src);
        }
        return;
    }
    for (uint32_t r = 0; r < n; r++, a += pitch, src += stride) {
        if (r < ahead)
            prefetch_row(src + pf, row_bytes);
        if (round_tf32)
            put_row_tf32(v, a, src, row_bytes);
        else   /* read only: the cast serves the two-way signature */
            swizzled_copy(v, a, (uint8_t *)src, row_bytes, 1);
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
    fill_bytes(buf, (size_t)lo * u, nan_fill);
    uint32_t per = l->step0 == 1 ? hi - lo : 1;
    for (uint32_t k = lo; k < hi; k += per) {
        const uint8_t *src = resolve_cached(bc, g, item_addr(m, l, off, c0, k), (uint64_t)per * u, err);
        if (!src)
            return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
        memcpy(buf + (size_t)k * u, src, (size_t)per * u);
    }
    if (is_tf32(m->dtype))
        for (uint32_t i = lo * u; i < hi * u; i += 4) {
            uint32_t v;
            memcpy(&v, buf + i, 4);
            v = pa_tf32_round(v);
            memcpy(buf + i, &v, 4);
        }
    fill_bytes(buf + (size_t)hi * u, (size_t)(l->n[0] - hi) * u, nan_fill);
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
    const swz_view *sv;
    uint32_t dst, pitch, row_bytes;
    int nan_fill;
    int in_place;   /* fill rows cover whole 128-byte lines: see load_box */
} box_out;

/* Rows [from, to) of the box are fill: one run in place, else each row's
 * bytes through the swizzle. */
static void fill_rows(const box_out *o, uint64_t from, uint64_t to)
{
    if (from >= to)
        return;
    if (o->in_place) {
        fill_bytes(o->sv->smem + o->dst + from * o->pitch, (size_t)(to - from) * o->row_bytes, o->nan_fill);
        return;
    }
    uint8_t pat[256];
    fill_bytes(pat, sizeof pat, o->nan_fill);
    for (uint64_t r = from; r < to; r++)
        for (uint32_t done = 0; done < o->row_bytes; done += sizeof pat) {
            uint32_t len = o->row_bytes - done < sizeof pat ? o->row_bytes - done : (uint32_t)sizeof pat;
            swizzled_copy(o->sv, o->dst + (uint32_t)(r * o->pitch) + done, pat, len, 1);
        }
}

/* Whole rows of a tile box whose in-bounds rows lie in one buffer (box_rows):
 * the in-bounds indices [klo, khi) of each dim >= 2 are walked by an
 * odometer, and each position is one run of khi[1] - klo[1] rows along dim 1,
 * a fixed stride apart in global memory and consecutive in shared memory; the
 * rows between runs are fill. No per-row bounds check or buffer lookup. */
static void load_direct(const box_out *o, const pa_walk *w, const uint8_t *direct, const uint32_t klo[PA_MAX_RANK],
                        const uint32_t khi[PA_MAX_RANK], uint64_t rows, int round_tf32)
{
    uint32_t k[PA_MAX_RANK];
    int64_t carry[PA_MAX_RANK];
    for (uint32_t d = 0; d < PA_MAX_RANK; d++) {
        k[d] = klo[d];
        carry[d] = w->step[d] * (int64_t)w->bytes[d];
    }
    const uint32_t run = w->last >= 1 ? khi[1] - klo[1] : 1;   /* rank 1: one row */
    const int64_t stride = w->last >= 1 ? carry[1] : 0;
    uint64_t gap = 0;   /* the first row not yet written */
    for (;;) {
        uint64_t row = 0;
        int64_t rel = 0;   /* bytes from the first in-bounds row */
        for (uint32_t d = w->last; d >= 1; d--) {
            row = row * w->n[d] + k[d];
            rel += (int64_t)(k[d] - klo[d]) * carry[d];
        }
        fill_rows(o, gap, row);
        put_rows(o->sv, o->dst + (uint32_t)(row * o->pitch), o->pitch, direct + rel, stride, run, o->row_bytes,
                 round_tf32);
        gap = row + run;
        uint32_t d = 2;
        while (d <= w->last && ++k[d] == khi[d]) {
            k[d] = klo[d];
            d++;
        }
        if (d > w->last)
            break;
    }
    fill_rows(o, gap, rows);
}

/* Other boxes (partial or strided rows, im2col, rows in several buffers):
 * rows are resolved a batch at a time - a pointer to the global row when it
 * is whole, an image built in the stage when it is partly out of bounds in
 * dim 0, NULL for a row that is all fill - then placed in shared memory while
 * the rows a few ahead are prefetched (the first rows of a batch are
 * prefetched as they resolve). */
#define LOAD_BATCH_ROWS 256
#define STAGE_BYTES 16384

static int load_box(const pa_tensormap *m, const pa_box_layout *lp, pa_walk *w, const pa_global *g,
                    pa_smem_view smem, uint32_t dst, pa_error *err)
{
    const pa_box_layout l = *lp;
    int rc = pa_tile_check_smem(m, &l, dst, smem.size, err);
    if (rc)
        return rc;
    if (l.row_bytes == 0)   /* nothing to move (a map only a fuzzer makes) */
        return PA_OK;
    uint32_t lo, hi;
    pa_dim0_range(w->c0, l.step0, l.n[0], w->limit0, &lo, &hi);
    /* A row is read straight from global memory when all of it is in bounds
     * and contiguous (TF32 values are rounded on the way in). */
    const int whole = lo == 0 && hi == l.n[0] && l.step0 == 1;
    const int round_tf32 = whole && is_tf32(m->dtype);
    swz_view sv;
    swz_init(&sv, smem.base, l.swizzle);
    /* Fill rows that cover whole 128-byte lines look the same under every
     * swizzle (atoms move inside a line; the pattern repeats every 2 bytes),
     * so a run of them is filled in place in one go. */
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
        load_direct(&o, w, direct, klo, khi, l.rows, round_tf32);
        return PA_OK;
    }
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

/* The layout and walk of a copy in the given mode. */
static int box_of(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                  const uint16_t offsets[PA_MAX_RANK - 2], pa_box_layout *l, pa_walk *w, pa_error *err)
{
    if (mode == PA_MODE_TILE) {
        int rc = pa_box_layout_tile(m, l, err);
        if (!rc)
            pa_walk_tile(w, m, l, coords);
        return rc;
    }
    int rc = pa_box_layout_im2col(m, l, err);
    if (!rc)
        pa_walk_im2col(w, m, coords, mode == PA_MODE_IM2COL ? offsets : NULL);
    return rc;
}

int pa_tensor_load_exec(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                        const uint16_t offsets[PA_MAX_RANK - 2], const pa_global *g, pa_smem_view smem,
                        uint32_t dst, pa_error *err)
{
    if (pa_modes_handles(m, mode))   /* the sm_100 modes, sub-byte types (modes.c) */
        return pa_modes_load_exec(m, mode, coords, offsets, g, smem, dst, err);
    pa_box_layout l;
    pa_walk w;
    int rc = box_of(m, mode, coords, offsets, &l, &w, err);
    return rc ? rc : load_box(m, &l, &w, g, smem, dst, err);
}

int pa_tile_load_exec(const pa_tensormap *m, const int32_t coords[PA_MAX_RANK],
                      const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err)
{
    return pa_tensor_load_exec(m, PA_MODE_TILE, coords, NULL, g, smem, dst, err);
}

/* Hand one run of shared bytes (pre-swizzle address a) to global memory:
 * unswizzled straight into gdst (fn NULL: a store), or through a stage to fn
 * (a reduction), one call per run of up to 2 KiB. */
static void store_run(const swz_view *v, uint32_t a, uint8_t *gdst, uint32_t n, pa_run_fn fn, void *ctx)
{
    if (!fn) {
        swizzled_copy(v, a, gdst, n, 0);
        return;
    }
    if (v->sw == PA_SWIZZLE_NONE) {
        fn(ctx, gdst, v->smem + a, n);
        return;
    }
    uint8_t stage[2048];
    while (n) {
        uint32_t len = n < sizeof stage ? n : (uint32_t)sizeof stage;
        swizzled_copy(v, a, stage, len, 0);
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

static void prefetch_run(const uint8_t *g, uint64_t len)
{
    __builtin_prefetch(g, 1);
    __builtin_prefetch(g + len - 1, 1);
}

static void flush_runs(const swz_view *sv, store_runs *q, pa_run_fn fn, void *ctx)
{
    for (uint32_t i = 0; i < q->n; i++) {
        if (i + STORE_PREFETCH_RUNS < q->n)
            prefetch_run(q->r[i + STORE_PREFETCH_RUNS].g, q->r[i + STORE_PREFETCH_RUNS].len);
        store_run(sv, q->r[i].a, q->r[i].g, q->r[i].len, fn, ctx);
    }
    q->n = 0;
}

int pa_tensor_store_exec(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                         const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn, void *ctx,
                         pa_error *err)
{
    if (pa_modes_handles(m, mode))   /* .tile::scatter4, sub-byte types (modes.c) */
        return pa_modes_store_exec(m, mode, coords, g, smem, src, fn, ctx, err);
    pa_box_layout l;
    pa_walk w;
    int rc = box_of(m, mode, coords, NULL, &l, &w, err);
    if (rc || (rc = pa_tile_check_smem(m, &l, src, smem.size, err)))
        return rc;
    if (l.row_bytes == 0 || l.unit == 0)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "the box lays out rows of 0 bytes (data type %d, interleave %d): no copy can place it",
                       (int)m->dtype, (int)m->interleave);
    const uint32_t u = l.unit;
    /* Observation 9: dim 0 is written up to the end of the 16-byte chunk that
     * holds the row's last in-bounds byte (exact for interleaved slices). */
    const uint64_t limit = (w.limit0 * u + 15) / 16 * 16 / u;
    uint32_t lo, hi, lo_exact, hi_exact;
    pa_dim0_range(w.c0, l.step0, l.n[0], limit, &lo, &hi);
    pa_dim0_range(w.c0, l.step0, l.n[0], w.limit0, &lo_exact, &hi_exact);
    const uint32_t per = l.step0 == 1 ? UINT32_MAX : 1;
    buf_cache bc = {0, 0, NULL};
    swz_view sv;
    swz_init(&sv, smem.base, l.swizzle);
    /* Runs are collected a batch at a time and their global bytes prefetched
     * ahead (a reduction reads them; a store owns their lines sooner): box
     * rows are far apart in global memory. */
    store_runs q;
    q.n = 0;
    for (uint64_t row = 0; row < l.rows && !rc; row++, pa_walk_next(&w)) {
        uint64_t off;
        if (!pa_walk_row(&w, &off))
            continue;
        uint32_t a = src + (uint32_t)(row * l.pitch);
        for (uint32_t k = lo; k < hi;) {
            uint32_t cnt = per < hi - k ? per : hi - k;
            uint64_t len = (uint64_t)cnt * u;
            uint64_t gaddr = item_addr(m, &l, off, w.c0, k);
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

int pa_tile_store_exec(const pa_tensormap *m, const int32_t coords[PA_MAX_RANK],
                       const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                       void *ctx, pa_error *err)
{
    return pa_tensor_store_exec(m, PA_MODE_TILE, coords, g, smem, src, fn, ctx, err);
}
