/* lanes_body.h - the passes of lanes.h for one vector level: lanes.c includes
 * it once per level, with LV(name) naming that level's version of a function,
 * LV_ATTR its target attribute and LV_GUARD32(g) the lanes of a row of 32
 * whose predicate is nonzero. A whole warp (32 lanes, every one on) is
 * one loop of fixed length with no test, which the compiler vectorises (rows
 * are the same or apart, never overlapping: no lane reads what another
 * writes); any other set of lanes is a loop that tests each lane. */

#define LV_ONE(...)                                                                                    \
    {                                                                                                  \
        const uint64_t a = REG(in->a), b = REG(in->b), m = in->mask;                                   \
        const unsigned w = in->w;                                                                      \
        (void)a;                                                                                       \
        (void)b;                                                                                       \
        (void)m;                                                                                       \
        (void)w;                                                                                       \
        { __VA_ARGS__; }                                                                               \
    }
/* A whole warp: rows of 32, a constant stride. */
#define LV_WHOLE(...)                                                                                  \
    {                                                                                                  \
        enum { LSH = 5 };                                                                              \
        PI_IVDEP                                                                                       \
        for (uint32_t l = 0; l < 32; l++)                                                              \
            LV_ONE(__VA_ARGS__)                                                                        \
    }
/* Lanes `on` of lo..hi, rows of 1 << sh. */
#define LV_SOME(...)                                                                                   \
    {                                                                                                  \
        const unsigned LSH = sh;                                                                       \
        for (uint32_t l = lo; l <= hi; l++)                                                            \
            if ((on >> l) & 1)                                                                         \
                LV_ONE(__VA_ARGS__)                                                                    \
    }
/* LOOP for instruction ins_ (a local copy of it: the stores to R cannot change
   it), with what the pass would otherwise choose lane by lane made constant:
   setp's comparison, and whether a low product fits 32-bit multiplies. */
#define LV_CASES(name, LOOP, ...)                                                                      \
    {                                                                                                  \
        const pi_ins *const in = &ins_;                                                                \
        if (PI_##name == PI_SETP_S || PI_##name == PI_SETP_U) {                                        \
            switch (ins_.sub) {                                                                        \
            case PI_CMP_EQ: ins_.sub = PI_CMP_EQ; LOOP(__VA_ARGS__) break;                             \
            case PI_CMP_NE: ins_.sub = PI_CMP_NE; LOOP(__VA_ARGS__) break;                             \
            case PI_CMP_LT: ins_.sub = PI_CMP_LT; LOOP(__VA_ARGS__) break;                             \
            case PI_CMP_LE: ins_.sub = PI_CMP_LE; LOOP(__VA_ARGS__) break;                             \
            case PI_CMP_GT: ins_.sub = PI_CMP_GT; LOOP(__VA_ARGS__) break;                             \
            default: ins_.sub = PI_CMP_GE; LOOP(__VA_ARGS__) break;   /* cmp_*'s default */            \
            }                                                                                          \
        } else if (PI_##name == PI_MULLO || PI_##name == PI_MADLO) {                                   \
            if (ins_.w <= 32) {                                                                        \
                ins_.w = 32;             /* the same low product (alu.h) */                            \
                LOOP(__VA_ARGS__)                                                                      \
            } else {                                                                                   \
                LOOP(__VA_ARGS__)                                                                      \
            }                                                                                          \
        } else {                                                                                       \
            LOOP(__VA_ARGS__)                                                                          \
        }                                                                                              \
    }
#define LV_FN(name, ...)                                                                               \
    LV_ATTR static void LV(name)(const pi_ins *ip, uint64_t *R, unsigned sh, uint32_t on, uint32_t lo,   \
                                 uint32_t hi)                                                          \
    {                                                                                                  \
        pi_ins ins_ = *ip;                                                                             \
        if (sh == 5 && on == 0xFFFFFFFFu)                                                              \
            LV_CASES(name, LV_WHOLE, __VA_ARGS__)                                                      \
        else                                                                                           \
            LV_CASES(name, LV_SOME, __VA_ARGS__)                                                       \
    }
#define REG(k) R[((size_t)(k) << LSH) + l]
PI_ALU_OPS(LV_FN)
#undef REG

LV_ATTR static uint32_t LV(guard)(const uint64_t *g, unsigned sh, uint32_t lo, uint32_t hi)
{
    uint32_t on = 0;
    if (sh == 5)
        return LV_GUARD32(g);
    for (uint32_t l = lo; l <= hi; l++)
        on |= (uint32_t)(g[l] != 0) << l;
    return on;
}

/* A whole warp's run of instructions from pc on (threaded dispatch, each
 * instruction's pass inline): register-only ones, PI_SEM and branches whose
 * lanes all go one way, at most `max` of them, each counted whether its guard
 * holds or not. It stops before the first it leaves to the caller: one that
 * touches the model, a call or ret, an exit, or one whose guard holds for some
 * lanes only. Returns that instruction's pc; *ran: the instructions run. */
LV_ATTR static uint32_t LV(run)(const pi_prog *p, uint32_t pc, uint64_t *R, uint64_t max, uint64_t *ran)
{
#define LV_LABEL(name, ...) [PI_##name] = &&op_##name,
    static const void *const OPS[PI_OPCOUNT] = {
        PI_ALU_OPS(LV_LABEL)
        [PI_BRA] = &&op_BRA,
        [PI_SEM] = &&op_SEM,
        [PI_EXIT] = &&stop,
        [PI_EXT] = &&stop,
        [PI_CALL] = &&stop,
        [PI_RET] = &&stop,
    };
#undef LV_LABEL
    const pi_ins *const ins = p->ins;
    const pi_ins *ip = ins + pc;
    uint64_t left = max;
    const void *op;
next:
    op = OPS[ip->op];
    if (op == &&stop || !left)
        goto stop;
    if (ip->guard) {
        uint32_t on = LV_GUARD32(R + ((size_t)ip->guard << 5));
        if (ip->pneg)
            on = ~on;
        if (on != 0xFFFFFFFFu) {
            if (on)                          /* some lanes only: the caller's */
                goto stop;
            left--;                          /* none: it counts, and does nothing */
            ip++;
            goto next;
        }
    }
    left--;
    goto *op;
#define LV_HANDLER(name, ...)                                                                          \
    op_##name: {                                                                                       \
        pi_ins ins_ = *ip;                                                                             \
        LV_CASES(name, LV_WHOLE, __VA_ARGS__)                                                          \
    }                                                                                                  \
    ip++;                                                                                              \
    goto next;
#define REG(k) R[((size_t)(k) << LSH) + l]
    PI_ALU_OPS(LV_HANDLER)
#undef REG
#undef LV_HANDLER
op_BRA:
    ip = ins + ip->x;
    goto next;
op_SEM:
    pi_sem_lanes(p, ip, R, 5, 0xFFFFFFFFu);
    ip++;
    goto next;
stop:
    *ran += max - left;
    return (uint32_t)(ip - ins);
}

#define LV_PTR(name, ...) [PI_##name] = LV(name),
static const pi_lanes LV(table) = {{PI_ALU_OPS(LV_PTR)}, LV(guard), LV(run)};
#undef LV_PTR
#undef LV_FN
#undef LV_CASES
#undef LV_SOME
#undef LV_WHOLE
#undef LV_ONE
