/* ops.c - what a thread's PI_EXT instruction does to the model: each one is
 * the C operation the Python API calls for the same PTX (engine.h,
 * check/watch.h's pa_sync_*, check/hb.h's accesses and fences), with the
 * thread's (CTA rank, thread id) as the issuer. Nothing here moves bytes of
 * an asynchronous operation itself.
 */
#include "ptx/exec/launch.h"
#include "ptx/exec/wgpend.h"
#include "check/hb.h"
#include "check/watch.h"

#include <stdio.h>
#include <string.h>

static inline uint64_t ea(const pi_thread *t, const pi_addr *a)
{
    return (a->base == PI_NOREG ? 0 : PI_REG(t, a->base)) + (uint64_t)a->off;
}

static inline uint64_t rv(const pi_thread *t, uint32_t reg, uint64_t dflt)
{
    return reg == PI_NOREG ? dflt : PI_REG(t, reg);
}

/* A shared-space operand as the 32-bit shared address the engines take. */
static int shared_addr(uint64_t a, uint32_t *out, pa_error *err)
{
    if (a > UINT32_MAX)
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "shared address 0x%llx does not fit in 32 bits",
                       (unsigned long long)a);
    *out = (uint32_t)a;
    return PA_OK;
}

/* A successful operation the other threads may see: the blocked wake up,
 * and the thread's burst counts down. */
static int progress(pi_launch_state *L, pi_thread *t)
{
    t->pc++;
    L->epoch++;
    L->st->ext++;
    return --L->burst > 0 ? PI_R_AGAIN : PI_R_PROGRESS;
}

#define TRY(call)                   \
    do {                            \
        if ((call) != PA_OK)        \
            return PI_R_ERR;        \
    } while (0)

/* The tensor map a copy names: a grid-constant parameter (its bytes, decoded
 * once), or 128 bytes of global memory (decoded now: tensormap.replace may
 * have edited them), read in the tensormap proxy by the copy. A parameter
 * larger than a map may hold one at a 64-byte-aligned offset: CuTe passes its
 * TMA TiledCopy (the map first, then its own fields: 192 bytes or more) as a
 * grid-constant parameter and names the map inside it. */
static int tensor_map(pi_launch_state *L, uint64_t addr, pa_tensormap *out, int *from_global, pa_error *err)
{
    const pi_prog *p = L->p;
    *from_global = 0;
    if (addr >= PI_PARAM_BASE && addr < PI_PARAM_BASE + PI_WINDOW_SIZE) {
        uint64_t off = addr - PI_PARAM_BASE;
        for (uint32_t i = 0; i < p->nparams; i++) {
            const pi_param *pa = &p->params[i];
            if (off < pa->offset || off >= (uint64_t)pa->offset + pa->size)
                continue;
            if (off % 64)
                return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS,
                               "the tensor-map operand is byte %llu of parameter '%s': a tensor map is 64-byte "
                               "aligned", (unsigned long long)(off - pa->offset), pa->name);
            if (off + PA_TENSORMAP_BYTES > (uint64_t)pa->offset + pa->size)
                return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                               "the tensor-map operand is byte %llu of parameter '%s', which is %u bytes: "
                               "the 128-byte tensor map does not fit", (unsigned long long)(off - pa->offset),
                               pa->name, pa->size);
            if (off != pa->offset)                  /* inside a larger parameter: decoded each time */
                return pa_tensormap_unpack(L->a->params + off, out, err) == PA_OK ? PA_OK : PI_R_ERR;
            if (!L->map_ok[i]) {
                TRY(pa_tensormap_unpack(L->a->params + pa->offset, &L->maps[i], err));
                L->map_ok[i] = 1;
            }
            *out = L->maps[i];
            return PA_OK;
        }
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                       "the tensor-map operand 0x%llx is in the parameter space but in no parameter",
                       (unsigned long long)addr);
    }
    if (addr >= PI_SHARED_BASE && addr < PI_SHARED_BASE + PI_WINDOW_SIZE)
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                       "the tensor-map operand 0x%llx is a shared-memory address: a tensor map is a kernel "
                       "parameter or lives in global memory", (unsigned long long)addr);
    if (addr % 64)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "tensor map at 0x%llx is not 64-byte aligned",
                       (unsigned long long)addr);
    const uint8_t *b = pa_global_resolve(&L->m->global, addr, PA_TENSORMAP_BYTES, err);
    if (!b)
        return PI_R_ERR;
    TRY(pa_tensormap_unpack(b, out, err));
    *from_global = 1;
    return PA_OK;
}

