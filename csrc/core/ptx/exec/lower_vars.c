/* lower_vars.c - the variables that live in neither registers nor shared memory:
 *
 * - module-scope .global and .const variables (`.global .align 4 .u32 n = 1000;`,
 *   `.const .align 4 .b8 coef[16] = {0, 0, 0, 63, ...};`, Triton's libdevice flag
 *   `.global .align 1 .b8 _$_str[11] = {95, ...};`): one image, the .const variables
 *   first, then the .global ones, each at its alignment, their initialisers written
 *   into it (elements not named are zero). The launch places the image in a global
 *   buffer (the caller's: launch args' gvar_base) and a variable's name is its address
 *   there, as the GPU's module globals are addresses in global memory.
 * .local variables are a function's frame's (lower_call.c).
 */
#include "ptx/exec/lower_int.h"

#include <stdlib.h>
#include <string.h>

static const ptx_token *vt(const lw *L, uint32_t i)
{
    return &L->m->toks[i];
}

static int vis(const lw *L, uint32_t i, const char *s)
{
    return lw_span_is(L->m, vt(L, i)->s, s);
}

static int vpunct(const lw *L, uint32_t i, char c)
{
    const ptx_token *k = vt(L, i);
    return k->kind == PTX_TK_PUNCT && L->m->text[k->s.off] == c;
}

static int vint(const lw *L, uint32_t i, uint64_t *v)
{
    const ptx_token *k = vt(L, i);
    if (k->kind != PTX_TK_INT)
        return 0;
    char buf[40];
    lw_span_str(L->m, k->s, buf, sizeof buf);
    *v = strtoull(buf, NULL, 0);
    return 1;
}

#define VMAXDIMS 8

typedef struct {
    char space;                  /* 'g' .global, 'c' .const, 'l' .local, 0: not a variable of ours */
    uint32_t align, ebytes, vec;
    int is_float;
    ptx_span name;
    uint64_t dims[VMAXDIMS];
    int ndims, unsized;
    uint32_t init;               /* the token after '=' (0: none) */
    uint32_t end;                /* the item's end token */
    int line, col;
} vdecl;

/* the declaration's parts; 0, or -1 (reported) */
static int scan(lw *L, const ptx_item *it, vdecl *d)
{
    memset(d, 0, sizeof *d);
    d->vec = 1;
    d->end = it->tok0 + it->ntok;
    d->line = it->line;
    d->col = it->col;
    for (uint32_t i = it->tok0; i < d->end; i++) {
        const ptx_token *k = vt(L, i);
        uint64_t v;
        if (k->kind == PTX_TK_DOT) {
            char buf[16];
            tinfo t;
            if (vis(L, i, ".global"))
                d->space = 'g';
            else if (vis(L, i, ".const"))
                d->space = 'c';
            else if (vis(L, i, ".local"))
                d->space = 'l';
            else if (vis(L, i, ".align") && vint(L, i + 1, &v)) {
                d->align = (uint32_t)(v > (1u << 16) ? 1u << 16 : v);
                i++;
            } else if (vis(L, i, ".v2") || vis(L, i, ".v4") || vis(L, i, ".v8"))
                d->vec = L->m->text[k->s.off + 2] - '0';
            else if (k->s.len < sizeof buf) {
                lw_span_str(L->m, k->s, buf, sizeof buf);
                if (lw_type_of(buf + 1, &t) && !t.is_pred) {
                    d->ebytes = (uint32_t)(t.bits < 8 ? 1 : t.bits / 8);
                    d->is_float = t.is_float;
                }
            }
        } else if (k->kind == PTX_TK_IDENT && !d->name.len) {
            d->name = k->s;
            d->line = k->line;
            d->col = k->col;
        } else if (vpunct(L, i, '[')) {
            if (d->ndims == VMAXDIMS) {
                lw_lerr(L, k->line, k->col, "an array has at most 8 dimensions%s%s", "", "");
                return -1;
            }
            if (vint(L, i + 1, &v)) {
                d->dims[d->ndims++] = v;
                i++;
            } else if (vpunct(L, i + 1, ']') && !d->ndims) {
                d->dims[d->ndims++] = 0;
                d->unsized = 1;
            }
        } else if (vpunct(L, i, '=')) {
            d->init = i + 1;
            break;
        }
    }
    return 0;
}

static uint64_t sub_size(const vdecl *d, int from)
{
    uint64_t n = d->vec;
    for (int k = from; k < d->ndims; k++)
        n *= d->dims[k] ? d->dims[k] : 1;
    return n;
}

/* Elements of the variable: from its dimensions, or (an unsized [] with an initialiser) its
   values; counting only, with buf NULL. Writes the values into buf (bytes ebytes each). */
