"""Runs of tensor loads (csrc/core/engine/tensor.c): on a machine with nothing
hung on its queue, .tile::gather4 and .tile loads issued back to back by one
thread, of one map, into one CTA, signalling one mbarrier, are kept as one
record. Driven through a small ctypes shim (load_runs_shim.c) over the C
core, against the same program on a machine with a hook attached, where every
load stays a record of its own: after every call the same return code and
message, the same pending / issued / completed counts, the same shared memory
and the same mbarrier state (phase, counts, tx, the operations that signal it),
under in_order and reverse, with faults at issue (named per load) and at
completion (a row in no global buffer, an invalidated mbarrier, tx
overdelivered), waits that stop mid-run when the phase completes, and step().
The tensor lies in two buffers with a gap, or whole in one buffer, where run()
moves a run's gather4 loads of whole lines in one pass and credits their bytes
at once (copy/gather4run.c), at every vector level the CPU has; that pass's
bytes are also checked against a reference written here."""
import ctypes
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core_shim import build_shim

SMEM = 16384
BAR = (15360, 15368)
IN_ORDER, REVERSE = 1, 2
TILE, GATHER4 = 0, 3
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    L = build_shim(tmp_path_factory, os.path.join(os.path.dirname(__file__), "load_runs_shim.c"), "loadruns")
    u32, i32, i, p = ctypes.c_uint32, ctypes.c_int32, ctypes.c_int, ctypes.c_void_p
    L.sim_new.restype = p
    L.sim_new.argtypes = [i, i, p, i]
    L.sim_free.argtypes = [p]
    L.sim_load.argtypes = [p, u32, i, i, i32, i32, i32, i32, i32, u32, u32]
    L.sim_load_run.argtypes = [p, u32, i, i, p, p, u32, u32, ctypes.POINTER(u32)]
    L.sim_arrive.argtypes = [p, u32, u32, u32]
    L.sim_inval.argtypes = [p, u32]
    L.sim_init.argtypes = [p, u32, u32]
    L.sim_wait.argtypes = [p, u32, u32, ctypes.POINTER(i)]
    L.sim_step.argtypes = [p, ctypes.POINTER(i)]
    L.sim_run.argtypes = [p]
    L.sim_set_policy.argtypes = [p, i]
    L.sim_counts.argtypes = [p, ctypes.POINTER(ctypes.c_uint64)]
    L.sim_mbar.argtypes = [p, u32, ctypes.POINTER(ctypes.c_int64)]
    L.sim_smem.restype = ctypes.POINTER(ctypes.c_uint8)
    L.sim_smem.argtypes = [p]
    L.sim_msg.restype = ctypes.c_char_p
    L.sim_msg.argtypes = [p]
    L.sim_simd_cap.argtypes = [i]
    L.sim_simd_cap.restype = i
    return L


LEVELS = [0, 1, 2, 3]   # simd.h: none, sse2, avx2, avx512 (capped at the CPU's own)


@pytest.fixture
def cap(lib):
    """Set a vector level cap for one test; the cap before is put back."""
    before = lib.sim_simd_cap(3)
    lib.sim_simd_cap(before)
    yield lib.sim_simd_cap
    lib.sim_simd_cap(before)


