/* resolve.c - which function runs an operation, and its operands' widths:
 * the one place that says what the library models. */
#include "sem/sem.h"

#include "sem/flanes.h"
#include "sem/intops.h"
#include "sem/resolve_parts.h"
#include "sem/video.h"

static int is_half(int t)
{
    return t == SEM_T_F16 || t == SEM_T_BF16 || t == SEM_T_F16X2 || t == SEM_T_BF16X2;
}

static sem_fn arith_of(int t)
{
    switch (t) {
    case SEM_T_F32: return sem_arith_f32;
    case SEM_T_F64: return sem_arith_f64;
    case SEM_T_F16: return sem_arith_f16;
    case SEM_T_BF16: return sem_arith_bf16;
    case SEM_T_F16X2: return sem_arith_f16x2;
    case SEM_T_BF16X2: return sem_arith_bf16x2;
    default: return 0;
    }
}

static sem_fn minmax_of(int t)
{
    switch (t) {
    case SEM_T_F32: return sem_minmax_f32;
    case SEM_T_F64: return sem_minmax_f64;
    case SEM_T_F16: return sem_minmax_f16;
    case SEM_T_BF16: return sem_minmax_bf16;
    case SEM_T_F16X2: return sem_minmax_f16x2;
    case SEM_T_BF16X2: return sem_minmax_bf16x2;
    default: return 0;
    }
}

static int resolve_float(const sem_ctl *k, sem_impl *o, const char **why)
{
    const int t = k->at, w = sem_type_reg_bits((sem_type)t);
    switch (k->op) {
    case SEM_OP_ADD: case SEM_OP_SUB: case SEM_OP_MUL:
        if (!arith_of(t))
            break;
        return sem_found(o, arith_of(t), w, w, w, 0);
    case SEM_OP_FMA: case SEM_OP_MAD:
        if (!arith_of(t))
            break;
        return sem_found(o, arith_of(t), w, w, w, w);
    case SEM_OP_DIV:
        if (t != SEM_T_F32 && t != SEM_T_F64)
            break;
        return sem_found(o, arith_of(t), w, w, w, 0);
    case SEM_OP_RCP: case SEM_OP_SQRT:
        if (t != SEM_T_F32 && t != SEM_T_F64)
            break;
        return sem_found(o, arith_of(t), w, w, 0, 0);
    case SEM_OP_MIN: case SEM_OP_MAX:
        if (!minmax_of(t))
            break;
        return sem_found(o, minmax_of(t), w, w, w, 0);
    case SEM_OP_NEG: case SEM_OP_ABS:
        if (!sem_fmt_known(t))
            break;
        return sem_found(o, sem_sign_lanes, w, w, 0, 0);
    case SEM_OP_COPYSIGN:
        return sem_found(o, sem_copysign, w, w, w, 0);
    case SEM_OP_TESTP:
        return sem_found(o, sem_testp, 1, w, 0, 0);
    case SEM_OP_SETP:
        sem_found(o, sem_setp_float, 1, w, w, 1);
        o->wd[1] = 1;
        return 0;
    case SEM_OP_SET:
        return sem_found(o, sem_set, sem_type_reg_bits((sem_type)k->dt), w, w, 1);
    default:
        break;
    }
    *why = is_half(t) ? "this f16/bf16 form is not modelled yet" : "this floating-point form is not modelled yet";
    return 1;
}

