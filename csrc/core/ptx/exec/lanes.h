/* lanes.h - a converged warp's register-only instructions as passes over rows
 * (lanes.c): registers are lane-major per warp (launch.h), so register k of a
 * warp's lanes is one row, lane l at [l], and an instruction is one
 * contiguous pass over its lanes, in a version for each vector level.
 */
#ifndef PTX_LANES_H
#define PTX_LANES_H

#include "ptx/exec/prog.h"
#include "simd.h"

/* Instruction `in` for lanes `on` (between lo and hi) of the warp block whose
 * lane 0's register 0 is R, a row 1 << sh registers long. */
typedef void (*pi_lanes_fn)(const pi_ins *in, uint64_t *R, unsigned sh, uint32_t on, uint32_t lo, uint32_t hi);

typedef struct {
    pi_lanes_fn op[PI_OPCOUNT];  /* per opcode: NULL where it is not register-only */
    /* the lanes of lo..hi whose predicate row g is nonzero (a whole row of 32 when
       sh is 5: lanes outside lo..hi may be set, the caller masks them) */
    uint32_t (*guard)(const uint64_t *g, unsigned sh, uint32_t lo, uint32_t hi);
    /* a whole warp (32 lanes, rows of 32) from pc on, as long as it goes together and
       touches nothing but registers, at most max instructions (lanes_body.h): returns the pc
       it stopped at, the instructions run added to *ran */
    uint32_t (*run)(const pi_prog *p, uint32_t pc, uint64_t *R, uint64_t max, uint64_t *ran);
} pi_lanes;

/* The passes for a vector level (pa_simd_level() when a launch starts); every
 * level computes the same bits. */
const pi_lanes *pi_lanes_for(pa_simd level);

/* A PI_SEM instruction for lanes `on` of the warp block R (rows 1 << sh long):
 * the operation on the rows themselves where the lanes are one run, through
 * gathered copies where a guard left holes. */
void pi_sem_lanes(const pi_prog *p, const pi_ins *in, uint64_t *R, unsigned sh, uint32_t on);

#endif
