/* alu.h - the register-only instructions (interp.c's thread loop, lanes.c's
 * warp rows), each written once.
 *
 * Registers are 64-bit slots; an operation of width w computes on its
 * operands' low w bits and writes its result zero-extended (a .s32 result
 * is kept as 32 bits, as the register holds it). Integer arithmetic wraps;
 * shifts past the width give 0 (or the sign); division by zero gives all
 * ones rather than trapping, and so does remainder by zero (the ISA leaves
 * both unspecified; an H200 gives all ones, golden/isa div/rem).
 */
#ifndef PTX_ALU_H
#define PTX_ALU_H

#include "ptx/exec/prog.h"

static inline int64_t sx(uint64_t v, unsigned w)
{
    return w >= 64 ? (int64_t)v : (int64_t)(v << (64 - w)) >> (64 - w);
}

static inline int cmp_i(int64_t a, int64_t b, int c)
{
    switch (c) {
    case PI_CMP_EQ: return a == b;
    case PI_CMP_NE: return a != b;
    case PI_CMP_LT: return a < b;
    case PI_CMP_LE: return a <= b;
    case PI_CMP_GT: return a > b;
    default: return a >= b;
    }
}

static inline int cmp_u(uint64_t a, uint64_t b, int c)
{
    switch (c) {
    case PI_CMP_EQ: return a == b;
    case PI_CMP_NE: return a != b;
    case PI_CMP_LT: return a < b;
    case PI_CMP_LE: return a <= b;
    case PI_CMP_GT: return a > b;
    default: return a >= b;
    }
}

/* The low 64 bits of a * b where only the low w bits count: for w <= 32 the
 * product of the low halves (what one 32 x 32 -> 64 multiply gives, also a
 * vector's), else the whole 64-bit product. */
#define LOW_PRODUCT(a, b, w) ((w) <= 32 ? (uint64_t)((uint32_t)(a) * (uint32_t)(b)) : (a) * (b))

/* The instructions that only touch the thread's registers, each written once:
 * X(NAME, statement) computes instruction `in` with the operands a = REG(in->a),
 * b = REG(in->b), the mask m and the width w already read, where the expanding
 * code defines REG(k) as one lane's register k (an lvalue). The thread's run
 * loop (interp.c, threaded dispatch) and a converged warp's (lanes.c, one pass
 * over the lanes' rows per instruction) both expand it. */
