/* test_ptx_parse.c - the PTX front end on hostile literals and declarations,
 * under AddressSanitizer and UndefinedBehaviorSanitizer (test_c_core.py builds
 * it with -fno-sanitize-recover: undefined behaviour stops the test):
 * -9223372036854775808 (its negation would overflow), register ranges, array
 * sizes and initialisers whose sizes do not fit in 32 or 64 bits, and the
 * values of .global / .const initialisers kept in the module. */
#include "check.h"
#include "ptx/text/ptx.h"
#include "ptx/exec/prog.h"

#include <string.h>

#define HEAD ".version 8.6\n.target sm_90a\n.address_size 64\n"

/* parse and check `text`; the number of errors, the first one's line in *line */
static int errors(const char *text, ptx_module *m, int *line, char *msg, size_t cap)
{
    ptx_diags ds = {0};
    int rc = ptx_parse(m, text, strlen(text), &ds);
    CHECK(rc == 0, "parse ran out of memory: %s", text);
    if (!ds.nerrors)
        ptx_check(m, &ds);
    int n = ds.nerrors;
    *line = 0;
    if (msg)
        msg[0] = 0;
    for (int i = 0; i < ds.n; i++)
        if (ds.d[i].error) {
            *line = ds.d[i].line;
            if (msg)
                snprintf(msg, cap, "%s", ds.d[i].msg);
            break;
        }
    ptx_diags_free(&ds);
    return n;
}

static void int64_min(void)
{
    const char *text = HEAD ".visible .entry k()\n{\n .reg .b64 %rd<4>;\n"
                            " mov.b64 %rd1, -9223372036854775808;\n"
                            " ld.global.u64 %rd2, [%rd1+-9223372036854775808];\n ret;\n}\n";
    ptx_module m;
    int line;
    CHECK(errors(text, &m, &line, NULL, 0) == 0, "INT64_MIN literal: error at line %d", line);
    int found = 0;
    for (uint32_t i = 0; i < m.nops; i++)
        if (m.ops[i].kind == PTX_OP_IMM && m.ops[i].imm == INT64_MIN)
            found++;
        else if (m.ops[i].kind == PTX_OP_ADDR && m.ops[i].has_base && m.ops[i].imm == INT64_MIN)
            found++;
    CHECK(found == 2, "INT64_MIN kept as the immediate and the offset: %d of 2", found);
    ptx_module_free(&m);
}

