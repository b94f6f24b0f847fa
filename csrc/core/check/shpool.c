/* shpool.c - the race checker's kept buffers (see shpool.h). */
#include "shpool.h"

#include <pthread.h>
#include <stdlib.h>

enum { SHPOOL_BYTES = 64u << 20, SHPOOL_MAX = 256 };

typedef struct {
    void *p[SHPOOL_NKINDS][SHPOOL_MAX];
    size_t bytes[SHPOOL_NKINDS][SHPOOL_MAX];
    size_t n[SHPOOL_NKINDS];
    size_t total;
} shpool;

static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int have_key;

static void drop(void *v)
{
    shpool *q = v;
    for (int k = 0; k < SHPOOL_NKINDS; k++)
        for (size_t i = 0; i < q->n[k]; i++)
            free(q->p[k][i]);
    free(q);
}

static void make_key(void)
{
    have_key = pthread_key_create(&key, drop) == 0;
}

static shpool *pool(int create)
{
    pthread_once(&once, make_key);
    if (!have_key)
        return NULL;
    shpool *q = pthread_getspecific(key);
    if (!q && create && (q = calloc(1, sizeof *q)) && pthread_setspecific(key, q)) {
        free(q);
        q = NULL;
    }
    return q;
}

void *pa_shpool_take(int kind, size_t *bytes)
{
    shpool *q = pool(0);
    if (!q || !q->n[kind])
        return NULL;
    size_t best = 0;   /* the largest: an arena grows no more */
    for (size_t i = 1; i < q->n[kind]; i++)
        if (q->bytes[kind][i] > q->bytes[kind][best])
            best = i;
    if (q->bytes[kind][best] < *bytes)
        return NULL;
    void *p = q->p[kind][best];
    *bytes = q->bytes[kind][best];
    q->total -= *bytes;
    const size_t last = --q->n[kind];
    q->p[kind][best] = q->p[kind][last];
    q->bytes[kind][best] = q->bytes[kind][last];
    return p;
}

void pa_shpool_give(int kind, void *p, size_t bytes)
{
    if (!p)
        return;
    shpool *q = pool(1);
    if (!q || q->n[kind] == SHPOOL_MAX || q->total + bytes > SHPOOL_BYTES) {
        free(p);
        return;
    }
    q->p[kind][q->n[kind]] = p;
    q->bytes[kind][q->n[kind]++] = bytes;
    q->total += bytes;
}
