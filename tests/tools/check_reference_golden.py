#!/usr/bin/env python3
"""Check tests/reference.py (tile-mode loads, stores, faults) against the
recorded sm_90 golden cases (tile_load.jsonl.gz, tile_store.jsonl.gz).

    python3 tests/tools/check_reference_golden.py [--data DIR] [-v]

Prints pass/fail counts per category (non-interleaved / interleaved, load /
store).  What is compared:

tile_load, every load of every case whose encode succeeded
  * a load that raised an error must be predicted by tile_fault(), and a load
    that ran must not be;
  * smem: the whole recorded dump [smem_region_addr, +smem_dump_len), starting
    from the 0xA5 prefill, against reference.tile_load();
  * tx: for `completed_after_probe` / `completed_after_probe2` the recorded
    tx_bytes_observed must equal the reference byte count T.  For `completed`
    the phase completed at expect_tx E: this passes when E == T, or when
    E < T and E is a multiple of the slice size (the TMA completes T in pieces
    of whole slices and the phase completed when the running count passed E;
    docs/tile-mode.md section 7.2).  Such early completions are counted apart.
  Two tolerances, each counted and reported:
  * bytes that the reference copies from global addresses outside the recorded
    window (the hardware read memory the harness did not record) are not
    compared;
  * after an early completion the kernel may dump shared memory while the TMA
    is still writing: there a recorded 0xA5 where the reference writes a byte
    is accepted (every other byte must match).

tile_store, tile-mode cases only (im2col_no_offs skipped), encode succeeded
  * an error must be predicted by tile_fault(..., is_store=True), a case that
    ran must not be;
  * global_after_hex (whole window) against reference.tile_store() applied to
    global_before_hex; writes the reference makes outside the window are
    counted, not compared.
"""
from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import reference as R  # noqa: E402

PREFILL = 0xA5


class _Unknown(int):
    """A byte read from outside the recorded global window."""


_UNKNOWN = _Unknown(0)


class _ReadWindow:
    def __init__(self, data: bytes):
        self.data = data

    def __getitem__(self, i):
        if 0 <= i < len(self.data):
            return self.data[i]
        return _UNKNOWN


class _WriteWindow(bytearray):
    outside = 0

    def __setitem__(self, i, v):
        if 0 <= i < len(self):
            bytearray.__setitem__(self, i, v)
        else:
            self.outside += 1


def _cases(path):
    with gzip.open(path, "rt") as f:
        for line in f:
            yield json.loads(line)


def _params(case):
    p = dict(case["params"])
    p["global_address"] = case["global_address"]
    return p


def check_loads(path, verbose):
    res = collections.Counter()
    fails = []
    for case in _cases(path):
        if case.get("encode_result") != 0 or "loads" not in case:
            res["skipped (encode failed)"] += 1
            continue
        p = _params(case)
        cat = "interleaved" if p["interleave_value"] else "non-interleaved"
        win = _ReadWindow(bytes.fromhex(case["global_window_hex"]))
        wbase = int(case["global_address"], 16) + case["global_window_offset"]
        for ld in case["loads"]:
            key = (cat, "load")
            fault = R.tile_fault(p, ld["coords"], False)
            if ld.get("error"):
                ok = fault is not None
                res[key + ("fault", ok)] += 1
                if not ok:
                    fails.append((case["id"], ld["index"], "fault not predicted"))
                continue
            if fault is not None:
                res[key + ("fault", False)] += 1
                fails.append((case["id"], ld["index"], "unexpected fault: " + fault))
                continue
            reg, n = ld["smem_region_addr"], ld["smem_dump_len"]
            smem = [PREFILL] * (reg + n + (1 << 20))
            T = R.tile_load(p, win, wbase, ld["coords"], smem, ld["smem_dst_addr"])
            E, obs, st = ld["expect_tx"], ld["tx_bytes_observed"], ld["mbar_status"]
            early = False
            if st == "completed":
                early = E < T and E % R.slice_or_element_unit(p) == 0
                tx_ok = (obs == E) and (E == T or early)
            else:
                tx_ok = obs == T
            got = smem[reg:reg + n]
            exp = bytes.fromhex(ld["smem_hex"])
            ndiff = nunk = nlate = 0
            for a, b in zip(got, exp):
                if isinstance(a, _Unknown):
                    nunk += 1
                elif a != b:
                    if early and b == PREFILL:
                        nlate += 1
                    else:
                        ndiff += 1
            res[key + ("smem", ndiff == 0)] += 1
            res[key + ("tx", tx_ok)] += 1
            if early:
                res[key + ("  of which early completion at expect_tx",)] += 1
            if nunk:
                res[key + ("  of which bytes from outside the window (not compared)",)] += 1
            if nlate:
                res[key + ("  of which dumped before the TMA finished (0xA5 accepted)",)] += 1
            if ndiff or not tx_ok:
                fails.append((case["id"], ld["index"],
                              f"smem bytes differing {ndiff}, tx {obs} ({st}) vs T={T} E={E}"))
    return res, fails


