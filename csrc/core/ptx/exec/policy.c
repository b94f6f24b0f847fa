/* policy.c - the 64-bit value createpolicy.fractional returns, as an H200 gives it.
 *
 * Bits 56-63: 0x10 | primary priority (evict_unchanged 0, evict_first 2, evict_normal 6, evict_last
 * 4) | 1 for a secondary evict_first (tests/data/isa/createpolicy.json); bits 52-55: how many of
 * fifteen thresholds the fraction reaches. Each threshold is a little above a sixteenth (about
 * j/16 * 1.000625; no closed rule of the recorded ones was found exact), so the field is the
 * fraction in sixteenths rounded up, less one, with a margin: the first f32 that reaches each one
 * is recorded (tools/device/record_policy_forms.py: every f32 within 2^15 ulps of each sixteenth
 * and one in 64 of all others in [2^-20, 1], 3.6 million values; the immediate fractions of
 * createpolicy.json agree). An immediate and a register fraction give the same value.
 */
#include "ptx/exec/lower_int.h"

#include <string.h>

static const uint32_t THRESHOLD[15] = {
    0x3d80147f, 0x3e00147f, 0x3e401ebd, 0x3e80147f, 0x3ea0199e, 0x3ec01ebd, 0x3ee023dd, 0x3f00147f,
    0x3f10170e, 0x3f20199e, 0x3f301c2e, 0x3f401ebd, 0x3f50214d, 0x3f6023dd, 0x3f70266d,
};

int pi_policy_fraction_valid(uint32_t f32)
{
    return f32 > 0 && f32 <= 0x3F800000u;      /* (0, 1]: the ISA's valid range (positive, not NaN) */
}

uint64_t pi_policy_fractional(unsigned top, uint32_t f32)
{
    unsigned n = 0;
    while (n < 15 && f32 >= THRESHOLD[n])
        n++;
    return (uint64_t)top << 56 | (uint64_t)n << 52;
}

unsigned pi_policy_top(const parts *P)
{
    /* the first L2::evict_* qualifier is the primary priority, a second one the secondary */
    unsigned prim = 0, first = 0;
    for (int i = 1, seen = 0; i < P->n; i++) {
        const char *q = P->q[i];
        if (strncmp(q, "L2::evict_", 10))
            continue;
        if (seen++)
            first = !strcmp(q, "L2::evict_first");
        else
            prim = !strcmp(q, "L2::evict_last") ? 4 : !strcmp(q, "L2::evict_normal") ? 6 :
                   !strcmp(q, "L2::evict_first") ? 2 : 0;
    }
    return 0x10 | prim | first;
}
