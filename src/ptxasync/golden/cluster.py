"""Cluster families: cluster_bulk_reduce, cluster_tile_load."""
import numpy as np

from .. import _core
from ..machine import Machine, mapa
from .common import (SMEM_BYTES, Unsupported, check_map, encode_as_recorded, expect_error,
                     first_diff, hexbytes, register_window)


# Probes the model represents: the issuer as destination via mapa (golden C14),
# mbar operand in another CTA than the destination (C15); misaligned operands only
# where the hardware recorded cudaErrorMisalignedAddress (C16).
_CLUSTER_PROBES_MODELLED = {"self", "mbar_other_cta"}
_CLUSTER_PROBES_IF_MISALIGNED = {"misaligned", "dst_unaligned"}
# Tile-load probes: ctaMask 0 (C9), bits beyond the cluster (C10, see
# _launch_failure), two clusters (C11), mapa'd dstMem and mbar (C12).
_TILE_PROBES_MODELLED = {None, "mask0", "mask_beyond", "two_clusters", "dst_mapa"}
_REGION, _BAR = 0x800, 0x400      # CTA-relative offsets of every cluster launch (README)
_MODEL_FAULTS = (_core.IllegalInstruction, _core.IllegalAddress, _core.MisalignedAddress)


def _clusters(case):
    """The CTA records grouped by cluster, each group in rank order. A poisoned
    context left no records: replay the launch layout of one cluster to check
    the error alone."""
    p = case["params"]
    if case.get("ctas"):
        groups = {}
        for k in case["ctas"]:
            groups.setdefault(k["cluster_id"], []).append(k)
        return [sorted(g, key=lambda k: k["cluster_ctarank"]) for _, g in sorted(groups.items())]
    if case.get("error"):
        return [[{"cluster_ctarank": r, "smem_region_addr": _REGION, "mbar_addr": _BAR,
                  "smem_before_hex": "", "expect_tx": p["expect_tx_bytes"],
                  "issued": int(r == p["issuer_rank"])} for r in range(p["cluster_size"])]]
    raise Unsupported("no CTA records")


def _cluster_machine(ctas, smem_bytes):
    """A machine for one recorded cluster: every CTA's region as it was before the
    operation and its mbarrier after init(1) + arrive.expect_tx(expect_tx)."""
    m = Machine(ctas=len(ctas), smem_bytes=smem_bytes)
    regions, bars = [], []
    for k in ctas:
        cta = m.cta(k["cluster_ctarank"])
        off = k["smem_region_addr"] & 0xFFFFFF          # golden C1
        data = hexbytes(k["smem_before_hex"])
        cta.smem[off:off + len(data)] = np.frombuffer(data, dtype=np.uint8)
        regions.append(off)
        bar = cta.mbarrier(k["mbar_addr"] & 0xFFFFFF)
        bar.init(1)
        bar.arrive_expect_tx(k["expect_tx"])
        bars.append(bar)
    # as the recording kernel: the inits ordered before another CTA's operation signals them
    m.barrier_cluster()
    return m, regions, bars


def _compare_ctas(m, ctas, bars, regions, done):
    """Every CTA's credited tx, barrier status and region against the records."""
    problems = []
    for k, bar, off, ok in zip(ctas, bars, regions, done):
        r = k["cluster_ctarank"]
        s = bar.state
        credited = k["expect_tx"] if s["phase"] == 1 else k["expect_tx"] - s["tx"]
        if credited != k["tx_bytes_observed"]:
            problems.append(f"CTA {r} mbarrier tx: model {credited}, hardware {k['tx_bytes_observed']}")
        if ok != (k["mbar_status"] == "completed"):
            problems.append(f"CTA {r} mbarrier: model {'completed' if ok else 'pending'}, "
                            f"hardware {k['mbar_status']}")
        want = hexbytes(k["smem_after_hex"])
        d = first_diff(m.cta(r).smem[off:off + len(want)], want)
        if d:
            problems.append(f"CTA {r} shared memory {d}")
    return problems


