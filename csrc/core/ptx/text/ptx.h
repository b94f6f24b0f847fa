/* ptx.h - PTX text in: lexer, parser, validation as ptxas does it, printer. */
#ifndef PTX_PTX_H
#define PTX_PTX_H

#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t off, len; } ptx_span;        /* a piece of the module text */

enum { PTX_TK_EOF, PTX_TK_IDENT, PTX_TK_DOT, PTX_TK_INT, PTX_TK_FLOAT, PTX_TK_STRING, PTX_TK_PUNCT,
       PTX_TK_BAD };

typedef struct {
    uint8_t kind;
    uint8_t joined;      /* no white space before it */
    ptx_span s;
    int line, col;
} ptx_token;

enum { PTX_OP_REG, PTX_OP_IMM, PTX_OP_FIMM, PTX_OP_SYM, PTX_OP_SINK, PTX_OP_ADDR, PTX_OP_VEC,
       PTX_OP_LIST };       /* ( a, b ): call's return and argument lists */

typedef struct {
    int64_t imm;          /* immediate, or the address offset */
    uint8_t kind;
    uint8_t neg;          /* 1: !%p; 2: -%r (vmad's negated operands) */
    uint8_t nelem;        /* vector elements, or tensor coordinates of [map, {..}] */
    uint8_t has_base;     /* address: a register or symbol base (3: written `var[imm]`) */
    uint8_t sampler;      /* [tex, smp, {..}]: elems[elem - 1] is smp, the texture's sampler */
    ptx_span name;        /* register / symbol / address base */
    uint32_t elem;        /* first element in ptx_module.elems */
    uint32_t sel;         /* a video selector joined to a register (%r1.b0, %r2.h10, %r3.b3210):
                             PTX_SEL_ON | 'h' ? PTX_SEL_H : 0 | digits << 16 | the digits as
                             written, one a nibble, the last in the low one (.b3210 = 0x3210);
                             0 none */
    int line, col;
} ptx_operand;

enum { PTX_SEL_ON = 1u << 31, PTX_SEL_H = 1u << 30 };
static inline int ptx_sel_digits(uint32_t sel) { return (int)(sel >> 16) & 0xF; }
static inline int ptx_sel_digit(uint32_t sel, int lane) { return (int)(sel >> (4 * lane)) & 0xF; }

enum { PTX_ITEM_DIRECTIVE, PTX_ITEM_LABEL, PTX_ITEM_INSTR, PTX_ITEM_OPEN, PTX_ITEM_CLOSE };

typedef struct {
    uint8_t kind;
    uint8_t has_pred, pred_neg;
    uint8_t nops;
    int line, col;
    ptx_span pred;         /* @%p */
    ptx_span opcode;       /* cp.async.bulk.tensor.1d.... (instr) / label name */
    uint32_t op0;          /* first operand in ptx_module.ops */
    uint32_t tok0, ntok;   /* directives: the tokens, printed as they are */
} ptx_item;

typedef struct {
    uint8_t cls;           /* 1 pred, 16, 32, 64, 128 bits; 0 a variable/param/function/label */
    ptx_span name;
    uint32_t range;        /* %r<16>: 16 names %r0..%r15; 0 a single name */
    char space;            /* variables: 's' shared, 'g' global, 'p' param, 'c' const, 'l' local */
    char kind;             /* registers: 'f' a floating-point type (.f16 .. .f64), 'x' .f16x2, 's'
                              signed, 'u' unsigned, 'b' bits (.b8 .. .b128, .pred); variables:
                              'T' .texref, 'S' .samplerref, 'U' .surfref, else 'b' */
    uint8_t ebytes;        /* variables: bytes of an element (0: no type given) */
    uint8_t array;         /* variables: declared with [ ] */
    uint64_t count;        /* variables: elements (the product of the [N]s; 1 a scalar; an
                              unsized [] has its initialiser's count, else 0) */
    uint32_t align;        /* variables: .align N (0: none given; at most 2^31) */
    uint32_t item;         /* variables: the declaration's item */
    int line, col;
} ptx_symbol;

