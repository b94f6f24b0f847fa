/* shadow.c - the cells, sets and records of one memory (see shadow.h). */
#include "shadow.h"
#include "shpool.h"

#include <stdlib.h>
#include <string.h>

enum { PAGE_BITS = 12, PAGE = 1u << PAGE_BITS };
enum { BLOCK_BITS = 12, BLOCK = 1u << BLOCK_BITS };   /* records per block: they never move */

static inline hb_acc *rec(const hb_shadow *s, uint32_t rid)
{
    return &s->recs[rid >> BLOCK_BITS][rid & (BLOCK - 1)];
}
#define NO_REC UINT32_MAX
#define MOVED 0x80000000u       /* a set's first word once collected; the second: its new id */
#define NO_OP UINT64_MAX        /* hb_acc.op of a thread's access (trace.h's PA_NO_OP) */
/* an entry's first word: the record id and what it is */
enum { E_WRITE = 1u << 31, E_OP = 1u << 30, E_REDUCE = 1u << 29, E_PROXY_SHIFT = 27, E_PROXY = 3u << 27,
       E_RID = (1u << 27) - 1 };
/* a set: [n, cells, 4 words of reader bits, the low word of its newest entry's instance,
 * entries]; reader bits: slot % 128 of its reads (a CTA of 128 threads reading one word: each
 * read appends), so that a read whose slot has none there
 * appends without looking for its earlier read; an entry: [id | kind, slot, epoch] (the epoch:
 * a new access ordered after it, in the same proxy, passes it without reading its record) */
enum { HDR = 7, ENT = 3 };

static inline int has_reader(const uint32_t *set, uint32_t slot)
{
    return set[2 + (slot >> 5 & 3)] >> (slot & 31) & 1;
}

static inline void add_reader(uint32_t *set, uint32_t slot)
{
    set[2 + (slot >> 5 & 3)] |= 1u << (slot & 31);
}

static uint32_t kind_of(const hb_acc *a)
{
    return (a->write ? E_WRITE : 0) | (a->op != NO_OP ? E_OP : 0) | (a->reduce ? E_REDUCE : 0) |
           (uint32_t)(a->proxy & 3) << E_PROXY_SHIFT;
}

/* Its buffers go to the host thread's pool (shpool.h): the next machine's
 * checker takes them without faulting their pages in again. */
void hb_shadow_free(hb_shadow *s)
{
    for (size_t h = 0; h < s->cap; h++)
        if (s->keys[h])
            pa_shpool_give(SHPOOL_PAGE, s->pages[h], PAGE * sizeof *s->pages[h]);
    free(s->keys);
    free(s->pages);
    pa_shpool_give(SHPOOL_ARENA, s->sets, s->capwords * sizeof *s->sets);
    for (size_t b = 0; b < s->nblocks; b++)
        pa_shpool_give(SHPOOL_BLOCK, s->recs[b], BLOCK * sizeof *s->recs[b]);
    free(s->recs);
    pa_shpool_give(SHPOOL_ARENA, s->spare_words, s->capspare_words * sizeof *s->spare_words);
    free(s->free_recs);
    memset(s, 0, sizeof *s);
}

void hb_shadow_clear(hb_shadow *s)
{
    for (size_t h = 0; h < s->cap; h++)
        if (s->keys[h])
            memset(s->pages[h], 0, PAGE * sizeof *s->pages[h]);
    s->nwords = s->sets ? 1 : 0;
    s->nrecs = s->nfree = 0;
    s->dead_words = 0;
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
    size_t bytes = PAGE * sizeof(uint32_t);
    uint32_t *p = pa_shpool_take(SHPOOL_PAGE, &bytes);
    if (p)
        memset(p, 0, PAGE * sizeof *p);
    else if (!(p = calloc(PAGE, sizeof *p)))
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
    for (uint32_t k = 0; k < set[0]; k++)
        if ((set[HDR + ENT * k] & E_RID) == rid)
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
    f->o = rec(s, rid);
    f->lo = at;
    f->hi = x;
}

