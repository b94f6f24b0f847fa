"""mbarrier_semantics: the golden runner over the recorded cases, and the rules
(tests/data/README.md R6-R12) with expected values worked out by hand."""
import copy
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ptxasync as p
from ptxasync import golden

import testpaths  # noqa: E402
DATA = Path(testpaths.DATA) / "mbarrier_semantics.jsonl.gz"


def _bar(count):
    return p.Machine(smem_bytes=4096).mbarrier(8).init(count)


def _cases():
    with gzip.open(DATA, "rt") as f:
        return {c["id"]: c for c in map(json.loads, f) if "family" in c}


def test_runner_passes_every_case():
    """`python -m ptxasync.golden --json`: all 30 public cases pass, probes included."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(p.__file__))))
    proc = subprocess.run([sys.executable, "-m", "ptxasync.golden", "--json", str(DATA)],
                          capture_output=True, text=True, env=env, timeout=120,
                          cwd=testpaths.TESTS)  # not the source root
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = json.loads(proc.stdout)["mbarrier_semantics"]
    assert r == {"passed": 30, "failed": 0, "unsupported": 0}


def test_runner_compares_state_bits_32_63_only():
    """R9: bits 0-31 of a state do not follow the barrier and try_wait cycles are timing:
    changing them keeps the case passing; one bit of 32-63 makes it fail."""
    case = _cases()["mbarrier_semantics.pub.0000"]
    edited = copy.deepcopy(case)
    for s in edited["steps"]:
        if "state_hex" in s:
            s["state_hex"] = s["state_hex"][:8] + "deadbeef"
        if "cycles" in s:
            s["cycles"] += 1000
    assert golden.check_case(edited) == ("passed", None)
    edited["steps"][3]["state_hex"] = "7fff010000000000"    # bit 40 flipped
    assert golden.check_case(edited)[0] == "failed"


def test_runner_probes():
    """R12: the over-arrival probe faulted (cudaErrorLaunchFailure): the model's Hazard
    matches it, completing would not; the ptxas-rejected form passes when the model refuses it."""
    cases = _cases()
    fault, rejected = cases["mbarrier_semantics.pub.0027"], cases["mbarrier_semantics.pub.0029"]
    assert golden.check_case(fault) == ("passed", None)
    assert golden.check_case(dict(fault, error=None))[0] == "failed"
    assert golden.check_case(rejected) == ("passed", None)
    assert golden.check_case(dict(rejected, error=None))[0] == "failed"


def test_fresh_barrier_parity():
    """R7: a fresh barrier answers parity 0 false (phase 0 open), parity 1 true."""
    b = _bar(3)
    assert (b.test_wait(0), b.test_wait(1)) == (False, True)
    assert (b.try_wait(0), b.try_wait(1)) == (False, True)


def test_state_word_bits():
    """R9: bit 63 = phase parity, bits 43-62 = (2^20 - P) mod 2^20, bits 32-42 =
    ((-T) mod 2^21) >> 11, P and T before the arrive (before an .expect_tx's own tx)."""
    b = _bar(3)
    b.expect_tx(5000)
    # P = 3: 2^20 - 3 = 0xFFFFD; T = 5000: (2^21 - 5000) >> 11 = 2092152 >> 11 = 1021 = 0x3FD
    assert b.arrive() >> 32 == 0x7FFFEBFD
    # P = 2, T = 5000 still (its own tx 100 is added after the state is taken)
    assert b.arrive_expect_tx(100) >> 32 == 0x7FFFF3FD
    # count 1, expect_tx 57210 then arrive: the hardware returned 7ffffbe4... (pub.0006)
    c = _bar(1)
    c.expect_tx(57210)
    assert c.arrive() >> 32 == 0x7FFFFBE4
    # count 1: P = 1 -> 0x7FFFF800; after one completed phase bit 63 is set
    d = _bar(1)
    assert d.arrive() >> 32 == 0x7FFFF800
    assert d.arrive() >> 32 == 0xFFFFF800
    # bits 0-31 are not the barrier's (R9): the model leaves them 0
    assert d.arrive() & 0xFFFFFFFF == 0


def test_pending_count():
    """R8: pending_count(state) = P just before the arrive that returned it (pub.0014)."""
    b = _bar(5)
    s1 = b.arrive_no_complete(1)
    s2 = b.arrive_no_complete(2)
    s3 = b.arrive()
    assert [b.pending_count(s) for s in (s1, s2, s3)] == [5, 4, 2]
    assert p.Mbarrier.pending_count(0x7FFFF80000000000) == 1


def test_wait_with_a_state():
    """R6/R7: a state's phase completed? By parity only: two phases back reads as open,
    three phases back as complete."""
    b = _bar(1)
    b.expect_tx(64)
    s0 = b.arrive()                          # phase 0, held open by the tx
    assert (b.test_wait_state(s0), b.try_wait_state(s0)) == (False, False)
    b.complete_tx(64)                        # phase 0 completes
    assert (b.test_wait_state(s0), b.try_wait_state(s0)) == (True, True)
    b.arrive()                               # phase 1 completes
    assert b.test_wait_state(s0) is False    # two phases back
    b.arrive()
    assert b.test_wait_state(s0) is True     # three phases back


def test_arrive_drop_lowers_expected_count():
    """R11: arrive_drop is an arrival and lowers E of the following phases (count 3: the
    drop plus 2 arrivals complete phase 0, then 2 arrivals complete phase 1)."""
    b = _bar(3)
    b.arrive_drop()
    assert (b.state["expected"], b.state["pending"]) == (2, 2)
    b.arrive(); b.arrive()
    assert (b.phase, b.state["pending"]) == (1, 2)
    b.arrive(); b.arrive()
    assert b.phase == 2
    c = _bar(6)
    c.arrive_drop_no_complete(3)
    c.arrive_drop_expect_tx(100)
    assert (c.state["expected"], c.state["pending"], c.state["tx"]) == (2, 2, 100)


def test_over_arrival_and_no_complete_hazards():
    """R12: after arrive_drop took E to 0 the phase completed; one more arrive faulted
    (model: Hazard naming R12). PTX: a .noComplete arrive must not complete the phase."""
    b = _bar(2)
    b.arrive_drop(); b.arrive_drop()
    assert (b.phase, b.state["expected"]) == (1, 0)
    with pytest.raises(p.Hazard, match="R12"):
        b.arrive()
    c = _bar(2)
    with pytest.raises(p.Hazard, match="noComplete"):
        c.arrive_no_complete(2)
    assert c.state["pending"] == 2


def test_arrive_expect_tx_has_no_count_operand():
    """R12: ptxas rejects mbarrier.arrive.expect_tx with a count ("Arguments mismatch");
    the model does not offer that operand."""
    with pytest.raises(TypeError):
        _bar(2).arrive_expect_tx(64, 2)
