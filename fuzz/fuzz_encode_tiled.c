/* fuzz_encode_tiled.c - cuTensorMapEncodeTiled validation on any parameters. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = {data, size};
    pa_tiled_params p;
    fz_tiled_params(&in, &p);
    pa_tensormap m;
    pa_error err = {0};
    int rc = pa_tensormap_encode_tiled(&m, &p, &err);
    FZ_ERR_OK(rc, err);
    if (rc == PA_OK)
        fz_check_map(&m);
    return 0;
}
