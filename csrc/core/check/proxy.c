/* proxy.c - the accesses the memory model has seen, by proxy, and the checks
 * of a new access against them (see hb.h): data-race, proxy-fence-missing,
 * tensormap-fence-missing, mbarrier-init-unordered, same-value-store.
 *
 * Each CTA's shared memory and the global memory keep, per byte, the
 * accesses a new one must meet (shadow.h); a write replaces those it covers
 * once checked (an access ordered after it is ordered after them), a read is
 * added to them. Where several earlier accesses race with a new one, the
 * report names the one at the lowest address (the oldest in a byte).
 */
#include "hb.h"
#include "hbstate.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Record a in sh after what it meets there is cut (shadow.h: HB_CUT_*); an
 * operation's write (keep: its issuer's clock) leaves the threads' accesses,
 * and the other operations' accesses it is not ordered after: a later
 * operation is not checked against this one (two operations are the memory
 * checks' business), so it must still meet them. */
static int record(hb_shadow *sh, const hb_acc *a, int mode, uint32_t slot, const hb_clock *keep, uint64_t inst)
{
    static const uint32_t empty[1] = {0};   /* a clock with no entries yet: knows epoch 0 of every slot */
    hb_cut c = {mode, slot, inst, keep ? (keep->n ? keep->v[HB_VC] : empty) : NULL, keep ? keep->n : 0};
    return hb_shadow_record(sh, a, &c);
}

/* --- words ------------------------------------------------------------------------ */

static int who(char *buf, size_t n, const hb_acc *a)
{
    if (a->how == HB_BY_WGMMA || (a->line && !strcmp(a->instr, "wgmma.mma_async")))  /* recorded, at issue */
        return snprintf(buf, n, "the %s at PTX line %u issued by the warpgroup of thread %u of CTA %u (t=%" PRIu64
                        ")", a->instr, a->line, a->thread, a->cta, a->time);
    if (a->op == PA_NO_OP && a->line)
        return snprintf(buf, n, "thread %u of CTA %u (%s at PTX line %u, t=%" PRIu64 ")", a->thread, a->cta,
                        a->instr, a->line, a->time);
    if (a->op == PA_NO_OP)
        return snprintf(buf, n, "thread %u of CTA %u (%s, t=%" PRIu64 ")", a->thread, a->cta, a->instr, a->time);
    return snprintf(buf, n, "the %s #%" PRIu64 " issued by thread %u of CTA %u (t=%" PRIu64 ")", a->instr, a->op,
                    a->thread, a->cta, a->time);
}

static void bytes_text(char *buf, size_t n, uint8_t space, uint32_t rank, uint64_t lo, uint64_t hi)
{
    if (space == 1)
        snprintf(buf, n, "shared bytes [0x%" PRIx64 ", 0x%" PRIx64 ") of CTA %u", lo, hi, rank);
    else
        snprintf(buf, n, "global bytes [0x%" PRIx64 ", 0x%" PRIx64 ")", lo, hi);
}

/* What was missing between old access o and the new access a, in words. */
static void missing_edge(char *buf, size_t n, const hb_acc *o, const hb_acc *a)
{
    const char *reader = a->op == PA_NO_OP ? "the access" : "the issue";
    switch (o->how) {
    case HB_BY_MBAR:
        snprintf(buf, n, "no wait on the mbarrier at 0x%x of CTA %u returned True for phase %" PRIu64
                 " (the phase the operation completes) before %s, in happens-before",
                 o->toff, o->trank, o->tphase, reader);
        break;
    case HB_BY_BULK:
        snprintf(buf, n, "no cp.async.bulk.wait_group by thread %u of CTA %u covering its bulk async-group "
                 "comes before %s, in happens-before", o->thread, o->cta, reader);
        break;
    case HB_BY_BULK_READ:
        snprintf(buf, n, "no cp.async.bulk.wait_group.read (or wait_group) by thread %u of CTA %u covering its "
                 "bulk async-group comes before %s, in happens-before", o->thread, o->cta, reader);
        break;
    case HB_BY_WGMMA:
        snprintf(buf, n, "no wgmma.wait_group by the warpgroup of thread %u of CTA %u retiring its wgmma-group "
                 "comes before %s, in happens-before", o->thread, o->cta, reader);
        break;
    case HB_BY_CP:
        snprintf(buf, n, "no cp.async.wait_group (or cp.async.mbarrier.arrive and its wait) by thread %u of "
                 "CTA %u covering it comes before %s, in happens-before", o->thread, o->cta, reader);
        break;
    default:
        if (a->op == PA_NO_OP && a->cta == o->cta && a->thread == o->thread)
            snprintf(buf, n, "nothing orders them");
        else
            snprintf(buf, n, "nothing orders them: no release by thread %u of CTA %u after its access "
                     "(mbarrier.arrive, bar.sync, barrier.cluster.arrive) acquired by thread %u of CTA %u "
                     "before %s", o->thread, o->cta, a->thread, a->cta,
                     a->op == PA_NO_OP ? "its access" : "it issued the operation");
    }
}

static int record_race(pa_hb *hb, int rule, uint64_t time, const hb_acc *o, const hb_acc *a, uint8_t space,
                       uint32_t rank, uint64_t lo, uint64_t hi)
{
    if (hb->nraces == hb->capraces) {
        size_t cap = hb->capraces ? hb->capraces * 2 : 8;
        pa_hb_race *n = realloc(hb->races, cap * sizeof *n);
        if (!n)
            return -1;
        hb->races = n;
        hb->capraces = cap;
    }
    pa_hb_race *r = &hb->races[hb->nraces++];
    r->rule = rule;
    r->time = time;
    const hb_acc *x[2] = {o, a};
    pa_hb_access *y[2] = {&r->first, &r->second};
    for (int i = 0; i < 2; i++) {
        y[i]->time = x[i]->time;
        y[i]->cta = x[i]->cta;
        y[i]->thread = x[i]->thread;
        y[i]->op = x[i]->op;
        y[i]->space = space;
        y[i]->write = x[i]->write;
        y[i]->proxy = x[i]->proxy;
        y[i]->rank = rank;
        y[i]->lo = lo;
        y[i]->hi = hi;
        y[i]->instr = x[i]->instr;
    }
    return 0;
}

static int report(pa_machine *m, pa_error *err, pa_rule rule, const hb_acc *o, const hb_acc *a, uint8_t space,
                  uint32_t rank, uint64_t lo, uint64_t hi, const char *edge)
{
    char w1[160], w2[160], b[96];
    who(w1, sizeof w1, a);
    who(w2, sizeof w2, o);
    bytes_text(b, sizeof b, space, rank, lo, hi);
    pa_hazards *hz = &m->watch->hz;
    uint64_t t = m->watch->trace.clock;   /* the time the hazard event takes */
    if (record_race(m->watch->hb, (int)rule, t, o, a, space, rank, lo, hi))
        m->watch->hb->oom = 1;
    return pa_hazard(hz, err, rule, "%s %s %s that %s %s%s; %s", w1, a->write ? "writes" : "reads", b, w2,
                     o->write ? "wrote" : "read", o->proxy != a->proxy ? (o->proxy == HB_ASYNC ? " in the async proxy"
                                                                          : " in the generic proxy")
                                                                       : "",
                     edge);
}

/* The tensormap fences between generic write o and a tensormap read by a
 * thread of CTA cta whose clock is c. */
static int tensormap_fenced(const pa_hb *hb, const hb_acc *o, const hb_clock *c, uint32_t cta, uint64_t addr)
{
    for (size_t i = 0; i < hb->ntm; i++) {
        const hb_tmacq *q = &hb->tm[i];
        if (q->cta == cta && q->addr == addr && hb_get(c, HB_VC, q->slot) >= q->epoch && o->slot < q->ntr &&
            q->tr[o->slot] >= o->epoch)
            return 1;
    }
    return 0;
}

/* The verdict on earlier access o for new access a (hb_judge): 1 data-race;
 * 2 tensormap-fence-missing; 3 proxy-fence-missing (said only where no byte
 * races); HB_V_WEAK a same-value write/write race (said only where nothing
 * else is). */
typedef struct {
    const pa_hb *hb;
    const hb_acc *a;
    const hb_clock *c;
    uint32_t self;
    uint8_t space;
    uint32_t rank;
    int same_value;             /* PA_SAME_VALUE_*: 0 judges every unordered write/write a data race */
} hb_judging;

enum { V_RACE = 1, V_TENSORMAP, V_PROXY, V_SAME = HB_V_WEAK };

/* Two plain stores by threads in the generic proxy whose bytes are equal where they overlap
   (o's bytes as it wrote them: a later store in between changes memory, not o's record). */
static int same_value(const hb_acc *o, const hb_acc *a)
{
    if (!o->write || !a->write || o->reduce || a->reduce || o->op != PA_NO_OP || a->op != PA_NO_OP ||
        !o->nval || !a->nval || o->proxy != HB_GENERIC || a->proxy != HB_GENERIC)
        return 0;
    const uint64_t lo = o->lo > a->lo ? o->lo : a->lo, hi = o->hi < a->hi ? o->hi : a->hi;
    return lo < hi && !memcmp(o->val + (lo - o->lo), a->val + (lo - a->lo), (size_t)(hi - lo));
}

static int judge(void *ctx, const hb_acc *o)
{
    const hb_judging *j = ctx;
    const hb_acc *a = j->a;
    if (!o->write && !a->write)
        return 0;
    if (o->reduce && a->reduce)   /* reductions into the same bytes are order-free */
        return 0;
    if (a->inst && o->inst == a->inst)   /* lanes of one warp instruction: one operation */
        return 0;
    /* two asynchronous operations: the memory checks' rules (destination-overlap,
     * source-changed, ...) say it while both are pending; once one has
     * completed, run() / step() drained it (the model advancing) */
    if (o->op != PA_NO_OP && a->op != PA_NO_OP)
        return 0;
    if (o->slot != j->self && hb_get(j->c, HB_VC, o->slot) < o->epoch &&   /* own accesses: program order */
        !(j->space == 1 && o->cta == j->rank && hb_get(j->c, HB_RS, o->slot) >= o->epoch))
        /* (RS: released for accesses to the releaser's own CTA's shared memory only) */
        return j->same_value != PA_SAME_VALUE_RACE && same_value(o, a) ? V_SAME : V_RACE;
    if (!o->write || o->proxy == a->proxy)
        return 0;   /* a read performed before the write: ordered is enough */
    if (a->proxy == HB_TENSORMAP)
        return o->proxy == HB_GENERIC && !tensormap_fenced(j->hb, o, j->c, a->cta, a->lo) ? V_TENSORMAP : 0;
    if (o->proxy == HB_TENSORMAP)
        return 0;
    return hb_get(j->c, j->space == 1 ? HB_FS : HB_FG, o->slot) < o->epoch ? V_PROXY : 0;
}

/* Check access a (clock c, own slot self or HB_NONE for an operation) of
 * [lo, hi) of memory sh against the accesses it keeps (report mode: one
 * report per access); then, with record, record it. */
static int access(pa_machine *m, hb_shadow *sh, uint8_t space, uint32_t rank, const hb_acc *a, const hb_clock *c,
                  uint32_t self, int record_it, pa_error *err)
{
    pa_hb *hb = m->watch->hb;
    hb_judging j = {hb, a, c, self, space, rank, m->watch->same_value};
    static const uint32_t empty[1] = {0};
    hb_view v = {c->n ? c->v[HB_VC] : empty, c->n, self};
    hb_found f;
    hb_shadow_find(sh, a, &v, judge, &j, &f);
    if (f.verdict == V_SAME) {
        if (j.same_value == PA_SAME_VALUE_RECORD &&
            record_race(hb, PA_HZ_SAME_VALUE_STORE, m->watch->trace.clock, f.o, a, space, rank, f.lo, f.hi))
            hb->oom = 1;
    } else if (f.verdict) {
        char edge[320];
        pa_rule rule = PA_HZ_DATA_RACE;
        if (f.verdict == V_RACE) {
            missing_edge(edge, sizeof edge, f.o, a);
        } else if (f.verdict == V_TENSORMAP) {
            rule = PA_HZ_TENSORMAP_FENCE;
            snprintf(edge, sizeof edge, "no fence.proxy.tensormap::generic.release after the write and "
                     "fence.proxy.tensormap::generic.acquire [0x%" PRIx64 "], 128 by a thread of CTA %u "
                     "before the use, between them", a->lo, a->cta);
        } else {
            rule = PA_HZ_PROXY_FENCE;
            snprintf(edge, sizeof edge, "no fence.proxy.async%s between them",
                     space == 1 ? " (or .shared::cta)" : " (or .global)");
        }
        hb_acc o = *f.o;   /* the record may move when this access is recorded */
        int rc = report(m, err, rule, &o, a, space, rank, f.lo, f.hi, edge);
        if (rc)
            return rc;
    }
    if (!record_it)
        return PA_OK;
    if (record(sh, a, !a->write ? HB_CUT_READ : a->reduce ? HB_CUT_ATOMIC : HB_CUT_WRITE, a->slot, NULL, a->inst))
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the race checker");
    return PA_OK;
}

static hb_shadow *shadow_of(pa_hb *hb, uint8_t space, uint32_t rank)
{
    return space == 1 ? (rank < hb->nctas ? &hb->smem[rank] : NULL) : &hb->global;
}

/* --- threads ---------------------------------------------------------------------- */

void pa_hb_line(pa_machine *m, uint32_t line)
{
    if (m->watch && m->watch->hb)
        m->watch->hb->line = line;
}

void pa_hb_instance(pa_machine *m, int begin)
{
    pa_hb *hb = m->watch ? m->watch->hb : NULL;
    if (hb)
        hb->inst = begin ? ++hb->ninst : 0;
}

static int thread_access_sem(pa_machine *m, uint32_t cta, uint32_t thread, uint8_t space, uint32_t rank,
                             uint64_t lo, uint64_t len, int write, uint8_t proxy, const char *instr, int sem,
                             const uint8_t *val, pa_error *err);

static int thread_access(pa_machine *m, uint32_t cta, uint32_t thread, uint8_t space, uint32_t rank, uint64_t lo,
                         uint64_t len, int write, uint8_t proxy, const char *instr, const uint8_t *val,
                         pa_error *err)
{
    return thread_access_sem(m, cta, thread, space, rank, lo, len, write, proxy, instr, -1, val, err);
}

/* sem -1: a plain access; else an atomic (PA_HB_ACQUIRE / PA_HB_RELEASE bits); val: a plain
   store's bytes (NULL: not known) */
static int thread_access_sem(pa_machine *m, uint32_t cta, uint32_t thread, uint8_t space, uint32_t rank,
                             uint64_t lo, uint64_t len, int write, uint8_t proxy, const char *instr, int sem,
                             const uint8_t *val, pa_error *err)
{
    pa_hb *hb = m->watch ? m->watch->hb : NULL;
    if (!hb || !len)
        return PA_OK;
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                       m->cluster.nctas);
    hb_thread *t = hb_thread_of(m, cta, thread);
    hb_shadow *l = shadow_of(hb, space, rank);
    if (!t || !l)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the race checker");
    hb_acc a = {0};
    a.lo = lo;
    a.hi = lo + len;
    a.slot = t->slot;
    a.epoch = hb_get(&t->cl, HB_VC, t->slot);
    a.proxy = proxy;
    a.write = (uint8_t)write;
    a.how = HB_BY_THREAD;
    a.cta = cta;
    a.thread = thread;
    a.op = PA_NO_OP;
    a.instr = instr;
    a.line = hb->line;
    a.inst = hb->inst;
    a.reduce = sem >= 0;
    if (val && write && sem < 0 && len <= sizeof a.val) {
        a.nval = (uint8_t)len;
        memcpy(a.val, val, (size_t)len);
    }
    a.time = pa_trace_add(&m->watch->trace, write ? PA_EV_WRITE : PA_EV_READ, cta, thread, PA_NO_OP, rank,
                          space == 1 ? (uint32_t)lo : 0, space, space == 2 ? lo : 0, len);
    int rc = access(m, l, space, rank, &a, &t->cl, t->slot, 1, err);
    if (rc || sem < 0)
        return rc;
    return hb_atomic_order(m, t, space, rank, lo, sem) ? pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for "
                                                                   "the race checker") : PA_OK;
}

