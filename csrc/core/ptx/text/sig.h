/* sig.h - a function's signature as its header (or a .callprototype) declares it: the
 * return parameters and the parameters, each with its size and alignment. The checker's
 * call rule (rules_call.c) and the lowering of calls (exec/lower_call.c) read the same one. */
#ifndef PTX_SIG_H
#define PTX_SIG_H

#include "ptx/text/ptx.h"

#define PTX_SIG_MAX 255            /* parameters (or return parameters) a signature holds */

typedef struct {
    ptx_span name;                 /* "_" in a prototype */
    uint64_t size;                 /* bytes: element size times count */
    uint32_t align;                /* .align N, else the element size */
    uint8_t ebytes;                /* bytes of an element (a .pred: 1) */
    uint8_t array;                 /* declared with [N] */
    uint8_t is_reg;                /* a .reg parameter (the ABI before .param) */
    uint8_t kind;                  /* 'f' float, 's' signed, 'u' unsigned, 'b' bits */
    uint8_t vec;                   /* declared .v2 / .v4: its count, else 0 */
    uint8_t pred;                  /* a .pred */
} ptx_fparam;

enum { PTX_SIG_FUNC = 1, PTX_SIG_ENTRY, PTX_SIG_PROTO };

typedef struct {
    int kind;                      /* PTX_SIG_* */
    ptx_span name;                 /* the function's (a prototype's: its label's) */
    uint8_t is_extern, is_weak, is_visible;
    int has_body;
    uint32_t header;               /* the header item (the .callprototype's item) */
    uint32_t open, close;          /* the body's { and } items (has_body) */
    int nret, nparam;
    ptx_fparam ret[4];             /* PTX functions return at most a few values */
    ptx_fparam *param;             /* nparam of them: caller's storage of PTX_SIG_MAX */
    int too_many;                  /* more than the arrays hold */
    int line, col;
} ptx_sig;

/* The signature of the function or prototype that symbol `name` names (sig->param points at
   `params`, room for PTX_SIG_MAX): 0, or -1 when the name is no function and no prototype
   label (*kind_out: 0 unknown, 1 another kind of symbol). */
int ptx_sig_of(const ptx_module *m, ptx_span name, ptx_sig *sig, ptx_fparam *params, int *kind_out);
/* The same from a function's header item or a .callprototype item. */
int ptx_sig_at(const ptx_module *m, uint32_t item, ptx_sig *sig, ptx_fparam *params);

#endif
