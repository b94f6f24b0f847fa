"""Every performance figure of ptxasync, as ratios to a plain baseline in the same run.

    python bench/run.py [--json] [--rounds N] [--keys k1,k2,...]

Each key times the model and its baseline (C memcpy/memset of the same bytes,
NumPy, or Triton's interpreter) alternately in thread CPU time, N rounds
(default 5, at least 3), and reports
the median of the per-round ratios  r = model throughput / baseline throughput
(higher is better). The pure-C keys come from bench_core.c, built here with
gcc -O2 against csrc/core; the others go through the Python API.

With --json the last line printed is one JSON object {key: {"ratio": r, ...}}
for every key, each naming the machine ("machine": CPU, cores, memcpy GB/s),
and under "machine" the full record (CPU model, cores, the vector level in
use, one 256 MiB memcpy's GB/s); without it, a table. The figures of the former
bench_tile_load.py (one-by-one Python tile loads and the per-operation cost)
are kept under tile_load_py as "one_by_one_ratio" and "us_per_issue_and_wait".
"""
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # idle BLAS threads would steal a core

import argparse
import ctypes
import glob
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import ptxasync as pa

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import census_race  # noqa: E402  (bench/census_race.py)

C_KEYS = ["tile_load_c", "oob_nan_fill", "oob_half", "tf32_load", "tile_store", "im2col_load", "im2col_load_unswizzled",
          "gather4_load", "bulk_copy", "cp_async_batch",
          "tensor_reduce_add_bf16", "tensor_reduce_add_f16", "tensor_reduce_add_f32",
          "tensor_reduce_add_f32_ftz", "tensor_reduce_add_u32", "bulk_reduce_add_f32",
          "bulk_reduce_add_noftz_bf16", "bulk_reduce_add_noftz_f16", "deep_queue"]
# the race checker's cost on each census kernel: race_census.<name>.<arch>
CENSUS_KEYS = [f"race_census.{n}.{a}" for n, a in census_race.cases()]
PY_KEYS = ["tile_load_py", "tile_load_4k_vs_numpy", "gemm_replay", "triton_interp", "race_checks_pipeline", "ptx_check",
           "ptx_interp", "ptx_mainloop", "mma_exact", "cp_async_vs_tma", "wgmma_matmul_512", *CENSUS_KEYS]
ORDER = ["tile_load_py", "tile_load_c", "tile_load_4k_vs_numpy", "oob_nan_fill", "oob_half",
         "tf32_load", "tile_store", "im2col_load", "im2col_load_unswizzled", "gather4_load", "bulk_copy", "cp_async_batch",
         "tensor_reduce_add_bf16", "tensor_reduce_add_f16", "tensor_reduce_add_f32",
         "tensor_reduce_add_f32_ftz", "tensor_reduce_add_u32", "bulk_reduce_add_f32",
         "bulk_reduce_add_noftz_bf16", "bulk_reduce_add_noftz_f16", "deep_queue",
         "gemm_replay", "triton_interp", "race_checks_pipeline", "ptx_check", "ptx_interp", "ptx_mainloop", "mma_exact",
         "cp_async_vs_tma", "wgmma_matmul_512", *CENSUS_KEYS]
# every copy path 0.8, every reduction 0.5 (of the same-run baseline, on any machine)
FLOORS = {"tile_load_py": 0.8, "tile_load_c": 0.9, "tile_load_4k_vs_numpy": 0.8, "oob_nan_fill": 0.8,
          "oob_half": 0.8, "tf32_load": 0.8, "tile_store": 0.8, "im2col_load": 0.8, "im2col_load_unswizzled": 0.8, "gather4_load": 0.8,
          "bulk_copy": 0.8, "cp_async_batch": 0.8, "deep_queue": 0.67, "gemm_replay": 0.8,
          "triton_interp": 100,
          "race_checks_pipeline": 1 / 3,   # the memory model on costs at most 3x the run without it
          "ptx_check": 1.0,
          "ptx_interp": 1.0,               # 20 M scalar PTX instructions a second on one core
          "ptx_mainloop": 1 / 3,           # the PTX mainloop at most 3x the replay of its loads
          "mma_exact": 1 / 3,              # the H200's tensor-core bits at most 3x a plain f32 sum
          "cp_async_vs_tma": 0.5,          # a cp.async-staged loop at most 2x its TMA twin (checks off)
          "wgmma_matmul_512": 1 / 30,      # a checked 512^3 Triton wgmma matmul at most 30x NumPy's f32 matmul
          **{k: 0.5 for k in CENSUS_KEYS},  # a census kernel with the race checker at most 2x without
          **{k: 0.5 for k in ORDER if "reduce" in k}}


def build(tmp):
    """bench_core (the C-core keys) and libmemcpy_rows.so (the Python keys' baseline)."""
    core = sorted(glob.glob(os.path.join(ROOT, "csrc", "core", "**", "*.c"), recursive=True))
    exe = os.path.join(tmp, "bench_core")
    inc = ["-I" + os.path.join(ROOT, "csrc", "core"), "-I" + os.path.join(ROOT, "csrc", "include")]
    # the timing loops and their memcpy baselines: plain -O2, outside the
    # link-time optimisation (it would compile the baselines differently too)
    main_o = os.path.join(tmp, "bench_core.o")
    subprocess.run(["gcc", "-std=c11", "-O2", *inc, "-c", os.path.join(HERE, "bench_core.c"), "-o", main_o],
                   check=True)
    # the core as setup.py builds the extension: -O2 with link-time optimisation
    subprocess.run(["gcc", "-std=c11", "-O2", "-flto=auto", *inc, *core, main_o, "-o", exe, "-lm", "-pthread"],
                   check=True)
    return exe, memcpy_rows_lib(tmp)


def memcpy_rows_lib(tmp):
    """libmemcpy_rows.so, built in tmp: the baseline that copies the rows a load reads."""
    so = os.path.join(tmp, "libmemcpy_rows.so")
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", os.path.join(HERE, "memcpy_rows.c"), "-o", so],
                   check=True)
    lib = ctypes.CDLL(so)
    lib.memcpy_rows.restype = None
    lib.memcpy_rows.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    lib.memcpy_rows_staged.restype = None
    lib.memcpy_rows_staged.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 4 + [ctypes.c_int64] * 5
    return lib


