/* fuzz_launch.c - any PTX text through Kernel() and launch(): ptx_parse,
 * ptx_check, pi_lower, pi_launch on a one-CTA machine with the race checker on.
 *
 * The first input byte picks the launch (block size, grid, seed); the rest is
 * the module's text, an exactly-sized heap copy so ASan catches a read past its
 * end. With FUZZ_LAUNCH_KERNELS=<folder> (files: a launch byte, then a kernel),
 * an input whose first byte has any of bits 4-7 set names one of those kernels
 * instead (second byte) and the rest of the input rewrites its integer literals
 * one by one (a byte each: below 248 keeps it, else the next byte picks a
 * boundary value to put there), so most inputs are modules that parse and
 * launch with odd sizes, counts, offsets and loop bounds. Every pointer-sized parameter gets the address of the one registered
 * global buffer, itself an exactly-sized heap block: a write the model lets
 * through outside it is an ASan report, not a silent corruption. Bounded by
 * design: max_instructions and max_pending small, so a runaway loop or an
 * unbounded stream of copies ends in a named error, within libFuzzer's time and
 * memory limits. Properties beyond "no crash, no sanitizer report":
 * - every failed launch carries a message;
 * - a module that check() accepts lowers, or the lowering says why (a diagnostic). */
#define _POSIX_C_SOURCE 200809L   /* opendir */
#include "fuzz.h"

#include <dirent.h>

#include "check/hb.h"
#include "ptx/exec/launch.h"
#include "ptx/text/check.h"

#define GLOBAL_BYTES 4096u
#define GLOBAL_BASE 0x10000000ull

/* Counted for the campaign's report: launches made, and those that ran to the end. */
static unsigned long long launched, completed;

static void report(void)
{
    fprintf(stderr, "fuzz_launch: %llu launches, %llu ran to the end\n", launched, completed);
}

/* The kernels literal mode rewrites (FUZZ_LAUNCH_KERNELS). */
static char **kernels;
static size_t *kernel_len;
static unsigned nkernels;

static void load_kernels(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);   /* sorted: an input names the same kernel anywhere */
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        FILE *f = names[i]->d_name[0] != '.' && nkernels < 256 ? fopen(path, "rb") : NULL;
        free(names[i]);
        if (!f)
            continue;
        char *buf = malloc(1 << 20);
        size_t len = buf ? fread(buf, 1, 1 << 20, f) : 0;
        fclose(f);
        char **k2 = realloc(kernels, (nkernels + 1) * sizeof *kernels);
        size_t *l2 = k2 ? realloc(kernel_len, (nkernels + 1) * sizeof *kernel_len) : NULL;
        if (k2)
            kernels = k2;
        if (!l2 || len < 2) {
            free(buf);
            continue;
        }
        kernel_len = l2;
        kernels[nkernels] = buf;
        kernel_len[nkernels++] = len;
    }
    if (n > 0)
        free(names);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *dir = getenv("FUZZ_LAUNCH_KERNELS");
    if (dir)
        load_kernels(dir);
    atexit(report);
    return 0;
}

/* Boundary values literal mode puts in place of an integer literal. */
static const char *const boundaries[56] = {
    "0", "1", "2", "3", "4", "7", "8", "15", "16", "17", "31", "32", "33", "63", "64", "127", "128", "255",
    "256", "511", "1023", "1024", "1025", "4095", "4096", "32767", "32768", "65535", "65536", "1048576",
    "2147483647", "2147483648", "4294967295", "4294967296", "-1", "-2", "-8", "-16", "-32768", "-2147483648",
    "9223372036854775807", "-9223372036854775808", "18446744073709551615", "0x7FFFFFFF", "0x80000000",
    "0xFFFFFFFF", "0x100000000", "0xFFFFFFFFFFFFFFFF", "1099511627776", "227", "232448", "12", "24", "48",
    "96", "1000000"};

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           c == '%' || c == '.';
}

