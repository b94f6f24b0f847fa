/* bench_core.c - the C-core figures of bench/run.py.
 *
 *     bench_core ROUNDS [KEY...]
 *
 * Built by run.py with gcc -O2 against csrc/core. Each key times the model
 * path and its plain-C baseline (memcpy / memset of the same bytes) in
 * alternation, ROUNDS times, and prints one JSON object per key:
 *     {"key": K, "ratio": median(t_base / t_model), "model_gbs": .., "base_gbs": ..}
 * (ratio > 1: the model is faster than the baseline). The bulk reductions add
 * their roofline (bulk_plain): "plain_add_gbs", "ratio_to_plain_add" =
 * median(t_plain / t_model).
 */
#define _GNU_SOURCE
#include "core.h"

#include <sys/mman.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GBASE 0x100000000ull          /* where the global tensor lives */
#define ROWS 16384u
#define ROW_BYTES 16384u              /* 16384 x 8192 bf16 = 256 MiB */
#define TILE 32768u                   /* 32 KiB boxes */
#define NTILES 512                    /* random tiles per round */

/* Thread CPU time: the machine is shared, and wall time would count the time
 * slices of other processes against whichever side was running. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint8_t *tensor;               /* 256 MiB of real data */
static uint8_t *scratch;              /* 256 KiB destination of the baselines */
static pa_machine mach;
static uint32_t r0s[NTILES], c0s[NTILES];   /* random box corners (row, byte column) */
static volatile uint8_t sink;

static void die(const char *what, const pa_error *e)
{
    fprintf(stderr, "bench_core: %s: %s\n", what, e ? e->msg : "");
    exit(1);
}

/* A 2D map over the tensor: rows x (ROW_BYTES / esize) elements, box of
 * box_bytes x box_rows: its parameters, and the map encoded from them. */
static pa_tiled_params params2d(int dtype, uint32_t esize, uint32_t box_bytes, uint32_t box_rows, int swizzle,
                                int oob, uint64_t rows)
{
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = dtype;
    p.rank = 2;
    p.global_address = GBASE;
    p.global_dim[0] = ROW_BYTES / esize;
    p.global_dim[1] = rows;
    p.global_strides[0] = ROW_BYTES;
    p.box_dim[0] = box_bytes / esize;
    p.box_dim[1] = box_rows;
    p.element_strides[0] = p.element_strides[1] = 1;
    p.swizzle = swizzle;
    p.oob_fill = oob;
    return p;
}

static pa_tensormap map2d(int dtype, uint32_t esize, uint32_t box_bytes, uint32_t box_rows, int swizzle,
                          int oob, uint64_t rows)
{
    const pa_tiled_params p = params2d(dtype, esize, box_bytes, box_rows, swizzle, oob, rows);
    pa_tensormap m;
    pa_error e;
    if (pa_tensormap_encode_tiled(&m, &p, &e))
        die("encode", &e);
    return m;
}

static void random_tiles(uint32_t box_bytes, uint32_t box_rows)
{
    for (int i = 0; i < NTILES; i++) {
        r0s[i] = (uint32_t)(rnd() % (ROWS - box_rows + 1));
        c0s[i] = (uint32_t)(rnd() % ((ROW_BYTES - box_bytes) / 16 + 1)) * 16;
    }
}

static void memcpy_tile(int i, uint32_t box_bytes, uint32_t box_rows, uint8_t *dst)
{
    const uint8_t *s = tensor + (size_t)r0s[i] * ROW_BYTES + c0s[i];
    for (uint32_t r = 0; r < box_rows; r++)
        memcpy(dst + (size_t)r * box_bytes, s + (size_t)r * ROW_BYTES, box_bytes);
}

static void memcpy_tile_back(int i, uint32_t box_bytes, uint32_t box_rows, const uint8_t *src)
{
    uint8_t *d = tensor + (size_t)r0s[i] * ROW_BYTES + c0s[i];
    for (uint32_t r = 0; r < box_rows; r++)
        memcpy(d + (size_t)r * ROW_BYTES, src + (size_t)r * box_bytes, box_bytes);
}

