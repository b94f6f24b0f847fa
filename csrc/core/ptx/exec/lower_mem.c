/* lower_mem.c - the memory and asynchronous forms: ld/st, every mbarrier
 * form, cp.async / cp.async.bulk{.tensor} / cp.reduce.async.bulk / st.async /
 * st.bulk / prefetches, the fences they need and tensormap.replace. These
 * lower to the operations the Python API issues (ops.c runs them), so their
 * qualifiers are read here once.
 */
#include "ptx/exec/lower_int.h"
#include "check/hb.h"

#include <string.h>

/* the two 64-bit halves of a .b128 value: a register's (its low half, then its high), or an
 * immediate's, zero-extended (ptxas: st.b128 [a], -1 stores 0xFF x 8 then 0x00 x 8) */
int lw_b128_halves(lw *L, const ptx_operand *o, int is_dst, uint32_t *lo, uint32_t *hi)
{
    if (o->kind == PTX_OP_REG) {
        uint8_t c = 0;
        uint32_t r = is_dst ? lw_dst(L, o, 0, &c) : lw_name_reg(L, o, &c);
        if (r == PI_NOREG)
            return -1;
        if (c != 128) {
            lw_lerr(L, o->line, o->col, "a .b128 value is a .b128 register or an immediate%s%s", "", "");
            return -1;
        }
        *lo = r;
        *hi = r + 1;
        return 0;
    }
    if (!is_dst && o->kind == PTX_OP_IMM) {
        *lo = lw_const(L, (uint64_t)o->imm);
        *hi = lw_const(L, 0);
        return 0;
    }
    lw_lerr(L, o->line, o->col, "a .b128 value is a .b128 register%s%s", is_dst ? "" : " or an immediate", "");
    return -1;
}

int lw_ldst(lw *L, const ptx_item *it, const parts *P, int is_st)
{
    tinfo t;
    int sp = lw_space_of(P);
    if (sp < 0)
        return lw_unsupported(L, it, ": .local and .const memory are not modelled");
    /* ld / st .b128: one 16-byte access (16-byte aligned) of the register's two halves */
    const int b128 = lw_last_type(P, 1, &t) && t.bits == 128 && lw_vec_of(P) == 1;
    if (!b128 && (!lw_last_type(P, 1, &t) || t.bits > 64 || t.is_pred))
        return lw_unsupported(L, it, ": the type is not one it loads");
    /* .L2::cache_hint takes a cache policy: a hint, read and otherwise ignored */
    const int hint = lw_has(P, "L2::cache_hint");
    if (lw_need_ops(L, it, is_st ? "st" : "ld", 2 + hint, 2 + hint))
        return -1;
    if (hint && lw_src(L, lw_op(L, it, 2), 64) == PI_NOREG)
        return -1;
    pi_ins *in = lw_emit(L);
    pi_ext *x = in ? lw_ext(L, in, is_st ? PX_ST : PX_LD) : NULL;
    if (!x)
        return -1;
    x->space = (uint8_t)sp;
    if (b128) {
        x->size = 8;
        x->n = 2;
        x->sub2 = 64;
        x->a0 = lw_addr(L, lw_op(L, it, is_st ? 0 : 1));
        return lw_b128_halves(L, lw_op(L, it, is_st ? 1 : 0), !is_st, &x->regs[0], &x->regs[1]);
    }
    x->size = (uint8_t)(t.bits / 8);
    x->sext = (uint8_t)t.is_signed;
    int v = lw_vec_of(P);
    const ptx_operand *ao = lw_op(L, it, is_st ? 0 : 1), *ro = lw_op(L, it, is_st ? 1 : 0);
    x->a0 = lw_addr(L, ao);
    int n = lw_reg_list(L, ro, x->regs, 4, !is_st, t.bits);
    if (n != v) {
        if (!L->bad)
            lw_lerr(L, ro->line, ro->col, "the register vector does not match .v%s%s", v == 2 ? "2" : "4", "");
        return -1;
    }
    x->n = (uint8_t)n;
    if (!is_st) {
        uint8_t c = 64;
        if (ro->kind == PTX_OP_REG)
            lw_dst(L, ro, 0, &c);
        else if (ro->kind == PTX_OP_VEC && ro->nelem)
            lw_dst(L, lw_el(L, ro, 0), 1, &c);
        x->sub2 = (int8_t)(c > 64 ? 64 : c);
    }
    return 0;
}

