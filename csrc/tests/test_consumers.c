/* test_consumers.c - wgmma descriptors, ldmatrix / stmatrix and bank conflicts.
 * Each case cites the golden/README.md observation it checks ("Shared-memory
 * read families" W1-W8, L1-L2; "Shared-memory bank conflicts" K1-K4).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#include "check.h"

/* Bit positions of the five fields; a recorded descriptor round-trips. */
static void test_desc_fields(void)
{
    pa_error err;
    pa_wgmma_desc d = {.start = 1024, .lbo = 128, .sbo = 256, .base_offset = 0, .swizzle = PA_WGMMA_SWZ_NONE};
    uint64_t v = 0;
    CHECK(pa_wgmma_desc_encode(&d, &v, &err) == PA_OK, "encode: %s", err.msg);
    /* wgmma_smem_read.pub.0000 (hand check) received 0x0000001000080040. */
    CHECK(v == 0x0000001000080040ull, "hand-check descriptor 0x%016llx", (unsigned long long)v);
    /* tma_to_wgmma.pub.0000: 128B, start 4704, LBO 16, SBO 1024 -> 0x4000004000010126. */
    pa_wgmma_desc e;
    pa_wgmma_desc_decode(0x4000004000010126ull, &e);
    CHECK(e.start == 4704 && e.lbo == 16 && e.sbo == 1024 && e.base_offset == 0 && e.swizzle == PA_WGMMA_SWZ_128B &&
              e.other_bits == 0, "decode 128B descriptor");
    /* base offset bits 49-51, swizzle 62-63 */
    d.base_offset = 5;
    d.swizzle = PA_WGMMA_SWZ_32B;
    CHECK(pa_wgmma_desc_encode(&d, &v, &err) == PA_OK && (v >> 49 & 7) == 5 && v >> 62 == 3, "bo / swizzle bits");
    /* W6: bits outside the fields decode into other_bits, fields unchanged. */
    pa_wgmma_desc_decode(v | PA_WGMMA_DESC_OTHER_BITS, &e);
    CHECK(e.start == 1024 && e.lbo == 128 && e.sbo == 256 && e.base_offset == 5 && e.swizzle == 3 &&
              e.other_bits == PA_WGMMA_DESC_OTHER_BITS, "other bits named, fields intact");
    /* The start field keeps address bits 4-17 only. */
    pa_wgmma_desc_decode(0x3FFF, &e);
    CHECK(e.start == 0x3FFF0, "start field is 14 bits of addr >> 4");
    /* Rejections name the field. */
    d.lbo = 24;
    CHECK(pa_wgmma_desc_encode(&d, &v, &err) == PA_ERR_INVALID_VALUE && strstr(err.msg, "LBO"), "LBO not a multiple of 16");
    d.lbo = 128;
    d.sbo = 1u << 18;
    CHECK(pa_wgmma_desc_encode(&d, &v, &err) == PA_ERR_INVALID_VALUE && strstr(err.msg, "SBO"), "SBO range");
    d.sbo = 256;
    d.base_offset = 8;
    CHECK(pa_wgmma_desc_encode(&d, &v, &err) == PA_ERR_INVALID_VALUE && strstr(err.msg, "base offset"), "bo");
    d.base_offset = 0;
    d.other_bits = 1;
    CHECK(pa_wgmma_desc_encode(&d, &v, &err) == PA_ERR_INVALID_VALUE, "other bits overlapping a field");
}

static pa_wgmma_operand operand(uint32_t start, uint32_t lbo, uint32_t sbo, uint32_t bo, uint32_t swz,
                                pa_wgmma_major major, int b, uint32_t rows)
{
    pa_wgmma_operand op = {.desc = {.start = start, .lbo = lbo, .sbo = sbo, .base_offset = bo, .swizzle = swz},
                           .type = PA_WG_F16, .major = major, .operand_b = b, .rows = rows};
    return op;
}

/* W1: K-major, no swizzle, LBO 128, SBO 256: 8 x 16-byte core matrices. */
static void test_w1_hand_check(void)
{
    pa_wgmma_operand op = operand(1024, 128, 256, 0, 0, PA_MAJOR_K, 1, 8);
    for (uint32_t i = 0; i < 8; i++)
        for (uint32_t k = 0; k < 16; k++) {
            uint64_t want = 1024 + (i % 8) * 16 + (i / 8) * 256 + (k % 8) * 2 + (k / 8) * 128;
            CHECK(pa_wgmma_elem_addr(&op.desc, op.major, 2, i, k) == want, "W1 (%u, %u)", i, k);
        }
    /* recorded: element (n=1, k=8) at 1168 */
    CHECK(pa_wgmma_elem_addr(&op.desc, op.major, 2, 1, 8) == 1168, "W1 recorded element");
}

