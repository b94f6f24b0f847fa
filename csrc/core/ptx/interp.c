/* interp.c - the run loop: one thread's instructions until it does something
 * the others can see (then the scheduler may switch), blocks, or exits.
 *
 * Registers are 64-bit slots; an operation of width w computes on its
 * operands' low w bits and writes its result zero-extended (a .s32 result
 * is kept as 32 bits, as the register holds it). Integer arithmetic wraps;
 * shifts past the width give 0 (or the sign); division by zero gives all
 * ones rather than trapping (the ISA leaves the value unspecified).
 */
#include "ptx/launch.h"

#include <math.h>
#include <string.h>

static inline int64_t sx(uint64_t v, unsigned w)
{
    return w >= 64 ? (int64_t)v : (int64_t)(v << (64 - w)) >> (64 - w);
}

static inline float f32(uint64_t v)
{
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint64_t bits32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

uint16_t pi_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t e = (x >> 23) & 0xFF, man = x & 0x7FFFFFu;
    if (e == 0xFF)
        return (uint16_t)(sign | 0x7C00u | (man ? 0x200u | (man >> 13) : 0));
    int32_t exp = (int32_t)e - 127 + 15;
    if (exp >= 0x1F)
        return (uint16_t)(sign | 0x7C00u);
    if (exp <= 0) {                          /* subnormal or zero: round to nearest even */
        if (exp < -10)
            return (uint16_t)sign;
        uint32_t m = man | 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)exp << 10) | (man >> 13), rem = man & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++;                                 /* may carry into the exponent: still right */
    return (uint16_t)(sign | h);
}

