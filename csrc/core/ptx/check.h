/* check.h - the instruction matcher shared by the checker and the rules ptxas adds. */
#ifndef PTX_CHECK_H
#define PTX_CHECK_H

#include "ptx/ptx.h"
#include "ptx/tables.h"

#define PTX_MAX_COMPS 32

typedef struct { const char *p; int n; } ptx_comp;      /* one '.'-separated opcode component */

typedef struct {
    int form;
    int nroot, ncomps;
    int slot_at[PTX_MAX_COMPS];     /* component index that filled each slot, -1 none */
    int slot_val[PTX_MAX_COMPS];
    int op_of[24];                  /* instruction operand of each form operand, -1 absent */
    int score, matched, unknown, operands_bad;
    int bad_line, bad_col;
    char msg[240];
} ptx_match;

int ptx_split(const char *s, size_t n, ptx_comp *c, int max);
int ptx_is_opcode(const char *p, int n);     /* a PTX ISA instruction name */
int ptx_has_qualifier(const ptx_match *mt, const char *q);
const char *ptx_slot_value(const ptx_match *mt, const char *slot);   /* ".shared::cta" or NULL */
int ptx_target_in(const ptx_module *m, const char *list);
/* width class of a register operand: 1 pred, 16/32/64 bits; -2 a variable; -1 undeclared */
int ptx_reg_class(const ptx_module *m, const ptx_operand *o);

/* The rules ptxas checks beyond the syntax tables (rules.c): 0 ok, else 1 and why. */
int ptx_rules(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap);
/* Advisory warnings ptxas prints for an accepted form (rules.c). */
void ptx_advice(const ptx_module *m, const ptx_item *it, const ptx_match *mt, ptx_diags *ds);

#endif
