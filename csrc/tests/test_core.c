/* test_core.c - hand cases for layout, memory, mbarrier, the tensor copy and engine.
 * Each case cites the rule it checks (PTX ISA section, or golden/README.md
 * observation). Built and run under ASan/UBSan by csrc/tests/Makefile.
 */
#include <stdio.h>
#include <string.h>

#include "core.h"

#include "check.h"

/* PTX 5.5.7: 128B swizzle table, 16-byte chunk c of 128-byte line y lands at
 * chunk c ^ (y % 8) when the pattern starts 1024-byte aligned. */
static void test_swizzle_tables(void)
{
    for (uint32_t y = 0; y < 16; y++)
        for (uint32_t c = 0; c < 8; c++) {
            uint32_t a = y * 128 + c * 16 + 5;
            CHECK(pa_swizzle_addr(PA_SWIZZLE_128B, a) == y * 128 + ((c ^ (y % 8)) * 16) + 5,
                  "128B line %u chunk %u", y, c);
            CHECK(pa_swizzle_addr(PA_SWIZZLE_64B, a) == y * 128 + ((c ^ (y % 4)) * 16) + 5,
                  "64B line %u chunk %u", y, c);
            CHECK(pa_swizzle_addr(PA_SWIZZLE_32B, a) == y * 128 + ((c ^ (y % 2)) * 16) + 5,
                  "32B line %u chunk %u", y, c);
            CHECK(pa_swizzle_addr(PA_SWIZZLE_NONE, a) == a, "none");
            for (int sw = 0; sw < PA_SWIZZLE_COUNT; sw++)
                CHECK(pa_unswizzle_addr((pa_swizzle)sw, pa_swizzle_addr((pa_swizzle)sw, a)) == a,
                      "involution mode %d", sw);
        }
    /* PTX 5.5.7, 128B with 32-byte atomicity: row 1 reads "2 3 | 0 1 | 6 7 | 4 5". */
    static const uint32_t row1[8] = {2, 3, 0, 1, 6, 7, 4, 5};
    for (uint32_t c = 0; c < 8; c++)
        CHECK(pa_swizzle_addr(PA_SWIZZLE_128B_ATOM_32B, 128 + c * 16) == 128 + row1[c] * 16,
              "atom32 chunk %u", c);
    /* 64-byte atomicity: row 1 reads "4 5 6 7 | 0 1 2 3". */
    for (uint32_t c = 0; c < 8; c++)
        CHECK(pa_swizzle_addr(PA_SWIZZLE_128B_ATOM_64B, 128 + c * 16) == 128 + ((c + 4) % 8) * 16,
              "atom64 chunk %u", c);
}

