/* devrt.c - the CUDA device runtime a module declares `.extern` and calls, as the GPU gives it:
 *
 * - vprintf(format, args): the C format string and the argument buffer CUDA lays out (each
 *   argument at its natural alignment: int / unsigned / char 4 bytes, long / long long / size_t
 *   and pointers 8, float promoted to double, 8), formatted with C's printf for the conversion
 *   each directive names (the driver formats the buffer with the host's printf after the kernel).
 *   Returns the number of arguments it read (CUDA's printf: "the number of arguments parsed").
 *   The output is kept with who made it; the launch orders it (pi_prints_sort).
 * - __assertfail(message, file, line, function, charSize): the launch stops with PA_ERR_ASSERT and
 *   the line the GPU prints: `file:line: function: block: [x,y,z], thread: [x,y,z] Assertion
 *   `message` failed.`
 * - malloc(size) / free(p): a first-fit heap in the launch's heap buffer (global memory), 16-byte
 *   aligned pieces; NULL when no piece fits. A piece one thread freed is reused only by that
 *   thread: the allocator orders a free before the next malloc of the same memory on the GPU, an
 *   order the race checker does not see, so another thread's reuse would be a race that is not
 *   in the kernel. free of an address malloc did not return (or freed already) is an error.
 * Strings and buffers are read through generic addresses (global memory through the race
 * checker, the thread's stack, shared memory, the kernel's parameters).
 */
#include "ptx/exec/launch.h"
#include "check/hb.h"
#include "check/watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR_MAX 65536u           /* a string's bytes before its NUL: longer is an error */

typedef struct pi_chunk {
    uint64_t off, size;
    uint8_t used;
    uint8_t owned;               /* freed by one thread: only it may take it again */
    uint32_t cluster, cta, tid;
} pi_chunk;

/* len bytes at generic address a, read by thread t */
static int read_generic(pi_launch_state *L, pi_thread *t, uint64_t a, uint32_t len, uint8_t *out, pa_error *err)
{
    pa_machine *m = L->m;
    if (a >= PI_LOCAL_BASE && a < PI_LOCAL_BASE + PI_WINDOW_SIZE) {
        uint64_t at = a - PI_LOCAL_BASE;
        if (at > t->stack_top || len > t->stack_top - at)
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "a read of %u bytes at local address %llu is outside the "
                           "thread's %llu bytes of stack", len, (unsigned long long)at,
                           (unsigned long long)t->stack_top);
        memcpy(out, t->local + at, len);
        return PA_OK;
    }
    if (a >= PI_PARAM_BASE && a < PI_PARAM_BASE + PI_WINDOW_SIZE) {
        uint64_t at = a - PI_PARAM_BASE;
        if (at > L->p->param_bytes || len > L->p->param_bytes - at)
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "a read of %u bytes at parameter offset %llu is outside the "
                           "%u bytes of parameters", len, (unsigned long long)at, L->p->param_bytes);
        memcpy(out, L->a->params + at, len);
        return PA_OK;
    }
    if (a >= PI_SHARED_BASE && a < PI_SHARED_BASE + PI_WINDOW_SIZE) {
        uint32_t rank = 0, sa = (uint32_t)(a - PI_SHARED_BASE);
        const uint8_t *p = pa_smem_resolve(&m->cluster, t->cta, 1, sa, len, &rank, err);
        if (!p || pa_check_read(m, t->cta, t->tid, rank, pa_smem_offset(sa), len, err))
            return PI_R_ERR;
        memcpy(out, p, len);
        return PA_OK;
    }
    const uint8_t *p = pa_global_resolve(&m->global, a, len, err);
    if (!p || pa_hb_global(m, t->cta, t->tid, a, len, 0, "ld.global", err))
        return PI_R_ERR;
    memcpy(out, p, len);
    return PA_OK;
}

/* the NUL-terminated string at a (NULL: "(null)", as the host's printf writes it) into a
   malloc'd buffer */
