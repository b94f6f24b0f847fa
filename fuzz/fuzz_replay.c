/* fuzz_replay.c - operation lists (pa_replay, pa_replay_threads) and tile-load
 * batches (pa_issue_tile_load_batch) of any records, on a small machine.
 *
 * Input: a 128-byte map image (map 1; if it does not decode, a small valid
 * map), a few machine bytes, then records of 16 fields each, read field by
 * field in a compact form (most fields small, now and then a raw 64-bit
 * value anywhere). Properties beyond "no crash, no sanitizer report":
 * - every error has a message and names an operation of the list;
 * - the same list replayed with 2 or 3 threads gives what one thread gives:
 *   the same status, failing operation and message, and the same bytes of
 *   shared memory and of both global buffers (batch.h, defer.h);
 * - a tile-load batch that fails issues nothing (it is checked whole first).
 * Global memory is two heap buffers of exactly their registered size. */
#include "fuzz.h"

#define SMEM 4096u
#define G0 0x10000ull
#define G1 (0x7f0000000000ull)
#define MAXREC 48

typedef struct {
    pa_machine m;
    uint8_t *b0, *b1;
    uint64_t n0, n1;
} rig;

static void rig_init(rig *r, uint32_t nctas, int policy, uint8_t seed, int sm100, uint64_t n0, uint64_t n1)
{
    pa_error err = {0};
    if (pa_machine_init(&r->m, nctas, SMEM, &err) != PA_OK)
        abort();
    pa_machine_set_policy(&r->m, (pa_policy)policy, seed);
    if (sm100)
        if (pa_machine_set_target(&r->m, PA_TARGET_SM_100A, NULL) != PA_OK)
            abort();
    r->n0 = n0;
    r->n1 = n1;
    r->b0 = malloc(n0);
    r->b1 = malloc(n1);
    for (uint64_t i = 0; i < n0; i++)
        r->b0[i] = (uint8_t)(i * 7 + 1);
    for (uint64_t i = 0; i < n1; i++)
        r->b1[i] = (uint8_t)(i * 13 + 5);
    for (uint32_t c = 0; c < nctas; c++)
        for (uint32_t i = 0; i < SMEM; i++)
            r->m.cluster.smem[c][i] = (uint8_t)(i * 3 + c);
    if (pa_global_add(&r->m.global, G0, n0, r->b0, NULL, &err) ||
        pa_global_add(&r->m.global, G1, n1, r->b1, NULL, &err))
        abort();
}

static void rig_free(rig *r)
{
    pa_machine_free(&r->m);
    free(r->b0);
    free(r->b1);
}

static int rig_same(const rig *a, const rig *b)
{
    for (uint32_t c = 0; c < a->m.cluster.nctas; c++)
        if (memcmp(a->m.cluster.smem[c], b->m.cluster.smem[c], SMEM))
            return 0;
    return !memcmp(a->b0, b->b0, a->n0) && !memcmp(a->b1, b->b1, a->n1);
}

