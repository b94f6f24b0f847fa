/* cvt.h - how a sem_ctl spells cvt and cvt.pack (cvt.c runs them).
 *
 * cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}.dtype.atype d, a{, b}{, rbits}:
 *   dt / at the types as written; rnd the rounding (SEM_RNI.. for the integer
 *   roundings); flags SEM_F_FTZ / SAT / RELU / SATFINITE.
 *   Operands: s[0] = a, s[1] = b (the pair forms: .f16x2/.bf16x2/.e4m3x2/
 *   .e5m2x2/.e2m1x2/.e2m3x2/.e3m2x2/.ue8m0x2/.s2f6x2 from two .f32), then
 *   rbits (.rs of a pair: s[2]) or the scale-factor (.s2f6x2: s[2] after two
 *   .f32, s[1] after one .bf16x2 / .s2f6x2).
 *   .scaled::n2::ue8m0 (s2f6x2 forms): aux = 1; without it the scale is 0x7F7F
 *   and no operand is read.
 *   The four-element .rs forms (cvt.rs{.relu}.satfinite.f8x4type.f32 d, {a, b,
 *   e, f}, rbits) take five registers, one more than a sem_fn has: s[0..3] are
 *   a, b, e, f and the random bits come in d[1] (read before d[0] is
 *   written; wd[1] says 32).
 *
 * cvt.pack.sat.convertType.abType{.cType} d, a, b{, c}:
 *   dt the convertType's signedness as .u8 / .s8 (.u16 / .s16 as written) and
 *   aux its bits (2, 4, 8, 16; 0: those of dt): sem_type has no .u2/.s2/.u4/
 *   .s4. at = .s32, bt = .b32 (with c) or none.
 */
#ifndef PA_SEM_CVT_H
#define PA_SEM_CVT_H

#include "sem/sem.h"

/* The bits of one element of cvt.pack's convertType (aux, else dt's). */
static inline int sem_cvt_pack_bits(const sem_ctl *k)
{
    return k->aux ? k->aux : sem_type_bits((sem_type)k->dt);
}

#endif
