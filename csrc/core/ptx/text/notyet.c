/* notyet.c - the forms the checker accepts that Kernel() does not run yet, by name and
 * reason: the one list the checker warns from ("valid but not modelled yet") and the
 * lowering refuses from, so that the two never disagree (register operations have theirs
 * in the semantics library: sem_resolve). */
#include "ptx/text/check.h"

#include <string.h>

static int opcode_starts(const ptx_module *m, const ptx_item *it, const char *prefix)
{
    size_t n = strlen(prefix);
    return it->opcode.len >= n && !memcmp(m->text + it->opcode.off, prefix, n);
}

static int opcode_has(const ptx_module *m, const ptx_item *it, const char *q)
{
    size_t n = strlen(q);
    const char *s = m->text + it->opcode.off, *end = s + it->opcode.len;
    for (const char *p = s; p + n <= end; p++)
        if (!memcmp(p, q, n) && (p + n == end || p[n] == '.'))
            return 1;
    return 0;
}

const char *ptx_not_modelled(const ptx_module *m, const ptx_item *it)
{
    if (it->kind != PTX_ITEM_INSTR)
        return NULL;
    static const char *const texsurf[] = {"tex.", "tld4.", "txq.", "istypep.", "suld.", "sust.", "sured.", "suq.", 0};
    for (int i = 0; texsurf[i]; i++)
        if (opcode_starts(m, it, texsurf[i]))
            return "texture and surface instructions: no texture or surface unit is modelled";
    if (opcode_starts(m, it, "wmma."))
        return "wmma: the fragments of wmma.load, wmma.mma and wmma.store (mma.sync is)";
    if (opcode_starts(m, it, "tcgen05."))
        return "tcgen05: tensor memory and the fifth-generation tensor core";
    if (opcode_starts(m, it, "clusterlaunchcontrol."))
        return "cluster launch control: cancelling a cluster's launch";
    if ((opcode_starts(m, it, "vote.") || opcode_starts(m, it, "shfl.")) && !opcode_has(m, it, ".sync"))
        return "vote and shfl without .sync (before sm_70)";
    if (opcode_starts(m, it, "cp.reduce.async.bulk.tensor.") && opcode_has(m, it, ".tile::scatter4"))
        return "a tensor reduction in .tile::scatter4 mode (the tensor store's scatter4 is)";
    if (opcode_starts(m, it, "createpolicy.") && opcode_has(m, it, ".range"))
        return "the range-based policy's value (its block-size field, recorded on an H200, follows no rule found yet)";
    if (opcode_starts(m, it, "st.async.") && (opcode_has(m, it, ".v2") || opcode_has(m, it, ".v4")) &&
        it->nops >= 2 && m->ops[it->op0 + 1].kind != PTX_OP_VEC)
        return "a vector store of one immediate (ptxas 13.0 stores it in the first element of an integer type only "
               "and leaves the other elements' registers unset: their bytes are undefined)";
    return NULL;
}
