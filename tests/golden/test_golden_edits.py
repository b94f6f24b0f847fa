"""tensormap.replace: the golden runner over the recorded edits, and the rules
R1-R5 of tests/data/README.md ("Tensor-map edits and mbarrier semantics").
Expected values are written out by hand, never produced by the code under test."""
import gzip
import json
import struct
from pathlib import Path

import numpy as np
import pytest

import ptxasync as p
from ptxasync import golden

import testpaths  # noqa: E402
DATA = Path(testpaths.DATA)


def _w(tm, off):
    return struct.unpack_from("<I", bytes(tm), off)[0]


def _cases(family):
    with gzip.open(DATA / f"{family}.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(ln) for ln in f if ln.strip()]


# ------------------------------------------------------------------ the runner

@pytest.mark.parametrize("family,n", [("tensormap_replace", 276), ("tensormap_replace_load", 11)])
def test_golden_edits_family(family, n):
    """Every recorded edit, equivalent map and load through an edited map reproduces
    (R1-R5); the forms ptxas rejected for sm_90a are refused by the model (R4)."""
    results, failures = golden.check_file(DATA / f"{family}.jsonl.gz")
    shown = "\n".join(f"{cid}: {msg}" for cid, msg in failures[:20])
    assert results[family] == {"passed": n, "failed": 0, "unsupported": 0}, shown


def test_runner_rejected_form_fails_when_the_model_accepts():
    """A ptxas-rejected case passes only because the model refuses the form:
    the same case with an accepted value (elemtype 12) fails."""
    case = next(c for c in _cases("tensormap_replace") if c.get("error") == "ptxas_rejected"
                and c["params"]["replacements"][0]["field"] == "elemtype")
    assert golden.check_case(case) == ("passed", None)
    case["params"]["replacements"][0]["new_val"] = 12
    status, msg = golden.check_case(case)
    assert status == "failed" and "ptxas rejected" in msg


def test_runner_edited_byte_mismatch_fails():
    case = _cases("tensormap_replace")[0]
    after = bytearray.fromhex(case["after_hex"])
    after[40] ^= 1
    case["after_hex"] = after.hex()
    status, msg = golden.check_case(case)
    assert status == "failed" and "byte 40" in msg


# ------------------------------------------------------------------ R1 / R2

def _f16_map(**kw):
    return p.TensorMap.tiled("f16", 0x10000, [64, 32], [128], [32, 4], **kw)


def test_r1_global_dim_zero_wraps():
    """R1: .global_dim ord k writes new_val - 1 to word 32+4k, mod 2^32 (0 -> 0xFFFFFFFF)."""
    tm = _f16_map()
    before = bytes(tm)
    tm.replace("global_dim", 0, ord=1)
    assert _w(tm, 36) == 0xFFFFFFFF
    assert bytes(tm)[:36] == before[:36] and bytes(tm)[40:] == before[40:]


@pytest.mark.parametrize("stride,lo,hi", [(24, 1, 0), (40, 2, 0), (2**37 + 0x40, 4, 2), (2**40, 0, 0)])
def test_r1_global_stride_bytes(stride, lo, hi):
    """R1: .global_stride ord 0 stores bytes >> 4 in word 12 and bits 36-39 in nibble 0
    of word 28: low 4 bits and bits 40 and up are dropped without an error."""
    tm = _f16_map()
    tm.replace("global_stride", stride, ord=0)
    assert _w(tm, 12) == lo and _w(tm, 28) & 0xF == hi


def test_r1_r2_elemtype_word8():
    """R2: word 8 of a driver map = (rank-1) << 4 | elemtype << 7 | ... (f16 = 6, rank 2:
    0x310). R1: .elemtype 11 (.tf32) writes 7 and sets bit 16; 3 leaves bit 16 set."""
    tm = _f16_map()
    assert _w(tm, 8) == 0x310
    tm.replace("elemtype", 11)
    assert _w(tm, 8) == 0x10390
    tm.replace("elemtype", 3)
    assert _w(tm, 8) == 0x10190


def test_r2_words_64_72_and_r3_edits_leave_them():
    """R2: word 64 = elemsize x prod floor(boxDim / elementStrides), word 72 = 16 / 256 /
    512 / 1024 for swizzle none / 32B / 64B / 128B. R3: tensormap.replace does not
    update either."""
    tm = _f16_map(swizzle="128B")
    assert (_w(tm, 64), _w(tm, 72)) == (2 * 32 * 4, 1024)
    assert _w(_f16_map(element_strides=[1, 3]), 64) == 2 * 32 * 1
    assert _w(_f16_map(element_strides=[1, 8]), 64) == 0
    tm.replace("box_dim", 8, ord=1).replace("swizzle_mode", 0)
    assert (_w(tm, 64), _w(tm, 72)) == (256, 1024)


def test_r1_rank_above_five_is_stored_and_refused_on_use():
    """R1: .rank stores new_val & 7, so 5 (rank 6) is written as given; no map has rank 6,
    so the model keeps the bytes and refuses to use them until a later edit fixes them."""
    tm = _f16_map()
    tm.replace("rank", 5)
    assert (_w(tm, 8) >> 4) & 7 == 5 and not tm.decodes
    assert bytes(tm.copy()) == bytes(tm)
    with pytest.raises(p.InvalidValue, match="rank"):
        tm.fields
    with pytest.raises(p.InvalidValue, match="rank"):
        p.Machine(smem_bytes=4096).cp_async_bulk_tensor_load(tm, [0, 0], 1024, 0)
    tm.replace("rank", 1)
    assert tm.decodes and tm.fields["rank"] == 2


@pytest.mark.parametrize("field,value,ord", [
    ("swizzle_atomicity", 0, 0), ("elemtype", 13, 0), ("elemtype", 15, 0), ("swizzle_mode", 4, 0),
    ("interleave_layout", 3, 0), ("fill_mode", 2, 0), ("box_dim", 8, 5), ("global_dim", 8, -1)])
def test_r4_forms_ptxas_rejects(field, value, ord):
    """R4: ptxas 13.0 rejects these forms for sm_90a; the model refuses them, names the
    rule, and leaves the map as it was."""
    tm = _f16_map()
    before = bytes(tm)
    with pytest.raises(p.InvalidValue, match="sm_90a|outside 0..4"):
        tm.replace(field, value, ord=ord)
    assert bytes(tm) == before


# ------------------------------------------------------------------ R5

def _load(tm, g):
    m = p.Machine(smem_bytes=16 * 1024)
    m.register(g, address=0x100000)
    m.smem[:] = 0xA5
    bar = m.mbarrier(0x400).init(1)
    bar.arrive_expect_tx(512)
    m.cp_async_bulk_tensor_load(tm, [16, 16], 0x800, bar)
    m.run()
    return bytes(m.smem), bar.state


def test_r5_edited_map_loads_as_the_encoded_map():
    """R5: a load through an edited map writes exactly the shared bytes of the load
    through the map the driver encodes with the new parameters, and is credited with the
    edited box (f32 box {16, 8}: 512 bytes); here rows 20-23 are out of bounds (NaN fill)."""
    g = np.arange(64 * 32, dtype=np.float32)
    kw = dict(global_strides=[256], element_strides=[1, 1])
    tm = p.TensorMap.tiled("f32", 0x100000, [64, 32], box_dim=[16, 4], **kw)
    base_smem, _ = _load(tm.copy(), g.copy())
    tm.replace("box_dim", 8, ord=1).replace("global_dim", 20, ord=1)
    tm.replace("swizzle_mode", 2).replace("fill_mode", 1)
    want = p.TensorMap.tiled("f32", 0x100000, [64, 20], box_dim=[16, 8], swizzle="64B",
                             oob_fill="NAN_REQUEST_ZERO_FMA", **kw)
    # R3: the two maps differ at most in words 64 and 72
    diff = {i for i, (a, b) in enumerate(zip(bytes(tm), bytes(want))) if a != b}
    assert diff <= set(range(64, 68)) | set(range(72, 76))
    got, state = _load(tm, g.copy())
    assert state["phase"] == 1 and state["tx"] == 0
    assert got == _load(want, g.copy())[0]
    assert got != base_smem
