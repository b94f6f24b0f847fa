"""The completion checker: one test per hazard rule of docs/hazards.md (the rule's
source is cited in each), explanations of failed waits, deadlock reports, report
mode and the trace. Expected messages and counts are written out by hand."""
import testpaths
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


def test_test_wait_only_polls():
    """mbarrier.test_wait is non-blocking: a False leaves no thread blocked."""
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    assert not b.test_wait(0, thread=7)
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


# ---------------------------------------------------------------- memory rules (queue hooks)

def _bulk_store(m, g, src=0, size=16):
    m.cp_async_bulk(g.address, src, size, dst_space="global", src_space="shared::cta")


def test_source_changed():
    """PTX ISA cp.async.bulk (async proxy) / wait_group.read: the source must not be written
    until the operation has read it; compared at the read with what it was at issue."""
    m = _machine(checks=True)
    g = m.alloc(64)
    m.smem[:16] = 7
    _bulk_store(m, g)
    m.cp_async_bulk_commit_group()
    m.smem[3] = 8                                  # reused before the read
    with pytest.raises(p.Hazard) as e:
        m.cp_async_bulk_wait_group(0)
    assert _rule(e) == "source-changed" and "shared bytes [0x0, 0x10) of CTA 0" in str(e.value)
    m = _machine(checks=True)                      # right: wait_group.read, then reuse
    g = m.alloc(64)
    m.smem[:16] = 7
    _bulk_store(m, g)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0, read=True)
    m.smem[3] = 8
    m.cp_async_bulk_wait_group(0)
    assert (g.bytes[:16] == 7).all()


def test_destination_changed():
    """A pending destination written by someone else before the operation completed."""
    m = _machine(checks=True)
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32)
    _load(m, b)
    m.smem[1030] = 1                               # a thread writes into the pending tile
    with pytest.raises(p.Hazard) as e:
        b.try_wait(0)
    assert _rule(e) == "destination-changed"


def test_destination_overlap():
    """PTX ISA 8.9.1.1: asynchronous operations are not ordered with each other: two pending
    writes of the same bytes race. Two reductions into the same bytes do not."""
    m = _machine(checks=True)
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(64)
    _load(m, b, row=0)
    with pytest.raises(p.Hazard) as e:
        _load(m, b, row=1, dst=1024 + 16)
    assert _rule(e) == "destination-overlap" and "#0" in str(e.value)
    m = _machine(checks=True)
    g = m.alloc(64)
    m.cp_reduce_async_bulk("add", "u32", g.address, 0, 16)
    m.cp_reduce_async_bulk("add", "u32", g.address, 16, 16)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)



def test_memory_checks_default_and_what_it_misses():
    """The default is the fast machine: two pending loads into overlapping shared bytes
    go unreported (README says so); checks=True reports them, and the property says
    which is in force."""
    m = p.Machine(smem_bytes=64 * 1024)
    assert m.memory_checks is False
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(64)
    _load(m, b, row=0)
    _load(m, b, row=1, dst=1024 + 16)           # missed by default
    assert m.pending == 2
    m = p.Machine(smem_bytes=64 * 1024, checks=True)
    assert m.memory_checks is True
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(64)
    _load(m, b, row=0)
    with pytest.raises(p.Hazard) as e:
        _load(m, b, row=1, dst=1024 + 16)
    assert _rule(e) == "destination-overlap"


def test_destination_read():
    """A destination read before the operation completed: through the model's own API
    (CTA.read), or as the source of another operation."""
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32)
    _load(m, b)
    with pytest.raises(p.Hazard) as e:
        m.cta(0).read(np.uint8, 32, 1024 + 8)
    assert _rule(e) == "destination-read" and "#0" in str(e.value)
    assert m.cta(0).read(np.uint8, 8, 1024 - 8).shape == (8,)   # next to it: fine
    m.memory_checks = True
    g = m.alloc(64)
    with pytest.raises(p.Hazard) as e:
        _bulk_store(m, g, src=1024)                # stores the tile that has not arrived
    assert _rule(e) == "destination-read"
    assert b.try_wait(0)
    np.testing.assert_array_equal(m.cta(0).read(np.uint8, 4, 1024), [1, 2, 3, 4])


