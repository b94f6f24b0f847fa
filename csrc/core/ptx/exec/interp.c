/* interp.c - the run loop: one thread's instructions until it does something
 * the others can see (then the scheduler may switch), blocks, or exits.
 *
 * Registers are 64-bit slots; an operation of width w computes on its
 * operands' low w bits and writes its result zero-extended (a .s32 result
 * is kept as 32 bits, as the register holds it). Integer arithmetic wraps;
 * shifts past the width give 0 (or the sign); division by zero gives all
 * ones rather than trapping, and so does remainder by zero (the ISA leaves
 * both unspecified; an H200 gives all ones, golden/isa div/rem).
 */
#include "ptx/exec/launch.h"
#include "check/hb.h"

#include <string.h>

static inline int64_t sx(uint64_t v, unsigned w)
{
    return w >= 64 ? (int64_t)v : (int64_t)(v << (64 - w)) >> (64 - w);
}

static inline int cmp_i(int64_t a, int64_t b, int c)
{
    switch (c) {
    case PI_CMP_EQ: return a == b;
    case PI_CMP_NE: return a != b;
    case PI_CMP_LT: return a < b;
    case PI_CMP_LE: return a <= b;
    case PI_CMP_GT: return a > b;
    default: return a >= b;
    }
}

static inline int cmp_u(uint64_t a, uint64_t b, int c)
{
    switch (c) {
    case PI_CMP_EQ: return a == b;
    case PI_CMP_NE: return a != b;
    case PI_CMP_LT: return a < b;
    case PI_CMP_LE: return a <= b;
    case PI_CMP_GT: return a > b;
    default: return a >= b;
    }
}

/* The instructions that only touch the thread's registers, each written once:
 * X(NAME, statement) computes instruction `in` on registers `r` with the operands
 * a = r[in->a], b = r[in->b], the mask m and the width w already read. The
 * thread's run loop (threaded dispatch) and a converged warp's (one loop over
 * its lanes per instruction) both expand it. */
