/* queue.c - pending operations, completion order, groups, mbarrier table (see queue.h). */
#include "queue.h"

#include <stdlib.h>
#include <stddef.h>
#include <string.h>

static int grow(void **arr, uint32_t *cap, size_t need, size_t elem, pa_error *err)
{
    if (need <= *cap)
        return PA_OK;
    size_t nc = *cap ? (size_t)*cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    if (nc > UINT32_MAX - 1)
        return pa_fail(err, PA_ERR_NO_MEMORY, "too many pending operations");
    void *p = realloc(*arr, nc * elem);
    if (!p)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the operation queue");
    *arr = p;
    *cap = (uint32_t)nc;
    return PA_OK;
}

static int grow_sz(void **arr, size_t *cap, size_t need, size_t elem, pa_error *err)
{
    uint32_t c = (uint32_t)*cap;
    int rc = grow(arr, &c, need, elem, err);
    *cap = c;
    return rc;
}

/* --- lists ------------------------------------------------------------------ */

static void list_init(pa_oplist *l)
{
    memset(l, 0, sizeof *l);
    l->head = l->tail = PA_NIL;
}

static void list_free(pa_oplist *l)
{
    free(l->dense);
    list_init(l);
}

static pa_oplink *link_of(pa_machine *m, uint32_t id, int track)
{
    return track ? &m->pool[id].link_track : &m->pool[id].link_all;
}

/* inline, the room checked here: two pushes and two removes a queued operation */
static inline int list_push(pa_machine *m, pa_oplist *l, uint32_t id, int track, pa_error *err)
{
    int rc;
    if (l->n == l->cap && (rc = grow((void **)&l->dense, &l->cap, (size_t)l->n + 1, sizeof *l->dense, err)))
        return rc;
    pa_oplink *k = link_of(m, id, track);
    k->prev = l->tail;
    k->next = PA_NIL;
    k->pos = l->n;
    l->dense[l->n++] = id;
    if (l->tail != PA_NIL)
        link_of(m, l->tail, track)->next = id;
    else
        l->head = id;
    l->tail = id;
    return PA_OK;
}

static inline void list_remove(pa_machine *m, pa_oplist *l, uint32_t id, int track)
{
    pa_oplink *k = link_of(m, id, track);
    if (k->prev != PA_NIL)
        link_of(m, k->prev, track)->next = k->next;
    else
        l->head = k->next;
    if (k->next != PA_NIL)
        link_of(m, k->next, track)->prev = k->prev;
    else
        l->tail = k->prev;
    uint32_t last = l->dense[--l->n];
    l->dense[k->pos] = last;
    link_of(m, last, track)->pos = k->pos;
}

static inline pa_oplist *track_list(pa_machine *m, pa_track t, uint32_t idx)
{
    switch (t) {
    case PA_TRACK_MBAR: return &m->mbars[idx]->ops;
    case PA_TRACK_BULK_OPEN: return &m->threads[idx].bulk.open;
    case PA_TRACK_BULK_COMMITTED: return &m->threads[idx].bulk.committed;
    case PA_TRACK_CP_OPEN: return &m->threads[idx].cp.open;
    case PA_TRACK_CP_COMMITTED: return &m->threads[idx].cp.committed;
    default: return NULL;
    }
}

/* --- machine ------------------------------------------------------------------ */

int pa_queue_init(pa_machine *m, uint32_t nctas, uint32_t smem_bytes, pa_error *err)
{
    memset(m, 0, sizeof *m);
    pa_global_init(&m->global);
    m->target = PA_TARGET_DEFAULT;
    m->policy = PA_POLICY_IN_ORDER;
    m->rng = 0x9E3779B97F4A7C15ull;
    m->free_head = PA_NIL;
    list_init(&m->all);
    return pa_cluster_init(&m->cluster, nctas, smem_bytes, err);
}

