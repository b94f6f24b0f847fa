"""Consumer families recorded on an H200 (tests/data/README.md, "Shared-memory
read families", "TMA load consumed by wgmma", "Shared-memory bank conflicts"):
the golden runner reproduces every case, and a tampered case fails."""
import copy
import gzip
import json
from pathlib import Path

import pytest

from ptxasync import golden
from ptxasync.golden import consumers as gc

import testpaths  # noqa: E402
DATA = Path(testpaths.DATA)
FAMILIES = ["wgmma_smem_read", "ldmatrix_read", "tma_to_wgmma", "bank_conflicts"]


def _cases(family):
    with gzip.open(DATA / f"{family}.jsonl.gz", "rt", encoding="utf-8") as f:
        return [c for c in map(json.loads, f) if c.get("family") == family]


@pytest.mark.parametrize("family", FAMILIES)
def test_golden_family(family):
    """Every public case reproduces (W1-W8, L1-L2, T1-T4, K1-K5); none unsupported."""
    results, failures = golden.check_file(DATA / f"{family}.jsonl.gz")
    r = results[family]
    shown = "\n".join(f"{cid}: {msg}" for cid, msg in failures[:10])
    assert r["failed"] == 0, shown
    assert r["unsupported"] == 0
    assert r["passed"] == {"wgmma_smem_read": 73, "ldmatrix_read": 11, "tma_to_wgmma": 47,
                           "bank_conflicts": 158}[family]


def _flip_d(case):
    """Change one accumulator value (an f32 of d_hex) to another fill code."""
    c = copy.deepcopy(case)
    h = c["d_hex"]
    c["d_hex"] = h[:8] + ("00" if h[8:10] != "00" else "01") + h[10:]
    return c


def test_wgmma_accumulators_are_compared():
    case = next(c for c in _cases("wgmma_smem_read") if not c.get("error"))
    assert gc.check_wgmma_smem_read(case) is None
    assert "accumulator" in gc.check_wgmma_smem_read(_flip_d(case))


def test_wgmma_descriptor_bits_matter():
    """A case replayed with another swizzle field (bits 62-63) no longer matches."""
    case = next(c for c in _cases("wgmma_smem_read") if c["params"]["swizzle"] == "128B" and not c.get("error"))
    c = copy.deepcopy(case)
    v = int(c["desc_hex"], 16)
    c["desc_hex"] = hex(v & ~(3 << 62) | (2 << 62))   # 128B -> 64B
    assert gc.check_wgmma_smem_read(c) is not None


def test_fault_cases_must_fault():
    """W7 / L2: a recorded fault the model does not raise is a failure."""
    case = next(c for c in _cases("wgmma_smem_read") if c.get("error"))
    assert gc.check_wgmma_smem_read(case) is None
    c = copy.deepcopy(case)
    c["params"]["sbo_bytes"] = 256           # now inside memory: the model completes
    assert "model completed" in gc.check_wgmma_smem_read(c)
    case = next(c for c in _cases("ldmatrix_read") if c.get("error"))
    assert gc.check_ldmatrix_read(case) is None
    c = copy.deepcopy(case)
    c["params"]["thread_addr_offsets"][3] += 8   # 8 mod 16 -> aligned
    assert "model completed" in gc.check_ldmatrix_read(c)


def test_ldmatrix_registers_are_compared():
    case = next(c for c in _cases("ldmatrix_read") if not c.get("error"))
    c = copy.deepcopy(case)
    c["params"]["trans"] = not c["params"]["trans"]
    assert "registers" in gc.check_ldmatrix_read(c)


def test_tma_to_wgmma_compares_every_stage():
    """T1 (shared region), T2/T3 (accumulators) and T4 (the check's cause)."""
    cases = _cases("tma_to_wgmma")
    case = next(c for c in cases if c["params"]["matched"])
    c = copy.deepcopy(case)
    c["smem_hex"] = ("00" if c["smem_hex"][:2] != "00" else "11") + c["smem_hex"][2:]
    assert "shared byte" in gc.check_tma_to_wgmma(c)
    assert "accumulator" in gc.check_tma_to_wgmma(_flip_d(case))
    mism = next(c for c in cases if c["params"]["category"] == "mismatch_swizzle")
    c = copy.deepcopy(mism)
    c["params"]["category"] = "mismatch_major"
    assert "expected wrong major-ness" in gc.check_tma_to_wgmma(c)


def test_every_mismatch_category_is_classified():
    """T4: each mismatched category is named by its cause (the runner asserts
    it per case; here: every category occurs and passes)."""
    cases = _cases("tma_to_wgmma")
    cats = {c["params"]["category"] for c in cases if not c["params"]["matched"]}
    assert cats == set(gc._CATEGORY_CAUSE)
    for c in cases:
        assert gc.check_tma_to_wgmma(c) is None, c["id"]


def test_bank_counts_are_compared():
    case = _cases("bank_conflicts")[0]
    c = copy.deepcopy(case)
    c["wavefronts"] += 1
    assert "wavefronts" in gc.check_bank_conflicts(c)
    c = copy.deepcopy(case)
    c["bank_conflicts"] += 1
    assert "bank conflicts" in gc.check_bank_conflicts(c)