/* DESIGN/golden C1: rank r's window is r << 24 | offset; mapa replaces the rank. */
static void test_memory(void)
{
    pa_global g;
    pa_error err;
    uint8_t a[64], b[32];
    uint64_t ida, idb;
    pa_global_init(&g);
    CHECK(pa_global_add(&g, 0x1000, sizeof a, a, &ida, &err) == PA_OK, "add a");
    CHECK(pa_global_add(&g, 0x1020, sizeof b, b, &idb, &err) == PA_ERR_INVALID_VALUE, "overlap rejected");
    CHECK(pa_global_add(&g, 0x2000, sizeof b, b, &idb, &err) == PA_OK, "add b");
    CHECK(pa_global_resolve(&g, 0x1000, 64, &err) == a, "resolve start");
    CHECK(pa_global_resolve(&g, 0x103f, 2, &err) == NULL && err.code == PA_ERR_ILLEGAL_ADDRESS,
          "runs past the end");
    CHECK(strstr(err.msg, "0x1040") != NULL, "message names the first bad address: %s", err.msg);
    CHECK(pa_global_resolve(&g, 0x1800, 1, &err) == NULL, "gap");
    CHECK(pa_global_remove(&g, ida, &err) == PA_OK && pa_global_resolve(&g, 0x1000, 1, &err) == NULL,
          "removed");
    uint64_t pick = 0;
    CHECK(pa_global_pick_address(&g, 100, 256, &pick, &err) == PA_OK && pick % 256 == 0 &&
              pa_global_resolve(&g, pick, 1, &err) == NULL,
          "picked a free address");
    pa_global_free(&g);

    /* The address search never wraps past 2^64: it restarts from the bottom
     * once, then reports that no range is left. */
    pa_global_init(&g);
    CHECK(pa_global_add(&g, 0, 16, a, NULL, &err) == PA_OK, "buffer at 0");
    CHECK(pa_global_add(&g, UINT64_MAX - 32, 16, b, NULL, &err) == PA_OK, "buffer at the top");
    CHECK(pa_global_pick_address(&g, 16, 256, &pick, &err) == PA_OK && pick == 4096,
          "search restarts below the top buffer: 0x%llx", (unsigned long long)pick);
    pa_global_free(&g);
    pa_global_init(&g);
    CHECK(pa_global_pick_address(&g, 16, 1ull << 63, &pick, &err) == PA_OK && pick == 1ull << 63, "2^63");
    CHECK(pa_global_add(&g, pick, 16, a, NULL, &err) == PA_OK, "add at 2^63");
    CHECK(pa_global_pick_address(&g, 16, 1ull << 63, &pick, &err) == PA_ERR_INVALID_VALUE &&
              strstr(err.msg, "no free global address range") != NULL,
          "no 2^63-aligned range left: %s", err.msg);
    CHECK(pa_global_pick_address(&g, 16, 3, &pick, &err) == PA_ERR_INVALID_VALUE, "align 3");
    CHECK(pa_global_pick_address(&g, UINT64_MAX, 1, &pick, &err) == PA_ERR_INVALID_VALUE, "too big");
    pa_global_free(&g);

    pa_cluster c;
    CHECK(pa_cluster_init(&c, 17, 1024, &err) == PA_ERR_INVALID_VALUE, "cluster of 17");
    CHECK(pa_cluster_init(&c, 1, PA_SMEM_MAX + 1, &err) == PA_ERR_INVALID_VALUE, "227 KiB limit");
    CHECK(pa_cluster_init(&c, 4, 4096, &err) == PA_OK, "cluster of 4");
    uint32_t rank;
    CHECK(pa_smem_resolve(&c, 2, 1, pa_mapa(0x100, 3), 16, &rank, &err) == c.smem[3] + 0x100 && rank == 3,
          "shared::cluster address of rank 3");
    CHECK(pa_smem_resolve(&c, 2, 0, pa_mapa(0x100, 3), 16, &rank, &err) == NULL,
          "shared::cta address must be the issuing CTA's own");
    CHECK(pa_smem_resolve(&c, 0, 1, 4090, 16, &rank, &err) == NULL, "past the end of shared memory");
    pa_cluster_free(&c);
}

/* golden R6-R9: the mbarrier state machine. */
static void test_mbarrier(void)
{
    pa_mbarrier b = {0};   /* a fresh object: not initialised */
    pa_error err;
    uint64_t st;
    CHECK(pa_mbar_init(&b, 0, &err) == PA_ERR_INVALID_VALUE, "count 0");
    CHECK(pa_mbar_init(&b, 2, &err) == PA_OK, "init 2");
    CHECK(!pa_mbar_test_parity(&b, 0) && pa_mbar_test_parity(&b, 1), "fresh: parity 0 open, 1 done (R7)");
    CHECK(pa_mbar_complete_tx(&b, 64, &err) == PA_OK && b.tx == -64, "complete_tx before expect_tx");
    CHECK(pa_mbar_arrive(&b, 1, 0, 0, &st, &err) == PA_OK, "arrive 1");
    CHECK(pa_mbar_pending_count(st) == 2, "pending_count = P before the arrive (R8): %u",
          pa_mbar_pending_count(st));
    CHECK(pa_mbar_arrive(&b, 1, 64, 0, &st, &err) == PA_OK, "arrive.expect_tx 64");
    CHECK(b.phase == 1 && b.pending == 2 && b.tx == 0, "phase completes when P = 0 and T = 0");
    CHECK(((st >> 32) & 0x7FF) == ((64u << 0) >> 11), "R9 tx field (before the op)");
    CHECK(pa_mbar_test_parity(&b, 0), "parity 0 done");
    CHECK(pa_mbar_arrive(&b, 3, 0, 0, &st, &err) == PA_ERR_HAZARD, "over-arrival is a hazard");
    CHECK(pa_mbar_expect_tx(&b, PA_MBAR_MAX_TX + 1, &err) == PA_ERR_HAZARD, "tx-count range");
    CHECK(pa_mbar_arrive(&b, 1, 0, PA_MBAR_DROP, &st, &err) == PA_OK && b.expected == 1,
          "arrive_drop lowers E (R11)");
}

