/* fuzz_launch.c - any PTX text through Kernel() and launch(): ptx_parse,
 * ptx_check, pi_lower, pi_launch on a one-CTA machine with the race checker on.
 *
 * The first input byte picks the launch (block size, grid, seed); the rest is
 * the module's text, an exactly-sized heap copy so ASan catches a read past its
 * end. Every pointer-sized parameter gets the address of the one registered
 * global buffer, itself an exactly-sized heap block: a write the model lets
 * through outside it is an ASan report, not a silent corruption. Bounded by
 * design: max_instructions and max_pending small, so a runaway loop or an
 * unbounded stream of copies ends in a named error, within libFuzzer's time and
 * memory limits. Properties beyond "no crash, no sanitizer report":
 * - every failed launch carries a message;
 * - a module that check() accepts lowers, or the lowering says why (a diagnostic). */
#include "fuzz.h"

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

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    atexit(report);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const uint8_t pick = data[0];
    size -= 1;
    char *text = malloc(size);
    memcpy(text, data + 1, size);
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
