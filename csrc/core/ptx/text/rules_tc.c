/* rules_tc.c - what ptxas 13.0 checks of the warp-matrix loads (wmma) and the fifth-generation
 * tensor core's data movement (tcgen05.ld / .st / .cp) beyond their syntax blocks:
 *
 * - wmma's fragments are vectors of as many registers a lane as the PTX ISA's "Matrix fragments
 *   for WMMA" tables give (ptxas: "Arguments mismatch", "Vector expected");
 * - tcgen05.ld / .st: .aligned may be left out (13.0; 13.5 requires it); .16x128b takes at most .x64, .16x256b at most .x32 ("Modifier .x128 not
 *   allowed for instruction tcgen05.ld with shape '.16x128b'"), and r holds the shape's
 *   registers (.16x64b, .32x32b, .16x32bx2: 1; .16x128b: 2; .16x256b: 4) times .num, with or
 *   without .pack::16b ("Argument vector size mismatch");
 * - tcgen05.mma: the kinds' targets and block-scale vector sizes (tcgen05_mma);
 * - tcgen05.cp: .dst_fmt before .src_fmt; .64x128b needs one of the .warpx2 multicasts, .32x128b needs .warpx4, the other
 *   shapes take none ("Modifier '.warptype' require for instruction tcgen05.cp with shape
 *   '.64x128b'", "Modifier .warpx4 not allowed ...").
 */
#include "ptx/text/check.h"
#include "sem/mma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a vector of n registers of `bits` bits (what ptxas takes for a fragment) */
static int fragment(const ptx_module *m, const ptx_operand *o, int n, int bits, const char *root,
                    const char *what, char *why, size_t cap)
{
    int ok = o && o->kind == PTX_OP_VEC && o->nelem == n;
    for (int i = 0; ok && i < n; i++) {
        const ptx_operand *e = &m->elems[o->elem + i];
        ok = e->kind == PTX_OP_REG && ptx_reg_class(m, e) == bits;
    }
    if (!ok)
        snprintf(why, cap, "%s: %s is a vector of %d %d-bit registers { } (ptxas: Arguments mismatch)", root, what,
                 n, bits);
    return !ok;
}

/* registers a lane holds of a rows x cols wmma fragment of element type t (64-bit ones for f64):
   the warp's bits over 32 lanes, but f16's A and B are eight .f16x2 registers in every shape */
static int wmma_regs(int rows, int cols, int t, int ab)
{
    if (t == SEM_T_F16 && ab)
        return 8;
    int n = rows * cols * sem_mma_type_bits(t) / 1024;
    return t == SEM_T_F64 ? n / 2 : n;
}

static int slot_pos(const ptx_match *mt, const char *name)
{
    const ptx_form *f = &ptx_forms[mt->form];
    for (int s = 0; s < f->nslots; s++)
        if (!strcmp(f->slots[s].name, name))
            return mt->slot_at[s];
    return -1;
}

