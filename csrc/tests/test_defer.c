/* A replay whose tile-load bytes move on several threads (defer.h) leaves
 * what the one-thread replay leaves: shared memory, mbarrier states, the
 * failing operation and its error. Run under ASan/UBSan by
 * tests/core/test_c_core.py; the same file under -fsanitize=thread checks the
 * pool's synchronisation. */
#include "core.h"
#include "../core/defer.h"

#include <string.h>

#include "check.h"

#define W 512
#define H 512
#define SMEM (160 * 1024)
static uint16_t tensor[H][W];

static void setup(pa_machine *m, pa_tensormap *map, pa_policy pol)
{
    pa_error err;
    CHECK(pa_machine_init(m, 2, SMEM, &err) == PA_OK, "init");
    CHECK(pa_global_add(&m->global, 0x100000, sizeof tensor, (uint8_t *)tensor, NULL, &err) == PA_OK, "add");
    pa_machine_set_policy(m, pol, 99);
    for (uint32_t r = 0; r < m->cluster.nctas; r++)
        memset(m->cluster.smem[r], 0x5A, SMEM);
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_BFLOAT16;
    p.rank = 2;
    p.global_address = 0x100000;
    p.global_dim[0] = W;
    p.global_dim[1] = H;
    p.global_strides[0] = W * 2;
    p.box_dim[0] = 64;
    p.box_dim[1] = 64;                        /* 8 KiB boxes */
    p.element_strides[0] = p.element_strides[1] = 1;
    p.swizzle = PA_SWIZZLE_128B;
    p.oob_fill = PA_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    CHECK(pa_tensormap_encode_tiled(map, &p, &err) == PA_OK, "encode: %s", err.msg);
}

static pa_rec rec(int kind, uint32_t cta, int64_t smem, int64_t mbar, int64_t a, int64_t b)
{
    pa_rec r;
    memset(&r, 0, sizeof r);
    r.f[PA_REC_KIND] = kind;
    r.f[PA_REC_CTA] = cta;
    r.f[PA_REC_SMEM] = smem;
    r.f[PA_REC_MBAR] = mbar;
    r.f[PA_REC_A] = a;
    r.f[PA_REC_B] = b;
    return r;
}

/* A pipelined kernel on both CTAs: 6 stages of two 8 KiB loads (12 lanes), an
 * mbarrier.init over a destination now and then, some out-of-bounds boxes,
 * and a load that overlaps two stages. `plain`: neither the inits nor the
 * overlapping load, so that batches fill up to their limit and are handed
 * over full. */
static size_t kernel(pa_rec *out, size_t steps, int plain)
{
    size_t n = 0;
    uint32_t parity[2][6] = {{0}};
    for (uint32_t c = 0; c < 2; c++)
        for (uint32_t s = 0; s < 6; s++)
            out[n++] = rec(PA_REC_MBAR_INIT, c, 0, (int64_t)c << 24 | (8 + 8 * s), 1, 0);
    for (size_t k = 0; k < steps; k++) {
        const uint32_t c = (uint32_t)(k % 2), s = (uint32_t)(k / 2 % 6);
        const int64_t rank = (int64_t)c << 24, bar = rank | (8 + 8 * s), base = 1024 + 16384 * s;
        out[n++] = rec(PA_REC_MBAR_ARRIVE, c, 0, bar, 1, 3 * 8192);
        for (int i = 0; i < 3; i++) {
            pa_rec r = rec(PA_REC_TENSOR_LOAD, c, rank | (base + 8192 * (i % 2) + (i == 2 ? 4096 : 0)), bar, 0, 0);
            if (i == 2 && (k % 5 || plain))
                r.f[PA_REC_SMEM] = rank | (base + 8192 * (i % 2));   /* the same lane */
            r.f[PA_REC_C0] = (int64_t)((k * 72 + 64 * i) % (W + 64)) - 32;
            r.f[PA_REC_C0 + 1] = (int64_t)((k * 40 + 16 * i) % H) - 8;
            r.f[PA_REC_C0] -= r.f[PA_REC_C0] % 8;
            out[n++] = r;
        }
        out[n++] = rec(PA_REC_MBAR_WAIT, c, 0, bar, parity[c][s], 0);
        parity[c][s] ^= 1;
        if (k % 37 == 36 && !plain)   /* over the first stage's first box */
            out[n++] = rec(PA_REC_MBAR_INIT, c, 0, rank | (1024 + 8 * (k % 1000)), 1, 0);
    }
    return n;
}

