#!/usr/bin/env python3
"""Check the reduction arithmetic against the recorded sm_90 golden cases.

Families: bulk_reduce (global_after vs global_before reduced with the shared
source), cluster_bulk_reduce (every CTA of the cluster) and tensor_reduce
(non-interleaved tile-mode cases, traversed with the tile-store model of golden
observation 9; im2col_no_offs, interleaved and failed-encode cases are counted
as skipped).  For tensor_reduce cases that raised an error, the pair check is
compared instead: a pair that the model says executes must have failed for a
traversal reason (negative coordinate, unaligned c0).

    python3 tests/tools/check_reduce_golden.py [--impl c|ref] [--data DIR] [-v]

--impl c (default) builds csrc/core/types.c + reduce.c into /tmp/libred.so with
gcc and calls it through ctypes; --impl ref uses tests/reduce_reference.py.
"""
from __future__ import annotations

import argparse
import ctypes
import gzip
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))

REDOPS = ["add", "min", "max", "inc", "dec", "and", "or", "xor"]
RTYPES = ["b32", "b64", "u32", "s32", "u64", "s64", "f16", "bf16", "f32", "f64"]
RT_BYTES = {"b32": 4, "b64": 8, "u32": 4, "s32": 4, "u64": 8, "s64": 8,
            "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
DT_BYTES = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}
UT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class CImpl:
    def __init__(self, so="/tmp/libred.so"):
        subprocess.check_call(
            ["gcc", "-shared", "-fPIC", "-O2", "-std=c11", "-I", "csrc/core",
             "csrc/core/types.c", "csrc/core/reduce.c", "-o", so], cwd=ROOT)
        self.lib = ctypes.CDLL(so)
        P = ctypes.c_char_p
        self.lib.pa_reduce_bulk_apply.argtypes = [ctypes.c_int, ctypes.c_int, P, P, ctypes.c_size_t]
        self.lib.pa_reduce_tensor_apply.argtypes = [ctypes.c_int, ctypes.c_int, P, P, ctypes.c_size_t]
        self.lib.pa_reduce_tensor_check.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        self.lib.pa_reduce_bulk_check.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                                  ctypes.c_int, ctypes.c_void_p]

    def bulk(self, op, typ, dst: bytes, src: bytes) -> bytes:
        buf = ctypes.create_string_buffer(dst, len(dst))
        n = len(dst) // RT_BYTES[typ]
        self.lib.pa_reduce_bulk_apply(REDOPS.index(op), RTYPES.index(typ), buf, src, n)
        return buf.raw

    def tensor(self, op, dt, dst: bytes, src: bytes) -> bytes:
        buf = ctypes.create_string_buffer(dst, len(dst))
        n = len(dst) // DT_BYTES[dt]
        self.lib.pa_reduce_tensor_apply(REDOPS.index(op), dt, buf, src, n)
        return buf.raw

    def tensor_ok(self, op, dt) -> bool:
        return self.lib.pa_reduce_tensor_check(REDOPS.index(op), dt, None) == 0

    def bulk_ok(self, op, typ, noftz, dst) -> bool:
        return self.lib.pa_reduce_bulk_check(REDOPS.index(op), RTYPES.index(typ), int(noftz),
                                             dst, None) == 0


class RefImpl:
    def __init__(self):
        import reduce_reference as R
        self.R = R

    def bulk(self, op, typ, dst, src):
        ut = UT[RT_BYTES[typ]]
        return self.R.reduce_ref(op, typ, np.frombuffer(dst, ut), np.frombuffer(src, ut)).tobytes()

    def tensor(self, op, dt, dst, src):
        ut = UT[DT_BYTES[dt]]
        return self.R.reduce_tensor_ref(op, dt, np.frombuffer(dst, ut),
                                        np.frombuffer(src, ut)).tobytes()

    def tensor_ok(self, op, dt):
        return (op, dt) in self.R.TENSOR_EXECUTES

    def bulk_ok(self, op, typ, noftz, dst):
        return True


