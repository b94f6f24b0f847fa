/* gbox.c - the global side of tensor copies, for the memory checks.
 *
 * A tensor copy touches global memory as a strided box: one run of bytes per
 * box row (or per element where the traversal stride of dim 0 is not 1),
 * rows far apart. The checker keeps, per pending tensor copy, the runs and a
 * copy of their bytes (what the bulk copies keep as one range):
 *   load             the runs it reads (pa_copy_ranges: every load mode),
 *                    as they were at issue: compared when the load reads them
 *   store/reduction  the runs it writes (the store walk itself, with a
 *                    recording callback: the 16-byte chunk tails of
 *                    observation 9 included), as they were after issue:
 *                    compared when it writes them, and intersected with the
 *                    other pending writes of global memory.
 * Runs are merged where contiguous and sorted by address, so an intersection
 * is one merge pass. The cost is a copy of the box at issue and a compare at
 * completion, paid only with the memory checks on.
 */
#include "watch.h"

#include <stdlib.h>
#include <string.h>

void pa_gbox_free(pa_gbox *g)
{
    free(g->runs);
    free(g->bytes);
    memset(g, 0, sizeof *g);
}

static int add_run(pa_gbox *g, uint64_t addr, uint64_t len)
{
    if (!len)
        return PA_OK;
    if (g->n && g->runs[g->n - 1].addr + g->runs[g->n - 1].len == addr) {
        g->runs[g->n - 1].len += len;
        return PA_OK;
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        pa_grun *r = realloc(g->runs, cap * sizeof *r);
        if (!r)
            return PA_ERR_NO_MEMORY;
        g->runs = r;
        g->cap = cap;
    }
    g->runs[g->n].addr = addr;
    g->runs[g->n].len = len;
    g->n++;
    return PA_OK;
}

static int range_fn(void *ctx, uint64_t row, uint64_t addr, uint64_t nbytes, pa_error *err)
{
    (void)row;
    (void)err;
    return add_run(ctx, addr, nbytes);
}

/* The store walk hands host pointers; name them by global address. */
typedef struct {
    pa_gbox *g;
    const pa_global *mem;
    const pa_gbuf *last;
    int rc;
} store_rec;

static void store_fn(void *ctx, uint8_t *gdst, const uint8_t *ssrc, size_t n)
{
    (void)ssrc;
    store_rec *s = ctx;
    const pa_gbuf *b = s->last;
    if (!b || gdst < b->data || gdst >= b->data + b->size) {
        b = NULL;
        for (size_t i = 0; i < s->mem->n && !b; i++)
            if (gdst >= s->mem->bufs[i].data && gdst < s->mem->bufs[i].data + s->mem->bufs[i].size)
                b = &s->mem->bufs[i];
        s->last = b;
    }
    if (b && !s->rc)
        s->rc = add_run(s->g, b->base + (uint64_t)(gdst - b->data), n);
}

