/* shpool.h - the race checker's large buffers (shadow pages, record blocks,
 * set arenas) kept by the host thread after a machine lets them go, for the
 * next machine's checker (a launch on a fresh machine otherwise takes every
 * page of them from the kernel again: a third of a checked matmul's extra
 * time went to page faults). At most SHPOOL_BYTES (64 MiB) are kept per host
 * thread;
 * they go back to the system when the thread ends. */
#ifndef PA_CHECK_SHPOOL_H
#define PA_CHECK_SHPOOL_H

#include <stddef.h>

enum { SHPOOL_PAGE, SHPOOL_BLOCK, SHPOOL_ARENA, SHPOOL_NKINDS };

/* A kept buffer of kind, at least *bytes long (its length in *bytes), or
 * NULL: none (the caller allocates). Pages and blocks are of one size each. */
void *pa_shpool_take(int kind, size_t *bytes);

/* Keep p (bytes long) for a later take, or free it when the pool is full. */
void pa_shpool_give(int kind, void *p, size_t bytes);

#endif
