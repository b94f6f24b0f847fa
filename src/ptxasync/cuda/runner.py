"""Run a Program on the GPU, on the model, and on both with a byte-for-byte diff.

``run_gpu(prog)`` and ``run_model(prog, addresses)`` give the same Result: the
verdict (None, or the model's exception class name for a fault), the final
dynamic shared memory, every global buffer, each mbarrier's state word (read by
one ``arrive.expect_tx`` of 1 byte after the program, the same operation on both
engines) and the state word of every arrive. ``diff(prog)`` runs the GPU first
(it decides the addresses), then the model at the same addresses, and names the
first difference: its shared address or global address and, where a tensor
copy put the byte there, the box element and tensor coordinate.
"""
import struct

import numpy as np

from .. import _core
from .program import GAddr, MapRef, Program
from .ptxgen import ENTRY, generate

__all__ = ["Result", "Diff", "run_gpu", "run_model", "diff", "assert_same", "ERRORS"]

# CUDA errors of a kernel and the model's exceptions for the same fault.
ERRORS = {"CUDA_ERROR_ILLEGAL_INSTRUCTION": "IllegalInstruction",
          "CUDA_ERROR_ILLEGAL_ADDRESS": "IllegalAddress",
          "CUDA_ERROR_MISALIGNED_ADDRESS": "MisalignedAddress"}
# A wait that timed out on the GPU is a wait the model proves can never complete.
TIMEOUT = "Deadlock"
STATE_MASK = 0xFFFFFFFF00000000   # state bits 0-31 are not barrier state (golden R9)


class Result:
    """What one engine did with a program."""

    def __init__(self, engine):
        self.engine = engine
        self.verdict = None          # None, or the model's exception name for what happened
        self.message = ""
        self.encode = []             # per map: (accepted, 128 bytes or None, message)
        self.smem = None             # the dynamic shared memory after the run (bytes; CTA 0's)
        self.smem_ctas = []          # every CTA's dynamic shared memory after the run
        self.buffers = []            # every global buffer after the run (bytes)
        self.addresses = []          # where each buffer lived
        self.states = {}             # op index -> arrive state word
        self.waits = {}              # op index -> True (completed) / False (timed out)
        self.probes = {}             # mbarrier address -> test_wait.parity 0 after the program
        self.tests = {}              # op index -> what a try_wait / test_wait answered (True / False)
        self.hazards = []            # (model) undefined behaviour found, one message each
        self.issued = None           # operations issued (all unless a wait timed out / a fault)
        self.smem_base = None
        self.info = {}

    def raise_verdict(self):
        """Raise the model's exception for a fault or timeout seen here."""
        if self.verdict:
            cls = getattr(_core, self.verdict, _core.PtxAsyncError)
            raise cls(f"[{self.engine}] {self.message}")

    def __repr__(self):
        return f"Result({self.engine}, verdict={self.verdict}, issued={self.issued})"


# --- the GPU --------------------------------------------------------------------------

_worker = None


def worker():
    global _worker
    if _worker is None:
        from .worker import Worker
        _worker = Worker()
    return _worker


def _require():
    from ._driver import Unavailable, why_unavailable
    why = why_unavailable()
    if why:
        raise Unavailable(why)


def gpu_info():
    """GPU name, compute capability, CUDA driver version, kernel driver version."""
    _require()
    ans = worker().request({"op": "info"})
    if ans.get("error"):
        raise RuntimeError(ans.get("message", ans["error"]))
    return ans["info"]


