/* wgmma_ext.h - how lower_coll.c records a wgmma.mma_async in a pi_ext, for
 * the run (mma_exec.c) and the pending-operation checks (wgpend.c) alike.
 */
#ifndef PA_PTX_WGMMA_EXT_H
#define PA_PTX_WGMMA_EXT_H

/* wgmma.mma_async as lower_coll.c records it: flags PI_WG_*, info[0] atype |
 * btype << 16, info[1] dtype | k << 16, s3 N, s0 the A descriptor (PI_NOREG:
 * A from registers regs[0..3]), s1 B's descriptor, s2 scale-d, vregs[vbase ..]
 * the accumulators. */
enum {
    PI_WG_NEG_A = 1, PI_WG_NEG_B = 2, PI_WG_TRANS_A = 4, PI_WG_TRANS_B = 8,
    PI_WG_SATFINITE = 16, PI_WG_AND = 32, PI_WG_AREG = 64,
    PI_WG_SP = 128,              /* wgmma.mma_async.sp: regs[4] the metadata register, sub the selector */
};

#endif