int lw_mbarrier(lw *L, const ptx_item *it, const parts *P)
{
    const char *k = P->n > 1 ? P->q[1] : "";
    pi_ins *in = lw_emit(L);
    if (!in)
        return -1;
    if (!strcmp(k, "init")) {
        pi_ext *x = lw_ext(L, in, PX_MBAR_INIT);
        if (!x || lw_need_ops(L, it, "mbarrier.init", 2, 2))
            return -1;
        x->a0 = lw_addr(L, lw_op(L, it, 0));
        x->s0 = lw_src(L, lw_op(L, it, 1), 32);
        return 0;
    }
    if (!strcmp(k, "inval")) {
        pi_ext *x = lw_ext(L, in, PX_MBAR_INVAL);
        if (!x || lw_need_ops(L, it, "mbarrier.inval", 1, 1))
            return -1;
        x->a0 = lw_addr(L, lw_op(L, it, 0));
        return 0;
    }
    if (!strcmp(k, "arrive") || !strcmp(k, "arrive_drop")) {
        pi_ext *x = lw_ext(L, in, PX_MBAR_ARRIVE);
        if (!x || lw_need_ops(L, it, "mbarrier.arrive", 2, 3))
            return -1;
        x->flags = (uint8_t)((!strcmp(k, "arrive_drop") ? PA_MBAR_DROP : 0) |
                             (lw_has(P, "noComplete") ? PA_MBAR_NO_COMPLETE : 0));
        x->d = lw_dst(L, lw_op(L, it, 0), 1, NULL);
        x->a0 = lw_addr(L, lw_op(L, it, 1));
        if (lw_has(P, "expect_tx")) {
            if (it->nops != 3)
                return lw_unsupported(L, it, ": .expect_tx needs a tx-count operand");
            x->s1 = lw_src(L, lw_op(L, it, 2), 32);
        } else if (it->nops == 3) {
            x->s0 = lw_src(L, lw_op(L, it, 2), 32);
        }
        return 0;
    }
    if (!strcmp(k, "expect_tx") || !strcmp(k, "complete_tx")) {
        pi_ext *x = lw_ext(L, in, PX_MBAR_TX);
        if (!x || lw_need_ops(L, it, "mbarrier.expect_tx", 2, 2))
            return -1;
        x->sub = (int8_t)(k[0] == 'c');
        x->a0 = lw_addr(L, lw_op(L, it, 0));
        x->s0 = lw_src(L, lw_op(L, it, 1), 32);
        return 0;
    }
    if (!strcmp(k, "test_wait") || !strcmp(k, "try_wait")) {
        pi_ext *x = lw_ext(L, in, PX_MBAR_WAIT);
        if (!x || lw_need_ops(L, it, "mbarrier.try_wait", 3, 4))
            return -1;
        x->flags = (uint8_t)((k[1] == 'r' ? 1 : 0) | (lw_has(P, "parity") ? 2 : 0));
        x->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        x->a0 = lw_addr(L, lw_op(L, it, 1));
        x->s0 = lw_src(L, lw_op(L, it, 2), 64);
        return 0;
    }
    if (!strcmp(k, "pending_count")) {
        pi_ext *x = lw_ext(L, in, PX_MBAR_PENDING);
        if (!x || lw_need_ops(L, it, "mbarrier.pending_count", 2, 2))
            return -1;
        x->d = lw_dst(L, lw_op(L, it, 0), 0, NULL);
        x->s0 = lw_src(L, lw_op(L, it, 1), 64);
        return 0;
    }
    return lw_unsupported(L, it, "");
}

static int load_mode(const parts *P)
{
    if (lw_has(P, "im2col::w::128"))
        return PA_MODE_IM2COL_W128;
    if (lw_has(P, "im2col::w"))
        return PA_MODE_IM2COL_W;
    if (lw_has(P, "im2col_no_offs"))
        return PA_MODE_IM2COL_NO_OFFS;
    if (lw_has(P, "im2col"))
        return PA_MODE_IM2COL;
    if (lw_has(P, "tile::gather4"))
        return PA_MODE_TILE_GATHER4;
    if (lw_has(P, "tile::scatter4"))
        return PA_MODE_TILE_SCATTER4;
    return PA_MODE_TILE;
}

