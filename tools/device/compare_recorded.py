"""Compare cases re-recorded through ptxasync.cuda with the stored ones (by id),
addresses aside: the tensor map's bytes 0-7 must hold the new global address,
every other recorded byte must be equal.

    python tools/device/compare_recorded.py RERECORDED.jsonl.gz tests/data/*.jsonl.gz
"""
import collections
import gzip
import json
import sys


def cases(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            c = json.loads(line)
            if isinstance(c, dict) and "family" in c:
                yield c


def map_ok(new, old, addr):
    if not (new and old):
        return new == old
    n, o = bytes.fromhex(new), bytes.fromhex(old)
    return int.from_bytes(n[:8], "little") == int(addr, 16) and n[8:] == o[8:]


def compare(new, old):
    """(units compared, list of differences)."""
    fam = new["family"]
    diffs = []
    if fam == "encode_errors":
        if new["encode_result_name"] != old["encode_result_name"] or new.get("tensormap_hex") != old.get("tensormap_hex"):
            diffs.append(f"encode: {new['encode_result_name']} vs stored {old['encode_result_name']}")
        return 1, diffs
    if "loads" in new:
        olds = {ld["index"]: ld for ld in old.get("loads", [])}
        n = 0
        for ld in new["loads"]:
            o = olds[ld["index"]]
            n += 1
            if "tensormap_hex" in ld and not map_ok(ld["tensormap_hex"], old.get("tensormap_hex"), ld["global_address"]):
                diffs.append(f"load {ld['index']}: tensor map bytes differ")
            if ld.get("error") or o.get("error"):
                if ld.get("error") != o.get("error"):
                    diffs.append(f"load {ld['index']}: {ld.get('error')} vs stored {o.get('error')}")
            elif ld.get("mbar_status") != o.get("mbar_status"):
                diffs.append(f"load {ld['index']}: {ld.get('mbar_status')} vs stored {o.get('mbar_status')}")
            elif ld["smem_hex"][:len(o["smem_hex"])] != o["smem_hex"]:
                a, b = bytes.fromhex(ld["smem_hex"]), bytes.fromhex(o["smem_hex"])
                k = next(i for i in range(len(b)) if a[i] != b[i])
                diffs.append(f"load {ld['index']}: shared byte {k}: 0x{a[k]:02x} vs stored 0x{b[k]:02x}")
        return n, diffs
    if "loads" not in old and fam in ("tile_load", "im2col_load"):
        return 1, [] if new.get("encode_result_name") == old.get("encode_result_name") else ["encode"]
    if new.get("tensormap_hex") and not map_ok(new["tensormap_hex"], old.get("tensormap_hex"), new["global_address"]):
        diffs.append("tensor map bytes differ")
    if new.get("error") or old.get("error"):
        if new.get("error") != old.get("error"):
            diffs.append(f"{new.get('error')} vs stored {old.get('error')}")
        return 1, diffs
    for key in ("global_after_hex", "smem_after_hex"):
        if key in old and new.get(key) != old[key]:
            diffs.append(f"{key} differs")
    return 1, diffs


def main(argv):
    stored = {}
    for path in argv[1:]:
        for c in cases(path):
            stored[c["id"]] = c
    tally = collections.defaultdict(lambda: [0, 0, 0])
    notes = []
    for new in cases(argv[0]):
        old = stored.get(new["id"].split("@")[0])
        if old is None:
            continue
        n, diffs = compare(new, old)
        t = tally[new["family"]]
        t[0] += 1
        t[1] += n
        t[2] += bool(diffs)
        notes += [f"{new['id']}: {d}" for d in diffs]
    for fam, (ncases, units, bad) in sorted(tally.items()):
        print(f"{fam:14s} cases {ncases:4d}  runs {units:5d}  cases differing from the stored {bad}")
    print("\n".join(notes[:50]))
    return 1 if notes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