/* ------------------------------------------------------------------ keys */

typedef struct {
    const char *key;
    void (*setup)(void);
    void (*model)(void);
    void (*base)(void);
    double bytes;                     /* per call of model / base */
} bench;

static pa_tensormap cur;              /* the map the current key uses */
static pa_smem_view smem;
static uint32_t cur_box_bytes, cur_box_rows;

/* tile_load_c: 32 KiB 128B-swizzled bf16 boxes at random coordinates, pure C. */
static void tile_setup(void)
{
    cur_box_bytes = 128;
    cur_box_rows = 256;
    cur = map2d(PA_DTYPE_BFLOAT16, 2, 128, 256, PA_SWIZZLE_128B, 0, ROWS);
    random_tiles(128, 256);
}

static void tile_model(void)
{
    pa_error e;
    for (int i = 0; i < NTILES; i++) {
        int32_t c[PA_MAX_RANK] = {(int32_t)(c0s[i] / 2), (int32_t)r0s[i], 0, 0, 0};
        if (pa_copy_load_once(&cur, PA_MODE_TILE, c, NULL, &mach.global, smem, 1024, &e))
            die("tile load", &e);
    }
}

static void tile_base(void)
{
    for (int i = 0; i < NTILES; i++)
        memcpy_tile(i, cur_box_bytes, cur_box_rows, scratch);
    sink = scratch[0];
}

/* tf32_load: a TFLOAT32 map, 32 KiB boxes (128 B x 256 rows), 128B swizzle. */
static void tf32_setup(void)
{
    cur_box_bytes = 128;
    cur_box_rows = 256;
    cur = map2d(PA_DTYPE_TFLOAT32, 4, 128, 256, PA_SWIZZLE_128B, 0, ROWS);
    random_tiles(128, 256);
}

static void tf32_model(void)
{
    pa_error e;
    for (int i = 0; i < NTILES; i++) {
        int32_t c[PA_MAX_RANK] = {(int32_t)(c0s[i] / 4), (int32_t)r0s[i], 0, 0, 0};
        if (pa_copy_load_once(&cur, PA_MODE_TILE, c, NULL, &mach.global, smem, 1024, &e))
            die("tf32 load", &e);
    }
}

/* oob_nan_fill: a box entirely past the tensor's last row. */
static void oob_nan_setup(void)
{
    cur = map2d(PA_DTYPE_BFLOAT16, 2, 128, 256, PA_SWIZZLE_128B, PA_OOB_FILL_NAN_REQUEST_ZERO_FMA, ROWS);
}

static void oob_nan_model(void)
{
    pa_error e;
    for (int i = 0; i < NTILES; i++) {
        int32_t c[PA_MAX_RANK] = {0, (int32_t)ROWS + 8, 0, 0, 0};
        if (pa_copy_load_once(&cur, PA_MODE_TILE, c, NULL, &mach.global, smem, 1024, &e))
            die("oob load", &e);
    }
}

static void memset_base(void)
{
    for (int i = 0; i < NTILES; i++)
        memset(scratch + (i & 3) * TILE, 0x7F, TILE);
    sink = scratch[0];
}

/* oob_half: the last 128 of the box's 256 rows past the tensor, zero fill. */
static void oob_half_setup(void)
{
    cur = map2d(PA_DTYPE_BFLOAT16, 2, 128, 256, PA_SWIZZLE_128B, PA_OOB_FILL_NONE, ROWS);
    for (int i = 0; i < NTILES; i++)
        c0s[i] = (uint32_t)(rnd() % ((ROW_BYTES - 128) / 16 + 1)) * 16;
}

static void oob_half_model(void)
{
    pa_error e;
    for (int i = 0; i < NTILES; i++) {
        int32_t c[PA_MAX_RANK] = {(int32_t)(c0s[i] / 2), (int32_t)ROWS - 128, 0, 0, 0};
        if (pa_copy_load_once(&cur, PA_MODE_TILE, c, NULL, &mach.global, smem, 1024, &e))
            die("half oob load", &e);
    }
}

