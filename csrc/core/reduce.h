/* reduce.h - the arithmetic of cp.reduce.async.bulk{.tensor}.
 *
 * Each (redOp, type) pair the hardware executes, bit-exact: integer wrap-around,
 * inc/dec, bitwise ops, and float add/min/max with the rounding, NaN and
 * subnormal behaviour recorded on sm_90 (golden/README.md observations 11, 12).
 * Results never depend on the host's float environment: the host adder is
 * used only where it is proven bit-identical and probed to round to nearest
 * even without FTZ/DAZ (docs/reductions.md, "Fast paths").
 */
#ifndef PA_REDUCE_H
#define PA_REDUCE_H

#include "reduce_fast.h"

/* PTX .type of the non-tensor cp.reduce.async.bulk */
typedef enum {
    PA_RT_B32 = 0,
    PA_RT_B64,
    PA_RT_U32,
    PA_RT_S32,
    PA_RT_U64,
    PA_RT_S64,
    PA_RT_F16,
    PA_RT_BF16,
    PA_RT_F32,
    PA_RT_F64,
    PA_RT_COUNT
} pa_rtype;

/* Destination of a non-tensor bulk reduction. */
typedef enum {
    PA_RDST_GLOBAL = 0,          /* .global.shared::cta.bulk_group */
    PA_RDST_SHARED_CLUSTER = 1   /* .shared::cluster.shared::cta.mbarrier::complete_tx::bytes */
} pa_rdst;

const char *pa_redop_name(int op);   /* "add", ... ; NULL if out of range */
const char *pa_rtype_name(int t);    /* "u32", ... ; NULL if out of range */
unsigned pa_rtype_bytes(pa_rtype t);

/* Is (op, type, noftz) a valid cp.reduce.async.bulk form for this
 * destination? PA_OK, or PA_ERR_INVALID_VALUE citing the ISA table. */
int pa_reduce_bulk_check(pa_redop op, pa_rtype t, int noftz, pa_rdst dst, pa_error *err);

/* dst[i] = dst[i] op src[i] for n elements of type t (unaligned pointers ok). */
void pa_reduce_bulk_apply(pa_redop op, pa_rtype t, uint8_t *dst, const uint8_t *src, size_t n);

/* One element d op s of kind k, by the rule every reduction of the model uses (the bulk and
 * tensor reductions, atom / red): the new destination value. A pair no table has leaves d. */
uint64_t pa_reduce_elem(pa_redop op, pa_ekind k, uint64_t d, uint64_t s);
/* f64 add as the SM's double unit does it (atom.add.f64 on shared memory): a NaN
 * gives the destination's NaN if it is one, else the source's, quieted. */
uint64_t pa_reduce_add_f64_quiet(uint64_t d, uint64_t s);

/* Does the sm_90 hardware execute cp.reduce.async.bulk.tensor with this op on
 * a map of this data type? PA_OK, or PA_ERR_ILLEGAL_INSTRUCTION naming the pair. */
int pa_reduce_tensor_check(pa_redop op, pa_dtype dtype, pa_error *err);

/* dst[i] = dst[i] op src[i] for n elements of the map type dtype. */
void pa_reduce_tensor_apply(pa_redop op, pa_dtype dtype, uint8_t *dst, const uint8_t *src, size_t n);

/* One reduction specialised for its (op, element type): chosen once per
 * operation, then applied to every run of the operation.
 *
 *     pa_reducer r;
 *     if (pa_reducer_tensor(&r, op, dtype) == PA_OK)
 *         pa_reducer_apply(&r, dst, src, n);      // n elements, unaligned ok
 *
 * The float loops use the host adder only when this thread's float
 * environment is exact round-to-nearest-even without FTZ/DAZ at the time the
 * reducer is made (else the integer soft-float loop): make the reducer on the
 * thread that applies it.
 * (pa_reducer: reduce_fast.h, the loops it runs.) */

/* PA_OK, or PA_ERR_INVALID_VALUE for a pair outside the .global table /
 * the pairs that execute on sm_90 (r then leaves every destination alone). */
int pa_reducer_bulk(pa_reducer *r, pa_redop op, pa_rtype t);
int pa_reducer_tensor(pa_reducer *r, pa_redop op, pa_dtype dtype);

/* Switch r to the integer-only soft-float loop (the definition the fast
 * loops are tested against). */
void pa_reducer_use_soft(pa_reducer *r);

static inline void pa_reducer_apply(const pa_reducer *r, uint8_t *dst, const uint8_t *src, size_t n)
{
    r->loop(r, dst, src, n);
}

#endif
