/* video_simd.c - the SIMD video instructions (PTX ISA 9.7.18.2), as the ISA's pseudocode
 * writes them: two half-word or four byte lanes, each an element of the pair {b, a}
 * chosen by asel / bsel and extended to 17 bits by atype / btype; the operation per lane;
 * .sat clamps a lane to the destination type's 16- or 8-bit range; then the mask's lanes
 * are merged into c (the others keep c's), or with .add summed onto c. */
#include "sem/video.h"

#include "sem/farith.h"

static int lanes_of(int op)
{
    return op >= SEM_OP_VADD4 ? 4 : 2;
}

/* the primary operation of a lane (vavrg rounds half away from zero: +1 before the shift
   when the sum is not negative) */
static int32_t lane_op(const sem_ctl *k, int32_t a, int32_t b)
{
    switch (k->op) {
    case SEM_OP_VADD2: case SEM_OP_VADD4: return a + b;
    case SEM_OP_VSUB2: case SEM_OP_VSUB4: return a - b;
    case SEM_OP_VAVRG2: case SEM_OP_VAVRG4: return a + b >= 0 ? (a + b + 1) >> 1 : (a + b) >> 1;
    case SEM_OP_VABSDIFF2: case SEM_OP_VABSDIFF4: return a > b ? a - b : b - a;
    case SEM_OP_VMIN2: case SEM_OP_VMIN4: return a < b ? a : b;
    case SEM_OP_VMAX2: case SEM_OP_VMAX4: return a > b ? a : b;
    default:                        /* vset2 / vset4 */
        return sem_icmp(k->aux, (uint64_t)(int64_t)a, (uint64_t)(int64_t)b, 64, 1);
    }
}

/* the element e of {b, a} (a's first), ew bits wide, extended as signed or not */
static int32_t element(uint64_t ba, int e, int ew, int sg)
{
    uint32_t v = (uint32_t)(ba >> (ew * e)) & ((1u << ew) - 1);
    if (sg && (v >> (ew - 1)))
        return (int32_t)v - (int32_t)(1u << ew);
    return (int32_t)v;
}

void sem_video_simd(const sem_ctl *k, uint64_t *const d[2], const uint64_t *const s[4], size_t n)
{
    const int L = lanes_of(k->op), ew = 32 / L;
    const int sa = sem_type_is_signed(k->at), sb = sem_type_is_signed(k->bt);
    const int vset = k->op == SEM_OP_VSET2 || k->op == SEM_OP_VSET4;
    const int sd = !vset && sem_type_is_signed(k->dt), sat = (k->flags & SEM_F_SAT) != 0;
    const uint32_t em = (1u << ew) - 1;
    int asel[4], bsel[4];
    for (int i = 0; i < L; i++) {     /* the defaults: a's lanes in order, b's in order */
        asel[i] = (k->imm & SEM_VID_A_SET) ? (int)(k->imm >> (3 * i)) & 7 : i;
        bsel[i] = (k->imm & SEM_VID_B_SET) ? (int)(k->imm >> (SEM_VID_B_SHIFT + 3 * i)) & 7 : L + i;
    }
    const unsigned mask = (k->imm & SEM_VID_MASK_SET) ? (k->imm >> SEM_VID_MASK_SHIFT) & 0xFu : (1u << L) - 1;
    const int32_t lo = sd ? -(int32_t)(1u << (ew - 1)) : 0, hi = sd ? (int32_t)(em >> 1) : (int32_t)em;
    for (size_t i = 0; i < n; i++) {
        const uint64_t ba = (s[1][i] & 0xFFFFFFFFu) << 32 | (s[0][i] & 0xFFFFFFFFu);
        const uint32_t c = (uint32_t)s[2][i];
        uint32_t r = k->aux2 == SEM_VOP2_ADD ? c : 0;
        for (int l = 0; l < L; l++) {
            int32_t t = lane_op(k, element(ba, asel[l], ew, sa), element(ba, bsel[l], ew, sb));
            if (sat)
                t = t < lo ? lo : t > hi ? hi : t;
            if (k->aux2 == SEM_VOP2_ADD)
                r += (mask >> l) & 1 ? (uint32_t)t : 0;
            else
                r |= (((mask >> l) & 1 ? (uint32_t)t : c >> (ew * l)) & em) << (ew * l);
        }
        d[0][i] = r;
    }
}
