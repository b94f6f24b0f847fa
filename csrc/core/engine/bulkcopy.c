/* bulkcopy.c - the bulk-copy engine: cp.async.bulk in every direction of the
 * PTX ISA, and cp.async.bulk.prefetch.L2.
 *
 *   global -> shared::cta      mbarrier complete_tx (the executing CTA)
 *   global -> shared::cluster  mbarrier complete_tx; .multicast::cluster: one
 *                              copy per CTA in ctaMask (golden C4)
 *   shared::cta -> shared::cluster   complete_tx on the destination CTA's
 *                              mbarrier at mbar's offset (golden C5, C15)
 *   shared::cta -> global      bulk async-group; .cp_mask (sm_100 or later)
 * Bytes move unchanged (observation 13). Copies out of shared memory read
 * their source as a step of their own (cp.async.bulk.wait_group.read).
 */
#include "../engine.h"

#include <inttypes.h>
#include <string.h>

static int copy_complete(pa_machine *m, pa_op *op, pa_error *err)
{
    const pa_bulk_payload *b = &op->u.bulk;
    const uint8_t *src;
    if (op->kind == PA_OP_BULK_COPY_G2S) {
        src = pa_global_resolve(&m->global, b->src, b->size, err);
        if (!src)
            return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    } else {
        src = pa_bulk_source(m, op);
    }
    if (op->kind == PA_OP_BULK_COPY_S2G) {
        uint8_t *dst = pa_global_resolve(&m->global, b->dst, b->size, err);
        if (!dst)
            return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
        if (!b->cp_mask || b->byte_mask == 0xFFFF) {
            memmove(dst, src, b->size);
            return PA_OK;
        }
        /* .cp_mask: bit i of byteMask copies byte i of every 16-byte chunk. */
        for (uint32_t c = 0; c < b->size; c += 16)
            for (uint32_t i = 0; i < 16; i++)
                if ((b->byte_mask >> i) & 1u)
                    dst[c + i] = src[c + i];
        return PA_OK;
    }
    memmove(m->cluster.smem[op->dst_rank] + pa_smem_offset((uint32_t)b->dst), src, b->size);
    return pa_credit(m, op->dst_rank, op->mbar_offset, op->tx_bytes, err);
}

static const pa_engine bulk_g2s = {"cp.async.bulk (global -> shared)", NULL, copy_complete, NULL, 0, NULL};
static const pa_engine bulk_from_smem = {"cp.async.bulk (from shared::cta)", pa_bulk_read, copy_complete, NULL, 0,
                                         NULL};

/* PTX ISA cp.async.bulk: "size must be a multiple of 16"; "The addresses dstMem
 * and srcMem must be aligned to 16 bytes". (An H200 copied and credited size
 * rounded down to 16 bytes, golden C13: undefined behaviour, refused here.) */
static int pa_bulk_check_size_align(const char *what, uint64_t dst, uint64_t src, uint32_t size, pa_error *err)
{
    if (size % 16)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "%s size %u is not a multiple of 16 (undefined behaviour by the PTX ISA; "
                       "an H200 copied only the first %u bytes)",
                       what, size, size & ~15u);
    if (dst % 16)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "%s dstMem 0x%" PRIx64 " is not 16-byte aligned",
                       what, dst);
    if (src % 16)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "%s srcMem 0x%" PRIx64 " is not 16-byte aligned",
                       what, src);
    return PA_OK;
}

