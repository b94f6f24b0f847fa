/* intops.c - integer and bit operations on lanes: prmt, shf, lop3, bfind,
 * dp4a / dp2a, sad, mul24 / mad24, cnot, popc, clz, brev. */
#include "sem/intops.h"

#include "sem/sm90.h"

static inline int64_t sx(uint64_t v, unsigned w)
{
    return w >= 64 ? (int64_t)v : (int64_t)(v << (64 - w)) >> (64 - w);
}

/* prmt: result byte i is byte sel_i of the 8 bytes {b, a} (a bytes 0-3); in the
 * default mode nibble i of c selects (bit 3: the byte's sign replicated). */
static uint32_t prmt1(int mode, uint32_t a, uint32_t b, uint32_t c)
{
    static const uint8_t SEL[6][4][4] = {   /* [mode][c & 3][byte of d] */
        {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},   /* f4e */
        {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},   /* b4e */
        {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},   /* rc8 */
        {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},   /* ecl */
        {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},   /* ecr */
        {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},   /* rc16 */
    };
    uint64_t x = (uint64_t)b << 32 | a;
    uint32_t d = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t byte;
        if (mode == SEM_PRMT_DEFAULT) {
            uint32_t nib = (c >> (4 * i)) & 0xF;
            byte = (uint32_t)(x >> (8 * (nib & 7))) & 0xFF;
            if (nib & 8)
                byte = (byte & 0x80) ? 0xFF : 0;
        } else {
            byte = (uint32_t)(x >> (8 * SEL[mode - 1][c & 3][i])) & 0xFF;
        }
        d |= byte << (8 * i);
    }
    return d;
}

void sem_prmt(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    for (size_t i = 0; i < n; i++)
        d[0][i] = prmt1(k->aux, (uint32_t)s[0][i], (uint32_t)s[1][i], (uint32_t)s[2][i]);
}

/* shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: the funnel b:a shifted by c. */
void sem_shf(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = (s[1][i] & 0xFFFFFFFFu) << 32 | (s[0][i] & 0xFFFFFFFFu);
        uint32_t c = (uint32_t)s[2][i];
        c = (k->flags & SEM_F_CLAMP) ? (c > 32 ? 32 : c) : c & 31;
        d[0][i] = (k->flags & SEM_F_LEFT) ? (uint32_t)((v << c) >> 32) : (uint32_t)(v >> c);
    }
}

/* lop3.b32 d, a, b, c, immLut: bit j of d is immLut's bit (a_j << 2 | b_j << 1 | c_j)... with
 * the ISA's encoding ta = 0xF0, tb = 0xCC, tc = 0xAA. */
void sem_lop3(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const uint32_t lut = k->imm & 0xFF;
    for (size_t i = 0; i < n; i++) {
        uint32_t a = (uint32_t)s[0][i], b = (uint32_t)s[1][i], c = (uint32_t)s[2][i], r = 0;
        for (int t = 0; t < 8; t++) {
            if (!((lut >> t) & 1))
                continue;
            uint32_t m = ((t & 4) ? a : ~a) & ((t & 2) ? b : ~b) & ((t & 1) ? c : ~c);
            r |= m;
        }
        d[0][i] = r;
    }
}

/* bfind{.shiftamt}.type d, a: the most significant bit unlike the sign (signed)
 * or set (unsigned), 0xFFFFFFFF if none. */
void sem_bfind(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const int bits = sem_type_bits(k->at), sg = sem_type_is_signed(k->at);
    for (size_t i = 0; i < n; i++) {
        uint64_t a = s[0][i] & (bits >= 64 ? ~0ull : (1ull << bits) - 1);
        if (sg && (a >> (bits - 1)) & 1)
            a = ~a & (bits >= 64 ? ~0ull : (1ull << bits) - 1);
        if (!a) {
            d[0][i] = 0xFFFFFFFFu;
            continue;
        }
        uint32_t pos = 63u - (uint32_t)__builtin_clzll(a);
        d[0][i] = (k->flags & SEM_F_SHIFTAMT) ? (uint32_t)bits - 1 - pos : pos;
    }
}

/* dp4a.atype.btype d, a, b, c: c + the four byte products. */
void sem_dp4a(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const int sa = sem_type_is_signed(k->at), sb = sem_type_is_signed(k->bt);
    for (size_t i = 0; i < n; i++) {
        uint32_t a = (uint32_t)s[0][i], b = (uint32_t)s[1][i];
        uint32_t acc = (uint32_t)s[2][i];
        for (int j = 0; j < 4; j++) {
            int32_t x = sa ? (int8_t)(a >> (8 * j)) : (int32_t)((a >> (8 * j)) & 0xFF);
            int32_t y = sb ? (int8_t)(b >> (8 * j)) : (int32_t)((b >> (8 * j)) & 0xFF);
            acc += (uint32_t)(x * y);
        }
        d[0][i] = acc;
    }
}

/* dp2a.{lo,hi}.atype.btype d, a, b, c: c + a's two 16-bit halves times two bytes of b
 * (bytes 0-1 for .lo, 2-3 for .hi). */