/* W2, W4: swizzled K-major rows are S apart and the XOR uses absolute bits [7, 10). */
static void test_w2_w4_swizzled(void)
{
    /* 128B at a 1024-aligned start: row i, chunk c lands at chunk c ^ (i % 8). */
    pa_wgmma_operand op = operand(2048, 16, 1024, 0, PA_WGMMA_SWZ_128B, PA_MAJOR_K, 1, 16);
    for (uint32_t i = 0; i < 16; i++)
        for (uint32_t k = 0; k < 16; k++) {
            uint32_t chunk = (k * 2) / 16, want_chunk = chunk ^ (i % 8);
            uint64_t want = 2048 + (i / 8) * 1024 + (i % 8) * 128 + want_chunk * 16 + (k * 2) % 16;
            CHECK(pa_wgmma_elem_addr(&op.desc, op.major, 2, i, k) == want, "128B (%u, %u)", i, k);
        }
    /* W4: start 128 bytes into the repeat: row 0 is line 1 of the pattern. */
    op.desc.start = 2048 + 128;
    CHECK(pa_wgmma_elem_addr(&op.desc, op.major, 2, 0, 0) == 2048 + 128 + 16, "absolute XOR, row 0 chunk 0 -> 1");
    /* W3: LBO has no effect on K-major swizzled reads. */
    pa_wgmma_desc other = op.desc;
    other.lbo = 4096;
    for (uint32_t k = 0; k < 16; k++)
        CHECK(pa_wgmma_elem_addr(&other, op.major, 2, 9, k) == pa_wgmma_elem_addr(&op.desc, op.major, 2, 9, k),
              "W3 LBO ignored");
    /* W5: base offset (start >> 7) & 7 with a 128-aligned start XORs the offset from the start. */
    op.desc.base_offset = ((2048 + 128) >> 7) & 7;
    CHECK(pa_wgmma_elem_addr(&op.desc, op.major, 2, 0, 0) == 2048 + 128, "W5: offset-relative XOR");
    CHECK(pa_wgmma_elem_addr(&op.desc, op.major, 2, 1, 0) == 2048 + 256 + 16, "W5: row 1 chunk 1");
    /* 64B / 32B masks */
    pa_wgmma_operand s64 = operand(0, 16, 512, 0, PA_WGMMA_SWZ_64B, PA_MAJOR_K, 1, 8);
    CHECK(pa_wgmma_elem_addr(&s64.desc, PA_MAJOR_K, 2, 3, 0) == 3 * 64 + 16 * ((3 * 64 >> 7) & 3), "64B");
    pa_wgmma_operand s32 = operand(0, 16, 256, 0, PA_WGMMA_SWZ_32B, PA_MAJOR_K, 1, 8);
    CHECK(pa_wgmma_elem_addr(&s32.desc, PA_MAJOR_K, 2, 4, 0) == 4 * 32 + 16, "32B");
}

/* W2, MN-major rows of the table. */
static void test_w2_mn_major(void)
{
    pa_wgmma_desc d = {.start = 0, .lbo = 1024, .sbo = 128, .swizzle = PA_WGMMA_SWZ_NONE};
    /* none: i%8 contiguous (2 bytes), SBO between groups of 8, LBO between k halves */
    CHECK(pa_wgmma_elem_addr(&d, PA_MAJOR_MN, 2, 9, 0) == 2 + 128, "MN none i");
    CHECK(pa_wgmma_elem_addr(&d, PA_MAJOR_MN, 2, 0, 9) == 16 + 1024, "MN none k");
    /* swizzled: S/2 elements contiguous, LBO between blocks, SBO between k halves */
    pa_wgmma_desc s = {.start = 0, .lbo = 2048, .sbo = 1024, .swizzle = PA_WGMMA_SWZ_128B};
    CHECK(pa_wgmma_elem_addr(&s, PA_MAJOR_MN, 2, 63, 0) == 126, "MN 128B last of block");
    CHECK(pa_wgmma_elem_addr(&s, PA_MAJOR_MN, 2, 64, 0) == 2048, "MN 128B next block via LBO");
    CHECK(pa_wgmma_elem_addr(&s, PA_MAJOR_MN, 2, 0, 8) == 1024, "MN 128B k/8 via SBO");
    CHECK(pa_wgmma_elem_addr(&s, PA_MAJOR_MN, 2, 0, 1) == 128 + 16, "MN 128B row 1 swizzled");
}

