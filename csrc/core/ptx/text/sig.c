/* sig.c - a function's signature from its header's tokens (see sig.h):
 * `.visible .func (.param .b32 rv) f(.param .b32 a, .param .align 8 .b8 s[16])`, and the
 * same lists of a `.callprototype (.param .b32 _) _ (.param .b32 _);`. */
#include "ptx/text/sig.h"

#include <stdlib.h>
#include <string.h>

static int is_p(const ptx_module *m, uint32_t i, char c)
{
    return i < m->ntoks && m->toks[i].kind == PTX_TK_PUNCT && m->text[m->toks[i].s.off] == c;
}

static int tok_eq(const ptx_module *m, uint32_t i, const char *s)
{
    return i < m->ntoks && ptx_span_eq(m, m->toks[i].s, s);
}

static uint64_t tok_u64(const ptx_module *m, uint32_t i)
{
    char buf[32];
    const ptx_token *k = &m->toks[i];
    if (k->kind != PTX_TK_INT || k->s.len >= sizeof buf)
        return 0;
    memcpy(buf, m->text + k->s.off, k->s.len);
    buf[k->s.len] = 0;
    return strtoull(buf, NULL, 0);
}

/* bytes of a type token (.b32 -> 4), and its kind letter; 0 when it is no type */
static int type_bytes(const ptx_module *m, uint32_t i, uint8_t *kind)
{
    static const struct { const char *t; int n; char k; } T[] = {
        {".pred", 1, 'b'}, {".b8", 1, 'b'}, {".u8", 1, 'u'}, {".s8", 1, 's'}, {".b16", 2, 'b'}, {".u16", 2, 'u'},
        {".s16", 2, 's'}, {".f16", 2, 'f'}, {".bf16", 2, 'f'}, {".b32", 4, 'b'}, {".u32", 4, 'u'},
        {".s32", 4, 's'}, {".f32", 4, 'f'}, {".f16x2", 4, 'f'}, {".bf16x2", 4, 'f'}, {".b64", 8, 'b'},
        {".u64", 8, 'u'}, {".s64", 8, 's'}, {".f64", 8, 'f'}, {".b128", 16, 'b'},
    };
    for (size_t k = 0; k < sizeof T / sizeof T[0]; k++)
        if (tok_eq(m, i, T[k].t)) {
            *kind = (uint8_t)T[k].k;
            return T[k].n;
        }
    return 0;
}

/* a '(' list ')' from token *at (the '('): each entry into out (room for max); the count, or -1
   when the tokens are not such a list; *at past the ')' */
static int plist(const ptx_module *m, uint32_t *at, ptx_fparam *out, int max, int *too_many)
{
    uint32_t i = *at;
    if (!is_p(m, i, '('))
        return -1;
    i++;
    int n = 0;
    ptx_fparam cur;
    memset(&cur, 0, sizeof cur);
    int any = 0;
    uint64_t count = 1;
    for (; i < m->ntoks && !is_p(m, i, ')'); i++) {
        const ptx_token *k = &m->toks[i];
        if (k->kind == PTX_TK_EOF || is_p(m, i, '{') || is_p(m, i, ';'))
            return -1;
        uint8_t kind;
        int b;
        if (is_p(m, i, ',')) {
            if (any) {
                cur.size = (uint64_t)cur.ebytes * count;
                if (!cur.align)
                    cur.align = cur.ebytes;
                if (n < max)
                    out[n] = cur;
                else
                    *too_many = 1;
                n++;
            }
            memset(&cur, 0, sizeof cur);
            any = 0;
            count = 1;
        } else if (tok_eq(m, i, ".reg")) {
            cur.is_reg = 1;
            any = 1;
        } else if (tok_eq(m, i, ".param")) {
            any = 1;
        } else if (tok_eq(m, i, ".align") && i + 1 < m->ntoks) {
            uint64_t v = tok_u64(m, i + 1);
            cur.align = v > (1u << 31) ? 1u << 31 : (uint32_t)v;
            i++;
        } else if ((b = type_bytes(m, i, &kind)) != 0) {
            cur.ebytes = (uint8_t)b;
            cur.kind = kind;
            cur.pred = tok_eq(m, i, ".pred");
            any = 1;
        } else if (tok_eq(m, i, ".v2") || tok_eq(m, i, ".v4")) {
            cur.vec = (uint8_t)(m->text[k->s.off + 2] - '0');
        } else if (k->kind == PTX_TK_IDENT && !cur.name.len) {
            cur.name = k->s;
            any = 1;
        } else if (is_p(m, i, '[') && i + 1 < m->ntoks) {
            cur.array = 1;
            uint64_t v = tok_u64(m, i + 1);
            if (__builtin_mul_overflow(count, v, &count))
                count = UINT64_MAX / 256;
        }
    }
    if (!is_p(m, i, ')'))
        return -1;
    if (any) {
        cur.size = (uint64_t)cur.ebytes * count;
        if (!cur.align)
            cur.align = cur.ebytes;
        if (n < max)
            out[n] = cur;
        else
            *too_many = 1;
        n++;
    }
    *at = i + 1;
    return n > max ? max : n;
}