static int read_string(pi_launch_state *L, pi_thread *t, uint64_t a, char **out, pa_error *err)
{
    size_t cap = 64, n = 0;
    char *s = malloc(cap);
    if (!s)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a string");
    if (!a) {
        strcpy(s, "(null)");
        *out = s;
        return PA_OK;
    }
    for (;;) {
        uint8_t c;
        if (read_generic(L, t, a + n, 1, &c, err)) {
            free(s);
            return PI_R_ERR;
        }
        if (n + 1 >= cap) {
            char *q = realloc(s, cap *= 2);
            if (!q) {
                free(s);
                return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for a string");
            }
            s = q;
        }
        s[n] = (char)c;
        if (!c)
            break;
        if (++n >= STR_MAX) {
            free(s);
            return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "the string at 0x%llx has no NUL in its first %u bytes",
                           (unsigned long long)a, STR_MAX);
        }
    }
    *out = s;
    return PA_OK;
}

/* ---- vprintf ---------------------------------------------------------------------- */

typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static int put(sbuf *b, const char *s, size_t n, pa_error *err)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 128;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for printf's output");
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
    return PA_OK;
}

/* the argument of `bytes` bytes at the next offset aligned to them */
static int next_arg(pi_launch_state *L, pi_thread *t, uint64_t args, uint64_t *at, uint32_t bytes, uint64_t *v,
                    pa_error *err)
{
    uint8_t b[8] = {0};
    if (!args)
        return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "printf: the format names an argument but the argument buffer "
                       "is NULL");
    *at = (*at + bytes - 1) / bytes * bytes;
    if (read_generic(L, t, args + *at, bytes, b, err))
        return PI_R_ERR;
    *at += bytes;
    *v = 0;
    for (uint32_t i = 0; i < bytes; i++)
        *v |= (uint64_t)b[i] << (8 * i);
    return PA_OK;
}

/* a '*' width, bounded as a written one is (six digits): a negative one is the '-' flag (C's
   rule), written as such into the directive ("%-5d" from -5) */
static int star_value(int32_t v)
{
    return v > 999999 ? 999999 : v < -999999 ? -999999 : v;
}

/* one directive's output: spec is "%" flags width precision, conv its conversion; C's printf with
   the length modifier the argument's C type needs */
static int directive(sbuf *b, const char *spec, const char *len, char conv, uint64_t v, const char *str,
                     pa_error *err)
{
    char fmt[64], out[512];
    char *big = NULL;
    int n;
    const char *lm = "";
    int is_int = strchr("diouxXc", conv) != NULL;
    int wide = !strcmp(len, "l") || !strcmp(len, "ll") || !strcmp(len, "z") || !strcmp(len, "j") ||
               !strcmp(len, "t");
    if (is_int && conv != 'c')
        lm = wide ? "ll" : !strcmp(len, "hh") ? "hh" : !strcmp(len, "h") ? "h" : "";
    snprintf(fmt, sizeof fmt, "%s%s%c", spec, lm, conv);
    for (int pass = 0; pass < 2; pass++) {
        char *dst = pass ? big : out;
        size_t cap = pass ? (size_t)n + 1 : sizeof out;
        if (conv == 's')
            n = snprintf(dst, cap, fmt, str);
        else if (conv == 'p')
            n = snprintf(dst, cap, fmt, (void *)(uintptr_t)v);
        else if (strchr("fFeEgGaA", conv)) {
            double d;
            memcpy(&d, &v, 8);
            n = snprintf(dst, cap, fmt, d);
        } else if (conv == 'c')
            n = snprintf(dst, cap, fmt, (int)(uint32_t)v);
        else if (conv == 'd' || conv == 'i')
            n = wide ? snprintf(dst, cap, fmt, (long long)v) : snprintf(dst, cap, fmt, (int)(uint32_t)v);
        else
            n = wide ? snprintf(dst, cap, fmt, (unsigned long long)v) : snprintf(dst, cap, fmt, (unsigned)v);
        if (n < 0)
            return pa_fail(err, PA_ERR_INVALID_VALUE, "printf: the directive '%s' cannot be formatted", fmt);
        if (pass || (size_t)n < sizeof out)
            break;
        big = malloc((size_t)n + 1);
        if (!big)
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for printf's output");
    }
    int rc = put(b, big ? big : out, (size_t)n, err);
    free(big);
    return rc;
}

