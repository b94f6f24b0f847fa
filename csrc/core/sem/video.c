/* video.c - the scalar video instructions (PTX ISA 9.7.18.1), as the ISA's pseudocode
 * writes them: each source part selected and sign- or zero-extended to 33 bits
 * (partSelectSignExtend), the primary operation to a 34-bit intermediate, the clamp to
 * the destination's range (optSaturate), then a secondary operation with c (optSecOp)
 * or a merge of a byte / half-word into c (optMerge); the low 32 bits are written. */
#include "sem/video.h"

#include "sem/farith.h"

/* partSelectSignExtend: the word, byte or half-word `sel` of v, extended as signed or not. */
static int64_t part(uint64_t v, int sg, unsigned sel)
{
    uint32_t w = (uint32_t)v;
    if (sel >= SEM_VSEL_B0 && sel <= SEM_VSEL_B3) {
        uint32_t b = (w >> (8 * (sel - SEM_VSEL_B0))) & 0xFFu;
        return sg ? (int64_t)(int8_t)b : (int64_t)b;
    }
    if (sel == SEM_VSEL_H0 || sel == SEM_VSEL_H1) {
        uint32_t h = (w >> (16 * (sel - SEM_VSEL_H0))) & 0xFFFFu;
        return sg ? (int64_t)(int16_t)h : (int64_t)h;
    }
    return sg ? (int64_t)(int32_t)w : (int64_t)w;
}

