"""The GPU side of a run, in a child process of its own.

A fault inside a kernel (an illegal instruction, an illegal or misaligned
address) destroys the CUDA context for the rest of the process, so the GPU work
runs in a child process (``python -m ptxasync.cuda.worker``) that the parent
talks to through pickled frames on its stdin / stdout. After a sticky error the
child reports it and exits; the next request starts a fresh one.

A request is a dict with ``op``: ``info``, ``encode`` (one driver encode) or
``run`` (allocate and fill the buffers, encode the maps at their real
addresses, JIT the PTX, launch one CTA, read everything back, free).
"""
import os
import pickle
import struct
import subprocess
import sys

__all__ = ["Worker", "serve"]


def _send(f, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(struct.pack("<Q", len(data)) + data)
    f.flush()


def _recv(f):
    head = f.read(8)
    if len(head) < 8:
        raise EOFError("the GPU worker process ended")
    (n,) = struct.unpack("<Q", head)
    data = f.read(n)
    if len(data) < n:
        raise EOFError("the GPU worker process ended mid-answer")
    return pickle.loads(data)


class Worker:
    """The parent's handle on the child process (started on first use)."""

    def __init__(self):
        self.proc = None
        self.starts = 0

    def _start(self):
        env = dict(os.environ)
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen([sys.executable, "-m", "ptxasync.cuda.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
        self.starts += 1

    def request(self, req):
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        try:
            _send(self.proc.stdin, req)
            ans = _recv(self.proc.stdout)
        except (EOFError, BrokenPipeError, OSError) as e:
            self.close()
            return {"error": "worker_died", "message": f"the GPU worker process ended ({e})"}
        if ans.get("context_lost"):
            self.close()
        return ans

    def close(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


# --- the child ----------------------------------------------------------------------


def _run(dev, req):
    from ._driver import STICKY, CudaError
    ans = {"addresses": [], "maps": [], "error": None, "context_lost": False}
    ptrs = []
    mod = None
    try:
        for data, size in req["buffers"]:
            p = dev.alloc(size)
            ptrs.append(p)
            dev.upload(p, data)
        ans["addresses"] = list(ptrs)
        params = []
        for kind, buf, offset, args in req["maps"]:
            args = dict(args, global_address=(ptrs[buf] + offset) if buf is not None else offset)
            ans["maps"].append(dev.encode(kind, args))
        if any(raw is None for _, raw in ans["maps"]) or not req.get("ptx"):
            return ans
        try:
            mod, func = dev.load_ptx(req["ptx"], req["entry"])
        except CudaError as e:
            ans["error"], ans["jit_log"] = e.name, e.log
            return ans
        for kind, index in req["params"]:
            if kind == "buffer":
                params.append(struct.pack("<Q", ptrs[index]))
            else:
                params.append(ans["maps"][index][1])
        err = dev.launch(func, params, req["threads"], req["smem_bytes"], req.get("ctas", 1))
        if err is not None:
            ans["error"] = err
            ans["context_lost"] = err in STICKY
            return ans
        ans["buffers_after"] = [dev.download(p, size) for p, (_, size) in zip(ptrs, req["buffers"])]
        return ans
    except CudaError as e:
        ans["error"] = e.name
        ans["message"] = str(e)
        ans["context_lost"] = e.name in STICKY
        return ans
    finally:
        if not ans["context_lost"]:
            if mod is not None:
                dev.unload(mod)
            for p in ptrs:
                dev.free(p)


def serve():
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)            # stray prints go to stderr, never into the frames
    inp = sys.stdin.buffer
    dev = None
    from ._driver import CudaError, Device, NotExpressible, Unavailable
    while True:
        try:
            req = _recv(inp)
        except EOFError:
            return
        try:
            if dev is None:
                dev = Device()
            if req["op"] == "info":
                ans = {"info": dev.info()}
            elif req["op"] == "encode":
                ans = {"result": dev.encode(req["kind"], req["args"])}
            elif req["op"] == "run":
                ans = _run(dev, req)
            else:
                ans = {"error": "bad_request", "message": f"unknown op {req['op']!r}"}
        except Unavailable as e:
            ans = {"error": "unavailable", "message": str(e)}
        except NotExpressible as e:
            ans = {"error": "not_expressible", "message": str(e)}
        except CudaError as e:
            ans = {"error": e.name, "message": str(e), "context_lost": True}
        except Exception as e:   # a bug here must not hang the parent
            ans = {"error": "worker_exception", "message": f"{type(e).__name__}: {e}"}
        _send(out, ans)
        if ans.get("context_lost"):
            return


if __name__ == "__main__":
    serve()
