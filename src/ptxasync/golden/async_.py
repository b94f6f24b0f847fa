"""Asynchronous-copy families: cp_async, cp_async_mbarrier, bulk_copy,
cluster_bulk_copy, st_async (docs/async-copies.md)."""
import re

import numpy as np

from .. import _core
from ..machine import Machine, Mbarrier, mapa
from .cluster import _MODEL_FAULTS, _cluster_machine, _clusters, _compare_ctas, _launch_failure
from .common import SMEM_BYTES, Unsupported, expect_error, first_diff, hexbytes
from .mbarrier import STATE_BITS

CP_BUF = 128          # the 64-byte, 128-aligned cp_async buffer


def _register(m, case, key="global_src_hex"):
    data = np.frombuffer(hexbytes(case[key]), dtype=np.uint8).copy()
    return m.register(data, address=int(case["global_address"], 16))


def check_cp_async(case):
    """cp.async.{ca,cg}.shared.global{.L2::NB} [dst], [src], cp-size{, src-size | ignore-src};
    commit_group; wait_group 0 (observation 13)."""
    p = case["params"]
    ptx = p["ptx"]
    m = Machine(smem_bytes=4096)
    g = _register(m, case)
    m.smem[CP_BUF:CP_BUF + 64] = p.get("smem_prefill_byte", 0xA5)
    pf = re.search(r"\.L2::(\d+)B", ptx)
    kw = {"cache": "cg" if ".cg." in ptx else "ca", "prefetch": int(pf.group(1)) if pf else None}
    if p["operand"] == "srcsize":
        kw["src_size"] = p["src_size"]
    elif p["operand"] == "ignore":
        kw["ignore_src"] = bool(p["ignore_src"])
    elif p["operand"] != "none":
        raise Unsupported(f"operand {p['operand']!r}")
    try:
        m.cp_async(CP_BUF + p["dst_offset"], g.address + p["src_offset"], p["cp_size"], **kw)
        m.cp_async_commit_group()
        m.cp_async_wait_group(0)
    except _MODEL_FAULTS as e:
        return expect_error(case, e)
    if case.get("error"):
        return f"hardware raised {case['error']}; model completed"
    d = first_diff(m.smem[CP_BUF:CP_BUF + 64], hexbytes(case["smem_after_hex"]))
    return f"shared memory {d}" if d else None


# --- cp_async_mbarrier ----------------------------------------------------------

CPMB_BUF, CPMB_BAR = 0, 2048
_CP_SIZES = {0: ("cg", 16), 1: ("ca", 16), 2: ("ca", 8), 3: ("ca", 4)}


def _chunks(arg, threads):
    """(thread, chunk) pairs of a cp_async / check_data step, and the copy's (cache, size)."""
    base, count, code = arg & 0xFF, (arg >> 8) & 0xFF, (arg >> 16) & 3
    pairs = [(t, (base + r * count + i) % 128) for r, t in enumerate(threads) for i in range(count)]
    return pairs, _CP_SIZES[code]


def _run_cpmb(m, bar, g, program, src):
    """{step: value} as the recorded program ran: each step by the threads of its
    mask in increasing order; the value is the lowest thread's."""
    out = {}
    for k, st in enumerate(program):
        op, arg = st["op"], st["arg"]
        threads = [t for t in range(32) if (st["mask"] >> t) & 1]
        if op == "init":
            bar.init(arg)
        elif op == "cp_async":
            pairs, (cache, size) = _chunks(arg, threads)
            for t, c in pairs:
                m.cp_async(CPMB_BUF + 16 * c, g.address + 16 * c, size, thread=t, cache=cache)
        elif op.startswith("cpmb_arrive"):
            space = "generic" if op.endswith("_generic") else "shared::cta"
            for t in threads:
                m.cp_async_mbarrier_arrive(bar, thread=t, noinc="noinc" in op, space=space)
        elif op in ("arrive", "arrive_count"):
            states = [bar.arrive() if op == "arrive" else bar.arrive(arg) for _ in threads]
            out[k] = states[0]
        elif op == "test_wait_parity":
            out[k] = bar.test_wait(arg)
        elif op in ("try_wait_parity", "poll_parity"):
            # A poll spins until the phase completes: in the model, try_wait
            # completes whatever pending operation signals the barrier.
            out[k] = bar.try_wait(arg & 1)
        elif op == "pending_count":
            out[k] = Mbarrier.pending_count(out[arg])
        elif op in ("commit_group", "wait_group_0", "wait_group_1", "wait_all"):
            for t in threads:
                if op == "commit_group":
                    m.cp_async_commit_group(thread=t)
                elif op == "wait_all":
                    m.cp_async_wait_all(thread=t)
                else:
                    m.cp_async_wait_group(int(op[-1]), thread=t)
        elif op == "check_data":
            pairs, (_, size) = _chunks(arg, threads)
            out[k] = sum(bytes(m.smem[CPMB_BUF + 16 * c:CPMB_BUF + 16 * c + size]) == src[16 * c:16 * c + size]
                         for _, c in pairs)
        elif op == "spin":
            pass   # time passing: nothing the model needs to do
        else:
            raise Unsupported(f"op {op!r}")
    return out


