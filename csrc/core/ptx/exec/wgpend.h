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

/* The functions on a launch's pending wgmma operations are declared in launch.h (the run loop
   calls them). */

#endif
