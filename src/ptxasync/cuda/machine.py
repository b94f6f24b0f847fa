"""``Machine(backend="cuda")``: the Machine's API, every operation run on a GPU.

The machine keeps the Machine's memories (each CTA's shared memory, the
registered global buffers: NumPy arrays, as on the model) and the operations
issued on it. At each point where the model would make results visible (a
wait of any kind, an arrive, which returns a state word, ``CTA.read``,
``read_global``, ``run``, ``finish``, ``step``, ``sync``) the operations so far
run on the GPU as one generated kernel (``ptxasync.cuda.Program``), from the
memories as they were when the first operation was issued; the GPU's shared
memory (every CTA's), global buffers and mbarrier words are then written back
into the machine's memories. A fault on the GPU, or a wait that timed out,
raises the model's exception (IllegalInstruction, IllegalAddress,
MisalignedAddress, Deadlock); the memories then keep what the last good run
left.

What differs from the model (the GPU decides, the model is not consulted):
the arguments are checked by the generated kernel's rules (ptxgen), not by the
model's; writes into the NumPy arrays count only before the first operation
(later, ``CTA.write`` is an ``st.shared`` in program order); shared addresses
start at 0x400 (the first KiB of a CTA's window is the system's on sm_90);
every global address an operation names must be inside a registered buffer
(the GPU places the buffers: its addresses are not the model's, and the tensor
maps are encoded again at the GPU's); thread 0 of each CTA issues its CTA's
operations in order. Fences and CTA barriers are accepted and issue nothing:
one thread issues everything, and the kernel fences where a copy needs it.
"""
import numpy as np

from .. import _core
from ..machine import CTA, Machine
from ..tensormap import TensorMap
from ._driver import Unavailable, why_unavailable
from .program import SMEM_BASE, Program
from .ptxgen import generate
from .runner import run_gpu

__all__ = ["CudaMachine", "CudaMbarrier"]


class _GRef:
    """A global address as (registered buffer index, offset), fixed when issued."""
    __slots__ = ("index", "offset")

    def __init__(self, index, offset):
        self.index, self.offset = index, offset


class _MapSpec:
    """A TensorMap of the model as the encode parameters over a registered buffer."""

    def __init__(self, kind, where, args):
        self.kind, self.where, self.args = kind, where, args


class CudaMbarrier:
    """An mbarrier object in a CTA's shared memory, on the GPU (the Mbarrier API)."""

    def __init__(self, machine, rank, addr):
        self._machine, self.cta, self.addr = machine, rank, addr

    def init(self, count=1, *, thread=0):
        """mbarrier.init (recorded)."""
        self._machine._record("mbarrier_init", (self.addr, count), {})
        return self

    def arrive(self, count=1, *, thread=0):
        """The state word the arrive returned on the GPU (bits 32-63 are the barrier's state)."""
        i = self._machine._record("mbarrier_arrive", (self.addr,), {} if count == 1 else {"count": count})
        return self._machine.sync().states[i]

    def arrive_expect_tx(self, tx, *, thread=0):
        """mbarrier.arrive.expect_tx: runs the program to here; the state word it returned on the GPU."""
        i = self._machine._record("mbarrier_arrive_expect_tx", (self.addr, tx), {})
        return self._machine.sync().states[i]

    def expect_tx(self, tx, *, thread=0):
        """mbarrier.expect_tx (recorded)."""
        self._machine._record("mbarrier_expect_tx", (self.addr, tx), {})

    def complete_tx(self, tx, *, thread=0):
        """mbarrier.complete_tx (recorded)."""
        self._machine._record("mbarrier_complete_tx", (self.addr, tx), {})

    def wait(self, parity, *, thread=0):
        """Waits (bounded) until the phase of ``parity`` completes; Deadlock if it did not."""
        self._machine._record("mbarrier_wait", (self.addr, parity), {})
        self._machine.sync()

    def try_wait(self, parity, *, thread=0):
        """True once the phase of ``parity`` completed, False if it did not within the bound."""
        i = self._machine._record("mbarrier_try_wait", (self.addr, parity), {})
        return self._machine.sync().tests[i]

    def test_wait(self, parity, *, thread=0):
        """mbarrier.test_wait.parity at this point of the GPU's program (copies in flight
        may not have landed yet: an answer for one instant)."""
        i = self._machine._record("mbarrier_test_wait", (self.addr, parity), {})
        return self._machine.sync().tests[i]

    def __repr__(self):
        return f"CudaMbarrier(cta={self.cta}, addr=0x{self.addr:x})"