int pa_hb_atomic(pa_machine *m, uint32_t cta, uint32_t thread, uint8_t space, uint32_t rank, uint64_t lo,
                 uint32_t len, int sem, const char *instr, pa_error *err)
{
    if (space == 1 && (rank >= m->cluster.nctas || lo + len > m->cluster.smem_bytes))
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "shared bytes [0x%" PRIx64 ", 0x%" PRIx64 ") of CTA %u are "
                       "outside its %u bytes", lo, lo + len, rank, m->cluster.smem_bytes);
    return thread_access_sem(m, cta, thread, space, rank, lo, len, 1, HB_GENERIC, instr, sem & 7, NULL, err);
}

static int smem_access(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off, uint32_t len,
                       int write, const char *instr, const uint8_t *val, pa_error *err)
{
    if (rank >= m->cluster.nctas || (uint64_t)off + len > m->cluster.smem_bytes)
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "shared bytes [0x%x, 0x%" PRIx64 ") of CTA %u are outside "
                       "its %u bytes", off, (uint64_t)off + len, rank, m->cluster.smem_bytes);
    return thread_access(m, cta, thread, 1, rank, off, len, write, HB_GENERIC, instr, val, err);
}

static int global_access(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t addr, uint64_t len, int write,
                         const char *instr, const uint8_t *val, pa_error *err)
{
    if (len && !pa_global_resolve(&m->global, addr, len, NULL))
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "global bytes [0x%" PRIx64 ", 0x%" PRIx64 ") are not inside "
                       "one registered buffer", addr, addr + len);
    return thread_access(m, cta, thread, 2, 0, addr, len, write, HB_GENERIC, instr, val, err);
}

