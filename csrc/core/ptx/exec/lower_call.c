/* lower_call.c - functions and calls.
 *
 * The program holds the .entry and every .func it reaches (by a call, or by taking the
 * function's address: `mov.u64 %rd, f`), each with its own registers and its own frame. A
 * frame is a thread's stack bytes for one activation: the function's parameters and return
 * parameters, then the .local variables of its body (nvcc's __local_depot), then the .param
 * variables of its call scopes (NVRTC's `{ .param .b32 param0; ... call ...; }`). A frame
 * variable's name is a register of the function set when the frame starts (call.c): the
 * frame's base plus the variable's offset, as a local address for a .local variable (cvta.local
 * makes it generic) and as a generic one for a .param variable (ld.param / st.param take it).
 * The .entry's frame starts at the bottom of the stack when the thread does.
 *
 * A .reg parameter or return value (the ABI before .param) has its slot in the frame as a .param
 * one does; its name is a register of the function that takes the slot's bytes when the frame
 * starts (a return value's goes back to its slot at ret), so a call's entries are copied alike
 * whatever space the formal is declared in.
 *
 * A call copies its arguments into the callee's new frame, saves the callee's registers (a
 * recursive activation has the same ones) and jumps; ret copies the return parameters back
 * into the caller's and restores them. An indirect call names a .callprototype or a
 * .calltargets list; through a list, the address must be one of its functions'. .extern functions of the CUDA device runtime (vprintf,
 * malloc, free, __assertfail) have no body: the runtime runs them (devrt.c).
 */
#include "ptx/exec/lower_int.h"
#include "ptx/text/sig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int bi, nret, nparam;
    uint8_t ret, param[5];           /* bytes */
} RUNTIME[] = {
    {"vprintf", PI_BI_VPRINTF, 1, 2, 4, {8, 8}},
    {"__assertfail", PI_BI_ASSERTFAIL, 0, 5, 0, {8, 8, 4, 8, 8}},
    {"malloc", PI_BI_MALLOC, 1, 1, 8, {8}},
    {"free", PI_BI_FREE, 0, 1, 0, {8}},
};

static uint64_t up(uint64_t at, uint64_t align)
{
    return align > 1 ? (at + align - 1) / align * align : at;
}

