"""The memory model: happens-before, proxies and fences (docs/hazards.md, rules
data-race, proxy-fence-missing, tensormap-fence-missing, mbarrier-init-unordered).

Each rule has a test citing the PTX ISA; the scenarios of real reports are
tests; and random multi-thread programs are checked against a happens-before
reference written here (graph reachability, no vector clocks)."""
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptxasync as p
from ptxasync import Hazard
from vector_levels import SIMD_NAMES, vector_level

POLICIES = ["immediate", "in_order", "reverse", "random", "adversarial"]
BAR, FULL, EMPTY = 0x40, 0x10, 0x40


def _store_setup(m):
    """A 16 x 16 u8 global tile and its map; shared tile at 1024."""
    g = m.alloc(256)
    tm = p.TensorMap.tiled("u8", g.address, [16, 16], [16], [16, 16])
    return g, tm


# --- one test per rule ---------------------------------------------------------------

def test_data_race_read_of_a_load_before_its_wait():
    """PTX ISA 9.7.9.25.1: "A thread must explicitly wait for the completion of an
    asynchronous copy operation in order to access the result"; 9.7.13.15 (test_wait /
    try_wait acquire): only a wait that returns True makes the phase's operations
    visible. The read races with the load under every policy, immediate included
    (the bytes are already there)."""
    for policy in POLICIES:
        m = p.Machine(policy=policy)
        g, tm = _store_setup(m)
        b = m.mbarrier(BAR).init(1)
        b.arrive_expect_tx(256)
        m.cp_async_bulk_tensor_load(tm, [0, 0], 1024, b)
        with pytest.raises(Hazard) as e:
            m.cta(0).read(np.uint8, 16, 1024, thread=1)
        assert e.value.rule in ("data-race", "destination-read"), policy
        if policy == "immediate":
            assert e.value.rule == "data-race"
            assert "no wait on the mbarrier at 0x40 of CTA 0 returned True for phase 0" in str(e.value)
        m2 = p.Machine(policy=policy)
        g, tm = _store_setup(m2)
        b = m2.mbarrier(BAR).init(1)
        b.arrive_expect_tx(256)
        m2.cp_async_bulk_tensor_load(tm, [0, 0], 1024, b)
        assert b.try_wait(0, thread=1)
        m2.cta(0).read(np.uint8, 16, 1024, thread=1)   # after the wait: ordered


def test_proxy_fence_missing_st_shared_then_tma_store():
    """PTX ISA 9.7.9.25.2: "Accessing the same memory location across multiple
    proxies needs a cross-proxy fence. For the async proxy, fence.proxy.async should be
    used"; the TMA store reads shared memory in the async proxy."""
    m = p.Machine(policy="immediate")
    g, tm = _store_setup(m)
    m.cta(0).write(1024 + 0x10, np.arange(16, dtype=np.uint8), thread=0)
    with pytest.raises(Hazard) as e:
        m.cp_async_bulk_tensor_store(tm, [0, 0], 1024, thread=0)
    assert e.value.rule == "proxy-fence-missing"
    assert "no fence.proxy.async" in str(e.value) and "st.shared" in str(e.value)
    m.fence_proxy_async(thread=0, space="shared::cta")
    m.cp_async_bulk_tensor_store(tm, [0, 0], 1024, thread=0)   # fenced: fine
    assert [r.rule for r in m.races] == ["proxy-fence-missing"]


def test_proxy_fence_of_the_writer_before_bar_sync_or_of_the_issuer_after_it():
    """Programming Guide (TMA store): "each thread first orders the writes ... via the
    fence.proxy.async.shared::cta, and these operations by all threads are ordered
    before the async operation performed in thread 0 using __syncthreads()". A fence
    anywhere on the happens-before path between the write and the store will do."""
    for fencer in (37, 0, None):
        m = p.Machine(policy="immediate", hazards="report")
        g, tm = _store_setup(m)
        m.cta(0).write(1024 + 0x40, np.ones(64, np.uint8), thread=37)
        if fencer == 37:
            m.fence_proxy_async(thread=37, space="shared::cta")
        m.bar_sync(0)
        if fencer == 0:
            m.fence_proxy_async(thread=0)
        m.cp_async_bulk_tensor_store(tm, [0, 0], 1024, thread=0)
        rules = [h.rule for h in m.hazards]
        assert rules == ([] if fencer is not None else ["proxy-fence-missing"]), fencer
    r = m.races[0]
    assert (r.first["thread"], r.first["instr"], r.first["proxy"]) == (37, "st.shared", "generic")
    assert (r.second["thread"], r.second["proxy"], r.second["lo"], r.second["hi"]) == (0, "async", 1024 + 0x40, 1024 + 0x80)