#define PI_ALU_OPS(X)                                                                                   \
    X(NOP, (void)0)                                                                                     \
    X(MOV, r[in->d] = a & m)                                                                            \
    X(ADD, r[in->d] = (a + b) & m)                                                                      \
    X(SUB, r[in->d] = (a - b) & m)                                                                      \
    X(MULLO, r[in->d] = (a * b) & m)                                                                    \
    X(MULHI_S, r[in->d] = w == 64 ? (uint64_t)(int64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64) \
                                  : (uint64_t)((sx(a, w) * sx(b, w)) >> w) & m)                         \
    X(MULHI_U, r[in->d] = w == 64 ? (uint64_t)(((unsigned __int128)a * b) >> 64) : (((a & m) * (b & m)) >> w) & m) \
    X(MULWIDE_S, r[in->d] = (uint64_t)(sx(a, w) * sx(b, w)) & m)                                        \
    X(MULWIDE_U, r[in->d] = ((a & ((1ull << w) - 1)) * (b & ((1ull << w) - 1))) & m)                    \
    X(MADLO, r[in->d] = (a * b + r[in->c]) & m)                                                         \
    X(MADHI_S, r[in->d] = ((w == 64 ? (uint64_t)(int64_t)(((__int128)(int64_t)a * (__int128)(int64_t)b) >> 64) \
                                    : (uint64_t)((sx(a, w) * sx(b, w)) >> w)) + r[in->c]) & m)          \
    X(MADHI_U, r[in->d] = ((w == 64 ? (uint64_t)(((unsigned __int128)a * b) >> 64) : ((a & m) * (b & m)) >> w) + \
                           r[in->c]) & m)                                                               \
    X(MADWIDE_S, r[in->d] = ((uint64_t)(sx(a, w) * sx(b, w)) + r[in->c]) & m)                           \
    X(MADWIDE_U, r[in->d] = ((a & ((1ull << w) - 1)) * (b & ((1ull << w) - 1)) + r[in->c]) & m)         \
    X(DIV_U, r[in->d] = (b & m) ? ((a & m) / (b & m)) & m : m)   /* by zero: all ones (H200) */                                          \
    X(REM_U, r[in->d] = (b & m) ? ((a & m) % (b & m)) & m : m)                                      \
    X(DIV_S, {                                                                                          \
        int64_t x = sx(a, w), y = sx(b, w);                                                             \
        r[in->d] = !y ? m : (y == -1 ? (uint64_t)(0 - (uint64_t)x) & m : (uint64_t)(x / y) & m);        \
    })                                                                                                  \
    X(REM_S, {                                                                                          \
        int64_t x = sx(a, w), y = sx(b, w);                                                             \
        r[in->d] = !y ? m : (y == -1 ? 0 : (uint64_t)(x % y) & m);                                  \
    })                                                                                                  \
    X(SHL, r[in->d] = (b & 0xFFFFFFFFu) >= w ? 0 : (a << (b & 63)) & m)                                 \
    X(SHR_U, r[in->d] = (b & 0xFFFFFFFFu) >= w ? 0 : ((a & m) >> (b & 63)))                             \
    X(SHR_S, {                                                                                          \
        uint32_t s = (uint32_t)b;                                                                       \
        r[in->d] = (uint64_t)(sx(a, w) >> (s >= w ? w - 1 : s)) & m;                                    \
    })                                                                                                  \
    X(AND, r[in->d] = a & b & m)                                                                        \
    X(OR, r[in->d] = (a | b) & m)                                                                       \
    X(XOR, r[in->d] = (a ^ b) & m)                                                                      \
    X(NOT, r[in->d] = ~a & m)                                                                           \
    X(NEG, r[in->d] = (0 - a) & m)                                                                      \
    X(ABS, r[in->d] = (sx(a, w) < 0 ? 0 - a : a) & m)                                                   \
    X(MIN_S, r[in->d] = (sx(a, w) < sx(b, w) ? a : b) & m)                                              \
    X(MAX_S, r[in->d] = (sx(a, w) > sx(b, w) ? a : b) & m)                                              \
    X(MIN_U, r[in->d] = ((a & m) < (b & m) ? a : b) & m)                                                \
    X(MAX_U, r[in->d] = ((a & m) > (b & m) ? a : b) & m)                                                \
    X(SETP_S, {                                                                                         \
        int v = cmp_i(sx(a, w), sx(b, w), in->sub);                                                     \
        r[in->d] = (uint64_t)v;                                                                         \
        r[in->e] = (uint64_t)!v;                                                                        \
    })                                                                                                  \
    X(SETP_U, {                                                                                         \
        int v = cmp_u(a & m, b & m, in->sub);                                                           \
        r[in->d] = (uint64_t)v;                                                                         \
        r[in->e] = (uint64_t)!v;                                                                        \
    })                                                                                                  \
    X(SELP, r[in->d] = (r[in->c] ? a : b) & m)                                                          \
    X(MOV_PACK, {                                   /* sw-bit elements, sub of them, first lowest */      \
        const uint64_t em = ~0ull >> (64 - in->sw);                                                     \
        uint64_t v = (a & em) | (b & em) << in->sw;                                                     \
        if (in->sub == 4)                                                                               \
            v |= (r[in->c] & em) << 2 * in->sw | (r[in->f] & em) << 3 * in->sw;                         \
        r[in->d] = v;                                                                                   \
    })                                                                                                  \
    X(MOV_UNPACK, {                                 /* sub sw-bit elements into d, e (, c, f) */          \
        const uint64_t em = ~0ull >> (64 - in->sw);                                                     \
        r[in->d] = a & em;                                                                              \
        r[in->e] = (a >> in->sw) & em;                                                                  \
        if (in->sub == 4) {                                                                             \
            r[in->c] = (a >> 2 * in->sw) & em;                                                          \
            r[in->f] = (a >> 3 * in->sw) & em;                                                          \
        }                                                                                               \
    })                                                                                                  \
    X(MAPA, r[in->d] = in->sub ? (PI_SHARED_BASE + pa_mapa((uint32_t)(a - PI_SHARED_BASE), (uint32_t)b)) & m \
                               : pa_mapa((uint32_t)a, (uint32_t)b) & m)                                 \
    X(CVTA_TO, r[in->d] = (a - in->imm) & m)                                                            \
    X(CVTA_FROM, r[in->d] = (a + in->imm) & m)

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
        if (in->guard && (r[in->guard] != 0) == in->pneg) \
            goto skip;                                  \
        a = r[in->a];                                   \
        b = r[in->b];                                   \
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
    uint64_t *const r = t->r;
    uint64_t left = L->budget;   /* instructions the launch may still run */
    uint64_t a, b, m;
    unsigned w;
    int rc;
    DISPATCH();
skip:
    NEXT();
