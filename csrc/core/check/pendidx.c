/* pendidx.c - buckets of the pending operations' ranges (see pendidx.h). */
#include "pendidx.h"

#include <stdlib.h>
#include <string.h>

enum { BUCKET_BITS = 8 };
#define SKIPPED UINT32_MAX      /* of_id: a source left out */

void pa_pend_free(pa_pendidx *x)
{
    for (size_t h = 0; h < x->capb; h++)
        free(x->buckets[h].e);
    free(x->buckets);
    free(x->keys);
    free(x->ents);
    free(x->of_id);
    memset(x, 0, sizeof *x);
}

static size_t home(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 29) & (cap - 1);
}

/* The bucket of number b (created with create; NULL none / out of memory). */
static pa_pend_bucket *bucket(pa_pendidx *x, uint64_t b)
{
    const uint64_t key = b + 1;
    if (x->capb && x->keys[x->last_h] == key)   /* neighbours come one after another */
        return &x->buckets[x->last_h];
    for (size_t h = x->capb ? home(key, x->capb) : 0; x->capb && x->keys[h]; h = (h + 1) & (x->capb - 1))
        if (x->keys[h] == key) {
            x->last_h = h;
            return &x->buckets[h];
        }
    return NULL;
}

static int rehash(pa_pendidx *x)
{
    size_t cap = x->capb ? 2 * x->capb : 64;
    uint64_t *keys = calloc(cap, sizeof *keys);
    pa_pend_bucket *bs = calloc(cap, sizeof *bs);
    if (!keys || !bs) {
        free(keys);
        free(bs);
        return -1;
    }
    for (size_t i = 0; i < x->capb; i++) {
        if (!x->keys[i])
            continue;
        size_t h = home(x->keys[i], cap);
        while (keys[h])
            h = (h + 1) & (cap - 1);
        keys[h] = x->keys[i];
        bs[h] = x->buckets[i];
    }
    free(x->keys);
    free(x->buckets);
    x->keys = keys;
    x->buckets = bs;
    x->capb = cap;
    x->last_h = 0;
    return 0;
}

static pa_pend_bucket *bucket_make(pa_pendidx *x, uint64_t b)
{
    pa_pend_bucket *k = bucket(x, b);
    if (k)
        return k;
    if (2 * (x->nb + 1) > x->capb && rehash(x))
        return NULL;
    size_t h = home(b + 1, x->capb);
    while (x->keys[h])
        h = (h + 1) & (x->capb - 1);
    x->keys[h] = b + 1;   /* kept when it empties: a range there again finds it */
    x->nb++;
    return &x->buckets[h];
}

static inline int one_bucket(const pa_pend_ent *p)
{
    return p->lo >> BUCKET_BITS == (p->hi - 1) >> BUCKET_BITS;
}

static void bucket_drop(pa_pendidx *x, pa_pend_bucket *k, uint32_t e)
{
    uint32_t i = x->ents[e].pos;
    if (!one_bucket(&x->ents[e]) || i >= k->n || k->e[i] != e)
        for (i = 0; i < k->n && k->e[i] != e; i++)
            ;
    if (i == k->n)
        return;
    k->e[i] = k->e[--k->n];
    if (i < k->n)
        x->ents[k->e[i]].pos = i;   /* the one moved into its place */
}

static void drop_ent(pa_pendidx *x, uint32_t e)
{
    pa_pend_ent *p = &x->ents[e];
    for (uint64_t b = p->lo >> BUCKET_BITS; b <= (p->hi - 1) >> BUCKET_BITS; b++) {
        pa_pend_bucket *k = bucket(x, b);
        if (k)
            bucket_drop(x, k, e);
    }
    p->used = 0;
    p->id = x->free_head;
    x->free_head = e + 1;
}

