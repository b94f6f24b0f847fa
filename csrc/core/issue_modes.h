/* issue_modes.h - cp.async.bulk.prefetch.tensor on a machine.
 *
 * The prefetch is a hint to L2: it moves no data and signals nothing, so the
 * model completes it at issue. It is validated exactly like a load in the
 * same mode (the target gate, the issue-time faults, every in-bounds byte it
 * names must be global memory), and hands back what it would have fetched:
 * the in-bounds runs of global bytes, box row by box row.
 */
#ifndef PA_ISSUE_MODES_H
#define PA_ISSUE_MODES_H

#include "engine.h"
#include "modes.h"

/* cp.async.bulk.prefetch.tensor.Nd.L2.global{.load_mode} [map, coords]{, im2colInfo}:
 * info holds the .im2col offsets (W, H, D) or {wHalo, wOffset}; fn (may be
 * NULL) receives every run. */
int pa_issue_prefetch_tensor(pa_machine *m, const pa_tensormap *map, pa_load_mode mode,
                             const int32_t coords[PA_MAX_RANK], const uint16_t info[PA_MAX_RANK - 2],
                             pa_range_fn fn, void *ctx, pa_error *err);

#endif