static int wmma_rule(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const char *root = ptx_forms[mt->form].root;
    char buf[160];
    size_t len = it->opcode.len < sizeof buf - 1 ? it->opcode.len : sizeof buf - 1;
    memcpy(buf, m->text + it->opcode.off, len);
    buf[len] = 0;
    int types[4], nt = 0;
    unsigned sm = 0, sn = 0, sk = 0;
    for (char *q = buf, *dot; q; q = dot) {            /* each qualifier of the opcode, in order */
        if ((dot = strchr(q, '.')))
            *dot++ = 0;
        int t = sem_mma_type_of(q);
        if (t && nt < 4)
            types[nt++] = t;
        else if (q[0] == 'm' && q[1] >= '0' && q[1] <= '9')
            sscanf(q, "m%un%uk%u", &sm, &sn, &sk);
    }
    if (!nt || !sm)
        return 0;                                       /* (the syntax says what is wrong) */
    int M = (int)sm, N = (int)sn, K = (int)sk;
    int row = slot_pos(mt, "row"), col = slot_pos(mt, "col");
    if (!strcmp(root, "wmma.mma") && row >= 0 && col >= 0 && row > col) {   /* "Illegal alayout '.col'" */
        snprintf(why, cap, "wmma.mma: the layouts of this shape are .row.col, in that order%s", "");
        return 1;
    }
    if (!strcmp(root, "wmma.mma")) {
        /* .dtype.ctype (A and B .f16) or .dtype.atype.btype.ctype, A and B of one type ("Unexpected
           instruction types specified for 'wmma.mma'" for .s8 with .u8, .s4 with .u4) */
        if (nt == 4 && types[1] != types[2]) {
            snprintf(why, cap, "wmma.mma: .atype and .btype must be the same type%s", "");
            return 1;
        }
        int d = types[0], c = types[nt - 1], a = nt == 4 ? types[1] : SEM_T_F16, b = nt == 4 ? types[2] : SEM_T_F16;
        const struct { const char *name; int n, t; } fr[4] = {
            {"vd", wmma_regs(M, N, d, 0), d}, {"va", wmma_regs(M, K, a, 1), a},
            {"vb", wmma_regs(K, N, b, 1), b}, {"vc", wmma_regs(M, N, c, 0), c}};
        for (int i = 0; i < 4; i++)
            if (fragment(m, ptx_operand_named(m, it, mt, fr[i].name), fr[i].n, fr[i].t == SEM_T_F64 ? 64 : 32, root,
                         fr[i].name + 1, why, cap))
                return 1;
        return 0;
    }
    int t = types[0], n;
    if (!strcmp(root, "wmma.load.a"))
        n = wmma_regs(M, K, t, 1);
    else if (!strcmp(root, "wmma.load.b"))
        n = wmma_regs(K, N, t, 1);
    else
        n = wmma_regs(M, N, t, 0);                      /* wmma.load.c, wmma.store.d */
    return fragment(m, ptx_operand_named(m, it, mt, "r"), n, t == SEM_T_F64 ? 64 : 32, root, "r", why, cap);
}

static int tcgen05_ldst(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const char *root = ptx_forms[mt->form].root;
    const char *shape = ptx_slot_value(mt, "shape"), *num = ptx_slot_value(mt, "num");
    if (!shape || !num)
        return 0;
    if (mt->ptxas >= 135 && slot_pos(mt, "aligned") < 0) {   /* 13.0 takes it without */
        snprintf(why, cap, "%s needs .aligned (ptxas 13.5: \".aligned modifier required\")", root);
        return 1;
    }
    int x = atoi(num + 2);
    int per = !strcmp(shape, ".16x128b") ? 2 : !strcmp(shape, ".16x256b") ? 4 : 1;
    if (per * x > 128) {
        snprintf(why, cap, "%s: shape %s takes .num up to .x%d, not %s", root, shape, 128 / per, num);
        return 1;
    }
    return fragment(m, ptx_operand_named(m, it, mt, "r"), per * x, 32, root, "r", why, cap);
}

static int tcgen05_cp(const ptx_match *mt, char *why, size_t cap)
{
    const char *shape = ptx_slot_value(mt, "shape"), *mc = ptx_slot_value(mt, "multicast");
    int dst = slot_pos(mt, "dst_fmt"), src = slot_pos(mt, "src_fmt");
    if (dst >= 0 && src >= 0 && dst > src) {     /* "Illegal modifier '.b6x16_p32.b8x16'" */
        snprintf(why, cap, "tcgen05.cp: the destination format comes before the source's (%s)",
                 ".b8x16.b6x16_p32, .b8x16.b4x16_p64");
        return 1;
    }
    if (!shape)
        return 0;
    const char *want = !strcmp(shape, ".64x128b") ? ".warpx2::02_13 or .warpx2::01_23" :
                       !strcmp(shape, ".32x128b") ? ".warpx4" : NULL;
    int ok = want ? mc && strstr(want, mc) : !mc;
    if (!ok) {
        if (want)
            snprintf(why, cap, "tcgen05.cp with shape %s needs the multicast %s%s%s", shape, want,
                     mc ? ", not " : "", mc ? mc : "");
        else
            snprintf(why, cap, "tcgen05.cp with shape %s takes no multicast qualifier (%s)", shape, mc);
    }
    return !ok;
}

