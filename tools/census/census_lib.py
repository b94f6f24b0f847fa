"""What the census's runners share: a kernel's manifest (tests/data/census/<name>.json), its
inputs, and its parameters in the order of the PTX's ``.entry``, each as a value the runner
turns into bytes (the GPU runner, tools/census/run_gpu.py; the model's, tests/ptx/test_census.py).

A manifest's parameter is one of
  ["buf", B]                   the address of buffer B
  ["i32", v] / ["f32", v]      a scalar (written in the PTX parameter's width)
  ["desc", B, [block...]]      a Triton host TensorDescriptor of buffer B: its tensor map (what
                               Triton's launcher encodes: the box, the swizzle Triton chose, L2
                               promotion 128B, no OOB fill), then the shape (u32 each) and the
                               strides (u64 each), NumPy order
  ["tmap", B, [box...], SW]    a CUtensorMap of buffer B (NumPy-order box, swizzle SW, the data
                               type of B's dtype); ["tmap", B, [box...], SW, DT] with DT a key of
                               TMA_DTYPE ("bfloat16": B holds bf16 bits as uint16). A parameter
                               larger than 128 bytes (CuTe's TMA TiledCopy) is the map, then zeros
and a Triton kernel ends with its global and profile scratch pointers (a buffer of
global_scratch_size bytes per CTA where the kernel needs one, else 0).
"""
import json
import os
import re
import struct
import zlib

import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "census")

# CUtensorMapDataType of a NumPy dtype, and of Triton's device-side enum (driver.py's table)
TMA_DTYPE = {"uint8": 0, "uint16": 1, "uint32": 2, "int32": 3, "uint64": 4, "int64": 5, "float16": 6,
             "float32": 7, "float64": 8, "bfloat16": 9}
TRITON_DEVICE_TO_HOST = {i: i for i in range(16)}
TRITON_DEVICE_TO_HOST.update({8: 10, 9: 8, 10: 9})
SWIZZLE = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}


def names():
    return sorted(f[:-5] for f in os.listdir(DATA) if f.endswith(".json"))


def manifest(name):
    with open(os.path.join(DATA, name + ".json")) as f:
        return json.load(f)


def ptx_text(name, arch):
    with open(os.path.join(DATA, f"{name}.{arch}.ptx")) as f:
        return f.read()


def cases():
    """(name, arch) of every vendored PTX."""
    return [(n, a) for n in names() for a in manifest(n)["archs"]]


def entry_params(ptx, entry):
    """[(param name, size in bytes)] of the .entry, in order."""
    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\((.*?)\)", ptx, re.S)
    out = []
    for line in m.group(1).split(","):
        line = line.strip()
        if not line:
            continue
        pname = re.search(r"(\w+)(\[(\d+)\])?\s*$", line)
        if pname.group(3):
            size = int(pname.group(3))
        else:
            size = int(re.search(r"\.[bsuf](8|16|32|64)\b", line).group(1)) // 8
        out.append((pname.group(1), size))
    return out


