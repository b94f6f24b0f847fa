/* test_reduce_fast.c - the specialised reduction loops against the soft loop.
 *
 * For every (op, type) pair of both tables, long unaligned arrays of special
 * values, random bits and near neighbours (rounding, cancellation, subnormal
 * results) go through the reducer and through pa_reducer_use_soft (the
 * integer-only definition, itself checked against the golden vectors and
 * tests/reduce_reference.py); the results must match bit for bit. f16 and
 * bf16 add run every destination value against a sample of sources.
 * Every vector level this CPU has runs it (pa_simd_cap: AVX-512, AVX2, SSE2, none;
 * AVX-512 with AVX512_FP16, with AVX512_BF16, with neither: pa_simd_*_allow),
 * so each vector loop (reduce_x86.c) meets the soft loop, tails included; the
 * AVX512_BF16 bf16 add and the AVX512_FP16 f16 add also meet the AVX-512 loop
 * without them, and that loop's f16 add the AVX2 one, on every (destination,
 * source) pair.
 * Then the same with the host float environment changed (rounding modes;
 * FTZ and DAZ on x86): the reducer must notice and stay exact.
 */
#define _GNU_SOURCE
#include <fenv.h>
#include <stdlib.h>
#include <string.h>

#include "reduce.h"
#include "reduce_fast.h"

#include "check.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define HAVE_MXCSR 1
#endif

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* an element of `bits` bits: specials of every float format, random bits */
static uint64_t pick(unsigned bits)
{
    static const uint64_t spec[] = {0, 1, 2, 3, 0x7F, 0x80, 0x3FF, 0x400, 0x7BFF, 0x7C00, 0x7C01, 0x7E00,
                                    0x7F7F, 0x7F80, 0x7F81, 0x7FC0, 0x3C00, 0x3F80, 0x7FFFFF, 0x800000,
                                    0x7F7FFFFF, 0x7F800000, 0x7FC00000, 0x3F800000, 0x33000000,
                                    0x38800000, 0x477FF000, 0x000FFFFFFFFFFFFFull, 0x0010000000000000ull,
                                    0x7FEFFFFFFFFFFFFFull, 0x7FF0000000000000ull, 0x7FF8000000000000ull,
                                    0x7FF0000000000001ull, 0x3FF0000000000000ull};
    const uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1, sign = 1ull << (bits - 1);
    uint64_t r = rnd(), v;
    switch (r % 4) {
    case 0: v = spec[(r >> 8) % (sizeof spec / sizeof *spec)] | ((r >> 40) & 1 ? sign : 0); break;
    case 1: v = rnd() >> ((r >> 8) % bits); break;     /* small magnitudes: subnormals */
    default: v = rnd(); break;
    }
    return v & mask;
}

#define N 4099

