/* mma_exec.c - mma.sync and wgmma's arithmetic on whole matrices (mma_exec.h).
 *
 * Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k*" and
 * "mma.m8n8k*"). Lane l: g = l >> 2 (its group), t = l & 3 (its thread in the
 * group). A register holds epr = 32 / bits elements (one f64 in a 64-bit
 * register), element j in bits [j*bits, (j+1)*bits). For every m16n8kK and
 * m8n8kK shape (M = 16 or 8):
 *   A, register r, element j:  row g + 8 (r & 1),  column 4 epr (r >> 1) + t epr + j
 *   B, register r, element j:  row (k) 4 epr r + t epr + j,  column g
 *   C / D, element e = r * (32 / bits) + j:  row g + 8 (e >> 1),  column 2t + (e & 1)
 * (M = 8 shapes have one A register and two C elements: row g.) The m8n8k4
 * .f16 form is four MMAs, one per quad-pair (lanes 4q..4q+3 and 16+4q..16+4q+3),
 * h = l >> 4, i = l & 3, element e:
 *   A .row: row i + 4h, k e        A .col: row e + 4h, k i
 *   B .row: k i, column e + 4h     B .col: k e, column i + 4h
 *   C / D .f16: row i + 4h, column e
 *   C / D .f32: row (i & 1) + (e & 2) + 4h, column (e & 4) + (i & 2) + (e & 1)
 */
#include "ptx/exec/mma_exec.h"

#include "sem/mma.h"

#include <stdlib.h>
#include <string.h>

/* The element of D of lane `lane`'s fragment element e: row and column. */
static void cd_pos(int m8n8k4, int f32, uint32_t lane, uint32_t e, uint32_t *row, uint32_t *col)
{
    uint32_t g = lane >> 2, t = lane & 3;
    if (!m8n8k4) {
        *row = g + 8 * (e >> 1);
        *col = 2 * t + (e & 1);
        return;
    }
    uint32_t h = lane >> 4, i = lane & 3;
    if (!f32) {
        *row = i + 4 * h;
        *col = e;
    } else {
        *row = (i & 1) + (e & 2) + 4 * h;
        *col = (e & 4) + (i & 2) + (e & 1);
    }
}

/* the m8n8k4 .f16 form: four MMAs of 8x8x4, one per quad-pair */
/* D (rows of n) back into the lanes' nd registers rd by the fragment layout (two 16-bit
   elements a register for a 16-bit D) */
static void put_d(pi_thread *const lane[32], const uint32_t *rd, uint32_t nd, uint32_t dbits, uint32_t n,
                  const uint64_t *D)
{
    uint32_t depr = dbits == 16 ? 2 : 1;
    for (uint32_t l = 0; l < 32; l++) {
        uint64_t out[8] = {0};
        for (uint32_t e = 0; e < nd * depr; e++) {
            uint32_t row, col;
            cd_pos(0, 1, l, e, &row, &col);
            out[e / depr] |= D[row * n + col] << (dbits == 16 ? 16 * (e & 1) : 0);
        }
        for (uint32_t r = 0; r < nd; r++)
            if (rd[r] != PI_NOREG)
                PI_REG(lane[l], rd[r]) = out[r];
    }
}