def test_data_race_without_bar_sync():
    """PTX ISA 8 (memory consistency): two conflicting accesses of different threads
    not related by a release / acquire pattern (bar.sync here) race."""
    m = p.Machine(policy="immediate")
    m.cta(0).write(0x100, b"\x01" * 8, thread=3)
    with pytest.raises(Hazard) as e:
        m.cta(0).read(np.uint8, 8, 0x100, thread=5)
    assert e.value.rule == "data-race"
    assert "thread 5 of CTA 0 (ld.shared" in str(e.value) and "thread 3 of CTA 0 (st.shared" in str(e.value)
    m2 = p.Machine()
    m2.cta(0).write(0x100, b"\x01" * 8, thread=3)
    m2.bar_sync(0, threads=[3, 5])
    m2.cta(0).read(np.uint8, 8, 0x100, thread=5)


def test_tensormap_fence_missing():
    """PTX ISA cp.async.bulk.tensor: "The tensorMap is accessed in tensormap proxy";
    tensormap.replace "is treated as a weak memory operation" (generic proxy); membar /
    fence: fence.proxy.tensormap::generic.release, then .acquire [tmap], 128."""
    for fences in ("none", "release", "both"):
        m = p.Machine(policy="immediate", hazards="report")
        a = m.alloc(256, fill=7)
        held = m.alloc(128)
        tm = p.TensorMap.tiled("u8", a.address, [16, 16], [16], [16, 16])
        held.bytes[:] = np.frombuffer(bytes(tm), np.uint8)
        m.tensormap_replace(held.address, "box_dim", 8, ord=1, thread=0)
        if fences in ("release", "both"):
            m.fence_proxy_tensormap(thread=0, kind="release")
        if fences == "both":
            m.fence_proxy_tensormap(thread=0, kind="acquire", address=held.address)
        b = m.mbarrier(BAR).init(1)
        b.arrive_expect_tx(128)
        m.cp_async_bulk_tensor_load(held.address, [0, 0], 1024, b)
        assert b.try_wait(0)
        assert [h.rule for h in m.hazards] == ([] if fences == "both" else ["tensormap-fence-missing"])
        np.testing.assert_array_equal(m.cta(0).read(np.uint8, 128, 1024), 7)   # the edited box: 8 rows


def test_tensormap_fence_operands():
    m = p.Machine()
    held = m.alloc(128)
    with pytest.raises(ValueError, match="128"):
        m.fence_proxy_tensormap(kind="acquire", address=held.address, size=64)
    with pytest.raises(ValueError, match="address"):
        m.fence_proxy_tensormap(kind="acquire")
    with pytest.raises(p.IllegalAddress, match="global"):
        m.fence_proxy_tensormap(kind="acquire", address=held.address + 4096)
    with pytest.raises(ValueError, match="shared::cta"):
        m.fence_proxy_async(space="local")


def test_mbarrier_init_unordered_across_ctas():
    """PTX ISA membar/fence: fence.mbarrier_init.release.cluster, then
    barrier.cluster.arrive.relaxed; an operation of another CTA that signals the
    barrier must be ordered after its init (checked with the memory checks on)."""
    for sync in ("none", "relaxed", "fence+relaxed", "release"):
        m = p.Machine(ctas=2, policy="immediate", checks=True, hazards="report")
        g, tm = _store_setup(m)
        bars = [m.mbarrier(BAR, cta=r).init(1, thread=0) for r in range(2)]
        if sync == "fence+relaxed":
            m.fence_mbarrier_init(cta=1, thread=0)
        if sync in ("relaxed", "fence+relaxed"):
            m.barrier_cluster(relaxed=True)
        if sync == "release":
            m.barrier_cluster()
        for b in bars:
            b.arrive_expect_tx(256)
        m.cp_async_bulk_tensor_load(tm, [0, 0], p.mapa(1024, 0), p.mapa(BAR, 0), cta=0, cta_mask=0b11)
        rules = [h.rule for h in m.hazards]
        assert rules == (["mbarrier-init-unordered"] if sync in ("none", "relaxed") else []), sync