static int ldst(pi_launch_state *L, pi_thread *t, const pi_ext *x, int write, pa_error *err)
{
    pa_machine *m = L->m;
    uint64_t a = ea(t, &x->a0);
    uint32_t len = (uint32_t)x->size * x->n;
    int sp = x->space;
    if (a % len && (len & (len - 1)) == 0)
        return pa_fail(err, PA_ERR_MISALIGNED_ADDRESS, "%s of %u bytes at 0x%llx is not %u-byte aligned",
                       write ? "st" : "ld", len, (unsigned long long)a, len);
    if (sp == PI_SP_GENERIC) {
        if (a >= PI_PARAM_BASE && a < PI_PARAM_BASE + PI_WINDOW_SIZE) {
            sp = PI_SP_PARAM;
            a -= PI_PARAM_BASE;
        } else if (a >= PI_SHARED_BASE && a < PI_SHARED_BASE + PI_WINDOW_SIZE) {
            sp = PI_SP_SHARED_CLUSTER;
            a -= PI_SHARED_BASE;
        } else if (a >= PI_LOCAL_BASE && a < PI_LOCAL_BASE + PI_WINDOW_SIZE) {
            sp = PI_SP_LOCAL;
            a -= PI_LOCAL_BASE;
        } else {
            sp = PI_SP_GLOBAL;
        }
    } else if (sp == PI_SP_PARAM && a >= PI_PARAM_BASE && a < PI_PARAM_BASE + PI_WINDOW_SIZE) {
        a -= PI_PARAM_BASE;
    } else if (sp == PI_SP_PARAM && a >= PI_LOCAL_BASE && a < PI_LOCAL_BASE + PI_WINDOW_SIZE) {
        sp = PI_SP_LOCAL;               /* a .func's parameter or a call scope's: the thread's frame */
        a -= PI_LOCAL_BASE;
    } else if (sp == PI_SP_LOCAL && a >= PI_LOCAL_BASE && a < PI_LOCAL_BASE + PI_WINDOW_SIZE) {
        a -= PI_LOCAL_BASE;
    }
    uint8_t buf[32];
    uint8_t *p;
    if (write)                          /* the bytes first: the race checker compares stores' values */
        for (uint32_t i = 0; i < x->n; i++) {
            uint64_t v = PI_REG(t, x->regs[i]);
            for (uint32_t k = 0; k < x->size; k++)
                buf[i * x->size + k] = (uint8_t)(v >> (8 * k));
        }
    if (sp == PI_SP_LOCAL) {            /* the thread's own window: no other thread sees it */
        if (a + len > t->stack_top || a + len < a)
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                           "%s.local of %u bytes at local address %llu is outside the thread's %llu bytes of "
                           ".local variables (its stack's frames)", write ? "st" : "ld", len, (unsigned long long)a,
                           (unsigned long long)t->stack_top);
        p = t->local + a;
        if (!write)
            memcpy(buf, p, len);
    } else if (sp == PI_SP_PARAM) {
        if (write)
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "st.param: kernel parameters are read-only");
        if (a + len > L->p->param_bytes || a + len < a)
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS,
                           "ld.param of %u bytes at offset %llu is outside the %u bytes of parameters", len,
                           (unsigned long long)a, L->p->param_bytes);
        memcpy(buf, L->a->params + a, len);
    } else if (sp == PI_SP_SHARED || sp == PI_SP_SHARED_CLUSTER) {
        uint32_t sa = 0, rank = 0;
        TRY(shared_addr(a, &sa, err));
        p = pa_smem_resolve(&m->cluster, t->cta, sp == PI_SP_SHARED_CLUSTER, sa, len, &rank, err);
        if (!p)
            return PI_R_ERR;
        if (write) {
            TRY(pa_hb_store_smem(m, t->cta, t->tid, rank, pa_smem_offset(sa), len, buf, "st.shared", err));
        } else {
            TRY(pa_check_read(m, t->cta, t->tid, rank, pa_smem_offset(sa), len, err));
            memcpy(buf, p, len);
        }
    } else {
        uint64_t cb = L->a->gvar_base;
        if (write && L->p->const_bytes && a < cb + L->p->const_bytes && a + len > cb)
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "st of %u bytes at 0x%llx writes the module's .const "
                           "variables, which are read-only", len, (unsigned long long)a);
        p = pa_global_resolve(&m->global, a, len, err);
        if (!p)
            return PI_R_ERR;
        TRY(write ? pa_hb_store_global(m, t->cta, t->tid, a, len, buf, "st.global", err)
                  : pa_hb_global(m, t->cta, t->tid, a, len, 0, "ld.global", err));
        TRY(pa_check_global_bytes(m, t->cta, t->tid, a, len, write, write ? "st.global" : "ld.global", err));
        if (!write)
            memcpy(buf, p, len);
    }
    if (write) {
        memcpy(p, buf, len);
    } else {
        unsigned dw = x->sub2 ? (unsigned)x->sub2 : 64;
        uint64_t dmask = dw >= 64 ? ~0ull : (1ull << dw) - 1;
        for (uint32_t i = 0; i < x->n; i++) {
            uint64_t v = 0;
            for (uint32_t k = 0; k < x->size; k++)
                v |= (uint64_t)buf[i * x->size + k] << (8 * k);
            if (x->sext && x->size < 8) {
                unsigned s = 64 - 8u * x->size;
                v = (uint64_t)((int64_t)(v << s) >> s) & dmask;
            }
            if (x->regs[i] != PI_NOREG)
                PI_REG(t, x->regs[i]) = v;
        }
    }
    return PA_OK;
}

