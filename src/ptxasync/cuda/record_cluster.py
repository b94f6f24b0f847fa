"""Golden-format recording of the cluster families on a GPU: st_async,
cluster_bulk_copy (multicast from global, CTA to CTA), cluster_bulk_reduce and
cluster_tile_load (multicast tensor loads).

Each case becomes one cluster launch, laid out as the stored recordings were:
CTA r's region at shared offset 0x800 holding the case's bytes, its mbarrier at
0x400 (init 1, arrive.expect_tx of the CTA's expected bytes), a cluster barrier,
the operation from thread 0 of the issuing CTA, then every CTA the model credits
waits for its phase; after a second cluster barrier every other CTA completes
the expected bytes itself (``mbarrier.complete_tx``) and the end-of-program probe
says whether that completed the phase: it does only if the operation credited it
nothing, which is the stored ``completed_after_probe`` with 0 bytes observed.
The model runs the same program (``diff``), and the GPU's bytes are written as a
case of the same schema (``ctas`` records, ``recorded_on``).

One difference from the stored recordings: there, ``st.async`` stores came from
threads 0..nstores-1 of the issuing CTA; here thread 0 issues them all, in order.
"""
import copy

import numpy as np

from .program import Program

__all__ = ["FAMILIES", "PROBES", "mutate"]

REGION, BAR = 0x800, 0x400
SMEM = 200 * 1024 - 1024          # dynamic shared memory per CTA: 200 KiB windows, as recorded
PAD = 4096
# probes this path runs: the issuer as destination via mapa (C14), the mbarrier in another CTA (C15),
# ctaMask 0 (C9), mapa'd multicast operands (C12), misaligned operands (C16)
PROBES = {None, "self", "mbar_other_cta", "mask0", "dst_mapa", "misaligned", "dst_unaligned"}
_FAULTS = ("IllegalInstruction", "IllegalAddress", "MisalignedAddress")


def at(rank, off):
    return rank << 24 | off


def _hx(s):
    return bytes.fromhex(s)


def _layout(case, smem_bytes=SMEM):
    """A Program with every CTA's region and the records to fill in."""
    p = case["params"]
    n = p["cluster_size"]
    if (p.get("clusters_in_grid") or 1) != 1:
        from .record import Skip
        raise Skip("more than one cluster in the grid: one cluster per launch here")
    if p.get("probe") not in PROBES:
        from .record import Skip
        raise Skip(f"probe {p.get('probe')!r}")
    recs = sorted(case.get("ctas") or [], key=lambda k: k["cluster_ctarank"])
    if not recs and case.get("error"):       # a fault left no records: the launch's layout (as golden)
        recs = [{"cluster_ctarank": r, "smem_before_hex": "", "expect_tx": p["expect_tx_bytes"],
                 "issued": int(r == p["issuer_rank"])} for r in range(n)]
    if not recs:
        from .record import Skip
        raise Skip("no CTA records to lay out")
    prog = Program(smem_bytes=smem_bytes, ctas=n, smem_fill=0)
    for k in recs:
        prog.write_smem(at(k["cluster_ctarank"], REGION), _hx(k["smem_before_hex"]))
    return prog, recs


def _issue_and_wait(prog, recs, issue, receivers):
    n = prog.ctas
    for k in recs:
        r = k["cluster_ctarank"]
        prog.mbarrier_init(at(r, BAR), 1)
        prog.mbarrier_arrive_expect_tx(at(r, BAR), k["expect_tx"])
    prog.barrier_cluster()
    issue(prog)
    if receivers is None:
        return prog
    for r in range(n):
        if r in receivers:
            prog.mbarrier_wait(at(r, BAR), 0)
    prog.barrier_cluster()
    for k in recs:
        r = k["cluster_ctarank"]
        if r not in receivers and k["expect_tx"]:
            prog.mbarrier_complete_tx(at(r, BAR), k["expect_tx"])
    return prog


