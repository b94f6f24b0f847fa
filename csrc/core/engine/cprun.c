/* cprun.c - runs of cp.async: a thread's copy loop, the k-th copy cp-size
 * bytes from src + k * src_stride to dst + k * dst_stride.
 *
 * Copies that continue one another (the next cp-size bytes of both dst and
 * src, whole reads, the same qualifiers, one thread, one open group, issued
 * back to back) are kept as one record (pa_op.merged): their completion is
 * one long move of the bytes the separate copies would have moved, and the
 * queue counts them one by one (pending, completed, issue numbers; step()
 * completes one). Only where nothing watches single operations (no checker,
 * trace or replay hooks) and the policy completes in issue order or its
 * reverse: the copies of a run then complete back to back whichever way,
 * with nothing between them that could tell.
 */
#include "cprun.h"

#include <inttypes.h>

/* Copy k's addresses; 0 if they leave the 32-bit shared / 64-bit global space. */
static int run_at(uint32_t dst, uint32_t dst_stride, uint64_t src, uint64_t src_stride, uint32_t k, uint32_t *d,
                  uint64_t *s)
{
    const uint64_t dd = (uint64_t)dst + (uint64_t)dst_stride * k;
    if (dd > UINT32_MAX || (src_stride && k > (UINT64_MAX - src) / src_stride))
        return 0;
    *d = (uint32_t)dd;
    *s = src + src_stride * k;
    return 1;
}

/* Every copy's rules, the first that fails named (as its own call would);
 * *one: the copies are contiguous whole copies inside one global buffer. */
static int check_run(pa_machine *m, uint32_t cta, uint32_t dst, uint32_t dst_stride, uint64_t src,
                     uint64_t src_stride, uint32_t n, const pa_cp_async_args *a, int *one, pa_error *err)
{
    const uint32_t nread = a->ignore_src ? 0 : a->src_size;
    int rc = pa_cp_check(m, cta, dst, src, a, err);
    if (rc)
        return rc;
    /* contiguous whole copies: the first copy's rules and the run's two ranges say it all */
    const uint64_t len = (uint64_t)n * a->cp_size;
    *one = dst_stride == a->cp_size && src_stride == a->cp_size && nread == a->cp_size && len <= UINT32_MAX &&
           src <= UINT64_MAX - len && pa_smem_resolve(&m->cluster, cta, 0, dst, (uint32_t)len, NULL, NULL) &&
           pa_global_resolve(&m->global, src, len, NULL);
    if (*one)
        return PA_OK;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t d;
        uint64_t s;
        if (!run_at(dst, dst_stride, src, src_stride, k, &d, &s))
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                           "cp.async run: copy %u of %u lies past the end of the shared (dst 0x%x + %u x %u) "
                           "or global (src 0x%" PRIx64 " + %u x %" PRIu64 ") address space",
                           k, n, dst, k, dst_stride, src, k, src_stride);
        if ((rc = pa_cp_check(m, cta, d, s, a, err)))
            return rc;
        if (nread && !pa_global_resolve(&m->global, s, nread, err))
            return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    }
    return PA_OK;
}

int pa_issue_cp_async_run(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t dst, uint32_t dst_stride,
                          uint64_t src, uint64_t src_stride, uint32_t n, const pa_cp_async_args *a, pa_error *err)
{
    if (n == 0)
        return PA_OK;
    int one, rc = check_run(m, cta, dst, dst_stride, src, src_stride, n, a, &one, err);
    if (rc)
        return rc;
    if (one && pa_queue_runs_merge(m)) {   /* one record: the one it continues, or its own */
        if (pa_cp_extend_run(m, cta, thread, dst, src, a, n))
            return PA_OK;
        return pa_cp_queue(m, cta, thread, dst, src, a, n - 1, err);
    }
    for (uint32_t k = 0; k < n && !rc; k++)   /* inside both address spaces: checked above */
        rc = pa_issue_cp_async(m, cta, thread, dst + dst_stride * k, src + src_stride * k, a, err);
    return rc;
}