/* The instruction's coordinate and im2colInfo operands into the copy's arrays; whether their
 * counts fit the map and the mode is the copy plan's rule (tensor-coords, im2col-info). */
static int coords_of(const pi_thread *t, const pi_ext *x, int32_t c[PA_MAX_RANK],
                     uint16_t info[PA_MAX_RANK - 2], pa_error *err)
{
    if (x->n > PA_MAX_RANK || x->ninfo > PA_MAX_RANK - 2)
        return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, "%u tensor coordinates and %u im2col offsets given; "
                       "at most %d and %d", x->n, x->ninfo, PA_MAX_RANK, PA_MAX_RANK - 2);
    memset(c, 0, sizeof(int32_t) * PA_MAX_RANK);
    for (uint32_t i = 0; i < x->n; i++)
        c[i] = (int32_t)(uint32_t)PI_REG(t, x->regs[i]);
    memset(info, 0, sizeof(uint16_t) * (PA_MAX_RANK - 2));
    for (uint32_t i = 0; i < x->ninfo; i++)
        info[i] = (uint16_t)PI_REG(t, x->info[i]);
    return PA_OK;
}

static int tensor_op(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err)
{
    pa_machine *m = L->m;
    pa_tensormap map;
    int from_global;
    uint64_t maddr = ea(t, &x->a1);
    TRY(tensor_map(L, maddr, &map, &from_global, err));
    int32_t c[PA_MAX_RANK];
    uint16_t info[PA_MAX_RANK - 2];
    TRY(coords_of(t, x, c, info, err));
    if (x->kind == PX_TENSOR_PREFETCH)
        return pa_issue_prefetch_tensor(m, &map, (pa_load_mode)x->mode, c, (int)x->n, info, (int)x->ninfo, NULL, NULL,
                                        err);
    if (from_global)
        TRY(pa_hb_tensormap_read(m, t->cta, t->tid, maddr, err));
    int rc;
    if (x->kind == PX_TENSOR_LOAD) {
        uint32_t dst = 0, mbar = 0;
        rc = shared_addr(ea(t, &x->a0), &dst, err);
        if (!rc)
            rc = shared_addr(ea(t, &x->a2), &mbar, err);
        if (!rc)
            rc = pa_issue_tensor_load_group(m, t->cta, t->tid, &map, (pa_load_mode)x->mode, c, (int)x->n, info,
                                            (int)x->ninfo, dst,
                                            x->space == PI_SP_SHARED_CLUSTER, mbar, x->flags & 1,
                                            (uint16_t)rv(t, x->s0, 0), x->sub, err);
    } else {
        uint32_t src = 0;
        rc = shared_addr(ea(t, &x->a0), &src, err);
        if (!rc)
            rc = pa_issue_tensor_store(m, t->cta, t->tid, &map, (pa_load_mode)x->mode, c, (int)x->n, src, x->sub >= 0,
                                       x->sub >= 0 ? (pa_redop)x->sub : PA_RED_ADD, err);
    }
    if (from_global)
        pa_hb_tensormap_read(m, t->cta, t->tid, UINT64_MAX, NULL);
    return rc;
}

