/* The checker (check/): hazards raised and collected, explained waits,
 * deadlocks, the adversarial policy's poison and memory checks, and the trace
 * (run under ASan/UBSan by tests/core/test_c_core.py). */
#include "core.h"

#include <string.h>

#include "check.h"

static uint8_t gmem[4096];

static void setup(pa_machine *m, pa_policy pol)
{
    pa_error err;
    CHECK(pa_machine_init(m, 1, 1 << 14, &err) == PA_OK, "init");
    CHECK(pa_watch_attach(m, &err) == PA_OK, "watch");
    CHECK(pa_global_add(&m->global, 0x10000, sizeof gmem, gmem, NULL, &err) == PA_OK, "add");
    pa_machine_set_policy(m, pol, 7);
    for (size_t i = 0; i < sizeof gmem; i++)
        gmem[i] = (uint8_t)(i * 7 + 3);
}

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* Raise mode: the rule's id leads the message; report mode: recorded, goes on. */
static void test_modes(void)
{
    pa_machine m;
    pa_error err;
    setup(&m, PA_POLICY_IN_ORDER);
    CHECK(pa_sync_init(&m, 0, 0, 0x40, 1, &err) == PA_OK, "init");
    int r;
    CHECK(pa_sync_wait(&m, 0, 1, 0x40, 0, 0, &r, &err) == PA_OK && !r, "test_wait by thread 1");
    CHECK(pa_sync_arrive(&m, 0, 0, 0x40, 1, 0, 0, NULL, &err) == PA_OK, "arrive");
    CHECK(pa_sync_arrive(&m, 0, 0, 0x40, 1, 0, 0, NULL, &err) == PA_ERR_HAZARD &&
              starts(err.msg, "[phase-unobserved] "), "raised: %s", err.msg);
    m.watch->hz.report = 1;
    m.watch->trace.enabled = 1;
    CHECK(pa_sync_arrive(&m, 0, 0, 0x40, 1, 0, 0, NULL, &err) == PA_OK, "reported, went on");
    CHECK(m.watch->hz.n == 1 && m.watch->hz.recs[0].rule == PA_HZ_PHASE_UNOBSERVED, "one record");
    CHECK(m.mbars[0]->bar.phase == 2, "phase 2");
    CHECK(pa_sync_arrive(&m, 0, 0, 0x40, 2, 0, 0, NULL, &err) == PA_ERR_HAZARD &&
              starts(err.msg, "[over-arrival] thread 0 of CTA 0, on the mbarrier at 0x40"),
          "fatal in report mode too: %s", err.msg);
    CHECK(m.watch->hz.n == 3, "phase-unobserved and over-arrival recorded: %zu", m.watch->hz.n);
    CHECK(m.watch->trace.n >= 3 && m.watch->trace.ev[0].kind == PA_EV_HAZARD &&
              m.watch->trace.ev[1].kind == PA_EV_ARRIVE, "traced: the hazard, then the arrive");
    pa_machine_free(&m);
}

/* A failed wait explained; run() reports the blocked thread. */
static void test_why_and_deadlock(void)
{
    pa_machine m;
    pa_error err;
    setup(&m, PA_POLICY_IN_ORDER);
    CHECK(pa_sync_init(&m, 0, 0, 0x40, 1, &err) == PA_OK, "init");
    CHECK(pa_sync_tx(&m, 0, 0, 0x40, 1024, 0, &err) == PA_OK, "expect_tx");
    int r;
    CHECK(pa_sync_wait(&m, 0, 5, 0x40, 0, 1, &r, &err) == PA_OK && !r, "try_wait False");
    pa_wait_why w;
    char text[PA_ERRMSG_LEN];
    CHECK(pa_sync_why(&m, 0, 0x40, 0, &w, &err) == PA_OK, "why");
    pa_sync_why_text(&w, text, sizeof text);
    CHECK(!strcmp(text, "nothing pending can complete phase 0 of the mbarrier at 0x40 in CTA 0: "
                        "1 arrival and 1024 tx bytes missing: the kernel would hang"),
          "%s", text);
    CHECK(pa_watch_run(&m, &err) == PA_ERR_DEADLOCK && starts(err.msg, "[deadlock] thread 5 of CTA 0"),
          "%s", err.msg);
    CHECK(pa_sync_arrive(&m, 0, 5, 0x40, 1, 0, 0, NULL, &err) == PA_OK, "thread 5 moves on");
    CHECK(pa_watch_run(&m, &err) == PA_OK, "no deadlock");
    pa_machine_free(&m);
}