def _run_case(case, tally, env, build):
    """Build the launch twice (the model's credited CTAs decide who waits), run
    it on the GPU and the model, write the new case."""
    from .record import _error_name, _run, _stamp, _stored
    from .runner import run_model
    fam = case["family"]
    prog0, recs = build(None)
    pre = run_model(prog0)
    receivers = None if pre.verdict else {r for r in range(prog0.ctas) if pre.probes.get(at(r, BAR))}
    prog, recs = build(receivers)
    d = _run(tally, fam, case["id"], prog)
    g = d.gpu
    new = _stamp(case, env)
    if g.verdict in _FAULTS:
        new["error"] = _error_name(g)
        new["ctas"] = []
        _stored(tally, fam, case["id"], None if case.get("error") == new["error"] else
                f"this GPU {new['error']}, stored {case.get('error') or 'completed'}")
        return new, g
    if g.verdict or not d.same:
        _stored(tally, fam, case["id"], f"this GPU {g.verdict or 'completed'}: {g.message or '; '.join(d.problems)}")
        return None, g
    out = []
    problems = []
    for k in recs:
        r = k["cluster_ctarank"]
        done = r in receivers
        probe = g.probes.get(at(r, BAR))
        if not done and not probe:
            problems.append(f"CTA {r}: the phase did not complete after the probe")
        rk = dict(k)
        before = _hx(k["smem_before_hex"])
        off = REGION - prog.smem_base
        after = g.smem_ctas[r][off:off + len(before)]
        rk.update(cluster_id=0, ctaid=r, cluster_nctarank=prog.ctas, smem_region_addr=at(r, REGION) if prog.ctas > 1
                  else REGION, mbar_addr=at(r, BAR) if prog.ctas > 1 else BAR,
                  mapa_region=[at(j, REGION) for j in range(prog.ctas)],
                  mbar_status="completed" if done else "completed_after_probe",
                  tx_bytes_observed=k["expect_tx"] if done else 0, smem_after_hex=after.hex())
        out.append(rk)
        want = k.get("smem_after_hex")
        if want and case.get("set") != "random" and not case.get("error"):
            w = _hx(want)
            j = next((x for x in range(len(w)) if after[x] != w[x]), None)
            if j is not None:
                problems.append(f"CTA {r} region byte {j}: this GPU 0x{after[j]:02x}, stored 0x{w[j]:02x}")
            if (k.get("mbar_status") == "completed") != done:
                problems.append(f"CTA {r}: completed {done} here, stored {k.get('mbar_status')}")
    if case.get("set") == "random":
        _stored(tally, fam, case["id"], "not compared")
    elif case.get("error"):
        _stored(tally, fam, case["id"], f"completed here; stored {case['error']}")
    else:
        _stored(tally, fam, case["id"], "; ".join(problems) or None)
    if any("after the probe" in x for x in problems):
        return None, g
    new["ctas"] = out
    new["error"] = None
    return new, g


# --- families -----------------------------------------------------------------------------

def _st_async(case, tally, env):
    p = case["params"]
    if case.get("error") == "ptxas_rejected":
        from .record import Skip
        raise Skip("ptxas rejects the form: nothing to run")
    n = p["access_bytes"]
    src = _hx(case["global_src_hex"]) if "global_src_hex" in case else bytes(n * p["nstores"])
    issuer = p["issuer_rank"]

    def issue(prog):
        for t in range(p["nstores"]):
            dst = at(p["dst_rank"], REGION + p["smem_dst_offset"] + t * p["store_stride"])
            prog.st_async(dst, src[t * n:(t + 1) * n], at(p["mbar_rank"], BAR), type=p["type"], cta=issuer,
                          weak=p["weak"])

    def build(receivers):
        prog, recs = _layout(case)
        return _issue_and_wait(prog, recs, issue, receivers), recs
    new, _ = _run_case(case, tally, env, build)
    return new


