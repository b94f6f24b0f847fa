/* Queue core: ordering, groups, arrive-on ordering and the two-step stores,
 * under every policy (run under ASan/UBSan by tests/core/test_c_core.py). */
#include "core.h"
#include "check/watch.h"

#include <string.h>

#include "check.h"

static uint8_t gmem[1 << 16];

static void setup(pa_machine *m, uint32_t nctas, pa_policy pol)
{
    pa_error err;
    CHECK(pa_machine_init(m, nctas, 1 << 16, &err) == PA_OK, "init");
    CHECK(pa_global_add(&m->global, 0x10000, sizeof gmem, gmem, NULL, &err) == PA_OK, "add");
    pa_machine_set_policy(m, pol, 12345);
    for (size_t i = 0; i < sizeof gmem; i++)
        gmem[i] = (uint8_t)(i * 7 + 3);
}

/* Many cp.async copies of three threads in many groups: wait_group N leaves
 * exactly the N newest groups of the waiting thread pending, and every byte
 * arrives once everything is waited for. */
static void test_groups(pa_policy pol)
{
    pa_machine m;
    pa_error err;
    setup(&m, 1, pol);
    pa_cp_async_args a = {16, 16, 0, 1, 0, 0};
    uint32_t per_thread[3] = {0, 0, 0};
    for (uint32_t i = 0; i < 600; i++) {
        uint32_t t = i % 3;
        CHECK(pa_issue_cp_async(&m, 0, t, 16 * i, 0x10000 + 16 * i, &a, &err) == PA_OK, "issue %u: %s", i, err.msg);
        per_thread[t]++;
        if (i % 7 == 6)
            CHECK(pa_cp_async_commit_group(&m, 0, t, &err) == PA_OK, "commit");
    }
    for (uint32_t t = 0; t < 3; t++)
        CHECK(pa_cp_async_commit_group(&m, 0, t, &err) == PA_OK, "commit");
    CHECK(m.nops == 600 || pol == PA_POLICY_IMMEDIATE, "600 pending, %zu", m.nops);
    size_t before = m.nops;
    CHECK(pa_cp_async_wait_group(&m, 0, 1, 2, &err) == PA_OK, "wait_group 2");
    /* thread 1's last two groups hold the copies issued after its last two commits */
    CHECK(pol == PA_POLICY_IMMEDIATE || m.nops < before, "some of thread 1 completed");
    int step = 1;
    for (int k = 0; k < 50 && step; k++)
        CHECK(pa_machine_step(&m, &step, &err) == PA_OK, "step");
    for (uint32_t t = 0; t < 3; t++)
        CHECK(pa_cp_async_wait_group(&m, 0, t, 0, &err) == PA_OK, "wait 0");
    CHECK(m.nops == 0, "all done, %zu left", m.nops);
    CHECK(memcmp(m.cluster.smem[0], gmem, 600 * 16) == 0, "every copy landed");
    pa_machine_free(&m);
}

/* One thread's contiguous copies, one call each and as runs (engine/cprun.c:
 * one record where the policy allows): counted one by one, step() completes
 * one, and every byte lands once, whichever policy. */