/* Kernel k with its integer literals rewritten by the bytes in[0..n): a new heap text in *out. */
static size_t rewrite(unsigned k, const uint8_t *in, size_t n, char **out)
{
    const char *t = kernels[k] + 1;            /* past the corpus file's launch byte */
    size_t len = kernel_len[k] - 1, at = 0, used = 0;
    const size_t cap = len * 21 + 64;          /* every character a literal of 20 characters */
    char *o = malloc(cap);
    *out = o;
    if (!o)
        return 0;
    for (size_t i = 0; i < len;) {
        int starts = t[i] >= '0' && t[i] <= '9' && (i == 0 || !ident_char(t[i - 1]));
        if (!starts) {
            o[at++] = t[i++];
            continue;
        }
        size_t j = i;
        while (j < len && ident_char(t[j]) && t[j] != '.' && t[j] != '%')
            j++;
        uint8_t b = used < n ? in[used++] : 0;
        if (b >= 248) {
            const char *v = boundaries[(used < n ? in[used++] : 0) % 56];
            size_t bl = strlen(v);
            memcpy(o + at, v, bl);
            at += bl;
        } else {
            memcpy(o + at, t + i, j - i);
            at += j - i;
        }
        i = j;
    }
    return at;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const uint8_t pick = data[0];
    char *text;
    if ((pick & 0xF0) && nkernels) {
        size = rewrite(data[1] % nkernels, data + 2, size - 2, &text);
        if (!size) {
            free(text);
            return 0;
        }
    } else {
        size -= 1;
        text = malloc(size);
        memcpy(text, data + 1, size);
    }
    ptx_module mod;
    ptx_diags d;
    pi_prog prog;
    memset(&mod, 0, sizeof mod);
    memset(&d, 0, sizeof d);
    memset(&prog, 0, sizeof prog);
    int lowered = 0;
    if (ptx_parse(&mod, text, size, &d) == 0 && d.nerrors == 0) {
        ptx_check(&mod, &d);
        if (d.nerrors == 0) {
            int before = d.nerrors;
            if (pi_lower(&prog, &mod, NULL, &d) == 0)
                lowered = d.nerrors == before;
            else
                memset(&prog, 0, sizeof prog);         /* out of memory: nothing to run */
            FZ_CHECK(lowered || d.nerrors > before || prog.nins == 0,
                     "a refused lowering without a diagnostic");
        }
    }
    if (lowered) {
        pa_machine m;
        pa_error err;
        memset(&err, 0, sizeof err);
        uint32_t smem = prog.static_smem > prog.dyn_smem ? prog.static_smem : prog.dyn_smem;
        smem = smem < 16 ? 16 : smem;
        if (smem <= 64 * 1024 && pa_machine_init(&m, 1, smem + 1024, &err) == PA_OK) {
            int rc = pa_watch_attach(&m, &err);
            rc = rc ? rc : pa_hb_set(&m, 1, &err);
            uint8_t *gmem = calloc(1, GLOBAL_BYTES);
            uint8_t *gvars = prog.gvar_bytes && prog.gvar_bytes <= (1u << 20) ? calloc(1, prog.gvar_bytes) : NULL;
            uint64_t id;
            if (!rc)
                rc = pa_global_add(&m.global, GLOBAL_BASE, GLOBAL_BYTES, gmem, &id, &err);
            if (!rc && gvars)
                rc = pa_global_add(&m.global, GLOBAL_BASE + 0x1000000, prog.gvar_bytes, gvars, &id, &err);
            uint8_t *params = calloc(1, prog.param_bytes ? prog.param_bytes : 1);
            for (uint32_t i = 0; params && i < prog.nparams; i++)
                if (prog.params[i].size == 8)
                    memcpy(params + prog.params[i].offset, &(uint64_t){GLOBAL_BASE + 64u * (i % 8)}, 8);
            if (!rc && params && (!prog.gvar_bytes || gvars)) {
                pi_launch_args a;
                memset(&a, 0, sizeof a);
                static const uint32_t blocks[4] = {1, 32, 64, 128};
                for (int k = 0; k < 3; k++)
                    a.grid[k] = a.block[k] = a.cluster[k] = 1;
                a.block[0] = prog.has_reqntid ? prog.reqntid[0] : blocks[pick & 3];
                a.block[1] = prog.has_reqntid && prog.reqntid[1] ? prog.reqntid[1] : 1;
                a.block[2] = prog.has_reqntid && prog.reqntid[2] ? prog.reqntid[2] : 1;
                a.grid[0] = 1 + ((pick >> 2) & 1);
                a.seed = pick >> 3;
                a.max_instructions = 200000;
                a.max_pending = 256;
                a.params = params;
                a.gvar_base = gvars ? GLOBAL_BASE + 0x1000000 : 0;
                pi_stats st;
                memset(&err, 0, sizeof err);
                rc = pi_launch(&m, &prog, &a, &st, &err);
                pi_stats_free(&st);
                FZ_ERR_OK(rc, err);
                launched++;
                completed += rc == PA_OK;
            }
            free(params);
            pa_machine_free(&m);
            free(gmem);
            free(gvars);
        }
    }
    pi_prog_free(&prog);
    ptx_module_free(&mod);
    ptx_diags_free(&d);
    free(text);
    return 0;
}
