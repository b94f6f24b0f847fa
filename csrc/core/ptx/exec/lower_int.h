/* lower_int.h - what the files of the lowering (lower*.c) share: the lowering
 * state of one .entry, the opcode parts and type facts, and the helpers each
 * form file calls. Private to csrc/core/ptx/lower*.c; the public entry is
 * pi_lower (prog.h).
 */
#ifndef PA_PTX_LOWER_INT_H
#define PA_PTX_LOWER_INT_H

#include "ptx/exec/prog.h"
#include "ptx/text/check.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    ptx_span name;
    uint32_t range, base;
    int scope;
    uint8_t cls;
} regdecl;

typedef struct {
    ptx_span name;
    int scope;
    uint32_t ins;
} labeldecl;

typedef struct {
    char *name;
    uint32_t offset;
} shvar;

typedef struct {
    pi_prog *p;
    const ptx_module *m;
    ptx_diags *ds;
    regdecl *rd;
    uint32_t nrd, caprd;
    labeldecl *lb;
    uint32_t nlb, caplb;
    int *parent;                /* scope tree */
    int nscopes, capscopes;
    int *item_scope;            /* per item */
    shvar *sh;
    uint32_t nsh, capsh;
    shvar *gv;                  /* module .global/.const variables (image offsets) */
    uint32_t ngv, capgv, capvars;
    struct vinit {              /* initialisers that name a variable or function (lower_vars.c) */
        uint64_t at, addend;    /* image offset of the word, offset added to the address */
        ptx_span name;
        uint8_t size;
        int line, col;
    } *vinits;
    uint32_t nvinits, capvinits, caprelocs;
    uint8_t *cls;               /* per register: declared bits */
    uint32_t capregs, capinit;
    uint32_t capins, capext, capv, capparams, capshv, capsems;
    int oom;
    uint32_t item;              /* being lowered */
    int bad;                    /* this instruction already reported */
    int sem_only;               /* PTXASYNC_SEM_ONLY=1: no fast_op (lower_sem.c) */
    int regs_full;              /* PI_MAX_REGS reached (reported once) */
    uint32_t capscope;           /* parent[]'s room */
    /* the functions (lower_call.c): per prog->funcs entry, its header item and its body's
       { } items (0: no body) */
    uint32_t fn;                /* being lowered */
    uint32_t *fhdr, *fopen, *fclose;
    uint32_t capfuncs, capfsyms, capslots, capcalls, capcargs, capctargets;
} lw;

/* Room for element n of arr (capacity cap), growing it; 0 or -1 (no memory). */
#define GROWN(arr, n, cap)                                                            \
    ((n) < (cap) ? 0 : lw_grow((void **)&(arr), &(cap), sizeof *(arr), (n) + 1))

#define MAXPARTS 20
typedef struct {
    char buf[160];
    const char *q[MAXPARTS];
    int n;
} parts;

/* Type facts of a PTX type name: bits, signed, float (0 none, 1 f32-like ...). */
typedef struct {
    int bits, is_signed, is_float, is_pred;
} tinfo;

/* registers, scopes, names and operands (lower_regs.c) */
int lw_grow(void **p, uint32_t *cap, size_t size, uint32_t need);
void lw_span_str(const ptx_module *m, ptx_span s, char *buf, size_t cap);
/* The span as a new heap string (NULL, with L->oom, out of memory). */
char *lw_span_dup(lw *L, ptx_span s);
int lw_span_is(const ptx_module *m, ptx_span s, const char *lit);
int lw_spans_eq(const ptx_module *m, ptx_span a, ptx_span b);
void lw_lerr(lw *L, int line, int col, const char *fmt, const char *a, const char *b);
uint32_t lw_new_regs(lw *L, uint32_t n, uint8_t cls);
int lw_in_scope(const lw *L, int decl_scope, int scope);
/* The instruction a label in scope at the item being lowered names; PI_NOREG (reported) if none. */
uint32_t lw_label(lw *L, ptx_span name, int line, int col);
int lw_scope_depth(const lw *L, int s);
uint32_t lw_find_reg(const lw *L, ptx_span name, int scope, uint8_t *cls);
uint32_t lw_name_reg(lw *L, const ptx_operand *o, uint8_t *cls);
uint32_t lw_src(lw *L, const ptx_operand *o, int w);
/* a register holding the constant v */
uint32_t lw_const(lw *L, uint64_t v);
uint32_t lw_dst(lw *L, const ptx_operand *o, int sink_ok, uint8_t *cls);
pi_addr lw_addr(lw *L, const ptx_operand *o);

/* opcode parts, type facts, appending instructions (lower_parts.c) */
void lw_split(const ptx_module *m, ptx_span op, parts *P);
int lw_has(const parts *P, const char *q);
int lw_has_prefix(const parts *P, const char *q, const char **out);
int lw_type_of(const char *s, tinfo *t);
int lw_last_type(const parts *P, int k, tinfo *t);
uint64_t lw_wmask(int bits);
pi_ins *lw_emit(lw *L);
pi_ext *lw_ext(lw *L, pi_ins *in, int kind);
const ptx_operand *lw_op(lw *L, const ptx_item *it, int i);
const ptx_operand *lw_el(lw *L, const ptx_operand *o, int i);
int lw_need_ops(lw *L, const ptx_item *it, const char *name, int lo, int hi);
int lw_unsupported(lw *L, const ptx_item *it, const char *why);
int lw_space_of(const parts *P);
int lw_vec_of(const parts *P);
int lw_reg_list(lw *L, const ptx_operand *o, uint32_t *out, int max, int is_dst, int w);

