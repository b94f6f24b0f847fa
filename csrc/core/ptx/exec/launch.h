/* launch.h - running a lowered kernel on a machine: its threads, their
 * registers, the scheduler that interleaves them, and the meeting points
 * (bar.sync, barrier.cluster, warp and warpgroup collectives).
 *
 * The grid's clusters run one after another on the machine's cluster (the
 * machine has one cluster's shared memory); inside a cluster, every thread
 * of every CTA runs, interleaved by a seeded scheduler as
 * ptxasync.pipeline does: a thread chosen at random runs until it has done
 * a random number (1..max_burst) of operations that touch the model; a
 * thread whose mbarrier wait returned False yields and counts as blocked
 * until some thread makes progress; when every thread is blocked, the
 * machine completes one pending operation (pa_watch_step); when none can
 * help, that is the deadlock, listing each blocked thread and its line.
 */
#ifndef PTX_LAUNCH_H
#define PTX_LAUNCH_H

#include "ptx/exec/prog.h"
#include "ptx/exec/lanes.h"

typedef struct {
    uint32_t grid[3], block[3], cluster[3];
    uint64_t seed;
    uint32_t max_burst;          /* 0: 8 */
    uint64_t max_instructions;   /* per launch; 0: PI_MAX_INSTRUCTIONS */
    uint32_t max_pending;        /* asynchronous operations pending at once; 0: PI_MAX_PENDING */
    const uint8_t *params;       /* prog->param_bytes bytes, laid out as prog->params says */
    uint64_t gvar_base;          /* where prog->gimage's module variables are (a registered global buffer) */
    uint64_t heap_base, heap_bytes;  /* malloc's heap (a registered global buffer; prog->uses_heap) */
} pi_launch_args;

/* One printf call's output: who made it, and its place among that thread's calls. */
typedef struct {
    uint32_t ctaid[3], tid[3];
    uint64_t block;              /* the CTA's linear index in the grid (x fastest) */
    uint32_t thread, seq;        /* the thread's linear index in its CTA; its calls in order */
    char *text;
    size_t len;
} pi_print;

typedef struct {
    uint64_t instructions;       /* PTX instructions executed (guarded-off ones included) */
    uint64_t ext;                /* of which touched the model */
    uint64_t steps;              /* pending operations the scheduler completed */
    pi_print *prints;            /* printf output, ordered by (seq, block, thread) at the launch's end */
    uint32_t nprints, capprints;
    uint64_t print_bytes;        /* their bytes: past PI_PRINTF_BYTES, later output is dropped */
    uint32_t print_dropped;      /* printf calls whose output was dropped */
} pi_stats;

#define PI_PRINTF_BYTES (1ull << 20)   /* cudaLimitPrintfFifoSize's default, 1 MiB */

/* Free what a launch left in st (its printf output). */
void pi_stats_free(pi_stats *st);

/* Run p on m. st is an output, filled from zero whatever the result: pi_stats_free it. */
int pi_launch(pa_machine *m, const pi_prog *p, const pi_launch_args *a, pi_stats *st, pa_error *err);

/* --- inside a launch (interp.c, ops.c, coll.c) --------------------------- */

enum { PI_T_RUN = 0, PI_T_SPIN, PI_T_BAR, PI_T_COLL, PI_T_CLUSTER, PI_T_DONE };

/* What running a thread ended with. */
enum { PI_R_AGAIN = 0, PI_R_PROGRESS, PI_R_SPIN, PI_R_PARK, PI_R_EXIT, PI_R_ERR, PI_R_SPLIT };

/* A warp's lanes: apart (each thread scheduled on its own), converged (one
   scheduling unit: its lowest live lane stands in the ready or watched list for
   all of them), or just met together (converged at its next turn if they all
   still stand at one instruction). */
enum { PI_W_APART = 0, PI_W_CONVERGED, PI_W_MET };

