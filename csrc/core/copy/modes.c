/* modes.c - the mode table and the target gate of every tensor copy (see
 * copy.h, mode.h). */
#include "mode.h"

#include <stdio.h>

#define LOADS ((1u << PA_DIR_LOAD) | (1u << PA_DIR_LOAD_CLUSTER) | (1u << PA_DIR_PREFETCH))
#define STORES ((1u << PA_DIR_STORE) | (1u << PA_DIR_REDUCE))

/* PTX cp.async.bulk.tensor .load_mode: loads { .tile, .tile::gather4, .im2col,
 * .im2col::w, .im2col::w::128 }, stores { .tile, .tile::scatter4,
 * .im2col_no_offs }; cp.reduce.async.bulk.tensor { .tile, .im2col_no_offs };
 * cp.async.bulk.prefetch.tensor { .tile, .tile::gather4, .im2col, .im2col::w,
 * .im2col::w::128 }. */
const pa_copy_mode pa_copy_modes[PA_MODE_COUNT] = {
    [PA_MODE_TILE] = {LOADS | STORES, pa_tile_make, pa_tile_load, pa_tile_store, pa_tile_ranges},
    [PA_MODE_IM2COL] = {LOADS, pa_im2col_make, pa_tile_load, NULL, pa_tile_ranges},
    [PA_MODE_IM2COL_NO_OFFS] = {STORES, pa_im2col_make, NULL, pa_tile_store, NULL},
    [PA_MODE_TILE_GATHER4] = {LOADS, pa_gather4_make, pa_gather4_load, NULL, pa_gather4_ranges},
    [PA_MODE_TILE_SCATTER4] = {1u << PA_DIR_STORE, pa_gather4_make, NULL, pa_gather4_store,
                               NULL},
    [PA_MODE_IM2COL_W] = {LOADS, pa_wide_make, pa_wide_load, NULL, pa_wide_ranges},
    [PA_MODE_IM2COL_W128] = {LOADS, pa_wide_make, pa_wide_load, NULL, pa_wide_ranges},
};

static const char *const dir_instr[PA_DIR_COUNT] = {
    "cp.async.bulk.tensor (load)", "cp.async.bulk.tensor (load)", "cp.async.bulk.tensor (store)",
    "cp.reduce.async.bulk.tensor", "cp.async.bulk.prefetch.tensor"};
static const char *const dir_word[PA_DIR_COUNT] = {"load-direction", "load-direction", "store-direction",
                                                   "reduction", "prefetch"};

/* The mode exists in this direction (one rule, one wording). */
int pa_copy_mode_check(pa_load_mode mode, pa_copy_dir dir, pa_error *err)
{
    if ((unsigned)mode >= PA_MODE_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "load mode %d does not exist", (int)mode);
    if ((unsigned)dir >= PA_DIR_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "copy direction %d does not exist", (int)dir);
    if (pa_copy_modes[mode].dirs & (1u << dir))
        return PA_OK;
    char list[128];
    size_t n = 0;
    list[0] = 0;
    for (int k = 0; k < PA_MODE_COUNT; k++)
        if (pa_copy_modes[k].dirs & (1u << dir))
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", pa_mode_name((pa_load_mode)k));
    return pa_fail(err, PA_ERR_INVALID_VALUE, "%s takes no %s mode (the %s modes: .load_mode = { %s })",
                   dir_instr[dir], pa_mode_name(mode), dir_word[dir], list);
}

/* ---- targets -------------------------------------------------------------- */

static int require(pa_target t, pa_feature f, pa_error *err)
{
    return pa_target_require(t, f, err);
}