class Sim:
    def __init__(self, L, policy, hooked, data, split=1):
        self.L = L
        self.s = L.sim_new(policy, hooked, data.ctypes.data, split)
        assert self.s

    def call(self, a):
        L, s, k = self.L, self.s, a[0]
        out = ctypes.c_int(-1)
        if k == "load":
            rc = L.sim_load(s, *a[1:])
        elif k == "loads":   # one pa_issue_tensor_load_run of the loads a[1] (one map, mode, mbarrier, thread)
            ls = a[1]
            c = np.array([x[4:9] for x in ls], dtype=np.int32)
            d = np.array([x[9] for x in ls], dtype=np.uint32)
            n = ctypes.c_uint32(0)
            rc = L.sim_load_run(s, ls[0][1], ls[0][2], ls[0][3], c.ctypes.data, d.ctypes.data, len(ls), ls[0][10],
                                ctypes.byref(n))
            out.value = n.value
        elif k == "calls":   # the same loads, one call each, stopping at the first that fails
            n = 0
            for x in a[1]:
                rc = L.sim_load(s, *x[1:])
                if rc:
                    break
                n += 1
            else:
                rc = 0
            out.value = n
        elif k == "arrive":
            rc = L.sim_arrive(s, *a[1:])
        elif k == "inval":
            rc = L.sim_inval(s, a[1])
        elif k == "init":
            rc = L.sim_init(s, a[1], 1)
        elif k == "wait":
            rc = L.sim_wait(s, a[1], a[2], ctypes.byref(out))
        elif k == "step":
            rc = L.sim_step(s, ctypes.byref(out))
        elif k == "run":
            rc = L.sim_run(s)
        else:
            L.sim_set_policy(s, a[1])
            rc = 0
        return rc, (L.sim_msg(s).decode() if rc else ""), out.value

    def state(self):
        c = (ctypes.c_uint64 * 4)()
        self.L.sim_counts(self.s, c)
        bars = []
        for b in BAR:
            v = (ctypes.c_int64 * 9)()
            self.L.sim_mbar(self.s, b, v)
            bars.append(tuple(v))
        return tuple(c)[:3], bars, bytes(ctypes.string_at(self.L.sim_smem(self.s), SMEM))

    def records(self):
        c = (ctypes.c_uint64 * 4)()
        self.L.sim_counts(self.s, c)
        return c[3]

    def close(self):
        self.L.sim_free(self.s)


@st.composite
def loads(draw, same=None):
    """One load: mostly good operands of map 0 or 1 (gather4) or 2 (tile), at
    times a broken rule (misaligned column or destination, a box past shared
    memory, a misaligned mbarrier, the wrong mode for the map) or a row in
    no global buffer (rows 40..47) or past the tensor (filled)."""
    k = same[0] if same else draw(st.sampled_from([0, 0, 0, 1, 2]))
    mode = (TILE if k == 2 else GATHER4) if not draw(st.integers(0, 30)) == 0 else (GATHER4 if k == 2 else TILE)
    col = draw(st.sampled_from([0, 8, 64, 128, 192, 200, 4, 240, -8]))
    rows = [draw(st.sampled_from([draw(st.integers(0, 39)), draw(st.integers(48, 63)), draw(st.integers(0, 63)),
                                  draw(st.integers(-3, 70))])) for _ in range(4)]
    dst = same[1] if same else draw(st.integers(0, 23)) * 512
    dst = draw(st.sampled_from([dst, dst, dst, dst + 8, SMEM - 256, dst + 16]))
    bar = same[2] if same else draw(st.sampled_from([BAR[0], BAR[0], BAR[1], 15364]))
    thread = 0 if same or draw(st.integers(0, 5)) else 1
    return ("load", thread, k, mode, col, *rows, dst, bar)


@st.composite
def programs(draw):
    prog = []
    for _ in range(draw(st.integers(1, 24))):
        kind = draw(st.sampled_from(["load", "burst", "burst", "arrive", "arrive", "wait", "step", "run", "inval",
                                     "init", "policy", "phase", "phase", "clean"]))
        if kind == "burst" and draw(st.booleans()):   # the burst as one run call (a "loads" entry)
            k, bar = draw(st.sampled_from([0, 0, 1, 2])), draw(st.sampled_from([BAR[0], BAR[0], BAR[1]]))
            at, mode = draw(st.integers(0, 23)), draw(st.sampled_from([TILE, GATHER4, GATHER4]))
            ls = [draw(loads(same=(k, (at + j) % 24 * 512, bar))) for j in range(draw(st.integers(1, 12)))]
            prog.append(("loads", [x[:3] + (mode,) + x[4:] for x in ls]))
        elif kind == "phase":   # a phase expecting some of a burst's bytes, then a wait on it
            bar = draw(st.sampled_from(BAR))
            prog.append(("arrive", bar, 1, 512 * draw(st.integers(0, 6))))
            at = draw(st.integers(0, 23))
            for j in range(draw(st.integers(1, 8))):
                prog.append(draw(loads(same=(0, (at + j) % 24 * 512, bar))))
            prog.append(("wait", bar, draw(st.integers(0, 1))))
        elif kind == "clean":   # gather4 loads of whole lines inside the tensor, as one run call
            at, bar = draw(st.integers(0, 23)), draw(st.sampled_from([BAR[0], BAR[0], BAR[1]]))
            prog.append(("loads", [("load", 0, 0, GATHER4, draw(st.sampled_from([0, 64, 128, 192])),
                                    *draw(st.lists(st.integers(0, 63), min_size=4, max_size=4)),
                                    (at + j) % 24 * 512, bar) for j in range(draw(st.integers(1, 16)))]))
        elif kind == "load":
            prog.append(draw(loads()))
        elif kind == "burst":   # loads back to back: one map, one mbarrier, consecutive boxes
            k, bar = draw(st.sampled_from([0, 0, 1, 2])), draw(st.sampled_from([BAR[0], BAR[0], BAR[1]]))
            at = draw(st.integers(0, 23))
            for j in range(draw(st.integers(1, 12))):
                prog.append(draw(loads(same=(k, (at + j) % 24 * 512, bar))))
        elif kind == "arrive":
            prog.append(("arrive", draw(st.sampled_from(BAR)), 1, draw(st.integers(0, 16)) * 256))
        elif kind == "wait":
            prog.append(("wait", draw(st.sampled_from(BAR)), draw(st.integers(0, 1))))
        elif kind in ("inval", "init"):
            prog.append((kind, draw(st.sampled_from(BAR))))
        elif kind == "policy":
            prog.append(("policy", draw(st.sampled_from([IN_ORDER, REVERSE]))))
        else:
            prog.append((kind,))
    return prog