/* the memory and asynchronous forms (lower_mem.c) */
int lw_ldst(lw *L, const ptx_item *it, const parts *P, int is_st);
/* movmatrix, brx.idx, alloca, stacksave, stackrestore (lower_misc.c). */
int lw_misc(lw *L, const ptx_item *it, const parts *P);
int lw_mbarrier(lw *L, const ptx_item *it, const parts *P);
int lw_cp(lw *L, const ptx_item *it, const parts *P);
int lw_fence(lw *L, const ptx_item *it, const parts *P);
int lw_tensormap(lw *L, const ptx_item *it, const parts *P);

/* atom, red (lower_atom.c) */
int lw_atom(lw *L, const ptx_item *it, const parts *P);
/* multimem.ld_reduce / st / red (lower_multimem.c) */
int lw_multimem(lw *L, const ptx_item *it, const parts *P);

/* barriers, warp collectives and wgmma (lower_coll.c) */
int lw_bar(lw *L, const ptx_item *it, const parts *P);
int lw_warp(lw *L, const ptx_item *it, const parts *P);
int lw_wgmma(lw *L, const ptx_item *it, const parts *P);

/* redux.sync, match.sync, activemask (lower_warp.c) */
int lw_warp_more(lw *L, const ptx_item *it, const parts *P);
/* mma.sync (lower_mma.c) */
int lw_mma(lw *L, const ptx_item *it, const parts *P);

/* a form whose row of the table names an operation of the semantics library, matched
   (lower_sem.c): 0 lowered, -1 refused (reported) */
int lw_sem(lw *L, const ptx_item *it, const ptx_match *mt);

/* module .global/.const variables (lower_vars.c): placed in prog's image; 0 or -1 (reported /
   out of memory) */
int lw_vars(lw *L, uint32_t body, uint32_t end);
/* a variable's address as a register's start (PI_INIT_*, value); 0: no such variable */
int lw_var_addr(const lw *L, ptx_span name, int *kind, uint64_t *value);
/* The initialisers that name a variable or a function, once the functions are known: their
   words written (a function's address) or made relocations (a variable's); 0, or -1 (reported) */
int lw_var_inits(lw *L);
/* a float literal (0f.., 0d.., decimal) as the bits of an f32 (w 32) or f64 */
uint64_t lw_float_bits(const ptx_module *m, ptx_span s, int w);

/* functions and calls (lower_call.c): the .entry (hdr, its body's { } items) and each .func it
   reaches into prog->funcs, their runtime's signatures checked; 0 or -1 (reported / oom) */
int lw_funcs(lw *L, uint32_t hdr, uint32_t open, uint32_t close);
/* prog->funcs' index of the function `name`, or PI_NOREG */
static inline uint32_t lw_func_index(const lw *L, ptx_span name)
{
    for (uint32_t f = 0; f < L->p->nfuncs; f++) {
        const char *n = L->p->funcs[f].name;
        if (strlen(n) == name.len && !memcmp(n, L->m->text + name.off, name.len))
            return f;
    }
    return PI_NOREG;
}
/* the function L->fn's parameters as frame variables of its top scope */
int lw_frame_formals(lw *L, int scope);
/* a .local or .param declaration of its body: frame variables */
int lw_frame_decl(lw *L, const ptx_item *it, int scope);
/* after pass 1: the frames' sizes checked, the .entry's frame is prog->local_bytes */
int lw_frames_done(lw *L);
/* call */
int lw_call(lw *L, const ptx_item *it, const parts *P);
/* isspacep, getctarank, createpolicy (lower_space.c). */
int lw_space(lw *L, const ptx_item *it, const parts *P);

/* The halves of a .b128 operand (lower_mem.c): a .b128 register's two registers, or an
 * immediate's (zero-extended) as constants; -1 with the error reported. */
int lw_b128_halves(lw *L, const ptx_operand *o, int is_dst, uint32_t *lo, uint32_t *hi);
/* mov.b128 d, a (lower_b128.c). */
int lw_mov128(lw *L, const ptx_item *it, const ptx_operand *d, const ptx_operand *a);

/* createpolicy.fractional's value (policy.c): the top byte its qualifiers give, and the value of
 * a fraction (f32 bits) in (0, 1], which pi_policy_fraction_valid tells. */
unsigned pi_policy_top(const parts *P);
int pi_policy_fraction_valid(uint32_t f32);
uint64_t pi_policy_fractional(unsigned top, uint32_t f32);

/* the scalar forms (lower_scalar.c) */
int lw_scalar(lw *L, const ptx_item *it, const parts *P);

#endif