def static_shared(text):
    """Bytes of the non-extern .shared variables (each at its alignment)."""
    total = 0
    for m in re.finditer(r"^\s*(?!\.extern)\.shared\s+(?:\.align\s+(\d+)\s+)?\.\w+\s+\w+(?:\[(\d+)\])?", text, re.M):
        align, n = int(m.group(1) or 1), int(m.group(2) or 8)
        total = -(-total // align) * align + n
    return total


def seed_of(name, arch):
    return zlib.crc32(f"{name}.{arch}".encode())


def make_inputs(man, seed):
    rng = np.random.default_rng(seed)
    bufs = {}
    for b, d in man["buffers"].items():
        shape, dt, fill = tuple(d["shape"]), d["dtype"], d["fill"]
        if fill == "randn":
            a = rng.standard_normal(shape).astype(dt)
        elif fill == "rand":
            a = (rng.random(shape) + 0.25).astype(dt)
        elif fill == "zeros":
            a = np.zeros(shape, dt)
        elif fill.startswith("randint:"):
            lo, hi = map(int, fill.split(":")[1:])
            a = rng.integers(lo, hi, shape).astype(dt)
        elif fill == "bf16:randn":       # bf16 bits (uint16) of standard normal values, truncated
            a = (rng.standard_normal(shape).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        elif fill == "fp8e4m3":           # finite e4m3 bytes between 2^-3 and 2^3 in magnitude
            s = rng.integers(0, 2, shape) << 7
            e = rng.integers(4, 11, shape) << 3
            a = (s | e | rng.integers(0, 8, shape)).astype(np.uint8)
        else:
            raise ValueError(f"unknown fill {fill!r}")
        bufs[b] = np.ascontiguousarray(a)
    return bufs


def grid_ctas(man):
    g = man["grid"]
    return g[0] * g[1] * g[2]


def param_values(man, arch, ptx):
    """The parameters in .entry order: [(param name, size, value)] with value one of
    ("ptr", buffer name or None), ("int", int), ("bytes", raw), ("tmap", dict of the encode's
    arguments in driver order), ("scratch", bytes)."""
    md = man["archs"][arch]
    plist = entry_params(ptx, md["entry"])
    vals = []
    ndesc = 0
    for p in man["params"]:
        kind = p[0]
        if kind == "buf":
            vals.append(("ptr", p[1]))
        elif kind == "i32":
            vals.append(("int", int(p[1])))
        elif kind == "f32":
            vals.append(("bytes", struct.pack("<f", float(p[1]))))
        elif kind in ("desc", "tmap"):
            b = man["buffers"][p[1]]
            shape, dt = b["shape"], b["dtype"]
            item = np.dtype(dt).itemsize
            if kind == "desc":
                meta = md["tensordesc_meta"][ndesc]
                ndesc += 1
                dtype = TRITON_DEVICE_TO_HOST[meta["elem_type"]]
                swizzle, block, l2 = meta["swizzle"], meta["block_size"], 2
            else:
                dtype, swizzle, block, l2 = TMA_DTYPE[p[4] if len(p) > 4 else dt], SWIZZLE[p[3]], p[2], 2
            elem_strides = [int(np.prod(shape[i + 1:])) for i in range(len(shape))]
            vals.append(("tmap", {"buf": p[1], "dtype": dtype, "rank": len(shape),
                                  "dims": shape[::-1], "strides": [s * item for s in elem_strides[:-1]][::-1],
                                  "box": block[::-1], "element_strides": [1] * len(shape),
                                  "swizzle": swizzle, "l2": l2}))
            if kind == "desc":
                vals += [("int", s) for s in shape] + [("int", s) for s in elem_strides]
        else:
            raise ValueError(f"unknown parameter kind {kind!r}")
    if man["source"] == "triton":
        vals.append(("scratch", md.get("global_scratch_size", 0) * grid_ctas(man)))
        vals.append(("ptr", None))
    if len(vals) != len(plist):
        raise ValueError(f"{man['name']} {arch}: manifest gives {len(vals)} parameters, the PTX has {len(plist)}")
    return [(n, s, v) for (n, s), v in zip(plist, vals)]


def param_map_bytes(raw, size):
    """A tensor map's 128 bytes as a parameter of ``size`` bytes: the map, then zeros (CuTe's
    TMA TiledCopy of a static layout: the map, then empty fields and padding)."""
    if size < len(raw):
        raise ValueError(f"a tensor-map parameter of {size} bytes cannot hold the {len(raw)}-byte map")
    return bytes(raw) + bytes(size - len(raw))


def model_params(man, arch, text, m, gbuf):
    """The kernel's parameters for a launch on the model's Machine m, whose registered buffers gbuf
    holds by name (a scratch buffer is registered too, as gbuf["__scratch"])."""
    import numpy as np
    import ptxasync as pa
    params = {}
    for pname, size, v in param_values(man, arch, text):
        if v[0] == "ptr":
            params[pname] = 0 if v[1] is None else gbuf[v[1]].address
        elif v[0] == "scratch":
            if v[1]:
                gbuf["__scratch"] = m.register(np.zeros(v[1], np.uint8))
            params[pname] = gbuf["__scratch"].address if v[1] else 0
        elif v[0] == "tmap":
            t = v[1]
            params[pname] = pa.TensorMap.tiled(t["dtype"], gbuf[t["buf"]].address, t["dims"], t["strides"], t["box"],
                                               t["element_strides"], swizzle=t["swizzle"], l2_promotion=t["l2"])
        else:
            params[pname] = scalar_bytes(v, size)
    return params


def scalar_bytes(v, size):
    kind, x = v
    if kind == "bytes":
        assert len(x) == size
        return x
    return (x % (1 << (8 * size))).to_bytes(size, "little")
