"""Seed the libFuzzer corpora (fuzz/corpus/<harness>/) from the recorded
golden data in tests/data: tensor-map images for the decode, replace and
issue harnesses, encode parameters for the encode harnesses (in the byte
layout fuzz.h reads), replace edits as recorded. A few dozen seeds each.

    python fuzz/make_corpus.py
"""
import gzip
import hashlib
import json
import pathlib
import struct

ROOT = pathlib.Path(__file__).resolve().parent
DATA = ROOT.parent / "tests" / "data"
PER_FAMILY = 6
FIELDS = ["global_address", "rank", "box_dim", "global_dim", "global_stride", "element_stride",
          "elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode"]


def cases():
    for path in sorted(DATA.glob("*.jsonl.gz")):
        n = 0
        with gzip.open(path, "rt") as f:
            for line in f:
                c = json.loads(line)
                if "family" in c and n < PER_FAMILY:
                    n += 1
                    yield c


def pad(vals, n, default=0):
    vals = list(vals)[:n]
    return vals + [default] * (n - len(vals))


def u64(v):
    return v & (2**64 - 1)


def encode_seed(c):
    p = c.get("params", {})
    if "tensorRank" not in p or "globalDim" not in p:
        return None, None
    addr = int(c.get("global_address", "0x0"), 16)
    head = struct.pack("<BBQ", p.get("tensorDataType_value", 0) & 0xFF, p["tensorRank"] & 0xFF, addr)
    dims = struct.pack("<5Q", *[u64(v) for v in pad(p["globalDim"], 5, 1)])
    strides = struct.pack("<5Q", *[u64(v) for v in pad(p.get("globalStrides", []), 5)])
    es = struct.pack("<5I", *[v & 0xFFFFFFFF for v in pad(p.get("elementStrides", []), 5, 1)])
    tail = struct.pack("<BBBBQ", p.get("interleave_value", 0) & 0xFF, p.get("swizzle_value", 0) & 0xFF,
                       p.get("l2Promotion_value", 0) & 0xFF, p.get("oobFill_value", 0) & 0xFF, 0)
    if p.get("encode_function", "cuTensorMapEncodeTiled") == "cuTensorMapEncodeTiled" and "boxDim" in p:
        box = struct.pack("<5I", *[v & 0xFFFFFFFF for v in pad(p["boxDim"], 5, 1)])
        return "fuzz_encode_tiled", head + dims + strides + box + es + tail
    if "pixelBoxLowerCorner" in p:
        corners = struct.pack("<3i3i", *pad(p["pixelBoxLowerCorner"], 3), *pad(p["pixelBoxUpperCorner"], 3))
        cp = struct.pack("<II", p.get("channelsPerPixel", 0) & 0xFFFFFFFF, p.get("pixelsPerColumn", 0) & 0xFFFFFFFF)
        return "fuzz_encode_im2col", head + dims + strides + corners + cp + es + tail
    return None, None


def replace_edits(c):
    out = b""
    for r in c.get("params", {}).get("replacements", [])[:8]:
        name = str(r.get("field", "")).lower()
        if name in FIELDS:
            out += struct.pack("<BbQ", FIELDS.index(name), r.get("ord", 0) or 0, u64(int(r.get("new_val") or 0)))
    return out


def issue_ops(c):
    """A load (or store) at the recorded coordinates, then completion."""
    ops = b""
    loads = [ld for ld in c.get("loads") or [] if isinstance(ld, dict) and "coords" in ld]
    coords = pad(loads[0]["coords"] if loads else c.get("params", {}).get("coords", []), 5)
    for op in (5, 0, 8, 11, 2, 8, 9):   # mbar init, load, commit, run, store, commit, wait
        ops += struct.pack("<BBB5i3HIIIQ", op, 0, 0, *coords, 0, 0, 0, 2048, 1024, 1, 0)
    # cp.async, its groups, cp.async.bulk, st.async, st.bulk, run
    for op, x, g in ((12, 2, 1 << 8), (13, 0, 0), (14, 256, 2 << 8), (16, 0, 0), (17, 1, 64), (11, 0, 0)):
        ops += struct.pack("<BBB5i3HIIIQ", op, 0, 0, *coords, 0, 0, 0, 2048, 1024, x, g)
    return ops


def main():
    seeds = {}
    for c in cases():
        name, blob = encode_seed(c)
        if name:
            seeds.setdefault(name, []).append(blob)
        hexmap = c.get("tensormap_hex")
        if hexmap and len(hexmap) == 256:
            img = bytes.fromhex(hexmap)
            seeds.setdefault("fuzz_decode", []).append(img)
            seeds.setdefault("fuzz_replace", []).append(img + replace_edits(c))
            seeds.setdefault("fuzz_issue", []).append(img + bytes([1, 0, 0, 0, 1, 0]) + issue_ops(c))
    # fuzz_launch: a launch byte (block 32, one CTA, seed 0), then a kernel's text: the front
    # end's seeds and the vendored kernels small enough for a quick launch
    texts = [p.read_bytes() for p in sorted((ROOT / "corpus" / "fuzz_ptx").iterdir())]
    for pat in ("tests/data/ptx/*.ptx", "tests/data/census/*.ptx"):
        texts += [p.read_bytes() for p in sorted(ROOT.parent.glob(pat)) if p.stat().st_size <= 16384]
    seeds["fuzz_launch"] = [bytes([1]) + t for t in texts]
    for name, blobs in seeds.items():
        d = ROOT / "corpus" / name
        d.mkdir(parents=True, exist_ok=True)
        for b in blobs:
            (d / hashlib.sha1(b).hexdigest()[:16]).write_bytes(b)
        print(f"{name}: {len(blobs)} seeds")


if __name__ == "__main__":
    main()