static int mma_m8n8k4(const pi_prog *p, pi_thread *const lane[32], const pi_ext *x, pa_error *err)
{
    int ct = (int)(x->info[2] & 0xFFFF), dt = (int)(x->info[2] >> 16);
    const uint32_t *vr = p->vregs + x->vbase;
    uint32_t nd = x->regs[0], na = x->regs[1], nb = x->regs[2];
    const uint32_t *rd = vr, *ra = vr + nd, *rb = ra + na, *rc = rb + nb;
    for (uint32_t qp = 0; qp < 4; qp++) {
        uint32_t A[8 * 4], B[8 * 4];        /* A [row][k], B [col][k] */
        uint64_t C[64], D[64];
        for (uint32_t h = 0; h < 2; h++)
            for (uint32_t i = 0; i < 4; i++) {
                const pi_thread *th = lane[4 * qp + 16 * h + i];
                for (uint32_t e = 0; e < 4; e++) {
                    uint32_t av = (uint32_t)(PI_REG(th, ra[e / 2]) >> (16 * (e & 1))) & 0xFFFF;
                    uint32_t bv = (uint32_t)(PI_REG(th, rb[e / 2]) >> (16 * (e & 1))) & 0xFFFF;
                    if (x->flags & PI_MMA_ACOL)
                        A[(e + 4 * h) * 4 + i] = av;
                    else
                        A[(i + 4 * h) * 4 + e] = av;
                    if (x->flags & PI_MMA_BROW)
                        B[(e + 4 * h) * 4 + i] = bv;
                    else
                        B[(i + 4 * h) * 4 + e] = bv;
                }
                for (uint32_t e = 0; e < 8; e++) {
                    uint32_t row, col;
                    cd_pos(1, ct == SEM_T_F32, 4 * qp + 16 * h + i, e, &row, &col);
                    uint64_t v = ct == SEM_T_F32 ? PI_REG(th, rc[e]) & 0xFFFFFFFFu
                                                 : (PI_REG(th, rc[e / 2]) >> (16 * (e & 1))) & 0xFFFF;
                    C[row * 8 + col] = v;
                }
            }
        for (uint32_t r = 0; r < 8; r++)
            for (uint32_t cc = 0; cc < 8; cc++)
                if (sem_mma_dot_m8n8k4(ct, dt, A + r * 4, B + cc * 4, C[r * 8 + cc], &D[r * 8 + cc]))
                    return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "mma.sync: a form the tensor cores do not have");
        for (uint32_t h = 0; h < 2; h++)
            for (uint32_t i = 0; i < 4; i++) {
                pi_thread *th = lane[4 * qp + 16 * h + i];
                uint64_t out[8] = {0};
                for (uint32_t e = 0; e < 8; e++) {
                    uint32_t row, col;
                    cd_pos(1, dt == SEM_T_F32, 4 * qp + 16 * h + i, e, &row, &col);
                    if (dt == SEM_T_F32)
                        out[e] = D[row * 8 + col];
                    else
                        out[e / 2] |= D[row * 8 + col] << (16 * (e & 1));
                }
                for (uint32_t r = 0; r < nd; r++)
                    if (rd[r] != PI_NOREG)
                        PI_REG(th, rd[r]) = out[r];
            }
    }
    return PA_OK;
}

/* ---- sparse A ------------------------------------------------------------------ */

/* Chunk geometry of A's type (PTX ISA 9.7.14.6.1): elements of a chunk, non-zero ones in it. */
static void sp_chunk(int at, uint32_t *per, uint32_t *nz)
{
    *per = at == SEM_T_TF32 ? 2 : at == SEM_MMA_T_S4 || at == SEM_MMA_T_U4 ? 8 : 4;
    *nz = at == SEM_T_TF32 ? 1 : *per / 2;
}

/* Which lanes of a group of four hold a row's metadata (recorded, tools/device/sparse_record.py
 * probes; the ISA's metadata figures): 16-bit and tf32 A: a lane holds four chunks of row g in
 * nibbles 0-3 and of row g + 8 in nibbles 4-7, the selector naming the lane (4 chunks a row) or
 * the pair (8); 8-bit and 4-bit A: a lane holds eight chunks of one row, row g in the even lane
 * of a pair and g + 8 in the odd one, the selector naming the pair (8 chunks) or none (16: all
 * four lanes, selector 0). */
static int sp_wide(int at)
{
    return at == SEM_T_F16 || at == SEM_T_BF16 || at == SEM_T_TF32;
}

int pi_sp_selector_ok(int at, uint32_t k, uint32_t sel)
{
    uint32_t per, nz;
    sp_chunk(at, &per, &nz);
    uint32_t nch = k / per, used = sp_wide(at) ? nch / 4 : 2 * (nch / 8);   /* lanes of a group read */
    return used >= 1 && used <= 4 && sel < 4 / used;
}

int pi_sp_positions(const char *what, int at, uint32_t k, uint32_t sel, int ordered, const uint32_t meta[32],
                    uint32_t row, uint32_t *pos, pa_error *err)
{
    uint32_t per, nz;
    sp_chunk(at, &per, &nz);
    uint32_t nch = k / per, hi = row >= 8;
    for (uint32_t ch = 0; ch < nch; ch++) {
        uint32_t j, nib;
        if (sp_wide(at)) {
            j = sel * (nch / 4) + ch / 4;
            nib = 4 * hi + ch % 4;
        } else {
            j = 2 * sel + 2 * (ch / 8) + hi;
            nib = ch % 8;
        }
        uint32_t l = 4 * (row % 8) + j, v = (meta[l] >> (4 * nib)) & 15, i0 = v & 3, i1 = v >> 2;
        if (at == SEM_T_TF32) {
            if (v != 0x4 && v != 0xE)
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               "%s: lane %u's metadata bits [%u..%u] = 0x%x for row %u, chunk %u: a tf32 index is "
                               "0b0100 or 0b1110; any other value is undefined behavior (PTX ISA, sparse matrix "
                               "storage)", what, l, 4 * nib + 3, 4 * nib, v, row, ch);
            pos[ch] = ch * 2 + (v == 0xE);
            continue;
        }
        if (i0 == i1 || (ordered && i0 > i1))
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "%s: lane %u's metadata bits [%u..%u] = 0x%x for row %u, chunk %u: %s; undefined "
                           "behavior (PTX ISA, sparse matrix storage)", what, l, 4 * nib + 3, 4 * nib, v, row,
                           ch, i0 == i1 ? "the two indices are equal (0b0000, 0b0101, 0b1010, 0b1111 are invalid)"
                                        : "::ordered_metadata takes the two indices in increasing order");
        if (nz == 4) {                   /* 4:8: the indices name 2-wide pairs */
            for (uint32_t e = 0; e < 2; e++) {
                pos[4 * ch + e] = 8 * ch + 2 * i0 + e;
                pos[4 * ch + 2 + e] = 8 * ch + 2 * i1 + e;
            }
        } else {
            pos[2 * ch] = 4 * ch + i0;
            pos[2 * ch + 1] = 4 * ch + i1;
        }
    }
    return PA_OK;
}