static void oob_half_base(void)
{
    for (int i = 0; i < NTILES; i++) {
        const uint8_t *s = tensor + (size_t)(ROWS - 128) * ROW_BYTES + c0s[i];
        for (uint32_t r = 0; r < 128; r++)
            memcpy(scratch + r * 128, s + (size_t)r * ROW_BYTES, 128);
        memset(scratch + 128 * 128, 0, 128 * 128);
    }
    sink = scratch[0];
}

/* tile_store / tensor reductions: the engine's issue + run of a 32 KiB box. */
static int cur_redop = -1;

static void store_setup_common(int dtype, uint32_t esize, int redop)
{
    cur_box_bytes = 128;
    cur_box_rows = 256;
    cur_redop = redop;
    cur = map2d(dtype, esize, 128, 256, PA_SWIZZLE_128B, 0, ROWS);
    random_tiles(128, 256);
}

static void fill_smem(int dtype)
{
    /* plausible operands: finite floats of moderate size, any integers */
    for (uint32_t i = 0; i < TILE; i += 4) {
        uint32_t v = (uint32_t)rnd();
        if (dtype == PA_DTYPE_FLOAT32)
            v = (v & 0x807FFFFFu) | ((uint32_t)(120 + (v >> 28)) << 23);
        else if (dtype == PA_DTYPE_BFLOAT16)
            v = ((v & 0x807Fu) | ((uint32_t)(120 + ((v >> 8) & 7)) << 7)) * 0x10001u;
        else if (dtype == PA_DTYPE_FLOAT16)
            v = ((v & 0x83FFu) | ((uint32_t)(12 + ((v >> 12) & 7)) << 10)) * 0x10001u;
        memcpy(smem.base + 1024 + i, &v, 4);
    }
}

static void fill_values(int dtype)
{
    fill_smem(dtype);
    /* the same kind of values in the tensor rows the boxes reach */
    for (int i = 0; i < NTILES; i++)
        memcpy_tile_back(i, 128, 256, smem.base + 1024);
}

static void store_setup(void) { store_setup_common(PA_DTYPE_BFLOAT16, 2, -1); }
static void red_bf16_setup(void) { store_setup_common(PA_DTYPE_BFLOAT16, 2, PA_RED_ADD); fill_values(PA_DTYPE_BFLOAT16); }
static void red_f32_setup(void) { store_setup_common(PA_DTYPE_FLOAT32, 4, PA_RED_ADD); fill_values(PA_DTYPE_FLOAT32); }
static void red_u32_setup(void) { store_setup_common(PA_DTYPE_UINT32, 4, PA_RED_ADD); fill_values(PA_DTYPE_UINT32); }
static void red_f16_setup(void) { store_setup_common(PA_DTYPE_FLOAT16, 2, PA_RED_ADD); fill_values(PA_DTYPE_FLOAT16); }
static void red_f32_ftz_setup(void)
{
    store_setup_common(PA_DTYPE_FLOAT32_FTZ, 4, PA_RED_ADD);
    fill_values(PA_DTYPE_FLOAT32);
}

static void store_model(void)
{
    pa_error e;
    uint32_t esize = pa_dtype_get(cur.dtype)->elem_bytes;
    for (int i = 0; i < NTILES; i++) {
        int32_t c[PA_MAX_RANK] = {(int32_t)(c0s[i] / esize), (int32_t)r0s[i], 0, 0, 0};
        if (pa_issue_tile_store(&mach, 0, 0, &cur, c, 1024, cur_redop >= 0,
                                cur_redop >= 0 ? (pa_redop)cur_redop : PA_RED_ADD, &e) ||
            pa_machine_run(&mach, &e))
            die("tile store", &e);
    }
}

static void store_base(void)
{
    for (int i = 0; i < NTILES; i++)
        memcpy_tile_back(i, 128, 256, smem.base + 1024);
}

/* bulk reductions: 32 KiB from shared memory to a global address. */
static int bulk_type, bulk_noftz;
static uint64_t bulk_off[NTILES];

