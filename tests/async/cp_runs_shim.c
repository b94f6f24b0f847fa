/* cp_runs_shim.c - a C machine with nothing hung on its queue (the one
 * where cp.async runs become one record, csrc/core/engine/cprun.c) behind a
 * flat interface for ctypes: test_cp_async_runs.py drives it. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    pa_machine m;
    pa_error e;
} sim;

sim *sim_new(uint32_t smem, int policy)
{
    sim *s = calloc(1, sizeof *s);
    if (!s || pa_machine_init(&s->m, 1, smem, &s->e)) {
        free(s);
        return NULL;
    }
    pa_machine_set_policy(&s->m, (pa_policy)policy, 1);
    return s;
}

void sim_free(sim *s)
{
    pa_machine_free(&s->m);
    free(s);
}

void sim_set_policy(sim *s, int policy) { pa_machine_set_policy(&s->m, (pa_policy)policy, 7); }

int sim_global(sim *s, uint64_t base, uint64_t size, void *data)
{
    uint64_t id;
    return pa_global_add(&s->m.global, base, size, data, &id, &s->e);
}

static pa_cp_async_args args(uint32_t cp, uint32_t src_size, int ignore, int cg)
{
    pa_cp_async_args a;
    memset(&a, 0, sizeof a);
    a.cp_size = cp;
    a.src_size = src_size;
    a.ignore_src = ignore;
    a.cg = cg;
    return a;
}

int sim_cp(sim *s, uint32_t thread, uint32_t dst, uint64_t src, uint32_t cp, uint32_t src_size, int ignore, int cg)
{
    pa_cp_async_args a = args(cp, src_size, ignore, cg);
    return pa_issue_cp_async(&s->m, 0, thread, dst, src, &a, &s->e);
}

int sim_run(sim *s, uint32_t thread, uint32_t dst, uint32_t dst_stride, uint64_t src, uint64_t src_stride, uint32_t n,
            uint32_t cp, uint32_t src_size, int ignore, int cg)
{
    pa_cp_async_args a = args(cp, src_size, ignore, cg);
    return pa_issue_cp_async_run(&s->m, 0, thread, dst, dst_stride, src, src_stride, n, &a, &s->e);
}

int sim_commit(sim *s, uint32_t thread) { return pa_cp_async_commit_group(&s->m, 0, thread, &s->e); }
int sim_wait(sim *s, uint32_t thread, uint32_t n) { return pa_cp_async_wait_group(&s->m, 0, thread, n, &s->e); }
int sim_step(sim *s, int *done) { return pa_machine_step(&s->m, done, &s->e); }
int sim_run_all(sim *s) { return pa_machine_run(&s->m, &s->e); }
uint64_t sim_pending(sim *s) { return s->m.nops; }
uint64_t sim_records(sim *s) { return s->m.all.n; }
uint64_t sim_issued(sim *s) { return s->m.next_seq; }
uint64_t sim_completed(sim *s) { return s->m.completed; }
uint8_t *sim_smem(sim *s) { return s->m.cluster.smem[0]; }
const char *sim_msg(sim *s) { return s->e.msg; }
int sim_code(sim *s) { return (int)s->e.code; }
