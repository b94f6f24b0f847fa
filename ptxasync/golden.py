"""Golden runner: check recorded hardware results against the model.

    python -m ptxasync.golden FILE.jsonl.gz [FILE ...] [--json] [--verbose]

Each file holds cases of one or more families (gzipped JSON lines recorded on a
real GPU). For every family it supports, the runner replays each case through
the model and compares every recorded byte; it prints passed / failed /
unsupported per family and the first differing byte of each failure. With
``--json`` it prints one JSON object ``{family: {passed, failed, unsupported}}``.
The exit status is non-zero if any case failed.
"""
import argparse
import gzip
import json
import sys

import numpy as np

from . import _core
from .enums import RedOp
from .machine import Machine, mapa
from .tensormap import TensorMap

__all__ = ["check_file", "check_case", "FAMILIES", "main"]

PREFILL = 0xA5
SMEM_BYTES = 200 * 1024     # every recorded single-CTA launch had 200 KiB
MBAR = 1024                  # below the recorded regions (which start at 2048)


class Unsupported(Exception):
    """The case uses something the model does not cover yet."""


def _hex(s):
    return bytes.fromhex(s)


def _first_diff(got, want):
    got, want = bytes(got), bytes(want)
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"byte {i}: model 0x{a:02x}, hardware 0x{b:02x}"
    if len(got) != len(want):
        return f"length: model {len(got)}, hardware {len(want)}"
    return None


def _encode(p, address):
    """The tensor map of a recorded case, encoded by the model."""
    common = dict(dtype=p["tensorDataType_value"], global_address=address,
                  global_dim=p["globalDim"], global_strides=p["globalStrides"],
                  element_strides=p["elementStrides"], interleave=p["interleave_value"],
                  swizzle=p["swizzle_value"], l2_promotion=p["l2Promotion_value"],
                  oob_fill=p["oobFill_value"], rank=p["tensorRank"])
    if p["encode_function"] == "cuTensorMapEncodeTiled":
        return TensorMap.tiled(box_dim=p["boxDim"], **common)
    return TensorMap.im2col(pixel_box_lower=p["pixelBoxLowerCorner"],
                            pixel_box_upper=p["pixelBoxUpperCorner"],
                            channels_per_pixel=p["channelsPerPixel"],
                            pixels_per_column=p["pixelsPerColumn"], **common)


def _check_map(case, tm):
    want = case.get("tensormap_hex")
    if want:
        d = _first_diff(bytes(tm), _hex(want))
        if d:
            return f"tensor map bytes differ at {d}"
    return None


# --- families ------------------------------------------------------------------

def check_encode(case):
    p = case["params"]
    tm, d = _encode_as_recorded(case, p, int(case["global_address"], 16))
    return d if tm is None else _check_map(case, tm)


def _encode_as_recorded(case, p, addr):
    """(map, None) when both the driver and the model accepted the parameters;
    (None, None) when both rejected them (nothing more to run); else a failure."""
    try:
        tm = _encode(p, addr)
    except _core.InvalidValue as e:
        if case.get("encode_result", 0) != 0:
            return None, None
        return None, f"model rejected the map the driver accepted: {e}"
    if case.get("encode_result", 0) != 0:
        return None, f"model accepted the map the driver rejected ({case.get('encode_result_name')})"
    return tm, None


def check_tile_load(case):
    p = case["params"]
    if p["encode_function"] != "cuTensorMapEncodeTiled":
        raise Unsupported("im2col loads")
    addr = int(case["global_address"], 16)
    tm, d = _encode_as_recorded(case, p, addr)
    if tm is None:
        return d
    problems = []
    d = _check_map(case, tm)
    if d:
        problems.append(d)
    for load in case["loads"]:
        if "global_address" in load or "tensormap_hex" in load:
            raise Unsupported("a load with its own tensor map")
        d = _check_one_load(case, tm, load, p)
        if d:
            problems.append(f"load {load['index']} {load['coords']}: {d}")
    return "; ".join(problems) or None


