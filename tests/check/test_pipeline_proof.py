"""Proof of the checker on the 3-stage producer/consumer TMA pipeline
(ptxasync.pipeline): exact under every policy; with the consumer's wait on the
full barrier removed, and separately with the producer's wait on the empty
barrier removed, the adversarial policy exposes the bug in at least 95 of 100
seeds: a Hazard, a Deadlock, or poison in a tile read through a NumPy view.
Never the right tiles with nothing reported, never a wait that is False forever
(the scheduler's step() raises Deadlock instead)."""
import numpy as np
import pytest

import ptxasync as p
from ptxasync import pipeline
from ptxasync.check import poison_words

TILES = 12


def _tile(a, i):
    return a[i * pipeline.TILE_ROWS:(i + 1) * pipeline.TILE_ROWS]


@pytest.mark.parametrize("policy", ["immediate", "in_order", "reverse", "random", "adversarial"])
def test_pipeline_is_exact_under_every_policy(policy):
    for seed in range(10):
        m, a, out = pipeline.run(TILES, policy=policy, seed=seed)
        assert len(out) == TILES and m.pending == 0
        for i, t in enumerate(out):
            np.testing.assert_array_equal(t, _tile(a, i))


def _outcome(seed, missing, tiles=TILES, **kw):
    try:
        m, a, out = pipeline.run(tiles, policy="adversarial", seed=seed, missing=missing, **kw)
    except p.Deadlock:
        return "deadlock"
    except p.Hazard as e:
        return e.rule
    if any(poison_words(t) for t in out):
        return "poison"
    right = len(out) == tiles and all((t == _tile(a, i)).all() for i, t in enumerate(out))
    return "right (unreported)" if right else "wrong (unreported)"


@pytest.mark.parametrize("missing", ["consumer", "producer"])
def test_adversarial_policy_exposes_a_missing_wait(missing):
    outcomes = [_outcome(seed, missing) for seed in range(100)]
    exposed = [o for o in outcomes if "unreported" not in o]
    assert len(exposed) >= 95, sorted(set(outcomes))
    assert "right (unreported)" not in outcomes
    # each exposure names its rule (e.g. phase-unobserved, over-arrival)
    assert set(exposed) <= set(p.check.RULES) | {"poison"}


def test_poison_reaches_a_tile_read_too_early():
    """One pass over the stages (no barrier is reused, so no protocol rule fires) and
    hazards collected instead of raised: without the consumer's wait, each seed either
    reads a tile that is still pending (poison through the NumPy view, never the data by
    luck) or hangs (reported as a deadlock)."""
    got = {_outcome(seed, "consumer", tiles=pipeline.STAGES, hazards="report") for seed in range(40)}
    assert got <= {"poison", "deadlock"} and "poison" in got


POLICIES = ["immediate", "in_order", "reverse", "random", "adversarial"]


@pytest.mark.parametrize("policy", POLICIES)
def test_checked_reads_of_a_correct_pipeline_report_nothing(policy):
    for seed in range(10):
        m, a, out = pipeline.run(TILES, policy=policy, seed=seed, checked=True)
        assert m.races == [] and len(out) == TILES
        for i, t in enumerate(out):
            np.testing.assert_array_equal(t, _tile(a, i))


@pytest.mark.parametrize("missing", ["consumer", "producer", "release"])
@pytest.mark.parametrize("policy", POLICIES)
def test_checked_reads_report_every_missing_wait_in_every_schedule(policy, missing):
    """With thread ids and checked reads (CTA.read), the missing wait on full, the
    missing wait on empty and the early release are reported in 30 of 30 seeds of
    every policy; the early release breaks no mbarrier rule: the race says it."""
    rules = []
    for seed in range(30):
        with pytest.raises(p.Hazard) as e:
            pipeline.run(TILES, policy=policy, seed=seed, missing=missing, checked=True)
        rules.append(e.value.rule)
    assert set(rules) <= set(p.check.RULES)
    if missing == "release":
        assert set(rules) <= {"data-race", "destination-read"}, rules
        if policy == "immediate":
            assert set(rules) == {"data-race"}