def test_cp_async_read_before_wait_group():
    """PTX ISA cp.async: "cp.async.wait_group ... waits until ... the cp.async
    operations are complete"; reading the destination before it is a race."""
    for policy in POLICIES:
        m = p.Machine(policy=policy, hazards="report")
        g = m.alloc(64, fill=3)
        m.cp_async(0x200, g.address, 16, thread=4)
        m.cp_async_commit_group(thread=4)
        m.cta(0).read(np.uint8, 16, 0x200, thread=4)
        assert [h.rule for h in m.hazards][:1] in (["data-race"], ["destination-read"]), policy
        m = p.Machine(policy=policy)
        g = m.alloc(64, fill=3)
        m.cp_async(0x200, g.address, 16, thread=4)
        m.cp_async_commit_group(thread=4)
        m.cp_async_wait_group(0, thread=4)
        assert (m.cta(0).read(np.uint8, 16, 0x200, thread=4) == 3).all()


def test_race_checks_off():
    m = p.Machine(policy="immediate", race_checks=False)
    m.cta(0).write(0x100, b"\x01" * 8, thread=3)
    m.cta(0).read(np.uint8, 8, 0x100, thread=5)
    assert not m.race_checks and m.races == []



def test_the_race_checker_follows_a_replay():
    """Machine.replay's mbarrier records go through the synchronisation layer that makes
    happens-before, as the one-by-one calls do (Machine.replay's docstring): the thread
    that waited in the replay reads the loaded bytes unreported; another thread, which
    did not wait, races with the load."""
    m = p.Machine(policy="immediate")
    g, tm = _store_setup(m)
    ops = p.OpList()
    ops.mbarrier_init(BAR, 1)
    ops.mbarrier_arrive_expect_tx(BAR, 256)
    ops.cp_async_bulk_tensor_load(tm, [0, 0], 1024, BAR)
    ops.mbarrier_wait(BAR, 0)
    m.replay(ops)
    assert m.race_checks
    m.cta(0).read(np.uint8, 16, 1024, thread=0)
    assert m.races == []
    with pytest.raises(Hazard) as e:
        m.cta(0).read(np.uint8, 16, 1024, thread=1)
    assert e.value.rule == "data-race"

# --- the pipeline scenarios ------------------------------------------------------------

STAGES, TILE = 3, 256


def _pipeline(policy, seed, bug=None, tiles=9):
    """3-stage full/empty TMA pipeline; the consumer (thread 128) reads each stage
    through the model (CTA.read). bug: 'read_before_wait' (no wait on full),
    'release_before_read' (arrive on empty, then read), 'overwrite' (the producer
    does not wait on empty). Returns the machine."""
    m = p.Machine(smem_bytes=1024 + STAGES * TILE, policy=policy, seed=seed)
    a = m.alloc(tiles * TILE)
    a.bytes[:] = np.arange(tiles * TILE) % 251
    tm = p.TensorMap.tiled("u8", a.address, [16, tiles * 16], [16], [16, 16])
    for s in range(STAGES):
        m.mbarrier(FULL + 8 * s).init(1, thread=0)
        m.mbarrier(0x80 + 8 * s).init(1, thread=0)
    m.bar_sync(0)

    def producer():
        for i in range(tiles):
            s, k = i % STAGES, i // STAGES
            empty, full = m.mbarrier(0x80 + 8 * s), m.mbarrier(FULL + 8 * s)
            if bug != "overwrite":
                while not empty.try_wait((k & 1) ^ 1, thread=0):
                    yield False
            full.arrive_expect_tx(TILE, thread=0)
            yield True
            m.cp_async_bulk_tensor_load(tm, [0, i * 16], 1024 + s * TILE, full, thread=0)
            yield True

    def consumer():
        for i in range(tiles):
            s, k = i % STAGES, i // STAGES
            empty, full = m.mbarrier(0x80 + 8 * s), m.mbarrier(FULL + 8 * s)
            if bug != "read_before_wait":
                while not full.try_wait(k & 1, thread=128):
                    yield False
            if bug == "release_before_read":
                empty.arrive(thread=128)
                yield True
            m.cta(0).read(np.uint8, TILE, 1024 + s * TILE, thread=128)
            yield True
            if bug != "release_before_read":
                empty.arrive(thread=128)
                yield True

    rng = random.Random(seed)
    threads = [producer(), consumer()]
    blocked = [False, False]
    while threads:
        i = rng.randrange(len(threads))
        for _ in range(rng.randint(1, 6)):
            try:
                ran = next(threads[i])
            except StopIteration:
                del threads[i], blocked[i]
                break
            if not ran:
                blocked[i] = True
                break
            blocked = [False] * len(blocked)
        if threads and all(blocked):
            m.step()
            blocked = [False] * len(threads)
    m.run()
    return m