def _run_load(case, tm, load, p, pad_byte):
    """One recorded load through the model. The recorded window is surrounded by
    padding of pad_byte: interleaved maps read past the recorded window (their
    dim-0 bound may exceed the row stride), and those bytes are unknown."""
    addr = int(case["global_address"], 16)
    window = _hex(case["global_window_hex"])
    start = addr + case["global_window_offset"] - _PAD
    mem = np.full(len(window) + 2 * _PAD + _PAD_AFTER, pad_byte, dtype=np.uint8)
    mem[_PAD:_PAD + len(window)] = np.frombuffer(window, dtype=np.uint8)
    m = Machine(ctas=1, smem_bytes=SMEM_BYTES)
    m.register(mem, address=start)
    m.smem[:] = PREFILL
    bar = m.mbarrier(MBAR)
    bar.init(1)
    expect = load.get("expect_tx", p.get("expect_tx_bytes"))
    bar.arrive_expect_tx(expect)
    dst = load.get("smem_dst_addr", 2048 + p.get("smem_dst_offset", 0))
    m.cp_async_bulk_tensor_load(tm, load["coords"], dst, bar, dst_space=p.get("dst_space", "shared::cta"))
    bar.try_wait(0)
    s = bar.state
    credited = expect if s["phase"] == 1 else expect - s["tx"]
    return m.smem.copy(), credited


_PAD = 64 * 1024
_PAD_AFTER = 1024 * 1024


def _check_one_load(case, tm, load, p):
    try:
        smem, credited = _run_load(case, tm, load, p, 0x00)
    except _core.IllegalInstruction as e:
        if load.get("error") == "cudaErrorIllegalInstruction":
            return None
        return f"model faulted ({e}); hardware completed"
    if load.get("error"):
        return f"hardware raised {load['error']}; model completed"
    region = load["smem_region_addr"]
    want = np.frombuffer(_hex(load["smem_hex"]), dtype=np.uint8)
    got = smem[region:region + len(want)]
    care = np.ones(len(want), dtype=bool)
    if p["interleave_value"] != 0:
        # Bytes read from outside the recorded window are unknown: ignore them.
        other, _ = _run_load(case, tm, load, p, 0xFF)
        care &= got == other[region:region + len(want)]
    # docs/tile-mode.md 7.2: for interleaved maps the hardware may complete the
    # phase as soon as the credited slices reach expect_tx (timing-dependent).
    early = (p["interleave_value"] != 0 and load.get("mbar_status") == "completed"
             and load["tx_bytes_observed"] == load["expect_tx"] < credited)
    if credited != load["tx_bytes_observed"] and not early:
        return f"tx bytes: model {credited}, hardware {load['tx_bytes_observed']}"
    if early:
        # The dump may then precede the last writes: accept the prefill where
        # the copy had not landed yet.
        care &= ~((want == PREFILL) & (got != PREFILL))
    bad = np.nonzero(care & (got != want))[0]
    if len(bad):
        i = int(bad[0])
        return f"shared memory byte {i}: model 0x{got[i]:02x}, hardware 0x{want[i]:02x}"
    return None


def check_tile_store(case, reduce_op=None):
    p = case["params"]
    if p.get("load_mode", "tile") != "tile":
        raise Unsupported(f"{p['load_mode']} stores")
    addr = int(case["global_address"], 16)
    tm, d = _encode_as_recorded(case, p, addr)
    if tm is None:
        return d
    d = _check_map(case, tm)
    if d:
        return d
    # Padding around the window: interleaved stores may write past it.
    addr = int(case["global_address"], 16)
    before = _hex(case["global_before_hex"])
    mem = np.zeros(len(before) + _PAD + _PAD_AFTER, dtype=np.uint8)
    window = mem[_PAD:_PAD + len(before)]
    window[:] = np.frombuffer(before, dtype=np.uint8)
    m = Machine(ctas=1, smem_bytes=SMEM_BYTES)
    m.register(mem, address=addr + case["global_window_offset"] - _PAD)
    # Faulting cases carry no addresses: every recorded region started at 2048.
    region = case.get("smem_region_addr", 2048)
    src_addr = case.get("smem_src_addr", region + p.get("smem_src_offset", 0))
    src = _hex(case["smem_hex"])
    m.smem[region:region + len(src)] = np.frombuffer(src, dtype=np.uint8)
    try:
        if reduce_op is None:
            m.cp_async_bulk_tensor_store(tm, p["coords"], src_addr)
        else:
            m.cp_reduce_async_bulk_tensor(reduce_op, tm, p["coords"], src_addr)
        m.cp_async_bulk_commit_group()
        m.cp_async_bulk_wait_group(0)
    except _core.IllegalInstruction as e:
        if case.get("error") == "cudaErrorIllegalInstruction":
            return None
        return f"model faulted ({e}); hardware completed"
    if case.get("error"):
        return f"hardware raised {case['error']}; model completed"
    d = _first_diff(window, _hex(case["global_after_hex"]))
    return f"global memory {d} (window offset -128)" if d else None


def check_tensor_reduce(case):
    return check_tile_store(case, reduce_op=RedOp[case["params"]["op"].upper()])