/* Adversarial: the pending destination holds poison, the completion the data;
 * a second pending write of the same bytes, and a write into the pending
 * destination, are hazards. */
static void test_adversarial(void)
{
    pa_machine m;
    pa_error err;
    setup(&m, PA_POLICY_ADVERSARIAL);
    pa_bulk_copy_args a;
    memset(&a, 0, sizeof a);
    CHECK(pa_sync_init(&m, 0, 0, 0x40, 1, &err) == PA_OK, "init");
    CHECK(pa_sync_arrive(&m, 0, 0, 0x40, 1, 64, 0, NULL, &err) == PA_OK, "arrive.expect_tx");
    CHECK(pa_issue_bulk_copy(&m, 0, 0, PA_BULK_G2S_CTA, 1024, 0x10000, 64, 0x40, &a, &err) == PA_OK, "%s",
          err.msg);
    const uint8_t *s = m.cluster.smem[0] + 1024;
    CHECK(s[0] == 0xDE && s[1] == 0xAD && s[2] == 0xBE && s[3] == 0xEF && s[63] == 0xEF, "poison");
    CHECK(pa_issue_bulk_copy(&m, 0, 0, PA_BULK_G2S_CTA, 1024 + 32, 0x10000, 64, 0x40, &a, &err) ==
              PA_ERR_HAZARD && starts(err.msg, "[destination-overlap] "), "%s", err.msg);
    CHECK(pa_check_read(&m, 0, 3, 0, 1024 + 60, 4, &err) == PA_ERR_HAZARD &&
              starts(err.msg, "[destination-read] thread 3 of CTA 0"), "%s", err.msg);
    m.cluster.smem[0][1030] = 0;
    int r;
    CHECK(pa_sync_wait(&m, 0, 0, 0x40, 0, 1, &r, &err) == PA_ERR_HAZARD &&
              starts(err.msg, "[destination-changed] "), "%s", err.msg);
    pa_machine_free(&m);
    setup(&m, PA_POLICY_ADVERSARIAL);
    CHECK(pa_sync_init(&m, 0, 0, 0x40, 1, &err) == PA_OK, "init");
    CHECK(pa_sync_arrive(&m, 0, 0, 0x40, 1, 64, 0, NULL, &err) == PA_OK, "arrive.expect_tx");
    CHECK(pa_issue_bulk_copy(&m, 0, 0, PA_BULK_G2S_CTA, 1024, 0x10000, 64, 0x40, &a, &err) == PA_OK, "issue");
    CHECK(pa_sync_wait(&m, 0, 0, 0x40, 0, 1, &r, &err) == PA_OK && r, "completes");
    CHECK(!memcmp(m.cluster.smem[0] + 1024, gmem, 64), "the data");
    pa_machine_free(&m);
}

/* The global side of tensor copies (gbox.c), tx-wrong-phase, exit and
 * st.async.release.global: the paths ASan should see. gmem as a 64 x 64 u8
 * tensor; boxes of 16 x 2. */
static pa_tensormap u8_map(void)
{
    pa_tiled_params p;
    pa_error err;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_UINT8;
    p.rank = 2;
    p.global_address = 0x10000;
    p.global_dim[0] = p.global_dim[1] = 64;
    p.global_strides[0] = 64;
    p.box_dim[0] = 16;
    p.box_dim[1] = 2;
    p.element_strides[0] = p.element_strides[1] = 1;
    pa_tensormap m;
    CHECK(pa_tensormap_encode_tiled(&m, &p, &err) == PA_OK, "encode: %s", err.msg);
    return m;
}

