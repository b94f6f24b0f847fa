/* prog.h - a kernel's .entry lowered for the interpreter.
 *
 * lower.c turns the parsed body into an array of small instructions whose
 * operands are all register indices: immediates, special registers (%tid.x,
 * ...), parameter and shared-variable addresses become registers of their own,
 * filled when a thread starts. So the run loop (interp.c) is a switch with no
 * operand decoding. Register 0 always holds 1: an unguarded instruction has
 * guard 0. What touches the model (memory, mbarriers, copies, barriers, warp
 * collectives) is one PI_EXT instruction whose operands sit in an extension
 * record (pi_ext), executed by ops.c / coll.c through the same C operations
 * the Python API calls.
 *
 * Address windows of a launch's generic addresses (cvta): parameters at
 * PI_PARAM_BASE + offset, shared memory at PI_SHARED_BASE + shared address,
 * anything else global.
 */
#ifndef PTX_PROG_H
#define PTX_PROG_H

#include "ptx/text/ptx.h"
#include "engine.h"
#include "sem/sem.h"

#define PI_PARAM_BASE 0x7E00000000000000ull
#define PI_SHARED_BASE 0x7F00000000000000ull
#define PI_WINDOW_SIZE 0x0000000100000000ull
#define PI_LOCAL_BASE 0x7D00000000000000ull   /* a thread's .local window (its own in each thread) */
#define PI_FUNC_BASE 0x7C00000000000000ull    /* a .func's address (mov.u64 %rd, f): base + 16 * (index + 1) */
#define PI_NOREG 0xFFFFFFFFu
/* Register 2: the thread's condition code (the carry flag of add.cc ... madc),
 * which the extended-precision forms read and write and no operand names. */
#define PI_REG_CC 2u

/* What the interpreter holds, bounded so that a kernel's text cannot ask for more than a host
 * has (docs/ptx.md, "Limits"): registers a thread (the declared ones, constants and special
 * registers; ptxas takes up to 2^32 - 1 names in one declaration, compilers write a few
 * thousand), the bytes of a launch's register file (threads x registers x 8), and asynchronous
 * operations pending at once that no thread has waited for. */
#define PI_MAX_REGS (1u << 20)
#define PI_MAX_REG_BYTES (1ull << 30)
#define PI_MAX_PENDING (1u << 15)              /* the default; launch(max_pending=...) */
#define PI_MAX_INSTRUCTIONS (1ull << 30)       /* the default; launch(max_instructions=...) */
/* A thread's calls: how deep they nest, and the bytes of its stack (every active frame's
 * parameters, .local and call-scope .param variables, and the registers a call saves). */
#define PI_MAX_CALL_DEPTH 1024u
#define PI_MAX_STACK_BYTES (1ull << 20)
#define PI_HEAP_BYTES (8ull << 20)             /* malloc's heap: cudaLimitMallocHeapSize's default */

typedef enum {
    PI_NOP = 0,
    PI_MOV,                      /* d = a & mask */
    PI_ADD, PI_SUB, PI_MULLO,    /* wrap to the width (mask) */
    PI_MULHI_S, PI_MULHI_U, PI_MULWIDE_S, PI_MULWIDE_U,
    PI_MADLO, PI_MADHI_S, PI_MADHI_U, PI_MADWIDE_S, PI_MADWIDE_U,
    PI_DIV_S, PI_DIV_U, PI_REM_S, PI_REM_U,
    PI_SHL, PI_SHR_S, PI_SHR_U,
    PI_AND, PI_OR, PI_XOR, PI_NOT, PI_NEG, PI_ABS,
    PI_MIN_S, PI_MIN_U, PI_MAX_S, PI_MAX_U,
    PI_SETP_S, PI_SETP_U,        /* sub: comparison; d (and e = !result) */
    PI_SELP,                     /* d = c ? a : b */
    PI_MOV_PACK,                 /* mov d, {a, b(, c, f)}: sub elements of sw bits, a lowest */
    PI_MOV_UNPACK,               /* mov {d, e(, c, f)}, a: sub sw-bit elements, d lowest */
    PI_MAPA,                     /* mapa.shared::cluster d, a, rank(b) */
    PI_CVTA_TO,                  /* d = a - base(imm), cvta.to.space */
    PI_CVTA_FROM,                /* d = a + base(imm), cvta.space */
    PI_BRA,                      /* pc = target */
    PI_EXIT,                     /* ret / exit */
    PI_EXT,                      /* touches the model: ext[x] */
    PI_SEM,                      /* the semantics library: sems[x] on d, e <- a, b, c, f */
    PI_CALL,                     /* calls[x] (call.c) */
    PI_RET,                      /* ret in a .func: back to the caller */
    PI_OPCOUNT
} pi_opcode;