@pytest.mark.parametrize("policy", POLICIES)
def test_correct_pipeline_reports_nothing(policy):
    for seed in range(10):
        m = _pipeline(policy, seed)
        assert m.races == []


@pytest.mark.parametrize("bug", ["read_before_wait", "release_before_read", "overwrite"])
@pytest.mark.parametrize("policy", POLICIES)
def test_pipeline_bug_reported_in_every_seed(policy, bug):
    """A consumer reading a stage before its full wait, releasing it before reading
    it, a producer overwriting a stage before it was released: reported in 30 of 30
    seeds of every policy (the race, or an mbarrier rule that the same bug breaks)."""
    rules = []
    for seed in range(30):
        with pytest.raises(Hazard) as e:
            _pipeline(policy, seed, bug)
        rules.append(e.value.rule)
    if bug == "release_before_read":   # the early release breaks no mbarrier rule: only the race says it
        assert set(rules) <= {"data-race", "destination-read"}, rules
        assert policy != "immediate" or set(rules) == {"data-race"}
    assert len(rules) == 30


# --- random programs against a happens-before reference ---------------------------------
#
# Events: ("r"|"w", t, lo, hi) ld/st.shared by thread t of [lo, hi); ("bar", threads)
# bar.sync; ("sig", t1, t2) t1 arrives on a fresh mbarrier and t2's wait returns True;
# ("tma", t, lo, hi) thread t inits a fresh mbarrier, arrive.expect_tx, then a bulk copy
# into [lo, hi) (the async proxy) that completes on it; ("wait", t, k) thread t waits on
# the k-th tma's mbarrier; ("fence", t) fence.proxy.async.

def _reference_first_race(prog, nthreads):
    """(index, rule) of the first event that races, or None. Events are nodes; edges:
    program order, bar.sync (one node in every listed thread), arrive -> wait, and an
    operation's write after its issuer's arrive and before every wait on its barrier.
    Two accesses to overlapping bytes, one a write, not both operations: the earlier
    must reach the later (data-race); a generic write then an async access needs a
    fence node on a path between them (proxy-fence-missing); an async write then a
    generic access is fenced by the wait that observed it."""
    preds, last, accesses, fences, tmas = {}, {}, [], [], []

    def node(key, threads, extra=()):
        preds[key] = {last[t] for t in threads if t in last} | set(extra)
        for t in threads:
            last[t] = key

    def check(n, t, lo, hi, write, proxy):
        meets = [(n2, w2, proxy2) for (n2, t2, lo2, hi2, w2, proxy2) in accesses
                 if lo2 < hi and lo < hi2 and (w2 or write) and not (proxy2 == "async" and proxy == "async")]
        accesses.append((n, t, lo, hi, write, proxy))
        if any(not _reaches(preds, n2, n) for n2, _, _ in meets):     # a race is said first
            return "data-race"
        for n2, w2, proxy2 in meets:
            if w2 and proxy2 == "generic" and proxy == "async" and \
                    not any(_reaches(preds, n2, f) and _reaches(preds, f, n) for f in fences):
                return "proxy-fence-missing"
        return None

    for n, ev in enumerate(prog):
        kind = ev[0]
        if kind in ("r", "w"):
            _, t, lo, hi = ev
            node(n, [t])
            rule = check(n, t, lo, hi, kind == "w", "generic")
        elif kind == "bar":
            node(n, ev[1])
            rule = None
        elif kind == "sig":
            _, t1, t2 = ev
            node((n, "arrive"), [t1])
            node((n, "wait"), [t2], [(n, "arrive")])
            rule = None
        elif kind == "fence":
            node(n, [ev[1]])
            fences.append(n)
            rule = None
        elif kind == "tma":
            _, t, lo, hi = ev
            node((n, "arrive"), [t])
            preds[n] = {(n, "arrive")}          # the copy: after its issuer's arrive, in no program order
            tmas.append(n)
            rule = check(n, t, lo, hi, True, "async")
        else:                                  # wait on the k-th tma's barrier
            _, t, k = ev
            if not tmas:
                continue
            op = tmas[k % len(tmas)]
            node((n, "wait"), [t], [op, (op, "arrive")])
            rule = None
        if rule:
            return n, rule
    return None