/* a function's signature: its parameters and return parameters as slots of its frame */
static int add_func(lw *L, const ptx_sig *sig)
{
    pi_prog *p = L->p;
    uint32_t f = p->nfuncs, cap = L->capfuncs;
    if (GROWN(p->funcs, f, L->capfuncs)) {
        L->oom = 1;
        return -1;
    }
    if (L->capfuncs != cap) {          /* the lowering's arrays of the functions, as long */
        uint32_t *a = realloc(L->fhdr, L->capfuncs * sizeof *a), *b = a ? realloc(L->fopen, L->capfuncs * sizeof *b) : NULL;
        if (a)
            L->fhdr = a;
        if (b)
            L->fopen = b;
        uint32_t *c = b ? realloc(L->fclose, L->capfuncs * sizeof *c) : NULL;
        if (!c) {
            L->oom = 1;
            return -1;
        }
        L->fclose = c;
    }
    pi_func *F = &p->funcs[f];
    memset(F, 0, sizeof *F);
    if (!(F->name = lw_span_dup(L, sig->name)))
        return -1;
    F->line = sig->line;
    F->pc = PI_NOREG;                  /* (pass 1 places a body) */
    F->frame_align = 16;
    L->fhdr[f] = sig->header;
    L->fopen[f] = sig->has_body ? sig->open : 0;
    L->fclose[f] = sig->has_body ? sig->close : 0;
    if (sig->too_many || sig->nparam + sig->nret > 255) {
        lw_lerr(L, sig->line, sig->col, "function '%s' has more parameters than the interpreter follows (255)%s",
                F->name, "");
        goto fail;
    }
    F->param0 = p->nslots;
    F->nparam = f ? (uint32_t)sig->nparam : 0;    /* the .entry's are the kernel's parameters */
    F->ret0 = p->nslots + F->nparam;
    F->nret = (uint32_t)sig->nret;
    uint64_t at = 0;
    for (int k = 0; k < (int)(F->nparam + F->nret); k++) {
        const ptx_fparam *fp = k < (int)F->nparam ? &sig->param[k] : &sig->ret[k - (int)F->nparam];
        if (GROWN(p->slots, p->nslots, L->capslots)) {
            L->oom = 1;
            goto fail;
        }
        uint32_t align = fp->align ? fp->align : 1;
        at = up(at, align);
        p->slots[p->nslots].off = at;
        p->slots[p->nslots].size = fp->size;
        p->nslots++;
        at += fp->size;
        if (align > F->frame_align)
            F->frame_align = align;
        if (at > PI_MAX_STACK_BYTES) {
            lw_lerr(L, sig->line, sig->col, "the parameters of '%s' take more than a thread's stack (2^20 bytes)%s",
                    F->name, "");
            goto fail;
        }
    }
    F->frame_bytes = at;
    if (!sig->has_body && sig->kind == PTX_SIG_FUNC) {
        for (size_t k = 0; k < sizeof RUNTIME / sizeof RUNTIME[0]; k++) {
            if (strcmp(F->name, RUNTIME[k].name))
                continue;
            int ok = sig->nret == RUNTIME[k].nret && sig->nparam == RUNTIME[k].nparam &&
                     (!sig->nret || sig->ret[0].size == RUNTIME[k].ret);
            for (int j = 0; ok && j < sig->nparam; j++)
                ok = sig->param[j].size == RUNTIME[k].param[j] && !sig->param[j].array;
            if (!ok) {
                lw_lerr(L, sig->line, sig->col, "'%s' is declared with a signature other than the CUDA device "
                        "runtime's (%s)", F->name, F->name[0] == 'v' ? "(.param .b32 r) vprintf(.param .b64 fmt, "
                        ".param .b64 args)" : F->name[0] == 'm' ? "(.param .b64 p) malloc(.param .b64 size)" :
                        F->name[0] == 'f' ? "free(.param .b64 p)" : "__assertfail(.param .b64 message, .param .b64 "
                        "file, .param .b32 line, .param .b64 function, .param .b64 charSize)");
                goto fail;
            }
            F->builtin = RUNTIME[k].bi;
            if (F->builtin == PI_BI_MALLOC || F->builtin == PI_BI_FREE)
                p->uses_heap = 1;
        }
    }
    p->nfuncs++;
    return 0;
fail:                                  /* not counted: its name is freed here */
    free(F->name);
    F->name = NULL;
    return -1;
}

/* the .func (or runtime function) a symbol operand names, added to the program when new */
static int reach(lw *L, const ptx_operand *o)
{
    if (o->kind != PTX_OP_SYM || lw_func_index(L, o->name) != PI_NOREG)
        return 0;
    ptx_fparam params[PTX_SIG_MAX];
    ptx_sig sig;
    int kind;
    if (ptx_sig_of(L->m, o->name, &sig, params, &kind) || sig.kind != PTX_SIG_FUNC)
        return 0;
    return add_func(L, &sig);
}

