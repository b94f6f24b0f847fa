/* hazard.c - rule ids and the raise-or-record sink (see hazard.h). */
#include "hazard.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const IDS[PA_HZ_COUNT] = {
    [PA_HZ_UNINITIALISED] = "mbarrier-uninitialised",
    [PA_HZ_INIT_VALID] = "mbarrier-init-valid",
    [PA_HZ_TX_RANGE] = "tx-range",
    [PA_HZ_OVER_ARRIVAL] = "over-arrival",
    [PA_HZ_NO_COMPLETE] = "nocomplete-completes",
    [PA_HZ_TX_OVERDELIVERED] = "tx-overdelivered",
    [PA_HZ_PHASE_UNOBSERVED] = "phase-unobserved",
    [PA_HZ_MISSED_PHASE] = "missed-phase",
    [PA_HZ_REINIT_PENDING] = "reinit-pending",
    [PA_HZ_SOURCE_CHANGED] = "source-changed",
    [PA_HZ_DESTINATION_CHANGED] = "destination-changed",
    [PA_HZ_DESTINATION_READ] = "destination-read",
    [PA_HZ_DESTINATION_OVERLAP] = "destination-overlap",
    [PA_HZ_WAIT_UNCOMMITTED] = "wait-uncommitted",
    [PA_HZ_NEVER_WAITED] = "never-waited",
    [PA_HZ_DEADLOCK] = "deadlock",
    [PA_HZ_TX_WRONG_PHASE] = "tx-wrong-phase",
    [PA_HZ_TENSOR_SOURCE_CHANGED] = "tensor-source-changed",
    [PA_HZ_TENSOR_DESTINATION_CHANGED] = "tensor-destination-changed",
    [PA_HZ_GLOBAL_WRITE_OVERLAP] = "global-write-overlap",
    [PA_HZ_DATA_RACE] = "data-race",
    [PA_HZ_PROXY_FENCE] = "proxy-fence-missing",
    [PA_HZ_TENSORMAP_FENCE] = "tensormap-fence-missing",
    [PA_HZ_MBAR_INIT_ORDER] = "mbarrier-init-unordered",
    [PA_HZ_WGMMA_PENDING] = "wgmma-pending",
    [PA_HZ_SAME_VALUE_STORE] = "same-value-store",
    [PA_HZ_DISCARD_READ] = "discard-read",
};

const char *pa_rule_id(int rule)
{
    return rule >= 0 && rule < PA_HZ_COUNT ? IDS[rule] : NULL;
}

int pa_rule_parse(const char *id)
{
    for (int r = 0; r < PA_HZ_COUNT; r++)
        if (!strcmp(IDS[r], id))
            return r;
    return -1;
}

void pa_hazards_free(pa_hazards *h)
{
    free(h->recs);
    h->recs = NULL;
    h->n = h->cap = h->dropped = 0;
}

void pa_hazards_clear(pa_hazards *h)
{
    h->n = h->dropped = 0;
}

static uint64_t stamp(pa_hazards *h, pa_rule rule)
{
    return h->trace ? pa_trace_add(h->trace, PA_EV_HAZARD, PA_NO_THREAD, PA_NO_THREAD, PA_NO_OP, 0, 0, 0,
                                   (uint64_t)rule, 0)
                    : 0;
}

static void record(pa_hazards *h, pa_rule rule, const char *msg)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        pa_hazard_record *r = realloc(h->recs, cap * sizeof *r);
        if (!r) {
            h->dropped++;
            return;
        }
        h->recs = r;
        h->cap = cap;
    }
    pa_hazard_record *r = &h->recs[h->n++];
    r->rule = rule;
    r->time = stamp(h, rule);
    snprintf(r->msg, sizeof r->msg, "%s", msg);
}

static int report(pa_hazards *h, pa_error *err, int fatal, pa_rule rule, const char *fmt, va_list ap)
{
    char msg[PA_ERRMSG_LEN];
    int k = snprintf(msg, sizeof msg, "[%s] ", IDS[rule]);
    vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
    if (h && h->report) {
        record(h, rule, msg);
        if (!fatal)
            return PA_OK;
    } else if (h) {
        stamp(h, rule);
    }
    return pa_fail_rule(err, PA_ERR_HAZARD, IDS[rule], "%s", msg + k);
}

int pa_hazard(pa_hazards *h, pa_error *err, pa_rule rule, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = report(h, err, 0, rule, fmt, ap);
    va_end(ap);
    return rc;
}

int pa_hazard_fatal(pa_hazards *h, pa_error *err, pa_rule rule, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = report(h, err, 1, rule, fmt, ap);
    va_end(ap);
    return rc;
}

void pa_hazard_note(pa_hazards *h, const pa_error *err)
{
    if (!h || !h->report || !err || !err->rule)
        return;
    int rule = pa_rule_parse(err->rule);
    if (rule >= 0)
        record(h, (pa_rule)rule, err->msg);
}

void pa_hazard_note_rule(pa_hazards *h, pa_rule rule, const char *text)
{
    if (!h || !h->report)
        return;
    char msg[PA_ERRMSG_LEN];
    snprintf(msg, sizeof msg, "[%s] %s", IDS[rule], text);
    record(h, rule, msg);
}
