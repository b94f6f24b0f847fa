"""Cluster families: cluster_bulk_reduce."""
import numpy as np

from .. import _core
from ..machine import Machine, mapa
from .common import SMEM_BYTES, Unsupported, expect_error, first_diff, hexbytes


# Probes the model represents: the issuer as destination via mapa (golden C14),
# mbar operand in another CTA than the destination (C15); misaligned operands only
# where the hardware recorded cudaErrorMisalignedAddress (C16).
_CLUSTER_PROBES_MODELLED = {"self", "mbar_other_cta"}
_CLUSTER_PROBES_IF_MISALIGNED = {"misaligned", "dst_unaligned"}
_REGION, _BAR = 0x800, 0x400      # CTA-relative offsets of every cluster launch (README)


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
    cs = p["cluster_size"]
    if case.get("ctas"):
        ctas = sorted(case["ctas"], key=lambda k: k["cluster_ctarank"])
    elif case.get("error"):
        # A poisoned context left no CTA records: replay the launch layout to
        # check the error alone.
        ctas = [{"cluster_ctarank": r, "smem_region_addr": _REGION, "mbar_addr": _BAR,
                 "smem_before_hex": "", "expect_tx": p["expect_tx_bytes"],
                 "issued": int(r == p["issuer_rank"])} for r in range(cs)]
    else:
        raise Unsupported("no CTA records")
    m = Machine(ctas=cs, smem_bytes=SMEM_BYTES)
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
    issuer = next(k["cluster_ctarank"] for k in ctas if k["issued"])
    me = m.cta(issuer)
    src = me.addr(regions[issuer] + p["smem_src_offset"])
    dst = mapa(me.addr(regions[issuer] + p["smem_dst_offset"]), p["dst_rank"])
    mbar = mapa(bars[issuer].addr, p["mbar_rank"])
    try:
        m.cp_reduce_async_bulk(p["redop"], p["type"], dst, src, p["size"], mbar=mbar,
                               cta=issuer, dst_space="shared::cluster")
        done = [bar.try_wait(0) for bar in bars]
    except (_core.IllegalInstruction, _core.IllegalAddress, _core.MisalignedAddress) as e:
        return expect_error(case, e)
    if case.get("error"):
        return f"hardware raised {case['error']}; model completed"
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
    return "; ".join(problems) or None


FAMILIES = {
    "cluster_bulk_reduce": check_cluster_bulk_reduce,
}