def run_gpu(prog):
    """Run ``prog`` on the GPU (a child process; a fault ends it and the next run
    starts another). Returns a Result; a fault is its verdict, not an exception."""
    _require()
    ptx, slots = generate(prog)
    status_words = 2 + len(slots)
    smem_in = b"".join(x.tobytes() for x in prog.smem_ctas)
    bufs = [(smem_in, len(smem_in)), (b"\0" * 8 * status_words, 8 * status_words)]
    bufs += [(b.data.tobytes(), b.nbytes) for b in prog.buffers]
    maps = []
    for m in prog.maps:
        bi, off, args = m.driver_args()
        maps.append((m.kind, None if bi is None else bi + 2, off, args))
    params = [("buffer", 0), ("buffer", 1)] + [("buffer", b.index + 2) for b in prog.buffers]
    params += [("map", m.index) for m in prog.maps]
    req = {"op": "run", "ptx": ptx if prog.ops else ptx, "entry": ENTRY, "buffers": bufs, "maps": maps,
           "params": params, "threads": prog.threads, "smem_bytes": prog.smem_bytes, "ctas": prog.ctas}
    ans = worker().request(req)
    if ans.get("error") == "not_expressible":
        from ._driver import NotExpressible
        raise NotExpressible(ans["message"])
    if ans.get("error") in ("worker_exception", "worker_died", "bad_request", "unavailable"):
        raise RuntimeError(f"the GPU run failed: {ans.get('message', ans['error'])}")
    r = Result("gpu")
    r.ptx = ptx
    r.addresses = ans.get("addresses", [])[2:]
    for name, raw in ans.get("maps", []):
        r.encode.append((raw is not None, raw, name))
    if any(not ok for ok, _, _ in r.encode):
        r.verdict = "InvalidValue"
        r.message = "; ".join(f"map {i}: {name}" for i, (ok, _, name) in enumerate(r.encode) if not ok)
        return r
    err = ans.get("error")
    if err:
        r.verdict = ERRORS.get(err, "CudaError")
        r.message = err + (f": {ans['jit_log']}" if ans.get("jit_log") else "") + \
            (f" ({ans['message']})" if ans.get("message") else "")
        r.cuda_error = err
        return r
    after = ans["buffers_after"]
    n = prog.smem_bytes
    r.smem_ctas = [after[0][k * n:(k + 1) * n] for k in range(prog.ctas)]
    r.smem = r.smem_ctas[0]
    status = struct.unpack(f"<{status_words}Q", after[1])
    r.buffers = after[2:]
    r.smem_base = status[0]
    r.cluster_size = status[1]
    for (kind, key), v in zip(slots, status[2:]):
        if kind == "state":
            r.states[key] = v
        elif kind == "wait":
            r.waits[key] = v == 1
        elif kind in ("try", "test"):
            r.tests[key] = v == 1
        else:
            r.probes[key] = v
    if r.smem_base != prog.smem_base:
        raise RuntimeError(f"the GPU's dynamic shared memory starts at {r.smem_base:#x}, not at "
                           f"{prog.smem_base:#x}: make the program's shared addresses relative to it "
                           f"(Program(smem_base={r.smem_base:#x}))")
    if r.cluster_size != prog.ctas:
        raise RuntimeError(f"the kernel ran in a cluster of {r.cluster_size} CTAs, not {prog.ctas}")
    timed_out = sorted(i for i, ok in r.waits.items() if not ok)
    r.issued = timed_out[0] if timed_out else len(prog.ops)
    if timed_out:
        r.verdict = TIMEOUT
        r.message = f"the wait of operation {timed_out[0]} timed out (the phase did not complete)"
    return r


# --- the model ------------------------------------------------------------------------

def _resolve(x, addresses, maps):
    if isinstance(x, GAddr):
        return x.resolve(addresses)
    if isinstance(x, MapRef):
        return maps[x.index]
    if isinstance(x, (list, tuple)):
        return type(x)(_resolve(v, addresses, maps) for v in x)
    return x


