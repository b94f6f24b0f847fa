/* parse.c - PTX lexer and parser: module text -> tokens -> items (directives, labels,
   instructions with their operands) and a symbol table (registers, variables, params). */
#include "ptx/text/ptx.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ptx_diag_add(ptx_diags *ds, int error, int line, int col, const char *fmt, ...)
{
    if (error)
        ds->nerrors++;
    if (ds->n == ds->cap) {
        int cap = ds->cap ? ds->cap * 2 : 16;
        ptx_diag *d = realloc(ds->d, (size_t)cap * sizeof *d);
        if (!d)
            return;          /* the count above still says the module is rejected */
        ds->d = d;
        ds->cap = cap;
    }
    ptx_diag *d = &ds->d[ds->n++];
    d->error = error;
    d->line = line;
    d->col = col;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
}

void ptx_diags_free(ptx_diags *ds)
{
    free(ds->d);
    memset(ds, 0, sizeof *ds);
}

void ptx_module_free(ptx_module *m)
{
    free(m->toks);
    free(m->items);
    free(m->ops);
    free(m->elems);
    free(m->syms);
    free(m->symhash);
    free(m->symprev);
    free(m->inits);
    free(m->ivals);
    memset(m, 0, sizeof *m);
}

#define GROW(arr, n, cap)                                                        \
    ((n) < (cap) ? 0 : grow((void **)&(arr), &(cap), sizeof *(arr)))