/* the start of a format string for a message: control characters as C escapes */
static const char *shown(const char *fmt, char *buf, size_t cap)
{
    size_t n = 0;
    for (; *fmt && n + 5 < cap; fmt++) {
        unsigned char c = (unsigned char)*fmt;
        if (c == '\n' || c == '\t')
            n += (size_t)snprintf(buf + n, cap - n, "\\%c", c == '\n' ? 'n' : 't');
        else if (c < 32 || c == 127)
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", c);
        else
            buf[n++] = (char)c;
    }
    buf[n] = 0;
    return buf;
}

static int vprintf_(pi_launch_state *L, pi_thread *t, uint64_t fa, uint64_t args, uint64_t *ret, pa_error *err)
{
    if (!fa) {
        *ret = (uint64_t)(uint32_t)-1;      /* CUDA: -1 for a NULL format */
        return PA_OK;
    }
    char *fmt = NULL, *str = NULL;
    if (read_string(L, t, fa, &fmt, err))
        return PI_R_ERR;
    sbuf b = {0};
    uint64_t at = 0;
    uint32_t nargs = 0;
    int rc = PA_OK;
    for (const char *s = fmt; *s && !rc;) {
        const char *pct = strchr(s, '%');
        size_t lit = pct ? (size_t)(pct - s) : strlen(s);
        rc = put(&b, s, lit, err);
        if (!pct || rc)
            break;
        const char *q = pct + 1;
        if (*q == '%') {
            rc = put(&b, "%", 1, err);
            s = q + 1;
            continue;
        }
        char spec[48], len[3] = {0};
        size_t k = 0;
        spec[k++] = '%';
        while (*q && strchr("-+ #0", *q) && k < 8)
            spec[k++] = *q++;
        if (*q == '*') {                /* the width from the next argument, an int, as C reads it (a
                                           negative one the '-' flag; the H200 does so) */
            uint64_t v = 0;
            if ((rc = next_arg(L, t, args, &at, 4, &v, err)))
                break;
            nargs++;
            k += (size_t)snprintf(spec + k, sizeof spec - k, "%d", star_value((int32_t)(uint32_t)v));
            q++;
        } else {
            for (int w = 0; *q >= '0' && *q <= '9'; w++, q++)
                if (w < 6)
                    spec[k++] = *q;
        }
        if (*q == '.') {
            spec[k++] = *q++;
            if (*q == '*') {            /* an H200 prints garbage for it (the directive, or the arguments
                                           read out of step): not a value to model */
                char sb[80];
                rc = pa_fail(err, PA_ERR_INVALID_VALUE, "printf: a '*' precision (in \"%s\") is not one the "
                             "device's printf takes (an H200 prints the directive or reads the arguments out of "
                             "step)", shown(fmt, sb, sizeof sb));
                break;
            }
            for (int w = 0; *q >= '0' && *q <= '9'; w++, q++)
                if (w < 6)
                    spec[k++] = *q;
        }
        spec[k] = 0;
        if (*q == 'h' || *q == 'l') {
            len[0] = *q++;
            if (*q == len[0])
                len[1] = *q++;
        } else if (*q == 'z' || *q == 'j' || *q == 't' || *q == 'L') {
            len[0] = *q++;
        }
        char conv = *q;
        if (!conv || !strchr("diouxXcsfFeEgGaAp", conv) || len[0] == 'L') {
            char sb[80];
            rc = pa_fail(err, PA_ERR_INVALID_VALUE, "printf: the directive '%.*s' (in \"%s\") is not one the "
                         "device's printf formats", (int)(q - pct + (conv ? 1 : 0)), pct, shown(fmt, sb, sizeof sb));
            break;
        }
        uint32_t bytes = strchr("fFeEgGaAsp", conv) || (strchr("diouxX", conv) && (len[0] == 'l' || len[0] == 'z' ||
                                                                                     len[0] == 'j' || len[0] == 't'))
                             ? 8 : 4;
        uint64_t v = 0;
        rc = next_arg(L, t, args, &at, bytes, &v, err);
        if (!rc && conv == 's')
            rc = read_string(L, t, v, &str, err);
        if (!rc)
            rc = directive(&b, spec, len, conv, v, str, err);
        free(str);
        str = NULL;
        nargs++;
        s = q + 1;
    }
    free(fmt);
    if (rc) {
        free(b.p);
        return PI_R_ERR;
    }
    *ret = nargs;
    pi_stats *st = L->st;
    if (st->print_bytes + b.n > PI_PRINTF_BYTES) {     /* the GPU's FIFO is full: dropped */
        st->print_dropped++;
        free(b.p);
        return PA_OK;
    }
    if (st->nprints == st->capprints) {
        uint32_t cap = st->capprints ? 2 * st->capprints : 64;
        pi_print *q = realloc(st->prints, cap * sizeof *q);
        if (!q) {
            free(b.p);
            return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for printf's output");
        }
        st->prints = q;
        st->capprints = cap;
    }
    pi_print *pr = &st->prints[st->nprints++];
    const uint32_t *c = L->ctaid[t->cta];
    const uint32_t *bd = L->a->block, *g = L->a->grid;
    pr->ctaid[0] = c[0];
    pr->ctaid[1] = c[1];
    pr->ctaid[2] = c[2];
    pr->tid[0] = t->tid % bd[0];
    pr->tid[1] = t->tid / bd[0] % bd[1];
    pr->tid[2] = t->tid / (bd[0] * bd[1]);
    pr->block = c[0] + (uint64_t)g[0] * (c[1] + (uint64_t)g[1] * c[2]);
    pr->thread = t->tid;
    pr->seq = t->nprintf++;
    pr->text = b.p ? b.p : calloc(1, 1);
    pr->len = b.n;
    st->print_bytes += b.n;
    return pr->text ? PA_OK : pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for printf's output");
}