void pa_machine_free(pa_machine *m)
{
    pa_global_free(&m->global);
    pa_cluster_free(&m->cluster);
    for (uint32_t id = m->all.head; id != PA_NIL; id = m->pool[id].link_all.next) {
        free(m->pool[id].staged);
        if (m->pool[id].kind == PA_OP_TILE_LOAD)
            free(m->pool[id].u.tensor.at);
    }
    free(m->pool);
    free(m->spare_at);
    m->spare_at = NULL;
    list_free(&m->all);
    for (size_t i = 0; i < m->nmbars; i++) {
        list_free(&m->mbars[i]->ops);
        free(m->mbars[i]);
    }
    free(m->mbars);
    for (size_t i = 0; i < m->nthreads; i++) {
        pa_thread_state *t = &m->threads[i];
        list_free(&t->bulk.open);
        list_free(&t->bulk.committed);
        list_free(&t->cp.open);
        list_free(&t->cp.committed);
        free(t->arrive_ids);
        free(t->arrive_seqs);
    }
    free(m->threads);
    free(m->thash);
    if (m->aside.on_free)
        m->aside.on_free(m->aside.ctx, m);
    if (m->hooks.on_free)
        m->hooks.on_free(m->hooks.ctx, m);
    memset(m, 0, sizeof *m);
}

int pa_machine_set_target(pa_machine *m, pa_target t, pa_error *err)
{
    const char *tn = pa_target_name((int)t);
    if (!tn)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "unknown target %d", (int)t);
    if (m->cluster.smem_bytes > pa_target_smem_max(t))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "shared memory of %u bytes per CTA exceeds the %s limit "
                       "of %u (%u KiB)", m->cluster.smem_bytes, tn, pa_target_smem_max(t),
                       pa_target_smem_max(t) / 1024);
    if (m->cluster.nctas > 1 && !pa_target_has(t, PA_FEAT_CLUSTER))
        return pa_fail(err, PA_ERR_INVALID_VALUE, "a cluster of %u CTAs needs %s; %s has no clusters "
                       "(ctas=1)", m->cluster.nctas, pa_feature_needs(PA_FEAT_CLUSTER), tn);
    m->target = t;
    return PA_OK;
}

void pa_machine_set_policy(pa_machine *m, pa_policy p, uint64_t seed)
{
    m->policy = p;
    m->rng = seed ? seed : 0x9E3779B97F4A7C15ull;
}

static uint64_t next_random(pa_machine *m)
{
    /* xorshift64* */
    m->rng ^= m->rng >> 12;
    m->rng ^= m->rng << 25;
    m->rng ^= m->rng >> 27;
    return m->rng * 0x2545F4914F6CDD1Dull;
}

int pa_check_cta(const pa_machine *m, uint32_t cta, pa_error *err)
{
    if (cta >= m->cluster.nctas)
        return pa_fail(err, PA_ERR_INVALID_VALUE, "CTA rank %u is outside the cluster of %u CTAs",
                       cta, m->cluster.nctas);
    return PA_OK;
}

long pa_issuer_index(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err)
{
    if (pa_check_cta(m, cta, err))
        return -1;
    return pa_thread_index(m, cta, thread, err);
}

static size_t thread_home(const pa_machine *m, uint32_t cta, uint32_t thread)
{
    return ((thread * 0x9E3779B1u) ^ (cta * 0x85EBCA77u)) & (m->capthash - 1);
}

/* Index threads[i] in the hash (every cp.async of every thread asks for its
 * thread: a scan of threads took a tenth of a cp.async-staged loop). */
static void thread_hash_put(pa_machine *m, size_t i)
{
    size_t h = thread_home(m, m->threads[i].cta, m->threads[i].thread);
    while (m->thash[h])
        h = (h + 1) & (m->capthash - 1);
    m->thash[h] = (uint32_t)i + 1;
}