/* An active call of a thread: where it returns, and what it saved. */
typedef struct {
    uint32_t ret_pc;             /* the caller's next instruction */
    uint32_t func, call;         /* the callee (prog->funcs), the call (prog->calls) */
    uint64_t base;               /* the callee's frame in the stack */
    uint64_t prev_top;           /* the stack's top before the call */
    uint64_t save;               /* the callee's registers as they were: saved[save ..] */
} pi_frame;

/* Registers are stored lane-major per warp: a warp's block holds, for each register k, the
 * k-th register of its lanes side by side (lane l's at block[k * S + l]), so that a converged
 * warp's instruction reads and writes whole rows, one contiguous pass over its lanes that the
 * compiler vectorises (interp.c). S, the lane stride, is 32, or for a CTA of fewer than 32
 * threads the power of two at or above its count (a one-thread kernel does not hold 32 lanes'
 * room). A thread sees its registers through pi_reg: its lane's register 0 (t->lr), then one
 * every S (t->lsh = log2 S). */
typedef struct {
    uint64_t *lr;                /* register 0 of its lane in its warp's block; register k: PI_REG(t, k) */
    uint8_t lsh;                 /* log2 of the lane stride */
    uint8_t *local;              /* its stack: the .entry's frame, then a frame per active call */
    uint64_t stack_top, stack_cap;
    pi_frame *frames;
    uint32_t depth, capframes;
    uint64_t *saved;             /* registers saved by the active calls */
    uint64_t nsaved, capsaved;
    uint32_t nprintf;            /* its printf calls so far */
    uint32_t pc;
    uint32_t tid, cta;           /* thread id in its CTA, CTA rank in the cluster */
    uint8_t state;
    uint32_t rpos;               /* position in the ready list, PI_NOREG: not in it */
    uint64_t spin_epoch;         /* blocked while this equals the launch's epoch */
    /* the mbarrier a failed wait polled, as it was then: the thread stays blocked
       until the barrier changes (or, for try_wait, an operation that signals it is
       pending: the next try_wait completes it); NULL: until any progress */
    const pa_mbar_slot *ws;
    pa_mbarrier snap;
    int ws_try;
    uint64_t cl_phase;           /* barrier.cluster: the phase it arrived in */
    int cl_arrived;
    uint32_t wg_commits, wg_done;/* wgmma-groups it committed, and retired by wait_group (wgpend.c) */
    uint8_t wg_watch;            /* a wgmma it issued is pending: each instruction is checked */
    uint8_t bar_id, bar_sync;    /* state BAR: the barrier, and whether it waits for it (else for its warp) */
} pi_thread;

/* Register k of thread t (an lvalue): the one place a thread's registers are indexed. */
#define PI_REG(t, k) ((t)->lr[(size_t)(k) << (t)->lsh])

/* Row k of the warp block whose lane 0 is thread T: register k of every lane, lane l at [l]. */
static inline uint64_t *pi_row(const pi_thread *T, uint32_t k)
{
    return T->lr + ((size_t)k << T->lsh);
}

typedef struct {
    uint32_t warps;              /* warp arrivals marked (coll.c: barriers count warps) */
    uint32_t *lanes;             /* per warp of the CTA: lanes arrived, the warp's arrival not yet marked */
    uint32_t expected;           /* thread count b; 0: every warp of the CTA */
    uint32_t *who;               /* arrived threads that wait (.sync, .red) (for the memory model) */
    uint32_t nwho;
    uint32_t nthreads;           /* threads arrived, bar.arrive ones too */
    uint32_t red_true;           /* bar.red: arrived threads whose predicate is true */
} pi_bar;

/* A warp's or a warpgroup's collective under way. */
typedef struct {
    uint32_t pc;                 /* PI_NOREG: none */
    uint64_t members;            /* lanes (bit = lane or warpgroup thread / 2 .. see coll.c) */
    uint64_t arrived[2];         /* 128 bits: warpgroup threads */
} pi_meet;

/* The threads blocked in a wait on one mbarrier, and the barrier as it was
 * when the first of them blocked: when it changes, they all run again. */
