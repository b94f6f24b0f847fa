/* memory.h - the address spaces the copies read and write.
 *
 * Global: a registry of buffers, each with a base address. An address range
 * resolves to bytes of exactly one buffer, or fails the way an illegal
 * address would on the GPU; foreign host memory is never touched.
 *
 * Shared: one byte array per CTA of a cluster (1..16 CTAs). A shared::cluster
 * address names the CTA in its upper bits (golden/README.md C1):
 *     rank r's window is  r << 24 | offset,   mapa(a, k) = (a & 0xFFFFFF) | k << 24
 * A single-CTA launch sees plain offsets (rank 0).
 */
#ifndef PA_MEMORY_H
#define PA_MEMORY_H

#include "types.h"

#define PA_MAX_CLUSTER 16
#define PA_SMEM_MAX (227u * 1024u)   /* sm_90: 227 KiB of shared memory per CTA */
#define PA_SMEM_RANK_SHIFT 24
#define PA_SMEM_OFFSET_MASK 0xFFFFFFu

typedef struct {
    uint64_t base;
    uint64_t size;
    uint8_t *data;     /* not owned: the caller keeps it alive */
    uint64_t id;       /* handle for removal */
} pa_gbuf;

/* A multicast object's window (multimem.*, ISA 9.7.9.14): one address range that names the
 * same offset in each of n bound copies, one per device. The copies are other buffers' bytes
 * (not owned); local[k] is copy k's address in this machine's global memory, or
 * PA_MC_FOREIGN when it is another machine's (a device of its own). */
#define PA_MC_MAX 16
#define PA_MC_FOREIGN UINT64_MAX
typedef struct {
    uint64_t base;
    uint64_t size;
    uint64_t id;                  /* from the buffers' id counter: pa_global_remove takes it */
    uint32_t n;
    uint8_t *copy[PA_MC_MAX];
    uint64_t local[PA_MC_MAX];
} pa_mcwin;

typedef struct {
    pa_gbuf *bufs;     /* sorted by base, non-overlapping */
    size_t n, cap;
    uint64_t next_id;
    uint64_t next_auto;  /* next address handed out by pa_global_pick_address */
    pa_mcwin *mcs;     /* multicast windows: overlap no buffer and no other window */
    size_t nmc, capmc;
} pa_global;

void pa_global_init(pa_global *g);
void pa_global_free(pa_global *g);

/* Register [base, base+size) backed by data. Overlap with another buffer,
 * size 0, or wrap-around is PA_ERR_INVALID_VALUE. Returns the id in *id. */
int pa_global_add(pa_global *g, uint64_t base, uint64_t size, uint8_t *data, uint64_t *id,
                  pa_error *err);
int pa_global_remove(pa_global *g, uint64_t id, pa_error *err);

/* Map a multicast window [base, base+size) over n (1..PA_MC_MAX) copies of at least size
 * bytes each. The window overlaps no buffer or window (PA_ERR_INVALID_VALUE otherwise);
 * ld / st and every other access through pa_global_resolve fail on it (ISA: only multimem.*
 * access a multimem address). Its id in *id; pa_global_remove(id) unmaps it. */
int pa_global_add_multicast(pa_global *g, uint64_t base, uint64_t size, uint32_t n, uint8_t *const copy[],
                            const uint64_t local[], uint64_t *id, pa_error *err);

/* The window holding all of [addr, addr+len), or NULL with PA_ERR_ILLEGAL_ADDRESS naming
 * addr (what a multimem access to any other address gets). */
const pa_mcwin *pa_global_multicast(const pa_global *g, uint64_t addr, uint64_t len, pa_error *err);

/* A free address range of `size` bytes aligned to `align` (a power of two)
 * in *addr; PA_ERR_INVALID_VALUE if align is not a power of two or no range
 * is left below 2^64 (the search never wraps). */
int pa_global_pick_address(pa_global *g, uint64_t size, uint64_t align, uint64_t *addr, pa_error *err);

/* The buffer holding addr, or NULL. */
const pa_gbuf *pa_global_find(const pa_global *g, uint64_t addr);

/* Global address arithmetic that cannot wrap. A box's address is
 *     globalAddress + sum(coord_i * globalStrides_i) + c0 * elemsize
 * and the sum can pass 2^64 (strides up to 2^40, coordinates up to 2^31):
 * modulo 2^64 it would land in some other buffer where the GPU faults. The
 * sums saturate at PA_GADDR_OVERFLOW instead, an address no buffer holds
 * (pa_global_add refuses a buffer that reaches 2^64), so it resolves to
 * PA_ERR_ILLEGAL_ADDRESS. Every walk computes global addresses with these. */
#define PA_GADDR_OVERFLOW UINT64_MAX
static inline uint64_t pa_gaddr_add(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? PA_GADDR_OVERFLOW : r;
}
static inline uint64_t pa_gaddr_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? PA_GADDR_OVERFLOW : r;
}
/* base + offset + index * unit, saturating. */
static inline uint64_t pa_gaddr(uint64_t base, uint64_t offset, uint64_t index, uint64_t unit)
{
    return pa_gaddr_add(pa_gaddr_add(base, offset), pa_gaddr_mul(index, unit));
}

/* Host pointer to [addr, addr+len) if it lies inside one buffer; otherwise
 * NULL with PA_ERR_ILLEGAL_ADDRESS naming the address. */
uint8_t *pa_global_resolve(const pa_global *g, uint64_t addr, uint64_t len, pa_error *err);

/* The shared memory of a cluster. */
typedef struct {
    uint32_t nctas;
    uint32_t smem_bytes;                 /* per CTA */
    uint8_t *smem[PA_MAX_CLUSTER];       /* owned */
} pa_cluster;

int pa_cluster_init(pa_cluster *c, uint32_t nctas, uint32_t smem_bytes, pa_error *err);
void pa_cluster_free(pa_cluster *c);

/* Shared address helpers. */
static inline uint32_t pa_smem_rank(uint32_t a) { return a >> PA_SMEM_RANK_SHIFT; }
static inline uint32_t pa_smem_offset(uint32_t a) { return a & PA_SMEM_OFFSET_MASK; }
static inline uint32_t pa_mapa(uint32_t a, uint32_t rank)
{
    return (a & PA_SMEM_OFFSET_MASK) | (rank << PA_SMEM_RANK_SHIFT);
}

/* Host pointer to [addr, addr+len) of shared memory. A shared::cta address
 * (cluster_space = 0) must name the issuing CTA `self_rank` (its own window);
 * a shared::cluster address may name any CTA of the cluster. Otherwise NULL
 * with PA_ERR_ILLEGAL_ADDRESS. *rank_out receives the CTA rank. */
uint8_t *pa_smem_resolve(const pa_cluster *c, uint32_t self_rank, int cluster_space, uint32_t addr,
                         uint32_t len, uint32_t *rank_out, pa_error *err);

#endif