static int redop_of(const parts *P)
{
    for (int op = 0; op < PA_RED_COUNT; op++)
        if (lw_has(P, pa_redop_name(op)))
            return op;
    return -1;
}

static int rtype_of(const parts *P)
{
    for (int t = 0; t < PA_RT_COUNT; t++)
        if (lw_has(P, pa_rtype_name(t)))
            return t;
    return -1;
}

/* [map, {coords}] */
static int tensor_operand(lw *L, const ptx_operand *o, pi_ext *x)
{
    if (o->kind != PTX_OP_ADDR || !o->nelem || o->nelem > 5) {
        lw_lerr(L, o->line, o->col, "expected [tensorMap, {coordinates}]%s%s", "", "");
        return -1;
    }
    x->a1 = lw_addr(L, o);
    x->n = o->nelem;
    for (int i = 0; i < o->nelem; i++)
        x->regs[i] = lw_src(L, lw_el(L, o, i), 32);
    return 0;
}

/* {im2colInfo}: at most 3 values (the .im2col offsets W, H, D or {wHalo, wOffset}); whether
 * their count fits the map is the copy plan's rule, checked at run time. */
static int im2col_info(lw *L, const ptx_operand *v, pi_ext *x)
{
    if (v->nelem > 3) {
        lw_lerr(L, v->line, v->col, "im2colInfo holds at most 3 values (W, H, D offsets)%s%s", "", "");
        return -1;
    }
    x->ninfo = (uint8_t)v->nelem;
    for (int i = 0; i < x->ninfo; i++)
        x->info[i] = lw_src(L, lw_el(L, v, i), 16);
    return 0;
}