#define PI_ALU_OPS(X)                                                                                   \
    X(NOP, (void)0)                                                                                     \
    X(MOV, REG(in->d) = a & m)                                                                          \
    X(ADD, REG(in->d) = (a + b) & m)                                                                    \
    X(SUB, REG(in->d) = (a - b) & m)                                                                    \
    X(MULLO, REG(in->d) = LOW_PRODUCT(a, b, w) & m)                                                     \
    X(MULHI_S, REG(in->d) = w == 64 ? (uint64_t)(int64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64) \
                                  : (uint64_t)((sx(a, w) * sx(b, w)) >> w) & m)                         \
    X(MULHI_U, REG(in->d) = w == 64 ? (uint64_t)(((unsigned __int128)a * b) >> 64) : (((a & m) * (b & m)) >> w) & m) \
    X(MULWIDE_S, REG(in->d) = (uint64_t)(sx(a, w) * sx(b, w)) & m)                                      \
    X(MULWIDE_U, REG(in->d) = ((a & ((1ull << w) - 1)) * (b & ((1ull << w) - 1))) & m)                  \
    X(MADLO, REG(in->d) = (LOW_PRODUCT(a, b, w) + REG(in->c)) & m)                                      \
    X(MADHI_S, REG(in->d) = ((w == 64 ? (uint64_t)(int64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64) \
                                    : (uint64_t)((sx(a, w) * sx(b, w)) >> w)) + REG(in->c)) & m)        \
    X(MADHI_U, REG(in->d) = ((w == 64 ? (uint64_t)(((unsigned __int128)a * b) >> 64) : ((a & m) * (b & m)) >> w) + \
                           REG(in->c)) & m)                                                             \
    X(MADWIDE_S, REG(in->d) = ((uint64_t)(sx(a, w) * sx(b, w)) + REG(in->c)) & m)                       \
    X(MADWIDE_U, REG(in->d) = ((a & ((1ull << w) - 1)) * (b & ((1ull << w) - 1)) + REG(in->c)) & m)     \
    X(DIV_U, REG(in->d) = (b & m) ? ((a & m) / (b & m)) & m : m)   /* by zero: all ones (H200) */       \
    X(REM_U, REG(in->d) = (b & m) ? ((a & m) % (b & m)) & m : m)                                        \
    X(DIV_S, {                                                                                          \
        int64_t x = sx(a, w), y = sx(b, w);                                                             \
        REG(in->d) = !y ? m : (y == -1 ? (uint64_t)(0 - (uint64_t)x) & m : (uint64_t)(x / y) & m);      \
    })                                                                                                  \
    X(REM_S, {                                                                                          \
        int64_t x = sx(a, w), y = sx(b, w);                                                             \
        REG(in->d) = !y ? m : (y == -1 ? 0 : (uint64_t)(x % y) & m);                                    \
    })                                                                                                  \
    X(SHL, REG(in->d) = (b & 0xFFFFFFFFu) >= w ? 0 : (a << (b & 63)) & m)                               \
    X(SHR_U, REG(in->d) = (b & 0xFFFFFFFFu) >= w ? 0 : ((a & m) >> (b & 63)))                           \
    X(SHR_S, {                                                                                          \
        uint32_t s = (uint32_t)b;                                                                       \
        REG(in->d) = (uint64_t)(sx(a, w) >> (s >= w ? w - 1 : s)) & m;                                  \
    })                                                                                                  \
    X(AND, REG(in->d) = a & b & m)                                                                      \
    X(OR, REG(in->d) = (a | b) & m)                                                                     \
    X(XOR, REG(in->d) = (a ^ b) & m)                                                                    \
    X(NOT, REG(in->d) = ~a & m)                                                                         \
    X(NEG, REG(in->d) = (0 - a) & m)                                                                    \
    X(ABS, REG(in->d) = (sx(a, w) < 0 ? 0 - a : a) & m)                                                 \
    X(MIN_S, REG(in->d) = (sx(a, w) < sx(b, w) ? a : b) & m)                                            \
    X(MAX_S, REG(in->d) = (sx(a, w) > sx(b, w) ? a : b) & m)                                            \
    X(MIN_U, REG(in->d) = ((a & m) < (b & m) ? a : b) & m)                                              \
    X(MAX_U, REG(in->d) = ((a & m) > (b & m) ? a : b) & m)                                              \
    X(SETP_S, {                                                                                         \
        int v = cmp_i(sx(a, w), sx(b, w), in->sub);                                                     \
        REG(in->d) = (uint64_t)v;                                                                       \
        REG(in->e) = (uint64_t)!v;                                                                      \
    })                                                                                                  \
    X(SETP_U, {                                                                                         \
        int v = cmp_u(a & m, b & m, in->sub);                                                           \
        REG(in->d) = (uint64_t)v;                                                                       \
        REG(in->e) = (uint64_t)!v;                                                                      \
    })                                                                                                  \
    X(SELP, REG(in->d) = (REG(in->c) ? a : b) & m)                                                      \
    X(MOV_PACK, {                                   /* sw-bit elements, sub of them, first lowest */    \
        const uint64_t em = ~0ull >> (64 - in->sw);                                                     \
        uint64_t v = (a & em) | (b & em) << in->sw;                                                     \
        if (in->sub == 4)                                                                               \
            v |= (REG(in->c) & em) << 2 * in->sw | (REG(in->f) & em) << 3 * in->sw;                     \
        REG(in->d) = v;                                                                                 \
    })                                                                                                  \
    X(MOV_UNPACK, {                                 /* sub sw-bit elements into d, e (, c, f) */        \
        const uint64_t em = ~0ull >> (64 - in->sw);                                                     \
        REG(in->d) = a & em;                                                                            \
        REG(in->e) = (a >> in->sw) & em;                                                                \
        if (in->sub == 4) {                                                                             \
            REG(in->c) = (a >> 2 * in->sw) & em;                                                        \
            REG(in->f) = (a >> 3 * in->sw) & em;                                                        \
        }                                                                                               \
    })                                                                                                  \
    X(MAPA, REG(in->d) = in->sub ? (PI_SHARED_BASE + pa_mapa((uint32_t)(a - PI_SHARED_BASE), (uint32_t)b)) & m \
                               : pa_mapa((uint32_t)a, (uint32_t)b) & m)                                 \
    X(CVTA_TO, REG(in->d) = (a - in->imm) & m)                                                          \
    X(CVTA_FROM, REG(in->d) = (a + in->imm) & m)

#endif
