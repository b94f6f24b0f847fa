"""Compile a TMA copy and a TMA matmul with Triton for sm_90a; write their PTX to $OUT."""
import os, sys, glob, shutil, traceback, json
out = os.environ["OUT"]
import torch, triton, triton.language as tl
info = {"triton": triton.__version__, "torch": torch.__version__, "device": torch.cuda.get_device_name()}
try:
    from triton.tools.tensor_descriptor import TensorDescriptor
except Exception as e:
    TensorDescriptor = None
    info["no_tensor_descriptor"] = repr(e)


@triton.jit
def tma_copy(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    x = in_desc.load([pid_m * BM, pid_n * BN])
    out_desc.store([pid_m * BM, pid_n * BN], x)


@triton.jit
def tma_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=3):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([pid_n * BN, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


def save(name, k):
    with open(os.path.join(out, name + ".ptx"), "w") as f:
        f.write(k.asm["ptx"])
    info[name] = "ok"

try:
    M = N = 256; K = 256
    x = torch.randn(M, N, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    di = TensorDescriptor.from_tensor(x, [64, 64]); do = TensorDescriptor.from_tensor(y, [64, 64])
    k = tma_copy[(M // 64, N // 64)](di, do, BM=64, BN=64)
    torch.cuda.synchronize()
    info["copy_equal"] = bool(torch.equal(x, y))
    save("triton_tma_copy", k)
except Exception:
    info["copy_error"] = traceback.format_exc()[-2000:]
try:
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(N, K, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    BM, BN, BK = 128, 64, 64
    da = TensorDescriptor.from_tensor(a, [BM, BK]); db = TensorDescriptor.from_tensor(b, [BN, BK])
    dc = TensorDescriptor.from_tensor(c, [BM, BN])
    k = tma_matmul[(M // BM, N // BN)](da, db, dc, K, BM=BM, BN=BN, BK=BK, num_warps=4)
    torch.cuda.synchronize()
    ref = (a.float() @ b.float().T)
    info["matmul_maxerr"] = float((c.float() - ref).abs().max())
    save("triton_tma_matmul", k)
except Exception:
    info["matmul_error"] = traceback.format_exc()[-2000:]
for d in glob.glob(os.path.join(os.path.dirname(triton.__file__), "..", "triton-*.dist-info")):
    for lic in glob.glob(os.path.join(d, "**", "LICENSE*"), recursive=True):
        shutil.copy(lic, os.path.join(out, "TRITON_LICENSE"))
info["ptxas"] = os.popen("ptxas --version 2>&1 | tail -1").read().strip()
json.dump(info, open(os.path.join(out, "info.json"), "w"), indent=1)
print(json.dumps({k: (v if len(str(v)) < 300 else str(v)[-600:]) for k, v in info.items()}, indent=1))
