"""The ptxasync.nvrtc proof kernels (tests/data/nvrtc/*.cu), compiled through ptxasync.nvrtc and
vendored with their manifests (the census format, tools/census/census_lib.py) so that
tools/census/run_gpu.py runs them on a GPU and tests/nvrtc/ runs them on the model.

    python tools/nvrtc/vendor.py [--cccl DIR] [--cute-args]

- tma_wgmma.cu: cuda::ptx TMA loads, an mbarrier with expect_tx / try_wait.parity, wgmma.
- cute_tma_sw128.cu: a CuTe TMA load / store through a Swizzle<3,4,3> (128B) shared layout.
  nvidia-cutlass 4.2 (the newest wheel) compiles under NVRTC with CUDA 13.0's CCCL (3.0), not
  with nvidia-cuda-cccl 13.3's (3.5 redeclares std::tuple_size): ``--cccl`` names a CCCL 3.0
  include folder, e.g. after ``pip install --no-deps --target build/cccl-13.0
  nvidia-cuda-cccl==13.0.85``: build/cccl-13.0/nvidia/cu13/include/cccl (the default when present).
  ``--cute-args`` also compiles tools/nvrtc/cute_tma_args.cu with nvcc (host code, no GPU) and
  records what CuTe's host-side make_tma_copy passes to cuTensorMapEncodeTiled into the manifest.

Then on a GPU: python tools/census/run_gpu.py --data tests/data/nvrtc OUT.npz, and
python tools/census/split_results.py --data tests/data/nvrtc OUT.npz.
"""
import argparse
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")
OUT = os.path.join(REPO, "tests", "data", "nvrtc")
sys.path.insert(0, os.path.join(REPO, "src"))
from ptxasync import nvrtc  # noqa: E402

CCCL_30 = os.path.join(REPO, "build", "cccl-13.0", "nvidia", "cu13", "include", "cccl")

KERNELS = {
    "nvrtc_tma_wgmma": dict(
        cu="tma_wgmma.cu", entry="tma_wgmma", options=[], grid=[2, 2, 1], block=[128, 1, 1],
        bufs={"a": ("uint16", [128, 64], "bf16:randn", None), "b": ("uint16", [128, 64], "bf16:randn", None),
              "d": ("float32", [128, 128], "zeros", "exact")},
        params=[("tmap", "a", [64, 64], "128B", "bfloat16"), ("tmap", "b", [64, 64], "128B", "bfloat16"),
                ("buf", "d"), ("i32", 128)],
        note="D = A B^T: A, B bf16 bits (K = 64 contiguous), D f32; one warpgroup per 64x64 tile"),
    "nvrtc_cute_tma_sw128": dict(
        cu="cute_tma_sw128.cu", entry="tma_copy_sw128", options=["-default-device"], cute=True,
        grid=[2, 2, 1], block=[128, 1, 1],
        bufs={"x": ("uint16", [128, 128], "randint:0:65536", None), "y": ("uint16", [128, 128], "zeros", "exact")},
        params=[("tmap", "x", [64, 64], "128B"), ("tmap", "y", [64, 64], "128B")],
        note="y[r][c] = x[r][c] + 64 (r % 64) + c % 64 (mod 2^16), through CuTe's swizzled view of the tile"),
}


def cccl_version(path):
    with open(os.path.join(path, "cuda", "std", "__cccl", "version.h")) as f:
        v = int(re.search(r"#define CCCL_VERSION (\d+)", f.read()).group(1))
    return f"{v // 1000000}.{v // 1000 % 1000}.{v % 1000}"


def cute_args():
    """What CuTe's host make_tma_copy passes to cuTensorMapEncodeTiled (tools/nvrtc/cute_tma_args.cu)."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "cute_tma_args")
        subprocess.run(["nvcc", "-std=c++17", "-arch=sm_90a", "-w", "-I" + nvrtc.cutlass_include(), "-o", exe,
                        os.path.join(HERE, "cute_tma_args.cu")], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    return dict(json.loads(out), nvcc=nvcc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cccl", default=CCCL_30 if os.path.isdir(CCCL_30) else None,
                    help="CCCL 3.0 include folder for the CuTe kernel")
    ap.add_argument("--cute-args", action="store_true", help="record CuTe's host encode arguments (needs nvcc)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    for name in a.names or KERNELS:
        k = KERNELS[name]
        includes = nvrtc.include_paths()
        if k.get("cute"):
            if not a.cccl:
                sys.exit(f"{name}: CuTe needs CCCL 3.0 under NVRTC: give --cccl (see this script's docstring)")
            # CUTLASS built for CUDA 13 includes <cccl/cuda/std/...>: the folder above cccl/ goes first too
            cccl = os.path.abspath(a.cccl)
            above = [os.path.dirname(cccl)] if os.path.basename(cccl) == "cccl" else []
            includes = [cccl, *above] + [p for p in includes if p != nvrtc.cccl_include()]
        with open(os.path.join(OUT, k["cu"])) as f:
            src = f.read()
        prog = nvrtc.compile_ptx(src, arch="sm_90a", options=k["options"], name_expressions=[k["entry"]],
                                 include_paths=includes, name=k["cu"])
        entry = prog.lowered_names[k["entry"]]
        with open(os.path.join(OUT, f"{name}.sm_90a.ptx"), "w") as f:
            f.write(prog.ptx)
        man = {"name": name, "source": "nvrtc", "cu": k["cu"], "nvrtc": "%d.%d" % prog.version,
               "cccl": cccl_version(includes[0]), "options": k["options"], "block": k["block"], "grid": k["grid"],
               "buffers": {b: {"dtype": d, "shape": s, "fill": fl, "compare": c}
                           for b, (d, s, fl, c) in k["bufs"].items()},
               "params": [list(p) for p in k["params"]], "note": k["note"],
               "archs": {"sm_90a": {"entry": entry, "shared": 0}}}
        path = os.path.join(OUT, f"{name}.json")
        if k.get("cute"):
            man["cutlass"] = importlib.metadata.version("nvidia-cutlass")
            if a.cute_args:
                man["cute_encode"] = cute_args()
            elif os.path.exists(path):                      # keep what was recorded
                with open(path) as f:
                    man["cute_encode"] = json.load(f).get("cute_encode")
        with open(path, "w") as f:
            json.dump(man, f, indent=1)
            f.write("\n")
        print(f"{name}: {len(prog.ptx.splitlines())} lines of PTX, entry {entry}")


if __name__ == "__main__":
    main()