static void put(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* one array through r and through its soft twin; 1 if they agree */
static int compare(const pa_reducer *r, const char *what, int fast_expected)
{
    static uint8_t d0[1 + 8 * N], a[1 + 8 * N], b[1 + 8 * N], s[3 + 8 * N];
    const unsigned w = r->esize, bits = 8 * w;
    const uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1, sign = 1ull << (bits - 1);
    for (size_t i = 0; i < N; i++) {
        uint64_t d = pick(bits), x;
        switch (rnd() % 5) {
        case 0: x = d ^ sign; break;                              /* exact cancellation */
        case 1: x = ((d ^ sign) + (rnd() % 9) - 4) & mask; break; /* near cancellation */
        case 2: x = (d + (rnd() % 9) - 4) & mask; break;          /* rounding of 2d */
        default: x = pick(bits); break;
        }
        put(d0 + 1 + w * i, d, w);
        put(s + 3 + w * i, x, w);
    }
    memcpy(a, d0, sizeof a);
    memcpy(b, d0, sizeof b);
    pa_reducer soft = *r;
    pa_reducer_use_soft(&soft);
    CHECK(!fast_expected || r->loop != soft.loop, "%s: the specialised loop is not in use", what);
    if (pa_ekind_uses_host_float(r->op, (pa_ekind)r->kind) && !pa_host_float_exact())
        CHECK(r->loop == soft.loop, "%s: the host adder is used in an inexact environment", what);
    pa_reducer_apply(r, a + 1, s + 3, N);
    pa_reducer_apply(&soft, b + 1, s + 3, N);
    for (size_t i = 0; i < N; i++)
        if (memcmp(a + 1 + w * i, b + 1 + w * i, w)) {
            uint64_t dv = 0, sv = 0, fv = 0, tv = 0;
            memcpy(&dv, d0 + 1 + w * i, w);
            memcpy(&sv, s + 3 + w * i, w);
            memcpy(&fv, a + 1 + w * i, w);
            memcpy(&tv, b + 1 + w * i, w);
            CHECK(0, "%s: d=%#llx s=%#llx: fast %#llx, soft %#llx", what, (unsigned long long)dv,
                  (unsigned long long)sv, (unsigned long long)fv, (unsigned long long)tv);
            return 0;
        }
    return 1;
}

static void all_pairs(int fast_expected, int rounds)
{
    char what[64];
    for (int op = 0; op < PA_RED_COUNT; op++) {
        for (int t = 0; t < PA_RT_COUNT; t++) {
            pa_reducer r;
            if (pa_reducer_bulk(&r, (pa_redop)op, (pa_rtype)t) != PA_OK)
                continue;
            snprintf(what, sizeof what, "bulk %s.%s", pa_redop_name(op), pa_rtype_name(t));
            for (int k = 0; k < rounds && compare(&r, what, fast_expected); k++)
                ;
        }
        for (int dt = 0; dt < PA_DTYPE_COUNT; dt++) {
            pa_reducer r;
            if (pa_reducer_tensor(&r, (pa_redop)op, (pa_dtype)dt) != PA_OK)
                continue;
            snprintf(what, sizeof what, "tensor %s on %s", pa_redop_name(op), pa_dtype_get(dt)->name);
            for (int k = 0; k < rounds && compare(&r, what, fast_expected); k++)
                ;
        }
    }
}

/* f16 / bf16 add: every destination value against 48 sources (specials and random) */
static void half_sweep(pa_rtype t)
{
    static uint8_t a[2 * 65536], b[2 * 65536], s[2 * 65536];
    pa_reducer r, soft;
    pa_reducer_bulk(&r, PA_RED_ADD, t);
    soft = r;
    pa_reducer_use_soft(&soft);
    for (int k = 0; k < 48; k++) {
        uint16_t x = (uint16_t)pick(16);
        for (uint32_t v = 0; v < 65536; v++) {
            put(a + 2 * v, v, 2);
            put(s + 2 * v, k % 3 == 0 ? (uint16_t)rnd() : x, 2);
        }
        memcpy(b, a, sizeof a);
        pa_reducer_apply(&r, a, s, 65536);
        pa_reducer_apply(&soft, b, s, 65536);
        for (uint32_t v = 0; v < 65536; v++)
            if (memcmp(a + 2 * v, b + 2 * v, 2)) {
                CHECK(0, "add.%s d=%#x s=%#x: fast %#x, soft %#x", pa_rtype_name(t), v,
                      s[2 * v] | s[2 * v + 1] << 8, a[2 * v] | a[2 * v + 1] << 8, b[2 * v] | b[2 * v + 1] << 8);
                return;
            }
    }
}

/* Two loops of one 16-bit add on every (destination, source) pair */
static void loops_all_pairs(pa_rtype t, const pa_reducer *with, const pa_reducer *without, const char *name)
{
    /* destination v meets source v + x (mod 2^16): s from element x of the doubled ramp */
    static uint8_t d0[2 * 65536], a[2 * 65536], b[2 * 65536], s[4 * 65536];
    CHECK(with->loop != without->loop, "add.%s: one loop with and without %s", pa_rtype_name(t), name);
    for (uint32_t v = 0; v < 2 * 65536; v++)
        put(s + 2 * v, v & 0xFFFFu, 2);
    memcpy(d0, s, sizeof d0);
    for (uint32_t x = 0; x < 65536; x++) {
        memcpy(a, d0, sizeof a);
        memcpy(b, d0, sizeof b);
        pa_reducer_apply(with, a, s + 2 * x, 65536);
        pa_reducer_apply(without, b, s + 2 * x, 65536);
        if (memcmp(a, b, sizeof a))
            for (uint32_t v = 0; v < 65536; v++)
                if (memcmp(a + 2 * v, b + 2 * v, 2)) {
                    CHECK(0, "add.%s d=%#x s=%#x: %s %#x, without %#x", pa_rtype_name(t), v, (v + x) & 0xFFFFu,
                          name, a[2 * v] | a[2 * v + 1] << 8, b[2 * v] | b[2 * v + 1] << 8);
                    return;
                }
    }
}

/* f16 / bf16 add with an extension (AVX512_FP16's binary16 add, AVX512_BF16's
 * narrowing) against the AVX-512 loop without it (itself checked against the
 * soft loop above): every (destination, source) pair */
static void extension_all_pairs(pa_rtype t, int (*allow)(int), const char *name)
{
    pa_reducer with, without;
    allow(1);
    pa_reducer_bulk(&with, PA_RED_ADD, t);
    allow(0);
    pa_reducer_bulk(&without, PA_RED_ADD, t);
    allow(1);
    loops_all_pairs(t, &with, &without, name);
}

/* The AVX-512 f16 add (F16C on each 32-byte half, one NaN test on the
 * narrowed line) against the AVX2 one (written apart: F16C on 16-byte
 * halves, a NaN test on each f32 sum): every (destination, source) pair */
static void avx512_f16_all_pairs(void)
{
    pa_reducer z, a;
    pa_simd_fp16_allow(0);
    pa_simd_cap(PA_SIMD_AVX512);
    pa_reducer_bulk(&z, PA_RED_ADD, PA_RT_F16);
    pa_simd_cap(PA_SIMD_AVX2);
    pa_reducer_bulk(&a, PA_RED_ADD, PA_RT_F16);
    pa_simd_cap(PA_SIMD_COUNT - 1);
    pa_simd_fp16_allow(1);
    loops_all_pairs(PA_RT_F16, &z, &a, "AVX-512");
}

/* The reducer must not trust a host float environment that is not exact. */
static void environments(void)
{
    const int modes[] = {FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        fesetround(modes[i]);
        CHECK(!pa_host_float_exact(), "rounding mode %d not noticed", modes[i]);
        all_pairs(0, 1);
        fesetround(FE_TONEAREST);
    }
#ifdef HAVE_MXCSR
    const unsigned flags[] = {0x8000u /* FTZ */, 0x0040u /* DAZ */, 0x8040u};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        unsigned saved = _mm_getcsr();
        _mm_setcsr(saved | flags[i]);
        int exact = pa_host_float_exact();
        _mm_setcsr(saved);
        CHECK(!exact, "MXCSR %#x not noticed", flags[i]);
        _mm_setcsr(saved | flags[i]);
        all_pairs(0, 1);
        _mm_setcsr(saved);
    }
#endif
}