def run_model(prog, addresses=None):
    """Run ``prog`` on the model; ``addresses`` (one per buffer) default to ones
    the model picks (give the GPU's to compare)."""
    from ..machine import Machine
    r = Result("model")
    # hazards reported, not raised, with the memory checks on: a program with undefined
    # behaviour (two copies writing the same bytes with no order between them, ...) still
    # runs, and the diff says that the GPU's bytes are only one allowed outcome
    m = Machine(ctas=prog.ctas, smem_bytes=prog.smem_base + prog.smem_bytes, hazards="report", checks=True)
    arrays = []
    for i, b in enumerate(prog.buffers):
        arr = b.data.copy()
        gb = m.register(arr, address=None if addresses is None else addresses[i])
        arrays.append(arr)
        r.addresses.append(gb.address)
    base = prog.smem_base
    for k, data in enumerate(prog.smem_ctas):
        m.cta(k).smem[base:base + prog.smem_bytes] = data
    maps = []
    for mref in prog.maps:
        try:
            tm = mref.model(r.addresses)
            maps.append(tm)
            r.encode.append((True, bytes(tm), "CUDA_SUCCESS"))
        except _core.InvalidValue as e:
            maps.append(None)
            r.encode.append((False, None, str(e)))
    r.machine, r.maps = m, maps
    if any(not ok for ok, _, _ in r.encode):
        r.verdict = "InvalidValue"
        r.message = "; ".join(f"map {i}: {msg}" for i, (ok, _, msg) in enumerate(r.encode) if not ok)
        return r
    r.issued = len(prog.ops)
    for i, op in enumerate(prog.ops):
        args = _resolve(op.args, r.addresses, maps)
        kw = {k: _resolve(v, r.addresses, maps) for k, v in op.kw.items()}
        try:
            out = _apply(m, prog, op.name, args, kw)
        except _core.PtxAsyncError as e:
            r.verdict, r.message, r.issued = type(e).__name__, f"operation {i} ({op!r}): {e}", i
            if isinstance(e, _core.Deadlock):
                r.waits[i] = False
            break
        if op.name in ("mbarrier_arrive", "mbarrier_arrive_expect_tx"):
            r.states[i] = int(out)
        elif op.name == "mbarrier_wait":
            r.waits[i] = True
        elif op.name in ("mbarrier_try_wait", "mbarrier_test_wait"):
            r.tests[i] = bool(out)
    if r.verdict not in (None, "Deadlock"):
        return r
    # as the kernel ends: the groups drained, then everything pending completes (what the
    # GPU's probes and copy-out see once the copies have landed)
    try:
        m.cp_async_bulk_wait_group(0)
        m.cp_async_wait_all()
        m.run()
    except _core.PtxAsyncError as e:
        if r.verdict is None:
            r.verdict, r.message = type(e).__name__, f"completing the program: {e}"
    for a in prog.mbarriers():
        rank, local = prog.split(a)
        try:
            r.probes[a] = int(bool(m.mbarrier(local, rank).test_wait(0)))
        except _core.PtxAsyncError as e:
            if r.verdict is None:
                r.verdict, r.message = type(e).__name__, f"probing the mbarrier at {a:#x}: {e}"
    r.hazards = [h.message for h in m.hazards]
    r.smem_ctas = [m.cta(k).smem[base:base + prog.smem_bytes].tobytes() for k in range(prog.ctas)]
    r.smem = r.smem_ctas[0]
    r.buffers = [a.reshape(-1).view(np.uint8).tobytes() for a in arrays]
    r.smem_base = base
    return r


def _apply(m, prog, name, args, kw):
    if name == "barrier_cluster":
        return m.barrier_cluster(*args, **kw)
    if name == "write_shared":
        rank, local = prog.split(args[0])
        m.cta(rank).write(local, np.frombuffer(bytes(args[1]), dtype=np.uint8)
                          if not isinstance(args[1], np.ndarray) else args[1])
        m.fence_proxy_async(cta=rank)        # as the generated kernel does after the stores
        return None
    if name.startswith("mbarrier_"):
        rank, local = prog.split(args[0])
        bar = m.mbarrier(local, rank)
        rest = args[1:]
        if name == "mbarrier_init":
            return bar.init(*rest, **kw)
        if name == "mbarrier_arrive":
            return bar.arrive(*rest, **kw)
        if name == "mbarrier_arrive_expect_tx":
            return bar.arrive_expect_tx(*rest, **kw)
        if name == "mbarrier_expect_tx":
            return bar.expect_tx(*rest, **kw)
        if name == "mbarrier_complete_tx":
            return bar.complete_tx(*rest, **kw)
        if name == "mbarrier_wait":
            return bar.wait(*rest, **kw)
        if name == "mbarrier_try_wait":
            return bar.try_wait(*rest, **kw)
        if name == "mbarrier_test_wait":
            return bar.test_wait(*rest, **kw)
        raise NotImplementedError(name)
    return getattr(m, name)(*args, **kw)


# --- the diff ---------------------------------------------------------------------------

