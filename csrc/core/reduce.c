/* reduce.c - the element arithmetic of cp.reduce.async.bulk{.tensor}.
 *
 * Rules (docs/reductions.md; golden/README.md observations 11, 12, 18, C6):
 *  - integers: add wraps modulo 2^n; min/max compare signed for s32/s64 and
 *    unsigned otherwise; inc `old >= src ? 0 : old+1`; dec
 *    `old == 0 || old > src ? src : old-1`; and/or/xor bitwise.
 *  - float add (f16, bf16, f32, f64): exact sum rounded once to nearest-even,
 *    subnormal inputs and results kept, overflow to infinity, an exact zero sum
 *    is +0 unless both operands are -0. NaN: f16/bf16 give 0x7FFF, f32 gives
 *    0x7FFFFFFF; f64 returns the NaN operand unchanged (the source's when both
 *    are NaN) and inf + -inf = 0xFFF8000000000000.
 *  - float min/max (f16, bf16): one NaN returns the other operand, two NaNs
 *    0x7FFF; -0 < +0.
 *  - tensor maps: FLOAT32 and TFLOAT32 add like f32 (no tf32 rounding);
 *    FLOAT32_FTZ and TFLOAT32_FTZ flush subnormal inputs and results to the
 *    zero of the same sign.
 *
 * This file is the definition: every float add is done by soft_add_finite()
 * on integer significands with 8 guard bits and a sticky bit, rounded to
 * nearest-even explicitly, with no host float arithmetic. The loops used per
 * operation (pa_reducer) come from reduce_fast.c; those that add on the host's
 * float adder are chosen only when the thread's float environment is probed
 * exact (round-to-nearest-even, no FTZ/DAZ), and are bit-identical to this
 * definition then (docs/reductions.md, "Fast paths"); otherwise the soft loop
 * here runs, so the result never depends on the host's float environment.
 */
#include "reduce.h"
#include "reduce_fast.h"

#include <string.h>

/* ------------------------------------------------------------------ names */

static const char *const REDOP_NAMES[PA_RED_COUNT] = {
    "add", "min", "max", "inc", "dec", "and", "or", "xor"};
static const char *const RTYPE_NAMES[PA_RT_COUNT] = {
    "b32", "b64", "u32", "s32", "u64", "s64", "f16", "bf16", "f32", "f64"};
static const unsigned RTYPE_BYTES[PA_RT_COUNT] = {4, 8, 4, 4, 8, 8, 2, 2, 4, 8};

const char *pa_redop_name(int op)
{
    return (op >= 0 && op < PA_RED_COUNT) ? REDOP_NAMES[op] : NULL;
}

const char *pa_rtype_name(int t)
{
    return (t >= 0 && t < PA_RT_COUNT) ? RTYPE_NAMES[t] : NULL;
}

unsigned pa_rtype_bytes(pa_rtype t)
{
    return ((int)t >= 0 && t < PA_RT_COUNT) ? RTYPE_BYTES[t] : 0;
}

/* ------------------------------------------------------------ ISA tables */

#define B(t) (1u << (t))

/* cp.reduce.async.bulk .global: PTX ISA table "valid combinations of .redOp
 * and element type" = the 27 forms ptxas 13.0 accepts (observation 18). */
static const unsigned GLOBAL_TABLE[PA_RED_COUNT] = {
    /* add */ B(PA_RT_U32) | B(PA_RT_S32) | B(PA_RT_U64) | B(PA_RT_F32) | B(PA_RT_F64) |
        B(PA_RT_F16) | B(PA_RT_BF16),
    /* min */ B(PA_RT_U32) | B(PA_RT_S32) | B(PA_RT_U64) | B(PA_RT_S64) | B(PA_RT_F16) | B(PA_RT_BF16),
    /* max */ B(PA_RT_U32) | B(PA_RT_S32) | B(PA_RT_U64) | B(PA_RT_S64) | B(PA_RT_F16) | B(PA_RT_BF16),
    /* inc */ B(PA_RT_U32),
    /* dec */ B(PA_RT_U32),
    /* and */ B(PA_RT_B32) | B(PA_RT_B64),
    /* or  */ B(PA_RT_B32) | B(PA_RT_B64),
    /* xor */ B(PA_RT_B32) | B(PA_RT_B64),
};

