/* multimem.h - what the lowering of multimem.ld_reduce / st / red (lower_multimem.c) and
 * their run (multimem.c) agree on: the pi_ext fields of PX_MULTIMEM.
 *
 *   flags  PI_MM_LD_REDUCE / PI_MM_ST / PI_MM_RED in the low bits, PI_MM_STRONG (.relaxed,
 *          .acquire, .release; red's default .relaxed), PI_MM_ACQUIRE, PI_MM_RELEASE
 *   sub    the operation (a pa_redop; st: -1)
 *   mode   the element kind (PI_MK_*), size the bytes of one register, n the registers (.vN)
 *   sub2   ld_reduce's accumulation: PI_MM_ACC_TYPE (the type's own), _F32 (.acc::f32), _F16
 *   space  PI_SP_GLOBAL or PI_SP_GENERIC of the address a0
 *   vregs  [vbase, vbase + n): ld_reduce's destinations, or st's and red's operands
 */
#ifndef PA_PTX_MULTIMEM_H
#define PA_PTX_MULTIMEM_H

enum { PI_MM_LD_REDUCE = 0, PI_MM_ST = 1, PI_MM_RED = 2, PI_MM_KIND = 3,
       PI_MM_STRONG = 4, PI_MM_ACQUIRE = 8, PI_MM_RELEASE = 16 };
enum { PI_MM_ACC_TYPE = 0, PI_MM_ACC_F32, PI_MM_ACC_F16 };
/* element kinds: integers (b32 / b64 as u32 / u64), then the float formats */
enum { PI_MK_U32 = 0, PI_MK_S32, PI_MK_U64, PI_MK_S64, PI_MK_F16, PI_MK_BF16, PI_MK_F32, PI_MK_F64,
       PI_MK_E4M3, PI_MK_E5M2 };

#endif