/* mma.sp: the packed A fragment as the dense m16n8 fragment of k/2 columns (PTX ISA 9.7.14.6.2),
 * B, C and D as the dense form's; each element of D is the dense product with zeros in the other
 * positions, which the semantics library takes as the product of the k/2 packed elements with
 * the B elements at their positions, in packed order (a zero product changes no block: its
 * exponent is not a nonzero term's; the fp8 form's two HMMA.SP halves are the even and odd
 * chunks, as the dense fp8 form's are). */
static int mma_sp(const pi_prog *p, pi_thread *const lane[32], const pi_ext *x, pa_error *err)
{
    uint32_t n = (x->info[0] >> 8) & 0xFF, k = x->info[0] >> 16, kc = k / 2;
    int at = (int)(x->info[1] & 0xFFFF), bt = (int)(x->info[1] >> 16);
    int ct = (int)(x->info[2] & 0xFFFF), dt = (int)(x->info[2] >> 16);
    const uint32_t *vr = p->vregs + x->vbase;
    uint32_t nd = x->regs[0], na = x->regs[1], nb = x->regs[2];
    const uint32_t *rd = vr, *ra = vr + nd, *rb = ra + na, *rc = rb + nb;
    int abits = sem_mma_type_bits(at), bbits = sem_mma_type_bits(bt), cbits = sem_mma_type_bits(ct);
    int dbits = sem_mma_type_bits(dt);
    uint32_t A[16 * 64], B[8 * 128], pos[16 * 64], meta[32], bg[64];
    uint64_t C[16 * 8], D[16 * 8];
    if (kc > 64 || k > 128)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "mma.sp: shape m16n%uk%u is too large", n, k);
    for (uint32_t l = 0; l < 32; l++) {
        const pi_thread *th = lane[l];
        uint32_t g = l >> 2, t = l & 3;
        uint32_t epr = abits >= 32 ? 1 : 32 / (uint32_t)abits;
        for (uint32_t r = 0; r < na; r++) {
            uint64_t v = PI_REG(th, ra[r]);
            uint32_t row = g + 8 * (r & 1), col0 = 4 * epr * (r >> 1) + t * epr;
            for (uint32_t j = 0; j < epr; j++)
                A[row * kc + col0 + j] = (uint32_t)(v >> (j * (uint32_t)abits)) & (uint32_t)((1ull << abits) - 1);
        }
        epr = bbits >= 32 ? 1 : 32 / (uint32_t)bbits;
        for (uint32_t r = 0; r < nb; r++) {
            uint64_t v = PI_REG(th, rb[r]);
            uint32_t k0 = 4 * epr * r + t * epr;
            for (uint32_t j = 0; j < epr; j++)
                B[g * k + k0 + j] = (uint32_t)(v >> (j * (uint32_t)bbits)) & (uint32_t)((1ull << bbits) - 1);
        }
        uint32_t cepr = cbits == 16 ? 2 : 1;
        for (uint32_t e = 0; e < x->regs[3] * cepr; e++) {
            uint32_t row, col;
            cd_pos(0, 1, l, e, &row, &col);
            uint64_t v = PI_REG(th, rc[e / cepr]);
            C[row * n + col] = cbits == 16 ? (v >> (16 * (e & 1))) & 0xFFFF : v & 0xFFFFFFFFu;
        }
        meta[l] = (uint32_t)PI_REG(th, x->s0);
    }
    const char *what = (x->flags & PI_MMA_SP_ORDERED) ? "mma.sp::ordered_metadata" : "mma.sp";
    for (uint32_t row = 0; row < 16; row++) {
        int rc = pi_sp_positions(what, at, k, (uint32_t)x->sub, (x->flags & PI_MMA_SP_ORDERED) != 0, meta, row,
                                 pos + row * kc, err);
        if (rc)
            return rc;
    }
    unsigned fl = (x->flags & PI_MMA_SATFINITE) ? SEM_MMA_SATFINITE : 0;
    for (uint32_t i = 0; i < 16; i++)
        for (uint32_t j = 0; j < n; j++) {
            for (uint32_t q = 0; q < kc; q++)
                bg[q] = B[j * k + pos[i * kc + q]];
            if (sem_mma_dot(at, bt, ct, dt, (int)kc, fl, A + i * kc, bg, C[i * n + j], &D[i * n + j]))
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "%s: a form the tensor cores do not have", what);
        }
    put_d(lane, rd, nd, dbits, n, D);
    return PA_OK;
}