long pa_thread_index(pa_machine *m, uint32_t cta, uint32_t thread, pa_error *err)
{
    for (size_t h = m->capthash ? thread_home(m, cta, thread) : 0; m->capthash && m->thash[h];
         h = (h + 1) & (m->capthash - 1)) {
        const pa_thread_state *t = &m->threads[m->thash[h] - 1];
        if (t->cta == cta && t->thread == thread)
            return (long)m->thash[h] - 1;
    }
    if (grow_sz((void **)&m->threads, &m->capthreads, m->nthreads + 1, sizeof *m->threads, err))
        return -1;
    if (2 * (m->nthreads + 1) > m->capthash) {
        size_t cap = m->capthash ? 2 * m->capthash : 64;
        uint32_t *t = calloc(cap, sizeof *t);
        if (!t)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the operation queue"), -1;
        free(m->thash);
        m->thash = t;
        m->capthash = cap;
        for (size_t i = 0; i < m->nthreads; i++)
            thread_hash_put(m, i);
    }
    pa_thread_state *t = &m->threads[m->nthreads];
    memset(t, 0, sizeof *t);
    t->cta = cta;
    t->thread = thread;
    list_init(&t->bulk.open);
    list_init(&t->bulk.committed);
    list_init(&t->cp.open);
    list_init(&t->cp.committed);
    thread_hash_put(m, m->nthreads);
    return (long)m->nthreads++;
}

/* --- mbarrier table ------------------------------------------------------------ */

long pa_mbar_slot_find(pa_machine *m, uint32_t rank, uint32_t offset, int create, pa_error *err)
{
    const unsigned h = pa_mbar_hint_of(offset);
    for (size_t i = 0; i < m->nmbars; i++)
        if (m->mbars[i]->cta == rank && m->mbars[i]->offset == offset) {
            m->slot_hint[h].rank = rank;
            m->slot_hint[h].offset = offset;
            m->slot_hint[h].index1 = (uint32_t)i + 1;
            return (long)i;
        }
    if (!create)
        return -1;
    if (grow_sz((void **)&m->mbars, &m->capmbars, m->nmbars + 1, sizeof *m->mbars, err))
        return -1;
    /* Slots are allocated one by one, so a pa_mbarrier pointer handed out by
     * pa_machine_mbar stays valid while later issues add slots. */
    pa_mbar_slot *s = calloc(1, sizeof *s);
    if (!s) {
        pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for the mbarrier table");
        return -1;
    }
    m->mbars[m->nmbars] = s;
    s->cta = rank;
    s->offset = offset;
    list_init(&s->ops);
    return (long)m->nmbars++;
}

pa_mbar_slot *pa_machine_mbar_lookup(pa_machine *m, uint32_t cta, uint32_t addr, int create, pa_error *err)
{
    const unsigned h = pa_mbar_hint_of(addr);
    uint32_t rank;
    /* An mbarrier is a .b64 object: 8-byte aligned shared memory (PTX ISA). */
    if (addr % 8) {
        pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "mbarrier address 0x%x is not 8-byte aligned", addr);
        return NULL;
    }
    if (!pa_smem_resolve(&m->cluster, cta, 1, addr, 8, &rank, err))
        return NULL;
    uint32_t off = pa_smem_offset(addr);
    long i = pa_mbar_slot_index(m, rank, off, create, err);
    if (i < 0) {
        if (!create)
            pa_fail(err, PA_ERR_HAZARD,
                    "no mbarrier was initialised at shared address 0x%x of CTA %u (undefined behaviour)",
                    off, rank);
        return NULL;
    }
    m->hint[h].slot = m->mbars[i];
    m->hint[h].cta = cta;
    m->hint[h].addr = addr;
    return m->mbars[i];
}

pa_mbarrier *pa_machine_mbar(pa_machine *m, uint32_t cta, uint32_t addr, int create, pa_error *err)
{
    pa_mbar_slot *s = pa_machine_mbar_slot(m, cta, addr, create, err);
    return s ? &s->bar : NULL;
}

int pa_machine_mbar_init(pa_machine *m, uint32_t cta, uint32_t addr, uint32_t count, pa_error *err)
{
    const size_t nmbars = m->nmbars;
    pa_mbarrier *b = pa_machine_mbar(m, cta, addr, 1, err);
    if (!b)
        return err ? err->code : PA_ERR_INVALID_VALUE;
    int rc = pa_mbar_init(b, count, err);
    if (rc) {
        memset(m->hint, 0, sizeof m->hint);   /* they may name a slot freed here */
        memset(m->slot_hint, 0, sizeof m->slot_hint);
        while (m->nmbars > nmbars) {   /* a refused init leaves no new slot behind */
            pa_mbar_slot *s = m->mbars[--m->nmbars];
            list_free(&s->ops);
            free(s);
        }
        return rc;
    }
    /* The object reads as zero through ld.shared in every state (observation 14). */
    uint8_t *p = pa_smem_resolve(&m->cluster, cta, 1, addr, 8, NULL, err);
    memset(p, 0, 8);
    return PA_OK;
}

