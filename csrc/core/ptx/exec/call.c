/* call.c - a thread's calls: frames on its stack, saved registers, ret.
 *
 * Each thread has a stack of bytes (its local window: local addresses are offsets in it) and
 * a list of active calls. A call to a .func (lower_call.c says what a frame holds):
 *   1. reads its arguments (the caller's .param variables, registers, immediates),
 *   2. opens the callee's frame past the stack's top, at its alignment, zeroed, with the
 *      arguments in its parameter slots,
 *   3. saves the callee's registers (a recursive activation has the same ones), sets its frame
 *      variables' registers and its .reg formals' (from their slots) and jumps.
 * ret puts the .reg return values into their slots, restores the saved registers, copies the
 * return parameters out of the frame into the caller's return entries and pops the frame. An
 * indirect call through a .calltargets list reaches only a function of the list. The nesting is bounded (PI_MAX_CALL_DEPTH)
 * and so are the stack's bytes (PI_MAX_STACK_BYTES): recursion that never ends is an error
 * naming the line and the limit, never the host's stack.
 */
#include "ptx/exec/launch.h"

#include <stdlib.h>
#include <string.h>

/* the frame's registers: its variables' addresses, its .reg formals' values from their slots */
static void pi_frame_syms(const pi_prog *p, const pi_func *F, pi_thread *t, uint64_t base)
{
    for (uint32_t k = 0; k < F->nfsym; k++) {
        const pi_fsym *s = &p->fsyms[F->fsym0 + k];
        if (s->value) {
            uint64_t v[2] = {0, 0};          /* a .b128 formal fills its two registers */
            for (uint64_t i = 0; i < s->size && i < 16; i++)
                v[i / 8] |= (uint64_t)t->local[base + s->off + i] << (8 * (i & 7));
            PI_REG(t, s->reg) = v[0];
            if (s->size > 8)
                PI_REG(t, s->reg + 1) = v[1];
        } else {
            PI_REG(t, s->reg) = (s->generic ? PI_LOCAL_BASE : 0) + base + s->off;
        }
    }
}

/* at ret: the .reg return values' registers into their slots, little-endian */
static void pi_frame_rets(const pi_prog *p, const pi_func *F, const pi_thread *t, uint64_t base)
{
    for (uint32_t k = 0; k < F->nfsym; k++) {
        const pi_fsym *s = &p->fsyms[F->fsym0 + k];
        if (s->value == 2)
            for (uint64_t i = 0; i < s->size && i < 16; i++)
                t->local[base + s->off + i] = (uint8_t)(PI_REG(t, s->reg + (uint32_t)(i / 8)) >> (8 * (i & 7)));
    }
}

void pi_frame_start(const pi_prog *p, pi_thread *t)
{
    t->depth = 0;
    t->nsaved = 0;
    t->stack_top = p->local_bytes;
    if (p->local_bytes)
        memset(t->local, 0, p->local_bytes);
    if (p->nfuncs)
        pi_frame_syms(p, &p->funcs[0], t, 0);
}

static int grow(void **a, uint64_t *cap, uint64_t need, size_t size, pa_error *err)
{
    if (need <= *cap)
        return PA_OK;
    uint64_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*a, (size_t)(c * size));
    if (!q)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a thread's stack (%llu bytes)",
                       (unsigned long long)(c * size));
    *a = q;
    *cap = c;
    return PA_OK;
}

/* the bytes of a list entry: a .param variable's (its address in the thread's stack) or a
   register's / an immediate's value, little-endian */
static int entry_bytes(const pi_thread *t, const pi_carg *a, uint8_t *out, pa_error *err)
{
    if (!a->is_addr) {
        for (uint64_t i = 0; i < a->size; i++)
            out[i] = (uint8_t)(PI_REG(t, i < 8 ? a->reg : a->hi) >> (8 * (i & 7)));
        return PA_OK;
    }
    uint64_t at = PI_REG(t, a->reg) - PI_LOCAL_BASE;
    if (at > t->stack_top || a->size > t->stack_top - at)
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "a call's .param entry at local address %llu (%llu bytes) is "
                       "outside the thread's stack", (unsigned long long)at, (unsigned long long)a->size);
    memcpy(out, t->local + at, a->size);
    return PA_OK;
}