def _play(L, prog, policy, seed, split=1):
    data = np.random.default_rng(seed).integers(0, 256, 64 * 512, dtype=np.uint8)
    runs, one = Sim(L, policy, 0, data, split), Sim(L, policy, 1, data, split)
    merged = False
    try:
        for a in prog + [("run",)]:
            got, want = runs.call(a), one.call(("calls", a[1]) if a[0] == "loads" else a)
            assert got == want, f"{a}: runs {got}, one record per load {want}"
            assert runs.state() == one.state(), a
            merged |= runs.records() < one.records()
        return merged
    finally:
        runs.close()
        one.close()


@settings(max_examples=200, **SETTINGS)
@given(prog=programs(), policy=st.sampled_from([IN_ORDER, REVERSE]), seed=st.integers(0, 2**32 - 1))
def test_tensor_load_runs_match_one_record_per_load(lib, prog, policy, seed):
    """Loads kept as a run behave as the same loads one record each: errors
    (at issue and at completion), counts, shared memory, mbarrier state."""
    _play(lib, prog, policy, seed)


@settings(max_examples=200, **SETTINGS)
@given(prog=programs(), policy=st.sampled_from([IN_ORDER, REVERSE]), seed=st.integers(0, 2**32 - 1),
       level=st.sampled_from(LEVELS))
def test_runs_moved_in_one_pass_match_one_record_per_load(lib, cap, prog, policy, seed, level):
    """The tensor whole in one buffer: run() moves a run's gather4 loads of
    whole lines in one pass and credits their bytes at once where no phase
    can complete before the last of them (else load by load); against the
    same loads one record each, at a vector level: errors, counts, shared
    memory, mbarrier state."""
    cap(level)
    _play(lib, prog, policy, seed, split=0)


def _gather4_ref(data, col, rows, dst, smem):
    """Map 0's load (64 bf16 a row, 128B swizzle) at dst, written into smem
    (bytearray): each row's 128 bytes (zero past the tensor) in line
    dst + 128 i, 16-byte chunk c at ((line + 16 c) ^ ((line >> 7) & 7) << 4)."""
    data = bytes(data)
    for i, row in enumerate(rows):
        img = bytearray(128)
        for e in range(64):
            if 0 <= row < 64 and 0 <= col + e < 256:
                img[2 * e:2 * e + 2] = data[row * 512 + 2 * (col + e):row * 512 + 2 * (col + e) + 2]
        line = dst + 128 * i
        for c in range(8):
            at = (line + 16 * c) ^ (((line >> 7) & 7) << 4)
            smem[at:at + 16] = img[16 * c:16 * c + 16]


@settings(max_examples=60, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), level=st.sampled_from(LEVELS), policy=st.sampled_from([IN_ORDER, REVERSE]),
       loads=st.lists(st.tuples(st.sampled_from([0, 8, 64, 128, 192, 200, 240, 248]),
                                st.lists(st.integers(-2, 65), min_size=4, max_size=4),
                                st.integers(0, 29), st.sampled_from([0, 0, 0, 128, 256, 384])),
                      min_size=1, max_size=40))
