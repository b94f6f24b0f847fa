/* copy.h - the bulk tensor copy (cp.async.bulk.tensor, cp.reduce.async.bulk.tensor,
 * cp.async.bulk.prefetch.tensor): the one owner of its rules and its bytes.
 *
 * A copy is planned once, at issue, and executed at completion:
 *
 *   pa_copy_target_check   does the target execute this mode, map and direction?
 *   pa_copy_plan_make      every rule of the map, mode and coordinates, and the
 *                          box's layout in shared memory (faults named);
 *   pa_copy_plan_place     the shared-memory address: alignment and bounds;
 *   pa_copy_load / pa_copy_store / pa_copy_ranges
 *                          move the bytes (or name the global runs a load reads),
 *                          with no check left but the one only completion can
 *                          make: is the global memory there.
 *
 * The modes (.tile, .im2col, .im2col_no_offs, .tile::gather4 / ::scatter4,
 * .im2col::w / ::w::128) are one table (copy/mode.h); a map of a packed sub-byte
 * type wraps the copy of an equivalent byte-typed map (copy/packed.c). Every
 * row reaches shared memory through one swizzled row writer (copy/rows.h).
 */
#ifndef PA_COPY_H
#define PA_COPY_H

#include "../layout.h"
#include "../memory.h"
#include "../target.h"

typedef enum {
    PA_MODE_TILE = 0,            /* .tile */
    PA_MODE_IM2COL = 1,          /* .im2col (loads) */
    PA_MODE_IM2COL_NO_OFFS = 2,  /* .im2col_no_offs (stores, reductions) */
    /* sm_100 modes: */
    PA_MODE_TILE_GATHER4 = 3,    /* .tile::gather4 (loads) */
    PA_MODE_TILE_SCATTER4 = 4,   /* .tile::scatter4 (stores) */
    PA_MODE_IM2COL_W = 5,        /* .im2col::w (loads), im2colInfo {wHalo, wOffset} */
    PA_MODE_IM2COL_W128 = 6,     /* .im2col::w::128 (loads) */
    PA_MODE_COUNT = 7
} pa_load_mode;

/* Directions of a tensor copy. */
typedef enum {
    PA_DIR_LOAD = 0,      /* global -> shared::cta */
    PA_DIR_LOAD_CLUSTER,  /* global -> shared::cluster (incl. .multicast::cluster) */
    PA_DIR_STORE,         /* shared::cta -> global */
    PA_DIR_REDUCE,        /* cp.reduce.async.bulk.tensor */
    PA_DIR_PREFETCH,      /* cp.async.bulk.prefetch.tensor */
    PA_DIR_COUNT
} pa_copy_dir;

/* Shared memory of one CTA as the copy sees it. */
typedef struct {
    uint8_t *base;      /* byte 0 of the CTA's shared memory */
    uint32_t size;      /* bytes */
} pa_smem_view;

/* A copy, planned. */
typedef struct {
    pa_tensormap map;                 /* the map as issued (the copy keeps its own) */
    int32_t coords[PA_MAX_RANK];
    uint16_t info[PA_MAX_RANK - 2];   /* .im2col offsets (W, H, D), or im2colInfo {wHalo, wOffset} */
    pa_load_mode mode;
    pa_copy_dir dir;
    int packed;                       /* a packed sub-byte type: inner is the byte-typed copy */
    pa_box_layout l;                  /* the box in shared memory */
    pa_box_layout inner;              /* packed: the box of the byte-typed copy (packed image) */
    uint64_t memo_tag;                /* the memo entry's fill it was made from (0: none): plans
                                         of one tag have the same map, mode, direction, target
                                         and layout */
} pa_copy_plan;

/* The name of a mode, ".tile::gather4". */
const char *pa_mode_name(pa_load_mode mode);

/* Does target t execute this copy (the mode in this direction, the map's
 * swizzle and type)? PA_ERR_ILLEGAL_INSTRUCTION naming the targets that do. */
int pa_copy_target_check(pa_target t, const pa_tensormap *m, pa_load_mode mode, pa_copy_dir dir,
                         pa_error *err);

/* Plan a copy: the mode belongs to the direction, ncoords coordinates and
 * ninfo im2colInfo values are what the mode takes, every rule of the map,
 * mode and coordinates the hardware checks at issue (t: a .b6p2x16 store's
 * rules are the target's), and the layout of the box. info may be NULL; a
 * count of -1 is "as many as the mode takes" (a caller whose arrays the map
 * sizes: a batch, a replay, the C API's tile forms). */
int pa_copy_plan_make(pa_copy_plan *p, pa_target t, const pa_tensormap *m, pa_load_mode mode, pa_copy_dir dir,
                      const int32_t coords[PA_MAX_RANK], int ncoords, const uint16_t info[PA_MAX_RANK - 2],
                      int ninfo, pa_error *err);

/* The map's side of a .tile, .tile::gather4 / ::scatter4 or .im2col /
 * .im2col_no_offs plan, kept from the last ones made: the target check, the
 * map's rules and the box layout depend only on the map's bytes, the mode, the
 * target and the direction, so a plan of a byte-identical map (memcmp of the
 * whole struct) takes the layout from here and runs only the rules of the
 * operands (their count, the coordinates, the im2col offsets). Any other map is checked in full and, if it passes, replaces
 * the oldest entry. Four entries: a GEMM's loads take turns between the A and
 * the B map (and a store's map besides). */
