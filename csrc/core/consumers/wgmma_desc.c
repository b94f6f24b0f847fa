/* wgmma_desc.c - descriptor fields and the element -> shared address rule (W2). */
#include "wgmma_desc.h"

#include <string.h>

static const struct {
    const char *name;
    uint32_t bytes, k;
    int recorded;
} TYPES[PA_WG_TYPE_COUNT] = {
    [PA_WG_F16] = {"f16", 2, 16, 1},  [PA_WG_BF16] = {"bf16", 2, 16, 0},
    [PA_WG_TF32] = {"tf32", 4, 8, 0}, [PA_WG_E4M3] = {"e4m3", 1, 32, 0},
    [PA_WG_E5M2] = {"e5m2", 1, 32, 0}, [PA_WG_S8] = {"s8", 1, 32, 0},
    [PA_WG_U8] = {"u8", 1, 32, 0},
};

uint32_t pa_wgmma_type_bytes(pa_wgmma_type t) { return (unsigned)t < PA_WG_TYPE_COUNT ? TYPES[t].bytes : 0; }
uint32_t pa_wgmma_type_k(pa_wgmma_type t) { return (unsigned)t < PA_WG_TYPE_COUNT ? TYPES[t].k : 0; }
int pa_wgmma_type_recorded(pa_wgmma_type t) { return (unsigned)t < PA_WG_TYPE_COUNT && TYPES[t].recorded; }
const char *pa_wgmma_type_name(pa_wgmma_type t) { return (unsigned)t < PA_WG_TYPE_COUNT ? TYPES[t].name : NULL; }

uint32_t pa_wgmma_swizzle_span(uint32_t field)
{
    static const uint32_t span[4] = {0, 128, 64, 32};
    return span[field & 3u];
}

uint32_t pa_wgmma_swizzle_mask(uint32_t field)
{
    static const uint32_t msk[4] = {0, 7, 3, 1};
    return msk[field & 3u];
}

static int field16(uint32_t v, const char *name, pa_error *err)
{
    if (v % 16 || v >= (1u << 18))
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "descriptor %s %u bytes: the field holds bytes >> 4 in 14 bits "
                       "(a multiple of 16 below 262144)", name, v);
    return PA_OK;
}

int pa_wgmma_desc_encode(const pa_wgmma_desc *d, uint64_t *out, pa_error *err)
{
    int rc;
    if ((rc = field16(d->start, "start address", err)) || (rc = field16(d->lbo, "LBO", err)) ||
        (rc = field16(d->sbo, "SBO", err)))
        return rc;
    if (d->base_offset > 7)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "descriptor base offset %u: the field is 3 bits (0..7)",
                       d->base_offset);
    if (d->swizzle > 3)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "descriptor swizzle field %u: 0 none, 1 128B, 2 64B, 3 32B", d->swizzle);
    if (d->other_bits & ~PA_WGMMA_DESC_OTHER_BITS)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "other bits 0x%016llx overlap the descriptor fields (free bits: 0x%016llx)",
                       (unsigned long long)d->other_bits, (unsigned long long)PA_WGMMA_DESC_OTHER_BITS);
    *out = (uint64_t)(d->start >> 4) | (uint64_t)(d->lbo >> 4) << 16 | (uint64_t)(d->sbo >> 4) << 32 |
           (uint64_t)d->base_offset << 49 | (uint64_t)d->swizzle << 62 | d->other_bits;
    return PA_OK;
}

void pa_wgmma_desc_decode(uint64_t v, pa_wgmma_desc *d)
{
    d->start = (uint32_t)(v & 0x3FFFu) << 4;
    d->lbo = (uint32_t)(v >> 16 & 0x3FFFu) << 4;
    d->sbo = (uint32_t)(v >> 32 & 0x3FFFu) << 4;
    d->base_offset = (uint32_t)(v >> 49 & 7u);
    d->swizzle = (uint32_t)(v >> 62 & 3u);
    d->other_bits = v & PA_WGMMA_DESC_OTHER_BITS;
}

