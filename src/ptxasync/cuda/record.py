"""Golden-format recording on a GPU.

``rerecord(path)``: every case of a recorded file (families encode_errors,
tile_load, im2col_load, tile_store, tensor_reduce, bulk_copy, bulk_reduce,
cp_async, and the cluster families of ``record_cluster``) run again on this GPU
through ``ptxasync.cuda``: the result is compared with the stored one (addresses aside: the tensor is elsewhere now, so the tensor
map's bytes 0-7 must hold the new address and every other byte must be equal)
and with the model, and written as a new case in the same format, with this
machine's GPU, compute capability and driver. ``random_cases(family, n, seed)``
makes new cases from the stored ones (new data, coordinates, offsets), runs
them on the GPU and the model, and records them the same way. ``ptxasync
golden FILE`` then replays what was recorded.
"""
import copy
import gzip
import json
import random

import numpy as np

from . import record_cluster as _cluster
from .program import Program
from .runner import diff

__all__ = ["rerecord", "random_cases", "FAMILIES", "Tally"]

REGION = 2048        # shared address of the recorded regions (as in the stored sets)
MBAR = 1024          # the mbarrier (the first 8 bytes of the dynamic shared memory)
SMEM = 200 * 1024    # dynamic shared memory of every launch, as recorded
PAD = 4096           # zero bytes around a recorded global window (interleaved maps read past it)
_RUNTIME = {"CUDA_ERROR_ILLEGAL_INSTRUCTION": "cudaErrorIllegalInstruction",
            "CUDA_ERROR_ILLEGAL_ADDRESS": "cudaErrorIllegalAddress",
            "CUDA_ERROR_MISALIGNED_ADDRESS": "cudaErrorMisalignedAddress"}


class Skip(Exception):
    """The case cannot be expressed through this path (the reason)."""


def _hx(s):
    return bytes.fromhex(s)


def _map_args(p):
    a = dict(dtype=p["tensorDataType_value"], rank=p["tensorRank"], global_dim=p["globalDim"],
             global_strides=p["globalStrides"], element_strides=p["elementStrides"],
             interleave=p["interleave_value"], swizzle=p["swizzle_value"],
             l2_promotion=p["l2Promotion_value"], oob_fill=p["oobFill_value"])
    if p["encode_function"] == "cuTensorMapEncodeTiled":
        return "tiled", dict(a, box_dim=p["boxDim"])
    return "im2col", dict(a, pixel_box_lower=p["pixelBoxLowerCorner"], pixel_box_upper=p["pixelBoxUpperCorner"],
                          channels_per_pixel=p["channelsPerPixel"], pixels_per_column=p["pixelsPerColumn"])


def _add_map(prog, where, p):
    kind, a = _map_args(p)
    if kind == "tiled":
        return prog.tensor_map_tiled(where, **a)
    return prog.tensor_map_im2col(where, **a)


def _check_enum_ranges(p):
    for k, hi in (("tensorDataType_value", 15), ("interleave_value", 2), ("swizzle_value", 7),
                  ("l2Promotion_value", 3), ("oobFill_value", 1)):
        if not 0 <= p[k] <= hi or str(p.get(k[:-6], "")).startswith("<invalid"):
            raise Skip(f"{k} = {p[k]} is not a value of its CUDA enum: cuda-bindings cannot pass it")
    big = [x for x in list(p.get("globalDim", [])) + list(p.get("boxDim", [])) + list(p.get("elementStrides", []))
           if x < 0 or x >= 1 << 32]
    if big:
        raise Skip(f"value {big[0]} does not fit a cuuint32_t/cuuint64_t parameter")


def _map_address_ok(raw, address):
    """Addresses aside: bytes 0-7 of a map hold its global address."""
    return int.from_bytes(raw[:8], "little") == address


