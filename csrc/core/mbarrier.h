/* mbarrier.h - the mbarrier object: phase, arrival counts, tx-count.
 *
 * The state machine every recorded wait and pending_count follows
 * (golden/README.md R6-R9):
 *   init(n):        phase 0, expected E = pending P = n, tx T = 0
 *   expect_tx(x):   T += x            complete_tx(x): T -= x
 *   arrive(c):      P -= c  (.expect_tx forms first add their tx to T;
 *                            arrive_drop also does E -= c)
 *   after every operation: if P == 0 and T == 0, the phase completes once
 *                          (phase += 1, P = E).
 *   test_wait/try_wait.parity p  =  (phase mod 2) != p
 *   test_wait/try_wait with a state: the same, p = parity of the state's phase
 * Ranges (PTX ISA, mbarrier contents): 1 <= E <= 2^20-1, 0 <= P, |T| <= 2^20-1;
 * leaving them is undefined behaviour, reported here as PA_ERR_HAZARD.
 */
#ifndef PA_MBARRIER_H
#define PA_MBARRIER_H

#include "types.h"

#define PA_MBAR_MAX_COUNT ((1 << 20) - 1)
#define PA_MBAR_MAX_TX ((1 << 20) - 1)

typedef struct {
    int valid;          /* initialised and not invalidated */
    uint64_t phase;     /* completed phases so far */
    int32_t expected;   /* E */
    int32_t pending;    /* P */
    int32_t tx;         /* T, signed */
} pa_mbarrier;

int pa_mbar_init(pa_mbarrier *b, uint32_t count, pa_error *err);
void pa_mbar_inval(pa_mbarrier *b);

/* Qualifiers of the arrive forms (flags of pa_mbar_arrive). */
#define PA_MBAR_DROP 1u        /* arrive_drop: also lowers the expected count (R11) */
#define PA_MBAR_NO_COMPLETE 2u /* .noComplete: must not complete the phase (PTX: else undefined) */

/* Arrive-on with `count` arrivals, after adding `tx` to the tx-count
 * (.expect_tx forms); flags as above. *state receives the 64-bit state the
 * instruction returns (R9; bits 0-31 left 0: the hardware's do not follow the barrier). */
int pa_mbar_arrive(pa_mbarrier *b, uint32_t count, uint32_t tx, unsigned flags, uint64_t *state,
                   pa_error *err);
int pa_mbar_expect_tx(pa_mbarrier *b, uint32_t tx, pa_error *err);
/* cp.async.mbarrier.arrive without .noinc: the pending count is raised by 1
 * when the instruction executes (PTX: at most 2^20-1 afterwards, else undefined). */
int pa_mbar_pending_inc(pa_mbarrier *b, pa_error *err);
int pa_mbar_complete_tx(pa_mbarrier *b, uint32_t tx, pa_error *err);

/* 1 if the phase with the given parity has completed. */
int pa_mbar_test_parity(const pa_mbarrier *b, uint32_t parity);
/* The parity of the phase in which `state` was returned (bit 63, R9). */
uint32_t pa_mbar_state_parity(uint64_t state);
/* 1 if the phase in which `state` was returned has completed: compared by
 * parity only, so a state two phases back reads as open (R6, R7). */
int pa_mbar_test_state(const pa_mbarrier *b, uint64_t state);
/* pending_count of a state: P just before the arrive that returned it (R8). */
uint32_t pa_mbar_pending_count(uint64_t state);

#endif