/* The n-th call of every thread before the (n+1)-th of any; among n-th calls by block, then
   thread (a warp's lanes in order). An H200 prints two printf calls of 80 threads so: every
   thread's first line (each warp's lanes in order), then every second line; across warps and
   CTAs it follows the scheduling, which no order reproduces (tests/data/ptx/calls/h200_runtime.txt). */
static int by_order(const void *x, const void *y)
{
    const pi_print *a = x, *b = y;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    if (a->block != b->block)
        return a->block < b->block ? -1 : 1;
    return a->thread < b->thread ? -1 : a->thread > b->thread;
}

void pi_prints_sort(pi_stats *st)
{
    if (st->nprints > 1)
        qsort(st->prints, st->nprints, sizeof *st->prints, by_order);
}

void pi_stats_free(pi_stats *st)
{
    for (uint32_t i = 0; i < st->nprints; i++)
        free(st->prints[i].text);
    free(st->prints);
    st->prints = NULL;
    st->nprints = st->capprints = 0;
}

/* ---- __assertfail ---------------------------------------------------------------- */

static int assertfail(pi_launch_state *L, pi_thread *t, const uint64_t *a, pa_error *err)
{
    char *msg = NULL, *file = NULL, *fn = NULL;
    if (read_string(L, t, a[0], &msg, err) || read_string(L, t, a[1], &file, err) ||
        read_string(L, t, a[3], &fn, err)) {
        free(msg);
        free(file);
        return PI_R_ERR;
    }
    const uint32_t *c = L->ctaid[t->cta], *bd = L->a->block;
    pa_fail(err, PA_ERR_ASSERT, "%.120s:%u: %.120s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%.120s` failed.",
            file, (uint32_t)a[2], fn, c[0], c[1], c[2], t->tid % bd[0], t->tid / bd[0] % bd[1],
            t->tid / (bd[0] * bd[1]), msg);
    free(msg);
    free(file);
    free(fn);
    return PA_ERR_ASSERT;
}

/* ---- malloc / free ------------------------------------------------------------------ */

