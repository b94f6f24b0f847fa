/* atom.h - what the lowering of atom / red (lower_atom.c) and their run
 * (atom.c) agree on: the pi_ext fields of PX_ATOM.
 *
 *   sub    the operation: a pa_redop (add, min, max, inc, dec, and, or, xor), PI_AO_EXCH or PI_AO_CAS
 *   mode   the element kind (PI_AK_*), size the bytes of one register of it, n the registers (.v2 ...)
 *   flags  PI_AF_*: red (no result), .acquire, .release (.acq_rel: both)
 *   space  PI_SP_* of the address a0
 *   vregs  [vbase, vbase + n): the result registers (PI_NOREG: red, or a sink), then n operand
 *          registers; s1 the swap value of cas
 */
#ifndef PA_PTX_ATOM_H
#define PA_PTX_ATOM_H

#include "reduce.h"

enum { PI_AO_EXCH = PA_RED_COUNT, PI_AO_CAS };
enum {
    PI_AK_U32 = 0, PI_AK_S32, PI_AK_U64, PI_AK_S64, PI_AK_B16, PI_AK_B128, PI_AK_F16, PI_AK_BF16, PI_AK_F16X2,
    PI_AK_BF16X2, PI_AK_F32, PI_AK_F64
};
enum { PI_AF_RED = 1, PI_AF_ACQUIRE = 2, PI_AF_RELEASE = 4 };

#endif