static void test_runs(pa_policy pol)
{
    pa_machine m;
    pa_error err;
    setup(&m, 1, pol);
    pa_cp_async_args a = {16, 16, 0, 1, 0, 0};
    for (uint32_t i = 0; i < 600; i++) {
        CHECK(pa_issue_cp_async(&m, 0, 0, 16 * i, 0x10000 + 16 * i, &a, &err) == PA_OK, "issue %u: %s", i, err.msg);
        if (i % 100 == 99)
            CHECK(pa_cp_async_commit_group(&m, 0, 0, &err) == PA_OK, "commit");
    }
    CHECK(pa_issue_cp_async_run(&m, 0, 0, 16 * 600, 16, 0x10000 + 16 * 600, 16, 400, &a, &err) == PA_OK, "run: %s",
          err.msg);
    CHECK(pol == PA_POLICY_IMMEDIATE || (m.nops == 1000 && m.next_seq == 1000), "1000 pending, %zu", m.nops);
    CHECK(pol == PA_POLICY_RANDOM || pol == PA_POLICY_IMMEDIATE || m.all.n == 7, "7 records, %u", m.all.n);
    if (pol == PA_POLICY_IN_ORDER || pol == PA_POLICY_REVERSE) {
        pa_range src, dst;
        int reduce;
        pa_qv_ranges(&m.pool[m.all.head], &src, &dst, &reduce);   /* what a watcher reads of a run */
        CHECK(src.len == 1600 && dst.len == 1600 && src.addr == 0x10000 && dst.addr == 0, "the run's ranges");
    }
    CHECK(pol == PA_POLICY_IMMEDIATE ||
              pa_machine_remove_buffer(&m, m.global.bufs[0].id, &err) == PA_ERR_INVALID_VALUE,
          "pending copies keep their buffer");
    int step = 1;
    for (int k = 0; k < 150 && step; k++)
        CHECK(pa_machine_step(&m, &step, &err) == PA_OK, "step");
    CHECK(pol == PA_POLICY_IMMEDIATE || (m.nops == 850 && m.completed == 150), "850 left, %zu", m.nops);
    CHECK(pa_cp_async_wait_group(&m, 0, 0, 2, &err) == PA_OK, "wait_group 2");
    CHECK(pa_cp_async_wait_all(&m, 0, 0, &err) == PA_OK && m.nops == 0 && m.completed == 1000, "all done");
    CHECK(memcmp(m.cluster.smem[0], gmem, 1000 * 16) == 0, "every copy landed");
    /* a strided run: every other 16 bytes, one record each */
    memset(m.cluster.smem[0], 0, 64);
    CHECK(pa_issue_cp_async_run(&m, 0, 0, 0, 32, 0x10000, 32, 2, &a, &err) == PA_OK, "strided run");
    CHECK(pol == PA_POLICY_IMMEDIATE || (m.nops == 2 && m.all.n == 2), "two records");
    CHECK(pa_machine_run(&m, &err) == PA_OK && memcmp(m.cluster.smem[0], gmem, 16) == 0 &&
              memcmp(m.cluster.smem[0] + 32, gmem + 32, 16) == 0 && m.cluster.smem[0][16] == 0,
          "strided bytes");
    /* a run past the end of shared memory: refused whole */
    CHECK(pa_issue_cp_async_run(&m, 0, 0, 0, 16, 0x10000, 16, 4097, &a, &err) == PA_ERR_ILLEGAL_ADDRESS &&
              m.nops == 0 && m.next_seq == 1002,
          "refused: %s", err.msg);
    pa_machine_free(&m);
}

/* cp.async.mbarrier.arrive.noinc arrives only after the thread's earlier copies,
 * whichever pending operation a wait completes first. */
static void test_arrive_order(pa_policy pol)
{
    pa_machine m;
    pa_error err;
    setup(&m, 1, pol);
    CHECK(pa_machine_mbar_init(&m, 0, 0x8000, 1, &err) == PA_OK, "mbar");
    pa_cp_async_args a = {8, 8, 0, 0, 0, 0};
    for (uint32_t i = 0; i < 40; i++)
        CHECK(pa_issue_cp_async(&m, 0, 5, 8 * i, 0x10000 + 8 * i, &a, &err) == PA_OK, "cp.async");
    CHECK(pa_cp_async_mbarrier_arrive(&m, 0, 5, 0x8000, 1, &err) == PA_OK, "arrive.noinc: %s", err.msg);
    /* a later copy is not waited for by the arrive */
    CHECK(pa_issue_cp_async(&m, 0, 5, 0x1000, 0x11000, &a, &err) == PA_OK, "late copy");
    int ok = 0;
    CHECK(pa_machine_try_wait_parity(&m, 0, 0x8000, 0, &ok, &err) == PA_OK && ok, "phase 0 completes");
    CHECK(memcmp(m.cluster.smem[0], gmem, 320) == 0, "copies before the arrive are done");
    CHECK(pol == PA_POLICY_IMMEDIATE || m.nops == 1, "the late copy is still pending (%zu)", m.nops);
    /* without .noinc: no net arrival */
    CHECK(pa_issue_cp_async(&m, 0, 5, 0x2000, 0x12000, &a, &err) == PA_OK, "copy");
    CHECK(pa_cp_async_mbarrier_arrive(&m, 0, 5, 0x8000, 0, &err) == PA_OK, "arrive");
    CHECK(pa_machine_run(&m, &err) == PA_OK, "run");
    CHECK(pa_machine_try_wait_parity(&m, 0, 0x8000, 1, &ok, &err) == PA_OK && !ok, "phase 1 still open");
    CHECK(m.mbars[0]->bar.pending == 1, "pending back to 1, %d", m.mbars[0]->bar.pending);
    pa_machine_free(&m);
}