def paired(model, base, rounds):
    """Median over rounds of t_base / t_model, timing the two alternately, in
    thread CPU time (the machine is shared: wall time would count other
    processes' time slices against whichever side was running)."""
    model()
    base()
    ratios, tm, tb = [], [], []
    for _ in range(rounds):
        t0 = time.thread_time()
        model()
        t1 = time.thread_time()
        base()
        t2 = time.thread_time()
        tm.append(t1 - t0)
        tb.append(t2 - t1)
        ratios.append((t2 - t1) / (t1 - t0))
    return statistics.median(ratios), statistics.median(tm), statistics.median(tb)


def has_batch(gpu):
    return hasattr(gpu, "cp_async_bulk_tensor_load_batch")


# --- tile_load_py -------------------------------------------------------------
def bench_tile_load_py(lib, rounds, ntiles=2000, seed=1):
    rows, cols = 16384, 8192                     # 16384 x 8192 bf16 = 256 MiB
    box_rows, box_cols = 256, 64                 # 256 rows of 64 elements (128 B) = 32 KiB
    rng = np.random.default_rng(seed)
    # Real data in every page (an untouched zero page would make memcpy look faster).
    tensor = rng.integers(0, 1 << 16, size=(rows, cols), dtype=np.uint16)
    r0 = rng.integers(0, rows - box_rows + 1, ntiles)
    c0 = rng.integers(0, (cols - box_cols) // 8 + 1, ntiles) * 8     # 16-byte aligned c0
    gpu = pa.Machine(ctas=1, smem_bytes=200 * 1024, checks=False)
    g = gpu.register(tensor)
    tmap = pa.TensorMap.from_array(tensor, (box_rows, box_cols), g.address, swizzle="128B", dtype="bf16")
    bar = gpu.mbarrier(0)
    bar.init(1)
    nbytes = tmap.box_bytes
    coords = list(zip(c0.tolist(), r0.tolist()))

    def one_by_one():
        parity = 0
        for c in coords:
            bar.arrive_expect_tx(nbytes)
            gpu.cp_async_bulk_tensor_load(tmap, c, 1024, bar)
            bar.try_wait(parity)
            parity ^= 1

    # batches of 30 boxes (tx-count stays inside 2^20-1) into 6 rotating slots
    carr = np.stack([c0, r0], axis=1).astype(np.int32)
    dsts = (1024 + 32768 * (np.arange(ntiles) % 6)).astype(np.uint32)
    per = 30

    phase = [0]

    def batched():
        parity = phase[0]
        for i in range(0, ntiles, per):
            k = min(per, ntiles - i)
            bar.arrive_expect_tx(k * nbytes)
            gpu.cp_async_bulk_tensor_load_batch(tmap, carr[i:i + k], dsts[i:i + k], bar)
            bar.try_wait(parity)
            parity ^= 1
        phase[0] = parity

    offsets = (r0 * cols * 2 + c0 * 2).astype(np.int64)
    dst = np.empty(box_rows * box_cols * 2, dtype=np.uint8)

    def baseline():
        lib.memcpy_rows(dst.ctypes.data, tensor.ctypes.data, offsets.ctypes.data, ntiles, box_rows,
                        box_cols * 2, cols * 2)

    # The batched loads write six rotating slots; their baseline writes the same bytes to the same
    # six slots (box k to slot k % 6, as memcpy_rows_staged's A and B tiles of 3 stages place them),
    # as gemm_replay's does. Into one buffer, kept as ratio_one_buffer, the memcpy's destination
    # stays in L1 where the loads' do not: on the 16-core host that alone read 0.85-0.97 against
    # 0.99-1.00 like for like (docs/performance.md, round 8).
    assert ntiles % 2 == 0   # (the slots follow the box's index, not its batch)
    raw = np.empty(6 * nbytes + 4096, dtype=np.uint8)
    slots = raw[-raw.ctypes.data % 4096:][:6 * nbytes]   # 4 KiB-aligned, as the model's shared memory
    even, odd = offsets[0::2].copy(), offsets[1::2].copy()

    def baseline_slots():
        lib.memcpy_rows_staged(slots.ctypes.data, tensor.ctypes.data, even.ctypes.data, tensor.ctypes.data,
                               odd.ctypes.data, ntiles // 2, 3, box_rows, box_cols * 2, cols * 2)

    total = ntiles * nbytes
    r1, tm1, tb1 = paired(one_by_one, baseline, rounds)
    out = {"one_by_one_ratio": round(r1, 4), "one_by_one_gbs": round(total / tm1 / 1e9, 3),
           "memcpy_gbs": round(total / tb1 / 1e9, 3), "tiles": ntiles, "tile_bytes": nbytes}
    if has_batch(gpu):
        r, tm, tb = paired(batched, baseline_slots, rounds)
        r_one, _, tb_one = paired(batched, baseline, rounds)
        out.update(ratio=round(r, 4), model_gbs=round(total / tm / 1e9, 3), memcpy_slots_gbs=round(total / tb / 1e9, 3),
                   ratio_one_buffer=round(r_one, 4), memcpy_one_buffer_gbs=round(total / tb_one / 1e9, 3),
                   path="batch")
    else:
        out.update(ratio=round(r1, 4), model_gbs=out["one_by_one_gbs"], path="one by one")
    return out


# --- tile_load_4k_vs_numpy ------------------------------------------------------
def bench_4k(rounds, n=20000):
    tensor = np.arange(256 * 256, dtype=np.uint16).reshape(256, 256)
    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024, checks=False)
    g = gpu.register(tensor)
    tmap = pa.TensorMap.from_array(tensor, (32, 64), g.address, swizzle="128B", dtype="bf16")  # 4 KiB
    bar = gpu.mbarrier(0)
    bar.init(1)
    nbytes = tmap.box_bytes
    assert nbytes == 4096
    out = np.empty((32, 64), dtype=np.uint16)

    def model():
        parity = 0
        for _ in range(n):
            bar.arrive_expect_tx(nbytes)
            gpu.cp_async_bulk_tensor_load(tmap, (64, 32), 1024, bar)
            bar.try_wait(parity)
            parity ^= 1

    def numpy_copy():
        for _ in range(n):
            out[...] = tensor[32:64, 64:128]

    r, tm, tb = paired(model, numpy_copy, rounds)
    return {"ratio": round(r, 4), "us_per_issue_and_wait": round(tm / n * 1e6, 3),
            "us_per_numpy_copy": round(tb / n * 1e6, 3)}


# --- gemm_replay ----------------------------------------------------------------
def gemm_trace(a_map, b_map, bar_addr, M=4096, N=4096, K=4096, BM=128, BN=128, BK=64, stages=4):
    """The TMA operations of a 4096^3 bf16 GEMM, CTA tile BM x BN, k-step BK: for each
    CTA tile and k-step, arrive.expect_tx on the stage's mbarrier, load the A tile
    (BM x BK) and the B tile (BN x BK), wait on the mbarrier. One CTA replays
    every tile in turn; stage s uses shared memory [s * 32 KiB, +32 KiB)."""
    tr = pa.OpList()
    tile = BM * BK * 2
    nk = K // BK
    a_c = np.zeros((nk, 2), dtype=np.int64)
    a_c[:, 0] = np.arange(nk) * BK
    b_c = a_c.copy()
    parity = [0] * stages
    step = 0
    for m in range(M // BM):
        a_c[:, 1] = m * BM
        for n in range(N // BN):
            b_c[:, 1] = n * BN
            for k in range(nk):
                s = step % stages
                step += 1
                base = 1024 + s * 2 * tile
                bar = bar_addr + 8 * s
                tr.mbarrier_arrive_expect_tx(bar, 2 * tile)
                tr.cp_async_bulk_tensor_load(a_map, a_c[k], base, bar)
                tr.cp_async_bulk_tensor_load(b_map, b_c[k], base + tile, bar)
                tr.mbarrier_wait(bar, parity[s])
                parity[s] ^= 1
    return tr


class GemmSetup:
    """The gemm_replay workload: A (M x K) and B (N x K) bf16 in a Machine, their 128B-swizzled
    128x64 tensor maps, `stages` initialised mbarriers from `bar_addr`, and two memcpy baselines
    of the same rows every load of the GEMM reads: `baseline()` in the replay's order into the
    same offsets of a buffer laid out as the shared memory (4 KiB-aligned, as the model's is),
    `baseline_one_buffer()` every A tile, then every B tile, into one 16 KiB buffer (the key's
    baseline until the replay's own order was measured to be slower memory traffic on the
    16-core host: docs/performance.md)."""

    def __init__(self, lib, bar_addr=8, stages=4, M=4096, N=4096, K=4096, BM=128, BN=128, BK=64):
        rng = np.random.default_rng(2)
        self.A = A = rng.integers(0, 1 << 16, size=(M, K), dtype=np.uint16)
        self.B = B = rng.integers(0, 1 << 16, size=(N, K), dtype=np.uint16)
        # the copy path alone, as the key has always measured it: the memory checks off, and the
        # race checker, which a replay now keeps on (docs/hazards.md gives its cost), off too
        self.gpu = gpu = pa.Machine(ctas=1, smem_bytes=200 * 1024, checks=False, race_checks=False)
        ga, gb = gpu.register(A), gpu.register(B)
        self.a_map = pa.TensorMap.from_array(A, (BM, BK), ga.address, swizzle="128B", dtype="bf16")
        self.b_map = pa.TensorMap.from_array(B, (BN, BK), gb.address, swizzle="128B", dtype="bf16")
        for s in range(stages):
            gpu.mbarrier(bar_addr + 8 * s).init(1)
        self.tile = tile = BM * BK * 2
        self.nloads = 2 * (M // BM) * (N // BN) * (K // BK)
        self.total = self.nloads * tile
        mi, ni, ki = np.meshgrid(np.arange(M // BM), np.arange(N // BN), np.arange(K // BK), indexing="ij")
        self.a_off = (mi.ravel() * BM * K * 2 + ki.ravel() * BK * 2).astype(np.int64)
        self.b_off = (ni.ravel() * BN * K * 2 + ki.ravel() * BK * 2).astype(np.int64)
        self._dst = np.empty(tile, dtype=np.uint8)
        raw = np.empty(1024 + stages * 2 * tile + 4096, dtype=np.uint8)
        start = -raw.ctypes.data % 4096
        self._stages_buf = raw[start:start + 1024 + stages * 2 * tile]   # the smem's offsets, 4 KiB-aligned
        self._lib, self._rows, self._stages = lib, (BM, BN, BK, K), stages
        assert BM == BN

    def baseline(self):
        BM, BN, BK, K = self._rows
        self._lib.memcpy_rows_staged(self._stages_buf.ctypes.data + 1024, self.A.ctypes.data, self.a_off.ctypes.data,
                                     self.B.ctypes.data, self.b_off.ctypes.data, len(self.a_off), self._stages, BM,
                                     BK * 2, K * 2)

    def baseline_one_buffer(self):
        BM, BN, BK, K = self._rows
        d = self._dst.ctypes.data
        self._lib.memcpy_rows(d, self.A.ctypes.data, self.a_off.ctypes.data, len(self.a_off), BM, BK * 2, K * 2)
        self._lib.memcpy_rows(d, self.B.ctypes.data, self.b_off.ctypes.data, len(self.b_off), BN, BK * 2, K * 2)


def replay_walls(gpu, tr, counts, baseline, rounds):
    """Wall times of gpu.replay(tr, threads=t) for each t in counts and of baseline(),
    alternating, `rounds` times: ({t: [seconds]}, [seconds])."""
    walls = {t: [] for t in counts}
    base = []
    for _ in range(rounds):
        for t in counts:
            t0 = time.perf_counter()
            gpu.replay(tr, threads=t)
            walls[t].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        baseline()
        base.append(time.perf_counter() - t0)
    return walls, base


def bench_gemm(lib, rounds):
    K = 4096
    BM = BN = 128
    bar_addr = 8
    stages = 4
    g = GemmSetup(lib, bar_addr, stages)
    gpu, a_map, b_map, tile, nloads = g.gpu, g.a_map, g.b_map, g.tile, g.nloads
    a_off, b_off, baseline = g.a_off, g.b_off, g.baseline
    A, B, BK, dst = g.A, g.B, 64, np.empty(tile, dtype=np.uint8)
    total = nloads * tile
    if hasattr(pa, "OpList") and hasattr(gpu, "replay"):
        tr = gemm_trace(a_map, b_map, bar_addr, stages=stages)

        def model():
            gpu.replay(tr)

        # the model and both baselines in alternation (thread CPU time, as paired())
        model(), baseline(), g.baseline_one_buffer()
        t = {"m": [], "b": [], "o": []}
        for _ in range(rounds):
            for k, f in (("m", model), ("b", baseline), ("o", g.baseline_one_buffer)):
                t0 = time.thread_time()
                f()
                t[k].append(time.thread_time() - t0)
        r = statistics.median(b / m for b, m in zip(t["b"], t["m"]))
        r1 = statistics.median(o / m for o, m in zip(t["o"], t["m"]))
        tm, tb, to = (statistics.median(t[k]) for k in "mbo")
        res = {"ratio": round(r, 4), "model_gbs": round(total / tm / 1e9, 3),
               "memcpy_gbs": round(total / tb / 1e9, 3), "loads": nloads, "path": "trace replay",
               "records": len(tr), "ratio_one_buffer": round(r1, 4),
               "memcpy_one_buffer_gbs": round(total / to / 1e9, 3)}
        if "threads" in gpu.replay.__code__.co_varnames:
            # Replay(threads=2): two threads copy, so CPU time of this one would flatter it;
            # wall time, threads=1 and =2 alternating with the one-thread memcpy.
            walls, wall_base = replay_walls(gpu, tr, (1, 2), baseline, rounds)
            w1, w2, wb = (statistics.median(x) for x in (walls[1], walls[2], wall_base))
            res.update({"ratio_threads2": round(wb / w2, 4), "ratio_threads1_wall": round(wb / w1, 4),
                        "speedup_threads2": round(w1 / w2, 3)})
        return res
    # no replay: the first 1/64 of the loads issued one by one from Python
    bars = [gpu.mbarrier(bar_addr + 8 * s) for s in range(stages)]
    a_sub, b_sub = a_off[: len(a_off) // 64], b_off[: len(b_off) // 64]

    def model_py():
        parity = [0] * stages
        for j in range(len(a_sub)):
            s = j % stages
            m_, rem = divmod(int(a_sub[j]), K * 2 * BM)
            kk = rem // 2
            n_ = int(b_sub[j]) // (K * 2 * BN)
            bars[s].arrive_expect_tx(2 * tile)
            gpu.cp_async_bulk_tensor_load(a_map, (kk, m_ * BM), 1024 + s * 2 * tile, bars[s])
            gpu.cp_async_bulk_tensor_load(b_map, (kk, n_ * BN), 1024 + s * 2 * tile + tile, bars[s])
            bars[s].try_wait(parity[s])
            parity[s] ^= 1

    def base_sub():
        lib.memcpy_rows(dst.ctypes.data, A.ctypes.data, a_sub.ctypes.data, len(a_sub), BM, BK * 2, K * 2)
        lib.memcpy_rows(dst.ctypes.data, B.ctypes.data, b_sub.ctypes.data, len(b_sub), BN, BK * 2, K * 2)

    r, tm, tb = paired(model_py, base_sub, rounds)
    return {"ratio": round(r, 4), "model_gbs": round(2 * len(a_sub) * tile / tm / 1e9, 3),
            "loads": 2 * len(a_sub), "path": "one by one from Python (1/64 of the loads; no replay API)"}


# --- triton_interp ----------------------------------------------------------------
TRITON_SRC = """
import triton
import triton.language as tl


@triton.jit
def load_only(desc, r0, c0):
    desc.load([r0, c0])


@triton.jit
def load_and_store(desc, out_ptr, r0, c0, BM: tl.constexpr, BK: tl.constexpr):
    x = desc.load([r0, c0])
    tl.store(out_ptr + tl.arange(0, BM)[:, None] * BK + tl.arange(0, BK)[None, :], x)
"""


def bench_triton(rounds, n_pa=400, n_tr=5):
    """One 256x64 bf16 descriptor load (a 32 KiB box), Triton's interpreter
    (TRITON_INTERPRET=1, a host TensorDescriptor, desc.load in a one-program
    kernel) against ptxasync (arrive.expect_tx + the load + try_wait from Python,
    128B swizzle). Both results are checked equal first (the ptxasync box read
    back through the map's swizzled addresses). ratio: against a kernel that only
    loads; ratio_with_store: against one that also stores the tile (how a
    Triton program shows what it loaded)."""
    os.environ["TRITON_INTERPRET"] = "1"   # read when a kernel is defined
    try:
        import torch
        import triton
        from triton.tools.tensor_descriptor import TensorDescriptor
    except Exception as e:   # not installed (or broken): nothing to compare against
        return {"skipped": f"triton is not importable ({type(e).__name__})"}
    # @triton.jit reads its kernel's source from a file
    tmp = tempfile.mkdtemp(prefix="ptxasync-triton-")
    path = os.path.join(tmp, "pa_triton_kernels.py")
    with open(path, "w") as f:
        f.write(TRITON_SRC)
    import importlib.util
    spec = importlib.util.spec_from_file_location("pa_triton_kernels", path)
    kern = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kern)

    R, C, BM, BK = 1024, 512, 256, 64
    bits = np.random.default_rng(3).integers(0, 1 << 16, size=(R, C), dtype=np.uint16)
    t = torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)
    desc = TensorDescriptor.from_tensor(t, [BM, BK])
    out = torch.empty((BM, BK), dtype=torch.bfloat16)
    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024, checks=False)
    g = gpu.register(bits)
    tmap = pa.TensorMap.from_array(bits, (BM, BK), g.address, swizzle="128B", dtype="bf16")
    bar = gpu.mbarrier(0).init(1)
    dst = 1024
    where = tmap.smem_addresses(dst) // 2
    smem16 = gpu.smem.view(np.uint16)
    parity = [0]

    def pa_load(r0, c0):
        bar.arrive_expect_tx(tmap.box_bytes)
        gpu.cp_async_bulk_tensor_load(tmap, (c0, r0), dst, bar)   # driver order: dim 0 first
        assert bar.try_wait(parity[0])
        parity[0] ^= 1

    # the same bytes, in bounds and past both edges (zero fill)
    for r0, c0 in ((0, 0), (512, 128), (900, 480)):
        pa_load(r0, c0)
        kern.load_and_store[(1,)](desc, out, r0, c0, BM, BK)
        tri = out.view(torch.int16).numpy().view(np.uint16)
        if not np.array_equal(smem16[where], tri):
            raise AssertionError(f"ptxasync and Triton differ for the box at ({r0}, {c0})")

    def timed(fn, n):
        t0 = time.thread_time()
        for _ in range(n):
            fn()
        return (time.thread_time() - t0) / n

    def paired_n(tri_fn):
        """Median of the per-round ratios (Triton time / ptxasync time per load)."""
        tri_fn()
        ratios, tp, tt = [], [], []
        for _ in range(rounds):
            tp.append(timed(lambda: pa_load(512, 128), n_pa))
            tt.append(timed(tri_fn, n_tr))
            ratios.append(tt[-1] / tp[-1])
        return statistics.median(ratios), statistics.median(tp), statistics.median(tt)

    try:
        r, tp, tt = paired_n(lambda: kern.load_only[(1,)](desc, 512, 128))
        r2, _, tt2 = paired_n(lambda: kern.load_and_store[(1,)](desc, out, 512, 128, BM, BK))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"ratio": round(r, 1), "us_per_load": round(tp * 1e6, 2), "triton_us": round(tt * 1e6, 1),
            "ratio_with_store": round(r2, 1), "triton_us_with_store": round(tt2 * 1e6, 1),
            "triton": triton.__version__}


# --- the machine --------------------------------------------------------------------
PTX_BODY = [
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4}], [%r2];",
    "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], %r8;",
    "add.s32 %r3, %r3, 64;",
    "setp.lt.u32 %p2, %r3, %r8;",
    "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], %r8;",
    "ld.param.u64 %rd3, [k_param_0];",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd2], [%r1], %r8;",
    "fence.proxy.async.shared::cta;",
]