static int mbar_op(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err, int *result)
{
    pa_machine *m = L->m;
    uint32_t a = 0;
    if (x->kind != PX_MBAR_PENDING)
        TRY(shared_addr(ea(t, &x->a0), &a, err));
    switch (x->kind) {
    case PX_MBAR_INIT:
        return pa_sync_init(m, t->cta, t->tid, a, (uint32_t)PI_REG(t, x->s0), err);
    case PX_MBAR_INVAL:
        return pa_sync_inval(m, t->cta, t->tid, a, err);
    case PX_MBAR_ARRIVE: {
        uint64_t state = 0;
        TRY(pa_sync_arrive(m, t->cta, t->tid, a, (uint32_t)rv(t, x->s0, 1), (uint32_t)rv(t, x->s1, 0), x->flags,
                           &state, err));
        if (x->d != PI_NOREG)
            PI_REG(t, x->d) = state;
        return PA_OK;
    }
    case PX_MBAR_TX:
        return pa_sync_tx(m, t->cta, t->tid, a, (uint32_t)PI_REG(t, x->s0), x->sub, err);
    case PX_MBAR_WAIT: {
        uint64_t v = PI_REG(t, x->s0);
        uint32_t parity = (x->flags & 2) ? (uint32_t)(v & 1) : pa_mbar_state_parity(v);
        int res = 0;
        TRY(pa_sync_wait(m, t->cta, t->tid, a, parity, x->flags & 1, &res, err));
        PI_REG(t, x->d) = (uint64_t)(res != 0);
        *result = res != 0;
        t->ws = NULL;
        if (!res) {
            const pa_mbar_slot *s = pa_machine_mbar_slot(m, t->cta, a, 0, NULL);   /* the wait's own lookup */
            if (s) {
                t->ws = s;
                t->snap = s->bar;
                t->ws_try = x->flags & 1;
            }
        }
        return PA_OK;
    }
    default:
        PI_REG(t, x->d) = pa_mbar_pending_count(PI_REG(t, x->s0));
        return PA_OK;
    }
}

