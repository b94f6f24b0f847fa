/* space.c - isspacep and getctarank: which window of the generic address space an
 * address is in, and which CTA of the cluster a shared address names; and createpolicy
 * with its fraction in a register (policy.c), whose value is known only when it runs.
 *
 * The model's windows (prog.h): parameters at PI_PARAM_BASE, shared memory at
 * PI_SHARED_BASE (a shared::cluster address: CTA rank << 24 | offset), a thread's
 * .local data at PI_LOCAL_BASE, the module's .const variables at the start of its
 * variables' global buffer; anything else is global. What an H200 answers for each
 * kind of address (tests/data/isa/isspacep.json): a parameter's address is .param,
 * .param::entry and .global; this CTA's shared memory is .shared, .shared::cta and
 * .shared::cluster, another CTA's only .shared::cluster; a .const variable's address
 * is .const and not .global; null and unmapped addresses are .global.
 */
#include "ptx/exec/launch.h"
#include "ptx/exec/lower_int.h"

#include <string.h>

static float pi_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

enum { SP_GLOBAL, SP_SHARED, SP_SHARED_CTA, SP_SHARED_CLUSTER, SP_LOCAL, SP_CONST, SP_PARAM, SP_PARAM_ENTRY };

static int in_window(uint64_t a, uint64_t base)
{
    return a >= base && a - base < PI_WINDOW_SIZE;
}

static int isspacep(const pi_launch_state *L, const pi_thread *t, uint64_t a, int space)
{
    const uint64_t cb = L->a->gvar_base;
    if (in_window(a, PI_SHARED_BASE)) {
        uint32_t rank = pa_smem_rank((uint32_t)(a - PI_SHARED_BASE));
        if (space == SP_SHARED_CLUSTER)
            return rank < L->m->cluster.nctas;
        return (space == SP_SHARED || space == SP_SHARED_CTA) && rank == t->cta;
    }
    if (in_window(a, PI_LOCAL_BASE))
        return space == SP_LOCAL;
    if (in_window(a, PI_PARAM_BASE))
        return space == SP_PARAM || space == SP_PARAM_ENTRY || space == SP_GLOBAL;
    if (L->p->const_bytes && a >= cb && a - cb < L->p->const_bytes)
        return space == SP_CONST;
    return space == SP_GLOBAL;
}

int pi_space_exec(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err)
{
    const uint64_t a = PI_REG(t, x->s0);
    if (x->kind == PX_POLICY) {
        uint32_t f = (uint32_t)a;
        if (!pi_policy_fraction_valid(f))
            return pa_fail(err, PA_ERR_INVALID_VALUE, "createpolicy.fractional: the fraction in a register, %g "
                           "(0x%08x), is not in (0.0, 1.0], the ISA's valid range", (double)pi_f32(f), f);
        PI_REG(t, x->d) = pi_policy_fractional((uint8_t)x->sub, f);
        return PA_OK;
    }
    if (x->kind == PX_ISSPACEP) {
        PI_REG(t, x->d) = (uint64_t)isspacep(L, t, a, x->sub);
        return PA_OK;
    }
    /* getctarank: a generic address in the shared window, or a shared::cluster address */
    uint64_t s = a;
    if (!x->flags) {
        if (!in_window(a, PI_SHARED_BASE))
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "getctarank of 0x%llx: not a generic address of shared "
                           "memory", (unsigned long long)a);
        s = a - PI_SHARED_BASE;
    }
    uint32_t rank;
    if (s > UINT32_MAX || !pa_smem_resolve(&L->m->cluster, t->cta, 1, (uint32_t)s, 1, &rank, err))
        return s > UINT32_MAX ? pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "getctarank of 0x%llx: not a shared::cluster "
                                        "address", (unsigned long long)s) : PA_ERR_ILLEGAL_ADDRESS;
    PI_REG(t, x->d) = rank;
    return PA_OK;
}