/* A variable's initialiser (`.global .b32 t[4] = {1, 2, 3, 4};`, `.const .f32 c = 1.5;`): its
   values in ptx_module.ivals, each at its element index in the flattened array (elements not
   named are zero). A value is an integer, a float literal, or a variable's or function's address
   (PTX_OP_SYM with an offset in imm; generic(name) sets `generic`). */
typedef struct {
    uint64_t index;
    ptx_operand v;
    uint8_t generic;
} ptx_ival;

typedef struct {
    uint32_t sym;          /* the variable: index into ptx_module.syms */
    uint32_t item;         /* its declaration */
    uint32_t val0, nval;   /* its values: ivals[val0 .. val0 + nval) */
    uint8_t braced;        /* the values are in { } */
} ptx_init;

typedef struct {
    const char *text;
    size_t len;
    ptx_token *toks; uint32_t ntoks, cap_toks;
    ptx_item *items; uint32_t nitems, cap_items;
    ptx_operand *ops; uint32_t nops, cap_ops;
    ptx_operand *elems; uint32_t nelems, cap_elems;
    ptx_symbol *syms; uint32_t nsyms, cap_syms;
    /* names -> symbols: open addressing over (name, has a range), each slot the index + 1 of the
       latest symbol of that key; symprev[i] the index + 1 of the one before it, 0 none */
    uint32_t *symhash, symhash_cap, symhash_n;
    uint32_t *symprev;
    ptx_init *inits; uint32_t ninits, cap_inits;
    ptx_ival *ivals; uint32_t nivals, cap_ivals;
    int version;           /* 90 for .version 9.0; 0 if absent */
    int sm;                /* 90 for sm_90a */
    char suffix;           /* 'a', 'f' or 0 */
    char target[16];
} ptx_module;

typedef struct {
    int error;             /* 1 error, 0 warning */
    int line, col;
    char msg[240];
} ptx_diag;

typedef struct {
    ptx_diag *d;
    int n, cap;
    int nerrors;
} ptx_diags;

/* Parse `text` (len bytes; need not be NUL-terminated). Syntax errors go to `diags`.
   Returns 0, or -1 when out of memory. */
int ptx_parse(ptx_module *m, const char *text, size_t len, ptx_diags *diags);
void ptx_module_free(ptx_module *m);

/* Validate a parsed module as ptxas does for its .target and .version: ptx_check_as as the ptxas
   release `ptxas` (130 for 13.0, 135 for 13.5: the header and two rules differ) does,
   ptx_check as the newest of them. */
#define PTX_PTXAS_NEWEST 135
void ptx_check(const ptx_module *m, ptx_diags *diags);
void ptx_check_as(const ptx_module *m, int ptxas, ptx_diags *diags);

/* Canonical PTX text of the module; malloc'd, NUL-terminated; *outlen its length. NULL if OOM. */
char *ptx_print(const ptx_module *m, size_t *outlen);

void ptx_diag_add(ptx_diags *ds, int error, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void ptx_diags_free(ptx_diags *ds);

/* helpers shared by the checker and the printer */
static inline int ptx_span_eq(const ptx_module *m, ptx_span s, const char *lit)
{
    size_t n = 0;
    while (lit[n]) n++;
    if (n != s.len) return 0;
    for (size_t i = 0; i < n; i++)
        if (m->text[s.off + i] != lit[i]) return 0;
    return 1;
}
const ptx_symbol *ptx_lookup(const ptx_module *m, const char *name, size_t len);
/* The symbol `name` names at item `item`: the latest declared before it whose { } block is
   still open there (call scopes declare `param0` again and again), else ptx_lookup's. */
const ptx_symbol *ptx_lookup_at(const ptx_module *m, const char *name, size_t len, uint32_t item);

/* Limits ptxas 13.0 holds an .entry to, for the module's .target and .version (check.c; the
   lowering places variables within them). */
uint64_t ptx_max_param_bytes(const ptx_module *m);      /* its parameter space */
uint64_t ptx_max_shared_bytes(const ptx_module *m);     /* its static .shared data */
/* Bytes of a variable (elements times element size), UINT64_MAX when that does not fit. */
uint64_t ptx_var_bytes(const ptx_symbol *s);

#endif