def _same_map(stored_hex, raw, address):
    """None, or how the GPU's map differs from the stored one (addresses aside)."""
    want = _hx(stored_hex)
    if not _map_address_ok(raw, address):
        return f"map bytes 0-7 hold 0x{int.from_bytes(raw[:8], 'little'):x}, not the address 0x{address:x}"
    for k in range(8, 128):
        if raw[k] != want[k]:
            return f"map byte {k}: this GPU 0x{raw[k]:02x}, stored 0x{want[k]:02x}"
    return None


class Tally:
    """Counts per family: runs, equal to the stored result, model agreeing, skipped."""

    def __init__(self):
        self.fam = {}
        self.notes = []

    def add(self, family, key, n=1):
        f = self.fam.setdefault(family, {"runs": 0, "stored_same": 0, "stored_differs": 0, "model_same": 0,
                                         "model_differs": 0, "skipped": 0, "not_compared": 0})
        f[key] += n

    def note(self, cid, msg):
        self.notes.append(f"{cid}: {msg}")


# --- one run, compared three ways -------------------------------------------------------

def _error_name(result):
    err = getattr(result, "cuda_error", None)
    return _RUNTIME.get(err, err)


def _run(tally, family, cid, prog):
    """diff(prog), counted; returns the Diff."""
    d = diff(prog)
    tally.add(family, "runs")
    if d.same:
        tally.add(family, "model_same")
    else:
        tally.add(family, "model_differs")
        tally.note(cid, "model: " + "; ".join(d.problems))
    return d


def _stored(tally, family, cid, problem):
    if problem is None:
        tally.add(family, "stored_same")
    elif problem == "not compared":
        tally.add(family, "not_compared")
    else:
        tally.add(family, "stored_differs")
        tally.note(cid, "stored: " + problem)


# --- families ---------------------------------------------------------------------------

def _encode_errors(case, tally, env):
    from .encode import encode_driver, encode_model
    p = case["params"]
    if p.get("tensormap_misalign"):
        raise Skip("a misaligned CUtensorMap pointer cannot be passed through cuda-bindings")
    _check_enum_ranges(p)
    kind, a = _map_args(p)
    a["global_address"] = int(case["global_address"], 16)
    from ._driver import NotExpressible
    try:
        drv = encode_driver(kind, a)
    except NotExpressible as e:
        raise Skip(str(e)) from None
    ok, mraw, msg = encode_model(kind, a)
    tally.add("encode_errors", "runs")
    if (drv[1] is not None) == ok and (not ok or drv[1] == mraw):
        tally.add("encode_errors", "model_same")
    else:
        tally.add("encode_errors", "model_differs")
        tally.note(case["id"], f"model: driver {drv[0]}, model {'accepted' if ok else msg}")
    same = drv[0] == case["encode_result_name"] and (drv[1] is None or drv[1].hex() == case.get("tensormap_hex"))
    _stored(tally, "encode_errors", case["id"], None if same else
            f"driver {drv[0]} (stored {case['encode_result_name']})")
    new = _stamp(case, env)
    new["encode_result_name"] = drv[0]
    new["encode_result"] = 0 if drv[1] is not None else case["encode_result"] if drv[0] == case["encode_result_name"] \
        else -1
    new.pop("tensormap_hex", None)
    if drv[1] is not None:
        new["tensormap_hex"] = drv[1].hex()
    return new


def _window_program(case, window_key, smem_fill):
    window = _hx(case[window_key])
    prog = Program(smem_bytes=SMEM, smem_fill=smem_fill)
    buf = prog.register(np.concatenate([np.zeros(PAD, np.uint8), np.frombuffer(window, np.uint8),
                                        np.zeros(16 * PAD, np.uint8)]))
    at = buf + (PAD - case["global_window_offset"])
    return prog, buf, at, len(window)