static int values(lw *L, const vdecl *d, uint8_t *buf, uint64_t cap, uint64_t *count)
{
    uint64_t idx = 0, maxidx = 0, start[VMAXDIMS + 2];
    int depth = 0, neg = 0;
    for (uint32_t i = d->init; d->init && i < d->end; i++) {
        const ptx_token *k = vt(L, i);
        if (vpunct(L, i, ';'))
            break;
        if (vpunct(L, i, '{')) {
            if (depth < VMAXDIMS + 1)
                start[depth + 1] = idx;
            depth++;
            continue;
        }
        if (vpunct(L, i, '}')) {
            /* an inner list fills its sub-array; the values after it start at the next one */
            if (depth >= 2 && depth - 1 <= d->ndims && depth <= VMAXDIMS + 1)
                idx = start[depth] + sub_size(d, depth - 1);
            depth--;
            continue;
        }
        if (vpunct(L, i, ',') || vpunct(L, i, '+'))
            continue;
        if (vpunct(L, i, '-')) {
            neg = !neg;
            continue;
        }
        uint64_t v = 0;
        if (k->kind == PTX_TK_INT) {
            vint(L, i, &v);
            if (neg)
                v = 0 - v;
            if (d->is_float) {          /* an integer for a float variable: its value */
                double x = neg ? -(double)(0 - v) : (double)v;
                if (d->ebytes == 8) {
                    memcpy(&v, &x, 8);
                } else {
                    float f = (float)x;
                    uint32_t b;
                    memcpy(&b, &f, 4);
                    v = b;
                }
            }
        } else if (k->kind == PTX_TK_FLOAT) {
            v = lw_float_bits(L->m, k->s, d->ebytes == 8 ? 64 : 32);
            if (neg)
                v ^= d->ebytes == 8 ? 1ull << 63 : 1ull << 31;
        } else if (k->kind == PTX_TK_IDENT) {
            /* an address (5.4.4): `name`, `generic(name)`, with an offset; as the parser read it
               (the module's ivals), written once the functions are known (lw_var_inits) */
            const ptx_ival *iv = NULL;
            uint32_t at = vis(L, i, "generic") ? i + 2 : i;
            for (uint32_t q = 0; q < L->m->nivals && !iv; q++)
                if (L->m->ivals[q].v.name.off == vt(L, at)->s.off && L->m->ivals[q].v.name.len)
                    iv = &L->m->ivals[q];
            const ptx_token *nk = vt(L, at);
            uint64_t addend = iv ? (uint64_t)iv->v.imm : 0;
            uint32_t j = i;
            while (j + 1 < d->end && !vpunct(L, j + 1, ',') && !vpunct(L, j + 1, '}') && !vpunct(L, j + 1, ';'))
                j++;
            if (d->ebytes != 4 && d->ebytes != 8) {
                char name[64];
                lw_span_str(L->m, nk->s, name, sizeof name);
                lw_lerr(L, nk->line, nk->col, "the initial value '%s' is an address: the variable's elements "
                        "must be 32 or 64 bits%s", name, "");
                return -1;
            }
            if (buf && idx < cap) {
                if (GROWN(L->vinits, L->nvinits, L->capvinits)) {
                    L->oom = 1;
                    return -1;
                }
                struct vinit *vi = &L->vinits[L->nvinits++];
                vi->at = (uint64_t)(buf - L->p->gimage) + idx * d->ebytes;
                vi->addend = addend;
                vi->name = nk->s;
                vi->size = (uint8_t)d->ebytes;
                vi->line = nk->line;
                vi->col = nk->col;
            }
            i = j;
        } else {
            char name[64];
            lw_span_str(L->m, k->s, name, sizeof name);
            lw_lerr(L, k->line, k->col, "the initial value '%s' is not one the interpreter reads%s", name, "");
            return -1;
        }
        neg = 0;
        if (buf && idx < cap)
            for (uint32_t b = 0; b < d->ebytes; b++)
                buf[idx * d->ebytes + b] = (uint8_t)(v >> (8 * (b < 8 ? b : 0)));
        idx++;
        if (idx > maxidx)
            maxidx = idx;
    }
    uint64_t n = sub_size(d, 0);
    if (d->unsized) {
        uint64_t s = sub_size(d, 1);
        n = (maxidx + s - 1) / s * s;
    }
    if (d->init && maxidx > n) {
        lw_lerr(L, d->line, d->col, "more initial values than the variable's elements%s%s", "", "");
        return -1;
    }
    *count = n;
    return 0;
}

static int add_var(lw *L, shvar **arr, uint32_t *n, uint32_t *cap, const vdecl *d, uint64_t off, uint64_t bytes)
{
    pi_prog *p = L->p;
    if (GROWN(*arr, *n, *cap) || GROWN(p->vars, p->nvars, L->capvars)) {
        L->oom = 1;
        return -1;
    }
    pi_var *v = &p->vars[p->nvars];
    shvar *s = &(*arr)[*n];
    if (!(v->name = lw_span_dup(L, d->name)))
        return -1;
    p->nvars++;
    if (!(s->name = lw_span_dup(L, d->name)))
        return -1;
    (*n)++;
    v->space = d->space;
    v->offset = off;
    v->bytes = bytes;
    s->offset = (uint32_t)off;
    return 0;
}

