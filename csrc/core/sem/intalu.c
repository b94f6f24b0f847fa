/* intalu.c - integer arithmetic and logic on lanes: add, sub (.sat), mul and
 * mad (.lo / .hi / .wide, mad.hi.sat), div, rem, and, or, xor, not, shl, shr,
 * neg, abs, min, max, selp. Written for clarity: the interpreter runs the
 * common forms through its own specialised instructions (ptx/exec/lower_sem.c),
 * and tests hold the two equal. */
#include "sem/intops.h"

static inline int64_t sx(uint64_t v, unsigned w)
{
    return w >= 64 ? (int64_t)v : (int64_t)(v << (64 - w)) >> (64 - w);
}

static inline uint64_t wmask(unsigned w)
{
    return w >= 64 ? ~0ull : (1ull << w) - 1;
}

/* .sat of an s32 result computed exactly in 64 bits */
static inline uint64_t sat_s32(int64_t v)
{
    return (uint32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
}

/* The high half of the 2w-bit product (w <= 64), signed or not. */
static uint64_t mul_hi(uint64_t a, uint64_t b, unsigned w, int sg)
{
    if (w == 64) {
        if (sg)
            return (uint64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64);
        return (uint64_t)(((unsigned __int128)a * b) >> 64);
    }
    if (sg)
        return (uint64_t)((sx(a, w) * sx(b, w)) >> w) & wmask(w);
    return (((a & wmask(w)) * (b & wmask(w))) >> w) & wmask(w);
}

static uint64_t alu1(const sem_ctl *k, uint64_t a, uint64_t b, uint64_t c, unsigned w, int sg)
{
    const uint64_t m = wmask(w);
    const int sat = (k->flags & SEM_F_SAT) != 0;
    switch (k->op) {
    case SEM_OP_ADD:
        return sat ? sat_s32(sx(a, 32) + sx(b, 32)) : (a + b) & m;
    case SEM_OP_SUB:
        return sat ? sat_s32(sx(a, 32) - sx(b, 32)) : (a - b) & m;
    case SEM_OP_MUL:
    case SEM_OP_MAD: {
        uint64_t p;
        unsigned wr = w;
        if (k->flags & SEM_F_WIDE) {
            wr = 2 * w;
            p = sg ? (uint64_t)(sx(a, w) * sx(b, w)) : (a & m) * (b & m);
        } else if (k->flags & SEM_F_HI) {
            p = mul_hi(a, b, w, sg);
        } else {
            p = a * b;
        }
        if (k->op == SEM_OP_MUL)
            return p & wmask(wr);
        if (sat)                          /* mad.hi.sat.s32: the sum saturated */
            return sat_s32(sx(p, 32) + sx(c, 32));
        return (p + c) & wmask(wr);
    }
    case SEM_OP_DIV:                       /* by zero: all ones (as an H200 gives) */
        if (!(b & m))
            return m;
        if (sg)
            return sx(b, w) == -1 ? (0 - a) & m : (uint64_t)(sx(a, w) / sx(b, w)) & m;
        return ((a & m) / (b & m)) & m;
    case SEM_OP_REM:
        if (!(b & m))
            return m;
        if (sg)
            return sx(b, w) == -1 ? 0 : (uint64_t)(sx(a, w) % sx(b, w)) & m;
        return ((a & m) % (b & m)) & m;
    case SEM_OP_AND: return a & b & m;
    case SEM_OP_OR: return (a | b) & m;
    case SEM_OP_XOR: return (a ^ b) & m;
    case SEM_OP_NOT: return ~a & m;
    case SEM_OP_SHL:
        return (b & 0xFFFFFFFFu) >= w ? 0 : (a << b) & m;
    case SEM_OP_SHR:                       /* past the width: 0, or the sign */
        if (sg) {
            uint32_t s = (uint32_t)b;
            return (uint64_t)(sx(a, w) >> (s >= w ? w - 1 : s)) & m;
        }
        return (b & 0xFFFFFFFFu) >= w ? 0 : (a & m) >> b;
    case SEM_OP_NEG: return (0 - a) & m;
    case SEM_OP_ABS: return (sx(a, w) < 0 ? 0 - a : a) & m;
    case SEM_OP_MIN:
        return (sg ? sx(a, w) < sx(b, w) : (a & m) < (b & m)) ? a & m : b & m;
    case SEM_OP_MAX:
        return (sg ? sx(a, w) > sx(b, w) : (a & m) > (b & m)) ? a & m : b & m;
    case SEM_OP_SELP:
        return (c & 1 ? a : b) & m;
    default:
        return 0;
    }
}

void sem_int_alu(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const unsigned w = (unsigned)sem_type_bits((sem_type)k->at);
    const int sg = sem_type_is_signed((sem_type)k->at);
    for (size_t i = 0; i < n; i++)
        d[0][i] = alu1(k, s[0][i], s[1][i], s[2][i], w, sg);
}