static int by_addr(const void *a, const void *b)
{
    const pa_grun *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Host bytes of run i: one lookup for the whole box when it lies in one
 * buffer (the usual case), else one per run. NULL if it does not resolve. */
static uint8_t *run_bytes(pa_machine *m, const pa_gbox *g, uint8_t *base, size_t i)
{
    const pa_grun *r = &g->runs[i];
    return base ? base + (r->addr - g->lo) : pa_global_resolve(&m->global, r->addr, r->len, NULL);
}

static uint8_t *box_base(pa_machine *m, const pa_gbox *g)
{
    return g->n ? pa_global_resolve(&m->global, g->lo, g->hi - g->lo, NULL) : NULL;
}

int pa_gbox_take(pa_machine *m, const pa_op *op, pa_gbox *g)
{
    memset(g, 0, sizeof *g);
    const pa_tensor_payload *t = &op->u.tensor;
    pa_error e;
    int rc;
    if (op->kind == PA_OP_TILE_LOAD) {
        rc = pa_copy_ranges(&t->plan, range_fn, g, &e);
    } else if (op->kind == PA_OP_TILE_STORE || op->kind == PA_OP_TENSOR_REDUCE) {
        store_rec s = {g, &m->global, NULL, PA_OK};
        g->writes = 1;
        g->reduce = op->kind == PA_OP_TENSOR_REDUCE;
        rc = pa_copy_store(&t->plan, &m->global, pa_smem_of(m, op->cta), pa_smem_offset(t->smem_addr), store_fn,
                           &s, &e);
        rc = rc ? rc : s.rc;
    } else {
        return PA_OK;   /* not a tensor copy: nothing to watch here */
    }
    if (rc || !g->n) {   /* nothing resolvable (the copy will fault, or reads nothing) */
        pa_gbox_free(g);
        return rc == PA_ERR_NO_MEMORY ? rc : PA_OK;
    }
    size_t k = 1;
    while (k < g->n && g->runs[k - 1].addr <= g->runs[k].addr)
        k++;
    if (k < g->n)   /* box rows usually come in address order already */
        qsort(g->runs, g->n, sizeof *g->runs, by_addr);
    for (size_t i = 0; i < g->n; i++)
        g->nbytes += g->runs[i].len;
    g->bytes = malloc(g->nbytes);
    if (!g->bytes) {
        pa_gbox_free(g);
        return PA_ERR_NO_MEMORY;
    }
    g->lo = g->runs[0].addr;
    g->hi = g->runs[g->n - 1].addr + g->runs[g->n - 1].len;
    for (size_t i = 0; i < g->n; i++)
        if (g->runs[i].addr + g->runs[i].len > g->hi)
            g->hi = g->runs[i].addr + g->runs[i].len;
    memset(g->bytes, 0, g->nbytes);
    pa_gbox_snapshot(m, g);
    return PA_OK;
}

void pa_gbox_poison(pa_machine *m, const pa_gbox *g)
{
    uint8_t *base = box_base(m, g);
    for (size_t i = 0; i < g->n; i++) {
        uint8_t *p = run_bytes(m, g, base, i);
        for (uint64_t k = 0; p && k < g->runs[i].len; k++)
            p[k] = pa_poison_byte(g->runs[i].addr + k);
    }
}

void pa_gbox_snapshot(pa_machine *m, pa_gbox *g)
{
    uint8_t *base = box_base(m, g);
    uint64_t at = 0;
    for (size_t i = 0; i < g->n; i++) {
        const uint8_t *p = run_bytes(m, g, base, i);
        if (p)
            memcpy(g->bytes + at, p, g->runs[i].len);
        at += g->runs[i].len;
    }
}

void pa_gbox_refresh(pa_machine *m, pa_gbox *g, uint64_t addr, uint64_t len)
{
    uint64_t at = 0;
    for (size_t i = 0; i < g->n; at += g->runs[i].len, i++) {
        const pa_grun *r = &g->runs[i];
        uint64_t lo = r->addr > addr ? r->addr : addr;
        uint64_t hi = r->addr + r->len < addr + len ? r->addr + r->len : addr + len;
        const uint8_t *p = lo < hi ? pa_global_resolve(&m->global, lo, hi - lo, NULL) : NULL;
        if (p)
            memcpy(g->bytes + at + (lo - r->addr), p, hi - lo);
    }
}

const pa_grun *pa_gbox_changed(pa_machine *m, const pa_gbox *g)
{
    uint8_t *base = box_base(m, g);
    uint64_t at = 0;
    for (size_t i = 0; i < g->n; i++) {
        const uint8_t *p = run_bytes(m, g, base, i);
        if (p && memcmp(p, g->bytes + at, g->runs[i].len))
            return &g->runs[i];
        at += g->runs[i].len;
    }
    return NULL;
}

int pa_gbox_hits(const pa_gbox *g, uint64_t addr, uint64_t len, pa_grun *hit)
{
    if (!g->n || !len || addr >= g->hi || addr + len <= g->lo)
        return 0;
    for (size_t i = 0; i < g->n; i++) {
        const pa_grun *r = &g->runs[i];
        if (r->addr >= addr + len)
            break;
        if (addr < r->addr + r->len) {
            hit->addr = r->addr > addr ? r->addr : addr;
            uint64_t e1 = r->addr + r->len, e2 = addr + len;
            hit->len = (e1 < e2 ? e1 : e2) - hit->addr;
            return 1;
        }
    }
    return 0;
}

int pa_gbox_meets(const pa_gbox *a, const pa_gbox *b, pa_grun *hit)
{
    if (!a->n || !b->n || a->lo >= b->hi || b->lo >= a->hi)
        return 0;
    for (size_t i = 0; i < a->n; i++)   /* each run of a against b's, sorted by start */
        if (pa_gbox_hits(b, a->runs[i].addr, a->runs[i].len, hit))
            return 1;
    return 0;
}