int pa_check_mbar_addr(pa_machine *m, uint32_t cta, uint32_t addr, pa_error *err)
{
    const unsigned h = pa_mbar_hint_of(addr);
    if (m->hint[h].slot && m->hint[h].addr == addr && m->hint[h].cta == cta)
        return PA_OK;   /* a lookup of this address passed these checks */
    if (addr % 8)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "mbarrier address 0x%x is not 8-byte aligned", addr);
    if (!pa_smem_resolve(&m->cluster, cta, 1, addr, 8, NULL, err))
        return err ? err->code : PA_ERR_ILLEGAL_ADDRESS;
    return PA_OK;
}

int pa_credit(pa_machine *m, uint32_t rank, uint32_t offset, uint64_t tx, pa_error *err)
{
    long i = pa_mbar_slot_index(m, rank, offset, 0, err);
    if (i < 0)
        return pa_fail(err, PA_ERR_HAZARD,
                       "no mbarrier was initialised at shared address 0x%x of CTA %u (undefined behaviour)",
                       offset, rank);
    return pa_signal_slot(m, (size_t)i, tx, NULL, err);
}


uint32_t pa_signal_slot_batch(const pa_machine *m, size_t i, uint64_t tx, uint32_t n)
{
    /* Without a checker the signal hook (check/sync.c) adds to complete_tx
     * only checks that pass while no phase completes and the count does not
     * fall below 0 with every arrival in. */
    const pa_mbarrier *b = &m->mbars[i]->bar;
    if (m->watch || !b->valid || tx == 0 || tx > PA_MBAR_MAX_TX)
        return 0;
    const int64_t room = (int64_t)b->tx + PA_MBAR_MAX_TX;   /* T - k tx >= -(2^20 - 1) */
    uint64_t k = room > 0 ? (uint64_t)room / tx : 0;
    if (b->pending == 0) {   /* T falls to 0 at the (T / tx)-th at the earliest: that may be the last */
        const uint64_t left = b->tx > 0 ? (uint64_t)b->tx / tx : 0;
        k = left < k ? left : k;
    }
    return k < n ? (uint32_t)k : n;
}

pa_smem_view pa_smem_of(pa_machine *m, uint32_t rank)
{
    pa_smem_view v = {m->cluster.smem[rank], m->cluster.smem_bytes};
    return v;
}

int pa_stage_smem(pa_machine *m, pa_op *op, uint32_t rank, uint32_t off, uint32_t len, pa_error *err)
{
    uint8_t *p = malloc(len ? len : 1);
    if (!p)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a staged source");
    memcpy(p, m->cluster.smem[rank] + off, len);
    free(op->staged);
    op->staged = p;
    op->staged_base = off;
    op->staged_len = len;
    return PA_OK;
}

/* --- operations ------------------------------------------------------------------ */

int pa_op_track_mbar(pa_machine *m, pa_op *op, uint32_t dst_rank, uint32_t mbar, uint64_t tx,
                     pa_error *err)
{
    long i = pa_mbar_slot_index(m, dst_rank, pa_smem_offset(mbar), 1, err);
    if (i < 0)
        return err ? err->code : PA_ERR_NO_MEMORY;
    op->track = PA_TRACK_MBAR;
    op->track_index = (uint32_t)i;
    op->track_phase = m->mbars[i]->bar.phase;
    op->dst_rank = dst_rank;
    op->mbar_offset = pa_smem_offset(mbar);
    op->tx_bytes = tx;
    return PA_OK;
}

int pa_op_track_group(pa_machine *m, pa_op *op, int cp_async, pa_error *err)
{
    long i = pa_thread_index(m, op->cta, op->thread, err);
    if (i < 0)
        return err ? err->code : PA_ERR_NO_MEMORY;
    op->track = cp_async ? PA_TRACK_CP_OPEN : PA_TRACK_BULK_OPEN;
    op->track_index = (uint32_t)i;
    return PA_OK;
}

