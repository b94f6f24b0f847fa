/* tensorcopy.c - tile-mode box walk (see tensorcopy.h). */
#include "tensorcopy.h"

#include <inttypes.h>
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
 * 16-bit 0x7FF7 repeated for OOB_FILL_NAN_REQUEST_ZERO_FMA. */
static void fill_bytes(uint8_t *p, size_t n, int nan_fill)
{
    if (!nan_fill) {
        memset(p, 0, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (i & 1) ? 0x7F : 0xF7;   /* byte parity == address parity: rows start even */
}

/* Copy or fill `n` bytes of one row into shared memory at pre-swizzle offset
 * a, splitting where the swizzle separates atoms. src NULL means fill. */
static void put_row_part(uint8_t *smem, pa_swizzle sw, uint32_t a, const uint8_t *src, uint32_t n,
                         int nan_fill)
{
    uint32_t atom = pa_swizzle_atom(sw);
    while (n) {
        uint32_t len = sw == PA_SWIZZLE_NONE ? n : atom - (a % atom);
        if (len > n)
            len = n;
        uint8_t *d = smem + pa_swizzle_addr(sw, a);
        if (src) {
            memcpy(d, src, len);
            src += len;
        } else {
            fill_bytes(d, len, nan_fill);
        }
        a += len;
        n -= len;
    }
}

/* TF32 map types round every loaded f32 (observation 4). */
static void round_tf32_part(uint8_t *smem, pa_swizzle sw, uint32_t a, uint32_t n)
{
    for (uint32_t off = 0; off < n; off += 4) {
        uint8_t *d = smem + pa_swizzle_addr(sw, a + off);
        uint32_t v;
        memcpy(&v, d, 4);
        v = pa_tf32_round(v);
        memcpy(d, &v, 4);
    }
}

/* Row iterator over dims 1..rank-1: global element index g[i] of each row. */
typedef struct {
    uint32_t n[PA_MAX_RANK];
    uint32_t k[PA_MAX_RANK];
    int64_t g[PA_MAX_RANK];
    int64_t es[PA_MAX_RANK];
    uint32_t rank;
} row_iter;

static void row_iter_init(row_iter *it, const pa_tensormap *m, const pa_box_layout *l,
                          const int32_t coords[PA_MAX_RANK])
{
    it->rank = m->rank;
    for (uint32_t i = 0; i < PA_MAX_RANK; i++) {
        it->n[i] = l->n[i];
        it->k[i] = 0;
        it->es[i] = i < m->rank ? m->element_strides[i] : 1;
        it->g[i] = i < m->rank ? coords[i] : 0;
    }
}

static void row_iter_next(row_iter *it)
{
    for (uint32_t i = 1; i < it->rank; i++) {
        if (++it->k[i] < it->n[i]) {
            it->g[i] += it->es[i];
            return;
        }
        it->g[i] -= (int64_t)(it->k[i] - 1) * it->es[i];
        it->k[i] = 0;
    }
}

/* Are the row's dims >= 1 inside the tensor? Also its global byte offset. */
static int row_in_bounds(const row_iter *it, const pa_tensormap *m, uint64_t *offset)
{
    uint64_t off = 0;
    for (uint32_t i = 1; i < m->rank; i++) {
        if (it->g[i] < 0 || (uint64_t)it->g[i] >= m->global_dim[i])
            return 0;
        off += (uint64_t)it->g[i] * m->global_strides[i - 1];
    }
    *offset = off;
    return 1;
}

/* Items [lo, hi) of a row whose dim-0 index c0 + k * step lies in [0, limit). */
static void dim0_range(int64_t c0, uint32_t step, uint32_t n0, uint64_t limit, uint32_t *lo,
                       uint32_t *hi)
{
    int64_t a = c0 >= 0 ? 0 : (-c0 + step - 1) / step;
    int64_t b = (int64_t)limit - c0 <= 0 ? 0 : ((int64_t)limit - c0 + step - 1) / step;
    if (a > n0) a = n0;
    if (b > n0) b = n0;
    if (b < a) b = a;
    *lo = (uint32_t)a;
    *hi = (uint32_t)b;
}

/* Global address of item k0 of a row at byte offset `off` (dims >= 1). */
static uint64_t item_addr(const pa_tensormap *m, const pa_box_layout *l, uint64_t off, int64_t c0,
                          uint32_t k0)
{
    return m->global_address + off + (uint64_t)(c0 + (int64_t)k0 * l->step0) * l->unit;
}

/* Copy items [lo, hi) of one row: one run when they are contiguous in global
 * memory, else item by item (interleaved maps with a dim-0 traversal stride). */
static int load_items(const pa_tensormap *m, const pa_box_layout *l, const pa_global *g,
                      uint8_t *smem, uint32_t a, uint64_t off, int64_t c0, uint32_t lo, uint32_t hi,
                      pa_error *err)
{
    uint32_t per = l->step0 == 1 ? hi - lo : 1;
    for (uint32_t k = lo; k < hi; k += per) {
        uint32_t len = per * l->unit;
        const uint8_t *src = pa_global_resolve(g, item_addr(m, l, off, c0, k), len, err);
        if (!src)
            return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
        put_row_part(smem, l->swizzle, a + k * l->unit, src, len, 0);
        if (is_tf32(m->dtype))
            round_tf32_part(smem, l->swizzle, a + k * l->unit, len);
    }
    return PA_OK;
}

int pa_tile_load_exec(const pa_tensormap *m, const int32_t coords[PA_MAX_RANK],
                      const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err)
{
    pa_box_layout l;
    int rc = pa_box_layout_tile(m, &l, err);
    if (rc || (rc = pa_tile_check_smem(m, &l, dst, smem.size, err)))
        return rc;
    const int nan_fill = m->oob_fill == PA_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    const uint32_t u = l.unit;
    uint32_t lo, hi;
    dim0_range(coords[0], l.step0, l.n[0], m->global_dim[0], &lo, &hi);
    row_iter it;
    row_iter_init(&it, m, &l, coords);
    for (uint64_t row = 0; row < l.rows; row++, row_iter_next(&it)) {
        uint32_t a = dst + (uint32_t)(row * l.pitch);
        uint64_t off;
        if (!row_in_bounds(&it, m, &off)) {
            put_row_part(smem.base, l.swizzle, a, NULL, l.row_bytes, nan_fill);
            continue;
        }
        put_row_part(smem.base, l.swizzle, a, NULL, lo * u, nan_fill);
        if ((rc = load_items(m, &l, g, smem.base, a, off, coords[0], lo, hi, err)))
            return rc;
        put_row_part(smem.base, l.swizzle, a + hi * u, NULL, (l.n[0] - hi) * u, nan_fill);
    }
    return PA_OK;
}

/* Hand one run of shared bytes (pre-swizzle address a) to fn, split at atoms. */
static void store_run(const pa_box_layout *l, uint8_t *smem, uint32_t a, uint8_t *gdst, uint32_t n,
                      pa_run_fn fn, void *ctx)
{
    const uint32_t atom = l->swizzle == PA_SWIZZLE_NONE ? UINT32_MAX : pa_swizzle_atom(l->swizzle);
    while (n) {
        uint32_t part = atom - (a % atom);
        if (part > n)
            part = n;
        fn(ctx, gdst, smem + pa_swizzle_addr(l->swizzle, a), part);
        gdst += part;
        a += part;
        n -= part;
    }
}

int pa_tile_store_exec(const pa_tensormap *m, const int32_t coords[PA_MAX_RANK],
                       const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                       void *ctx, pa_error *err)
{
    pa_box_layout l;
    int rc = pa_box_layout_tile(m, &l, err);
    if (rc || (rc = pa_tile_check_smem(m, &l, src, smem.size, err)))
        return rc;
    const uint32_t u = l.unit;
    /* Observation 9: dim 0 is written up to the end of the 16-byte chunk that
     * holds the row's last in-bounds byte (exact for interleaved slices). */
    const uint64_t limit = (m->global_dim[0] * u + 15) / 16 * 16 / u;
    uint32_t lo, hi, lo_exact, hi_exact;
    dim0_range(coords[0], l.step0, l.n[0], limit, &lo, &hi);
    dim0_range(coords[0], l.step0, l.n[0], m->global_dim[0], &lo_exact, &hi_exact);
    const uint32_t per = l.step0 == 1 ? UINT32_MAX : 1;
    row_iter it;
    row_iter_init(&it, m, &l, coords);
    for (uint64_t row = 0; row < l.rows; row++, row_iter_next(&it)) {
        uint64_t off;
        if (!row_in_bounds(&it, m, &off))
            continue;
        uint32_t a = src + (uint32_t)(row * l.pitch);
        for (uint32_t k = lo; k < hi;) {
            uint32_t cnt = per < hi - k ? per : hi - k;
            uint64_t len = (uint64_t)cnt * u;
            uint64_t gaddr = item_addr(m, &l, off, coords[0], k);
            uint8_t *gdst = pa_global_resolve(g, gaddr, len, NULL);
            if (!gdst) {
                /* The bytes past globalDim[0] may lie past the end of the
                 * registered buffer: only the in-bounds ones must exist. */
                uint32_t end = hi_exact > k ? (hi_exact - k < cnt ? hi_exact - k : cnt) : 0;
                len = (uint64_t)end * u;
                if (end == 0)
                    break;
                if (!(gdst = pa_global_resolve(g, gaddr, len, err)))
                    return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
            }
            store_run(&l, smem.base, a + k * u, gdst, (uint32_t)len, fn, ctx);
            k += cnt;
        }
    }
    (void)lo_exact;
    return PA_OK;
}
