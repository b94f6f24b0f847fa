/* sfu_shim.c - a by-name door into the semantics library's special-function
 * forms, for tests/sem/test_sfu.py (ctypes). */
#include <string.h>

#include "sem/resolve_parts.h"

static const struct { const char *name; int v; } ops[] = {
    {"ex2", SEM_OP_EX2}, {"lg2", SEM_OP_LG2}, {"sin", SEM_OP_SIN}, {"cos", SEM_OP_COS},
    {"tanh", SEM_OP_TANH}, {"rcp", SEM_OP_RCP}, {"sqrt", SEM_OP_SQRT}, {"rsqrt", SEM_OP_RSQRT},
    {"div", SEM_OP_DIV},
};
static const struct { const char *name; int v; } types[] = {
    {"f32", SEM_T_F32}, {"f16", SEM_T_F16}, {"bf16", SEM_T_BF16}, {"f16x2", SEM_T_F16X2},
    {"bf16x2", SEM_T_BF16X2}, {"f64", SEM_T_F64},
};

/* flags: 1 .ftz, 2 .approx, 4 .full. Returns sem_resolve_sfu's code. */
int sfu_shim_run(const char *op, const char *type, unsigned flags, uint64_t *d,
                 const uint64_t *a, const uint64_t *b, size_t n)
{
    sem_ctl k;
    sem_impl im;
    const char *why = 0;
    memset(&k, 0, sizeof k);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].name, op))
            k.op = (uint8_t)ops[i].v;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(types[i].name, type))
            k.dt = k.at = (uint8_t)types[i].v;
    k.flags = (flags & 1 ? SEM_F_FTZ : 0) | (flags & 2 ? SEM_F_APPROX : 0) | (flags & 4 ? SEM_F_FULL : 0);
    int rc = sem_resolve_sfu(&k, &im, &why);
    if (rc)
        return rc;
    uint64_t *const dd[2] = {d, 0};
    const uint64_t *const ss[4] = {a, b, 0, 0};
    im.fn(&k, dd, ss, n);
    return 0;
}