def _reaches(preds, a, b):
    seen, stack = set(), [b]
    while stack:
        x = stack.pop()
        if x == a:
            return True
        if x in seen:
            continue
        seen.add(x)
        stack.extend(preds.get(x, ()))
    return False


@st.composite
def programs(draw):
    nthreads = draw(st.integers(2, 4))
    n = draw(st.integers(1, 14))
    prog = []
    thread = st.integers(0, nthreads - 1)
    for _ in range(n):
        kind = draw(st.sampled_from(["r", "w", "w", "r", "bar", "sig", "tma", "tma", "wait", "wait", "fence"]))
        if kind in ("r", "w", "tma"):
            lo = draw(st.integers(0, 6)) * 16
            prog.append((kind, draw(thread), lo, lo + 16 * draw(st.integers(1, 3))))
        elif kind == "bar":
            prog.append(("bar", tuple(sorted(draw(st.sets(thread, min_size=1))))))
        elif kind == "sig":
            t1 = draw(thread)
            prog.append(("sig", t1, draw(thread.filter(lambda x: x != t1))))
        elif kind == "wait":
            prog.append(("wait", draw(thread), draw(st.integers(0, 20))))
        else:
            prog.append(("fence", draw(thread)))
    return nthreads, prog


def _run_model(prog, policy):
    """(index, rule) of the event the model raises a Hazard at, or None."""
    m = p.Machine(policy=policy, checks=False)    # the memory model alone, as the reference
    g = m.alloc(256, fill=5)
    nbar, tmas = 0, []
    for n, ev in enumerate(prog):
        try:
            if ev[0] == "r":
                m.cta(0).read(np.uint8, ev[3] - ev[2], 0x400 + ev[2], thread=ev[1])
            elif ev[0] == "w":
                m.cta(0).write(0x400 + ev[2], np.zeros(ev[3] - ev[2], np.uint8), thread=ev[1])
            elif ev[0] == "bar":
                m.bar_sync(0, threads=list(ev[1]))
            elif ev[0] == "sig":
                b = m.mbarrier(8 * nbar).init(1, thread=ev[1])
                nbar += 1
                b.arrive(thread=ev[1])
                assert b.try_wait(0, thread=ev[2])
            elif ev[0] == "fence":
                m.fence_proxy_async(thread=ev[1])
            elif ev[0] == "tma":
                b = m.mbarrier(8 * nbar).init(1, thread=ev[1])
                nbar += 1
                b.arrive_expect_tx(ev[3] - ev[2], thread=ev[1])
                m.cp_async_bulk(0x400 + ev[2], g.address, ev[3] - ev[2], mbar=b, thread=ev[1])
                tmas.append(b)
            elif tmas:
                assert tmas[ev[2] % len(tmas)].try_wait(0, thread=ev[1])
        except Hazard as e:
            return n, e.rule
    return None


@settings(max_examples=400, deadline=None)
@given(programs(), st.sampled_from(["immediate", "in_order"]))
def test_random_programs_against_the_reference(case, policy):
    """Random multi-thread programs with and without the synchronisation they need:
    the model raises at the event, and with the rule, that the reference names."""
    nthreads, prog = case
    got = _run_model(prog, policy)
    want = _reference_first_race(prog, nthreads)
    if policy == "in_order" and got and got[1] == "destination-read" and want and want[1] == "data-race":
        got = (got[0], "data-race")   # a read of a still pending copy: the older rule says it first
    assert got == want