def _expect_error(case, exc):
    """None if the hardware recorded the error that the model raised."""
    want = case.get("error")
    names = {_core.IllegalInstruction: "cudaErrorIllegalInstruction",
             _core.IllegalAddress: "cudaErrorIllegalAddress",
             _core.MisalignedAddress: "cudaErrorMisalignedAddress"}
    got = next((n for cls, n in names.items() if isinstance(exc, cls)), None)
    if want and want == got:
        return None
    if want:
        return f"hardware raised {want}; model raised {type(exc).__name__}: {exc}"
    return f"model raised {type(exc).__name__} ({exc}); hardware completed"


def check_bulk_reduce(case):
    """cp.reduce.async.bulk.global.shared::cta.bulk_group.<op>.<type>: the recorded
    window reduced with the shared region, after commit_group; wait_group 0."""
    p = case["params"]
    if p.get("probe"):
        raise Unsupported(f"probe {p['probe']!r}")
    before = _hex(case["global_before_hex"])
    window = np.frombuffer(before, dtype=np.uint8).copy()
    m = Machine(ctas=1, smem_bytes=SMEM_BYTES)
    addr = int(case["global_address"], 16)
    m.register(window, address=addr)
    region = case["smem_region_addr"]
    src = _hex(case["smem_before_hex"])
    m.smem[region:region + len(src)] = np.frombuffer(src, dtype=np.uint8)
    try:
        m.cp_reduce_async_bulk(p["redop"], p["type"], addr + p["global_dst_offset"],
                               region + p["smem_src_offset"], p["size"], noftz=p["noftz"])
        m.cp_async_bulk_commit_group()
        m.cp_async_bulk_wait_group(0)
    except (_core.IllegalInstruction, _core.IllegalAddress, _core.MisalignedAddress) as e:
        return _expect_error(case, e)
    if case.get("error"):
        return f"hardware raised {case['error']}; model completed"
    d = _first_diff(window, _hex(case["global_after_hex"]))
    if d:
        return f"global memory {d} (window offset)"
    d = _first_diff(m.smem[region:region + len(src)], src)
    return f"source region changed: {d}" if d else None


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
        data = _hex(k["smem_before_hex"])
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
        return _expect_error(case, e)
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
        want = _hex(k["smem_after_hex"])
        d = _first_diff(m.cta(r).smem[off:off + len(want)], want)
        if d:
            problems.append(f"CTA {r} shared memory {d}")
    return "; ".join(problems) or None


FAMILIES = {
    "encode_errors": check_encode,
    "tile_load": check_tile_load,
    "tile_store": check_tile_store,
    "tensor_reduce": check_tensor_reduce,
    "bulk_reduce": check_bulk_reduce,
    "cluster_bulk_reduce": check_cluster_bulk_reduce,
}


def check_case(case):
    """(status, message): status is 'passed', 'failed' or 'unsupported'."""
    fn = FAMILIES.get(case.get("family"))
    if fn is None:
        return "unsupported", f"family {case.get('family')!r} is not modelled yet"
    try:
        msg = fn(case)
    except Unsupported as e:
        return "unsupported", str(e)
    except (_core.PtxAsyncError, ValueError) as e:
        return "failed", f"model error: {type(e).__name__}: {e}"
    return ("failed", msg) if msg else ("passed", None)


def check_file(path, results=None, failures=None):
    """Check every case of a golden file; accumulates into results/failures."""
    results = {} if results is None else results
    failures = [] if failures is None else failures
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            case = json.loads(line)
            if "family" not in case:
                continue  # header lines
            status, msg = check_case(case)
            fam = results.setdefault(case["family"], {"passed": 0, "failed": 0, "unsupported": 0})
            fam[status] += 1
            if status == "failed":
                failures.append((case.get("id"), msg))
    return results, failures


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m ptxasync.golden", description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--json", action="store_true", help="print one JSON object of counts per family")
    ap.add_argument("--verbose", action="store_true", help="list every failure in full")
    args = ap.parse_args(argv)
    results, failures = {}, []
    for path in args.files:
        check_file(path, results, failures)
    if args.json:
        print(json.dumps(results, sort_keys=True))
    else:
        for fam, r in sorted(results.items()):
            print(f"{fam:24s} passed {r['passed']:5d}  failed {r['failed']:5d}  unsupported {r['unsupported']:5d}")
        for cid, msg in failures if args.verbose else failures[:50]:
            print(f"FAIL {cid}: {msg}")
        if len(failures) > 50 and not args.verbose:
            print(f"... {len(failures) - 50} more failures (--verbose lists all)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