/* wait_group.read: the source is read, the write may come later and writes
 * what was read. */
static void test_wait_read(void)
{
    pa_machine m;
    pa_error err;
    setup(&m, 1, PA_POLICY_IN_ORDER);
    memset(m.cluster.smem[0] + 256, 0x11, 64);
    pa_bulk_copy_args a = {0, 0, 0, 0, 0};
    CHECK(pa_issue_bulk_copy(&m, 0, 0, PA_BULK_S2G, 0x10000, 256, 64, 0, &a, &err) == PA_OK, "copy: %s", err.msg);
    CHECK(pa_bulk_commit_group(&m, 0, 0, &err) == PA_OK, "commit");
    CHECK(pa_bulk_wait_group_read(&m, 0, 0, 0, &err) == PA_OK && m.nops == 1, "read, write pending");
    memset(m.cluster.smem[0] + 256, 0x22, 64);   /* reuse after .read: allowed */
    CHECK(pa_bulk_wait_group(&m, 0, 0, 0, &err) == PA_OK && m.nops == 0, "written");
    CHECK(gmem[0] == 0x11 && gmem[63] == 0x11, "the bytes read at .read reach global memory");
    pa_machine_free(&m);
}

/* Rejections leave the machine unchanged. */
static void test_rejections(void)
{
    pa_machine m;
    pa_error err;
    setup(&m, 2, PA_POLICY_IN_ORDER);
    pa_cp_async_args a = {12, 12, 0, 0, 0, 0};
    CHECK(pa_issue_cp_async(&m, 0, 0, 0, 0x10000, &a, &err) == PA_ERR_INVALID_VALUE, "cp-size 12");
    a.cp_size = 8;
    a.cg = 1;
    CHECK(pa_issue_cp_async(&m, 0, 0, 0, 0x10000, &a, &err) == PA_ERR_INVALID_VALUE, ".cg with 8");
    pa_bulk_copy_args b = {1, 0x4, 0, 0, 0};
    CHECK(pa_issue_bulk_copy(&m, 0, 0, PA_BULK_G2S_CLUSTER, 0, 0x10000, 16, 8, &b, &err) ==
              PA_ERR_ILLEGAL_INSTRUCTION, "mask beyond the cluster");
    b.multicast = 0;
    CHECK(pa_issue_bulk_copy(&m, 0, 0, PA_BULK_G2S_CTA, 0, 0x10000, 24, 8, &b, &err) == PA_ERR_INVALID_VALUE,
          "size 24");
    b.cp_mask = 1;
    CHECK(pa_issue_bulk_copy(&m, 0, 0, PA_BULK_S2G, 0x10000, 0, 16, 0, &b, &err) == PA_ERR_ILLEGAL_INSTRUCTION,
          ".cp_mask on sm_90a");
    uint8_t v[8] = {0};
    CHECK(pa_issue_st_async(&m, 0, 0, 4 | (1u << 24), 8, v, 4, 2, &err) == PA_ERR_MISALIGNED_ADDRESS,
          "st.async.v2.b32 at 4 mod 8");
    CHECK(pa_st_bulk(&m, 0, 0, 0, 64, 0, &err) == PA_ERR_ILLEGAL_INSTRUCTION, "st.bulk on sm_90a");
    CHECK(m.nops == 0 && m.next_seq == 0, "nothing queued");
    pa_machine_free(&m);
}

/* Watchers see every issue, source read and completion, in order, and can veto. */
typedef struct {
    int issued, read, completed, veto_issue;
    uint64_t last_seq;
} watch;

static int on_issue(void *ctx, pa_machine *m, const pa_op *op, pa_error *err)
{
    (void)m;
    (void)op;
    watch *w = ctx;
    w->issued++;
    return w->veto_issue ? pa_fail(err, PA_ERR_HAZARD, "vetoed") : PA_OK;
}

static int on_read(void *ctx, pa_machine *m, const pa_op *op, pa_error *err)
{
    (void)m;
    (void)op;
    (void)err;
    ((watch *)ctx)->read++;
    return PA_OK;
}

static int on_complete(void *ctx, pa_machine *m, const pa_op *op, pa_error *err)
{
    (void)m;
    (void)err;
    watch *w = ctx;
    w->completed++;
    w->last_seq = op->seq;
    return PA_OK;
}