def _cluster_bulk_copy(case, tally, env):
    p = case["params"]
    if p.get("probe") == "size_not16":
        from .record import Skip
        raise Skip("a size that is not a multiple of 16 is undefined behaviour (C13)")
    issuer = p["issuer_rank"]
    multicast = "multicast" in p["instruction"]

    def build(receivers):
        prog, recs = _layout(case)
        g = prog.register(np.concatenate([np.frombuffer(_hx(case["global_src_hex"]), np.uint8),
                                          np.zeros(PAD, np.uint8)])) if multicast else None

        def issue(pr):
            if multicast:
                dst_off = p.get("dst_offset", case["harness_params"]["dst_off"])
                dst, mbar = at(issuer, REGION + dst_off), at(issuer, BAR)
                if p.get("probe") == "dst_mapa":
                    k = case["harness_params"]["dst_form_rank"]
                    dst, mbar = at(k, REGION + dst_off), at(k, BAR)
                pr.cp_async_bulk(dst, g + p["src_offset"], p["size"], mbar, cta=issuer, dst_space="shared::cluster",
                                 src_space="global", cta_mask=p["cta_mask"])
            else:
                pr.cp_async_bulk(at(p["dst_rank"], REGION + p["dst_offset"]), at(issuer, REGION + p["src_offset"]),
                                 p["size"], at(p["mbar_rank"], BAR), cta=issuer, dst_space="shared::cluster",
                                 src_space="shared::cta")
        return _issue_and_wait(prog, recs, issue, receivers), recs
    new, g = _run_case(case, tally, env, build)
    if new is not None and multicast and g.addresses:
        new["global_address"] = hex(g.addresses[0])
    return new


def _cluster_bulk_reduce(case, tally, env):
    p = case["params"]
    issuer = p["issuer_rank"]

    def issue(prog):
        prog.cp_reduce_async_bulk(p["redop"], p["type"], at(p["dst_rank"], REGION + p["smem_dst_offset"]),
                                  at(issuer, REGION + p["smem_src_offset"]), p["size"], mbar=at(p["mbar_rank"], BAR),
                                  cta=issuer, dst_space="shared::cluster")

    def build(receivers):
        prog, recs = _layout(case)
        return _issue_and_wait(prog, recs, issue, receivers), recs
    new, _ = _run_case(case, tally, env, build)
    return new