static int bulk_op(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err)
{
    pa_machine *m = L->m;
    uint32_t cta = t->cta, tid = t->tid;
    switch (x->kind) {
    case PX_BULK_COPY: {
        pa_bulk_copy_args a;
        memset(&a, 0, sizeof a);
        a.multicast = x->flags & 1;
        a.cta_mask = (uint16_t)rv(t, x->s1, 0);
        a.cp_mask = (x->flags >> 1) & 1;
        a.byte_mask = (uint16_t)rv(t, x->s2, 0);
        a.cache_hint = (x->flags >> 2) & 1;
        uint32_t mbar = 0;
        if (x->sub != PA_BULK_S2G)
            TRY(shared_addr(ea(t, &x->a2), &mbar, err));
        return pa_issue_bulk_copy(m, cta, tid, (pa_bulk_dir)x->sub, ea(t, &x->a0), ea(t, &x->a1),
                                  (uint32_t)PI_REG(t, x->s0), mbar, &a, err);
    }
    case PX_BULK_REDUCE: {
        uint32_t src = 0, mbar = 0;
        TRY(shared_addr(ea(t, &x->a1), &src, err));
        if (x->space != PI_SP_GLOBAL)
            TRY(shared_addr(ea(t, &x->a2), &mbar, err));
        return pa_issue_bulk_reduce(m, cta, tid, x->space == PI_SP_GLOBAL ? PA_RDST_GLOBAL : PA_RDST_SHARED_CLUSTER,
                                    ea(t, &x->a0), src, (uint32_t)PI_REG(t, x->s0), mbar, (pa_redop)x->sub,
                                    (pa_rtype)x->sub2, x->flags & 1, err);
    }
    case PX_BULK_PREFETCH:
        return pa_bulk_prefetch_l2(m, cta, tid, ea(t, &x->a1), (uint32_t)PI_REG(t, x->s0), err);
    case PX_BULK_COMMIT:
        return pa_bulk_commit_group(m, cta, tid, err);
    case PX_BULK_WAIT:
        return (x->flags ? pa_bulk_wait_group_read : pa_bulk_wait_group)(m, cta, tid, (uint32_t)PI_REG(t, x->s0), err);
    case PX_CP_ASYNC: {
        static const uint32_t PF[4] = {0, 64, 128, 256};
        uint32_t cp = (uint32_t)PI_REG(t, x->s0), dst = 0;
        pa_cp_async_args a = {cp, (uint32_t)rv(t, x->s1, cp), (int)(rv(t, x->s2, 0) != 0), x->flags & 1,
                              PF[x->sub2 & 3], x->sub};
        TRY(shared_addr(ea(t, &x->a0), &dst, err));
        return pa_issue_cp_async(m, cta, tid, dst, ea(t, &x->a1), &a, err);
    }
    case PX_CP_COMMIT:
        return pa_cp_async_commit_group(m, cta, tid, err);
    case PX_CP_WAIT:
        return pa_cp_async_wait_group(m, cta, tid, (uint32_t)PI_REG(t, x->s0), err);
    case PX_CP_WAIT_ALL:
        return pa_cp_async_wait_all(m, cta, tid, err);
    case PX_CP_MBAR_ARRIVE: {
        uint32_t a = 0;
        TRY(shared_addr(ea(t, &x->a0), &a, err));
        return pa_cp_async_mbarrier_arrive(m, cta, tid, a, x->flags & 1, err);
    }
    case PX_ST_ASYNC: {
        uint8_t bytes[16];
        uint32_t dst = 0, mbar = 0;
        for (uint32_t i = 0; i < x->n; i++)
            for (uint32_t k = 0; k < x->size; k++)
                bytes[i * x->size + k] = (uint8_t)(PI_REG(t, x->regs[i]) >> (8 * k));
        TRY(shared_addr(ea(t, &x->a0), &dst, err));
        TRY(shared_addr(ea(t, &x->a2), &mbar, err));
        return pa_issue_st_async(m, cta, tid, dst, mbar, bytes, x->size, x->n, err);
    }
    case PX_RED_ASYNC: {
        uint32_t dst = 0, mbar = 0;
        TRY(shared_addr(ea(t, &x->a0), &dst, err));
        TRY(shared_addr(ea(t, &x->a2), &mbar, err));
        return pa_issue_red_async(m, cta, tid, dst, mbar, PI_REG(t, x->s0), (pa_redop)x->sub, (pa_ekind)x->sub2, err);
    }
    case PX_ST_ASYNC_RELEASE: {
        uint8_t bytes[8];
        for (uint32_t k = 0; k < x->size; k++)
            bytes[k] = (uint8_t)(PI_REG(t, x->s0) >> (8 * k));
        return pa_issue_st_async_release(m, cta, tid, ea(t, &x->a0), bytes, x->size, x->flags & 1,
                                         (x->flags >> 1) & 1, err);
    }
    case PX_ST_BULK: {
        uint32_t dst = 0;
        TRY(shared_addr(ea(t, &x->a0), &dst, err));
        return pa_st_bulk(m, cta, tid, dst, PI_REG(t, x->s0), PI_REG(t, x->s1), err);
    }
    default:
        return pa_fail(err, PA_ERR_STATE, "unknown bulk operation %u", x->kind);
    }
}

static int replace(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err)
{
    pa_machine *m = L->m;
    uint64_t a = ea(t, &x->a0);
    uint8_t img[PA_TENSORMAP_BYTES];
    uint8_t *p;
    if (x->space == PI_SP_SHARED) {
        uint32_t sa = 0, rank = 0;
        TRY(shared_addr(a, &sa, err));
        p = pa_smem_resolve(&m->cluster, t->cta, 0, sa, PA_TENSORMAP_BYTES, &rank, err);
        if (!p)
            return PI_R_ERR;
        memcpy(img, p, sizeof img);
        TRY(pa_tensormap_replace_target(img, (pa_tmap_field)x->sub, (int)rv(t, x->s1, 0), PI_REG(t, x->s0),
                                        (int)m->target, err));
        TRY(pa_hb_smem(m, t->cta, t->tid, rank, pa_smem_offset(sa), PA_TENSORMAP_BYTES, 1, "tensormap.replace",
                       err));
    } else {
        p = pa_global_resolve(&m->global, a, PA_TENSORMAP_BYTES, err);
        if (!p)
            return PI_R_ERR;
        memcpy(img, p, sizeof img);
        TRY(pa_tensormap_replace_target(img, (pa_tmap_field)x->sub, (int)rv(t, x->s1, 0), PI_REG(t, x->s0),
                                        (int)m->target, err));
        TRY(pa_hb_global(m, t->cta, t->tid, a, PA_TENSORMAP_BYTES, 1, "tensormap.replace", err));
    }
    memcpy(p, img, sizeof img);
    return PA_OK;
}

