"""cp.async runs (csrc/core/engine/cprun.c): on a machine with nothing hung on
its queue, copies that continue one another are one record, and
pa_issue_cp_async_run issues a thread's copy loop in one call. Driven through
a small ctypes shim (cp_runs_shim.c) over the C core, against a slow
reference written here: one record per copy, each reading its source when it
completes, in the policy's order. Expected bytes, counts and errors come
from the reference only."""
import ctypes
import os
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core_shim import build_shim

SMEM = 4096
GBASE = 0x10000
G1 = G2 = 2048          # two adjacent buffers: a run across their border is two moves
IN_ORDER, REVERSE = 1, 2
INVALID_VALUE, ILLEGAL_ADDRESS, MISALIGNED = 1, 3, 4
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    L = build_shim(tmp_path_factory, os.path.join(os.path.dirname(__file__), "cp_runs_shim.c"), "cpruns")
    u32, u64, i = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int
    L.sim_new.restype = ctypes.c_void_p
    L.sim_new.argtypes = [u32, i]
    L.sim_free.argtypes = [ctypes.c_void_p]
    L.sim_set_policy.argtypes = [ctypes.c_void_p, i]
    L.sim_global.argtypes = [ctypes.c_void_p, u64, u64, ctypes.c_void_p]
    L.sim_cp.argtypes = [ctypes.c_void_p, u32, u32, u64, u32, u32, i, i]
    L.sim_run.argtypes = [ctypes.c_void_p, u32, u32, u32, u64, u64, u32, u32, u32, i, i]
    L.sim_commit.argtypes = [ctypes.c_void_p, u32]
    L.sim_wait.argtypes = [ctypes.c_void_p, u32, u32]
    L.sim_step.argtypes = [ctypes.c_void_p, ctypes.POINTER(i)]
    L.sim_run_all.argtypes = [ctypes.c_void_p]
    for f in ("sim_pending", "sim_records", "sim_issued", "sim_completed"):
        getattr(L, f).restype = u64
        getattr(L, f).argtypes = [ctypes.c_void_p]
    L.sim_smem.restype = ctypes.POINTER(ctypes.c_uint8)
    L.sim_smem.argtypes = [ctypes.c_void_p]
    L.sim_msg.restype = ctypes.c_char_p
    L.sim_msg.argtypes = [ctypes.c_void_p]
    L.sim_code.argtypes = [ctypes.c_void_p]
    return L


class Sim:
    """The C machine, its two global buffers (numpy arrays it reads in place)."""

    def __init__(self, L, policy, seed):
        self.L = L
        self.s = L.sim_new(SMEM, policy)
        assert self.s
        rng = np.random.default_rng(seed)
        self.bufs = [rng.integers(0, 256, G1, dtype=np.uint8), rng.integers(0, 256, G2, dtype=np.uint8)]
        for base, b in ((GBASE, self.bufs[0]), (GBASE + G1, self.bufs[1])):
            assert L.sim_global(self.s, base, len(b), b.ctypes.data) == 0

    def smem(self):
        return bytes(ctypes.string_at(self.L.sim_smem(self.s), SMEM))

    def counts(self):
        L = self.L
        return L.sim_pending(self.s), L.sim_issued(self.s), L.sim_completed(self.s)

    def close(self):
        self.L.sim_free(self.s)


class Ref:
    """One record per cp.async; the source is read when the copy completes."""

    def __init__(self, policy, bufs):
        self.policy = policy
        self.bufs = bufs
        self.smem = bytearray(SMEM)
        self.pending = []                 # [seq, thread, dst, src, cp, nread, group]
        self.seq = 0
        self.completed = 0
        self.ncommitted = defaultdict(int)

    def gread(self, addr, n):
        for base, b in ((GBASE, self.bufs[0]), (GBASE + G1, self.bufs[1])):
            if base <= addr and addr + n <= base + len(b):
                return bytes(b[addr - base:addr - base + n])
        return None

    def check(self, dst, src, cp, src_size, ignore, cg):
        """PTX ISA cp.async: the rules in the order the model checks them."""
        if cp not in (4, 8, 16) or (cg and cp != 16) or src_size > cp:
            return INVALID_VALUE
        if dst % cp or src % cp:
            return MISALIGNED
        if dst + cp > SMEM:
            return ILLEGAL_ADDRESS
        nread = 0 if ignore else src_size
        if nread and self.gread(src, nread) is None:
            return ILLEGAL_ADDRESS
        return 0

    def cp(self, t, dst, src, cp, src_size, ignore, cg):
        err = self.check(dst, src, cp, src_size, ignore, cg)
        if not err:
            self.pending.append([self.seq, t, dst, src, cp, 0 if ignore else src_size, None])
            self.seq += 1
        return err

    def run(self, t, dst, ds, src, ss, n, cp, src_size, ignore, cg):
        at = [(dst + k * ds, src + k * ss) for k in range(n)]
        for d, s in at:
            if d >= 2**32:
                return ILLEGAL_ADDRESS
            err = self.check(d, s, cp, src_size, ignore, cg)
            if err:
                return err   # the first copy that breaks a rule; none issued
        for d, s in at:
            self.cp(t, d, s, cp, src_size, ignore, cg)
        return 0

    def complete(self, op):
        self.pending.remove(op)
        _, _, dst, src, cp, nread, _ = op
        self.smem[dst:dst + nread] = self.gread(src, nread) if nread else b""
        self.smem[dst + nread:dst + cp] = bytes(cp - nread)
        self.completed += 1

    def pick(self, ops):
        return min(ops) if self.policy == IN_ORDER else max(ops)

    def step(self):
        if self.pending:
            self.complete(self.pick(self.pending))

    def run_all(self):
        while self.pending:
            self.step()

    def commit(self, t):
        for op in self.pending:
            if op[1] == t and op[6] is None:
                op[6] = self.ncommitted[t]
        self.ncommitted[t] += 1

    def wait(self, t, n):
        limit = self.ncommitted[t] - n
        while True:
            old = [op for op in self.pending if op[1] == t and op[6] is not None and op[6] < limit]
            if not old:
                return
            self.complete(self.pick(old))