static void bulk_setup_common(int type, int noftz, int dtype)
{
    bulk_type = type;
    bulk_noftz = noftz;
    for (int i = 0; i < NTILES; i++) {
        bulk_off[i] = (rnd() % ((256u << 20) / TILE)) * TILE;
        r0s[i] = (uint32_t)(bulk_off[i] / ROW_BYTES);
        c0s[i] = 0;
    }
    fill_smem(dtype);   /* the shared operand; the destinations get the same values */
    for (int i = 0; i < NTILES; i++)
        memcpy(tensor + bulk_off[i], smem.base + 1024, TILE);
}

static void bulk_f32_setup(void) { bulk_setup_common(PA_RT_F32, 0, PA_DTYPE_FLOAT32); }
static void bulk_bf16_setup(void) { bulk_setup_common(PA_RT_BF16, 1, PA_DTYPE_BFLOAT16); }
static void bulk_f16_setup(void) { bulk_setup_common(PA_RT_F16, 1, PA_DTYPE_FLOAT16); }

static void bulk_model(void)
{
    pa_error e;
    for (int i = 0; i < NTILES; i++)
        if (pa_issue_bulk_reduce(&mach, 0, 0, PA_RDST_GLOBAL, GBASE + bulk_off[i], 1024, TILE, 0, PA_RED_ADD,
                                 (pa_rtype)bulk_type, bulk_noftz, &e) ||
            pa_machine_run(&mach, &e))
            die("bulk reduce", &e);
}

static void bulk_base(void)
{
    for (int i = 0; i < NTILES; i++)
        memcpy(tensor + bulk_off[i], smem.base + 1024, TILE);
}

/* The roofline of a bulk reduction, timed beside it: the same read-modify-write
 * of the same destinations with nothing to compute, a 32-bit integer add of
 * the same source (AVX-512 or AVX2 where the CPU has it, as the model's loops;
 * else a plain C loop). It reads and writes every destination line where
 * memcpy only writes. Reported as plain_add_gbs and ratio_to_plain_add. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
__attribute__((target("avx512f"))) static void plain_add_avx512(uint8_t *d, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i += 128) {
        __m512i a = _mm512_loadu_si512((const void *)(d + i)), b = _mm512_loadu_si512((const void *)(d + i + 64));
        _mm512_storeu_si512((void *)(d + i), _mm512_add_epi32(a, _mm512_loadu_si512((const void *)(s + i))));
        _mm512_storeu_si512((void *)(d + i + 64), _mm512_add_epi32(b, _mm512_loadu_si512((const void *)(s + i + 64))));
    }
}
__attribute__((target("avx2"))) static void plain_add_avx2(uint8_t *d, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(d + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(d + i + 32));
        _mm256_storeu_si256((__m256i *)(void *)(d + i),
                            _mm256_add_epi32(a, _mm256_loadu_si256((const __m256i *)(const void *)(s + i))));
        _mm256_storeu_si256((__m256i *)(void *)(d + i + 32),
                            _mm256_add_epi32(b, _mm256_loadu_si256((const __m256i *)(const void *)(s + i + 32))));
    }
}
#define HAVE_VECTOR_ADD 1
#endif

static void plain_add_c(uint8_t *d, const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i += 4) {
        uint32_t x, y;
        memcpy(&x, d + i, 4);
        memcpy(&y, s + i, 4);
        x += y;
        memcpy(d + i, &x, 4);
    }
}

static void bulk_plain(void)
{
    static void (*add)(uint8_t *, const uint8_t *, size_t);
    if (!add) {
        add = plain_add_c;
#ifdef HAVE_VECTOR_ADD
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f"))
            add = plain_add_avx512;
        else if (__builtin_cpu_supports("avx2"))
            add = plain_add_avx2;
#endif
    }
    for (int i = 0; i < NTILES; i++)
        add(tensor + bulk_off[i], smem.base + 1024, TILE);
}

/* deep_queue: 8192 pending 4 KiB loads then run, against 8 pending at a time.
 * 64 mbarriers take 128 loads each (512 KiB of tx, inside the 2^20-1 range). */
