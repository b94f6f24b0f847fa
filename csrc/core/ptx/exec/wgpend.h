/* wgpend.h - wgmma.mma_async operations a warpgroup has issued that no
 * wgmma.wait_group has retired, and the hazard of touching their registers
 * (wgpend.c). Kept only while the race checker is on.
 */
#ifndef PTX_WGPEND_H
#define PTX_WGPEND_H

#include "ptx/exec/launch.h"

/* One pending wgmma.mma_async: its instruction and its wgmma-group. */
typedef struct {
    uint32_t pc;                 /* its instruction (ext: registers; line: the report) */
    uint32_t group;              /* base + the commit_groups before it + 1 */
    int said;                    /* reported (report mode goes on: once is enough) */
} pi_wgop;

/* A warpgroup's pending operations, oldest first, and the registers they hold. */
typedef struct pi_wgpend {
    pi_wgop *ops;
    uint32_t n, cap;
    uint64_t *bits;              /* a bit per register of the program: named by a pending operation */
    uint32_t base;               /* group numbers of earlier CTAs in this slot (the race checker's epochs) */
} pi_wgpend;

/* Allocate L->wgp (race checker on) or leave it NULL; free it. */
int pi_wg_start(pi_launch_state *L, pa_error *err);
void pi_wg_free(pi_launch_state *L);
/* A new cluster: CTAs start in the slots (groups count on from the last ones). */
void pi_wg_restart(pi_launch_state *L);
/* The group a wgmma of the warpgroup whose first thread is `first` issues into. */
uint32_t pi_wg_group(const pi_launch_state *L, uint32_t cta, uint32_t first);
/* The warpgroup issued the wgmma at pc (after its operands were read). */
int pi_wg_issue(pi_launch_state *L, uint32_t cta, uint32_t first, uint32_t pc, pa_error *err);
/* wgmma.commit_group / wgmma.wait_group n of thread t. */
void pi_wg_commit(pi_launch_state *L, pi_thread *t);
void pi_wg_wait(pi_launch_state *L, pi_thread *t, uint32_t n);
/* Thread t (t->wg_watch) is about to run `in`: PA_OK, or the wgmma-pending hazard. */
int pi_wg_check(pi_launch_state *L, pi_thread *t, const pi_ins *in, pa_error *err);

#endif
