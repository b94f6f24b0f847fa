/* shadow.h - who accessed each byte of one memory (a CTA's shared memory, or
 * the global memory) as far as the race checker still needs them (proxy.c
 * says which accesses a new one replaces).
 *
 * Every byte has a cell: the id of the set of accesses (records) that cover
 * it, 0 for none. Sets are arrays in an arena (a set other cells share is
 * never changed), oldest access first, each entry the record's id with its
 * kind (write, reduction, operation, proxy), its slot and epoch, so that the
 * common filters (a read meets only writes; a read replaces its own slot's
 * read; an access ordered after it) read no record. An access of [lo, hi)
 * walks its cells run by run (a run: bytes of one set) and gives each run a
 * new set, so its cost is its length plus the size of the sets it meets,
 * however many accesses came before (a log scanned per access was the
 * checker's cost: 300x a run without it). A record is one access, shared by
 * all its bytes' sets.
 *
 *     cells:  | 7 | 7 | 7 | 7 | 9 | 9 | 0 | ...      sets: 7 = [w1]   9 = [w1, r2]
 *     a set:  [n, cells, readers' bits x4, newest's instance, id|kind 0, slot 0, epoch 0, ...]
 *
 * A set counts its cells: the newest set, all of whose cells an access
 * covers, is changed in place (a warp's lanes reading one word add to one
 * set, rather than copying it 32 times).
 *
 * Sets and records left in no cell are garbage: when the arena has grown
 * past twice what was live (and past a quarter of the cells), the live sets
 * are copied to the spare arena (a sweep of the cells) and the dead records'
 * ids are reused.
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
    uint32_t line;              /* its instruction's PTX line (0: not known) */
    uint64_t op, time;
    const char *instr;
    uint32_t trank, toff;       /* how: the mbarrier (HB_BY_MBAR) */
    uint64_t tphase;
    uint64_t inst;              /* the warp instruction instance it belongs to (0: none, pa_hb_instance) */
    uint8_t nval;               /* a thread's plain store of at most 16 bytes: hi - lo, its bytes in val */
    uint8_t val[16];            /* (0: not kept; such a write never counts as a same-value one) */
} hb_acc;

typedef struct {
    uint64_t *keys;             /* page number + 1; 0 empty (open addressing) */
    uint32_t **pages;           /* PAGE cells each */
    size_t cap, n;
    uint64_t last_key;          /* the page the last lookup found */
    uint32_t *last;
    uint32_t *sets;             /* arena of sets; word 0 unused */
    size_t nwords, capwords;
    hb_acc **recs;              /* blocks of records (shadow.c: BLOCK each) */
    size_t nrecs, nblocks;
    uint32_t *spare_words;      /* the arena before the last collection, reused by the next */
    size_t capspare_words;
    uint32_t *free_recs;        /* records in no set (found by the last collection) */
    size_t nfree, capfree;
    size_t gc_words, gc_recs;   /* collect when either is passed ... */
    size_t dead_words;          /* ... and half the arena is sets in no cell (a sweep copies every
                                 * live set: where most are live, it only moved them) */
} hb_shadow;

/* The bytes whose sets hold a race: the judge's verdict (nonzero), the
 * earlier access, and the bytes both touch (that access's piece of them). */
typedef struct {
    int verdict;
    const hb_acc *o;            /* valid until the next hb_shadow_record */
    uint64_t lo, hi;
} hb_found;

/* A verdict on earlier access o: 0 no conflict; 1 a race said at once; 2 and
 * up a conflict said only where no byte holds a 1 (the first such wins, but
 * HB_V_WEAK only where no byte holds another).
 * Asked only where one of the two writes, they are not both reductions and
 * not both operations. */
typedef int (*hb_judge)(void *ctx, const hb_acc *o);
enum { HB_V_WEAK = 15 };

/* What a new access leaves of the earlier ones in the bytes it covers. */
enum {
    HB_CUT_WRITE = 0,           /* none */
    HB_CUT_READ = 1,            /* all but reads of its slot */
    HB_CUT_ATOMIC = 2,          /* other slots' atomics and reductions (it is not ordered after them) */
    HB_CUT_NONE = 3             /* all */
};
typedef struct {
    int mode;
    uint32_t slot;
    uint64_t inst;              /* nonzero: accesses of this warp instruction instance stay */
    const uint32_t *vc;         /* HB_CUT_WRITE of an operation: threads' accesses stay, and */
    uint32_t nvc;               /* operations' whose epoch vc (a clock's VC) does not cover */
} hb_cut;

void hb_shadow_free(hb_shadow *s);
/* Forget every access (a new CTA in the slot of the last). */
void hb_shadow_clear(hb_shadow *s);

/* What the new access knows: its vector clock's happens-before entries
 * (vc[slot] for slot < nvc, 0 beyond) and its own slot (program order). */
typedef struct {
    const uint32_t *vc;
    uint32_t nvc;
    uint32_t self;
} hb_view;

/* The first verdict 1 over [a->lo, a->hi), in address order and oldest first in a
 * byte; else the first other nonzero one (HB_V_WEAK last); f->verdict 0: none. An earlier access
 * that v orders before a, in a's proxy or a read, is not judged (nothing to say). */
void hb_shadow_find(hb_shadow *s, const hb_acc *a, const hb_view *v, hb_judge judge, void *ctx, hb_found *f);

/* Record access a over [a->lo, a->hi): each byte keeps what cut says, then
 * a (a->op: PA_NO_OP for a thread's). 0, or -1 out of memory. */
int hb_shadow_record(hb_shadow *s, const hb_acc *a, const hb_cut *cut);

#endif
