/* fuzz_replace.c - tensormap.replace edits of any image, then decoding it. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    uint8_t img[PA_TENSORMAP_BYTES], before[PA_TENSORMAP_BYTES];
    fz_bytes(&in, img, sizeof img);
    for (int i = 0; i < 8 && in.n; i++) {
        pa_tmap_field field = (pa_tmap_field)(fz_u8(&in) % (PA_FIELD_COUNT + 1));
        int ord = (int8_t)fz_u8(&in);
        uint64_t val = fz_u64(&in);
        pa_error err = {0};
        memcpy(before, img, sizeof img);
        int rc = pa_tensormap_replace(img, field, ord, val, &err);
        FZ_ERR_OK(rc, err);
        FZ_CHECK(rc == PA_OK || memcmp(before, img, sizeof img) == 0, "a refused replace changed the map");
        pa_tensormap m;
        rc = pa_tensormap_unpack(img, &m, &err);
        FZ_ERR_OK(rc, err);
        if (rc == PA_OK) {
            pa_box_layout l;
            rc = m.kind == PA_MAP_IM2COL ? pa_box_layout_im2col(&m, &l, &err) : pa_box_layout_tile(&m, &l, &err);
            FZ_ERR_OK(rc, err);
        }
    }
    return 0;
}