def test_fence_acq_rel_with_a_relaxed_cluster_barrier():
    """PTX ISA memory consistency model: a fence.acq_rel (or fence.sc) at cluster scope
    or wider followed by a relaxed barrier.cluster.arrive forms the release pattern; a
    .cta fence does not reach another CTA, nor does a relaxed arrive alone."""
    for fence, ok in ((None, False), ("cta", False), ("cluster", True), ("gpu", True)):
        m = p.Machine(ctas=2, policy="immediate", hazards="report")
        g = m.alloc(64)
        m.write_global(g.address, np.ones(16, np.uint8), cta=0, thread=5)
        if fence:
            m.fence(cta=0, thread=5, scope=fence, sem="sc" if fence == "gpu" else "acq_rel")
        m.barrier_cluster(relaxed=True)
        m.read_global(g.address, np.uint8, 16, cta=1, thread=9)
        assert [h.rule for h in m.hazards] == ([] if ok else ["data-race"]), fence
    m = p.Machine(ctas=2, policy="immediate")
    g = m.alloc(64)
    m.write_global(g.address, np.ones(16, np.uint8), cta=0, thread=5)
    m.barrier_cluster()                        # .release / .acquire: ordered
    assert (m.read_global(g.address, np.uint8, 16, cta=1, thread=9) == 1).all()


def test_tma_store_source_overwritten_before_wait_group_read():
    """PTX ISA 9.7.9.25.1: "modifying the source memory location ... before the
    asynchronous operation completes, exhibits undefined behavior";
    cp.async.bulk.wait_group.read waits until the sources have been read."""
    for wait in (None, "read", "full"):
        m = p.Machine(policy="immediate", hazards="report")
        g, tm = _store_setup(m)
        m.cta(0).write(1024, np.ones(256, np.uint8), thread=0)
        m.fence_proxy_async(thread=0, space="shared::cta")
        m.cp_async_bulk_tensor_store(tm, [0, 0], 1024, thread=0)
        m.cp_async_bulk_commit_group(thread=0)
        if wait:
            m.cp_async_bulk_wait_group(0, thread=0, read=wait == "read")
        m.cta(0).write(1024, np.zeros(16, np.uint8), thread=0)
        assert [h.rule for h in m.hazards] == ([] if wait else ["data-race"]), wait
        if not wait:
            assert "cp.async.bulk.wait_group.read" in m.hazards[0].message


def test_st_async_read_before_the_wait():
    """st.async: "upon completion of the asynchronous operation, a complete-tx operation
    will be performed on the mbarrier object"; the consumer sees the bytes after its
    wait on that mbarrier returns True (a weak store: the generic proxy)."""
    for waited in (False, True):
        m = p.Machine(ctas=2, policy="immediate", hazards="report")
        bar = m.mbarrier(BAR, cta=1).init(1, thread=0)
        bar.arrive_expect_tx(4, thread=0)
        m.barrier_cluster()      # the init ordered before CTA 0's st.async signals it
        m.st_async(p.mapa(0x200, 1), 7, p.mapa(BAR, 1), cta=0, thread=3)
        if waited:
            assert bar.try_wait(0, thread=0)
        assert m.cta(1).read(np.uint32, 1, 0x200, thread=0)[0] == 7
        assert [h.rule for h in m.hazards] == ([] if waited else ["data-race"]), waited


def test_tensormap_written_with_plain_stores_then_used():
    """A tensor map written into global memory with st.global (a generic store) and
    used from there by a TMA store needs the same tensormap fences."""
    for fenced in (False, True):
        m = p.Machine(policy="immediate", hazards="report")
        a = m.alloc(256)
        held = m.alloc(128)
        tm = p.TensorMap.tiled("u8", a.address, [16, 16], [16], [16, 16])
        m.write_global(held.address, bytes(tm), thread=3)
        if fenced:
            m.fence_proxy_tensormap(thread=3, kind="release")
            m.bar_sync(0)
            m.fence_proxy_tensormap(thread=0, kind="acquire", address=held.address)
        else:
            m.bar_sync(0)
        m.cta(0).write(1024, np.full(256, 9, np.uint8), thread=0)
        m.fence_proxy_async(thread=0)
        m.cp_async_bulk_tensor_store(held.address, [0, 0], 1024, thread=0)
        m.cp_async_bulk_commit_group(thread=0)
        m.cp_async_bulk_wait_group(0, thread=0)
        assert [h.rule for h in m.hazards] == ([] if fenced else ["tensormap-fence-missing"]), fenced
        assert (a.bytes == 9).all()
        if not fenced:
            assert "fence.proxy.tensormap::generic.acquire" in m.hazards[0].message


