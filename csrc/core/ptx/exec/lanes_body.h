/* lanes_body.h - the passes of lanes.h for one vector level: lanes.c includes
 * it once per level, with LV(name) naming that level's version of a function
 * and LV_ATTR its target attribute. A whole warp (32 lanes, every one on) is
 * one loop of fixed length with no test, which the compiler vectorises (rows
 * are the same or apart, never overlapping: no lane reads what another
 * writes); any other set of lanes is a loop that tests each lane. */

#define LV_ONE(...)                                                                                    \
    {                                                                                                  \
        const uint64_t a = REG(in->a), b = REG(in->b);                                                 \
        (void)a;                                                                                       \
        (void)b;                                                                                       \
        { __VA_ARGS__; }                                                                               \
    }
#define LV_LOOP(...)                                                                                   \
    if (sh == 5 && on == 0xFFFFFFFFu) {                                                                \
        enum { LSH = 5 };                /* rows of 32: a constant stride */                           \
        PI_IVDEP                                                                                       \
        for (uint32_t l = 0; l < 32; l++)                                                              \
            LV_ONE(__VA_ARGS__)                                                                        \
    } else {                                                                                           \
        const unsigned LSH = sh;                                                                       \
        for (uint32_t l = lo; l <= hi; l++)                                                            \
            if ((on >> l) & 1)                                                                         \
                LV_ONE(__VA_ARGS__)                                                                    \
    }
#define LV_FN(name, ...)                                                                               \
    LV_ATTR static void LV(name)(const pi_ins *ip, uint64_t *R, unsigned sh, uint32_t on, uint32_t lo,   \
                                 uint32_t hi)                                                          \
    {                                                                                                  \
        pi_ins ins_ = *ip;               /* a local copy: the stores to R cannot change it */          \
        const pi_ins *const in = &ins_;                                                                \
        const uint64_t m = in->mask;                                                                   \
        const unsigned w = in->w;                                                                      \
        (void)m;                                                                                       \
        (void)w;                                                                                       \
        if (PI_##name == PI_SETP_S || PI_##name == PI_SETP_U) {                                        \
            switch (ins_.sub) {          /* one loop per comparison: none chosen lane by lane */       \
            case PI_CMP_EQ: ins_.sub = PI_CMP_EQ; LV_LOOP(__VA_ARGS__); return;                        \
            case PI_CMP_NE: ins_.sub = PI_CMP_NE; LV_LOOP(__VA_ARGS__); return;                        \
            case PI_CMP_LT: ins_.sub = PI_CMP_LT; LV_LOOP(__VA_ARGS__); return;                        \
            case PI_CMP_LE: ins_.sub = PI_CMP_LE; LV_LOOP(__VA_ARGS__); return;                        \
            case PI_CMP_GT: ins_.sub = PI_CMP_GT; LV_LOOP(__VA_ARGS__); return;                        \
            default: break;                                                                            \
            }                                                                                          \
        }                                                                                              \
        LV_LOOP(__VA_ARGS__);                                                                          \
    }
#define REG(k) R[((size_t)(k) << LSH) + l]
PI_ALU_OPS(LV_FN)
#undef REG

LV_ATTR static uint32_t LV(guard)(const uint64_t *g, unsigned sh, uint32_t lo, uint32_t hi)
{
    uint32_t on = 0;
    if (sh == 5) {
        PI_IVDEP
        for (uint32_t l = 0; l < 32; l++)
            on |= (uint32_t)(g[l] != 0) << l;
        return on;
    }
    for (uint32_t l = lo; l <= hi; l++)
        on |= (uint32_t)(g[l] != 0) << l;
    return on;
}

#define LV_PTR(name, ...) [PI_##name] = LV(name),
static const pi_lanes LV(table) = {{PI_ALU_OPS(LV_PTR)}, LV(guard)};
#undef LV_PTR
#undef LV_FN
#undef LV_LOOP
#undef LV_ONE
