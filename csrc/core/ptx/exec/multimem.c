/* multimem.c - what multimem.ld_reduce, multimem.st and multimem.red do (ISA 9.7.9.14):
 * the address must lie in a multicast object's window (memory.h, pa_mcwin), which names
 * the same offset in each bound copy, one per device.
 *
 *   ld_reduce  reads the element in every copy and reduces them in device order, the
 *              binding's: acc = copy 0, then acc = acc op copy k for k = 1 .. n-1 (the ISA
 *              leaves the order open; it matters for floating-point add over three or
 *              more copies). The accumulator is the type's format, or f32 (.acc::f32 of
 *              f16 / bf16 kinds) or f16 (.acc::f16 of e4m3 / e5m2 kinds), rounded to
 *              nearest even into the type at the end.
 *   st         writes the register(s) into every copy.
 *   red        copy = copy op b in every copy, in device order.
 *
 * Every step is one of the model's reductions (reduce.c, pa_reduce_elem) by the rule of a
 * reduction into .global memory, as recorded on an H200 for red.global (atom.c): integers
 * wrap; f32 add flushes subnormal operands and results (NaN 0x7FFFFFFF); f16 / bf16 add
 * and min / max round to nearest even and keep subnormals (NaN 0x7FFF; min / max of one
 * NaN give the other operand); f64 add passes a NaN on (the later operand's). e4m3 / e5m2
 * steps are exact in a double, then rounded to nearest even into the format (sem/fp.c):
 * an e5m2 overflow is infinity, an e4m3 one (no infinity) NaN, as cvt without .satfinite.
 * Each access is told to the race checker for the copies in this machine (a weak one as
 * ld / st.global, a strong one as an atomic with its order).
 */
#include "ptx/exec/launch.h"
#include "ptx/exec/multimem.h"
#include "check/hb.h"
#include "reduce.h"
#include "sem/farith.h"

#include <math.h>

static const sem_fmt *fp8_fmt(int mk)
{
    return mk == PI_MK_E4M3 ? &SEM_FMT_E4M3 : &SEM_FMT_E5M2;
}

static double to_double(const sem_fmt *f, uint64_t x)
{
    sem_fp v = sem_fp_unpack(f, x, 0);
    return sem_fp_to_double(&v);
}

/* a op b of one e4m3 / e5m2 element */
static uint64_t fp8_step(pa_redop op, const sem_fmt *f, uint64_t a, uint64_t b)
{
    double x = to_double(f, a), y = to_double(f, b);
    if (op == PA_RED_ADD)
        return sem_double_to(f, x + y, SEM_RN, 0);     /* exact in a double: one rounding */
    int na = isnan(x), nb = isnan(y);
    if (na || nb)
        return na && nb ? f->nan : na ? b : a;
    uint64_t sbit = 1ull << (f->ebits + f->mbits);
    if (x == y)                                         /* -0 < +0 */
        return ((a & sbit) != 0) == (op == PA_RED_MIN) ? a : b;
    return (x < y) == (op == PA_RED_MIN) ? a : b;
}

/* a op b of one element of kind mk in the format of kind mk */
static uint64_t step(pa_redop op, int mk, uint64_t a, uint64_t b)
{
    static const pa_ekind EK[] = {
        [PI_MK_U32] = PA_EK_U32, [PI_MK_S32] = PA_EK_S32, [PI_MK_U64] = PA_EK_U64, [PI_MK_S64] = PA_EK_S64,
        [PI_MK_F16] = PA_EK_F16, [PI_MK_BF16] = PA_EK_BF16, [PI_MK_F32] = PA_EK_F32_FTZ, [PI_MK_F64] = PA_EK_F64,
    };
    if (mk == PI_MK_E4M3 || mk == PI_MK_E5M2)
        return fp8_step(op, fp8_fmt(mk), a, b);
    return pa_reduce_elem(op, EK[mk], a, b);
}

static const sem_fmt *fmt_of(int mk)
{
    return mk == PI_MK_F16 ? &SEM_FMT_F16 : mk == PI_MK_BF16 ? &SEM_FMT_BF16 : mk == PI_MK_F32 ? &SEM_FMT_F32
         : fp8_fmt(mk);
}

/* x of kind `from` in the format of kind `to`, rounded to nearest even (exact when wider) */
static uint64_t convert(int from, int to, uint64_t x)
{
    sem_fp v = sem_fp_unpack(fmt_of(from), x, 0);
    return sem_fp_pack(fmt_of(to), &v, SEM_RN, 0);
}