int pa_hb_smem(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off, uint32_t len,
               int write, const char *instr, pa_error *err)
{
    return smem_access(m, cta, thread, rank, off, len, write, instr, NULL, err);
}

/* wgmma.mma_async reads its A / B operand from shared memory until a
 * wgmma.wait_group retires its group: the read is checked with the clock of
 * the warpgroup's first thread at issue, and recorded under the warpgroup's
 * wgmma slot at epoch `group`, so an access is ordered after it only through
 * a wait_group covering that group (and the edges after it). */
int pa_hb_wgmma_read(pa_machine *m, uint32_t cta, uint32_t first, uint32_t off, uint32_t len, uint32_t group,
                     uint32_t line, pa_error *err)
{
    pa_hb *hb = m->watch ? m->watch->hb : NULL;
    if (!hb || !len)
        return PA_OK;
    if (cta >= m->cluster.nctas || (uint64_t)off + len > m->cluster.smem_bytes)
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "shared bytes [0x%x, 0x%" PRIx64 ") of CTA %u are outside "
                       "its %u bytes", off, (uint64_t)off + len, cta, m->cluster.smem_bytes);
    hb_thread *t = hb_thread_of(m, cta, first);
    hb_shadow *l = shadow_of(hb, 1, cta);
    if (!t || !l)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the race checker");
    hb_acc a = {0};
    a.lo = off;
    a.hi = (uint64_t)off + len;
    a.slot = t->slot;
    a.epoch = hb_get(&t->cl, HB_VC, t->slot);
    a.proxy = HB_ASYNC;        /* PTX ISA, wgmma.mma_async: its shared-memory reads are async-proxy accesses */
    a.how = HB_BY_THREAD;
    a.cta = cta;
    a.thread = first;
    a.op = PA_NO_OP;
    a.instr = "wgmma.mma_async";
    a.line = line;
    a.time = pa_trace_add(&m->watch->trace, PA_EV_READ, cta, first, PA_NO_OP, cta, off, 1, 0, len);
    int rc = access(m, l, 1, cta, &a, &t->cl, t->slot, 0, err);
    if (rc)
        return rc;
    t = hb_thread_of(m, cta, first);
    a.how = HB_BY_WGMMA;
    a.slot = hb_group_slot(hb, &t->wslot);
    a.epoch = group;
    if (record(l, &a, HB_CUT_READ, a.slot, NULL, 0))
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the race checker");
    return PA_OK;
}