static void test_global_side(void)
{
    pa_machine m;
    pa_error err;
    pa_tensormap tm = u8_map();
    int32_t c[PA_MAX_RANK] = {16, 3, 0, 0, 0};
    int r;
    setup(&m, PA_POLICY_IN_ORDER);
    m.watch->memcheck = 1;
    CHECK(pa_sync_init(&m, 0, 0, 0x40, 1, &err) == PA_OK, "init");
    CHECK(pa_sync_arrive(&m, 0, 0, 0x40, 1, 32, 0, NULL, &err) == PA_OK, "arrive.expect_tx");
    CHECK(pa_issue_tile_load(&m, 0, 0, &tm, c, 1024, 0, 0x40, 0, 0, &err) == PA_OK, "%s", err.msg);
    gmem[3 * 64 + 40] = 0;                       /* row 3, past the box: not its source */
    gmem[4 * 64 + 20] ^= 0xFF;                   /* row 4, in the box */
    CHECK(pa_sync_wait(&m, 0, 0, 0x40, 0, 1, &r, &err) == PA_ERR_HAZARD &&
              starts(err.msg, "[tensor-source-changed] "), "%s", err.msg);
    pa_machine_free(&m);

    setup(&m, PA_POLICY_IN_ORDER);
    m.watch->memcheck = 1;
    CHECK(pa_issue_tile_store(&m, 0, 0, &tm, c, 0, 0, 0, &err) == PA_OK, "%s", err.msg);
    c[1] = 4;
    CHECK(pa_issue_tile_store(&m, 0, 0, &tm, c, 1024, 0, 0, &err) == PA_ERR_HAZARD &&
              starts(err.msg, "[global-write-overlap] "), "%s", err.msg);
    gmem[3 * 64 + 17] ^= 0xFF;
    CHECK(pa_machine_run(&m, &err) == PA_ERR_HAZARD && starts(err.msg, "[tensor-destination-changed] "),
          "%s", err.msg);
    pa_machine_free(&m);

    setup(&m, PA_POLICY_IN_ORDER);   /* bytes of phase 0 landing in phase 1 */
    CHECK(pa_sync_init(&m, 0, 0, 0x40, 1, &err) == PA_OK, "init");
    CHECK(pa_sync_arrive(&m, 0, 0, 0x40, 1, 32, 0, NULL, &err) == PA_OK, "arrive.expect_tx");
    CHECK(pa_issue_tile_load(&m, 0, 0, &tm, c, 1024, 0, 0x40, 0, 0, &err) == PA_OK, "%s", err.msg);
    CHECK(pa_issue_tile_load(&m, 0, 0, &tm, c, 2048, 0, 0x40, 0, 0, &err) == PA_OK, "%s", err.msg);
    CHECK(pa_machine_run(&m, &err) == PA_ERR_HAZARD && starts(err.msg, "[tx-wrong-phase] "), "%s", err.msg);
    pa_machine_free(&m);

    setup(&m, PA_POLICY_IN_ORDER);   /* exits; the release store completes at the CTA's end */
    CHECK(pa_machine_set_target(&m, PA_TARGET_SM_100A, &err) == PA_OK, "target");
    const uint8_t v[4] = {1, 2, 3, 4};
    CHECK(pa_issue_st_async_release(&m, 0, 5, 0x10000 + 8, v, 4, 1, 0, &err) == PA_OK, "%s", err.msg);
    CHECK(pa_issue_tile_store(&m, 0, 2, &tm, c, 0, 0, 0, &err) == PA_OK, "%s", err.msg);
    CHECK(pa_watch_exit(&m, 0, 2, &err) == PA_ERR_HAZARD && starts(err.msg, "[never-waited] thread 2 of CTA 0"),
          "%s", err.msg);
    m.watch->hz.report = 1;
    CHECK(pa_watch_exit(&m, 0, PA_NO_THREAD, &err) == PA_OK && m.watch->hz.n == 1 && m.nops == 0, "CTA exit");
    CHECK(!memcmp(gmem + 8, v, 4), "the release store landed");
    pa_machine_free(&m);
}