int lw_funcs(lw *L, uint32_t hdr, uint32_t open, uint32_t close)
{
    const ptx_module *m = L->m;
    ptx_fparam params[PTX_SIG_MAX];
    ptx_sig sig;
    if (ptx_sig_at(m, hdr, &sig, params)) {
        lw_lerr(L, m->items[hdr].line, m->items[hdr].col, "the .entry's header is not one the interpreter "
                "reads%s%s", "", "");
        return -1;
    }
    sig.nparam = 0;
    sig.nret = 0;
    sig.has_body = 1;
    sig.open = open;
    sig.close = close;
    if (add_func(L, &sig))
        return -1;
    /* the functions the module's variables hold the addresses of (call tables) */
    for (uint32_t i = 0; i < L->nvinits; i++) {
        ptx_operand o;
        memset(&o, 0, sizeof o);
        o.kind = PTX_OP_SYM;
        o.name = L->vinits[i].name;
        if (reach(L, &o))
            return -1;
    }
    /* every function body reached so far, in turn: the functions its operands name */
    for (uint32_t f = 0; f < L->p->nfuncs; f++) {
        if (!L->fopen[f])
            continue;
        for (uint32_t i = L->fopen[f]; i <= L->fclose[f] && i < m->nitems; i++) {
            const ptx_item *it = &m->items[i];
            if (it->kind != PTX_ITEM_INSTR)
                continue;
            for (int k = 0; k < it->nops; k++) {
                const ptx_operand *o = &m->ops[it->op0 + k];
                if (reach(L, o))
                    return -1;
            }
        }
    }
    return 0;
}

/* a frame variable of function L->fn: `name` in `scope` is register reg = frame base + off (value 0),
   or a .reg formal of `cls` bits holding its slot's `size` bytes (value 1 a parameter, 2 a return value) */
static int frame_sym(lw *L, ptx_span name, int scope, uint64_t off, int generic, int value, uint64_t size, uint8_t cls)
{
    pi_prog *p = L->p;
    uint32_t reg = lw_new_regs(L, cls == 128 ? 2 : 1, cls);     /* a .b128 formal: two registers */
    if (L->oom || L->regs_full)
        return L->oom ? -1 : 0;
    if (GROWN(L->rd, L->nrd, L->caprd) || GROWN(p->fsyms, p->nfsyms, L->capfsyms)) {
        L->oom = 1;
        return -1;
    }
    regdecl *r = &L->rd[L->nrd++];
    r->name = name;
    r->range = 0;
    r->scope = scope;
    r->cls = cls;
    r->base = reg;
    pi_func *F = &p->funcs[L->fn];
    if (!F->nfsym)
        F->fsym0 = p->nfsyms;
    p->fsyms[p->nfsyms].reg = reg;
    p->fsyms[p->nfsyms].off = off;
    p->fsyms[p->nfsyms].generic = (uint8_t)generic;
    p->fsyms[p->nfsyms].value = (uint8_t)value;
    p->fsyms[p->nfsyms].size = size;
    p->nfsyms++;
    F->nfsym++;
    return 0;
}

int lw_frame_formals(lw *L, int scope)
{
    const ptx_module *m = L->m;
    pi_prog *p = L->p;
    const pi_func *F = &p->funcs[L->fn];
    if (!L->fn)
        return 0;
    ptx_fparam params[PTX_SIG_MAX];
    ptx_sig sig;
    if (ptx_sig_at(m, L->fhdr[L->fn], &sig, params))
        return 0;
    for (int k = 0; k < sig.nparam + sig.nret; k++) {
        const ptx_fparam *fp = k < sig.nparam ? &sig.param[k] : &sig.ret[k - sig.nparam];
        uint32_t slot = k < sig.nparam ? F->param0 + (uint32_t)k : F->ret0 + (uint32_t)(k - sig.nparam);
        if (fp->is_reg && (fp->vec || fp->array || fp->pred || fp->ebytes < 4)) {
            lw_lerr(L, sig.line, sig.col, "'%s' takes a .reg parameter that is not a 32- or 64-bit scalar, which "
                    "no call passes (ptxas refuses such calls)%s", F->name, "");
            return 0;
        }
        if (fp->is_reg && fp->name.len &&
            frame_sym(L, fp->name, scope, p->slots[slot].off, 0, k < sig.nparam ? 1 : 2, fp->size,
                      (uint8_t)(8 * fp->ebytes)))
            return -1;
        if (!fp->is_reg && fp->name.len && frame_sym(L, fp->name, scope, p->slots[slot].off, 1, 0, 0, 64))
            return -1;
    }
    return 0;
}

static const ptx_token *tk(const lw *L, uint32_t i)
{
    return &L->m->toks[i];
}