def test_wait_uncommitted():
    """PTX ISA cp.async.bulk.wait_group: it waits for committed bulk async-groups; operations
    issued after the last commit_group are in none."""
    m = _machine()
    g = m.alloc(64)
    _bulk_store(m, g)
    with pytest.raises(p.Hazard) as e:
        m.cp_async_bulk_wait_group(0)
    assert _rule(e) == "wait-uncommitted" and "1 operation(s)" in str(e.value)


def test_never_waited():
    """Operations still pending when the kernel exits (finish): never waited for."""
    m = _machine(hazards="report")
    g = m.alloc(64)
    _bulk_store(m, g)                              # never committed
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32)
    _load(m, b)                                    # nobody waits on the barrier
    m.finish()
    assert [h.rule for h in m.hazards] == ["never-waited", "never-waited"]
    assert "issued after the thread's last commit_group" in m.hazards[0].message
    assert "its mbarrier phase was never waited on" in m.hazards[1].message
    assert m.pending == 0


# ---------------------------------------------------------------- the adversarial policy

def test_adversarial_poisons_pending_destinations():
    """At issue a pending destination holds the poison word; the completion writes the data.
    A reduction's destination keeps its bytes (they are operands)."""
    m = _machine(policy="adversarial", seed=5)
    assert m.memory_checks
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32)
    _load(m, b)
    tile = m.cta(0).view(np.uint32, 8, 1024)       # a NumPy view: cannot be watched
    assert (tile == p.check.POISON_WORD).all() and m.cta(0).poisoned(1024, 32) == 8
    assert bytes(m.smem[1024:1028]) == p.check.POISON == b"\xde\xad\xbe\xef"
    assert b.try_wait(0) and m.cta(0).poisoned(1024, 32) == 0
    g = m.alloc(64)
    g.view(np.uint32, 4)[:] = 5
    m.smem.view(np.uint32)[:4] = 1
    m.cp_reduce_async_bulk("add", "u32", g.address, 0, 16)
    assert (g.view(np.uint32, 4) == 5).all()
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    assert (g.view(np.uint32, 4) == 6).all()


def test_adversarial_is_seeded():
    def order(seed):
        m = _machine(policy="adversarial", seed=seed, trace=True)
        b = m.mbarrier(BAR).init(1)
        b.arrive_expect_tx(4 * 32)
        for r in range(4):
            _load(m, b, dst=1024 + 128 * r, row=r % 3)
        assert b.try_wait(0)
        return [e.op for e in m.trace if e.kind == "write"]
    assert order(1) == order(1)
    assert len({tuple(order(s)) for s in range(8)}) > 1


def test_pending_ops_lists_what_tracks_them():
    m = _machine()
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32)
    _load(m, b, thread=3)
    g = m.alloc(64)
    _bulk_store(m, g)
    m.cp_async_bulk_commit_group()
    a, s = m.pending_ops()
    assert (a.op, a.cta, a.thread, a.source) == (0, 0, 3, None)
    assert a.destination == {"space": "shared", "cta": 0, "offset": 1024, "nbytes": 32}
    assert a.tracked_by == {"kind": "mbarrier", "cta": 0, "offset": BAR, "tx_bytes": 32}
    assert s.source == {"space": "shared", "cta": 0, "offset": 0, "nbytes": 16}
    assert s.destination == {"space": "global", "address": g.address, "nbytes": 16}
    assert s.tracked_by == {"kind": "bulk async-group", "group": 0}
    assert "tracked by mbarrier 0x40@CTA0 (32 tx bytes)" in repr(a)


