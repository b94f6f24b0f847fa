/* coll_warp.c - the warp collectives that compute over the lanes' values,
 * run once for the members that met (coll.c's meeting, as vote.sync):
 *
 * - redux.sync: every member gets the reduction of the members' values:
 *   add (mod 2^32), min / max (.u32 / .s32), and / or / xor (.b32), and the
 *   sm_100a f32 min / max, {.abs} {.NaN}, through the semantics library's f32
 *   min / max (sem/sm90.h's rules for NaN and signed zeros: one rule, one place).
 * - match.any.sync: each member gets the mask of the members whose value equals
 *   its own; match.all.sync: the membermask when every member's value is the
 *   same, else 0, and its predicate says which.
 * - movmatrix: the warp's 8x8 matrix of b16 elements, transposed across its lanes.
 * - activemask: the lanes executing with the thread: its warp's live lanes when
 *   the warp runs converged, else the live lanes standing at the same
 *   instruction (the thread among them).
 *
 * Members are the lanes of the membermask that have not exited (coll.c).
 */
#include "ptx/exec/coll_warp.h"

#include "sem/sem.h"

static uint64_t f32_minmax(int op, int flags, uint64_t a, uint64_t b)
{
    sem_ctl k = {0};
    k.op = (uint8_t)(op == 1 ? SEM_OP_MIN : SEM_OP_MAX);
    k.dt = k.at = SEM_T_F32;
    k.flags = (flags & PI_REDUX_NAN) ? SEM_F_NAN : 0;
    sem_impl im;
    uint64_t d = 0;
    if (sem_resolve(&k, &im, NULL) || !im.fn)
        return a;
    uint64_t *const dd[2] = {&d, &d};
    const uint64_t *const ss[4] = {&a, &b, &b, &b};
    im.fn(&k, dd, ss, 1);
    return d;
}

static int redux(const pi_ext *x, pi_thread *const lane[32])
{
    const int op = x->sub, sgn = x->flags & PI_REDUX_SIGNED, f32 = x->flags & PI_REDUX_F32;
    uint64_t acc = 0;
    int first = 1;
    for (uint32_t i = 0; i < 32; i++) {
        if (!lane[i])
            continue;
        uint64_t v = PI_REG(lane[i], x->s0) & 0xFFFFFFFFu;
        if (f32 && (x->flags & PI_REDUX_ABS))
            v &= 0x7FFFFFFFu;
        if (first) {
            acc = v;
            first = 0;
            continue;
        }
        if (f32) {
            acc = f32_minmax(op, x->flags, acc, v);
            continue;
        }
        switch (op) {
        case 0: acc = (acc + v) & 0xFFFFFFFFu; break;
        case 1: acc = sgn ? ((int32_t)v < (int32_t)acc ? v : acc) : (v < acc ? v : acc); break;
        case 2: acc = sgn ? ((int32_t)v > (int32_t)acc ? v : acc) : (v > acc ? v : acc); break;
        case 3: acc &= v; break;
        case 4: acc |= v; break;
        default: acc ^= v; break;
        }
    }
    for (uint32_t i = 0; i < 32; i++)
        if (lane[i])
            PI_REG(lane[i], x->d) = acc;
    return PA_OK;
}

static int match(const pi_ext *x, pi_thread *const lane[32])
{
    const uint64_t m = x->size == 8 ? ~0ull : 0xFFFFFFFFull;
    uint32_t members = 0;
    uint64_t val[32] = {0};
    for (uint32_t i = 0; i < 32; i++)
        if (lane[i]) {
            members |= 1u << i;
            val[i] = PI_REG(lane[i], x->s0) & m;
        }
    if (x->sub == 1) {               /* all */
        int same = 1;
        uint32_t lead = (uint32_t)__builtin_ctz(members);
        for (uint32_t i = 0; i < 32; i++)
            if (lane[i] && val[i] != val[lead])
                same = 0;
        for (uint32_t i = 0; i < 32; i++) {
            if (!lane[i])
                continue;
            if (x->d != PI_NOREG)
                PI_REG(lane[i], x->d) = same ? members : 0;
            if (x->s2 != PI_NOREG)
                PI_REG(lane[i], x->s2) = (uint64_t)same;
        }
        return PA_OK;
    }
    uint32_t res[32] = {0};
    for (uint32_t i = 0; i < 32; i++)
        if (lane[i])
            for (uint32_t j = 0; j < 32; j++)
                if (lane[j] && val[j] == val[i])
                    res[i] |= 1u << j;
    for (uint32_t i = 0; i < 32; i++)
        if (lane[i] && x->d != PI_NOREG)
            PI_REG(lane[i], x->d) = res[i];
    return PA_OK;
}

int pi_warp_values(const pi_ext *x, pi_thread *const lane[32], pa_error *err)
{
    (void)err;
    return x->kind == PX_REDUX ? redux(x, lane) : match(x, lane);
}

int pi_activemask(pi_launch_state *L, pi_thread *t, const pi_ext *x)
{
    const uint32_t w = t->tid / 32, wi = t->cta * L->nwarps + w;
    uint32_t live = L->wlive[wi], mask = 1u << (t->tid % 32);
    if (L->wconv[wi] == PI_W_CONVERGED) {
        mask |= live;
    } else {
        for (uint32_t bits = live; bits; bits &= bits - 1) {
            uint32_t k = (uint32_t)__builtin_ctz(bits);
            const pi_thread *o = &L->t[t->cta * L->nthr + w * 32 + k];
            if (o->pc == t->pc && o->state == PI_T_RUN)
                mask |= 1u << k;
        }
    }
    if (x->d != PI_NOREG)
        PI_REG(t, x->d) = mask;
    t->pc++;
    return PI_R_AGAIN;
}

/* movmatrix.sync.aligned.m8n8.trans.b16 (PTX ISA 9.7.14.5.17): lane t's a holds row t / 4,
 * columns 2 (t % 4) and 2 (t % 4) + 1 (the first in the low half), as ldmatrix's fragments;
 * its d holds the same places of the transpose: element (r, c) of the result is the source's
 * (c, r). */
int pi_movmatrix(pi_thread *const lane[32], const pi_ext *x, pa_error *err)
{
    uint16_t src[8][8];
    for (uint32_t t = 0; t < 32; t++) {
        if (!lane[t])
            return pa_fail(err, PA_ERR_ILLEGAL_INSTRUCTION,
                           "movmatrix is .aligned: every lane of the warp executes it (lane %u has exited)", t);
        uint32_t a = (uint32_t)PI_REG(lane[t], x->s0);
        src[t / 4][2 * (t % 4)] = (uint16_t)a;
        src[t / 4][2 * (t % 4) + 1] = (uint16_t)(a >> 16);
    }
    for (uint32_t t = 0; t < 32; t++) {      /* every source read before any d is written (d may be a) */
        uint32_t r = t / 4, c = 2 * (t % 4);
        PI_REG(lane[t], x->d) = (uint32_t)src[c][r] | (uint32_t)src[c + 1][r] << 16;
    }
    return PA_OK;
}