enum { PI_CMP_EQ, PI_CMP_NE, PI_CMP_LT, PI_CMP_LE, PI_CMP_GT, PI_CMP_GE };

typedef struct {
    uint8_t op;                  /* pi_opcode */
    uint8_t w;                   /* operation width in bits (16, 32, 64; 1 for .pred) */
    uint8_t sw;                  /* cvt: source width */
    uint8_t sub;                 /* setp: comparison */
    uint8_t pneg;                /* the guard is @!p */
    uint8_t pad[3];
    uint32_t guard;              /* predicate register (0: always, and pneg is 0) */
    uint32_t d, e, a, b, c;      /* registers */
    uint32_t f;                  /* PI_SEM: a fourth source */
    uint32_t x;                  /* branch target / ext index */
    uint32_t item;               /* the module item (its line) */
    uint64_t mask;               /* result mask of the width */
    uint64_t imm;                /* cvta: window base */
} pi_ins;

/* What a PI_EXT instruction does. */
typedef enum {
    PX_LD, PX_ST,
    PX_MBAR_INIT, PX_MBAR_INVAL, PX_MBAR_ARRIVE, PX_MBAR_TX, PX_MBAR_WAIT, PX_MBAR_PENDING,
    PX_TENSOR_LOAD, PX_TENSOR_STORE, PX_TENSOR_PREFETCH,
    PX_BULK_COPY, PX_BULK_REDUCE, PX_BULK_PREFETCH, PX_BULK_COMMIT, PX_BULK_WAIT,
    PX_CP_ASYNC, PX_CP_COMMIT, PX_CP_WAIT, PX_CP_WAIT_ALL, PX_CP_MBAR_ARRIVE,
    PX_ST_ASYNC, PX_ST_ASYNC_RELEASE, PX_ST_BULK,
    PX_RED_ASYNC,                /* red.async: s0 the value, sub the pa_redop, sub2 the pa_ekind */
    PX_FENCE_PROXY_ASYNC, PX_FENCE_TENSORMAP, PX_FENCE_MBAR_INIT, PX_FENCE,
    PX_TENSORMAP_REPLACE,
    PX_ATOM,                     /* atom, red (atom.c) */
    PX_MULTIMEM,                 /* multimem.ld_reduce / st / red (multimem.c) */
    /* collectives (coll.c): the threads meet, then it runs for all */
    PX_BAR_SYNC, PX_BAR_ARRIVE,
    PX_BAR_RED,                  /* bar.red: sub 0 popc, 1 and, 2 or of predicate s2 (flags 1: negated) into d */
    PX_CLUSTER_ARRIVE, PX_CLUSTER_WAIT,
    PX_ELECT, PX_SHFL, PX_VOTE, PX_WARP_SYNC,
    PX_REDUX, PX_MATCH,          /* coll_warp.c */
    PX_MMA,                      /* mma.sync (mma_exec.c) */
    PX_LDMATRIX, PX_MOVMATRIX, PX_STMATRIX,   /* movmatrix: the warp's 8x8 b16 transpose */
    PX_WGMMA_FENCE, PX_WGMMA_COMMIT, PX_WGMMA_WAIT, PX_WGMMA_MMA,
    PX_ACTIVEMASK,               /* no meeting: the lanes with the thread (coll_warp.c) */
    PX_TENSORMAP_CP,             /* tensormap.cp_fenceproxy: the warp meets; copy, then a release fence */
    PX_TRAP,                     /* trap (sub 0), brkpt (sub 1): the launch stops naming the line */
    PX_ISSPACEP, PX_GETCTARANK,  /* which window a generic address is in; a shared address's CTA (space.c) */
    PX_STACK,                    /* alloca (sub 0), stacksave (1), stackrestore (2) on the thread's stack (stack.c) */
    PX_DISCARD,                  /* discard.global.L2 [a0], 128 (check/discard.c) */
    PX_MOV128,                   /* mov.b128: sub 64- or 32-bit source pieces in s0.., n destinations in regs[] */
    PX_POLICY,                   /* createpolicy.fractional, the fraction in register s0; sub: the top byte */
    PX_BRX,                      /* brx.idx: to the index-th of vregs[vbase ..] (vcount), each lane on its own */
    PX_TIMER,                    /* mov d, %globaltimer (sub 0), _lo (1), _hi (2), %clock (3), %clock64 (4) */
    PX_COUNT
} pi_extkind;

/* An address operand [base + off]: base register (PI_NOREG: none). */
typedef struct {
    uint32_t base;
    int64_t off;
} pi_addr;

