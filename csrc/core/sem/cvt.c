/* cvt.c - conversions between every pair of types. */
#include "sem/resolve_parts.h"

int sem_resolve_cvt(const sem_ctl *k, sem_impl *out, const char **why)
{
    (void)k;
    (void)out;
    *why = "this conversion is not modelled yet";
    return 1;
}
