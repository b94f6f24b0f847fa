/* tables.h - the instruction forms generated from the PTX ISA syntax blocks (tools/ptx_tables.py). */
#ifndef PTX_TABLES_H
#define PTX_TABLES_H

/* one qualifier slot of a template: `.dst`, `{.level::cache_hint}`, `.add` */
typedef struct {
    const char *name;
    const char *const *values;   /* ".shared::cluster", ".async.global" (may span components) */
    int nvalues;
    int optional;
    int group;                   /* optional slots written together, `{.sem.scope}`, share it */
} ptx_slot;

/* one operand of a template, kind: A address, T [tensorMap, coords], V vector, S32 32-bit
   register or immediate, R64 / R16 register of that width, P predicate or immediate,
   PD predicate destination, R64_ 64-bit register or sink, _ sink, I immediate, I0 the
   immediate 0, D destination register, S any source, L label, DP register or predicate,
   LIST call's ( ) list, FN a call target (a function or a register), PROTO a .callprototype
   label or a table of targets, TS [texture, sampler, {coordinates}]; the video instructions' (9.7.18): VREG a 32-bit register, VSEL a
   32-bit register with a byte / half-word selector (.b0-.b3 .h0 .h1) or an immediate, VNSEL the same
   or -reg (vmad), VNC a 32-bit register, -reg or an immediate (vmad's c), VDSEL a 32-bit register
   with an optional selector (the merge's destination), VSEL2 / VSEL4 a register with an
   optional .hxy / .bxyzw, VMASK2 / VMASK4 one with an optional mask (.h10 / .b3210) */
enum { PTX_K_A, PTX_K_T, PTX_K_V, PTX_K_S32, PTX_K_S3264, PTX_K_R64, PTX_K_R16, PTX_K_R64_,
       PTX_K_SINK, PTX_K_P, PTX_K_PR, PTX_K_PD, PTX_K_I, PTX_K_I0, PTX_K_D, PTX_K_DP, PTX_K_L, PTX_K_S,
       PTX_K_ANY, PTX_K_LIST, PTX_K_FN, PTX_K_PROTO, PTX_K_TS,
       PTX_K_VREG, PTX_K_VSEL, PTX_K_VNSEL, PTX_K_VNC, PTX_K_VDSEL, PTX_K_VSEL2, PTX_K_VSEL4, PTX_K_VMASK2,
       PTX_K_VMASK4 };

typedef struct {
    const char *name;
    int kind;                    /* PTX_K_* */
    int optional;
    const char *qualifier;       /* the optional operand is present iff this qualifier is */
} ptx_operand_spec;

/* a qualifier's own requirement (PTX version, sm, or a list of architectures) */
typedef struct {
    const char *qualifier;
    int version;                 /* 86 = PTX ISA 8.6; 0 none */
    int sm;                      /* 100 = sm_100 or higher; 0 none */
    const char *context;         /* "dst": only as the destination state space */
    const char *arch;            /* "sm_100a sm_110a sm_100f+": only these; "" none */
} ptx_qual_req;

/* Which part of the execution side lowers a form (ptx/exec/lower.c dispatches on it):
   SEM a call of the semantics library (the row's sem), the others a lowering of their own;
   NONE: none yet (the form is on the not-yet list, text/notyet.c). */
enum { PTX_LOWER_NONE, PTX_LOWER_SEM, PTX_LOWER_SCALAR, PTX_LOWER_LDST, PTX_LOWER_ST_ASYNC, PTX_LOWER_ST_BULK,
       PTX_LOWER_MBARRIER, PTX_LOWER_CP, PTX_LOWER_FENCE, PTX_LOWER_TENSORMAP, PTX_LOWER_BAR, PTX_LOWER_WARP,
       PTX_LOWER_WARP_MORE, PTX_LOWER_WGMMA, PTX_LOWER_MMA, PTX_LOWER_ATOM, PTX_LOWER_CALL, PTX_LOWER_SPACE,
       PTX_LOWER_MISC, PTX_LOWER_MULTIMEM, PTX_LOWER_COUNT };

typedef struct {
    const char *root;            /* "cp.async.bulk.tensor" */
    const char *syntax;          /* the template as the spec writes it */
    const ptx_slot *slots;
    int nslots;
    const ptx_operand_spec *operands;
    int noperands;
    const ptx_qual_req *reqs;
    int nreqs;
    int version;                 /* PTX ISA version that introduced the form (x10) */
    int sm;                      /* sm_NN or higher */
    const char *arch;            /* architecture list, "" when any sm >= .sm */
    const char *sem;             /* the operation of the semantics library that runs it ("add",
                                    "cvt", ...), "" where the execution side lowers it by hand */
    int lower;                   /* which lowering runs it (PTX_LOWER_*) */
} ptx_form;

extern const ptx_form ptx_forms[];
extern const int ptx_nforms;

#endif
