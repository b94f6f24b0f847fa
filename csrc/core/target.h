/* target.h - which forms, modes, types and swizzles a compilation target has.
 *
 * PTX names three kinds of target (PTX ISA, "Architecture-specific and
 * family-specific features"):
 *     sm_XY    the baseline: every later target has its features
 *     sm_XYa   architecture-specific: only that exact architecture
 *     sm_XYf   family-specific: that architecture and later ones of its family
 * A feature lists the targets that have it, as the ISA's target notes give
 * them; every issue path asks pa_target_require, so each rule lives in one row
 * of target.c and the error names the target that has the feature.
 */
#ifndef PA_TARGET_H
#define PA_TARGET_H

#include "types.h"

typedef enum {
    PA_TARGET_SM_90 = 0,
    PA_TARGET_SM_90A,
    PA_TARGET_SM_100,
    PA_TARGET_SM_100A,
    PA_TARGET_SM_100F,
    PA_TARGET_SM_101A,
    PA_TARGET_SM_101F,
    PA_TARGET_SM_103A,
    PA_TARGET_SM_103F,
    PA_TARGET_SM_110A,
    PA_TARGET_SM_110F,
    PA_TARGET_SM_120A,
    PA_TARGET_SM_120F,
    PA_TARGET_SM_121A,
    /* The sm_80 family (Ampere, Ada), after the others so the numbers above stay:
     * no tensor maps, bulk copies, clusters or transaction counts. */
    PA_TARGET_SM_80,
    PA_TARGET_SM_86,
    PA_TARGET_SM_87,
    PA_TARGET_SM_89,
    PA_TARGET_COUNT
} pa_target;

#define PA_TARGET_DEFAULT PA_TARGET_SM_90A

/* Features that not every target has. Add a row to target.c with each. */
typedef enum {
    PA_FEAT_TENSOR_COPY = 0,   /* cp.async.bulk.tensor .tile / .im2col (sm_90) */
    PA_FEAT_BULK_CP_MASK,      /* cp.async.bulk.global.shared::cta .cp_mask (sm_100) */
    PA_FEAT_ST_BULK,           /* st.bulk (sm_100) */
    PA_FEAT_PREFETCH_TENSOR,   /* cp.async.bulk.prefetch.tensor .tile / .im2col (sm_90) */
    PA_FEAT_GATHER4_CTA,       /* .tile::gather4 load to .shared::cta */
    PA_FEAT_GATHER4_CLUSTER,   /* .tile::gather4 load to .shared::cluster */
    PA_FEAT_SCATTER4,          /* .tile::scatter4 store */
    PA_FEAT_IM2COL_W_CTA,      /* .im2col::w load to .shared::cta */
    PA_FEAT_IM2COL_W_CLUSTER,  /* .im2col::w load to .shared::cluster */
    PA_FEAT_IM2COL_W128,       /* .im2col::w::128 load */
    PA_FEAT_PREFETCH_GATHER4,  /* cp.async.bulk.prefetch.tensor .tile::gather4 */
    PA_FEAT_PREFETCH_IM2COL_W, /* cp.async.bulk.prefetch.tensor .im2col::w / ::w::128 */
    PA_FEAT_CTA_GROUP,         /* .cta_group::1 / ::2 on tensor loads */
    PA_FEAT_SWIZZLE_ATOM,      /* 128B_ATOM_* swizzles (compute capability 10.0+) */
    PA_FEAT_SWIZZLE_ATOM_CLUSTER, /* ... on loads to .shared::cluster (not sm_120a) */
    PA_FEAT_PACKED_TYPES,      /* 16U4_ALIGN8B / 16U4_ALIGN16B / 16U6_ALIGN16B (CC 10.0+) */
    PA_FEAT_PACKED_CLUSTER,    /* ... on loads to .shared::cluster (not sm_120a) */
    PA_FEAT_IM2COL_WIDE_MAP,   /* cuTensorMapEncodeIm2colWide (compute capability 10.0+) */
    PA_FEAT_TMAP_REPLACE,      /* tensormap.replace */
    PA_FEAT_TMAP_REPLACE_NEW,  /* tensormap.replace .swizzle_atomicity, .elemtype 13..15 */
    PA_FEAT_SWIZZLE_96B,       /* the 96B swizzle (.swizzle_mode 4): sm_103a only */
    PA_FEAT_B6P2X16_SM103A,    /* the sm_103a rules of .b6p2x16 stores (48-byte boxes, ...) */
    PA_FEAT_ST_ASYNC_RELEASE,  /* st.async .release / .global / .scope / .mmio (sm_100) */
    PA_FEAT_TENSOR_MAP,        /* tensor map objects (compute capability 9.0) */
    PA_FEAT_BULK_COPY,         /* cp.async.bulk, cp.reduce.async.bulk, bulk prefetch (sm_90) */
    PA_FEAT_CLUSTER,           /* a cluster of more than one CTA (sm_90) */
    PA_FEAT_ST_ASYNC,          /* st.async, red.async (sm_90) */
    PA_FEAT_MBAR_TX,           /* mbarrier transaction counts: expect_tx, complete_tx (sm_90) */
    PA_FEAT_COUNT
} pa_feature;

/* "sm_90a"; NULL past the end. */
const char *pa_target_name(int t);
/* "sm_80, sm_86, ..., sm_121a": every known target, for error messages. */
void pa_target_list(char *buf, size_t cap);
/* The most shared memory a CTA may have on target t (dynamic included, opted in): the CUDA
 * programming guide's "maximum amount of shared memory per thread block". */
uint32_t pa_target_smem_max(pa_target t);
/* Whether a PTX module for `.target sm_<sm><suffix>` runs on a machine of target t (the PTX
 * ISA's compatibility rule: a baseline target runs on it and every later architecture, an
 * 'a' target only on its own architecture, an 'f' target on the later members of its family).
 * 0 if not, with the rule in why. */
int pa_target_runs(pa_target t, int sm, char suffix, char *why, size_t cap);
/* Target by name ("sm_100a"); -1 if unknown. */
int pa_target_parse(const char *name);
/* Whether target t has feature f. */
int pa_target_has(pa_target t, pa_feature f);
/* PA_OK, or PA_ERR_ILLEGAL_INSTRUCTION naming the feature, the targets that
 * have it and this target ("tile::gather4 needs sm_100a or later; this
 * machine is sm_90a"). */
int pa_target_require(pa_target t, pa_feature f, pa_error *err);
/* The feature's readable name, e.g. "cp.async.bulk.tensor .tile::gather4". */
const char *pa_feature_name(pa_feature f);
/* The targets that have it, as an error names them ("sm_100a or later"). */
const char *pa_feature_needs(pa_feature f);

#endif