@st.composite
def programs(draw):
    """cp.async copies (half of them continuing the last one), runs, commits,
    waits, steps and writes to the global source, by two threads."""
    prog, last = [], None
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["cp", "cp", "cp", "run", "run", "commit", "wait", "step", "all", "poke"]))
        t = draw(st.integers(0, 1))
        cp = draw(st.sampled_from([4, 8, 16, 16]))
        src_size = draw(st.sampled_from([cp, cp, cp, 0, cp // 2, cp + 4]))
        ignore, cg = draw(st.booleans()) and not draw(st.integers(0, 4)), cp == 16 and draw(st.booleans())
        if kind == "cp" and last and draw(st.booleans()):      # the next cp-size bytes of both
            t, dst, src, cp, src_size, ignore, cg = last
            dst, src = dst + cp, src + cp
            prog.append(("cp", t, dst, src, cp, src_size, ignore, cg))
        elif kind == "cp":
            dst = draw(st.integers(0, SMEM // 4 + 4)) * 4
            src = GBASE - 16 + draw(st.integers(0, (G1 + G2 + 32) // 4)) * 4
            prog.append(("cp", t, dst, src, cp, src_size, ignore, cg))
        elif kind == "run":
            n = draw(st.integers(0, 48))
            ds = draw(st.sampled_from([cp, cp, 2 * cp, 0, 48]))
            ss = draw(st.sampled_from([cp, cp, 2 * cp, 0, 4]))
            dst = draw(st.integers(0, SMEM // 16)) * 16
            src = GBASE - 16 + draw(st.integers(0, (G1 + G2 + 32) // 16)) * 16
            prog.append(("run", t, dst, ds, src, ss, n, cp, src_size, ignore, cg))
            last = (t, dst + ds * (n - 1), src + ss * (n - 1), cp, src_size, ignore, cg) if n else last
            continue
        elif kind == "commit":
            prog.append(("commit", t))
        elif kind == "wait":
            prog.append(("wait", t, draw(st.integers(0, 2))))
        elif kind == "poke":
            prog.append(("poke", draw(st.integers(0, 1)), draw(st.integers(0, G1 - 1)), draw(st.integers(0, 255))))
        else:
            prog.append((kind,))
        if kind == "cp":
            last = prog[-1][1:]
    return prog


def _play(L, prog, policy, seed):
    m = Sim(L, policy, seed)
    r = Ref(policy, m.bufs)   # the same arrays: a poke reaches both
    try:
        for a in prog:
            k = a[0]
            if k == "cp":
                got, want = L.sim_cp(m.s, *a[1:]), r.cp(*a[1:])
            elif k == "run":
                got, want = L.sim_run(m.s, *a[1:]), r.run(*a[1:])
            elif k == "commit":
                got, want = L.sim_commit(m.s, a[1]), r.commit(a[1]) or 0
            elif k == "wait":
                got, want = L.sim_wait(m.s, a[1], a[2]), r.wait(a[1], a[2]) or 0
            elif k == "step":
                done = ctypes.c_int(0)
                got, want = L.sim_step(m.s, ctypes.byref(done)), r.step() or 0
            elif k == "all":
                got, want = L.sim_run_all(m.s), r.run_all() or 0
            else:
                m.bufs[a[1]][a[2]] = a[3]
                continue
            assert got == want, f"{a}: model {got} ({L.sim_msg(m.s)}), reference {want}"
            assert m.counts() == (len(r.pending), r.seq, r.completed), a
            assert m.smem() == bytes(r.smem), a
        L.sim_run_all(m.s)
        r.run_all()
        assert m.smem() == bytes(r.smem)
        return L.sim_records(m.s)
    finally:
        m.close()


@settings(max_examples=150, **SETTINGS)
@given(prog=programs(), policy=st.sampled_from([IN_ORDER, REVERSE]), seed=st.integers(0, 2**32 - 1))
def test_cp_async_runs_match_one_record_per_copy(lib, prog, policy, seed):
    """After every call: the same error (PTX ISA cp.async rules, the first
    broken copy of a run), the same pending / issued / completed counts and the
    same shared memory as one record per copy (sources read at completion),
    whether the copies were merged or not, under in_order and reverse."""
    _play(lib, prog, policy, seed)


def test_a_contiguous_copy_loop_is_one_record(lib):
    """Whole 16-byte copies continuing one another, one call each or one run:
    one record, every copy pending; step() completes them one at a time from the
    oldest (in_order) or the newest (reverse); wait_all moves them all."""
    for policy in (IN_ORDER, REVERSE):
        for as_run in (False, True):
            m = Sim(lib, policy, 5)
            try:
                n = 128 if not as_run else 96
                if as_run:
                    assert lib.sim_run(m.s, 0, 0, 16, GBASE, 16, n, 16, 16, 0, 1) == 0
                else:
                    for k in range(n):
                        assert lib.sim_cp(m.s, 0, 16 * k, GBASE + 16 * k, 16, 16, 0, 1) == 0
                assert lib.sim_records(m.s) == 1 and m.counts() == (n, n, 0)
                done = ctypes.c_int(0)
                assert lib.sim_step(m.s, ctypes.byref(done)) == 0 and done.value
                first = 0 if policy == IN_ORDER else 16 * (n - 1)
                s = m.smem()
                assert s[first:first + 16] == bytes(m.bufs[0][first:first + 16])
                assert s.count(0) == SMEM - 16 + s[first:first + 16].count(0)
                assert m.counts() == (n - 1, n, 1) and lib.sim_records(m.s) == 1
                assert lib.sim_commit(m.s, 0) == 0 and lib.sim_wait(m.s, 0, 0) == 0
                assert m.smem()[:16 * n] == bytes(m.bufs[0][:16 * n]) and m.counts() == (0, n, n)
            finally:
                m.close()


def test_runs_across_buffers_and_threads_stay_apart(lib):
    """A run that crosses from one global buffer into the next, or a copy by
    another thread or of other qualifiers, starts a new record."""
    m = Sim(lib, IN_ORDER, 9)
    try:
        assert lib.sim_run(m.s, 0, 0, 16, GBASE + G1 - 64, 16, 8, 16, 16, 0, 1) == 0
        assert lib.sim_records(m.s) == 2          # [G1 - 64, G1) and [G1, G1 + 64)
        assert lib.sim_cp(m.s, 1, 128, GBASE + G1 + 64, 16, 16, 0, 1) == 0   # another thread
        assert lib.sim_cp(m.s, 1, 144, GBASE + G1 + 80, 16, 16, 0, 0) == 0   # .ca after .cg
        assert lib.sim_cp(m.s, 1, 160, GBASE + G1 + 96, 16, 8, 0, 0) == 0    # zero-filled
        assert lib.sim_records(m.s) == 5 and m.counts() == (11, 11, 0)
        assert lib.sim_run_all(m.s) == 0
        s = m.smem()
        assert s[:64] == bytes(m.bufs[0][-64:]) and s[64:160] == bytes(m.bufs[1][:96])
        assert s[160:176] == bytes(m.bufs[1][96:104]) + bytes(8)
    finally:
        m.close()


def test_a_run_that_breaks_a_rule_issues_nothing(lib):
    """The first copy of the run that breaks a rule is named, with the rule,
    and nothing is queued (the model is unchanged)."""
    m = Sim(lib, IN_ORDER, 3)
    try:
        cases = [((0, 0, 16, GBASE, 16, 300, 16, 16, 0, 1), ILLEGAL_ADDRESS, "shared"),   # past smem
                 ((0, 0, 16, GBASE + 3 * G1, 16, 4, 16, 16, 0, 1), ILLEGAL_ADDRESS, "global"),
                 ((0, 0, 20, GBASE, 16, 4, 16, 16, 0, 1), MISALIGNED, "dst 0x14"),
                 ((0, 0, 16, GBASE, 16, 2, 8, 8, 0, 1), INVALID_VALUE, "cp-size 16"),
                 ((0, 0, 16, GBASE + G1 - 32, 16, 4, 16, 16, 0, 1), 0, None),
                 ((0, 0xFFFFFFF0, 16, GBASE, 16, 2, 16, 16, 0, 0), ILLEGAL_ADDRESS, None)]
        for a, code, words in cases:
            before = m.counts()
            assert lib.sim_run(m.s, *a) == code, a
            if code:
                assert m.counts() == before, a
                assert words is None or words in lib.sim_msg(m.s).decode(), lib.sim_msg(m.s)
    finally:
        m.close()
