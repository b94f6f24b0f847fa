/* machine.c - a machine assembled: the queue (engine/queue.h) with the
 * checker's signal, group and free hooks (check/watch.h), so the queue and
 * the engines call the checker without naming it. */
#include "engine.h"
#include "check/watch.h"

int pa_machine_init(pa_machine *m, uint32_t nctas, uint32_t smem_bytes, pa_error *err)
{
    int rc = pa_queue_init(m, nctas, smem_bytes, err);
    pa_watch_hooks(m);   /* also on failure: pa_machine_free then frees what init made */
    return rc;
}
