/* stack.c - alloca, stacksave, stackrestore and brx.idx for one thread.
 *
 * The stack is the thread's call-frame stack (call.c): local addresses are offsets in it,
 * the current function's frame ends at a floor, and its top is where a call's frame
 * would open. alloca (PTX ISA 9.7.17.3) takes size bytes at the top, aligned to
 * max(immAlign, 8), and returns their local address (the model's stack grows up: the
 * ISA's stack grows down, which no ld.local / st.local of the block can tell apart);
 * stacksave gives the top, stackrestore sets it back to a value between the floor and
 * the top (anything else is the undefined behaviour 9.7.17.2 names: an error here);
 * ret pops what the function allocated. brx.idx (9.7.12.4) jumps to its table's index-th
 * label; an index past the table is undefined in the ISA: an error here, naming both.
 */
#include "ptx/exec/launch.h"

#include <stdlib.h>
#include <string.h>

/* where the current function's own frame ends: what alloca's memory sits above */
static uint64_t floor_of(const pi_prog *p, const pi_thread *t)
{
    if (!t->depth)
        return p->local_bytes;
    const pi_frame *fr = &t->frames[t->depth - 1];
    return fr->base + p->funcs[fr->func].frame_bytes;
}

static int alloca_(const pi_prog *p, pi_thread *t, const pi_ext *x, pa_error *err)
{
    uint64_t size = PI_REG(t, x->s0) & (x->size == 4 ? 0xFFFFFFFFu : ~0ull);
    uint64_t align = x->a0.off > 8 ? (uint64_t)x->a0.off : 8;
    uint64_t at = (t->stack_top + align - 1) / align * align;
    if (at + size < at || at + size + 8 * t->nsaved > PI_MAX_STACK_BYTES)
        return pa_fail(err, PA_ERR_STATE, "alloca of %llu bytes: a thread's stack holds %llu (PI_MAX_STACK_BYTES; "
                       "the ISA's stack overflow)", (unsigned long long)size, (unsigned long long)PI_MAX_STACK_BYTES);
    if (at + size > t->stack_cap) {
        uint64_t c = t->stack_cap ? t->stack_cap : 64;
        while (c < at + size)
            c *= 2;
        uint8_t *q = realloc(t->local, (size_t)c);
        if (!q)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a thread's stack (%llu bytes)",
                           (unsigned long long)c);
        t->local = q;
        t->stack_cap = c;
    }
    if (at + size > t->stack_top)       /* fresh bytes: zero (the ISA leaves them undefined) */
        memset(t->local + t->stack_top, 0, at + size - t->stack_top);
    t->stack_top = at + size;
    PI_REG(t, x->d) = at;
    (void)p;
    return PA_OK;
}

int pi_stack_exec(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err)
{
    const pi_prog *p = L->p;
    if (x->kind == PX_BRX) {
        uint32_t i = (uint32_t)PI_REG(t, x->s0);
        if (i >= x->vcount)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "brx.idx: index %u is past its .branchtargets table of "
                           "%u labels (undefined in the ISA)", i, x->vcount) ? PI_R_ERR : PI_R_ERR;
        t->pc = p->vregs[x->vbase + i];
        return PI_R_AGAIN;
    }
    switch (x->sub) {
    case 0:
        if (alloca_(p, t, x, err))
            return PI_R_ERR;
        break;
    case 1:
        PI_REG(t, x->d) = t->stack_top;
        break;
    default: {
        uint64_t v = PI_REG(t, x->s0) & (x->size == 4 ? 0xFFFFFFFFu : ~0ull);
        uint64_t lo = floor_of(p, t);
        if (v < lo || v > t->stack_top)
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "stackrestore to %llu: not a stack pointer of this function "
                           "(its stack runs from %llu to %llu; undefined in the ISA)", (unsigned long long)v,
                           (unsigned long long)lo, (unsigned long long)t->stack_top) ? PI_R_ERR : PI_R_ERR;
        t->stack_top = v;
        break;
    }
    }
    t->pc++;
    return PI_R_AGAIN;
}
