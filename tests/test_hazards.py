"""The completion checker: one test per hazard rule of docs/hazards.md (the rule's
source is cited in each), explanations of failed waits, deadlock reports, report
mode and the trace. Expected messages and counts are written out by hand."""
import numpy as np
import pytest

import ptxasync as p
from ptxasync.check import RULES

BAR = 0x40


def _machine(**kw):
    return p.Machine(smem_bytes=kw.pop("smem_bytes", 16 * 1024), **kw)


def _load(m, bar, dst=1024, row=0, thread=0):
    """A 32-byte tile load (16 x 2 u8) from a filled global buffer into dst."""
    buf = m.alloc(256)
    buf.bytes[:] = (np.arange(256) % 251) + 1
    tm = p.TensorMap.tiled("u8", buf.address, [64, 4], [64], [16, 2])
    m.cp_async_bulk_tensor_load(tm, [0, row], dst, bar, thread=thread)
    return buf


def _rule(excinfo):
    return excinfo.value.rule


# ---------------------------------------------------------------- mbarrier rules

def test_tx_range():
    """PTX ISA 9.7.13.15.2: tx-count lies in [-(2^20-1), 2^20-1]."""
    b = _machine().mbarrier(BAR).init(1)
    with pytest.raises(p.Hazard) as e:
        b.expect_tx(2**20)
    assert _rule(e) == "tx-range" and "1048576" in str(e.value)
    b.complete_tx(2**20 - 1)                       # the edge is in range
    with pytest.raises(p.Hazard) as e:
        b.complete_tx(1)
    assert _rule(e) == "tx-range"


def test_over_arrival():
    """PTX ISA 9.7.13.15.2: the pending count lies in [0, 2^20-1]; golden R12: arriving past 0 faults."""
    b = _machine().mbarrier(BAR).init(2)
    with pytest.raises(p.Hazard) as e:
        b.arrive(3)
    assert _rule(e) == "over-arrival" and b.state["pending"] == 2


def test_no_complete_completes():
    """PTX ISA mbarrier.arrive: a .noComplete arrive must not complete the phase."""
    b = _machine().mbarrier(BAR).init(2)
    with pytest.raises(p.Hazard) as e:
        b.arrive_no_complete(2)
    assert _rule(e) == "nocomplete-completes"


def test_uninitialised_and_init_valid():
    """PTX ISA 9.7.13.15: any mbarrier operation but init on an invalid object, and init on
    a valid one, are undefined."""
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    with pytest.raises(p.Hazard) as e:
        b.init(1)
    assert _rule(e) == "mbarrier-init-valid"
    b.inval()
    with pytest.raises(p.Hazard) as e:
        b.arrive()
    assert _rule(e) == "mbarrier-uninitialised" and "0x40 in CTA 0" in str(e.value)


def test_tx_overdelivered_at_that_moment():
    """mirage #705 / PTX ISA 9.7.13.15.6: with all arrivals in, bytes credited beyond those
    expected leave a phase that completes early or never: reported when it happens."""
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    assert not b.try_wait(0, thread=1)             # a consumer waits on it
    b.arrive_expect_tx(64)
    b.complete_tx(32)                              # 32 of 64 bytes: fine
    with pytest.raises(p.Hazard) as e:
        b.complete_tx(64)                          # 96 of 64
    assert _rule(e) == "tx-overdelivered"
    assert ("more bytes delivered to phase 0 of the mbarrier at 0x40 in CTA 0 than were expected: "
            "96 tx bytes credited, 64 expected, all arrivals in: the phase can complete early or never"
            in str(e.value))


def test_tx_negative_for_a_while_is_fine():
    """PTX ISA 9.7.13.15.2 (tx-count is signed): complete_tx before the arrive.expect_tx that
    expects it is allowed and is no hazard."""
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    assert not b.try_wait(0, thread=1)
    b.complete_tx(64)
    assert b.state["tx"] == -64
    b.arrive_expect_tx(64)
    assert b.try_wait(0, thread=1)


def test_phase_unobserved():
    """PTX ISA 9.7.13.15.4: for each phase, a test_wait / try_wait returning True must be
    performed before an arrive-on in the next phase."""
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    assert not b.test_wait(0, thread=1)
    b.arrive()                                     # phase 0 completes; nobody looks
    with pytest.raises(p.Hazard) as e:
        b.arrive()
    assert _rule(e) == "phase-unobserved"
    assert "no test_wait / try_wait returned True for phase 0" in str(e.value)
    # the same with the wait in between
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    assert not b.test_wait(0, thread=1)
    b.arrive()
    assert b.test_wait(0, thread=1)
    b.arrive()
    assert b.phase == 2