class Diff:
    """The model against the GPU for one program: ``.same`` and the differences
    (first of each kind), each one line."""

    def __init__(self, prog, gpu, model):
        self.prog, self.gpu, self.model = prog, gpu, model
        self.problems = []
        # undefined behaviour the model found in the program: where the engines differ, the
        # GPU's result is one of the outcomes the PTX ISA allows
        self.undefined = list(getattr(model, "hazards", []))
        self._compare()

    @property
    def same(self):
        return not self.problems

    def __bool__(self):
        return self.same

    def _compare(self):
        g, m, p = self.gpu, self.model, self.prog
        for i, ((ok_g, raw_g, name), (ok_m, raw_m, msg)) in enumerate(zip(g.encode, m.encode)):
            if ok_g != ok_m:
                self.problems.append(f"map {i}: the driver {'accepted' if ok_g else 'rejected (' + name + ')'}, "
                                     f"the model {'accepted' if ok_m else 'rejected (' + msg + ')'}")
            elif ok_g and raw_g != raw_m:
                k = next(j for j in range(128) if raw_g[j] != raw_m[j])
                self.problems.append(f"map {i}: byte {k} differs: driver 0x{raw_g[k]:02x}, model 0x{raw_m[k]:02x}")
        if g.verdict != m.verdict:
            self.problems.append(f"verdict: GPU {g.verdict or 'completed'} ({g.message}), "
                                 f"model {m.verdict or 'completed'} ({m.message})")
            return
        if g.verdict and g.verdict != TIMEOUT:
            return                      # both faulted the same way: nothing was read back
        if g.verdict == TIMEOUT:
            if g.issued != m.issued:
                self.problems.append(f"the GPU's wait timed out at operation {g.issued}, "
                                     f"the model's deadlocked at {m.issued}")
            return                      # pending copies may still land: memory is not compared
        for i, op in enumerate(p.ops):
            # a try_wait answers the same on both (test_wait is not compared: it answers for an
            # instant, and the copies the GPU has in flight then are a matter of timing)
            if op.name == "mbarrier_try_wait" and g.tests.get(i) != m.tests.get(i):
                self.problems.append(f"operation {i}: try_wait answered {g.tests.get(i)} on the GPU, "
                                     f"{m.tests.get(i)} in the model")
        for i in sorted(set(g.states) | set(m.states)):
            a, b = g.states.get(i), m.states.get(i)
            if a is None or b is None or (a & STATE_MASK) != (b & STATE_MASK):
                self.problems.append(f"operation {i}: arrive state GPU {_h(a)}, model {_h(b)} (bits 32-63: "
                                     f"{_decode(a)} vs {_decode(b)})")
        for a in sorted(set(g.probes) | set(m.probes)):
            x, y = g.probes.get(a), m.probes.get(a)
            if x != y:
                self.problems.append(f"mbarrier at {a:#x} after the program: test_wait.parity 0 is "
                                     f"{x} on the GPU, {y} in the model")
        for k in range(p.ctas):
            d = self._first_smem(k)
            if d:
                self.problems.append(d)
        for b in p.buffers:
            d = self._first_global(b.index)
            if d:
                self.problems.append(d)

    def _first_smem(self, rank=0):
        g = np.frombuffer(self.gpu.smem_ctas[rank] if self.gpu.smem_ctas else self.gpu.smem, dtype=np.uint8)
        m = np.frombuffer(self.model.smem_ctas[rank] if self.model.smem_ctas else self.model.smem, dtype=np.uint8)
        care = np.ones(len(g), dtype=bool)
        base = self.prog.smem_base
        for a in self.prog.mbarriers():      # mbarrier objects: compared by state, not bytes
            r, a = self.prog.split(a)
            if r == rank and base <= a < base + len(care):
                care[a - base:a - base + 8] = False
        bad = np.nonzero(care & (g != m))[0]
        if not len(bad):
            return None
        k = int(bad[0])
        addr = base + k
        where = f"CTA {rank} " if self.prog.ctas > 1 else ""
        return (f"{where}shared memory: {len(bad)} bytes differ; first at shared address {addr:#x}: "
                f"GPU 0x{g[k]:02x}, model 0x{m[k]:02x}{self._where_smem(addr) if rank == 0 else ''}")

    def _where_smem(self, addr):
        """The box element and tensor coordinate a tensor load put at ``addr``."""
        maps = getattr(self.model, "maps", [])
        for i in range(len(self.prog.ops) - 1, -1, -1):
            op = self.prog.ops[i]
            if op.name != "cp_async_bulk_tensor_load":
                continue
            tm = maps[op.args[0].index]
            mode = op.kw.get("load_mode", "tile")
            dst = op.args[2]
            try:
                hit = tm.smem_element(addr, int(dst))
            except Exception:
                hit = None
            if hit is None:
                continue
            k, byte = hit
            coords = list(op.args[1])
            if mode == "tile":
                es = tm.element_strides
                coord = [coords[0] + k[0]] + [coords[d] + k[d] * es[d] for d in range(1, len(k))]
                return (f" (operation {i}: box element {tuple(k)} byte {byte}, tensor coordinate "
                        f"{tuple(coord)}, driver order)")
            return f" (operation {i}: box element {tuple(k)} byte {byte}, {mode} load at {tuple(coords)})"
        return ""

    def _first_global(self, index):
        g = np.frombuffer(self.gpu.buffers[index], dtype=np.uint8)
        m = np.frombuffer(self.model.buffers[index], dtype=np.uint8)
        bad = np.nonzero(g != m)[0]
        if not len(bad):
            return None
        k = int(bad[0])
        addr = self.gpu.addresses[index] + k
        return (f"global buffer {index}: {len(bad)} bytes differ; first at byte {k} (address {addr:#x}): "
                f"GPU 0x{g[k]:02x}, model 0x{m[k]:02x}{self._where_global(addr)}")

    def _where_global(self, addr):
        """The tensor coordinate of a global address in a map that stores to it."""
        maps = getattr(self.model, "maps", [])
        for op in reversed(self.prog.ops):
            if op.name not in ("cp_async_bulk_tensor_store", "cp_reduce_async_bulk_tensor"):
                continue
            tm = maps[(op.args[0] if op.name.endswith("store") else op.args[1]).index]
            f = tm.fields
            off = addr - f["global_address"]
            if off < 0:
                continue
            esize = _core_esize(f["dtype"])
            idx = []
            for s in reversed(f["global_strides"][:f["rank"] - 1]):
                idx.append(off // s if s else 0)
                off = off % s if s else off
            coord = [off // esize] + idx[::-1]
            return f" (tensor coordinate {tuple(coord)}, driver order, byte {off % esize})"
        return ""

    def __str__(self):
        ub = ""
        if self.undefined:
            ub = ("\n  the model reports undefined behaviour in the program, so the GPU's bytes are one "
                  "allowed outcome:\n    " + "\n    ".join(self.undefined[:5]))
        if self.same:
            return "the GPU and the model agree" + ub
        return "the GPU and the model differ:\n  " + "\n  ".join(self.problems) + ub

    def __repr__(self):
        return f"Diff(same={self.same}, problems={len(self.problems)})"


def _core_esize(dtype):
    from ..enums import DataType
    return {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}.get(int(DataType(dtype)), 1)


def _h(v):
    return "none" if v is None else f"0x{v:016x}"


def _decode(v):
    """Phase parity, pending count and tx bits of a state word (golden R9)."""
    if v is None:
        return "none"
    return (f"parity {v >> 63}, pending {(1 << 20) - ((v >> 43) & 0xFFFFF) & 0xFFFFF}, "
            f"tx>>11 field {(v >> 32) & 0x7FF}")


def diff(prog):
    """Run ``prog`` on the GPU, then on the model at the GPU's addresses: a Diff."""
    if not isinstance(prog, Program):
        raise TypeError(f"diff takes a Program, not {type(prog).__name__}")
    g = run_gpu(prog)
    addrs = g.addresses or None
    m = run_model(prog, addrs)
    return Diff(prog, g, m)


def assert_same(prog):
    """diff(prog), raising AssertionError with every difference if there is one."""
    d = diff(prog)
    if not d.same:
        raise AssertionError(str(d))
    return d