/* .shared::cluster: the 12 forms of the table (observation 18, C17). */
static const unsigned CLUSTER_TABLE[PA_RED_COUNT] = {
    /* add */ B(PA_RT_U32) | B(PA_RT_S32) | B(PA_RT_U64),
    /* min */ B(PA_RT_U32) | B(PA_RT_S32),
    /* max */ B(PA_RT_U32) | B(PA_RT_S32),
    /* inc */ B(PA_RT_U32),
    /* dec */ B(PA_RT_U32),
    /* and */ B(PA_RT_B32),
    /* or  */ B(PA_RT_B32),
    /* xor */ B(PA_RT_B32),
};

int pa_reduce_bulk_check(pa_redop op, pa_rtype t, int noftz, pa_rdst dst, pa_error *err)
{
    const char *dname;
    const unsigned *table;
    if ((int)op < 0 || op >= PA_RED_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "cp.reduce.async.bulk: redOp %d is not a PTX .redOp",
                       (int)op);
    if ((int)t < 0 || t >= PA_RT_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "cp.reduce.async.bulk: type %d is not a PTX .type",
                       (int)t);
    if (dst == PA_RDST_GLOBAL) {
        dname = ".global";
        table = GLOBAL_TABLE;
    } else if (dst == PA_RDST_SHARED_CLUSTER) {
        dname = ".shared::cluster";
        table = CLUSTER_TABLE;
    } else {
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "cp.reduce.async.bulk: destination %d is neither .global nor .shared::cluster",
                       (int)dst);
    }
    if (!(table[op] & B(t)))
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "cp.reduce.async.bulk .%s.%s to %s is not in the ISA's table of valid "
                       "(redOp, type) pairs",
                       REDOP_NAMES[op], RTYPE_NAMES[t], dname);
    if (noftz) {
        if (dst != PA_RDST_GLOBAL || op != PA_RED_ADD || (t != PA_RT_F16 && t != PA_RT_BF16))
            return pa_fail(err, PA_ERR_INVALID_VALUE,
                           "cp.reduce.async.bulk .%s.noftz.%s to %s: .noftz is only valid on "
                           ".add.f16 / .add.bf16 to .global",
                           REDOP_NAMES[op], RTYPE_NAMES[t], dname);
    } else if (op == PA_RED_ADD && (t == PA_RT_F16 || t == PA_RT_BF16)) {
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "cp.reduce.async.bulk .add.%s to %s requires the .noftz qualifier "
                       "(.add.noftz.%s)",
                       RTYPE_NAMES[t], dname, RTYPE_NAMES[t]);
    }
    return PA_OK;
}

/* --------------------------------------------------------------- formats */

typedef struct {
    unsigned width;  /* total bits */
    unsigned ebits;  /* exponent bits */
    unsigned mbits;  /* stored mantissa bits */
} fmt_t;

static const fmt_t F16 = {16, 5, 10};
static const fmt_t BF16 = {16, 8, 7};
static const fmt_t F32 = {32, 8, 23};
static const fmt_t F64 = {64, 11, 52};

static uint64_t f_sign(const fmt_t *f) { return (uint64_t)1 << (f->width - 1); }
static uint64_t f_expmax(const fmt_t *f) { return ((uint64_t)1 << f->ebits) - 1; }
static uint64_t f_mmask(const fmt_t *f) { return ((uint64_t)1 << f->mbits) - 1; }
static uint64_t f_exp(const fmt_t *f, uint64_t x) { return (x >> f->mbits) & f_expmax(f); }
static int f_isnan(const fmt_t *f, uint64_t x) { return f_exp(f, x) == f_expmax(f) && (x & f_mmask(f)); }
static int f_isinf(const fmt_t *f, uint64_t x) { return f_exp(f, x) == f_expmax(f) && !(x & f_mmask(f)); }
static int f_iszero(const fmt_t *f, uint64_t x) { return (x & (f_sign(f) - 1)) == 0; }
static int f_issub(const fmt_t *f, uint64_t x) { return f_exp(f, x) == 0 && (x & f_mmask(f)); }
static uint64_t f_inf(const fmt_t *f, uint64_t sign) { return sign | (f_expmax(f) << f->mbits); }

/* Round sig * 2^e (sig != 0, exact) to nearest-even in format f. e is the
 * exponent of sig's bit 0; the value's sign is `sign` (0 or the sign bit). */