enum { PI_SP_GENERIC = 0, PI_SP_SHARED, PI_SP_SHARED_CLUSTER, PI_SP_GLOBAL, PI_SP_PARAM, PI_SP_LOCAL, PI_SP_CONST };

typedef struct {
    uint8_t kind;                /* pi_extkind */
    uint8_t space;               /* PI_SP_* of a memory operand */
    uint8_t flags;               /* kind-specific */
    uint8_t n;                   /* vector length / coordinates / registers */
    uint8_t size;                /* element bytes */
    uint8_t sext;                /* ld: sign-extend */
    uint8_t mode;                /* tensor: pa_load_mode */
    uint8_t ninfo;               /* tensor: im2col offsets / info operands */
    int8_t sub;                  /* redop, fence kind, cta_group, ... */
    int8_t sub2;
    uint16_t pad;
    pi_addr a0, a1, a2;          /* address operands (dst, src / map, mbar) */
    uint32_t d;                  /* destination register (PI_NOREG: sink) */
    uint32_t s0, s1, s2, s3;     /* scalar operand registers (PI_NOREG: absent) */
    uint32_t regs[5];            /* vector operand / coordinates */
    uint32_t info[3];            /* im2col offsets / info */
    uint32_t vbase, vcount;      /* long register lists (wgmma accumulators): prog->vregs */
} pi_ext;

/* How a register starts (registers past the declared ones). */
enum { PI_INIT_ZERO = 0, PI_INIT_CONST, PI_INIT_SPECIAL, PI_INIT_SHARED_SYM,
       PI_INIT_GVAR };              /* a module variable: the launch's gvar_base + value */

enum {
    PI_SR_TID_X, PI_SR_TID_Y, PI_SR_TID_Z, PI_SR_NTID_X, PI_SR_NTID_Y, PI_SR_NTID_Z,
    PI_SR_CTAID_X, PI_SR_CTAID_Y, PI_SR_CTAID_Z, PI_SR_NCTAID_X, PI_SR_NCTAID_Y, PI_SR_NCTAID_Z,
    PI_SR_LANEID, PI_SR_WARPID, PI_SR_NWARPID,
    PI_SR_CLUSTER_CTARANK, PI_SR_CLUSTER_NCTARANK,
    PI_SR_CLUSTER_CTAID_X, PI_SR_CLUSTER_CTAID_Y, PI_SR_CLUSTER_CTAID_Z,
    PI_SR_CLUSTER_NCTAID_X, PI_SR_CLUSTER_NCTAID_Y, PI_SR_CLUSTER_NCTAID_Z,
    PI_SR_CLUSTERID_X, PI_SR_CLUSTERID_Y, PI_SR_CLUSTERID_Z,
    PI_SR_NCLUSTERID_X, PI_SR_NCLUSTERID_Y, PI_SR_NCLUSTERID_Z,
    PI_SR_IS_EXPLICIT_CLUSTER, PI_SR_LANEMASK_EQ, PI_SR_LANEMASK_LT, PI_SR_LANEMASK_LE,
    PI_SR_LANEMASK_GT, PI_SR_LANEMASK_GE, PI_SR_SMID, PI_SR_GRIDID, PI_SR_DYNAMIC_SMEM,
    PI_SR_COUNT
};

typedef struct {
    uint8_t kind;                /* PI_INIT_* */
    uint64_t value;              /* constant / special register / shared offset */
} pi_init;

typedef struct {
    char *name;                  /* (names are the module's, whole: mangled C++ names run long) */
    uint32_t offset, size, align;
    int array;                   /* .b8 name[N] */
} pi_param;

/* A module .global / .const variable or a .local one: where it is. */
typedef struct {
    char *name;
    char space;                  /* 'g', 'c' (offsets in gimage), 'l' (a local address) */
    uint64_t offset, bytes;
} pi_var;

/* A word of the module image that holds a module variable's address (an initialiser that names
   the variable, PTX ISA 5.4.4): the image holds the variable's image offset (+ the initialiser's
   offset); the loaded image holds that plus the image's global address (pi_image_at). */
typedef struct {
    uint64_t at;                 /* its image offset */
    uint8_t size;                /* 4 or 8 bytes (4: the address's low 32 bits) */
} pi_reloc;

/* The device runtime's functions a module declares `.extern` and calls (devrt.c). */
enum { PI_BI_NONE = 0, PI_BI_VPRINTF, PI_BI_ASSERTFAIL, PI_BI_MALLOC, PI_BI_FREE };

/* A register that holds a frame variable's address, set when the frame starts: the frame's
 * base + off, a local address (.local variables), or generic (+ PI_LOCAL_BASE: .param ones).
 * A .reg parameter (value 1) or .reg return value (value 2) is instead the register itself: the
 * size bytes at base + off (its slot, where the caller put the argument) when the frame starts;
 * a return value's register goes back to its slot at ret. */