def bench_ptx(rounds, repeat=20000):
    """ptxasync.ptx.check (parse + validate) of an 8.6 MB module: a TMA producer/consumer body
    repeated. The ratio is the MB/s over the 50 MB/s the PTX front end is built for."""
    for d in ("tests", "tools"):   # tests/ptx_forms.py imports tools/ptx_tables.py
        sys.path.insert(0, os.path.join(ROOT, d))
    from ptx_forms import module
    from ptxasync import _core
    text = module("\n\t".join(PTX_BODY * repeat)).encode()
    assert _core.ptx_check(text) == []
    walls = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        _core.ptx_check(text)
        walls.append(time.perf_counter() - t0)
    mb_s = len(text) / 1e6 / statistics.median(walls)
    return {"ratio": round(mb_s / 50, 4), "mb_s": round(mb_s, 1), "mb": round(len(text) / 1e6, 2)}
# ptx_interp: 128 threads each run a 9-instruction integer loop n times (scalar PTX only)
PTX_INTERP = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry spin(.param .u64 out, .param .u32 n)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  .reg .pred %p1;
  ld.param.u32 %r9, [n];
  mov.u32 %r1, 0;
  mov.u32 %r2, %tid.x;
LOOP:
  add.u32 %r2, %r2, %r1;
  xor.b32 %r3, %r2, 0x5bd1e995;
  shl.b32 %r4, %r3, 3;
  shr.u32 %r5, %r3, 29;
  or.b32 %r2, %r4, %r5;
  mad.lo.u32 %r2, %r2, 31, %r1;
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p1, %r1, %r9;
  @%p1 bra LOOP;
  ld.param.u64 %rd1, [out];
  mov.u32 %r6, %tid.x;
  mul.wide.u32 %rd2, %r6, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
