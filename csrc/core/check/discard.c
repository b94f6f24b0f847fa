/* discard.c - discard.global.L2 [a], 128: "semantically ... a weak write of an unstable
 * indeterminate value: reads of memory locations with unstable indeterminate values may return
 * different bit patterns each time until the memory is overwritten" (PTX ISA, discard).
 *
 * The discard is a write for the race checker. With the memory checks on (checks=True, or the
 * adversarial policy) each discarded line is kept with the bytes still undefined; under the
 * adversarial policy the line is filled with poison (PA_POISON_WORD, as a pending destination is),
 * so no read sees the old bytes by luck. A thread's read of a byte still undefined is discard-read,
 * naming the discard's PTX line; a write defines the bytes it writes.
 */
#include "hb.h"
#include "watch.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int pa_check_discard(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t addr, int line, pa_error *err)
{
    if (addr % PA_DISCARD_BYTES)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "discard.global.L2 address 0x%" PRIx64 " is not aligned to 128 "
                       "bytes (the ISA: \"a must be aligned to 128 bytes\")", addr);
    uint8_t *p = pa_global_resolve(&m->global, addr, PA_DISCARD_BYTES, err);
    if (!p)
        return PA_ERRC(err, PA_ERR_ILLEGAL_ADDRESS);
    int rc = pa_hb_global(m, cta, thread, addr, PA_DISCARD_BYTES, 1, "discard.global.L2", err);
    if (rc || !pa_check_memory_on(m))
        return rc;
    pa_watch *w = m->watch;
    pa_discard *d = NULL;
    for (size_t i = 0; i < w->ndiscards && !d; i++)
        if (w->discards[i].addr == addr)
            d = &w->discards[i];
    if (!d) {
        if (w->ndiscards == w->capdiscards) {
            size_t cap = w->capdiscards ? 2 * w->capdiscards : 8;
            pa_discard *q = realloc(w->discards, cap * sizeof *q);
            if (!q)
                return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the discarded lines");
            w->discards = q;
            w->capdiscards = cap;
        }
        d = &w->discards[w->ndiscards++];
        d->addr = addr;
    }
    d->undef[0] = d->undef[1] = ~0ull;
    d->line = line;
    d->cta = cta;
    d->thread = thread;
    if (m->policy == PA_POLICY_ADVERSARIAL)
        for (uint32_t i = 0; i < PA_DISCARD_BYTES; i++)
            p[i] = pa_poison_byte(addr + i);
    return PA_OK;
}

int pa_check_global_bytes(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t addr, uint64_t len, int write,
                          const char *instr, pa_error *err)
{
    pa_watch *w = m->watch;
    if (!w || !w->ndiscards)
        return PA_OK;
    for (size_t i = 0; i < w->ndiscards; i++) {
        pa_discard *d = &w->discards[i];
        if (addr >= d->addr + PA_DISCARD_BYTES || addr + len <= d->addr)
            continue;
        uint64_t lo = addr > d->addr ? addr - d->addr : 0;
        uint64_t hi = addr + len < d->addr + PA_DISCARD_BYTES ? addr + len - d->addr : PA_DISCARD_BYTES;
        for (uint64_t b = lo; b < hi; b++) {
            uint64_t bit = 1ull << (b & 63);
            if (write) {
                d->undef[b >> 6] &= ~bit;
            } else if (d->undef[b >> 6] & bit) {
                return pa_hazard(&w->hz, err, PA_HZ_DISCARD_READ,
                                 "thread %u of CTA %u: %s reads global byte 0x%" PRIx64 ", which discard.global.L2 "
                                 "at PTX line %d (CTA %u thread %u) made an unstable indeterminate value; nothing "
                                 "has written it since", thread, cta, instr, d->addr + b, d->line, d->cta, d->thread);
            }
        }
    }
    return PA_OK;
}