void pa_pend_remove(pa_pendidx *x, uint32_t id)
{
    if (id >= x->capid)
        return;
    for (int w = 0; w < 2; w++) {
        if (x->of_id[id][w] == SKIPPED)
            x->nunindexed--;
        else if (x->of_id[id][w])
            drop_ent(x, x->of_id[id][w] - 1);
        x->of_id[id][w] = 0;
    }
}

static int room_for(pa_pendidx *x, uint32_t id)
{
    if (id < x->capid)
        return 0;
    size_t cap = x->capid ? x->capid : 64;
    while (cap <= id)
        cap *= 2;
    uint32_t (*n)[2] = realloc(x->of_id, cap * sizeof *n);
    if (!n)
        return -1;
    memset(n + x->capid, 0, (cap - x->capid) * sizeof *n);
    x->of_id = n;
    x->capid = cap;
    return 0;
}

void pa_pend_skip(pa_pendidx *x, uint32_t id)
{
    if (room_for(x, id) == 0 && x->of_id[id][PA_PEND_SRC] != SKIPPED) {
        pa_pend_remove(x, id);
        x->of_id[id][PA_PEND_SRC] = SKIPPED;
        x->nunindexed++;
    }
}

int pa_pend_add(pa_pendidx *x, uint32_t id, uint64_t seq, int which, uint64_t lo, uint64_t hi, int reduce)
{
    if (room_for(x, id))
        return -1;
    if (x->of_id[id][which] == SKIPPED) {
        x->nunindexed--;
        x->of_id[id][which] = 0;
    } else if (x->of_id[id][which]) {   /* a stale range: its issue failed before the queue took it */
        drop_ent(x, x->of_id[id][which] - 1);
        x->of_id[id][which] = 0;
    }
    if (lo >= hi)
        return 0;
    uint32_t e;
    if (x->free_head) {
        e = x->free_head - 1;
        x->free_head = x->ents[e].id;
    } else {
        if (x->nents == x->capents) {
            uint32_t cap = x->capents ? 2 * x->capents : 64;
            pa_pend_ent *n = realloc(x->ents, cap * sizeof *n);
            if (!n)
                return -1;
            x->ents = n;
            x->capents = cap;
        }
        e = x->nents++;
    }
    pa_pend_ent *p = &x->ents[e];
    p->lo = lo;
    p->hi = hi;
    p->seq = seq;
    p->id = id;
    p->which = (uint8_t)which;
    p->reduce = (uint8_t)(reduce != 0);
    p->used = 1;
    x->of_id[id][which] = e + 1;
    for (uint64_t b = lo >> BUCKET_BITS; b <= (hi - 1) >> BUCKET_BITS; b++) {
        pa_pend_bucket *k = bucket_make(x, b);
        if (k && k->n == k->cap) {
            uint32_t cap = k->cap ? 2 * k->cap : 4;
            uint32_t *n = realloc(k->e, cap * sizeof *n);
            if (n) {
                k->e = n;
                k->cap = cap;
            }
        }
        if (!k || k->n == k->cap) {   /* out of memory: the buckets so far forget it */
            drop_ent(x, e);
            x->of_id[id][which] = 0;
            return -1;
        }
        p = &x->ents[e];
        p->pos = k->n;
        k->e[k->n++] = e;
    }
    return 0;
}

void pa_pend_visit(pa_pendidx *x, int which, uint64_t lo, uint64_t hi,
                   int (*visit)(void *ctx, const pa_pend_ent *e), void *ctx)
{
    if (lo >= hi || !x->nents)
        return;
    for (uint64_t b = lo >> BUCKET_BITS; b <= (hi - 1) >> BUCKET_BITS; b++) {
        const pa_pend_bucket *k = bucket(x, b);
        for (uint32_t i = 0; k && i < k->n; i++) {
            const pa_pend_ent *p = &x->ents[k->e[i]];
            if (p->which == which && p->lo < hi && lo < p->hi && visit(ctx, p))
                return;
        }
    }
}
