"""A stateful fuzz of the Python API (hypothesis RuleBasedStateMachine).

The state is a Machine, global buffers filled with random sentinel bytes,
tensor maps (valid, edited and nonsense), mbarriers and pending operations.
Every call gets hostile arguments now and then (values past 2^32 and 2^64,
negative, floats, overlapping and wrapping ranges). After every step:

- no byte changed outside the ranges of the operations issued since the
  queue was last empty (shared memory and every registered buffer compared
  with a shadow copy);
- a call that raised at issue changed nothing: memory, pending operations,
  the buffer list and the state of every mbarrier;
- every error is a ptxasync exception or TypeError / ValueError /
  OverflowError / IndexError with a message (an out-of-range integer names
  its parameter and range).

A short run is part of the test suite; PTXASYNC_FUZZ_EXAMPLES=N runs N
examples (PTXASYNC_FUZZ_STEPS steps each) and prints the number of calls
made (docs/robustness.md gives the long run).
"""
import os
import re
import sys

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, multiple, rule

import ptxasync as pa

EXAMPLES = int(os.environ.get("PTXASYNC_FUZZ_EXAMPLES", "25"))
STEPS = int(os.environ.get("PTXASYNC_FUZZ_STEPS", "40"))
SMEM = 8192
CALLS = [0]
OUTCOMES = {}   # (caller, "ok" | exception name) -> count, printed by long runs

ALLOWED = (pa.PtxAsyncError, TypeError, ValueError, OverflowError, IndexError)
UNNAMED = re.compile(r"^'\w+' object cannot be interpreted|^Python int too large|^int\(\) argument must be|"
                     r"^an integer is required|^argument \d+ must be")

hostile = st.sampled_from([-1, -16, 2**31, 2**32, 2**32 + 8, 2**63, 2**64 - 1, 2**64, 2**64 + 16, -2**63 - 1,
                           1.5, None])


def h(valid):
    """Mostly valid values, now and then a hostile one."""
    return st.one_of(*[valid] * 15, hostile)