int main(void)
{
    /* every level down to none; at the AVX512 level with AVX512_FP16, with
     * AVX512_BF16, then with neither */
    struct { int level, bf16, fp16; } runs[PA_SIMD_COUNT + 2];
    int nruns = 0;
    for (int level = (int)pa_simd_cpu(); level >= 0; level--) {
        if (level == PA_SIMD_AVX512 && pa_simd_fp16_cpu())
            runs[nruns].level = level, runs[nruns].bf16 = 0, runs[nruns++].fp16 = 1;
        if (level == PA_SIMD_AVX512 && pa_simd_bf16_cpu())
            runs[nruns].level = level, runs[nruns].bf16 = 1, runs[nruns++].fp16 = 0;
        runs[nruns].level = level, runs[nruns].bf16 = 0, runs[nruns++].fp16 = 0;
    }
    for (int i = 0; i < nruns; i++) {
        pa_simd_bf16_allow(runs[i].bf16);
        pa_simd_fp16_allow(runs[i].fp16);
        pa_simd_cap((pa_simd)runs[i].level);
        CHECK(pa_simd_level() == (pa_simd)runs[i].level, "cap %s not applied", pa_simd_name((pa_simd)runs[i].level));
        CHECK(pa_simd_bf16() == runs[i].bf16, "AVX512_BF16 switch %d not applied", runs[i].bf16);
        CHECK(pa_simd_fp16() == runs[i].fp16, "AVX512_FP16 switch %d not applied", runs[i].fp16);
#if defined(__x86_64__) || defined(__aarch64__)
        /* the default environment of these hosts is exact: the fast loops must be the ones tested */
        CHECK(pa_host_float_exact(), "the default float environment was not recognised as exact");
        all_pairs(1, 8);
#else
        all_pairs(0, 8);
#endif
        half_sweep(PA_RT_F16);
        half_sweep(PA_RT_BF16);
    }
    pa_simd_cap(PA_SIMD_COUNT - 1);
    pa_simd_bf16_allow(1);
    pa_simd_fp16_allow(1);
    if (pa_simd_bf16_cpu())
        extension_all_pairs(PA_RT_BF16, pa_simd_bf16_allow, "AVX512_BF16");
    if (pa_simd_fp16_cpu())
        extension_all_pairs(PA_RT_F16, pa_simd_fp16_allow, "AVX512_FP16");
    if (pa_simd_cpu() >= PA_SIMD_AVX512)
        avx512_f16_all_pairs();
    printf("test_reduce_fast: levels %s%s%s down to none\n", pa_simd_name(pa_simd_cpu()),
           pa_simd_bf16_cpu() ? " with AVX512_BF16" : "", pa_simd_fp16_cpu() ? " with AVX512_FP16" : "");
    environments();
    CHECK(pa_host_float_exact(), "environment not restored");
    if (failures) {
        printf("test_reduce_fast: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_reduce_fast: all passed\n");
    return 0;
}
