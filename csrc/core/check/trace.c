/* trace.c - the event log (see trace.h). */
#include "trace.h"

#include <stdlib.h>

static const char *const NAMES[PA_EV_COUNT] = {
    "issue", "read", "write", "init", "inval", "arrive", "expect_tx", "complete_tx",
    "phase", "wait", "commit_group", "wait_group", "hazard", "fence", "barrier",
};

const char *pa_event_name(int kind)
{
    return kind >= 0 && kind < PA_EV_COUNT ? NAMES[kind] : NULL;
}

void pa_trace_free(pa_trace *t)
{
    free(t->ev);
    t->ev = NULL;
    t->n = t->cap = t->dropped = 0;
}

void pa_trace_clear(pa_trace *t)
{
    t->n = t->dropped = 0;
}

uint64_t pa_trace_record(pa_trace *t, pa_event_kind kind, uint32_t cta, uint32_t thread, uint64_t op,
                         uint32_t rank, uint32_t addr, uint8_t space, uint64_t a, uint64_t b)
{
    uint64_t now = t->clock++;
    if (!t->enabled)
        return now;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        pa_event *e = realloc(t->ev, cap * sizeof *e);
        if (!e) {
            t->dropped++;
            return now;
        }
        t->ev = e;
        t->cap = cap;
    }
    pa_event *e = &t->ev[t->n++];
    e->time = now;
    e->kind = (uint8_t)kind;
    e->cta = cta;
    e->thread = thread;
    e->op = op;
    e->rank = rank;
    e->addr = addr;
    e->space = space;
    e->a = a;
    e->b = b;
    return now;
}
