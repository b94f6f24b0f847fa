"""The CUDA device runtime's printf order, %p and assert line on a GPU (the record is
tests/data/ptx/calls/h200_runtime.txt, an H200 with CUDA 13.0's NVRTC and driver): kernel k
prints twice from each of 2 CTAs x 40 threads; kernel q fails an assert in thread 37.
docs/ptx.md ("The device runtime") says what the model takes from it.

    python tools/device/calls_gpu.py > h200_runtime.txt 2>&1
"""
import ctypes

import numpy as np
from cuda.bindings import driver as cu, nvrtc as nv

S = r'''extern "C" __global__ void k(int*r){int t=threadIdx.x+100*blockIdx.x;r[t]=printf("a t=%d p=%p n=%p\n",t,r,(void*)0);printf("b t=%d\n",t);}
extern "C" __global__ void q(int*x){assert(x[threadIdx.x]>0);}'''


def ck(r):
    e = r[0] if isinstance(r, tuple) else r
    assert int(e) == 0, r
    return r[1] if isinstance(r, tuple) and len(r) == 2 else r


def main():
    p = ck(nv.nvrtcCreateProgram(S.encode(), b"t.cu", 0, [], []))
    ck(nv.nvrtcCompileProgram(p, 2, [b"-arch=compute_90a", b"-default-device"]))
    n = ck(nv.nvrtcGetPTXSize(p))
    b = b" " * n
    ck(nv.nvrtcGetPTX(p, b))
    ck(cu.cuInit(0))
    c = ck(cu.cuDevicePrimaryCtxRetain(ck(cu.cuDeviceGet(0))))
    ck(cu.cuCtxSetCurrent(c))
    m = ck(cu.cuModuleLoadData(b.rstrip(b"\0") + b"\0"))
    for nm, g, bl, a in [(b"k", 2, 40, np.zeros(400, np.int32)),
                         (b"q", 1, 64, np.r_[np.arange(1, 38), -5, np.arange(39, 65)].astype(np.int32))]:
        f = ck(cu.cuModuleGetFunction(m, nm))
        d = int(ck(cu.cuMemAlloc(a.nbytes)))
        ck(cu.cuMemcpyHtoD(d, a, a.nbytes))
        v = np.array([d], np.uint64)
        pp = (ctypes.c_void_p * 1)(v.ctypes.data)
        ck(cu.cuLaunchKernel(f, g, 1, 1, bl, 1, 1, 0, 0, ctypes.addressof(pp), 0))
        print("sync", cu.cuCtxSynchronize(), flush=True)
        if nm == b"k":
            ck(cu.cuMemcpyDtoH(a, d, a.nbytes))
            print("ret", a[:3], hex(d), flush=True)


if __name__ == "__main__":
    main()
