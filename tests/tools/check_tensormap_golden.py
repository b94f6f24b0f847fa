#!/usr/bin/env python3
"""Check csrc/core/tensormap.c against the golden recordings.

Loads an already-built shared library (it builds nothing), e.g.

    gcc -shared -fPIC -O2 -I csrc/core csrc/core/types.c csrc/core/tensormap.c -o /tmp/libpa.so
    python3 tests/tools/check_tensormap_golden.py --lib /tmp/libpa.so

and reports, per golden family:
  encode  - pa_tensormap_encode_{tiled,im2col} accepts/rejects as the driver did
            (every recorded encode: the case's map, per-load re-encodes, base
            maps and driver equivalents of the tensormap_replace families);
  pack    - pa_tensormap_pack gives the recorded tensormap_hex byte for byte;
  unpack  - unpack(recorded bytes) then pack gives the same bytes;
  replace - tensormap.replace edits give after_hex / replaced_tensormap_hex,
            and the forms ptxas rejected for sm_90a are rejected.
Exit status 0 only when everything agrees.
"""
import argparse
import ctypes as C
import gzip
import json
import os
import sys
from collections import defaultdict

RANK = 5
FAMILIES = ["encode_errors", "tile_load", "tile_store", "im2col_load", "tensor_reduce",
            "tensormap_replace", "tensormap_replace_load"]
FIELDS = ["global_address", "rank", "box_dim", "global_dim", "global_stride", "element_stride",
          "elemtype", "interleave_layout", "swizzle_mode", "swizzle_atomicity", "fill_mode"]


class Tiled(C.Structure):
    _fields_ = [("dtype", C.c_int), ("rank", C.c_uint32), ("global_address", C.c_uint64),
                ("global_dim", C.c_uint64 * RANK), ("global_strides", C.c_uint64 * RANK),
                ("box_dim", C.c_uint32 * RANK), ("element_strides", C.c_uint32 * RANK),
                ("interleave", C.c_int), ("swizzle", C.c_int), ("l2_promotion", C.c_int),
                ("oob_fill", C.c_int), ("tensormap_address", C.c_uint64)]


class Im2col(C.Structure):
    _fields_ = [("dtype", C.c_int), ("rank", C.c_uint32), ("global_address", C.c_uint64),
                ("global_dim", C.c_uint64 * RANK), ("global_strides", C.c_uint64 * RANK),
                ("pixel_box_lower", C.c_int32 * (RANK - 2)),
                ("pixel_box_upper", C.c_int32 * (RANK - 2)),
                ("channels_per_pixel", C.c_uint32), ("pixels_per_column", C.c_uint32),
                ("element_strides", C.c_uint32 * RANK),
                ("interleave", C.c_int), ("swizzle", C.c_int), ("l2_promotion", C.c_int),
                ("oob_fill", C.c_int), ("tensormap_address", C.c_uint64)]


class Map(C.Structure):
    _fields_ = [("kind", C.c_int), ("dtype", C.c_int), ("rank", C.c_uint32),
                ("global_address", C.c_uint64),
                ("global_dim", C.c_uint64 * RANK), ("global_strides", C.c_uint64 * RANK),
                ("box_dim", C.c_uint32 * RANK), ("element_strides", C.c_uint32 * RANK),
                ("pixel_box_lower", C.c_int32 * (RANK - 2)),
                ("pixel_box_upper", C.c_int32 * (RANK - 2)),
                ("channels_per_pixel", C.c_uint32), ("pixels_per_column", C.c_uint32),
                ("interleave", C.c_int), ("swizzle", C.c_int), ("l2_promotion", C.c_int),
                ("oob_fill", C.c_int)]


class Err(C.Structure):
    _fields_ = [("code", C.c_int), ("msg", C.c_char * 320)]


Bytes128 = C.c_uint8 * 128


def load_lib(path):
    lib = C.CDLL(path)
    lib.pa_tensormap_encode_tiled.argtypes = [C.POINTER(Map), C.POINTER(Tiled), C.POINTER(Err)]
    lib.pa_tensormap_encode_im2col.argtypes = [C.POINTER(Map), C.POINTER(Im2col), C.POINTER(Err)]
    lib.pa_tensormap_pack.argtypes = [C.POINTER(Map), Bytes128]
    lib.pa_tensormap_pack.restype = None
    lib.pa_tensormap_unpack.argtypes = [Bytes128, C.POINTER(Map), C.POINTER(Err)]
    lib.pa_tensormap_replace.argtypes = [Bytes128, C.c_int, C.c_int, C.c_uint64, C.POINTER(Err)]
    return lib