def test_trace_of_an_operation():
    """issue, source read / destination write, complete_tx and the phase flip, each with
    the operation's issue number and issuer."""
    m = _machine(trace=True)
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32, thread=2)
    _load(m, b, thread=2)
    assert b.try_wait(0, thread=9)
    got = [(e.kind, e.thread, e.op) for e in m.trace]
    assert got == [("init", 0, None), ("arrive", 2, None), ("issue", 2, 0), ("write", 2, 0),
                   ("complete_tx", 2, 0), ("phase", None, None), ("wait", 9, None)]
    w = m.trace[3]
    assert (w.rank, w.addr, w.b) == (0, 1024, 32)


def test_docs_table_has_one_row_per_rule_and_its_tests_exist():
    """docs/hazards.md: every rule has a row; every test the row names is in this file."""
    import os
    import re
    doc = open(os.path.join(testpaths.REPO, "docs", "hazards.md")).read()
    rows = [ln for ln in doc.splitlines() if ln.startswith("| `")]
    ids = [re.match(r"\| `([a-z-]+)`", r).group(1) for r in rows]
    assert sorted(ids) == sorted(RULES)
    import test_memory_model
    import test_same_value_stores
    here = {**globals(), **vars(test_memory_model), **vars(test_same_value_stores)}   # the memory model's rules
    for r in rows:
        tests = re.findall(r"`(test_[a-z_]+)`", r.rsplit("|", 2)[-2])
        assert tests and all(callable(here.get(t)) for t in tests), r


def test_discard_read():
    """discard.global.L2 leaves its line an unstable indeterminate value until written: a thread's
    read of it first is discard-read, naming the discard's PTX line (tests/ptx/test_ptx_discard.py
    has the rest)."""
    from ptxasync import ptx
    text = (".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            "    .reg .b32 %r<4>;\n    .reg .b64 %rd<4>;\n    ld.param.u64 %rd1, [p];\n"
            "    discard.global.L2 [%rd1], 128;\n    ld.global.u32 %r1, [%rd1+124];\n    ret;\n}\n")
    m = p.Machine(checks=True, hazards="report")
    ptx.Kernel(text).launch(m, block=(1, 1, 1), params={"p": m.register(np.zeros(32, np.uint32))})
    assert [h.rule for h in m.hazards] == ["discard-read"]
    assert "discard.global.L2 at PTX line 9" in m.hazards[0].message


def test_trace_of_a_cp_async_mbarrier_arrive():
    """cp.async.mbarrier.arrive.noinc: the arrive-on comes from the operation, after the
    thread's copy, and is traced with the operation's number and issuer."""
    m = _machine(trace=True)
    g = m.alloc(64)
    b = m.mbarrier(BAR).init(1)
    m.cp_async(0, g.address, 16, thread=4)
    m.cp_async_mbarrier_arrive(b, thread=4, noinc=True)
    assert b.try_wait(0, thread=9)
    got = [(e.kind, e.thread, e.op) for e in m.trace if e.kind in ("issue", "write", "arrive", "phase")]
    assert got == [("issue", 4, 0), ("issue", 4, 1), ("write", 4, 0), ("arrive", 4, 1), ("phase", None, None)]


def test_reinit_hazard_leaves_the_barrier_as_it_was():
    """Found by the API fuzz: mbarrier.init / .inval over a barrier that a pending
    st.async signals raised [reinit-pending] after changing the barrier. A raised
    hazard must leave the model unchanged (the check runs first)."""
    m = p.Machine(ctas=2, smem_bytes=4096)
    m._mbar_init(0, 8, 1)
    m.st_async(0, 0, 8)                  # pending, signals the barrier at 8
    before = (m._mbar_state(0, 8), m.pending)
    for op in (lambda: m._mbar_init(0, 8, 1), lambda: m._mbar_inval(0, 8)):
        with pytest.raises(p.Hazard, match="reinit-pending"):
            op()
        assert (m._mbar_state(0, 8), m.pending) == before


# ---------------------------------------------------------------- bytes landing in a later phase