static uint64_t round_pack(const fmt_t *f, uint64_t sign, uint64_t sig, int e)
{
    int bias = (1 << (f->ebits - 1)) - 1;
    int emin_q = 1 - bias - (int)f->mbits; /* exponent of one subnormal ulp */
    int top = 63 - __builtin_clzll(sig);   /* sig != 0 */
    /* exponent of the result's ulp */
    int q = e + top - (int)f->mbits;
    if (q < emin_q)
        q = emin_q;
    int s = q - e; /* bits to drop */
    uint64_t n;
    if (s <= 0) {
        n = sig << -s; /* exact (only for small values: top - mbits <= 0 here) */
    } else if (s >= 64) {
        n = 0;
        /* everything below half an ulp unless s == 64 and sig's top is the half bit */
        if (s == 64 && top == 63 && (sig << 1) != 0)
            n = 1; /* above half: round up */
    } else {
        uint64_t rem = sig & (((uint64_t)1 << s) - 1);
        uint64_t half = (uint64_t)1 << (s - 1);
        n = sig >> s;
        if (rem > half || (rem == half && (n & 1)))
            n++;
    }
    if (n >> (f->mbits + 1)) { /* carried into the next binade */
        n >>= 1;
        q++;
    }
    if (n == 0)
        return sign;
    uint64_t expf, man;
    if (!(n >> f->mbits)) { /* subnormal */
        expf = 0;
        man = n;
    } else {
        long ef = (long)q + (long)f->mbits + bias;
        if (ef >= (long)f_expmax(f))
            return f_inf(f, sign);
        expf = (uint64_t)ef;
        man = n & f_mmask(f);
    }
    return sign | (expf << f->mbits) | man;
}

#define GUARD 8

/* Finite non-zero x as sig * 2^e with GUARD extra low bits. */
static void unpack(const fmt_t *f, uint64_t x, uint64_t *sig, int *e)
{
    int bias = (1 << (f->ebits - 1)) - 1;
    uint64_t ex = f_exp(f, x);
    uint64_t m = x & f_mmask(f);
    if (ex) {
        m |= (uint64_t)1 << f->mbits;
        *e = (int)ex - bias - (int)f->mbits;
    } else {
        *e = 1 - bias - (int)f->mbits;
    }
    *sig = m << GUARD;
    *e -= GUARD;
}

/* Exact a + b of two finite values, rounded once to nearest-even.
 * With >= 2 guard bits and a sticky bit the rounded result equals the
 * rounding of the exact sum: a right shift of the smaller operand by d <= GUARD
 * loses nothing, and for d > 1 at most one bit of cancellation can occur, so
 * the sticky bit always lies strictly below the rounding position. */
static uint64_t soft_add_finite(const fmt_t *f, uint64_t a, uint64_t b)
{
    uint64_t sg = f_sign(f);
    if (f_iszero(f, a) && f_iszero(f, b))
        return (a & b) & sg; /* -0 only for -0 + -0 */
    if (f_iszero(f, a))
        return b;
    if (f_iszero(f, b))
        return a;
    uint64_t sa, sb;
    int ea, eb;
    unpack(f, a, &sa, &ea);
    unpack(f, b, &sb, &eb);
    uint64_t signa = a & sg, signb = b & sg;
    /* order by magnitude: larger exponent means larger magnitude (subnormals
     * share the smallest exponent); equal exponents compare significands */
    if (eb > ea || (eb == ea && sb > sa)) {
        uint64_t t = sa; sa = sb; sb = t;
        int te = ea; ea = eb; eb = te;
        t = signa; signa = signb; signb = t;
    }
    int d = ea - eb;
    if (d > 0) {
        if (d >= 63) {
            sb = sb ? 1 : 0;
        } else {
            uint64_t lost = sb & (((uint64_t)1 << d) - 1);
            sb = (sb >> d) | (lost ? 1 : 0);
        }
    }
    uint64_t r;
    if (signa == signb) {
        r = sa + sb; /* < 2^(mbits+1+GUARD+1) <= 2^62: no overflow */
    } else {
        r = sa - sb;
        if (r == 0)
            return 0; /* exact cancellation: +0 in round-to-nearest */
    }
    return round_pack(f, signa, r, ea);
}

