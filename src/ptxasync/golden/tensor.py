"""Tensor-map families: encode_errors, tile_load, im2col_load, tile_store, tensor_reduce."""
import numpy as np

from .. import _core
from ..enums import RedOp
from ..machine import Machine
from .common import (MBAR, PAD, PAD_AFTER, PREFILL, SMEM_BYTES, check_map, encode,
                     encode_as_recorded, expect_error, first_diff, hexbytes, register_window)


def check_encode(case):
    p = case["params"]
    tm, d = encode_as_recorded(case, p, int(case["global_address"], 16))
    return d if tm is None else check_map(case, tm)


def check_tile_load(case):
    """tile_load and im2col_load: every load of the case (its own launch)."""
    p = case["params"]
    addr = int(case["global_address"], 16)
    tm, d = encode_as_recorded(case, p, addr)
    if tm is None:
        return d
    problems = []
    d = check_map(case, tm)
    if d:
        problems.append(d)
    for load in case["loads"]:
        run_case, run_tm = case, tm
        if "global_address" in load:
            # A load run by a restarted process: the tensor (same bytes) and its
            # map sit at another address, recorded with the load.
            run_case = {**case, "global_address": load["global_address"],
                        "tensormap_hex": load.get("tensormap_hex", case.get("tensormap_hex"))}
            run_tm = encode(p, int(load["global_address"], 16))
            d = check_map(run_case, run_tm)
            if d:
                problems.append(f"load {load['index']}: {d}")
                continue
        d = _check_one_load(run_case, run_tm, load, p)
        if d:
            problems.append(f"load {load['index']} {load['coords']}: {d}")
    return "; ".join(problems) or None


def _run_load(case, tm, load, p, pad_byte):
    """One recorded load through the model, the window padded with pad_byte."""
    # Report mode: some cases expect fewer bytes than the load delivers, to
    # record the bytes credited (tx-overdelivered, undefined by the ISA).
    m = Machine(ctas=1, smem_bytes=SMEM_BYTES, hazards="report")
    register_window(m, case, pad_byte)
    m.smem[:] = PREFILL
    bar = m.mbarrier(MBAR)
    bar.init(1)
    expect = load.get("expect_tx", p.get("expect_tx_bytes"))
    bar.arrive_expect_tx(expect)
    dst = load.get("smem_dst_addr", 2048 + p.get("smem_dst_offset", 0))
    offsets = load.get("im2col_offsets")
    m.cp_async_bulk_tensor_load(tm, load["coords"], dst, bar, dst_space=p.get("dst_space", "shared::cta"),
                                load_mode="tile" if offsets is None else "im2col", im2col_offsets=offsets)
    bar.try_wait(0)
    s = bar.state
    credited = expect if s["phase"] == 1 else expect - s["tx"]
    return m.smem.copy(), credited


def _check_one_load(case, tm, load, p):
    try:
        smem, credited = _run_load(case, tm, load, p, 0x00)
    except _core.IllegalInstruction as e:
        return expect_error(load, e)
    if load.get("error"):
        return f"hardware raised {load['error']}; model completed"
    region = load["smem_region_addr"]
    want = np.frombuffer(hexbytes(load["smem_hex"]), dtype=np.uint8)
    got = smem[region:region + len(want)]
    care = np.ones(len(want), dtype=bool)
    interleaved = tm.fields["interleave"] != 0  # the map's own: an edit may change it
    if interleaved:
        # Bytes read from outside the recorded window are unknown: ignore them.
        other, _ = _run_load(case, tm, load, p, 0xFF)
        care &= got == other[region:region + len(want)]
    # docs/tile-mode.md 7.2: for interleaved maps the hardware may complete the
    # phase as soon as the credited slices reach expect_tx (timing-dependent).
    early = (interleaved and load.get("mbar_status") == "completed"
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
    mode = p.get("load_mode", "tile")
    addr = int(case["global_address"], 16)
    tm, d = encode_as_recorded(case, p, addr)
    if tm is None:
        return d
    d = check_map(case, tm)
    if d:
        return d
    # Padding around the window: interleaved stores may write past it.
    addr = int(case["global_address"], 16)
    before = hexbytes(case["global_before_hex"])
    mem = np.zeros(len(before) + PAD + PAD_AFTER, dtype=np.uint8)
    window = mem[PAD:PAD + len(before)]
    window[:] = np.frombuffer(before, dtype=np.uint8)
    m = Machine(ctas=1, smem_bytes=SMEM_BYTES)
    m.register(mem, address=addr + case["global_window_offset"] - PAD)
    # Faulting cases carry no addresses: every recorded region started at 2048.
    region = case.get("smem_region_addr", 2048)
    src_addr = case.get("smem_src_addr", region + p.get("smem_src_offset", 0))
    src = hexbytes(case["smem_hex"])
    m.smem[region:region + len(src)] = np.frombuffer(src, dtype=np.uint8)
    try:
        if reduce_op is None:
            m.cp_async_bulk_tensor_store(tm, p["coords"], src_addr, load_mode=mode)
        else:
            m.cp_reduce_async_bulk_tensor(reduce_op, tm, p["coords"], src_addr, load_mode=mode)
        m.cp_async_bulk_commit_group()
        m.cp_async_bulk_wait_group(0)
    except _core.IllegalInstruction as e:
        return expect_error(case, e)
    if case.get("error"):
        return f"hardware raised {case['error']}; model completed"
    d = first_diff(window, hexbytes(case["global_after_hex"]))
    return f"global memory {d} (window offset -128)" if d else None


def check_tensor_reduce(case):
    return check_tile_store(case, reduce_op=RedOp[case["params"]["op"].upper()])


FAMILIES = {
    "encode_errors": check_encode,
    "tile_load": check_tile_load,
    "im2col_load": check_tile_load,
    "tile_store": check_tile_store,
    "tensor_reduce": check_tensor_reduce,
}