def fill(arr, values, n):
    for i, v in enumerate(list(values)[:n]):
        arr[i] = v


def make_params(p, addr, tmap_mis):
    """The ctypes parameter struct for one recorded params dict."""
    tiled = p["encode_function"] == "cuTensorMapEncodeTiled"
    s = Tiled() if tiled else Im2col()
    s.dtype, s.rank, s.global_address = p["tensorDataType_value"], p["tensorRank"], addr
    fill(s.global_dim, p["globalDim"], RANK)
    fill(s.global_strides, p["globalStrides"], RANK)
    fill(s.element_strides, p["elementStrides"], RANK)
    if tiled:
        fill(s.box_dim, p["boxDim"], RANK)
    else:
        fill(s.pixel_box_lower, p["pixelBoxLowerCorner"], RANK - 2)
        fill(s.pixel_box_upper, p["pixelBoxUpperCorner"], RANK - 2)
        s.channels_per_pixel = p["channelsPerPixel"]
        s.pixels_per_column = p["pixelsPerColumn"]
    s.interleave, s.swizzle = p["interleave_value"], p["swizzle_value"]
    s.l2_promotion, s.oob_fill = p["l2Promotion_value"], p["oobFill_value"]
    s.tensormap_address = (0x10000 + tmap_mis) if tmap_mis else 0  # 0 = aligned
    return tiled, s


def read(data_dir, fam):
    with gzip.open(os.path.join(data_dir, fam + ".jsonl.gz"), "rt") as f:
        return [json.loads(line) for line in f]


def encode_cases(fam, recs):
    """(id, params, address, encode_result, tensormap_hex or None, tensormap misalign)."""
    for r in recs:
        if fam in ("tensormap_replace", "tensormap_replace_load"):
            yield from replace_encodes(fam, r)
            continue
        p = r["params"]
        mis = p.get("tensormap_misalign", 0)
        yield r["id"], p, int(r["global_address"], 16), r["encode_result"], \
            r.get("tensormap_hex"), mis
        for ld in r.get("loads") or []:
            if "tensormap_hex" in ld:  # re-encoded after a context restart
                addr = int(ld.get("global_address", r["global_address"]), 16)
                yield "%s.load%d" % (r["id"], ld["index"]), p, addr, r["encode_result"], \
                    ld["tensormap_hex"], 0


def replace_encodes(fam, r):
    pr = r["params"]
    if fam == "tensormap_replace_load":
        yield r["id"] + ".base", pr["base_map"], int(r["global_address"], 16), \
            r["encode_result"], r.get("tensormap_hex"), 0
        yield r["id"] + ".equivalent", pr["equivalent_map"], \
            int(r["equivalent_global_address"], 16), r["equivalent_encode_result"], \
            r.get("equivalent_tensormap_hex"), 0
        return
    if "encode_result" not in r:
        return
    yield r["id"] + ".base", pr["base_map"], int(r["global_address"], 16), \
        r["encode_result"], r.get("tensormap_hex"), 0
    for i, e in enumerate(r.get("equivalents") or []):
        p = dict(pr["base_map"])
        p.update(e["params_changed"])
        yield "%s.eq%d" % (r["id"], i), p, int(e["global_address"], 16), e["encode_result"], \
            e.get("tensormap_hex"), 0


def replace_cases(fam, r):
    """(id, before_hex, [(field, ord, value)], expected_after_hex or None=reject)."""
    pr = r["params"]
    if fam == "tensormap_replace" and r.get("error") == "ptxas_rejected":
        ops = [(x["field"], x["ord"] or 0, x["new_val"] or 0) for x in pr["replacements"]]
        yield r["id"], r.get("tensormap_hex") or "00" * 128, ops, None
        return
    if r.get("error") or not r.get("tensormap_hex"):
        return
    after = r.get("after_hex") if fam == "tensormap_replace" else r.get("replaced_tensormap_hex")
    if not after:
        return
    ops = [(x["field"], x["ord"] or 0, v)
           for x, v in zip(pr["replacements"], r["new_values_used"])]
    yield r["id"], r["tensormap_hex"], ops, after


