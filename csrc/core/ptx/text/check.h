/* check.h - the instruction matcher shared by the checker and the rules ptxas adds. */
#ifndef PTX_CHECK_H
#define PTX_CHECK_H

#include "ptx/text/ptx.h"
#include "ptx/text/tables.h"
#include "sem/sem.h"

#define PTX_MAX_COMPS 32

typedef struct { const char *p; int n; } ptx_comp;      /* one '.'-separated opcode component */

typedef struct {
    int form;
    int nroot, ncomps;
    int rule;                       /* PTX_RULE_*: which of rules.c's checks the form has */
    int needs_err;                  /* the form's target/version needs fail for this module */
    int ptxas;                      /* the ptxas release the rules follow: 130 (13.0) or 135 (13.5) */
    int score, matched, unknown, operands_bad;
    int bad_line, bad_col;
    int8_t slot_at[PTX_MAX_COMPS];  /* component index that filled each slot, -1 none */
    int16_t slot_val[PTX_MAX_COMPS];
    int8_t op_of[24];               /* instruction operand of each form operand, -1 absent */
    const char *space_of[24];       /* address operands: the state space (operand_space) */
    int8_t space_slot[24];          /* ... and whether the form has a state-space slot */
    char msg[240];                  /* last: a copy of the match before it may stop here */
} ptx_match;

int ptx_split(const char *s, size_t n, ptx_comp *c, int max);
int ptx_has_qualifier(const ptx_match *mt, const char *q);
/* The form of the table an instruction is (out->form), qualifiers and operands matched
 * as ptx_check matches them: 0 found (into out), 1 none. */
int ptx_match_form(const ptx_module *m, const ptx_item *it, ptx_match *out);
/* What the qualifiers of a form matched that way say to the semantics library (semctl.c). */
void ptx_sem_ctl(const ptx_match *mt, sem_ctl *k);
const char *ptx_slot_value(const ptx_match *mt, const char *slot);   /* ".shared::cta" or NULL */
/* The operand of the matched form's operand `name` ("[mbar]", "size"), or NULL if absent. */
const ptx_operand *ptx_operand_named(const ptx_module *m, const ptx_item *it, const ptx_match *mt, const char *name);
int ptx_target_in(const ptx_module *m, const char *list);
/* width class of a register operand: 1 pred, 16/32/64 bits; -2 a variable; -1 undeclared */
int ptx_reg_class(const ptx_module *m, const ptx_operand *o);
/* The labels of the `.branchtargets` table `tlist` names, as seen from item at_item (brx.idx,
   9.7.12.4): how many (names gets the first cap), -1 if tlist is no such table. */
int ptx_branch_targets(const ptx_module *m, ptx_span tlist, uint32_t at_item, ptx_span *names, int cap);
/* The functions of the `.calltargets` list `flist` names, as seen from item at_item (call's flist):
   their count (names holds the first cap), or -1 when flist is no such list's label. */
int ptx_call_targets(const ptx_module *m, ptx_span flist, uint32_t at_item, ptx_span *names, int cap);
/* Function headers' .reg parameters and the .calltargets lists, as ptxas judges them (rules_funcs.c). */
void ptx_check_funcs(const ptx_module *m, ptx_diags *ds);
/* The misc family's rules: fns, brx.idx, movmatrix, alloca, stacksave, stackrestore, setmaxnreg,
   pmevent (rules_misc.c). */
int ptx_rules_misc(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap);
/* Why Kernel() does not run an instruction the checker accepts, or NULL (notyet.c). */
const char *ptx_not_modelled(const ptx_module *m, const ptx_item *it);

enum { PTX_RULE_NONE, PTX_RULE_WAIT, PTX_RULE_ST_ASYNC, PTX_RULE_TENSORMAP_REPLACE, PTX_RULE_FENCE_PROXY,
       PTX_RULE_ST_BULK, PTX_RULE_ARRIVE, PTX_RULE_REDUCE_BULK, PTX_RULE_CP_ASYNC, PTX_RULE_TENSOR,
       PTX_RULE_MEM, PTX_RULE_MMA, PTX_RULE_ATOM, PTX_RULE_CALL, PTX_RULE_MATRIX, PTX_RULE_NOSYNC,
       PTX_RULE_WGMMA, PTX_RULE_VIDEO, PTX_RULE_MISC, PTX_RULE_BULK, PTX_RULE_TC, PTX_RULE_RED_ASYNC,
       PTX_RULE_TEX };
/* which rule a form's root has, and the state space of its address operands (into mt) */
void ptx_rules_prepare(ptx_match *mt);
/* The rules ptxas checks beyond the syntax tables (rules.c): 0 ok, else 1 and why. */
int ptx_rules(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap);
/* The loads', stores', cache hints' and address queries' rules (rules_mem.c). */
int ptx_rules_mem(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap);
/* call's rules: the target, its arity, each argument's type and alignment (rules_call.c). */
int ptx_rules_call(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap);
/* The video instructions' operands (kinds PTX_K_VREG ...: registers, selectors, vmad's -reg) and
   rules (rules_video.c). */
int ptx_video_operand(const ptx_module *m, const ptx_operand *o, int kind, char *why, size_t cap);
int ptx_rules_video(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap);
/* The register widths of a form the semantics library runs (rules_sem.c). */
int ptx_rules_sem(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap);
int ptx_rules_mov(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap);
/* wmma's fragments, tcgen05.ld / .st / .cp's shape rules (rules_tc.c). */
int ptx_rules_tc(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap);
/* texture and surface operand shapes (rules_tex.c) */
int ptx_rules_tex(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap);
/* Advisory warnings ptxas prints for an accepted form (rules.c). */
void ptx_advice(const ptx_module *m, const ptx_item *it, const ptx_match *mt, ptx_diags *ds);

#endif