def check_cluster_bulk_reduce(case):
    """cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
    from the issuing CTA into CTA dst_rank; every CTA's region and mbarrier tx."""
    p = case["params"]
    probe = p.get("probe")
    if probe and not (probe in _CLUSTER_PROBES_MODELLED or (
            probe in _CLUSTER_PROBES_IF_MISALIGNED
            and case.get("error") == "cudaErrorMisalignedAddress")):
        raise Unsupported(f"probe {probe!r}")
    if (p.get("clusters_in_grid") or 1) != 1:
        raise Unsupported("more than one cluster in the grid")
    ctas, = _clusters(case)
    m, regions, bars = _cluster_machine(ctas, SMEM_BYTES)
    issuer = next(k["cluster_ctarank"] for k in ctas if k["issued"])
    me = m.cta(issuer)
    src = me.addr(regions[issuer] + p["smem_src_offset"])
    dst = mapa(me.addr(regions[issuer] + p["smem_dst_offset"]), p["dst_rank"])
    mbar = mapa(bars[issuer].addr, p["mbar_rank"])
    try:
        m.cp_reduce_async_bulk(p["redop"], p["type"], dst, src, p["size"], mbar=mbar,
                               cta=issuer, dst_space="shared::cluster")
        done = [bar.try_wait(0) for bar in bars]
    except _MODEL_FAULTS as e:
        return expect_error(case, e)
    if case.get("error"):
        return f"hardware raised {case['error']}; model completed"
    return "; ".join(_compare_ctas(m, ctas, bars, regions, done)) or None


def _launch_failure(case, exc):
    """C10: a ctaMask bit at or above the cluster size failed the launch
    (cudaErrorLaunchFailure). The model has no launch failure; it rejects the
    instruction at issue (IllegalInstruction naming ctaMask), which matches."""
    return (case.get("error") == "cudaErrorLaunchFailure"
            and isinstance(exc, _core.IllegalInstruction) and "ctaMask" in str(exc))


def check_cluster_tile_load(case):
    """cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
    .multicast::cluster issued by one CTA; every CTA's region and mbarrier tx (C3)."""
    p = case["params"]
    probe = p.get("probe")
    if probe not in _TILE_PROBES_MODELLED:
        raise Unsupported(f"probe {probe!r}")
    if p["encode_function"] != "cuTensorMapEncodeTiled" or p["interleave_value"] != 0:
        raise Unsupported("only non-interleaved tiled maps were recorded in cluster launches")
    tm, d = encode_as_recorded(case, p, int(case["global_address"], 16))
    if tm is None:
        return d
    d = check_map(case, tm)
    problems = [d] if d else []
    smem_bytes = p["smem_region_len"] + 2048    # the launch's dynamic shared memory
    for ctas in _clusters(case):
        # C11: each cluster is its own machine; only the one holding the issuer
        # issues, so the others must show no change and tx 0.
        m, regions, bars = _cluster_machine(ctas, smem_bytes)
        issuer = next((k["cluster_ctarank"] for k in ctas if k["issued"]), None)
        try:
            if issuer is not None:
                register_window(m, case, 0x00)
                dst = m.cta(issuer).addr(regions[issuer] + p["smem_dst_offset"])
                mbar = bars[issuer].addr
                if probe == "dst_mapa":     # C12: both operands name CTA k
                    k = case["harness_params"]["dst_form_rank"]
                    dst, mbar = mapa(dst, k), mapa(mbar, k)
                m.cp_async_bulk_tensor_load(tm, p["coords"], dst, mbar, cta=issuer,
                                            dst_space="shared::cluster", cta_mask=p["cta_mask"])
            done = [bar.try_wait(0) for bar in bars]
        except _MODEL_FAULTS as e:
            return None if _launch_failure(case, e) else expect_error(case, e)
        if case.get("error"):
            return f"hardware raised {case['error']}; model completed"
        problems += _compare_ctas(m, ctas, bars, regions, done)
    return "; ".join(problems) or None


FAMILIES = {
    "cluster_bulk_reduce": check_cluster_bulk_reduce,
    "cluster_tile_load": check_cluster_tile_load,
}