static void sizes(void)
{
    static const struct { const char *decl; int bad; const char *says; } cases[] = {
        {" .reg .b32 %r<4294967295>;\n", 0, ""},
        {" .reg .b32 %r<4294967296>;\n", 1, "does not fit in 32 bits"},
        {" .reg .b32 %r<99999999999999999999999>;\n", 1, "does not fit in 32 bits"},
        {" .shared .b8 s[4294967296];\n", 1, "at most 232448 bytes"},
        {" .shared .b8 s[18446744073709551615];\n", 1, "at most 232448 bytes"},
        {" .shared .b8 s[18446744073709551616];\n", 1, "does not fit in 64 bits"},
        {" .shared .b32 s[4294967296][4294967296];\n", 1, "does not fit in 64 bits"},
        {" .shared .b8 s[4][65536];\n", 1, "262144 bytes"},
        {" .shared .b8 s[232448];\n", 0, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[512];
        snprintf(text, sizeof text, HEAD ".visible .entry k()\n{\n%s ret;\n}\n", cases[i].decl);
        ptx_module m;
        int line;
        char msg[240];
        int n = errors(text, &m, &line, msg, sizeof msg);
        CHECK((n > 0) == cases[i].bad && (!n || line == 6), "%s: %d errors, first at line %d: %s", cases[i].decl, n,
              line, msg);
        CHECK(!cases[i].bad || strstr(msg, cases[i].says), "%s: '%s' does not say '%s'", cases[i].decl, msg,
              cases[i].says);
        ptx_module_free(&m);
    }
    /* the parameter space, 64-bit sizes included */
    const char *params = HEAD ".visible .entry k(.param .align 64 .b8 tmap[9223372036854775807])\n{\n ret;\n}\n";
    ptx_module m;
    int line;
    char msg[240];
    CHECK(errors(params, &m, &line, msg, sizeof msg) == 1 && strstr(msg, "9223372036854775807 bytes") &&
              strstr(msg, "32764"), "parameter space: %s", msg);
    ptx_module_free(&m);
}

static void initialisers(void)
{
    const char *text = HEAD ".global .align 4 .b32 tbl[2][3] = {{1, -2}, {3, 4, 5}};\n"
                            ".const .u64 addr = generic(tbl+4);\n"
                            ".global .f32 f[] = {0f3F800000, 1.5, 2};\n"
                            ".visible .entry k()\n{\n ret;\n}\n";
    ptx_module m;
    int line;
    char msg[240];
    CHECK(errors(text, &m, &line, msg, sizeof msg) == 0, "initialisers: line %d: %s", line, msg);
    CHECK(m.ninits == 3, "%u initialisers", m.ninits);
    if (m.ninits == 3) {
        const ptx_init *t = &m.inits[0];
        static const uint64_t at[] = {0, 1, 3, 4, 5};
        static const int64_t val[] = {1, -2, 3, 4, 5};
        CHECK(t->nval == 5 && t->braced, "tbl: %u values", t->nval);
        for (uint32_t i = 0; i < t->nval && i < 5; i++) {
            const ptx_ival *v = &m.ivals[t->val0 + i];
            CHECK(v->index == at[i] && v->v.kind == PTX_OP_IMM && v->v.imm == val[i], "tbl value %u: [%llu] = %lld",
                  i, (unsigned long long)v->index, (long long)v->v.imm);
        }
        const ptx_ival *a = &m.ivals[m.inits[1].val0];
        CHECK(m.inits[1].nval == 1 && !m.inits[1].braced && a->generic && a->v.kind == PTX_OP_SYM && a->v.imm == 4,
              "addr = generic(tbl+4)");
        const ptx_symbol *f = &m.syms[m.inits[2].sym];
        CHECK(f->count == 3 && f->ebytes == 4 && m.inits[2].nval == 3, "f[]: %llu elements",
              (unsigned long long)f->count);
    }
    ptx_module_free(&m);
    /* a syntax error in the declaration (found there or at the next line: `= {1, 2` ends at
       `.visible`), then one at line 7: both reported (the parse goes on);
       a declaration the checker refuses, then an unknown instruction at line 7: both reported */
    static const struct { const char *decl; const char *says; int syntax; } bad[] = {
        {".global .b32 t[2] = {1, 2, 3};", "more initial values than the 2 elements", 1},
        {".global .b32 t[2][2] = {1, 2, 3, 4};", "type mismatch", 1},
        {".global .b32 t = {5};", "type mismatch", 1},
        {".global .b32 t[2] = 5;", "type mismatch", 1},
        {".global .b32 t = %r1;", "invalid initial value", 1},
        {".global .b32 t[][9223372036854775807] = {{1}, {2}, {3}};", "does not fit in 64 bits", 1},
        {".global .b32 t[2] = {1, 2", "expected", 1},
        {".global .b32 t[2", "expected", 1},
        {".shared .b32 t[2] = {1, 2};", "no initial value is allowed", 0},
        {".global .u64 t = nothere;", "not a declared variable", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text2[512];
        snprintf(text2, sizeof text2, HEAD "%s\n.visible .entry k()\n{\n bogus.u32 1%s;\n ret;\n}\n", bad[i].decl,
                 bad[i].syntax ? " 2" : "");
        ptx_diags ds = {0};
        CHECK(ptx_parse(&m, text2, strlen(text2), &ds) == 0, "oom");
        if (!ds.nerrors)
            ptx_check(&m, &ds);
        int first = 0, later = 0;
        for (int d = 0; d < ds.n; d++) {
            first |= (ds.d[d].line == 4 || ds.d[d].line == 5) && strstr(ds.d[d].msg, bad[i].says) != NULL;
            later |= ds.d[d].line == 7;
        }
        CHECK(first && later, "%s: its error (%s) and line 7's: %d %d (%d diagnostics)", bad[i].decl, bad[i].says,
              first, later, ds.n);
        ptx_diags_free(&ds);
        ptx_module_free(&m);
    }
}

int main(void)
{
    int64_min();
    sizes();
    initialisers();
    if (failures)
        printf("test_ptx_parse: %d failure(s)\n", failures);
    else
        printf("test_ptx_parse: all passed\n");
    return failures != 0;
}