int pi_ext_exec(pi_launch_state *L, pi_thread *t, const pi_ins *in, pa_error *err)
{
    const pi_ext *x = &L->p->ext[in->x];
    pa_machine *m = L->m;
    int rc = PA_OK, res = 1;
    if (m->watch)
        pa_hb_line(m, (uint32_t)pi_line(L->p, t->pc));    /* a race report names the access's line */
    switch (x->kind) {
    case PX_LD:
    case PX_ST:
        rc = ldst(L, t, x, x->kind == PX_ST, err);
        break;
    case PX_TRAP:               /* the GPU ends the launch: an illegal instruction, or a breakpoint no debugger takes */
        pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION, x->sub ? "brkpt: a breakpoint, and no debugger to take it (the "
                "launch fails)" : "trap: the kernel stopped itself (the launch fails, as cudaErrorIllegalInstruction)");
        return PI_R_ERR;
    case PX_DISCARD: {
        uint64_t a = ea(t, &x->a0);
        if (x->space == PI_SP_GENERIC && a >= PI_FUNC_BASE) {       /* the model's other windows */
            pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "discard of generic address 0x%llx: not in the .global window "
                    "(the ISA: undefined)", (unsigned long long)a);
            return PI_R_ERR;
        }
        rc = pa_check_discard(m, t->cta, t->tid, a, pi_line(L->p, t->pc), err);
        break;
    }
    case PX_MOV128: {
        /* the 128 bits as four 32-bit words, lowest first */
        const uint32_t src[4] = {x->s0, x->s1, x->s2, x->s3};
        uint32_t w[4];
        for (int i = 0; i < 4; i++)
            w[i] = x->sub == 4 ? (uint32_t)PI_REG(t, src[i]) : (uint32_t)(PI_REG(t, src[i / 2]) >> (32 * (i & 1)));
        for (uint32_t i = 0; i < x->n; i++)
            if (x->regs[i] != PI_NOREG)
                PI_REG(t, x->regs[i]) = x->n == 4 ? w[i] : (uint64_t)w[2 * i + 1] << 32 | w[2 * i];
        break;
    }
    case PX_ISSPACEP:
    case PX_GETCTARANK:
    case PX_POLICY:
        rc = pi_space_exec(L, t, x, err);
        break;
    case PX_TIMER: {
        /* A timer has no value to match bit for bit: the model's reads the launch's instructions
           so far plus the reads before it, so every read is later than the one before (a poll
           with a timeout ends) and a stretch of work reads as that many ticks. */
        const uint64_t v = L->st->instructions + ++L->timer_reads;
        PI_REG(t, x->d) = x->sub == 1 || x->sub == 3 ? (uint32_t)v : x->sub == 2 ? v >> 32 : v;
        break;
    }
    case PX_STACK:
    case PX_BRX:
        return pi_stack_exec(L, t, x, err);
    case PX_MBAR_INIT:
    case PX_MBAR_INVAL:
    case PX_MBAR_ARRIVE:
    case PX_MBAR_TX:
    case PX_MBAR_WAIT:
    case PX_MBAR_PENDING:
        rc = mbar_op(L, t, x, err, &res);
        break;
    case PX_TENSOR_LOAD:
    case PX_TENSOR_STORE:
    case PX_TENSOR_PREFETCH:
        rc = tensor_op(L, t, x, err);
        break;
    case PX_BULK_COPY:
    case PX_BULK_REDUCE:
    case PX_BULK_PREFETCH:
    case PX_BULK_COMMIT:
    case PX_BULK_WAIT:
    case PX_CP_ASYNC:
    case PX_CP_COMMIT:
    case PX_CP_WAIT:
    case PX_CP_WAIT_ALL:
    case PX_CP_MBAR_ARRIVE:
    case PX_ST_ASYNC:
    case PX_ST_ASYNC_RELEASE:
    case PX_ST_BULK:
    case PX_RED_ASYNC:
        rc = bulk_op(L, t, x, err);
        break;
    case PX_FENCE_PROXY_ASYNC:
        rc = pa_hb_fence_proxy_async(m, t->cta, t->tid, x->sub, err);
        break;
    case PX_FENCE_TENSORMAP:
        rc = pa_hb_fence_proxy_tensormap(m, t->cta, t->tid, x->sub, x->sub ? ea(t, &x->a0) : 0,
                                         x->sub ? (uint32_t)PI_REG(t, x->s0) : 128, err);
        break;
    case PX_FENCE_MBAR_INIT:
        rc = pa_hb_fence_mbarrier_init(m, t->cta, t->tid, err);
        break;
    case PX_FENCE:
        rc = x->sub >= PA_HB_FENCE_RESTRICT_RELEASE
                 ? pa_hb_fence_restricted(m, t->cta, t->tid, x->sub == PA_HB_FENCE_RESTRICT_ACQUIRE, err)
                         : pa_hb_fence(m, t->cta, t->tid, x->sub, x->sub2, err);
        break;
    case PX_TENSORMAP_REPLACE:
        rc = replace(L, t, x, err);
        break;
    case PX_ATOM:
        rc = pi_atom_exec(L, t, x, err);
        break;
    case PX_MULTIMEM:
        rc = pi_multimem_exec(L, t, x, err);
        break;
    case PX_WGMMA_FENCE:
    case PX_WGMMA_COMMIT:
    case PX_WGMMA_WAIT:
        /* the math runs when the warpgroup meets at mma_async (coll.c): its
           results are in the registers before any wait; reading them before
           the wait that retires them is the wgmma-pending hazard (wgpend.c) */
        if (x->kind == PX_WGMMA_COMMIT)
            pi_wg_commit(L, t);
        else if (x->kind == PX_WGMMA_WAIT)
            pi_wg_wait(L, t, (uint32_t)PI_REG(t, x->s0));
        t->pc++;
        return PI_R_AGAIN;
    default:
        return pi_coll_exec(L, t, in, x, err);
    }
    if (rc != PA_OK)
        return PI_R_ERR;
    if (m->all.n > L->max_pending && (x->kind == PX_TENSOR_LOAD || x->kind == PX_TENSOR_STORE || x->kind == PX_BULK_COPY ||
                                      x->kind == PX_BULK_REDUCE || x->kind == PX_CP_ASYNC || x->kind == PX_ST_ASYNC ||
                                      x->kind == PX_ST_ASYNC_RELEASE || x->kind == PX_ST_BULK ||
                                      x->kind == PX_RED_ASYNC)) {
        /* a loop that issues copies and never waits would hold every one of them (and, with the
           race checker, take time with the square of their number) */
        char n[32], lim[32];
        pa_fail(err, PA_ERR_NO_MEMORY, "%s asynchronous operations pending at once that no thread has waited for; "
                "the launch's limit is %s (launch(max_pending=...)): does the kernel wait for what it issues?",
                pa_count_text(m->all.n, n, sizeof n), pa_count_text(L->max_pending, lim, sizeof lim));
        return PI_R_ERR;
    }
    if (!res) {                 /* a wait that returned False: the thread yields */
        t->pc++;
        return PI_R_SPIN;
    }
    return progress(L, t);
}

