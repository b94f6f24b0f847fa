/* mbarrier.c - the mbarrier state machine (see mbarrier.h). */
#include "mbarrier.h"

static int need_valid(const pa_mbarrier *b, const char *op, pa_error *err)
{
    if (!b->valid)
        return pa_fail_rule(err, PA_ERR_HAZARD, "mbarrier-uninitialised",
                       "mbarrier.%s on an mbarrier that is not initialised (undefined behaviour)", op);
    return PA_OK;
}

/* The phase completes when no arrival and no transaction is outstanding. */
static void maybe_complete(pa_mbarrier *b)
{
    if (b->pending == 0 && b->tx == 0) {
        b->phase++;
        b->pending = b->expected;
        b->tx_expected = b->tx_credited = 0;
    }
}

static int tx_in_range(int64_t t, const char *op, pa_error *err)
{
    if (t > PA_MBAR_MAX_TX || t < -PA_MBAR_MAX_TX)
        return pa_fail_rule(err, PA_ERR_HAZARD, "tx-range",
                       "mbarrier.%s: tx-count %lld leaves the valid range [-(2^20-1), 2^20-1] "
                       "(undefined behaviour)",
                       op, (long long)t);
    return PA_OK;
}

int pa_mbar_init(pa_mbarrier *b, uint32_t count, pa_error *err)
{
    /* PTX: mbarrier.init on a valid mbarrier object is undefined (inval first). */
    if (b->valid)
        return pa_fail_rule(err, PA_ERR_HAZARD, "mbarrier-init-valid",
                       "mbarrier.init on an mbarrier that is already initialised "
                       "(undefined behaviour: mbarrier.inval it first)");
    if (count < 1 || count > PA_MBAR_MAX_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "mbarrier.init count %u is outside the valid range [1, 2^20-1]", count);
    b->valid = 1;
    b->phase = 0;
    b->expected = b->pending = (int32_t)count;
    b->tx = 0;
    b->observed = 0;
    b->async_tracked = 0;
    b->shared_use = 0;
    b->tx_expected = b->tx_credited = 0;
    return PA_OK;
}

void pa_mbar_inval(pa_mbarrier *b)
{
    b->valid = 0;
}

/* R9: bit 63 = current phase parity, bits 43-62 = (2^20 - P) mod 2^20,
 * bits 32-42 = ((-T) mod 2^21) >> 11, taken before the operation. Bits 0-31
 * are 0: on the hardware they held leftovers (operands, cycle counts), not the barrier. */
static uint64_t state_word(const pa_mbarrier *b)
{
    uint64_t p = (uint64_t)((1u << 20) - (uint32_t)b->pending) & 0xFFFFFu;
    uint64_t t = ((uint64_t)(-(int64_t)b->tx) & 0x1FFFFFu) >> 11;
    return ((b->phase & 1u) << 63) | (p << 43) | (t << 32);
}

int pa_mbar_arrive(pa_mbarrier *b, uint32_t count, uint32_t tx, unsigned flags, uint64_t *state,
                   pa_error *err)
{
    int rc = need_valid(b, "arrive", err);
    if (rc)
        return rc;
    if (count < 1 || count > PA_MBAR_MAX_COUNT)
        return pa_fail(err, PA_ERR_INVALID_VALUE,
                       "mbarrier.arrive count %u is outside the valid range [1, 2^20-1]", count);
    /* PTX: the pending count lives in [0, 2^20-1]; golden R12: arriving past 0
     * (e.g. after arrive_drop took E to 0) faulted with cudaErrorLaunchFailure. */
    if ((int64_t)count > b->pending)
        return pa_fail_rule(err, PA_ERR_HAZARD, "over-arrival",
                       "mbarrier.arrive of %u arrival(s) with only %d pending in the current phase: "
                       "the pending count would go below 0 (undefined behaviour; golden R12: the "
                       "hardware faults, cudaErrorLaunchFailure)",
                       count, b->pending);
    if ((rc = tx_in_range((int64_t)b->tx + tx, "arrive.expect_tx", err)))
        return rc;
    if ((flags & PA_MBAR_NO_COMPLETE) && b->pending == (int32_t)count && b->tx + (int64_t)tx == 0)
        return pa_fail_rule(err, PA_ERR_HAZARD, "nocomplete-completes",
                       "mbarrier.arrive.noComplete of %u arrival(s) would complete the current phase "
                       "(undefined behaviour by the PTX ISA)",
                       count);
    if (state)
        *state = state_word(b);
    b->tx += (int32_t)tx;
    b->tx_expected += tx;
    b->pending -= (int32_t)count;
    if (flags & PA_MBAR_DROP)
        b->expected -= (int32_t)count;
    maybe_complete(b);
    return PA_OK;
}

int pa_mbar_expect_tx(pa_mbarrier *b, uint32_t tx, pa_error *err)
{
    int rc = need_valid(b, "expect_tx", err);
    if (rc || (rc = tx_in_range((int64_t)b->tx + tx, "expect_tx", err)))
        return rc;
    b->tx += (int32_t)tx;
    b->tx_expected += tx;
    maybe_complete(b);
    return PA_OK;
}

int pa_mbar_pending_inc(pa_mbarrier *b, pa_error *err)
{
    int rc = need_valid(b, "cp.async.mbarrier.arrive", err);
    if (rc)
        return rc;
    if (b->pending >= PA_MBAR_MAX_COUNT)
        return pa_fail(err, PA_ERR_HAZARD,
                       "cp.async.mbarrier.arrive would raise the pending count past 2^20-1 "
                       "(undefined behaviour by the PTX ISA)");
    b->pending++;
    return PA_OK;
}

int pa_mbar_complete_tx(pa_mbarrier *b, uint32_t tx, pa_error *err)
{
    int rc = need_valid(b, "complete_tx", err);
    if (rc || (rc = tx_in_range((int64_t)b->tx - tx, "complete_tx", err)))
        return rc;
    b->tx -= (int32_t)tx;
    b->tx_credited += tx;
    maybe_complete(b);
    return PA_OK;
}

int pa_mbar_test_parity(const pa_mbarrier *b, uint32_t parity)
{
    return (uint32_t)(b->phase & 1u) != (parity & 1u);
}

uint32_t pa_mbar_state_parity(uint64_t state)
{
    return (uint32_t)(state >> 63);
}

int pa_mbar_test_state(const pa_mbarrier *b, uint64_t state)
{
    return pa_mbar_test_parity(b, pa_mbar_state_parity(state));
}

uint32_t pa_mbar_pending_count(uint64_t state)
{
    uint32_t p = (uint32_t)(state >> 43) & 0xFFFFFu;
    return ((1u << 20) - p) & 0xFFFFFu;
}
