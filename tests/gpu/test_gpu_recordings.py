"""Cases recorded on an H100 through ptxasync.cuda (tools/device/gpu_proof.py), replayed
on the model by the golden runner: no GPU is needed. The GPU's bytes are the
expectation; the model must reproduce every one."""
import collections
import gzip
import json
import os

import pytest

from testpaths import DATA

RANDOM = {"im2col_load", "bulk_copy", "bulk_reduce", "cp_async", "st_async", "cluster_bulk_copy",
          "cluster_bulk_reduce", "cluster_tile_load"}
CLUSTER = {"st_async", "cluster_bulk_copy", "cluster_bulk_reduce", "cluster_tile_load"}


def _cases(name):
    with gzip.open(os.path.join(DATA, name), "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.mark.parametrize("name,families,least", [("gpu_h100_random.jsonl.gz", RANDOM, 300),
                                                 ("gpu_h100_cluster.jsonl.gz", CLUSTER, 27)])
def test_recorded_cases_replay_on_the_model(name, families, least):
    from ptxasync.golden import check_file
    results, failures = check_file(os.path.join(DATA, name))
    assert not failures, failures[:3]
    assert set(results) == families
    for fam, r in results.items():
        assert r["passed"] >= least and r["failed"] == 0 and r["unsupported"] == 0, (fam, r)


def test_random_cases_are_new_and_recorded_on_an_h100():
    cases = _cases("gpu_h100_random.jsonl.gz")
    ids = [c["id"] for c in cases]
    assert len(set(ids)) == len(ids) and all(".rand." in i for i in ids)
    assert collections.Counter(c["set"] for c in cases) == {"random": len(cases)}
    for c in cases:
        assert c["recorded_on"]["gpu"].startswith("NVIDIA H100") and c["recorded_on"]["compute_capability"] == "9.0"


def test_cluster_cases_hold_every_cta_and_vary():
    """The random cluster cases cover clusters of 2 and 4, every issuing rank, and
    CTAs that received bytes next to CTAs that did not."""
    cases = [c for c in _cases("gpu_h100_random.jsonl.gz") if c["family"] in CLUSTER]
    sizes = collections.Counter(c["params"]["cluster_size"] for c in cases)
    assert set(sizes) == {2, 4}
    assert {c["params"]["issuer_rank"] for c in cases} == {0, 1, 2, 3}
    status = collections.Counter(k["mbar_status"] for c in cases for k in c["ctas"])
    assert status["completed"] > 300 and status["completed_after_probe"] > 300
    for c in cases:
        assert [k["cluster_ctarank"] for k in c["ctas"]] == list(range(c["params"]["cluster_size"]))
        for k in c["ctas"]:
            # a CTA either received all its expected bytes or none (the probe completed it)
            assert (k["mbar_status"], k["tx_bytes_observed"]) in (("completed", k["expect_tx"]),
                                                                   ("completed_after_probe", 0))
    multicast = [c for c in cases if c["family"] == "cluster_tile_load" or "multicast" in c["params"]["instruction"]]
    masks = {c["params"]["cta_mask"] for c in multicast}
    assert len(masks) >= 15
