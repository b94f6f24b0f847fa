/* lower_base.c - what every file of the lowering leans on and that leans on
 * nothing of the lowering: growing arrays, the text of a span, a reported
 * error, a float literal's bits, a type name's facts. Below lower_regs.c,
 * lower_vars.c and lower_parts.c, which call one another only downward. */
#include "ptx/exec/lower_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lw_grow(void **p, uint32_t *cap, size_t size, uint32_t need)
{
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

void lw_span_str(const ptx_module *m, ptx_span s, char *buf, size_t cap)
{
    size_t n = s.len < cap - 1 ? s.len : cap - 1;
    memcpy(buf, m->text + s.off, n);
    buf[n] = 0;
}

char *lw_span_dup(lw *L, ptx_span s)
{
    char *d = malloc(s.len + 1);
    if (!d) {
        L->oom = 1;
        return NULL;
    }
    memcpy(d, L->m->text + s.off, s.len);
    d[s.len] = 0;
    return d;
}

int lw_span_is(const ptx_module *m, ptx_span s, const char *lit)
{
    return ptx_span_eq(m, s, lit);
}

void lw_lerr(lw *L, int line, int col, const char *fmt, const char *a, const char *b)
{
    char buf[200];
    snprintf(buf, sizeof buf, fmt, a, b);
    ptx_diag_add(L->ds, 1, line, col, "%s", buf);
    L->bad = 1;
}

uint64_t lw_float_bits(const ptx_module *m, ptx_span s, int w)
{
    char buf[64];
    lw_span_str(m, s, buf, sizeof buf);
    if ((buf[0] == '0') && (buf[1] == 'f' || buf[1] == 'F')) {
        uint32_t v = (uint32_t)strtoul(buf + 2, NULL, 16);
        if (w == 64) {
            float f;
            memcpy(&f, &v, 4);
            double d = f;
            uint64_t b;
            memcpy(&b, &d, 8);
            return b;
        }
        return v;
    }
    double d;
    if ((buf[0] == '0') && (buf[1] == 'd' || buf[1] == 'D')) {
        uint64_t v = strtoull(buf + 2, NULL, 16);
        memcpy(&d, &v, 8);
    } else {
        d = strtod(buf, NULL);
    }
    if (w == 64) {
        uint64_t b;
        memcpy(&b, &d, 8);
        return b;
    }
    float f = (float)d;
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* Type facts of a PTX type name: bits, signed, float (0 none, 1 f32-like ...). */

int lw_type_of(const char *s, tinfo *t)
{
    static const struct { const char *n; int bits, sg, fl; } T[] = {
        {"b8", 8, 0, 0}, {"u8", 8, 0, 0}, {"s8", 8, 1, 0}, {"b16", 16, 0, 0}, {"u16", 16, 0, 0},
        {"s16", 16, 1, 0}, {"b32", 32, 0, 0}, {"u32", 32, 0, 0}, {"s32", 32, 1, 0}, {"b64", 64, 0, 0},
        {"u64", 64, 0, 0}, {"s64", 64, 1, 0}, {"f16", 16, 0, 2}, {"bf16", 16, 0, 3}, {"f32", 32, 0, 1},
        {"f64", 64, 0, 4}, {"f16x2", 32, 0, 5}, {"bf16x2", 32, 0, 6}, {"b128", 128, 0, 0},
        {"tf32", 32, 0, 7}, {"e4m3", 8, 0, 8}, {"e5m2", 8, 0, 9},
    };
    memset(t, 0, sizeof *t);
    if (!strcmp(s, "pred")) {
        t->bits = 1;
        t->is_pred = 1;
        return 1;
    }
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        if (!strcmp(s, T[i].n)) {
            t->bits = T[i].bits;
            t->is_signed = T[i].sg;
            t->is_float = T[i].fl;
            return 1;
        }
    return 0;
}