def load(data, fam):
    with gzip.open(os.path.join(data, fam + ".jsonl.gz"), "rt") as f:
        return [json.loads(line) for line in f]


def diff_report(typ_bytes, exp: bytes, got: bytes, before: bytes, src_of=None, limit=4):
    out = []
    for i in range(0, len(exp), typ_bytes):
        if exp[i:i + typ_bytes] != got[i:i + typ_bytes]:
            le = lambda b: int.from_bytes(b[i:i + typ_bytes], "little")
            s = f"  @{i}: before={le(before):#x}"
            if src_of is not None:
                sv = src_of(i)
                s += f" src={sv:#x}" if sv is not None else ""
            s += f" hw={le(exp):#x} model={le(got):#x}"
            out.append(s)
            if len(out) >= limit:
                break
    return out


def check_bulk(impl, data, verbose):
    ok = bad = 0
    for c in load(data, "bulk_reduce"):
        p = c["params"]
        if c.get("error"):
            continue
        typ, op, size = p["type"], p["redop"], p["size"]
        gb = bytes.fromhex(c["global_before_hex"])
        ga = bytes.fromhex(c["global_after_hex"])
        sm = bytes.fromhex(c["smem_before_hex"])
        d0, s0 = p["global_dst_offset"], p["smem_src_offset"]
        assert impl.bulk_ok(op, typ, p["noftz"], 0), (op, typ)
        red = impl.bulk(op, typ, gb[d0:d0 + size], sm[s0:s0 + size])
        model = gb[:d0] + red + gb[d0 + size:]
        if model == ga:
            ok += 1
        else:
            bad += 1
            print(f"FAIL {c['id']} {op}.{typ}")
            if verbose:
                eb = RT_BYTES[typ]
                for line in diff_report(eb, ga[d0:d0 + size], red, gb[d0:d0 + size],
                                        lambda i: int.from_bytes(sm[s0 + i:s0 + i + eb], "little")):
                    print(line)
    return ok, bad, 0


def check_cluster(impl, data, verbose):
    ok = bad = 0
    for c in load(data, "cluster_bulk_reduce"):
        p = c["params"]
        if c.get("error"):
            continue
        typ, op, size = p["type"], p["redop"], p["size"]
        assert impl.bulk_ok(op, typ, 0, 1), (op, typ)
        cs = p["cluster_size"]
        ctas = c["ctas"]
        last = ctas[-cs:]  # the issuing cluster
        issuer = [k for k in ctas if k["issued"]]
        assert len(issuer) == 1
        src_cta = issuer[0]
        dst_cta = [k for k in last if k["cluster_ctarank"] == p["dst_rank"]][0]
        sm_src = bytes.fromhex(src_cta["smem_before_hex"])
        src = sm_src[p["smem_src_offset"]:p["smem_src_offset"] + size]
        good = True
        for k in ctas:
            before = bytes.fromhex(k["smem_before_hex"])
            after = bytes.fromhex(k["smem_after_hex"])
            if k is dst_cta:
                d0 = p["smem_dst_offset"]
                red = impl.bulk(op, typ, before[d0:d0 + size], src)
                model = before[:d0] + red + before[d0 + size:]
            else:
                model = before
            if model != after:
                good = False
                if verbose:
                    print(f"  CTA {k['ctaid']} differs")
        if good:
            ok += 1
        else:
            bad += 1
            print(f"FAIL {c['id']} {op}.{typ}")
    return ok, bad, 0


