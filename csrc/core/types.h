/* types.h - element types, CUDA-driver enums and the error record.
 *
 * Every enum carries the numeric value of its CUDA driver counterpart
 * (CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle,
 * CUtensorMapL2promotion, CUtensorMapFloatOOBfill), so values recorded from a
 * real driver can be passed straight through.
 */
#ifndef PA_TYPES_H
#define PA_TYPES_H

#include "../include/ptxasync.h"   /* the enums and the error record (the public API) */

/* Sets err (if not NULL) and returns code, so callers can write
 * `return pa_fail(err, PA_ERR_INVALID_VALUE, "rank %u ...", rank);` */
int pa_fail(pa_error *err, pa_errcode code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The same for a hazard or deadlock: the message starts "[rule] " and
 * err->rule is the rule's id (a string that outlives err). */
int pa_fail_rule(pa_error *err, pa_errcode code, const char *rule, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* The n (<= 8) bytes at p as a little-endian value (the GPU's byte order), and back. */
static inline uint64_t pa_le_load(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline void pa_le_store(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* n as text with thousands separators ("4,194,304") in buf, for messages. */
const char *pa_count_text(uint64_t n, char *buf, size_t cap);

/* Element-type facts. For the packed sub-byte types elem_bits is 4 or 6 and
 * elem_bytes is 0 (they are counted in individual values, not bytes). */
typedef struct {
    const char *name;       /* driver name without prefix, e.g. "FLOAT16" */
    const char *ptx;        /* PTX type name, e.g. "f16" */
    unsigned elem_bits;     /* bits per element */
    unsigned elem_bytes;    /* bytes per element, 0 for packed sub-byte types */
    unsigned ptx_elemtype;  /* tensormap.replace .elemtype numbering */
    int is_float;           /* floating-point type (OOB NaN fill allowed) */
    int is_packed;          /* one of the 16U4 / 16U6 packed types */
} pa_dtype_info;

/* NULL for an out-of-range value. */
const pa_dtype_info *pa_dtype_get(int dtype);

/* Bytes n values of a packed sub-byte type take in global memory (packed)
 * and in shared memory (.b4x16: as in global; .b4x16_p64 / .b6x16_p32: a
 * 16-byte slot per 16 values; .b6p2x16: one byte per value). */
uint64_t pa_packed_global_bytes(pa_dtype dt, uint64_t n);
uint64_t pa_packed_smem_bytes(pa_dtype dt, uint64_t n);

/* Swizzle span in bytes: 0 (none), 32, 64, 128 (all 128B modes). */
unsigned pa_swizzle_span(pa_swizzle sw);

/* Name tables (index = driver value); NULL past the end. */
const char *pa_swizzle_name(int sw);
const char *pa_interleave_name(int il);
const char *pa_l2promotion_name(int l2);
const char *pa_oobfill_name(int oob);

#endif
