/* shadow.c - the cells, sets and records of one memory (see shadow.h). */
#include "shadow.h"

#include <stdlib.h>
#include <string.h>

enum { PAGE_BITS = 12, PAGE = 1u << PAGE_BITS };
#define NO_REC UINT32_MAX
#define MOVED 0x80000000u       /* a set's first word once collected; the second: its new id */

void hb_shadow_free(hb_shadow *s)
{
    for (size_t h = 0; h < s->cap; h++)
        free(s->pages[h]);
    free(s->keys);
    free(s->pages);
    free(s->sets);
    free(s->recs);
    memset(s, 0, sizeof *s);
}

void hb_shadow_clear(hb_shadow *s)
{
    for (size_t h = 0; h < s->cap; h++)
        if (s->keys[h])
            memset(s->pages[h], 0, PAGE * sizeof *s->pages[h]);
    s->nwords = s->sets ? 1 : 0;
    s->nrecs = 0;
}

/* --- pages ---------------------------------------------------------------------- */

static size_t home(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 29) & (cap - 1);
}

static int rehash(hb_shadow *s)
{
    size_t cap = s->cap ? 2 * s->cap : 16;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint32_t **pages = calloc(cap, sizeof *pages);
    if (!keys || !pages) {
        free(keys);
        free(pages);
        return -1;
    }
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->keys[i])
            continue;
        size_t h = home(s->keys[i], cap);
        while (keys[h])
            h = (h + 1) & (cap - 1);
        keys[h] = s->keys[i];
        pages[h] = s->pages[i];
    }
    free(s->keys);
    free(s->pages);
    s->keys = keys;
    s->pages = pages;
    s->cap = cap;
    return 0;
}

/* The cells of page pn (created with create; NULL: none, or out of memory). */
static uint32_t *page_of(hb_shadow *s, uint64_t pn, int create)
{
    const uint64_t key = pn + 1;
    if (key == s->last_key)
        return s->last;
    size_t h = 0;
    if (s->cap) {
        for (h = home(key, s->cap); s->keys[h]; h = (h + 1) & (s->cap - 1))
            if (s->keys[h] == key) {
                s->last_key = key;
                return s->last = s->pages[h];
            }
    }
    if (!create)
        return NULL;
    if (2 * (s->n + 1) > s->cap) {
        if (rehash(s))
            return NULL;
        for (h = home(key, s->cap); s->keys[h]; h = (h + 1) & (s->cap - 1))
            ;
    }
    uint32_t *p = calloc(PAGE, sizeof *p);
    if (!p)
        return NULL;
    s->keys[h] = key;
    s->pages[h] = p;
    s->n++;
    s->last_key = key;
    return s->last = p;
}

/* The end of the run of cell x (same set, same page), at most end. */
static inline uint64_t run_end(const uint32_t *pg, uint64_t x, uint64_t end)
{
    const uint32_t id = pg[x & (PAGE - 1)];
    uint64_t y = x + 1;
    while (y < end && pg[y & (PAGE - 1)] == id)
        y++;
    return y;
}

/* The end of x's page, at most hi. */
static inline uint64_t page_end(uint64_t x, uint64_t hi)
{
    const uint64_t e = (x | (PAGE - 1)) + 1;   /* 0: the last page of the address space */
    return e && e < hi ? e : hi;
}

/* --- finding ------------------------------------------------------------------------ */

static int holds(const uint32_t *set, uint32_t rid)
{
    for (uint32_t k = 1; k <= set[0]; k++)
        if (set[k] == rid)
            return 1;
    return 0;
}

/* The piece of record rid from `at` on: as far as its bytes go, at most hi. */
static void piece(hb_shadow *s, uint32_t rid, uint64_t at, uint64_t hi, hb_found *f)
{
    uint64_t x = at;
    uint32_t known = 0;        /* a set found to hold rid */
    while (x < hi) {
        const uint64_t pe = page_end(x, hi);
        const uint32_t *pg = page_of(s, x >> PAGE_BITS, 0);
        if (!pg)
            break;
        const uint32_t id = pg[x & (PAGE - 1)];
        if (!id || (id != known && !holds(s->sets + id, rid)))
            break;
        known = id;
        x = run_end(pg, x, pe);
    }
    f->o = &s->recs[rid];
    f->lo = at;
    f->hi = x;
}

void hb_shadow_find(hb_shadow *s, uint64_t lo, uint64_t hi, hb_judge judge, void *ctx, hb_found *f)
{
    int cand = 0;
    uint32_t cand_rid = NO_REC, seen = 0;
    uint64_t cand_at = 0;
    f->verdict = 0;
    for (uint64_t x = lo; x < hi;) {
        const uint64_t pe = page_end(x, hi);
        const uint32_t *pg = page_of(s, x >> PAGE_BITS, 0);
        if (!pg) {
            x = pe;
            continue;
        }
        while (x < pe) {
            const uint32_t id = pg[x & (PAGE - 1)];
            const uint64_t y = run_end(pg, x, pe);
            if (id && id != seen) {   /* a set judged once: its verdicts do not depend on the byte */
                const uint32_t *set = s->sets + id;
                for (uint32_t k = 1; k <= set[0]; k++) {
                    const int v = judge(ctx, &s->recs[set[k]]);
                    if (v == 1) {
                        piece(s, set[k], x, hi, f);
                        f->verdict = 1;
                        return;
                    }
                    if (v && !cand) {
                        cand = v;
                        cand_rid = set[k];
                        cand_at = x;
                    }
                }
                seen = id;
            }
            x = y;
        }
    }
    if (cand) {
        piece(s, cand_rid, cand_at, hi, f);
        f->verdict = cand;
    }
}