int lw_cp(lw *L, const ptx_item *it, const parts *P)
{
    int reduce = !strcmp(P->q[0], "cp") && P->n > 1 && !strcmp(P->q[1], "reduce");
    int tensor = lw_has(P, "tensor");
    int bulk = lw_has(P, "bulk");
    pi_ins *in = lw_emit(L);
    if (!in)
        return -1;
    if (bulk && lw_has(P, "prefetch")) {
        if (tensor) {
            pi_ext *x = lw_ext(L, in, PX_TENSOR_PREFETCH);
            if (!x || lw_need_ops(L, it, "cp.async.bulk.prefetch.tensor", 1, 3))
                return -1;
            x->mode = (uint8_t)load_mode(P);
            if (tensor_operand(L, lw_op(L, it, 0), x))
                return -1;
            if (it->nops >= 2 && lw_op(L, it, 1)->kind == PTX_OP_VEC) {
                if (im2col_info(L, lw_op(L, it, 1), x))
                    return -1;
            }
            return 0;
        }
        pi_ext *x = lw_ext(L, in, PX_BULK_PREFETCH);
        if (!x || lw_need_ops(L, it, "cp.async.bulk.prefetch", 2, 3))
            return -1;
        x->a1 = lw_addr(L, lw_op(L, it, 0));
        x->s0 = lw_src(L, lw_op(L, it, 1), 32);
        return 0;
    }
    if (bulk && lw_has(P, "commit_group")) {
        return lw_ext(L, in, PX_BULK_COMMIT) ? 0 : -1;
    }
    if (bulk && lw_has(P, "wait_group")) {
        pi_ext *x = lw_ext(L, in, PX_BULK_WAIT);
        if (!x || lw_need_ops(L, it, "cp.async.bulk.wait_group", 1, 1))
            return -1;
        x->flags = (uint8_t)lw_has(P, "read");
        x->s0 = lw_src(L, lw_op(L, it, 0), 32);
        return 0;
    }
    if (tensor) {
        /* cp.async.bulk.tensor.Nd.dst.src: dst is part 5 (6 after .reduce) */
        int dpart = reduce ? 6 : 5;
        int to_global = P->n > dpart && !strcmp(P->q[dpart], "global");
        if (to_global) {
            pi_ext *x = lw_ext(L, in, PX_TENSOR_STORE);
            if (!x || lw_need_ops(L, it, "cp.async.bulk.tensor (store)", 2, 3))
                return -1;
            x->mode = (uint8_t)load_mode(P);
            x->sub = -1;
            if (reduce) {
                x->sub = (int8_t)redop_of(P);
                if (x->sub < 0)
                    return lw_unsupported(L, it, ": no reduction operation");
            }
            if (tensor_operand(L, lw_op(L, it, 0), x))
                return -1;
            x->a0 = lw_addr(L, lw_op(L, it, 1));
            return 0;
        }
        if (reduce)
            return lw_unsupported(L, it, "");
        pi_ext *x = lw_ext(L, in, PX_TENSOR_LOAD);
        if (!x || lw_need_ops(L, it, "cp.async.bulk.tensor (load)", 3, 6))
            return -1;
        x->mode = (uint8_t)load_mode(P);
        x->space = lw_has(P, "shared::cluster") ? PI_SP_SHARED_CLUSTER : PI_SP_SHARED;
        x->flags = (uint8_t)lw_has(P, "multicast::cluster");
        const char *cg = NULL;
        x->sub = 0;
        if (lw_has_prefix(P, "cta_group::", &cg))
            x->sub = (int8_t)(cg[11] - '0');
        x->a0 = lw_addr(L, lw_op(L, it, 0));
        if (tensor_operand(L, lw_op(L, it, 1), x))
            return -1;
        x->a2 = lw_addr(L, lw_op(L, it, 2));
        int k = 3;
        if (k < it->nops && lw_op(L, it, k)->kind == PTX_OP_VEC) {
            if (im2col_info(L, lw_op(L, it, k), x))
                return -1;
            k++;
        }
        if (x->flags) {
            if (k >= it->nops)
                return lw_unsupported(L, it, ": .multicast::cluster needs a ctaMask operand");
            x->s0 = lw_src(L, lw_op(L, it, k), 16);
        }
        return 0;
    }
    if (bulk) {
        /* cp{.reduce}.async.bulk.dst.src... */
        if (P->n < 5)
            return lw_unsupported(L, it, "");
        const char *d = P->q[reduce ? 4 : 3], *s = P->q[reduce ? 5 : 4];
        if (reduce) {
            pi_ext *x = lw_ext(L, in, PX_BULK_REDUCE);
            if (!x || lw_need_ops(L, it, "cp.reduce.async.bulk", 3, 4))
                return -1;
            x->sub = (int8_t)redop_of(P);
            x->sub2 = (int8_t)rtype_of(P);
            if (x->sub < 0 || x->sub2 < 0)
                return lw_unsupported(L, it, ": no reduction operation or type");
            x->flags = (uint8_t)lw_has(P, "noftz");
            x->space = !strcmp(d, "global") ? PI_SP_GLOBAL : PI_SP_SHARED_CLUSTER;
            x->a0 = lw_addr(L, lw_op(L, it, 0));
            x->a1 = lw_addr(L, lw_op(L, it, 1));
            x->s0 = lw_src(L, lw_op(L, it, 2), 32);
            if (x->space != PI_SP_GLOBAL) {
                if (it->nops < 4)
                    return lw_unsupported(L, it, ": the mbarrier operand is missing");
                x->a2 = lw_addr(L, lw_op(L, it, 3));
            }
            return 0;
        }
        pi_ext *x = lw_ext(L, in, PX_BULK_COPY);
        if (!x || lw_need_ops(L, it, "cp.async.bulk", 3, 6))
            return -1;
        if (!strcmp(d, "global"))
            x->sub = PA_BULK_S2G;
        else if (!strcmp(s, "global"))
            x->sub = !strcmp(d, "shared::cta") ? PA_BULK_G2S_CTA : PA_BULK_G2S_CLUSTER;
        else
            x->sub = PA_BULK_S2S;
        x->a0 = lw_addr(L, lw_op(L, it, 0));
        x->a1 = lw_addr(L, lw_op(L, it, 1));
        x->s0 = lw_src(L, lw_op(L, it, 2), 32);
        int k = 3;
        if (x->sub != PA_BULK_S2G) {
            if (it->nops < 4)
                return lw_unsupported(L, it, ": the mbarrier operand is missing");
            x->a2 = lw_addr(L, lw_op(L, it, 3));
            k = 4;
        }
        x->flags = (uint8_t)(lw_has(P, "multicast::cluster") | (lw_has(P, "cp_mask") << 1) |
                             (lw_has(P, "L2::cache_hint") << 2));
        if ((x->flags & 1) && k < it->nops)
            x->s1 = lw_src(L, lw_op(L, it, k++), 16);
        if (x->flags & 4)
            k++;
        if ((x->flags & 2) && k < it->nops)
            x->s2 = lw_src(L, lw_op(L, it, k++), 16);
        return 0;
    }
    /* non-bulk cp.async */
    if (lw_has(P, "commit_group"))
        return lw_ext(L, in, PX_CP_COMMIT) ? 0 : -1;
    if (lw_has(P, "wait_group")) {
        pi_ext *x = lw_ext(L, in, PX_CP_WAIT);
        if (!x || lw_need_ops(L, it, "cp.async.wait_group", 1, 1))
            return -1;
        x->s0 = lw_src(L, lw_op(L, it, 0), 32);
        return 0;
    }
    if (lw_has(P, "wait_all"))
        return lw_ext(L, in, PX_CP_WAIT_ALL) ? 0 : -1;
    if (lw_has(P, "mbarrier")) {
        pi_ext *x = lw_ext(L, in, PX_CP_MBAR_ARRIVE);
        if (!x || lw_need_ops(L, it, "cp.async.mbarrier.arrive", 1, 1))
            return -1;
        x->flags = (uint8_t)lw_has(P, "noinc");
        x->a0 = lw_addr(L, lw_op(L, it, 0));
        return 0;
    }
    if (lw_has(P, "ca") || lw_has(P, "cg")) {
        pi_ext *x = lw_ext(L, in, PX_CP_ASYNC);
        if (!x || lw_need_ops(L, it, "cp.async", 3, 5))
            return -1;
        x->flags = (uint8_t)lw_has(P, "cg");
        const char *pf = NULL;
        x->sub2 = 0;
        if (lw_has_prefix(P, "L2::64B", &pf))
            x->sub2 = 1;
        else if (lw_has_prefix(P, "L2::128B", &pf))
            x->sub2 = 2;
        else if (lw_has_prefix(P, "L2::256B", &pf))
            x->sub2 = 3;
        x->a0 = lw_addr(L, lw_op(L, it, 0));
        x->a1 = lw_addr(L, lw_op(L, it, 1));
        x->s0 = lw_src(L, lw_op(L, it, 2), 32);
        int hint = lw_has(P, "L2::cache_hint");
        int k = 3;
        int last = it->nops - (hint ? 1 : 0);
        if (k < last) {
            const ptx_operand *o = lw_op(L, it, k);
            uint8_t c = 32;
            if (o->kind == PTX_OP_REG)
                lw_find_reg(L, o->name, L->item_scope[L->item], &c);
            if (c == 1) {
                x->s2 = lw_src(L, o, 1);          /* ignore-src predicate */
            } else {
                x->s1 = lw_src(L, o, 32);         /* src-size */
            }
        }
        x->sub = (int8_t)hint;
        return 0;
    }
    return lw_unsupported(L, it, "");
}

