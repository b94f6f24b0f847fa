"""Golden set: recorded Hopper hardware results replayed through the model.

Each case in tests/data/*.jsonl.gz was read back from a real H200 (see
docs/tile-mode.md); ptxasync.golden replays them and compares
every recorded byte. The expected values are the hardware's, never the model's.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ptxasync

from ptxasync import golden

import testpaths  # noqa: E402
DATA = Path(testpaths.DATA)
import testpaths  # noqa: E402
ROOT = Path(testpaths.REPO)

FAMILIES = ["tile_load", "tile_store", "encode_errors", "im2col_load"]


@pytest.mark.parametrize("family", FAMILIES)
def test_golden_family(family):
    """Every recorded case of the family reproduces byte for byte
    (golden README observations 1-10 and 15-17; docs/tile-mode.md sections 2-9,
    docs/im2col-mode.md). Nothing is left unsupported."""
    path = DATA / f"{family}.jsonl.gz"
    results, failures = golden.check_file(path)
    assert family in results, f"{path} holds no {family} cases"
    r = results[family]
    assert r["passed"] > 0, r
    shown = "\n".join(f"{cid}: {msg}" for cid, msg in failures[:20])
    assert r["failed"] == 0, f"{r['failed']} {family} case(s) failed:\n{shown}"
    assert r["unsupported"] == 0, r
    assert failures == []


def test_im2col_device_probe():
    """im2col loads with a strided N dimension, .im2col_no_offs stores and
    reductions (interleaved too) and their faults, recorded on an H200 by
    tools/device/im2col_probe.cu (docs/im2col-mode.md): all reproduce."""
    results, failures = golden.check_file(DATA / "im2col_device.jsonl.gz")
    assert set(results) == {"im2col_load", "tile_store", "tensor_reduce"}
    for fam, r in results.items():
        assert r["failed"] == 0 and r["unsupported"] == 0 and r["passed"] > 0, (fam, r, failures[:5])


def test_golden_cli_json():
    """`python -m ptxasync.golden --json FILE` prints one JSON object
    {family: {passed, failed, unsupported}} and exits 0 when nothing failed."""
    env = dict(os.environ)
    # the package this test process imported (installed, or built in place)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(ptxasync.__file__)))
    proc = subprocess.run(
        [sys.executable, "-m", "ptxasync.golden", "--json", str(DATA / "encode_errors.jsonl.gz")],
        capture_output=True, text=True, env=env, timeout=120, cwd=str(DATA))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stdout
    obj = json.loads(lines[0])
    assert isinstance(obj, dict) and set(obj) == {"encode_errors"}
    counts = obj["encode_errors"]
    assert set(counts) == {"passed", "failed", "unsupported"}
    assert all(isinstance(v, int) and v >= 0 for v in counts.values())
    assert counts["failed"] == 0 and counts["passed"] > 0


def test_golden_cli_exit_status_on_failure(tmp_path):
    """The runner's exit status is non-zero when a case fails (golden.py docstring):
    a recorded encode case whose driver result is flipped must fail."""
    import gzip
    with gzip.open(DATA / "encode_errors.jsonl.gz", "rt", encoding="utf-8") as f:
        cases = [json.loads(ln) for ln in f if ln.strip()]
    case = next(c for c in cases if c.get("family") == "encode_errors" and c["encode_result"] != 0)
    case = dict(case, encode_result=0, encode_result_name="CUDA_SUCCESS")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(case) + "\n")
    env = dict(os.environ)
    # the package this test process imported (installed, or built in place)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(ptxasync.__file__)))
    proc = subprocess.run([sys.executable, "-m", "ptxasync.golden", "--json", str(bad)],
                          capture_output=True, text=True, env=env, timeout=60, cwd=str(DATA))
    assert proc.returncode != 0
    assert json.loads(proc.stdout.strip())["encode_errors"]["failed"] == 1