def tile_reduce_model(impl, c):
    """Global window after the reduction, per golden observation 9."""
    p = c["params"]
    dt = p["tensorDataType_value"]
    es = DT_BYTES[dt]
    rank = p["tensorRank"]
    gdim, gstr, box, est = p["globalDim"], p["globalStrides"], p["boxDim"], p["elementStrides"]
    coords = p["coords"]
    span = {0: 0, 1: 32, 2: 64, 3: 128}.get(p["swizzle_value"], 128)
    mask = {0: 0, 1: 1, 2: 3, 3: 7}.get(p["swizzle_value"], 7)
    gb = bytearray(bytes.fromhex(c["global_before_hex"]))
    woff = -c["global_window_offset"]
    sm = bytes.fromhex(c["smem_hex"])
    region = c["smem_region_addr"]
    src = c["smem_src_addr"]
    pitch = max(box[0] * es, span)
    dim0_lim = -(-gdim[0] * es // 16) * 16  # bytes: end of the chunk holding the last element
    counts = [box[0]] + [-(-box[i] // est[i]) for i in range(1, rank)]
    nrows = 1
    for n in counts[1:]:
        nrows *= n
    dsts, srcs = [], []
    for row in range(nrows):
        r = row
        goff = 0
        inb = True
        for i in range(1, rank):
            ti = r % counts[i]
            r //= counts[i]
            g = coords[i] + ti * est[i]
            if not (0 <= g < gdim[i]):
                inb = False
            goff += g * gstr[i - 1]
        if not inb:
            continue
        for t0 in range(box[0]):
            g0 = coords[0] + t0
            if g0 < 0 or g0 * es >= dim0_lim:
                continue
            a = src + row * pitch + t0 * es
            a ^= ((a >> 7) & mask) << 4
            so = a - region
            gofs = woff + goff + g0 * es
            dsts.append(gofs)
            srcs.append(sm[so:so + es])
    if not dsts:
        return bytes(gb), 0
    dst_b = b"".join(bytes(gb[o:o + es]) for o in dsts)
    red = impl.tensor(p["op"], dt, dst_b, b"".join(srcs))
    for k, o in enumerate(dsts):
        gb[o:o + es] = red[k * es:(k + 1) * es]
    return bytes(gb), len(dsts)


def check_tensor(impl, data, verbose):
    ok = bad = skip = 0
    nbytes_cmp = nerr = 0
    for c in load(data, "tensor_reduce"):
        p = c["params"]
        dt = p["tensorDataType_value"]
        if c.get("encode_result") != 0 or p["load_mode"] != "tile" or p["interleave_value"] != 0:
            skip += 1
            continue
        es = DT_BYTES.get(dt)
        aligned = min(p["coords"]) >= 0 and (p["coords"][0] * es) % 16 == 0
        model_ok = impl.tensor_ok(p["op"], dt)
        if c.get("error"):
            # failed on hardware: either a traversal reason or the pair does not execute
            if aligned and model_ok:
                bad += 1
                print(f"FAIL {c['id']} {p['op']} dtype {dt}: hardware {c['error']}, model executes")
            else:
                ok += 1
                nerr += 1
            continue
        if not model_ok:
            bad += 1
            print(f"FAIL {c['id']} {p['op']} dtype {dt}: executed on hardware, model rejects")
            continue
        model, n = tile_reduce_model(impl, c)
        ga = bytes.fromhex(c["global_after_hex"])
        if model == ga:
            ok += 1
            nbytes_cmp += 1
        else:
            bad += 1
            print(f"FAIL {c['id']} {p['op']} dtype {dt} ({n} elements)")
            if verbose:
                gb = bytes.fromhex(c["global_before_hex"])
                for line in diff_report(es, ga, model, gb):
                    print(line)
    print(f"tensor_reduce: {nbytes_cmp} executed cases match byte for byte, "
          f"{nerr} failed cases agree with the pair table / traversal rules")
    return ok, bad, skip


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", choices=["c", "ref"], default="c")
    ap.add_argument("--data", default=os.path.join(ROOT, "tests", "data"))
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    impl = CImpl() if a.impl == "c" else RefImpl()
    total_bad = 0
    for name, fn in (("bulk_reduce", check_bulk), ("cluster_bulk_reduce", check_cluster),
                     ("tensor_reduce", check_tensor)):
        ok, bad, skip = fn(impl, a.data, a.verbose)
        total_bad += bad
        print(f"{name}: {ok} pass, {bad} fail, {skip} skipped")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