/* --- recording -------------------------------------------------------------------- */

static int reserve_words(hb_shadow *s, size_t more)
{
    if (s->nwords + more <= s->capwords)
        return 0;
    size_t cap = s->capwords ? s->capwords : 1024;
    while (cap < s->nwords + more)
        cap *= 2;
    uint32_t *n = realloc(s->sets, cap * sizeof *n);
    if (!n)
        return -1;
    s->sets = n;
    s->capwords = cap;
    return 0;
}

/* The set of old set id (0: empty) less what keep drops, plus rid; 0 out of memory. */
static uint32_t new_set(hb_shadow *s, uint32_t id, uint32_t rid, hb_keep keep, void *ctx)
{
    const uint32_t n = id ? s->sets[id] : 0;
    if (s->nwords == 0)
        s->nwords = 1;   /* id 0 is the empty set */
    if (reserve_words(s, (size_t)n + 2) || s->nwords + n + 2 > UINT32_MAX / 2)
        return 0;
    const uint32_t out = (uint32_t)s->nwords;
    uint32_t *d = s->sets + out, k = 0;
    const uint32_t *old = s->sets + id;
    for (uint32_t i = 1; i <= n; i++)
        if (!keep || keep(ctx, &s->recs[old[i]]))
            d[++k] = old[i];
    d[++k] = rid;
    d[0] = k;
    s->nwords += (size_t)k + 1;
    return out;
}

/* Copy the live sets and records to fresh arenas (renumbering the cells). */
static int collect(hb_shadow *s)
{
    const size_t cap = s->nrecs ? s->nrecs : 1;
    uint32_t *fwd = malloc(cap * sizeof *fwd);
    hb_acc *recs = malloc(cap * sizeof *recs);
    hb_shadow d = {0};
    if (!fwd || !recs) {
        free(fwd);
        free(recs);
        return -1;
    }
    memset(fwd, 0xFF, s->nrecs * sizeof *fwd);
    d.nwords = 1;
    if (reserve_words(&d, s->nwords)) {   /* all of it: the sweep below cannot fail half way */
        free(fwd);
        free(recs);
        return -1;
    }
    for (size_t h = 0; h < s->cap; h++) {
        uint32_t *pg = s->pages[h];
        uint32_t prev = 0, prev_new = 0;
        for (size_t i = 0; s->keys[h] && i < PAGE; i++) {
            const uint32_t id = pg[i];
            if (!id || id == prev) {
                pg[i] = id ? prev_new : 0;
                continue;
            }
            uint32_t *set = s->sets + id;
            if (!(set[0] & MOVED)) {
                const uint32_t n = set[0];
                const uint32_t at = (uint32_t)d.nwords;
                d.sets[at] = n;
                for (uint32_t k = 1; k <= n; k++) {
                    const uint32_t r = set[k];
                    if (fwd[r] == NO_REC)
                        fwd[r] = (uint32_t)d.nrecs++;
                    d.sets[at + k] = fwd[r];
                }
                d.nwords += (size_t)n + 1;
                set[0] = MOVED;
                set[1] = at;
            }
            prev = id;
            prev_new = set[1];
            pg[i] = prev_new;
        }
    }
    for (size_t r = 0; r < s->nrecs; r++)
        if (fwd[r] != NO_REC)
            recs[fwd[r]] = s->recs[r];
    free(fwd);
    free(s->sets);
    free(s->recs);
    s->sets = d.sets;
    s->nwords = d.nwords;
    s->capwords = d.capwords;
    s->recs = recs;
    s->nrecs = d.nrecs;
    s->caprecs = cap;
    return 0;
}

/* Collect when the arenas have grown past twice what was live and past a
 * quarter of the cells (a sweep costs the cells: amortised over what grew). */
static void maybe_collect(hb_shadow *s)
{
    if (s->nwords <= s->gc_words && s->nrecs <= s->gc_recs)
        return;
    const size_t cells = s->n * PAGE;
    if (collect(s) == 0) {
        s->gc_words = 2 * s->nwords;
        s->gc_recs = 2 * s->nrecs;
    }
    if (s->gc_words < cells / 4 + 65536)
        s->gc_words = cells / 4 + 65536;
    if (s->gc_recs < cells / 16 + 4096)
        s->gc_recs = cells / 16 + 4096;
}

int hb_shadow_record(hb_shadow *s, const hb_acc *a, hb_keep keep, void *ctx)
{
    if (a->lo >= a->hi)
        return 0;
    maybe_collect(s);
    if (s->nrecs == s->caprecs) {
        size_t cap = s->caprecs ? 2 * s->caprecs : 256;
        hb_acc *n = realloc(s->recs, cap * sizeof *n);
        if (!n)
            return -1;
        s->recs = n;
        s->caprecs = cap;
    }
    if (s->nrecs >= NO_REC)
        return -1;
    const uint32_t rid = (uint32_t)s->nrecs++;
    s->recs[rid] = *a;
    uint32_t prev = UINT32_MAX, prev_new = 0;
    for (uint64_t x = a->lo; x < a->hi;) {
        const uint64_t pe = page_end(x, a->hi);
        uint32_t *pg = page_of(s, x >> PAGE_BITS, 1);
        if (!pg)
            return -1;
        while (x < pe) {
            const uint32_t id = pg[x & (PAGE - 1)];
            const uint64_t y = run_end(pg, x, pe);
            const uint32_t nid = id == prev ? prev_new : new_set(s, id, rid, keep, ctx);
            if (!nid)
                return -1;
            prev = id;
            prev_new = nid;
            for (uint64_t i = x; i < y; i++)
                pg[i & (PAGE - 1)] = nid;
            x = y;
        }
    }
    return 0;
}
