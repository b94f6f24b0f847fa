/* fuzz.h - what the libFuzzer harnesses share: reading typed values off the
 * input (zeros once it runs out) and a failure that stops the fuzzer.
 *
 * Each harness is one C file with LLVMFuzzerTestOneInput; build and run
 * (tests/core/test_fuzz_c.py does this for a short while; docs/robustness.md):
 *
 *   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *         -Icsrc/core -Icsrc/include fuzz/fuzz_decode.c csrc/core/(all .c) -lm -o fuzz_decode
 *   ./fuzz_decode -max_total_time=60 /tmp/new fuzz/corpus/fuzz_decode
 */
#ifndef PA_FUZZ_H
#define PA_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

typedef struct {
    const uint8_t *p;
    size_t n;
} fz_in;

static inline void fz_bytes(fz_in *in, void *out, size_t k)
{
    size_t take = k < in->n ? k : in->n;
    memcpy(out, in->p, take);
    memset((uint8_t *)out + take, 0, k - take);
    in->p += take;
    in->n -= take;
}

static inline uint8_t fz_u8(fz_in *in) { uint8_t v; fz_bytes(in, &v, 1); return v; }
static inline uint16_t fz_u16(fz_in *in) { uint16_t v; fz_bytes(in, &v, 2); return v; }
static inline uint32_t fz_u32(fz_in *in) { uint32_t v; fz_bytes(in, &v, 4); return v; }
static inline uint64_t fz_u64(fz_in *in) { uint64_t v; fz_bytes(in, &v, 8); return v; }

/* A property broke: report and abort (libFuzzer saves the input). */
#define FZ_CHECK(cond, ...)                                              \
    do {                                                                 \
        if (!(cond)) {                                                   \
            fprintf(stderr, "fuzz check failed: %s: ", #cond);           \
            fprintf(stderr, __VA_ARGS__);                                \
            fputc('\n', stderr);                                         \
            abort();                                                     \
        }                                                                \
    } while (0)

/* Every error must carry a message naming what was wrong. */
#define FZ_ERR_OK(rc, err) FZ_CHECK((rc) == PA_OK || (err).msg[0] != 0, "error %d without a message", (rc))

/* Encode parameters as the tiled / im2col harnesses read them (also how
 * fuzz/make_corpus.py writes seeds): fixed-size little-endian fields. */
static inline void fz_tiled_params(fz_in *in, pa_tiled_params *p)
{
    memset(p, 0, sizeof *p);
    p->dtype = fz_u8(in);
    p->rank = fz_u8(in);
    p->global_address = fz_u64(in);
    for (int i = 0; i < PA_MAX_RANK; i++) p->global_dim[i] = fz_u64(in);
    for (int i = 0; i < PA_MAX_RANK; i++) p->global_strides[i] = fz_u64(in);
    for (int i = 0; i < PA_MAX_RANK; i++) p->box_dim[i] = fz_u32(in);
    for (int i = 0; i < PA_MAX_RANK; i++) p->element_strides[i] = fz_u32(in);
    p->interleave = fz_u8(in);
    p->swizzle = fz_u8(in);
    p->l2_promotion = fz_u8(in);
    p->oob_fill = fz_u8(in);
    p->tensormap_address = fz_u64(in);
}

static inline void fz_im2col_params(fz_in *in, pa_im2col_params *p)
{
    memset(p, 0, sizeof *p);
    p->dtype = fz_u8(in);
    p->rank = fz_u8(in);
    p->global_address = fz_u64(in);
    for (int i = 0; i < PA_MAX_RANK; i++) p->global_dim[i] = fz_u64(in);
    for (int i = 0; i < PA_MAX_RANK; i++) p->global_strides[i] = fz_u64(in);
    for (int i = 0; i < PA_MAX_RANK - 2; i++) p->pixel_box_lower[i] = (int32_t)fz_u32(in);
    for (int i = 0; i < PA_MAX_RANK - 2; i++) p->pixel_box_upper[i] = (int32_t)fz_u32(in);
    p->channels_per_pixel = fz_u32(in);
    p->pixels_per_column = fz_u32(in);
    for (int i = 0; i < PA_MAX_RANK; i++) p->element_strides[i] = fz_u32(in);
    p->interleave = fz_u8(in);
    p->swizzle = fz_u8(in);
    p->l2_promotion = fz_u8(in);
    p->oob_fill = fz_u8(in);
    p->tensormap_address = fz_u64(in);
}

/* A map the driver accepted packs to bytes that decode to a map packing to
 * the same bytes; its box layout either works or is refused with a message. */
static inline void fz_check_map(const pa_tensormap *m)
{
    uint8_t img[PA_TENSORMAP_BYTES], again[PA_TENSORMAP_BYTES];
    pa_tensormap back;
    pa_error err = {0};
    pa_tensormap_pack(m, img);
    int rc = pa_tensormap_unpack(img, &back, &err);
    FZ_CHECK(rc == PA_OK, "an encoded map does not decode: %s", err.msg);
    pa_tensormap_pack(&back, again);
    FZ_CHECK(memcmp(img, again, sizeof img) == 0, "decode/pack does not round-trip");
    pa_box_layout l;
    rc = m->kind == PA_MAP_IM2COL ? pa_box_layout_im2col(m, &l, &err) : pa_box_layout_tile(m, &l, &err);
    FZ_ERR_OK(rc, err);
}

#endif