#define PA_TILE_MEMO 4
typedef struct {
    int valid;
    pa_target target;
    pa_load_mode mode;
    pa_copy_dir dir;
    pa_tensormap map;
    pa_box_layout l;
    /* the map at `same` was found equal to this entry (or was copied into it)
     * in the frozen span `same_span` (pa_tile_memo_freeze) */
    const pa_tensormap *same;
    uint64_t same_span;
    uint64_t tag;                /* this fill's number, never 0 (pa_copy_plan.memo_tag) */
} pa_tile_memo_entry;

typedef struct {
    pa_tile_memo_entry e[PA_TILE_MEMO];
    unsigned next;               /* the entry replaced next */
    uint64_t fills;              /* entries filled so far (their tags) */
    uint64_t span;               /* frozen spans so far; odd: one is open */
} pa_tile_memo;

/* A span in which the maps planned through the memo cannot change (a replay's:
 * batch.h): within it a map found equal to an entry at one address is equal to
 * it at the next plan from that address, with no compare. Spans never nest. */
static inline void pa_tile_memo_freeze(pa_tile_memo *memo, int frozen)
{
    memo->span += (memo->span & 1u) != (unsigned)(frozen != 0);
}

/* pa_copy_target_check, then pa_copy_plan_make, through memo (NULL: none):
 * the same checks in the same order, the same errors, the same plan. */
int pa_copy_plan_make_memo(pa_copy_plan *p, pa_tile_memo *memo, pa_target t, const pa_tensormap *m,
                           pa_load_mode mode, pa_copy_dir dir, const int32_t coords[PA_MAX_RANK], int ncoords,
                           const uint16_t info[PA_MAX_RANK - 2], int ninfo, pa_error *err);

/* The rules of the operands alone, for a .tile or .tile::gather4 / ::scatter4
 * copy like p (the same map, mode, direction and target: its plan, with its
 * checks of theirs, stands) at coords: what pa_copy_plan_make_memo checks on
 * a memo hit, in its order, with its errors. No im2colInfo. */
int pa_copy_plan_recheck(const pa_copy_plan *p, const int32_t coords[PA_MAX_RANK], int ncoords, pa_error *err);

/* The box at shared offset off (within the CTA) of smem_size bytes: aligned
 * as the swizzle needs, inside shared memory. */
int pa_copy_plan_place(const pa_copy_plan *p, uint32_t off, uint32_t smem_size, pa_error *err);

/* Shared bytes [*lo, *hi) a box at offset off may touch: its rows, widened
 * to whole 128-byte lines under a swizzle (a swizzle moves 16-byte chunks
 * inside a line). */
void pa_copy_span(const pa_box_layout *l, uint32_t off, uint64_t *lo, uint64_t *hi);

/* Move the bytes of a planned, placed copy. A load writes the box at dst; a
 * store reads it at src and writes global memory: fn NULL copies (a store),
 * else fn gets each run, unswizzled, in pieces of at most 2 KiB (a reduction). */
typedef void (*pa_run_fn)(void *ctx, uint8_t *gdst, const uint8_t *ssrc, size_t nbytes);
int pa_copy_load(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t dst, pa_error *err);
int pa_copy_store(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, uint32_t src, pa_run_fn fn,
                  void *ctx, pa_error *err);

/* One copy of a run of copies of one plan: its coordinates and shared
 * address (rank bits and offset). */
typedef struct {
    int32_t coords[PA_MAX_RANK];
    uint32_t smem_addr;
} pa_copy_at;

/* Loads at[0], at[step], ... (n of them; step 1 or -1) of the .tile::gather4
 * load plan p, placed at issue, moved in that order as pa_copy_load of each
 * in turn would move them, where each is whole rows of one 128-byte line
 * (not TFLOAT32) inside a tensor that lies in one registered buffer
 * (copy/gather4run.c); the rows of the `more` loads after them in at (to be
 * moved next) are fetched as the last ones move. Returns how many were
 * moved: the first load that is not such a load, and those after it, are
 * left to pa_copy_load (0: the plan or the tensor does not qualify). Never
 * fails. */
uint32_t pa_gather4_load_run(const pa_copy_plan *p, const pa_global *g, pa_smem_view smem, const pa_copy_at *at,
                             int step, uint32_t n, uint32_t more);

/* Every in-bounds run of global bytes a load reads, in box-row order:
 * fn(ctx, row, address, bytes). */
typedef int (*pa_range_fn)(void *ctx, uint64_t row, uint64_t addr, uint64_t nbytes, pa_error *err);
int pa_copy_ranges(const pa_copy_plan *p, pa_range_fn fn, void *ctx, pa_error *err);

/* Plan, place and load in one call (C callers without a machine: tests,
 * benchmarks). */
int pa_copy_load_once(const pa_tensormap *m, pa_load_mode mode, const int32_t coords[PA_MAX_RANK],
                      const uint16_t info[PA_MAX_RANK - 2], const pa_global *g, pa_smem_view smem, uint32_t dst,
                      pa_error *err);

/* The global bytes [*lo, *hi) of the tensor map m's tensor (globalAddress to
 * its last element, whole rows; a packed type counted as a byte per value):
 * every copy through m reads or writes inside them. */
void pa_copy_tensor_extent(const pa_tensormap *m, uint64_t *lo, uint64_t *hi);

/* Round an f32 bit pattern as a TFLOAT32 map load does (observation 4):
 * to nearest-even at bit 13, NaN -> 0x7FFFE000, infinities kept, no flush. */
uint32_t pa_tf32_round(uint32_t bits);

#endif