def _encode_only(case, tally, env):
    """A load / store case whose map the driver rejected: the encode is the result."""
    from .encode import encode_driver, encode_model
    p = case["params"]
    kind, a = _map_args(p)
    a["global_address"] = int(case["global_address"], 16)
    fam = case["family"]
    drv = encode_driver(kind, a)
    ok, _, msg = encode_model(kind, a)
    tally.add(fam, "runs")
    tally.add(fam, "model_same" if (drv[1] is not None) == ok else "model_differs")
    if (drv[1] is not None) != ok:
        tally.note(case["id"], f"model: driver {drv[0]}, model {'accepted' if ok else msg}")
    _stored(tally, fam, case["id"], None if drv[0] == case["encode_result_name"] else
            f"driver {drv[0]} (stored {case['encode_result_name']})")
    new = _stamp(case, env)
    new["encode_result_name"] = drv[0]
    return new if drv[1] is None else None


def _tile_load(case, tally, env):
    p = case["params"]
    _check_enum_ranges(p)
    fam = case["family"]
    if case.get("encode_result", 0) != 0:
        return _encode_only(case, tally, env)
    new = _stamp(case, env)
    new_loads = []
    for load in case["loads"]:
        prog, buf, at, wlen = _window_program(case, "global_window_hex", 0xA5)
        tm = _add_map(prog, at, p)
        dst = load.get("smem_dst_addr", REGION + p.get("smem_dst_offset", 0))
        region = load.get("smem_region_addr", REGION)
        expect = load.get("expect_tx", p.get("expect_tx_bytes"))
        offs = load.get("im2col_offsets")
        prog.mbarrier_init(MBAR, 1)
        prog.mbarrier_arrive_expect_tx(MBAR, expect)
        prog.cp_async_bulk_tensor_load(tm, load["coords"], dst, MBAR, dst_space=p.get("dst_space", "shared::cta"),
                                       load_mode="tile" if offs is None else "im2col",
                                       **({} if offs is None else {"im2col_offsets": offs}))
        prog.mbarrier_wait(MBAR, 0)
        cid = f"{case['id']}/{load['index']}"
        d = _run(tally, fam, cid, prog)
        g = d.gpu
        rec = {"index": load["index"], "coords": load["coords"], "expect_tx": expect}
        if offs is not None:
            rec["im2col_offsets"] = offs
        addr = g.addresses[0] + PAD - case["global_window_offset"] if g.addresses else None
        if g.encode and g.encode[0][1] is not None:
            rec["global_address"] = hex(addr)
            rec["tensormap_hex"] = g.encode[0][1].hex()
            prob = _same_map(case["tensormap_hex"], g.encode[0][1], addr) if case.get("tensormap_hex") else None
            if prob:
                _stored(tally, fam, cid, prob)
                continue
        if g.verdict in ("IllegalInstruction", "IllegalAddress", "MisalignedAddress"):
            rec["error"] = _error_name(g)
            _stored(tally, fam, cid, None if load.get("error") == rec["error"] else
                    f"this GPU {rec['error']}, stored {load.get('error') or 'completed'}")
        elif g.verdict == "Deadlock":
            _stored(tally, fam, cid, None if load.get("mbar_status", "").startswith("completed_after") else
                    f"the phase did not complete here; stored {load.get('mbar_status') or load.get('error')}")
            continue        # the bytes credited are not probed here: not recorded
        elif g.verdict:
            _stored(tally, fam, cid, f"this GPU {g.verdict}: {g.message}")
            continue
        else:
            want = _hx(load["smem_hex"]) if "smem_hex" in load else None
            off = region - prog.smem_base
            got = g.smem[off:off + (len(want) if want else load.get("smem_dump_len", 4096))]
            rec.update(mbar_status="completed", tx_bytes_observed=expect, smem_region_addr=region,
                       smem_dst_addr=dst, smem_dump_len=len(got), smem_hex=got.hex())
            if want is None:
                _stored(tally, fam, cid, "not compared")
            elif load.get("mbar_status") != "completed":
                _stored(tally, fam, cid, f"completed here; stored {load.get('mbar_status') or load.get('error')}")
            else:
                k = next((j for j in range(len(want)) if got[j] != want[j]), None)
                _stored(tally, fam, cid, None if k is None else
                        f"shared byte {k} (address {region + k:#x}): this GPU 0x{got[k]:02x}, stored 0x{want[k]:02x}")
        new_loads.append(rec)
    if not new_loads:
        return None
    new["loads"] = new_loads
    first = new_loads[0]
    if "global_address" in first:
        new["global_address"], new["tensormap_hex"] = first["global_address"], first["tensormap_hex"]
    return new


