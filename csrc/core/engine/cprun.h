/* cprun.h - cp.async runs: what cpasync.c (one copy) and cprun.c (a run of
 * copies, and one record standing for them) share. */
#ifndef PA_ENGINE_CPRUN_H
#define PA_ENGINE_CPRUN_H

#include "../engine.h"

/* Every rule of one cp.async but the global source's: the CTA, cp-size,
 * src-size, prefetch size, both addresses' alignment, dst in the CTA's
 * shared memory (cpasync.c). */
int pa_cp_check(pa_machine *m, uint32_t cta, uint32_t dst, uint64_t src, const pa_cp_async_args *a,
                pa_error *err);

/* Queue the copy at dst / src, checked by the caller, as a record that
 * stands for it and `more` whole copies continuing it (cpasync.c; more > 0
 * only where pa_queue_runs_merge). */
int pa_cp_queue(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint64_t src, const pa_cp_async_args *a,
                uint32_t more, pa_error *err);

/* n more whole copies (src-size = cp-size) by (cta, thread) at dst / src,
 * each checked by the caller, that continue the run of the machine's newest
 * operation: that record grows by n and nothing is queued (1). 0: they do
 * not continue it, or single operations are watched; the caller queues them
 * (cpasync.c). */
int pa_cp_extend_run(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint64_t src,
                     const pa_cp_async_args *a, uint32_t n);

#endif