typedef struct {
    const pa_mbar_slot *ws;
    pa_mbarrier snap;
    uint32_t *who;
    uint32_t n, cap, ntry;
} pi_watched;

typedef struct pi_launch_state {
    pa_machine *m;
    const pi_prog *p;
    const pi_launch_args *a;
    pi_thread *t;                /* csize * nthr threads of the running cluster */
    uint32_t nt, nthr, csize;
    uint32_t cluster_index;      /* of the grid's clusters */
    uint32_t ctaid[PA_MAX_CLUSTER][3];  /* grid position of each rank */
    uint32_t live[PA_MAX_CLUSTER];      /* threads of each CTA not exited */
    uint32_t exited[PA_MAX_CLUSTER];
    pi_bar bar[PA_MAX_CLUSTER][16];
    pi_meet *warp;               /* per (cta, warp) */
    uint32_t *wlive;             /* per (cta, warp): lanes that exist and have not exited */
    uint8_t *wconv;              /* per (cta, warp): PI_W_* */
    pi_meet *wg;                 /* per (cta, warpgroup) */
    uint32_t nwarps, nwgs;       /* per CTA */
    uint64_t cl_phase;           /* barrier.cluster */
    uint32_t cl_count;
    uint64_t epoch;              /* progress count: blocked threads wake when it moves */
    uint64_t forced;             /* epoch + 1 when every blocked thread was last run again */
    uint32_t *ready;             /* threads that can run (state RUN), in no order */
    uint32_t nready;
    pi_watched *watched;         /* mbarriers threads are blocked on */
    uint32_t nwatched, capwatched;
    uint32_t nwatching;          /* threads in the watched lists (their n, summed) */
    uint32_t *epoch_spin;        /* threads blocked with no mbarrier to watch: they wake on progress */
    uint32_t nepoch_spin;
    uint64_t rng;
    uint64_t *inv;               /* [n]: pi_mod_inverse(n) once a draw below n was made (0: not yet) */
    uint64_t budget;             /* instructions left */
    uint64_t timer_reads;        /* reads of %globaltimer / %clock so far (ops.c, PX_TIMER) */
    uint32_t max_pending;        /* operations pending at once */
    uint32_t burst;              /* operations the running thread may still do */
    pa_tensormap *maps;          /* decoded tensor-map params (prog->nparams; rank 0: not yet) */
    uint8_t *map_ok;
    pi_stats *st;
    const pi_lanes *lanes;       /* a converged warp's register passes, for the vector level in use */
    uint32_t err_pc;             /* the instruction that failed */
    uint32_t err_tid, err_cta;
    struct pi_wgpend *wgp;       /* per (cta, warpgroup): pending wgmma (wgpend.c); NULL: not kept */
    struct pi_chunk *chunks;     /* malloc's heap: its pieces in address order (devrt.c) */
    uint32_t nchunks, capchunks;
} pi_launch_state;

/* x % n (n >= 1) by a multiplication: with inv = floor((2^64 - 1) / n), the
 * high half of x * inv is x / n or one less (x * inv / 2^64 lies in
 * (x/n - 1, x/n]), so one correction gives the remainder exactly. */
static inline uint64_t pi_mod_inverse(uint64_t n)
{
    return UINT64_MAX / n;
}

static inline uint64_t pi_mod(uint64_t x, uint64_t n, uint64_t inv)
{
    uint64_t q = (uint64_t)(((unsigned __int128)x * inv) >> 64);
    uint64_t r = x - q * n;
    return r >= n ? r - n : r;
}

/* Run thread t until it yields (PI_R_*). */
int pi_run_thread(pi_launch_state *L, pi_thread *t, pa_error *err);
/* Run the converged warp whose lane 0 is T and whose live lanes are `lanes`
   (PI_R_PROGRESS, PI_R_SPIN, PI_R_SPLIT, PI_R_ERR with the lane in *failed). */