static int resolve_int(const sem_ctl *k, sem_impl *o, const char **why)
{
    const int t = k->at, w = sem_type_reg_bits((sem_type)t);
    const int wide = (k->flags & SEM_F_WIDE) ? 2 * w : w;
    switch (k->op) {
    case SEM_OP_ADD: case SEM_OP_SUB: case SEM_OP_DIV: case SEM_OP_REM: case SEM_OP_AND: case SEM_OP_OR:
    case SEM_OP_XOR: case SEM_OP_MIN: case SEM_OP_MAX:
        return sem_found(o, sem_int_alu, w, w, w, 0);
    case SEM_OP_MUL: return sem_found(o, sem_int_alu, wide, w, w, 0);
    case SEM_OP_MAD: return sem_found(o, sem_int_alu, wide, w, w, wide);
    case SEM_OP_SHL: case SEM_OP_SHR: return sem_found(o, sem_int_alu, w, w, 32, 0);
    case SEM_OP_NOT: case SEM_OP_NEG: case SEM_OP_ABS: return sem_found(o, sem_int_alu, w, w, 0, 0);
    case SEM_OP_SELP: return sem_found(o, sem_int_alu, w, w, w, 1);
    case SEM_OP_PRMT: return sem_found(o, sem_prmt, 32, 32, 32, 32);
    case SEM_OP_SHF: return sem_found(o, sem_shf, 32, 32, 32, 32);
    case SEM_OP_LOP3: return sem_found(o, sem_lop3, 32, 32, 32, 32);
    case SEM_OP_BFIND: return sem_found(o, sem_bfind, 32, w, 0, 0);
    case SEM_OP_DP4A: return sem_found(o, sem_dp4a, 32, 32, 32, 32);
    case SEM_OP_DP2A: return sem_found(o, sem_dp2a, 32, 32, 32, 32);
    case SEM_OP_SAD: return sem_found(o, sem_sad, w, w, w, w);
    case SEM_OP_MUL24: return sem_found(o, sem_mul24, 32, 32, 32, 0);
    case SEM_OP_MAD24: return sem_found(o, sem_mul24, 32, 32, 32, 32);
    case SEM_OP_CNOT: case SEM_OP_BREV: return sem_found(o, sem_bitop, w, w, 0, 0);
    case SEM_OP_POPC: case SEM_OP_CLZ: return sem_found(o, sem_bitop, 32, w, 0, 0);
    case SEM_OP_SET: return sem_found(o, sem_set, sem_type_reg_bits((sem_type)k->dt), w, w, 1);
    case SEM_OP_BFE: return sem_found(o, sem_bfe, w, w, 32, 32);
    case SEM_OP_BFI:
        sem_found(o, sem_bfi, w, w, w, 32);
        o->ws[3] = 32;
        return 0;
    case SEM_OP_BMSK: return sem_found(o, sem_bmsk, 32, 32, 32, 0);
    case SEM_OP_FNS: return sem_found(o, sem_fns, 32, 32, 32, 32);
    case SEM_OP_SZEXT: return sem_found(o, sem_szext, 32, 32, 32, 0);
    case SEM_OP_SLCT: {
        int wd = sem_type_reg_bits((sem_type)k->dt);
        return sem_found(o, sem_slct, wd, wd, wd, 32);
    }
    case SEM_OP_SETP:
        sem_found(o, sem_setp_int, 1, w, w, 1);
        o->wd[1] = 1;
        return 0;
    default:
        break;
    }
    *why = "this integer form is not modelled yet";
    return 1;
}

int sem_resolve(const sem_ctl *k, sem_impl *out, const char **why)
{
    static const char *none = "";
    const char *w = none;
    int rc;
    out->fn = 0;
    out->cc = 0;
    if (sem_is_carry(k))
        rc = sem_resolve_carry(k, out, &w);
    else if (k->op == SEM_OP_CVT || k->op == SEM_OP_CVT_PACK)
        rc = sem_resolve_cvt(k, out, &w);
    else if (k->op == SEM_OP_EX2 || k->op == SEM_OP_LG2 || k->op == SEM_OP_SIN || k->op == SEM_OP_COS ||
             k->op == SEM_OP_TANH || k->op == SEM_OP_RSQRT || (k->flags & (SEM_F_APPROX | SEM_F_FULL)))
        rc = sem_resolve_sfu(k, out, &w);
    else if (sem_video_fn(k->op))     /* every operand a 32-bit register (9.7.18) */
        rc = sem_found(out, sem_video_fn(k->op), 32, 32, 32, 32);
    else if (sem_type_is_float((sem_type)k->at) && k->op != SEM_OP_SLCT && k->op != SEM_OP_SELP)
        rc = resolve_float(k, out, &w);
    else
        rc = resolve_int(k, out, &w);
    if (why)
        *why = w;
    return rc;
}