static inline int alloc_slot(pa_machine *m, uint32_t *id, pa_error *err)
{
    if (m->free_head == PA_NIL) {
        uint32_t old = m->cappool;
        int rc = grow((void **)&m->pool, &m->cappool, (size_t)old + 1, sizeof *m->pool, err);
        if (rc)
            return rc;
        for (uint32_t i = m->cappool; i-- > old;) {
            m->pool[i].link_all.next = m->free_head;
            m->free_head = i;
        }
    }
    *id = m->free_head;
    m->free_head = m->pool[*id].link_all.next;
    return PA_OK;
}

static inline void free_slot(pa_machine *m, uint32_t id)
{
    pa_op *op = &m->pool[id];
    if (op->staged) {   /* (tested first: most records own nothing, and a call of free is not free) */
        free(op->staged);
        op->staged = NULL;
    }
    if (op->kind == PA_OP_TILE_LOAD && op->u.tensor.at) {   /* a run record's loads: kept for the next */
        free(m->spare_at);
        m->spare_at = op->u.tensor.at;
        m->spare_at_cap = op->u.tensor.at_cap;
        op->u.tensor.at = NULL;
    }
    op->link_all.next = m->free_head;
    m->free_head = id;
}

/* The queueing of the operation in slot id, issued now: its number, its lists,
 * and with IMMEDIATE its completion. On failure the slot is free again. */
static int queue_slot(pa_machine *m, uint32_t id, uint32_t *id_out, pa_error *err)
{
    int rc;
    pa_op *op = &m->pool[id];
    op->seq = m->next_seq++;
    op->pending = 1;
    pa_oplist *tl = track_list(m, op->track, op->track_index);
    if ((rc = list_push(m, &m->all, id, 0, err))) {
        free_slot(m, id);
        return rc;
    }
    if (tl && (rc = list_push(m, tl, id, 1, err))) {
        list_remove(m, &m->all, id, 0);
        free_slot(m, id);
        return rc;
    }
    m->nops++;
    if (id_out)
        *id_out = id;
    if (m->policy == PA_POLICY_IMMEDIATE) {
        if (id_out)
            *id_out = PA_NIL;
        return pa_complete_id(m, id, err);
    }
    return PA_OK;
}

int pa_enqueue(pa_machine *m, const pa_op *src, uint32_t *id_out, pa_error *err)
{
    uint32_t id;
    int rc;
    if (id_out)
        *id_out = PA_NIL;
    if (m->hooks.on_issue && (rc = m->hooks.on_issue(m->hooks.ctx, m, src, err)))
        return rc;
    if ((rc = alloc_slot(m, &id, err)))
        return rc;
    pa_op *op = &m->pool[id];
    switch (pa_op_bytes(src->kind)) {   /* fixed sizes: copied inline, no string instruction */
#define COPY_AS(n) case n: memcpy(op, src, n); break;
    case PA_OP_BYTES(pa_tensor_payload): {
        /* in 64-byte blocks: one fixed-size copy of this length is a string instruction */
        enum { N = PA_OP_BYTES(pa_tensor_payload) };
        size_t i = 0;
        for (; i + 64 <= N; i += 64)
            memcpy((char *)op + i, (const char *)src + i, 64);
        memcpy((char *)op + i, (const char *)src + i, N % 64);
        break;
    }
    COPY_AS(PA_OP_BYTES(pa_bulk_payload))
    COPY_AS(PA_OP_BYTES(pa_cp_async_payload))
#undef COPY_AS
    default: *op = *src; break;
    }
    return queue_slot(m, id, id_out, err);
}

int pa_op_slot(pa_machine *m, uint32_t *id)
{
    return alloc_slot(m, id, NULL);
}

void pa_op_slot_release(pa_machine *m, uint32_t id)
{
    /* free_slot without its frees: the slot may not even be cleared yet, and
     * nothing before the queueing gives it memory of its own */
    m->pool[id].link_all.next = m->free_head;
    m->free_head = id;
}