int pi_run_warp(pi_launch_state *L, pi_thread *T, uint32_t lanes, pi_thread **failed, pa_error *err);
/* A PI_EXT instruction of thread t (ops.c; collectives go to coll.c). */
/* isspacep, getctarank (space.c). */
int pi_space_exec(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err);
/* PX_STACK and PX_BRX for thread t (stack.c): its pc moves on (PI_R_AGAIN) or PI_R_ERR. */
int pi_stack_exec(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err);
int pi_ext_exec(pi_launch_state *L, pi_thread *t, const pi_ins *in, pa_error *err);
/* atom / red by thread t (atom.c): PA_OK or an error. */
int pi_atom_exec(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err);
/* multimem.ld_reduce / st / red by thread t (multimem.c): PA_OK or an error. */
int pi_multimem_exec(pi_launch_state *L, pi_thread *t, const pi_ext *x, pa_error *err);
/* wgpend.c: the wgmma.mma_async operations no wgmma.wait_group has retired. */
/* Allocate L->wgp (race checker on) or leave it NULL; free it. */
int pi_wg_start(pi_launch_state *L, pa_error *err);
void pi_wg_free(pi_launch_state *L);
/* A new cluster: CTAs start in the slots (groups count on from the last ones). */
void pi_wg_restart(pi_launch_state *L);
/* The group a wgmma of the warpgroup whose first thread is `first` issues into. */
uint32_t pi_wg_group(const pi_launch_state *L, uint32_t cta, uint32_t first);
/* The warpgroup issued the wgmma at pc (after its operands were read). */
int pi_wg_issue(pi_launch_state *L, uint32_t cta, uint32_t first, uint32_t pc, pa_error *err);
/* wgmma.commit_group / wgmma.wait_group n of thread t. */
void pi_wg_commit(pi_launch_state *L, pi_thread *t);
void pi_wg_wait(pi_launch_state *L, pi_thread *t, uint32_t n);
/* Thread t (t->wg_watch) is about to run `in`: PA_OK, or the wgmma-pending hazard. */
int pi_wg_check(pi_launch_state *L, pi_thread *t, const pi_ins *in, pa_error *err);

/* The PI_EXT instruction `in` (no collective) for each of lanes `on` of the warp
   whose lane 0 is T, in lane order (the caller keeps the lanes' pc): lanes
   whose wait answered False in *spin; an error names its lane in *failed (its
   pc at `in`). */
int pi_ext_exec_lanes(pi_launch_state *L, pi_thread *T, uint32_t on, const pi_ins *in, uint32_t *spin,
                      pi_thread **failed, pa_error *err);
int pi_coll_exec(pi_launch_state *L, pi_thread *t, const pi_ins *in, const pi_ext *x, pa_error *err);
/* A thread exits: meetings that waited for it may complete (coll.c). */
int pi_coll_thread_exit(pi_launch_state *L, pi_thread *t, pa_error *err);

/* call and ret of thread t (call.c): its pc on to the callee's first instruction, back to
   the caller, or past a runtime function the call ran; PA_OK or an error. */
int pi_call_exec(pi_launch_state *L, pi_thread *t, const pi_ins *in, pa_error *err);
/* The .entry's frame at a thread's start: its variables' registers (call.c). */
void pi_frame_start(const pi_prog *p, pi_thread *t);
/* A runtime function (PI_BI_*) called by thread t with its arguments (devrt.c): *ret its
   result; PA_OK or an error (a failed assert: PA_ERR_ASSERT). */
int pi_devrt(pi_launch_state *L, pi_thread *t, int builtin, const uint64_t *args, uint64_t *ret, pa_error *err);
/* The printf output in its order (devrt.c): each thread's n-th call, by block, then thread. */
void pi_prints_sort(pi_stats *st);

/* Thread t may run (it was parked or blocked): state RUN, in the ready list.
   Inline: the run loop, the launch and the collectives all wake threads. */
static inline void pi_ready(pi_launch_state *L, pi_thread *t)
{
    t->state = PI_T_RUN;
    if (t->rpos == PI_NOREG) {
        t->rpos = L->nready;
        L->ready[L->nready++] = (uint32_t)(t - L->t);
    }
}

#endif