typedef struct {
    uint32_t reg;
    uint8_t generic;
    uint8_t value;
    uint64_t off, size;
} pi_fsym;

/* A parameter (or return parameter) of a function: its place in the frame. */
typedef struct {
    uint64_t off, size;
} pi_slot;

/* A function of the program: the .entry (index 0) and each .func it can reach. */
typedef struct {
    char *name;
    int builtin;                 /* PI_BI_*: no body, the runtime runs it */
    uint32_t pc;                 /* its first instruction */
    uint32_t reg0, nregs;        /* its own registers: a call saves them (recursion) */
    uint64_t frame_bytes;        /* its frame: parameters, return parameters, .local, call-scope .param */
    uint32_t frame_align;
    uint32_t fsym0, nfsym;       /* prog->fsyms */
    uint32_t param0, nparam;     /* prog->slots: the parameters, then */
    uint32_t ret0, nret;         /* the return parameters */
    int line;
} pi_func;

/* An entry of a call's lists: a .param variable (reg holds its address; size bytes copied) or a
 * register / immediate (reg holds the value). */
typedef struct {
    uint32_t reg;
    uint32_t hi;                 /* a 16-byte value: the register of its high half */
    uint8_t is_addr;
    uint64_t size;
} pi_carg;

typedef struct {
    uint32_t callee;             /* funcs index; PI_NOREG: the address in register `target` */
    uint32_t target;
    uint32_t tgt0, ntgt;         /* a .calltargets list: prog->ctargets (funcs indices); ntgt 0: none */
    uint32_t arg0, narg;         /* prog->cargs */
    uint32_t ret0, nret;
} pi_call;

/* A PI_SEM instruction's operation: the function and what its qualifiers say. */
typedef struct {
    sem_fn fn;
    sem_ctl ctl;
} pi_sem;

typedef struct {
    pi_ins *ins;
    uint32_t nins;
    pi_ext *ext;
    uint32_t next;
    uint32_t *vregs;
    uint32_t nvregs;
    pi_sem *sems;
    uint32_t nsems;
    uint32_t nregs;              /* registers per thread */
    uint32_t first_init;         /* registers [first_init, nregs) start as init[] says */
    pi_init *init;
    pi_param *params;
    uint32_t nparams, param_bytes;
    uint32_t static_smem;        /* bytes of .shared variables; dynamic shared memory follows */
    uint32_t dyn_smem;           /* offset of .extern .shared arrays */
    uint32_t reg_decl_regs;      /* the largest .reg declaration: its registers */
    int reg_decl_line;           /* ... and its line */
    uint32_t reqntid[3];         /* .reqntid / .maxntid (0: none) */
    uint8_t *gimage;             /* module .const then .global variables, initialised (lower_vars.c) */
    uint64_t gvar_bytes;         /* its bytes (0: the module has none) */
    uint64_t const_bytes;        /* its first bytes: the .const variables (read-only) */
    pi_reloc *relocs;            /* its words that hold a variable's address */
    uint32_t nrelocs;
    uint64_t local_bytes;        /* the .entry's frame: its .local and call-scope .param variables */
    pi_var *vars;
    uint32_t nvars;
    int has_reqntid;
    pi_func *funcs;              /* [0]: the .entry */
    uint32_t nfuncs;
    pi_fsym *fsyms;
    uint32_t nfsyms;
    pi_slot *slots;
    uint32_t nslots;
    pi_call *calls;
    uint32_t ncalls;
    pi_carg *cargs;
    uint32_t ncargs;
    uint32_t *ctargets;          /* the functions of calls' .calltargets lists (PI_NOREG: not reached) */
    uint32_t nctargets;
    int uses_heap;               /* calls malloc / free: the launch needs a heap */
    const ptx_module *mod;       /* for lines and texts */
    char *entry;
} pi_prog;

/* Lower entry `entry` (NULL: the only .entry) of a checked module. Errors
 * (an instruction the interpreter does not run, a name it cannot resolve) go
 * to diags with line and column. Returns 0, or -1 out of memory. */
int pi_lower(pi_prog *p, const ptx_module *m, const char *entry, ptx_diags *diags);
void pi_prog_free(pi_prog *p);
/* The module image as loaded at global address base (gvar_bytes into out): the variables'
   addresses it holds made absolute (lower_vars.c) */
void pi_image_at(const pi_prog *p, uint64_t base, uint8_t *out);

/* Source line of instruction i. */
static inline int pi_line(const pi_prog *p, uint32_t i)
{
    return i < p->nins ? p->mod->items[p->ins[i].item].line : 0;
}

#endif