int pa_wgmma_operand_check(const pa_wgmma_operand *op, pa_error *err)
{
    if ((unsigned)op->type >= PA_WG_TYPE_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "unknown wgmma input type %d", (int)op->type);
    const char *tn = TYPES[op->type].name;
    if (op->major == PA_MAJOR_MN && TYPES[op->type].bytes != 2)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "MN-major (imm-trans 1) is only for .f16 / .bf16 (PTX ISA wgmma); .%s is K-major", tn);
    if (op->major != PA_MAJOR_K && op->major != PA_MAJOR_MN)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "major %d: 0 (K) or 1 (MN)", (int)op->major);
    if (!op->operand_b) {
        if (op->rows != 64)
            return pa_fail(err, PA_ERR_INVALID_VALUE, "operand A has M = 64 rows (m64nNk%u), not %u",
                           TYPES[op->type].k, op->rows);
        return PA_OK;
    }
    uint32_t n = op->rows;
    int ok = n >= 8 && n <= 256 && n % 8 == 0;
    /* .s8 / .u8: N = 8, 16, 24, then multiples of 16 (PTX ISA wgmma shapes). */
    if (op->type == PA_WG_S8 || op->type == PA_WG_U8)
        ok = ok && (n <= 24 || n % 16 == 0);
    if (!ok)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "N = %u is not a wgmma shape m64nNk%u for .%s "
                       "(N a multiple of 8 from 8 to 256%s)", n, TYPES[op->type].k, tn,
                       op->type == PA_WG_S8 || op->type == PA_WG_U8 ? "; above 24 a multiple of 16" : "");
    return PA_OK;
}

uint64_t pa_wgmma_elem_addr(const pa_wgmma_desc *d, pa_wgmma_major major, uint32_t esize, uint32_t i,
                            uint32_t k)
{
    const uint64_t S = pa_wgmma_swizzle_span(d->swizzle);
    uint64_t off;
    if (major == PA_MAJOR_K) {
        uint64_t b = (uint64_t)k * esize;
        off = S ? (i % 8) * S + (i / 8) * (uint64_t)d->sbo + b
                : (i % 8) * 16u + (i / 8) * (uint64_t)d->sbo + b % 16 + (b / 16) * d->lbo;
    } else {
        uint64_t per = (S ? S : 16u) / esize;   /* MN elements per contiguous row */
        uint64_t first = (i % per) * esize;
        off = S ? first + (i / per) * (uint64_t)d->lbo + (k % 8) * S + (k / 8) * (uint64_t)d->sbo
                : first + (i / per) * (uint64_t)d->sbo + (k % 8) * 16u + (k / 8) * (uint64_t)d->lbo;
    }
    uint64_t a = d->start + off;
    /* W4 / W5: absolute address bits [7, 10), less the base offset, into bits [4, 7). */
    return a ^ ((((a >> 7) - d->base_offset) & pa_wgmma_swizzle_mask(d->swizzle)) << 4);
}

int pa_wgmma_addresses(const pa_wgmma_operand *op, uint64_t *out, pa_error *err)
{
    int rc = pa_wgmma_operand_check(op, err);
    if (rc)
        return rc;
    const uint32_t K = op->k ? op->k : TYPES[op->type].k, e = TYPES[op->type].bytes;
    for (uint32_t i = 0; i < op->rows; i++)
        for (uint32_t k = 0; k < K; k++)
            out[(size_t)i * K + k] = pa_wgmma_elem_addr(&op->desc, op->major, e, i, k);
    return PA_OK;
}

int pa_wgmma_read(const pa_wgmma_operand *op, const uint8_t *smem, uint32_t smem_bytes, uint8_t *out,
                  pa_error *err)
{
    int rc = pa_wgmma_operand_check(op, err);
    if (rc)
        return rc;
    const uint32_t K = op->k ? op->k : TYPES[op->type].k, e = TYPES[op->type].bytes;
    /* Check every element first (W7: a fault leaves nothing read). */
    for (uint32_t i = 0; i < op->rows; i++)
        for (uint32_t k = 0; k < K; k++) {
            uint64_t a = pa_wgmma_elem_addr(&op->desc, op->major, e, i, k);
            if (a + e > smem_bytes)
                return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                               "wgmma operand %c element (%u, %u) is read from shared address 0x%llx, "
                               "outside the %u bytes of shared memory (golden W7: the hardware faults)",
                               op->operand_b ? 'B' : 'A', i, k, (unsigned long long)a, smem_bytes);
        }
    /* Along K the bytes of one 16-byte core-matrix row are contiguous and a
     * 16-byte chunk moves as a whole under the XOR: copy chunk-wise. */
    const uint32_t per16 = 16 / e;
    for (uint32_t i = 0; i < op->rows; i++)
        for (uint32_t k = 0; k < K; k++) {
            uint64_t a = pa_wgmma_elem_addr(&op->desc, op->major, e, i, k);
            uint8_t *dst = out + ((size_t)i * K + k) * e;
            if (op->major == PA_MAJOR_K && k % per16 == 0 && a % 16 == 0 && k + per16 <= K) {
                memcpy(dst, smem + a, 16);
                k += per16 - 1;
            } else {
                memcpy(dst, smem + a, e);
            }
        }
    return PA_OK;
}