void sem_dp2a(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const int sa = sem_type_is_signed(k->at), sb = sem_type_is_signed(k->bt);
    const int off = (k->flags & SEM_F_HI) ? 2 : 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t a = (uint32_t)s[0][i], b = (uint32_t)s[1][i];
        uint32_t acc = (uint32_t)s[2][i];
        for (int j = 0; j < 2; j++) {
            int32_t x = sa ? (int16_t)(a >> (16 * j)) : (int32_t)((a >> (16 * j)) & 0xFFFF);
            int32_t y = sb ? (int8_t)(b >> (8 * (j + off))) : (int32_t)((b >> (8 * (j + off))) & 0xFF);
            acc += (uint32_t)(x * y);
        }
        d[0][i] = acc;
    }
}

/* sad.type d, a, b, c: c + |a - b|. */
void sem_sad(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const unsigned bits = (unsigned)sem_type_bits(k->at);
    const int sg = sem_type_is_signed(k->at);
    const uint64_t m = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t diff;
        if (sg) {
            int64_t x = sx(s[0][i], bits), y = sx(s[1][i], bits);
            diff = x > y ? (uint64_t)x - (uint64_t)y : (uint64_t)y - (uint64_t)x;
        } else {
            uint64_t x = s[0][i] & m, y = s[1][i] & m;
            diff = x > y ? x - y : y - x;
        }
        d[0][i] = (s[2][i] + diff) & m;
    }
}

/* mul24.{lo,hi} / mad24.{lo,hi}: the 48-bit product of the low 24 bits; .lo its
 * low 32 bits, .hi bits 47..16. */
void sem_mul24(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const int sg = sem_type_is_signed(k->at), mad = k->op == SEM_OP_MAD24;
    for (size_t i = 0; i < n; i++) {
        int64_t x = sg ? sx(s[0][i], 24) : (int64_t)(s[0][i] & 0xFFFFFF);
        int64_t y = sg ? sx(s[1][i], 24) : (int64_t)(s[1][i] & 0xFFFFFF);
        uint64_t p = (uint64_t)(x * y);
        uint32_t r = (k->flags & SEM_F_HI) ? (uint32_t)(p >> 16) : (uint32_t)p;
        d[0][i] = (uint32_t)(r + (mad ? (uint32_t)s[2][i] : 0));
    }
}

/* cnot, popc, clz, brev of a .b16 / .b32 / .b64 value. */
void sem_bitop(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const unsigned bits = (unsigned)sem_type_bits(k->at);
    const uint64_t m = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = s[0][i] & m, r = 0;
        switch (k->op) {
        case SEM_OP_CNOT: r = !a; break;
        case SEM_OP_POPC: r = (uint64_t)__builtin_popcountll(a); break;
        case SEM_OP_CLZ: r = a ? (uint64_t)(__builtin_clzll(a) - (64 - (int)bits)) : bits; break;
        default:
            for (unsigned j = 0; j < bits; j++)
                r |= ((a >> j) & 1) << (bits - 1 - j);
            break;
        }
        d[0][i] = r;
    }
}

/* 64-bit shifts of ptxas's bfe / bfi sequences: an amount of 64 shifts all out. */
static inline uint64_t shl64(uint64_t x, uint32_t n)
{
    return n >= 64 ? 0 : x << n;
}

static inline uint64_t shr64(uint64_t x, uint32_t n)
{
    return n >= 64 ? 0 : x >> n;
}

/* bfe.{u64,s64} as ptxas lowers it (sm90.h): P = pos, L = len clamped to 64;
 * v = (a >> P) & (2^L - 1), the shift arithmetic for .s64; .s64 sets the bits
 * from L up when bit L - 1 of v is set (L = 0: none). */
static uint64_t bfe64(uint64_t a, uint64_t pos, uint64_t len, int sg)
{
    const uint32_t P = sm90_bf64_amount(pos), L = sm90_bf64_amount(len);
    const uint64_t mask = shl64(1, L) - 1;
    uint64_t v;
    if (sg)
        v = (uint64_t)((int64_t)a >> (P > 63 ? 63 : P)) & mask;
    else
        v = shr64(a, P) & mask;
    if (sg && shr64(v, sm90_bf64_amount((uint32_t)len - 1u)))
        v |= ~mask;
    return v;
}

/* bfe.type d, a, b, c: c bits of a from bit b (each the low 8 bits of its
 * operand), zero- or sign-extended; a field past the top repeats the sign.
 * 64-bit: bfe64. */
