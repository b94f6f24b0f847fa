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
    if (opcode_starts(m, it, "wgmma.mma_async.sp."))
        return "sparse wgmma (wgmma.mma_async.sp): the metadata's selection of A's elements";
    if ((opcode_starts(m, it, "bar.") || opcode_starts(m, it, "barrier.")) && opcode_has(m, it, ".red"))
        return "the barrier reductions (bar.red, barrier.red)";
    if (opcode_starts(m, it, "multimem."))
        return "multimem: a multicast object over several GPUs' memories";
    if (opcode_starts(m, it, "createpolicy.")) {
        if (opcode_has(m, it, ".range") || opcode_has(m, it, ".cvt"))
            return "the range-based and .cvt policies' values (the fractional ones are)";
        if (it->nops == 2 && m->ops[it->op0 + 1].kind != PTX_OP_FIMM)
            return "a fraction in a register (an immediate one is)";
    }
    if (opcode_starts(m, it, "st.async.") && (opcode_has(m, it, ".v2") || opcode_has(m, it, ".v4")) &&
        it->nops >= 2 && m->ops[it->op0 + 1].kind != PTX_OP_VEC)
        return "a vector store of one immediate";
    if (opcode_has(m, it, ".b128") &&
        (opcode_starts(m, it, "ld.") || opcode_starts(m, it, "st.") || opcode_starts(m, it, "mov.")))
        return "128-bit registers (.b128)";
    return NULL;
}
