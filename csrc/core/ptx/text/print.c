/* print.c - a parsed module back to canonical PTX text: one item a line, directives' tokens
   with single spaces, instructions as "pred opcode op, op, ...;" with the body indented. */
#include "ptx/text/ptx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char *p; size_t n, cap; int oom; } buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }
static void span(buf *b, const ptx_module *m, ptx_span s) { put(b, m->text + s.off, s.len); }

static void indent(buf *b, int depth)
{
    for (int i = 0; i < depth; i++)
        puts_(b, "\t");
}

static void scalar(buf *b, const ptx_module *m, const ptx_operand *o)
{
    char num[32];
    if (o->neg)
        puts_(b, o->neg == 2 ? "-" : "!");
    switch (o->kind) {
    case PTX_OP_IMM:
        snprintf(num, sizeof num, "%lld", (long long)o->imm);
        puts_(b, num);
        return;
    case PTX_OP_FIMM:
    case PTX_OP_REG:
    case PTX_OP_SYM:
    case PTX_OP_SINK:
        span(b, m, o->name);
        if (o->sel) {
            snprintf(num, sizeof num, ".%c%0*x", (o->sel & PTX_SEL_H) ? 'h' : 'b', ptx_sel_digits(o->sel),
                     o->sel & 0xFFFFu);
            puts_(b, num);
        }
        if (o->has_base == 2 && o->imm) {
            snprintf(num, sizeof num, "%+lld", (long long)o->imm);
            puts_(b, num);
        }
        return;
    default:
        return;
    }
}

static void vec(buf *b, const ptx_module *m, const ptx_operand *o)
{
    puts_(b, "{");
    for (int i = 0; i < o->nelem; i++) {
        if (i)
            puts_(b, ", ");
        scalar(b, m, &m->elems[o->elem + i]);
    }
    puts_(b, "}");
}

static void operand(buf *b, const ptx_module *m, const ptx_operand *o)
{
    char num[32];
    if (o->kind == PTX_OP_LIST) {
        puts_(b, "(");
        for (int i = 0; i < o->nelem; i++) {
            if (i)
                puts_(b, ", ");
            scalar(b, m, &m->elems[o->elem + i]);
        }
        puts_(b, ")");
        return;
    }
    if (o->kind == PTX_OP_ADDR) {
        puts_(b, "[");
        if (o->has_base) {
            span(b, m, o->name);
            if (o->imm) {
                snprintf(num, sizeof num, "%+lld", (long long)o->imm);
                puts_(b, num);
            }
        } else {
            snprintf(num, sizeof num, "%lld", (long long)o->imm);
            puts_(b, num);
        }
        if (o->nelem) {
            puts_(b, ", ");
            if (o->sampler) {
                scalar(b, m, &m->elems[o->elem - 1]);
                puts_(b, ", ");
            }
            vec(b, m, o);
        }
        puts_(b, "]");
    } else if (o->kind == PTX_OP_VEC) {
        vec(b, m, o);
    } else {
        scalar(b, m, o);
        if (o->nelem) {                     /* %r|%p */
            puts_(b, "|");
            scalar(b, m, &m->elems[o->elem]);
        }
    }
}

/* tokens of a directive with canonical spacing */
static void tokens(buf *b, const ptx_module *m, uint32_t t0, uint32_t nt)
{
    for (uint32_t i = 0; i < nt && t0 + i < m->ntoks; i++) {
        const ptx_token *k = &m->toks[t0 + i];
        if (k->kind == PTX_TK_EOF)   /* its span starts at the end of the text */
            break;
        char c = m->text[k->s.off];
        int punct = k->kind == PTX_TK_PUNCT;
        int glue_left = punct && strchr(",;)]>[<", c);
        if (i && !glue_left) {
            const ptx_token *p = &m->toks[t0 + i - 1];
            char pc = m->text[p->s.off];
            int after_open = p->kind == PTX_TK_PUNCT && strchr("([<", pc);
            if (!after_open)
                puts_(b, " ");
        }
        span(b, m, k->s);
    }
}

char *ptx_print(const ptx_module *m, size_t *outlen)
{
    buf b = {0};
    int depth = 0;
    for (uint32_t i = 0; i < m->nitems; i++) {
        const ptx_item *it = &m->items[i];
        switch (it->kind) {
        case PTX_ITEM_DIRECTIVE: {
            const ptx_token *k = &m->toks[it->tok0];
            char c = m->text[k->s.off];
            int one_punct = it->ntok == 1 && k->kind == PTX_TK_PUNCT;
            if (one_punct && c == '(') {
                puts_(&b, "(\n");
            } else if (one_punct && c == ',') {
                puts_(&b, ",\n");
            } else if (one_punct && c == ')') {
                puts_(&b, "\n)\n");
            } else if (one_punct && c == ';') {
                puts_(&b, ";\n");
            } else {
                int in_params = i > 0 && m->items[i - 1].kind == PTX_ITEM_DIRECTIVE &&
                                m->toks[m->items[i - 1].tok0].kind == PTX_TK_PUNCT &&
                                m->items[i - 1].ntok == 1 &&
                                strchr("(,", m->text[m->toks[m->items[i - 1].tok0].s.off]);
                int is_perf = depth == 0 && i > 0 && k->kind == PTX_TK_DOT &&
                              (ptx_span_eq(m, k->s, ".maxntid") ||
                               ptx_span_eq(m, k->s, ".reqntid") ||
                               ptx_span_eq(m, k->s, ".minnctapersm") ||
                               ptx_span_eq(m, k->s, ".maxnreg") ||
                               ptx_span_eq(m, k->s, ".maxclusterrank") ||
                               ptx_span_eq(m, k->s, ".reqnctapercluster") ||
                               ptx_span_eq(m, k->s, ".explicitcluster") ||
                               ptx_span_eq(m, k->s, ".noreturn"));
                indent(&b, in_params ? 1 : depth);
                tokens(&b, m, it->tok0, it->ntok);
                int next_open = i + 1 < m->nitems && m->items[i + 1].kind == PTX_ITEM_DIRECTIVE &&
                                m->items[i + 1].ntok == 1 &&
                                m->toks[m->items[i + 1].tok0].kind == PTX_TK_PUNCT;
                if (!in_params && !(next_open && !is_perf && depth == 0 &&
                                    strchr("(;", m->text[m->toks[m->items[i + 1].tok0].s.off])))
                    puts_(&b, "\n");
            }
            break;
        }
        case PTX_ITEM_LABEL:
            span(&b, m, it->opcode);
            puts_(&b, ":\n");
            break;
        case PTX_ITEM_OPEN:
            indent(&b, depth);
            puts_(&b, "{\n");
            depth++;
            break;
        case PTX_ITEM_CLOSE:
            depth = depth > 0 ? depth - 1 : 0;
            indent(&b, depth);
            puts_(&b, "}\n");
            break;
        case PTX_ITEM_INSTR:
            indent(&b, depth);
            if (it->has_pred) {
                puts_(&b, it->pred_neg ? "@!" : "@");
                span(&b, m, it->pred);
                puts_(&b, " ");
            }
            span(&b, m, it->opcode);
            for (int k = 0; k < it->nops; k++) {
                puts_(&b, k ? ", " : " ");
                operand(&b, m, &m->ops[it->op0 + k]);
            }
            puts_(&b, ";\n");
            break;
        }
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    if (!b.p)
        puts_(&b, "");
    *outlen = b.n;
    return b.p;
}