over:
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
            L->st->instructions += L->budget - left;
            L->budget = left;
            return PI_R_EXIT;
        op_SEM: {
            const pi_sem *s = &L->p->sems[in->x];
            uint64_t *const dd[2] = {&r[in->d], &r[in->e]};
            const uint64_t *const ss[4] = {&r[in->a], &r[in->b], &r[in->c], &r[in->f]};
            s->fn(&s->ctl, dd, ss, 1);
        }
            NEXT();
        op_CALL:                 /* call / ret: the thread's frames (call.c) */
            t->pc = (uint32_t)(in - ins);
            L->st->instructions += L->budget - left;
            L->budget = left;
            if (pi_call_exec(L, t, in, err))
                return PI_R_ERR;
            in = ins + t->pc;
            DISPATCH();
        op_EXT:
            t->pc = (uint32_t)(in - ins);
            L->st->instructions += L->budget - left;
            L->budget = left;
            rc = pi_ext_exec(L, t, in, err);
            if (rc != PI_R_AGAIN)
                return rc;
            in = ins + t->pc;
            DISPATCH();
    }
}

/* The bits of lanes lo..hi. */
static inline uint32_t lanes_from_to(uint32_t lo, uint32_t hi)
{
    return ~0u >> (31 - hi) & ~0u << lo;
}

/* One register-only instruction for lanes `on` (between lo and hi) of a warp
 * whose lane 0's registers are r (a lane's registers `stride` after the last):
 * a small function each, so that the lane loop keeps its values in registers. */
typedef void (*pi_lanes_fn)(const pi_ins *in, uint64_t *r, size_t stride, uint32_t on, uint32_t lo, uint32_t hi);
#define PI_LANE_ONE(...)                                                                               \
    {                                                                                                  \
        const uint64_t a = r[in->a], b = r[in->b];                                                     \
        (void)a;                                                                                       \
        (void)b;                                                                                       \
        { __VA_ARGS__; }                                                                               \
    }
#define PI_LANE_LOOP(...)                                                                              \
    if (on == lanes_from_to(lo, hi)) {          /* every lane of lo..hi (a whole warp): no test, */  \
        if (lo < hi) {                          /* two lanes a step (a pointer is formed only to a lane) */\
            uint64_t *r1_ = r + stride;                                                            \
            uint32_t k = lo;                                                                       \
            for (;;) {                                                                             \
                PI_LANE_ONE(__VA_ARGS__)                                                           \
                {                                                                                  \
                    uint64_t *const r = r1_;                                                       \
                    PI_LANE_ONE(__VA_ARGS__)                                                       \
                }                                                                                  \
                if ((k += 2) >= hi)                                                                \
                    break;                                                                         \
                r += 2 * stride;                                                                   \
                r1_ += 2 * stride;                                                                 \
            }                                                                                      \
            if (k == hi) {                      /* the odd lane left */                            \
                r += 2 * stride;                                                                   \
                PI_LANE_ONE(__VA_ARGS__)                                                           \
            }                                                                                      \
        } else {                                                                                   \
            PI_LANE_ONE(__VA_ARGS__)                                                               \
        }                                                                                          \
    } else {                                                                                           \
        for (uint32_t k = lo; k <= hi; k++, r += stride) {                                             \
            if ((on >> k) & 1)                                                                         \
                PI_LANE_ONE(__VA_ARGS__)                                                               \
        }                                                                                              \
    }
#define PI_LANE_FN(name, ...)                                                                          \
    static void lanes_##name(const pi_ins *ip, uint64_t *r, size_t stride, uint32_t on, uint32_t lo,   \
                             uint32_t hi)                                                              \
    {                                                                                                  \
        pi_ins ins_ = *ip;               /* a local copy: the stores to r cannot change it */          \
        const pi_ins *const in = &ins_;                                                                \
        const uint64_t m = in->mask;                                                                   \
        const unsigned w = in->w;                                                                      \
        (void)m;                                                                                       \
        (void)w;                                                                                       \
        r += (size_t)lo * stride;                                                                      \
        if (PI_##name == PI_SETP_S || PI_##name == PI_SETP_U) {            \
            switch (ins_.sub) {          /* one loop per comparison: none chosen lane by lane */       \
            case PI_CMP_EQ: ins_.sub = PI_CMP_EQ; PI_LANE_LOOP(__VA_ARGS__); return;                   \
            case PI_CMP_NE: ins_.sub = PI_CMP_NE; PI_LANE_LOOP(__VA_ARGS__); return;                   \
            case PI_CMP_LT: ins_.sub = PI_CMP_LT; PI_LANE_LOOP(__VA_ARGS__); return;                   \
            case PI_CMP_LE: ins_.sub = PI_CMP_LE; PI_LANE_LOOP(__VA_ARGS__); return;                   \
            case PI_CMP_GT: ins_.sub = PI_CMP_GT; PI_LANE_LOOP(__VA_ARGS__); return;                   \
            default: break;                                                                            \
            }                                                                                          \
        }                                                                                              \
        PI_LANE_LOOP(__VA_ARGS__);                                                                     \
    }