/* f16 / bf16 / f32 add: canonical NaN result (nan_bits). */
static uint64_t add_canon(const fmt_t *f, uint64_t a, uint64_t b, uint64_t nan_bits)
{
    if (f_isnan(f, a) || f_isnan(f, b))
        return nan_bits;
    if (f_isinf(f, a) || f_isinf(f, b)) {
        if (f_isinf(f, a) && f_isinf(f, b) && ((a ^ b) & f_sign(f)))
            return nan_bits;
        return f_isinf(f, a) ? a : b;
    }
    return soft_add_finite(f, a, b);
}

/* f64 add: a NaN operand passes through unchanged (the source's wins),
 * inf + -inf is 0xFFF8000000000000. a = destination, b = source. */
static uint64_t add_f64(uint64_t a, uint64_t b)
{
    const fmt_t *f = &F64;
    if (f_isnan(f, b))
        return b;
    if (f_isnan(f, a))
        return a;
    if (f_isinf(f, a) || f_isinf(f, b)) {
        if (f_isinf(f, a) && f_isinf(f, b) && ((a ^ b) & f_sign(f)))
            return UINT64_C(0xFFF8000000000000);
        return f_isinf(f, a) ? a : b;
    }
    return soft_add_finite(f, a, b);
}

/* Flush a subnormal to the zero of the same sign (FTZ map types). */
static uint64_t ftz(const fmt_t *f, uint64_t x)
{
    return f_issub(f, x) ? (x & f_sign(f)) : x;
}

static uint64_t add_f32_ftz(uint64_t a, uint64_t b)
{
    return ftz(&F32, add_canon(&F32, ftz(&F32, a), ftz(&F32, b), 0x7FFFFFFFu));
}

/* Ordering key of a non-NaN value: a signed integer monotonic in the value,
 * with -0 below +0. */
static int64_t f_key(const fmt_t *f, uint64_t x)
{
    uint64_t mag = x & (f_sign(f) - 1);
    return (x & f_sign(f)) ? -(int64_t)mag - 1 : (int64_t)mag;
}

/* f16 / bf16 min/max: one NaN gives the other operand, two give 0x7FFF. */
static uint64_t minmax_half(const fmt_t *f, uint64_t a, uint64_t b, int is_max)
{
    int na = f_isnan(f, a), nb = f_isnan(f, b);
    if (na && nb)
        return 0x7FFF;
    if (na)
        return b;
    if (nb)
        return a;
    int64_t ka = f_key(f, a), kb = f_key(f, b);
    if (is_max)
        return ka >= kb ? a : b;
    return ka <= kb ? a : b;
}

/* ------------------------------------------------------------- integers */

static uint64_t int_op(pa_redop op, uint64_t d, uint64_t s, unsigned bits, int is_signed)
{
    uint64_t mask = bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    uint64_t flip = is_signed ? ((uint64_t)1 << (bits - 1)) : 0;
    switch (op) {
    case PA_RED_ADD: return (d + s) & mask;
    case PA_RED_MIN: return ((d ^ flip) <= (s ^ flip)) ? d : s;
    case PA_RED_MAX: return ((d ^ flip) >= (s ^ flip)) ? d : s;
    case PA_RED_INC: return d >= s ? 0 : d + 1;
    case PA_RED_DEC: return (d == 0 || d > s) ? s : d - 1;
    case PA_RED_AND: return d & s;
    case PA_RED_OR: return d | s;
    case PA_RED_XOR: return d ^ s;
    default: return d;
    }
}

/* -------------------------------------------------------------- apply */

static unsigned ek_bytes(pa_ekind k)
{
    switch (k) {
    case PA_EK_U32: case PA_EK_S32: case PA_EK_F32: case PA_EK_F32_FTZ: return 4;
    case PA_EK_U64: case PA_EK_S64: case PA_EK_F64: return 8;
    case PA_EK_F16: case PA_EK_BF16: return 2;
    default: return 0;
    }
}

/* One element; returns the new destination value. Pairs outside every
 * table leave the destination unchanged. */