/* tcgen05.mma (ptxas 13.0's verdicts): .kind::i8 only on sm_100a / sm_110a ("Feature '.kind::i8' not
   supported on .target 'sm_100f'"); the block scales' vector sizes per kind (mxf8f6f4: 1X or block32,
   mxf4: 2X or block32, mxf4nvf4: 2X, 4X, block16 or block32, one required: "Modifier '.kind::mxf4'
   cannot be combined with modifier '.scale_vec::1X'"); .block16 / .block32 from PTX 8.8; on the
   family targets (sm_100f, ...) no .scale_vec::NX and no .sp with mxf4 / mxf4nvf4; disable-output-lane
   is 4 registers for .cta_group::1, 8 for ::2 */
static int tcgen05_mma(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const char *root = ptx_forms[mt->form].root;
    const char *kind = ptx_slot_value(mt, "kind"), *sv = ptx_slot_value(mt, "scale_vectorsize");
    const char *cg = ptx_slot_value(mt, "cta_group");
    if (kind && !strcmp(kind, ".kind::i8") && !ptx_target_in(m, "sm_100a sm_101a sm_110a")) {
        snprintf(why, cap, "%s .kind::i8 is supported on sm_100a, sm_110a only; this module targets %s", root,
                 m->target);
        return 1;
    }
    int block = kind && strstr(kind, "::mx") != NULL;
    if (block) {
        static const char *const ok8[] = {".scale_vec::1X", ".block32", 0};
        static const char *const ok4[] = {".scale_vec::2X", ".block32", 0};
        static const char *const ok4n[] = {".scale_vec::2X", ".scale_vec::4X", ".block16", ".block32", 0};
        const char *const *ok = !strcmp(kind, ".kind::mxf8f6f4") ? ok8 : !strcmp(kind, ".kind::mxf4") ? ok4 : ok4n;
        int fine = 0;
        for (int i = 0; ok[i]; i++)
            fine |= sv && !strcmp(sv, ok[i]);
        if (!sv ? ok == ok4n : !fine) {
            snprintf(why, cap, "%s %s takes the scale vector size%s%s", root, kind,
                     ok == ok8 ? " .scale_vec::1X or .block32 (or none)" : ok == ok4 ?
                     " .scale_vec::2X or .block32 (or none)" : " .scale_vec::2X, ::4X, .block16 or .block32",
                     sv ? "" : " (one is required)");
            return 1;
        }
        if ((!sv || sv[1] == 'b') && m->version < 88) {      /* none is .block32 */
            snprintf(why, cap, "%s: %s needs PTX ISA 8.8", root, sv ? sv : "no scale vector size (.block32)");
            return 1;
        }
        if (m->suffix == 'f' && sv && sv[1] == 's') {
            snprintf(why, cap, "%s: %s is not supported on the family target %s", root, sv, m->target);
            return 1;
        }
        if (m->suffix == 'f' && strstr(root, ".sp") && strcmp(kind, ".kind::mxf8f6f4")) {
            snprintf(why, cap, "%s %s is not supported on the family target %s", root, kind, m->target);
            return 1;
        }
    }
    const ptx_operand *dis = ptx_operand_named(m, it, mt, "disable-output-lane");
    if (dis && cg)
        return fragment(m, dis, strcmp(cg, ".cta_group::2") ? 4 : 8, 32, root, "disable-output-lane", why, cap);
    return 0;
}

int ptx_rules_tc(const ptx_module *m, const ptx_item *it, const ptx_match *mt, char *why, size_t cap)
{
    const char *root = ptx_forms[mt->form].root;
    if (!strncmp(root, "wmma.", 5))
        return wmma_rule(m, it, mt, why, cap);
    if (!strcmp(root, "tcgen05.ld") || !strcmp(root, "tcgen05.st"))
        return tcgen05_ldst(m, it, mt, why, cap);
    if (!strcmp(root, "tcgen05.cp"))
        return tcgen05_cp(mt, why, cap);
    if (!strncmp(root, "tcgen05.mma", 11))
        return tcgen05_mma(m, it, mt, why, cap);
    return 0;
}
