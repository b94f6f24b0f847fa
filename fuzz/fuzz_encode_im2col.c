/* fuzz_encode_im2col.c - cuTensorMapEncodeIm2col validation on any parameters. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    pa_im2col_params p;
    fz_im2col_params(&in, &p);
    pa_tensormap m;
    pa_error err = {0};
    int rc = pa_tensormap_encode_im2col(&m, &p, &err);
    FZ_ERR_OK(rc, err);
    if (rc == PA_OK)
        fz_check_map(&m);
    return 0;
}