def _tile_store(case, tally, env):
    p = case["params"]
    _check_enum_ranges(p)
    fam = case["family"]
    if case.get("encode_result", 0) != 0:
        return _encode_only(case, tally, env)
    prog, buf, at, wlen = _window_program(case, "global_before_hex", 0x00)
    tm = _add_map(prog, at, p)
    region = case.get("smem_region_addr", REGION)
    src = case.get("smem_src_addr", region + p.get("smem_src_offset", 0))
    prog.write_smem(region, _hx(case["smem_hex"]))
    mode = p.get("load_mode", "tile")
    if fam == "tile_store":
        prog.cp_async_bulk_tensor_store(tm, p["coords"], src, load_mode=mode)
    else:
        prog.cp_reduce_async_bulk_tensor(p["op"], tm, p["coords"], src, load_mode=mode)
    prog.cp_async_bulk_commit_group()
    prog.cp_async_bulk_wait_group(0)
    d = _run(tally, fam, case["id"], prog)
    g = d.gpu
    new = _stamp(case, env)
    for k in ("error", "context_poisoned", "global_after_hex"):
        new.pop(k, None)
    if not g.addresses:
        raise Skip(f"no run: {g.message}")
    addr = g.addresses[0] + PAD - case["global_window_offset"]
    new["global_address"] = hex(addr)
    if g.encode and g.encode[0][1] is not None:
        new["tensormap_hex"] = g.encode[0][1].hex()
        prob = _same_map(case["tensormap_hex"], g.encode[0][1], addr) if case.get("tensormap_hex") else None
        if prob:
            _stored(tally, fam, case["id"], prob)
            return new
    if g.verdict in ("IllegalInstruction", "IllegalAddress", "MisalignedAddress"):
        new["error"] = _error_name(g)
        new["context_poisoned"] = True
        _stored(tally, fam, case["id"], None if case.get("error") == new["error"] else
                f"this GPU {new['error']}, stored {case.get('error') or 'completed'}")
        return new
    if g.verdict:
        _stored(tally, fam, case["id"], f"this GPU {g.verdict}: {g.message}")
        return None
    after = g.buffers[0][PAD:PAD + wlen]
    new["global_after_hex"] = after.hex()
    new["error"] = None
    if case.get("error"):
        _stored(tally, fam, case["id"], f"completed here; stored {case['error']}")
    else:
        want = _hx(case["global_after_hex"])
        k = next((j for j in range(len(want)) if after[j] != want[j]), None)
        _stored(tally, fam, case["id"], None if k is None else
                f"global window byte {k}: this GPU 0x{after[k]:02x}, stored 0x{want[k]:02x}")
    return new


def _plain_program(case, gkey):
    prog = Program(smem_bytes=SMEM, smem_fill=0x00)
    buf = prog.register(np.concatenate([np.frombuffer(_hx(case[gkey]), np.uint8), np.zeros(PAD, np.uint8)]))
    return prog, buf


def _compare_bytes(tally, fam, cid, what, got, want):
    k = next((j for j in range(len(want)) if got[j] != want[j]), None)
    _stored(tally, fam, cid, None if k is None else f"{what} byte {k}: this GPU 0x{got[k]:02x}, stored 0x{want[k]:02x}")


