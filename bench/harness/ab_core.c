/* ab_core.c - one of two builds of the library in an A/B comparison of a
 * bench_core key in one process (ab_core_drv.c, ab_core.sh): this file and
 * the tree's core become one shared object, which keeps its machine and
 * copies of the library's functions to itself; the driver hands both
 * objects the same tensor and baseline buffer and alternates their rounds.
 * Two builds timed in turns of one process see the same sitting, so the
 * drift between whole runs (0.02-0.03 of a ratio on the development machine)
 * does not enter the difference.
 *
 * BENCH_CORE: the path of the bench/bench_core.c both builds share
 * (ab_core.sh: the one beside it).
 */
#define main bench_core_main
#include BENCH_CORE
#undef main

#define EXPORT __attribute__((visibility("default")))

static const bench *chosen;

/* The bytes of bench_core's tensor and baseline buffer, for the driver to
 * allocate once for both builds. */
EXPORT void ab_sizes(size_t *tensor_bytes, size_t *scratch_bytes)
{
    *tensor_bytes = TENSOR_BYTES;
    *scratch_bytes = SCRATCH_BYTES;
}

/* Key `key` set up as bench_core's main sets it up, on the shared tensor
 * (filled again: the same bytes, and the generator where each key's setup
 * expects it, so both builds draw the same coordinates) and baseline buffer
 * (0; 1: no machine or no such key). */
EXPORT int ab_setup(const char *key, uint8_t *shared_tensor, uint8_t *shared_scratch)
{
    tensor = shared_tensor;
    scratch = shared_scratch;
    fill_tensor();
    pa_error e;
    if (machine_setup(&e))
        return 1;
    for (size_t b = 0; b < sizeof BENCHES / sizeof *BENCHES; b++)
        if (strcmp(BENCHES[b].key, key) == 0)
            chosen = &BENCHES[b];
    if (!chosen)
        return 1;
    chosen->setup();
    return 0;
}

EXPORT void ab_model(void)
{
    chosen->model();
}

EXPORT void ab_base(void)
{
    chosen->base();
}

/* bench_core's clock and median, for the driver */
EXPORT double ab_now(void)
{
    return now();
}

EXPORT double ab_median(double *v, int n)
{
    return median(v, n);
}
