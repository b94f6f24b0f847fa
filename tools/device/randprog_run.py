#!/usr/bin/env python3
"""Run assembled random programs (tools/randprog.py --gpu prepares them) on the GPU.

    python randprog_run.py BATCH.npz OUTDIR

BATCH.npz: `cubin<k>` (uint8, one cubin per module), `entries<k>` (the entry names, one string
joined by spaces), `in_off` / `out_off` (byte offsets of each program's input and output in the
blobs, in the modules' entry order), `inputs` (uint8: every program's input words, one after the
other). Each program is one CTA of `threads` threads with (input pointer, output pointer); the
output blob starts zeroed. Writes OUTDIR/out<i>.npz: the output blob in parts of at most 8 MB
(`outputs`, uint8; the files that come back from a GPU machine are limited in size) and `info`
(the GPU and driver).
Standalone: only numpy and cuda-bindings (no checkout needed)."""
import ctypes
import json
import sys
import time

import numpy as np
from cuda.bindings import driver as d


def ok(res):
    err, *rest = res if isinstance(res, tuple) else (res,)
    if err != d.CUresult.CUDA_SUCCESS:
        raise RuntimeError(str(err))
    return rest[0] if len(rest) == 1 else rest


def main():
    batch = np.load(sys.argv[1])
    t0 = time.time()
    ok(d.cuInit(0))
    dev = ok(d.cuDeviceGet(0))
    ctx = ok(d.cuDevicePrimaryCtxRetain(dev))
    ok(d.cuCtxSetCurrent(ctx))
    name = bytes(ok(d.cuDeviceGetName(256, dev))).split(b"\0")[0].decode()
    ver = ok(d.cuDriverGetVersion())
    threads = int(batch["threads"])
    inputs = batch["inputs"]
    n_out = int(batch["out_size"])
    din = ok(d.cuMemAlloc(max(1, inputs.nbytes)))
    dout = ok(d.cuMemAlloc(max(1, n_out)))
    ok(d.cuMemcpyHtoD(din, inputs.tobytes(), inputs.nbytes))
    ok(d.cuMemsetD8(dout, 0, n_out))
    in_off, out_off = batch["in_off"], batch["out_off"]
    i = 0
    k = 0
    launched = 0
    while "cubin%d" % k in batch:
        image = batch["cubin%d" % k].tobytes()
        mod = ok(d.cuModuleLoadData(image))
        for e in str(batch["entries%d" % k]).split():
            fn = ok(d.cuModuleGetFunction(mod, e.encode()))
            args = [ctypes.c_uint64(int(din) + int(in_off[i])), ctypes.c_uint64(int(dout) + int(out_off[i]))]
            ptrs = (ctypes.c_void_p * 2)(*[ctypes.addressof(a) for a in args])
            ok(d.cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, 0, ctypes.addressof(ptrs), 0))
            i += 1
            launched += 1
        ok(d.cuCtxSynchronize())
        ok(d.cuModuleUnload(mod))
        k += 1
    out = bytearray(n_out)
    ok(d.cuMemcpyDtoH(out, dout, n_out))
    info = dict(gpu=name, cuda_driver_version="%d.%d" % (ver // 1000, ver % 1000 // 10),
                programs=launched, seconds=round(time.time() - t0, 2))
    try:
        info["driver_version"] = open("/proc/driver/nvidia/version").read().split("Kernel Module")[1].split()[0]
    except (OSError, IndexError):
        pass
    part = 8 << 20
    for j in range(0, n_out, part):
        np.savez_compressed("%s/out%d.npz" % (sys.argv[2], j // part),
                            outputs=np.frombuffer(bytes(out[j:j + part]), np.uint8), info=json.dumps(info))
    print(json.dumps(info))


if __name__ == "__main__":
    main()