class Checker:
    def __init__(self, lib, verbose):
        self.lib, self.verbose = lib, verbose
        self.stats = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        self.failures = []
        self.edited = defaultdict(lambda: [0, 0])

    def count(self, fam, what, ok, cid, detail=""):
        st = self.stats[fam][what]
        st[0] += ok
        st[1] += 1
        if not ok:
            self.failures.append("%s %s: %s" % (what, cid, detail))

    def encode(self, p, addr, mis):
        tiled, s = make_params(p, addr, mis)
        m, err = Map(), Err()
        fn = self.lib.pa_tensormap_encode_tiled if tiled else self.lib.pa_tensormap_encode_im2col
        rc = fn(C.byref(m), C.byref(s), C.byref(err))
        return rc, m, err.msg.decode()

    def pack(self, m):
        out = Bytes128()
        self.lib.pa_tensormap_pack(C.byref(m), out)
        return bytes(out)

    def check_encode(self, fam, cid, p, addr, res, hexmap, mis):
        rc, m, msg = self.encode(p, addr, mis)
        self.count(fam, "encode", (rc == 0) == (res == 0), cid,
                   "driver %d, model %d %s" % (res, rc, msg))
        if self.verbose and rc:
            print("  %s rejected: %s" % (cid, msg))
        if rc == 0 and hexmap:
            got = self.pack(m)
            self.count(fam, "pack", got.hex() == hexmap, cid,
                       "\n   got %s\n   exp %s" % (got.hex(), hexmap))
        if hexmap:
            self.check_unpack(fam, cid, bytes.fromhex(hexmap))

    def check_unpack(self, fam, cid, raw):
        m, err = Map(), Err()
        rc = self.lib.pa_tensormap_unpack(Bytes128(*raw), C.byref(m), C.byref(err))
        ok = rc == 0 and self.pack(m) == raw
        self.count(fam, "unpack", ok, cid, err.msg.decode() if rc else "bytes differ")

    def check_replace(self, fam, cid, before, ops, after):
        buf = Bytes128(*bytes.fromhex(before))
        err = Err()
        rc = 0
        for field, ord_, val in ops:
            rc = self.lib.pa_tensormap_replace(buf, FIELDS.index(field), ord_, val, C.byref(err))
            if rc:
                break
        if after is None:
            self.count(fam, "replace", rc != 0, cid, "ptxas rejected it, model accepted")
            if self.verbose and rc:
                print("  %s rejected: %s" % (cid, err.msg.decode()))
            return
        ok = rc == 0 and bytes(buf).hex() == after
        self.count(fam, "replace", ok, cid,
                   err.msg.decode() if rc else "\n   got %s\n   exp %s" % (bytes(buf).hex(), after))
        self.decode_edited(fam, bytes.fromhex(after))

    def decode_edited(self, fam, raw):
        """Informational: edited maps that unpack (rank fields 5-7 cannot)."""
        m, err = Map(), Err()
        rc = self.lib.pa_tensormap_unpack(Bytes128(*raw), C.byref(m), C.byref(err))
        self.edited[fam][0 if rc == 0 else 1] += 1

    def run(self, data_dir, families):
        for fam in families:
            recs = read(data_dir, fam)
            for case in encode_cases(fam, recs):
                self.check_encode(fam, *case)
            if fam.startswith("tensormap_replace"):
                for r in recs:
                    for case in replace_cases(fam, r):
                        self.check_replace(fam, *case)

    def report(self):
        bad = 0
        for fam, kinds in self.stats.items():
            parts = []
            for what, (ok, n) in kinds.items():
                parts.append("%s %d/%d" % (what, ok, n))
                bad += n - ok
            print("%-24s %s" % (fam, ", ".join(parts)))
        for fam, (ok, rej) in self.edited.items():
            print("%-24s (info) edited maps: %d decode, %d rejected by unpack" % (fam, ok, rej))
        for f in self.failures[:40]:
            print("FAIL", f)
        if len(self.failures) > 40:
            print("... %d more failures" % (len(self.failures) - 40))
        print("all agree" if not bad else "%d disagreements" % bad)
        return 1 if bad else 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", default="/tmp/libpa.so", help="shared library to load")
    ap.add_argument("--data", default=os.path.join(here, "..", "data"), help="golden folder")
    ap.add_argument("--family", action="append", choices=FAMILIES, help="only these families")
    ap.add_argument("-v", "--verbose", action="store_true", help="print rejection messages")
    args = ap.parse_args()
    chk = Checker(load_lib(args.lib), args.verbose)
    chk.run(args.data, args.family or FAMILIES)
    return chk.report()


if __name__ == "__main__":
    sys.exit(main())