/* ld_reduce of one element: the copies' values v[0 .. n-1] reduced in device order */
static uint64_t fold(pa_redop op, int mk, int acc, const uint64_t *v, uint32_t n)
{
    int ak = acc == PI_MM_ACC_F32 ? PI_MK_F32 : acc == PI_MM_ACC_F16 ? PI_MK_F16 : mk;
    uint64_t r = ak == mk ? v[0] : convert(mk, ak, v[0]);
    for (uint32_t k = 1; k < n; k++)
        r = step(op, ak, r, ak == mk ? v[k] : convert(mk, ak, v[k]));
    return ak == mk ? r : convert(ak, mk, r);
}

static int elem_bits(int mk)
{
    switch (mk) {
    case PI_MK_U64: case PI_MK_S64: case PI_MK_F64: return 64;
    case PI_MK_F16: case PI_MK_BF16: return 16;
    case PI_MK_E4M3: case PI_MK_E5M2: return 8;
    default: return 32;
    }
}


int pi_multimem_exec(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err)
{
    static const char *const NAME[] = {"multimem.ld_reduce", "multimem.st", "multimem.red"};
    pa_machine *m = L->m;
    const int kind = x->flags & PI_MM_KIND;
    const char *name = NAME[kind];
    const uint32_t *vr = L->p->vregs + x->vbase;
    const uint32_t n = x->n, size = x->size, len = size * n;
    uint64_t a = (x->a0.base == PI_NOREG ? 0 : PI_REG(t, x->a0.base)) + (uint64_t)x->a0.off;
    if (x->space == PI_SP_GENERIC && (a - PI_LOCAL_BASE < PI_WINDOW_SIZE || a - PI_PARAM_BASE < PI_WINDOW_SIZE ||
                                      a - PI_SHARED_BASE < PI_WINDOW_SIZE))
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "illegal multimem address 0x%llx: not in the .global window "
                       "(ISA 9.7.9.14: a generic address outside it is undefined)", (unsigned long long)a);
    if (a % len)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "%s of %u bytes at 0x%llx is not %u-byte aligned", name, len,
                       (unsigned long long)a, len);
    const pa_mcwin *w = pa_global_multicast(&m->global, a, len, err);
    if (!w)
        return PI_R_ERR;
    const uint64_t off = a - w->base;
    const int sem = ((x->flags & PI_MM_ACQUIRE) ? PA_HB_ACQUIRE : 0) | ((x->flags & PI_MM_RELEASE) ? PA_HB_RELEASE : 0);
    for (uint32_t k = 0; k < w->n; k++) {
        if (w->local[k] == PA_MC_FOREIGN)
            continue;
        int rc = (x->flags & PI_MM_STRONG) ? pa_hb_atomic(m, t->cta, t->tid, 2, 0, w->local[k] + off, len, sem, name, err)
                                           : pa_hb_global(m, t->cta, t->tid, w->local[k] + off, len, kind != PI_MM_LD_REDUCE,
                                                          name, err);
        if (rc)
            return PI_R_ERR;
    }
    const unsigned eb = (unsigned)elem_bits(x->mode), per = size * 8 / eb;
    const uint64_t emask = eb >= 64 ? ~0ull : (1ull << eb) - 1;
    const pa_redop op = (pa_redop)x->sub;
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t b = kind == PI_MM_LD_REDUCE ? 0 : PI_REG(t, vr[i]);
        if (kind == PI_MM_ST) {
            for (uint32_t k = 0; k < w->n; k++)
                pa_le_store(w->copy[k] + off + i * size, b, size);
            continue;
        }
        if (kind == PI_MM_RED) {
            for (uint32_t k = 0; k < w->n; k++) {
                uint8_t *p = w->copy[k] + off + i * size;
                uint64_t d = pa_le_load(p, size), r = 0;
                for (unsigned e = 0; e < per; e++)
                    r |= (step(op, x->mode, (d >> (e * eb)) & emask, (b >> (e * eb)) & emask) & emask) << (e * eb);
                pa_le_store(p, r, size);
            }
            continue;
        }
        uint64_t r = 0, v[PA_MC_MAX];
        for (unsigned e = 0; e < per; e++) {
            for (uint32_t k = 0; k < w->n; k++)
                v[k] = (pa_le_load(w->copy[k] + off + i * size, size) >> (e * eb)) & emask;
            r |= (fold(op, x->mode, x->sub2, v, w->n) & emask) << (e * eb);
        }
        if (vr[i] != PI_NOREG)
            PI_REG(t, vr[i]) = r;
    }
    return PA_OK;
}