static uint64_t elem(pa_redop op, pa_ekind k, uint64_t d, uint64_t s)
{
    switch (k) {
    case PA_EK_U32: return int_op(op, d, s, 32, 0);
    case PA_EK_S32: return int_op(op, d, s, 32, 1);
    case PA_EK_U64: return int_op(op, d, s, 64, 0);
    case PA_EK_S64: return int_op(op, d, s, 64, 1);
    case PA_EK_F16:
    case PA_EK_BF16: {
        const fmt_t *f = k == PA_EK_F16 ? &F16 : &BF16;
        if (op == PA_RED_ADD)
            return add_canon(f, d, s, 0x7FFF);
        if (op == PA_RED_MIN || op == PA_RED_MAX)
            return minmax_half(f, d, s, op == PA_RED_MAX);
        return d;
    }
    case PA_EK_F32: return op == PA_RED_ADD ? add_canon(&F32, d, s, 0x7FFFFFFFu) : d;
    case PA_EK_F32_FTZ: return op == PA_RED_ADD ? add_f32_ftz(d, s) : d;
    case PA_EK_F64: return op == PA_RED_ADD ? add_f64(d, s) : d;
    default: return d;
    }
}

uint64_t pa_reduce_elem(pa_redop op, pa_ekind k, uint64_t d, uint64_t s)
{
    return elem(op, k, d, s);
}

/* f64 add of the SM's double unit (atom.add.f64 on shared memory, recorded on
 * an H200: tests/data/isa/carry_atom.*): the destination's NaN if it is one,
 * else the source's, quieted; otherwise IEEE's add as add_f64. */
uint64_t pa_reduce_add_f64_quiet(uint64_t d, uint64_t s)
{
    if (f_isnan(&F64, d))
        return d | UINT64_C(0x0008000000000000);
    if (f_isnan(&F64, s))
        return s | UINT64_C(0x0008000000000000);
    return add_f64(d, s);
}

/* The soft loop: every element through elem(), byte-wise little-endian io.
 * The definition the specialised loops of reduce_fast.c are tested against. */
static void soft_loop(const pa_reducer *r, uint8_t *dst, const uint8_t *src, size_t n)
{
    const unsigned w = r->esize;
    for (size_t i = 0; i < n; i++) {
        uint64_t d = pa_le_load(dst + i * w, w), s = pa_le_load(src + i * w, w);
        pa_le_store(dst + i * w, elem(r->op, (pa_ekind)r->kind, d, s), w);
    }
}

static void no_loop(const pa_reducer *r, uint8_t *dst, const uint8_t *src, size_t n)
{
    (void)r; (void)dst; (void)src; (void)n;
}

/* The loop of (op, k), chosen once: a specialised one, unless it needs the
 * host adder and this thread's float environment is not exact. */
static void reducer_init(pa_reducer *r, pa_redop op, pa_ekind k)
{
    r->op = op;
    r->kind = (int)k;
    r->esize = ek_bytes(k);
    r->loop = pa_reduce_fast_loop(op, k);
    if (!r->loop || (pa_ekind_uses_host_float(op, k) && !pa_host_float_exact()))
        r->loop = soft_loop;
}

void pa_reducer_use_soft(pa_reducer *r)
{
    if (r->loop != no_loop)
        r->loop = soft_loop;
}

static int reducer_none(pa_reducer *r)
{
    r->loop = no_loop;
    r->op = PA_RED_ADD;
    r->kind = PA_EK_NONE;
    r->esize = 0;
    return PA_ERR_INVALID_VALUE;
}

static pa_ekind rtype_kind(pa_rtype t)
{
    switch (t) {
    case PA_RT_B32: case PA_RT_U32: return PA_EK_U32;
    case PA_RT_S32: return PA_EK_S32;
    case PA_RT_B64: case PA_RT_U64: return PA_EK_U64;
    case PA_RT_S64: return PA_EK_S64;
    case PA_RT_F16: return PA_EK_F16;
    case PA_RT_BF16: return PA_EK_BF16;
    case PA_RT_F32: return PA_EK_F32;
    case PA_RT_F64: return PA_EK_F64;
    default: return PA_EK_NONE;
    }
}

int pa_reducer_bulk(pa_reducer *r, pa_redop op, pa_rtype t)
{
    /* only pairs of the .global table (a superset of .shared::cluster's) */
    if ((int)op < 0 || op >= PA_RED_COUNT || (int)t < 0 || t >= PA_RT_COUNT || !(GLOBAL_TABLE[op] & B(t)))
        return reducer_none(r);
    reducer_init(r, op, rtype_kind(t));
    return PA_OK;
}

void pa_reduce_bulk_apply(pa_redop op, pa_rtype t, uint8_t *dst, const uint8_t *src, size_t n)
{
    pa_reducer r;
    if (pa_reducer_bulk(&r, op, t) == PA_OK && dst && src)
        pa_reducer_apply(&r, dst, src, n);
}

