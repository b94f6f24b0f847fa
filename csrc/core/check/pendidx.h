/* pendidx.h - the pending operations' source and destination ranges, by
 * address: "does this access touch a pending operation's bytes?" in the
 * time of the operations near it, not of every one pending (a walk of the
 * queue per ld.shared made a cp.async-staged loop 57x its TMA twin).
 *
 * Ranges are bucketed by 256 bytes of a key (shared: rank and offset;
 * global: the address); a bucket lists the ranges that reach into it. A
 * range costs a bucket per 256 bytes at its issue and its completion; a
 * lookup, the ranges of the buckets it reaches.
 */
#ifndef PA_CHECK_PENDIDX_H
#define PA_CHECK_PENDIDX_H

#include <stddef.h>
#include <stdint.h>

enum { PA_PEND_SRC = 0, PA_PEND_DST = 1 };

typedef struct {
    uint64_t lo, hi;            /* key range */
    uint64_t seq;               /* the operation's issue number */
    uint32_t id;                /* its pool slot */
    uint32_t pos;               /* its place in its bucket, where it reaches only one */
    uint8_t which;              /* PA_PEND_SRC / PA_PEND_DST */
    uint8_t reduce;             /* a destination kept and combined (pa_qv_ranges) */
    uint8_t used;
} pa_pend_ent;

typedef struct {
    uint32_t *e;                /* entries */
    uint32_t n, cap;
} pa_pend_bucket;

typedef struct {
    pa_pend_ent *ents;
    uint32_t nents, capents, free_head;     /* free entries chained through id */
    uint32_t (*of_id)[2];       /* pool slot -> its entries + 1 (src, dst), 0 none */
    size_t capid;
    uint64_t *keys;             /* bucket number + 1, 0 empty (open addressing) */
    pa_pend_bucket *buckets;
    size_t capb, nb;
    uint64_t last_key;          /* the bucket the last lookup found: keys[last_h] */
    size_t last_h;
    size_t nunindexed;          /* pending sources left out (pa_pend_skip) */
} pa_pendidx;

/* The key of (space 1: shared of rank, 2: global) address addr. */
static inline uint64_t pa_pend_key(uint8_t space, uint32_t rank, uint64_t addr)
{
    return space == 1 ? 1ull << 63 | (uint64_t)rank << 32 | (addr & 0xFFFFFFFFu) : addr & ~(1ull << 63);
}

void pa_pend_free(pa_pendidx *x);
/* Operation `seq` in pool slot id reads / writes key range [lo, hi) (which);
 * a slot's earlier ranges are forgotten first. 0, or -1 out of memory. */
int pa_pend_add(pa_pendidx *x, uint32_t id, uint64_t seq, int which, uint64_t lo, uint64_t hi, int reduce);
/* Pool slot id's source is not indexed (nobody asks about sources now):
 * counted until the slot's ranges are forgotten. */
void pa_pend_skip(pa_pendidx *x, uint32_t id);
/* Forget pool slot id's ranges. */
void pa_pend_remove(pa_pendidx *x, uint32_t id);

/* The entries of `which` whose ranges meet [lo, hi): each is passed to
 * visit (stop: nonzero return), an entry reaching several buckets once per
 * bucket it shares with [lo, hi). */
void pa_pend_visit(pa_pendidx *x, int which, uint64_t lo, uint64_t hi,
                   int (*visit)(void *ctx, const pa_pend_ent *e), void *ctx);

#endif
