/* wgmma_desc.h - the wgmma shared-memory matrix descriptor and the element it reads.
 *
 * The 64-bit descriptor (golden/README.md, "Shared-memory read families"):
 *
 *   63 62 | 61 .. 52 | 51 50 49 | 48 47 46 | 45 ...... 32 | 31 30 | 29 ...... 16 | 15 14 | 13 ...... 0
 *   swizzle|  unused  |base off |  unused  |  SBO >> 4    |unused |  LBO >> 4    |unused | start >> 4
 *   (0 none, 1 128B, 2 64B, 3 32B)                                       start = addr & 0x3FFFF
 *
 * Bits 14-15, 30-31, 46-47 and 52-61 were all set once and had no effect (W6);
 * bit 48 was never set in a recording: it is reported, not interpreted.
 *
 * Element (i, k) of the operand (i = m for A, n for B; k along K) is read from
 * (rule W2, with W4 / W5):
 *     a    = start + off(i, k)
 *     read = a ^ ((((a >> 7) - base_offset) & msk) << 4)     msk = 0, 1, 3, 7
 * the XOR taking bits [7, 10) of the ABSOLUTE shared address (W4, the same XOR as
 * a TMA tile load) less the base offset (W5). With e = element bytes, b = k * e
 * the byte of K, S = swizzle span (32 / 64 / 128):
 *
 *   K-major,  none:  off = (i%8)*16 + (i/8)*SBO + b%16 + (b/16)*LBO
 *   K-major,  S:     off = (i%8)*S  + (i/8)*SBO + b              (LBO unused, W3)
 *   MN-major, none:  off = (i%(16/e))*e + (i/(16/e))*SBO + (k%8)*16 + (k/8)*LBO
 *   MN-major, S:     off = (i%(S/e))*e  + (i/(S/e))*LBO  + (k%8)*S  + (k/8)*SBO
 *
 * Recorded for f16 (e = 2, K = 16). The core matrix is 8 rows of 16 bytes for
 * every wgmma type (PTX ISA "Shared memory matrix layout"), so tf32 (K = 8),
 * e4m3 / e5m2 / s8 / u8 (K = 32) read 32 bytes of K per instruction exactly as
 * f16 does: that is derived from the ISA, not recorded. MN-major (imm-trans 1)
 * exists only for f16 / bf16 in the ISA.
 */
#ifndef PA_WGMMA_DESC_H
#define PA_WGMMA_DESC_H

#include "../types.h"

/* Descriptor swizzle field values (bits 62-63). */
#define PA_WGMMA_SWZ_NONE 0u
#define PA_WGMMA_SWZ_128B 1u
#define PA_WGMMA_SWZ_64B 2u
#define PA_WGMMA_SWZ_32B 3u

/* Bits no field uses: 14-15, 30-31, 46-48, 52-61. */
#define PA_WGMMA_DESC_OTHER_BITS 0x3FF1C000C000C000ull
/* Of those, the ones recorded with no effect (W6): all but bit 48. */
#define PA_WGMMA_DESC_INERT_BITS 0x3FF0C000C000C000ull

typedef struct {
    uint32_t start;        /* shared address (bytes, < 2^18, multiple of 16) */
    uint32_t lbo;          /* leading dimension byte offset (multiple of 16, < 2^18) */
    uint32_t sbo;          /* stride dimension byte offset (multiple of 16, < 2^18) */
    uint32_t base_offset;  /* 0..7 */
    uint32_t swizzle;      /* descriptor field value: PA_WGMMA_SWZ_* */
    uint64_t other_bits;   /* bits outside the five fields, as given */
} pa_wgmma_desc;

/* wgmma input types (the descriptor geometry depends only on the element size). */
typedef enum {
    PA_WG_F16 = 0,
    PA_WG_BF16 = 1,
    PA_WG_TF32 = 2,
    PA_WG_E4M3 = 3,
    PA_WG_E5M2 = 4,
    PA_WG_S8 = 5,
    PA_WG_U8 = 6,
    PA_WG_TYPE_COUNT = 7
} pa_wgmma_type;

typedef enum { PA_MAJOR_K = 0, PA_MAJOR_MN = 1 } pa_wgmma_major;

/* One operand read through a descriptor: A (rows = M = 64) or B (rows = N). */
typedef struct {
    pa_wgmma_desc desc;
    pa_wgmma_type type;
    pa_wgmma_major major;
    int operand_b;         /* 0: operand A, 1: operand B */
    uint32_t rows;         /* M (64) for A, N for B */
    uint32_t k;            /* elements of K read; 0: the type's K (wgmma.mma_async.sp's B: twice that) */
} pa_wgmma_operand;

/* Bytes per element; K per instruction; 1 if the type was recorded on hardware. */
uint32_t pa_wgmma_type_bytes(pa_wgmma_type t);
uint32_t pa_wgmma_type_k(pa_wgmma_type t);
int pa_wgmma_type_recorded(pa_wgmma_type t);
const char *pa_wgmma_type_name(pa_wgmma_type t);

/* Swizzle span (0, 32, 64, 128) of a descriptor swizzle field value. */
uint32_t pa_wgmma_swizzle_span(uint32_t field);
/* The XOR mask msk of W2 (0, 1, 3, 7). */
uint32_t pa_wgmma_swizzle_mask(uint32_t field);

/* Encode named fields: start / LBO / SBO multiples of 16 below 2^18 (LBO and SBO
 * have 14-bit fields of value >> 4), base offset 0..7, swizzle 0..3; other_bits
 * must lie outside the fields. PA_ERR_INVALID_VALUE naming the field otherwise. */
int pa_wgmma_desc_encode(const pa_wgmma_desc *d, uint64_t *out, pa_error *err);

/* Decode a 64-bit value (every value decodes; start is bits 0-13 << 4). */
void pa_wgmma_desc_decode(uint64_t v, pa_wgmma_desc *d);

/* Check type / major / operand / rows against the ISA shapes (m64nNk*). */
int pa_wgmma_operand_check(const pa_wgmma_operand *op, pa_error *err);

/* Shared address element (i, k) is read from (W2 with W4 / W5). No checks:
 * callers validate with pa_wgmma_operand_check. 64-bit: a large SBO can carry
 * the address past 2^32. */
uint64_t pa_wgmma_elem_addr(const pa_wgmma_desc *d, pa_wgmma_major major, uint32_t esize, uint32_t i,
                            uint32_t k);

/* The read address of every element, row-major [rows][K]. */
int pa_wgmma_addresses(const pa_wgmma_operand *op, uint64_t *out, pa_error *err);

/* Read the operand from shared memory smem[0, smem_bytes) into out (rows*K
 * elements of the type's size, row-major). An element that reaches outside
 * shared memory is PA_ERR_ILLEGAL_ADDRESS naming it (W7); out is then untouched. */
int pa_wgmma_read(const pa_wgmma_operand *op, const uint8_t *smem, uint32_t smem_bytes, uint8_t *out,
                  pa_error *err);

#endif
