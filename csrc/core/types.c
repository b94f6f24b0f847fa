/* types.c - element-type table, enum names, error helper. */
#include "types.h"

#include <stdarg.h>
#include <stdio.h>

int pa_fail(pa_error *err, pa_errcode code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        err->rule = NULL;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return (int)code;
}

int pa_fail_rule(pa_error *err, pa_errcode code, const char *rule, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        int k = snprintf(err->msg, sizeof err->msg, "[%s] ", rule);
        va_start(ap, fmt);
        vsnprintf(err->msg + k, sizeof err->msg - (size_t)k, fmt, ap);
        va_end(ap);
        err->code = code;
        err->rule = rule;
    }
    return (int)code;
}

/* Indexed by CUtensorMapDataType. ptx_elemtype is the tensormap.replace
 * .elemtype value (PTX ISA table "Tensormap new_val validity"), which differs
 * from the driver's numbering for f32.ftz, f64 and bf16. */
static const pa_dtype_info DTYPES[PA_DTYPE_COUNT] = {
    {"UINT8", "u8", 8, 1, 0, 0, 0},
    {"UINT16", "u16", 16, 2, 1, 0, 0},
    {"UINT32", "u32", 32, 4, 2, 0, 0},
    {"INT32", "s32", 32, 4, 3, 0, 0},
    {"UINT64", "u64", 64, 8, 4, 0, 0},
    {"INT64", "s64", 64, 8, 5, 0, 0},
    {"FLOAT16", "f16", 16, 2, 6, 1, 0},
    {"FLOAT32", "f32", 32, 4, 7, 1, 0},
    {"FLOAT64", "f64", 64, 8, 9, 1, 0},
    {"BFLOAT16", "bf16", 16, 2, 10, 1, 0},
    {"FLOAT32_FTZ", "f32.ftz", 32, 4, 8, 1, 0},
    {"TFLOAT32", "tf32", 32, 4, 11, 1, 0},
    {"TFLOAT32_FTZ", "tf32.ftz", 32, 4, 12, 1, 0},
    {"16U4_ALIGN8B", "b4x16", 4, 0, 13, 0, 1},
    {"16U4_ALIGN16B", "b4x16_p64", 4, 0, 14, 0, 1},
    {"16U6_ALIGN16B", "b6x16_p32", 6, 0, 15, 0, 1},
};

const pa_dtype_info *pa_dtype_get(int dtype)
{
    if (dtype < 0 || dtype >= PA_DTYPE_COUNT)
        return NULL;
    return &DTYPES[dtype];
}

unsigned pa_swizzle_span(pa_swizzle sw)
{
    switch (sw) {
    case PA_SWIZZLE_32B: return 32;
    case PA_SWIZZLE_64B: return 64;
    case PA_SWIZZLE_128B:
    case PA_SWIZZLE_128B_ATOM_32B:
    case PA_SWIZZLE_128B_ATOM_32B_FLIP_8B:
    case PA_SWIZZLE_128B_ATOM_64B: return 128;
    /* seed, restrictions on the 96B swizzle: "Box-Size[0] must be less than
     * or equal to 96B"; a narrower row is padded to 96 B (inferred). */
    case PA_SWIZZLE_96B: return 96;
    default: return 0;
    }
}

static const char *SWIZZLE_NAMES[PA_SWIZZLE_COUNT] = {
    "NONE", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B"};
static const char *INTERLEAVE_NAMES[PA_INTERLEAVE_COUNT] = {"NONE", "16B", "32B"};
static const char *L2_NAMES[PA_L2_PROMOTION_COUNT] = {"NONE", "L2_64B", "L2_128B", "L2_256B"};
static const char *OOB_NAMES[PA_OOB_FILL_COUNT] = {"NONE", "NAN_REQUEST_ZERO_FMA"};

const char *pa_swizzle_name(int sw)
{
    if (sw == PA_SWIZZLE_96B)
        return "96B";
    return (sw >= 0 && sw < PA_SWIZZLE_COUNT) ? SWIZZLE_NAMES[sw] : NULL;
}
const char *pa_interleave_name(int il)
{
    return (il >= 0 && il < PA_INTERLEAVE_COUNT) ? INTERLEAVE_NAMES[il] : NULL;
}
const char *pa_l2promotion_name(int l2)
{
    return (l2 >= 0 && l2 < PA_L2_PROMOTION_COUNT) ? L2_NAMES[l2] : NULL;
}
const char *pa_oobfill_name(int oob)
{
    return (oob >= 0 && oob < PA_OOB_FILL_COUNT) ? OOB_NAMES[oob] : NULL;
}

uint64_t pa_packed_global_bytes(pa_dtype dt, uint64_t n)
{
    return (n * pa_dtype_get(dt)->elem_bits + 7) / 8;
}

uint64_t pa_packed_smem_bytes(pa_dtype dt, uint64_t n)
{
    return dt == PA_DTYPE_16U4_ALIGN8B ? n / 2 : n;
}

const char *pa_count_text(uint64_t n, char *buf, size_t cap)
{
    char d[24];
    int nd = snprintf(d, sizeof d, "%llu", (unsigned long long)n), k = 0;
    for (int i = 0; i < nd && (size_t)k + 2 < cap; i++) {
        if (i && (nd - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = d[i];
    }
    buf[k] = 0;
    return buf;
}