/* golden R6-R9, R12: .noComplete, waits with a state, the over-arrival fault. */
static void test_mbarrier_forms(void)
{
    pa_mbarrier b = {0};
    pa_error err;
    uint64_t st, st0;
    CHECK(pa_mbar_init(&b, 4, &err) == PA_OK, "init 4");
    /* R9 by hand: P = 4 -> bits 43-62 = 2^20 - 4 = 0xFFFFC, phase 0, T = 0 */
    CHECK(pa_mbar_arrive(&b, 2, 0, PA_MBAR_NO_COMPLETE, &st0, &err) == PA_OK, "arrive.noComplete 2");
    CHECK(st0 == 0x7FFFE00000000000ull, "R9 state of P = 4: %016llx", (unsigned long long)st0);
    CHECK(pa_mbar_pending_count(st0) == 4 && b.pending == 2, "R8 pending_count 4");
    CHECK(pa_mbar_arrive(&b, 2, 0, PA_MBAR_NO_COMPLETE, &st, &err) == PA_ERR_HAZARD && b.pending == 2,
          "a .noComplete arrive that would complete the phase is undefined, nothing changes");
    CHECK(pa_mbar_arrive(&b, 1, 0, PA_MBAR_DROP | PA_MBAR_NO_COMPLETE, &st, &err) == PA_OK &&
              b.pending == 1 && b.expected == 3, "arrive_drop.noComplete lowers P and E (R11)");
    CHECK(!pa_mbar_test_state(&b, st0), "state of the open phase: not complete (R6)");
    CHECK(pa_mbar_arrive(&b, 1, 0, 0, &st, &err) == PA_OK && b.phase == 1 && b.pending == 3,
          "the last arrival completes phase 0, P = E = 3");
    CHECK(pa_mbar_test_state(&b, st0) && pa_mbar_state_parity(st0) == 0, "phase 0 complete (R6)");
    CHECK(pa_mbar_arrive(&b, 3, 0, 0, &st, &err) == PA_OK && b.phase == 2, "phase 1 completes");
    CHECK(!pa_mbar_test_state(&b, st0), "a state two phases back compares by parity only (R7)");
    /* R12: E taken to 0 by arrive_drop; the phase completes; one more arrive faulted. */
    pa_mbarrier z = {0};
    CHECK(pa_mbar_init(&z, 2, &err) == PA_OK, "init 2");
    CHECK(pa_mbar_arrive(&z, 2, 0, PA_MBAR_DROP, &st, &err) == PA_OK && z.phase == 1 && z.expected == 0,
          "arrive_drop of all arrivals completes the phase (R12)");
    CHECK(pa_mbar_arrive(&z, 1, 0, 0, &st, &err) == PA_ERR_HAZARD && strstr(err.msg, "R12"),
          "over-arrival names R12: %s", err.msg);
}

/* Observation 2-4: a 2D 128B-swizzled bf16 tile, OOB zero fill, at a destination
 * that is not 1024-aligned (the XOR uses the absolute address). */
static void test_tile_load(void)
{
    enum { W = 64, H = 16 };
    static uint16_t tensor[H][W];
    static uint8_t smem[8192];
    for (int r = 0; r < H; r++)
        for (int c = 0; c < W; c++)
            tensor[r][c] = (uint16_t)(r * 256 + c);
    pa_global g;
    pa_error err;
    pa_global_init(&g);
    CHECK(pa_global_add(&g, 0x10000, sizeof tensor, (uint8_t *)tensor, NULL, &err) == PA_OK, "add");
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_BFLOAT16;
    p.rank = 2;
    p.global_address = 0x10000;
    p.global_dim[0] = W;
    p.global_dim[1] = H;
    p.global_strides[0] = W * 2;
    p.box_dim[0] = 64;
    p.box_dim[1] = 8;
    p.element_strides[0] = p.element_strides[1] = 1;
    p.swizzle = PA_SWIZZLE_128B;
    pa_tensormap m;
    CHECK(pa_tensormap_encode_tiled(&m, &p, &err) == PA_OK, "encode: %s", err.msg);
    int32_t coords[PA_MAX_RANK] = {0, 12, 0, 0, 0};
    memset(smem, 0xA5, sizeof smem);
    const uint32_t dst = 384;
    CHECK(pa_copy_load_once(&m, PA_MODE_TILE, coords, NULL, &g, (pa_smem_view){smem, sizeof smem}, dst, &err) == PA_OK,
          "load: %s", err.msg);
    for (uint32_t row = 0; row < 8; row++)
        for (uint32_t col = 0; col < 64; col++) {
            uint32_t a = dst + row * 128 + col * 2;
            uint32_t s = a ^ (((a >> 7) & 7u) << 4);
            uint16_t v;
            memcpy(&v, smem + s, 2);
            uint16_t want = 12 + row < H ? tensor[12 + row][col] : 0;
            CHECK(v == want, "row %u col %u: %u != %u", row, col, v, want);
        }
    CHECK(smem[dst - 1] == 0xA5 && smem[dst + 1024] == 0xA5, "nothing outside the box written");
    coords[0] = 4;  /* 4 * 2 = 8 bytes: not a multiple of 16 (observation 1) */
    pa_copy_plan plan;
    CHECK(pa_copy_plan_make(&plan, PA_TARGET_DEFAULT, &m, PA_MODE_TILE, PA_DIR_LOAD, coords, -1, NULL, -1, &err) ==
              PA_ERR_ILLEGAL_INSTRUCTION, "unaligned c0");
    coords[0] = 0;
    coords[1] = -1;
    CHECK(pa_copy_plan_make(&plan, PA_TARGET_DEFAULT, &m, PA_MODE_TILE, PA_DIR_STORE, coords, -1, NULL, -1, &err) ==
              PA_ERR_ILLEGAL_INSTRUCTION, "negative store coord");
    pa_global_free(&g);
}

