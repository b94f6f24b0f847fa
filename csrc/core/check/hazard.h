/* hazard.h - the undefined behaviour the model can observe, as named rules.
 *
 * Every check reports through pa_hazard: in raise mode (the default) it fails
 * the operation with PA_ERR_HAZARD; in report mode it records the hazard and
 * lets the operation go on as the hardware would (where that is known). A few
 * rules end the program whatever the mode (the hardware faults, or the model
 * cannot say what follows): those use pa_hazard_fatal.
 *
 * Messages start with the rule's id in brackets, "[tx-overdelivered] ...", so
 * an exception names the rule it broke. docs/hazards.md has one row per rule.
 */
#ifndef PA_CHECK_HAZARD_H
#define PA_CHECK_HAZARD_H

#include "../types.h"
#include "trace.h"

typedef enum {
    PA_HZ_UNINITIALISED = 0,  /* an mbarrier operation on no valid mbarrier object */
    PA_HZ_INIT_VALID,         /* mbarrier.init on a valid mbarrier object */
    PA_HZ_TX_RANGE,           /* tx-count leaves [-(2^20-1), 2^20-1] */
    PA_HZ_OVER_ARRIVAL,       /* more arrivals than pending in the phase */
    PA_HZ_NO_COMPLETE,        /* .noComplete arrive completes the phase */
    PA_HZ_TX_OVERDELIVERED,   /* more bytes delivered to a phase than expected */
    PA_HZ_PHASE_UNOBSERVED,   /* arrive in phase k+1 before a wait saw phase k complete */
    PA_HZ_MISSED_PHASE,       /* a waiter two phases behind: its parity aliases */
    PA_HZ_REINIT_PENDING,     /* init / inval while operations that signal it are pending */
    PA_HZ_SOURCE_CHANGED,     /* a pending operation's source written before its read */
    PA_HZ_DESTINATION_CHANGED,/* a pending destination written by someone else */
    PA_HZ_DESTINATION_READ,   /* a pending destination read before completion */
    PA_HZ_DESTINATION_OVERLAP,/* two unordered pending operations write the same bytes */
    PA_HZ_WAIT_UNCOMMITTED,   /* wait_group while the thread's operations are in no group */
    PA_HZ_NEVER_WAITED,       /* operations the issuing thread never waited for */
    PA_HZ_DEADLOCK,           /* a blocked wait nothing pending can release */
    PA_HZ_TX_WRONG_PHASE,     /* an operation's bytes credited to a later phase than its issue's */
    PA_HZ_TENSOR_SOURCE_CHANGED,      /* a pending tensor load's global box written before it read it */
    PA_HZ_TENSOR_DESTINATION_CHANGED, /* a pending tensor store's global rows written by someone else */
    PA_HZ_GLOBAL_WRITE_OVERLAP,       /* pending writes of the same global bytes, one a tensor copy */
    PA_HZ_DATA_RACE,          /* two accesses to the same bytes, one a write, not ordered by happens-before */
    PA_HZ_PROXY_FENCE,        /* a write then an access through another proxy with no fence.proxy.async between */
    PA_HZ_TENSORMAP_FENCE,    /* a tensor map written in the generic proxy, used with no tensormap fences */
    PA_HZ_MBAR_INIT_ORDER,    /* an operation signals an mbarrier whose init is not ordered before its issue */
    PA_HZ_WGMMA_PENDING,      /* a register of a wgmma.mma_async no wgmma.wait_group has retired, accessed */
    PA_HZ_SAME_VALUE_STORE,   /* two unordered plain stores of the same bytes with the same values (recorded,
                                 never raised; only where pa_hb_set_same_value asks for it) */
    PA_HZ_DISCARD_READ,       /* a read of bytes a discard left indeterminate, before a write */
    PA_HZ_COUNT
} pa_rule;

typedef struct {
    pa_rule rule;
    uint64_t time;               /* logical time of its "hazard" trace event */
    char msg[PA_ERRMSG_LEN];
} pa_hazard_record;

typedef struct {
    int report;                  /* 0: raise, 1: collect */
    pa_trace *trace;             /* each hazard is an event of it (and takes its time) */
    pa_hazard_record *recs;
    size_t n, cap;
    size_t dropped;              /* records lost to a failed allocation */
} pa_hazards;

/* "tx-overdelivered"; NULL past the end. */
const char *pa_rule_id(int rule);
/* Rule by id, -1 if unknown. */
int pa_rule_parse(const char *id);

void pa_hazards_free(pa_hazards *h);
void pa_hazards_clear(pa_hazards *h);

/* Report a hazard of `rule` ("[id] " + message). h NULL or raise mode:
 * returns PA_ERR_HAZARD with err set; report mode: records it, returns PA_OK. */
int pa_hazard(pa_hazards *h, pa_error *err, pa_rule rule, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The same, failing in either mode (recorded too in report mode). */
int pa_hazard_fatal(pa_hazards *h, pa_error *err, pa_rule rule, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Record, in report mode, a hazard that already failed an operation (err's
 * message starts with "[id] "), or one given by rule and text. */
void pa_hazard_note(pa_hazards *h, const pa_error *err);
void pa_hazard_note_rule(pa_hazards *h, pa_rule rule, const char *text);

#endif
