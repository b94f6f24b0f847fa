/* carry.c - extended-precision integer arithmetic: add.cc, addc{.cc}, sub.cc,
 * subc{.cc}, mad{.lo,.hi}.cc, madc{.lo,.hi}{.cc} on 32- and 64-bit lanes.
 *
 * The condition code's carry flag (CC.CF) is per-thread state the ISA keeps
 * out of sight: here it is an operand like any other, read from the source
 * after the instruction's own (s[2] for addc / subc, s[3] for madc) and
 * written to the second destination d[1] (0 or 1) by the forms with .cc.
 *
 * The ISA writes subc as d = a - (b + CC.CF), the flag a borrow there and a
 * carry in addc; the H200 has one flag and one adder (recorded chains that mix
 * them, tests/data/isa/carry_atom.*): add.cc d = a + b and addc
 * d = a + b + CF; sub.cc d = a + ~b + 1 and subc d = a + ~b + CF, so after a
 * subtraction CF is 1 when nothing was borrowed, and subc subtracts 1 - CF;
 * mad.lo.cc d = lo(a * b) + c, mad.hi.cc d = hi(a * b) + c, madc adds CF as
 * well. Each .cc form sets CF to the carry out of its addition. A chain of
 * one kind (add.cc, addc ... or sub.cc, subc ...) is the ISA's arithmetic
 * either way; a mixed chain (sub.cc then addc) is the hardware's. The sum is
 * of the width's bits whatever the signedness (.s32 and .u32 differ only in
 * mad.hi's product).
 */
#include "sem/resolve_parts.h"

static uint64_t hi64(uint64_t a, uint64_t b, int sgn)
{
    if (sgn)
        return (uint64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64);
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

/* One lane: the result, and the carry (borrow) out in *cf. */
static uint64_t carry1(const sem_ctl *k, unsigned w, uint64_t a, uint64_t b, uint64_t c, uint64_t cin, uint64_t *cf)
{
    const uint64_t m = w >= 64 ? ~0ull : (1ull << w) - 1;
    const int sgn = sem_type_is_signed((sem_type)k->at);
    a &= m;
    b &= m;
    c &= m;
    cin &= 1;
    switch (k->op) {
    case SEM_OP_SUB: case SEM_OP_SUBC: {
        /* a + ~b + 1 (sub.cc) or a + ~b + CF (subc): one adder, one flag (above) */
        if (k->op == SEM_OP_SUB)
            cin = 1;
        unsigned __int128 r = (unsigned __int128)a + (~b & m) + cin;
        *cf = (uint64_t)(r >> w) & 1;
        return (uint64_t)r & m;
    }
    case SEM_OP_MAD: case SEM_OP_MADC: {
        if (k->op == SEM_OP_MAD)
            cin = 0;
        uint64_t p;
        if (w == 64) {
            p = (k->flags & SEM_F_HI) ? hi64(a, b, sgn) : a * b;
        } else if (k->flags & SEM_F_HI) {
            p = sgn ? (uint64_t)(((int64_t)(int32_t)a * (int64_t)(int32_t)b) >> 32) : (a * b) >> 32;
        } else {
            p = a * b;
        }
        p &= m;
        unsigned __int128 r = (unsigned __int128)p + c + cin;
        *cf = (uint64_t)(r >> w) & 1;
        return (uint64_t)r & m;
    }
    default: {   /* ADD, ADDC */
        if (k->op == SEM_OP_ADD)
            cin = 0;
        unsigned __int128 r = (unsigned __int128)a + b + cin;
        *cf = (uint64_t)(r >> w) & 1;
        return (uint64_t)r & m;
    }
    }
}

static void carry_lanes(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n, unsigned w)
{
    const int mad = k->op == SEM_OP_MAD || k->op == SEM_OP_MADC;
    const uint64_t *cin = s[mad ? 3 : 2];
    const int out = (k->flags & SEM_F_CC) != 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t cf;
        uint64_t r = carry1(k, w, s[0][i], s[1][i], mad ? s[2][i] : 0, cin[i], &cf);
        d[0][i] = r;
        if (out)
            d[1][i] = cf;
    }
}

static void sem_carry32(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    carry_lanes(k, d, s, n, 32);
}

static void sem_carry64(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    carry_lanes(k, d, s, n, 64);
}

int sem_is_carry(const sem_ctl *k)
{
    return k->op == SEM_OP_ADDC || k->op == SEM_OP_SUBC || k->op == SEM_OP_MADC ||
           ((k->flags & SEM_F_CC) && (k->op == SEM_OP_ADD || k->op == SEM_OP_SUB || k->op == SEM_OP_MAD));
}

int sem_resolve_carry(const sem_ctl *k, sem_impl *o, const char **why)
{
    const int t = k->at;
    if (t != SEM_T_U32 && t != SEM_T_S32 && t != SEM_T_U64 && t != SEM_T_S64) {
        *why = "extended-precision arithmetic is of .u32, .s32, .u64 and .s64";
        return -1;
    }
    const int w = sem_type_reg_bits((sem_type)t);
    const int mad = k->op == SEM_OP_MAD || k->op == SEM_OP_MADC;
    const int in = k->op == SEM_OP_ADDC || k->op == SEM_OP_SUBC || k->op == SEM_OP_MADC;
    o->fn = w == 64 ? sem_carry64 : sem_carry32;
    o->wd[0] = (uint8_t)w;
    o->wd[1] = 0;                         /* the carry is no operand of the text */
    o->ws[0] = o->ws[1] = (uint8_t)w;
    o->ws[2] = (uint8_t)(mad ? w : 0);
    o->ws[3] = 0;
    o->cc = (uint8_t)((in ? SEM_CC_IN : 0) | ((k->flags & SEM_F_CC) ? SEM_CC_OUT : 0));
    return 0;
}