/* Engine: a queued load leaves its destination untouched until a wait needs it. */
static void test_engine(void)
{
    static uint8_t tensor[256];
    for (int i = 0; i < 256; i++)
        tensor[i] = (uint8_t)i;
    pa_machine mc;
    pa_error err;
    CHECK(pa_machine_init(&mc, 1, 4096, &err) == PA_OK, "machine");
    CHECK(pa_global_add(&mc.global, 0x100000, sizeof tensor, tensor, NULL, &err) == PA_OK, "add");
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_UINT8;
    p.rank = 1;
    p.global_address = 0x100000;
    p.global_dim[0] = 256;
    p.box_dim[0] = 64;
    p.element_strides[0] = 1;
    pa_tensormap m;
    CHECK(pa_tensormap_encode_tiled(&m, &p, &err) == PA_OK, "encode: %s", err.msg);
    CHECK(pa_machine_mbar_init(&mc, 0, 8, 1, &err) == PA_OK, "mbar init");
    pa_mbarrier *b = pa_machine_mbar(&mc, 0, 8, 0, &err);
    CHECK(pa_mbar_arrive(b, 1, 64, 0, NULL, &err) == PA_OK, "arrive.expect_tx");
    int32_t coords[PA_MAX_RANK] = {32, 0, 0, 0, 0};
    CHECK(pa_issue_tile_load(&mc, 0, 0, &m, coords, 1024, 0, 8, 0, 0, &err) == PA_OK, "issue: %s", err.msg);
    CHECK(mc.cluster.smem[0][1024] == 0 && mc.nops == 1, "not done at issue");
    int done = 0;
    CHECK(pa_machine_try_wait_parity(&mc, 0, 8, 0, &done, &err) == PA_OK && done, "try_wait completes it");
    CHECK(pa_machine_try_wait_state(&mc, 0, 8, 1ull << 63, &done, &err) == PA_OK && !done,
          "try_wait with a state of phase 1: still open");
    CHECK(mc.cluster.smem[0][1024] == 32 && mc.cluster.smem[0][1024 + 63] == 95, "bytes moved");
    /* store + bulk async-group */
    CHECK(pa_issue_tile_store(&mc, 0, 0, &m, coords, 1024, 0, PA_RED_ADD, &err) == PA_OK, "store");
    mc.cluster.smem[0][1024] = 0xEE;  /* the source is read at completion */
    CHECK(pa_bulk_commit_group(&mc, 0, 0, &err) == PA_OK, "commit");
    CHECK(pa_bulk_wait_group(&mc, 0, 0, 0, &err) == PA_OK && tensor[32] == 0xEE, "wait_group 0");
    pa_machine_free(&mc);
}


int main(void)
{
    test_swizzle_tables();
    test_memory();
    test_mbarrier();
    test_mbarrier_forms();
    test_tile_load();
    test_engine();
    if (failures)
        printf("%d failure(s)\n", failures);
    else
        printf("test_core: all passed\n");
    return failures != 0;
}
