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
SAMPLES = {}    # (caller, exception name) -> its first message, printed by long runs

ALLOWED = (pa.PtxAsyncError, TypeError, ValueError, OverflowError, IndexError)
PICTURE_CHARS = 2_000_000   # a picture or text of a fuzzed map stays readable
UNNAMED = re.compile(r"^'\w+' object cannot be interpreted|^Python int too large|^int\(\) argument must be|"
                     r"^an integer is required|^argument \d+ must be")

hostile = st.sampled_from([-1, -16, 2**31, 2**32, 2**32 + 8, 2**63, 2**64 - 1, 2**64, 2**64 + 16, -2**63 - 1,
                           1.5, None, float("nan"), "3", np.int64(-1), np.uint64(2**64 - 1), np.float32(2.0)])


def _clean(v, default):
    """v if it is a plain integer of a sane size (of a coordinate or an address), else default."""
    return v if type(v) is int and -2**20 < v < 2**20 else default


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
    oplists = Bundle("oplists")
    some_map = st.one_of(maps, st.integers(0, 4))   # an int: one of the machine's own valid maps (_tm)

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
        # one buffer, a valid map of each kind over it and an mbarrier (at 4096), so that
        # most fuzzed copies reach the engines rather than stop at a missing operand
        arr = self.rng.integers(0, 256, 1 << 16, dtype=np.uint8)
        base = self.m.register(arr, address=0x10000)
        self.shadow[base] = arr.copy()
        sm100 = arch != "sm_90a"
        self.base_maps = [
            pa.TensorMap.tiled("u16", base.address, [64, 64], [128], [32, 4], swizzle="64B"),
            pa.TensorMap.tiled("u8", base.address, [256, 64], [256], [64, 4, 1][:2]),
            pa.TensorMap.im2col("f16", base.address, [16, 8, 8, 2], [32, 256, 2048], [-1, -1], [1, 1], 16, 8),
        ] + ([pa.TensorMap.tiled("u8", base.address, [256, 64], [256], [32, 1], target="sm_100a"),
              pa.TensorMap.im2col_wide("f16", base.address, [32, 16, 8, 2], [64, 1024, 8192], 0, 0, 32, 16,
                                       swizzle="64B")] if sm100 else [])
        self.m._mbar_init(0, 4096, 1)
        self.bars.add(4096)
        self.may_write(None, 4096, 4104)

    def _tm(self, tm):
        """A map from the bundle, or (an int) one of the machine's own valid maps."""
        return self.base_maps[tm % len(self.base_maps)] if isinstance(tm, int) else tm

    # --- helpers --------------------------------------------------------------
    def snapshot(self):
        bars = {}
        for a in sorted(a for a in self.bars if type(a) is int):
            try:
                bars[a] = self.m._mbar_state(0, a)
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
            SAMPLES.setdefault((caller, type(e).__name__), msg[:100])
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
        assert self.call(lambda: self.m._add_buffer(0x100, arr)) is None

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
            c = int(c)   # a NumPy integer of a hostile coordinate: no wrapping here
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

    @rule(tm=some_map, coords=st.lists(coord, min_size=1, max_size=3), dst=smem_addr,
          mbar=h(st.sampled_from([0, 8, 4096])), raw=st.booleans())
    def load(self, tm, coords, dst, mbar, raw):
        tm = self._tm(tm)
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
            self.call(lambda: pa._core.Machine.cp_async_bulk_tensor_load(
                self.m, tm, coords, dst, mbar, 0, 0, "shared::cta", None, "tile"),
                      completes=self.immediate)
        else:
            self.call(lambda: self.m.cp_async_bulk_tensor_load(tm, coords, dst, mbar), completes=self.immediate)

    @rule(tm=some_map, coords=st.lists(coord, min_size=1, max_size=3), src=smem_addr,
          op=st.sampled_from([None, "add", "min", "max", "and", "inc"]))
    def store(self, tm, coords, src, op):
        tm = self._tm(tm)
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
        self.call(lambda: self.m._mbar_init(0, addr, count))

    @rule(addr=h(st.sampled_from([0, 8, 4096])), count=small, tx=h(st.integers(0, 4096)),
          flags=st.sampled_from([0, 0, 0, 1, 2, 3, 4, -1]))
    def mbar_arrive(self, addr, count, tx, flags):
        self.bars.add(addr)
        self.call(lambda: self.m._mbar_arrive(0, addr, count, tx, flags))

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
            self.call(lambda: self.m._mbar_try_wait(0, addr, parity), completes=True)
        else:
            self.call(lambda: self.m._mbar_test_wait(0, addr, parity))

    @rule(addr=h(st.sampled_from([0, 8, 4096])))
    def mbar_inval(self, addr):
        self.bars.add(addr)
        self.call(lambda: self.m._mbar_inval(0, addr))

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

    # --- im2col, im2col::w, gather4 / scatter4 (sm_100a), prefetch ---------------------------
    @rule(target=maps, buf=st.one_of(buffers, st.none()), addr=gaddr, wide=st.booleans(),
          c=st.sampled_from([16, 32, 64]), w=st.integers(1, 12), hgt=st.integers(1, 6), n=st.integers(1, 3),
          lower=st.integers(-4, 2), upper=st.integers(-2, 4), cpp=h(st.sampled_from([16, 32, 64, 8])),
          ppc=st.sampled_from([1, 4, 16, 32, 128]), mode=st.sampled_from(["W", "W", "W128", 2]),
          swizzle=st.sampled_from(["64B", "128B", "128B", "NONE"]), es=st.integers(1, 3))
    def make_im2col_map(self, buf, addr, wide, c, w, hgt, n, lower, upper, cpp, ppc, mode, swizzle, es):
        base = buf.address if buf is not None else addr
        dims = [c, w, hgt, n]
        strides = [2 * c, 2 * c * w, 2 * c * w * hgt]
        if wide:
            tm = self.call(lambda: pa.TensorMap.im2col_wide("f16", base, dims, strides, lower, upper, cpp, ppc,
                                                            mode=mode, swizzle=swizzle, element_strides=[1, es, 1, 1]))
        else:
            tm = self.call(lambda: pa.TensorMap.im2col("f16", base, dims, strides, [lower, lower], [upper, 0],
                                                       cpp, ppc, element_strides=[1, es, 1, 1], swizzle=swizzle))
        return tm if tm is not None else multiple()

    @rule(target=maps, buf=st.one_of(buffers, st.none()), addr=gaddr, rows=st.integers(1, 40),
          cols=st.sampled_from([16, 32, 64, 256]), box0=h(st.sampled_from([16, 32, 64, 8])),
          box1=st.sampled_from([1, 1, 2]), swizzle=swizzles)
    def make_gather_map(self, buf, addr, rows, cols, box0, box1, swizzle):
        base = buf.address if buf is not None else addr
        tm = self.call(lambda: pa.TensorMap.tiled("u8", base, [cols, rows], [cols], [box0, box1], swizzle=swizzle,
                                                  target="sm_100a"))
        return tm if tm is not None else multiple()

    def _box_range(self, tm, dst, mbar):
        """The shared bytes a load of tm at dst may write (conservative), and its mbarrier."""
        if type(dst) is int and type(mbar) is int:
            try:
                span = tm.box_bytes
            except Exception:
                span = SMEM
            # rows narrower than the swizzle span are padded to it: up to 8x (16-byte rows, 128B)
            self.may_write(None, dst & ~1023, dst + 8 * span + 1024)
            self.may_write(None, mbar, mbar + 8)

    @staticmethod
    def _fit(tm, coords, mode, offsets):
        """(coords, mode, offsets) cut to what the map takes: most fuzzed loads then
        reach the engines; the rest keep their random (often wrong) shape."""
        try:
            f = tm.fields
        except Exception:
            return coords, mode or "tile", offsets
        if mode is None:
            mode = {"im2col": "im2col", "im2col_w": "im2col::w", "im2col_w128": "im2col::w::128"}.get(
                f["kind"], "tile::gather4" if f["rank"] == 2 and f["box_dim"][1] == 1 else "tile")
        n = 5 if mode == "tile::gather4" else f["rank"]
        coords = (coords * 5)[:n]
        if mode == "im2col" and isinstance(offsets, list):
            offsets = (offsets * 3 + [0] * 3)[:max(f["rank"] - 2, 0)]
        return coords, mode, offsets

    @rule(tm=some_map, mode=st.sampled_from([None, None, None, "im2col", "im2col::w", "im2col::w::128", "tile::gather4",
                                         "tile"]), fit=st.integers(0, 7),
          coords=st.lists(coord, min_size=1, max_size=5),
          dst=st.one_of(smem_addr, st.sampled_from([0, 1024, 2048, 4096])), mbar=h(st.sampled_from([0, 8, 4096])),
          offsets=st.one_of(st.lists(st.integers(0, 3), max_size=3), st.none(), h(st.integers(0, 3)),
                            st.lists(h(st.integers(0, 70000)), max_size=4)),
          w_halo=h(st.integers(0, 8)), w_offset=h(st.integers(0, 8)),
          cta_group=st.one_of(st.none(), st.none(), h(st.integers(0, 3))),
          multicast=st.one_of(st.none(), st.none(), h(st.integers(0, 3))))
    def load_mode(self, tm, mode, fit, coords, dst, mbar, offsets, w_halo, w_offset, cta_group, multicast):
        tm = self._tm(tm)
        if fit:
            coords, mode, offsets = self._fit(tm, coords, mode, offsets)
        mode = mode or "tile"
        if fit > 3:   # every operand valid (the copy reaches the engine), the values still random
            coords, dst, mbar = [_clean(c, 0) for c in coords], _clean(dst, 0) & ~1023, 4096
            offsets = [_clean(o, 0) & 7 for o in offsets] if isinstance(offsets, list) and mode == "im2col" else None
            w_halo, w_offset, cta_group, multicast = _clean(w_halo, 0) & 7, _clean(w_offset, 0) & 7, None, None
        self.bars.add(mbar)
        self._box_range(tm, dst, mbar)
        self.call(lambda: self.m.cp_async_bulk_tensor_load(tm, coords, dst, mbar, load_mode=mode,
                                                           im2col_offsets=offsets, w_halo=w_halo, w_offset=w_offset,
                                                           cta_group=cta_group, cta_mask=multicast),
                  completes=self.immediate)

    @rule(tm=some_map, coords=st.lists(coord, min_size=1, max_size=5), src=smem_addr, fit=st.integers(0, 5),
          mode=st.sampled_from(["tile::scatter4", "im2col_no_offs", "tile"]), op=st.sampled_from([None, "add", "max"]))
    def store_mode(self, tm, coords, src, mode, op, fit):
        tm = self._tm(tm)
        if fit:
            coords = self._fit(tm, coords, "tile::gather4" if mode == "tile::scatter4" else mode, None)[0]
        if fit > 3:
            coords, src = [_clean(c, 0) for c in coords], _clean(src, 0) & ~1023
        self._track_global(None)
        if op is None:
            self.call(lambda: self.m.cp_async_bulk_tensor_store(tm, coords, src, load_mode=mode),
                      completes=self.immediate)
        else:
            self.call(lambda: self.m.cp_reduce_async_bulk_tensor(op, tm, coords, src, load_mode=mode),
                      completes=self.immediate)

    @rule(tm=some_map, mode=st.sampled_from([None, None, "tile", "im2col", "im2col::w", "tile::gather4"]),
          coords=st.lists(coord, min_size=1, max_size=5), offsets=st.one_of(st.none(), st.lists(small, max_size=3)),
          w_halo=h(st.integers(0, 8)), fit=st.integers(0, 5))
    def prefetch_tensor(self, tm, mode, coords, offsets, w_halo, fit):
        tm = self._tm(tm)
        if fit:
            coords, mode, offsets = self._fit(tm, coords, mode, offsets)
        mode = mode or "tile"
        n = len(self.m.prefetches)
        if self.call(lambda: self.m.cp_async_bulk_prefetch_tensor(tm, coords, load_mode=mode, im2col_offsets=offsets,
                                                                  w_halo=w_halo)) is None:
            assert len(self.m.prefetches) == n, "a refused prefetch was recorded"

    # --- st.async values in every form ----------------------------------------------------
    @rule(dst=st.one_of(smem_addr, st.integers(0, 255).map(lambda a: 16 * a)),
          value=st.one_of(st.integers(0, 2**31 - 1), st.lists(st.integers(0, 2**31 - 1), min_size=2, max_size=2),
                          st.lists(st.integers(-5, 5), min_size=4, max_size=4), st.floats(width=32),
                          st.binary(min_size=4, max_size=4), st.binary(min_size=8, max_size=8),
                          st.binary(max_size=33), st.lists(h(st.integers(-2**31, 2**32)), max_size=5),
                          st.floats(allow_nan=True), h(st.integers(-2**63, 2**64)),
                          st.builds(lambda b: np.frombuffer(b, np.uint8), st.binary(max_size=17))),
          ty=st.sampled_from(["u32", "s32", "f32", "b64", "f64", "b32", "u8", "v4"]),
          mbar=h(st.sampled_from([0, 8, 4096])), cta=st.sampled_from([0, 1]))
    def st_async_values(self, dst, value, ty, mbar, cta):
        if type(dst) is int:
            self.may_write(None, dst, dst + 32)
        self.bars.add(mbar)
        ok = lambda a: type(a) is int and 0 <= a < 2**24   # noqa: E731 - hostile values go as they are
        bar = pa.mapa(mbar, cta) if ok(mbar) and self.m.nctas > 1 else mbar
        d = pa.mapa(dst, cta) if ok(dst) and self.m.nctas > 1 else dst
        self.call(lambda: self.m.st_async(d, value, bar, type=ty), completes=self.immediate)

    @rule(buf=st.one_of(buffers, buffers, st.none()), addr=gaddr, offset=st.integers(0, 63).map(lambda a: 8 * a),
          value=st.one_of(st.integers(0, 127), st.binary(min_size=1, max_size=1), st.binary(min_size=2, max_size=2),
                          st.binary(min_size=4, max_size=4), st.binary(min_size=8, max_size=8), st.binary(max_size=9),
                          h(st.integers(-2**63, 2**64)), st.floats(width=32)),
          ty=st.sampled_from(["b8", "u16", "s32", "f32", "b64", "f64"]))
    def st_async_release_values(self, buf, addr, offset, value, ty):
        g = self._global_dst(buf, addr, offset)
        if type(g) is int:
            self._track_global((g, g + 8))
        self.call(lambda: self.m.st_async_release(g, value, type=ty), completes=self.immediate)

    # --- operation lists and replay ---------------------------------------------------------
    @rule(target=oplists)
    def new_oplist(self):
        return pa.OpList()

    @rule(ops=oplists, what=st.sampled_from(["load", "store", "reduce", "bulk", "commit", "wait", "init", "arrive",
                                             "expect", "mwait", "run", "loads"]),
          tm=st.one_of(some_map, st.none()), coords=st.lists(coord, min_size=1, max_size=6), sh=smem_addr,
          mbar=h(st.sampled_from([0, 8, 4096])), n=h(st.integers(0, 4)), g=gaddr, buf=st.one_of(buffers, st.none()),
          cta=h(st.integers(0, 1)), fit=st.integers(0, 3))
    def record(self, ops, what, tm, coords, sh, mbar, n, g, buf, cta, fit):
        tm = self._tm(tm)
        if fit and tm is not None:
            coords = self._fit(tm, coords, "tile", None)[0]
        g = buf.address if buf is not None else g
        before = (len(ops), ops.records.tobytes())
        f = {"load": lambda: ops.cp_async_bulk_tensor_load(tm, coords, sh, mbar, cta=cta),
             "store": lambda: ops.cp_async_bulk_tensor_store(tm, coords, sh, cta=cta),
             "reduce": lambda: ops.cp_reduce_async_bulk_tensor("add", tm, coords, sh),
             "bulk": lambda: ops.cp_reduce_async_bulk("add", "u32", g, sh, 16 * (n if type(n) is int else 1)),
             "commit": lambda: ops.cp_async_bulk_commit_group(cta=cta),
             "wait": lambda: ops.cp_async_bulk_wait_group(n),
             "init": lambda: ops.mbarrier_init(mbar, n),
             "arrive": lambda: ops.mbarrier_arrive_expect_tx(mbar, n),
             "expect": lambda: ops.mbarrier_expect_tx(mbar, n),
             "mwait": lambda: ops.mbarrier_wait(mbar, n),
             "run": ops.run,
             "loads": lambda: ops.tensor_loads(tm, [coords[:2]] * 2, sh, mbar)}[what]
        CALLS[0] += 1
        try:
            f()
            OUTCOMES[("record", "ok")] = OUTCOMES.get(("record", "ok"), 0) + 1
        except ALLOWED as e:
            OUTCOMES[("record", type(e).__name__)] = OUTCOMES.get(("record", type(e).__name__), 0) + 1
            assert str(e) and not UNNAMED.search(str(e)), f"{type(e).__name__}: {e}"
            assert (len(ops), ops.records.tobytes()) == before, "a refused record changed the list"
        self.bars.add(mbar)

    @rule(ops=oplists, threads=h(st.sampled_from([1, 1, 2, 4, 0, 65])))
    def replay(self, ops, threads):
        # stops at the first failing operation, the earlier ones having taken effect: what it
        # may write is every operation's range (conservative: all memory)
        self.may_write(None, 0, SMEM)
        self._track_global(None)
        self.call(lambda: self.m.replay(ops, threads=threads), completes=True)

    @rule(tm=some_map, coords=st.lists(st.lists(coord, min_size=1, max_size=3), min_size=1, max_size=4),
          dst=st.one_of(smem_addr, st.lists(smem_addr, min_size=1, max_size=4)), mbar=h(st.sampled_from([0, 8, 4096])))
    def load_batch(self, tm, coords, dst, mbar):
        tm = self._tm(tm)
        # checked whole first: refused, it issued nothing
        self.bars.add(mbar)
        for d in (dst if isinstance(dst, list) else [dst]):
            self._box_range(tm, d, mbar)
        self.call(lambda: self.m.cp_async_bulk_tensor_load_batch(tm, coords, dst, mbar), completes=self.immediate)

    # --- the pictures' helpers (read only: each must change nothing) -------------------------
    @rule(tm=some_map, what=st.sampled_from(["addresses", "element", "render_box", "html", "repr", "layout_text",
                                         "layout_svg", "provenance", "fields"]),
          dst=h(st.integers(0, 2048)), addr=h(st.integers(0, 4096)), coords=st.lists(coord, min_size=1, max_size=3))
    def picture(self, tm, what, dst, addr, coords):
        tm = self._tm(tm)
        from ptxasync import viz
        f = {"addresses": lambda: tm.smem_addresses(dst), "element": lambda: tm.smem_element(addr, dst),
             "render_box": lambda: pa.layout.render_box(tm, dst), "html": tm._repr_html_, "repr": lambda: repr(tm),
             "layout_text": lambda: viz.layout_text(tm, dst), "layout_svg": lambda: viz.layout_svg(tm, dst),
             "provenance": lambda: viz.provenance_text(viz.provenance(tm, coords)),
             "fields": lambda: tm.fields}[what]
        r = self.call(f)
        if isinstance(r, str):
            assert len(r) < PICTURE_CHARS, f"{what}: {len(r)} characters"

    @rule(mode=st.sampled_from(["NONE", "32B", "64B", "128B", "128B_ATOM_32B", 9, "nonsense"]),
          base=h(st.integers(0, 4096)), lines=h(st.integers(0, 64)), what=st.sampled_from(["map", "text", "swizzle"]))
    def layout_helpers(self, mode, base, lines, what):
        f = {"map": lambda: pa.layout.chunk_map(mode, base, lines),
             "text": lambda: pa.layout.render_chunks(mode, base, lines),
             "swizzle": lambda: pa.layout.swizzle_address(mode, base)}[what]
        r = self.call(f)
        if what == "map" and r is not None:
            assert r.dtype.kind in "iu" and r.shape == (lines, 8)

    @rule(what=st.sampled_from(["pending_ops", "repr", "html", "trace", "why", "mbar_repr"]),
          addr=h(st.sampled_from([0, 8, 4096])), parity=h(st.integers(0, 1)))
    def machine_views(self, what, addr, parity):
        self.bars.add(addr)
        bar = self.m.mbarrier(0)
        bar.addr = addr
        f = {"pending_ops": lambda: str(self.m.pending_ops()), "repr": lambda: repr(self.m),
             "html": self.m._repr_html_, "trace": lambda: self.m.trace,
             "why": lambda: str(bar.why(parity)), "mbar_repr": lambda: repr(bar)}[what]
        self.call(f)

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
            print(f"  {caller:20s} {what:20s} {n:8d}  {SAMPLES.get((caller, what), '')}", file=sys.stderr)
