/* reduce_fast.h - the specialised element loops of reduce.c (internal).
 *
 * One loop per (redOp, element kind), chosen once per operation
 * (pa_reducer_bulk / pa_reducer_tensor). The float adds run on the host's
 * binary32/binary64 adder only when pa_host_float_exact() has just seen it
 * round to nearest-even with subnormals kept; the proof that this is
 * bit-identical to the soft-float definition is in docs/reductions.md
 * ("Fast paths").
 */
#ifndef PA_REDUCE_FAST_H
#define PA_REDUCE_FAST_H

#include "simd.h"
#include "types.h"

/* A reducer: the loop chosen once per operation and what it needs
 * (reduce.h makes them: pa_reducer_bulk / pa_reducer_tensor). */
typedef struct pa_reducer pa_reducer;
typedef void (*pa_reduce_loop)(const pa_reducer *r, uint8_t *dst, const uint8_t *src, size_t n);
struct pa_reducer {
    pa_reduce_loop loop;
    pa_redop op;
    int kind;          /* element kind (pa_ekind) */
    unsigned esize;    /* bytes per element */
};

/* Element kinds shared by the bulk and tensor paths. */
typedef enum {
    PA_EK_U32, PA_EK_S32, PA_EK_U64, PA_EK_S64, PA_EK_F16, PA_EK_BF16, PA_EK_F32, PA_EK_F32_FTZ,
    PA_EK_F64, PA_EK_NONE
} pa_ekind;

/* Does a float kind's add use the host adder? */
int pa_ekind_uses_host_float(pa_redop op, pa_ekind k);

/* Is this thread's floating-point environment IEEE round-to-nearest-even with
 * subnormal inputs and results kept (no FTZ/DAZ), with float/double evaluated
 * in their own precision? Probed with a few additions, not assumed. */
int pa_host_float_exact(void);

/* The specialised loop of (op, k), or NULL when there is none (the caller
 * then uses the soft loop). Never NULL for the integer kinds. */
pa_reduce_loop pa_reduce_fast_loop(pa_redop op, pa_ekind k);

/* The vector loop of (op, k) at this level (reduce_x86.c), or NULL. Float
 * kinds compute as the scalar loops do, on the host adder. */
pa_reduce_loop pa_reduce_vec_loop(pa_redop op, pa_ekind k, pa_simd level);

#endif
