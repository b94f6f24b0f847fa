/* attach.c - the checker put on a machine: the queue's hooks pointed at the
 * memory checks (checker.c) and the mbarrier state (sync.c), and run / step /
 * finish that end with the deadlock and never-waited reports. The one file
 * that calls both sides, so neither calls the other. */
#include "hb.h"
#include "watch.h"

#include <stdlib.h>

int pa_watch_attach(pa_machine *m, pa_error *err)
{
    if (m->watch)
        return PA_OK;
    m->watch = calloc(1, sizeof *m->watch);
    if (!m->watch)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the hazard checker");
    m->watch->hz.trace = &m->watch->trace;
    m->watch->cur_op = PA_NO_OP;
    m->watch->cur_cta = m->watch->cur_thread = PA_NO_THREAD;
    m->hooks.ctx = m->watch;
    m->hooks.on_issue = pa_check_on_issue;
    m->hooks.on_read = pa_check_on_read;
    m->hooks.on_complete = pa_check_on_complete;
    m->hooks.on_done = pa_check_on_done;
    pa_pend_attach(m);
    return PA_OK;
}

void pa_watch_free(pa_machine *m)
{
    if (!m->watch)
        return;
    pa_hazards_free(&m->watch->hz);
    pa_trace_free(&m->watch->trace);
    free(m->watch->waiters);
    free(m->watch->widx);
    free(m->watch->bidx);
    free(m->watch->tslot);
    pa_check_free(m->watch);
    free(m->watch->discards);
    pa_hb_free(m->watch->hb);
    free(m->watch);
    m->watch = NULL;
}

static int on_signal(void *ctx, pa_machine *m, size_t slot, uint64_t tx, int op_arrive, uint64_t seq,
                     uint32_t cta, uint32_t thread, pa_error *err)
{
    (void)ctx;
    return op_arrive ? pa_sync_op_arrive(m, slot, seq, cta, thread, err) : pa_sync_credit(m, slot, tx, err);
}

static int on_group(void *ctx, pa_machine *m, uint32_t ti, int cp_async, int wait, uint32_t n, int read_only,
                    pa_error *err)
{
    (void)ctx;
    if (!wait) {
        pa_check_commit(m, ti, cp_async);
        return PA_OK;
    }
    return pa_check_wait_group(m, ti, cp_async, n, read_only, err);
}

static void on_free(void *ctx, pa_machine *m)
{
    (void)ctx;
    pa_watch_free(m);
}

void pa_watch_hooks(pa_machine *m)
{
    m->hooks.on_signal = on_signal;
    m->hooks.on_group = on_group;
    m->hooks.on_free = on_free;
}

int pa_watch_step(pa_machine *m, int *done, pa_error *err)
{
    int rc = pa_machine_step(m, done, err);
    return rc || *done ? rc : pa_sync_check_deadlock(m, err);
}

int pa_watch_run(pa_machine *m, pa_error *err)
{
    int rc = pa_machine_run(m, err);
    return rc ? rc : pa_sync_check_deadlock(m, err);
}

int pa_watch_finish(pa_machine *m, pa_error *err)
{
    int rc = pa_check_finish(m, err);
    return rc ? rc : pa_watch_run(m, err);
}