class _CudaCTA(CTA):
    def mbarrier(self, offset):
        return CudaMbarrier(self._machine, self.rank, self.addr(offset))

    def read(self, offset, dtype, shape=None, thread=0):
        from ..machine import _read_args
        offset, dtype, shape = _read_args(offset, dtype, shape)
        self._machine.sync()
        return self.view(dtype, shape, offset).copy()

    def write(self, offset, data, thread=0):
        """st.shared of ``data`` at ``offset`` by thread 0, in program order."""
        raw = np.frombuffer(memoryview(np.ascontiguousarray(data)).cast("B"), dtype=np.uint8).copy()
        self._machine._record("write_shared", (self.addr(offset), raw), {})


def _no(name):
    def method(self, *a, **kw):
        raise NotImplementedError(f"Machine(backend='cuda') does not run {name} (the model does: "
                                  f"Machine(backend='model'))")
    method.__name__ = name
    method.__doc__ = f"Not run on the GPU backend: raises NotImplementedError ({name})."
    return method


class CudaMachine(Machine):
    """Machine(backend="cuda"): see the module's text. ``threads`` per CTA (thread 0
    issues); ``smem_bytes`` is the window of each CTA, as on the model (its first KiB
    is the system's on the GPU)."""

    def __init__(self, ctas=1, smem_bytes=200 * 1024, policy="in_order", seed=0, target="sm_90a",
                 hazards="raise", trace=False, checks=False, race_checks=True, backend="cuda", threads=128):
        why = why_unavailable()
        if why:
            raise Unavailable(f"Machine(backend='cuda') runs every operation on a GPU, and none can be used "
                              f"here: {why}")
        if str(target) != "sm_90a":
            raise ValueError(f"Machine(backend='cuda') generates sm_90a kernels, not {target}")
        if smem_bytes <= SMEM_BASE or (smem_bytes - SMEM_BASE) % 16:
            raise ValueError(f"smem_bytes = {smem_bytes}: more than {SMEM_BASE} (the system's first KiB) and a "
                             "multiple of 16")
        super().__init__(ctas=ctas, smem_bytes=smem_bytes, target=target, race_checks=False)
        self.backend = "cuda"
        self.threads = int(threads)
        self.ctas = [_CudaCTA(self, r) for r in range(self.nctas)]
        self._ops = []           # (name, args, kw): the Program's operations, addresses resolved
        self._initial = None     # ([each CTA's shared memory], [each buffer's bytes]) at the first operation
        self._done = 0           # operations the last GPU run covered
        self.result = None       # the last GPU run (ptxasync.cuda.Result)

    # --- memories -------------------------------------------------------------------
    def register(self, array, address=None, align=256):
        """As Machine.register; a buffer registered after the first operation starts as it is now."""
        buf = super().register(array, address=address, align=align)
        if self._initial is not None:
            self._initial[1].append(buf.bytes.copy())
        return buf

    def mbarrier(self, offset, cta=0):
        """The mbarrier object at ``offset`` of CTA ``cta``'s shared memory, on the GPU (call ``.init``)."""
        return self.cta(cta).mbarrier(offset)

    def _start(self):
        if self._initial is None:
            self._initial = ([c.smem.copy() for c in self.ctas], [b.bytes.copy() for b in self._buffers])

    def _record(self, name, args, kw):
        self._start()
        self._ops.append((name, args, kw))
        return len(self._ops) - 1

    def _g(self, address):
        address = int(address)
        for i, b in enumerate(self._buffers):
            if b.address <= address < b.address + b.nbytes:
                return _GRef(i, address - b.address)
        raise ValueError(f"global address 0x{address:x} is in no registered buffer: on the GPU the buffers are "
                         "placed anew, so an operation's global addresses must be inside one")

    def _map(self, tmap):
        if not isinstance(tmap, TensorMap):
            raise NotImplementedError("Machine(backend='cuda') takes the tensor map as a TensorMap, not the "
                                      "global address of one")
        f = tmap.fields
        if f["kind"] not in ("tiled", "im2col"):
            raise NotImplementedError(f"a {f['kind']} map has no sm_90 load here")
        rank = f["rank"]
        args = dict(dtype=int(f["dtype"]), rank=rank, global_dim=list(f["global_dim"][:rank]),
                    global_strides=list(f["global_strides"][:rank - 1]),
                    element_strides=list(f["element_strides"][:rank]), interleave=int(f["interleave"]),
                    swizzle=int(f["swizzle"]), l2_promotion=int(f["l2_promotion"]), oob_fill=int(f["oob_fill"]))
        if f["kind"] == "tiled":
            args["box_dim"] = list(f["box_dim"][:rank])
        else:
            args.update(pixel_box_lower=list(f["pixel_box_lower"]), pixel_box_upper=list(f["pixel_box_upper"]),
                        channels_per_pixel=int(f["channels_per_pixel"]),
                        pixels_per_column=int(f["pixels_per_column"]))
        return _MapSpec(f["kind"], self._g(f["global_address"]), args)

    # --- the GPU run ------------------------------------------------------------------
    def program(self):
        """The operations issued so far as a Program, from the memories at the first one."""
        self._start()
        smem, bufs = self._initial
        n = self.ctas[0].smem.size - SMEM_BASE
        prog = Program(smem_bytes=n, ctas=self.nctas, threads=self.threads, smem_fill=0)
        for r in range(self.nctas):
            prog.smem_ctas[r][:] = smem[r][SMEM_BASE:SMEM_BASE + n]
        pbufs = [prog.register(b) for b in bufs]
        maps = {}

        def conv(v):
            if isinstance(v, _GRef):
                return pbufs[v.index] + v.offset
            if isinstance(v, _MapSpec):
                if id(v) not in maps:
                    where = pbufs[v.where.index] + v.where.offset
                    maps[id(v)] = (prog.tensor_map_tiled(where, **v.args) if v.kind == "tiled"
                                   else prog.tensor_map_im2col(where, **v.args))
                return maps[id(v)]
            return v
        for name, args, kw in self._ops:
            getattr(prog, name)(*[conv(a) for a in args], **{k: conv(v) for k, v in kw.items()})
        generate(prog)          # what the kernel cannot do is refused here, naming it
        return prog

    def sync(self):
        """Run the operations issued so far on the GPU and write what it left into the
        machine's memories; returns the run's Result. A fault or a wait that timed out
        raises the model's exception for it."""
        if self.result is not None and self._done == len(self._ops):
            return self.result
        prog = self.program()
        r = run_gpu(prog)
        r.raise_verdict()
        n = prog.smem_bytes
        for k in range(self.nctas):
            self.ctas[k].smem[SMEM_BASE:SMEM_BASE + n] = np.frombuffer(r.smem_ctas[k], dtype=np.uint8)
        for b, data in zip(self._buffers, r.buffers):
            b.bytes[:] = np.frombuffer(data, dtype=np.uint8)[:b.nbytes]
        self.result, self._done = r, len(self._ops)
        return r

    def mbarrier_addresses(self):
        """Shared addresses of the mbarriers initialised so far (their 8 bytes hold the GPU's words)."""
        return sorted({int(a[0]) for name, a, _ in self._ops if name == "mbarrier_init"})

    def run(self):
        """Runs everything issued so far on the GPU (``sync``)."""
        self.sync()

    def finish(self):
        """The kernel ends here: runs everything issued so far on the GPU (``sync``)."""
        self.sync()

    def step(self):
        """Runs everything issued so far (the GPU completes it all); False: nothing is left pending."""
        self.sync()
        return False

    @property
    def pending(self):
        """Operations issued since the last GPU run."""
        return len(self._ops) - self._done

    # --- operations (recorded; the Machine's signatures) -------------------------------
    def cp_async_bulk_tensor_load(self, tmap, coords, dst, mbar, cta=0, thread=0, dst_space="shared::cta",
                                  cta_mask=None, load_mode="tile", im2col_offsets=None, w_halo=0, w_offset=0,
                                  cta_group=None):
        if cta_group is not None or load_mode not in ("tile", "im2col"):
            raise NotImplementedError(f"load mode {load_mode!r} / cta_group: sm_100 forms, not run here")
        kw = dict(cta=cta, thread=thread, dst_space=dst_space, cta_mask=cta_mask, load_mode=load_mode)
        if im2col_offsets is not None:
            kw["im2col_offsets"] = list(im2col_offsets)
        self._record("cp_async_bulk_tensor_load", (self._map(tmap), list(coords), int(dst), _addr(mbar)), kw)

    def cp_async_bulk_tensor_load_batch(self, tmap, coords, dst, mbar, cta=0, thread=0):
        """One recorded .tile load per row of ``coords`` (in order)."""
        coords = np.asarray(coords)
        dsts = np.broadcast_to(np.asarray(dst), (len(coords),))
        for c, d in zip(coords, dsts):
            self.cp_async_bulk_tensor_load(tmap, [int(x) for x in c], int(d), mbar, cta=cta, thread=thread)

    def cp_async_bulk_tensor_store(self, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        self._record("cp_async_bulk_tensor_store", (self._map(tmap), list(coords), int(src)),
                     dict(cta=cta, thread=thread, load_mode=load_mode))

    def cp_reduce_async_bulk_tensor(self, op, tmap, coords, src, cta=0, thread=0, load_mode="tile"):
        self._record("cp_reduce_async_bulk_tensor", (op, self._map(tmap), list(coords), int(src)),
                     dict(cta=cta, thread=thread, load_mode=load_mode))

    def cp_reduce_async_bulk(self, op, type, dst, src, size, mbar=None, cta=0, thread=0, noftz=False,
                             dst_space="global"):
        d = self._g(dst) if dst_space == "global" else int(dst)
        self._record("cp_reduce_async_bulk", (op, type, d, int(src), size),
                     dict(mbar=None if mbar is None else _addr(mbar), cta=cta, thread=thread, noftz=noftz,
                          dst_space=dst_space))

    def cp_async_bulk_commit_group(self, cta=0, thread=0):
        self._record("cp_async_bulk_commit_group", (), dict(cta=cta, thread=thread))

    def cp_async_bulk_wait_group(self, n=0, cta=0, thread=0, read=False):
        self._record("cp_async_bulk_wait_group", (n,), dict(cta=cta, thread=thread, read=read))
        self.sync()

    def cp_async(self, dst, src, cp_size, cta=0, thread=0, cache="ca", src_size=None, ignore_src=None,
                 prefetch=None, cache_policy=None):
        self._record("cp_async", (int(dst), self._g(src), cp_size),
                     dict(cta=cta, thread=thread, cache=cache, src_size=src_size, ignore_src=ignore_src,
                          prefetch=prefetch))

    def cp_async_commit_group(self, cta=0, thread=0):
        self._record("cp_async_commit_group", (), dict(cta=cta, thread=thread))

    def cp_async_wait_group(self, n=0, cta=0, thread=0):
        self._record("cp_async_wait_group", (n,), dict(cta=cta, thread=thread))
        self.sync()

    def cp_async_wait_all(self, cta=0, thread=0):
        self._record("cp_async_wait_all", (), dict(cta=cta, thread=thread))
        self.sync()

    def cp_async_mbarrier_arrive(self, mbar, cta=0, thread=0, noinc=False, space="shared::cta", type="b64"):
        self._record("cp_async_mbarrier_arrive", (_addr(mbar),), dict(cta=cta, thread=thread, noinc=noinc))

    def cp_async_bulk(self, dst, src, size, mbar=None, cta=0, thread=0, dst_space="shared::cta",
                      src_space="global", cta_mask=None, byte_mask=None, cache_policy=None):
        d = self._g(dst) if str(dst_space).lstrip(".") == "global" else int(dst)
        s = self._g(src) if str(src_space).lstrip(".") == "global" else int(src)
        self._record("cp_async_bulk", (d, s, size),
                     dict(mbar=None if mbar is None else _addr(mbar), cta=cta, thread=thread, dst_space=dst_space,
                          src_space=src_space, cta_mask=cta_mask, byte_mask=byte_mask))

    def st_async(self, dst, value, mbar, type="u32", cta=0, thread=0, weak=False):
        self._record("st_async", (int(dst), value, _addr(mbar)), dict(type=type, cta=cta, thread=thread, weak=weak))

    def barrier_cluster(self, relaxed=False):
        self._record("barrier_cluster", (), {})

    def read_global(self, address, dtype, shape, cta=0, thread=0):
        """Runs the program to here on the GPU; a copy of global memory as it left it."""
        self.sync()
        dt = np.dtype(dtype)
        shape = (shape,) if np.isscalar(shape) else tuple(shape)
        ref = self._g(address)
        b = self._buffers[ref.index]
        nbytes = int(np.prod(shape)) * dt.itemsize
        if ref.offset + nbytes > b.nbytes:
            raise _core.IllegalAddress(f"global bytes [0x{int(address):x}, +{nbytes}) are not inside one "
                                       "registered buffer")
        return b.bytes[ref.offset:ref.offset + nbytes].copy().view(dt).reshape(shape)

    # ordering within one issuing thread: nothing to issue (see the module's text)
    def fence_proxy_async(self, cta=0, thread=0, space=None):
        """Issues nothing: one thread issues in program order, and the kernel fences after its st.shared."""

    def fence_mbarrier_init(self, cta=0, thread=0):
        """Issues nothing: every mbarrier.init of the kernel is followed by fence.mbarrier_init."""

    def fence(self, cta=0, thread=0, scope="cta", sem="acq_rel"):
        """Issues nothing: one thread of each CTA issues, in program order."""

    def bar_sync(self, cta=0, barrier=0, threads=None):
        """Issues nothing: one thread of each CTA issues, in program order."""

    write_global = _no("write_global")
    tensormap_replace = _no("tensormap_replace")
    fence_proxy_tensormap = _no("fence_proxy_tensormap")
    cp_async_bulk_prefetch_tensor = _no("cp_async_bulk_prefetch_tensor")
    cp_async_bulk_prefetch_l2 = _no("cp_async_bulk_prefetch_l2")
    st_async_release = _no("st_async_release (sm_100)")
    st_bulk = _no("st_bulk (sm_100)")
    replay = _no("replay")
    exit = _no("exit")

    def __repr__(self):
        return f"Machine(backend='cuda', ctas={self.nctas}, smem_bytes={self.ctas[0].smem.size}, " \
               f"issued={len(self._ops)}, run={self._done})"


def _addr(mbar):
    return int(getattr(mbar, "addr", mbar))


# each recorded operation says what the Machine's says (its PTX form and rules): the GPU runs it
for _name, _f in list(vars(CudaMachine).items()):
    if callable(_f) and not _name.startswith("_") and not _f.__doc__:
        _model = getattr(Machine, _name, None)
        if _model is not None and _model.__doc__:
            _f.__doc__ = _model.__doc__ + ("\n\n(Runs the program to here on the GPU.)" if "wait" in _name else
                                           "\n\n(Recorded; run on the GPU at the next sync point.)")
