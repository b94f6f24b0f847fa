/* shadow.h - who accessed each byte of one memory (a CTA's shared memory, or
 * the global memory) as far as the race checker still needs them (proxy.c
 * says which accesses a new one replaces).
 *
 * Every byte has a cell: the id of the set of accesses (records) that cover
 * it, 0 for none. Sets are immutable arrays in an arena, oldest access
 * first; an access of [lo, hi) walks its cells run by run (a run: bytes of
 * one set) and gives each run a new set, so its cost is its length plus the
 * size of the sets it meets, however many accesses came before (a log
 * scanned per access was the checker's cost: 300x a run without it). A
 * record is one access, shared by all its bytes' sets.
 *
 *     cells:  | 7 | 7 | 7 | 7 | 9 | 9 | 0 | ...      sets: 7 = [w1]   9 = [w1, r2]
 *
 * Sets and records left in no cell are garbage: when the arena has grown
 * past twice what was live (and past a quarter of the cells), the live ones
 * are copied to a fresh arena (a sweep of the cells).
 */
#ifndef PA_CHECK_SHADOW_H
#define PA_CHECK_SHADOW_H

#include <stddef.h>
#include <stdint.h>

/* One access: a thread's, or an asynchronous operation's read or write. */
typedef struct {
    uint64_t lo, hi;
    uint32_t slot, epoch;       /* observed by whoever knows epoch of slot */
    uint8_t proxy, write, reduce, how;
    uint32_t cta, thread;
    uint64_t op, time;
    const char *instr;
    uint32_t trank, toff;       /* how: the mbarrier (HB_BY_MBAR) */
    uint64_t tphase;
    uint64_t inst;              /* the warp instruction instance it belongs to (0: none, pa_hb_instance) */
} hb_acc;

typedef struct {
    uint64_t *keys;             /* page number + 1; 0 empty (open addressing) */
    uint32_t **pages;           /* PAGE cells each */
    size_t cap, n;
    uint64_t last_key;          /* the page the last lookup found */
    uint32_t *last;
    uint32_t *sets;             /* arena: a set is [n, rid 0, ..., rid n-1]; word 0 unused */
    size_t nwords, capwords;
    hb_acc *recs;
    size_t nrecs, caprecs;
    size_t gc_words, gc_recs;   /* collect when either is passed */
} hb_shadow;

/* The bytes whose sets hold a race: the judge's verdict (nonzero), the
 * earlier access, and the bytes both touch (that access's piece of them). */
typedef struct {
    int verdict;
    const hb_acc *o;            /* valid until the next hb_shadow_record */
    uint64_t lo, hi;
} hb_found;

/* A verdict on earlier access o: 0 no conflict; 1 a race said at once; 2 and
 * up a conflict said only where no byte holds a 1 (the first such wins). */
typedef int (*hb_judge)(void *ctx, const hb_acc *o);
/* Does the new access leave earlier access o in the bytes it covers? */
typedef int (*hb_keep)(void *ctx, const hb_acc *o);

void hb_shadow_free(hb_shadow *s);
/* Forget every access (a new CTA in the slot of the last). */
void hb_shadow_clear(hb_shadow *s);

/* The first verdict 1 over [lo, hi), in address order and oldest first in a
 * byte; else the first other nonzero one; f->verdict 0: none. */
void hb_shadow_find(hb_shadow *s, uint64_t lo, uint64_t hi, hb_judge judge, void *ctx, hb_found *f);

/* Record access a over [a->lo, a->hi): each byte keeps the accesses keep
 * says (keep NULL: all of them), then a. 0, or -1 out of memory. */
int hb_shadow_record(hb_shadow *s, const hb_acc *a, hb_keep keep, void *ctx);

#endif
