"""The machine: global memory, a cluster of CTAs with shared memory, and the
asynchronous operations a kernel issues, named as in PTX.

Operations are queued when issued and complete (move their bytes, signal their
mbarrier or bulk async-group) when the model advances (``step``/``run``) or a
wait needs them (``Mbarrier.try_wait``, ``cp_async_bulk_wait_group``) - unless
the machine was made with ``policy="immediate"``.

Shared addresses are what ``cvta.to.shared`` gives a kernel: in a cluster of
more than one CTA, CTA ``r`` sees its own shared memory at ``r << 24 | offset``;
a single CTA sees plain offsets. ``mapa(addr, r)`` names another CTA's copy.
"""
import operator
import weakref

import numpy as np

from . import _core
from .check import HazardReport, PendingOp, PendingOps, TraceEvent, WaitExplanation, poison_words
from .enums import LoadMode, Policy, RedOp, ReduceType, parse, parse_redop as _redop, parse_reduce_type as _reduce_type
from .arrays import as_array
from .tensormap import TensorMap

__all__ = ["Machine", "GlobalBuffer", "CTA", "Mbarrier", "mapa", "SMEM_MAX"]

SMEM_MAX = 227 * 1024  # sm_90: shared memory per CTA


def mapa(addr, rank):
    """mapa.shared::cluster: the same offset in CTA ``rank``'s shared memory
    (``addr`` a 32-bit shared address, ``rank`` below 256: the result is 32 bits)."""
    return (_u32(addr, "addr") & 0xFFFFFF) | (_uint(rank, 8, "rank") << 24)


def _view(raw, dtype, shape, offset):
    """A typed view of a uint8 array (no copy)."""
    dt = np.dtype(dtype)
    shape = (shape,) if np.isscalar(shape) else tuple(shape)
    count = int(np.prod(shape)) if shape else 1
    offset = int(offset)
    if offset < 0 or offset + count * dt.itemsize > raw.size:
        raise ValueError(f"view of {count} x {dt} at offset {offset} does not fit in {raw.size} bytes")
    if offset % dt.alignment:
        raise ValueError(f"offset {offset} is not aligned to {dt} ({dt.alignment} bytes)")
    return raw[offset:offset + count * dt.itemsize].view(dt).reshape(shape)


class GlobalBuffer:
    """A registered range of global memory, backed by a NumPy array."""

    def __init__(self, machine, array, address, buffer_id, raw=None):
        # the machine keeps its buffers (Machine._buffers): a weak reference back, or the two
        # would be a cycle, the machine and its memory freed only when the collector next runs
        self._machine_ref = weakref.ref(machine)
        self._id = buffer_id
        self.array = array          # the user's array (or our uint8 allocation)
        self.address = address
        self.bytes = array.reshape(-1).view(np.uint8) if raw is None else raw
        self.nbytes = self.bytes.size
        self._bound = []            # the Multicast objects it is a copy of

    @property
    def _machine(self):
        """The machine it is registered on (None once that machine is gone)."""
        return self._machine_ref()

    def view(self, dtype, shape, offset=0):
        """Typed view of the buffer's bytes (no copy)."""
        return _view(self.bytes, dtype, shape, offset)

    def free(self):
        """Unregister: later accesses to its addresses are illegal-address errors.

        Refused (InvalidValue, nothing freed) while a pending asynchronous
        operation may still reach the buffer: a tensor copy whose map's tensor
        overlaps it, or a bulk copy or reduction, cp.async or st.async whose
        global range does. Completing later, it would read or write whatever is
        registered at those addresses next. Wait for it (or ``Machine.run()``)
        first."""
        if self._bound:
            raise ValueError(f"{self!r} is a copy of {self._bound[0]!r}: free the Multicast first (as "
                             "cuMulticastUnbind comes before freeing the memory)")
        m = self._machine_ref()
        if self._id is not None and m is not None:   # a machine gone took its registrations with it
            m._remove_buffer(self._id)
            self._id = None
            m._buffers.remove(self)

    def __repr__(self):
        return f"GlobalBuffer(address={_hex(self.address)}, nbytes={self.nbytes})"


class Mbarrier(_core.Mbarrier):
    """An mbarrier object in a CTA's shared memory (PTX mbarrier.*).

    Every operation takes the executing ``thread`` (its id in the CTA, 0 by
    default): the checker follows each thread's waits (a thread whose try_wait
    returned False is blocked there until it does something else; see
    ``Machine.run``; test_wait only polls) and the trace names it.

    ``arrive``, ``arrive_expect_tx``, ``test_wait`` and ``try_wait`` are the
    binding's own methods: one call from Python per operation, for tight loops."""

    def init(self, count=1, *, thread=0):
        """mbarrier.init.shared::cta.b64 [addr], count; returns the Mbarrier."""
        self._m._mbar_init(self.cta, self.addr, count, thread)
        return self

    def inval(self, *, thread=0):
        """mbarrier.inval.shared::cta.b64 [addr]."""
        self._m._mbar_inval(self.cta, self.addr, thread)

    def arrive_no_complete(self, count, *, thread=0):
        """mbarrier.arrive.noComplete.shared::cta.b64 state, [addr], count; returns the state.
        Completing the phase with it is undefined behaviour (Hazard)."""
        return self._arrive(count, 0, _core.MBAR_NO_COMPLETE, thread)

    def arrive_drop(self, count=1, *, thread=0):
        """mbarrier.arrive_drop.shared::cta.b64 state, [addr]{, count}: arrives and lowers
        the expected count of the following phases (R11); returns the state."""
        return self._arrive(count, 0, _core.MBAR_DROP, thread)

    def arrive_drop_expect_tx(self, tx, *, thread=0):
        """mbarrier.arrive_drop.expect_tx.shared::cta.b64 state, [addr], txCount; returns the state."""
        _tx(tx)
        return self._arrive(1, tx, _core.MBAR_DROP, thread)

    def arrive_drop_no_complete(self, count, *, thread=0):
        """mbarrier.arrive_drop.noComplete.shared::cta.b64 state, [addr], count; returns the state.
        Completing the phase with it is undefined behaviour (Hazard)."""
        return self._arrive(count, 0, _core.MBAR_DROP | _core.MBAR_NO_COMPLETE, thread)

    def _arrive(self, count, tx, flags, thread):
        ref = _RECORDING.get(id(self._m))
        rec = ref() if ref is not None else None
        if rec is None:
            return self._m._mbar_arrive(self.cta, self.addr, count, tx, flags, thread)
        # the trace's arrive event has no flags: the machine keeps the call (Machine.trace_ptx)
        n0 = rec._event_count()
        out = self._m._mbar_arrive(self.cta, self.addr, count, tx, flags, thread)
        rec._calls.append(("mbarrier_arrive_flags", (self.addr, count, tx, bool(flags & _core.MBAR_DROP),
                                                     bool(flags & _core.MBAR_NO_COMPLETE)),
                           {"cta": self.cta, "thread": thread}, n0, rec._event_count()))
        return out

    def expect_tx(self, tx, *, thread=0):
        """mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [addr], txCount."""
        _tx(tx)
        self._m._mbar_tx(self.cta, self.addr, tx, False, thread)

    def complete_tx(self, tx, *, thread=0):
        """mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [addr], txCount."""
        _tx(tx)
        self._m._mbar_tx(self.cta, self.addr, tx, True, thread)

    def test_wait_state(self, state, *, thread=0):
        """mbarrier.test_wait.shared::cta.b64 waitComplete, [addr], state: has the phase the
        state was returned in completed? Compared by parity only (R6, R7)."""
        return self._m._mbar_test_wait_state(self.cta, self.addr, _state(state), thread)

    def try_wait_state(self, state, *, thread=0):
        """mbarrier.try_wait.shared::cta.b64 waitComplete, [addr], state: try_wait on the
        phase the state was returned in (by parity, R6)."""
        return self._m._mbar_try_wait_state(self.cta, self.addr, _state(state), thread)

    @staticmethod
    def pending_count(state):
        """mbarrier.pending_count.b64 count, state: the pending count just before the
        arrive that returned the state (R8)."""
        return _core.mbar_pending_count(_state(state))

    def why(self, parity):
        """Why a wait on ``parity`` answers as it does: which phase is open, the
        arrivals and tx bytes missing, what pending operations credit it and
        whether they can complete it (a WaitExplanation; ``str()`` says it)."""
        _parity(parity)
        return WaitExplanation(self._m._mbar_why(self.cta, self.addr, parity))

    def wait(self, parity, *, thread=0):
        """try_wait that must succeed: raises Deadlock, with the explanation, if
        nothing pending can complete the phase."""
        if not self._m._mbar_try_wait(self.cta, self.addr, parity, thread):
            raise _core.Deadlock(f"[deadlock] thread {thread} of CTA {self.cta} waits on parity "
                                 f"{parity & 1}: {self.why(parity & 1)}")
        return True

    @property
    def state(self):
        """phase, expected / pending arrival counts, tx-count."""
        return self._m._mbar_state(self.cta, self.addr)

    @property
    def phase(self):
        """The current phase number (its parity is what waits test)."""
        return self.state["phase"]

    def __repr__(self):
        s = self.state
        return (f"Mbarrier(cta={self.cta}, addr={_hex(self.addr)}, phase={s['phase']}, "
                f"pending={s['pending']}/{s['expected']}, tx={s['tx']})")


