/* test_ptx_mod.c - the scheduler's draw x % n by a multiplication
 * (ptx/exec/launch.h pi_mod) equals x % n: every n a launch can draw below (a
 * block of up to 1024 threads in a cluster of up to 16 CTAs; max_burst up
 * to 2^20) and n near 2^32 and 2^64, against the edge values of x and
 * random ones. */
#include "check.h"
#include "ptx/exec/launch.h"

static uint64_t next(uint64_t *s)
{
    uint64_t x = *s += 0x9E3779B97F4A7C15ull;   /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void check_n(uint64_t n, uint64_t *s)
{
    uint64_t inv = pi_mod_inverse(n);
    const uint64_t edge[] = {0, 1, n - 1, n, n + 1, 2 * n - 1, UINT64_MAX, UINT64_MAX - 1,
                             UINT64_MAX - n, UINT64_MAX / n * n, UINT64_MAX / n * n - 1};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        CHECK(pi_mod(edge[i], n, inv) == edge[i] % n, "%llu %% %llu", (unsigned long long)edge[i],
              (unsigned long long)n);
    for (int k = 0; k < 64; k++) {
        uint64_t x = next(s);
        CHECK(pi_mod(x, n, inv) == x % n, "%llu %% %llu", (unsigned long long)x, (unsigned long long)n);
    }
}

int main(void)
{
    uint64_t s = 1;
    for (uint64_t n = 1; n <= 16 * 1024; n++)
        check_n(n, &s);
    for (uint64_t n = (1u << 20) - 64; n <= (1u << 20) + 64; n++)
        check_n(n, &s);
    const uint64_t big[] = {0xFFFFFFFFull, 0x100000000ull, 0x100000001ull, 0x8000000000000000ull,
                            0x8000000000000001ull, UINT64_MAX - 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof big / sizeof *big; i++)
        check_n(big[i], &s);
    if (failures)
        printf("test_ptx_mod: %d failure(s)\n", failures);
    else
        printf("test_ptx_mod: all passed\n");
    return failures != 0;
}
