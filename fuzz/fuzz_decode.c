/* fuzz_decode.c - decoding any 128-byte CUtensorMap image. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    uint8_t img[PA_TENSORMAP_BYTES];
    fz_bytes(&in, img, sizeof img);
    pa_tensormap m;
    pa_error err = {0};
    int rc = pa_tensormap_unpack(img, &m, &err);
    FZ_ERR_OK(rc, err);
    if (rc == PA_OK)
        fz_check_map(&m);
    return 0;
}