static void test_hooks(void)
{
    pa_machine m;
    pa_error err;
    setup(&m, 1, PA_POLICY_REVERSE);
    watch w = {0, 0, 0, 0, 0};
    m.hooks.ctx = &w;   /* beside the signal hooks the machine came with */
    m.hooks.on_issue = on_issue;
    m.hooks.on_read = on_read;
    m.hooks.on_complete = on_complete;
    pa_bulk_copy_args a = {0, 0, 0, 0, 0};
    for (int i = 0; i < 3; i++)
        CHECK(pa_issue_bulk_copy(&m, 0, 0, PA_BULK_S2G, 0x10000 + 16 * (uint32_t)i, 0, 16, 0, &a, &err) == PA_OK,
              "copy");
    CHECK(w.issued == 3 && m.nops == 3, "3 issues seen");
    CHECK(pa_bulk_commit_group(&m, 0, 0, &err) == PA_OK, "commit");
    CHECK(pa_bulk_wait_group_read(&m, 0, 0, 0, &err) == PA_OK && w.read == 3, "3 reads seen");
    int done;
    CHECK(pa_machine_step(&m, &done, &err) == PA_OK && done && w.last_seq == 2, "reverse: newest first");
    CHECK(pa_machine_run(&m, &err) == PA_OK && w.completed == 3, "3 completions seen");
    uint32_t n = 0;
    for (uint32_t id = pa_pending_first(&m); id != PA_NIL; id = pa_pending_next(&m, id))
        n++;
    CHECK(n == 0, "nothing pending");
    w.veto_issue = 1;
    CHECK(pa_issue_bulk_copy(&m, 0, 0, PA_BULK_S2G, 0x10000, 0, 16, 0, &a, &err) == PA_ERR_HAZARD && m.nops == 0,
          "a vetoed issue queues nothing");
    pa_machine_free(&m);
}

/* An mbarrier pointer stays valid while later issues add mbarrier slots. */
static void test_mbar_pointer_stable(void)
{
    pa_machine m;
    pa_error err;
    setup(&m, 1, PA_POLICY_IN_ORDER);
    CHECK(pa_machine_mbar_init(&m, 0, 0x8000, 1, &err) == PA_OK, "mbar");
    pa_mbarrier *b = pa_machine_mbar(&m, 0, 0x8000, 0, &err);
    pa_bulk_copy_args a = {0, 0, 0, 0, 0};
    for (uint32_t i = 0; i < 200; i++)
        CHECK(pa_issue_bulk_copy(&m, 0, 0, PA_BULK_G2S_CTA, 16 * i, 0x10000, 16, 0x9000 + 8 * i, &a, &err) == PA_OK,
              "copy to a new barrier: %s", err.msg);
    CHECK(b == pa_machine_mbar(&m, 0, 0x8000, 0, &err) && b->valid && b->pending == 1, "same object");
    pa_machine_free(&m);
}

/* Runs of .tile::gather4 loads (engine/tensor.c): 300 loads back to back
 * are one record whose side array grows; steps in order between issues let
 * it slide; reverse steps; a machine freed with a run pending frees it.
 * Every box lands as a load of its own would put it. */
