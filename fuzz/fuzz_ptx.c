/* fuzz_ptx.c - any bytes as PTX text: parse, check, print. Properties: nothing crashes; every
 * rejection is an error diagnostic with a message and a position inside the text; a module that
 * parses prints to text that parses again and prints the same (print is a fixed point). */
#include "fuzz.h"

#include "ptx/ptx.h"

static void check_diags(const ptx_diags *ds, const uint8_t *data, size_t size)
{
    (void)data;
    for (int i = 0; i < ds->n; i++) {
        FZ_CHECK(ds->d[i].msg[0] != 0, "a diagnostic without a message");
        FZ_CHECK(ds->d[i].line >= 1 && (size_t)ds->d[i].line <= size + 2, "line %d outside the text", ds->d[i].line);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ptx_module m;
    ptx_diags ds = {0};
    if (ptx_parse(&m, (const char *)data, size, &ds) == 0) {
        if (!ds.nerrors)
            ptx_check(&m, &ds);
        check_diags(&ds, data, size);
        if (!ds.nerrors || 1) {
            size_t n1 = 0;
            char *t1 = ptx_print(&m, &n1);
            FZ_CHECK(t1 != NULL, "print failed");
            ptx_module m2;
            ptx_diags ds2 = {0};
            int parsed_clean = 0;
            {
                ptx_diags d0 = {0};
                ptx_module m0;
                ptx_parse(&m0, (const char *)data, size, &d0);
                parsed_clean = d0.nerrors == 0;
                ptx_module_free(&m0);
                ptx_diags_free(&d0);
            }
            if (ptx_parse(&m2, t1, n1, &ds2) == 0 && parsed_clean) {
                FZ_CHECK(ds2.nerrors == 0, "printed text does not parse: %s", ds2.n ? ds2.d[0].msg : "");
                size_t n2 = 0;
                char *t2 = ptx_print(&m2, &n2);
                FZ_CHECK(t2 && n2 == n1 && !memcmp(t1, t2, n1), "print is not a fixed point");
                free(t2);
            }
            ptx_module_free(&m2);
            ptx_diags_free(&ds2);
            free(t1);
        }
    }
    ptx_module_free(&m);
    ptx_diags_free(&ds);
    return 0;
}
