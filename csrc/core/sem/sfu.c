/* sfu.c - the special-function unit's approximations. */
#include "sem/resolve_parts.h"

int sem_resolve_sfu(const sem_ctl *k, sem_impl *out, const char **why)
{
    (void)k;
    (void)out;
    *why = "the special-function approximations are not modelled yet";
    return 1;
}