static int grow(void **p, uint32_t *cap, size_t size)
{
    uint32_t c = *cap ? *cap * 2 : 64;
    void *q = realloc(*p, (size_t)c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* ---- lexer ---- */

/* character classes, one table lookup a byte */
enum { C_ID = 1, C_DIGIT = 2, C_HEX = 4, C_PUNCT = 8, C_SPACE = 16 };
static const uint8_t cls[256] = {
    ['\t'] = C_SPACE, ['\r'] = C_SPACE, ['\f'] = C_SPACE, ['\v'] = C_SPACE, [' '] = C_SPACE,
    ['_'] = C_ID, ['$'] = C_ID, ['%'] = C_ID,
    ['0'] = C_DIGIT | C_HEX, ['1'] = C_DIGIT | C_HEX, ['2'] = C_DIGIT | C_HEX, ['3'] = C_DIGIT | C_HEX,
    ['4'] = C_DIGIT | C_HEX, ['5'] = C_DIGIT | C_HEX, ['6'] = C_DIGIT | C_HEX, ['7'] = C_DIGIT | C_HEX,
    ['8'] = C_DIGIT | C_HEX, ['9'] = C_DIGIT | C_HEX,
    ['a'] = C_ID | C_HEX, ['b'] = C_ID | C_HEX, ['c'] = C_ID | C_HEX, ['d'] = C_ID | C_HEX,
    ['e'] = C_ID | C_HEX, ['f'] = C_ID | C_HEX, ['g'] = C_ID, ['h'] = C_ID, ['i'] = C_ID, ['j'] = C_ID,
    ['k'] = C_ID, ['l'] = C_ID, ['m'] = C_ID, ['n'] = C_ID, ['o'] = C_ID, ['p'] = C_ID, ['q'] = C_ID,
    ['r'] = C_ID, ['s'] = C_ID, ['t'] = C_ID, ['u'] = C_ID, ['v'] = C_ID, ['w'] = C_ID, ['x'] = C_ID,
    ['y'] = C_ID, ['z'] = C_ID,
    ['A'] = C_ID | C_HEX, ['B'] = C_ID | C_HEX, ['C'] = C_ID | C_HEX, ['D'] = C_ID | C_HEX,
    ['E'] = C_ID | C_HEX, ['F'] = C_ID | C_HEX, ['G'] = C_ID, ['H'] = C_ID, ['I'] = C_ID, ['J'] = C_ID,
    ['K'] = C_ID, ['L'] = C_ID, ['M'] = C_ID, ['N'] = C_ID, ['O'] = C_ID, ['P'] = C_ID, ['Q'] = C_ID,
    ['R'] = C_ID, ['S'] = C_ID, ['T'] = C_ID, ['U'] = C_ID, ['V'] = C_ID, ['W'] = C_ID, ['X'] = C_ID,
    ['Y'] = C_ID, ['Z'] = C_ID,
    [','] = C_PUNCT, [';'] = C_PUNCT, [':'] = C_PUNCT, ['['] = C_PUNCT, [']'] = C_PUNCT,
    ['{'] = C_PUNCT, ['}'] = C_PUNCT, ['('] = C_PUNCT, [')'] = C_PUNCT, ['<'] = C_PUNCT,
    ['>'] = C_PUNCT, ['+'] = C_PUNCT, ['-'] = C_PUNCT, ['!'] = C_PUNCT, ['@'] = C_PUNCT,
    ['='] = C_PUNCT, ['|'] = C_PUNCT, ['*'] = C_PUNCT,
};

static inline int ident_start(int c) { return cls[(uint8_t)c] & C_ID; }
static inline int ident_char(int c) { return cls[(uint8_t)c] & (C_ID | C_DIGIT); }
static inline int hexdig(int c) { return cls[(uint8_t)c] & C_HEX; }

/* the lexer's place in the text; tokens are made on demand, as the parser needs them */
typedef struct {
    size_t i;
    int line, col, joined;
    int eof;               /* the EOF token is made */
    ptx_diags ds;          /* lexical errors, put before the parser's when the parse ends */
} lexer;

/* append tokens to m->toks up to index q and on to the end of the statement (';', '{' or '}'),
   at most 64 more: one tight loop a statement; -1 out of memory */
static int lex_some(ptx_module *m, lexer *L, uint32_t q)
{
    const char *t = m->text;
    size_t n = m->len, i = L->i;
    int line = L->line, col = L->col, joined = L->joined;
    ptx_diags *ds = &L->ds;
    for (;;) {
        /* white space and comments */
        while (i < n) {
            char c = t[i];
            if (c == '\n') {
                line++, col = 1, i++, joined = 0;
            } else if (cls[(uint8_t)c] & C_SPACE) {
                i++, col++, joined = 0;
            } else if (c == '/' && i + 1 < n && t[i + 1] == '/') {
                while (i < n && t[i] != '\n')
                    i++;
                joined = 0;
            } else if (c == '/' && i + 1 < n && t[i + 1] == '*') {
                int l0 = line, c0 = col;
                i += 2, col += 2;
                while (i < n && !(t[i] == '*' && i + 1 < n && t[i + 1] == '/')) {
                    if (t[i] == '\n')
                        line++, col = 1;
                    else
                        col++;
                    i++;
                }
                if (i >= n) {
                    ptx_diag_add(ds, 1, l0, c0, "unterminated comment");
                    break;
                }
                i += 2, col += 2, joined = 0;
            } else {
                break;
            }
        }
        if (GROW(m->toks, m->ntoks, m->cap_toks))
            return -1;
        ptx_token *k = &m->toks[m->ntoks++];
        k->joined = (uint8_t)joined;
        k->line = line;
        k->col = col;
        k->s.off = (uint32_t)i;
        if (i >= n) {
            k->kind = PTX_TK_EOF;
            k->s.len = 0;
            L->i = i, L->line = line, L->col = col, L->joined = joined, L->eof = 1;
            return 0;
        }
        size_t j = i;
        char c = t[i];
        if (ident_start(c)) {
            while (j < n && ident_char(t[j]))
                j++;
            k->kind = PTX_TK_IDENT;
        } else if (c == '.' && j + 1 < n && (ident_char(t[j + 1]))) {
            j++;
            while (j < n && (ident_char(t[j]) || (t[j] == ':' && j + 1 < n && t[j + 1] == ':' &&
                                                  j + 2 < n && ident_char(t[j + 2])))) {
                j += t[j] == ':' ? 2 : 1;
            }
            k->kind = PTX_TK_DOT;
        } else if (c >= '0' && c <= '9') {
            if (c == '0' && j + 1 < n && (t[j + 1] == 'f' || t[j + 1] == 'F' || t[j + 1] == 'd' ||
                                          t[j + 1] == 'D') && j + 2 < n && hexdig(t[j + 2])) {
                j += 2;
                while (j < n && hexdig(t[j]))
                    j++;
                k->kind = PTX_TK_FLOAT;
            } else if (c == '0' && j + 1 < n && (t[j + 1] == 'x' || t[j + 1] == 'X')) {
                j += 2;
                while (j < n && hexdig(t[j]))
                    j++;
                k->kind = PTX_TK_INT;
            } else {
                while (j < n && (cls[(uint8_t)t[j]] & C_DIGIT))
                    j++;
                k->kind = PTX_TK_INT;
                if (j < n && t[j] == '.' && j + 1 < n && t[j + 1] >= '0' && t[j + 1] <= '9') {
                    j++;
                    while (j < n && t[j] >= '0' && t[j] <= '9')
                        j++;
                    k->kind = PTX_TK_FLOAT;
                }
                /* 1e10, 1.5e-3, 1E3: ptxas reads a decimal exponent as a double literal */
                size_t e = j + (j + 1 < n && (t[j + 1] == '+' || t[j + 1] == '-'));
                if (j < n && (t[j] == 'e' || t[j] == 'E') && e + 1 < n && t[e + 1] >= '0' && t[e + 1] <= '9') {
                    j = e + 1;
                    while (j < n && t[j] >= '0' && t[j] <= '9')
                        j++;
                    k->kind = PTX_TK_FLOAT;
                }
            }
            if (k->kind == PTX_TK_INT && j < n && (t[j] == 'U' || t[j] == 'u'))
                j++;
            if (j < n && ident_char(t[j])) {
                while (j < n && ident_char(t[j]))
                    j++;
                k->kind = PTX_TK_BAD;
            }
        } else if (c == '"') {
            j++;
            while (j < n && t[j] != '"' && t[j] != '\n')
                j++;
            k->kind = PTX_TK_STRING;
            if (j < n && t[j] == '"')
                j++;
            else
                k->kind = PTX_TK_BAD;          /* unterminated: reported below */
        } else if (cls[(uint8_t)c] & C_PUNCT) {
            j++;
            k->kind = PTX_TK_PUNCT;
        } else {
            j++;
            k->kind = PTX_TK_BAD;
        }
        k->s.len = (uint32_t)(j - i);
        if (k->kind == PTX_TK_BAD) {
            unsigned char b = (unsigned char)t[i];
            if (b == '"')
                ptx_diag_add(ds, 1, line, col, "syntax error: unterminated string");
            else if (b < 0x20 || b >= 0x7f)
                ptx_diag_add(ds, 1, line, col, "syntax error: unexpected byte 0x%02x", b);
            else
                ptx_diag_add(ds, 1, line, col, "syntax error: unexpected '%.*s'", (int)(j - i > 16 ? 16 : j - i),
                             t + i);
        }
        col += (int)(j - i);
        i = j;
        joined = 1;
        if (m->ntoks > q && (m->ntoks > q + 64 || (k->kind == PTX_TK_PUNCT &&
                                                    (c == ';' || c == '{' || c == '}'))))
            break;
    }
    L->i = i, L->line = line, L->col = col, L->joined = joined;
    return 0;
}

/* ---- parser ---- */

typedef struct {
    ptx_module *m;
    ptx_diags *ds;
    uint32_t p;            /* current token */
    int oom;
    lexer L;
} parser;

/* make the tokens up to index q (fewer at the end of the text), and on to the end of the
   statement: one tight lexing loop a statement. Out of memory, the last token becomes EOF so
   that every loop of the parser ends. */
static __attribute__((noinline)) void fill_slow(parser *P, uint32_t q)
{
    ptx_module *m = P->m;
    if (lex_some(m, &P->L, q)) {
        P->oom = 1;
        P->L.eof = 1;
        m->toks[m->ntoks - 1].kind = PTX_TK_EOF;
    }
}

static inline void fill(parser *P, uint32_t q)
{
    if (q >= P->m->ntoks && !P->L.eof)
        fill_slow(P, q);
}

/* the token at P->p; past the end, the last one (the EOF token): a loop that
   stepped over EOF reads EOF again, never past the array. The pointer is good until the
   next cur/peek/adv (the array grows): keep a copy of a token needed longer. */
static inline ptx_token *cur(parser *P)
{
    fill(P, P->p);
    if (P->p >= P->m->ntoks)
        P->p = P->m->ntoks - 1;
    return &P->m->toks[P->p];
}
/* step on, never past the EOF token; a token not lexed yet is lexed when it is read (the
   token after an instruction's ';' belongs to the next statement) */
static inline void adv(parser *P, uint32_t k)
{
    P->p += k;
    if (P->p >= P->m->ntoks && P->L.eof)
        P->p = P->m->ntoks - 1;
}
static inline ptx_token *peek(parser *P, uint32_t k)
{
    uint32_t q = P->p + k;
    fill(P, q);
    return q < P->m->ntoks ? &P->m->toks[q] : &P->m->toks[P->m->ntoks - 1];
}

/* forget the tokens from `mark` to the current one: an instruction or a label keeps spans of
   the text, not tokens, so the array holds only what directives print (and the look-ahead) */
static void drop_tokens(parser *P, uint32_t mark)
{
    ptx_module *m = P->m;
    if (P->p <= mark || mark >= m->ntoks)
        return;
    uint32_t p = P->p < m->ntoks ? P->p : m->ntoks;       /* tokens from p on are kept */
    memmove(&m->toks[mark], &m->toks[p], (size_t)(m->ntoks - p) * sizeof *m->toks);
    m->ntoks -= p - mark;
    P->p -= p - mark;
}

static int is_punct(const ptx_module *m, const ptx_token *k, char c)
{
    return k->kind == PTX_TK_PUNCT && m->text[k->s.off] == c;
}

static int tok_is(const ptx_module *m, const ptx_token *k, const char *lit)
{
    return ptx_span_eq(m, k->s, lit);
}

static void err(parser *P, const ptx_token *k, const char *fmt, const char *arg)
{
    char buf[200];
    snprintf(buf, sizeof buf, fmt, arg);
    ptx_diag_add(P->ds, 1, k->line, k->col, "%s", buf);
}

static void tok_text(const ptx_module *m, const ptx_token *k, char *buf, size_t cap)
{
    size_t n = k->s.len < cap - 1 ? k->s.len : cap - 1;
    memcpy(buf, m->text + k->s.off, n);
    buf[n] = 0;
    if (k->kind == PTX_TK_EOF)
        snprintf(buf, cap, "end of file");
}

static void expected(parser *P, const char *what)
{
    char got[64];
    tok_text(P->m, cur(P), got, sizeof got);
    char buf[200];
    snprintf(buf, sizeof buf, "syntax error: expected %s, found '%s'", what, got);
    ptx_diag_add(P->ds, 1, cur(P)->line, cur(P)->col, "%s", buf);
}

/* skip to just after the next ';' (or to a '}' / EOF) after a syntax error */
static void recover(parser *P)
{
    while (cur(P)->kind != PTX_TK_EOF && !is_punct(P->m, cur(P), ';') &&
           !is_punct(P->m, cur(P), '}'))
        adv(P, 1);
    if (is_punct(P->m, cur(P), ';'))
        adv(P, 1);
}

static ptx_item *new_item(parser *P, int kind, const ptx_token *at)
{
    ptx_module *m = P->m;
    if (GROW(m->items, m->nitems, m->cap_items)) {
        P->oom = 1;
        return NULL;
    }
    ptx_item *it = &m->items[m->nitems++];
    memset(it, 0, sizeof *it);
    it->kind = (uint8_t)kind;
    it->line = at->line;
    it->col = at->col;
    return it;
}

static int64_t parse_int(const ptx_module *m, const ptx_token *k, int *ok)
{
    const char *s = m->text + k->s.off;
    uint64_t v = 0;
    size_t i = 0, n = k->s.len;
    *ok = 1;
    if (n > 1 && s[n - 1] == 'U')
        n--;
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        for (i = 2; i < n; i++) {
            int d = s[i] <= '9' ? s[i] - '0' : (s[i] | 32) - 'a' + 10;
            if (v >> 60)
                *ok = 0;
            v = v * 16 + (uint64_t)d;
        }
    } else {
        for (i = 0; i < n; i++) {
            uint64_t nv = v * 10 + (uint64_t)(s[i] - '0');
            if (v > UINT64_MAX / 10 || nv < v)
                *ok = 0;
            v = nv;
        }
    }
    return (int64_t)v;
}

static uint32_t sym_key(const char *p, size_t n, int ranged)
{
    uint32_t h = 2166136261u ^ (uint32_t)ranged;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 16777619u;
    return h;
}

/* the slot of (name, ranged): the one holding it, or the empty one where it goes */
static uint32_t *sym_slot(const ptx_module *m, const char *p, size_t n, int ranged)
{
    uint32_t mask = m->symhash_cap - 1;
    for (uint32_t i = sym_key(p, n, ranged) & mask;; i = (i + 1) & mask) {
        uint32_t *slot = &m->symhash[i];
        if (!*slot)
            return slot;
        const ptx_symbol *s = &m->syms[*slot - 1];
        if (s->name.len == n && (s->range != 0) == ranged && !memcmp(m->text + s->name.off, p, n))
            return slot;
    }
}

static int sym_index(ptx_module *m, uint32_t i)
{
    if (2 * (m->symhash_n + 1) > m->symhash_cap) {
        uint32_t cap = m->symhash_cap ? 2 * m->symhash_cap : 64, *old = m->symhash, oldcap = m->symhash_cap;
        uint32_t *h = calloc(cap, sizeof *h);
        if (!h)
            return -1;
        m->symhash = h;
        m->symhash_cap = cap;
        for (uint32_t k = 0; k < oldcap; k++)       /* the chains stay in symprev */
            if (old[k]) {
                const ptx_symbol *s = &m->syms[old[k] - 1];
                *sym_slot(m, m->text + s->name.off, s->name.len, s->range != 0) = old[k];
            }
        free(old);
    }
    const ptx_symbol *s = &m->syms[i];
    uint32_t *slot = sym_slot(m, m->text + s->name.off, s->name.len, s->range != 0);
    m->symhash_n += !*slot;
    m->symprev[i] = *slot;
    *slot = i + 1;
    return 0;
}

static void add_symbol(parser *P, ptx_span name, int cls, uint32_t range, char space)
{
    ptx_module *m = P->m;
    if (m->nsyms == m->cap_syms) {
        uint32_t cap = m->cap_syms;
        if (GROW(m->syms, m->nsyms, m->cap_syms)) {
            P->oom = 1;
            return;
        }
        uint32_t *prev = realloc(m->symprev, (size_t)m->cap_syms * sizeof *prev);
        if (!prev) {
            m->cap_syms = cap;
            P->oom = 1;
            return;
        }
        m->symprev = prev;
    }
    ptx_symbol *s = &m->syms[m->nsyms];
    memset(s, 0, sizeof *s);
    s->cls = (uint8_t)cls;
    s->name = name;
    s->range = range;
    s->space = space;
    s->kind = 0;
    if (sym_index(m, m->nsyms)) {
        P->oom = 1;
        return;
    }
    m->nsyms++;
}

/* The latest symbol `name` names: itself, or an element of a range (%r<16>: %r0 .. %r15, no
   leading zero). Hashed by name; the same answer as a scan from the last symbol back. */
const ptx_symbol *ptx_lookup(const ptx_module *m, const char *name, size_t len)
{
    if (!m->symhash_cap)
        return NULL;
    uint32_t best = 0;                         /* index + 1 */
    uint32_t *slot = sym_slot(m, name, len, 0);
    if (*slot)
        best = *slot;
    /* a range's name is a prefix whose rest is all digits: try each split of the trailing digits */
    size_t d = len;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    for (size_t k = d ? d : 1; k < len; k++) {
        uint64_t v = 0;
        size_t j;
        for (j = k; j < len && v <= UINT32_MAX; j++)      /* a range holds at most 2^32 - 1 names */
            v = v * 10 + (uint64_t)(name[j] - '0');
        if (j != len || (name[k] == '0' && len > k + 1))
            continue;
        for (uint32_t i = *sym_slot(m, name, k, 1); i && i > best; i = m->symprev[i - 1])
            if (v < m->syms[i - 1].range) {
                best = i;
                break;
            }
    }
    return best ? &m->syms[best - 1] : NULL;
}

/* Whether the block that item `decl` stands in is still open at item `use` (use > decl). */
static int encloses(const ptx_module *m, uint32_t decl, uint32_t use)
{
    int depth = 0;
    for (uint32_t i = decl + 1; i < use && i < m->nitems; i++) {
        if (m->items[i].kind == PTX_ITEM_OPEN)
            depth++;
        else if (m->items[i].kind == PTX_ITEM_CLOSE && --depth < 0)
            return 0;
    }
    return 1;
}

/* The latest symbol `name` names among those whose block is open at `item`: itself, or an
   element of a range (a0 of `.reg .b32 a<14>;` in one `{ }` block, not of `.reg .f16 a<2>;` in
   a later one); else ptx_lookup's answer. */
const ptx_symbol *ptx_lookup_at(const ptx_module *m, const char *name, size_t len, uint32_t item)
{
    if (!m->symhash_cap)
        return NULL;
    uint32_t best = 0;                         /* index + 1 */
    for (uint32_t i = *sym_slot(m, name, len, 0); i; i = m->symprev[i - 1]) {
        const ptx_symbol *s = &m->syms[i - 1];
        if (s->item < item && encloses(m, s->item, item)) {
            best = i;
            break;
        }
    }
    size_t d = len;                            /* each split of the trailing digits, as ptx_lookup */
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    for (size_t k = d ? d : 1; k < len; k++) {
        uint64_t v = 0;
        size_t j;
        for (j = k; j < len && v <= UINT32_MAX; j++)
            v = v * 10 + (uint64_t)(name[j] - '0');
        if (j != len || (name[k] == '0' && len > k + 1))
            continue;
        for (uint32_t i = *sym_slot(m, name, k, 1); i && i > best; i = m->symprev[i - 1]) {
            const ptx_symbol *s = &m->syms[i - 1];
            if (v < s->range && s->item < item && encloses(m, s->item, item)) {
                best = i;
                break;
            }
        }
    }
    return best ? &m->syms[best - 1] : ptx_lookup(m, name, len);
}

static int type_class(const ptx_module *m, const ptx_token *k)
{
    static const struct { const char *t; int c; } tab[] = {
        {".pred", 1}, {".b8", 8}, {".u8", 8}, {".s8", 8}, {".b16", 16}, {".u16", 16}, {".s16", 16},
        {".f16", 16}, {".bf16", 16}, {".b32", 32}, {".u32", 32}, {".s32", 32}, {".f32", 32},
        {".f16x2", 32}, {".bf16x2", 32}, {".b64", 64}, {".u64", 64}, {".s64", 64}, {".f64", 64},
        {".b128", 128},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (tok_is(m, k, tab[i].t))
            return tab[i].c;
    return -1;
}

static int scalar(parser *P, ptx_operand *o);

#define PTX_MAX_DIMS 8           /* dimensions of an array variable */

/* The [N][M].. of a variable, from the '[': dims[] (an unsized first `[]` is 0); -1 after a
   syntax error (reported) */
static int dimensions(parser *P, uint64_t *dims, int *ndims)
{
    ptx_module *m = P->m;
    while (is_punct(m, cur(P), '[')) {
        adv(P, 1);
        uint64_t v = 0;
        if (cur(P)->kind == PTX_TK_INT) {
            int ok;
            v = (uint64_t)parse_int(m, cur(P), &ok);
            if (!ok) {
                char t[64];
                tok_text(m, cur(P), t, sizeof t);
                err(P, cur(P), "the array size %s does not fit in 64 bits", t);
                return -1;
            }
            adv(P, 1);
        } else if (*ndims || !is_punct(m, cur(P), ']')) {
            expected(P, *ndims ? "an array size (only the first dimension may be left out)" : "an array size");
            return -1;
        }
        if (!is_punct(m, cur(P), ']')) {
            expected(P, "']' after the array size");
            return -1;
        }
        if (*ndims == PTX_MAX_DIMS) {
            err(P, cur(P), "an array has at most 8 dimensions%s", "");
            return -1;
        }
        adv(P, 1);
        dims[(*ndims)++] = v;
    }
    return 0;
}

typedef struct {
    uint64_t dims[PTX_MAX_DIMS], stride[PTX_MAX_DIMS];   /* stride: elements a step of dims[k] */
    int ndims;
    uint64_t top;                                        /* values of the outermost { } */
} init_shape;

/* one value of an initialiser: an integer, a float, name(+offset) or generic(name(+offset)) */
static int init_value(parser *P, ptx_ival *iv)
{
    ptx_module *m = P->m;
    memset(iv, 0, sizeof *iv);
    if (cur(P)->kind == PTX_TK_IDENT && tok_is(m, cur(P), "generic") && is_punct(m, peek(P, 1), '(')) {
        adv(P, 2);
        iv->generic = 1;
        if (scalar(P, &iv->v))
            return -1;
        if (!is_punct(m, cur(P), ')')) {
            expected(P, "')' after generic(name");
            return -1;
        }
        adv(P, 1);
        while (is_punct(m, cur(P), '+') && peek(P, 1)->kind == PTX_TK_INT) {   /* generic(a)+4, as ptxas takes */
            int ok;
            iv->v.imm = (int64_t)((uint64_t)iv->v.imm + (uint64_t)parse_int(m, peek(P, 1), &ok));
            adv(P, 2);
        }
    } else if (is_punct(m, cur(P), '{')) {
        err(P, cur(P), "initial value type mismatch: a single value is expected here, not '{'%s", "");
        return -1;
    } else if (scalar(P, &iv->v)) {
        return -1;
    }
    const ptx_operand *o = &iv->v;
    if (o->kind == PTX_OP_REG || o->kind == PTX_OP_SINK || o->neg || (iv->generic && o->kind != PTX_OP_SYM)) {
        ptx_diag_add(P->ds, 1, o->line, o->col, "invalid initial value '%.*s': a constant or the address of a "
                     "variable is expected", (int)(o->name.len > 64 ? 64 : o->name.len), m->text + o->name.off);
        return -1;
    }
    return 0;
}

static int add_ival(parser *P, const ptx_ival *iv)
{
    ptx_module *m = P->m;
    if (GROW(m->ivals, m->nivals, m->cap_ivals)) {
        P->oom = 1;
        return -1;
    }
    m->ivals[m->nivals++] = *iv;
    return 0;
}

/* the values of dimension `level` of the array (a single value past the last), the first at
   element `base` of the flattened array; -1 after an error (reported) */
static int init_list(parser *P, init_shape *S, int level, uint64_t base)
{
    ptx_module *m = P->m;
    if (level == S->ndims) {
        ptx_ival iv;
        if (init_value(P, &iv))
            return -1;
        iv.index = base;
        return add_ival(P, &iv);
    }
    if (!is_punct(m, cur(P), '{')) {
        char t[64];
        tok_text(m, cur(P), t, sizeof t);
        err(P, cur(P), "initial value type mismatch: an array's values are given in { }, found '%s'", t);
        return -1;
    }
    adv(P, 1);
    for (uint64_t n = 0;; n++) {
        uint64_t at;
        if (S->dims[level] && n == S->dims[level]) {
            char t[64];
            snprintf(t, sizeof t, "%llu", (unsigned long long)S->dims[level]);
            err(P, cur(P), "more initial values than the %s elements of the array's dimension", t);
            return -1;
        }
        if (__builtin_mul_overflow(n, S->stride[level], &at) || __builtin_add_overflow(base, at, &at)) {
            err(P, cur(P), "the initialiser's element index does not fit in 64 bits%s", "");
            return -1;
        }
        if (init_list(P, S, level + 1, at))
            return -1;
        if (is_punct(m, cur(P), ',')) {
            adv(P, 1);
            continue;
        }
        if (!is_punct(m, cur(P), '}')) {
            expected(P, "',' or '}' in the initialiser");
            return -1;
        }
        adv(P, 1);
        if (level == 0)
            S->top = n + 1;
        return 0;
    }
}

/* `= value` or `= {..}` of variable `sym` (UINT32_MAX: none named), from after the '=' */
static int initialiser(parser *P, uint32_t sym, const uint64_t *dims, int ndims, uint32_t item)
{
    ptx_module *m = P->m;
    init_shape S;
    memset(&S, 0, sizeof S);
    S.ndims = ndims;
    for (int k = ndims - 1; k >= 0; k--) {
        S.dims[k] = dims[k];
        S.stride[k] = k == ndims - 1 ? 1 : S.stride[k + 1] * (dims[k + 1] ? dims[k + 1] : 1);
    }
    uint32_t val0 = m->nivals;
    if (init_list(P, &S, 0, 0))
        return -1;
    if (sym == UINT32_MAX)
        return 0;
    ptx_symbol *s = &m->syms[sym];
    if (ndims && !dims[0] && __builtin_mul_overflow(S.top, S.stride[0], &s->count)) {
        err(P, cur(P), "the initialised array's size does not fit in 64 bits%s", "");
        return -1;
    }
    if (GROW(m->inits, m->ninits, m->cap_inits)) {
        P->oom = 1;
        return -1;
    }
    ptx_init *in = &m->inits[m->ninits++];
    in->sym = sym;
    in->item = item;
    in->val0 = val0;
    in->nval = m->nivals - val0;
    in->braced = ndims > 0;
    return 0;
}

/* after an error in an initialiser or array size: on over what can belong to one (numbers, names,
   ',' '{' '}' '-' '+' '(' ')' '[' ']'), through its ';'; never into the next directive or
   instruction name's qualifiers */
static void skip_declaration(parser *P)
{
    ptx_module *m = P->m;
    for (;;) {
        const ptx_token *k = cur(P);
        if (k->kind == PTX_TK_EOF)
            return;
        if (is_punct(m, k, ';')) {
            adv(P, 1);
            return;
        }
        if (k->kind != PTX_TK_INT && k->kind != PTX_TK_FLOAT && k->kind != PTX_TK_IDENT &&
            !(k->kind == PTX_TK_PUNCT && strchr(",{}-+()[]", m->text[k->s.off])))
            return;
        if (k->kind == PTX_TK_IDENT && peek(P, 1)->kind == PTX_TK_DOT && peek(P, 1)->joined)
            return;             /* an instruction: `add.u32 ...` */
        adv(P, 1);
    }
}

/* a declaration: `.reg .b32 %r<16>;`, `.shared .align 8 .b8 smem[1024];`, `.param .u64 p`
   (a parameter ends at ',' or ')'), `.global .b32 t[2] = {1, 2};`. Records the names with
   their sizes and the initialisers' values; the item keeps the tokens. */
static void declaration(parser *P, int in_params)
{
    ptx_module *m = P->m;
    ptx_token first_ = *cur(P), *first = &first_;
    ptx_item *it = new_item(P, PTX_ITEM_DIRECTIVE, first);
    if (!it)
        return;
    uint32_t item = m->nitems - 1;
    it->tok0 = P->p;
    int is_reg = tok_is(m, first, ".reg");
    char space = tok_is(m, first, ".shared") ? 's' : tok_is(m, first, ".global") ? 'g' :
                 tok_is(m, first, ".param") ? 'p' : tok_is(m, first, ".const") ? 'c' :
                 tok_is(m, first, ".local") ? 'l' : 0;
    for (uint32_t q = 0; !space && peek(P, q)->kind == PTX_TK_DOT; q++)
        space = tok_is(m, peek(P, q), ".shared") ? 's' : tok_is(m, peek(P, q), ".global") ? 'g' : 0;
    int cls = 0, kind = 'b';
    int want_name = 1;
    uint32_t align = 0;
    uint32_t sym = UINT32_MAX;                 /* the variable named last */
    uint64_t dims[PTX_MAX_DIMS];
    int ndims = 0;
    adv(P, 1);
    while (cur(P)->kind != PTX_TK_EOF) {
        ptx_token k_ = *cur(P), *k = &k_;
        if (is_punct(m, k, ';')) {
            if (in_params) {
                expected(P, "',' or ')' after the parameter");
                break;
            }
            adv(P, 1);
            break;
        }
        if (in_params && (is_punct(m, k, ',') || is_punct(m, k, ')')))
            break;
        if (is_punct(m, k, '}') || is_punct(m, k, '{') ||
            (k->kind == PTX_TK_DOT && want_name == 0 && !in_params &&
             (tok_is(m, k, ".reg") || tok_is(m, k, ".entry")))) {
            expected(P, in_params ? "',' or ')' after the parameter" : "';' after the declaration");
            break;
        }
        if (k->kind == PTX_TK_STRING || k->kind == PTX_TK_FLOAT) {
            expected(P, "a name, type or state space in the declaration");
            recover(P);
            break;
        }
        if (!want_name && (k->kind == PTX_TK_IDENT || k->kind == PTX_TK_INT || k->kind == PTX_TK_DOT)) {
            /* after a name only [N], = .., ',' or the end: what follows is the next statement */
            expected(P, in_params ? "',' or ')' after the parameter" : "';' after the declaration");
            break;
        }
        if (k->kind == PTX_TK_DOT) {
            int c = type_class(m, k);
            if (c > 0) {
                cls = c;
                char t = m->text[k->s.off + 1];
                kind = t == 'f' || (t == 'b' && m->text[k->s.off + 2] == 'f') ? 'f' : t == 's' || t == 'u' ? t : 'b';
                if (kind == 'f' && k->s.len > 3 && m->text[k->s.off + k->s.len - 2] == 'x')
                    kind = 'x';            /* .f16x2: a packed pair, its own kind */
            } else if (tok_is(m, k, ".texref") || tok_is(m, k, ".samplerref") || tok_is(m, k, ".surfref")) {
                kind = m->text[k->s.off + 1] == 't' ? 'T' : m->text[k->s.off + 2] == 'a' ? 'S' : 'U';
            }
            if (tok_is(m, k, ".align") && peek(P, 1)->kind == PTX_TK_INT) {
                int ok;
                uint64_t v = (uint64_t)parse_int(m, peek(P, 1), &ok);
                align = !ok || v > 1u << 31 ? 1u << 31 : (uint32_t)v;
                adv(P, 1);
            }
        } else if (k->kind == PTX_TK_IDENT && want_name) {
            uint32_t range = 0;
            int declares = 1;
            if (is_punct(m, peek(P, 1), '<') && peek(P, 2)->kind == PTX_TK_INT &&
                is_punct(m, peek(P, 3), '>')) {
                int ok;
                uint64_t v = (uint64_t)parse_int(m, peek(P, 2), &ok);
                if (!ok || v > UINT32_MAX) {   /* ptxas: "Constant overflow" */
                    char t[64];
                    tok_text(m, peek(P, 2), t, sizeof t);
                    err(P, peek(P, 2), "the register range <%s> does not fit in 32 bits (at most 4294967295 "
                        "names)", t);
                    declares = 0;
                }
                range = (uint32_t)v;
                declares &= v > 0;             /* %r<0> names no register */
                adv(P, 3);
            }
            if (declares) {
                add_symbol(P, k->s, is_reg ? cls : 0, range, space);
                if (P->oom)
                    break;
                sym = m->nsyms - 1;
                ptx_symbol *s = &m->syms[sym];
                s->ebytes = (uint8_t)(cls >= 8 ? cls / 8 : cls ? 1 : 0);
                s->array = 0;
                s->count = 1;
                s->align = align;
                s->item = item;
                s->line = k->line;
                s->col = k->col;
                s->kind = (char)kind;
            } else {
                sym = UINT32_MAX;
            }
            want_name = 0;
            ndims = 0;
        } else if (is_punct(m, k, ',')) {
            want_name = 1;
        } else if (is_punct(m, k, '[')) {
            if (dimensions(P, dims, &ndims)) {
                skip_declaration(P);
                break;
            }
            uint64_t count = 1;
            for (int d = 0; d < ndims; d++)
                if (__builtin_mul_overflow(count, dims[d], &count)) {
                    err(P, k, "the array's size does not fit in 64 bits%s", "");
                    skip_declaration(P);
                    goto done;
                }
            if (sym != UINT32_MAX) {
                m->syms[sym].array = 1;
                m->syms[sym].count = count;
            }
            continue;
        } else if (is_punct(m, k, '=')) {
            adv(P, 1);
            if (initialiser(P, sym, dims, ndims, item)) {
                skip_declaration(P);
                break;
            }
            continue;
        }
        adv(P, 1);
    }
done:
    it = &m->items[item];
    it->ntok = P->p - it->tok0;
    if (want_name && !P->oom)
        err(P, first, "syntax error: the declaration '%s' names nothing", "");
}

static int add_operand(parser *P, ptx_operand *o, int to_elems)
{
    ptx_module *m = P->m;
    if (to_elems) {
        if (GROW(m->elems, m->nelems, m->cap_elems)) {
            P->oom = 1;
            return -1;
        }
        m->elems[m->nelems++] = *o;
    } else {
        if (GROW(m->ops, m->nops, m->cap_ops)) {
            P->oom = 1;
            return -1;
        }
        m->ops[m->nops++] = *o;
    }
    return 0;
}

/* `.b0`, `.h1`, `.h10`, `.b3210`: a video selector (b or h and one to four digits; the checker
   says which a video operand takes, ptxas: "Unknown video selector" past four) */
static int video_selector(const ptx_module *m, const ptx_token *k, uint32_t *sel)
{
    const char *s = m->text + k->s.off;
    uint32_t n = k->s.len;
    if (n < 3 || n > 6 || s[0] != '.' || (s[1] != 'b' && s[1] != 'h'))
        return 0;
    uint32_t v = 0;
    for (uint32_t i = 2; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v << 4 | (uint32_t)(s[i] - '0');
    }
    *sel = PTX_SEL_ON | (s[1] == 'h' ? PTX_SEL_H : 0) | (n - 2) << 16 | v;
    return 1;
}

/* a scalar: register (with %tid.x style joined suffix), symbol (+offset), immediate, sink */
static int scalar(parser *P, ptx_operand *o)
{
    ptx_module *m = P->m;
    ptx_token k_ = *cur(P), *k = &k_;
    memset(o, 0, sizeof *o);
    o->line = k->line;
    o->col = k->col;
    int neg = 0;
    if (is_punct(m, k, '!')) {
        o->neg = 1;
        adv(P, 1);
        k_ = *cur(P);
    } else if (is_punct(m, k, '-') && peek(P, 1)->kind == PTX_TK_IDENT && peek(P, 1)->joined) {
        o->neg = 2;                   /* -%r3: vmad negates it (the checker refuses it elsewhere) */
        adv(P, 1);
        k_ = *cur(P);
    } else if (is_punct(m, k, '-') && (peek(P, 1)->kind == PTX_TK_INT ||
                                        (peek(P, 1)->kind == PTX_TK_FLOAT && m->text[peek(P, 1)->s.off + 1] != 'f' &&
                                         m->text[peek(P, 1)->s.off + 1] != 'F' && m->text[peek(P, 1)->s.off + 1] != 'd' &&
                                         m->text[peek(P, 1)->s.off + 1] != 'D'))) {
        /* -5, -2.5 (ptxas takes no sign on a 0f/0d literal) */
        neg = 1;
        adv(P, 1);
        k_ = *cur(P);
    }
    if (k->kind == PTX_TK_IDENT) {
        o->name = k->s;
        adv(P, 1);
        while (cur(P)->kind == PTX_TK_DOT && cur(P)->joined) {     /* %tid.x */
            if (video_selector(m, cur(P), &o->sel)) {               /* %r1.b0: the register and its selector */
                adv(P, 1);
                break;
            }
            o->name.len = cur(P)->s.off + cur(P)->s.len - o->name.off;
            adv(P, 1);
        }
        if (ptx_span_eq(m, o->name, "_")) {
            o->kind = PTX_OP_SINK;
        } else if (m->text[o->name.off] == '%') {
            o->kind = PTX_OP_REG;
        } else {
            /* `.reg .pred complete;` (inline asm): a register without '%' */
            const ptx_symbol *sym = ptx_lookup(m, m->text + o->name.off, o->name.len);
            o->kind = sym && sym->cls ? PTX_OP_REG : PTX_OP_SYM;
        }
        /* base + offset: `[%rd1+8]`, `[%rd1+-8]`, `[gbuf+4+4]`; ptxas takes no `base-8` (a syntax
           error there); the sum in two's complement, as the hardware adds it (-INT64_MIN wraps) */
        while (is_punct(m, cur(P), '+')) {
            int minus = is_punct(m, peek(P, 1), '-'), ok;
            if (peek(P, 1 + minus)->kind != PTX_TK_INT)
                break;
            uint64_t v = (uint64_t)parse_int(m, peek(P, 1 + minus), &ok);
            o->imm = (int64_t)((uint64_t)o->imm + (minus ? 0 - v : v));
            o->has_base = 2;
            adv(P, 2 + minus);
        }
        return 0;
    }
    if (k->kind == PTX_TK_INT) {
        int ok;
        o->kind = PTX_OP_IMM;
        o->imm = parse_int(m, k, &ok);
        if (!ok)
            err(P, k, "integer constant '%s' does not fit in 64 bits", "");
        if (neg)            /* -9223372036854775808 is INT64_MIN; negated without overflow */
            o->imm = (int64_t)(0 - (uint64_t)o->imm);
        o->name = k->s;
        adv(P, 1);
        return 0;
    }
    if (k->kind == PTX_TK_FLOAT) {
        o->kind = PTX_OP_FIMM;
        o->name = k->s;
        if (neg && k->joined) {         /* -2.5: the sign is part of the literal's text */
            o->name.off--;
            o->name.len++;
        }
        adv(P, 1);
        return 0;
    }
    expected(P, "an operand");
    return -1;
}

/* after an error inside a vector: on past its '}' (when one comes before the ';'), so that the
   statement's recovery does not take that '}' for the end of the function */
static int vector_recover(parser *P)
{
    while (cur(P)->kind != PTX_TK_EOF && !is_punct(P->m, cur(P), ';') && !is_punct(P->m, cur(P), '}'))
        adv(P, 1);
    if (is_punct(P->m, cur(P), '}'))
        adv(P, 1);
    return -1;
}

static int vector(parser *P, ptx_operand *o)
{
    ptx_module *m = P->m;
    adv(P, 1);                        /* { */
    o->elem = m->nelems;
    o->nelem = 0;
    while (1) {
        ptx_operand e;
        if (scalar(P, &e))
            return vector_recover(P);
        if (o->nelem == 255) {        /* ptxas: "Illegal vector size" */
            err(P, cur(P), "syntax error: a vector of more than 255 elements%s", "");
            return vector_recover(P);
        }
        if (add_operand(P, &e, 1))
            return -1;
        o->nelem++;
        if (is_punct(m, cur(P), ',')) {
            adv(P, 1);
            continue;
        }
        if (is_punct(m, cur(P), '}')) {
            adv(P, 1);
            return 0;
        }
        expected(P, "',' or '}' in the vector");
        return vector_recover(P);
    }
}

static int operand(parser *P)
{
    ptx_module *m = P->m;
    ptx_token k_ = *cur(P), *k = &k_;
    ptx_operand o;
    memset(&o, 0, sizeof o);
    o.line = k->line;
    o.col = k->col;
    if (is_punct(m, k, '[')) {
        adv(P, 1);
        o.kind = PTX_OP_ADDR;
        ptx_operand b;
        if (scalar(P, &b))
            return -1;
        if (b.sel || b.neg) {
            expected(P, "an address: no selector or negation inside '[ ]'");
            return -1;
        }
        if (b.kind == PTX_OP_IMM) {
            o.imm = b.imm;
        } else if (b.kind == PTX_OP_REG || b.kind == PTX_OP_SYM) {
            o.name = b.name;
            o.has_base = 1;
            o.imm = b.imm;
        } else {
            expected(P, "a register, symbol or address in '[ ]'");
            return -1;
        }
        if (is_punct(m, cur(P), ',')) {           /* [tensorMap, {c0, c1}] */
            adv(P, 1);
            if (!is_punct(m, cur(P), '{')) {      /* [tex, sampler, {c0, c1}] */
                ptx_operand smp;
                if (scalar(P, &smp))
                    return -1;
                if (smp.kind != PTX_OP_REG && smp.kind != PTX_OP_SYM) {
                    expected(P, "a sampler (a register or a .samplerref variable)");
                    return -1;
                }
                if (add_operand(P, &smp, 1))
                    return -1;
                o.sampler = 1;
                if (!is_punct(m, cur(P), ',')) {
                    expected(P, "',' before the texture coordinates");
                    return -1;
                }
                adv(P, 1);
            }
            if (!is_punct(m, cur(P), '{')) {
                expected(P, "'{' of the tensor coordinates");
                return -1;
            }
            if (vector(P, &o))
                return -1;
        }
        if (!is_punct(m, cur(P), ']')) {
            expected(P, "']'");
            return -1;
        }
        adv(P, 1);
        return add_operand(P, &o, 0);
    }
    if (is_punct(m, k, '{')) {
        o.kind = PTX_OP_VEC;
        if (vector(P, &o))
            return -1;
        return add_operand(P, &o, 0);
    }
    if (is_punct(m, k, '(')) {                    /* call's (ret-param) and (param-list), maybe empty */
        o.kind = PTX_OP_LIST;
        o.elem = m->nelems;
        adv(P, 1);
        while (!is_punct(m, cur(P), ')')) {
            ptx_operand e;
            if (scalar(P, &e))
                return -1;
            if (o.nelem == 255 || add_operand(P, &e, 1))
                return -1;
            o.nelem++;
            if (is_punct(m, cur(P), ','))
                adv(P, 1);
            else if (!is_punct(m, cur(P), ')')) {
                expected(P, "',' or ')' in the list");
                return -1;
            }
        }
        adv(P, 1);
        return add_operand(P, &o, 0);
    }
    if (scalar(P, &o))
        return -1;
    if (o.kind == PTX_OP_SYM && !o.has_base && is_punct(m, cur(P), '[')) {
        /* `gbuf[4]`: the address gbuf+4 (ptxas takes it where [gbuf+4] goes) */
        int minus = is_punct(m, peek(P, 1), '-'), ok;
        if (peek(P, 1 + minus)->kind == PTX_TK_INT && is_punct(m, peek(P, 2 + minus), ']')) {
            int64_t v = parse_int(m, peek(P, 1 + minus), &ok);
            o.kind = PTX_OP_ADDR;
            o.has_base = 3;            /* written name[offset] */
            o.imm = minus ? -v : v;
            adv(P, 3 + minus);
            return add_operand(P, &o, 0);
        }
    }
    if (is_punct(m, cur(P), '|')) {               /* elect.sync %r|%p */
        adv(P, 1);
        ptx_operand e;
        if (scalar(P, &e))
            return -1;
        o.elem = m->nelems;
        o.nelem = 1;
        if (add_operand(P, &e, 1))
            return -1;
    }
    return add_operand(P, &o, 0);
}

static void instruction(parser *P)
{
    ptx_module *m = P->m;
    ptx_token first_ = *cur(P), *first = &first_;
    ptx_item *it = new_item(P, PTX_ITEM_INSTR, first);
    if (!it)
        return;
    uint32_t idx = m->nitems - 1;
    if (is_punct(m, first, '@')) {
        adv(P, 1);
        it = &m->items[idx];
        it->has_pred = 1;
        if (is_punct(m, cur(P), '!')) {
            it->pred_neg = 1;
            adv(P, 1);
        }
        if (cur(P)->kind != PTX_TK_IDENT) {
            expected(P, "a predicate register after '@'");
            recover(P);
            return;
        }
        it->pred = cur(P)->s;
        adv(P, 1);
    }
    if (cur(P)->kind != PTX_TK_IDENT) {
        expected(P, "an instruction");
        recover(P);
        return;
    }
    ptx_span op = cur(P)->s;
    adv(P, 1);
    while (cur(P)->kind == PTX_TK_DOT && cur(P)->joined) {
        op.len = cur(P)->s.off + cur(P)->s.len - op.off;
        adv(P, 1);
    }
    it = &m->items[idx];
    it->opcode = op;
    it->op0 = m->nops;
    int nops = 0;
    if (!is_punct(m, cur(P), ';')) {
        while (1) {
            if (operand(P)) {
                recover(P);
                m->items[idx].nops = (uint8_t)nops;
                return;
            }
            nops++;
            if (is_punct(m, cur(P), ',')) {
                adv(P, 1);
                continue;
            }
            break;
        }
    }
    m->items[idx].nops = (uint8_t)(nops > 255 ? 255 : nops);
    if (!is_punct(m, cur(P), ';')) {
        expected(P, "';' at the end of the instruction");
        recover(P);
        return;
    }
    adv(P, 1);
}

static void body(parser *P)
{
    ptx_module *m = P->m;
    int depth = 1;
    while (!P->oom) {
        ptx_token k_ = *cur(P), *k = &k_;
        if (k->kind == PTX_TK_EOF) {
            err(P, k, "syntax error: the function body has no closing '}'%s", "");
            return;
        }
        if (is_punct(m, k, '}')) {
            new_item(P, PTX_ITEM_CLOSE, k);
            adv(P, 1);
            if (--depth == 0)
                return;
            continue;
        }
        if (is_punct(m, k, '{')) {
            new_item(P, PTX_ITEM_OPEN, k);
            adv(P, 1);
            depth++;
            continue;
        }
        if (k->kind == PTX_TK_DOT) {
            if (tok_is(m, k, ".loc") || tok_is(m, k, ".file")) {    /* no ';' */
                int line = k->line;
                while (cur(P)->kind != PTX_TK_EOF && cur(P)->line == line)
                    adv(P, 1);
                continue;
            }
            if (tok_is(m, k, ".callprototype") || tok_is(m, k, ".branchtargets") || tok_is(m, k, ".calltargets")) {
                /* proto: .callprototype (rets) _ (params); tl: .branchtargets L1, L2;
                   fl: .calltargets f, g; kept whole */
                ptx_item *it = new_item(P, PTX_ITEM_DIRECTIVE, k);
                if (!it)
                    return;
                uint32_t idx = m->nitems - 1;
                it->tok0 = P->p;
                while (cur(P)->kind != PTX_TK_EOF && !is_punct(m, cur(P), ';') && !is_punct(m, cur(P), '}'))
                    adv(P, 1);
                if (!is_punct(m, cur(P), ';'))
                    expected(P, "';' after the directive");
                else
                    adv(P, 1);
                m->items[idx].ntok = P->p - m->items[idx].tok0;
                continue;
            }
            if (tok_is(m, k, ".pragma")) {        /* .pragma "nounroll"; a hint to ptxas, skipped */
                while (cur(P)->kind != PTX_TK_EOF && !is_punct(m, cur(P), ';'))
                    adv(P, 1);
                adv(P, 1);
                continue;
            }
            declaration(P, 0);
            continue;
        }
        if (k->kind == PTX_TK_IDENT && is_punct(m, peek(P, 1), ':')) {
            ptx_item *it = new_item(P, PTX_ITEM_LABEL, k);
            if (it)
                it->opcode = k->s;
            add_symbol(P, k->s, 0, 0, 0);
            if (!P->oom)
                m->syms[m->nsyms - 1].item = m->nitems - 1;   /* a label's symbol names its item */
            adv(P, 2);
            drop_tokens(P, P->p - 2);
            continue;
        }
        uint32_t mark = P->p;
        instruction(P);
        drop_tokens(P, mark);
    }
}

/* .visible .entry name ( .param ..., ... ) {.maxntid ...} { body } */
static void function(parser *P)
{
    ptx_module *m = P->m;
    ptx_token first_ = *cur(P), *first = &first_;
    ptx_item *it = new_item(P, PTX_ITEM_DIRECTIVE, first);
    if (!it)
        return;
    uint32_t idx = m->nitems - 1;
    it->tok0 = P->p;
    /* header up to the first '(' after the name */
    while (cur(P)->kind == PTX_TK_DOT)
        adv(P, 1);
    if (is_punct(m, cur(P), '(')) {                   /* .func (.param .b32 r) name */
        int ret_reg = 0, ret_cls = 0;
        while (cur(P)->kind != PTX_TK_EOF && !is_punct(m, cur(P), ')') && !is_punct(m, cur(P), ';') &&
               !is_punct(m, cur(P), '{') && !is_punct(m, cur(P), '}')) {
            /* a return parameter's name: a .param symbol the body stores to, or a .reg one (a
               register of the function) it writes */
            if (tok_is(m, cur(P), ".reg"))
                ret_reg = 1;
            else if (tok_is(m, cur(P), ".param") || is_punct(m, cur(P), ','))
                ret_reg = 0;
            else if (cur(P)->kind == PTX_TK_DOT && type_class(m, cur(P)) > 0)
                ret_cls = type_class(m, cur(P));
            if (cur(P)->kind == PTX_TK_IDENT) {
                add_symbol(P, cur(P)->s, ret_reg ? ret_cls : 0, 0, ret_reg ? 0 : 'p');
                if (!P->oom)
                    m->syms[m->nsyms - 1].item = idx;
            }
            adv(P, 1);
        }
        if (!is_punct(m, cur(P), ')')) {
            expected(P, "')' after the return parameters");
            recover(P);
            return;
        }
        adv(P, 1);
    }
    if (cur(P)->kind != PTX_TK_IDENT) {
        expected(P, "the function name");
        recover(P);
        return;
    }
    add_symbol(P, cur(P)->s, 0, 0, 0);
    if (!P->oom)
        m->syms[m->nsyms - 1].item = idx;          /* a function's symbol names its header */
    adv(P, 1);
    m->items[idx].ntok = P->p - m->items[idx].tok0;
    if (is_punct(m, cur(P), '(')) {
        ptx_item *open = new_item(P, PTX_ITEM_DIRECTIVE, cur(P));
        if (!open)
            return;
        open->tok0 = P->p;
        open->ntok = 1;
        adv(P, 1);
        while (!is_punct(m, cur(P), ')') && cur(P)->kind != PTX_TK_EOF && !P->oom) {
            if (cur(P)->kind != PTX_TK_DOT) {
                expected(P, "a .param declaration");
                recover(P);
                return;
            }
            declaration(P, 1);
            if (is_punct(m, cur(P), ',')) {
                ptx_item *c = new_item(P, PTX_ITEM_DIRECTIVE, cur(P));
                if (!c)
                    return;
                c->tok0 = P->p;
                c->ntok = 1;
                adv(P, 1);
            }
        }
        if (!is_punct(m, cur(P), ')')) {
            expected(P, "')' after the parameters");
            return;
        }
        ptx_item *close = new_item(P, PTX_ITEM_DIRECTIVE, cur(P));
        if (!close)
            return;
        close->tok0 = P->p;
        close->ntok = 1;
        adv(P, 1);
    }
    /* performance directives: .maxntid 128, 1, 1 / .reqntid / .minnctapersm / .noreturn */
    while (cur(P)->kind == PTX_TK_DOT) {
        ptx_item *d = new_item(P, PTX_ITEM_DIRECTIVE, cur(P));
        if (!d)
            return;
        d->tok0 = P->p;
        adv(P, 1);
        while (cur(P)->kind == PTX_TK_INT || is_punct(m, cur(P), ','))
            adv(P, 1);
        m->items[m->nitems - 1].ntok = P->p - m->items[m->nitems - 1].tok0;
    }
    if (is_punct(m, cur(P), ';')) {                       /* a prototype */
        ptx_item *d = new_item(P, PTX_ITEM_DIRECTIVE, cur(P));
        if (d) {
            d->tok0 = P->p;
            d->ntok = 1;
        }
        adv(P, 1);
        return;
    }
    if (!is_punct(m, cur(P), '{')) {
        expected(P, "'{' of the function body");
        recover(P);
        return;
    }
    new_item(P, PTX_ITEM_OPEN, cur(P));
    adv(P, 1);
    body(P);
}

static void module_directive(parser *P)
{
    ptx_module *m = P->m;
    ptx_token k_ = *cur(P), *k = &k_;
    if (tok_is(m, k, ".version") || tok_is(m, k, ".target") || tok_is(m, k, ".address_size")) {
        ptx_item *it = new_item(P, PTX_ITEM_DIRECTIVE, k);
        if (!it)
            return;
        it->tok0 = P->p;
        adv(P, 1);
        if (tok_is(m, k, ".version")) {
            ptx_token v_ = *cur(P), *v = &v_;
            const char *s = m->text + v->s.off;
            if (v->kind == PTX_TK_FLOAT && v->s.len >= 3 && s[0] >= '0' && s[0] <= '9' && s[1] == '.' &&
                v->s.len == 3 && s[2] >= '0' && s[2] <= '9') {
                if (m->version)
                    err(P, k, "the module has more than one .version directive%s", "");
                m->version = (s[0] - '0') * 10 + (s[2] - '0');
                adv(P, 1);
            } else {
                expected(P, "a version number such as 9.0 after .version");
            }
        } else if (tok_is(m, k, ".target")) {
            int first = 1;
            while (cur(P)->kind == PTX_TK_IDENT) {
                ptx_token t_ = *cur(P), *t = &t_;
                const char *s = m->text + t->s.off;
                if (first) {
                    size_t n = t->s.len < sizeof m->target - 1 ? t->s.len : sizeof m->target - 1;
                    memcpy(m->target, s, n);
                    m->target[n] = 0;
                    int sm = 0;
                    size_t i = 3;
                    if (n > 3 && !memcmp(s, "sm_", 3)) {
                        while (i < n && s[i] >= '0' && s[i] <= '9' && sm < 10000)
                            sm = sm * 10 + (s[i++] - '0');
                        if (i < n && (s[i] == 'a' || s[i] == 'f') && i + 1 == n)
                            m->suffix = s[i++];
                    }
                    m->sm = i == n ? sm : -1;
                    first = 0;
                }
                adv(P, 1);
                if (is_punct(m, cur(P), ','))
                    adv(P, 1);
            }
            if (first)
                expected(P, "a target such as sm_90a after .target");
        } else {
            if (cur(P)->kind == PTX_TK_INT)
                adv(P, 1);
            else
                expected(P, "32 or 64 after .address_size");
        }
        m->items[m->nitems - 1].ntok = P->p - m->items[m->nitems - 1].tok0;
        return;
    }
    if (tok_is(m, k, ".file") || tok_is(m, k, ".loc")) {
        int line = k->line;
        while (cur(P)->kind != PTX_TK_EOF && cur(P)->line == line)
            adv(P, 1);
        return;
    }
    if (tok_is(m, k, ".section")) {                  /* debug sections: skipped whole */
        adv(P, 1);
        if (cur(P)->kind == PTX_TK_DOT || cur(P)->kind == PTX_TK_IDENT)
            adv(P, 1);
        if (!is_punct(m, cur(P), '{')) {
            expected(P, "'{' after the .section name");
            recover(P);
            return;
        }
        /* its data lines (.b8 1, 2 / .b32 label) up to the matching '}'; a directive that only
           stands outside a section ends it, so a missing '}' never hides the rest of the module */
        int depth = 0;
        while (cur(P)->kind != PTX_TK_EOF) {
            const ptx_token *t = cur(P);
            if (t->kind == PTX_TK_DOT && (tok_is(m, t, ".entry") || tok_is(m, t, ".func") ||
                                          tok_is(m, t, ".visible") || tok_is(m, t, ".extern") ||
                                          tok_is(m, t, ".weak") || tok_is(m, t, ".global") ||
                                          tok_is(m, t, ".const") || tok_is(m, t, ".shared") ||
                                          tok_is(m, t, ".version") || tok_is(m, t, ".target"))) {
                err(P, k, "syntax error: the .section has no closing '}'%s", "");
                return;
            }
            if (is_punct(m, t, '{')) depth++;
            if (is_punct(m, t, '}') && --depth == 0) {
                adv(P, 1);
                break;
            }
            adv(P, 1);
        }
        return;
    }
    /* .visible/.extern/.weak .entry|.func, or a module-scope variable */
    for (uint32_t q = 0; peek(P, q)->kind == PTX_TK_DOT; q++) {
        if (tok_is(m, peek(P, q), ".entry") || tok_is(m, peek(P, q), ".func")) {
            function(P);
            return;
        }
    }
    declaration(P, 0);
}

/* after text outside a function: on to just after its ';' or '}', or to the next directive that
   starts a module-scope statement (so that `{` at module scope never hides the entry after it) */
static void module_recover(parser *P)
{
    static const char *const starts[] = {".version", ".target", ".address_size", ".visible", ".extern", ".weak",
                                         ".entry", ".func", ".global", ".const", ".shared", ".file", ".section"};
    ptx_module *m = P->m;
    for (;;) {
        const ptx_token *k = cur(P);
        if (k->kind == PTX_TK_EOF)
            return;
        if (is_punct(m, k, ';') || is_punct(m, k, '}')) {
            adv(P, 1);
            return;
        }
        if (k->kind == PTX_TK_DOT)
            for (size_t i = 0; i < sizeof starts / sizeof *starts; i++)
                if (tok_is(m, k, starts[i]))
                    return;
        adv(P, 1);
    }
}

/* put the lexical errors before the parser's (ds from index `at` on), as they would be had the
   text been lexed whole first */
static void merge_diags(ptx_diags *ds, int at, ptx_diags *lex)
{
    ds->nerrors += lex->nerrors;
    if (!lex->n)
        return;
    int n = ds->n + lex->n;
    ptx_diag *d = malloc((size_t)n * sizeof *d);
    if (!d)
        return;              /* the error count above still says the module is rejected */
    if (at)
        memcpy(d, ds->d, (size_t)at * sizeof *d);
    memcpy(d + at, lex->d, (size_t)lex->n * sizeof *d);
    if (ds->n > at)
        memcpy(d + at + lex->n, ds->d + at, (size_t)(ds->n - at) * sizeof *d);
    free(ds->d);
    ds->d = d;
    ds->n = ds->cap = n;
}

int ptx_parse(ptx_module *m, const char *text, size_t len, ptx_diags *ds)
{
    memset(m, 0, sizeof *m);
    m->text = text;
    m->len = len;
    m->cap_toks = 256;
    m->toks = malloc((size_t)m->cap_toks * sizeof *m->toks);
    if (!m->toks)
        return -1;
    /* room for the items and operands of a typical module at once: growing by doubling would
       touch (and copy) about twice the memory, and fresh pages are what parsing costs most */
    if (len < (size_t)1 << 30) {
        uint32_t ni = (uint32_t)(len / 32) + 64, no = (uint32_t)(len / 16) + 64;
        m->items = malloc((size_t)ni * sizeof *m->items);
        m->ops = malloc((size_t)no * sizeof *m->ops);
        m->cap_items = m->items ? ni : 0;
        m->cap_ops = m->ops ? no : 0;
    }
    parser P = {m, ds, 0, 0, {0, 1, 1, 0, 0, {0}}};
    int at = ds->n;
    while (cur(&P)->kind != PTX_TK_EOF && !P.oom) {
        ptx_token k_ = *cur(&P), *k = &k_;
        if (k->kind == PTX_TK_DOT) {
            uint32_t before = P.p;
            module_directive(&P);
            if (P.p == before)
                adv(&P, 1);
        } else {
            char got[64];
            tok_text(m, k, got, sizeof got);
            err(&P, k, "syntax error: '%s' outside a function", got);
            module_recover(&P);
        }
    }
    while (!P.L.eof)             /* the rest of the text, for its lexical errors */
        fill(&P, m->ntoks);
    merge_diags(ds, at, &P.L.ds);
    ptx_diags_free(&P.L.ds);
    return P.oom ? -1 : 0;
}
