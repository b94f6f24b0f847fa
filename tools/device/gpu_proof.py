"""The GPU proof of ptxasync.cuda, run on a GPU machine (see docs/gpu.md):

    python tools/device/gpu_proof.py OUTDIR [--shards 8] [--random 300] [--encode 2000]
                                     [--pipelines 300] [--skip-rerecord]
                                     [--families F ...] [--rerecord-families F ...]

1. every stored case of tests/data (families encode_errors, tile_load, im2col_load,
   tile_store, tensor_reduce, bulk_copy, bulk_reduce, cp_async, st_async,
   cluster_bulk_copy, cluster_bulk_reduce, cluster_tile_load; or those of
   --rerecord-families) run again on this GPU: compared with the stored result
   (addresses aside) and with the model, and written to OUTDIR/rerecorded.jsonl.gz;
2. --random new cases per family (every family of 1 but encode_errors, or those of
   --families) made from the stored ones (new data, coordinates, offsets; cluster
   sizes, ranks and ctaMasks): GPU against the model, written to OUTDIR/random.jsonl.gz;
3. --encode random encode parameters through the driver and the model;
4. --pipelines random multi-stage programs (loads, stores, reductions, bulk
   copies, cp.async) diffed byte for byte;
5. both written files replayed by the model's golden runner.
The work is split over --shards processes (each with its own GPU context).
OUTDIR/summary.json holds every count; OUTDIR/notes.txt every difference.
"""
import argparse
import glob
import gzip
import json
import os
import subprocess
import sys
import time

FILES = ["encode_errors", "tile_load", "im2col_load", "tile_store", "tensor_reduce", "bulk_copy", "bulk_reduce",
         "cp_async", "st_async", "cluster_bulk_copy", "cluster_bulk_reduce", "cluster_tile_load"]
RANDOM = ["tile_load", "tile_store", "tensor_reduce", "im2col_load", "bulk_copy", "bulk_reduce", "cp_async",
          "st_async", "cluster_bulk_copy", "cluster_bulk_reduce", "cluster_tile_load"]


def shard_main(a):
    from ptxasync.cuda import record, sweep
    k, n = a.shard
    files = [f"tests/data/{f}.jsonl.gz" for f in (a.rerecord_families or FILES)]
    res = {"fam": {}, "notes": []}
    t = time.time()

    def save():     # after every phase: a shard stopped at the deadline keeps what it did
        res["t_total"] = time.time() - t
        with open(os.path.join(a.out, f"part.{k}.json"), "w") as f:
            json.dump(res, f)
    if not a.skip_rerecord:
        tal = record.rerecord(files, out=os.path.join(a.out, f"rerecorded.{k}.jsonl.gz"), shard=(k, n))
        res["rerecord"] = tal.fam
        res["notes"] += tal.notes
    res["t_rerecord"] = time.time() - t
    save()
    if a.encode:
        ag, df, sk, notes = sweep.encode(max(1, a.encode // n), seed=2000 + k)
        res["encode"] = {"agree": ag, "differ": df, "skipped": sk}
        res["notes"] += notes
        save()
    if a.pipelines:
        ag, df, notes, _ = sweep.pipeline(max(1, a.pipelines // n), seed=3000 + k)
        res["pipeline"] = {"agree": ag, "differ": df}
        res["notes"] += notes
        save()
    if a.random:
        res["random"] = {}
        for fam in a.families or RANDOM:
            tal = record.random_cases([f"tests/data/{fam}.jsonl.gz"], max(1, a.random // n), seed=1000 + k,
                                      out=os.path.join(a.out, f"random.{k}.{fam}.jsonl.gz"))
            add(res["random"], tal.fam)
            res["notes"] += tal.notes
            res["t_random"] = time.time() - t
            save()

def add(dst, src):
    for fam, counts in src.items():
        d = dst.setdefault(fam, {})
        for key, v in counts.items():
            d[key] = d.get(key, 0) + v


def merge(a):
    summary = {"rerecord": {}, "random": {}, "encode": {}, "pipeline": {}, "times": []}
    notes = []
    for k in range(a.shards):
        path = os.path.join(a.out, f"part.{k}.json")
        if not os.path.exists(path):
            notes.append(f"shard {k}: no result")
            continue
        with open(path) as f:
            r = json.load(f)
        add(summary["rerecord"], r.get("rerecord", {}))
        add(summary["random"], r.get("random", {}))
        add(summary, {"encode": r.get("encode", {}), "pipeline": r.get("pipeline", {})})
        summary["times"].append([round(r.get(x, 0), 1) for x in ("t_rerecord", "t_random", "t_total")])
        notes += r["notes"]
    for name in ("rerecorded", "random"):
        parts = sorted(glob.glob(os.path.join(a.out, f"{name}.*.jsonl.gz")))
        if not parts:
            continue
        with gzip.open(os.path.join(a.out, f"{name}.jsonl.gz"), "wt", encoding="utf-8") as out:
            for p in parts:
                try:
                    with gzip.open(p, "rt", encoding="utf-8") as f:
                        lines = f.readlines()
                except (EOFError, OSError) as e:      # a shard stopped mid-write
                    notes.append(f"{p}: cut short ({e})")
                    lines = []
                out.writelines(x for x in lines if x.endswith("\n"))
                os.remove(p)
        from ptxasync.golden import BadInput, check_file
        try:
            results, failures = check_file(os.path.join(a.out, f"{name}.jsonl.gz"))
        except BadInput as e:
            notes.append(f"golden replay of {name}: {e}")
            continue
        summary[f"golden_{name}"] = results
        notes += [f"golden replay of {name}: {cid}: {msg}" for cid, msg in failures]
    from ptxasync.cuda import gpu_info
    summary["gpu"] = gpu_info()
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    with open(os.path.join(a.out, "notes.txt"), "w") as f:
        f.write("\n".join(notes) + "\n")
    for k in range(a.shards):
        path = os.path.join(a.out, f"part.{k}.json")
        if os.path.exists(path):
            os.remove(path)
    print(json.dumps(summary, indent=1, sort_keys=True))
    print(f"{len(notes)} notes; first 40:")
    print("\n".join(n[:400] for n in notes[:40]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--random", type=int, default=0)
    ap.add_argument("--encode", type=int, default=0)
    ap.add_argument("--pipelines", type=int, default=0)
    ap.add_argument("--skip-rerecord", action="store_true")
    ap.add_argument("--families", nargs="*", help="random-case families (default: all)")
    ap.add_argument("--rerecord-families", nargs="*", help="stored files to re-record (default: all)")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds after which the shards are stopped")
    ap.add_argument("--shard", type=int, nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.shard:
        return shard_main(a)
    t = time.time()
    procs = [subprocess.Popen([sys.executable, __file__, *sys.argv[1:], "--shard", str(k), str(a.shards)])
             for k in range(a.shards)]
    for p in procs:
        try:
            p.wait(timeout=max(1, a.deadline - (time.time() - t)))
        except subprocess.TimeoutExpired:
            print(f"deadline: stopping shard {procs.index(p)}")
            p.kill()
            p.wait()
    print(f"shards done in {time.time() - t:.1f}s")
    merge(a)


if __name__ == "__main__":
    main()