static int bytes_of(const lw *L, uint32_t i)
{
    char buf[16];
    const ptx_token *k = tk(L, i);
    tinfo t;
    if (k->kind != PTX_TK_DOT || k->s.len >= sizeof buf)
        return 0;
    lw_span_str(L->m, k->s, buf, sizeof buf);
    return lw_type_of(buf + 1, &t) ? (t.bits < 8 ? 1 : t.bits / 8) : 0;
}

/* `.local .align 8 .b8 __local_depot0[16];`, `.param .b32 param0;`: each name a frame variable */
int lw_frame_decl(lw *L, const ptx_item *it, int scope)
{
    const ptx_module *m = L->m;
    pi_prog *p = L->p;
    pi_func *F = &p->funcs[L->fn];
    int generic = ptx_span_eq(m, tk(L, it->tok0)->s, ".param");
    uint64_t align = 0, ebytes = 0;
    uint32_t end = it->tok0 + it->ntok;
    for (uint32_t i = it->tok0 + 1; i < end; i++) {
        const ptx_token *k = tk(L, i);
        int b;
        if (ptx_span_eq(m, k->s, ".align") && i + 1 < end && tk(L, i + 1)->kind == PTX_TK_INT) {
            char buf[24];
            lw_span_str(m, tk(L, i + 1)->s, buf, sizeof buf);
            align = strtoull(buf, NULL, 0);
            i++;
        } else if ((b = bytes_of(L, i)) != 0) {
            ebytes = (uint64_t)b;
        } else if (k->kind == PTX_TK_IDENT) {
            uint64_t count = 1;
            uint32_t j = i + 1;
            while (j + 2 < end + 1 && tk(L, j)->kind == PTX_TK_PUNCT && m->text[tk(L, j)->s.off] == '[') {
                uint64_t v = 0;
                if (j + 1 < end && tk(L, j + 1)->kind == PTX_TK_INT) {
                    char buf[24];
                    lw_span_str(m, tk(L, j + 1)->s, buf, sizeof buf);
                    v = strtoull(buf, NULL, 0);
                    j++;
                }
                if (__builtin_mul_overflow(count, v, &count))
                    count = UINT64_MAX;
                j += 2;
            }
            uint64_t size, a = align ? align : (ebytes ? ebytes : 1);
            if (!ebytes || __builtin_mul_overflow(count, ebytes, &size) || size > PI_MAX_STACK_BYTES ||
                a > 4096) {
                lw_lerr(L, k->line, k->col, "the frame variable '%s' is larger than a thread's stack (2^20 bytes) "
                        "or has no type%s", "", "");
                return 0;
            }
            uint64_t off = up(F->frame_bytes, a);
            if (a > F->frame_align)
                F->frame_align = (uint32_t)a;
            F->frame_bytes = off + size;
            if (F->frame_bytes > PI_MAX_STACK_BYTES) {
                char name[64];
                lw_span_str(m, k->s, name, sizeof name);
                lw_lerr(L, k->line, k->col, "the frame of '%s' takes more than a thread's stack (2^20 bytes) at "
                        "'%s'", F->name, name);
                return 0;
            }
            if (frame_sym(L, k->s, scope, off, generic, 0, 0, 64))
                return -1;
            if (!L->fn && !generic) {          /* the .entry's .local variables: Kernel.variables */
                if (GROWN(p->vars, p->nvars, L->capvars)) {
                    L->oom = 1;
                    return -1;
                }
                pi_var *v = &p->vars[p->nvars];
                if (!(v->name = lw_span_dup(L, k->s)))
                    return -1;
                p->nvars++;
                v->space = 'l';
                v->offset = off;
                v->bytes = size;
            }
            i = j - 1;
        }
    }
    return 0;
}

int lw_frames_done(lw *L)
{
    L->p->local_bytes = L->p->nfuncs ? L->p->funcs[0].frame_bytes : 0;
    return 0;
}

/* an entry of a list against the callee's slot `size` bytes: a .param variable (its frame
   register holds the address) or a register / immediate (its value) */
