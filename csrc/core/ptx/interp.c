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

int pi_run_thread(pi_launch_state *L, pi_thread *t, pa_error *err)
{
    const pi_ins *ins = L->p->ins;
    uint64_t *r = t->r;
    uint32_t pc = t->pc;
    uint64_t n = 0;
    const uint64_t budget = L->budget;
    int rc;
    for (;;) {
        const pi_ins *in = &ins[pc];
        if (__builtin_expect(++n > budget, 0)) {
            t->pc = pc;
            L->st->instructions += n - 1;
            L->budget = 0;
            return pa_fail(err, PA_ERR_STATE,
                           "the launch ran past its instruction limit (max_instructions) at line %d: "
                           "a loop that never ends?", pi_line(L->p, pc)) ? PI_R_ERR : PI_R_ERR;
        }
        if ((r[in->guard] != 0) == in->pneg) {
            pc++;
            continue;
        }
        const uint64_t a = r[in->a], b = r[in->b], m = in->mask;
        const unsigned w = in->w;
        switch (in->op) {
        case PI_NOP: break;
        case PI_MOV: r[in->d] = a & m; break;
        case PI_ADD: r[in->d] = (a + b) & m; break;
        case PI_SUB: r[in->d] = (a - b) & m; break;
        case PI_MULLO: r[in->d] = (a * b) & m; break;
        case PI_MULHI_S:
            r[in->d] = w == 64 ? (uint64_t)(int64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64)
                               : (uint64_t)((sx(a, w) * sx(b, w)) >> w) & m;
            break;
        case PI_MULHI_U:
            r[in->d] = w == 64 ? (uint64_t)(((unsigned __int128)a * b) >> 64) : (((a & m) * (b & m)) >> w) & m;
            break;
        case PI_MULWIDE_S: r[in->d] = (uint64_t)(sx(a, w) * sx(b, w)) & m; break;
        case PI_MULWIDE_U: r[in->d] = ((a & ((1ull << w) - 1)) * (b & ((1ull << w) - 1))) & m; break;
        case PI_MADLO: r[in->d] = (a * b + r[in->c]) & m; break;
        case PI_MADHI_S:
            r[in->d] = ((w == 64 ? (uint64_t)(int64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64)
                                 : (uint64_t)((sx(a, w) * sx(b, w)) >> w)) + r[in->c]) & m;
            break;
        case PI_MADHI_U:
            r[in->d] = ((w == 64 ? (uint64_t)(((unsigned __int128)a * b) >> 64) : ((a & m) * (b & m)) >> w) +
                        r[in->c]) & m;
            break;
        case PI_MADWIDE_S: r[in->d] = ((uint64_t)(sx(a, w) * sx(b, w)) + r[in->c]) & m; break;
        case PI_MADWIDE_U:
            r[in->d] = ((a & ((1ull << w) - 1)) * (b & ((1ull << w) - 1)) + r[in->c]) & m;
            break;
        case PI_DIV_U: r[in->d] = (b & m) ? ((a & m) / (b & m)) & m : m; break;
        case PI_REM_U: r[in->d] = (b & m) ? ((a & m) % (b & m)) & m : a & m; break;
        case PI_DIV_S: {
            int64_t x = sx(a, w), y = sx(b, w);
            r[in->d] = !y ? m : (y == -1 ? (uint64_t)(0 - (uint64_t)x) & m : (uint64_t)(x / y) & m);
            break;
        }
        case PI_REM_S: {
            int64_t x = sx(a, w), y = sx(b, w);
            r[in->d] = !y ? a & m : (y == -1 ? 0 : (uint64_t)(x % y) & m);
            break;
        }
        case PI_SHL: r[in->d] = (b & 0xFFFFFFFFu) >= w ? 0 : (a << (b & 63)) & m; break;
        case PI_SHR_U: r[in->d] = (b & 0xFFFFFFFFu) >= w ? 0 : ((a & m) >> (b & 63)); break;
        case PI_SHR_S: {
            uint32_t s = (uint32_t)b;
            r[in->d] = (uint64_t)(sx(a, w) >> (s >= w ? w - 1 : s)) & m;
            break;
        }
        case PI_AND: r[in->d] = a & b & m; break;
        case PI_OR: r[in->d] = (a | b) & m; break;
        case PI_XOR: r[in->d] = (a ^ b) & m; break;
        case PI_NOT: r[in->d] = ~a & m; break;
        case PI_NEG: r[in->d] = (0 - a) & m; break;
        case PI_ABS: r[in->d] = (sx(a, w) < 0 ? 0 - a : a) & m; break;
        case PI_MIN_S: r[in->d] = (sx(a, w) < sx(b, w) ? a : b) & m; break;
        case PI_MAX_S: r[in->d] = (sx(a, w) > sx(b, w) ? a : b) & m; break;
        case PI_MIN_U: r[in->d] = ((a & m) < (b & m) ? a : b) & m; break;
        case PI_MAX_U: r[in->d] = ((a & m) > (b & m) ? a : b) & m; break;
        case PI_BFE_U: r[in->d] = bfe(a, b, r[in->c], w, 0); break;
        case PI_BFE_S: r[in->d] = bfe(a, b, r[in->c], w, 1); break;
        case PI_BFI: r[in->d] = bfi(a, b, r[in->c], r[in->e], w) & m; break;
        case PI_POPC: r[in->d] = (uint64_t)__builtin_popcountll(a & m); break;
        case PI_CLZ:
            r[in->d] = (a & m) ? (uint64_t)(__builtin_clzll(a & m) - (64 - (int)w)) : w;
            break;
        case PI_BREV: r[in->d] = brev(a, w); break;
        case PI_SETP_S: {
            int v = cmp_i(sx(a, w), sx(b, w), in->sub);
            r[in->d] = (uint64_t)v;
            r[in->e] = (uint64_t)!v;
            break;
        }
        case PI_SETP_U: {
            int v = cmp_u(a & m, b & m, in->sub);
            r[in->d] = (uint64_t)v;
            r[in->e] = (uint64_t)!v;
            break;
        }
        case PI_SETP_F32: {
            int v = cmp_f(f32(a), f32(b), in->sub);
            r[in->d] = (uint64_t)v;
            r[in->e] = (uint64_t)!v;
            break;
        }
        case PI_SELP: r[in->d] = (r[in->c] ? a : b) & m; break;
        case PI_CVT_ZX: r[in->d] = a & (in->sw >= 64 ? ~0ull : (1ull << in->sw) - 1) & m; break;
        case PI_CVT_SX: r[in->d] = (uint64_t)sx(a, in->sw) & m; break;
        case PI_CVT_F16X2_F32:
            r[in->d] = ((uint64_t)pi_f32_to_f16(f32(a)) << 16) | pi_f32_to_f16(f32(b));
            break;
        case PI_CVT_F32_F16: r[in->d] = bits32(pi_f16_to_f32((uint16_t)a)); break;
        case PI_CVT_F32_S: r[in->d] = bits32((float)sx(a, in->sw)); break;
        case PI_CVT_F32_U: r[in->d] = bits32((float)(a & (in->sw >= 64 ? ~0ull : (1ull << in->sw) - 1))); break;
        case PI_CVT_S_F32: r[in->d] = f2i(f32(a), 1, w); break;
        case PI_CVT_U_F32: r[in->d] = f2i(f32(a), 0, w); break;
        case PI_FADD: r[in->d] = bits32(f32(a) + f32(b)); break;
        case PI_FSUB: r[in->d] = bits32(f32(a) - f32(b)); break;
        case PI_FMUL: r[in->d] = bits32(f32(a) * f32(b)); break;
        case PI_FFMA: r[in->d] = bits32(fmaf(f32(a), f32(b), f32(r[in->c]))); break;
        case PI_FMIN: r[in->d] = bits32(fminf(f32(a), f32(b))); break;
        case PI_FMAX: r[in->d] = bits32(fmaxf(f32(a), f32(b))); break;
        case PI_FNEG: r[in->d] = (a ^ 0x80000000u) & 0xFFFFFFFFu; break;
        case PI_FABS: r[in->d] = a & 0x7FFFFFFFu; break;
        case PI_MOV_PACK: r[in->d] = (a & 0xFFFFFFFFu) | (b << 32); break;
        case PI_MOV_UNPACK: {
            uint64_t v = a;
            r[in->d] = v & 0xFFFFFFFFu;
            r[in->e] = v >> 32;
            break;
        }
        case PI_MAPA:
            r[in->d] = in->sub ? (PI_SHARED_BASE + pa_mapa((uint32_t)(a - PI_SHARED_BASE), (uint32_t)b)) & m
                               : pa_mapa((uint32_t)a, (uint32_t)b) & m;
            break;
        case PI_CVTA_TO: r[in->d] = (a - in->imm) & m; break;
        case PI_CVTA_FROM: r[in->d] = (a + in->imm) & m; break;
        case PI_BRA:
            pc = in->x;
            continue;
        case PI_EXIT:
            t->pc = pc;
            L->st->instructions += n;
            L->budget -= n;
            return PI_R_EXIT;
        case PI_EXT:
            t->pc = pc;
            L->st->instructions += n;
            L->budget -= n;
            n = 0;
            rc = pi_ext_exec(L, t, in, err);
            if (rc != PI_R_AGAIN)
                return rc;
            pc = t->pc;
            continue;
        default:
            t->pc = pc;
            return pa_fail(err, PA_ERR_STATE, "unknown lowered instruction %u", in->op) ? PI_R_ERR : PI_R_ERR;
        }
        pc++;
    }
}