def _read_args(offset, dtype, shape):
    """CTA.read's (offset, dtype, shape), from either order: offset first, or
    (dtype, shape, offset=0) as ``view`` takes them (an offset is an integer,
    a dtype never is)."""
    if isinstance(offset, (int, np.integer)) and not isinstance(offset, bool):
        if shape is None:
            raise TypeError("read(offset, dtype, shape): give the shape (an int or a tuple)")
        return offset, dtype, shape
    return (0 if shape is None else shape), offset, dtype


class CTA:
    """One CTA of the cluster: its shared memory and its view of addresses."""

    def __init__(self, machine, rank):
        self._machine = machine
        self.rank = rank

    @property
    def smem(self):
        """The CTA's shared memory, a uint8 array (no copy). Made on each access:
        the array keeps the machine alive, and one kept here would be a cycle
        through the array's base that the collector cannot see."""
        return self._machine._smem(self.rank)

    def addr(self, offset):
        """The shared address this CTA uses for its own byte at ``offset`` (in a
        cluster an offset in [0, 2^24), the CTA's window: nothing is masked)."""
        offset = _int(offset, "offset")
        if self._machine.nctas == 1:
            return offset
        if not 0 <= offset < 1 << 24:
            raise ValueError(f"offset {_hex(offset)} is outside a CTA's 16 MiB shared::cluster window "
                             f"[0, 0x1000000): in a cluster, CTA r's byte at offset o is r << 24 | o")
        return mapa(offset, self.rank)

    def view(self, dtype, shape, offset=0):
        """Typed view of this CTA's shared memory (no copy)."""
        return _view(self.smem, dtype, shape, offset)

    def mbarrier(self, offset):
        """The mbarrier object at ``offset`` of this CTA's shared memory."""
        return Mbarrier(self._machine, self.rank, self.addr(offset))

    def read(self, offset, dtype, shape=None, thread=0):
        """A copy of ``shape`` elements of ``dtype`` at ``offset`` of this CTA's
        shared memory, read by ``thread`` through the model (the argument order
        of ``write``: offset first).

        offset  byte offset in the CTA's shared memory
        dtype   NumPy dtype of the elements
        shape   an int or a tuple (NumPy order)
        thread  the reading thread's id in the CTA (default 0)

        Reading bytes a pending operation has not yet written is a hazard
        (destination-read). (A NumPy ``view`` cannot be watched; under the
        adversarial policy such bytes hold poison instead.) The order of
        ``view``, ``read(dtype, shape, offset=0)``, works too: a dtype is never
        an integer."""
        offset, dtype, shape = _read_args(offset, dtype, shape)
        dt = np.dtype(dtype)
        shape = (shape,) if np.isscalar(shape) else tuple(shape)
        nbytes = int(np.prod(shape)) * dt.itemsize if shape else dt.itemsize
        self._machine._check_read(self.rank, _u32(thread, "thread"), self.rank, _u32(offset, "offset"), nbytes)
        return self.view(dtype, shape, offset).copy()

    def write(self, offset, data, thread=0):
        """st.shared by ``thread``: write ``data`` at ``offset`` of this CTA's
        shared memory through the model, a generic-proxy write the race checker
        sees (a NumPy ``view`` cannot be watched).

        offset  byte offset in the CTA's shared memory
        data    an array (its bytes are written) or bytes
        thread  the writing thread's id in the CTA (default 0)

        Writing bytes an
        unfinished operation reads or writes, or that another thread accessed
        with no happens-before order, is a hazard (docs/hazards.md)."""
        raw = np.frombuffer(memoryview(np.ascontiguousarray(data)).cast("B"), dtype=np.uint8)
        off = _u32(offset, "offset")
        if off + raw.size > self.smem.size:
            raise _core.IllegalAddress(f"shared bytes [0x{off:x}, 0x{off + raw.size:x}) of CTA {self.rank} are "
                                       f"outside its {self.smem.size} bytes")
        self._machine._hb_access(self.rank, _u32(thread, "thread"), 1, self.rank, off, raw.size, 1)
        self.smem[off:off + raw.size] = raw

    def poisoned(self, offset, nbytes):
        """Aligned poison words (check.POISON_WORD) in [offset, offset + nbytes)."""
        return poison_words(self.smem[int(offset):int(offset) + int(nbytes)], offset)

    def __repr__(self):
        return f"CTA(rank={self.rank}, smem_bytes={self.smem.size})"

