/* interp.c - the run loop: one thread's instructions until it does something
 * the others can see (then the scheduler may switch), blocks, or exits; and a
 * converged warp's, each instruction once for its lanes (the register-only
 * ones as passes over rows: lanes.c). What the instructions compute: alu.h.
 */
#include "ptx/exec/launch.h"
#include "ptx/exec/alu.h"
#include "ptx/exec/lanes.h"
#include "ptx/exec/wgpend.h"
#include "check/hb.h"

#include <string.h>

/* Dispatch: each handler ends by jumping straight to the next instruction's
 * handler (labels as values, GCC and Clang), so the branch predictor learns
 * each instruction's successor instead of sharing one indirect jump. Every
 * instruction counts against the launch's budget, guarded-off ones too; an
 * unguarded one (guard 0, never negated) reads no predicate. */
#define DISPATCH()                                      \
    do {                                                \
        if (__builtin_expect(!left, 0))                 \
            goto over;                                  \
        left--;                                         \
        if (in->guard && (REG(in->guard) != 0) == in->pneg) \
            goto skip;                                  \
        a = REG(in->a);                                 \
        b = REG(in->b);                                 \
        m = in->mask;                                   \
        w = in->w;                                      \
        goto *OPS[in->op];                              \
    } while (0)
#define NEXT()                                          \
    do {                                                \
        in++;                                           \
        DISPATCH();                                     \
    } while (0)

int pi_run_thread(pi_launch_state *L, pi_thread *t, pa_error *err)
{
#define PI_LABEL(name, ...) [PI_##name] = &&op_##name,
    static const void *const OPS[PI_OPCOUNT] = {
        PI_ALU_OPS(PI_LABEL)
        [PI_BRA] = &&op_BRA,
        [PI_EXIT] = &&op_EXIT,
        [PI_EXT] = &&op_EXT,
        [PI_SEM] = &&op_SEM,
        [PI_CALL] = &&op_CALL,
        [PI_RET] = &&op_CALL,
    };
#undef PI_LABEL
    const pi_ins *const ins = L->p->ins;
    const pi_ins *in = ins + t->pc;
    uint64_t *const r = t->lr;   /* its registers, one every 1 << sh (launch.h) */
    const unsigned sh = t->lsh;
#define REG(k) r[(size_t)(k) << sh]
    /* instructions the launch may still run: left, and while a wgmma the thread
       issued is pending, spare (held back so that each instruction stops at
       `over` to be checked first: wgpend.c) */
    uint64_t left = L->budget, spare = 0;
    uint64_t a, b, m;
    unsigned w;
    int rc;
#define WATCH()                                         \
    do {                                                \
        left += spare;                                  \
        spare = 0;                                      \
        if (__builtin_expect(t->wg_watch, 0)) {         \
            spare = left;                               \
            left = 0;                                   \
        }                                               \
    } while (0)
    WATCH();
    DISPATCH();
skip:
    NEXT();
over:
    if (spare) {
        if (pi_wg_check(L, t, in, err)) {
            t->pc = (uint32_t)(in - ins);
            L->st->instructions += L->budget - spare;
            L->budget = spare;
            return PI_R_ERR;
        }
        spare--;
        left = 1;
        if (!t->wg_watch)
            WATCH();
        DISPATCH();
    }
    t->pc = (uint32_t)(in - ins);
    L->st->instructions += L->budget;
    L->budget = 0;
    return pa_fail(err, PA_ERR_STATE,
                   "the launch ran past its instruction limit (max_instructions) at line %d: "
                   "a loop that never ends?", pi_line(L->p, t->pc)) ? PI_R_ERR : PI_R_ERR;
    {
#define PI_HANDLER(name, ...) \
        op_##name: { __VA_ARGS__; } NEXT();
        PI_ALU_OPS(PI_HANDLER)
#undef PI_HANDLER
        op_BRA:
            in = ins + in->x;
            DISPATCH();
        op_EXIT:
            t->pc = (uint32_t)(in - ins);
            L->st->instructions += L->budget - (left + spare);
            L->budget = left + spare;
            return PI_R_EXIT;
        op_SEM: {
            const pi_sem *s = &L->p->sems[in->x];
            uint64_t *const dd[2] = {&REG(in->d), &REG(in->e)};
            const uint64_t *const ss[4] = {&REG(in->a), &REG(in->b), &REG(in->c), &REG(in->f)};
            s->fn(&s->ctl, dd, ss, 1);
        }
            NEXT();
        op_CALL:                 /* call / ret: the thread's frames (call.c) */
            t->pc = (uint32_t)(in - ins);
            left += spare;
            spare = 0;
            L->st->instructions += L->budget - left;
            L->budget = left;
            if (pi_call_exec(L, t, in, err))
                return PI_R_ERR;
            in = ins + t->pc;
            WATCH();
            DISPATCH();
        op_EXT:
            t->pc = (uint32_t)(in - ins);
            left += spare;
            spare = 0;
            L->st->instructions += L->budget - left;
            L->budget = left;
            rc = pi_ext_exec(L, t, in, err);
            if (rc != PI_R_AGAIN)
                return rc;
            in = ins + t->pc;
            WATCH();
            DISPATCH();
    }
#undef WATCH
#undef REG
}