int lw_fence(lw *L, const ptx_item *it, const parts *P)
{
    pi_ins *in = lw_emit(L);
    if (!in)
        return -1;
    if (!strcmp(P->q[0], "membar")) {
        pi_ext *x = lw_ext(L, in, PX_FENCE);
        if (!x)
            return -1;
        x->sub = 1;
        x->sub2 = lw_has(P, "cta") ? 0 : lw_has(P, "sys") ? 3 : 2;
        return 0;
    }
    if (lw_has(P, "proxy")) {
        if (lw_has(P, "alias"))          /* orders accesses through aliases of one memory: the model has none */
            return 0;
        const char *tm = NULL;
        if (lw_has_prefix(P, "tensormap::generic", &tm)) {
            pi_ext *x = lw_ext(L, in, PX_FENCE_TENSORMAP);
            if (!x)
                return -1;
            x->sub = (int8_t)lw_has(P, "acquire");
            if (x->sub) {
                if (lw_need_ops(L, it, "fence.proxy.tensormap::generic.acquire", 2, 2))
                    return -1;
                x->a0 = lw_addr(L, lw_op(L, it, 0));
                x->s0 = lw_src(L, lw_op(L, it, 1), 32);
            }
            return 0;
        }
        if (lw_has(P, "async") || lw_has_prefix(P, "async::", NULL) || lw_has(P, "async::generic")) {
            pi_ext *x = lw_ext(L, in, PX_FENCE_PROXY_ASYNC);
            if (!x)
                return -1;
            /* .sync_restrict::shared::{cta,cluster}: the uni-directional fence restricted to that
               space, taken as the (stronger, both directions) proxy fence of the space */
            x->sub = lw_has(P, "global") ? PA_FENCE_GLOBAL :
                     lw_has(P, "shared::cta") || lw_has(P, "sync_restrict::shared::cta") ? PA_FENCE_SHARED_CTA :
                     lw_has(P, "shared::cluster") || lw_has(P, "sync_restrict::shared::cluster")
                         ? PA_FENCE_SHARED_CLUSTER : PA_FENCE_ALL;
            return 0;
        }
        return lw_unsupported(L, it, "");
    }
    if (lw_has(P, "mbarrier_init")) {
        return lw_ext(L, in, PX_FENCE_MBAR_INIT) ? 0 : -1;
    }
    pi_ext *x = lw_ext(L, in, PX_FENCE);
    if (!x)
        return -1;
    x->sub = (int8_t)(lw_has(P, "sc") ? PA_HB_FENCE_SC : lw_has(P, "acquire") ? PA_HB_FENCE_ACQUIRE :
                      lw_has(P, "release") ? PA_HB_FENCE_RELEASE : PA_HB_FENCE_ACQ_REL);
    x->sub2 = lw_has(P, "cta") ? 0 : lw_has(P, "cluster") ? 1 : lw_has(P, "sys") ? 3 : 2;
    if (lw_has(P, "sync_restrict::shared::cta"))          /* fence.release.sync_restrict (hb.c) */
        x->sub = PA_HB_FENCE_RESTRICT_RELEASE;
    else if (lw_has(P, "sync_restrict::shared::cluster")) /* fence.acquire.sync_restrict */
        x->sub = PA_HB_FENCE_RESTRICT_ACQUIRE;
    return 0;
}