/* One field: mostly small values of its kind, now and then raw. */
static int64_t field(fz_in *in, int i, uint8_t raw)
{
    if (raw & 1)
        return (int64_t)fz_u64(in);
    switch (i) {
    case PA_REC_KIND: return fz_u8(in) % (PA_REC_KIND_COUNT + 1);
    case PA_REC_CTA: return fz_u8(in) % 3;
    case PA_REC_THREAD: return fz_u8(in) % 2;
    case PA_REC_MAP: return fz_u8(in) % 3;
    case PA_REC_SMEM: case PA_REC_MBAR: return fz_u16(in) % (2 * SMEM);
    case PA_REC_A: case PA_REC_B: return fz_u16(in);
    case PA_REC_GADDR: {
        uint16_t g = fz_u16(in);
        return (int64_t)((g & 1 ? G0 : G1) + (g >> 1) % 9000 - 64);
    }
    case PA_REC_FLAGS: return fz_u8(in) % 4;
    case PA_REC_MASK: return fz_u8(in) % 4;
    default: return (int16_t)fz_u16(in);   /* coordinates */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    uint8_t img[PA_TENSORMAP_BYTES];
    fz_bytes(&in, img, sizeof img);
    pa_error err = {0};
    pa_tensormap maps[2];
    pa_tiled_params p = {.dtype = PA_DTYPE_UINT8, .rank = 2, .global_address = G0,
                         .global_dim = {64, 64}, .global_strides = {64}, .box_dim = {32, 8},
                         .element_strides = {1, 1}};
    if (pa_tensormap_encode_tiled(&maps[0], &p, &err) != PA_OK)
        abort();
    if (pa_tensormap_unpack(img, &maps[1], &err) != PA_OK)
        maps[1] = maps[0];
    if (fz_u8(&in) & 1)
        maps[1].global_address = G1 + (fz_u16(&in) & ~15u);
    const pa_tensormap *ptrs[2] = {&maps[0], &maps[1]};

    const uint8_t mb = fz_u8(&in), seed = fz_u8(&in);
    const uint32_t nctas = 1 + mb % 2;
    const int policy = (mb >> 1) % 4, sm100 = (mb >> 3) & 1;
    const unsigned threads = 2 + (mb >> 4) % 2;
    const uint64_t n0 = 1 + fz_u16(&in) % 8192, n1 = 1 + fz_u16(&in) % 8192;

    pa_rec recs[MAXREC];
    size_t n = fz_u8(&in) % (MAXREC + 1);
    for (size_t k = 0; k < n; k++) {
        uint8_t raw = fz_u8(&in);
        uint8_t which = fz_u8(&in) % PA_REC_FIELDS;   /* the field that may be raw */
        for (int i = 0; i < PA_REC_FIELDS; i++)
            recs[k].f[i] = field(&in, i, i == which ? raw : 0);
    }

    /* one thread, then 2 or 3: the same everything */
    rig one, many;
    rig_init(&one, nctas, policy, seed, sm100, n0, n1);
    rig_init(&many, nctas, policy, seed, sm100, n0, n1);
    pa_error e1 = {0}, e2 = {0};
    size_t f1 = 0, f2 = 0;
    int rc1 = pa_replay_threads(&one.m, recs, n, ptrs, 2, 1, &f1, &e1);
    int rc2 = pa_replay_threads(&many.m, recs, n, ptrs, 2, threads, &f2, &e2);
    FZ_ERR_OK(rc1, e1);
    FZ_CHECK(rc1 == PA_OK || f1 < n, "failed operation %zu of %zu", f1, n);
    FZ_CHECK(rc1 == rc2 && (rc1 == PA_OK || (f1 == f2 && !strcmp(e1.msg, e2.msg))),
             "%u threads: status %d at %zu (%s), one thread: %d at %zu (%s)", threads, rc2, f2, e2.msg, rc1, f1,
             e1.msg);
    FZ_CHECK(rig_same(&one, &many), "%u threads left other bytes than one thread", threads);
    rig_free(&many);

    /* the loads of the list as a tile-load batch of map 0: all or nothing */
    int32_t coords[MAXREC][PA_MAX_RANK];
    uint32_t dst[MAXREC];
    for (size_t k = 0; k < n; k++) {
        for (int i = 0; i < PA_MAX_RANK; i++)
            coords[k][i] = (int32_t)recs[k].f[PA_REC_C0 + i];
        dst[k] = (uint32_t)recs[k].f[PA_REC_SMEM];
    }
    uint32_t mbar = (uint32_t)(n ? recs[0].f[PA_REC_MBAR] : 0);
    pa_machine_mbar_init(&one.m, 0, mbar, 1, &err);   /* may fail: then the batch does */
    const size_t pending = one.m.nops;
    size_t fb = 0;
    err.msg[0] = 0;
    int rc = pa_issue_tile_load_batch(&one.m, 0, 0, &maps[0], n, &coords[0][0], -1, dst, mbar, &fb, &err);
    FZ_ERR_OK(rc, err);
    FZ_CHECK(rc == PA_OK || (fb < n && one.m.nops == pending), "a refused batch issued %zu operations",
             one.m.nops - pending);
    pa_machine_run(&one.m, &err);
    rig_free(&one);
    return 0;
}