static void run(pa_policy pol, unsigned threads, const pa_rec *recs, size_t n, uint8_t *smem_out,
                pa_mbarrier *bars, size_t *failed, int *rc, char *msg)
{
    pa_machine m;
    pa_tensormap map;
    pa_error err;
    setup(&m, &map, pol);
    const pa_tensormap *maps[1] = {&map};
    *rc = pa_replay_threads(&m, recs, n, maps, 1, threads, failed, &err);
    strcpy(msg, *rc ? err.msg : "");
    for (uint32_t r = 0; r < 2; r++) {
        memcpy(smem_out + (size_t)r * SMEM, m.cluster.smem[r], SMEM);
        for (uint32_t s = 0; s < 6; s++) {
            pa_mbarrier *b = pa_machine_mbar(&m, r, r << 24 | (8 + 8 * s), 0, &err);
            bars[r * 6 + s] = b ? *b : (pa_mbarrier){0};
        }
    }
    CHECK(m.defer == NULL, "the pool is gone after the replay");
    pa_machine_free(&m);
}

static void compare(pa_policy pol, const pa_rec *recs, size_t n)
{
    static uint8_t s1[2 * SMEM], s4[2 * SMEM];
    pa_mbarrier b1[12], b4[12];
    size_t f1 = 0, f4 = 0;
    int rc1, rc4;
    char m1[PA_ERRMSG_LEN], m4[PA_ERRMSG_LEN];
    run(pol, 1, recs, n, s1, b1, &f1, &rc1, m1);
    for (unsigned threads = 2; threads <= 5; threads += 3) {
        run(pol, threads, recs, n, s4, b4, &f4, &rc4, m4);
        CHECK(rc1 == rc4 && f1 == f4 && !strcmp(m1, m4), "policy %d threads %u: error %d at %zu (%s) vs %d at %zu (%s)",
              (int)pol, threads, rc1, f1, m1, rc4, f4, m4);
        CHECK(!memcmp(s1, s4, sizeof s1), "policy %d threads %u: shared memory differs", (int)pol, threads);
        CHECK(!memcmp(b1, b4, sizeof b1), "policy %d threads %u: mbarriers differ", (int)pol, threads);
    }
}

int main(void)
{
    for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++)
            tensor[r][c] = (uint16_t)(r * 1021 + c * 7 + 1);
    static pa_rec recs[12 + 1500 * 6];
    size_t n = kernel(recs, 1500, 1);   /* 4,500 loads: full batches (defer.c, MAX_JOBS) */
    compare(PA_POLICY_IN_ORDER, recs, n);
    n = kernel(recs, 600, 0);
    for (int p = PA_POLICY_IMMEDIATE; p <= PA_POLICY_RANDOM; p++)
        compare((pa_policy)p, recs, n);
    /* a failure midway: a wait whose phase cannot complete */
    recs[n / 2] = rec(PA_REC_MBAR_WAIT, 0, 0, 8, 1, 0);
    recs[n / 2 - 1] = rec(PA_REC_MBAR_ARRIVE, 0, 0, 8, 1, 8192);
    compare(PA_POLICY_IN_ORDER, recs, n);
    if (failures)
        printf("test_defer: %d failure(s)\n", failures);
    else
        printf("test_defer: all passed\n");
    return failures != 0;
}