def check_stores(path, verbose):
    res = collections.Counter()
    fails = []
    for case in _cases(path):
        p = case["params"]
        if p.get("load_mode") != "tile":
            res["skipped (im2col_no_offs)"] += 1
            continue
        if case.get("encode_result") != 0:
            res["skipped (encode failed)"] += 1
            continue
        p = _params(case)
        cat = "interleaved" if p["interleave_value"] else "non-interleaved"
        key = (cat, "store")
        fault = R.tile_fault(p, p["coords"], True)
        if case.get("error"):
            ok = fault is not None
            res[key + ("fault", ok)] += 1
            if not ok:
                fails.append((case["id"], "fault not predicted"))
            continue
        if fault is not None:
            res[key + ("fault", False)] += 1
            fails.append((case["id"], "unexpected fault: " + fault))
            continue
        g = _WriteWindow(bytes.fromhex(case["global_before_hex"]))
        wbase = int(case["global_address"], 16) + case["global_window_offset"]
        reg = case["smem_region_addr"]
        src = bytes.fromhex(case["smem_hex"])
        smem = bytearray(reg + len(src) + (1 << 20))      # rest of the allocation was 0x00
        smem[reg:reg + len(src)] = src
        R.tile_store(p, g, wbase, p["coords"], smem, case["smem_src_addr"])
        exp = bytes.fromhex(case["global_after_hex"])
        ndiff = sum(1 for a, b in zip(g, exp) if a != b)
        res[key + ("global", ndiff == 0)] += 1
        if g.outside:
            res[key + ("  of which writes outside the window (not compared)",)] += 1
        if ndiff:
            fails.append((case["id"], f"global bytes differing {ndiff}"))
    return res, fails


def _print(res):
    for k in sorted(res, key=lambda k: tuple(str(x) for x in k) if isinstance(k, tuple) else (k,)):
        if isinstance(k, tuple) and isinstance(k[-1], bool):
            print(f"  {' / '.join(k[:-1]):45s} {'pass' if k[-1] else 'FAIL'} {res[k]}")
        elif isinstance(k, tuple):
            print(f"  {' / '.join(k[:2])} /{k[2]:s}: {res[k]}")
        else:
            print(f"  {k}: {res[k]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "tests", "data"))
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    total_fail = 0
    for name, fn in (("tile_load", check_loads), ("tile_store", check_stores)):
        path = os.path.join(a.data, name + ".jsonl.gz")
        res, fails = fn(path, a.verbose)
        print(name)
        _print(res)
        total_fail += len(fails)
        for f in fails if a.verbose else fails[:10]:
            print("  FAIL", *f)
    print("all pass" if total_fail == 0 else f"{total_fail} failures")
    return 0 if total_fail == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