smem_addr = h(st.one_of(st.integers(0, SMEM // 16).map(lambda a: 16 * a), st.integers(0, SMEM + 64)))
gaddr = h(st.one_of(st.sampled_from([0, 0x1000, 0x7f0000000000, 2**63, 2**64 - 4096]),
                    st.integers(0, 2**64 - 1)))
small = h(st.integers(0, 64))
coord = h(st.one_of(st.integers(-8, 40).map(lambda c: 16 * c), st.integers(-40, 200),
                    st.sampled_from([2**24, 2**31 - 1, -2**31])))
dtypes = st.sampled_from(["uint8", "uint16", "uint32", "float32", "int64"])
swizzles = st.sampled_from(["NONE", "NONE", "32B", "64B", "128B"])
ESIZE = {"uint8": 1, "uint16": 2, "uint32": 4, "float32": 4, "int64": 8}


class ApiFuzz(RuleBasedStateMachine):
    buffers = Bundle("buffers")
    maps = Bundle("maps")

    def __init__(self):
        super().__init__()
        self.m = None

    @initialize(ctas=st.sampled_from([1, 2]), arch=st.sampled_from(["sm_90a", "sm_100a"]))
    def machine(self, ctas, arch):
        # two CTAs and sm_100a reach st.async and st.bulk; CTA 0's shared memory is checked
        self.m = pa.Machine(ctas=ctas, smem_bytes=SMEM, target=arch)
        self.rng = np.random.default_rng(len(CALLS))
        self.m.smem[:] = self.rng.integers(0, 256, SMEM, dtype=np.uint8)
        self.shadow_smem = self.m.smem.copy()
        self.shadow = {}          # GlobalBuffer -> bytes expected
        self.ranges = []          # (buffer or None for smem, lo, hi) that pending ops may write
        self.bars = set()         # mbarrier addresses ever named
        self.immediate = False    # policy "immediate": operations complete at issue

    # --- helpers --------------------------------------------------------------
    def snapshot(self):
        bars = {}
        for a in sorted(a for a in self.bars if type(a) is int):
            try:
                bars[a] = self.m._m.mbar_state(0, a)
            except ALLOWED as e:
                bars[a] = str(e)
        return (b"".join(c.smem.tobytes() for c in self.m.ctas), {id(b): b.bytes.tobytes() for b in self.m._buffers},
                list(self.m._buffers), self.m.pending, bars)

    def call(self, fn, *, completes=False):
        """Run one API call; an error must be an allowed type with a message,
        and (unless it completes operations) leave everything unchanged."""
        CALLS[0] += 1
        before = None if completes else self.snapshot()
        caller = sys._getframe(1).f_code.co_name
        try:
            r = fn()
            OUTCOMES[(caller, "ok")] = OUTCOMES.get((caller, "ok"), 0) + 1
            return r
        except ALLOWED as e:
            OUTCOMES[(caller, type(e).__name__)] = OUTCOMES.get((caller, type(e).__name__), 0) + 1
            msg = str(e)
            assert msg, f"{type(e).__name__} without a message"
            # CPython's own conversion errors name no parameter: every call site converts first
            assert not UNNAMED.search(msg), f"{type(e).__name__} names no parameter: {msg}"
            if before is not None:
                assert self.snapshot() == before, f"{type(e).__name__}: {msg} changed the machine"
            return None

    def may_write(self, target, lo, hi):
        # a non-integer bound belongs to a call that must raise and change nothing
        if type(lo) is int and type(hi) is int:
            self.ranges.append((target, max(lo, 0), hi))

    # --- memory ---------------------------------------------------------------
    @rule(target=buffers, size=st.integers(1, 2048), address=st.one_of(st.none(), gaddr),
          align=st.one_of(st.sampled_from([16, 256, 4096, 2**63]), small))
    def register(self, size, address, align):
        arr = self.rng.integers(0, 256, size, dtype=np.uint8)
        b = self.call(lambda: self.m.register(arr, address=address, align=align))
        if b is None:
            return multiple()
        assert b.bytes.ctypes.data == arr.ctypes.data and b.nbytes == size
        self.shadow[b] = arr.copy()
        return b

    @rule(buf=buffers)
    def free(self, buf):
        self.call(buf.free)
        self.shadow.pop(buf, None)

    @rule(offset=st.integers(0, SMEM - 1), data=st.binary(min_size=1, max_size=64))
    def write_smem(self, offset, data):
        n = min(len(data), SMEM - offset)
        self.m.smem[offset:offset + n] = np.frombuffer(data[:n], np.uint8)
        self.shadow_smem[offset:offset + n] = self.m.smem[offset:offset + n]

    @rule(bad=st.sampled_from(["object", "smem", "readonly", "empty", "noncontig"]))
    def register_unusable(self, bad):
        arr = {"object": lambda: np.empty(3, object), "smem": lambda: self.m.smem[16:64],
               "readonly": lambda: np.frombuffer(b"abcd", np.uint8), "empty": lambda: np.zeros(0, np.uint8),
               "noncontig": lambda: np.zeros(64, np.uint8)[::2]}[bad]()
        assert self.call(lambda: self.m.register(arr)) is None
        assert self.call(lambda: self.m._m.add_buffer(0x100, arr)) is None

    # --- tensor maps ------------------------------------------------------------
    @rule(target=maps, buf=st.one_of(buffers, buffers, st.none()), addr=gaddr, offset=st.integers(-64, 256),
          dtype=dtypes, dim0=st.integers(1, 96), dim1=st.integers(1, 40),
          stride=h(st.integers(1, 40).map(lambda x: 16 * x)), box_bytes=st.sampled_from([16, 32, 64, 128, 24]),
          box1=st.integers(1, 16), rank=st.sampled_from([1, 2, 2, 3]), swizzle=swizzles,
          es=st.integers(1, 3))
    def make_map(self, buf, addr, offset, dtype, dim0, dim1, stride, box_bytes, box1, rank, swizzle, es):
        base = (buf.address + (offset & ~15)) if buf is not None else addr
        box0 = max(1, box_bytes // ESIZE[dtype])
        s2 = stride * dim1 if isinstance(stride, int) else stride
        dims, strides, box = [dim0, dim1, 2][:rank], [stride, s2][:rank - 1], [box0, box1, 1][:rank]
        ess = [1, es, 1][:rank]
        tm = self.call(lambda: pa.TensorMap.tiled(dtype, base, dims, strides, box, element_strides=ess,
                                                  swizzle=swizzle))
        return tm if tm is not None else multiple()

    @rule(tm=maps, field=st.sampled_from(["global_address", "rank", "box_dim", "global_dim",
                                          "global_stride", "element_stride", "elemtype",
                                          "interleave", "swizzle", "fill"]),
          value=h(st.integers(0, 300)), ord=h(st.integers(0, 5)))
    def replace(self, tm, field, value, ord):
        before = bytes(tm)
        if self.call(lambda: tm.replace(field, value, ord=ord)) is None:
            assert bytes(tm) == before, "a refused replace changed the map"
        hasattr(tm, "no_such_field")   # never raises

    # --- copies -------------------------------------------------------------------
    def _global_span(self, tm, coords, store):
        """Global bytes a copy through tm at coords may touch (conservative)."""
        f = tm.fields
        if f["interleave"] != 0 or f["kind"] != "tiled":
            return None                                   # anywhere: not tracked
        e = max(1, pa._core.dtype_info(int(f["dtype"]))["bytes"])
        lo = hi = f["global_address"]
        for i, (c, n, s) in enumerate(zip(coords, f["box_dim"], f["element_strides"])):
            last = c + (n - 1) * s
            first, last = max(c, 0), min(last, f["global_dim"][i] - 1)
            if first > last:
                return (0, 0)
            unit = e if i == 0 else f["global_strides"][i - 1]
            lo += first * unit
            hi += last * unit
        return (lo, hi + e + 16)

    def _track_global(self, span):
        for b in list(self.shadow):
            if span is None:
                self.may_write(b, 0, b.nbytes)
            else:
                self.may_write(b, span[0] - b.address, span[1] - b.address)

    @rule(tm=maps, coords=st.lists(coord, min_size=1, max_size=3), dst=smem_addr,
          mbar=h(st.sampled_from([0, 8, 4096])), raw=st.booleans())
    def load(self, tm, coords, dst, mbar, raw):
        self.bars.add(mbar)
        if type(dst) is int and type(mbar) is int:
            try:
                lay = tm.box_layout
                end = dst + (lay["rows"] - 1) * lay["pitch"] + lay["row_bytes"]
                if lay["swizzle"]:   # a swizzle moves bytes within the 128-byte lines it touches
                    dst, end = dst & ~127, end + 127
            except Exception:
                dst, end = 0, SMEM
            self.may_write(None, dst, end)
            self.may_write(None, mbar, mbar + 8)
        if raw:
            self.call(lambda: self.m._m.tile_load(0, 0, tm, coords, dst, False, mbar, False, 0),
                      completes=self.immediate)
        else:
            self.call(lambda: self.m.cp_async_bulk_tensor_load(tm, coords, dst, mbar), completes=self.immediate)

    @rule(tm=maps, coords=st.lists(coord, min_size=1, max_size=3), src=smem_addr,
          op=st.sampled_from([None, "add", "min", "max", "and", "inc"]))
    def store(self, tm, coords, src, op):
        try:
            span = self._global_span(tm, list(coords) + [0] * 5, True)
        except Exception:
            span = None
        self._track_global(span)
        if op is None:
            self.call(lambda: self.m.cp_async_bulk_tensor_store(tm, coords, src), completes=self.immediate)
        else:
            self.call(lambda: self.m.cp_reduce_async_bulk_tensor(op, tm, coords, src), completes=self.immediate)

    @rule(buf=st.one_of(st.none(), buffers), addr=gaddr, offset=st.integers(-32, 2048),
          src=smem_addr, size=h(st.sampled_from([16, 32, 64, 256])),
          op=st.sampled_from(["add", "min", "and", "inc"]), type=st.sampled_from(["u32", "s32", "u64", "f32"]))
    def bulk_reduce(self, buf, addr, offset, src, size, op, type):
        dst = buf.address + offset if buf is not None else addr
        if isinstance(dst, int) and isinstance(size, int):
            self._track_global((dst, dst + size))
        self.call(lambda: self.m.cp_reduce_async_bulk(op, type, dst, src, size), completes=self.immediate)

    # --- cp.async, cp.async.bulk, st.async, st.bulk ------------------------------------
    def _global_dst(self, buf, addr, offset):
        return buf.address + offset if buf is not None else addr

    @rule(dst=smem_addr, buf=st.one_of(buffers, st.none()), addr=gaddr, offset=st.integers(-32, 2048),
          cp_size=h(st.sampled_from([4, 8, 16, 3])), cache=st.sampled_from(["ca", "cg"]),
          src_size=st.one_of(st.none(), h(st.integers(0, 16))))
    def cp_async(self, dst, buf, addr, offset, cp_size, cache, src_size):
        if type(dst) is int:
            self.may_write(None, dst, dst + 16)
        src = self._global_dst(buf, addr, offset)
        self.call(lambda: self.m.cp_async(dst, src, cp_size, cache=cache, src_size=src_size),
                  completes=self.immediate)

    @rule(what=st.sampled_from(["commit", "wait", "all", "arrive"]), n=h(st.integers(0, 2)),
          mbar=h(st.sampled_from([0, 8, 4096])))
    def cp_async_group(self, what, n, mbar):
        if what == "commit":
            self.call(self.m.cp_async_commit_group)
        elif what == "wait":
            self.call(lambda: self.m.cp_async_wait_group(n), completes=True)
        elif what == "all":
            self.call(self.m.cp_async_wait_all, completes=True)
        else:
            self.bars.add(mbar)
            self.call(lambda: self.m.cp_async_mbarrier_arrive(mbar))

    @rule(to_global=st.booleans(), sh=smem_addr, buf=st.one_of(buffers, st.none()), addr=gaddr,
          offset=st.integers(-32, 2048), size=h(st.sampled_from([16, 32, 64, 256, 24])),
          mbar=h(st.sampled_from([0, 8, 4096])))
    def bulk_copy(self, to_global, sh, buf, addr, offset, size, mbar):
        g = self._global_dst(buf, addr, offset)
        if type(size) is int:
            if to_global and type(g) is int:
                self._track_global((g, g + size))
            elif type(sh) is int:
                self.may_write(None, sh, sh + size)
                if type(mbar) is int:
                    self.may_write(None, mbar, mbar + 8)
        self.bars.add(mbar)
        if to_global:
            self.call(lambda: self.m.cp_async_bulk(g, sh, size, dst_space="global", src_space="shared::cta"),
                      completes=self.immediate)
        else:
            self.call(lambda: self.m.cp_async_bulk(sh, g, size, mbar=mbar), completes=self.immediate)

    @rule(dst=smem_addr, value=h(st.integers(0, 2**32 - 1)), mbar=h(st.sampled_from([0, 8, 4096])))
    def st_async(self, dst, value, mbar):
        if type(dst) is int:
            self.may_write(None, dst, dst + 16)
        self.bars.add(mbar)
        self.call(lambda: self.m.st_async(dst, value, mbar), completes=self.immediate)

    @rule(buf=st.one_of(buffers, buffers, st.none()), addr=gaddr,
          offset=st.one_of(st.integers(0, 7).map(lambda a: 8 * a), st.integers(-16, 2048)),
          value=h(st.integers(0, 255)), ty=st.sampled_from(["u8", "b16", "u32", "f64", "u32", "v2"]),
          scope=st.sampled_from(["gpu", "sys", "sys", "cluster"]), mmio=st.booleans())
    def st_async_release(self, buf, addr, offset, value, ty, scope, mmio):
        g = self._global_dst(buf, addr, offset)
        if type(g) is int:
            self._track_global((g, g + 8))
        self.call(lambda: self.m.st_async_release(g, value, type=ty, scope=scope, mmio=mmio),
                  completes=self.immediate)

    @rule(thread=st.one_of(st.none(), h(st.integers(0, 2))), cta=h(st.integers(0, 2)))
    def exit(self, thread, cta):
        # completes what it leaves (report mode) or raises never-waited, changing nothing
        self.call(lambda: self.m.exit(cta=cta, thread=thread), completes=True)

    @rule(dst=smem_addr, size=h(st.sampled_from([8, 64, 256])))
    def st_bulk(self, dst, size):
        if type(dst) is int and type(size) is int:
            self.may_write(None, dst, dst + size)
        self.call(lambda: self.m.st_bulk(dst, size))

    # --- mbarriers -------------------------------------------------------------------
    @rule(addr=h(st.sampled_from([0, 8, 4096])), count=h(st.one_of(st.integers(0, 4), st.sampled_from([2**20 - 1, 2**20]))))
    def mbar_init(self, addr, count):
        self.bars.add(addr)
        if type(addr) is int:
            self.may_write(None, addr, addr + 8)
        self.call(lambda: self.m._m.mbar_init(0, addr, count))

    @rule(addr=h(st.sampled_from([0, 8, 4096])), count=small, tx=h(st.integers(0, 4096)),
          flags=st.sampled_from([0, 0, 0, 1, 2, 3, 4, -1]))
    def mbar_arrive(self, addr, count, tx, flags):
        self.bars.add(addr)
        self.call(lambda: self.m._m.mbar_arrive(0, addr, count, tx, flags))

    @rule(addr=h(st.sampled_from([0, 8, 4096])), tx=h(st.integers(0, 4096)), complete=st.booleans())
    def mbar_tx(self, addr, tx, complete):
        self.bars.add(addr)
        bar = self.m.mbarrier(0)
        bar.addr = addr
        self.call(lambda: bar.complete_tx(tx) if complete else bar.expect_tx(tx))

    @rule(addr=h(st.sampled_from([0, 8, 4096])), parity=h(st.integers(0, 1)), wait=st.booleans())
    def mbar_wait(self, addr, parity, wait):
        self.bars.add(addr)
        if wait:
            self.call(lambda: self.m._m.mbar_try_wait(0, addr, parity), completes=True)
        else:
            self.call(lambda: self.m._m.mbar_test_wait(0, addr, parity))

    @rule(addr=h(st.sampled_from([0, 8, 4096])))
    def mbar_inval(self, addr):
        self.bars.add(addr)
        self.call(lambda: self.m._m.mbar_inval(0, addr))

    # --- completion ---------------------------------------------------------------------
    @rule()
    def commit(self):
        self.call(self.m.cp_async_bulk_commit_group)

    @rule(n=h(st.integers(0, 2)))
    def wait_group(self, n):
        self.call(lambda: self.m.cp_async_bulk_wait_group(n), completes=True)

    @rule()
    def step(self):
        self.call(self.m.step, completes=True)

    @rule()
    def run(self):
        self.call(self.m.run, completes=True)

    @rule(policy=st.sampled_from(["in_order", "reverse", "random", "immediate", "nonsense"]),
          seed=h(st.integers(0, 10)))
    def policy(self, policy, seed):
        if self.call(lambda: self.m.set_policy(policy, seed)) is None and policy != "nonsense" \
                and type(seed) is int and 0 <= seed < 2**64:
            self.immediate = policy == "immediate"   # issue then also completes (and may fail there)

    # --- invariants ----------------------------------------------------------------------
    @invariant()
    def nothing_written_outside_the_ranges(self):
        if self.m is None:
            return
        smem_ok = np.ones(SMEM, bool)
        for t, lo, hi in self.ranges:
            if t is None:
                smem_ok[max(lo, 0):max(min(hi, SMEM), 0)] = False
        changed = np.nonzero((self.m.smem != self.shadow_smem) & smem_ok)[0]
        assert not len(changed), f"shared memory byte {changed[0]} written outside any operation's range"
        for b, want in self.shadow.items():
            ok = np.ones(b.nbytes, bool)
            for t, lo, hi in self.ranges:
                if t is b:
                    ok[max(lo, 0):max(min(hi, b.nbytes), 0)] = False
            bad = np.nonzero((b.bytes != want) & ok)[0]
            assert not len(bad), f"byte {bad[0]} of {b} written outside any operation's range"
            want[:] = b.bytes
        self.shadow_smem[:] = self.m.smem
        if self.m.pending == 0:
            self.ranges = []

    def teardown(self):
        self.m = None


ApiFuzz.TestCase.settings = settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
                                     suppress_health_check=list(HealthCheck), derandomize=EXAMPLES <= 25)
test_api_fuzz = ApiFuzz.TestCase


def teardown_module(module):
    if "PTXASYNC_FUZZ_EXAMPLES" in os.environ:
        print(f"\nptxasync API fuzz: {CALLS[0]} calls in {EXAMPLES} examples of up to {STEPS} steps",
              file=sys.stderr)
        for (caller, what), n in sorted(OUTCOMES.items()):
            print(f"  {caller:20s} {what:20s} {n}", file=sys.stderr)