void sem_bfe(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const unsigned w = (unsigned)sem_type_bits(k->at);
    const int sg = sem_type_is_signed(k->at);
    const uint64_t m = w >= 64 ? ~0ull : (1ull << w) - 1;
    if (w == 64) {
        for (size_t i = 0; i < n; i++)
            d[0][i] = bfe64(s[0][i], s[1][i], s[2][i], sg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t a = s[0][i] & m;
        uint32_t pos = (uint32_t)(s[1][i] & 0xFF), len = (uint32_t)(s[2][i] & 0xFF);
        uint64_t r = 0;
        if (len) {
            uint32_t msb = pos + len - 1 < w - 1 ? pos + len - 1 : w - 1;
            int sbit = sg ? (int)((a >> msb) & 1) : 0;
            for (uint32_t j = 0; j < w; j++) {
                uint64_t bit = j < len && pos + j < w ? (a >> (pos + j)) & 1 : (uint64_t)sbit;
                r |= bit << j;
            }
        }
        d[0][i] = r;
    }
}

/* bfi.type d, f, b, c, e: b with the e low bits of f put in from bit c (both the
 * low 8 bits of their operand); bits past the top are dropped. .b64 as ptxas
 * lowers it (sm90.h): c and e clamped to 64, mask = (2^e - 1) << c. */
void sem_bfi(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const unsigned w = (unsigned)sem_type_bits(k->at);
    if (w == 64) {
        for (size_t i = 0; i < n; i++) {
            const uint32_t P = sm90_bf64_amount(s[2][i]), L = sm90_bf64_amount(s[3][i]);
            const uint64_t mask = shl64(shl64(1, L) - 1, P);
            d[0][i] = (s[1][i] & ~mask) | (shl64(s[0][i], P) & mask);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t f = s[0][i], r = s[1][i];
        uint32_t pos = (uint32_t)(s[2][i] & 0xFF), len = (uint32_t)(s[3][i] & 0xFF);
        for (uint32_t j = 0; j < len && pos + j < w; j++)
            r = (r & ~(1ull << (pos + j))) | (((f >> j) & 1) << (pos + j));
        d[0][i] = r & (w >= 64 ? ~0ull : (1ull << w) - 1);
    }
}

/* bmsk.{clamp,wrap}.b32 d, a, b: b one bits from bit a. .wrap takes a and b
 * modulo 32; .clamp caps them at 32. */
void sem_bmsk(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t a = (uint32_t)s[0][i], b = (uint32_t)s[1][i];
        if (k->flags & SEM_F_WRAP) {
            a &= 31;
            b &= 31;
        } else {
            a = a > 32 ? 32 : a;
            b = b > 32 ? 32 : b;
        }
        uint64_t ones = b >= 32 ? 0xFFFFFFFFull : (1ull << b) - 1;
        d[0][i] = (uint32_t)((ones << a) & 0xFFFFFFFFull);
    }
}

/* szext.{clamp,wrap}.{u32,s32} d, a, b: the low b bits of a, zero- (u32) or
 * sign-extended (s32); .wrap takes b modulo 32, .clamp caps it at 32. */
void sem_szext(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const int sg = sem_type_is_signed(k->at);
    for (size_t i = 0; i < n; i++) {
        uint32_t a = (uint32_t)s[0][i], b = (uint32_t)s[1][i];
        b = (k->flags & SEM_F_WRAP) ? b & 31 : (b > 32 ? 32 : b);
        uint32_t r;
        if (b >= 32)
            r = a;
        else if (!b)
            r = 0;
        else if (sg)
            r = (uint32_t)((int32_t)(a << (32 - b)) >> (32 - b));
        else
            r = a & ((1u << b) - 1);
        d[0][i] = r;
    }
}

/* slct.dtype.ctype d, a, b, c: a if c >= 0 else b (c .s32, or .f32 where
 * -0 counts as >= 0, a NaN as < 0; .ftz flushes a subnormal c). */
void sem_slct(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)s[2][i];
        int ge;
        if (k->at == SEM_T_F32) {
            if ((c & 0x7FFFFFFFu) > 0x7F800000u)
                ge = 0;
            else if ((k->flags & SEM_F_FTZ) && !(c & 0x7F800000u))
                ge = 1;                                   /* a flushed subnormal is a zero */
            else
                ge = !(c >> 31) || !(c & 0x7FFFFFFFu);
        } else {
            ge = (int32_t)c >= 0;
        }
        d[0][i] = ge ? s[0][i] : s[1][i];
    }
}

/* fns.b32 d, mask, base, offset (9.7.1.17): offset 0 asks whether bit base is set; else
 * the |offset|-th set bit counting from base (itself included) upward for a positive
 * offset, downward for a negative one; 0xFFFFFFFF if there is none. A base above 31 is
 * undefined in the ISA: here no bit is found from it. */
void sem_fns(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    (void)k;
    for (size_t i = 0; i < n; i++) {
        const uint32_t mask = (uint32_t)s[0][i], base = (uint32_t)s[1][i];
        const int32_t off = (int32_t)(uint32_t)s[2][i];
        uint32_t r = 0xFFFFFFFFu;
        if (off == 0) {
            if (base < 32 && ((mask >> base) & 1))
                r = base;
        } else {
            int64_t count = (off > 0 ? (int64_t)off : -(int64_t)off) - 1;
            const int inc = off > 0 ? 1 : -1;
            for (int64_t pos = base; pos >= 0 && pos < 32; pos += inc)
                if ((mask >> pos) & 1) {
                    if (count == 0) {
                        r = (uint32_t)pos;
                        break;
                    }
                    count--;
                }
        }
        d[0][i] = r;
    }
}