"""

# warp 0 lane 0: TMA producer of A (128x64 f16) and B (128x64 f16) tiles into a 3-stage ring;
# warps 1 and 2: consumers whose 64 threads wait on full; once the warp has met (bar.warp.sync:
# no lane still waits on the stage), lane 0 releases it (empty counts 2 arrivals, one a consumer
# warp, as CUTLASS's TMA pipeline signals; without the meeting a lagging lane misses a phase)
PTX_MAINLOOP = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry mainloop(.param .align 64 .b8 amap[128], .param .align 64 .b8 bmap[128], .param .u32 iters)
{
  .reg .b32 %r<32>;
  .reg .pred %p<8>;
  .shared .align 1024 .b8 stage[98304];
  .shared .align 8 .b64 full[3];
  .shared .align 8 .b64 empty[3];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, full;
  mov.u32 %r3, empty;
  mov.u32 %r4, stage;
  ld.param.u32 %r5, [iters];
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  mbarrier.init.shared::cta.b64 [%r2+8], 1;
  mbarrier.init.shared::cta.b64 [%r2+16], 1;
  mbarrier.init.shared::cta.b64 [%r3], 2;
  mbarrier.init.shared::cta.b64 [%r3+8], 2;
  mbarrier.init.shared::cta.b64 [%r3+16], 2;
  fence.mbarrier_init.release.cluster;
SYNC:
  bar.sync 0;
  setp.ge.u32 %p2, %r1, 32;
  @%p2 bra CONSUMER;
  @%p1 bra DONE;
  mov.u32 %r6, 0;
  mov.u32 %r7, 0;
  mov.u32 %r8, 0;
PLOOP:
  setp.ge.u32 %p3, %r6, %r5;
  @%p3 bra DONE;
  shl.b32 %r9, %r7, 3;
  add.u32 %r10, %r3, %r9;
  add.u32 %r11, %r2, %r9;
  and.b32 %r12, %r8, 1;
  xor.b32 %r12, %r12, 1;
PWAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r10], %r12;
  @!%p4 bra PWAIT;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r11], 32768;
  shl.b32 %r13, %r7, 15;
  add.u32 %r14, %r4, %r13;
  add.u32 %r15, %r14, 16384;
  shl.b32 %r16, %r6, 6;
  mov.u32 %r17, 0;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r14], [amap, {%r16, %r17}], [%r11];
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r15], [bmap, {%r16, %r17}], [%r11];
  add.u32 %r6, %r6, 1;
  add.u32 %r7, %r7, 1;
  setp.eq.u32 %p5, %r7, 3;
  @%p5 mov.u32 %r7, 0;
  @%p5 add.u32 %r8, %r8, 1;
  bra PLOOP;
CONSUMER:
  and.b32 %r18, %r1, 31;
  setp.eq.u32 %p6, %r18, 0;
  mov.u32 %r6, 0;
  mov.u32 %r7, 0;
  mov.u32 %r8, 0;
CLOOP:
  setp.ge.u32 %p3, %r6, %r5;
  @%p3 bra DONE;
  shl.b32 %r9, %r7, 3;
  add.u32 %r10, %r3, %r9;
  add.u32 %r11, %r2, %r9;
  and.b32 %r12, %r8, 1;
CWAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [%r11], %r12;
  @!%p4 bra CWAIT;
  bar.warp.sync -1;
  @%p6 mbarrier.arrive.shared::cta.b64 _, [%r10];
  add.u32 %r6, %r6, 1;
  add.u32 %r7, %r7, 1;
  setp.eq.u32 %p5, %r7, 3;
  @%p5 mov.u32 %r7, 0;
  @%p5 add.u32 %r8, %r8, 1;
  bra CLOOP;
DONE:
  bar.sync 0;
  @%p1 ret;
  mbarrier.inval.shared::cta.b64 [%r2];
  mbarrier.inval.shared::cta.b64 [%r2+8];
  mbarrier.inval.shared::cta.b64 [%r2+16];
  mbarrier.inval.shared::cta.b64 [%r3];
  mbarrier.inval.shared::cta.b64 [%r3+8];
  mbarrier.inval.shared::cta.b64 [%r3+16];
  ret;
}
"""


