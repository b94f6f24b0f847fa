"""Machine instructions a replayed load costs outside its row copy, counted by callgrind.

    PYTHONPATH=src python bench/replay_ir.py [--areas]

Replays the gemm_replay trace of a 512 x 512 x 4096 bf16 GEMM (4,096 records, 2,048
loads of 128 x 64 bf16, 128B swizzle) twice under `valgrind --tool=callgrind`,
collecting inside the binding's replay call only (a few hundred instructions a call
besides pa_replay_threads), and prints the instructions a load (4,096 loads) in the row
copy (the lines_in movers, which valgrind runs as AVX2) and outside it (the bookkeeping:
record decode, plan, queue, box walk, mbarrier, checker hooks). No noise from the
machine's load: the counts are the same on every run of one build. --areas: the outside
count split by area, by the function each instruction is in (with link-time
optimisation much is inlined into its caller, and counted there). Not a bench/run.py key.
"""
import os
import re
import subprocess
import sys
import tempfile

AREAS = [
    ("record decode", ["pa_replay_threads", "py_replay"]),
    ("plan memo", ["pa_copy_plan_make_memo", "memcmp", "operand_counts", "pa_tile_start_rules", "pa_dtype_get"]),
    ("box walk", ["pa_tile_load", "walk_common", "pa_walk_tile", "box_rows", "load_direct", "put_rows",
                  "pa_rows_fill_box", "pa_global_resolve", "pa_lines_pick", "pa_swizzle_atom", "pa_simd_level",
                  "pa_copy_load", "pa_smem_of"]),
    ("mbarrier lookups", ["pa_mbar_slot_index", "pa_mbar_slot_find", "pa_machine_mbar_slot",
                          "pa_machine_mbar_lookup", "pa_machine_mbar", "lookup", "pa_check_mbar_addr",
                          "pa_smem_resolve"]),
    ("queue", ["pa_enqueue", "pa_enqueue_slot", "queue_slot", "list_push", "list_remove", "grow", "track_list",
               "pa_complete_id", "free_slot", "free", "malloc", "alloc_slot", "pa_op_slot", "pick"]),
    ("credit", ["load_complete", "pa_defer_load", "pa_signal_slot", "on_signal", "pa_sync_credit",
                "pa_mbar_complete_tx", "trace_flips", "flips", "check_overdelivered", "overdelivered",
                "pa_hb_mbar_phase"]),
    ("checker hooks", ["pa_check_on_issue", "pa_hb_on_issue", "pa_check_on_complete", "pa_check_on_done"]),
]
OTHER = "issue, arrive, wait, rest"
LOADS = 4096


def replay():
    import numpy as np
    import ptxasync as pa
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from run import gemm_trace
    M = N = 512
    rng = np.random.default_rng(2)
    A = rng.integers(0, 1 << 16, size=(M, 4096), dtype=np.uint16)
    B = rng.integers(0, 1 << 16, size=(N, 4096), dtype=np.uint16)
    gpu = pa.Machine(ctas=1, smem_bytes=200 * 1024, checks=False, race_checks=False)   # as the key's
    ga, gb = gpu.register(A), gpu.register(B)
    am = pa.TensorMap.from_array(A, (128, 64), ga.address, swizzle="128B", dtype="bf16")
    bm = pa.TensorMap.from_array(B, (128, 64), gb.address, swizzle="128B", dtype="bf16")
    for s in range(4):
        gpu.mbarrier(8 + 8 * s).init(1)
    tr = gemm_trace(am, bm, 8, M=M, N=N, K=4096, stages=4)
    gpu.replay(tr)
    gpu.replay(tr)


def area(fn):
    for a, names in AREAS:
        if any(fn == n or fn.startswith(n + ".") or (n == "memcmp" and "memcmp" in fn) for n in names):
            return a
    return OTHER


def main():
    if "--child" in sys.argv:
        replay()
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=py_replay*",
                        f"--callgrind-out-file={out}", sys.executable, os.path.abspath(__file__), "--child"],
                       check=True, capture_output=True)
        text = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", out], check=True,
                              capture_output=True, text=True).stdout
    copy, by = 0, {}
    listing = False
    for line in text.splitlines():
        listing = listing or "file:function" in line
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(\S+)", line) if listing else None
        if not m:
            continue
        n, fn = int(m.group(1).replace(",", "")), m.group(2).split(":")[-1]
        if "lines_in" in fn:
            copy += n
        else:
            by[area(fn)] = by.get(area(fn), 0) + n
    print(f"row copy            {copy / LOADS:8.0f} instructions a load")
    print(f"outside the copy    {sum(by.values()) / LOADS:8.0f} instructions a load")
    if "--areas" in sys.argv:
        for a in [x for x, _ in AREAS] + [OTHER]:
            print(f"  {a:18s}{by.get(a, 0) / LOADS:8.0f}")


if __name__ == "__main__":
    main()
