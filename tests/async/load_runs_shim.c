/* load_runs_shim.c - two C machines behind a flat interface for ctypes
 * (test_tensor_load_runs.py): one with nothing hung on its queue, where
 * tensor loads issued back to back become one run record (engine/tensor.c),
 * and one with a hook that keeps every load a record of its own. The tensor
 * is split over two buffers with a gap, or whole in one (where a run's
 * gather4 loads of whole lines complete in one pass, copy/gather4run.c). */
#include "core.h"
#include "check/watch.h"
#include "simd.h"

#include <stdlib.h>
#include <string.h>

#define SMEM 16384u
#define GBASE 0x100000ull
#define ROW_BYTES 512u     /* 256 bf16 */
#define NROWS 64u

typedef struct {
    pa_machine m;
    pa_error e;
    pa_tensormap maps[3];
} sim;

static void noop_done(void *ctx, pa_machine *m, const pa_op *op)
{
    (void)ctx, (void)m, (void)op;
}

static int map(pa_tensormap *out, uint32_t box0, uint32_t box1, int swizzle, pa_error *e)
{
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = PA_DTYPE_BFLOAT16;
    p.rank = 2;
    p.global_address = GBASE;
    p.global_dim[0] = ROW_BYTES / 2;
    p.global_dim[1] = NROWS;
    p.global_strides[0] = ROW_BYTES;
    p.box_dim[0] = box0;
    p.box_dim[1] = box1;
    p.element_strides[0] = p.element_strides[1] = 1;
    p.swizzle = swizzle;
    p.target = PA_TARGET_SM_100A;
    return pa_tensormap_encode_tiled(out, &p, e);
}

/* split: rows [0, 40) and [48, 64) of the tensor in two buffers, rows
 * 40..47 in none; else the 64 rows in one buffer */
sim *sim_new(int policy, int hooked, uint8_t *data, int split)
{
    sim *s = calloc(1, sizeof *s);
    uint64_t id;
    if (!s || pa_machine_init(&s->m, 1, SMEM, &s->e) ||
        pa_global_add(&s->m.global, GBASE, (split ? 40 : NROWS) * ROW_BYTES, data, &id, &s->e) ||
        (split && pa_global_add(&s->m.global, GBASE + 48 * ROW_BYTES, 16 * ROW_BYTES, data + 48 * ROW_BYTES, &id,
                                &s->e)) ||
        map(&s->maps[0], 64, 1, PA_SWIZZLE_128B, &s->e) || map(&s->maps[1], 32, 1, PA_SWIZZLE_NONE, &s->e) ||
        map(&s->maps[2], 64, 2, PA_SWIZZLE_128B, &s->e) ||
        pa_machine_mbar_init(&s->m, 0, 15360, 1, &s->e) || pa_machine_mbar_init(&s->m, 0, 15368, 1, &s->e)) {
        free(s);
        return NULL;
    }
    if (pa_machine_set_target(&s->m, PA_TARGET_SM_100A, &s->e)) {
        free(s);
        return NULL;
    }
    pa_machine_set_policy(&s->m, (pa_policy)policy, 1);
    if (hooked)
        s->m.aside.on_done = noop_done;
    return s;
}

void sim_free(sim *s)
{
    pa_machine_free(&s->m);
    free(s);
}

/* map k: 0 gather4 128-byte rows, 128B swizzle; 1 gather4 64-byte rows, no
 * swizzle; 2 a .tile box of 2 x 128 bytes (mode 0) */
int sim_load(sim *s, uint32_t thread, int k, int mode, int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4,
             uint32_t dst, uint32_t mbar)
{
    const int32_t c[PA_MAX_RANK] = {c0, c1, c2, c3, c4};
    return pa_issue_tensor_load(&s->m, 0, thread, &s->maps[k], (pa_load_mode)mode, c, NULL, dst, 0, mbar, 0, 0,
                                &s->e);
}

/* n loads of map k in one call: coords n x 5, dst n; *issued: how many went */
int sim_load_run(sim *s, uint32_t thread, int k, int mode, const int32_t *coords, const uint32_t *dst, uint32_t n,
                 uint32_t mbar, uint32_t *issued)
{
    return pa_issue_tensor_load_run(&s->m, 0, thread, &s->maps[k], (pa_load_mode)mode,
                                    (const int32_t(*)[PA_MAX_RANK])coords, dst, n, mbar, issued, &s->e);
}

int sim_arrive(sim *s, uint32_t mbar, uint32_t count, uint32_t tx)
{
    uint64_t state;
    pa_mbarrier *b = pa_machine_mbar(&s->m, 0, mbar, 0, &s->e);
    return b ? pa_mbar_arrive(b, count, tx, 0, &state, &s->e) : (int)s->e.code;
}

int sim_inval(sim *s, uint32_t mbar)
{
    pa_mbarrier *b = pa_machine_mbar(&s->m, 0, mbar, 0, &s->e);
    if (!b)
        return (int)s->e.code;
    pa_mbar_inval(b);
    return 0;
}

int sim_init(sim *s, uint32_t mbar, uint32_t count) { return pa_machine_mbar_init(&s->m, 0, mbar, count, &s->e); }

int sim_wait(sim *s, uint32_t mbar, uint32_t parity, int *result)
{
    return pa_machine_try_wait_parity(&s->m, 0, mbar, parity, result, &s->e);
}

int sim_step(sim *s, int *done) { return pa_machine_step(&s->m, done, &s->e); }
int sim_run(sim *s) { return pa_machine_run(&s->m, &s->e); }
void sim_set_policy(sim *s, int policy) { pa_machine_set_policy(&s->m, (pa_policy)policy, 1); }

/* pending, issued, completed, records */
void sim_counts(sim *s, uint64_t out[4])
{
    out[0] = s->m.nops;
    out[1] = s->m.next_seq;
    out[2] = s->m.completed;
    out[3] = s->m.all.n;
}

/* valid, phase, expected, pending, tx, tx_expected, tx_credited, signalling operations, their tx */
void sim_mbar(sim *s, uint32_t mbar, int64_t out[9])
{
    pa_mbarrier *b = pa_machine_mbar(&s->m, 0, mbar, 0, &s->e);
    uint64_t tx = 0;
    size_t n = pa_qv_signalers(&s->m, 0, mbar, &tx, NULL);
    out[0] = b->valid;
    out[1] = (int64_t)b->phase;
    out[2] = b->expected;
    out[3] = b->pending;
    out[4] = b->tx;
    out[5] = (int64_t)b->tx_expected;
    out[6] = (int64_t)b->tx_credited;
    out[7] = (int64_t)n;
    out[8] = (int64_t)tx;
}

uint8_t *sim_smem(sim *s) { return s->m.cluster.smem[0]; }
/* the vector level of copies set up from now on (simd.h); returns the last cap */
int sim_simd_cap(int level) { return (int)pa_simd_cap((pa_simd)level); }
const char *sim_msg(sim *s) { return s->e.msg; }
