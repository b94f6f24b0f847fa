/* ptxasync.h - the public C API of ptxasync.
 *
 * A CPU reference model of NVIDIA's asynchronous data movement (sm_90a by
 * default): tensor maps, cp.async.bulk.tensor, mbarriers, bulk async-groups.
 * Plain C11; nothing here knows Python, and this header includes no other
 * header of the project.
 *
 * Two opaque handles: a machine (a cluster of CTAs, each with its shared
 * memory; the global buffers it may address; the pending operations) and a
 * tensor map (what cuTensorMapEncodeTiled builds). Every fallible function
 * returns PA_OK or an error code and fills *err (err may be NULL) with a
 * message that names the broken rule and the offending value. Enum values
 * are the CUDA driver's, so recorded values pass straight through.
 * Coordinates and dimensions follow the driver: index 0 is the innermost.
 * docs/example.c is a complete program.
 */
#ifndef PTXASYNC_H
#define PTXASYNC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PA_MAX_RANK 5          /* tensor dimensions at most */

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

/* PTX .redOp */
typedef enum {
    PA_RED_ADD = 0,
    PA_RED_MIN,
    PA_RED_MAX,
    PA_RED_INC,
    PA_RED_DEC,
    PA_RED_AND,
    PA_RED_OR,
    PA_RED_XOR,
    PA_RED_COUNT
} pa_redop;

/* What went wrong (a binding picks its exception class from it). */
typedef enum {
    PA_OK = 0,
    PA_ERR_INVALID_VALUE = 1,  /* a parameter breaks a rule (driver: CUDA_ERROR_INVALID_VALUE) */
    PA_ERR_ILLEGAL_INSTRUCTION = 2, /* the hardware faults at issue (cudaErrorIllegalInstruction) */
    PA_ERR_ILLEGAL_ADDRESS = 3,     /* no memory at that address (cudaErrorIllegalAddress) */
    PA_ERR_MISALIGNED_ADDRESS = 4,  /* cudaErrorMisalignedAddress */
    PA_ERR_HAZARD = 5,              /* undefined behaviour named by the ISA */
    PA_ERR_NO_MEMORY = 6,           /* host allocation failed */
    PA_ERR_STATE = 7,               /* operation not valid in the current model state */
    PA_ERR_DEADLOCK = 8,            /* a blocked wait that nothing pending can release */
    PA_ERR_ASSERT = 9               /* a kernel's assert() failed (cudaErrorAssert) */
} pa_errcode;

#define PA_ERRMSG_LEN 512

/* Filled by every fallible function: the code, and a message that names the
 * broken rule and the offending value. */
typedef struct {
    pa_errcode code;
    char msg[PA_ERRMSG_LEN];
    const char *rule;   /* PA_ERR_HAZARD / PA_ERR_DEADLOCK: the rule's id ("tx-range"), also the
                         * message's "[tx-range] " prefix; NULL otherwise */
} pa_error;

/* Which pending operation completes first (the model advances only when a
 * wait needs it, or on pa_machine_step / pa_machine_run). */
typedef enum {
    PA_POLICY_IMMEDIATE = 0,  /* complete at issue */
    PA_POLICY_IN_ORDER = 1,   /* oldest pending first */
    PA_POLICY_REVERSE = 2,    /* newest pending first */
    PA_POLICY_RANDOM = 3,     /* seeded pseudo-random order */
    PA_POLICY_ADVERSARIAL = 4 /* as RANDOM, and the checker poisons pending
                               * destinations and watches memory (check/) */
} pa_policy;

/* Opaque handles. */
typedef struct pa_machine pa_machine;
typedef struct pa_tensormap pa_tensormap;

/* --- machines ------------------------------------------------------------- */

/* A cluster of nctas CTAs (1..16), each with smem_bytes of shared memory;
 * NULL on failure. Completion policy IN_ORDER, target sm_90a. */
pa_machine *pa_machine_new(uint32_t nctas, uint32_t smem_bytes, pa_error *err);
void pa_machine_delete(pa_machine *m);
void pa_machine_set_policy(pa_machine *m, pa_policy p, uint64_t seed);
/* Let the machine address size bytes at data as global memory [address,
 * address + size) (the caller keeps them alive while the machine uses them). */
int pa_machine_add_global(pa_machine *m, uint64_t address, uint64_t size, void *data, pa_error *err);
/* CTA cta's shared memory (*size bytes); NULL if there is no such CTA. */
uint8_t *pa_machine_smem(pa_machine *m, uint32_t cta, uint32_t *size);
/* Complete one pending operation chosen by the policy (*done 0: none was
 * pending) / all of them. */
int pa_machine_step(pa_machine *m, int *done, pa_error *err);
int pa_machine_run(pa_machine *m, pa_error *err);

/* --- tensor maps (cuTensorMapEncodeTiled) ------------------------------------ */

/* Arrays hold rank entries (global_strides: rank - 1, bytes, of dims 1..);
 * NULL with err naming the driver rule broken. */
pa_tensormap *pa_tensormap_new_tiled(pa_dtype dtype, uint32_t rank, uint64_t global_address,
                                     const uint64_t *global_dim, const uint64_t *global_strides,
                                     const uint32_t *box_dim, const uint32_t *element_strides,
                                     pa_interleave interleave, pa_swizzle swizzle, pa_l2promotion l2,
                                     pa_oobfill oob_fill, pa_error *err);
void pa_tensormap_delete(pa_tensormap *t);
/* The 128-byte descriptor (CUtensorMap). */
void pa_tensormap_pack(const pa_tensormap *t, uint8_t out[128]);

/* --- mbarriers (addr: a shared address as CTA cta sees it) ------------------- */

int pa_mbarrier_init(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t count,
                     pa_error *err);
/* mbarrier.arrive{.expect_tx}: one arrival, expecting tx more bytes (0: plain
 * arrive); *state (may be NULL) gets the phase token. */
int pa_mbarrier_arrive(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t tx,
                       uint64_t *state, pa_error *err);
/* mbarrier.try_wait.parity: completes the pending operations that signal the
 * barrier until the phase of that parity completes (*done 1) or none is left. */
int pa_mbarrier_try_wait_parity(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr,
                                uint32_t parity, int *done, pa_error *err);

/* --- copies ------------------------------------------------------------------ */

/* cp.async.bulk.tensor.Nd.shared::{cta|cluster}.global.tile.mbarrier::complete_tx::bytes
 * {.multicast::cluster} [dst], [map, coords], [mbar]{, cta_mask}: coords has
 * the map's rank entries (c0 innermost). */
int pa_issue_tile_load(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                       const int32_t coords[PA_MAX_RANK], uint32_t dst, int cluster_space,
                       uint32_t mbar, int multicast, uint16_t cta_mask, pa_error *err);
/* cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group [map, coords], [src]
 * (is_reduce: cp.reduce.async.bulk.tensor with op). */
int pa_issue_tile_store(pa_machine *m, uint32_t cta, uint32_t thread, const pa_tensormap *map,
                        const int32_t coords[PA_MAX_RANK], uint32_t src, int is_reduce, pa_redop op,
                        pa_error *err);
/* cp.async.bulk.commit_group / cp.async.bulk.wait_group n. */
int pa_bulk_commit_group(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err);
int pa_bulk_wait_group(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t n, pa_error *err);

#ifdef __cplusplus
}
#endif

#endif
