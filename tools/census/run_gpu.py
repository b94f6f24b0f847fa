"""Run every vendored census PTX on a GPU through the CUDA driver (cuda-python's bindings:
cuModuleLoadData, cuTensorMapEncodeTiled, cuLaunchKernel) with the manifest's seeded inputs,
and save inputs and outputs in one .npz (keys ``<name>.<arch>/in/<buf>``, ``.../out/<buf>``,
``.../tmap<i>`` the 128 bytes the driver encoded, ``.../error`` when it did not run).

    python tools/census/run_gpu.py OUT.npz                 # every case, each in its own process
    python tools/census/run_gpu.py --one NAME ARCH OUT.npz  # one case
    python tools/census/run_gpu.py --data tests/data/nvrtc OUT.npz   # the cases of another folder

tools/census/split_results.py then writes tests/data/census/<name>.<arch>.npz.
"""
import ctypes
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import census_lib as cl  # noqa: E402


def run_one(name, arch, out):
    try:
        from cuda.bindings import driver as cu
    except ImportError:                                   # cuda-python before 12.6
        from cuda import cuda as cu

    def ck(res):
        err = res[0] if isinstance(res, tuple) else res
        if err != cu.CUresult.CUDA_SUCCESS:
            s = cu.cuGetErrorString(err)[1]
            raise RuntimeError(f"{err}: {s.decode() if s else ''}")
        return res[1] if isinstance(res, tuple) and len(res) == 2 else res
    man = cl.manifest(name)
    ptx = cl.ptx_text(name, arch)
    md = man["archs"][arch]
    key = f"{name}.{arch}"
    res = {}
    inputs = cl.make_inputs(man, cl.seed_of(name, arch))
    for b, a in inputs.items():
        res[f"{key}/in/{b}"] = a.copy()
    try:
        ck(cu.cuInit(0))
        dev = ck(cu.cuDeviceGet(0))
        ctx = ck(cu.cuDevicePrimaryCtxRetain(dev))
        ck(cu.cuCtxSetCurrent(ctx))
        mod = ck(cu.cuModuleLoadData(ptx.encode() + b"\0"))
        fn = ck(cu.cuModuleGetFunction(mod, md["entry"].encode()))
        smem = int(md.get("shared", 0))
        if smem > 48 * 1024:
            ck(cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     smem))
        dptr = {}
        for b, a in inputs.items():
            d = ck(cu.cuMemAlloc(max(a.nbytes, 256)))
            ck(cu.cuMemcpyHtoD(d, a, a.nbytes))
            dptr[b] = int(d)
        keep = []
        ptrs = (ctypes.c_void_p * 64)()
        plist = cl.param_values(man, arch, ptx)
        ntmap = 0
        for i, (pname, size, v) in enumerate(plist):
            raw = np.zeros(size + 64, np.uint8)
            off = (-raw.ctypes.data) % 64
            slot = raw[off:off + size]
            kind = v[0]
            if kind == "ptr":
                val = (0 if v[1] is None else dptr[v[1]]).to_bytes(8, "little")
            elif kind == "scratch":
                addr = 0
                if v[1]:
                    addr = int(ck(cu.cuMemAlloc(v[1])))
                    ck(cu.cuMemsetD8(addr, 0, v[1]))
                val = addr.to_bytes(8, "little")
            elif kind == "tmap":
                t = v[1]
                u64, u32 = cu.cuuint64_t, cu.cuuint32_t
                tm = ck(cu.cuTensorMapEncodeTiled(
                    cu.CUtensorMapDataType(t["dtype"]), t["rank"], dptr[t["buf"]], [u64(x) for x in t["dims"]],
                    [u64(x) for x in t["strides"]], [u32(x) for x in t["box"]],
                    [u32(x) for x in t["element_strides"]], cu.CUtensorMapInterleave(0), cu.CUtensorMapSwizzle(t["swizzle"]),
                    cu.CUtensorMapL2promotion(t["l2"]), cu.CUtensorMapFloatOOBfill(0)))
                val = ctypes.string_at(tm.getPtr(), 128)
                res[f"{key}/tmap{ntmap}"] = np.frombuffer(val, np.uint8).copy()
                val = cl.param_map_bytes(val, size)
                res[f"{key}/tmap{ntmap}_base"] = np.array(dptr[t["buf"]], np.uint64)
                ntmap += 1
            else:
                val = cl.scalar_bytes(v, size)
            slot[:] = np.frombuffer(val, np.uint8)
            keep.append(raw)
            ptrs[i] = slot.ctypes.data
        g, bl = man["grid"], man["block"]
        t0 = time.time()
        ck(cu.cuLaunchKernel(fn, g[0], g[1], g[2], bl[0], bl[1], bl[2], smem, 0, ctypes.addressof(ptrs), 0))
        ck(cu.cuCtxSynchronize())
        res[f"{key}/ms"] = np.array((time.time() - t0) * 1e3)
        for b, a in inputs.items():
            o = np.empty_like(a)
            ck(cu.cuMemcpyDtoH(o, dptr[b], a.nbytes))
            res[f"{key}/out/{b}"] = o
    except Exception as e:                                # noqa: BLE001 (recorded)
        res[f"{key}/error"] = np.array(f"{type(e).__name__}: {e}")
    np.savez_compressed(out, **res)


def main():
    args = sys.argv[1:]
    data = []
    if args[0] == "--data":
        data = args[:2]
        cl.DATA = os.path.abspath(args[1])
        args = args[2:]
    if args[0] == "--one":
        run_one(args[1], args[2], args[3])
        return
    out = args[0]
    tmp = out + ".parts"
    os.makedirs(tmp, exist_ok=True)
    allres = {}
    for name, arch in cl.cases():
        part = os.path.join(tmp, f"{name}.{arch}.npz")
        try:
            p = subprocess.run([sys.executable, __file__, *data, "--one", name, arch, part], timeout=120,
                               capture_output=True, text=True)
            msg = p.stderr.strip().splitlines()[-1:] if p.returncode else []
        except subprocess.TimeoutExpired:
            msg = ["timed out (120 s)"]
        if os.path.exists(part):
            with np.load(part) as z:
                allres.update({k: z[k] for k in z.files})
        else:
            allres[f"{name}.{arch}/error"] = np.array("; ".join(msg) or "no result")
        err = allres.get(f"{name}.{arch}/error")
        print(f"{name}.{arch}: {'ERROR ' + str(err) if err is not None else 'ok'}", flush=True)
    np.savez_compressed(out, **allres)


if __name__ == "__main__":
    main()