/* ----------------------------------------------------------- tensor maps */

/* (redOp, CUtensorMapDataType) pairs that execute on sm_90 (observation 11);
 * every other pair raised cudaErrorIllegalInstruction. */
#define D(t) (1u << (t))
static const unsigned TENSOR_TABLE[PA_RED_COUNT] = {
    /* add */ D(PA_DTYPE_UINT32) | D(PA_DTYPE_INT32) | D(PA_DTYPE_UINT64) | D(PA_DTYPE_FLOAT16) |
        D(PA_DTYPE_BFLOAT16) | D(PA_DTYPE_FLOAT32) | D(PA_DTYPE_FLOAT64) | D(PA_DTYPE_FLOAT32_FTZ) |
        D(PA_DTYPE_TFLOAT32) | D(PA_DTYPE_TFLOAT32_FTZ),
    /* min */ D(PA_DTYPE_UINT32) | D(PA_DTYPE_INT32) | D(PA_DTYPE_UINT64) | D(PA_DTYPE_INT64) |
        D(PA_DTYPE_FLOAT16) | D(PA_DTYPE_BFLOAT16),
    /* max */ D(PA_DTYPE_UINT32) | D(PA_DTYPE_INT32) | D(PA_DTYPE_UINT64) | D(PA_DTYPE_INT64) |
        D(PA_DTYPE_FLOAT16) | D(PA_DTYPE_BFLOAT16),
    /* inc */ D(PA_DTYPE_UINT32),
    /* dec */ D(PA_DTYPE_UINT32),
    /* and */ D(PA_DTYPE_UINT32) | D(PA_DTYPE_INT32) | D(PA_DTYPE_UINT64),
    /* or  */ D(PA_DTYPE_UINT32) | D(PA_DTYPE_INT32) | D(PA_DTYPE_UINT64),
    /* xor */ D(PA_DTYPE_UINT32) | D(PA_DTYPE_INT32) | D(PA_DTYPE_UINT64),
};

int pa_reduce_tensor_check(pa_redop op, pa_dtype dtype, pa_error *err)
{
    const pa_dtype_info *di = pa_dtype_get((int)dtype);
    if ((int)op < 0 || op >= PA_RED_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "cp.reduce.async.bulk.tensor: redOp %d is not a PTX .redOp", (int)op);
    if (!di)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "cp.reduce.async.bulk.tensor: tensor-map data type %d is not a "
                       "CUtensorMapDataType", (int)dtype);
    if (!(TENSOR_TABLE[op] & D(dtype)))
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                       "cp.reduce.async.bulk.tensor .%s on a %s (%s) tensor map does not execute on "
                       "sm_90: the hardware raises an illegal instruction for this (redOp, data type) "
                       "pair",
                       REDOP_NAMES[op], di->name, di->ptx);
    return PA_OK;
}

static pa_ekind dtype_kind(pa_dtype dt)
{
    switch (dt) {
    case PA_DTYPE_UINT32: return PA_EK_U32;
    case PA_DTYPE_INT32: return PA_EK_S32;
    case PA_DTYPE_UINT64: return PA_EK_U64;
    case PA_DTYPE_INT64: return PA_EK_S64;
    case PA_DTYPE_FLOAT16: return PA_EK_F16;
    case PA_DTYPE_BFLOAT16: return PA_EK_BF16;
    case PA_DTYPE_FLOAT32:
    case PA_DTYPE_TFLOAT32: return PA_EK_F32;   /* plain f32 add, no tf32 rounding */
    case PA_DTYPE_FLOAT32_FTZ:
    case PA_DTYPE_TFLOAT32_FTZ: return PA_EK_F32_FTZ;
    case PA_DTYPE_FLOAT64: return PA_EK_F64;
    default: return PA_EK_NONE;
    }
}

int pa_reducer_tensor(pa_reducer *r, pa_redop op, pa_dtype dtype)
{
    if (pa_reduce_tensor_check(op, dtype, NULL) != PA_OK)
        return reducer_none(r);
    reducer_init(r, op, dtype_kind(dtype));
    return PA_OK;
}

void pa_reduce_tensor_apply(pa_redop op, pa_dtype dtype, uint8_t *dst, const uint8_t *src, size_t n)
{
    pa_reducer r;
    if (pa_reducer_tensor(&r, op, dtype) == PA_OK && dst && src)
        pa_reducer_apply(&r, dst, src, n);
}
