/* sem.h - the semantics library: every PTX operation on numbers, exact to the
 * hardware, on arrays of lanes.
 *
 * One small function per operation (SoftFloat's way), named as the ISA names
 * it. The SM90 family's number choices (canonical NaN, min/max with NaN, ftz,
 * .sat / .satfinite / .relu) live in sm90.h and nowhere else. Nothing here
 * knows PTX text or the interpreter: an operation is chosen by sem_resolve from
 * a sem_ctl (operation, types, rounding, flags) and then runs on lanes.
 *
 * Registers are 64-bit slots; a value narrower than its slot sits in the low
 * bits, zero-extended (a predicate is 0 or 1). A function reads lane i of
 * every source before it writes lane i of a destination, so d may be one of
 * the sources.
 */
#ifndef PA_SEM_H
#define PA_SEM_H

#include <stddef.h>
#include <stdint.h>

/* PTX fundamental and packed types. */
typedef enum {
    SEM_T_NONE = 0, SEM_T_PRED,
    SEM_T_B8, SEM_T_B16, SEM_T_B32, SEM_T_B64, SEM_T_B128,
    SEM_T_U8, SEM_T_U16, SEM_T_U32, SEM_T_U64,
    SEM_T_S8, SEM_T_S16, SEM_T_S32, SEM_T_S64,
    SEM_T_F16, SEM_T_F16X2, SEM_T_BF16, SEM_T_BF16X2, SEM_T_TF32, SEM_T_F32, SEM_T_F64,
    SEM_T_E4M3, SEM_T_E5M2, SEM_T_E4M3X2, SEM_T_E5M2X2, SEM_T_E4M3X4, SEM_T_E5M2X4,
    SEM_T_E2M1X2, SEM_T_E2M1X4, SEM_T_E2M3X2, SEM_T_E2M3X4, SEM_T_E3M2X2, SEM_T_E3M2X4,
    SEM_T_UE8M0X2, SEM_T_S2F6X2,
    SEM_T_COUNT
} sem_type;

/* Rounding: floating-point (.rn ...), integer (.rni ...), and none written. */
typedef enum {
    SEM_RND_NONE = 0, SEM_RN, SEM_RZ, SEM_RM, SEM_RP, SEM_RNA, SEM_RS,
    SEM_RNI, SEM_RZI, SEM_RMI, SEM_RPI
} sem_rnd;

/* Qualifier flags. */
enum {
    SEM_F_FTZ = 1u << 0, SEM_F_SAT = 1u << 1, SEM_F_RELU = 1u << 2, SEM_F_SATFINITE = 1u << 3,
    SEM_F_NAN = 1u << 4, SEM_F_XORSIGN = 1u << 5, SEM_F_ABS = 1u << 6, SEM_F_APPROX = 1u << 7,
    SEM_F_FULL = 1u << 8, SEM_F_HI = 1u << 9, SEM_F_LO = 1u << 10, SEM_F_WIDE = 1u << 11,
    SEM_F_CC = 1u << 12, SEM_F_SHIFTAMT = 1u << 13, SEM_F_WRAP = 1u << 14, SEM_F_CLAMP = 1u << 15,
    SEM_F_LEFT = 1u << 16, SEM_F_RIGHT = 1u << 17, SEM_F_PACK = 1u << 18, SEM_F_OOB = 1u << 19,
    SEM_F_PO = 1u << 20,
    /* not a qualifier: the text names one register as sources a and b (ptxas
       folds some such forms: min / max, sm90.h) */
    SEM_F_SAME = 1u << 21,
};