/* A converged warp: its live lanes `lanes` (bits of the 32 from lane 0's thread
 * T) all stand at one instruction. Each instruction runs once for the warp: the
 * register-only ones as one loop over the lanes whose guard holds, the ones that
 * touch the model for each such lane in lane order (pi_ext_exec, the thread's
 * own operation), each lane's operation counting against the burst (a warp's
 * instruction runs whole: it may overrun the burst). A branch the
 * lanes take apart, waits that answer apart, a collective other than a whole
 * bar.warp.sync, an exit or the instruction limit end the warp's run together:
 * PI_R_SPLIT, every lane left at its own pc, RUN or (its wait answered False)
 * SPIN, to run on its own. PI_R_SPIN: every lane's wait answered False on the
 * same mbarrier (the lowest lane holds the wait's snapshot; the others are left
 * SPIN beside it). PI_R_PROGRESS: the burst is spent, the warp still converged
 * (only the lowest lane's pc is kept: the others' are set when they go apart or
 * wait). */
int pi_run_warp(pi_launch_state *L, pi_thread *T, uint32_t lanes, pi_thread **failed, pa_error *err)
{
    const pi_ins *const ins = L->p->ins;
    const pi_lanes *const P = L->lanes;
    uint64_t *const R = T->lr;                   /* the warp's block: rows of 1 << sh (launch.h) */
    const unsigned sh = T->lsh;
    const uint32_t lead = (uint32_t)__builtin_ctz(lanes), n = (uint32_t)__builtin_popcount(lanes);
    const uint32_t lo = lead, hi = 31 - (uint32_t)__builtin_clz(lanes);
    uint32_t pc = T[lead].pc;
    const pi_meet *g = &L->warp[T->cta * L->nwarps + T->tid / 32];
    if (T[hi].state != PI_T_RUN)                 /* the lanes waited as one: they run again */
        for (uint32_t bits = lanes; bits; bits &= bits - 1)
            T[__builtin_ctz(bits)].state = PI_T_RUN;
    const int whole = lanes == 0xFFFFFFFFu && sh == 5;
    for (;;) {
        const int watch = T[lead].wg_watch;     /* a wgmma pending: each instruction checked (wgpend.c) */
        if (whole && !watch) {                   /* its registers-only runs at once (lanes.h) */
            uint64_t ran = 0;
            pc = P->run(L->p, pc, R, L->budget / 32, &ran);
            L->budget -= 32 * ran;
            L->st->instructions += 32 * ran;
        }
        const pi_ins *in = ins + pc;
        uint32_t on = lanes;                     /* lanes whose guard holds */
        if (in->guard)
            on = (P->guard(pi_row(T, in->guard), sh, lo, hi) ^ (in->pneg ? ~0u : 0)) & lanes;
        const pi_ext *x = in->op == PI_EXT ? &L->p->ext[in->x] : NULL;
        if (in->op == PI_EXIT || L->budget < n)
            goto split;
        for (uint32_t bits = watch ? lanes : 0; bits; bits &= bits - 1) {
            uint32_t k = (uint32_t)__builtin_ctz(bits);
            if (T[k].wg_watch && pi_wg_check(L, &T[k], in, err)) {
                for (uint32_t o = lanes; o; o &= o - 1)
                    T[__builtin_ctz(o)].pc = pc;
                *failed = &T[k];
                return PI_R_ERR;
            }
        }                          /* each lane exits, or meets the limit, on its own */
        if (x && on &&
            ((x->kind >= PX_BAR_SYNC && x->kind <= PX_STMATRIX) || x->kind == PX_WGMMA_MMA || x->kind == PX_BRX ||
             x->kind == PX_TENSORMAP_CP) &&
            !(x->kind == PX_WARP_SYNC && on == lanes && g->pc == PI_NOREG &&
              ((uint32_t)pi_row(T, x->s0)[lead] & lanes) == lanes))
            goto split;                          /* the lanes meet one by one */
        L->budget -= n;
        L->st->instructions += n;
        if (P->op[in->op]) {
            P->op[in->op](in, R, sh, on, lo, hi);
            pc++;
            continue;
        }
        if (in->op == PI_SEM) {
            if (on)
                pi_sem_lanes(L->p, in, R, sh, on);
            pc++;
            continue;
        }
        switch (in->op) {
        case PI_CALL:
        case PI_RET: {
            /* each lane whose guard holds calls (or returns) with its own stack; the warp stays
               together while they all land on one instruction */
            uint32_t next = PI_NOREG, same = 1;
            for (uint32_t bits = lanes; bits; bits &= bits - 1) {
                uint32_t k = (uint32_t)__builtin_ctz(bits);
                T[k].pc = pc;
                if ((on >> k) & 1) {
                    if (pi_call_exec(L, &T[k], in, err)) {
                        *failed = &T[k];
                        return PI_R_ERR;
                    }
                } else {
                    T[k].pc = pc + 1;
                }
                same &= next == PI_NOREG || T[k].pc == next;
                next = T[k].pc;
            }
            if (!same) {
                for (uint32_t bits = lanes; bits; bits &= bits - 1)
                    T[__builtin_ctz(bits)].state = PI_T_RUN;
                return PI_R_SPLIT;
            }
            pc = next;
            continue;
        }
        case PI_BRA:
            if (on == lanes) {
                pc = in->x;
            } else if (!on) {
                pc++;
            } else {                             /* the lanes go apart */
                for (uint32_t bits = lanes; bits; bits &= bits - 1) {
                    uint32_t k = (uint32_t)__builtin_ctz(bits);
                    T[k].pc = (on >> k) & 1 ? in->x : pc + 1;
                }
                return PI_R_SPLIT;
            }
            continue;
        default:
            break;
        }
        /* PI_EXT */
        if (!on) {
            pc++;
            continue;
        }
        if (x->kind == PX_WARP_SYNC) {           /* the whole warp meets at once */
            uint32_t who[32], nw = 0;            /* and its lanes' memory is ordered (coll.c) */
            for (uint32_t bits = on; bits; bits &= bits - 1)
                who[nw++] = T[__builtin_ctz(bits)].tid;
            if (pa_hb_bar_sync(L->m, T[lead].cta, 0, who, nw, err)) {
                *failed = &T[lead];
                return PI_R_ERR;
            }
            pc++;
            L->epoch++;
            L->st->ext++;
            if (--L->burst == 0)
                goto out;
            continue;
        }
        uint32_t spin = 0;
        uint64_t ext = L->st->ext;
        if (pi_ext_exec_lanes(L, T, on, in, &spin, failed, err))
            return PI_R_ERR;
        pc++;
        if (spin) {
            const pa_mbar_slot *ws = T[lead].ws;
            uint32_t same = spin == lanes, last = 31 - (uint32_t)__builtin_clz(spin);
            for (uint32_t bits = lanes; bits; bits &= bits - 1) {
                uint32_t k = (uint32_t)__builtin_ctz(bits);
                T[k].pc = pc;
                T[k].state = (spin >> k) & 1 ? PI_T_SPIN : PI_T_RUN;
                same &= T[k].ws == ws;
            }
            if (!same)
                return PI_R_SPLIT;
            T[lead].snap = T[last].snap;         /* the barrier as the last lane saw it */
            T[lead].ws_try = T[last].ws_try;
            return PI_R_SPIN;
        }
        uint64_t done = L->st->ext - ext;        /* the lanes' operations count against the burst */
        if (done >= L->burst)
            goto out;
        L->burst -= (uint32_t)done;
    }
split:
    for (uint32_t bits = lanes; bits; bits &= bits - 1) {
        uint32_t k = (uint32_t)__builtin_ctz(bits);
        T[k].pc = pc;
        T[k].state = PI_T_RUN;
    }
    return PI_R_SPLIT;
out:
    T[lead].pc = pc;                             /* the others' stand for it while converged */
    return PI_R_PROGRESS;
}