/* The wait's parity operand of thread t. */
static inline uint32_t wait_parity(const pi_thread *t, const pi_ext *x)
{
    uint64_t v = PI_REG(t, x->s0);
    return (x->flags & 2) ? (uint32_t)(v & 1) : pa_mbar_state_parity(v);
}

/* A lane's wait answered: its result register, and, if False, what it watches
   (a lane whose wait answered True runs on with the warp: nothing else to note). */
static inline void waited(pi_thread *t, const pi_ext *x, const pa_mbar_slot *s, int res, uint32_t k,
                          uint32_t *spin, uint64_t *done)
{
    PI_REG(t, x->d) = (uint64_t)(res != 0);
    if (res) {
        ++*done;
    } else {
        t->ws = s;
        t->snap = s->bar;
        t->ws_try = x->flags & 1;
        *spin |= 1u << k;
    }
}

/* test_wait / try_wait of lanes that all name one mbarrier and one parity: the
   barrier's slot looked up once, then each lane's checked wait in lane order,
   as each lane's own pi_ext_exec would do it (runs of quick waits at once). */
static int wait_lanes(pi_launch_state *L, pi_thread *T, uint32_t on, const pi_ins *in, const pi_ext *x,
                      pa_mbar_slot *s, uint32_t parity, uint32_t *spin, pi_thread **failed, pa_error *err)
{
    pa_machine *m = L->m;
    int is_try = x->flags & 1;
    uint64_t done = 0;
    uint64_t *const d = pi_row(T, x->d);          /* the result register of every lane: lane k's at d[k] */
    for (uint32_t left = on; left;) {
        uint32_t yes = 0, quick = pa_sync_wait_lanes(m, T->cta, T->tid, left, s, parity, is_try, &yes);
        if (quick) {                             /* waited() for each: the results, then the lanes that spin */
            for (uint32_t bits = quick; bits; bits &= bits - 1) {
                uint32_t k = (uint32_t)__builtin_ctz(bits);
                d[k] = (yes >> k) & 1;
            }
            done += (uint64_t)__builtin_popcount(quick & yes);
            for (uint32_t bits = quick & ~yes; bits; bits &= bits - 1) {
                uint32_t k = (uint32_t)__builtin_ctz(bits);
                T[k].ws = s;
                T[k].snap = s->bar;
                T[k].ws_try = is_try;
            }
            *spin |= quick & ~yes;
        }
        left &= ~quick;
        if (!left)
            break;
        uint32_t k = (uint32_t)__builtin_ctz(left);   /* a wait that needs every step */
        int res = 0;
        if (pa_sync_wait_slot(m, T->cta, T[k].tid, s, parity, is_try, &res, err)) {
            T[k].pc = (uint32_t)(in - L->p->ins);
            *failed = &T[k];
            L->epoch += done;
            L->st->ext += done;
            return PI_R_ERR;
        }
        waited(&T[k], x, s, res, k, spin, &done);
        left &= left - 1;
    }
    L->epoch += done;                            /* each True answer is an operation done */
    L->st->ext += done;
    return PA_OK;
}