def test_mbarrier_init_unordered_inside_a_cta():
    """Programming Guide (TMA): the initialised barrier must be made visible to the
    thread that issues the copy (the init, then __syncthreads()); an operation issued by
    another thread with no order after the init is reported (memory checks on)."""
    for synced in (False, True):
        m = p.Machine(policy="adversarial", hazards="report")
        g, tm = _store_setup(m)
        b = m.mbarrier(BAR).init(1, thread=0)
        if synced:
            m.bar_sync(0)
        b.arrive_expect_tx(256, thread=32)
        m.cp_async_bulk_tensor_load(tm, [0, 0], 1024, b, thread=32)
        assert b.try_wait(0, thread=32)
        assert [h.rule for h in m.hazards] == ([] if synced else ["mbarrier-init-unordered"]), synced


def test_fences_and_barriers_are_trace_events():
    m = p.Machine(trace=True)
    g = m.alloc(128)
    m.fence_proxy_async(thread=3, space="shared::cta")
    m.fence_proxy_tensormap(thread=3, kind="acquire", address=g.address)
    m.fence_mbarrier_init(thread=3)
    m.fence(thread=1, scope="gpu", sem="sc")
    m.bar_sync(0)
    m.barrier_cluster(relaxed=True)
    got = [str(e).split(None, 1)[1] for e in m.trace]
    assert got == ["fence       CTA 0 thread 3 fence.proxy.async.shared::cta",
                   f"fence       CTA 0 thread 3 fence.proxy.tensormap::generic.acquire [0x{g.address:x}], 128",
                   "fence       CTA 0 thread 3 fence.mbarrier_init.release.cluster",
                   "fence       CTA 0 thread 1 fence.sc.gpu",
                   "barrier     CTA 0 bar.sync 0 (all threads)",
                   "barrier     every thread barrier.cluster.relaxed"]


@pytest.mark.parametrize("level", range(len(SIMD_NAMES)), ids=SIMD_NAMES)
def test_many_threads_at_every_vector_level(level):
    """Happens-before over 300 threads of 2 CTAs (the checker's thread table grows
    past its first sizes; vector clocks of 304 entries joined at every bar.sync),
    with the join loop at each vector level: the same pairs are ordered and the
    same pair races (PTX ISA 8, memory consistency: bar.sync orders what each
    participant did before it before what each does after)."""
    with vector_level(level):
        m = p.Machine(policy="immediate", ctas=2)
        for cta in (0, 1):
            for t in range(150):
                m.cta(cta).write(0x100 + 16 * t, bytes([t]) * 16, thread=t)
            m.bar_sync(cta)                       # every thread of the CTA: ordered
            for t in range(150):                  # each reads its neighbour's slot
                got = m.cta(cta).read(np.uint8, 16, 0x100 + 16 * ((t + 1) % 150), thread=t)
                assert bytes(got) == bytes([(t + 1) % 150]) * 16
        m.bar_sync(1, threads=list(range(100)))   # threads 0..99 of CTA 1 only
        m.cta(1).write(0x2000, b"\x07" * 4, thread=7)
        m.bar_sync(1, threads=list(range(100)))
        m.cta(1).read(np.uint8, 4, 0x2000, thread=99)    # ordered by the second bar.sync
        with pytest.raises(Hazard) as e:                 # thread 120 took no part in it
            m.cta(1).read(np.uint8, 4, 0x2000, thread=120)
        assert e.value.rule == "data-race"
        assert "thread 120 of CTA 1 (ld.shared" in str(e.value) and "thread 7 of CTA 1 (st.shared" in str(e.value)