static int list_entry(lw *L, const ptx_operand *e, uint64_t size, int is_ret, pi_carg *out)
{
    out->size = size;
    out->is_addr = 0;
    out->hi = 0;
    if (e->kind == PTX_OP_IMM || e->kind == PTX_OP_FIMM) {
        if (is_ret) {
            lw_lerr(L, e->line, e->col, "a return value goes to a .param variable or a register%s%s", "", "");
            return -1;
        }
        if (size > 8)            /* a .b128 entry: the immediate zero-extended */
            return lw_b128_halves(L, e, 0, &out->reg, &out->hi);
        out->reg = lw_src(L, e, (int)(size * 8));
        return out->reg == PI_NOREG ? -1 : 0;
    }
    if (e->kind == PTX_OP_SINK && is_ret) {   /* `call (_), f, ...`: the value is dropped */
        out->reg = 1;                      /* (register 1: where a sink writes) */
        return 0;
    }
    if (e->kind != PTX_OP_SYM && e->kind != PTX_OP_REG) {
        lw_lerr(L, e->line, e->col, "a call's list holds .param variables, registers and immediates%s%s", "", "");
        return -1;
    }
    uint8_t cls = 64;
    uint32_t r = lw_find_reg(L, e->name, L->item_scope[L->item], &cls);
    if (r == PI_NOREG) {
        char name[64];
        lw_span_str(L->m, e->name, name, sizeof name);
        lw_lerr(L, e->line, e->col, "the interpreter cannot resolve '%s' in the call's list%s", name, "");
        return -1;
    }
    /* a frame variable's register holds its address (its decl is a .param / .local one) */
    const pi_prog *p = L->p;
    for (uint32_t k = 0; k < p->nfsyms; k++)
        if (p->fsyms[k].reg == r) {
            out->is_addr = 1;
            break;
        }
    if (!out->is_addr && size == 16 && cls == 128) {     /* a .b128 register: its two halves */
        out->reg = r;
        out->hi = r + 1;
        return 0;
    }
    if (!out->is_addr && size > 8) {
        lw_lerr(L, e->line, e->col, "a register entry of more than 8 bytes is not modelled%s%s", "", "");
        return -1;
    }
    out->reg = r;
    return 0;
}

/* a call's .calltargets list: each function's index in c (PI_NOREG for one no code reaches: no
   address can name it), sig the first one's; 0 when flist is no list (c->ntgt stays 0) */
static int call_targets(lw *L, const ptx_item *it, const ptx_operand *fl, pi_call *c, ptx_sig *sig,
                        ptx_fparam *params)
{
    ptx_span names[256];
    pi_prog *p = L->p;
    int n = ptx_call_targets(L->m, fl->name, (uint32_t)(it - L->m->items), names, 256);
    if (n < 0)
        return 0;
    if (n > 256 || n == 0) {
        char num[16];
        snprintf(num, sizeof num, "%d", n);
        lw_lerr(L, fl->line, fl->col, "call: a .calltargets list of %s functions (the interpreter follows 1 to "
                "256)%s", num, "");
        return -1;
    }
    int kind;
    if (ptx_sig_of(L->m, names[0], sig, params, &kind)) {
        lw_lerr(L, fl->line, fl->col, "call: the .calltargets list's first name is not a function%s%s", "", "");
        return -1;
    }
    c->tgt0 = p->nctargets;
    for (int k = 0; k < n; k++) {
        if (GROWN(p->ctargets, p->nctargets, L->capctargets)) {
            L->oom = 1;
            return -1;
        }
        p->ctargets[p->nctargets++] = lw_func_index(L, names[k]);
    }
    c->ntgt = (uint32_t)n;
    return 0;
}