int pa_enqueue_slot(pa_machine *m, uint32_t id, uint32_t *id_out, pa_error *err)
{
    int rc;
    if (id_out)
        *id_out = PA_NIL;
    if (m->hooks.on_issue && (rc = m->hooks.on_issue(m->hooks.ctx, m, &m->pool[id], err))) {
        free_slot(m, id);
        return rc;
    }
    return queue_slot(m, id, id_out, err);
}

int pa_read_op(pa_machine *m, pa_op *op, pa_error *err)
{
    if (op->read_done || !op->engine->read)
        return PA_OK;
    int rc;
    if (m->aside.on_read && (rc = m->aside.on_read(m->aside.ctx, m, op, err)))
        return rc;
    if (m->hooks.on_read && (rc = m->hooks.on_read(m->hooks.ctx, m, op, err)))
        return rc;
    if ((rc = op->engine->read(m, op, err)))
        return rc;
    op->read_done = 1;
    return PA_OK;
}

static int fire_arrives(pa_machine *m, uint32_t ti, pa_error *err);
static int complete_one(pa_machine *m, uint32_t id, pa_error *err);
static void count_done(pa_machine *m, pa_op *op, uint32_t k, int newest);

int pa_complete_id(pa_machine *m, uint32_t id, pa_error *err)
{
    pa_op *op = &m->pool[id];
    int rc;
    /* a run record whose operations complete one by one: all but the last
     * (in the policy's order) through complete_one, the last as a record */
    while (op->merged && op->engine->runs_one_by_one) {
        const int newest = m->policy == PA_POLICY_REVERSE;
        const uint32_t k = op->engine->complete_many ? op->engine->complete_many(m, op, newest) : 0;
        if (k)
            count_done(m, op, k, newest);
        else if ((rc = complete_one(m, id, err)))
            return rc;
    }
    pa_oplist *tl = track_list(m, op->track, op->track_index);
    if (m->aside.on_complete && (rc = m->aside.on_complete(m->aside.ctx, m, op, err)))
        return rc;
    if (m->hooks.on_complete && (rc = m->hooks.on_complete(m->hooks.ctx, m, op, err)))
        return rc;
    list_remove(m, &m->all, id, 0);
    if (tl)
        list_remove(m, tl, id, 1);
    op->pending = 0;
    m->nops -= 1 + (size_t)op->merged;   /* a run completes as a whole, back to back */
    m->completed += 1 + (uint64_t)op->merged;
    /* A completion reads the source now when no earlier step did. */
    rc = op->engine->complete(m, op, err);
    if (!rc && m->hooks.on_done)
        m->hooks.on_done(m->hooks.ctx, m, op);
    int is_cp = op->kind == PA_OP_CP_ASYNC;
    uint32_t ti = op->track_index;
    free_slot(m, id);
    if (!rc && is_cp)
        rc = fire_arrives(m, ti, err);
    return rc;
}

/* --- choosing ---------------------------------------------------------------------- */

/* The policy's choice among the members of a list (a new policy goes here). */
static uint32_t pick(pa_machine *m, const pa_oplist *l)
{
    if (l->n == 0)
        return PA_NIL;
    switch (m->policy) {
    case PA_POLICY_REVERSE: return l->tail;
    case PA_POLICY_RANDOM:
    case PA_POLICY_ADVERSARIAL: return l->dense[next_random(m) % l->n];
    default: return l->head;
    }
}

/* One operation of a run record: the one pick() would choose were they
 * separate records (the newest under REVERSE, else the oldest). Failed or
 * not, it is no longer pending, as a record of its own would be. */
static int complete_one(pa_machine *m, uint32_t id, pa_error *err)
{
    pa_op *op = &m->pool[id];
    const int newest = m->policy == PA_POLICY_REVERSE;
    int rc = op->engine->complete_one(m, op, newest, err);
    count_done(m, op, 1, newest);
    return rc;
}

/* k operations of run record op completed (the oldest, or under REVERSE the newest). */
static void count_done(pa_machine *m, pa_op *op, uint32_t k, int newest)
{
    if (!newest)
        op->seq += k;
    op->merged -= k;
    m->nops -= k;
    m->completed += k;
}