def test_tx_wrong_phase():
    """PTX ISA 9.7.13.15.5 / 9.7.13.15.5.2: tx-count counts the transactions "tracked by the
    current phase", and complete-tx signals those "tracked by the current phase". Two loads
    under one expect_tx of 32 bytes: the first completes phase 0, the second, issued in
    phase 0, lands its bytes in phase 1."""
    m = _machine(policy="in_order")
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32)
    _load(m, b, dst=1024)
    _load(m, b, dst=2048, row=2)
    assert m.step() and b.phase == 1
    with pytest.raises(p.Hazard) as e:
        m.step()
    assert _rule(e) == "tx-wrong-phase"
    assert ("#1 (CTA 0 thread 0) was issued in phase 0 of the mbarrier at 0x40 in CTA 0, but its 32 tx "
            "bytes land in phase 1: phase 0 completed without them" in str(e.value))
    # report mode: recorded, and the bytes are credited to phase 1 as the hardware would
    m = _machine(policy="in_order", hazards="report")
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32)
    _load(m, b, dst=1024)
    _load(m, b, dst=2048, row=2)
    m.run()
    assert [h.rule for h in m.hazards] == ["tx-wrong-phase"] and b.state["tx"] == -32


def test_tx_wrong_phase_not_for_a_load_before_its_expect_tx():
    """The load issued before the arrive.expect_tx of its own phase (complete_tx may come
    first: the count is negative for a while), and the next phase's load issued after the
    wait: every byte lands in the phase it was issued in."""
    m = _machine(policy="reverse")
    b = m.mbarrier(BAR).init(1)
    for phase in range(3):
        _load(m, b, dst=1024)
        m.run()                                    # the bytes land before the expect_tx
        b.arrive_expect_tx(32)
        assert b.try_wait(phase % 2, thread=1)
    assert b.phase == 3


# ---------------------------------------------------------------- the global side of tensor copies

def _store_map(m, dtype="u8"):
    """A tensor of 4 rows of 64 bytes; boxes of 16 bytes x 2 rows (rows 64 bytes apart)."""
    g = m.alloc(256)
    n = 16 // {"u8": 1, "u32": 4}[dtype]
    return g, p.TensorMap.tiled(dtype, g.address, [4 * n, 4], [64], [n, 2])


def test_tensor_source_changed():
    """PTX ISA 9.7.9.25.1: modifying the source of an asynchronous copy before it completes
    is undefined. A tensor load's source is a strided box: its rows are kept at issue and
    compared when the load reads them; bytes between the rows are not the load's."""
    m = _machine(checks=True)
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32)
    buf = _load(m, b, row=1)                       # rows 1 and 2: bytes [64, 80) and [128, 144)
    buf.bytes[20] = 0                              # row 0: not read
    buf.bytes[100] = 0                             # row 1, past the box: not read
    buf.bytes[130] = 0                             # row 2, in the box
    with pytest.raises(p.Hazard) as e:
        b.try_wait(0)
    assert _rule(e) == "tensor-source-changed"
    assert f"global bytes [0x{buf.address + 128:x}, 0x{buf.address + 144:x}) of its box" in str(e.value)
    m = _machine(checks=True)                      # right: written after the wait
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32)
    buf = _load(m, b, row=1)
    buf.bytes[20] = buf.bytes[100] = 0
    assert b.try_wait(0)
    buf.bytes[130] = 0


def test_tensor_destination_changed():
    """The destination of a tensor store belongs to it until it completes: its global rows
    written by someone else before then. Bytes between the rows are not its."""
    m = _machine(checks=True)
    g, tm = _store_map(m)
    m.smem[:32] = 9
    m.cp_async_bulk_tensor_store(tm, [16, 2], 0)   # rows 2, 3: bytes [144, 160) and [208, 224)
    m.cp_async_bulk_commit_group()
    g.bytes[170] = 1                               # between the rows: fine
    g.bytes[210] = 1
    with pytest.raises(p.Hazard) as e:
        m.cp_async_bulk_wait_group(0)
    assert _rule(e) == "tensor-destination-changed"
    assert f"global bytes [0x{g.address + 208:x}, 0x{g.address + 224:x}) of its box" in str(e.value)
    m = _machine(checks=True)                      # a reduction: the same, and fine after it
    g, tm = _store_map(m, "u32")
    m.smem.view(np.uint32)[:8] = 9
    m.cp_reduce_async_bulk_tensor("add", tm, [4, 2], 0)
    m.cp_async_bulk_commit_group()
    g.bytes[170] = 1
    m.cp_async_bulk_wait_group(0)
    assert g.bytes[144] == 9 and g.bytes[170] == 1