void pa_hb_wgmma_wait(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t first, uint32_t group)
{
    pa_hb *hb = m->watch ? m->watch->hb : NULL;
    hb_thread *f = hb ? hb_thread_of(m, cta, first) : NULL;
    if (!f)
        return;
    uint32_t s = hb_group_slot(hb, &f->wslot);
    hb_thread *t = hb_thread_of(m, cta, thread);
    if (!t || hb_raise(&t->cl, HB_VC, s, group))
        hb->oom = 1;
}

int pa_hb_global(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t addr, uint64_t len, int write,
                 const char *instr, pa_error *err)
{
    return global_access(m, cta, thread, addr, len, write, instr, NULL, err);
}

int pa_hb_store_smem(pa_machine *m, uint32_t cta, uint32_t thread, uint32_t rank, uint32_t off, uint32_t len,
                     const uint8_t *val, const char *instr, pa_error *err)
{
    return smem_access(m, cta, thread, rank, off, len, 1, instr, val, err);
}

int pa_hb_store_global(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t addr, uint64_t len,
                       const uint8_t *val, const char *instr, pa_error *err)
{
    return global_access(m, cta, thread, addr, len, 1, instr, val, err);
}

int pa_hb_tensormap_read(pa_machine *m, uint32_t cta, uint32_t thread, uint64_t addr, pa_error *err)
{
    pa_hb *hb = m->watch ? m->watch->hb : NULL;
    if (addr == UINT64_MAX) {
        if (hb)
            hb->tm_pending = 0;
        return PA_OK;
    }
    if (!pa_global_resolve(&m->global, addr, PA_TENSORMAP_BYTES, NULL))
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "the tensor map at global address 0x%" PRIx64 " is not "
                       "128 bytes inside one registered buffer", addr);
    if (!hb)
        return PA_OK;
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs", cta,
                       m->cluster.nctas);
    hb_thread *t = hb_thread_of(m, cta, thread);
    if (!t)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the race checker");
    hb_acc a = {0};
    a.lo = addr;
    a.hi = addr + PA_TENSORMAP_BYTES;
    a.proxy = HB_TENSORMAP;
    a.cta = cta;
    a.thread = thread;
    a.op = m->next_seq;
    a.instr = "cp.async.bulk.tensor (tensor map)";
    a.time = hb_now(m);
    a.slot = HB_NONE;
    int rc = access(m, &hb->global, 2, 0, &a, &t->cl, t->slot, 0, err);
    if (rc)
        return rc;
    hb->tm_pending = 1;
    hb->tm_addr = addr;
    hb->tm_cta = cta;
    hb->tm_thread = thread;
    hb->tm_time = a.time;
    return PA_OK;
}