def _bulk(case, tally, env):
    """bulk_copy and bulk_reduce (one instruction; commit / wait, or an mbarrier)."""
    p = case["params"]
    fam = case["family"]
    prog, buf = _plain_program(case, "global_before_hex")
    region = case["smem_region_addr"]
    if "smem_before_hex" in case:
        prog.write_smem(region, _hx(case["smem_before_hex"]))
    else:
        prog.write_smem(region, bytes([p["smem_prefill_byte"]]) * p["smem_region_len"])
    to_shared = fam == "bulk_copy" and not p["instruction"].startswith("cp.async.bulk.global.shared::cta")
    if fam == "bulk_reduce":
        if p.get("probe"):
            raise Skip(f"probe {p['probe']!r}")
        prog.cp_reduce_async_bulk(p["redop"], p["type"], buf + p["global_dst_offset"], region + p["smem_src_offset"],
                                  p["size"], noftz=p["noftz"])
    elif to_shared:
        prog.mbarrier_init(MBAR, 1)
        prog.mbarrier_arrive_expect_tx(MBAR, p["size"])
        prog.cp_async_bulk(region + p["dst_offset"], buf + p["src_offset"], p["size"], MBAR,
                           dst_space="shared::cluster", src_space="global")
        prog.mbarrier_wait(MBAR, 0)
    else:
        prog.cp_async_bulk(buf + p["dst_offset"], region + p["src_offset"], p["size"], dst_space="global",
                           src_space="shared::cta")
    if not to_shared:
        prog.cp_async_bulk_commit_group()
        prog.cp_async_bulk_wait_group(0)
    d = _run(tally, fam, case["id"], prog)
    g = d.gpu
    new = _stamp(case, env)
    new["global_address"] = hex(g.addresses[0]) if g.addresses else case["global_address"]
    glen = len(_hx(case["global_before_hex"]))
    if g.verdict in ("IllegalInstruction", "IllegalAddress", "MisalignedAddress"):
        new["error"] = _error_name(g)
        _stored(tally, fam, case["id"], None if case.get("error") == new["error"] else
                f"this GPU {new['error']}, stored {case.get('error') or 'completed'}")
        return new
    if g.verdict:
        _stored(tally, fam, case["id"], f"this GPU {g.verdict}: {g.message}")
        return None
    after = g.buffers[0][:glen]
    new["global_after_hex"] = after.hex()
    if case.get("error"):
        _stored(tally, fam, case["id"], f"completed here; stored {case['error']}")
        return new
    _compare_bytes(tally, fam, case["id"], "global window", after, _hx(case["global_after_hex"]))
    if to_shared:
        off = region - prog.smem_base
        sm = g.smem[off:off + p["smem_region_len"]]
        new["smem_after_hex"] = sm.hex()
        new["mbar_status"] = "completed"
        _compare_bytes(tally, fam, case["id"] + "/smem", "shared region", sm, _hx(case["smem_after_hex"]))
    return new


