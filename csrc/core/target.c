/* target.c - the table of which target has which feature. */
#include "target.h"

#include <stdio.h>
#include <string.h>

static const char *const names[PA_TARGET_COUNT] = {
    "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_101a", "sm_101f",
    "sm_103a", "sm_103f", "sm_110a", "sm_110f", "sm_120a", "sm_120f", "sm_121a",
};

/* One row per feature: its name, a bit per target that has it (1u << target),
 * and the phrase an error uses ("sm_100a or later"). */
typedef struct {
    const char *name;
    uint32_t targets;
    const char *needs;
} feature_row;

#define T(x) (1u << PA_TARGET_##x)
#define ALL_TARGETS ((1u << PA_TARGET_COUNT) - 1u)
#define SM100_UP (ALL_TARGETS & ~(T(SM_90) | T(SM_90A)))

static const feature_row features[PA_FEAT_COUNT] = {
    [PA_FEAT_TENSOR_COPY] = {"cp.async.bulk.tensor", ALL_TARGETS, "sm_90 or later"},
    /* PTX ISA cp.async.bulk: "Support for .cp_mask qualifier requires sm_100 or higher". */
    [PA_FEAT_BULK_CP_MASK] = {"cp.async.bulk .cp_mask", SM100_UP, "sm_100 or later"},
    /* PTX ISA st.bulk: "Requires sm_100 or higher". */
    [PA_FEAT_ST_BULK] = {"st.bulk", SM100_UP, "sm_100 or later"},
};

const char *pa_target_name(int t)
{
    return (t >= 0 && t < PA_TARGET_COUNT) ? names[t] : NULL;
}

int pa_target_parse(const char *name)
{
    for (int t = 0; t < PA_TARGET_COUNT; t++)
        if (strcmp(names[t], name) == 0)
            return t;
    return -1;
}

int pa_target_has(pa_target t, pa_feature f)
{
    if ((unsigned)t >= PA_TARGET_COUNT || (unsigned)f >= PA_FEAT_COUNT)
        return 0;
    return (features[f].targets >> t) & 1u;
}

const char *pa_feature_name(pa_feature f)
{
    return (unsigned)f < PA_FEAT_COUNT ? features[f].name : "unknown feature";
}

int pa_target_require(pa_target t, pa_feature f, pa_error *err)
{
    if (pa_target_has(t, f))
        return PA_OK;
    const char *tn = pa_target_name((int)t);
    return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "%s needs %s; this machine is %s",
                   pa_feature_name(f), (unsigned)f < PA_FEAT_COUNT ? features[f].needs : "?",
                   tn ? tn : "an unknown target");
}
