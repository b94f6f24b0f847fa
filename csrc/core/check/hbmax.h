/* hbmax.h - the join of two vector clocks' blocks (internal).
 *
 *     d: | 3 | 0 | 7 | 2 | ...        d[i] = max(d[i], s[i])
 *     s: | 1 | 5 | 7 | 9 | ...   ->   d: | 3 | 5 | 7 | 9 | ...
 *
 * A join runs at every mbarrier arrive, phase and wait the race checker
 * sees (hb.c), over every thread's entry of every kind in use: the loop of
 * a checked kernel. n is a multiple of 8 (hb.c sizes clocks so). The
 * vector level is pa_simd_level()'s at the call; every level computes the
 * same words.
 */
#ifndef PA_HBMAX_H
#define PA_HBMAX_H

#include <stddef.h>
#include <stdint.h>

void pa_hb_max_into(uint32_t *d, const uint32_t *s, size_t n);

#endif