#define VAR_LIMIT (1ull << 30)   /* bytes of module variables, and of a thread's local window */

int lw_vars(lw *L, uint32_t body, uint32_t end)
{
    const ptx_module *m = L->m;
    pi_prog *p = L->p;
    uint64_t goff[2] = {0, 0};   /* bytes of .const and .global variables */
    /* pass 0: sizes and offsets; pass 1: the image */
    for (int pass = 0; pass < 2; pass++) {
        uint64_t at[2] = {0, goff[0]};
        int depth = 0;
        for (uint32_t k = 0; k < m->nitems && !L->oom; k++) {
            const ptx_item *it = &m->items[k];
            if (it->kind == PTX_ITEM_OPEN)
                depth++;
            if (it->kind == PTX_ITEM_CLOSE)
                depth--;
            if (it->kind != PTX_ITEM_DIRECTIVE || !it->ntok)
                continue;
            int in_body = depth > 0 && k > body && k < end;
            if (depth > 0 && !in_body)
                continue;        /* another function's body */
            vdecl d;
            if (scan(L, it, &d))
                return -1;
            if (!d.space || !d.name.len || !d.ebytes)
                continue;
            if (d.space == 'l' || depth > 0)
                continue;        /* .local variables are a frame's (lower_call.c) */
            uint64_t count;
            uint64_t ioff = 0;
            uint8_t *img = NULL;
            uint64_t align = d.align ? d.align : (uint64_t)d.ebytes * d.vec;
            if (pass == 1) {
                int c = d.space == 'g';
                ioff = (at[c] + align - 1) / align * align;
                img = ioff < p->gvar_bytes ? p->gimage + ioff : NULL;
            }
            if (values(L, &d, img, img ? (p->gvar_bytes - ioff) / d.ebytes : 0, &count))
                return -1;
            uint64_t bytes = count * d.ebytes;
            int c = d.space == 'g';
            uint64_t *o = pass == 0 ? &goff[c] : &at[c];
            *o = (*o + align - 1) / align * align;
            if (pass == 1 && add_var(L, &L->gv, &L->ngv, &L->capgv, &d, *o, bytes))
                return -1;
            *o += bytes;
            if (*o > VAR_LIMIT) {
                lw_lerr(L, d.line, d.col, "the module's .global and .const variables take more than 2^30 bytes%s%s",
                        "", "");
                return -1;
            }
        }
        if (pass == 0) {
            /* the .global variables after the .const ones, at 256 bytes */
            goff[0] = (goff[0] + 255) / 256 * 256;
            uint64_t total = goff[0] + goff[1] + 256;   /* room for alignments over 256 */
            p->const_bytes = goff[0];
            p->gvar_bytes = total;
            if (total) {
                p->gimage = calloc(total, 1);
                if (!p->gimage) {
                    L->oom = 1;
                    return -1;
                }
            }
        }
    }
    return 0;
}

static const shvar *find(const lw *L, const shvar *a, uint32_t n, ptx_span name)
{
    for (uint32_t i = 0; i < n; i++)
        if (lw_span_is(L->m, name, a[i].name))
            return &a[i];
    return NULL;
}

int lw_var_addr(const lw *L, ptx_span name, int *kind, uint64_t *value)
{
    const shvar *s = find(L, L->gv, L->ngv, name);
    if (s) {
        *kind = PI_INIT_GVAR;
        *value = s->offset;
        return 1;
    }
    return 0;
}

int lw_var_inits(lw *L)
{
    pi_prog *p = L->p;
    for (uint32_t i = 0; i < L->nvinits; i++) {
        const struct vinit *vi = &L->vinits[i];
        const shvar *s = find(L, L->gv, L->ngv, vi->name);
        uint32_t f = lw_func_index(L, vi->name);
        if (s) {
            if (GROWN(p->relocs, p->nrelocs, L->caprelocs)) {
                L->oom = 1;
                return -1;
            }
            p->relocs[p->nrelocs].at = vi->at;
            p->relocs[p->nrelocs++].size = vi->size;
            pa_le_store(p->gimage + vi->at, s->offset + vi->addend, vi->size);
        } else if (f != PI_NOREG) {
            pa_le_store(p->gimage + vi->at, PI_FUNC_BASE + 16ull * (f + 1) + vi->addend, vi->size);
        } else {
            char name[64];
            lw_span_str(L->m, vi->name, name, sizeof name);
            lw_lerr(L, vi->line, vi->col, "the initial value '%s' names no .global or .const variable and no "
                    "function of the module%s", name, "");
            return -1;
        }
    }
    return 0;
}

void pi_image_at(const pi_prog *p, uint64_t base, uint8_t *out)
{
    memcpy(out, p->gimage, p->gvar_bytes);
    for (uint32_t i = 0; i < p->nrelocs; i++) {
        uint8_t *w = out + p->relocs[i].at;
        pa_le_store(w, pa_le_load(w, p->relocs[i].size) + base, p->relocs[i].size);
    }
}
