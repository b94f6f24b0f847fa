/* fuzz_ptx.c - the PTX front end on any text: ptx_parse, ptx_check, ptx_print.
 *
 * The text is an exactly-sized heap copy of the input (no terminating NUL),
 * so ASan catches a read past its end. Properties beyond "no crash, no
 * sanitizer report":
 * - every diagnostic has a message and a line inside the text (or 0);
 * - a module that parses without an error prints to text that parses
 *   without an error and prints to itself (print . parse is the identity on
 *   printed text), and the checker finds as many errors in the printed text
 *   as in the original. */
#include "fuzz.h"

#include "ptx/text/ptx.h"

static int lines_of(const char *t, size_t n)
{
    int k = 1;
    for (size_t i = 0; i < n; i++)
        k += t[i] == '\n';
    return k;
}

static void check_diags(const ptx_diags *ds, int nlines)
{
    for (int i = 0; i < ds->n; i++) {
        FZ_CHECK(ds->d[i].msg[0] != 0, "diagnostic %d without a message", i);
        FZ_CHECK(ds->d[i].line >= 0 && ds->d[i].line <= nlines + 1, "diagnostic line %d of a %d-line text",
                 ds->d[i].line, nlines);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    memcpy(text, data, size);
    ptx_module m;
    ptx_diags d;
    memset(&m, 0, sizeof m);
    memset(&d, 0, sizeof d);
    if (ptx_parse(&m, text, size, &d) != 0) {   /* out of memory: nothing to check */
        ptx_module_free(&m);
        ptx_diags_free(&d);
        free(text);
        return 0;
    }
    const int parse_errors = d.nerrors, nlines = lines_of(text, size);
    check_diags(&d, nlines);
    if (parse_errors == 0) {
        ptx_check(&m, &d);
        check_diags(&d, nlines);
        size_t n1 = 0;
        char *once = ptx_print(&m, &n1);
        if (once) {
            char *copy = malloc(n1 ? n1 : 1);   /* exactly sized again */
            memcpy(copy, once, n1);
            ptx_module m2;
            ptx_diags d2;
            memset(&m2, 0, sizeof m2);
            memset(&d2, 0, sizeof d2);
            if (ptx_parse(&m2, copy, n1, &d2) == 0) {
                FZ_CHECK(d2.nerrors == 0, "printed text does not parse: %s (line %d)", d2.n ? d2.d[0].msg : "",
                         d2.n ? d2.d[0].line : 0);
                ptx_check(&m2, &d2);
                FZ_CHECK(d2.nerrors == d.nerrors, "the checker finds %d errors in the printed text, %d in the original",
                         d2.nerrors, d.nerrors);
                size_t n2 = 0;
                char *twice = ptx_print(&m2, &n2);
                FZ_CHECK(!twice || (n2 == n1 && !memcmp(once, twice, n1)), "printing the printed text changes it");
                free(twice);
            }
            ptx_module_free(&m2);
            ptx_diags_free(&d2);
            free(copy);
            free(once);
        }
    }
    ptx_module_free(&m);
    ptx_diags_free(&d);
    free(text);
    return 0;
}