static const char *const TMAP_FIELDS[PA_FIELD_COUNT] = {
    "global_address", "rank", "box_dim", "global_dim", "global_stride", "element_stride",
    "elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode"};

int lw_tensormap(lw *L, const ptx_item *it, const parts *P)
{
    if (P->n >= 2 && !strcmp(P->q[1], "cp_fenceproxy")) {
        /* tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope.sync.aligned
           [dst], [src], 128: a warp instruction (coll.c) */
        pi_ins *in = lw_emit(L);
        pi_ext *x = in ? lw_ext(L, in, PX_TENSORMAP_CP) : NULL;
        if (!x || lw_need_ops(L, it, "tensormap.cp_fenceproxy", 3, 3))
            return -1;
        x->a0 = lw_addr(L, lw_op(L, it, 0));
        x->a1 = lw_addr(L, lw_op(L, it, 1));
        x->s0 = lw_src(L, lw_op(L, it, 2), 32);
        return 0;
    }
    if (P->n < 2 || strcmp(P->q[1], "replace"))
        return lw_unsupported(L, it, "");
    int field = -1;
    for (int f = 0; f < PA_FIELD_COUNT; f++)
        if (lw_has(P, TMAP_FIELDS[f]))
            field = f;
    if (field < 0)
        return lw_unsupported(L, it, ": no field it knows");
    pi_ins *in = lw_emit(L);
    pi_ext *x = in ? lw_ext(L, in, PX_TENSORMAP_REPLACE) : NULL;
    if (!x || lw_need_ops(L, it, "tensormap.replace", 2, 3))
        return -1;
    x->sub = (int8_t)field;
    x->space = lw_has(P, "shared::cta") ? PI_SP_SHARED : PI_SP_GLOBAL;
    x->a0 = lw_addr(L, lw_op(L, it, 0));
    if (it->nops == 3) {
        x->s1 = lw_src(L, lw_op(L, it, 1), 32);
        x->s0 = lw_src(L, lw_op(L, it, 2), 64);
    } else {
        x->s0 = lw_src(L, lw_op(L, it, 1), 64);
    }
    return 0;
}