static __int128 clamp(__int128 v, __int128 lo, __int128 hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* optSaturate: the range of the destination's type, of its byte / half-word when merged. */
static __int128 saturate(__int128 t, int sat, int sg, unsigned dsel)
{
    if (!sat)
        return t;
    int bits = dsel == SEM_VSEL_WORD ? 32 : dsel >= SEM_VSEL_H0 ? 16 : 8;
    if (sg)
        return clamp(t, -((__int128)1 << (bits - 1)), ((__int128)1 << (bits - 1)) - 1);
    return clamp(t, 0, ((__int128)1 << bits) - 1);
}

/* optSecOp / optMerge (c extended as dtype says), the low 32 bits. */
static uint32_t finish(const sem_ctl *k, __int128 t, int csg, uint64_t c_reg, unsigned dsel)
{
    const int64_t c = part(c_reg, csg, SEM_VSEL_WORD);
    const uint32_t c32 = (uint32_t)c_reg, r = (uint32_t)(uint64_t)t;
    switch (k->aux2) {
    case SEM_VOP2_ADD: return (uint32_t)(uint64_t)(t + c);
    case SEM_VOP2_MIN: return (uint32_t)(uint64_t)(t < c ? t : c);
    case SEM_VOP2_MAX: return (uint32_t)(uint64_t)(t > c ? t : c);
    default: break;
    }
    switch (dsel) {
    case SEM_VSEL_H0: return (r & 0xFFFFu) | (c32 & 0xFFFF0000u);
    case SEM_VSEL_H1: return (r & 0xFFFFu) << 16 | (c32 & 0x0000FFFFu);
    case SEM_VSEL_B0: case SEM_VSEL_B1: case SEM_VSEL_B2: case SEM_VSEL_B3: {
        unsigned sh = 8 * (dsel - SEM_VSEL_B0);
        return (r & 0xFFu) << sh | (c32 & ~(0xFFu << sh));
    }
    default: return r;
    }
}

/* The steps every scalar form shares, around its primary operation `op` on ta, tb. */
#define SCALAR_VIDEO(name, expr)                                                                     \
    void name(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)         \
    {                                                                                              \
        const int sa = sem_type_is_signed(k->at), sb = sem_type_is_signed(k->bt);                  \
        const int sd = sem_type_is_signed(k->dt), sat = (k->flags & SEM_F_SAT) != 0;               \
        const unsigned as = SEM_VID_ASEL(k->imm), bs = SEM_VID_BSEL(k->imm), ds = SEM_VID_DSEL(k->imm); \
        const int with_c = k->aux2 != SEM_VOP2_NONE || ds != SEM_VSEL_WORD;                        \
        for (size_t i = 0; i < n; i++) {                                                           \
            const __int128 ta = part(s[0][i], sa, as), tb = part(s[1][i], sb, bs);                 \
            __int128 t = (expr);                                                                   \
            t = saturate(t, sat, sd, ds);                                                          \
            d[0][i] = finish(k, t, sd, with_c ? s[2][i] : 0, ds);                                  \
        }                                                                                          \
    }

SCALAR_VIDEO(sem_vadd, ta + tb)
SCALAR_VIDEO(sem_vsub, ta - tb)
SCALAR_VIDEO(sem_vabsdiff, ta > tb ? ta - tb : tb - ta)
SCALAR_VIDEO(sem_vmin, ta < tb ? ta : tb)
SCALAR_VIDEO(sem_vmax, ta > tb ? ta : tb)

/* vshl / vshr: b is read as .u32 (bsel applies), clamped to 32 or wrapped to 0-31; a right
   shift of a signed a fills with its sign (ta is extended, >> is arithmetic). */
static __int128 shift_amount(const sem_ctl *k, __int128 tb)
{
    return (k->flags & SEM_F_WRAP) ? (tb & 0x1F) : (tb > 32 ? 32 : tb);
}
SCALAR_VIDEO(sem_vshl, ta * ((__int128)1 << shift_amount(k, tb)))
SCALAR_VIDEO(sem_vshr, ta >> shift_amount(k, tb))

/* vset: compare(ta, tb) as 1 or 0; the result, d and c are unsigned (9.7.18.1.4), no .sat. */
static int compare(int cmp, __int128 a, __int128 b)      /* 33-bit values: they fit in 64 */
{
    return sem_icmp(cmp, (uint64_t)(int64_t)a, (uint64_t)(int64_t)b, 64, 1);
}

void sem_vset(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const int sa = sem_type_is_signed(k->at), sb = sem_type_is_signed(k->bt);
    const unsigned as = SEM_VID_ASEL(k->imm), bs = SEM_VID_BSEL(k->imm), ds = SEM_VID_DSEL(k->imm);
    const int with_c = k->aux2 != SEM_VOP2_NONE || ds != SEM_VSEL_WORD;
    for (size_t i = 0; i < n; i++) {
        const __int128 t = compare(k->aux, part(s[0][i], sa, as), part(s[1][i], sb, bs));
        d[0][i] = finish(k, t, 0, with_c ? s[2][i] : 0, ds);
    }
}

/* vmad (9.7.18.1.3): (a*b) + c with the product or c negated (neg bits 0-1 / 2: one's
   complement plus one), .po's + 1, the scale's right shift, and .sat to the final sign's
   32-bit range; the final result is signed when a type is or an operand is negated. */
void sem_vmad(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const int sa = sem_type_is_signed(k->at), sb = sem_type_is_signed(k->bt);
    const unsigned as = SEM_VID_ASEL(k->imm), bs = SEM_VID_BSEL(k->imm);
    const int neg_ab = ((k->neg >> 0) ^ (k->neg >> 1)) & 1, neg_c = (k->neg >> 2) & 1;
    const int sfinal = sa || sb || neg_ab || neg_c, sat = (k->flags & SEM_F_SAT) != 0;
    for (size_t i = 0; i < n; i++) {
        unsigned __int128 t = (unsigned __int128)((__int128)part(s[0][i], sa, as) * part(s[1][i], sb, bs));
        uint32_t c = (uint32_t)s[2][i];
        unsigned lsb = 0;
        if (k->flags & SEM_F_PO)
            lsb = 1;
        else if (neg_ab)
            t = ~t, lsb = 1;
        else if (neg_c)
            c = ~c, lsb = 1;
        t += sfinal ? (unsigned __int128)(__int128)(int32_t)c : (unsigned __int128)c;
        t += lsb;
        if (k->aux)
            t = sfinal ? (unsigned __int128)((__int128)t >> k->aux) : t >> k->aux;
        uint64_t r = (uint64_t)t;
        if (sat)
            r = sfinal ? (uint64_t)(int64_t)clamp((int64_t)r, INT32_MIN, INT32_MAX) : (r > UINT32_MAX ? UINT32_MAX : r);
        d[0][i] = (uint32_t)r;
    }
}

sem_fn sem_video_fn(int op)
{
    switch (op) {
    case SEM_OP_VADD: return sem_vadd;
    case SEM_OP_VSUB: return sem_vsub;
    case SEM_OP_VABSDIFF: return sem_vabsdiff;
    case SEM_OP_VMIN: return sem_vmin;
    case SEM_OP_VMAX: return sem_vmax;
    case SEM_OP_VSHL: return sem_vshl;
    case SEM_OP_VSHR: return sem_vshr;
    case SEM_OP_VSET: return sem_vset;
    case SEM_OP_VMAD: return sem_vmad;
    case SEM_OP_VADD2: case SEM_OP_VSUB2: case SEM_OP_VAVRG2: case SEM_OP_VABSDIFF2: case SEM_OP_VMIN2:
    case SEM_OP_VMAX2: case SEM_OP_VSET2: case SEM_OP_VADD4: case SEM_OP_VSUB4: case SEM_OP_VAVRG4:
    case SEM_OP_VABSDIFF4: case SEM_OP_VMIN4: case SEM_OP_VMAX4: case SEM_OP_VSET4:
        return sem_video_simd;
    default: return 0;
    }
}
