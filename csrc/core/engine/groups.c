/* groups.c - cp.async.bulk.commit_group / wait_group{.read} (per thread, PTX ISA). */
#include "../engine.h"

int pa_bulk_commit_group(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err)
{
    long ti = pa_issuer_index(m, cta, thread, err);
    return ti < 0 ? PA_ERRC(err, PA_ERR_NO_MEMORY) : pa_groups_commit(m, (uint32_t)ti, 0, err);
}

int pa_bulk_wait_group(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t n, pa_error *err)
{
    long ti = pa_issuer_index(m, cta, thread, err);
    return ti < 0 ? PA_ERRC(err, PA_ERR_NO_MEMORY) : pa_groups_wait(m, (uint32_t)ti, 0, n, 0, err);
}

int pa_bulk_wait_group_read(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t n, pa_error *err)
{
    long ti = pa_issuer_index(m, cta, thread, err);
    return ti < 0 ? PA_ERRC(err, PA_ERR_NO_MEMORY) : pa_groups_wait(m, (uint32_t)ti, 0, n, 1, err);
}