/* The memory model (hb.c, proxy.c): a race between threads, ordered by
 * bar.sync; st.shared then a bulk copy's async-proxy read, fenced or not; a
 * load's destination read before and after its wait. */
static void test_memory_model(void)
{
    pa_machine m;
    pa_error err;
    setup(&m, PA_POLICY_IMMEDIATE);
    CHECK(pa_hb_set(&m, 1, &err) == PA_OK && pa_hb_enabled(&m), "on");
    CHECK(pa_hb_smem(&m, 0, 1, 0, 0x400, 16, 1, "st.shared", &err) == PA_OK, "write");
    CHECK(pa_hb_smem(&m, 0, 2, 0, 0x408, 4, 0, "ld.shared", &err) == PA_ERR_HAZARD &&
              starts(err.msg, "[data-race] thread 2 of CTA 0 (ld.shared"), "%s", err.msg);
    CHECK(pa_hb_bar_sync(&m, 0, 0, NULL, 0, &err) == PA_OK, "bar.sync");
    CHECK(pa_hb_smem(&m, 0, 2, 0, 0x408, 4, 0, "ld.shared", &err) == PA_OK, "%s", err.msg);
    /* thread 1's bytes read by a bulk copy to global (async proxy) issued by thread 2 */
    pa_bulk_copy_args a;
    memset(&a, 0, sizeof a);
    CHECK(pa_issue_bulk_copy(&m, 0, 2, PA_BULK_S2G, 0x10000, 0x400, 16, 0, &a, &err) == PA_ERR_HAZARD &&
              starts(err.msg, "[proxy-fence-missing]"), "%s", err.msg);
    CHECK(m.nops == 0 && m.completed == 0, "not issued");
    CHECK(pa_hb_fence_proxy_async(&m, 0, 2, PA_FENCE_SHARED_CTA, &err) == PA_OK, "fence");
    CHECK(pa_issue_bulk_copy(&m, 0, 2, PA_BULK_S2G, 0x10000, 0x400, 16, 0, &a, &err) == PA_OK, "%s", err.msg);
    /* its source rewritten by thread 2 before a wait_group.read: a race */
    CHECK(pa_bulk_commit_group(&m, 0, 2, &err) == PA_OK, "commit");
    CHECK(pa_hb_smem(&m, 0, 2, 0, 0x400, 16, 1, "st.shared", &err) == PA_ERR_HAZARD &&
              starts(err.msg, "[data-race]"), "%s", err.msg);
    CHECK(pa_bulk_wait_group_read(&m, 0, 2, 0, &err) == PA_OK, "wait_group.read");
    CHECK(pa_hb_smem(&m, 0, 2, 0, 0x400, 16, 1, "st.shared", &err) == PA_OK, "%s", err.msg);
    const pa_hb_race *r;
    CHECK(pa_hb_races(&m, &r) == 3 && r[0].rule == PA_HZ_DATA_RACE && r[1].rule == PA_HZ_PROXY_FENCE &&
              r[1].first.thread == 1 && r[1].second.proxy == 1, "races");
    CHECK(pa_hb_fence_proxy_async(&m, 0, 2, 9, &err) == PA_ERR_INVALID_VALUE, "bad space");
    CHECK(pa_hb_bar_sync(&m, 0, 16, NULL, 0, &err) == PA_ERR_INVALID_VALUE, "bad barrier");
    CHECK(pa_hb_set(&m, 0, &err) == PA_OK && !pa_hb_enabled(&m), "off");
    CHECK(pa_hb_smem(&m, 0, 3, 0, 0x400, 16, 0, "ld.shared", &err) == PA_OK, "off: nothing checked");
    pa_machine_free(&m);
}

int main(void)
{
    test_memory_model();
    test_modes();
    test_why_and_deadlock();
    test_adversarial();
    test_global_side();
    if (failures)
        printf("%d failure(s)\n", failures);
    return failures != 0;
}
