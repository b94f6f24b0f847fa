/* sm90.h - the SM90 family's number choices, in one place (as SoftFloat keeps
 * one specialize.h per architecture). Recorded on an H200 (golden/isa):
 *
 * - A NaN result of f32, f16 or bf16 arithmetic is canonical whatever the
 *   operands' payloads: 0x7FFFFFFF (f32), 0x7FFF (f16, bf16).
 * - f64 arithmetic is IEEE's, NaNs included: a NaN operand comes through quieted
 *   (div.rn.f64), an invalid operation gives 0xFFF8000000000000 (sqrt.rn.f64 of a
 *   negative number), as the host's double arithmetic does; nothing to specialise.
 * - min / max with one NaN operand return the other operand; with two, the
 *   canonical NaN. The .NaN forms return the canonical NaN if either is NaN.
 *   -0.0 is smaller than +0.0.
 * - .ftz flushes subnormal f32 operands and results to zero of the same sign.
 * - .sat clamps a float result to [0.0, 1.0], NaN to +0.0.
 * - .relu clamps a negative result to +0.0 and keeps a NaN canonical.
 * - .satfinite turns an infinite result into the largest finite value of its
 *   sign and keeps NaN a NaN (for formats with no infinity, overflow saturates).
 */
#ifndef PA_SEM_SM90_H
#define PA_SEM_SM90_H

#include <stdint.h>

#define SM90_NAN_F32 0x7FFFFFFFu
#define SM90_NAN_F16 0x7FFFu
#define SM90_NAN_BF16 0x7FFFu

/* .sat of an f32 result's bits: clamp to [0, 1], NaN to +0. */
static inline uint32_t sm90_sat_f32(uint32_t x)
{
    if ((x & 0x7FFFFFFFu) > 0x7F800000u)
        return 0;
    if (x & 0x80000000u)
        return 0;                          /* negative (and -0) to +0 */
    return x > 0x3F800000u ? 0x3F800000u : x;
}

static inline uint64_t sm90_sat_f64(uint64_t x)
{
    if ((x & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull || (x >> 63))
        return 0;
    return x > 0x3FF0000000000000ull ? 0x3FF0000000000000ull : x;
}

/* .ftz of an f32 operand or result: a subnormal becomes a zero of its sign. */
static inline uint32_t sm90_ftz_f32(uint32_t x)
{
    return (x & 0x7F800000u) ? x : (x & 0x80000000u);
}

/* Canonical NaN of an f32 result. */
static inline uint32_t sm90_canon_f32(uint32_t x)
{
    return (x & 0x7FFFFFFFu) > 0x7F800000u ? SM90_NAN_F32 : x;
}

#endif
