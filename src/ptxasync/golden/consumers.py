"""Consumer families: wgmma_smem_read, ldmatrix_read, tma_to_wgmma, bank_conflicts.

Each case is replayed from its raw recorded inputs: the shared memory is
rebuilt from the fill rule, the descriptor / addresses are the recorded
operands, and the model's result is compared with the recorded registers
(accumulators, ldmatrix registers) or profiler counters. The post-processed
fields (read_addr, element_global, ...) are not used for the verdict.
"""
import numpy as np

from .. import _core
from ..consumers import CAUSES, TmaProducer, WgmmaDescriptor, bank_conflicts, check_wgmma, ldmatrix
from ..machine import Machine
from .common import check_map, encode, expect_error, first_diff, hexbytes

FILL_BASE = 0x8400


def _filled_machine(start, end):
    """Shared memory [0, end) with the recorded fill: the 2-byte slot at every
    even address a in [start, end) holds 0x8400 + a/2 (wrapping in 16 bits)."""
    m = Machine(ctas=1, smem_bytes=end)
    a = np.arange(start, end, 2, dtype=np.uint32)
    m.smem[start:end].view(np.uint16)[:] = (FILL_BASE + a // 2).astype(np.uint16)
    return m


def _accumulators(case, rows_d, cols_d):
    """D[m][n] from d_hex: register r = 4j + e of thread t = 32w + 4g + q is
    D[16w + g + 8*(e >> 1)][8j + 2q + (e & 1)] (PTX m64nNk16 accumulator layout)."""
    regs = np.frombuffer(hexbytes(case["d_hex"]), dtype="<f4").reshape(128, -1)
    D = np.zeros((rows_d, cols_d), dtype=np.float32)
    for t in range(128):
        w, g, q = t // 32, (t % 32) // 4, t % 4
        for r in range(regs.shape[1]):
            j, e = r // 4, r % 4
            D[16 * w + g + 8 * (e >> 1), 8 * j + 2 * q + (e & 1)] = regs[t, r]
    return D


def _identity_a():
    """The A of the operand-B cases: A[m][k] = 1 if m % 16 == k."""
    return (np.arange(64)[:, None] % 16 == np.arange(16)[None, :]).astype(np.float32)


def _predict_d(m, case, p):
    """D the model predicts: the operand read through the recorded descriptor,
    multiplied as the harness set the wgmma up (identity A, or identity B)."""
    desc = WgmmaDescriptor.from_value(int(case["desc_hex"], 16))
    op = p["operand"]
    operand = desc.read(m, operand=op, n=p["N"], major=p["major"]).astype(np.float32)
    if op == "B":
        return _identity_a() @ operand.T                # B[k][n] = operand[n][k]
    ident = WgmmaDescriptor.from_value(int(case["identity_desc_hex"], 16))
    b = ident.read(m, operand="B", n=16, major="K").astype(np.float32)   # [n, k]
    return operand @ b.T


def _compare_d(D, want):
    """Values compared (the sign of an exact zero sum is not data movement)."""
    bad = np.argwhere(D != want)
    if len(bad):
        i, j = bad[0]
        return f"{len(bad)} accumulator(s) differ; first D[{i}][{j}]: model {D[i, j]!r}, hardware {want[i, j]!r}"
    return None


def check_wgmma_smem_read(case):
    p = case["params"]
    base = case.get("dyn_smem_base", 1024)
    end = 1024 + 58368          # the dynamic allocation: 57 KiB from 1024
    m = _filled_machine(base, end)
    if p["operand"] == "A":
        # The identity B the harness wrote at region + 56832 (K-major, no swizzle, LBO 128, SBO 256).
        ident = WgmmaDescriptor.from_fields(case.get("region_addr", 1024) + 56832, 128, 256)
        addrs = ident.addresses("B", 16, "K")
        for n in range(16):
            for k in range(16):
                m.smem[addrs[n, k]:addrs[n, k] + 2].view(np.uint16)[0] = 0x3C00 if n == k else 0
    if case.get("error"):
        # A faulting case records no descriptor: build it as the harness did
        # (region 1024 in every launch) and read through it.
        d = WgmmaDescriptor.from_fields(case.get("region_addr", 1024) + p["start_offset"], p["lbo_bytes"],
                                        p["sbo_bytes"], p["base_offset"], p["swizzle"],
                                        int(p["desc_extra_bits"], 16))
        try:
            d.read(m, operand=p["operand"], n=p["N"], major=p["major"])
        except _core.PtxAsyncError as e:
            return expect_error(case, e)
        return f"hardware raised {case['error']}; model completed"
    D = _predict_d(m, case, p)
    want = _accumulators(case, 64, p["N"] if p["operand"] == "B" else 16)
    return _compare_d(D, want)


def check_ldmatrix_read(case):
    p = case["params"]
    m = _filled_machine(case.get("dyn_smem_base", 1024), 1024 + 58368)
    region = case.get("region_addr", 1024)
    addrs = [region + o for o in p["thread_addr_offsets"]]
    try:
        regs = ldmatrix(m, addrs, p["num_matrices"], p["trans"])
    except _core.PtxAsyncError as e:
        return expect_error(case, e)
    if case.get("error"):
        return f"hardware raised {case['error']}; model completed"
    d = first_diff(regs.astype("<u4").tobytes(), hexbytes(case["regs_hex"]))
    return f"registers {d}" if d else None


# category -> the cause the check must name
_CATEGORY_CAUSE = {"mismatch_swizzle": "swizzle", "mismatch_lbo_sbo_swapped": "lbo_sbo_swapped",
                   "mismatch_base_offset": "base_offset", "mismatch_base_offset_formula": "base_offset",
                   "mismatch_major": "major", "mismatch_dense_rows_no_swizzle": "dense_rows"}


def check_tma_to_wgmma(case):
    """T1-T4: the TMA loads through the model, then the wgmma over the resulting
    shared memory; every accumulator element must equal the recorded one, the
    shared region the recorded dump, and a mismatched case must be classified
    with the cause its category names."""
    p = case["params"]
    tmp = p["tensor_map"]
    addr = int(case["global_address"], 16)
    region = case["region_addr"]
    m = _filled_machine(case.get("dyn_smem_base", 2048), 2048 + 67584)
    if p["operand"] == "A":
        ident = WgmmaDescriptor.from_value(int(case["identity_desc_hex"], 16))
        a = ident.addresses("B", 16, "K")
        for n in range(16):
            for k in range(16):
                m.smem[a[n, k]:a[n, k] + 2].view(np.uint16)[0] = 0x3C00 if n == k else 0
    glob = np.frombuffer(hexbytes(case["global_hex"]), dtype=np.uint8).copy()
    m.register(glob, address=addr)
    tm = encode(tmp, addr)
    d = check_map(case, tm)
    if d:
        return d
    bar = m.mbarrier(case.get("mbar_addr", 1024))
    bar.init(1)
    bar.arrive_expect_tx(case["expect_tx"])
    dsts = case["smem_dst_addrs"]
    for load, dst in zip(p["loads"], dsts):
        m.cp_async_bulk_tensor_load(tm, load["coords"], dst, bar)
    if not bar.try_wait(0):
        return "the mbarrier phase did not complete with expect_tx bytes"
    # T1: the shared region as recorded.
    want = np.frombuffer(hexbytes(case["smem_hex"]), dtype=np.uint8)
    got = m.smem[region:region + len(want)]
    bad = np.nonzero(got != want)[0]
    if len(bad):
        i = int(bad[0])
        return f"shared byte {region + i}: model 0x{got[i]:02x}, hardware 0x{want[i]:02x}"
    # T2 / T3: the accumulators.
    D = _predict_d(m, case, p)
    d = _compare_d(D, _accumulators(case, 64, p["N"] if p["operand"] == "B" else 16))
    if d:
        return d
    # T4: the check's verdict and cause.
    prod = TmaProducer(tm, [(ld["coords"], dst) for ld, dst in zip(p["loads"], dsts)])
    rep = check_wgmma(WgmmaDescriptor.from_value(int(case["desc_hex"], 16)), prod, operand=p["operand"],
                      n=p["N"], major=p["major"], k_slice=p["k_slice"], tile_major=p["tile_major"])
    total = len(p["intended_global"]) * 16
    if total - rep.mismatched != case["intended_matches"]:
        return f"check counts {total - rep.mismatched} intended elements; hardware {case['intended_matches']}"
    want_cause = _CATEGORY_CAUSE.get(p["category"])
    if want_cause and (not rep.causes or rep.causes[0] != want_cause):
        return (f"category {p['category']}: check names {[CAUSES[c] for c in rep.causes]}, "
                f"expected {CAUSES[want_cause]}")
    if p["matched"] and not rep.ok:
        return f"matched case reported as mismatched: {rep}"
    return None


def check_bank_conflicts(case):
    """K1-K5: the model's wavefront count equals the profiler's, and so does its
    count beyond one wavefront per phase (l1tex__data_bank_conflicts_*)."""
    p = case["params"]
    op = {"ld": "ld", "st": "st", "ldsm": "ldmatrix"}[p["op"]]
    try:
        r = bank_conflicts(p["offsets"], p["width"], op, p.get("num_matrices") or 4)
    except _core.PtxAsyncError as e:
        return expect_error(case, e)
    if r.wavefronts != case["wavefronts"]:
        return f"wavefronts: model {r.wavefronts} ({r}), hardware {case['wavefronts']}"
    if r.conflicts != case["bank_conflicts"]:
        return f"bank conflicts: model {r.conflicts} ({r}), hardware {case['bank_conflicts']}"
    return None


FAMILIES = {
    "wgmma_smem_read": check_wgmma_smem_read,
    "ldmatrix_read": check_ldmatrix_read,
    "tma_to_wgmma": check_tma_to_wgmma,
    "bank_conflicts": check_bank_conflicts,
}