static pa_feature mode_feature(pa_load_mode mode, pa_copy_dir dir)
{
    const int cluster = dir == PA_DIR_LOAD_CLUSTER;
    switch (mode) {
    case PA_MODE_TILE_GATHER4:
        return dir == PA_DIR_PREFETCH ? PA_FEAT_PREFETCH_GATHER4
               : cluster             ? PA_FEAT_GATHER4_CLUSTER
                                     : PA_FEAT_GATHER4_CTA;
    case PA_MODE_TILE_SCATTER4: return PA_FEAT_SCATTER4;
    case PA_MODE_IM2COL_W:
        return dir == PA_DIR_PREFETCH ? PA_FEAT_PREFETCH_IM2COL_W
               : cluster             ? PA_FEAT_IM2COL_W_CLUSTER
                                     : PA_FEAT_IM2COL_W_CTA;
    case PA_MODE_IM2COL_W128:
        return dir == PA_DIR_PREFETCH ? PA_FEAT_PREFETCH_IM2COL_W : PA_FEAT_IM2COL_W128;
    default:
        return dir == PA_DIR_PREFETCH ? PA_FEAT_PREFETCH_TENSOR : PA_FEAT_TENSOR_COPY;
    }
}

int pa_copy_target_check(pa_target t, const pa_tensormap *m, pa_load_mode mode, pa_copy_dir dir,
                         pa_error *err)
{
    int rc = pa_copy_mode_check(mode, dir, err);   /* first: a feature of a form that does not exist */
    if (rc || (rc = require(t, mode_feature(mode, dir), err)))
        return rc;
    /* A map the sm_90 driver would not encode can still reach an sm_90a
     * machine (made for another target, or edited): the copy is refused. */
    if (m->swizzle >= PA_SWIZZLE_128B_ATOM_32B && m->swizzle < PA_SWIZZLE_COUNT) {
        if ((rc = require(t, PA_FEAT_SWIZZLE_ATOM, err)))
            return rc;
        /* Seed, restrictions for sm_120a: loads to .shared::cluster take no
         * .swizzle_atomicity. */
        if (dir == PA_DIR_LOAD_CLUSTER && (rc = require(t, PA_FEAT_SWIZZLE_ATOM_CLUSTER, err)))
            return rc;
    }
    const pa_dtype_info *di = pa_dtype_get(m->dtype);
    if (m->swizzle == PA_SWIZZLE_96B) {
        /* seed tensormap.replace: .swizzle_mode 4 is sm_103a's. */
        if ((rc = require(t, PA_FEAT_SWIZZLE_96B, err)))
            return rc;
        /* seed, "restrictions on the 96B swizzle mode" 5: "The .load_mode must not
         * be set to .im2col::w::128." */
        if (mode == PA_MODE_IM2COL_W128)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "the 96B swizzle does not support .im2col::w::128 (\"The .load_mode must "
                           "not be set to .im2col::w::128\")");
        /* 4: "The type must not be among following: .b4x16_p64, .b6x16_p32 and .b6p2x16." */
        if (m->dtype == PA_DTYPE_16U4_ALIGN16B || m->dtype == PA_DTYPE_16U6_ALIGN16B)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "the 96B swizzle does not support the type %s", di ? di->name : "?");
        /* 3: "Box-Size[0] must be less than or equal to 96B." */
        uint64_t inner = di && !di->is_packed
                             ? (uint64_t)(m->kind == PA_MAP_TILED ? m->box_dim[0] : m->channels_per_pixel) *
                                   di->elem_bytes
                             : 0;
        if (inner > 96)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "the 96B swizzle: Box-Size[0] = %llu B exceeds 96 B (\"Box-Size[0] must be "
                           "less than or equal to 96B\")", (unsigned long long)inner);
    }
    if (di && di->is_packed) {
        /* seed restriction 1: "cp.reduce.async.bulk doesn't support the types .b4x16,
         * .b4x16_p64, .b6x16_p32 and .b6p2x16" */
        if (dir == PA_DIR_REDUCE)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "cp.reduce.async.bulk.tensor does not support the sub-byte type %s",
                           di->name);
        if ((rc = require(t, PA_FEAT_PACKED_TYPES, err)))
            return rc;
        if (dir == PA_DIR_LOAD_CLUSTER && (rc = require(t, PA_FEAT_PACKED_CLUSTER, err)))
            return rc;
    }
    if (PA_MAP_IS_WIDE(m->kind) && (rc = require(t, PA_FEAT_IM2COL_WIDE_MAP, err)))
        return rc;
    return PA_OK;
}