int pa_machine_step(pa_machine *m, int *done, pa_error *err)
{
    uint32_t id = pick(m, &m->all);
    *done = id != PA_NIL;
    if (!*done)
        return PA_OK;
    return m->pool[id].merged ? complete_one(m, id, err) : pa_complete_id(m, id, err);
}

int pa_machine_run(pa_machine *m, pa_error *err)
{
    /* a run record completes whole: its operations one after another in the
     * policy's order, with nothing between them that could tell */
    for (uint32_t id; (id = pick(m, &m->all)) != PA_NIL;) {
        int rc = pa_complete_id(m, id, err);
        if (rc)
            return rc;
    }
    return PA_OK;
}

int pa_slot_try_wait_parity(pa_machine *m, pa_mbar_slot *s, uint32_t parity, int *result, pa_error *err)
{
    if (!s->bar.valid)
        return pa_fail(err, PA_ERR_HAZARD,
                       "mbarrier.try_wait on an mbarrier that is not initialised (undefined behaviour)");
    /* Complete the operations that signal it, in policy order, until the phase completes
       (the slot stays where it is: slots are allocated one by one). */
    while (!pa_mbar_test_parity(&s->bar, parity)) {
        uint32_t id = pick(m, &s->ops);
        if (id == PA_NIL)
            break;
        /* a run record: one load at a time, the phase may complete in between */
        int rc = m->pool[id].merged ? complete_one(m, id, err) : pa_complete_id(m, id, err);
        if (rc)
            return rc;
    }
    *result = pa_mbar_test_parity(&s->bar, parity);
    return PA_OK;
}

int pa_machine_try_wait_parity(pa_machine *m, uint32_t cta, uint32_t addr, uint32_t parity,
                               int *result, pa_error *err)
{
    pa_mbar_slot *s = pa_machine_mbar_slot(m, cta, addr, 0, err);
    if (!s)
        return err ? err->code : PA_ERR_HAZARD;
    return pa_slot_try_wait_parity(m, s, parity, result, err);
}

int pa_machine_try_wait_state(pa_machine *m, uint32_t cta, uint32_t addr, uint64_t state,
                              int *result, pa_error *err)
{
    return pa_machine_try_wait_parity(m, cta, addr, pa_mbar_state_parity(state), result, err);
}

/* --- async-groups -------------------------------------------------------------------- */

int pa_groups_commit(pa_machine *m, uint32_t ti, int cp_async, pa_error *err)
{
    if (m->hooks.on_group)   /* traced */
        m->hooks.on_group(m->hooks.ctx, m, ti, cp_async, 0, 0, 0, err);
    pa_groups *g = cp_async ? &m->threads[ti].cp : &m->threads[ti].bulk;
    /* Every uncommitted operation of this thread joins the new group; with
     * none, the group is empty (PTX ISA). Room first, so no move can fail. */
    int rc0 = grow((void **)&g->committed.dense, &g->committed.cap, (size_t)g->committed.n + g->open.n,
                   sizeof *g->committed.dense, err);
    if (rc0)
        return rc0;
    while (g->open.head != PA_NIL) {
        uint32_t id = g->open.head;
        list_remove(m, &g->open, id, 1);
        int rc = list_push(m, &g->committed, id, 1, err);
        if (rc)
            return rc;
        m->pool[id].group = g->ncommitted;
        m->pool[id].track = cp_async ? PA_TRACK_CP_COMMITTED : PA_TRACK_BULK_COMMITTED;
    }
    g->ncommitted++;
    return PA_OK;
}

/* A pending operation of a committed group older than limit, chosen by the
 * policy; PA_NIL if none. Groups are committed in issue order, so those
 * operations are a prefix of the committed list. */
static uint32_t pick_old_group(pa_machine *m, const pa_oplist *l, uint64_t limit)
{
    if (l->n == 0 || m->pool[l->head].group >= limit)
        return PA_NIL;
    if (m->policy == PA_POLICY_REVERSE) {
        uint32_t id = l->tail;
        while (m->pool[id].group >= limit)
            id = m->pool[id].link_track.prev;
        return id;
    }
    if (m->policy != PA_POLICY_RANDOM && m->policy != PA_POLICY_ADVERSARIAL)
        return l->head;
    if (m->pool[l->tail].group < limit)
        return l->dense[next_random(m) % l->n];
    size_t n = 0;
    for (uint32_t id = l->head; id != PA_NIL && m->pool[id].group < limit; id = m->pool[id].link_track.next)
        n++;
    size_t k = next_random(m) % n;
    uint32_t id = l->head;
    while (k--)
        id = m->pool[id].link_track.next;
    return id;
}

