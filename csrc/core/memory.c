/* memory.c - global buffer registry and cluster shared memory. */
#include "memory.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Auto-assigned addresses start where a CUDA device heap typically lives,
 * so printed addresses look familiar. */
#define PA_AUTO_BASE 0x7f0000000000ull
#define PA_GUARD_GAP 4096u

void pa_global_init(pa_global *g)
{
    memset(g, 0, sizeof *g);
    g->next_id = 1;
    g->next_auto = PA_AUTO_BASE;
}

void pa_global_free(pa_global *g)
{
    free(g->bufs);
    g->bufs = NULL;
    g->n = g->cap = 0;
    free(g->mcs);
    g->mcs = NULL;
    g->nmc = g->capmc = 0;
}

/* The multicast window that [a, a + size) touches, or NULL (few windows: a scan). */
static const pa_mcwin *window_hit(const pa_global *g, uint64_t a, uint64_t size)
{
    for (size_t i = 0; i < g->nmc; i++)
        if (g->mcs[i].base < a + size && a < g->mcs[i].base + g->mcs[i].size)
            return &g->mcs[i];
    return NULL;
}

/* Index of the first buffer with base > addr. */
static size_t upper_bound(const pa_global *g, uint64_t addr)
{
    size_t lo = 0, hi = g->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->bufs[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int pa_global_add(pa_global *g, uint64_t base, uint64_t size, uint8_t *data, uint64_t *id,
                  pa_error *err)
{
    if (size == 0)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "a global buffer needs at least 1 byte (size 0)");
    if (base + size < base)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "global buffer [0x%" PRIx64 ", +%" PRIu64 ") wraps around the address space",
                       base, size);
    size_t pos = upper_bound(g, base);
    if (pos > 0) {
        const pa_gbuf *prev = &g->bufs[pos - 1];
        if (prev->base + prev->size > base)
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "global buffer at 0x%" PRIx64 " overlaps the buffer [0x%" PRIx64
                           ", 0x%" PRIx64 ")",
                           base, prev->base, prev->base + prev->size);
    }
    if (pos < g->n && g->bufs[pos].base < base + size)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "global buffer [0x%" PRIx64 ", 0x%" PRIx64 ") overlaps the buffer at 0x%" PRIx64,
                       base, base + size, g->bufs[pos].base);
    const pa_mcwin *w = window_hit(g, base, size);
    if (w)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "global buffer [0x%" PRIx64 ", 0x%" PRIx64 ") overlaps the multicast window [0x%" PRIx64
                       ", 0x%" PRIx64 ")", base, base + size, w->base, w->base + w->size);
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 8;
        pa_gbuf *nb = realloc(g->bufs, cap * sizeof *nb);
        if (!nb)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the buffer registry");
        g->bufs = nb;
        g->cap = cap;
    }
    memmove(&g->bufs[pos + 1], &g->bufs[pos], (g->n - pos) * sizeof *g->bufs);
    g->bufs[pos] = (pa_gbuf){base, size, data, g->next_id++};
    g->n++;
    if (id)
        *id = g->bufs[pos].id;
    if (base + size > g->next_auto && base >= PA_AUTO_BASE)
        g->next_auto = base + size;
    return PA_OK;
}

int pa_global_add_multicast(pa_global *g, uint64_t base, uint64_t size, uint32_t n, uint8_t *const copy[],
                            const uint64_t local[], uint64_t *id, pa_error *err)
{
    if (n < 1 || n > PA_MC_MAX)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "a multicast object binds 1 to %d copies (%u given)", PA_MC_MAX, n);
    if (size == 0 || base + size < base)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "multicast window [0x%" PRIx64 ", +%" PRIu64 ") is empty or "
                       "wraps around the address space", base, size);
    size_t pos = upper_bound(g, base + size - 1);
    if (pos > 0 && g->bufs[pos - 1].base + g->bufs[pos - 1].size > base)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "multicast window [0x%" PRIx64 ", 0x%" PRIx64 ") overlaps the "
                       "global buffer at 0x%" PRIx64, base, base + size, g->bufs[pos - 1].base);
    const pa_mcwin *w = window_hit(g, base, size);
    if (w)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "multicast window [0x%" PRIx64 ", 0x%" PRIx64 ") overlaps the "
                       "window at 0x%" PRIx64, base, base + size, w->base);
    if (g->nmc == g->capmc) {
        size_t cap = g->capmc ? g->capmc * 2 : 4;
        pa_mcwin *nw = realloc(g->mcs, cap * sizeof *nw);
        if (!nw)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the multicast windows");
        g->mcs = nw;
        g->capmc = cap;
    }
    pa_mcwin *m = &g->mcs[g->nmc++];
    *m = (pa_mcwin){.base = base, .size = size, .id = g->next_id++, .n = n};
    for (uint32_t k = 0; k < n; k++) {
        m->copy[k] = copy[k];
        m->local[k] = local ? local[k] : PA_MC_FOREIGN;
    }
    if (id)
        *id = m->id;
    if (base + size > g->next_auto && base >= PA_AUTO_BASE)
        g->next_auto = base + size;
    return PA_OK;
}

