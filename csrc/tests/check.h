/* check.h - the one assertion macro of the C tests: count and report, keep going. */
#ifndef PA_TEST_CHECK_H
#define PA_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                    \
    do {                                                    \
        if (!(cond)) {                                      \
            failures++;                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);     \
            printf(__VA_ARGS__);                            \
            printf("\n");                                   \
        }                                                   \
    } while (0)

#endif