static int entry_put(pi_thread *t, const pi_carg *a, const uint8_t *in, pa_error *err)
{
    if (!a->is_addr) {
        uint64_t v[2] = {0, 0};
        for (uint64_t i = 0; i < a->size && i < 16; i++)
            v[i / 8] |= (uint64_t)in[i] << (8 * (i & 7));
        PI_REG(t, a->reg) = v[0];
        if (a->size > 8 && a->hi)
            PI_REG(t, a->hi) = v[1];
        return PA_OK;
    }
    uint64_t at = PI_REG(t, a->reg) - PI_LOCAL_BASE;
    if (at > t->stack_top || a->size > t->stack_top - at)
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "a call's return .param at local address %llu is outside the "
                       "thread's stack", (unsigned long long)at);
    memcpy(t->local + at, in, a->size);
    return PA_OK;
}

/* the function a call reaches: its callee, or the one whose address the target register holds,
   its signature the prototype's */
static int callee_of(const pi_prog *p, const pi_thread *t, const pi_call *c, uint32_t *f, pa_error *err)
{
    if (c->callee != PI_NOREG) {
        *f = c->callee;
        return PA_OK;
    }
    uint64_t a = PI_REG(t, c->target);
    if (a < PI_FUNC_BASE + 16 || (a - PI_FUNC_BASE) % 16 || (a - PI_FUNC_BASE) / 16 > p->nfuncs)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "an indirect call to 0x%llx, which is not the address of a "
                       ".func of the module", (unsigned long long)a);
    *f = (uint32_t)((a - PI_FUNC_BASE) / 16 - 1);
    const pi_func *F = &p->funcs[*f];
    if (c->ntgt) {                     /* through a .calltargets list: one of its functions (ISA: else undefined) */
        uint32_t k = 0;
        while (k < c->ntgt && p->ctargets[c->tgt0 + k] != *f)
            k++;
        if (k == c->ntgt)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "an indirect call to 0x%llx ('%s'), which is not a "
                           "function of the call's .calltargets list (%u of them)", (unsigned long long)a, F->name,
                           c->ntgt);
    }
    int ok = F->nparam == c->narg && F->nret == c->nret && *f != 0;
    for (uint32_t k = 0; ok && k < c->narg; k++)
        ok = p->slots[F->param0 + k].size == p->cargs[c->arg0 + k].size;
    for (uint32_t k = 0; ok && k < c->nret; k++)
        ok = p->slots[F->ret0 + k].size == p->cargs[c->ret0 + k].size;
    if (!ok)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "an indirect call to '%s', whose parameters (%u, and %u "
                       "return values) are not the .callprototype's (%u and %u, or their sizes differ)", F->name,
                       F->nparam, F->nret, c->narg, c->nret);
    return PA_OK;
}

/* a call of a runtime function: its arguments as values, its result into the return entry */
static int runtime_call(pi_launch_state *L, pi_thread *t, const pi_call *c, const pi_func *F, pa_error *err)
{
    const pi_prog *p = L->p;
    uint64_t args[5] = {0}, ret = 0;
    for (uint32_t k = 0; k < c->narg && k < 5; k++) {
        uint8_t b[8] = {0};
        if (entry_bytes(t, &p->cargs[c->arg0 + k], b, err))
            return PI_R_ERR;
        for (int i = 0; i < 8; i++)
            args[k] |= (uint64_t)b[i] << (8 * i);
    }
    if (pi_devrt(L, t, F->builtin, args, &ret, err))
        return PI_R_ERR;
    if (c->nret) {
        uint8_t b[8];
        for (int i = 0; i < 8; i++)
            b[i] = (uint8_t)(ret >> (8 * i));
        if (entry_put(t, &p->cargs[c->ret0], b, err))
            return PI_R_ERR;
    }
    t->pc++;
    return PA_OK;
}

