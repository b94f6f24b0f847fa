/* ab_core_drv.c - runs one bench_core key of two builds (ab_core.c) in one
 * process: round r times, for each build in turn (which one first
 * alternates), its baseline then its model, as bench_core does.
 *
 *   ab_core_drv A.so B.so key rounds
 *
 * Printed: each build's median ratio (baseline time / model time) and the
 * median over rounds of the difference B - A of the two ratios of a round.
 * Run it twice with the objects swapped (ab_core.sh does): a build's place
 * in the process (where its code lands) moves its ratio too, by about 0.01
 * for two copies of one tree on the development machine, and the mean of
 * the two differences cancels that.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct {
    void (*sizes)(size_t *, size_t *);
    int (*setup)(const char *, uint8_t *, uint8_t *);
    void (*model)(void), (*base)(void);
    double (*now)(void), (*median)(double *, int);   /* bench_core.c's */
} build;

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s A.so B.so key rounds\n", argv[0]);
        return 2;
    }
    const int rounds = atoi(argv[4]);
    if (rounds < 1 || rounds > 100000) {
        fprintf(stderr, "rounds: 1 .. 100000\n");
        return 2;
    }
    build b[2];
    void *first = NULL;
    for (int i = 0; i < 2; i++) {
        void *h = dlopen(argv[1 + i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
        if (h == first) {   /* one object loaded once: its one machine cannot be both */
            fprintf(stderr, "A.so and B.so are one file: give two copies\n");
            return 2;
        }
        first = h;
        *(void **)&b[i].sizes = dlsym(h, "ab_sizes");
        *(void **)&b[i].setup = dlsym(h, "ab_setup");
        *(void **)&b[i].model = dlsym(h, "ab_model");
        *(void **)&b[i].base = dlsym(h, "ab_base");
        *(void **)&b[i].now = dlsym(h, "ab_now");
        *(void **)&b[i].median = dlsym(h, "ab_median");
        if (!b[i].sizes || !b[i].setup || !b[i].model || !b[i].base || !b[i].now || !b[i].median) {
            fprintf(stderr, "%s: not built from ab_core.c\n", argv[1 + i]);
            return 1;
        }
    }
    size_t tensor_bytes[2], scratch_bytes[2];
    for (int i = 0; i < 2; i++)
        b[i].sizes(&tensor_bytes[i], &scratch_bytes[i]);
    if (tensor_bytes[0] != tensor_bytes[1] || scratch_bytes[0] != scratch_bytes[1]) {
        fprintf(stderr, "the two trees' bench_core.c have different tensors: no shared memory fits both\n");
        return 2;
    }
    uint8_t *tensor, *scratch = malloc(scratch_bytes[0]);
    if (posix_memalign((void **)&tensor, 2u << 20, tensor_bytes[0]) || !scratch) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
#ifdef MADV_HUGEPAGE
    madvise(tensor, tensor_bytes[0], MADV_HUGEPAGE);   /* as bench_core.c */
#endif
    for (int i = 0; i < 2; i++) {
        if (b[i].setup(argv[3], tensor, scratch)) {
            fprintf(stderr, "%s: no machine, or no key %s\n", argv[1 + i], argv[3]);
            return 1;
        }
        b[i].model();   /* warm up */
        b[i].base();
    }
    double *ratio[2], *diff = malloc((size_t)rounds * sizeof *diff);
    for (int i = 0; i < 2; i++)
        ratio[i] = malloc((size_t)rounds * sizeof *ratio[i]);
    if (!diff || !ratio[0] || !ratio[1])
        return 1;
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 2; k++) {
            const int i = r & 1 ? 1 - k : k;
            const double t0 = b[i].now();
            b[i].base();
            const double t1 = b[i].now();
            b[i].model();
            const double t2 = b[i].now();
            ratio[i][r] = (t1 - t0) / (t2 - t1);
        }
        diff[r] = ratio[1][r] - ratio[0][r];
    }
    double (*median)(double *, int) = b[0].median;
    const double d = median(diff, rounds);
    printf("%s: A %.4f  B %.4f  median(B - A) %+.4f\n", argv[3], median(ratio[0], rounds), median(ratio[1], rounds), d);
    return 0;
}