static int sig_proto(const ptx_module *m, uint32_t item, ptx_sig *sig)
{
    const ptx_item *it = &m->items[item];
    uint32_t i = it->tok0 + 1, end = it->tok0 + it->ntok;
    sig->kind = PTX_SIG_PROTO;
    if (item > 0 && m->items[item - 1].kind == PTX_ITEM_LABEL)
        sig->name = m->items[item - 1].opcode;
    if (is_p(m, i, '(')) {
        sig->nret = plist(m, &i, sig->ret, 4, &sig->too_many);
        if (sig->nret < 0)
            return -1;
    }
    if (i >= end || !tok_eq(m, i, "_"))
        return -1;
    i++;
    sig->nparam = plist(m, &i, sig->param, PTX_SIG_MAX, &sig->too_many);
    return sig->nparam < 0 ? -1 : 0;
}

int ptx_sig_at(const ptx_module *m, uint32_t item, ptx_sig *sig, ptx_fparam *params)
{
    memset(sig, 0, sizeof *sig);
    sig->param = params;
    if (item >= m->nitems || m->items[item].kind != PTX_ITEM_DIRECTIVE || !m->items[item].ntok)
        return -1;
    const ptx_item *it = &m->items[item];
    sig->header = item;
    sig->line = it->line;
    sig->col = it->col;
    uint32_t i = it->tok0;
    if (tok_eq(m, i, ".callprototype"))
        return sig_proto(m, item, sig);
    for (; i < m->ntoks && m->toks[i].kind == PTX_TK_DOT; i++) {
        if (tok_eq(m, i, ".extern"))
            sig->is_extern = 1;
        else if (tok_eq(m, i, ".weak"))
            sig->is_weak = 1;
        else if (tok_eq(m, i, ".visible"))
            sig->is_visible = 1;
        else if (tok_eq(m, i, ".func"))
            sig->kind = PTX_SIG_FUNC;
        else if (tok_eq(m, i, ".entry"))
            sig->kind = PTX_SIG_ENTRY;
    }
    if (!sig->kind)
        return -1;
    if (is_p(m, i, '(')) {
        sig->nret = plist(m, &i, sig->ret, 4, &sig->too_many);
        if (sig->nret < 0)
            return -1;
    }
    if (i >= m->ntoks || m->toks[i].kind != PTX_TK_IDENT)
        return -1;
    sig->name = m->toks[i].s;
    i++;
    if (is_p(m, i, '(')) {
        sig->nparam = plist(m, &i, sig->param, PTX_SIG_MAX, &sig->too_many);
        if (sig->nparam < 0)
            return -1;
    }
    /* the body: the first item after the header's own that opens a block, unless a ';' ends it */
    for (uint32_t k = item + 1; k < m->nitems; k++) {
        const ptx_item *x = &m->items[k];
        if (x->kind == PTX_ITEM_OPEN) {
            int depth = 0;
            sig->has_body = 1;
            sig->open = k;
            for (uint32_t j = k; j < m->nitems; j++) {
                if (m->items[j].kind == PTX_ITEM_OPEN)
                    depth++;
                else if (m->items[j].kind == PTX_ITEM_CLOSE && --depth == 0) {
                    sig->close = j;
                    break;
                }
            }
            if (!sig->close)
                sig->close = m->nitems - 1;
            break;
        }
        if (x->kind != PTX_ITEM_DIRECTIVE || !x->ntok)
            break;
        const ptx_token *t = &m->toks[x->tok0];
        if (t->kind == PTX_TK_PUNCT && m->text[t->s.off] == ';')
            break;
        if (t->kind == PTX_TK_DOT && (ptx_span_eq(m, t->s, ".func") || ptx_span_eq(m, t->s, ".entry") ||
                                      ptx_span_eq(m, t->s, ".visible") || ptx_span_eq(m, t->s, ".extern") ||
                                      ptx_span_eq(m, t->s, ".weak") || ptx_span_eq(m, t->s, ".global") ||
                                      ptx_span_eq(m, t->s, ".const") || ptx_span_eq(m, t->s, ".shared")))
            break;                 /* the next statement of the module: this one has no body */
    }
    return 0;
}

int ptx_sig_of(const ptx_module *m, ptx_span name, ptx_sig *sig, ptx_fparam *params, int *kind_out)
{
    *kind_out = 0;
    const ptx_symbol *s = ptx_lookup(m, m->text + name.off, name.len);
    if (!s)
        return -1;
    *kind_out = 1;
    if (s->cls || s->space)
        return -1;
    uint32_t item = s->item;
    if (item < m->nitems && m->items[item].kind == PTX_ITEM_LABEL)
        item++;                    /* a prototype's label: its .callprototype follows */
    if (item >= m->nitems || m->items[item].kind != PTX_ITEM_DIRECTIVE || !m->items[item].ntok)
        return -1;
    if (ptx_sig_at(m, item, sig, params))
        return -1;
    /* the symbol must be the one the header declares */
    if (sig->kind != PTX_SIG_PROTO && !(sig->name.len == name.len && !memcmp(m->text + sig->name.off,
                                                                              m->text + name.off, name.len)))
        return -1;
    return 0;
}
