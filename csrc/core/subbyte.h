/* subbyte.h - the packed sub-byte types (PTX ISA 5.5.1.1, driver CUtensorMapDataType).
 *
 *   driver            PTX           global (16 values)     shared (16 values)
 *   16U4_ALIGN8B      .b4x16        8 B packed             the same 8 B
 *   16U4_ALIGN16B     .b4x16_p64    8 B packed             8 B + 8 B padding (loads only)
 *   16U6_ALIGN16B     .b6x16_p32    12 B packed            12 B + 4 B padding (loads)
 *                     .b6p2x16      12 B packed            16 B, one value per byte in bits
 *                                                          5:0, bits 7:6 dropped (stores)
 *
 * Dimensions count values. Value i of a group sits in bits [b*i, b*i + b) of
 * the little-endian group (b = 4 or 6; the bit order is not documented,
 * tensors.md: "inferred: little-endian, element 0 in the least-significant
 * bits"). The padding a load appends is "un-initialized": the model leaves
 * those shared bytes as they were.
 *
 * A copy of a packed map is the copy of an equivalent byte-typed map (u8
 * for .b4x16, u64 per group for .b4x16_p64, three u32 per group for
 * .b6x16_p32) into a packed image, then spread into the padded shared layout
 * (loads) or packed from it (stores).
 */
#ifndef PA_SUBBYTE_H
#define PA_SUBBYTE_H

#include "modes.h"

/* PTX tensor copy restrictions 8 and 9 (32-byte address and strides, swizzle
 * None or 128B) for a copy of padded type t. */
int pa_subbyte_general_rules(const pa_tensormap *m, const char *t, pa_error *err);
/* The target's rules of a .b6p2x16 store (sm_103a has its own); PA_OK for
 * any other type. */
int pa_subbyte_store_target_check(pa_target tgt, const pa_tensormap *m, const int32_t coords[PA_MAX_RANK],
                                  pa_error *err);

/* Bytes n values take in global memory (packed) and in shared memory. */
uint64_t pa_packed_global_bytes(pa_dtype dt, uint64_t n);
uint64_t pa_packed_smem_bytes(pa_dtype dt, uint64_t n);

/* Issue checks, layout (shared side), load and store of a copy through a
 * packed map in any mode. */
int pa_subbyte_issue_checks(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                            const uint16_t info[PA_MAX_RANK - 2], int is_store, pa_box_layout *l,
                            pa_error *err);
int pa_subbyte_load_exec(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                         const uint16_t info[PA_MAX_RANK - 2], const pa_global *g, pa_smem_view smem,
                         uint32_t dst, pa_error *err);
int pa_subbyte_store_exec(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                          const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn, void *ctx,
                          pa_error *err);

/* The equivalent byte-typed map and coordinates (what the packed map's
 * global side is, read as ordinary elements). */
void pa_subbyte_equivalent(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                           pa_tensormap *e, int32_t ecoords[PA_MAX_RANK]);

#endif
