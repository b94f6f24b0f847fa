/* types.h - element types, CUDA-driver enums and the error record.
 *
 * Every enum carries the numeric value of its CUDA driver counterpart
 * (CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle,
 * CUtensorMapL2promotion, CUtensorMapFloatOOBfill), so values recorded from a
 * real driver can be passed straight through.
 */
#ifndef PA_TYPES_H
#define PA_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* CUtensorMapDataType */
typedef enum {
    PA_DTYPE_UINT8 = 0,
    PA_DTYPE_UINT16 = 1,
    PA_DTYPE_UINT32 = 2,
    PA_DTYPE_INT32 = 3,
    PA_DTYPE_UINT64 = 4,
    PA_DTYPE_INT64 = 5,
    PA_DTYPE_FLOAT16 = 6,
    PA_DTYPE_FLOAT32 = 7,
    PA_DTYPE_FLOAT64 = 8,
    PA_DTYPE_BFLOAT16 = 9,
    PA_DTYPE_FLOAT32_FTZ = 10,
    PA_DTYPE_TFLOAT32 = 11,
    PA_DTYPE_TFLOAT32_FTZ = 12,
    PA_DTYPE_16U4_ALIGN8B = 13,
    PA_DTYPE_16U4_ALIGN16B = 14,
    PA_DTYPE_16U6_ALIGN16B = 15,
    PA_DTYPE_COUNT = 16
} pa_dtype;

/* CUtensorMapInterleave */
typedef enum {
    PA_INTERLEAVE_NONE = 0,
    PA_INTERLEAVE_16B = 1,
    PA_INTERLEAVE_32B = 2,
    PA_INTERLEAVE_COUNT = 3
} pa_interleave;

/* CUtensorMapSwizzle */
typedef enum {
    PA_SWIZZLE_NONE = 0,
    PA_SWIZZLE_32B = 1,
    PA_SWIZZLE_64B = 2,
    PA_SWIZZLE_128B = 3,
    PA_SWIZZLE_128B_ATOM_32B = 4,
    PA_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5,
    PA_SWIZZLE_128B_ATOM_64B = 6,
    PA_SWIZZLE_COUNT = 7,
    /* CU_TENSOR_MAP_SWIZZLE_96B (PTX .swizzle_mode 4). The driver documents no
     * value for it (driver-tensormap.md: "Do not guess a number"), so the model
     * uses one of its own, 96, outside the documented 0..6 and past 7 (the next
     * free value, unverified): it can never be taken for a documented mode. */
    PA_SWIZZLE_96B = 96
} pa_swizzle;

/* CUtensorMapL2promotion (a cache hint: no effect on the bytes moved) */
typedef enum {
    PA_L2_PROMOTION_NONE = 0,
    PA_L2_PROMOTION_L2_64B = 1,
    PA_L2_PROMOTION_L2_128B = 2,
    PA_L2_PROMOTION_L2_256B = 3,
    PA_L2_PROMOTION_COUNT = 4
} pa_l2promotion;

/* CUtensorMapFloatOOBfill */
typedef enum {
    PA_OOB_FILL_NONE = 0,
    PA_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1,
    PA_OOB_FILL_COUNT = 2
} pa_oobfill;

/* What went wrong, so the binding can pick the exception class. */
typedef enum {
    PA_OK = 0,
    PA_ERR_INVALID_VALUE = 1,  /* a parameter breaks a rule (driver: CUDA_ERROR_INVALID_VALUE) */
    PA_ERR_ILLEGAL_INSTRUCTION = 2, /* the hardware faults at issue (cudaErrorIllegalInstruction) */
    PA_ERR_ILLEGAL_ADDRESS = 3,     /* no memory at that address (cudaErrorIllegalAddress) */
    PA_ERR_MISALIGNED_ADDRESS = 4,  /* cudaErrorMisalignedAddress */
    PA_ERR_HAZARD = 5,              /* undefined behaviour named by the ISA */
    PA_ERR_NO_MEMORY = 6,           /* host allocation failed */
    PA_ERR_STATE = 7,               /* operation not valid in the current model state */
    PA_ERR_DEADLOCK = 8             /* a blocked wait that nothing pending can release */
} pa_errcode;

#define PA_ERRMSG_LEN 512

/* Error record filled by every fallible core function: code plus a message
 * that names the broken rule and the offending value. */
typedef struct {
    pa_errcode code;
    char msg[PA_ERRMSG_LEN];
} pa_error;

/* Sets err (if not NULL) and returns code, so callers can write
 * `return pa_fail(err, PA_ERR_INVALID_VALUE, "rank %u ...", rank);` */
int pa_fail(pa_error *err, pa_errcode code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

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
