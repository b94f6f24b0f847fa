/* test_reduce.c - hand cases for reduce.c, one or more per rule.
 * Rule sources: PTX ISA cp.reduce.async.bulk{.tensor} tables, golden/README.md
 * observations 11, 12, 18, C6 and docs/reductions.md.
 * Build: gcc -std=c11 -Wall -Wextra -Werror -I csrc/core csrc/core/types.c
 *        csrc/core/reduce.c csrc/tests/test_reduce.c
 */
#include <stdio.h>
#include <string.h>

#include "reduce.h"

#include "check.h"

static void put(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* one element through the bulk path, at an odd (unaligned) offset */
static uint64_t bulk1(pa_redop op, pa_rtype t, uint64_t d, uint64_t s)
{
    uint8_t db[17], sb[17];
    unsigned n = pa_rtype_bytes(t);
    put(db + 1, d, n);
    put(sb + 1, s, n);
    pa_reduce_bulk_apply(op, t, db + 1, sb + 1, 1);
    CHECK(get(sb + 1, n) == s, "source changed");
    return get(db + 1, n);
}

static uint64_t tens1(pa_redop op, pa_dtype dt, uint64_t d, uint64_t s)
{
    uint8_t db[16], sb[16];
    unsigned n = pa_dtype_get(dt)->elem_bytes;
    put(db, d, n);
    put(sb, s, n);
    pa_reduce_tensor_apply(op, dt, db, sb, 1);
    return get(db, n);
}

#define EQ(op, t, d, s, want)                                                            \
    do {                                                                                 \
        uint64_t got_ = bulk1(op, t, d, s);                                              \
        CHECK(got_ == (uint64_t)(want), "%s.%s %#llx, %#llx -> %#llx, want %#llx",      \
              pa_redop_name(op), pa_rtype_name(t), (unsigned long long)(d),              \
              (unsigned long long)(s), (unsigned long long)got_,                         \
              (unsigned long long)(want));                                               \
    } while (0)

#define TEQ(op, dt, d, s, want)                                                          \
    do {                                                                                 \
        uint64_t got_ = tens1(op, dt, d, s);                                             \
        CHECK(got_ == (uint64_t)(want), "tensor %s dtype %d %#llx, %#llx -> %#llx, want %#llx", \
              pa_redop_name(op), (int)(dt), (unsigned long long)(d),                     \
              (unsigned long long)(s), (unsigned long long)got_,                         \
              (unsigned long long)(want));                                               \
    } while (0)

static void test_bulk_check(void)
{
    pa_error e;
    int nglobal = 0, ncluster = 0;
    for (int op = 0; op < PA_RED_COUNT; op++)
        for (int t = 0; t < PA_RT_COUNT; t++) {
            int nf = (op == PA_RED_ADD && (t == PA_RT_F16 || t == PA_RT_BF16));
            if (pa_reduce_bulk_check((pa_redop)op, (pa_rtype)t, nf, PA_RDST_GLOBAL, NULL) == PA_OK)
                nglobal++;
            if (pa_reduce_bulk_check((pa_redop)op, (pa_rtype)t, 0, PA_RDST_SHARED_CLUSTER, NULL) == PA_OK)
                ncluster++;
        }
    /* observation 18: 27 global forms, 12 shared::cluster forms */
    CHECK(nglobal == 27, "global forms %d, want 27", nglobal);
    CHECK(ncluster == 12, "shared::cluster forms %d, want 12", ncluster);

    memset(&e, 0, sizeof e);
    CHECK(pa_reduce_bulk_check(PA_RED_MIN, PA_RT_F32, 0, PA_RDST_GLOBAL, &e) == PA_ERR_INVALID_VALUE,
          "min.f32 accepted");
    CHECK(e.code == PA_ERR_INVALID_VALUE, "code not set");
    CHECK(strcmp(e.msg, "cp.reduce.async.bulk .min.f32 to .global is not in the ISA's table of "
                        "valid (redOp, type) pairs") == 0, "message: %s", e.msg);
    /* .add.f16/.bf16 need .noftz; .noftz is illegal on f32/f64 (observation 18) */
    CHECK(pa_reduce_bulk_check(PA_RED_ADD, PA_RT_F16, 0, PA_RDST_GLOBAL, &e) == PA_ERR_INVALID_VALUE,
          "add.f16 without noftz accepted");
    CHECK(strstr(e.msg, ".noftz") != NULL, "message: %s", e.msg);
    CHECK(pa_reduce_bulk_check(PA_RED_ADD, PA_RT_BF16, 1, PA_RDST_GLOBAL, NULL) == PA_OK, "add.noftz.bf16");
    CHECK(pa_reduce_bulk_check(PA_RED_ADD, PA_RT_F32, 1, PA_RDST_GLOBAL, NULL) == PA_ERR_INVALID_VALUE,
          "add.noftz.f32 accepted");
    CHECK(pa_reduce_bulk_check(PA_RED_ADD, PA_RT_F64, 1, PA_RDST_GLOBAL, NULL) == PA_ERR_INVALID_VALUE,
          "add.noftz.f64 accepted");
    CHECK(pa_reduce_bulk_check(PA_RED_ADD, PA_RT_S64, 0, PA_RDST_GLOBAL, NULL) == PA_ERR_INVALID_VALUE,
          "add.s64 accepted");
    CHECK(pa_reduce_bulk_check(PA_RED_AND, PA_RT_U32, 0, PA_RDST_GLOBAL, NULL) == PA_ERR_INVALID_VALUE,
          "and.u32 accepted (only .b32/.b64)");
    /* shared::cluster: no 64-bit bitwise, no s64/u64 min/max, no floats */
    CHECK(pa_reduce_bulk_check(PA_RED_XOR, PA_RT_B64, 0, PA_RDST_SHARED_CLUSTER, &e) == PA_ERR_INVALID_VALUE,
          "xor.b64 to cluster accepted");
    CHECK(strstr(e.msg, ".xor.b64 to .shared::cluster") != NULL, "message: %s", e.msg);
    CHECK(pa_reduce_bulk_check(PA_RED_MIN, PA_RT_U64, 0, PA_RDST_SHARED_CLUSTER, NULL) != PA_OK, "min.u64 cluster");
    CHECK(pa_reduce_bulk_check(PA_RED_ADD, PA_RT_U64, 0, PA_RDST_SHARED_CLUSTER, NULL) == PA_OK, "add.u64 cluster");
    CHECK(pa_reduce_bulk_check(PA_RED_ADD, PA_RT_F32, 0, PA_RDST_SHARED_CLUSTER, NULL) != PA_OK, "add.f32 cluster");
    CHECK(pa_reduce_bulk_check((pa_redop)99, PA_RT_U32, 0, PA_RDST_GLOBAL, NULL) == PA_ERR_INVALID_VALUE, "op 99");
    CHECK(pa_reduce_bulk_check(PA_RED_ADD, (pa_rtype)99, 0, PA_RDST_GLOBAL, NULL) == PA_ERR_INVALID_VALUE, "type 99");
    CHECK(pa_reduce_bulk_check(PA_RED_ADD, PA_RT_U32, 0, (pa_rdst)5, NULL) == PA_ERR_INVALID_VALUE, "dst 5");
    CHECK(strcmp(pa_redop_name(PA_RED_XOR), "xor") == 0 && pa_redop_name(8) == NULL, "redop names");
    CHECK(strcmp(pa_rtype_name(PA_RT_BF16), "bf16") == 0 && pa_rtype_name(-1) == NULL, "rtype names");
    CHECK(pa_rtype_bytes(PA_RT_F16) == 2 && pa_rtype_bytes(PA_RT_S64) == 8, "rtype bytes");
}

static void test_integers(void)
{
    /* observation 12 / C6: add wraps */
    EQ(PA_RED_ADD, PA_RT_U32, 0xFFFFFFFFu, 2, 1);
    EQ(PA_RED_ADD, PA_RT_S32, 0x7FFFFFFFu, 1, 0x80000000u);
    EQ(PA_RED_ADD, PA_RT_U64, UINT64_MAX, UINT64_MAX, UINT64_MAX - 1);
    /* signed vs unsigned min/max */
    EQ(PA_RED_MIN, PA_RT_S32, 0xFFFFFFFFu, 1, 0xFFFFFFFFu);
    EQ(PA_RED_MIN, PA_RT_U32, 0xFFFFFFFFu, 1, 1);
    EQ(PA_RED_MAX, PA_RT_S32, 0x80000000u, 0x7FFFFFFFu, 0x7FFFFFFFu);
    EQ(PA_RED_MAX, PA_RT_U32, 0x80000000u, 0x7FFFFFFFu, 0x80000000u);
    EQ(PA_RED_MIN, PA_RT_S64, UINT64_C(0x8000000000000000), 0, UINT64_C(0x8000000000000000));
    EQ(PA_RED_MAX, PA_RT_S64, UINT64_C(0xFFFFFFFFFFFFFFFF), 0, 0);
    EQ(PA_RED_MAX, PA_RT_U64, UINT64_C(0xFFFFFFFFFFFFFFFF), 0, UINT64_C(0xFFFFFFFFFFFFFFFF));
    /* inc: old >= src ? 0 : old+1 */
    EQ(PA_RED_INC, PA_RT_U32, 5, 5, 0);
    EQ(PA_RED_INC, PA_RT_U32, 4, 5, 5);
    EQ(PA_RED_INC, PA_RT_U32, 7, 0, 0);
    EQ(PA_RED_INC, PA_RT_U32, 0xFFFFFFFEu, 0xFFFFFFFFu, 0xFFFFFFFFu);
    /* dec: old == 0 || old > src ? src : old-1 */
    EQ(PA_RED_DEC, PA_RT_U32, 0, 9, 9);
    EQ(PA_RED_DEC, PA_RT_U32, 10, 9, 9);
    EQ(PA_RED_DEC, PA_RT_U32, 9, 9, 8);
    EQ(PA_RED_DEC, PA_RT_U32, 1, 0, 0);
    /* bitwise */
    EQ(PA_RED_AND, PA_RT_B32, 0xF0F0F0F0u, 0xFF00FF00u, 0xF000F000u);
    EQ(PA_RED_OR, PA_RT_B64, UINT64_C(0xF000000000000000), 1, UINT64_C(0xF000000000000001));
    EQ(PA_RED_XOR, PA_RT_B64, UINT64_C(0xAAAAAAAAAAAAAAAA), UINT64_C(0xFFFFFFFFFFFFFFFF),
       UINT64_C(0x5555555555555555));
    /* a pair outside every table leaves the destination unchanged */
    EQ(PA_RED_ADD, PA_RT_S64, 1, 2, 1);
    EQ(PA_RED_MIN, PA_RT_F32, 0x3F800000u, 0, 0x3F800000u);
}

static void test_half(void)
{
    /* add.noftz.f16: RNE, subnormals kept, NaN -> 0x7FFF (observation 12) */
    EQ(PA_RED_ADD, PA_RT_F16, 0x3C00, 0x3C00, 0x4000);       /* 1 + 1 = 2 */
    EQ(PA_RED_ADD, PA_RT_F16, 0x3C00, 0x1000, 0x3C00);       /* 1 + 2^-11: tie, even stays */
    EQ(PA_RED_ADD, PA_RT_F16, 0x3C01, 0x1000, 0x3C02);       /* 1+ulp + half ulp: tie -> even up */
    EQ(PA_RED_ADD, PA_RT_F16, 0x3C00, 0x1001, 0x3C01);       /* above half ulp rounds up */
    EQ(PA_RED_ADD, PA_RT_F16, 0x0001, 0x0001, 0x0002);       /* subnormals kept */
    EQ(PA_RED_ADD, PA_RT_F16, 0x0400, 0x8001, 0x03FF);       /* min normal - min sub -> subnormal */
    EQ(PA_RED_ADD, PA_RT_F16, 0x7BFF, 0x7BFF, 0x7C00);       /* overflow -> inf */
    EQ(PA_RED_ADD, PA_RT_F16, 0x7BFF, 0x4C00, 0x7C00);       /* max + half ulp: tie to even -> inf */
    EQ(PA_RED_ADD, PA_RT_F16, 0x7BFF, 0x4BFF, 0x7BFF);       /* max + <half ulp stays */
    EQ(PA_RED_ADD, PA_RT_F16, 0x7C00, 0xFC00, 0x7FFF);       /* inf + -inf */
    EQ(PA_RED_ADD, PA_RT_F16, 0x7C01, 0x3C00, 0x7FFF);       /* signalling NaN operand */
    EQ(PA_RED_ADD, PA_RT_F16, 0x3C00, 0xFE00, 0x7FFF);
    EQ(PA_RED_ADD, PA_RT_F16, 0xFC00, 0x3C00, 0xFC00);       /* inf + x */
    EQ(PA_RED_ADD, PA_RT_F16, 0x3C00, 0xBC00, 0x0000);       /* x + -x = +0 */
    EQ(PA_RED_ADD, PA_RT_F16, 0x8000, 0x8000, 0x8000);       /* -0 + -0 = -0 */
    EQ(PA_RED_ADD, PA_RT_F16, 0x8000, 0x0000, 0x0000);       /* -0 + +0 = +0 */
    EQ(PA_RED_ADD, PA_RT_F16, 0x8000, 0x8001, 0x8001);       /* -0 + x = x */
    /* bf16: the exponent range needs the wide soft add (2^127 + 2^-133) */
    EQ(PA_RED_ADD, PA_RT_BF16, 0x3F80, 0x3F80, 0x4000);
    EQ(PA_RED_ADD, PA_RT_BF16, 0x7F00, 0x0001, 0x7F00);
    EQ(PA_RED_ADD, PA_RT_BF16, 0x3F80, 0x3B80, 0x3F80);      /* 1 + 2^-8: tie -> even */
    EQ(PA_RED_ADD, PA_RT_BF16, 0x3F81, 0x3B80, 0x3F82);
    EQ(PA_RED_ADD, PA_RT_BF16, 0x0001, 0x8002, 0x8001);      /* subnormal result kept */
    EQ(PA_RED_ADD, PA_RT_BF16, 0x7F7F, 0x7F7F, 0x7F80);
    EQ(PA_RED_ADD, PA_RT_BF16, 0xFF80, 0x7F80, 0x7FFF);
    EQ(PA_RED_ADD, PA_RT_BF16, 0xFFC1, 0x0000, 0x7FFF);
    /* min/max f16/bf16: one NaN -> other operand, two -> 0x7FFF, -0 < +0 */
    EQ(PA_RED_MIN, PA_RT_F16, 0x7E00, 0x3C00, 0x3C00);
    EQ(PA_RED_MAX, PA_RT_F16, 0xBC00, 0xFC01, 0xBC00);
    EQ(PA_RED_MIN, PA_RT_F16, 0x7E00, 0xFD00, 0x7FFF);
    EQ(PA_RED_MAX, PA_RT_BF16, 0x7FC0, 0xFF81, 0x7FFF);
    EQ(PA_RED_MIN, PA_RT_F16, 0x0000, 0x8000, 0x8000);
    EQ(PA_RED_MIN, PA_RT_F16, 0x8000, 0x0000, 0x8000);
    EQ(PA_RED_MAX, PA_RT_BF16, 0x8000, 0x0000, 0x0000);
    EQ(PA_RED_MAX, PA_RT_BF16, 0x0000, 0x8000, 0x0000);
    EQ(PA_RED_MIN, PA_RT_BF16, 0xFF80, 0x8001, 0xFF80);      /* -inf smallest */
    EQ(PA_RED_MAX, PA_RT_F16, 0x0001, 0x8001, 0x0001);       /* subnormals compared, not flushed */
    EQ(PA_RED_MIN, PA_RT_F16, 0xBC00, 0xC000, 0xC000);       /* negative ordering */
}

static void test_f32_f64(void)
{
    /* add.f32: RNE, subnormals NOT flushed (ISA text says flushed; H200 keeps them) */
    EQ(PA_RED_ADD, PA_RT_F32, 0x00000001u, 0x00000001u, 0x00000002u);
    EQ(PA_RED_ADD, PA_RT_F32, 0x00800000u, 0x80000001u, 0x007FFFFFu);
    EQ(PA_RED_ADD, PA_RT_F32, 0x00800000u, 0x00000001u, 0x00800001u);
    EQ(PA_RED_ADD, PA_RT_F32, 0x3F800000u, 0x33800000u, 0x3F800000u);   /* 1 + 2^-24 tie -> even */
    EQ(PA_RED_ADD, PA_RT_F32, 0x3F800001u, 0x33800000u, 0x3F800002u);
    EQ(PA_RED_ADD, PA_RT_F32, 0x3F800000u, 0xB3800000u, 0x3F7FFFFFu);   /* exact 1 - 2^-24 */
    EQ(PA_RED_ADD, PA_RT_F32, 0x3F800000u, 0xB3000001u, 0x3F7FFFFFu);   /* 1 - just over 2^-25: rounds down */
    EQ(PA_RED_ADD, PA_RT_F32, 0x7F7FFFFFu, 0x7F7FFFFFu, 0x7F800000u);   /* overflow -> inf */
    EQ(PA_RED_ADD, PA_RT_F32, 0xFF7FFFFFu, 0xF3000000u, 0xFF800000u);   /* tie at max -> -inf */
    EQ(PA_RED_ADD, PA_RT_F32, 0xFF7FFFFFu, 0xF2FFFFFFu, 0xFF7FFFFFu);   /* below the tie stays */
    EQ(PA_RED_ADD, PA_RT_F32, 0x7FA00001u, 0x3F800000u, 0x7FFFFFFFu);   /* NaN -> 0x7FFFFFFF */
    EQ(PA_RED_ADD, PA_RT_F32, 0x7F800000u, 0xFF800000u, 0x7FFFFFFFu);
    EQ(PA_RED_ADD, PA_RT_F32, 0x80000000u, 0x80000000u, 0x80000000u);
    EQ(PA_RED_ADD, PA_RT_F32, 0x40400000u, 0xC0400000u, 0x00000000u);
    EQ(PA_RED_ADD, PA_RT_F32, 0x7F000000u, 0x00000001u, 0x7F000000u);   /* huge exponent gap */
    EQ(PA_RED_ADD, PA_RT_F32, 0x4B800000u, 0xB4000000u, 0x4B800000u);   /* 2^24 - tiny: sticky */
    EQ(PA_RED_ADD, PA_RT_F32, 0x4B800001u, 0xBF800000u, 0x4B800000u);   /* 2^24+2 - 1 = tie -> even */
    /* add.f64: NaN operand unchanged, source NaN wins, inf-inf = 0xFFF8... */
    EQ(PA_RED_ADD, PA_RT_F64, UINT64_C(0x7FF0000000000001), UINT64_C(0x3FF0000000000000),
       UINT64_C(0x7FF0000000000001));
    EQ(PA_RED_ADD, PA_RT_F64, UINT64_C(0x3FF0000000000000), UINT64_C(0xFFF4000000000000),
       UINT64_C(0xFFF4000000000000));
    EQ(PA_RED_ADD, PA_RT_F64, UINT64_C(0x7FF8000000000000), UINT64_C(0xFFF0000000000002),
       UINT64_C(0xFFF0000000000002));
    EQ(PA_RED_ADD, PA_RT_F64, UINT64_C(0x7FF0000000000000), UINT64_C(0xFFF0000000000000),
       UINT64_C(0xFFF8000000000000));
    EQ(PA_RED_ADD, PA_RT_F64, UINT64_C(0x3FF0000000000000), UINT64_C(0x3CA0000000000000),
       UINT64_C(0x3FF0000000000000));                                     /* 1 + 2^-53 tie */
    EQ(PA_RED_ADD, PA_RT_F64, UINT64_C(0x3FF0000000000001), UINT64_C(0x3CA0000000000000),
       UINT64_C(0x3FF0000000000002));
    EQ(PA_RED_ADD, PA_RT_F64, UINT64_C(0x0000000000000001), UINT64_C(0x0000000000000001),
       UINT64_C(0x0000000000000002));
    EQ(PA_RED_ADD, PA_RT_F64, UINT64_C(0x7FEFFFFFFFFFFFFF), UINT64_C(0x7FEFFFFFFFFFFFFF),
       UINT64_C(0x7FF0000000000000));
    EQ(PA_RED_ADD, PA_RT_F64, UINT64_C(0x8000000000000000), UINT64_C(0x0000000000000000), 0);
}

static void test_tensor(void)
{
    pa_error e;
    int n = 0;
    for (int op = 0; op < PA_RED_COUNT; op++)
        for (int dt = 0; dt < PA_DTYPE_COUNT; dt++)
            if (pa_reduce_tensor_check((pa_redop)op, (pa_dtype)dt, NULL) == PA_OK)
                n++;
    /* observation 11: 10 add + 6 min + 6 max + inc + dec + 3 x and/or/xor */
    CHECK(n == 33, "tensor pairs executing %d, want 33", n);
    memset(&e, 0, sizeof e);
    CHECK(pa_reduce_tensor_check(PA_RED_AND, PA_DTYPE_INT64, &e) == PA_ERR_ILLEGAL_INSTRUCTION,
          "and INT64 executes");
    CHECK(strstr(e.msg, ".and") && strstr(e.msg, "INT64"), "message: %s", e.msg);
    CHECK(pa_reduce_tensor_check(PA_RED_ADD, PA_DTYPE_INT64, NULL) == PA_ERR_ILLEGAL_INSTRUCTION, "add INT64");
    CHECK(pa_reduce_tensor_check(PA_RED_ADD, PA_DTYPE_UINT8, NULL) == PA_ERR_ILLEGAL_INSTRUCTION, "add UINT8");
    CHECK(pa_reduce_tensor_check(PA_RED_MIN, PA_DTYPE_FLOAT32, NULL) == PA_ERR_ILLEGAL_INSTRUCTION, "min f32");
    CHECK(pa_reduce_tensor_check(PA_RED_ADD, PA_DTYPE_FLOAT64, NULL) == PA_OK, "add f64");
    CHECK(pa_reduce_tensor_check(PA_RED_ADD, PA_DTYPE_TFLOAT32_FTZ, NULL) == PA_OK, "add tf32.ftz");
    CHECK(pa_reduce_tensor_check(PA_RED_XOR, PA_DTYPE_INT32, NULL) == PA_OK, "xor INT32");
    CHECK(pa_reduce_tensor_check(PA_RED_ADD, (pa_dtype)16, NULL) == PA_ERR_INVALID_VALUE, "dtype 16");

    /* integer semantics follow the map type's signedness */
    TEQ(PA_RED_MIN, PA_DTYPE_INT32, 0xFFFFFFFFu, 1, 0xFFFFFFFFu);
    TEQ(PA_RED_MIN, PA_DTYPE_UINT32, 0xFFFFFFFFu, 1, 1);
    TEQ(PA_RED_MAX, PA_DTYPE_INT64, UINT64_C(0xFFFFFFFFFFFFFFFF), 3, 3);
    TEQ(PA_RED_XOR, PA_DTYPE_UINT64, 0xFF, 0x0F, 0xF0);
    TEQ(PA_RED_ADD, PA_DTYPE_INT32, 0x7FFFFFFFu, 1, 0x80000000u);
    /* a pair that does not execute leaves the destination unchanged */
    TEQ(PA_RED_AND, PA_DTYPE_INT64, 0xFF, 0x0F, 0xFF);
    /* FLOAT32 / TFLOAT32: plain f32 add, no flush, no tf32 rounding */
    TEQ(PA_RED_ADD, PA_DTYPE_FLOAT32, 0x00000001u, 0x00000001u, 0x00000002u);
    TEQ(PA_RED_ADD, PA_DTYPE_TFLOAT32, 0x3F800001u, 0x3F800001u, 0x40000001u);
    TEQ(PA_RED_ADD, PA_DTYPE_TFLOAT32, 0x00000003u, 0x80000001u, 0x00000002u);
    TEQ(PA_RED_ADD, PA_DTYPE_TFLOAT32, 0x7FA00000u, 0x3F800000u, 0x7FFFFFFFu);
    /* FLOAT32_FTZ / TFLOAT32_FTZ: subnormal inputs and results -> signed zero */
    TEQ(PA_RED_ADD, PA_DTYPE_FLOAT32_FTZ, 0x00000001u, 0x00000001u, 0x00000000u);
    TEQ(PA_RED_ADD, PA_DTYPE_FLOAT32_FTZ, 0x80000005u, 0x80000001u, 0x80000000u);
    TEQ(PA_RED_ADD, PA_DTYPE_FLOAT32_FTZ, 0x80000005u, 0x00000001u, 0x00000000u);
    TEQ(PA_RED_ADD, PA_DTYPE_FLOAT32_FTZ, 0x00800000u, 0x00000001u, 0x00800000u);   /* input flushed */
    TEQ(PA_RED_ADD, PA_DTYPE_TFLOAT32_FTZ, 0x00800001u, 0x80800000u, 0x00000000u);  /* result flushed */
    TEQ(PA_RED_ADD, PA_DTYPE_TFLOAT32_FTZ, 0x80800001u, 0x00800000u, 0x80000000u);  /* sign kept */
    TEQ(PA_RED_ADD, PA_DTYPE_FLOAT32_FTZ, 0x3F800001u, 0x3F800001u, 0x40000001u);
    TEQ(PA_RED_ADD, PA_DTYPE_FLOAT32_FTZ, 0xFF800000u, 0x7F800000u, 0x7FFFFFFFu);
    /* f16 / bf16 / f64 maps use the bulk rules */
    TEQ(PA_RED_ADD, PA_DTYPE_FLOAT16, 0x0001, 0x0001, 0x0002);
    TEQ(PA_RED_MIN, PA_DTYPE_BFLOAT16, 0x7FC0, 0x8000, 0x8000);
    TEQ(PA_RED_ADD, PA_DTYPE_FLOAT64, UINT64_C(0x7FF0000000000000), UINT64_C(0xFFF0000000000000),
        UINT64_C(0xFFF8000000000000));
}

static void test_arrays(void)
{
    /* n elements, unaligned, in order */
    uint8_t d[1 + 4 * 8], s[3 + 4 * 8];
    for (int i = 0; i < 8; i++) {
        put(d + 1 + 4 * i, (uint64_t)i, 4);
        put(s + 3 + 4 * i, (uint64_t)(100 * i), 4);
    }
    pa_reduce_bulk_apply(PA_RED_ADD, PA_RT_U32, d + 1, s + 3, 8);
    for (int i = 0; i < 8; i++)
        CHECK(get(d + 1 + 4 * i, 4) == (uint64_t)(101 * i), "element %d", i);
    pa_reduce_bulk_apply(PA_RED_ADD, PA_RT_U32, d + 1, s + 3, 0); /* n = 0: no-op */
    CHECK(get(d + 1, 4) == 0, "n=0 changed data");
}

int main(void)
{
    test_bulk_check();
    test_integers();
    test_half();
    test_f32_f64();
    test_tensor();
    test_arrays();
    if (failures) {
        printf("test_reduce: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_reduce: all passed\n");
    return 0;
}