def bench_ptx_interp(rounds, n=20000):
    """Scalar PTX instructions a second of the interpreter (one core, thread CPU time): 128
    threads of a 9-instruction integer loop, n iterations each. ratio: over 20 M/s."""
    from ptxasync import ptx
    k = ptx.Kernel(PTX_INTERP)
    gpu = pa.Machine()
    g = gpu.register(np.zeros(128, np.uint32))
    rates = []
    for _ in range(rounds):
        t0 = time.thread_time()
        st = k.launch(gpu, block=128, params={"out": g, "n": n})
        rates.append(st.instructions / (time.thread_time() - t0))
    r = statistics.median(rates)
    return {"ratio": round(r / 20e6, 4), "minstr_per_s": round(r / 1e6, 1), "instructions": st.instructions}


def bench_ptx_mainloop(rounds, iters=64):
    """A GEMM-mainloop-like kernel in PTX (1 CTA, 3 warps: a TMA producer lane feeding two
    128x64 f16 tiles an iteration into a 3-stage mbarrier ring, two consumer warps whose 64
    threads wait on full and whose lane 0 arrives on empty), 64 iterations, against Machine.replay of the
    same loads with their mbarrier arrivals and waits. ratio: t_replay / t_ptx (floor 1/3);
    both with the race checker off (a replay runs without it); ratio_checked: the PTX run
    with it on."""
    from ptxasync import ptx
    from ptxasync.oplist import OpList
    K = 64 * iters
    a = np.random.default_rng(0).standard_normal((128, K)).astype(np.float16)
    b = a.copy()
    k = ptx.Kernel(PTX_MAINLOOP)

    def machine(races):
        gpu = pa.Machine(smem_bytes=100 * 1024, race_checks=races)
        ga, gb = gpu.register(a), gpu.register(b)
        ta = pa.TensorMap.tiled("f16", ga.address, [K, 128], [K * 2], [64, 128], swizzle="128B")
        tb = pa.TensorMap.tiled("f16", gb.address, [K, 128], [K * 2], [64, 128], swizzle="128B")
        return gpu, ta, tb
    g1, ta, tb = machine(False)
    g2, ta2, tb2 = machine(False)
    g3, ta3, tb3 = machine(True)
    bar = 98304                        # full[3] follows the 96 KiB of stages
    ops = OpList()
    for s in range(3):
        ops.mbarrier_init(bar + 8 * s, 1)
    for i in range(iters):
        s = i % 3
        ops.mbarrier_arrive_expect_tx(bar + 8 * s, 32768)
        ops.cp_async_bulk_tensor_load(ta2, [64 * i, 0], s * 32768, bar + 8 * s)
        ops.cp_async_bulk_tensor_load(tb2, [64 * i, 0], s * 32768 + 16384, bar + 8 * s)
        ops.mbarrier_wait(bar + 8 * s, (i // 3) & 1)

    def ptx_run():
        k.launch(g1, block=96, params={"amap": ta, "bmap": tb, "iters": iters})

    bars = [g2.mbarrier(bar + 8 * s) for s in range(3)]

    def replay():              # as the kernel does, the barriers are invalidated at the end
        g2.replay(ops)
        for b_ in bars:
            b_.inval()
    ptx_run()
    replay()
    assert np.array_equal(g1.cta(0).smem[:98304], g2.cta(0).smem[:98304])
    r, tp, tr = paired(ptx_run, replay, rounds)

    def checked():
        k.launch(g3, block=96, params={"amap": ta3, "bmap": tb3, "iters": iters})
    rc, tc, _ = paired(checked, replay, rounds)
    return {"ratio": round(r, 4), "ms_ptx": round(tp * 1e3, 3), "ms_replay": round(tr * 1e3, 3),
            "ratio_checked": round(rc, 4), "ms_ptx_checked": round(tc * 1e3, 3)}


def bench_mma_exact(rounds, tiles=20):
    """wgmma's arithmetic: one m64n256k16 f16 tile with f32 accumulators as the interpreter
    computes it (sem_mma_tile, the H200's block: docs/tensor-cores.md) against the plain f32
    summation it replaced (bench/mma_exact.c). ratio: t_f32 / t_exact (floor 1/3)."""
    tmp = tempfile.mkdtemp(prefix="ptxasync-mma-")
    try:
        so = os.path.join(tmp, "libmma_exact.so")
        subprocess.run(["gcc", "-std=c11", "-O2", "-shared", "-fPIC", "-I" + os.path.join(ROOT, "csrc", "core"),
                        os.path.join(HERE, "mma_exact.c"), os.path.join(ROOT, "csrc", "core", "sem", "mma.c"),
                        "-o", so, "-lm"], check=True)
        lib = ctypes.CDLL(so)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rng = np.random.default_rng(1)
    a = rng.normal(size=64 * 16).astype(np.float16).view(np.uint16).astype(np.uint32)
    b = rng.normal(size=256 * 16).astype(np.float16).view(np.uint16).astype(np.uint32)
    acc = rng.normal(size=64 * 256).astype(np.float32)
    acc_bits = acc.view(np.uint32).astype(np.uint64)
    P = ctypes.c_void_p
    r, tm, tb = paired(lambda: lib.exact_tiles(tiles, a.ctypes.data_as(P), b.ctypes.data_as(P),
                                               acc_bits.ctypes.data_as(P)),
                       lambda: lib.f32_tiles(tiles, a.ctypes.data_as(P), b.ctypes.data_as(P), acc.ctypes.data_as(P)),
                       rounds)
    return {"ratio": round(r, 4), "us_per_tile_exact": round(tm / tiles * 1e6, 1),
            "us_per_tile_f32": round(tb / tiles * 1e6, 1)}


def bench_race_checks(rounds, tiles=64, reps=5):
    """The 3-stage pipeline of ptxasync.pipeline, 64 iterations, its consumer
    reading each stage through the model (CTA.read), with the memory model on
    (race_checks=True, the default) against the same run with it off: the
    ratio is t_off / t_on (the floor 1/3: on costs at most 3x)."""
    from ptxasync import pipeline

    def run(on):
        def f():
            for seed in range(reps):
                pipeline.run(tiles, policy="in_order", seed=seed, checked=True, race_checks=on)
        return f
    ratio, t_on, t_off = paired(run(True), run(False), rounds)
    return {"ratio": round(ratio, 4), "ms_per_run_checked": round(t_on / reps * 1e3, 3),
            "ms_per_run_unchecked": round(t_off / reps * 1e3, 3), "cost": round(t_on / t_off, 3)}


def bench_race_census(rounds, keys):
    """Each census kernel (race_census.<name>.<arch>) launched with the race checker on
    (race_checks=True, the default) and off, a fresh machine each launch, alternately; ratio
    t_off / t_on (floor 0.5: on costs at most 2x). A kernel the model does not run yet
    (test_census.py's BLOCKERS) is skipped."""
    res = {}
    for key in keys:
        _, name, arch = key.split(".")
        try:
            on, off = census_race.launcher(name, arch, True), census_race.launcher(name, arch, False)
            off()
            on()
        except Exception as e:                                # noqa: BLE001 (not run yet)
            res[key] = {"skipped": f"{type(e).__name__}: {str(e).splitlines()[0][:80]}"}
            continue
        t0 = time.thread_time()
        off()
        reps = max(1, int(0.02 / max(time.thread_time() - t0, 1e-5)))   # rounds of 20 ms or more

        def many(f):
            return lambda: [f() for _ in range(reps)]
        r, t_on, t_off = paired(many(on), many(off), rounds)
        res[key] = {"ratio": round(r, 4), "ms_on": round(t_on / reps * 1e3, 3), "ms_off": round(t_off / reps * 1e3, 3),
                    "cost": round(t_on / t_off, 3)}
    return res


def bench_cp_async_vs_tma(rounds, iters=64):
    """A cp.async-staged loop and its TMA twin (bench/staged_twins.py: one CTA streaming a
    64 x 64*iters f16 matrix through 3 stages of 8 KiB), both with checks off (race_checks=False),
    a fresh machine each launch; ratio t_tma / t_cp_async (floor 0.5: at most 2x). The figures
    with the race checker on come with it."""
    import staged_twins as st
    a = st.matrix(iters)
    want = st.want(a)
    runs = {}
    for kind in ("cp_async", "tma"):
        for races in (False, True):
            f, out = st.launcher(kind, a, races)
            f()
            assert np.array_equal(out, want), (kind, races)
            runs[kind, races] = f
    r, t_cp, t_tma = paired(runs["cp_async", False], runs["tma", False], rounds)
    rc, t_cpc, t_tmac = paired(runs["cp_async", True], runs["tma", True], rounds)
    return {"ratio": round(r, 4), "ms_cp_async": round(t_cp * 1e3, 3), "ms_tma": round(t_tma * 1e3, 3),
            "ratio_checked": round(rc, 4), "ms_cp_async_checked": round(t_cpc * 1e3, 3),
            "ms_tma_checked": round(t_tmac * 1e3, 3)}


def bench_wgmma_512(rounds):
    """The census's Triton wgmma matmul at 512 x 512 x 512 (bench/wgmma_512.py) with the race
    checker on, a fresh machine each launch, against NumPy's f32 matmul of the same matrices
    (converted once); ratio t_numpy / t_model (floor 1/30). Timed in process CPU time: NumPy's
    BLAS may run on several threads, all of which count. 3 rounds at most (a launch takes seconds)."""
    import wgmma_512 as wm
    a, b = wm.matrices()
    run, c = wm.launcher(a, b, race_checks=True)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    want = a32 @ b32
    run()
    assert np.allclose(c, want, rtol=1e-3, atol=1e-3), float(np.abs(c - want).max())
    reps = 20

    def base():
        for _ in range(reps):
            np.matmul(a32, b32)
    ratios, tm, tb = [], [], []
    for _ in range(min(rounds, 3)):
        t0 = time.process_time()
        run()
        t1 = time.process_time()
        base()
        t2 = time.process_time()
        tm.append(t1 - t0)
        tb.append((t2 - t1) / reps)
        ratios.append(tb[-1] / tm[-1])
    return {"ratio": round(statistics.median(ratios), 5), "s_model": round(statistics.median(tm), 3),
            "ms_numpy": round(statistics.median(tb) * 1e3, 3), "times_numpy": round(1 / statistics.median(ratios), 1)}


def machine(lib):
    """What the ratios were measured on: CPU model, cores, the vector level the
    model uses, and one large memcpy's speed (256 MiB, best of 3, wall time)."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    src = np.random.default_rng(0).integers(0, 255, 256 << 20, dtype=np.uint8)
    dst = np.empty_like(src)
    off = np.zeros(1, dtype=np.int64)
    best = float("inf")
    for _ in range(4):   # the first touches the destination's pages
        t0 = time.perf_counter()
        lib.memcpy_rows(dst.ctypes.data, src.ctypes.data, off.ctypes.data, 1, 1, src.size, src.size)
        best = min(best, time.perf_counter() - t0)
    try:
        avail = len(os.sched_getaffinity(0))
    except AttributeError:
        avail = os.cpu_count()
    simd = pa._core.simd_level()[0] if hasattr(pa._core, "simd_level") else "unknown"
    # the extensions beside the AVX512 level that the reductions use (docs/reductions.md)
    for name in ("bf16", "fp16"):
        probe = getattr(pa._core, "simd_" + name, None)
        if probe and probe()[0]:
            simd += " avx512_" + name
    return {"cpu": cpu, "cores": os.cpu_count(), "cores_available": avail, "simd": simd,
            "memcpy_gbs": round(src.size / best / 1e9, 2)}


# --- the C-core keys ----------------------------------------------------------------
def run_core(exe, rounds, keys):
    proc = subprocess.run([exe, str(rounds), *keys], capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"bench_core failed ({proc.returncode}): {proc.stderr.strip()}")
    out = proc.stdout
    res = {}
    for line in out.splitlines():
        d = json.loads(line)
        k = d.pop("key")
        res[k] = {"ratio": d["ratio"], "model_gbs": d["model_gbs"], "base_gbs": d["base_gbs"]}
        for extra in ("plain_add_gbs", "ratio_to_plain_add"):   # the bulk reductions' roofline
            if extra in d:
                res[k][extra] = d[extra]
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--keys", default=",".join(ORDER))
    args = ap.parse_args()
    rounds = max(3, args.rounds)
    keys = [k for k in args.keys.split(",") if k]
    unknown = set(keys) - set(ORDER)
    if unknown:
        ap.error(f"unknown keys {sorted(unknown)}")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ptxasync-bench-") as tmp:
        exe, lib = build(tmp)
        res = {}
        ck = [k for k in C_KEYS if k in keys]
        if ck:
            res.update(run_core(exe, rounds, ck))
        if "tile_load_py" in keys:
            res["tile_load_py"] = bench_tile_load_py(lib, rounds)
        if "tile_load_4k_vs_numpy" in keys:
            res["tile_load_4k_vs_numpy"] = bench_4k(rounds)
        if "gemm_replay" in keys:
            res["gemm_replay"] = bench_gemm(lib, rounds)
        if "triton_interp" in keys:
            res["triton_interp"] = bench_triton(rounds)
        if "ptx_check" in keys:
            res["ptx_check"] = bench_ptx(rounds)
        if "ptx_interp" in keys:
            res["ptx_interp"] = bench_ptx_interp(rounds)
        if "ptx_mainloop" in keys:
            res["ptx_mainloop"] = bench_ptx_mainloop(rounds)
        if "race_checks_pipeline" in keys:
            res["race_checks_pipeline"] = bench_race_checks(rounds)
        if "mma_exact" in keys:
            res["mma_exact"] = bench_mma_exact(rounds)
        if "cp_async_vs_tma" in keys:
            res["cp_async_vs_tma"] = bench_cp_async_vs_tma(rounds)
        if "wgmma_matmul_512" in keys:
            res["wgmma_matmul_512"] = bench_wgmma_512(rounds)
        census = [k for k in CENSUS_KEYS if k in keys]
        if census:
            res.update(bench_race_census(rounds, census))
        mach = machine(lib)
    res = {k: res[k] for k in ORDER if k in res}
    tag = f"{mach['cpu']}, {mach['cores']} cores, memcpy {mach['memcpy_gbs']} GB/s"
    for v in res.values():
        v["machine"] = tag          # next to every ratio: what it was measured on
    elapsed = time.perf_counter() - t0
    if args.json:
        print(json.dumps({"machine": mach, **res}))
        return 0
    print(f"ptxasync throughput / baseline throughput, median of {rounds} rounds ({elapsed:.0f} s)")
    print(f"machine: {tag}, {mach['cores_available']} available, vector level {mach['simd']}")
    print(f"{'key':36s} {'ratio':>8s} {'floor':>6s}  details")
    for k, v in res.items():
        if "skipped" in v:
            print(f"{k:36s} {'-':>8s} {FLOORS[k]:6g}  skipped: {v['skipped']}")
            continue
        extra = ", ".join(f"{a}={b}" for a, b in v.items() if a not in ("ratio", "machine"))
        print(f"{k:36s} {v['ratio']:8.4f} {FLOORS[k]:6g}  {extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