PI_ALU_OPS(PI_LANE_FN)
#undef PI_LANE_FN
#undef PI_LANE_LOOP
#undef PI_LANE_ONE
#define PI_LANE_PTR(name, ...) [PI_##name] = lanes_##name,
static const pi_lanes_fn LANES[PI_OPCOUNT] = {PI_ALU_OPS(PI_LANE_PTR)};
#undef PI_LANE_PTR

/* The lanes of lo..hi whose guard (a predicate register, negated or not)
 * holds: four lanes a step (each lane's test on its own, no shift by the lane). */
static uint32_t guard_lanes(const uint64_t *g, size_t stride, uint32_t lo, uint32_t hi, unsigned neg)
{
    uint32_t on = 0, k = lo;
    size_t i = (size_t)lo * stride;          /* lane k's predicate: g[i] */
    for (; k + 3 <= hi; k += 4, i += 4 * stride)
        on |= ((uint32_t)(g[i] != 0) | (uint32_t)(g[i + stride] != 0) << 1 | (uint32_t)(g[i + 2 * stride] != 0) << 2 |
               (uint32_t)(g[i + 3 * stride] != 0) << 3) << k;
    for (; k <= hi; k++, i += stride)
        on |= (uint32_t)(g[i] != 0) << k;
    return neg ? ~on & lanes_from_to(lo, hi) : on;
}

/* A PI_SEM instruction for lanes `on` of a warp: their sources gathered into
 * arrays, one call of the operation over them, the results put back. */
static void sem_lanes(const pi_launch_state *L, const pi_ins *in, uint64_t *R, size_t stride, uint32_t on)
{
    uint64_t a[32], b[32], c[32], f[32], d[32], e[32];
    uint32_t lane[32];
    size_t n = 0;
    for (uint32_t bits = on; bits; bits &= bits - 1) {
        uint32_t k = (uint32_t)__builtin_ctz(bits);
        const uint64_t *r = R + (size_t)k * stride;
        lane[n] = k;
        a[n] = r[in->a];
        b[n] = r[in->b];
        c[n] = r[in->c];
        f[n] = r[in->f];
        e[n] = r[in->e];              /* a fifth source, where the operation reads one there */
        n++;
    }
    const pi_sem *s = &L->p->sems[in->x];
    uint64_t *const dd[2] = {d, e};
    const uint64_t *const ss[4] = {a, b, c, f};
    s->fn(&s->ctl, dd, ss, n);
    const int two = in->e > 1;    /* 0: none; 1: the sink */
    for (size_t i = 0; i < n; i++) {
        uint64_t *r = R + (size_t)lane[i] * stride;
        r[in->d] = d[i];
        if (two)
            r[in->e] = e[i];
    }
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
    const size_t stride = L->p->nregs;
    uint64_t *const R = T->r;
    const uint32_t lead = (uint32_t)__builtin_ctz(lanes), n = (uint32_t)__builtin_popcount(lanes);
    const uint32_t lo = lead, hi = 31 - (uint32_t)__builtin_clz(lanes);
    uint32_t pc = T[lead].pc;
    const pi_meet *g = &L->warp[T->cta * L->nwarps + T->tid / 32];
    if (T[hi].state != PI_T_RUN)                 /* the lanes waited as one: they run again */
        for (uint32_t bits = lanes; bits; bits &= bits - 1)
            T[__builtin_ctz(bits)].state = PI_T_RUN;
    for (;;) {
        const pi_ins *in = ins + pc;
        uint32_t on = lanes;                     /* lanes whose guard holds */
        if (in->guard)
            on = guard_lanes(R + in->guard, stride, lo, hi, in->pneg) & lanes;
        const pi_ext *x = in->op == PI_EXT ? &L->p->ext[in->x] : NULL;
        if (in->op == PI_EXIT || L->budget < n)
            goto split;                          /* each lane exits, or meets the limit, on its own */
        if (x && on &&
            ((x->kind >= PX_BAR_SYNC && x->kind <= PX_STMATRIX) || x->kind == PX_WGMMA_MMA ||
             x->kind == PX_TENSORMAP_CP) &&
            !(x->kind == PX_WARP_SYNC && on == lanes && g->pc == PI_NOREG &&
              ((uint32_t)R[lead * stride + x->s0] & lanes) == lanes))
            goto split;                          /* the lanes meet one by one */
        L->budget -= n;
        L->st->instructions += n;
        if (LANES[in->op]) {
            LANES[in->op](in, R, stride, on, lo, hi);
            pc++;
            continue;
        }
        if (in->op == PI_SEM) {
            if (on)
                sem_lanes(L, in, R, stride, on);
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