def _cp_async(case, tally, env):
    p = case["params"]
    prog, buf = _plain_program(case, "global_src_hex")
    dst = REGION
    prog.write_smem(dst, bytes([p.get("smem_prefill_byte", 0xA5)]) * 64)
    ptx = p["ptx"]
    kw = {"cache": "cg" if ".cg." in ptx else "ca"}
    for n in (64, 128, 256):
        if f".L2::{n}B" in ptx:
            kw["prefetch"] = n
    if p["operand"] == "srcsize":
        kw["src_size"] = p["src_size"]
    elif p["operand"] == "ignore":
        kw["ignore_src"] = bool(p["ignore_src"])
    prog.cp_async(dst + p["dst_offset"], buf + p["src_offset"], p["cp_size"], **kw)
    prog.cp_async_commit_group()
    prog.cp_async_wait_group(0)
    d = _run(tally, "cp_async", case["id"], prog)
    g = d.gpu
    new = _stamp(case, env)
    new["global_address"] = hex(g.addresses[0]) if g.addresses else case["global_address"]
    if g.verdict in ("IllegalInstruction", "IllegalAddress", "MisalignedAddress"):
        new["error"] = _error_name(g)
        new.pop("smem_after_hex", None)
        _stored(tally, "cp_async", case["id"], None if case.get("error") == new["error"] else
                f"this GPU {new['error']}, stored {case.get('error') or 'completed'}")
        return new
    if g.verdict:
        _stored(tally, "cp_async", case["id"], f"this GPU {g.verdict}: {g.message}")
        return None
    off = dst - prog.smem_base
    sm = g.smem[off:off + 64]
    new["smem_after_hex"] = sm.hex()
    if case.get("error"):
        _stored(tally, "cp_async", case["id"], f"completed here; stored {case['error']}")
    else:
        _compare_bytes(tally, "cp_async", case["id"], "shared buffer", sm, _hx(case["smem_after_hex"]))
    return new


FAMILIES = {"encode_errors": _encode_errors, "tile_load": _tile_load, "im2col_load": _tile_load,
            "tile_store": _tile_store, "tensor_reduce": _tile_store, "bulk_copy": _bulk,
            "bulk_reduce": _bulk, "cp_async": _cp_async}
FAMILIES.update(_cluster.FAMILIES)


def _stamp(case, env):
    new = copy.deepcopy(case)
    new["set"] = env.get("set", "recorded")
    new["id"] = f"{case['id']}@{env.get('tag', 'gpu')}"
    new["recorded_on"] = {k: env["info"].get(k) for k in ("gpu", "compute_capability", "driver_version",
                                                          "cuda_driver_version")}
    new["recorded_by"] = "ptxasync.cuda (PTX JIT through cuModuleLoadDataEx)"
    return new


def _cases(path):
    with (gzip.open if str(path).endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                c = json.loads(line)
                if isinstance(c, dict) and "family" in c:
                    yield c


def rerecord(paths, out=None, limit=None, tally=None, tag="rerecorded", shard=None):
    """Run every supported case of the files again on this GPU; write the new
    cases to ``out`` (gzipped JSON lines) if given. Returns the Tally."""
    from ._driver import NotExpressible
    from .runner import gpu_info
    env = {"info": gpu_info(), "tag": tag}
    tally = tally or Tally()
    sink = gzip.open(out, "wt", encoding="utf-8") if out else None
    try:
        for path in [paths] if isinstance(paths, str) else paths:
            for i, case in enumerate(_cases(path)):
                if limit is not None and i >= limit:
                    break
                fn = FAMILIES.get(case["family"])
                if fn is None:
                    continue
                if shard is not None and i % shard[1] != shard[0]:
                    continue
                try:
                    new = fn(case, tally, env)
                except NotExpressible as e:
                    tally.add(case["family"], "skipped")
                    tally.note(case["id"], f"skipped: {e}")
                    continue
                except (KeyError, TypeError, ValueError) as e:    # a case this path cannot read
                    tally.add(case["family"], "skipped")
                    tally.note(case["id"], f"skipped: not readable here ({type(e).__name__}: {e})")
                    continue
                except Skip as e:
                    tally.add(case["family"], "skipped")
                    tally.note(case["id"], f"skipped: {e}")
                    continue
                if new is not None and sink:
                    sink.write(json.dumps(new, separators=(",", ":")) + "\n")
    finally:
        if sink:
            sink.close()
    return tally


# --- new random cases --------------------------------------------------------------------

_ESIZE = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}