#define DEEP 8192
#define PER_BAR 128
static pa_tensormap qmap;
static uint32_t qc0[DEEP], qr0[DEEP];

static void deep_setup(void)
{
    qmap = map2d(PA_DTYPE_BFLOAT16, 2, 128, 32, PA_SWIZZLE_128B, 0, ROWS);
    for (int i = 0; i < DEEP; i++) {
        qr0[i] = (uint32_t)(rnd() % (ROWS - 32));
        qc0[i] = (uint32_t)(rnd() % ((ROW_BYTES - 128) / 16)) * 8;
    }
    pa_error e;
    for (uint32_t b = 0; b < DEEP / PER_BAR; b++)
        if (pa_machine_mbar_init(&mach, 0, 65536 + 8 * b, 1, &e))
            die("mbarrier init", &e);
}

static void queue_loads(int depth)
{
    pa_error e;
    uint64_t state;
    for (int first = 0; first < DEEP; first += depth) {
        for (int i = first; i < first + depth; i++) {
            uint32_t bar = 65536 + 8 * (uint32_t)(i / PER_BAR);
            if (i % PER_BAR == 0 || i == first) {
                uint32_t n = depth < PER_BAR ? (uint32_t)depth : PER_BAR;
                pa_mbarrier *b = pa_machine_mbar(&mach, 0, bar, 0, &e);
                if (!b || pa_mbar_arrive(b, 1, n * 4096, 0, &state, &e))
                    die("arrive", &e);
            }
            int32_t c[PA_MAX_RANK] = {(int32_t)qc0[i], (int32_t)qr0[i], 0, 0, 0};
            if (pa_issue_tile_load(&mach, 0, 0, &qmap, c, 4096 * (uint32_t)(i % 8), 0, bar, 0, 0, &e))
                die("queue load", &e);
        }
        if (pa_machine_run(&mach, &e))
            die("run", &e);
    }
}

static void deep_model(void) { queue_loads(DEEP); }
static void deep_base(void) { queue_loads(8); }

/* bulk_copy: cp.async.bulk global -> shared::cta, 32 KiB at random 16-byte
 * aligned global offsets, each with arrive.expect_tx on one mbarrier. */
#define COPY_BAR 131072u     /* past deep_queue's mbarriers */

static void one_bar_setup(void)
{
    static int done;
    pa_error e;
    if (!done++ && pa_machine_mbar_init(&mach, 0, COPY_BAR, 1, &e))
        die("mbarrier init", &e);
    for (int i = 0; i < NTILES; i++)
        bulk_off[i] = (rnd() % (((256u << 20) - TILE) / 16)) * 16;
}

static void arrive_tx(uint32_t tx)
{
    pa_error e;
    uint64_t state;
    pa_mbarrier *b = pa_machine_mbar(&mach, 0, COPY_BAR, 0, &e);
    if (!b || pa_mbar_arrive(b, 1, tx, 0, &state, &e))
        die("arrive", &e);
}

static void bulk_copy_model(void)
{
    pa_error e;
    pa_bulk_copy_args a;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < NTILES; i++) {
        arrive_tx(TILE);
        if (pa_issue_bulk_copy(&mach, 0, 0, PA_BULK_G2S_CTA, 1024, GBASE + bulk_off[i], TILE, COPY_BAR, &a, &e) ||
            pa_machine_run(&mach, &e))
            die("bulk copy", &e);
    }
}

static void bulk_copy_base(void)
{
    for (int i = 0; i < NTILES; i++)
        memcpy(smem.base + 1024, tensor + bulk_off[i], TILE);
    sink = smem.base[1024];
}

/* cp_async_batch: 32 KiB as 2,048 16-byte cp.async.cg from one random global
 * run, committed as one group and waited for (a thread block's copy loop,
 * issued as one pa_issue_cp_async_run: bench_ops gives the cost of a
 * cp.async issued by its own call). */