static int call(pi_launch_state *L, pi_thread *t, const pi_ins *in, pa_error *err)
{
    const pi_prog *p = L->p;
    const pi_call *c = &p->calls[in->x];
    uint32_t f = 0;
    if (callee_of(p, t, c, &f, err))
        return PI_R_ERR;
    const pi_func *F = &p->funcs[f];
    if (F->builtin)
        return runtime_call(L, t, c, F, err);
    if (F->pc == PI_NOREG)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "a call to '%s', which has no body in this module", F->name);
    if (t->depth >= PI_MAX_CALL_DEPTH)
        return pa_fail(err, PA_ERR_STATE, "the call to '%s' would nest %u calls deep; the interpreter's call stack "
                       "holds %u (PI_MAX_CALL_DEPTH; recursion that never ends?)", F->name, t->depth + 1,
                       PI_MAX_CALL_DEPTH);
    uint64_t align = F->frame_align ? F->frame_align : 16;
    uint64_t base = (t->stack_top + align - 1) / align * align;
    uint64_t top = base + F->frame_bytes, saves = t->nsaved + F->nregs;
    if (top + 8 * saves > PI_MAX_STACK_BYTES)
        return pa_fail(err, PA_ERR_STATE, "the call to '%s' at depth %u needs %llu bytes of stack (frames and saved "
                       "registers); a thread's stack holds %llu (PI_MAX_STACK_BYTES)", F->name, t->depth + 1,
                       (unsigned long long)(top + 8 * saves), (unsigned long long)PI_MAX_STACK_BYTES);
    uint64_t capf = t->capframes;
    if (grow((void **)&t->local, &t->stack_cap, top, 1, err) || grow((void **)&t->saved, &t->capsaved, saves, 8, err) ||
        grow((void **)&t->frames, &capf, (uint64_t)t->depth + 1, sizeof *t->frames, err))
        return PI_R_ERR;
    t->capframes = (uint32_t)capf;
    if (top > t->stack_top)                        /* (a thread with no stack yet has no bytes) */
        memset(t->local + t->stack_top, 0, top - t->stack_top);
    for (uint32_t k = 0; k < c->narg; k++)         /* the arguments, before any register changes */
        if (entry_bytes(t, &p->cargs[c->arg0 + k], t->local + base + p->slots[F->param0 + k].off, err))
            return PI_R_ERR;
    for (uint32_t k = 0; k < F->nregs; k++)
        t->saved[t->nsaved + k] = PI_REG(t, F->reg0 + k);
    pi_frame *fr = &t->frames[t->depth++];
    fr->ret_pc = t->pc + 1;
    fr->func = f;
    fr->call = in->x;
    fr->base = base;
    fr->prev_top = t->stack_top;
    fr->save = t->nsaved;
    t->nsaved = saves;
    t->stack_top = top;
    pi_frame_syms(p, F, t, base);
    t->pc = F->pc;
    return PA_OK;
}

static int ret(pi_launch_state *L, pi_thread *t, pa_error *err)
{
    const pi_prog *p = L->p;
    if (!t->depth)
        return pa_fail(err, PA_ERR_STATE, "ret with no call to return from");
    const pi_frame fr = t->frames[t->depth - 1];
    const pi_func *F = &p->funcs[fr.func];
    const pi_call *c = &p->calls[fr.call];
    pi_frame_rets(p, F, t, fr.base);
    for (uint32_t k = 0; k < F->nregs; k++)                                /* the caller's view again */
        PI_REG(t, F->reg0 + k) = t->saved[fr.save + k];
    for (uint32_t k = 0; k < c->nret; k++)
        if (entry_put(t, &p->cargs[c->ret0 + k], t->local + fr.base + p->slots[F->ret0 + k].off, err))
            return PI_R_ERR;
    t->nsaved = fr.save;
    t->stack_top = fr.prev_top;
    t->depth--;
    t->pc = fr.ret_pc;
    return PA_OK;
}

int pi_call_exec(pi_launch_state *L, pi_thread *t, const pi_ins *in, pa_error *err)
{
    return in->op == PI_CALL ? call(L, t, in, err) : ret(L, t, err);
}