def test_missed_phase():
    """PTX ISA mbarrier.test_wait/try_wait: a wait is valid only for the current or the
    immediately preceding phase; a waiter two phases behind aliases its parity."""
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    assert not b.try_wait(0, thread=1)             # thread 1 waits at phase 0
    b.arrive()
    assert b.try_wait(0, thread=2)                 # thread 2 sees phase 0
    b.arrive()                                     # phase 1 completes too
    with pytest.raises(p.Hazard) as e:
        b.try_wait(0, thread=1)
    assert _rule(e) == "missed-phase" and "phases 0 and 1 completed since its last wait" in str(e.value)


def test_reinit_pending():
    """PTX ISA 9.7.13.15.3: an mbarrier must be invalidated before its memory is repurposed;
    operations that will signal it are pending."""
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32)
    _load(m, b)
    with pytest.raises(p.Hazard) as e:
        b.inval()
    assert _rule(e) == "reinit-pending" and "1 pending operation(s)" in str(e.value)


# ---------------------------------------------------------------- explanations, deadlock

def test_why_a_wait_is_false():
    """A failed wait explains itself: phase, arrivals and tx bytes missing, what is pending."""
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    b.expect_tx(1024)
    assert not b.test_wait(0)
    w = b.why(0)
    assert not w and (w.phase, w.pending, w.tx, w.signalers, w.can_complete) == (0, 1, 1024, 0, False)
    assert str(w) == ("nothing pending can complete phase 0 of the mbarrier at 0x40 in CTA 0: "
                      "1 arrival and 1024 tx bytes missing: the kernel would hang")
    b.arrive()
    b.complete_tx(992)
    _load(m, b)                                    # 32 bytes pending
    w = b.why(0)
    assert (w.pending, w.tx, w.signalers, w.signal_tx, w.can_complete) == (0, 32, 1, 32, True)
    assert "1 pending operation credits it 32 tx bytes" in str(w)
    assert b.try_wait(0) and b.why(0).complete


def test_run_reports_a_deadlock():
    """A thread blocked in a wait that nothing pending can release: run() says so."""
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    b.expect_tx(1024)
    assert not b.try_wait(0, thread=7)
    with pytest.raises(p.Deadlock) as e:
        m.run()
    assert _rule(e) == "deadlock"
    assert str(e.value) == ("[deadlock] thread 7 of CTA 0 is blocked in a wait on parity 0: nothing "
                            "pending can complete phase 0 of the mbarrier at 0x40 in CTA 0: 1 arrival "
                            "and 1024 tx bytes missing: the kernel would hang")
    with pytest.raises(p.Deadlock):
        m.step()                                   # nothing left to step


def test_no_deadlock_when_the_waiter_moves_on():
    """A False try_wait is a poll once the thread does something else."""
    m = _machine()
    b = m.mbarrier(BAR).init(2)
    assert not b.try_wait(0, thread=7)
    b.arrive(thread=7)
    m.run()
    assert m.step() is False


def test_wait_raises_deadlock_with_the_reason():
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    with pytest.raises(p.Deadlock, match="1 arrival missing: the kernel would hang"):
        b.wait(0)


# ---------------------------------------------------------------- report mode, trace

def test_report_mode_collects_and_goes_on():
    """hazards='report': each hazard is recorded with its rule and time; the operation
    proceeds as the hardware would."""
    m = _machine(hazards="report", trace=True)
    b = m.mbarrier(BAR).init(1)
    assert not b.test_wait(0, thread=1)
    b.arrive()
    b.arrive()                                     # phase-unobserved, recorded
    assert b.phase == 2
    (h,) = m.hazards
    assert h.rule == "phase-unobserved" and h.message.startswith("[phase-unobserved] thread 0")
    assert h.time == [e.time for e in m.trace if e.kind == "hazard"][0] < m.trace[-1].time
    with pytest.raises(p.Hazard):                  # the hardware faults on over-arrival
        b.arrive(2)
    assert [h.rule for h in m.hazards] == ["phase-unobserved", "phase-unobserved", "over-arrival"]
    m.clear_hazards()
    assert m.hazards == []
    with pytest.raises(ValueError):
        m.hazard_mode = "ignore"


def test_trace_is_off_by_default_and_ordered():
    m = _machine()
    m.mbarrier(BAR).init(1).arrive()
    assert m.trace == []
    m = _machine(trace=True)
    b = m.mbarrier(BAR).init(1)
    assert not b.try_wait(0, thread=3)
    b.arrive_expect_tx(16, thread=5)
    b.complete_tx(16, thread=5)
    assert b.try_wait(0, thread=3)
    got = [(e.kind, e.thread, e.a, e.b) for e in m.trace if e.kind != "hazard"]
    assert got == [("init", 0, 1, 0), ("wait", 3, 0, 2), ("arrive", 5, 1, 16),
                   ("complete_tx", 5, 16, 0), ("phase", None, 1, 0), ("wait", 3, 0, 3)]
    times = [e.time for e in m.trace]
    assert times == sorted(times) and len(set(times)) == len(times)


def test_every_rule_has_an_id():
    assert len(set(RULES)) == len(RULES) >= 16