static void cp_async_model(void)
{
    pa_error e;
    pa_cp_async_args a;
    memset(&a, 0, sizeof a);
    a.cp_size = a.src_size = 16;   /* whole copies: src-size 0 would read nothing and zero-fill */
    a.cg = 1;
    for (int i = 0; i < NTILES / 8; i++) {
        if (pa_issue_cp_async_run(&mach, 0, 0, 1024, 16, GBASE + bulk_off[i], 16, TILE / 16, &a, &e))
            die("cp.async", &e);
        if (pa_cp_async_commit_group(&mach, 0, 0, &e) || pa_cp_async_wait_all(&mach, 0, 0, &e))
            die("cp.async wait", &e);
    }
}

static void cp_async_base(void)
{
    for (int i = 0; i < NTILES / 8; i++)
        memcpy(smem.base + 1024, tensor + bulk_off[i], TILE);
    sink = smem.base[1024];
}

/* im2col: a 64 x 64 x 64 x 64 (N, H, W, C) bf16 tensor (32 MiB: the start of
 * the 256 MiB one), 128B swizzle, 256 pixels of 64 channels per column (the
 * whole image rows h .. h+3 of image n: one contiguous 32 KiB); against a
 * memcpy of those 32 KiB. */
static void im2col_map(pa_swizzle sw)
{
    one_bar_setup();
    pa_im2col_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_BFLOAT16;
    p.rank = 4;
    p.global_address = GBASE;
    p.global_dim[0] = 64, p.global_dim[1] = 64, p.global_dim[2] = 64, p.global_dim[3] = 64;
    p.global_strides[0] = 128, p.global_strides[1] = 128 * 64, p.global_strides[2] = 128 * 64 * 64;
    p.channels_per_pixel = 64;
    p.pixels_per_column = 256;
    for (int d = 0; d < 4; d++)
        p.element_strides[d] = 1;
    p.swizzle = sw;
    pa_error e;
    if (pa_tensormap_encode_im2col(&cur, &p, &e))
        die("encode im2col", &e);
    for (int i = 0; i < NTILES; i++) {
        r0s[i] = (uint32_t)(rnd() % 61);        /* h: rows h .. h+3 in the image */
        c0s[i] = (uint32_t)(rnd() % 64);        /* n */
    }
}

static void im2col_setup(void)
{
    im2col_map(PA_SWIZZLE_128B);
}

/* im2col_unswizzled: the same columns with no swizzle: each one run of 32 KiB
 * in global and in shared memory. */
static void im2col_none_setup(void)
{
    im2col_map(PA_SWIZZLE_NONE);
}

static void im2col_model(void)
{
    pa_error e;
    const uint16_t offs[PA_MAX_RANK - 2] = {0, 0, 0};
    for (int i = 0; i < NTILES; i++) {
        int32_t c[PA_MAX_RANK] = {0, 0, (int32_t)r0s[i], (int32_t)c0s[i], 0};
        arrive_tx(TILE);
        if (pa_issue_tensor_load(&mach, 0, 0, &cur, PA_MODE_IM2COL, c, offs, 1024, 0, COPY_BAR, 0, 0, &e) ||
            pa_machine_run(&mach, &e))
            die("im2col load", &e);
    }
}

static void im2col_base(void)
{
    for (int i = 0; i < NTILES; i++)
        memcpy(scratch, tensor + ((size_t)c0s[i] * 64 + r0s[i]) * 64 * 128, TILE);
    sink = scratch[0];
}

/* gather4: .tile::gather4 (sm_100a) of four random 128-byte rows of the 256
 * MiB tensor, 128B swizzle, 64 loads in flight per run; against a memcpy of
 * the same rows. */
#define G4 (NTILES * 8)
static uint32_t g4_rows[G4][4], g4_col[G4];
static int32_t g4_coords[G4][PA_MAX_RANK];   /* the same, as the loads' operands */
static uint32_t g4_dst[64];