/* W7: a read past the end of shared memory faults and reads nothing. */
static void test_w7_fault(void)
{
    pa_error err;
    uint8_t *smem = calloc(59392, 1);
    uint8_t out[16 * 16 * 2];
    memset(out, 0x5A, sizeof out);
    pa_wgmma_operand op = operand(59264, 128, 256, 0, 0, PA_MAJOR_K, 1, 16);
    CHECK(pa_wgmma_read(&op, smem, 59392, out, &err) == PA_ERR_ILLEGAL_ADDRESS, "W7 start near the end");
    CHECK(strstr(err.msg, "W7") != NULL && out[0] == 0x5A, "named, nothing read: %s", err.msg);
    op = operand(1024, 128, 0x3FFF0, 0, 0, PA_MAJOR_K, 1, 64);
    CHECK(pa_wgmma_read(&op, smem, 59392, out, &err) == PA_ERR_ILLEGAL_ADDRESS, "W7 SBO field 0x3FFF");
    /* A read inside memory copies the bytes the addresses name. */
    for (uint32_t a = 0; a < 59392; a += 2) {
        uint16_t code = (uint16_t)(0x8400 + a / 2);
        memcpy(smem + a, &code, 2);
    }
    op = operand(1024, 128, 256, 0, 0, PA_MAJOR_K, 1, 8);
    CHECK(pa_wgmma_read(&op, smem, 59392, out, &err) == PA_OK, "read: %s", err.msg);
    for (uint32_t i = 0; i < 8; i++)
        for (uint32_t k = 0; k < 16; k++) {
            uint16_t got;
            memcpy(&got, out + (i * 16 + k) * 2, 2);
            CHECK(got == 0x8400 + pa_wgmma_elem_addr(&op.desc, op.major, 2, i, k) / 2, "read (%u,%u)", i, k);
        }
    free(smem);
}

/* ISA shapes: types and major-ness. */
static void test_shapes(void)
{
    pa_error err;
    pa_wgmma_operand op = operand(0, 16, 1024, 0, 1, PA_MAJOR_K, 1, 8);
    op.type = PA_WG_TF32;
    CHECK(pa_wgmma_operand_check(&op, &err) == PA_OK && pa_wgmma_type_k(PA_WG_TF32) == 8, "tf32 k8");
    /* tf32 element k = 4 is byte 16 of the row, as f16 element 8 */
    CHECK(pa_wgmma_elem_addr(&op.desc, PA_MAJOR_K, 4, 0, 4) == pa_wgmma_elem_addr(&op.desc, PA_MAJOR_K, 2, 0, 8),
          "K bytes shared by the types");
    op.major = PA_MAJOR_MN;
    CHECK(pa_wgmma_operand_check(&op, &err) == PA_ERR_INVALID_VALUE && strstr(err.msg, "f16"), "tf32 MN-major");
    op.type = PA_WG_S8;
    op.major = PA_MAJOR_K;
    op.rows = 40;
    CHECK(pa_wgmma_operand_check(&op, &err) == PA_ERR_INVALID_VALUE, "s8 N=40");
    op.rows = 48;
    CHECK(pa_wgmma_operand_check(&op, &err) == PA_OK, "s8 N=48");
    op.operand_b = 0;
    CHECK(pa_wgmma_operand_check(&op, &err) == PA_ERR_INVALID_VALUE, "A has 64 rows");
    op.rows = 64;
    CHECK(pa_wgmma_operand_check(&op, &err) == PA_OK, "A 64 rows");
}

/* L1: fragment map without and with .trans; L2: alignment. */
static void test_ldmatrix(void)
{
    pa_error err;
    uint32_t addr[32], map[32 * 4 * 2];
    for (uint32_t t = 0; t < 32; t++)
        addr[t] = 1024 + t * 64;   /* rows 64 bytes apart */
    CHECK(pa_ldmatrix_map(4, 0, addr, map, &err) == PA_OK, "x4");
    /* thread 5, register 2: row addr[16 + 1] + 4 */
    CHECK(map[(5 * 4 + 2) * 2] == addr[17] + 4 && map[(5 * 4 + 2) * 2 + 1] == addr[17] + 6, "L1 no trans");
    CHECK(pa_ldmatrix_map(2, 1, addr, map, &err) == PA_OK, "x2 trans");
    /* thread 6 (t/4 = 1, t%4 = 2), register 1: rows 8+4, 8+5 at column 1 */
    CHECK(map[(6 * 2 + 1) * 2] == addr[12] + 2 && map[(6 * 2 + 1) * 2 + 1] == addr[13] + 2, "L1 trans");
    /* L2: .x2 ignores threads 16-31; .x4 faults on one row at 8 mod 16 */
    addr[20] += 8;
    CHECK(pa_ldmatrix_map(2, 0, addr, map, &err) == PA_OK, "L2 unused row");
    CHECK(pa_ldmatrix_map(4, 0, addr, map, &err) == PA_ERR_MISALIGNED_ADDRESS && strstr(err.msg, "thread 20"),
          "L2 fault: %s", err.msg);
    CHECK(pa_ldmatrix_map(3, 0, addr, map, &err) == PA_ERR_INVALID_VALUE, ".x3");
    addr[20] -= 8;
    /* stmatrix then ldmatrix returns the registers (mirror) */
    uint8_t smem[4096] = {0};
    uint32_t regs[32 * 4], back[32 * 4];
    for (uint32_t t = 0; t < 32; t++)
        addr[t] = (t % 8) * 16 + (t / 8) * 128;   /* four 8x8 matrices packed */
    for (uint32_t r = 0; r < 32 * 4; r++)
        regs[r] = 0x10000u * (r + 1000) + r;
    for (int trans = 0; trans < 2; trans++) {
        CHECK(pa_stmatrix(smem, sizeof smem, 4, trans, addr, regs, &err) == PA_OK, "stmatrix");
        CHECK(pa_ldmatrix(smem, sizeof smem, 4, trans, addr, back, &err) == PA_OK, "ldmatrix");
        CHECK(memcmp(regs, back, sizeof regs) == 0, "round trip trans=%d", trans);
    }
    addr[3] = 4096 - 8;
    CHECK(pa_ldmatrix(smem, sizeof smem, 1, 0, addr, back, &err) != PA_OK, "row outside memory");
}