def test_global_write_overlap():
    """PTX ISA 8.9.1.1 / cp.async.bulk: asynchronous operations are not ordered with each
    other: two pending writes of the same global bytes race, whether tensor boxes or a
    tensor box and a bulk copy. Reductions into the same bytes are order-free; a store
    issued after the wait_group that covers the first is ordered."""
    m = _machine(checks=True)
    g, tm = _store_map(m)
    m.cp_async_bulk_tensor_store(tm, [0, 0], 0)    # rows 0, 1
    with pytest.raises(p.Hazard) as e:
        m.cp_async_bulk_tensor_store(tm, [0, 1], 512)   # rows 1, 2: bytes [64, 80) shared
    assert _rule(e) == "global-write-overlap"
    assert f"both write global bytes [0x{g.address + 64:x}, 0x{g.address + 80:x})" in str(e.value)
    with pytest.raises(p.Hazard) as e:             # a bulk copy into row 1 of the box
        m.cp_async_bulk(g.address + 64, 1024, 16, dst_space="global", src_space="shared::cta")
    assert _rule(e) == "global-write-overlap"
    m.cp_async_bulk_tensor_store(tm, [16, 0], 512)  # the columns next to it: fine
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    m.cp_async_bulk_tensor_store(tm, [0, 1], 512)   # ordered by the wait: fine
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    m = _machine(checks=True)                      # reductions into the same rows: fine
    g, tm = _store_map(m, "u32")
    m.smem.view(np.uint32)[:8] = 1
    m.cp_reduce_async_bulk_tensor("add", tm, [0, 0], 0)
    m.cp_reduce_async_bulk_tensor("add", tm, [0, 0], 0)
    m.cp_reduce_async_bulk("add", "u32", g.address, 0, 16)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    assert g.bytes[0] == 3 and g.bytes[64] == 2


def test_destination_read_of_a_tensor_store():
    """A tensor load whose box reads global rows that a pending tensor store has not
    written yet reads a pending destination (and so does a bulk copy from them)."""
    m = _machine(checks=True)
    g, tm = _store_map(m)
    b = m.mbarrier(BAR).init(1)
    m.cp_async_bulk_tensor_store(tm, [0, 1], 0)    # rows 1, 2
    b.arrive_expect_tx(32)
    with pytest.raises(p.Hazard) as e:
        m.cp_async_bulk_tensor_load(tm, [0, 2], 1024, b)   # rows 2, 3
    assert _rule(e) == "destination-read" and f"global bytes [0x{g.address + 128:x}" in str(e.value)
    with pytest.raises(p.Hazard) as e:
        m.cp_async_bulk(1024, g.address + 64, 16, mbar=b)
    assert _rule(e) == "destination-read"
    m.cp_async_bulk_tensor_load(tm, [16, 1], 1024, b)      # the columns next to the store's: fine
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    assert b.try_wait(0)


# ---------------------------------------------------------------- never waited, reported at exit

def test_never_waited_at_thread_exit():
    """PTX ISA cp.async.bulk.wait_group / cp.async.wait_group: async-groups are per thread, so
    a thread that exits with operations its groups track leaves what no thread can wait for:
    reported at its exit. An operation that signals an mbarrier is not (another thread may
    wait on the barrier); nor is anything once waited for."""
    m = _machine(policy="in_order")
    g = m.alloc(64)
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32, thread=1)
    _load(m, b, thread=1)                          # tracked by the barrier: thread 2 waits
    _bulk_store(m, g)                              # thread 0: committed, waited
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    m.exit(thread=0)
    m.exit(thread=1)
    assert m.pending == 1 and b.try_wait(0, thread=2)
    m.cp_async(0, g.address, 16, thread=3)         # committed, never waited
    m.cp_async_commit_group(thread=3)
    with pytest.raises(p.Hazard) as e:
        m.exit(thread=3)
    assert _rule(e) == "never-waited"
    assert str(e.value).startswith("[never-waited] thread 3 of CTA 0 exits with cp.async #2 pending")
    assert "its async-group was never waited for, and only its thread can wait" in str(e.value)
    assert m.pending == 1                          # raised: the thread has not exited
    m.hazard_mode = "report"
    m.cp_async_bulk(g.address + 16, 64, 16, dst_space="global", src_space="shared::cta", thread=3)
    m.exit(thread=3)
    assert [h.rule for h in m.hazards] == ["never-waited", "never-waited"]
    assert "issued after the thread's last commit_group" in m.hazards[1].message
    assert m.pending == 0


