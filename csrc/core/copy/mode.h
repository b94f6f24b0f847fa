/* mode.h - the mode table of the tensor copy: one row per .load_mode, naming
 * the directions it exists in and how it plans, loads, stores and names the
 * global runs it reads. Internal to copy/.
 *
 * A mode's make() runs with p->map, mode, dir, coords and info set, checks
 * every rule of the mode and fills p->l; load/store/ranges run a plan whose
 * make() succeeded (and, for load/store, whose place succeeded): they check
 * nothing but that global memory is there.
 */
#ifndef PA_COPY_MODE_H
#define PA_COPY_MODE_H

#include "boxwalk.h"

typedef struct {
    unsigned dirs;       /* 1u << pa_copy_dir for each direction the mode exists in */
    int (*make)(pa_copy_plan *p, pa_error *err);
    int (*load)(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err);
    int (*store)(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                 void *ctx, pa_error *err);
    int (*ranges)(const pa_copy_plan *p, pa_range_fn fn, void *ctx, pa_error *err);
} pa_copy_mode;

extern const pa_copy_mode pa_copy_modes[PA_MODE_COUNT];

/* The mode exists and belongs to the direction (.load_mode of each form). */
int pa_copy_mode_check(pa_load_mode mode, pa_copy_dir dir, pa_error *err);

/* The rows of the modes (copy/tile.c: .tile, .im2col, .im2col_no_offs;
 * copy/gather4.c; copy/wide.c: .im2col::w, ::w::128). */
int pa_tile_make(pa_copy_plan *p, pa_error *err);
int pa_tile_load(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err);
int pa_tile_store(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                  void *ctx, pa_error *err);
int pa_tile_ranges(const pa_copy_plan *p, pa_range_fn fn, void *ctx, pa_error *err);
int pa_im2col_make(pa_copy_plan *p, pa_error *err);
/* The rules of the im2colInfo and coordinates (pa_im2col_make's checks after
 * the map's layout). */
int pa_im2col_start_rules(const pa_copy_plan *p, pa_error *err);
/* One walked box of map m, layout l (a .tile::gather4 row is a 1-row box). */
int pa_tile_load_box(const pa_tensormap *m, const pa_box_layout *l, pa_walk *w, const pa_global *g,
                     pa_smem_view smem, uint32_t dst, pa_error *err);
int pa_tile_store_box(const pa_tensormap *m, const pa_box_layout *l, pa_walk *w, const pa_global *g,
                      pa_smem_view smem, uint32_t src, pa_run_fn fn, void *ctx, pa_error *err);
int pa_tile_walk_ranges(const pa_tensormap *m, const pa_box_layout *l, pa_walk *w, uint64_t first_row,
                        pa_range_fn fn, void *ctx, pa_error *err);

int pa_gather4_make(pa_copy_plan *p, pa_error *err);
/* The rules of its five coordinates (the last of pa_gather4_make's checks). */
int pa_gather4_start_rules(const pa_copy_plan *p, pa_error *err);
/* The same for a map, coordinates, mode and direction. */
int pa_gather4_coord_rules(const pa_tensormap *m, const int32_t coords[5], pa_load_mode mode, pa_copy_dir dir,
                           pa_error *err);
int pa_gather4_load(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err);
int pa_gather4_store(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                     void *ctx, pa_error *err);
int pa_gather4_ranges(const pa_copy_plan *p, pa_range_fn fn, void *ctx, pa_error *err);

int pa_wide_make(pa_copy_plan *p, pa_error *err);
int pa_wide_load(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err);
int pa_wide_ranges(const pa_copy_plan *p, pa_range_fn fn, void *ctx, pa_error *err);

/* The tile rules of one box start (golden observations 1 and 8): in the
 * store direction every coordinate is non-negative; without interleave the
 * innermost start offset is 16-byte aligned. operand[i] names coordinate i
 * (NULL: "c<i>"); n coordinates are checked for the sign. */
int pa_tile_start_rules(const pa_tensormap *m, const int32_t *coords, uint32_t n, const char *const *operand,
                        int is_store, const char *what, pa_error *err);

/* The packed sub-byte wrapper (copy/packed.c): make, load, store, ranges of
 * a copy through a map of a packed type. */
int pa_packed_make(pa_copy_plan *p, pa_target t, pa_error *err);
int pa_packed_load(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err);
int pa_packed_store(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                    void *ctx, pa_error *err);
int pa_packed_ranges(const pa_copy_plan *p, pa_range_fn fn, void *ctx, pa_error *err);

static inline int pa_copy_is_store(pa_copy_dir d)
{
    return d == PA_DIR_STORE || d == PA_DIR_REDUCE;
}

#endif