/* The operations (the table's semantics reference names one). */
#define SEM_OPS(X)                                                                           \
    X(ADD, "add") X(SUB, "sub") X(MUL, "mul") X(MAD, "mad") X(FMA, "fma")                    \
    X(DIV, "div") X(REM, "rem") X(RCP, "rcp") X(SQRT, "sqrt") X(RSQRT, "rsqrt")              \
    X(MIN, "min") X(MAX, "max") X(NEG, "neg") X(ABS, "abs") X(COPYSIGN, "copysign")          \
    X(TESTP, "testp") X(SETP, "setp") X(SET, "set") X(SELP, "selp") X(SLCT, "slct")         \
    X(CVT, "cvt") X(CVT_PACK, "cvt.pack")                                                    \
    X(EX2, "ex2") X(LG2, "lg2") X(SIN, "sin") X(COS, "cos") X(TANH, "tanh")                  \
    X(MUL24, "mul24") X(MAD24, "mad24") X(SAD, "sad") X(POPC, "popc") X(CLZ, "clz")          \
    X(BFIND, "bfind") X(BREV, "brev") X(BFE, "bfe") X(BFI, "bfi") X(PRMT, "prmt")            \
    X(SHF, "shf") X(SHL, "shl") X(SHR, "shr") X(LOP3, "lop3") X(AND, "and") X(OR, "or")      \
    X(XOR, "xor") X(NOT, "not") X(CNOT, "cnot") X(DP4A, "dp4a") X(DP2A, "dp2a")             \
    X(ADDC, "addc") X(SUBC, "subc") X(MADC, "madc") X(MOV, "mov")                          \
    X(BMSK, "bmsk") X(SZEXT, "szext") X(FNS, "fns")                                        \
    X(VADD, "vadd") X(VSUB, "vsub") X(VABSDIFF, "vabsdiff") X(VMIN, "vmin") X(VMAX, "vmax") \
    X(VSHL, "vshl") X(VSHR, "vshr") X(VMAD, "vmad") X(VSET, "vset")                          \
    X(VADD2, "vadd2") X(VSUB2, "vsub2") X(VAVRG2, "vavrg2") X(VABSDIFF2, "vabsdiff2")       \
    X(VMIN2, "vmin2") X(VMAX2, "vmax2") X(VSET2, "vset2")                                    \
    X(VADD4, "vadd4") X(VSUB4, "vsub4") X(VAVRG4, "vavrg4") X(VABSDIFF4, "vabsdiff4")       \
    X(VMIN4, "vmin4") X(VMAX4, "vmax4") X(VSET4, "vset4")

typedef enum {
    SEM_OP_NONE = 0,
#define SEM_OP_ENUM(name, text) SEM_OP_##name,
    SEM_OPS(SEM_OP_ENUM)
#undef SEM_OP_ENUM
    SEM_OP_COUNT
} sem_op;

/* Comparisons of setp / set / slct (aux). */
typedef enum {
    SEM_CMP_EQ, SEM_CMP_NE, SEM_CMP_LT, SEM_CMP_LE, SEM_CMP_GT, SEM_CMP_GE,
    SEM_CMP_LO, SEM_CMP_LS, SEM_CMP_HI, SEM_CMP_HS,
    SEM_CMP_EQU, SEM_CMP_NEU, SEM_CMP_LTU, SEM_CMP_LEU, SEM_CMP_GTU, SEM_CMP_GEU,
    SEM_CMP_NUM, SEM_CMP_NAN
} sem_cmp;

/* Boolean combination of setp / set with a predicate (aux2). */
typedef enum { SEM_BOOL_NONE, SEM_BOOL_AND, SEM_BOOL_OR, SEM_BOOL_XOR } sem_bool;

/* What one instruction does: the operation and everything its qualifiers say. */
typedef struct {
    uint8_t op;       /* sem_op */
    uint8_t dt;       /* destination type (sem_type) */
    uint8_t at;       /* source type */
    uint8_t bt;       /* a second source type (dp4a.atype.btype, cvt.pack's b) */
    uint8_t rnd;      /* sem_rnd */
    uint8_t aux;      /* sem_cmp; prmt mode; testp class; shf direction; vmad's scale ... */
    uint8_t aux2;     /* sem_bool; a video instruction's secondary operation (video.h) */
    uint8_t neg;      /* bit j: source j is a negated predicate (!p) */
    uint32_t flags;   /* SEM_F_* */
    uint32_t imm;     /* an immediate the operation takes (lop3's table); a video
                         instruction's selectors (video.h) */
} sem_ctl;

/* One operation on n lanes: d[0] (and d[1], a second destination: setp's q,
 * a carry) from up to four sources s[0..3], lane i at index i of each. */
typedef void (*sem_fn)(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n);

/* What sem_resolve gives: the function and its operands' register widths in
 * bits (1 a predicate, 0 absent), and whether it reads or writes the condition
 * code (cc: SEM_CC_IN, the carry in the source after the written ones;
 * SEM_CC_OUT, the carry out in d[1]): state no operand of the text names. */
typedef struct {
    sem_fn fn;
    uint8_t wd[2];
    uint8_t ws[4];
    uint8_t cc;
} sem_impl;

enum { SEM_CC_IN = 1, SEM_CC_OUT = 2 };

/* Choose the function of k. 0: found; 1: a form the ISA has that is not
 * modelled yet (why says which); -1: no such operation (why says why). */
int sem_resolve(const sem_ctl *k, sem_impl *out, const char **why);

/* Facts of a type: bits of its value and of the register it sits in. */
int sem_type_bits(sem_type t);
int sem_type_reg_bits(sem_type t);
int sem_type_is_float(sem_type t);
int sem_type_is_signed(sem_type t);
/* The PTX name of a type / operation (".f32", "add"), for messages. */
const char *sem_type_name(sem_type t);
const char *sem_op_name(sem_op op);
/* By name (with or without the dot): SEM_T_NONE / SEM_OP_NONE if none. */
sem_type sem_type_from_name(const char *s);
sem_op sem_op_from_name(const char *s);

#endif