/* --- asynchronous operations ---------------------------------------------------- */

static int is_async_proxy(pa_opkind k)
{
    return k != PA_OP_CP_ASYNC && k != PA_OP_ST_ASYNC && k != PA_OP_CP_ASYNC_ARRIVE && k != PA_OP_ST_ASYNC_RELEASE &&
           k != PA_OP_RED_ASYNC;
}

/* The mbarrier an operation's init must precede, and its clock entry. */
static int check_init(pa_machine *m, const pa_op *op, const hb_bar *b, const hb_clock *c, uint64_t seq,
                      pa_error *err)
{
    /* With the memory checks on: programs that step the model without their
     * barriers (the golden replays) are not held to it (docs/hazards.md). */
    if (!b->inited || (b->init_cta == op->cta && b->init_thread == op->thread) || !pa_check_memory_on(m) ||
        hb_get(c, HB_VC, b->init_slot) >= b->init_epoch || hb_get(c, HB_IK, b->init_slot) >= b->init_epoch)
        return PA_OK;
    hb_acc o = {0}, a = {0};
    o.cta = b->init_cta;
    o.thread = b->init_thread;
    o.op = PA_NO_OP;
    o.instr = "mbarrier.init";
    o.time = b->init_time;
    o.write = 1;
    o.lo = b->off;
    o.hi = b->off + 8;
    a = o;
    a.cta = op->cta;
    a.thread = op->thread;
    a.op = seq;
    a.instr = op->engine && op->engine->name ? op->engine->name : "operation";
    a.time = hb_now(m) - 1;
    a.write = 0;
    if (record_race(m->watch->hb, PA_HZ_MBAR_INIT_ORDER, hb_now(m), &o, &a, 1, b->rank, b->off, b->off + 8))
        m->watch->hb->oom = 1;
    return pa_hazard(&m->watch->hz, err, PA_HZ_MBAR_INIT_ORDER,
                     "the %s #%" PRIu64 " issued by thread %u of CTA %u signals the mbarrier at 0x%x of CTA %u, "
                     "whose mbarrier.init by thread %u of CTA %u (t=%" PRIu64 ") is not ordered before the issue: "
                     "no fence.mbarrier_init.release.cluster and barrier.cluster (or a release / acquire "
                     "pattern such as bar.sync) between them",
                     a.instr, seq, op->thread, op->cta, b->off, b->rank, b->init_thread, b->init_cta, b->init_time);
}

