/* target.c - the table of which target has which feature. */
#include "target.h"

#include <stdio.h>
#include <string.h>

/* One row per target: its name, the architecture it runs on (sm_XY as XY), its kind
 * ('a' architecture-specific, 'f' family-specific, 0 baseline) and the most shared memory a
 * CTA may have there (CUDA C++ programming guide, "Technical Specifications per Compute
 * Capability": 163 KB on 8.0 and 8.7, 99 KB on 8.6, 8.9 and 12.x, 227 KB on 9.0, 10.x, 11.0). */
typedef struct {
    const char *name;
    int sm;
    char suffix;
    uint32_t smem_max;
} target_row;

#define KB 1024u
static const target_row targets[PA_TARGET_COUNT] = {
    [PA_TARGET_SM_90] = {"sm_90", 90, 0, 227 * KB},
    [PA_TARGET_SM_90A] = {"sm_90a", 90, 'a', 227 * KB},
    [PA_TARGET_SM_100] = {"sm_100", 100, 0, 227 * KB},
    [PA_TARGET_SM_100A] = {"sm_100a", 100, 'a', 227 * KB},
    [PA_TARGET_SM_100F] = {"sm_100f", 100, 'f', 227 * KB},
    [PA_TARGET_SM_101A] = {"sm_101a", 101, 'a', 227 * KB},
    [PA_TARGET_SM_101F] = {"sm_101f", 101, 'f', 227 * KB},
    [PA_TARGET_SM_103A] = {"sm_103a", 103, 'a', 227 * KB},
    [PA_TARGET_SM_103F] = {"sm_103f", 103, 'f', 227 * KB},
    [PA_TARGET_SM_110A] = {"sm_110a", 110, 'a', 227 * KB},
    [PA_TARGET_SM_110F] = {"sm_110f", 110, 'f', 227 * KB},
    [PA_TARGET_SM_120A] = {"sm_120a", 120, 'a', 99 * KB},
    [PA_TARGET_SM_120F] = {"sm_120f", 120, 'f', 99 * KB},
    [PA_TARGET_SM_121A] = {"sm_121a", 121, 'a', 99 * KB},
    [PA_TARGET_SM_80] = {"sm_80", 80, 0, 163 * KB},
    [PA_TARGET_SM_86] = {"sm_86", 86, 0, 99 * KB},
    [PA_TARGET_SM_87] = {"sm_87", 87, 0, 163 * KB},
    [PA_TARGET_SM_89] = {"sm_89", 89, 0, 99 * KB},
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
/* The sm_80 family: Ampere and Ada (compute capability 8.x). */
#define SM80S (T(SM_80) | T(SM_86) | T(SM_87) | T(SM_89))
#define SM90_UP (ALL_TARGETS & ~SM80S)
#define SM100_UP (SM90_UP & ~(T(SM_90) | T(SM_90A)))

/* SM100_UP: sm_100 and every later target (the baseline "sm_100 or higher"). */
/* The sm_100 family: sm_100a, sm_103a and the family targets sm_100f, sm_103f
 * ("sm_100f or higher in the same family"). */
#define FAMILY_100 (T(SM_100A) | T(SM_100F) | T(SM_103A) | T(SM_103F))
/* The list the seeds give for scatter4, im2col::w::128 and .cta_group:
 * sm_100a, sm_101a (renamed sm_110a), sm_100f and sm_101f / sm_110f families. */
#define FAMILY_100_110 (FAMILY_100 | T(SM_101A) | T(SM_101F) | T(SM_110A) | T(SM_110F))
/* sm_120a restrictions (seed, "Restriction on Tensor Copy instructions"):
 * loads to .shared::cluster take no sub-byte types and no .swizzle_atomicity.
 * Applied to the whole sm_120 family (sm_120a, sm_120f, sm_121a): the seed
 * names sm_120a; the family targets run on the same hardware (inferred). */
#define SM120 (T(SM_120A) | T(SM_120F) | T(SM_121A))

/* Sources: seeds/ptx-data-movement.md, cp.async.bulk.tensor and
 * cp.async.bulk.prefetch.tensor "Target ISA Notes"; driver-tensormap.md for
 * the map features ("only supported on devices of compute capability 10.0 or
 * higher"; CCCL: 128B_ATOM_* "not supported with compute capability 9"). */
static const feature_row features[PA_FEAT_COUNT] = {
    [PA_FEAT_TENSOR_COPY] = {"cp.async.bulk.tensor", SM90_UP, "sm_90 or later"},
    /* PTX ISA cp.async.bulk: "Support for .cp_mask qualifier requires sm_100 or higher". */
    [PA_FEAT_BULK_CP_MASK] = {"cp.async.bulk .cp_mask", SM100_UP, "sm_100 or later"},
    /* PTX ISA st.bulk: "Requires sm_100 or higher". */
    [PA_FEAT_ST_BULK] = {"st.bulk", SM100_UP, "sm_100 or later"},
    [PA_FEAT_PREFETCH_TENSOR] = {"cp.async.bulk.prefetch.tensor", SM90_UP, "sm_90 or later"},
    [PA_FEAT_GATHER4_CTA] = {".tile::gather4 (to .shared::cta)", SM100_UP, "sm_100 or later"},
    [PA_FEAT_GATHER4_CLUSTER] = {".tile::gather4 to .shared::cluster", FAMILY_100,
                                 "sm_100a, sm_100f, sm_103a or sm_103f"},
    [PA_FEAT_SCATTER4] = {".tile::scatter4", FAMILY_100_110,
                          "sm_100a/f, sm_101a/f, sm_103a/f or sm_110a/f"},
    [PA_FEAT_IM2COL_W_CTA] = {".im2col::w (to .shared::cta)", SM100_UP, "sm_100 or later"},
    [PA_FEAT_IM2COL_W_CLUSTER] = {".im2col::w to .shared::cluster", FAMILY_100,
                                  "sm_100a, sm_100f, sm_103a or sm_103f"},
    [PA_FEAT_IM2COL_W128] = {".im2col::w::128", FAMILY_100_110,
                             "sm_100a/f, sm_101a/f, sm_103a/f or sm_110a/f"},
    [PA_FEAT_PREFETCH_GATHER4] = {"cp.async.bulk.prefetch.tensor .tile::gather4", FAMILY_100_110,
                                  "sm_100a/f, sm_101a/f, sm_103a/f or sm_110a/f"},
    [PA_FEAT_PREFETCH_IM2COL_W] = {"cp.async.bulk.prefetch.tensor .im2col::w / .im2col::w::128",
                                   FAMILY_100_110, "sm_100a/f, sm_101a/f, sm_103a/f or sm_110a/f"},
    [PA_FEAT_CTA_GROUP] = {".cta_group", FAMILY_100_110,
                           "sm_100a/f, sm_101a/f, sm_103a/f or sm_110a/f"},
    [PA_FEAT_SWIZZLE_ATOM] = {"a 128B_ATOM_* swizzle", SM100_UP,
                              "sm_100 or later (compute capability 10.0)"},
    [PA_FEAT_SWIZZLE_ATOM_CLUSTER] = {"a 128B_ATOM_* swizzle (.swizzle_atomicity) on a load to "
                                      ".shared::cluster", SM100_UP & ~SM120,
                                      "sm_100 or later, not sm_120a/sm_120f/sm_121a"},
    [PA_FEAT_PACKED_TYPES] = {"a packed 16U4/16U6 type", SM100_UP,
                              "sm_100 or later (compute capability 10.0)"},
    [PA_FEAT_PACKED_CLUSTER] = {"a packed 16U4/16U6 type on a load to .shared::cluster",
                                SM100_UP & ~SM120, "sm_100 or later, not sm_120a/sm_120f/sm_121a"},
    [PA_FEAT_IM2COL_WIDE_MAP] = {"cuTensorMapEncodeIm2colWide", SM100_UP,
                                 "sm_100 or later (compute capability 10.0)"},
    /* seed tensormap.replace, Target ISA Notes: sm_90a, sm_100a, sm_101a (sm_110a), sm_120a
     * and the sm_100f / sm_101f (sm_110f) / sm_120f families; .swizzle_atomicity and
     * .elemtype 13..15 the same without sm_90a. */
    [PA_FEAT_TMAP_REPLACE] = {"tensormap.replace", T(SM_90A) | FAMILY_100_110 | SM120,
                              "sm_90a, sm_100a/f, sm_101a/f, sm_103a/f, sm_110a/f or sm_120a/f"},
    [PA_FEAT_TMAP_REPLACE_NEW] = {"tensormap.replace .swizzle_atomicity / .elemtype 13..15",
                                  FAMILY_100_110 | SM120,
                                  "sm_100a/f, sm_101a/f, sm_103a/f, sm_110a/f or sm_120a/f"},
    /* seed tensormap.replace: ".swizzle_mode corresponding to new_val value 4 is supported on
     * following architectures: sm_103a" - the one target the ISA gives the 96B swizzle; the
     * model gates the map and the copies on it too (the driver names no compute capability). */
    [PA_FEAT_SWIZZLE_96B] = {"the 96B swizzle (.swizzle_mode 4)", T(SM_103A), "sm_103a"},
    /* seed, "restrictions for sm_103a while using type .b6p2x16 on cp.async.bulk.tensor with the
     * direction .global.shared::cta": 48B or 96B boxes, 16B alignment, first coordinate a
     * multiple of 64, Tensor-Size[0] a multiple of 48B, 64B swizzle with 16B atomicity. */
    [PA_FEAT_B6P2X16_SM103A] = {"a .b6p2x16 store with a 48-byte box, 16-byte alignment, a first "
                                "coordinate a multiple of 64 or the 64B swizzle", T(SM_103A),
                                "sm_103a"},
    /* PTX ISA st.async, Target ISA Notes: ".mmio qualifier, .release semantics, .global state
     * space, and .scope qualifier require sm_100 or higher" (PTX ISA 8.7). */
    [PA_FEAT_ST_ASYNC_RELEASE] = {"st.async.release.global (.release, .global, .scope, .mmio)", SM100_UP,
                                  "sm_100 or later (PTX ISA 8.7)"},
    /* driver-tensormap.md: "Tensor map objects are only supported on devices of compute
     * capability 9.0 or higher." */
    [PA_FEAT_TENSOR_MAP] = {"a tensor map", SM90_UP, "sm_90 or later (compute capability 9.0)"},
    /* PTX ISA cp.async.bulk, cp.reduce.async.bulk, cp.async.bulk.prefetch, st.async, red.async,
     * mbarrier.expect_tx / complete_tx, Target ISA Notes: "Requires sm_90 or higher"; clusters
     * (%cluster_*, .shared::cluster) the same. */
    [PA_FEAT_BULK_COPY] = {"cp.async.bulk", SM90_UP, "sm_90 or later"},
    [PA_FEAT_CLUSTER] = {"a cluster of more than one CTA", SM90_UP, "sm_90 or later"},
    [PA_FEAT_ST_ASYNC] = {"st.async / red.async", SM90_UP, "sm_90 or later"},
    [PA_FEAT_MBAR_TX] = {"an mbarrier transaction count (expect_tx, complete_tx)", SM90_UP, "sm_90 or later"},
};

const char *pa_target_name(int t)
{
    return (t >= 0 && t < PA_TARGET_COUNT) ? targets[t].name : NULL;
}

int pa_target_parse(const char *name)
{
    for (int t = 0; t < PA_TARGET_COUNT; t++)
        if (strcmp(targets[t].name, name) == 0)
            return t;
    return -1;
}

void pa_target_list(char *buf, size_t cap)
{
    size_t at = 0;
    if (cap)
        buf[0] = 0;
    for (int sm = 0; sm < 1000; sm++)          /* by architecture, as people list them */
        for (int t = 0; t < PA_TARGET_COUNT; t++)
            if (targets[t].sm == sm && at < cap)
                at += (size_t)snprintf(buf + at, cap - at, "%s%s", at ? ", " : "", targets[t].name);
}

uint32_t pa_target_smem_max(pa_target t)
{
    return (unsigned)t < PA_TARGET_COUNT ? targets[t].smem_max : 0;
}

/* The family an architecture belongs to for 'f' targets (PTX ISA, "family-specific
 * features"): sm_100f holds sm_100 and sm_103, sm_110f sm_110 (sm_101 renamed), sm_120f
 * sm_120 and sm_121. */
static int family(int sm)
{
    return sm == 101 ? 110 : sm / 10 * 10;
}

int pa_target_runs(pa_target t, int sm, char suffix, char *why, size_t cap)
{
    if ((unsigned)t >= PA_TARGET_COUNT)
        return 0;
    const target_row *r = &targets[t];
    int ok;
    const char *rule;
    if (suffix == 'a') {
        ok = r->sm == sm && r->suffix == 'a';
        rule = "an architecture-specific target runs only on that architecture's 'a' machine";
    } else if (suffix == 'f') {
        ok = family(r->sm) == family(sm) && r->sm >= sm && r->suffix;
        rule = "a family-specific target runs on the later 'a' or 'f' machines of its family";
    } else {
        ok = r->sm >= sm;
        rule = "a baseline target runs on its architecture and every later one";
    }
    if (!ok && why && cap)
        snprintf(why, cap, "a module for sm_%d%.1s does not run on an %s machine (%s)", sm,
                 suffix ? &suffix : "", r->name, rule);
    return ok;
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

const char *pa_feature_needs(pa_feature f)
{
    return (unsigned)f < PA_FEAT_COUNT ? features[f].needs : "?";
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