int pi_mma_exec(const pi_prog *p, pi_thread *const lane[32], const pi_ext *x, pa_error *err)
{
    if (x->flags & PI_MMA_SP)
        return mma_sp(p, lane, x, err);
    uint32_t m = x->info[0] & 0xFF, n = (x->info[0] >> 8) & 0xFF, k = x->info[0] >> 16;
    int at = (int)(x->info[1] & 0xFFFF), bt = (int)(x->info[1] >> 16);
    int ct = (int)(x->info[2] & 0xFFFF), dt = (int)(x->info[2] >> 16);
    if (m == 8 && n == 8 && k == 4 && at == SEM_T_F16)
        return mma_m8n8k4(p, lane, x, err);
    const uint32_t *vr = p->vregs + x->vbase;
    uint32_t nd = x->regs[0], na = x->regs[1], nb = x->regs[2];
    const uint32_t *rd = vr, *ra = vr + nd, *rb = ra + na, *rc = rb + nb;
    int abits = sem_mma_type_bits(at), bbits = sem_mma_type_bits(bt);
    int cbits = sem_mma_type_bits(ct), dbits = sem_mma_type_bits(dt);
    uint32_t lda = (uint32_t)sem_mma_row_len(at, (int)k), ldb = (uint32_t)sem_mma_row_len(bt, (int)k);
    uint64_t C[16 * 8], D[16 * 8];
    int f64 = at == SEM_T_F64;
    /* A [m][lda], B [n][ldb]: 32-bit elements, or 64-bit ones for f64 */
    uint32_t A[16 * 64], B[8 * 64];
    uint64_t A64[16 * 16], B64[8 * 16];
    if (m * lda > 16 * 64 || n * ldb > 8 * 64 || (f64 && k > 16))
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "mma.sync: shape m%un%uk%u is too large", m, n, k);
    for (uint32_t l = 0; l < 32; l++) {
        const pi_thread *th = lane[l];
        uint32_t g = l >> 2, t = l & 3;
        /* A */
        uint32_t epr = abits >= 32 ? 1 : 32 / (uint32_t)abits;
        for (uint32_t r = 0; r < na; r++) {
            uint64_t v = PI_REG(th, ra[r]);
            uint32_t row = g + 8 * (r & 1), col0 = 4 * epr * (r >> 1) + t * epr;
            if (f64)
                A64[row * k + col0] = v;
            else if (at == SEM_MMA_T_B1)
                A[row * lda + col0 / 32] = (uint32_t)v;
            else
                for (uint32_t j = 0; j < epr; j++)
                    A[row * lda + col0 + j] = (uint32_t)(v >> (j * (uint32_t)abits)) &
                                              (uint32_t)((1ull << abits) - 1);
        }
        /* B */
        epr = bbits >= 32 ? 1 : 32 / (uint32_t)bbits;
        for (uint32_t r = 0; r < nb; r++) {
            uint64_t v = PI_REG(th, rb[r]);
            uint32_t k0 = 4 * epr * r + t * epr;
            if (f64)
                B64[g * k + k0] = v;
            else if (bt == SEM_MMA_T_B1)
                B[g * ldb + k0 / 32] = (uint32_t)v;
            else
                for (uint32_t j = 0; j < epr; j++)
                    B[g * ldb + k0 + j] = (uint32_t)(v >> (j * (uint32_t)bbits)) &
                                          (uint32_t)((1ull << bbits) - 1);
        }
        /* C */
        uint32_t cepr = cbits == 16 ? 2 : 1;
        for (uint32_t e = 0; e < x->regs[3] * cepr; e++) {
            uint32_t row, col;
            cd_pos(0, 1, l, e, &row, &col);
            uint64_t v = PI_REG(th, rc[e / cepr]);
            C[row * n + col] = cbits == 16 ? (v >> (16 * (e & 1))) & 0xFFFF : cbits == 32 ? v & 0xFFFFFFFFu : v;
        }
    }
    unsigned fl = ((x->flags & PI_MMA_SATFINITE) ? SEM_MMA_SATFINITE : 0) | ((x->flags & PI_MMA_AND) ? SEM_MMA_AND : 0);
    if (f64) {
        for (uint32_t i = 0; i < m; i++)
            for (uint32_t j = 0; j < n; j++)
                sem_mma_dot_f64((int)k, A64 + i * k, B64 + j * k, C[i * n + j], &D[i * n + j]);
    } else if (sem_mma_tile(at, bt, ct, dt, (int)m, (int)n, (int)k, fl, A, B, C, D)) {
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "mma.sync: a form the tensor cores do not have");
    }
    put_d(lane, rd, nd, dbits, n, D);
    return PA_OK;
}