static void test_load_runs(pa_policy pol)
{
    pa_machine m;
    pa_error err;
    setup(&m, 1, pol);
    CHECK(pa_machine_set_target(&m, PA_TARGET_SM_100A, &err) == PA_OK, "target");
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_UINT8;
    p.rank = 2;
    p.global_address = 0x10000;
    p.global_dim[0] = 256;
    p.global_dim[1] = 256;
    p.global_strides[0] = 256;
    p.box_dim[0] = 16;
    p.box_dim[1] = 1;
    p.element_strides[0] = p.element_strides[1] = 1;
    p.target = PA_TARGET_SM_100A;
    pa_tensormap map;
    CHECK(pa_tensormap_encode_tiled(&map, &p, &err) == PA_OK, "encode: %s", err.msg);
    CHECK(pa_machine_mbar_init(&m, 0, 0xF000, 1, &err) == PA_OK, "mbarrier");
    pa_mbarrier *b = pa_machine_mbar(&m, 0, 0xF000, 0, &err);
    uint64_t state;
    CHECK(b && pa_mbar_arrive(b, 1, 300 * 64, 0, &state, &err) == PA_OK, "arrive");
    int done;
    size_t steps = 0;
    for (uint32_t j = 0; j < 300; j++) {
        const int32_t c[PA_MAX_RANK] = {(int32_t)(j % 15) * 16, (int32_t)j % 256, (int32_t)(j * 7) % 256,
                                        (int32_t)(j * 13) % 256, (int32_t)(255 - j % 256)};
        CHECK(pa_issue_tensor_load(&m, 0, 0, &map, PA_MODE_TILE_GATHER4, c, NULL, 64 * j, 0, 0xF000, 0, 0, &err) ==
                  PA_OK, "load %u: %s", j, err.msg);
        if (j % 3 && j < 200) {   /* in order: the run's first loads go, it slides down its array */
            CHECK(pa_machine_step(&m, &done, &err) == PA_OK && (done || pol == PA_POLICY_IMMEDIATE), "step %u", j);
            steps++;
        }
    }
    /* in order: one record throughout; reverse: a step takes a run's newest, the next load starts another */
    CHECK(pol == PA_POLICY_IMMEDIATE || m.nops == 300 - steps, "%zu pending", m.nops);
    CHECK((pol != PA_POLICY_IN_ORDER || m.all.n == 1) && (pol != PA_POLICY_REVERSE || m.all.n <= 201),
          "%u records", m.all.n);
    for (int k = 0; k < 10; k++)
        CHECK(pa_machine_step(&m, &done, &err) == PA_OK, "step");
    CHECK(pa_machine_run(&m, &err) == PA_OK && m.nops == 0 && m.completed == 300 && b->phase == 1, "all done");
    for (uint32_t j = 0; j < 300; j++)
        for (uint32_t i = 0; i < 4; i++) {
            const uint32_t row[4] = {j % 256, (j * 7) % 256, (j * 13) % 256, 255 - j % 256};
            CHECK(!memcmp(m.cluster.smem[0] + 64 * j + 16 * i, gmem + 256 * row[i] + (j % 15) * 16, 16),
                  "load %u row %u", j, i);
        }
    /* a loop of 20 in one call whose 8th breaks a rule: 7 issued, that load's error */
    int32_t cs[20][PA_MAX_RANK];
    uint32_t ds[20], issued = 99;
    for (uint32_t j = 0; j < 20; j++) {
        const int32_t c[PA_MAX_RANK] = {16, (int32_t)j, 2, 3, 4};
        memcpy(cs[j], c, sizeof c);
        ds[j] = 64 * j + (j == 7 ? 8 : 0);
    }
    CHECK(pa_issue_tensor_load_run(&m, 0, 0, &map, PA_MODE_TILE_GATHER4, (const int32_t(*)[PA_MAX_RANK])cs, ds, 20,
                                   0xF000, &issued, &err) == PA_ERR_MISALIGNED_ADDRESS && issued == 7 &&
              strstr(err.msg, "0x1c8"), "run: %u issued, %s", issued, err.msg);
    CHECK(pol == PA_POLICY_IMMEDIATE || m.nops == 7, "%zu pending", m.nops);
    CHECK(pa_mbar_arrive(b, 1, 7 * 64, 0, &state, &err) == PA_OK, "arrive");
    CHECK(pa_machine_run(&m, &err) == PA_OK && m.nops == 0 && b->phase == 2, "run");
    for (uint32_t j = 0; j < 7; j++)
        CHECK(!memcmp(m.cluster.smem[0] + 64 * j, gmem + 256 * j + 16, 16), "run load %u", j);
    CHECK(pa_mbar_arrive(b, 1, 64 * 64, 0, &state, &err) == PA_OK, "arrive");
    for (uint32_t j = 0; j < 40; j++) {   /* left pending: freed with the machine */
        const int32_t c[PA_MAX_RANK] = {0, (int32_t)j, 1, 2, 3};
        CHECK(pa_issue_tensor_load(&m, 0, 0, &map, PA_MODE_TILE_GATHER4, c, NULL, 64 * j, 0, 0xF000, 0, 0, &err) ==
                  PA_OK, "load %u: %s", j, err.msg);
    }
    pa_machine_free(&m);
}

int main(void)
{
    test_mbar_pointer_stable();
    for (int p = PA_POLICY_IMMEDIATE; p <= PA_POLICY_RANDOM; p++)
        test_load_runs((pa_policy)p);
    test_hooks();
    for (int p = PA_POLICY_IMMEDIATE; p <= PA_POLICY_RANDOM; p++) {
        test_groups((pa_policy)p);
        test_runs((pa_policy)p);
        test_arrive_order((pa_policy)p);
    }
    test_wait_read();
    test_rejections();
    if (failures)
        printf("test_queue: %d failure(s)\n", failures);
    else
        printf("test_queue: all passed\n");
    return failures != 0;
}