def _cluster_tile_load(case, tally, env):
    from .record import Skip, _add_map, _check_enum_ranges, _same_map, _stored
    p = case["params"]
    _check_enum_ranges(p)
    if p["encode_function"] != "cuTensorMapEncodeTiled" or p["interleave_value"] != 0:
        raise Skip("only non-interleaved tiled maps in cluster launches")
    if case.get("encode_result", 0) != 0:
        raise Skip("the driver rejected the map: nothing to launch")
    issuer = p["issuer_rank"]
    smem = -(-(p["smem_region_len"] + 2048) // 1024) * 1024 - 1024
    holder = {}

    def build(receivers):
        prog, recs = _layout(case, smem_bytes=smem)
        window = _hx(case["global_window_hex"])
        buf = prog.register(np.concatenate([np.zeros(PAD, np.uint8), np.frombuffer(window, np.uint8),
                                            np.zeros(16 * PAD, np.uint8)]))
        tm = _add_map(prog, buf + (PAD - case["global_window_offset"]), p)
        holder["tm"] = tm

        def issue(pr):
            dst, mbar = at(issuer, REGION + p["smem_dst_offset"]), at(issuer, BAR)
            if p.get("probe") == "dst_mapa":
                k = case["harness_params"]["dst_form_rank"]
                dst, mbar = at(k, REGION + p["smem_dst_offset"]), at(k, BAR)
            pr.cp_async_bulk_tensor_load(tm, p["coords"], dst, mbar, cta=issuer, dst_space="shared::cluster",
                                         cta_mask=p["cta_mask"])
        return _issue_and_wait(prog, recs, issue, receivers), recs
    new, g = _run_case(case, tally, env, build)
    if new is None or not g.addresses or not g.encode or g.encode[0][1] is None:
        return new
    addr = g.addresses[0] + PAD - case["global_window_offset"]
    new["global_address"] = hex(addr)
    new["tensormap_hex"] = g.encode[0][1].hex()
    if case.get("tensormap_hex") and case.get("set") != "random":
        prob = _same_map(case["tensormap_hex"], g.encode[0][1], addr)
        if prob:
            _stored(tally, case["family"], case["id"] + "/map", prob)
    return new


FAMILIES = {"st_async": _st_async, "cluster_bulk_copy": _cluster_bulk_copy,
            "cluster_bulk_reduce": _cluster_bulk_reduce, "cluster_tile_load": _cluster_tile_load}


# --- new random cases ----------------------------------------------------------------------

def _regions(c, rng, n, length):
    length = -(-length // 16) * 16
    c["params"]["cluster_size"] = n
    c["params"]["smem_region_len"] = length
    c["ctas"] = [{"cluster_ctarank": r, "smem_before_hex": rng.randbytes(length).hex(),
                  "expect_tx": 0, "issued": 0} for r in range(n)]


def mutate(case, rng):
    """A new random case of a cluster family, from a stored one of the same form."""
    c = copy.deepcopy(case)
    c["id"] = f"{case['family']}.rand.{rng.getrandbits(32):08x}"
    c["set"] = "random"
    p = c["params"]
    p["probe"] = None
    fam = c["family"]
    n = rng.choice((2, 4))
    issuer = rng.randrange(n)
    p["issuer_rank"] = issuer
    if fam == "st_async":
        a = p["access_bytes"]
        p["nstores"] = rng.randint(1, 8)
        p["store_stride"] = a * rng.randint(1, max(1, 32 // a))
        p["smem_dst_offset"] = a * rng.randrange(0, 256 // a)
        p["dst_rank"] = p["mbar_rank"] = rng.randrange(n)
        p["expect_tx_bytes"] = p["nstores"] * a
        c["global_src_hex"] = rng.randbytes(p["nstores"] * a).hex()
        _regions(c, rng, n, p["smem_dst_offset"] + p["nstores"] * p["store_stride"] + 32)
    elif fam == "cluster_bulk_copy" and "multicast" in p["instruction"]:
        size = 16 * rng.randint(1, 24)
        p["size"], p["src_offset"], p["dst_offset"] = size, 16 * rng.randrange(0, 16), 16 * rng.randrange(0, 16)
        p["cta_mask"] = rng.randrange(1, 1 << n)
        c["harness_params"]["dst_off"] = p["dst_offset"]
        p["expect_tx_bytes"] = size
        c["global_src_hex"] = rng.randbytes(p["src_offset"] + size + 64).hex()
        _regions(c, rng, n, p["dst_offset"] + size + 32)
    elif fam == "cluster_bulk_copy":
        size = 16 * rng.randint(1, 32)
        p["size"], p["src_offset"], p["dst_offset"] = size, 16 * rng.randrange(0, 16), 16 * rng.randrange(0, 16)
        p["dst_rank"] = p["mbar_rank"] = rng.choice([r for r in range(n) if r != issuer])
        p["expect_tx_bytes"] = size
        _regions(c, rng, n, max(p["src_offset"], p["dst_offset"]) + size + 32)
    elif fam == "cluster_bulk_reduce":
        size = 16 * rng.randint(1, 24)
        p["size"], p["smem_src_offset"], p["smem_dst_offset"] = size, 16 * rng.randrange(0, 16), \
            16 * rng.randrange(0, 16)
        p["dst_rank"] = p["mbar_rank"] = rng.choice([r for r in range(n) if r != issuer])
        p["expect_tx_bytes"] = size
        _regions(c, rng, n, max(p["smem_src_offset"], p["smem_dst_offset"]) + size + 32)
    elif fam == "cluster_tile_load":
        es = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}.get(
            p["tensorDataType_value"], 1)
        coords = list(p["coords"])
        for d in range(len(coords)):
            coords[d] += rng.randint(-3, 3) * (1 if d else max(1, 16 // es))
        coords[0] -= coords[0] % max(1, 16 // es)
        p["coords"] = coords
        p["cta_mask"] = rng.randrange(0, 1 << n)
        c["global_window_hex"] = rng.randbytes(len(c["global_window_hex"]) // 2).hex()
        # the box (and so the bytes expected) is the stored case's
        _regions(c, rng, n, p["smem_region_len"])
    for k in c["ctas"]:
        k["expect_tx"] = p["expect_tx_bytes"]
        k["issued"] = int(k["cluster_ctarank"] == issuer)
    c.pop("error", None)
    return c