def _cpmb_form_refused(form):
    """A form ptxas rejected (M1): the model's API must refuse it as well."""
    space = re.search(r"\.(shared(?:::\w+)?)", form)
    typ = re.search(r"\.(b\d+)\b", form)
    m = Machine(smem_bytes=4096)
    bar = m.mbarrier(CPMB_BAR).init(1)
    try:
        m.cp_async_mbarrier_arrive(bar, noinc=".noinc" in form, space=space.group(1) if space else "generic",
                                   type=typ.group(1) if typ else "b64")
    except ValueError:
        return True
    return False


def check_cp_async_mbarrier(case):
    """Programs of cp.async, cp.async.mbarrier.arrive{.noinc}, arrives, waits and
    pending_count on one mbarrier (README M1-M5). The copies complete as they are
    issued (policy 'immediate'): every recorded state was taken with the earlier
    copies already done (M4)."""
    p = case["params"]
    if case.get("error") == "ptxas_rejected":
        return None if _cpmb_form_refused(p["form"]) else f"model accepted a form ptxas rejected: {p['form']}"
    if case.get("error"):
        raise Unsupported(f"recorded error {case['error']}")
    m = Machine(smem_bytes=4096, policy="immediate")
    src = hexbytes(case["global_src_hex"])
    g = m.register(np.frombuffer(src, dtype=np.uint8).copy())
    m.smem[CPMB_BUF:CPMB_BUF + p["buffer_bytes"]] = p["smem_prefill_byte"]
    bar = m.mbarrier(CPMB_BAR)
    try:
        got = _run_cpmb(m, bar, g, p["program"], src)
    except (_core.PtxAsyncError, ValueError) as e:
        return f"model raised {type(e).__name__}: {e}"
    for r in case["steps"]:
        k, op, v = r["step"], r["op"], got.get(r["step"])
        if "state_hex" in r and (v & STATE_BITS) != (int(r["state_hex"], 16) & STATE_BITS):
            return (f"step {k} {op}: state bits 32-63 model 0x{v >> 32:08x}, "
                    f"hardware 0x{int(r['state_hex'], 16) >> 32:08x}")
        for key in ("wait_complete", "count", "chunks_equal_source"):
            if key in r and v != r[key]:
                return f"step {k} {op}: {key} model {v}, hardware {r[key]}"
    d = first_diff(m.smem[CPMB_BUF:CPMB_BUF + p["buffer_bytes"]], hexbytes(case["smem_after_hex"]))
    return f"final buffer {d}" if d else None


# --- bulk_copy ------------------------------------------------------------------------

def check_bulk_copy(case):
    """cp.async.bulk.global.shared::cta.bulk_group (commit, wait_group 0) and
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes (expect_tx = size)."""
    p = case["params"]
    m = Machine(ctas=1, smem_bytes=SMEM_BYTES)
    g = _register(m, case, "global_before_hex")
    region = case["smem_region_addr"]
    before = hexbytes(case["smem_before_hex"]) if "smem_before_hex" in case else None
    if before is not None:
        m.smem[region:region + len(before)] = np.frombuffer(before, dtype=np.uint8)
    else:
        m.smem[region:region + p["smem_region_len"]] = p["smem_prefill_byte"]
    to_global = p["instruction"].startswith("cp.async.bulk.global.shared::cta")
    try:
        if to_global:
            m.cp_async_bulk(g.address + p["dst_offset"], region + p["src_offset"], p["size"],
                            dst_space="global", src_space="shared::cta")
            m.cp_async_bulk_commit_group()
            m.cp_async_bulk_wait_group(0)
            done = True
        else:
            bar = m.mbarrier(1024).init(1)
            bar.arrive_expect_tx(p["size"])
            m.cp_async_bulk(region + p["dst_offset"], g.address + p["src_offset"], p["size"], bar,
                            dst_space="shared::cluster", src_space="global")
            done = bar.try_wait(0)
    except _MODEL_FAULTS as e:
        return expect_error(case, e)
    if case.get("error"):
        return f"hardware raised {case['error']}; model completed"
    d = first_diff(g.bytes, hexbytes(case["global_after_hex"]))
    if d:
        return f"global memory {d}"
    if not to_global:
        if done != (case.get("mbar_status") == "completed"):
            return f"mbarrier: model {'completed' if done else 'pending'}, hardware {case.get('mbar_status')}"
        d = first_diff(m.smem[region:region + p["smem_region_len"]], hexbytes(case["smem_after_hex"]))
        return f"shared memory {d}" if d else None
    d = first_diff(m.smem[region:region + len(before)], before)
    return f"source region changed: {d}" if d else None


