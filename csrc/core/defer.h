/* defer.h - a replay's tile-load bytes moved on several threads.
 *
 * Replaying an operation list (batch.h) with threads > 1 keeps every piece of
 * bookkeeping on the calling thread and in order: issue, completion order,
 * mbarrier tx counts and phases, the trace, every error. Only the bytes of
 * .tile loads are taken aside: a completing load that qualifies (below) is
 * recorded as a job, its mbarrier credited at once, and the jobs are copied
 * later, on the pool's threads, before anything could see the difference:
 *
 *   - before any other completion or source read (stores, reductions, bulk
 *     copies read or write memory a pending job reads or writes),
 *   - before any replayed operation that is not a load, an mbarrier
 *     arrive/expect_tx/wait, a commit or wait of a group, or a run
 *     (mbarrier.init writes shared memory, for one),
 *   - at the end of the replay, whether it succeeded or stopped at an error.
 *
 * The jobs of one flush read only global memory that nothing writes until it
 * ends; they write shared memory. Jobs whose destinations may overlap form a
 * lane, copied in issue order by one thread, so the last write wins as in
 * the sequential replay; a job that touches two lanes flushes first. The
 * shared-memory image after the replay is therefore the sequential one, byte
 * for byte.
 *
 * A load qualifies when its copy cannot fail: a .tile map of a whole-byte
 * type, and every byte of the tensor inside one registered buffer that is
 * not the model's shared memory. (A copy that could fault, midway, keeps
 * its place in the order and runs on the calling thread.) Under the memory
 * checks (Machine(checks=True), the adversarial policy) nothing is taken
 * aside: they compare bytes at every completion.
 */
#ifndef PA_DEFER_H
#define PA_DEFER_H

#include "engine.h"

/* Take loads aside on m, their bytes copied by `threads` threads (the caller
 * and threads - 1 workers). Nothing is taken (and PA_OK returned) if threads
 * < 2, the memory checks are on, or the workers cannot be started. */
int pa_defer_start(pa_machine *m, unsigned threads, pa_error *err);
/* Copy what is pending, stop the workers, stop taking loads aside. */
int pa_defer_stop(pa_machine *m, pa_error *err);
/* Copy every pending job now (no-op when m takes nothing aside). */
int pa_defer_flush(pa_machine *m, pa_error *err);
/* A completing load (tensor engine): *taken = 1 if its bytes will be copied
 * later; otherwise pending jobs are copied first and the caller copies. */
int pa_defer_load(pa_machine *m, const pa_op *op, int *taken, pa_error *err);

#endif