int pa_hb_on_issue(pa_machine *m, const pa_op *op, uint64_t seq, pa_error *err)
{
    pa_hb *hb = m->watch ? m->watch->hb : NULL;
    if (!hb || op->kind == PA_OP_ST_ASYNC_RELEASE)   /* done by the end of the CTA: nothing in the kernel sees it */
        return PA_OK;
    hb_thread *t = hb_thread_of(m, op->cta, op->thread);
    if (!t)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the race checker");
    size_t ti = (size_t)(t - hb->th);
    hb_bar *b = NULL;
    int rc;
    if (op->track == PA_TRACK_MBAR) {
        const pa_mbar_slot *s = m->mbars[op->track_index];
        b = hb_bar_of(m, s->cta, s->offset, 1);
        t = &hb->th[ti];
        if (!b)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the race checker");
        if ((rc = check_init(m, op, b, &t->cl, seq, err)))
            return rc;
    }
    if (op->kind == PA_OP_CP_ASYNC_ARRIVE) {   /* releases the thread's earlier cp.async copies */
        uint32_t cs = hb_group_slot(hb, &t->cslot);
        if (b && (hb_raise(&b->acc, HB_VC, cs, t->cp_n) || hb_raise(&b->acc, HB_FS, cs, t->cp_n) ||
                  hb_raise(&b->acc, HB_FG, cs, t->cp_n)))
            hb->oom = 1;
        return PA_OK;
    }
    pa_range src, dst;
    int reduce;
    pa_qv_ranges(op, &src, &dst, &reduce);
    /* the read and the write, filled field by field (a copy of one just
     * written would read its bytes back before they reach the cache) */
    hb_acc w = {0}, r = {0};
    w.proxy = r.proxy = is_async_proxy(op->kind) ? HB_ASYNC : HB_GENERIC;
    w.cta = r.cta = op->cta;
    w.thread = r.thread = op->thread;
    w.op = r.op = seq;
    w.instr = r.instr = op->engine && op->engine->name ? op->engine->name : "operation";
    w.time = r.time = hb_now(m) - 1;   /* its issue event */
    w.reduce = (uint8_t)reduce;
    w.slot = r.slot = HB_NONE;
    /* its accesses, checked with its issuer's clock (it is ordered after the
     * thread's earlier instructions) */
    if (src.space) {
        hb_shadow *l = shadow_of(hb, src.space, src.rank);
        r.lo = src.addr;
        r.hi = src.addr + src.len;
        if (l && (rc = access(m, l, src.space, src.rank, &r, &hb->th[ti].cl, HB_NONE, 0, err)))
            return rc;
    }
    if (dst.space) {
        hb_shadow *l = shadow_of(hb, dst.space, dst.rank);
        w.write = 1;
        w.lo = dst.addr;
        w.hi = dst.addr + dst.len;
        if (l && (rc = access(m, l, dst.space, dst.rank, &w, &hb->th[ti].cl, HB_NONE, 0, err)))
            return rc;
    }
    /* then recorded with the clock entry of whoever observes its completion */
    t = &hb->th[ti];
    if (op->track == PA_TRACK_MBAR) {
        r.how = w.how = HB_BY_MBAR;
        r.slot = w.slot = b->slot;
        r.epoch = w.epoch = (uint32_t)op->track_phase + 1;
        r.trank = w.trank = b->rank;
        r.toff = w.toff = b->off;
        r.tphase = w.tphase = op->track_phase;
    } else if (op->kind == PA_OP_CP_ASYNC) {
        r.how = w.how = HB_BY_CP;
        r.slot = w.slot = hb_group_slot(hb, &t->cslot);
        r.epoch = w.epoch = ++t->cp_n;
    } else {
        w.how = HB_BY_BULK;
        w.slot = hb_group_slot(hb, &t->bslot);
        r.how = HB_BY_BULK_READ;
        r.slot = hb_group_slot(hb, &t->brslot);
        r.epoch = w.epoch = ++t->bulk_n;
    }
    hb_shadow *ls = src.space ? shadow_of(hb, src.space, src.rank) : NULL;
    hb_shadow *ld = dst.space ? shadow_of(hb, dst.space, dst.rank) : NULL;
    if ((ls && record(ls, &r, HB_CUT_READ, r.slot, NULL, 0)) || (ld && record(ld, &w, HB_CUT_WRITE, 0, &t->cl, 0)))
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the race checker");
    /* a tensor copy reading its map from global memory, in the tensormap proxy */
    if (hb->tm_pending && hb->tm_cta == op->cta && hb->tm_thread == op->thread &&
        (op->kind == PA_OP_TILE_LOAD || op->kind == PA_OP_TILE_STORE || op->kind == PA_OP_TENSOR_REDUCE)) {
        hb_acc q = r;
        q.lo = hb->tm_addr;
        q.hi = hb->tm_addr + PA_TENSORMAP_BYTES;
        q.proxy = HB_TENSORMAP;
        q.instr = "cp.async.bulk.tensor (tensor map)";
        hb->tm_pending = 0;
        if (record(&hb->global, &q, HB_CUT_NONE, 0, NULL, 0))
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the race checker");
    }
    return PA_OK;
}

size_t pa_hb_races(const pa_machine *m, const pa_hb_race **out)
{
    const pa_hb *hb = m->watch ? m->watch->hb : NULL;
    *out = hb ? hb->races : NULL;
    return hb ? hb->nraces : 0;
}