/* ---- wgmma -------------------------------------------------------------------- */

int pi_wgmma_sp_math(int atype, int btype, int dtype, uint32_t n, uint32_t k, unsigned flags, int scale_d,
                     int neg_a, int neg_b, const uint32_t *a, const uint32_t *pos, const uint32_t *b, uint64_t *d,
                     pa_error *err)
{
    uint32_t kc = k / 2, bg[64], ag[64];
    int isfloat = atype != SEM_T_S8 && atype != SEM_T_U8;
    uint32_t sa = isfloat && neg_a ? 1u << (sem_mma_type_bits(atype) - 1) : 0;
    uint32_t sb = isfloat && neg_b ? 1u << (sem_mma_type_bits(btype) - 1) : 0;
    if (kc > 64)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "wgmma.mma_async.sp: k%u is too large", k);
    if (!scale_d)
        memset(d, 0, (size_t)64 * n * sizeof *d);      /* D starts at +0 */
    for (uint32_t i = 0; i < 64; i++) {
        for (uint32_t q = 0; q < kc; q++)
            ag[q] = a[i * kc + q] ^ sa;                 /* imm-scale -1: the sign flipped */
        for (uint32_t j = 0; j < n; j++) {
            for (uint32_t q = 0; q < kc; q++)
                bg[q] = b[(size_t)j * k + pos[i * kc + q]] ^ sb;
            if (sem_wgmma_dot(atype, btype, dtype, (int)kc, flags, ag, bg, d[(size_t)i * n + j], &d[(size_t)i * n + j]))
                return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                               "wgmma.mma_async.sp: a form the tensor cores do not have");
        }
    }
    return PA_OK;
}

int pi_wgmma_math(int atype, int btype, int dtype, uint32_t n, uint32_t k, unsigned flags, int scale_d,
                  int neg_a, int neg_b, const uint32_t *a, const uint32_t *b, uint64_t *d, pa_error *err)
{
    uint32_t lda = (uint32_t)sem_mma_row_len(atype, (int)k), ldb = (uint32_t)sem_mma_row_len(btype, (int)k);
    int isfloat = atype != SEM_T_S8 && atype != SEM_T_U8 && atype != SEM_MMA_T_B1;
    uint32_t sa = isfloat && neg_a ? 1u << (sem_mma_type_bits(atype) - 1) : 0;
    uint32_t sb = isfloat && neg_b ? 1u << (sem_mma_type_bits(btype) - 1) : 0;
    uint32_t *an = NULL, *bn = NULL;
    /* imm-scale -1: the operand's sign bits flipped (a NaN stays a NaN) */
    if (sa) {
        an = malloc((size_t)64 * lda * sizeof *an);
        if (!an)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a wgmma");
        for (size_t i = 0; i < (size_t)64 * lda; i++)
            an[i] = a[i] ^ sa;
        a = an;
    }
    if (sb) {
        bn = malloc((size_t)n * ldb * sizeof *bn);
        if (!bn) {
            free(an);
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a wgmma");
        }
        for (size_t i = 0; i < (size_t)n * ldb; i++)
            bn[i] = b[i] ^ sb;
        b = bn;
    }
    if (!scale_d)
        memset(d, 0, (size_t)64 * n * sizeof *d);      /* D starts at +0 */
    int rc = sem_wgmma_tile(atype, btype, dtype, 64, (int)n, (int)k, flags, a, b, d, d);
    free(an);
    free(bn);
    if (rc)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "wgmma.mma_async: a form the tensor cores do not have");
    return PA_OK;
}