const pa_mcwin *pa_global_multicast(const pa_global *g, uint64_t addr, uint64_t len, pa_error *err)
{
    for (size_t i = 0; i < g->nmc; i++) {
        const pa_mcwin *w = &g->mcs[i];
        if (addr - w->base < w->size) {
            if (len <= w->size - (addr - w->base))
                return w;
            pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "illegal multimem address 0x%" PRIx64 ": the %" PRIu64 "-byte "
                    "access runs past the end of the multicast window [0x%" PRIx64 ", 0x%" PRIx64 ")", addr, len,
                    w->base, w->base + w->size);
            return NULL;
        }
    }
    pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "illegal multimem address 0x%" PRIx64 ": %s", addr,
            pa_global_find(g, addr) ? "a global buffer's, not a multicast object's (ISA 9.7.9.14: the address "
            "must be a multimem address)" : "no multicast object is mapped there");
    return NULL;
}

int pa_global_remove(pa_global *g, uint64_t id, pa_error *err)
{
    for (size_t i = 0; i < g->nmc; i++) {
        if (g->mcs[i].id == id) {
            g->mcs[i] = g->mcs[--g->nmc];
            return PA_OK;
        }
    }
    for (size_t i = 0; i < g->n; i++) {
        if (g->bufs[i].id == id) {
            memmove(&g->bufs[i], &g->bufs[i + 1], (g->n - i - 1) * sizeof *g->bufs);
            g->n--;
            return PA_OK;
        }
    }
    return pa_fail(err, PA_ERR_INVALID_VALUE, "no global buffer with id %" PRIu64, id);
}

/* The lowest address >= start aligned to align (a power of two) where
 * [a, a + size) touches no buffer; 0 if none below 2^64. Every clash moves a
 * past one buffer, so the search ends after at most n + 1 probes. */
static int fit_from(const pa_global *g, uint64_t start, uint64_t size, uint64_t align, uint64_t *out)
{
    uint64_t a = start;
    for (;;) {
        if (a > UINT64_MAX - (align - 1))
            return 0;
        a = (a + align - 1) & ~(align - 1);
        if (size > UINT64_MAX - a)   /* a buffer may not end at or past 2^64 */
            return 0;
        size_t pos = upper_bound(g, a);
        const pa_gbuf *hit = NULL;
        if (pos > 0 && g->bufs[pos - 1].size > a - g->bufs[pos - 1].base)
            hit = &g->bufs[pos - 1];
        else if (pos < g->n && g->bufs[pos].base - a < size)
            hit = &g->bufs[pos];
        uint64_t end;
        const pa_mcwin *w = hit ? NULL : window_hit(g, a, size);
        if (!hit && !w) {
            *out = a;
            return 1;
        }
        end = hit ? hit->base + hit->size : w->base + w->size;   /* add() refused ranges that wrap */
        if (end > UINT64_MAX - PA_GUARD_GAP)
            return 0;
        a = end + PA_GUARD_GAP;
    }
}

int pa_global_pick_address(pa_global *g, uint64_t size, uint64_t align, uint64_t *addr, pa_error *err)
{
    if (align == 0 || (align & (align - 1)))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "alignment %" PRIu64 " is not a power of two", align);
    if (size == 0)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "a global buffer needs at least 1 byte (size 0)");
    /* After the last address handed out; then from the bottom (never 0, the null address). */
    uint64_t a;
    if (!fit_from(g, g->next_auto, size, align, &a) && !fit_from(g, PA_GUARD_GAP, size, align, &a))
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "no free global address range of %" PRIu64 " bytes aligned to %" PRIu64
                       " is left below 2^64",
                       size, align);
    /* Leave a guard gap so that running off one buffer never lands in the next. */
    uint64_t end = a + size;
    g->next_auto = end > UINT64_MAX - PA_GUARD_GAP ? UINT64_MAX : end + PA_GUARD_GAP;
    *addr = a;
    return PA_OK;
}