void hb_shadow_find(hb_shadow *s, const hb_acc *a, const hb_view *v, hb_judge judge, void *ctx, hb_found *f)
{
    int cand = 0;
    uint32_t cand_rid = NO_REC, seen = 0;
    uint64_t cand_at = 0;
    const uint32_t ak = kind_of(a);
    /* entries that cannot conflict: neither writes, both reductions, both operations */
    const uint32_t skip_all = (ak & E_WRITE ? 0 : ~E_WRITE);
    f->verdict = 0;
    for (uint64_t x = a->lo; x < a->hi;) {
        const uint64_t pe = page_end(x, a->hi);
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
                for (uint32_t k = 0; k < set[0]; k++) {
                    const uint32_t *en = set + HDR + ENT * k, e = en[0];
                    if ((skip_all && !(e & E_WRITE)) || (e & ak & (E_REDUCE | E_OP)))
                        continue;
                    /* ordered before a (or a's own), and no proxy to cross: nothing to say */
                    if ((en[1] == v->self || (en[1] < v->nvc ? v->vc[en[1]] : 0) >= en[2]) &&
                        (!(e & E_WRITE) || (e & E_PROXY) == (ak & E_PROXY)))
                        continue;
                    const int v = judge(ctx, rec(s, e & E_RID));
                    if (v == 1) {
                        piece(s, e & E_RID, x, a->hi, f);
                        f->verdict = 1;
                        return;
                    }
                    if (v && (!cand || (cand == HB_V_WEAK && v != HB_V_WEAK))) {
                        cand = v;
                        cand_rid = e & E_RID;
                        cand_at = x;
                    }
                }
                seen = id;
            }
            x = y;
        }
    }
    if (cand) {
        piece(s, cand_rid, cand_at, a->hi, f);
        f->verdict = cand;
    }
}

/* --- recording -------------------------------------------------------------------- */