static uint32_t wf(pa_smem_op op, uint32_t width, uint32_t num, const uint32_t addr[32])
{
    pa_bank_report r;
    pa_error err;
    if (pa_bank_wavefronts(op, width, num, addr, &r, &err) != PA_OK)
        return 0;
    return r.wavefronts;
}

static void test_banks(void)
{
    uint32_t a[32];
    /* K1: 4-byte, stride 4 words -> 4 distinct words in banks 0,4,...: 4-way */
    for (uint32_t t = 0; t < 32; t++)
        a[t] = t * 16;
    CHECK(wf(PA_SMEM_LD, 4, 0, a) == 4, "K1 stride 16 bytes");
    for (uint32_t t = 0; t < 32; t++)
        a[t] = 64;
    CHECK(wf(PA_SMEM_LD, 4, 0, a) == 1 && wf(PA_SMEM_ST, 4, 0, a) == 1, "K1 broadcast");
    /* K3: 8-byte stores by half-warps, 16-byte by quarters: one address -> 2, 4 */
    CHECK(wf(PA_SMEM_ST, 8, 0, a) == 2 && wf(PA_SMEM_ST, 16, 0, a) == 4, "K3 one address");
    /* K4: the same loads pack: 1 and 2 wavefronts */
    CHECK(wf(PA_SMEM_LD, 8, 0, a) == 1 && wf(PA_SMEM_LD, 16, 0, a) == 2, "K4 packed broadcast");
    /* K4: half-warps reading the same 16 words do not pack (pairs differ) */
    for (uint32_t t = 0; t < 32; t++)
        a[t] = (t % 16) * 8;
    CHECK(wf(PA_SMEM_LD, 8, 0, a) == 2, "K4 no packing without equal pairs");
    /* K2: ldmatrix rows at a 128-byte pitch: 8-way per matrix */
    for (uint32_t t = 0; t < 32; t++)
        a[t] = (t % 8) * 128 + (t / 8) * 16;
    CHECK(wf(PA_SMEM_LDMATRIX, 16, 1, a) == 8 && wf(PA_SMEM_LDMATRIX, 16, 4, a) == 32, "K2 pitch 128");
    for (uint32_t t = 0; t < 32; t++)
        a[t] = pa_swizzle_addr(PA_SWIZZLE_128B, (t % 8) * 128 + (t / 8) * 16);
    CHECK(wf(PA_SMEM_LDMATRIX, 16, 4, a) == 4, "K2 128B swizzle: conflict-free");
    pa_bank_report r;
    pa_error err;
    a[0] = 4;
    CHECK(pa_bank_wavefronts(PA_SMEM_LD, 8, 0, a, &r, &err) == PA_ERR_MISALIGNED_ADDRESS, "misaligned");
    CHECK(pa_bank_wavefronts(PA_SMEM_LD, 12, 0, a, &r, &err) == PA_ERR_INVALID_VALUE, "width 12");
}

int main(void)
{
    test_desc_fields();
    test_w1_hand_check();
    test_w2_w4_swizzled();
    test_w2_mn_major();
    test_w7_fault();
    test_shapes();
    test_ldmatrix();
    test_banks();
    if (failures)
        printf("%d failure(s)\n", failures);
    else
        printf("test_consumers: all passed\n");
    return failures != 0;
}