int pa_issue_bulk_copy(pa_machine *m, uint32_t cta, uint32_t thread, pa_bulk_dir dir, uint64_t dst,
                       uint64_t src, uint32_t size, uint32_t mbar, const pa_bulk_copy_args *a, pa_error *err)
{
    int rc = pa_check_cta(m, cta, err);
    if (rc || (rc = pa_target_require(m->target, PA_FEAT_BULK_COPY, err)))
        return rc;
    if ((unsigned)dir >= PA_BULK_DIR_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "unknown cp.async.bulk direction %d", (int)dir);
    if (a->multicast && dir != PA_BULK_G2S_CLUSTER)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       ".multicast::cluster is a form of cp.async.bulk.shared::cluster.global only");
    if (a->cp_mask && dir != PA_BULK_S2G)
        return pa_fail(err, PA_ERR_INVALID_VALUE, ".cp_mask is a form of cp.async.bulk.global.shared::cta only");
    if (a->cp_mask && (rc = pa_target_require(m->target, PA_FEAT_BULK_CP_MASK, err)))
        return rc;
    if (a->cache_hint && dir == PA_BULK_S2S)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       ".L2::cache_hint needs a .global source or destination (PTX ISA cp.async.bulk)");
    if ((rc = pa_bulk_check_size_align("cp.async.bulk", dst, src, size, err)))
        return rc;
    /* Ranges inside their memory (PTX ISA: otherwise undefined; refused here). */
    uint32_t dst_rank = cta;
    if (dir == PA_BULK_G2S_CTA || dir == PA_BULK_G2S_CLUSTER) {
        if (!pa_global_resolve(&m->global, src, size, err))
            return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
        /* .shared::cta: "the destination address has to be in the shared memory
         * of the executing CTA". */
        if (dst > UINT32_MAX ||
            !pa_smem_resolve(&m->cluster, cta, dir == PA_BULK_G2S_CLUSTER, (uint32_t)dst, size, &dst_rank, err))
            return dst > UINT32_MAX ? pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                                              "dstMem 0x%" PRIx64 " is not a shared address", dst)
                                    : PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    } else {
        if (src > UINT32_MAX || !pa_smem_resolve(&m->cluster, cta, 0, (uint32_t)src, size, NULL, err))
            return src > UINT32_MAX ? pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                                              "srcMem 0x%" PRIx64 " is not a shared address", src)
                                    : PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
        if (dir == PA_BULK_S2G) {
            if (!pa_global_resolve(&m->global, dst, size, err))
                return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
        } else if (dst > UINT32_MAX || !pa_smem_resolve(&m->cluster, cta, 1, (uint32_t)dst, size, &dst_rank, err)) {
            /* A destination in the executing CTA itself behaves as a remote one
             * (golden C14), though the ISA asks for a different CTA. */
            return dst > UINT32_MAX ? pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                                              "dstMem 0x%" PRIx64 " is not a shared address", dst)
                                    : PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
        }
    }
    uint16_t mask = (uint16_t)(1u << dst_rank);
    if (a->multicast) {
        /* golden C10: a ctaMask bit at or above the cluster size failed the launch. */
        if (a->cta_mask >> m->cluster.nctas)
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "ctaMask 0x%x names a CTA rank outside the cluster of %u CTAs "
                           "(the hardware fails the launch)",
                           a->cta_mask, m->cluster.nctas);
        mask = a->cta_mask;   /* 0 reaches no CTA (golden C9) */
    }
    if (dir != PA_BULK_S2G) {
        uint32_t at = dir == PA_BULK_G2S_CTA ? mbar : pa_mapa(mbar, dst_rank);
        if (dir == PA_BULK_G2S_CTA && !pa_smem_resolve(&m->cluster, cta, 0, mbar, 8, NULL, err))
            return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
        if ((rc = pa_check_mbar_addr(m, cta, at, err)))
            return rc;
    }
    static const pa_opkind kinds[PA_BULK_DIR_COUNT] = {PA_OP_BULK_COPY_G2S, PA_OP_BULK_COPY_G2S,
                                                       PA_OP_BULK_COPY_S2S, PA_OP_BULK_COPY_S2G};
    pa_op op;
    pa_op_begin(&op, dir == PA_BULK_G2S_CTA || dir == PA_BULK_G2S_CLUSTER ? &bulk_g2s : &bulk_from_smem,
                kinds[dir], cta, thread);
    op.u.bulk.dst = dst;
    op.u.bulk.src = src;
    op.u.bulk.size = size;
    op.u.bulk.cp_mask = a->cp_mask;
    op.u.bulk.byte_mask = a->byte_mask;
    op.u.bulk.cache_hint = a->cache_hint;
    if (dir == PA_BULK_S2G) {
        if ((rc = pa_op_track_group(m, &op, 0, err)))
            return rc;
        return pa_enqueue(m, &op, NULL, err);
    }
    /* One operation per destination CTA, each crediting the mbarrier at mbar's
     * offset in that CTA with the whole size (golden C4, C15). */
    for (uint32_t r = 0; r < m->cluster.nctas && !rc; r++) {
        if (!((mask >> r) & 1u))
            continue;
        rc = pa_op_track_mbar(m, &op, r, mbar, size, err);
        if (!rc)
            rc = pa_enqueue(m, &op, NULL, err);
    }
    return rc;
}

int pa_bulk_prefetch_l2(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t src, uint32_t size,
                        pa_error *err)
{
    (void)thread;
    int rc = pa_check_cta(m, cta, err);
    if (rc || (rc = pa_target_require(m->target, PA_FEAT_BULK_COPY, err)))
        return rc;
    /* PTX ISA cp.async.bulk.prefetch: size a multiple of 16, srcMem 16-byte aligned. */
    if (size % 16)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "cp.async.bulk.prefetch.L2 size %u is not a multiple of 16", size);
    if (src % 16)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS,
                       "cp.async.bulk.prefetch.L2 srcMem 0x%" PRIx64 " is not 16-byte aligned", src);
    if (size && !pa_global_resolve(&m->global, src, size, err))
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    return PA_OK;   /* a hint to the cache: no visible effect */
}