static int reserve_words(hb_shadow *s, size_t more)
{
    if (s->nwords + more <= s->capwords)
        return 0;
    if (!s->sets) {   /* a kept arena, when there is one large enough */
        size_t bytes = (s->nwords + more) * sizeof *s->sets;
        if ((s->sets = pa_shpool_take(SHPOOL_ARENA, &bytes))) {
            s->capwords = bytes / sizeof *s->sets;
            return 0;
        }
    }
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

/* Does entry (e, slot) of a set stay under cut (its instance's entries aside)? */
static inline int stays(uint32_t e, uint32_t slot, uint32_t epoch, const hb_cut *c)
{
    switch (c->mode) {
    case HB_CUT_NONE:
        return 1;
    case HB_CUT_READ:
        if ((e & E_WRITE) || slot != c->slot)
            return 1;
        break;
    case HB_CUT_ATOMIC:
        if ((e & E_REDUCE) && slot != c->slot)
            return 1;
        break;
    default:
        if (c->vc && (!(e & E_OP) || (slot < c->nvc ? c->vc[slot] : 0) < epoch))
            return 1;
        break;
    }
    return 0;
}

/* Where the entries of warp instruction instance inst begin in a set of n
 * entries (n: none). Only that instruction's lanes access memory while it
 * runs, so its entries are the newest: a suffix, found from the end. */
static uint32_t instance_from(const hb_shadow *s, const uint32_t *set, uint64_t inst)
{
    uint32_t j = set[0];
    if (!inst || set[6] != (uint32_t)inst)
        return j;   /* the newest is another instance's: none of this one's */
    while (j > 0 && rec(s, set[HDR + ENT * (j - 1)] & E_RID)->inst == inst)
        j--;
    return j;
}

/* The set of old set id (0: empty) less what cut drops, plus (e, slot),
 * for a run of len bytes of it; 0 out of memory. The newest set, all of
 * whose bytes the run is, changes where it stands (lanes of a warp reading
 * one word one after another: no copy, no garbage). */
static uint32_t new_set(hb_shadow *s, uint32_t id, uint64_t len, uint32_t e, uint32_t slot, uint32_t epoch,
                        uint64_t inst, const hb_cut *c)
{
    const int none_stay = c->mode == HB_CUT_WRITE && !c->vc && !c->inst;
    const uint32_t n = id && !none_stay ? s->sets[id] : 0;
    /* everything stays: a read whose slot read none of it, or no cut */
    const int all_stay = c->mode == HB_CUT_NONE || (c->mode == HB_CUT_READ && id && !has_reader(s->sets + id, c->slot));
    if (s->nwords == 0)
        s->nwords = 1;   /* id 0 is the empty set */
    const int here = id && s->sets[id + 1] == len && id + HDR + ENT * (size_t)s->sets[id] == s->nwords;
    const size_t need = here ? ENT : ENT * (size_t)n + HDR + ENT;
    if (reserve_words(s, need) || s->nwords + need > MOVED)
        return 0;
    const uint32_t out = here ? id : (uint32_t)s->nwords;
    uint32_t *set = s->sets + out, *d = set + HDR, k = 0;
    const uint32_t *old = s->sets + id + HDR;
    if (all_stay) {
        k = n;
        if (!here && id) {
            memcpy(set + 2, s->sets + id + 2, 4 * sizeof *set);   /* the readers' bits */
            memcpy(d, old, ENT * (size_t)n * sizeof *d);
        } else if (!here) {
            memset(set + 2, 0, 4 * sizeof *set);   /* from the empty set (one word, no header): no readers */
        }
    } else {
        uint32_t bits[4] = {0, 0, 0, 0};
        /* the empty set (id 0) is one word: its "header" would be the next set's words */
        const uint32_t from = n ? instance_from(s, s->sets + id, c->inst) : 0;
        for (uint32_t i = 0; i < n; i++)
            if (i >= from || stays(old[ENT * i], old[ENT * i + 1], old[ENT * i + 2], c)) {   /* in place: k <= i */
                d[ENT * k] = old[ENT * i];
                d[ENT * k + 1] = old[ENT * i + 1];
                d[ENT * k + 2] = old[ENT * i + 2];
                if (!(old[ENT * i] & E_WRITE))
                    bits[old[ENT * i + 1] >> 5 & 3] |= 1u << (old[ENT * i + 1] & 31);
                k++;
            }
        memcpy(set + 2, bits, sizeof bits);
    }
    d[ENT * k] = e;
    d[ENT * k + 1] = slot;
    d[ENT * k + 2] = epoch;
    set[6] = (uint32_t)inst;   /* the low word: equal, the records tell (instance_from) */
    if (!(e & E_WRITE))
        add_reader(set, slot);
    set[0] = ++k;
    if (!here)
        set[1] = 0;   /* its cells: counted by the caller */
    s->nwords = out + HDR + ENT * (size_t)k;
    return out;
}

/* Copy the live sets to the spare arena (renumbering the cells, recounting
 * them), which becomes the arena, the old one the spare (fresh memory each
 * time would cost its page faults at every collection); records in no set
 * go to the free list (they stay where they are: sets name them by id). */
static int collect(hb_shadow *s)
{
    uint8_t *live = calloc(s->nrecs ? s->nrecs : 1, 1);
    if (!live)
        return -1;
    if (!s->spare_words) {   /* a kept arena, when there is one large enough */
        size_t bytes = s->nwords * sizeof *s->spare_words;
        if ((s->spare_words = pa_shpool_take(SHPOOL_ARENA, &bytes)))
            s->capspare_words = bytes / sizeof *s->spare_words;
    }
    if (s->capspare_words < s->nwords) {   /* all of it: the sweep below cannot fail half way */
        uint32_t *w = realloc(s->spare_words, s->nwords * sizeof *w);
        if (!w) {
            free(live);
            return -1;
        }
        s->spare_words = w;
        s->capspare_words = s->nwords;
    }
    uint32_t *d = s->spare_words;
    size_t nd = 1;
    for (size_t h = 0; h < s->cap; h++) {
        uint32_t *pg = s->pages[h];
        uint32_t prev = 0, prev_new = 0;
        for (size_t i = 0; s->keys[h] && i < PAGE; i++) {
            const uint32_t id = pg[i];
            if (!id) {
                continue;
            } else if (id != prev) {
                uint32_t *set = s->sets + id;
                if (!(set[0] & MOVED)) {
                    const uint32_t n = set[0], at = (uint32_t)nd;
                    memcpy(d + at, set, (HDR + ENT * (size_t)n) * sizeof *d);
                    d[at + 1] = 0;
                    for (uint32_t k = 0; k < n; k++)
                        live[set[HDR + ENT * k] & E_RID] = 1;
                    nd += HDR + ENT * (size_t)n;
                    set[0] = MOVED;
                    set[1] = at;
                }
                prev = id;
                prev_new = set[1];
            }
            pg[i] = prev_new;
            d[prev_new + 1]++;
        }
    }
    size_t nfree = 0;
    for (size_t r = 0; r < s->nrecs; r++)
        nfree += !live[r];
    if (nfree > s->capfree) {
        uint32_t *f = realloc(s->free_recs, nfree * sizeof *f);
        if (!f)
            nfree = 0;   /* out of memory: the dead records stay unused */
        else {
            s->free_recs = f;
            s->capfree = nfree;
        }
    }
    s->nfree = 0;
    for (size_t r = s->nrecs; r-- > 0 && s->nfree < nfree;)   /* the lowest ids come out first */
        if (!live[r])
            s->free_recs[s->nfree++] = (uint32_t)r;
    free(live);
    uint32_t *ow = s->sets;
    const size_t ocw = s->capwords;
    s->sets = d;
    s->nwords = nd;
    s->dead_words = 0;
    s->capwords = s->capspare_words;
    s->spare_words = ow;
    s->capspare_words = ocw;
    return 0;
}

/* Collect when the arenas have grown past twice what was live and past a
 * quarter of the cells (a sweep costs the cells: amortised over what grew). */
static void maybe_collect(hb_shadow *s)
{
    if ((s->nwords <= s->gc_words && (s->nfree || s->nrecs <= s->gc_recs)) || 2 * s->dead_words < s->nwords)
        return;
    const size_t cells = s->n * PAGE;
    if (collect(s) == 0) {
        s->gc_words = 2 * s->nwords;
        s->gc_recs = s->nrecs + (s->nrecs - s->nfree);   /* as many new ones as are live */
    }
    /* floors: a sweep reads every cell, so it waits for as many words as there are cells (a
     * quarter swept a 48 KiB shared memory every 2,000 accesses: a sixth of a checked matmul's
     * shadow time), and for a record per 4 cells; the arenas come from the pool (shpool.h) */
    if (s->gc_words < cells + 8192)
        s->gc_words = cells + 8192;
    if (s->gc_recs < cells / 4 + 512)
        s->gc_recs = cells / 4 + 512;
}

int hb_shadow_record(hb_shadow *s, const hb_acc *a, const hb_cut *cut)
{
    if (a->lo >= a->hi)
        return 0;
    maybe_collect(s);
    if (!s->nfree && s->nrecs == s->nblocks * BLOCK) {   /* a block more: no record moves */
        hb_acc **n = realloc(s->recs, (s->nblocks + 1) * sizeof *n);
        if (!n)
            return -1;
        s->recs = n;
        size_t bytes = BLOCK * sizeof **n;
        if (!(s->recs[s->nblocks] = pa_shpool_take(SHPOOL_BLOCK, &bytes)) &&
            !(s->recs[s->nblocks] = malloc(BLOCK * sizeof **n)))
            return -1;
        s->nblocks++;
    }
    if (s->nrecs >= E_RID)
        return -1;
    const uint32_t rid = s->nfree ? s->free_recs[--s->nfree] : (uint32_t)s->nrecs++;
    *rec(s, rid) = *a;
    const uint32_t e = rid | kind_of(a);
    uint32_t prev = UINT32_MAX, prev_new = 0;
    for (uint64_t x = a->lo; x < a->hi;) {
        const uint64_t pe = page_end(x, a->hi);
        uint32_t *pg = page_of(s, x >> PAGE_BITS, 1);
        if (!pg)
            return -1;
        while (x < pe) {
            const uint32_t id = pg[x & (PAGE - 1)];
            const uint64_t y = run_end(pg, x, pe);
            const uint32_t nid = id == prev ? prev_new : new_set(s, id, y - x, e, a->slot, a->epoch, a->inst, cut);
            if (!nid)
                return -1;
            if (nid != id) {   /* the cells move from one set to the other */
                if (id && !(s->sets[id + 1] -= (uint32_t)(y - x)))
                    s->dead_words += HDR + ENT * (size_t)s->sets[id];   /* in no cell now */
                s->sets[nid + 1] += (uint32_t)(y - x);
            }
            prev = id;
            prev_new = nid;
            for (uint64_t i = x; i < y; i++)
                pg[i & (PAGE - 1)] = nid;
            x = y;
        }
    }
    return 0;
}