static void gather4_setup(void)
{
    one_bar_setup();
    pa_tiled_params p = params2d(PA_DTYPE_BFLOAT16, 2, 128, 1, PA_SWIZZLE_128B, PA_OOB_FILL_NONE, ROWS);
    p.target = PA_TARGET_SM_100A;
    pa_error e;
    if (pa_tensormap_encode_tiled(&cur, &p, &e))
        die("encode gather4", &e);
    if (pa_machine_set_target(&mach, PA_TARGET_SM_100A, &e))
        die("target", &e);
    for (int i = 0; i < G4; i++) {
        g4_col[i] = (uint32_t)(rnd() % ((ROW_BYTES - 128) / 16)) * 8;
        for (int k = 0; k < 4; k++)
            g4_rows[i][k] = (uint32_t)(rnd() % ROWS);
        const int32_t c[PA_MAX_RANK] = {(int32_t)g4_col[i], (int32_t)g4_rows[i][0], (int32_t)g4_rows[i][1],
                                        (int32_t)g4_rows[i][2], (int32_t)g4_rows[i][3]};
        memcpy(g4_coords[i], c, sizeof c);
    }
    for (uint32_t j = 0; j < 64; j++)
        g4_dst[j] = 1024 + 512 * j;
}

/* The 64 loads of a run issued as one pa_issue_tensor_load_run: the same 64
 * queued loads as 64 calls of pa_issue_tensor_load (engine.h), without 64 C
 * calls (as cp_async_batch issues its copies). Each side reads the rows'
 * coordinates in the form it takes them: the model as the loads' operand
 * vectors, the baseline as row numbers and a column. */
static void gather4_model(void)
{
    pa_error e;
    uint32_t issued;
    for (int i = 0; i < G4; i += 64) {
        arrive_tx(64 * 512);
        if (pa_issue_tensor_load_run(&mach, 0, 0, &cur, PA_MODE_TILE_GATHER4, (const int32_t(*)[PA_MAX_RANK])g4_coords[i],
                                     g4_dst, 64, COPY_BAR, &issued, &e))
            die("gather4 load", &e);
        if (pa_machine_run(&mach, &e))
            die("run", &e);
    }
}

static void gather4_base(void)
{
    for (int i = 0; i < G4; i++)
        for (int k = 0; k < 4; k++)
            memcpy(scratch + 512 * (i & 63) + 128 * k, tensor + (size_t)g4_rows[i][k] * ROW_BYTES + 2 * g4_col[i], 128);
    sink = scratch[0];
}

static const bench BENCHES[] = {
    {"tile_load_c", tile_setup, tile_model, tile_base, (double)NTILES * TILE},
    {"oob_nan_fill", oob_nan_setup, oob_nan_model, memset_base, (double)NTILES * TILE},
    {"oob_half", oob_half_setup, oob_half_model, oob_half_base, (double)NTILES * TILE},
    {"tf32_load", tf32_setup, tf32_model, tile_base, (double)NTILES * TILE},
    {"tile_store", store_setup, store_model, store_base, (double)NTILES * TILE},
    {"tensor_reduce_add_bf16", red_bf16_setup, store_model, store_base, (double)NTILES * TILE},
    {"tensor_reduce_add_f32", red_f32_setup, store_model, store_base, (double)NTILES * TILE},
    {"tensor_reduce_add_u32", red_u32_setup, store_model, store_base, (double)NTILES * TILE},
    {"bulk_reduce_add_f32", bulk_f32_setup, bulk_model, bulk_base, (double)NTILES * TILE},
    {"bulk_reduce_add_noftz_bf16", bulk_bf16_setup, bulk_model, bulk_base, (double)NTILES * TILE},
    {"deep_queue", deep_setup, deep_model, deep_base, (double)DEEP * 4096},
    {"tensor_reduce_add_f16", red_f16_setup, store_model, store_base, (double)NTILES * TILE},
    {"tensor_reduce_add_f32_ftz", red_f32_ftz_setup, store_model, store_base, (double)NTILES * TILE},
    {"bulk_reduce_add_noftz_f16", bulk_f16_setup, bulk_model, bulk_base, (double)NTILES * TILE},
    {"bulk_copy", one_bar_setup, bulk_copy_model, bulk_copy_base, (double)NTILES * TILE},
    {"cp_async_batch", one_bar_setup, cp_async_model, cp_async_base, (double)NTILES / 8 * TILE},
    {"im2col_load", im2col_setup, im2col_model, im2col_base, (double)NTILES * TILE},
    {"im2col_load_unswizzled", im2col_none_setup, im2col_model, im2col_base, (double)NTILES * TILE},
    {"gather4_load", gather4_setup, gather4_model, gather4_base, (double)G4 * 512},
};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define TENSOR_BYTES ((size_t)ROWS * ROW_BYTES)
#define SCRATCH_BYTES ((size_t)8 * TILE)