def _issue_cluster_copy(m, case, regions, bars, issuer, size):
    p = case["params"]
    me = m.cta(issuer)
    if "multicast" in p["instruction"]:
        g = _register(m, case)
        dst_off = p.get("dst_offset", case["harness_params"]["dst_off"])
        dst, mbar = me.addr(regions[issuer] + dst_off), bars[issuer].addr
        if p.get("probe") == "dst_mapa":     # C12: both operands name CTA k
            k = case["harness_params"]["dst_form_rank"]
            dst, mbar = mapa(dst, k), mapa(mbar, k)
        m.cp_async_bulk(dst, g.address + p["src_offset"], size, mbar, cta=issuer, dst_space="shared::cluster",
                        src_space="global", cta_mask=p["cta_mask"])
    else:
        m.cp_async_bulk(mapa(me.addr(regions[issuer] + p["dst_offset"]), p["dst_rank"]),
                        me.addr(regions[issuer] + p["src_offset"]), size,
                        mapa(bars[issuer].addr, p["mbar_rank"]), cta=issuer,
                        dst_space="shared::cluster", src_space="shared::cta")


def check_cluster_bulk_copy(case):
    """Multicast cp.async.bulk global -> shared::cluster (C4, C9-C12) and CTA -> CTA
    cp.async.bulk.shared::cluster.shared::cta (C5, C14-C16); every CTA's region and
    mbarrier tx. A size that is not a multiple of 16 (C13) is undefined behaviour:
    the model refuses it naming the rule, and the recording must equal the model's
    copy of the first size rounded down to 16 bytes, which is what the H200 did."""
    p = case["params"]
    probe = p.get("probe")
    size = p["size"]
    if probe == "size_not16":
        m, regions, bars = _cluster_machine(_clusters(case)[0], SMEM_BYTES)
        issuer = p["issuer_rank"]
        try:
            _issue_cluster_copy(m, case, regions, bars, issuer, size)
            return f"model accepted size {size}, which is not a multiple of 16"
        except _core.InvalidValue as e:
            if "multiple of 16" not in str(e):
                return f"model refused size {size} for another reason: {e}"
        size &= ~15
    problems = []
    for ctas in _clusters(case):
        m, regions, bars = _cluster_machine(ctas, SMEM_BYTES)
        issuer = next((k["cluster_ctarank"] for k in ctas if k["issued"]), None)
        try:
            if issuer is not None:
                _issue_cluster_copy(m, case, regions, bars, issuer, size)
            done = [bar.try_wait(0) for bar in bars]
        except _MODEL_FAULTS as e:
            return None if _launch_failure(case, e) else expect_error(case, e)
        if case.get("error"):
            return f"hardware raised {case['error']}; model completed"
        problems += _compare_ctas(m, ctas, bars, regions, done)
    return "; ".join(problems) or None


# --- st_async ---------------------------------------------------------------------------

def check_st_async(case):
    """st.async{.weak}.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type from
    threads 0..nstores-1 of the issuing CTA (C7, C14-C17)."""
    p = case["params"]
    n = p["access_bytes"]
    if case.get("error") == "ptxas_rejected":
        m = Machine(ctas=2, smem_bytes=4096)
        bar = m.mbarrier(1024).init(1)
        try:
            m.st_async(mapa(2048, 1), bytes(n), mapa(bar.addr, 1), type=p["type"], weak=p["weak"])
        except ValueError:
            return None
        return f"model accepted st.async .{p['type']} x{p['vector']}, which ptxas rejects"
    src = hexbytes(case["global_src_hex"]) if "global_src_hex" in case else bytes(n * p["nstores"])
    problems = []
    for ctas in _clusters(case):
        m, regions, bars = _cluster_machine(ctas, SMEM_BYTES)
        issuer = next((k["cluster_ctarank"] for k in ctas if k["issued"]), None)
        try:
            for t in range(p["nstores"] if issuer is not None else 0):
                me = m.cta(issuer)
                dst = mapa(me.addr(regions[issuer] + p["smem_dst_offset"] + t * p["store_stride"]),
                           p["dst_rank"])
                m.st_async(dst, np.frombuffer(src[t * n:(t + 1) * n], dtype=np.uint8),
                           mapa(bars[issuer].addr, p["mbar_rank"]), type=p["type"], cta=issuer, thread=t,
                           weak=p["weak"])
            done = [bar.try_wait(0) for bar in bars]
        except _MODEL_FAULTS as e:
            return expect_error(case, e)
        if case.get("error"):
            return f"hardware raised {case['error']}; model completed"
        problems += _compare_ctas(m, ctas, bars, regions, done)
    return "; ".join(problems) or None


FAMILIES = {
    "cp_async": check_cp_async,
    "cp_async_mbarrier": check_cp_async_mbarrier,
    "bulk_copy": check_bulk_copy,
    "cluster_bulk_copy": check_cluster_bulk_copy,
    "st_async": check_st_async,
}
