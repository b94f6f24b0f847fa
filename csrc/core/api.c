/* api.c - the handles of the public API (csrc/include/ptxasync.h): machines
 * and tensor maps on the heap, for C users who see neither struct. */
#include "engine.h"
#include "check/watch.h"

#include <stdlib.h>
#include <string.h>

pa_machine *pa_machine_new(uint32_t nctas, uint32_t smem_bytes, pa_error *err)
{
    pa_machine *m = malloc(sizeof *m);
    if (!m) {
        pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a machine");
        return NULL;
    }
    if (pa_machine_init(m, nctas, smem_bytes, err)) {
        pa_machine_free(m);
        free(m);
        return NULL;
    }
    return m;
}

void pa_machine_delete(pa_machine *m)
{
    if (!m)
        return;
    pa_machine_free(m);
    free(m);
}

int pa_machine_add_global(pa_machine *m, uint64_t address, uint64_t size, void *data, pa_error *err)
{
    return pa_global_add(&m->global, address, size, data, NULL, err);
}

uint8_t *pa_machine_smem(pa_machine *m, uint32_t cta, uint32_t *size)
{
    if (cta >= m->cluster.nctas)
        return NULL;
    if (size)
        *size = m->cluster.smem_bytes;
    return m->cluster.smem[cta];
}

pa_tensormap *pa_tensormap_new_tiled(pa_dtype dtype, uint32_t rank, uint64_t global_address,
                                     const uint64_t *global_dim, const uint64_t *global_strides,
                                     const uint32_t *box_dim, const uint32_t *element_strides,
                                     pa_interleave interleave, pa_swizzle swizzle, pa_l2promotion l2,
                                     pa_oobfill oob_fill, pa_error *err)
{
    if (rank < 1 || rank > PA_MAX_RANK) {
        pa_fail(err, PA_ERR_INVALID_VALUE, "tensorRank %u is outside 1..%d", rank, PA_MAX_RANK);
        return NULL;
    }
    pa_tiled_params p;
    memset(&p, 0, sizeof p);
    p.dtype = (int)dtype;
    p.rank = rank;
    p.global_address = global_address;
    for (uint32_t i = 0; i < rank; i++) {
        p.global_dim[i] = global_dim[i];
        p.box_dim[i] = box_dim[i];
        p.element_strides[i] = element_strides[i];
        if (i + 1 < rank)
            p.global_strides[i] = global_strides[i];
    }
    p.interleave = (int)interleave;
    p.swizzle = (int)swizzle;
    p.l2_promotion = (int)l2;
    p.oob_fill = (int)oob_fill;
    pa_tensormap *t = malloc(sizeof *t);
    if (!t) {
        pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a tensor map");
        return NULL;
    }
    if (pa_tensormap_encode_tiled(t, &p, err)) {
        free(t);
        return NULL;
    }
    return t;
}

void pa_tensormap_delete(pa_tensormap *t)
{
    free(t);
}

int pa_mbarrier_init(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t count,
                     pa_error *err)
{
    return pa_sync_init(m, cta, thread, addr, count, err);
}

int pa_mbarrier_arrive(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr, uint32_t tx,
                       uint64_t *state, pa_error *err)
{
    return pa_sync_arrive(m, cta, thread, addr, 1, tx, 0, state, err);
}

int pa_mbarrier_try_wait_parity(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t addr,
                                uint32_t parity, int *done, pa_error *err)
{
    return pa_sync_wait(m, cta, thread, addr, parity, 1, done, err);
}