def _mutate(case, rng):
    """A new case from a stored one: new data, and new coordinates / offsets."""
    c = copy.deepcopy(case)
    c["id"] = f"{case['family']}.rand.{rng.getrandbits(32):08x}"
    for k in ("global_window_hex", "global_before_hex", "global_src_hex", "smem_hex", "smem_before_hex"):
        if k in c:
            n = len(c[k]) // 2
            c[k] = rng.randbytes(n).hex()
    p = c.get("params", {})
    fam = c["family"]
    if fam in _cluster.FAMILIES:
        return _cluster.mutate(case, rng)
    if fam in ("tile_load", "im2col_load"):
        es = _ESIZE.get(p["tensorDataType_value"], 1)
        loads = []
        for j, load in enumerate(c["loads"][:2]):
            ld = {k: v for k, v in load.items() if k in ("index", "coords", "expect_tx", "im2col_offsets",
                                                         "smem_region_addr", "smem_dst_addr", "smem_dump_len")}
            coords = list(ld["coords"])
            for d in range(len(coords)):
                coords[d] += rng.randint(-3, 3) * (1 if d else max(1, 16 // es))
            if p["interleave_value"] == 0 and p["encode_function"] == "cuTensorMapEncodeTiled":
                coords[0] -= coords[0] % max(1, 16 // es)       # 16-byte aligned start (or a fault)
            ld["coords"] = coords
            loads.append(ld)
        c["loads"] = loads
    elif fam in ("tile_store", "tensor_reduce"):
        coords = list(p["coords"])
        es = _ESIZE.get(p["tensorDataType_value"], 1)
        for d in range(len(coords)):
            coords[d] = max(0, coords[d] + rng.randint(-2, 2) * (1 if d else max(1, 16 // es)))
        p["coords"] = coords
    elif fam == "cp_async":
        p["src_offset"] = rng.randrange(0, 64 - p["cp_size"] + 1, p["cp_size"])
        p["dst_offset"] = rng.randrange(0, 64 - p["cp_size"] + 1, p["cp_size"])
        if p["operand"] == "srcsize":
            p["src_size"] = rng.randint(0, p["cp_size"])
    elif fam == "bulk_copy":
        pass
    return c


def random_cases(paths, n, seed=0, out=None, tally=None, families=None):
    """``n`` new cases per family, made from the stored cases of ``paths`` (new
    random data, coordinates, offsets), each run on the GPU and the model and
    compared; the GPU's results are written to ``out`` in the golden format.
    Returns the Tally (the stored-result counts are not meaningful here)."""
    from ._driver import NotExpressible
    from .runner import gpu_info
    env = {"info": gpu_info(), "tag": f"seed{seed}", "set": "random"}
    tally = tally or Tally()
    rng = random.Random(seed)
    pools = {}
    for path in [paths] if isinstance(paths, str) else paths:
        for case in _cases(path):
            if case["family"] in FAMILIES and (families is None or case["family"] in families):
                if case.get("encode_result", 0) == 0 and not case.get("error") and \
                        (case["family"] not in _cluster.FAMILIES or (case["params"].get("probe") is None
                                                                     and case.get("ctas"))):
                    pools.setdefault(case["family"], []).append(case)
    sink = gzip.open(out, "wt", encoding="utf-8") if out else None
    try:
        for fam, pool in sorted(pools.items()):
            if fam == "encode_errors":
                continue      # encode-only: the stored set covers it; the random encode sweep is separate
            for _ in range(n):
                case = _mutate(rng.choice(pool), rng)
                q = Tally()
                try:
                    new = FAMILIES[fam](case, q, env)
                except (Skip, NotExpressible, KeyError, TypeError, ValueError) as e:
                    tally.add(fam, "skipped")
                    tally.note(case["id"], f"skipped: {e}")
                    continue
                for f, counts in q.fam.items():
                    for k in ("runs", "model_same", "model_differs"):
                        tally.add(f, k, counts[k])
                tally.notes += [x for x in q.notes if ": model:" in x]
                if new is not None and sink:
                    sink.write(json.dumps(new, separators=(",", ":")) + "\n")
    finally:
        if sink:
            sink.close()
    return tally
