/* ab_core.c - one of two builds of the library in an A/B comparison of a
 * bench_core key in one process (ab_core_drv.c, ab_core.sh): this file and
 * the tree's core become one shared object, which keeps its machine and
 * copies of the library's functions to itself; the driver hands both
 * objects the same tensor and baseline buffer and alternates their rounds.
 * Two builds timed in turns of one process see the same sitting, so the
 * drift between whole runs (0.02-0.03 of a ratio on the development machine)
 * does not enter the difference.
 *
 * BENCH_CORE: the path of that tree's bench/bench_core.c (ab_core.sh).
 */
#define main bench_core_main
#include BENCH_CORE
#undef main

#define EXPORT __attribute__((visibility("default")))

static const bench *chosen;

/* Key `key` set up on the shared tensor and baseline buffer (0; 1: no such
 * key or no machine). */
EXPORT int ab_setup(const char *key, uint8_t *shared_tensor, uint8_t *shared_scratch)
{
    tensor = shared_tensor;
    scratch = shared_scratch;
    pa_error e;
    uint64_t id;
    if (pa_machine_init(&mach, 1, 200 * 1024, &e) ||
        pa_global_add(&mach.global, GBASE, (uint64_t)ROWS * ROW_BYTES, tensor, &id, &e))
        return 1;
    smem = (pa_smem_view){mach.cluster.smem[0], mach.cluster.smem_bytes};
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
