/* sm90.h - the SM90 family's number choices, in one place (as SoftFloat keeps
 * one specialize.h per architecture). Recorded on an H200 (golden/isa, and the
 * random-program recording tests/data/randprog):
 *
 * - A NaN result of f32, f16 or bf16 arithmetic is canonical whatever the
 *   operands' payloads: 0x7FFFFFFF (f32), 0x7FFF (f16, bf16).
 * - f64 arithmetic is IEEE's: a NaN operand comes through quieted with its sign
 *   and payload (div.rn.f64), an invalid operation gives 0xFFF8000000000000
 *   (sqrt.rn.f64 of a negative number). Which NaN of several: add, sub, mul
 *   (DADD, DMUL) return the second source's, fma / mad (DFMA) the second's, else
 *   the addend's, else the first's (sm90_nan_f64); min / max.f64 of two NaNs the
 *   second quieted. ptxas keeps PTX's operand order, except where it commutes
 *   them (then the H200 returns the other NaN: docs/semantics.md).
 * - min / max with one NaN operand return the other operand; with two, the
 *   canonical NaN (f64: the second quieted). The .NaN forms return the
 *   canonical NaN if either is NaN. -0.0 is smaller than +0.0. min / max
 *   .f16 / .f32 / .f64 (no other qualifier) of one register with itself is that
 *   register's value, a NaN's payload kept (ptxas folds it to a move).
 * - testp.normal is true for +-0 as for normal numbers (ptxas's lowering).
 * - 64-bit bfe / bfi (ptxas's 64-bit shift sequence): pos and len are their
 *   32-bit values clamped to 64, not taken modulo 256 (sm90_bf64_amount).
 * - .ftz flushes subnormal f32 operands and results to zero of the same sign.
 * - .sat clamps a float result to [0.0, 1.0], NaN to +0.0.
 * - .relu clamps a negative result to +0.0 and keeps a NaN canonical.
 * - .satfinite turns an infinite result into the largest finite value of its
 *   sign and keeps NaN a NaN (for formats with no infinity, overflow saturates).
 */
#ifndef PA_SEM_SM90_H
#define PA_SEM_SM90_H

#include <stdint.h>

#include "sem/sem.h"

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

/* ---- f64 NaNs ---- */

static inline int sm90_isnan_f64(uint64_t x)
{
    return (x & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
}

static inline uint64_t sm90_quiet_f64(uint64_t x)
{
    return x | 0x0008000000000000ull;
}

/* The NaN an f64 add / sub / mul (n = 2: a, b) or fma (n = 3: a * b + c)
 * returns when an operand is a NaN: b's, else c's, else a's, quieted (a sub's
 * negation does not reach it). 1 and *out set if an operand is a NaN. */
static inline int sm90_nan_f64(uint64_t a, uint64_t b, uint64_t c, int n, uint64_t *out)
{
    if (sm90_isnan_f64(b))
        *out = sm90_quiet_f64(b);
    else if (n == 3 && sm90_isnan_f64(c))
        *out = sm90_quiet_f64(c);
    else if (sm90_isnan_f64(a))
        *out = sm90_quiet_f64(a);
    else
        return 0;
    return 1;
}

/* Whether min / max of one register with itself is a move of it (ptxas folds
 * the plain .f16 / .f32 / .f64 forms; .bf16, .f16x2, .ftz .f16 and the .NaN /
 * .xorsign forms are computed, canonical NaN and all). */
static inline int sm90_minmax_self_is_move(int type, uint32_t flags)
{
    if (flags & (SEM_F_FTZ | SEM_F_NAN | SEM_F_XORSIGN | SEM_F_RELU))
        return 0;
    return type == SEM_T_F16 || type == SEM_T_F32 || type == SEM_T_F64;
}

/* pos / len of a 64-bit bfe / bfi: the 32-bit operand clamped to 64. */
static inline uint32_t sm90_bf64_amount(uint64_t v)
{
    return (uint32_t)v > 64 ? 64 : (uint32_t)v;
}

/* Canonical NaN of an f32 result. */
static inline uint32_t sm90_canon_f32(uint32_t x)
{
    return (x & 0x7FFFFFFFu) > 0x7F800000u ? SM90_NAN_F32 : x;
}

#endif