float pi_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1F, man = h & 0x3FFu, x;
    if (e == 0x1F) {
        x = sign | 0x7F800000u | (man << 13);
    } else if (e == 0) {
        if (!man) {
            x = sign;
        } else {
            int k = 0;
            while (!(man & 0x400u)) {
                man <<= 1;
                k++;
            }
            x = sign | ((uint32_t)(127 - 15 + 1 - k) << 23) | ((man & 0x3FFu) << 13);
        }
    } else {
        x = sign | ((e - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

float pi_bf16_to_f32(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static inline uint64_t bfe(uint64_t a, uint64_t b, uint64_t c, unsigned w, int is_signed)
{
    uint32_t pos = (uint32_t)(b & 0xFF), len = (uint32_t)(c & 0xFF);
    uint64_t mask = w >= 64 ? ~0ull : (1ull << w) - 1;
    a &= mask;
    if (!len)
        return 0;
    uint32_t nbits = pos >= w ? 0 : (len < w - pos ? len : w - pos);
    uint64_t v = nbits ? (a >> pos) & (nbits >= 64 ? ~0ull : (1ull << nbits) - 1) : 0;
    if (is_signed) {
        uint32_t top = pos + len - 1 < w - 1 ? pos + len - 1 : w - 1;
        if ((a >> top) & 1)
            v |= mask & ~(nbits >= 64 ? ~0ull : (1ull << nbits) - 1);
    }
    return v;
}

static inline uint64_t bfi(uint64_t f, uint64_t base, uint64_t c, uint64_t e, unsigned w)
{
    uint32_t pos = (uint32_t)(c & 0xFF), len = (uint32_t)(e & 0xFF);
    uint64_t d = base;
    for (uint32_t i = 0; i < len && pos + i < w; i++)
        d = (d & ~(1ull << (pos + i))) | (((f >> i) & 1) << (pos + i));
    return d;
}

static inline uint64_t brev(uint64_t a, unsigned w)
{
    uint64_t r = 0;
    for (unsigned i = 0; i < w; i++)
        r |= ((a >> i) & 1) << (w - 1 - i);
    return r;
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

static inline int cmp_f(float a, float b, int c)
{
    if (a != a || b != b)
        return 0;                            /* ordered comparisons: NaN compares false */
    switch (c) {
    case PI_CMP_EQ: return a == b;
    case PI_CMP_NE: return a != b;
    case PI_CMP_LT: return a < b;
    case PI_CMP_LE: return a <= b;
    case PI_CMP_GT: return a > b;
    default: return a >= b;
    }
}

static inline uint64_t f2i(float f, int is_signed, unsigned w)
{
    if (f != f)
        return 0;
    double d = truncf(f);
    if (is_signed) {
        double lo = -ldexp(1.0, (int)w - 1), hi = ldexp(1.0, (int)w - 1) - 1;
        int64_t v = d < lo ? (int64_t)lo : d > hi ? (int64_t)hi : (int64_t)d;
        return (uint64_t)v & (w >= 64 ? ~0ull : (1ull << w) - 1);
    }
    double hi = ldexp(1.0, (int)w) - 1;
    return d < 0 ? 0 : d > hi ? (w >= 64 ? ~0ull : (1ull << w) - 1) : (uint64_t)d;
}

/* Dispatch: each handler ends by jumping straight to the next instruction's
 * handler (labels as values, GCC and Clang), so the branch predictor learns
 * each instruction's successor instead of sharing one indirect jump. Every
 * instruction counts against the launch's budget, guarded-off ones too; an
 * unguarded one (guard 0, never negated) reads no predicate. */
#define DISPATCH()                                      \
    do {                                                \
        if (__builtin_expect(!left, 0))                 \
            goto over;                                  \
        left--;                                         \
        if (in->guard && (r[in->guard] != 0) == in->pneg) \
            goto skip;                                  \
        a = r[in->a];                                   \
        b = r[in->b];                                   \
        m = in->mask;                                   \
        w = in->w;                                      \
        goto *OPS[in->op];                              \
    } while (0)
#define NEXT()                                          \
    do {                                                \
        in++;                                           \
        DISPATCH();                                     \
    } while (0)

int pi_run_thread(pi_launch_state *L, pi_thread *t, pa_error *err)
{
    static const void *const OPS[PI_OPCOUNT] = {
        [PI_NOP] = &&op_NOP,
        [PI_MOV] = &&op_MOV,
        [PI_ADD] = &&op_ADD,
        [PI_SUB] = &&op_SUB,
        [PI_MULLO] = &&op_MULLO,
        [PI_MULHI_S] = &&op_MULHI_S,
        [PI_MULHI_U] = &&op_MULHI_U,
        [PI_MULWIDE_S] = &&op_MULWIDE_S,
        [PI_MULWIDE_U] = &&op_MULWIDE_U,
        [PI_MADLO] = &&op_MADLO,
        [PI_MADHI_S] = &&op_MADHI_S,
        [PI_MADHI_U] = &&op_MADHI_U,
        [PI_MADWIDE_S] = &&op_MADWIDE_S,
        [PI_MADWIDE_U] = &&op_MADWIDE_U,
        [PI_DIV_U] = &&op_DIV_U,
        [PI_REM_U] = &&op_REM_U,
        [PI_DIV_S] = &&op_DIV_S,
        [PI_REM_S] = &&op_REM_S,
        [PI_SHL] = &&op_SHL,
        [PI_SHR_U] = &&op_SHR_U,
        [PI_SHR_S] = &&op_SHR_S,
        [PI_AND] = &&op_AND,
        [PI_OR] = &&op_OR,
        [PI_XOR] = &&op_XOR,
        [PI_NOT] = &&op_NOT,
        [PI_NEG] = &&op_NEG,
        [PI_ABS] = &&op_ABS,
        [PI_MIN_S] = &&op_MIN_S,
        [PI_MAX_S] = &&op_MAX_S,
        [PI_MIN_U] = &&op_MIN_U,
        [PI_MAX_U] = &&op_MAX_U,
        [PI_BFE_U] = &&op_BFE_U,
        [PI_BFE_S] = &&op_BFE_S,
        [PI_BFI] = &&op_BFI,
        [PI_POPC] = &&op_POPC,
        [PI_CLZ] = &&op_CLZ,
        [PI_BREV] = &&op_BREV,
        [PI_SETP_S] = &&op_SETP_S,
        [PI_SETP_U] = &&op_SETP_U,
        [PI_SETP_F32] = &&op_SETP_F32,
        [PI_SELP] = &&op_SELP,
        [PI_CVT_ZX] = &&op_CVT_ZX,
        [PI_CVT_SX] = &&op_CVT_SX,
        [PI_CVT_F16X2_F32] = &&op_CVT_F16X2_F32,
        [PI_CVT_F32_F16] = &&op_CVT_F32_F16,
        [PI_CVT_F32_S] = &&op_CVT_F32_S,
        [PI_CVT_F32_U] = &&op_CVT_F32_U,
        [PI_CVT_S_F32] = &&op_CVT_S_F32,
        [PI_CVT_U_F32] = &&op_CVT_U_F32,
        [PI_FADD] = &&op_FADD,
        [PI_FSUB] = &&op_FSUB,
        [PI_FMUL] = &&op_FMUL,
        [PI_FFMA] = &&op_FFMA,
        [PI_FMIN] = &&op_FMIN,
        [PI_FMAX] = &&op_FMAX,
        [PI_FNEG] = &&op_FNEG,
        [PI_FABS] = &&op_FABS,
        [PI_MOV_PACK] = &&op_MOV_PACK,
        [PI_MOV_UNPACK] = &&op_MOV_UNPACK,
        [PI_MAPA] = &&op_MAPA,
        [PI_CVTA_TO] = &&op_CVTA_TO,
        [PI_CVTA_FROM] = &&op_CVTA_FROM,
        [PI_BRA] = &&op_BRA,
        [PI_EXIT] = &&op_EXIT,
        [PI_EXT] = &&op_EXT,
    };
    const pi_ins *const ins = L->p->ins;
    const pi_ins *in = ins + t->pc;
    uint64_t *const r = t->r;
    uint64_t left = L->budget;   /* instructions the launch may still run */
    uint64_t a, b, m;
    unsigned w;
    int rc;
    DISPATCH();
skip:
    NEXT();
over:
    t->pc = (uint32_t)(in - ins);
    L->st->instructions += L->budget;
    L->budget = 0;
    return pa_fail(err, PA_ERR_STATE,
                   "the launch ran past its instruction limit (max_instructions) at line %d: "
                   "a loop that never ends?", pi_line(L->p, t->pc)) ? PI_R_ERR : PI_R_ERR;
    {
        op_NOP: NEXT();
        op_MOV: r[in->d] = a & m; NEXT();
        op_ADD: r[in->d] = (a + b) & m; NEXT();
        op_SUB: r[in->d] = (a - b) & m; NEXT();
        op_MULLO: r[in->d] = (a * b) & m; NEXT();
        op_MULHI_S:
            r[in->d] = w == 64 ? (uint64_t)(int64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64)
                               : (uint64_t)((sx(a, w) * sx(b, w)) >> w) & m;
            NEXT();
        op_MULHI_U:
            r[in->d] = w == 64 ? (uint64_t)(((unsigned __int128)a * b) >> 64) : (((a & m) * (b & m)) >> w) & m;
            NEXT();
        op_MULWIDE_S: r[in->d] = (uint64_t)(sx(a, w) * sx(b, w)) & m; NEXT();
        op_MULWIDE_U: r[in->d] = ((a & ((1ull << w) - 1)) * (b & ((1ull << w) - 1))) & m; NEXT();
        op_MADLO: r[in->d] = (a * b + r[in->c]) & m; NEXT();
        op_MADHI_S:
            r[in->d] = ((w == 64 ? (uint64_t)(int64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64)
                                 : (uint64_t)((sx(a, w) * sx(b, w)) >> w)) + r[in->c]) & m;
            NEXT();
        op_MADHI_U:
            r[in->d] = ((w == 64 ? (uint64_t)(((unsigned __int128)a * b) >> 64) : ((a & m) * (b & m)) >> w) +
                        r[in->c]) & m;
            NEXT();
        op_MADWIDE_S: r[in->d] = ((uint64_t)(sx(a, w) * sx(b, w)) + r[in->c]) & m; NEXT();
        op_MADWIDE_U:
            r[in->d] = ((a & ((1ull << w) - 1)) * (b & ((1ull << w) - 1)) + r[in->c]) & m;
            NEXT();
        op_DIV_U: r[in->d] = (b & m) ? ((a & m) / (b & m)) & m : m; NEXT();
        op_REM_U: r[in->d] = (b & m) ? ((a & m) % (b & m)) & m : a & m; NEXT();
        op_DIV_S: {
            int64_t x = sx(a, w), y = sx(b, w);
            r[in->d] = !y ? m : (y == -1 ? (uint64_t)(0 - (uint64_t)x) & m : (uint64_t)(x / y) & m);
            NEXT();
        }
        op_REM_S: {
            int64_t x = sx(a, w), y = sx(b, w);
            r[in->d] = !y ? a & m : (y == -1 ? 0 : (uint64_t)(x % y) & m);
            NEXT();
        }
        op_SHL: r[in->d] = (b & 0xFFFFFFFFu) >= w ? 0 : (a << (b & 63)) & m; NEXT();
        op_SHR_U: r[in->d] = (b & 0xFFFFFFFFu) >= w ? 0 : ((a & m) >> (b & 63)); NEXT();
        op_SHR_S: {
            uint32_t s = (uint32_t)b;
            r[in->d] = (uint64_t)(sx(a, w) >> (s >= w ? w - 1 : s)) & m;
            NEXT();
        }
        op_AND: r[in->d] = a & b & m; NEXT();
        op_OR: r[in->d] = (a | b) & m; NEXT();
        op_XOR: r[in->d] = (a ^ b) & m; NEXT();
        op_NOT: r[in->d] = ~a & m; NEXT();
        op_NEG: r[in->d] = (0 - a) & m; NEXT();
        op_ABS: r[in->d] = (sx(a, w) < 0 ? 0 - a : a) & m; NEXT();
        op_MIN_S: r[in->d] = (sx(a, w) < sx(b, w) ? a : b) & m; NEXT();
        op_MAX_S: r[in->d] = (sx(a, w) > sx(b, w) ? a : b) & m; NEXT();
        op_MIN_U: r[in->d] = ((a & m) < (b & m) ? a : b) & m; NEXT();
        op_MAX_U: r[in->d] = ((a & m) > (b & m) ? a : b) & m; NEXT();
        op_BFE_U: r[in->d] = bfe(a, b, r[in->c], w, 0); NEXT();
        op_BFE_S: r[in->d] = bfe(a, b, r[in->c], w, 1); NEXT();
        op_BFI: r[in->d] = bfi(a, b, r[in->c], r[in->e], w) & m; NEXT();
        op_POPC: r[in->d] = (uint64_t)__builtin_popcountll(a & m); NEXT();
        op_CLZ:
            r[in->d] = (a & m) ? (uint64_t)(__builtin_clzll(a & m) - (64 - (int)w)) : w;
            NEXT();
        op_BREV: r[in->d] = brev(a, w); NEXT();
        op_SETP_S: {
            int v = cmp_i(sx(a, w), sx(b, w), in->sub);
            r[in->d] = (uint64_t)v;
            r[in->e] = (uint64_t)!v;
            NEXT();
        }
        op_SETP_U: {
            int v = cmp_u(a & m, b & m, in->sub);
            r[in->d] = (uint64_t)v;
            r[in->e] = (uint64_t)!v;
            NEXT();
        }
        op_SETP_F32: {
            int v = cmp_f(f32(a), f32(b), in->sub);
            r[in->d] = (uint64_t)v;
            r[in->e] = (uint64_t)!v;
            NEXT();
        }
        op_SELP: r[in->d] = (r[in->c] ? a : b) & m; NEXT();
        op_CVT_ZX: r[in->d] = a & (in->sw >= 64 ? ~0ull : (1ull << in->sw) - 1) & m; NEXT();
        op_CVT_SX: r[in->d] = (uint64_t)sx(a, in->sw) & m; NEXT();
        op_CVT_F16X2_F32:
            r[in->d] = ((uint64_t)pi_f32_to_f16(f32(a)) << 16) | pi_f32_to_f16(f32(b));
            NEXT();
        op_CVT_F32_F16: r[in->d] = bits32(pi_f16_to_f32((uint16_t)a)); NEXT();
        op_CVT_F32_S: r[in->d] = bits32((float)sx(a, in->sw)); NEXT();
        op_CVT_F32_U: r[in->d] = bits32((float)(a & (in->sw >= 64 ? ~0ull : (1ull << in->sw) - 1))); NEXT();
        op_CVT_S_F32: r[in->d] = f2i(f32(a), 1, w); NEXT();
        op_CVT_U_F32: r[in->d] = f2i(f32(a), 0, w); NEXT();
        op_FADD: r[in->d] = bits32(f32(a) + f32(b)); NEXT();
        op_FSUB: r[in->d] = bits32(f32(a) - f32(b)); NEXT();
        op_FMUL: r[in->d] = bits32(f32(a) * f32(b)); NEXT();
        op_FFMA: r[in->d] = bits32(fmaf(f32(a), f32(b), f32(r[in->c]))); NEXT();
        op_FMIN: r[in->d] = bits32(fminf(f32(a), f32(b))); NEXT();
        op_FMAX: r[in->d] = bits32(fmaxf(f32(a), f32(b))); NEXT();
        op_FNEG: r[in->d] = (a ^ 0x80000000u) & 0xFFFFFFFFu; NEXT();
        op_FABS: r[in->d] = a & 0x7FFFFFFFu; NEXT();
        op_MOV_PACK: r[in->d] = (a & 0xFFFFFFFFu) | (b << 32); NEXT();
        op_MOV_UNPACK: {
            uint64_t v = a;
            r[in->d] = v & 0xFFFFFFFFu;
            r[in->e] = v >> 32;
            NEXT();
        }
        op_MAPA:
            r[in->d] = in->sub ? (PI_SHARED_BASE + pa_mapa((uint32_t)(a - PI_SHARED_BASE), (uint32_t)b)) & m
                               : pa_mapa((uint32_t)a, (uint32_t)b) & m;
            NEXT();
        op_CVTA_TO: r[in->d] = (a - in->imm) & m; NEXT();
        op_CVTA_FROM: r[in->d] = (a + in->imm) & m; NEXT();
        op_BRA:
            in = ins + in->x;
            DISPATCH();
        op_EXIT:
            t->pc = (uint32_t)(in - ins);
            L->st->instructions += L->budget - left;
            L->budget = left;
            return PI_R_EXIT;
        op_EXT:
            t->pc = (uint32_t)(in - ins);
            L->st->instructions += L->budget - left;
            L->budget = left;
            rc = pi_ext_exec(L, t, in, err);
            if (rc != PI_R_AGAIN)
                return rc;
            in = ins + t->pc;
            DISPATCH();
    }
}
