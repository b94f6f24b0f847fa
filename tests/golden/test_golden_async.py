"""Golden families of the asynchronous-copy engines (tests/data/README.md):
cp.async (observation 13), cp.async.mbarrier.arrive (M1-M5), non-tensor bulk
copies (observation 13, C4-C5, C9-C16) and st.async (C7, C14-C17). Every public
case reproduces; nothing is left unsupported."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ptxasync import golden

import testpaths  # noqa: E402
DATA = Path(testpaths.DATA)
FAMILIES = ["cp_async", "cp_async_mbarrier", "bulk_copy", "cluster_bulk_copy", "st_async"]


@pytest.mark.parametrize("family", FAMILIES)
def test_golden_async_family(family):
    results, failures = golden.check_file(DATA / f"{family}.jsonl.gz")
    r = results[family]
    shown = "\n".join(f"{cid}: {msg}" for cid, msg in failures[:20])
    assert r["failed"] == 0 and failures == [], shown
    assert r["unsupported"] == 0 and r["passed"] > 0, r


def test_golden_cli_reports_the_async_families(tmp_path):
    """python -m ptxasync.golden counts the new families like the others."""
    out = subprocess.run([sys.executable, "-m", "ptxasync.golden", "--json"]
                         + [str(DATA / f"{f}.jsonl.gz") for f in FAMILIES],
                         capture_output=True, text=True, cwd=tmp_path, check=True)
    got = json.loads(out.stdout)
    assert set(got) == set(FAMILIES)
    assert all(v["failed"] == 0 and v["unsupported"] == 0 for v in got.values()), got


def test_a_changed_byte_fails(tmp_path):
    """The checker compares bytes: a case whose recorded destination is altered fails."""
    import gzip
    with gzip.open(DATA / "cp_async.jsonl.gz", "rt", encoding="utf-8") as f:
        case = json.loads(next(line for line in f if line.strip()))
    after = bytearray.fromhex(case["smem_after_hex"])
    after[case["params"]["dst_offset"]] ^= 0xFF
    case["smem_after_hex"] = after.hex()
    status, msg = golden.check_case(case)
    assert status == "failed" and "shared memory byte" in msg