int pa_groups_wait(pa_machine *m, uint32_t ti, int cp_async, uint32_t n, int read_only, pa_error *err)
{
    int hz = m->hooks.on_group ? m->hooks.on_group(m->hooks.ctx, m, ti, cp_async, 1, n, read_only, err) : PA_OK;
    if (hz)   /* traced, checked */
        return hz;
    pa_groups *g = cp_async ? &m->threads[ti].cp : &m->threads[ti].bulk;
    if (g->ncommitted <= n)
        return PA_OK;
    /* Wait until at most n of the most recent groups are pending. */
    const uint64_t limit = g->ncommitted - n;
    if (read_only) {
        /* .read: only the sources of those groups need to have been read. */
        for (uint32_t id = g->committed.head; id != PA_NIL && m->pool[id].group < limit;
             id = m->pool[id].link_track.next) {
            int rc = pa_read_op(m, &m->pool[id], err);
            if (rc)
                return rc;
        }
        return PA_OK;
    }
    for (;;) {
        g = cp_async ? &m->threads[ti].cp : &m->threads[ti].bulk;
        uint32_t id = pick_old_group(m, &g->committed, limit);
        if (id == PA_NIL)
            return PA_OK;
        int rc = pa_complete_id(m, id, err);
        if (rc)
            return rc;
    }
}

/* --- cp.async.mbarrier.arrive ordering ------------------------------------------------ */

static uint32_t oldest_cp(const pa_machine *m, uint32_t ti)
{
    const pa_groups *g = &m->threads[ti].cp;
    return g->committed.head != PA_NIL ? g->committed.head : g->open.head;
}

int pa_cp_pending_before(const pa_machine *m, uint32_t ti, uint64_t seq)
{
    uint32_t id = oldest_cp(m, ti);
    return id != PA_NIL && m->pool[id].seq < seq;
}

int pa_cp_complete_before(pa_machine *m, uint32_t ti, uint64_t seq, pa_error *err)
{
    while (pa_cp_pending_before(m, ti, seq)) {
        int rc = pa_complete_id(m, oldest_cp(m, ti), err);
        if (rc)
            return rc;
    }
    return PA_OK;
}

int pa_cp_add_arrive(pa_machine *m, uint32_t ti, uint32_t id, uint64_t seq, pa_error *err)
{
    pa_thread_state *t = &m->threads[ti];
    uint32_t cap = t->caparrive;
    int rc = grow((void **)&t->arrive_ids, &cap, (size_t)t->narrive + 1, sizeof *t->arrive_ids, err);
    if (!rc)
        rc = grow((void **)&t->arrive_seqs, &t->caparrive, (size_t)t->narrive + 1, sizeof *t->arrive_seqs,
                  err);
    if (rc)
        return rc;
    t->arrive_ids[t->narrive] = id;
    t->arrive_seqs[t->narrive++] = seq;
    return PA_OK;
}

/* Trigger, in order, the arrive-on operations whose earlier copies have all
 * completed (PTX: "upon completion of all prior cp.async operations"). */
static int fire_arrives(pa_machine *m, uint32_t ti, pa_error *err)
{
    for (;;) {
        pa_thread_state *t = &m->threads[ti];
        if (t->arrive_head == t->narrive) {
            t->arrive_head = t->narrive = 0;
            return PA_OK;
        }
        uint32_t id = t->arrive_ids[t->arrive_head];
        uint64_t seq = t->arrive_seqs[t->arrive_head];
        const pa_op *op = &m->pool[id];
        if (op->pending && op->seq == seq && pa_cp_pending_before(m, ti, seq))
            return PA_OK;
        t->arrive_head++;
        if (op->pending && op->seq == seq) {
            int rc = pa_complete_id(m, id, err);
            if (rc)
                return rc;
        }
    }
}