def test_a_run_moved_in_one_pass_matches_the_reference(lib, cap, seed, level, policy, loads):
    """Gather4 loads of one run (whole lines of a tensor in one buffer, some
    rows or columns past it, some boxes overlapping), run(): shared memory as
    the reference writes the same loads one after another in the policy's
    order, the phase complete and every byte credited."""
    cap(level)
    data = np.random.default_rng(seed).integers(0, 256, 64 * 512, dtype=np.uint8)
    m = Sim(lib, policy, 0, data, split=0)
    try:
        want = bytearray(ctypes.string_at(lib.sim_smem(m.s), SMEM))
        ls = [("load", 0, 0, GATHER4, col, *rows, 512 * box + off, BAR[0]) for col, rows, box, off in loads]
        assert m.call(("arrive", BAR[0], 1, 512 * len(ls)))[0] == 0
        assert m.call(("loads", ls)) == (0, "", len(ls))
        assert m.records() == 1
        assert m.call(("run",))[0] == 0
        for col, rows, box, off in (loads if policy == IN_ORDER else loads[::-1]):
            _gather4_ref(data, col, rows, 512 * box + off, want)
        counts, bars, smem = m.state()
        assert counts == (0, len(ls), len(ls)) and bars[0][1] == 1 and bars[0][4] == 0
        assert smem == bytes(want)
    finally:
        m.close()


def test_a_gather4_loop_is_one_record(lib):
    """64 gather4 loads of one map and mbarrier issued back to back: one
    record, 64 pending; step() completes one (the oldest, or the newest under
    reverse); try_wait completes the rest and the phase."""
    data = np.random.default_rng(1).integers(0, 256, 64 * 512, dtype=np.uint8)
    for policy in (IN_ORDER, REVERSE):
        m = Sim(lib, policy, 0, data)
        try:
            assert m.call(("arrive", BAR[0], 1, 64 * 512))[0] == 0
            rows = [(5 * j) % 40 for j in range(64)]
            for j in range(64):
                assert m.call(("load", 0, 0, GATHER4, 64, rows[j], rows[j] + 1, rows[j] + 2, 63 - j % 16,
                               512 * (j % 24), BAR[0]))[0] == 0
            counts, bars, _ = m.state()
            assert m.records() == 1 and counts == (64, 64, 0) and bars[0][7:] == (64, 64 * 512)
            assert m.call(("step",))[0] == 0
            counts, bars, _ = m.state()
            assert counts == (63, 64, 1) and m.records() == 1 and bars[0][4] == 63 * 512
            rc, _, result = m.call(("wait", BAR[0], 0))
            assert rc == 0 and result == 1
            counts, bars, smem = m.state()
            assert counts == (0, 64, 64) and bars[0][1] == 1
            # the last box written at 512 * (63 % 24): rows in order, the 128B swizzle of each line
            j = 63 if policy == IN_ORDER else 15
            for r, row in enumerate((rows[j], rows[j] + 1, rows[j] + 2, 63 - j % 16)):
                line = 512 * (j % 24) + 128 * r
                x = ((line >> 7) & 7) << 4
                got = b"".join(smem[(line + 16 * c) ^ x:((line + 16 * c) ^ x) + 16] for c in range(8))
                assert got == bytes(data[row * 512 + 128:row * 512 + 256]), (policy, r)
        finally:
            m.close()


def test_a_fault_at_completion_leaves_the_later_loads_pending(lib):
    """Load 3 of a run of 6 reads a row in no global buffer: run() stops
    there naming it, loads 0..2 have landed and credited, 4..5 are pending."""
    data = np.random.default_rng(2).integers(0, 256, 64 * 512, dtype=np.uint8)
    m = Sim(lib, IN_ORDER, 0, data)
    try:
        assert m.call(("arrive", BAR[0], 1, 6 * 512))[0] == 0
        for j in range(6):
            row = 44 if j == 3 else j
            assert m.call(("load", 0, 0, GATHER4, 0, row, row, row, row, 512 * j, BAR[0]))[0] == 0
        assert m.records() == 1
        rc, msg, _ = m.call(("run",))
        assert rc != 0 and "no registered global buffer" in msg, msg
        counts, bars, _ = m.state()
        assert counts == (2, 6, 4) and bars[0][4] == 3 * 512 and bars[0][7:] == (2, 2 * 512)
    finally:
        m.close()