/* Whether lanes `others` of the warp whose lane 0 is T name the address and
   parity of the wait x as lane `lead`: the address's register the same (its
   offset is), and the parity bit or the state's parity. */
static int same_wait(const pi_thread *T, uint32_t others, const pi_ext *x, uint32_t lead, uint32_t parity)
{
    const uint32_t base = x->a0.base;
    if (!others)
        return 1;
    if (!(x->flags & 2)) {                       /* a state operand: its parity */
        const uint64_t a = ea(&T[lead], &x->a0);
        for (uint32_t bits = others; bits; bits &= bits - 1) {
            const pi_thread *q = &T[__builtin_ctz(bits)];
            if (ea(q, &x->a0) != a || wait_parity(q, x) != parity)
                return 0;
        }
        return 1;
    }
    const uint64_t *const s0 = pi_row(T, x->s0), vs = s0[lead];   /* lane k's at s0[k] */
    uint64_t diff = 0;
    if (base == PI_NOREG) {
        for (uint32_t bits = others; bits; bits &= bits - 1)
            diff |= s0[__builtin_ctz(bits)] ^ vs;
        return !(diff & 1);
    }
    const uint64_t *const b = pi_row(T, base), vb = b[lead];
    for (uint32_t bits = others; bits; bits &= bits - 1) {
        uint32_t k = (uint32_t)__builtin_ctz(bits);
        diff |= (b[k] ^ vb) | ((s0[k] ^ vs) & 1);
    }
    return !diff;
}

int pi_ext_exec_lanes(pi_launch_state *L, pi_thread *T, uint32_t on, const pi_ins *in, uint32_t *spin,
                      pi_thread **failed, pa_error *err)
{
    const pi_ext *x = &L->p->ext[in->x];
    uint32_t lead = (uint32_t)__builtin_ctz(on);
    if (x->kind == PX_MBAR_WAIT && T[lead].cta < L->m->cluster.nctas) {
        uint64_t a = ea(&T[lead], &x->a0);
        uint32_t parity = wait_parity(&T[lead], x);
        int same = a <= UINT32_MAX && same_wait(T, on & (on - 1), x, lead, parity);
        pa_mbar_slot *s = same ? pa_machine_mbar_slot(L->m, T[lead].cta, (uint32_t)a, 0, NULL) : NULL;
        if (s)
            return wait_lanes(L, T, on, in, x, s, parity, spin, failed, err);
    }
    uint32_t burst = L->burst;
    const int inst = (on & (on - 1)) != 0;       /* several lanes: one instruction instance (pa_hb_instance) */
    if (inst)
        pa_hb_instance(L->m, 1);
    for (uint32_t bits = on; bits; bits &= bits - 1) {
        uint32_t k = (uint32_t)__builtin_ctz(bits);
        T[k].pc = (uint32_t)(in - L->p->ins);
        L->burst = 2;                            /* the caller counts the lanes' operations */
        int rc = pi_ext_exec(L, &T[k], in, err);
        if (rc == PI_R_ERR) {
            L->burst = burst;
            if (inst)
                pa_hb_instance(L->m, 0);
            *failed = &T[k];
            return PI_R_ERR;
        }
        if (rc == PI_R_SPIN)
            *spin |= 1u << k;
    }
    if (inst)
        pa_hb_instance(L->m, 0);
    L->burst = burst;
    return PA_OK;
}