int lw_call(lw *L, const ptx_item *it, const parts *P)
{
    (void)P;
    pi_prog *p = L->p;
    const ptx_operand *rets = NULL, *args = NULL, *target = NULL, *proto = NULL;
    for (int k = 0; k < it->nops; k++) {
        const ptx_operand *o = lw_op(L, it, k);
        if (o->kind == PTX_OP_LIST)
            *(target ? &args : &rets) = o;
        else if (!target)
            target = o;
        else
            proto = o;
    }
    if (!target)
        return lw_unsupported(L, it, ": no call target");
    pi_ins *in = lw_emit(L);
    if (!in || GROWN(p->calls, p->ncalls, L->capcalls)) {
        L->oom = 1;
        return -1;
    }
    pi_call *c = &p->calls[p->ncalls];
    memset(c, 0, sizeof *c);
    in->op = PI_CALL;
    in->x = p->ncalls++;
    /* the sizes of the callee's slots: the function's, or the prototype's */
    uint64_t sizes[2 * PTX_SIG_MAX];
    int nret = 0, nparam = 0;
    if (target->kind == PTX_OP_SYM) {
        c->callee = lw_func_index(L, target->name);
        if (c->callee == PI_NOREG) {
            char name[64];
            lw_span_str(L->m, target->name, name, sizeof name);
            lw_lerr(L, target->line, target->col, "call: '%s' is not a .func of the module%s", name, "");
            return -1;
        }
        const pi_func *F = &p->funcs[c->callee];
        if (!L->fopen[c->callee] && !F->builtin) {
            lw_lerr(L, target->line, target->col, "call: '%s' has no body in this module (an .extern function); "
                    "of the CUDA device runtime the interpreter runs vprintf, malloc, free and __assertfail%s",
                    F->name, "");
            return -1;
        }
        nret = (int)F->nret;
        nparam = (int)F->nparam;
        for (int k = 0; k < nparam; k++)
            sizes[PTX_SIG_MAX + k] = p->slots[F->param0 + (uint32_t)k].size;
        for (int k = 0; k < nret; k++)
            sizes[k] = p->slots[F->ret0 + (uint32_t)k].size;
    } else {
        c->callee = PI_NOREG;
        c->target = lw_src(L, target, 64);
        ptx_fparam params[PTX_SIG_MAX];
        ptx_sig sig;
        int kind;
        if (proto && proto->kind == PTX_OP_SYM && call_targets(L, it, proto, c, &sig, params))
            return -1;
        else if (c->ntgt)
            ;                          /* the list's first function gives the slots' sizes */
        else if (!proto || ptx_sig_of(L->m, proto->name, &sig, params, &kind) || sig.kind != PTX_SIG_PROTO) {
            lw_lerr(L, target->line, target->col, "call through a register: the interpreter needs a .callprototype "
                    "label or a .calltargets list after the lists%s%s", "", "");
            return -1;
        }
        nret = sig.nret;
        nparam = sig.nparam;
        for (int k = 0; k < nparam; k++)
            sizes[PTX_SIG_MAX + k] = sig.param[k].size;
        for (int k = 0; k < nret; k++)
            sizes[k] = sig.ret[k].size;
    }
    int gr = rets ? rets->nelem : 0, ga = args ? args->nelem : 0;
    if (gr != nret || ga != nparam) {
        lw_lerr(L, it->line, it->col, "call: wrong number of parameters%s%s", "", "");
        return -1;
    }
    c->ret0 = p->ncargs;
    c->nret = (uint32_t)nret;
    c->arg0 = p->ncargs + c->nret;
    c->narg = (uint32_t)nparam;
    for (int k = 0; k < nret + nparam; k++) {
        if (GROWN(p->cargs, p->ncargs, L->capcargs)) {
            L->oom = 1;
            return -1;
        }
        int is_ret = k < nret;
        const ptx_operand *e = is_ret ? lw_el(L, rets, k) : lw_el(L, args, k - nret);
        if (list_entry(L, e, is_ret ? sizes[k] : sizes[PTX_SIG_MAX + k - nret], is_ret, &p->cargs[p->ncargs]))
            return -1;
        p->ncargs++;
    }
    return 0;
}