static int chunks_room(pi_launch_state *L, pa_error *err)
{
    if (L->nchunks < L->capchunks)
        return PA_OK;
    uint32_t cap = L->capchunks ? 2 * L->capchunks : 64;
    pi_chunk *q = realloc(L->chunks, cap * sizeof *q);
    if (!q)
        return pa_fail(err, PA_ERR_NO_MEMORY, "out of host memory for malloc's heap");
    L->chunks = q;
    L->capchunks = cap;
    return PA_OK;
}

static int mine(const pi_launch_state *L, const pi_thread *t, const pi_chunk *c)
{
    return !c->owned || (c->cluster == L->cluster_index && c->cta == t->cta && c->tid == t->tid);
}

static int malloc_(pi_launch_state *L, pi_thread *t, uint64_t size, uint64_t *ret, pa_error *err)
{
    *ret = 0;
    if (!L->a->heap_bytes)
        return pa_fail(err, PA_ERR_STATE, "malloc: the launch has no heap (launch args' heap_base)");
    if (!L->nchunks) {
        if (chunks_room(L, err))
            return PI_R_ERR;
        L->chunks[0] = (pi_chunk){0, L->a->heap_bytes, 0, 0, 0, 0, 0};
        L->nchunks = 1;
    }
    if (!size || size > L->a->heap_bytes)
        return PA_OK;
    uint64_t need = (size + 15) / 16 * 16;
    for (uint32_t i = 0; i < L->nchunks; i++) {
        pi_chunk *c = &L->chunks[i];
        if (c->used || c->size < need || !mine(L, t, c))
            continue;
        if (c->size > need) {                  /* split: the rest stays free, as it was */
            if (chunks_room(L, err))
                return PI_R_ERR;
            c = &L->chunks[i];
            memmove(&L->chunks[i + 2], &L->chunks[i + 1], (L->nchunks - i - 1) * sizeof *c);
            L->chunks[i + 1] = *c;
            L->chunks[i + 1].off = c->off + need;
            L->chunks[i + 1].size = c->size - need;
            c->size = need;
            L->nchunks++;
        }
        c->used = 1;
        *ret = L->a->heap_base + c->off;
        return PA_OK;
    }
    return PA_OK;                              /* exhausted: NULL */
}

static int free_(pi_launch_state *L, pi_thread *t, uint64_t p, pa_error *err)
{
    if (!p)
        return PA_OK;
    uint64_t off = p - L->a->heap_base;
    for (uint32_t i = 0; i < L->nchunks && L->a->heap_bytes && p >= L->a->heap_base; i++) {
        pi_chunk *c = &L->chunks[i];
        if (c->off != off || !c->used)
            continue;
        c->used = 0;
        c->owned = 1;
        c->cluster = L->cluster_index;
        c->cta = t->cta;
        c->tid = t->tid;
        /* join free neighbours this thread may take */
        if (i + 1 < L->nchunks && !c[1].used && c[1].owned && mine(L, t, &c[1])) {
            c->size += c[1].size;
            memmove(&L->chunks[i + 1], &L->chunks[i + 2], (L->nchunks - i - 2) * sizeof *c);
            L->nchunks--;
        }
        if (i > 0 && !c[-1].used && c[-1].owned && mine(L, t, &c[-1])) {
            c[-1].size += c->size;
            memmove(&L->chunks[i], &L->chunks[i + 1], (L->nchunks - i - 1) * sizeof *c);
            L->nchunks--;
        }
        return PA_OK;
    }
    return pa_fail(err, PA_ERR_ILLEGAL_ADDRESS, "free(0x%llx): not an address malloc returned, or freed already",
                   (unsigned long long)p);
}

int pi_devrt(pi_launch_state *L, pi_thread *t, int builtin, const uint64_t *args, uint64_t *ret, pa_error *err)
{
    switch (builtin) {
    case PI_BI_VPRINTF: return vprintf_(L, t, args[0], args[1], ret, err);
    case PI_BI_ASSERTFAIL: return assertfail(L, t, args, err);
    case PI_BI_MALLOC: return malloc_(L, t, args[0], ret, err);
    case PI_BI_FREE: return free_(L, t, args[0], err);
    default: return pa_fail(err, PA_ERR_STATE, "no such runtime function (%d)", builtin);
    }
}