const pa_gbuf *pa_global_find(const pa_global *g, uint64_t addr)
{
    size_t pos = upper_bound(g, addr);
    if (pos > 0 && addr - g->bufs[pos - 1].base < g->bufs[pos - 1].size)
        return &g->bufs[pos - 1];
    return NULL;
}

uint8_t *pa_global_resolve(const pa_global *g, uint64_t addr, uint64_t len, pa_error *err)
{
    size_t pos = upper_bound(g, addr);
    if (pos > 0) {
        const pa_gbuf *b = &g->bufs[pos - 1];
        uint64_t off = addr - b->base;
        /* An empty range may start at the buffer's end, as [addr, addr + len) is then inside it
         * (the same rule as pa_smem_resolve). */
        if ((off < b->size || (len == 0 && off == b->size)) && len <= b->size - off)
            return b->data + off;
        if (off < b->size) {
            pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                    "illegal global address 0x%" PRIx64 ": the %" PRIu64
                    "-byte access runs past the end of the buffer [0x%" PRIx64 ", 0x%" PRIx64 ")",
                    addr + (b->size - off), len, b->base, b->base + b->size);
            return NULL;
        }
    }
    if (addr == PA_GADDR_OVERFLOW)
        pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                "illegal global address: globalAddress + coordinates x strides reaches 2^64 - 1 "
                "or beyond (no memory there)");
    else if (window_hit(g, addr, 1))
        pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                "illegal global address 0x%" PRIx64 ": a multicast object's address, which only multimem.* "
                "instructions access (ISA 9.7.9.14: any other memory operation on it is undefined)", addr);
    else
        pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                "illegal global address 0x%" PRIx64 ": no registered global buffer holds it", addr);
    return NULL;
}

int pa_cluster_init(pa_cluster *c, uint32_t nctas, uint32_t smem_bytes, pa_error *err)
{
    memset(c, 0, sizeof *c);
    if (nctas < 1 || nctas > PA_MAX_CLUSTER)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "cluster size %u is outside 1..%d", nctas,
                       PA_MAX_CLUSTER);
    if (smem_bytes > PA_SMEM_MAX)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "shared memory of %u bytes per CTA exceeds the limit of %u (227 KiB, the most a CTA has on any target)",
                       smem_bytes, PA_SMEM_MAX);
    for (uint32_t r = 0; r < nctas; r++) {
        /* On a 4 KiB boundary, as the row writers' 64-byte vector stores and
         * the swizzle's 1 KiB pattern assume: a malloc'd block starts 16 bytes
         * into its page, and every such store would split over two lines. */
        const size_t bytes = ((size_t)(smem_bytes ? smem_bytes : 1) + 4095) / 4096 * 4096;
        c->smem[r] = aligned_alloc(4096, bytes);
        if (c->smem[r])
            memset(c->smem[r], 0, bytes);
        if (!c->smem[r]) {
            pa_cluster_free(c);
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for shared memory");
        }
    }
    c->nctas = nctas;
    c->smem_bytes = smem_bytes;
    return PA_OK;
}

void pa_cluster_free(pa_cluster *c)
{
    for (uint32_t r = 0; r < PA_MAX_CLUSTER; r++) {
        free(c->smem[r]);
        c->smem[r] = NULL;
    }
    c->nctas = 0;
}

uint8_t *pa_smem_resolve(const pa_cluster *c, uint32_t self_rank, int cluster_space, uint32_t addr,
                         uint32_t len, uint32_t *rank_out, pa_error *err)
{
    uint32_t rank = pa_smem_rank(addr), off = pa_smem_offset(addr);
    if (!cluster_space && rank != self_rank) {
        pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                "illegal shared::cta address 0x%x: it names CTA rank %u, not the issuing CTA %u", addr,
                rank, self_rank);
        return NULL;
    }
    if (rank >= c->nctas) {
        pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                "illegal shared::cluster address 0x%x: CTA rank %u is outside the cluster of %u", addr,
                rank, c->nctas);
        return NULL;
    }
    if (off > c->smem_bytes || len > c->smem_bytes - off) {
        pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                "illegal shared address 0x%x: [0x%x, +%u) is outside the %u bytes of CTA %u's shared memory",
                addr, off, len, c->smem_bytes, rank);
        return NULL;
    }
    if (rank_out)
        *rank_out = rank;
    return c->smem[rank] + off;
}