def test_a_store_read_by_wait_group_read_completes_at_the_exit():
    # Triton's and CUTLASS's epilogues: store, commit, wait_group.read 0, exit. The source was
    # read; the write finishes after the thread has gone: nothing is left behind.
    m = p.Machine(policy="random")
    a = np.zeros((64, 64), np.float16)
    g = m.register(a)
    tm = p.TensorMap.tiled("f16", g.address, [64, 64], [128], [64, 64], swizzle="128B")
    m.smem[:8192] = 3
    m.cp_async_bulk_tensor_store(tm, [0, 0], 0)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0, read=True)
    m.exit(thread=0)
    assert m.pending == 0 and (a.view(np.uint8) == 3).all()
    # without the wait it is still reported
    m.cp_async_bulk_tensor_store(tm, [0, 0], 0)
    m.cp_async_bulk_commit_group()
    with pytest.raises(p.Hazard, match="never-waited"):
        m.exit(thread=0)


def test_never_waited_at_cta_exit():
    """A CTA that exits frees its shared memory: an operation still pending that reads or
    writes it, or signals an mbarrier in it, was never waited for. An operation of another
    CTA's memory is not the exiting CTA's; st.async.release.global "synchronizes with the
    end of the CTA": the exit completes it, no report."""
    m = p.Machine(ctas=2, smem_bytes=16 * 1024, policy="in_order", target="sm_100a", hazards="report")
    g = m.alloc(64)
    m.st_async_release(g.address, 7, thread=5)
    b1 = m.cta(1).mbarrier(BAR).init(1)
    b1.arrive_expect_tx(32)
    buf = m.alloc(256)
    tm = p.TensorMap.tiled("u8", buf.address, [64, 4], [64], [16, 2])
    m.cp_async_bulk_tensor_load(tm, [0, 0], p.mapa(1024, 1), b1, cta=1)
    m.exit(cta=0)                                  # nothing of CTA 0's memory is pending
    assert m.hazards == [] and g.bytes[0] == 7 and m.pending == 1
    m.exit(cta=1)                                  # its tile and its barrier: never waited
    (h,) = m.hazards
    assert h.rule == "never-waited" and h.message.startswith("[never-waited] CTA 1 exits with ")
    assert "its shared memory is gone" in h.message and m.pending == 0


def test_never_waited_not_at_exit_of_a_correct_pipeline():
    """The 3-stage pipeline exits each thread when it is done and then the CTA
    (ptxasync.pipeline.run): a correct one is silent under every policy."""
    from ptxasync import pipeline
    for policy in ("immediate", "in_order", "reverse", "random", "adversarial"):
        for seed in range(5):
            m, a, out = pipeline.run(tiles=7, policy=policy, seed=seed, hazards="report")
            assert m.hazards == [] and len(out) == 7 and m.pending == 0


