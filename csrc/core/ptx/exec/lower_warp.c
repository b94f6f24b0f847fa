/* lower_warp.c - the warp collectives of sm_80 and later that compute over
 * the lanes' values: redux.sync, match.{any,all}.sync, and activemask. They
 * run in coll_warp.c (the meeting is coll.c's, as for vote.sync).
 */
#include "ptx/exec/lower_int.h"
#include "ptx/exec/coll_warp.h"

#include <string.h>

int lw_warp_more(lw *L, const ptx_item *it, const parts *P)
{
    pi_ins *in = lw_emit(L);
    if (!in)
        return -1;
    if (!strcmp(P->q[0], "activemask")) {
        pi_ext *x = lw_ext(L, in, PX_ACTIVEMASK);
        if (!x || lw_need_ops(L, it, "activemask", 1, 1))
            return -1;
        x->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        return 0;
    }
    if (!strcmp(P->q[0], "redux")) {
        static const char *const OPS[] = {"add", "min", "max", "and", "or", "xor"};
        pi_ext *x = lw_ext(L, in, PX_REDUX);
        if (!x || lw_need_ops(L, it, "redux.sync", 3, 3))
            return -1;
        x->sub = -1;
        for (int i = 0; i < 6; i++)
            if (lw_has(P, OPS[i]))
                x->sub = (int8_t)i;
        const int f32 = lw_has(P, "f32");
        if (x->sub < 0)
            return lw_unsupported(L, it, "");
        x->flags = (uint8_t)((lw_has(P, "s32") ? PI_REDUX_SIGNED : 0) | (f32 ? PI_REDUX_F32 : 0) |
                             (lw_has(P, "abs") ? PI_REDUX_ABS : 0) | (lw_has(P, "NaN") ? PI_REDUX_NAN : 0));
        x->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        x->s0 = lw_src(L, lw_op(L, it, 1), 32);
        x->s1 = lw_src(L, lw_op(L, it, 2), 32);
        return 0;
    }
    /* match.any / match.all */
    pi_ext *x = lw_ext(L, in, PX_MATCH);
    if (!x || lw_need_ops(L, it, "match.sync", 3, 3))
        return -1;
    x->sub = (int8_t)(lw_has(P, "all") ? 1 : 0);
    x->size = (uint8_t)(lw_has(P, "b64") ? 8 : 4);
    const ptx_operand *d = lw_op(L, it, 0);
    x->d = lw_dst(L, d, 1, NULL);
    if (d->nelem == 1 && !x->sub)      /* ptxas: "Predicate output not allowed for instruction 'match.any'" */
        return lw_unsupported(L, it, ": match.any.sync has no predicate destination (d|p is match.all's)");
    if (d->nelem == 1)
        x->s2 = lw_dst(L, lw_el(L, d, 0), 1, NULL);     /* the predicate of d|p */
    x->s0 = lw_src(L, lw_op(L, it, 1), x->size * 8);
    x->s1 = lw_src(L, lw_op(L, it, 2), 32);
    return 0;
}