/* The tensor's data: the generator's first values (the keys' setups draw
 * after them). */
static void fill_tensor(void)
{
    for (size_t i = 0; i < TENSOR_BYTES; i += 8) {
        uint64_t v = rnd();
        memcpy(tensor + i, &v, 8);
    }
}

/* The machine, with the tensor as global memory (0; else a pa_error code). */
static int machine_setup(pa_error *e)
{
    uint64_t id;
    int rc = pa_machine_init(&mach, 1, 200 * 1024, e);
    if (rc || (rc = pa_global_add(&mach.global, GBASE, (uint64_t)TENSOR_BYTES, tensor, &id, e)))
        return rc;
    smem = (pa_smem_view){mach.cluster.smem[0], mach.cluster.smem_bytes};
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    if (rounds < 1 || rounds > 99)
        rounds = 3;
    /* huge pages where the kernel offers them, as NumPy asks for its large
     * arrays (the Python keys' tensors): both sides read the same memory */
    if (posix_memalign((void **)&tensor, 2u << 20, TENSOR_BYTES))
        tensor = NULL;
#ifdef MADV_HUGEPAGE
    if (tensor)
        madvise(tensor, TENSOR_BYTES, MADV_HUGEPAGE);
#endif
    scratch = malloc(SCRATCH_BYTES);
    if (!tensor || !scratch)
        die("out of memory", NULL);
    fill_tensor();
    pa_error e;
    if (machine_setup(&e))
        die("machine", &e);
    for (size_t b = 0; b < sizeof BENCHES / sizeof *BENCHES; b++) {
        const bench *k = &BENCHES[b];
        int wanted = argc <= 2;
        for (int a = 2; a < argc; a++)
            wanted |= strcmp(argv[a], k->key) == 0;
        if (!wanted)
            continue;
        void (*plain)(void) = k->base == bulk_base ? bulk_plain : NULL;   /* the bulk reductions' roofline */
        k->setup();
        k->model();   /* warm up */
        k->base();
        double ratio[99], tm[99], tb[99], tp[99], rp[99];
        for (int r = 0; r < rounds; r++) {
            double t0 = now();
            k->model();
            double t1 = now();
            k->base();
            double t2 = now();
            tm[r] = t1 - t0;
            tb[r] = t2 - t1;
            ratio[r] = tb[r] / tm[r];
            if (plain) {
                /* after the baseline, as the model is: a read-modify-write
                 * measured slower after another one than after a memcpy; the
                 * memcpy again after it puts back the values the model starts from */
                plain();
                tp[r] = now() - t2;
                rp[r] = tp[r] / tm[r];
                k->base();
            }
        }
        double rm = median(ratio, rounds), mm = median(tm, rounds), mb = median(tb, rounds);
        printf("{\"key\": \"%s\", \"ratio\": %.4f, \"model_gbs\": %.3f, \"base_gbs\": %.3f", k->key, rm,
               k->bytes / mm / 1e9, k->bytes / mb / 1e9);
        if (plain)
            printf(", \"plain_add_gbs\": %.3f, \"ratio_to_plain_add\": %.4f", k->bytes / median(tp, rounds) / 1e9,
                   median(rp, rounds));
        printf("}\n");
        fflush(stdout);
    }
    pa_machine_free(&mach);
    free(tensor);
    free(scratch);
    return 0;
}