def test_source_changed_by_an_asynchronous_write_at_its_issue():
    """PTX ISA 9.7.9.25.1: the source must not change before the operation reads it, and two
    asynchronous operations are not ordered: a copy into the shared source of a store that
    has not read it yet (reusing a buffer before cp.async.bulk.wait_group.read), or a tensor
    store into the global rows of a pending tensor load, is reported when it is issued, not
    only when an unlucky order lands it first. After wait_group.read the reuse is right."""
    m = _machine(checks=True)
    g = m.alloc(256)
    b = m.mbarrier(BAR).init(1)
    _bulk_store(m, g, src=1024, size=32)           # reads smem [1024, 1056) later
    m.cp_async_bulk_commit_group()
    b.arrive_expect_tx(32)
    with pytest.raises(p.Hazard) as e:
        _load(m, b, dst=1024 + 16)                 # a TMA load into the store's source
    assert _rule(e) == "source-changed"
    assert ("writes shared bytes [0x410, 0x420) of CTA 0, the source of pending cp.async.bulk" in str(e.value)
            and "which has not read it yet" in str(e.value))
    m.cp_async_bulk_wait_group(0, read=True)       # the store has read its source
    _load(m, b, dst=1024 + 16)
    assert b.try_wait(0)
    m.cp_async_bulk_wait_group(0)
    m = _machine(checks=True)                      # global rows of a pending tensor load
    g, tm = _store_map(m)
    b = m.mbarrier(BAR).init(1)
    b.arrive_expect_tx(32)
    m.cp_async_bulk_tensor_load(tm, [0, 1], 1024, b)    # rows 1, 2
    with pytest.raises(p.Hazard) as e:
        m.cp_async_bulk_tensor_store(tm, [0, 2], 0)     # rows 2, 3
    assert _rule(e) == "source-changed" and f"global bytes [0x{g.address + 128:x}" in str(e.value)
    m.cp_async_bulk_tensor_store(tm, [16, 2], 0)        # the columns next to it: fine
    assert b.try_wait(0)
    m.cp_async_bulk_tensor_store(tm, [0, 2], 512)       # after the wait: fine
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)


def test_wgmma_pending_accumulator_read_before_wait_group():
    """wgmma.wait_group: accessing the accumulators of a wgmma.mma_async before a wait_group
    covering its group is undefined; the model names the wgmma's line and the access's
    (tests/ptx/test_ptx_wgmma_pending.py has the rest)."""
    from ptxasync import ptx
    desc = (128 >> 4) << 16 | (256 >> 4) << 32
    mma = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d0,%d1,%d2,%d3}, %q4, %q5, %p1, 1, 1, 0, 0;"
    st = "st.global.f32 [%q0], %d0;"
    lines = [".version 8.7", ".target sm_90a", ".address_size 64", ".visible .entry k(.param .u64 po)", "{",
             ".reg .pred %p1; .reg .b32 %t<8>; .reg .b64 %q<6>; .reg .f32 %d<4>;",
             ".shared .align 1024 .b8 sA[2048]; .shared .align 1024 .b8 sB[256];"]
    for reg, sym in (("%q4", "sA"), ("%q5", "sB")):
        lines.append(f"mov.u32 %t6, {sym}; cvt.u64.u32 {reg}, %t6; shr.u64 {reg}, {reg}, 4; "
                     f"and.b64 {reg}, {reg}, 16383; or.b64 {reg}, {reg}, {desc};")
    lines += ["setp.ne.b32 %p1, 1, 0;", "ld.param.u64 %q0, [po]; mov.u32 %t0, %tid.x;",
              "mul.wide.u32 %q1, %t0, 4; add.u64 %q0, %q0, %q1;", "wgmma.fence.sync.aligned;", mma,
              "wgmma.commit_group.sync.aligned;", "@WAIT@", st, "ret;", "}"]
    text = "\n".join(lines) + "\n"

    def run(wait):
        m = p.Machine(smem_bytes=4096)
        out = np.zeros(128, np.float32)
        ptx.Kernel(text.replace("@WAIT@", wait)).launch(m, block=128, params={"po": m.register(out)})

    run("wgmma.wait_group.sync.aligned 0;")
    with pytest.raises(p.Hazard) as e:
        run("")
    msg = str(e.value)
    assert e.value.rule == "wgmma-pending", msg
    assert f"wgmma.mma_async at PTX line {lines.index(mma) + 1}" in msg and f"[PTX line {lines.index(st) + 1}:" in msg