class Machine(_core.Machine):
    """Global memory plus a cluster of ``ctas`` CTAs with ``smem_bytes`` each
    (default: 200 KiB, or all a CTA may have on the target where that is less).

    ``target`` is the compilation target whose forms the machine executes
    (``"sm_90a"`` by default; ``"sm_100a"``, ``"sm_100f"``, ... enable the
    newer forms, ``"sm_80"``, ``"sm_86"``, ``"sm_89"`` are machines without
    clusters, tensor maps or bulk copies; a form the target lacks is refused
    naming the target that has it; docs/ptx.md, "Targets").

    ``checks=True`` (or the adversarial policy) compares memory at issue and
    completion, so two pending copies into overlapping destinations, a
    source written before it was read, a pending destination read, and an
    mbarrier signalled before its init is ordered before the signal are
    reported (``memory_checks``). The default, ``checks=False``, is faster
    and misses all of these: only the memory model (``race_checks``) and the
    mbarrier rules are checked.

    ``backend="cuda"`` gives the same API with every operation run on a GPU
    (``ptxasync.cuda.machine``, docs/gpu.md); without one it raises
    ``ptxasync.cuda.Unavailable`` saying why (cuda-bindings missing, no
    driver, no device)."""

    def __new__(cls, *args, backend="model", **kw):
        # backend="cuda": the same API with every operation run on a GPU (ptxasync.cuda, an
        # optional engine on top of the model: loaded only when asked for)
        if backend == "cuda":
            from .cuda.machine import CudaMachine
            cls = CudaMachine
        elif backend != "model":
            raise ValueError(f"backend must be 'model' or 'cuda' (the same API run on a GPU), not {backend!r}")
        return super().__new__(cls)

    def __init__(self, ctas=1, smem_bytes=None, policy="in_order", seed=0,
                 target="sm_90a", hazards="raise", trace=False, checks=False, race_checks=True, backend="model",
                 same_value_stores="race"):
        super().__init__(ctas, smem_bytes, str(target))   # checked and named there
        self._fixed_ctas = None
        self._buffers = []
        self._multicasts = []  # the Multicast objects mapped here (ptxasync.multicast)
        self.prefetches = []   # what cp.async.bulk.prefetch.tensor would have fetched
        self.set_policy(policy, seed)
        self.hazard_mode = hazards
        self._calls = []       # the recorded calls of trace_ptx: (name, args, kw, first event, end)
        self._nev = 0          # trace events seen so far
        self.trace_enabled = trace
        self._set_memory_checks(bool(checks))
        self._set_races(bool(race_checks))
        self.same_value_stores = same_value_stores

    # --- memory -----------------------------------------------------------
    def alloc(self, nbytes, address=None, align=256, fill=0):
        """Allocate ``nbytes`` of global memory (zero-filled unless ``fill``)."""
        arr = np.full(_int(nbytes, "nbytes"), fill, dtype=np.uint8)
        return self.register(arr, address=address, align=align)

    def register(self, array, address=None, align=256):
        """Make an array global memory at ``address`` (or at a free address aligned
        to ``align``); copies write into it. ``array`` is a C-contiguous, writable
        NumPy array of any fixed item size, an object with the buffer protocol,
        or a ``__dlpack__`` tensor in CPU memory (a torch tensor of any dtype,
        bf16 included): no copy is made. Object arrays are refused (TypeError)
        before anything changes. ``GlobalBuffer.array`` is the NumPy view."""
        a = as_array(array)
        if not a.flags.c_contiguous:
            raise ValueError(f"global memory must be a C-contiguous array; this one (shape {a.shape}, byte "
                             f"strides {a.strides}) is a strided view: register a contiguous copy "
                             "(np.ascontiguousarray(x), tensor.contiguous()) or the array it views")
        if not a.flags.writeable:
            if not isinstance(array, np.ndarray) and hasattr(array, "__dlpack__"):
                raise ValueError(f"global memory must be a writable array; {type(array).__name__}.__dlpack__() "
                                 "gave a legacy DLPack capsule (before DLPack 1.0), which NumPy imports "
                                 "read-only: use a producer that takes __dlpack__(max_version=(1, 0)), or "
                                 "pass a NumPy view of its memory (torch: tensor.numpy())")
            raise ValueError("global memory must be a writable array (copies write into it); this one is "
                             "read-only (e.g. np.frombuffer of bytes): register a writable copy, np.array(x)")
        if a.nbytes == 0:
            raise ValueError("global memory needs at least 1 byte")
        if a.dtype.hasobject:
            raise TypeError(f"global memory must hold plain bytes, not Python objects (dtype {a.dtype})")
        raw = a.reshape(-1).view(np.uint8)   # raises before anything is registered
        try:
            memoryview(a)
            exported = a
        except (ValueError, TypeError):      # ml_dtypes bf16 / fp8: no buffer format, the same bytes
            exported = raw
        if address is None:
            address = self._pick_address(a.nbytes, align)   # the binding checks and names both
        buffer_id = self._add_buffer(address, exported)
        buf = GlobalBuffer(self, a, operator.index(address), buffer_id, raw)
        self._buffers.append(buf)
        return buf

    @property
    def ctas(self):
        """The CTAs of the cluster, by rank. Made on each access (as ``CTA.smem`` is): a CTA keeps
        its machine alive, and a list of them kept here would be a cycle, the machine and its
        memory (the race checker's with it) freed only when the collector next runs."""
        fixed = getattr(self, "_fixed_ctas", None)
        return fixed if fixed is not None else [CTA(self, r) for r in range(self.nctas)]

    @ctas.setter
    def ctas(self, ctas):
        self._fixed_ctas = ctas

    def cta(self, rank=0):
        """The CTA of rank ``rank`` in the cluster."""
        if not 0 <= rank < self.nctas:
            raise IndexError(f"CTA rank {rank} is outside the cluster of {self.nctas}")
        return self.ctas[rank]

    @property
    def smem(self):
        """Shared memory of CTA 0."""
        return self.ctas[0].smem

    def mbarrier(self, offset, cta=0):
        """The mbarrier object at ``offset`` of CTA ``cta``'s shared memory (call ``.init``)."""
        return self.cta(cta).mbarrier(offset)

    # --- completion --------------------------------------------------------
    def set_policy(self, policy, seed=0):
        """'immediate', 'in_order', 'reverse', 'random' (with ``seed``) or
        'adversarial' (seeded like random): what the hardware may do and a lucky
        run does not. Operations complete only when a wait, ``step`` or ``run``
        needs them, in a seeded random order; each pending destination is filled
        with poison at issue (check.POISON_WORD; not reductions, whose old bytes
        are operands); and the memory checks are on (``memory_checks``)."""
        self._set_policy(int(parse(Policy, policy)), seed)   # the binding checks seed
        self._seed = seed   # a PTX launch seeds its thread scheduler with it (ptx.Kernel)

    def step(self):
        """Complete one pending operation; False if none was pending. With none
        pending, a thread blocked in a wait (its last try_wait returned False)
        that nothing can release raises Deadlock."""
        return self._step()

    def run(self):
        """Complete every pending operation; then a thread blocked in a wait
        that nothing pending can release raises Deadlock, with the reason
        ("nothing pending can complete phase 1 of the mbarrier at 0x40 in CTA 0:
        1 arrival and 1024 tx bytes missing: the kernel would hang")."""
        self._run()

    def finish(self):
        """The kernel exits here: every operation still pending was never waited
        for (hazard never-waited, naming it and why: its mbarrier phase was never
        waited on, it was issued after its thread's last commit_group, or its
        group was never waited for); then ``run()``, which reports a deadlock."""
        self._finish()

    def exit(self, cta=0, thread=None):
        """PTX ``exit`` of one thread (``thread`` given) or of every thread of a CTA
        (``thread=None``): what it leaves pending that nobody can wait for any more
        is reported there (hazard never-waited), not only at ``finish()``. A thread
        leaves behind the operations its async-groups track (groups are per thread);
        a CTA, those and every operation that reads or writes its shared memory or
        signals an mbarrier in it. Its ``st.async.release.global`` stores complete
        (they synchronize with the end of the CTA). After the reports (report mode)
        the operations complete and the exited threads' waits are forgotten."""
        self._exit(_u32(cta, "cta"), -1 if thread is None else _u32(thread, "thread"))

    # --- the checker -----------------------------------------------------------
    @property
    def memory_checks(self):
        """Whether issue, read and completion are checked against memory: a
        source written before it was read (source-changed), a pending
        destination written by someone else (destination-changed), two pending
        writes of the same bytes (destination-overlap), a read of a pending
        destination (destination-read). Off by default (they cost a scan per
        issue and a compare per completion, and ``replay(threads=N)`` copies on
        N threads only without them): ``Machine(checks=True)``, setting this
        True, or the adversarial policy turns them on."""
        return self._memory_checks()

    @memory_checks.setter
    def memory_checks(self, on):
        self._set_memory_checks(bool(on))

    @property
    def race_checks(self):
        """Whether the memory model is on (the default): happens-before between
        threads and asynchronous operations, proxies and their fences
        (data-race, proxy-fence-missing, tensormap-fence-missing,
        mbarrier-init-unordered; docs/hazards.md). Independent of the
        completion policy: a race is found in every schedule. Turning it on
        starts from a clean slate."""
        return self._races_enabled()

    @race_checks.setter
    def race_checks(self, on):
        self._set_races(bool(on))

    _SAME_VALUE = ("race", "record", "accept")

    @property
    def same_value_stores(self):
        """What the race checker makes of two plain stores (``st.shared`` / ``st.global``) by
        threads, not ordered by happens-before, that write the same bytes where they overlap
        (Triton stores a value replicated across threads so): ``"race"`` (the default) a
        ``data-race`` as the PTX memory model has it; ``"record"`` a ``same-value-store`` race in
        ``races``, never raised and said only where the store meets no other race or missing
        fence; ``"accept"`` nothing. Stores of different values, stores of more than 16 bytes,
        atomics, reads and asynchronous operations are judged as ever (docs/hazards.md)."""
        return self._SAME_VALUE[self._same_value()]

    @same_value_stores.setter
    def same_value_stores(self, mode):
        if mode not in self._SAME_VALUE:
            raise ValueError(f"same_value_stores must be one of {self._SAME_VALUE}, not {mode!r}")
        self._set_same_value(self._SAME_VALUE.index(mode))

    @property
    def races(self):
        """The races and missing fences found so far (``check.Race``: rule, time,
        and the two accesses: who, instruction, logical time, bytes, proxy)."""
        from .check import Race
        return [Race(d) for d in self._races()]

    # --- fences and barriers (the memory model) -----------------------------------
    def fence_proxy_async(self, cta=0, thread=0, space=None):
        """fence.proxy.async{.global|.shared::cta|.shared::cluster}: orders the
        thread's (and what it has acquired) generic-proxy accesses with later
        async-proxy ones (and back) in that state space (None: all)."""
        spaces = {None: 0, "global": 1, "shared::cta": 2, "shared::cluster": 3}
        key = space if space is None else str(space).strip().lstrip(".")
        if key not in spaces:
            raise ValueError(f"fence.proxy.async has no .{space} state space (valid: none, .global, "
                             ".shared::cta, .shared::cluster)")
        self._fence_proxy_async(_u32(cta, "cta"), _u32(thread, "thread"), spaces[key])

    def fence_proxy_tensormap(self, cta=0, thread=0, kind="acquire", address=None, size=128, scope="gpu"):
        """fence.proxy.tensormap::generic.release.scope, or
        fence.proxy.tensormap::generic.acquire.scope [address], size: a tensor map
        written in the generic proxy (``write_global``, ``tensormap_replace``)
        is used by a tensor copy (tensormap proxy) only after a release fence
        following the write and an acquire fence on its address by a thread of
        the using CTA (PTX ISA, membar/fence). ``size`` must be 128; ``address``
        must be global memory."""
        k = str(kind).strip().lstrip(".")
        if k not in ("release", "acquire"):
            raise ValueError(f"fence.proxy.tensormap::generic takes .release or .acquire, not {kind!r}")
        if str(scope).strip().lstrip(".") not in ("cta", "cluster", "gpu", "sys"):
            raise ValueError(f"fence.proxy.tensormap scope {scope!r} is not .cta, .cluster, .gpu or .sys")
        if k == "acquire" and address is None:
            raise ValueError("fence.proxy.tensormap::generic.acquire takes the tensor map's address and size 128")
        if k == "release" and address is not None:
            raise ValueError("fence.proxy.tensormap::generic.release takes no address operand")
        self._fence_proxy_tensormap(_u32(cta, "cta"), _u32(thread, "thread"), k == "acquire",
                                      _u64(address or 0, "addr"), _u32(size, "size"))

    def fence_mbarrier_init(self, cta=0, thread=0):
        """fence.mbarrier_init.release.cluster: releases the thread's earlier
        mbarrier.init operations; with ``barrier_cluster(relaxed=True)`` after it,
        the other CTAs' operations may signal those barriers."""
        self._fence_mbarrier_init(_u32(cta, "cta"), _u32(thread, "thread"))

    def fence(self, cta=0, thread=0, scope="cta", sem="acq_rel"):
        """fence{.acq_rel|.sc|.acquire|.release}.scope: with a relaxed
        barrier.cluster.arrive or a relaxed atomic after it (scope .cluster or
        wider), the release half of a release / acquire pattern (not .acquire);
        after relaxed atomics that read what was released, the acquire half
        (not .release)."""
        scopes = {"cta": 0, "cluster": 1, "gpu": 2, "sys": 3}
        sc = str(scope).strip().lstrip(".")
        se = str(sem).strip().lstrip(".")
        if sc not in scopes:
            raise ValueError(f"fence scope {scope!r} is not .cta, .cluster, .gpu or .sys")
        sems = ("acq_rel", "sc", "acquire", "release")    # PA_HB_FENCE_*
        if se not in sems:
            raise ValueError(f"fence semantics {sem!r} is not .acq_rel, .sc, .acquire or .release")
        self._fence(_u32(cta, "cta"), _u32(thread, "thread"), sems.index(se), scopes[sc])

    def bar_sync(self, cta=0, barrier=0, threads=None):
        """bar.sync / barrier.sync ``barrier``: the threads of CTA ``cta`` listed in
        ``threads`` (None: every thread of the CTA) all arrive, then go on:
        what each did before is ordered before what each does after."""
        ids = () if threads is None else tuple(_u32(t, "thread") for t in threads)
        if threads is not None and not ids:
            raise ValueError("bar.sync with an empty list of threads synchronises nothing")
        self._bar_sync(_u32(cta, "cta"), _u32(barrier, "barrier"), ids)

    def barrier_cluster(self, relaxed=False):
        """barrier.cluster.arrive{.release|.relaxed} then barrier.cluster.wait
        (.acquire) by every thread of every CTA of the cluster. ``relaxed``:
        the arrive releases only what a fence released before it
        (fence.mbarrier_init, fence.acq_rel / fence.sc at cluster scope)."""
        self._barrier_cluster(bool(relaxed))

    # --- global memory through the model (generic proxy) ------------------------
    def _global_bytes(self, address, nbytes):
        address, nbytes = _u64(address, "address"), _int(nbytes, "nbytes")
        for b in self._buffers:
            if b.address <= address and address + nbytes <= b.address + b.nbytes:
                return b.bytes[address - b.address:address - b.address + nbytes]
        for mc in self._multicasts:
            if mc.address <= address < mc.address + mc.nbytes:
                raise _core.IllegalAddress(f"global address 0x{address:x} is a multicast object's address, which "
                                           "only multimem.* instructions access (ISA 9.7.9.14: any other memory "
                                           "operation on it is undefined)")
        raise _core.IllegalAddress(f"global bytes [0x{address:x}, 0x{address + nbytes:x}) are not inside "
                                   "one registered buffer")

    def read_global(self, address, dtype, shape, cta=0, thread=0):
        """ld.global by ``thread`` of CTA ``cta``: a copy of global memory read
        through the model (checked by the race checker)."""
        dt = np.dtype(dtype)
        shape = (shape,) if np.isscalar(shape) else tuple(shape)
        nbytes = int(np.prod(shape)) * dt.itemsize
        raw = self._global_bytes(address, nbytes)
        self._hb_access(_u32(cta, "cta"), _u32(thread, "thread"), 2, 0, int(address), nbytes, 2)
        return raw.copy().view(dt).reshape(shape)

    def write_global(self, address, data, cta=0, thread=0):
        """st.global by ``thread`` of CTA ``cta``: write ``data`` at ``address``
        through the model (checked by the race checker)."""
        src = np.frombuffer(memoryview(np.ascontiguousarray(data)).cast("B"), dtype=np.uint8)
        raw = self._global_bytes(address, src.size)
        self._hb_access(_u32(cta, "cta"), _u32(thread, "thread"), 2, 0, int(address), src.size, 3)
        raw[:] = src

    def tensormap_replace(self, address, field, value, ord=0, cta=0, thread=0):
        """tensormap.replace.tile.<field>.global.b1024 [address], {ord,} value: edit
        the tensor map held in global memory at ``address``, a generic-proxy
        write of its 128 bytes ("a weak memory operation on the entire 1024-bit
        opaque tensor-map object"); a tensor copy that then uses it from there
        needs the tensormap fences (``fence_proxy_tensormap``)."""
        tm = self.tensormap_at(address)
        tm.replace(field, value, ord, self.target)
        raw = self._global_bytes(address, 128)
        self._hb_access(_u32(cta, "cta"), _u32(thread, "thread"), 2, 0, int(address), 128, 4)
        raw[:] = np.frombuffer(bytes(tm), dtype=np.uint8)

    def tensormap_at(self, address):
        """The tensor map held in global memory at ``address`` (a copy of its
        128 bytes, not a checked access)."""
        return TensorMap.from_bytes(bytes(self._global_bytes(address, 128)))

    def pending_ops(self):
        """The pending operations in issue order (PendingOp: kind, issuer,
        source and destination ranges, what tracks them)."""
        return PendingOps(PendingOp(d) for d in self._pending_ops())

    @property
    def hazard_mode(self):
        """'raise': a hazard raises Hazard (naming its rule) at the operation;
        'report': hazards are collected in ``hazards`` and the model goes on as
        the hardware would (a few still raise: those the hardware faults on, or
        after which the model cannot say what happens; docs/hazards.md)."""
        return "report" if self._hazard_mode() else "raise"

    @hazard_mode.setter
    def hazard_mode(self, mode):
        if mode not in ("raise", "report"):
            raise ValueError(f"hazards must be 'raise' or 'report', not {mode!r}")
        self._set_hazard_mode(mode == "report")

    @property
    def hazards(self):
        """The hazards collected in report mode, in order (HazardReport)."""
        return [HazardReport(*h) for h in self._hazards()]

    def clear_hazards(self):
        """Forget the hazards collected so far."""
        self._clear_hazards()

    @property
    def trace_enabled(self):
        """Whether events are recorded in ``trace`` (off by default)."""
        return self._trace_enabled

    @trace_enabled.setter
    def trace_enabled(self, on):
        self._trace_enabled = bool(on)
        self._set_trace(self._trace_enabled)
        # while the trace is on, the methods that issue are wrapped on this instance to keep
        # their calls (trace_ptx); off, the class's own methods run with no cost added
        for name in _RECORDED:
            if on:
                setattr(self, name, self._recorder(name))
            else:
                self.__dict__.pop(name, None)
        if on:
            _RECORDING[id(self)] = weakref.ref(self)
        else:
            _RECORDING.pop(id(self), None)

    def _event_count(self):
        self._nev += len(self._trace_events(self._nev))
        return self._nev

    def _recorder(self, name):
        fn = getattr(type(self), name).__get__(self, type(self))

        def call(*args, **kw):
            n0 = self._event_count()
            out = fn(*args, **kw)
            self._calls.append((name, args, kw, n0, self._event_count()))
            return out
        call.__name__, call.__doc__ = name, fn.__doc__
        return call

    def trace_ptx(self, entry="trace"):
        """The operations issued while the trace was on, as one PTX module (an ``.entry``
        named ``entry`` with the global buffers and tensor maps as parameters, the
        instructions in issue order with their mbarrier, fence and barrier lines):
        docs/ptx.md, "A Machine's trace as PTX"."""
        from .ptxtrace import trace_ptx
        return trace_ptx(self, entry)

    def __del__(self):
        try:
            ref = _RECORDING.get(id(self))
            if ref is not None and ref() in (self, None):
                del _RECORDING[id(self)]
        except (AttributeError, TypeError):     # half-built, or at interpreter exit
            pass

    @property
    def trace(self):
        """The events recorded since the trace was enabled (TraceEvent), in
        order of their logical time. Off by default: ``Machine(trace=True)``
        or ``machine.trace_enabled = True``."""
        return [TraceEvent(*e) for e in self._trace_events(0)]

    def clear_trace(self):
        """Forget the recorded events (the logical clock goes on)."""
        self._clear_trace()
        self._calls, self._nev = [], 0

    @property
    def pending(self):
        """Operations issued and not yet complete (a multicast copy counts once per
        destination CTA; a cp.async.mbarrier.arrive counts until it has arrived)."""
        return self._pending()

    # --- tensor copies -------------------------------------------------------
    def load_box(self, tmap, index, dst, mbar, **kw):
        """The tile load of the box that starts at ``index`` in NumPy order
        (outermost first), the order ``TensorMap.from_array`` and ``read_box``
        speak: ``gpu.load_box(tmap, (16, 64), dst, bar)`` or, as a slice of the
        array, ``gpu.load_box(tmap, np.s_[16:24, 64:128], dst, bar)`` (a stop, if
        given, must be the start plus the box extent; a negative start is the
        copy's out-of-bounds coordinate, not NumPy's count from the end). It is
        ``cp_async_bulk_tensor_load(tmap, index[::-1], dst, mbar, **kw)``."""
        index = tuple(index) if isinstance(index, (tuple, list)) else (index,)
        box = list(tmap.fields["box_dim"])[::-1]
        if len(index) != len(box):
            raise ValueError(f"index {index!r} has {len(index)} entries; the map has rank {len(box)}")
        coords = []
        for axis, (i, extent) in enumerate(zip(index, box)):
            if isinstance(i, slice):
                if i.step not in (None, 1) or i.start is None:
                    raise ValueError(f"index[{axis}] = {i!r}: a box is a slice start:stop with no step")
                if i.stop is not None and int(tmap.fields["interleave"]) == 0 and i.stop - i.start != extent:
                    raise ValueError(f"index[{axis}] = {i.start}:{i.stop} spans {i.stop - i.start}; "
                                     f"the box extent along NumPy axis {axis} is {extent}")
                i = i.start
            coords.append(_int(i, f"index[{axis}]"))
        self.cp_async_bulk_tensor_load(tmap, coords[::-1], dst, mbar, **kw)

    # cp_async_bulk_tensor_load is _core.Machine's own method (csrc/python/tensor_obj.c:
    # every form; every rule is the core's): one C call from Python, no frame.

    def cp_async_bulk_tensor_store(self, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        """cp.async.bulk.tensor.Nd.global.shared::cta.{tile|im2col_no_offs}.bulk_group
        [tmap, coords], [src]. ``load_mode="tile::scatter4"`` (sm_100) takes
        ``coords = (col, row0, row1, row2, row3)``. ``tmap``: a TensorMap, or the
        global address of one (read in the tensormap proxy)."""
        self._tensor_store(cta, thread, tmap, load_mode, coords, src)

    def cp_reduce_async_bulk_tensor(self, op, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        """cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<op>.{tile|im2col_no_offs}.bulk_group.

        The element type is the map's data type; a pair the sm_90 hardware does
        not execute raises IllegalInstruction at issue (docs/reductions.md).
        ``tmap``: a TensorMap, or the global address of one."""
        self._tensor_store(cta, thread, tmap, load_mode, coords, src, int(_redop(op)))

    def cp_async_bulk_prefetch_tensor(self, tmap, coords, load_mode="tile", im2col_offsets=None,
                                      w_halo=0, w_offset=0):
        """cp.async.bulk.prefetch.tensor.Nd.L2.global{.load_mode} [tmap, coords]{, im2colInfo}.

        Validated like a load in the same mode (target, issue-time faults, every
        in-bounds byte must be global memory); moves no data and signals nothing.
        Returns what it would have fetched, also appended to ``self.prefetches``:
        ``{"mode", "coords", "ranges": [(box row, address, bytes), ...], "bytes"}``."""
        mode = parse(LoadMode, load_mode)
        try:
            coords = tuple(coords)
        except TypeError:
            raise TypeError(f"coords must be a sequence of integers (driver order, c0 innermost), "
                            f"not {type(coords).__name__}") from None
        ranges = self._prefetch_tensor(tmap, int(mode), coords, im2col_offsets, w_halo, w_offset)
        rec = {"mode": mode.name.lower(), "coords": tuple(operator.index(c) for c in coords),
               "ranges": ranges, "bytes": sum(n for _, _, n in ranges)}
        self.prefetches.append(rec)
        return rec

    def cp_reduce_async_bulk(self, op, type, dst, src, size, mbar=None, cta=0, thread=0,
                             noftz=False, dst_space="global"):
        """cp.reduce.async.bulk.<dst>.shared::cta ... .<op>.<type> [dst], [src], size.

        ``op`` and ``type`` take PTX names with or without the dot (``"add"``,
        ``".u32"``, ``"bf16"``), RedOp / ReduceType members or their values;
        ``type`` may carry the qualifier (``".noftz.f16"``), the same as
        ``noftz=True``. ``.add.f16`` / ``.add.bf16`` to ``.global`` need ``.noftz``
        (PTX ISA table); the pair is checked at issue (InvalidValue).
        ``dst_space`` 'global' (bulk_group completion) or 'shared::cluster'
        (completes ``size`` bytes on ``mbar`` in the destination CTA: the
        mbarrier at ``mbar``'s offset in the CTA that ``dst`` names, golden C15)."""
        if isinstance(mbar, Mbarrier):
            mbar = mbar.addr
        op = _redop(op)
        rtype, type_noftz = _reduce_type(type)
        noftz = bool(noftz) or type_noftz
        to_cluster = dst_space == "shared::cluster"
        if not to_cluster and dst_space != "global":
            raise ValueError(f"dst_space must be 'global' or 'shared::cluster', not {dst_space!r}")
        if to_cluster and mbar is None:
            raise ValueError("a shared::cluster destination completes on an mbarrier: pass mbar")
        if to_cluster and not 0 <= _int(dst, "dst") <= 0xFFFFFFFF:
            raise ValueError(f"dst {_hex(_int(dst, 'dst'))} is not a 32-bit shared::cluster address")
        self._bulk_reduce(cta, thread, to_cluster, dst, src, size, 0 if mbar is None else mbar,
                            int(op), int(rtype), bool(noftz))   # the binding checks and names each

    def cp_async_bulk_commit_group(self, cta=0, thread=0):
        """cp.async.bulk.commit_group."""
        self._commit_group(cta, thread)

    def cp_async_bulk_wait_group(self, n=0, cta=0, thread=0, read=False):
        """cp.async.bulk.wait_group{.read} N: completes the thread's committed bulk
        async-groups until at most N are pending (.read waits no less)."""
        if _int(n, "n") < 0:
            raise ValueError(f"wait_group N = {n}: N is a non-negative integer constant")
        if read:
            self._bulk_wait_group_read(_u32(cta, "cta"), _u32(thread, "thread"), _u32(n, "N"))
        else:
            self._wait_group(cta, thread, n)

    # --- cp.async, cp.async.bulk, st.async, st.bulk (docs/async-copies.md) ---------
    def cp_async(self, dst, src, cp_size, cta=0, thread=0, cache="ca", src_size=None, ignore_src=None,
                 prefetch=None, cache_policy=None):
        """cp.async.{ca|cg}.shared{::cta}.global{.L2::cache_hint}{.L2::64B|128B|256B}
        [dst], [src], cp-size{, src-size | , ignore-src}{, cache-policy}.

        ``dst`` a shared::cta address of CTA ``cta``, ``src`` a global address.
        ``src_size`` bytes are read (default cp-size) and the rest of cp-size is
        zero-filled; ``ignore_src=True`` writes cp-size zeros (observation 13).
        ``cache`` ('ca' / 'cg'), ``prefetch`` (64, 128, 256 or '.L2::128B') and
        ``cache_policy`` are hints: checked and recorded. Completes through the
        thread's cp.async-groups or cp.async.mbarrier.arrive."""
        cache = str(cache).strip().lstrip(".")
        if cache not in ("ca", "cg"):
            raise ValueError(f"cp.async cache operator {cache!r} is not .ca or .cg")
        if src_size is not None and ignore_src is not None:
            raise ValueError("cp.async takes src-size or ignore-src, not both (PTX ISA syntax)")
        cp_size = _u32(cp_size, "cp-size")
        size = cp_size if src_size is None else _u32(src_size, "src-size")
        self._cp_async(_u32(cta, "cta"), _u32(thread, "thread"), _u32(dst, "dst"), _u64(src, "src"),
                       cp_size, cache == "cg", size, bool(ignore_src), _prefetch_size(prefetch),
                       cache_policy is not None)

    def cp_async_commit_group(self, cta=0, thread=0):
        """cp.async.commit_group: the thread's uncommitted cp.async copies form a group."""
        self._cp_async_group(_u32(cta, "cta"), _u32(thread, "thread"), 0, 0)

    def cp_async_wait_group(self, n=0, cta=0, thread=0):
        """cp.async.wait_group N: completes the thread's cp.async-groups until at most
        the N most recent are pending."""
        self._cp_async_group(_u32(cta, "cta"), _u32(thread, "thread"), 1, _u32(n, "N"))

    def cp_async_wait_all(self, cta=0, thread=0):
        """cp.async.wait_all (= cp.async.commit_group; cp.async.wait_group 0)."""
        self._cp_async_group(_u32(cta, "cta"), _u32(thread, "thread"), 2, 0)

    def cp_async_mbarrier_arrive(self, mbar, cta=0, thread=0, noinc=False, space="shared::cta", type="b64"):
        """cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [mbar]: an arrive-on
        triggered when every earlier cp.async of the thread has completed. Without
        .noinc the pending count is raised by 1 now, so there is no net arrival
        (golden M3); .noinc counts as one arrival (M2).
        ``space``: 'shared::cta', 'shared' or 'generic' (ptxas rejects
        .shared::cluster, M1); ``type``: only 'b64' (ptxas rejects .b32)."""
        if isinstance(mbar, Mbarrier):
            mbar = mbar.addr
        space = str(space).strip().lstrip(".")
        if space not in ("shared::cta", "shared", "generic", ""):
            raise ValueError(f"cp.async.mbarrier.arrive has no .{space} form (ptxas: Illegal modifier; "
                             "the mbarrier is in the executing CTA's shared memory)")
        if str(type).strip().lstrip(".") != "b64":
            raise ValueError(f"cp.async.mbarrier.arrive takes the .b64 mbarrier object, not .{type} "
                             "(ptxas: Unexpected instruction types)")
        self._cp_async_mbarrier_arrive(_u32(cta, "cta"), _u32(thread, "thread"), _u32(mbar, "mbar"),
                                       bool(noinc))

    def cp_async_bulk(self, dst, src, size, mbar=None, cta=0, thread=0, dst_space="shared::cta",
                      src_space="global", cta_mask=None, byte_mask=None, cache_policy=None):
        """cp.async.bulk.<dst>.<src>.<completion> [dstMem], [srcMem], size{, [mbar]}
        {, ctaMask}{, cache-policy}{, byteMask}: every direction of the PTX ISA.

        (dst_space, src_space): ('shared::cta', 'global') and ('shared::cluster',
        'global') complete size bytes on ``mbar`` (``cta_mask``: .multicast::cluster,
        each CTA in the mask gets the bytes at dst's offset and its mbarrier at
        mbar's offset is credited, golden C4; 0 reaches none, C9; a bit beyond
        the cluster raises IllegalInstruction, C10); ('shared::cluster',
        'shared::cta') copies into a CTA of the cluster and credits that CTA's
        mbarrier at mbar's offset (C5, C15); ('global', 'shared::cta') completes
        through the thread's bulk async-group (``byte_mask``: .cp_mask, sm_100 or
        later). Size a multiple of 16, addresses 16-byte aligned, ranges inside
        their memory (each rule named when broken)."""
        if isinstance(mbar, Mbarrier):
            mbar = mbar.addr
        key = (str(dst_space).lstrip("."), str(src_space).lstrip("."))
        if key not in _BULK_DIRS:
            raise ValueError(f"cp.async.bulk has no .{key[0]}.{key[1]} direction "
                             f"(valid: {', '.join('.%s.%s' % k for k in _BULK_DIRS)})")
        direction = _BULK_DIRS[key]
        if direction != 3 and mbar is None:
            raise ValueError(f"cp.async.bulk.{key[0]}.{key[1]} completes on an mbarrier: pass mbar")
        if direction == 3 and mbar is not None:
            raise ValueError("cp.async.bulk.global.shared::cta completes through a bulk async-group; "
                             "it takes no mbar")
        self._bulk_copy(_u32(cta, "cta"), _u32(thread, "thread"), direction, _u64(dst, "dstMem"),
                        _u64(src, "srcMem"), _u32(size, "size"), _u32(mbar or 0, "mbar"),
                        cta_mask is not None, _u16(cta_mask or 0, "ctaMask"), byte_mask is not None,
                        _u16(byte_mask or 0, "byteMask"), cache_policy is not None)

    def cp_async_bulk_prefetch_l2(self, src, size, cta=0, thread=0, cache_policy=None):
        """cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [srcMem], size{, cache-policy}:
        checked (size a multiple of 16, 16-byte aligned, inside global memory);
        a cache hint with no visible effect."""
        self._bulk_prefetch_l2(_u32(cta, "cta"), _u32(thread, "thread"), _u64(src, "srcMem"),
                               _u32(size, "size"))

    def st_async(self, dst, value, mbar, type="u32", cta=0, thread=0, weak=False):
        """st.async{.weak}.shared::cluster.mbarrier::complete_tx::bytes{.v2|.v4}.type [dst], b, [mbar].

        ``type``: b32 u32 s32 f32 b64 u64 s64 f64 (golden C17: ptxas rejects the
        rest, and .v4 of a 64-bit type). ``value``: one number, a sequence of 2 or 4
        (the vector forms), or raw bytes (bytes / uint8 array) of the register(s),
        stored unchanged (C7). The destination CTA's mbarrier at mbar's offset is
        credited with the bytes stored (C7, C15). A cluster of 2 or more CTAs."""
        if isinstance(mbar, Mbarrier):
            mbar = mbar.addr
        t = str(type).strip().lstrip(".").lower()
        if t not in _ST_ASYNC_TYPES:
            raise ValueError(f"st.async has no .{t} form (ptxas accepts .b32 .u32 .s32 .f32 .b64 .u64 "
                             ".s64 .f64; golden C17)")
        dt = np.dtype(_ST_ASYNC_TYPES[t])
        raw, vec = _register_bytes(value, dt, t)
        if len(raw) % dt.itemsize:
            raise ValueError(f"{len(raw)} bytes are not a whole number of .{t} elements")
        if vec not in (1, 2, 4):
            raise ValueError(f"st.async stores 1, 2 (.v2) or 4 (.v4) elements, not {vec}")
        if vec * dt.itemsize > 16:
            raise ValueError(f"st.async.v4.{t} exceeds the 128-bit limit (ptxas rejects it; golden C17)")
        self._st_async(_u32(cta, "cta"), _u32(thread, "thread"), _u32(dst, "dst"), _u32(mbar, "mbar"),
                       raw, dt.itemsize, vec)

    def st_async_release(self, dst, value, type="u32", scope="gpu", mmio=False, cta=0, thread=0):
        """st.async{.mmio}.release.{gpu|sys}.global.type [dst], b (sm_100 or later, PTX ISA 8.7):
        a release store to global memory with no completion mechanism; "the completion
        of the store synchronizes with the end of the CTA", so nothing waits for it and
        it is done when the CTA exits (``finish()``; ``run()`` / ``step()`` complete it
        too). ``type``: b8 b16 b32 b64, u8..u64, s8..s64, f32, f64 (no vector form);
        ``value``: one number, or the raw bytes of the register. ``mmio`` needs
        ``scope="sys"``; ``dst`` aligned to the size, inside global memory."""
        t = str(type).strip().lstrip(".").lower()
        if t not in _ST_RELEASE_TYPES:
            raise ValueError(f"st.async.release.global has no .{t} form (PTX ISA: .b8 .b16 .b32 .b64 .u8 .u16 "
                             ".u32 .u64 .s8 .s16 .s32 .s64 .f32 .f64)")
        sc = str(scope).strip().lstrip(".").lower()
        if sc not in ("gpu", "sys"):
            raise ValueError(f"st.async.release takes .scope .gpu or .sys, not .{sc} (PTX ISA st.async; "
                             ".cluster is the scope of the .weak shared::cluster form)")
        dt = np.dtype(_ST_RELEASE_TYPES[t])
        if _is_raw(value) and len(value.tobytes() if isinstance(value, (np.ndarray, memoryview))
                                   else bytes(value)) != dt.itemsize:
            raise ValueError(f"st.async.release.global.{t} stores {dt.itemsize} byte"
                             f"{'s' if dt.itemsize > 1 else ''} (one .{t} register), not {len(value)}: "
                             f"raw bytes are the register's bytes, b\"7\" is the byte 0x37")
        raw, n = _register_bytes(value, dt, t)
        if n != 1:
            raise ValueError(f"st.async.release.global stores one value (no vector form), not {n}")
        self._st_async_release(_u32(cta, "cta"), _u32(thread, "thread"), _u64(dst, "dst"), raw,
                               sc == "sys", bool(mmio))

    def st_bulk(self, dst, size, initval=0, cta=0, thread=0):
        """st.bulk{.weak}{.shared::cta} [dst], size, initval: zeroes ``size`` bytes of
        the executing CTA's shared memory (sm_100 or later; size a multiple of 8,
        at most 16777216; initval 0)."""
        self._st_bulk(_u32(cta, "cta"), _u32(thread, "thread"), _u32(dst, "dst"), _u64(size, "size"),
                      _u64(initval, "initval"))

    # --- many operations in one call (docs/performance.md) ----------------------
    def cp_async_bulk_tensor_load_batch(self, tmap, coords, dst, mbar, cta=0, thread=0):
        """Many .tile loads of one map to shared::cta, all completing on ``mbar``:
        ``coords`` an (n, rank) integer array, ``dst`` one shared address or n.
        The same as n calls of cp_async_bulk_tensor_load in order, except that
        the batch is checked whole first: if any load would fault at issue, none
        is issued, and its error is raised prefixed ``operation i`` (``.index``)."""
        if self._tile_load_batch_fast(cta, thread, tmap, coords, dst, mbar):
            return   # int32 (n, rank) coords and uint32 (n,) dst arrays, taken as they are
        from .oplist import batch_arrays
        c, d, n = batch_arrays(coords, dst)
        self._tile_load_batch(cta, thread, tmap, c, d, mbar.addr if isinstance(mbar, Mbarrier) else mbar, n)

    def replay(self, ops, threads=1):
        """Issue every operation of an OpList in order, in one call without the
        GIL: the same results and errors as the one-by-one calls (the first
        failing operation stops the replay, raised with ``.index``).

        ``threads`` > 1 moves the bytes of .tile loads on that many threads
        (this one and threads - 1 more), where no one can tell: loads whose
        destinations may overlap stay in issue order on one thread, and they
        all land before any other operation reads or writes memory. Shared
        memory, mbarrier states, the trace and every error are those of
        ``threads=1`` (csrc/core/defer.h). The default is 1: a replay then
        starts no thread and takes one core, which is what a test suite run
        in parallel or a shared machine wants; ask for more when the replay
        is large (thousands of 16 KiB loads) and cores are idle. With the
        memory checks on (``checks=True``, the adversarial policy) it runs
        on one thread whatever ``threads`` says.

        The race checker (``race_checks``) follows a replay as it follows the
        one-by-one calls: the mbarrier records go through the same
        synchronisation layer, whose arrivals and waits order the loads."""
        threads = _int(threads, "threads")
        if not 1 <= threads <= 64:
            raise ValueError(f"threads must be in [1, 64]; got {threads}")
        self._replay(ops.records, ops.maps, threads)

    def __repr__(self):
        if "ctas" not in self.__dict__:       # its __init__ raised before the CTAs were made
            return f"<{type(self).__name__}: not constructed (the call that made it raised)>"
        return f"Machine(ctas={self.nctas}, smem_bytes={self.ctas[0].smem.size}, pending={self.pending})"


def _int(v, name):
    """An integer argument as is: a float, None or string is a TypeError naming
    it, never truncated."""
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(v).__name__}") from None


def _hex(v):
    """0x1f, or -0x10 for a negative value (never 0x-10)."""
    return f"-0x{-v:x}" if v < 0 else f"0x{v:x}"


def _parity(p):
    if p not in (0, 1):
        raise ValueError(f"phase parity {p!r} must be 0 or 1")


def _state(s):
    s = _int(s, "state")
    if not 0 <= s < 1 << 64:
        raise ValueError(f"mbarrier state {s} does not fit the .b64 operand")
    return s


def _tx(tx):
    if not 0 <= _int(tx, "tx") < 1 << 32:
        raise ValueError(f"tx count {tx} does not fit the .u32 operand")


# (dst space, src space) -> the core's direction (engine.h pa_bulk_dir).
# the Machine methods whose calls trace_ptx prints (kept while the trace is on)
_RECORDED = ("cp_async_bulk_tensor_load", "cp_async_bulk_tensor_store", "cp_reduce_async_bulk_tensor",
             "cp_async_bulk_prefetch_tensor", "cp_reduce_async_bulk", "cp_async_bulk_commit_group",
             "cp_async_bulk_wait_group", "cp_async", "cp_async_commit_group", "cp_async_wait_group",
             "cp_async_wait_all", "cp_async_mbarrier_arrive", "cp_async_bulk", "cp_async_bulk_prefetch_l2",
             "st_async", "st_async_release", "st_bulk", "tensormap_replace", "fence_proxy_async",
             "fence_proxy_tensormap", "fence_mbarrier_init", "fence", "bar_sync", "barrier_cluster",
             "cp_async_bulk_tensor_load_batch", "replay")
# id(the core machine) -> weak reference to the Machine recording its calls
_RECORDING = {}
_BULK_DIRS = {("shared::cta", "global"): 0, ("shared::cluster", "global"): 1,
              ("shared::cluster", "shared::cta"): 2, ("global", "shared::cta"): 3}
_ST_ASYNC_TYPES = {"b32": "<u4", "u32": "<u4", "s32": "<i4", "f32": "<f4",
                   "b64": "<u8", "u64": "<u8", "s64": "<i8", "f64": "<f8"}
_ST_RELEASE_TYPES = dict(_ST_ASYNC_TYPES, b8="<u1", u8="<u1", s8="<i1", b16="<u2", u16="<u2", s16="<i2")


def _is_raw(value):
    """Raw register bytes: a bytes-like object or a uint8 array."""
    return isinstance(value, (bytes, bytearray, memoryview)) or \
        (isinstance(value, np.ndarray) and value.dtype == np.uint8)


def _register_bytes(value, dt, t):
    """(bytes, element count) of an st.async source: raw register bytes as given
    (b"7" is the byte 0x37), or values the .t register holds exactly, converted
    to its little-endian bytes."""
    if _is_raw(value):
        raw = value.tobytes() if isinstance(value, (np.ndarray, memoryview)) else bytes(value)
        if len(raw) % dt.itemsize or len(raw) // dt.itemsize not in (1, 2, 4):
            raise ValueError(f"{len(raw)} raw bytes are not the register(s) of st.async.{t}: give "
                             f"{dt.itemsize} bytes (one .{t} register), or 2 or 4 times that (.v2, .v4)")
        return raw, len(raw) // dt.itemsize
    vals = np.atleast_1d(np.asarray(value))
    if vals.size == 0:
        raise ValueError(f"st.async.{t} needs a value: one number, a sequence of 2 (.v2) or 4 (.v4) "
                         f"numbers, or the register's {dt.itemsize} raw bytes; got an empty {type(value).__name__}")
    _check_register_values(vals, dt, t)
    return (vals.astype(dt).tobytes() if vals.size in (1, 2, 4) else b""), vals.size


def _check_register_values(vals, dt, t):
    """Values that the .t register holds exactly (.b types take either sign)."""
    if vals.dtype.kind not in "iufb" or (dt.kind in "iu" and vals.dtype.kind == "f"):
        raise ValueError(f"st.async.{t} takes integers{'' if dt.kind in 'iu' else ' or floats'}, "
                         f"not {vals.dtype} values")
    if dt.kind in "iu" and vals.size:
        bits = 8 * dt.itemsize
        lo = -(1 << (bits - 1)) if t[0] in "sb" else 0
        hi = (1 << bits) - 1 if t[0] in "ub" else (1 << (bits - 1)) - 1
        v = [int(x) for x in vals.reshape(-1)]
        if min(v) < lo or max(v) > hi:
            raise ValueError(f"st.async.{t} value out of range [{lo}, {hi}]: {vals.reshape(-1).tolist()}")
    if dt.kind == "f" and vals.size:
        with np.errstate(over="ignore", invalid="ignore"):
            wide = vals.astype(np.float64)
            big = np.isfinite(wide) & ~np.isfinite(wide.astype(dt))
        if big.any():   # rounding is the conversion's; a finite value turned infinite is not
            raise ValueError(f"st.async.{t} value {wide[big][0]!r} is beyond the largest finite .{t} "
                             f"({np.finfo(dt).max!r})")


def _uint(v, bits, what):
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(v).__name__}") from None
    if not 0 <= v < 1 << bits:
        raise ValueError(f"{what} = {v} does not fit the .u{bits} operand")
    return v


def _u16(v, what):
    return _uint(v, 16, what)


def _u32(v, what):
    return _uint(v, 32, what)


def _u64(v, what):
    return _uint(v, 64, what)


def _prefetch_size(p):
    """.L2::64B / 128B / 256B as 64 / 128 / 256; None as 0."""
    if p is None:
        return 0
    if isinstance(p, str):
        key = p.strip().lstrip(".")
        key = key[len("L2::"):] if key.startswith("L2::") else key
        p = int(key[:-1]) if key.endswith("B") and key[:-1].isdigit() else key
    if p not in (64, 128, 256):
        raise ValueError(f"cp.async prefetch size {p!r} is not .L2::64B, .L2::128B or .L2::256B")
    return int(p)
