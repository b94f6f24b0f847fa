"""The vendored ptxasync.nvrtc proof kernels (tests/data/nvrtc/): their manifests (the census
format, tools/census/census_lib.py), the inputs the manifest's fill and seed regenerate, what
the H200 computed from them (tools/census/run_gpu.py), and one launch of a kernel's PTX on the
model with those inputs."""
import json
import os

import numpy as np

from census import census_lib as cl
import ptxasync as pa
from ptxasync import ptx
from testpaths import DATA

NVRTC_DATA = os.path.join(DATA, "nvrtc")
ARCH = "sm_90a"


def names():
    return sorted(f[:-5] for f in os.listdir(NVRTC_DATA) if f.endswith(".json"))


def manifest(name):
    with open(os.path.join(NVRTC_DATA, name + ".json")) as f:
        return json.load(f)


def ptx_text(name):
    with open(os.path.join(NVRTC_DATA, f"{name}.{ARCH}.ptx")) as f:
        return f.read()


def source(name):
    with open(os.path.join(NVRTC_DATA, manifest(name)["cu"])) as f:
        return f.read()


def inputs(name):
    """The inputs as the manifest's fills make them from the case's seed (what run_gpu.py gave the GPU)."""
    return cl.make_inputs(manifest(name), cl.seed_of(name, ARCH))


def recorded(name):
    """{"in": {...}, "out": {...}, "tmap": [(128 bytes, the GPU's base address)]}: the H200's run."""
    with np.load(os.path.join(NVRTC_DATA, f"{name}.{ARCH}.npz")) as z:
        rec = {"in": {k[3:]: z[k] for k in z.files if k.startswith("in/")},
               "out": {k[4:]: z[k] for k in z.files if k.startswith("out/")},
               "error": str(z["error"]) if "error" in z.files else None, "tmap": []}
        i = 0
        while f"tmap{i}" in z.files:
            rec["tmap"].append((z[f"tmap{i}"].tobytes(), int(z[f"tmap{i}_base"])))
            i += 1
    return rec


def encode(t, address):
    """The model's encoding of a manifest tensor map (census_lib's arguments) at ``address``."""
    return pa.TensorMap.tiled(t["dtype"], address, t["dims"], t["strides"], t["box"], t["element_strides"],
                              swizzle=t["swizzle"], l2_promotion=t["l2"])


def static_shared(kernel_text):
    """Bytes the .shared variables need, each at its alignment (the machine's shared memory)."""
    import re
    total = 0
    for m in re.finditer(r"^\s*\.shared\s+\.align\s+(\d+)\s+\.\w+\s+\w+(?:\[(\d+)\])?", kernel_text, re.M):
        align, n = int(m.group(1)), int(m.group(2) or 8)
        total = -(-total // align) * align + n
    return total


def run_on_model(name, text=None, entry=None, seed=1):
    """Launch the kernel (the vendored PTX, or ``text``) on a fresh machine with the manifest's
    inputs; returns (the arrays after the launch, the machine)."""
    man = manifest(name)
    text = ptx_text(name) if text is None else text
    entry = man["archs"][ARCH]["entry"] if entry is None else entry
    k = ptx.Kernel(text, entry=entry)
    m = pa.Machine(smem_bytes=static_shared(text), seed=seed)
    arrays = inputs(name)
    gbuf = {b: m.register(a) for b, a in arrays.items()}
    params = {}
    for pname, size, v in cl.param_values(man, ARCH, text):
        if v[0] == "ptr":
            params[pname] = gbuf[v[1]].address
        elif v[0] == "tmap":
            params[pname] = cl.param_map_bytes(bytes(encode(v[1], gbuf[v[1]["buf"]].address)), size)
        else:
            params[pname] = cl.scalar_bytes(v, size)
    k.launch(m, grid=tuple(man["grid"]), block=tuple(man["block"]), params=params)
    return arrays, m
