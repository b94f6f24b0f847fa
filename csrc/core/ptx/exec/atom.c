/* atom.c - what atom and red do to memory: one read-modify-write of the
 * thread's address, each element by the rule of reduce.c (pa_reduce_elem:
 * the one place the model's reductions round), told to the race checker as
 * an atomic (check/hb.h, pa_hb_atomic).
 *
 * As an H200 does it (tests/data/isa/carry_atom.*, tools/device/record_carry_atom.py):
 * f32 add into .global memory flushes subnormal operands and results to zero
 * (a NaN gives 0x7FFFFFFF), into .shared memory it keeps them (round to nearest
 * even, the same NaN); f16 / bf16 (and the x2 halves) add rounds to nearest
 * even, keeps subnormals, a NaN gives 0x7FFF; f64 add is IEEE's, a NaN operand
 * passed on unchanged into .global memory (the source's first, as the bulk
 * reductions) and quieted into .shared (the destination's first). A converged
 * warp's lanes run one after another in lane order, so several lanes on one
 * word see each other's results, as on the hardware (in some order).
 */
#include "ptx/exec/launch.h"
#include "ptx/exec/atom.h"
#include "check/hb.h"
#include "check/watch.h"
#include "reduce.h"

#include <string.h>

static uint64_t half2(pa_redop op, pa_ekind k, uint64_t d, uint64_t s)
{
    uint64_t lo = pa_reduce_elem(op, k, d & 0xFFFF, s & 0xFFFF);
    uint64_t hi = pa_reduce_elem(op, k, (d >> 16) & 0xFFFF, (s >> 16) & 0xFFFF);
    return lo | hi << 16;
}

/* The new value of one register's worth of memory d, operand s (and c: cas). */
static uint64_t atom_value(int op, int kind, int shared, uint64_t d, uint64_t s, uint64_t c)
{
    if (op == PI_AO_EXCH)
        return s;
    if (op == PI_AO_CAS)
        return d == s ? c : d;
    pa_redop r = (pa_redop)op;
    switch (kind) {
    case PI_AK_U32: return pa_reduce_elem(r, PA_EK_U32, d, s);
    case PI_AK_S32: return pa_reduce_elem(r, PA_EK_S32, d, s);
    case PI_AK_U64: return pa_reduce_elem(r, PA_EK_U64, d, s);
    case PI_AK_S64: return pa_reduce_elem(r, PA_EK_S64, d, s);
    case PI_AK_F16: return pa_reduce_elem(r, PA_EK_F16, d, s);
    case PI_AK_BF16: return pa_reduce_elem(r, PA_EK_BF16, d, s);
    case PI_AK_F16X2: return half2(r, PA_EK_F16, d, s);
    case PI_AK_BF16X2: return half2(r, PA_EK_BF16, d, s);
    case PI_AK_F32: return pa_reduce_elem(r, shared ? PA_EK_F32 : PA_EK_F32_FTZ, d, s);
    case PI_AK_F64: return shared && r == PA_RED_ADD ? pa_reduce_add_f64_quiet(d, s) : pa_reduce_elem(r, PA_EK_F64, d, s);
    default: return d;
    }
}

int pi_atom_exec(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err)
{
    pa_machine *m = L->m;
    const uint32_t *vr = L->p->vregs + x->vbase;       /* n results, then n operands */
    const uint32_t n = x->n, size = x->size, len = size * n;
    const char *name = (x->flags & PI_AF_RED) ? "red" : "atom";
    uint64_t a = (x->a0.base == PI_NOREG ? 0 : PI_REG(t, x->a0.base)) + (uint64_t)x->a0.off;
    int sp = x->space;
    if (a % len)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "%s of %u bytes at 0x%llx is not %u-byte aligned", name, len,
                       (unsigned long long)a, len);
    if (sp == PI_SP_GENERIC) {
        if (a >= PI_PARAM_BASE && a < PI_PARAM_BASE + PI_WINDOW_SIZE)
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "%s at 0x%llx: a kernel parameter is not memory an atomic "
                           "may change", name, (unsigned long long)a);
        if (a >= PI_SHARED_BASE && a < PI_SHARED_BASE + PI_WINDOW_SIZE) {
            sp = PI_SP_SHARED_CLUSTER;
            a -= PI_SHARED_BASE;
        } else {
            sp = PI_SP_GLOBAL;
        }
    }
    int sem = ((x->flags & PI_AF_ACQUIRE) ? PA_HB_ACQUIRE : 0) | ((x->flags & PI_AF_RELEASE) ? PA_HB_RELEASE : 0) |
              ((x->flags & PI_AF_RED) ? PA_HB_NO_READ : 0);
    uint8_t *p;
    int shared = sp == PI_SP_SHARED || sp == PI_SP_SHARED_CLUSTER;
    if (shared) {
        uint32_t rank = 0;
        if (a > UINT32_MAX)
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "shared address 0x%llx does not fit in 32 bits",
                           (unsigned long long)a);
        p = pa_smem_resolve(&m->cluster, t->cta, sp == PI_SP_SHARED_CLUSTER, (uint32_t)a, len, &rank, err);
        if (!p || pa_hb_atomic(m, t->cta, t->tid, 1, rank, pa_smem_offset((uint32_t)a), len, sem, name, err))
            return PI_R_ERR;
    } else {
        p = pa_global_resolve(&m->global, a, len, err);
        if (!p || pa_hb_atomic(m, t->cta, t->tid, 2, 0, a, len, sem, name, err) ||
            pa_check_global_bytes(m, t->cta, t->tid, a, len, 0, name, err) ||
            pa_check_global_bytes(m, t->cta, t->tid, a, len, 1, name, err))
            return PI_R_ERR;
    }
    if (x->mode == PI_AK_B128) {
        /* atom.exch.b128 / atom.cas.b128: the 16 bytes are one value (cas compares all 128 bits) */
        uint64_t d[2], b[2] = {PI_REG(t, vr[2]), PI_REG(t, vr[3])}, v[2];
        memcpy(d, p, 16);
        int swap = x->sub == PI_AO_EXCH || (d[0] == b[0] && d[1] == b[1]);
        v[0] = x->sub == PI_AO_EXCH ? b[0] : PI_REG(t, x->s1);
        v[1] = x->sub == PI_AO_EXCH ? b[1] : PI_REG(t, x->s2);
        if (swap)
            memcpy(p, v, 16);
        for (int i = 0; i < 2; i++)
            if (vr[i] != PI_NOREG)
                PI_REG(t, vr[i]) = d[i];
        return PA_OK;
    }
    const uint64_t mask = size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
    const uint64_t c = x->s1 == PI_NOREG ? 0 : PI_REG(t, x->s1) & mask;
    uint64_t old[8];
    for (uint32_t i = 0; i < n; i++) {              /* read all, write all: one access */
        uint64_t d = 0;
        memcpy(&d, p + i * size, size);             /* little-endian host */
        old[i] = d;
        uint64_t v = atom_value(x->sub, x->mode, shared, d, PI_REG(t, vr[n + i]) & mask, c) & mask;
        memcpy(p + i * size, &v, size);
    }
    for (uint32_t i = 0; i < n; i++)
        if (vr[i] != PI_NOREG)
            PI_REG(t, vr[i]) = old[i];
    return PA_OK;
}
