"""Turn the output of im2col_probe_cases.py (run on a GPU) into golden-format
cases: families im2col_load, tile_store and tensor_reduce, so that
`python -m ptxasync.golden` replays them like the recorded set.

    python3 tools/device/im2col_to_golden.py OUT.jsonl.gz RESULTS.jsonl...
"""
import gzip
import json
import sys

SMEM_BYTES = 200 * 1024   # what the runner gives a replayed launch


def convert(k, n):
    r = k["result"]
    rank = k["rank"]
    fam = "im2col_load" if k["mode"] == 0 else ("tile_store" if k["mode"] == 1 else "tensor_reduce")
    p = {"tensorDataType_value": k["dtype"], "tensorRank": rank, "globalDim": k["gdim"][:rank],
         "globalStrides": k["gs"][:rank - 1], "elementStrides": k["es"][:rank],
         "interleave_value": k["il"], "swizzle_value": k["sw"], "l2Promotion_value": 0,
         "oobFill_value": k["oob"], "encode_function": "cuTensorMapEncodeIm2col",
         "pixelBoxLowerCorner": k["lo"][:rank - 2], "pixelBoxUpperCorner": k["up"][:rank - 2],
         "channelsPerPixel": k["cpp"], "pixelsPerColumn": k["ppc"], "coords": k["c"][:rank]}
    case = {"id": f"{fam}.device.{n:04d}", "family": fam, "set": "device-probe", "probe_category": k["cat"],
            "params": p, "global_address": r["ADDR"], "global_window_offset": -128,
            "encode_result": int(r.get("ENC", 0)), "error": r.get("ERR")}
    if "MAP" in r:
        case["tensormap_hex"] = r["MAP"]
    if k["mode"] == 0:
        p["dst_space"] = "shared::cluster"
        load = {"index": 0, "coords": p["coords"], "im2col_offsets": k["o"][:rank - 2],
                "expect_tx": k["ppc"] * k["cpp"] * [1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4][k["dtype"]]}
        # A load that faulted printed no window: nothing was read to compare.
        case["global_window_hex"] = r.get("WIN", "")
        if r.get("ERR"):
            load["error"] = r["ERR"]
        elif "SMEM" in r:
            saddr = int(r["SADDR"])
            # TX (probe runs that measure it): the bytes credited when the phase
            # did not complete at expect_tx (the golden README's probe statuses).
            tx = int(r["TX"]) if "TX" in r and r["TX"] != "4294967295" else None
            status = ("completed" if r["DONE"] == "1" else "never_completed" if tx is None else
                      "completed_after_probe2" if tx > load["expect_tx"] else "completed_after_probe")
            load.update(mbar_status=status, tx_bytes_observed=load["expect_tx"] if tx is None else tx,
                        smem_region_addr=saddr, smem_dst_addr=saddr,
                        smem_hex=r["SMEM"][:2 * (SMEM_BYTES - saddr)])
        case["loads"] = [load] if case["encode_result"] == 0 else []
    else:
        p.update(op="store" if k["mode"] == 1 else "add", load_mode="im2col_no_offs", smem_src_offset=0)
        if "WIN" in r:
            saddr = int(r["SADDR"])
            case.update(global_before_hex=r["WIN"], global_after_hex=r["AFTER"], smem_region_addr=saddr,
                        smem_src_addr=saddr, smem_hex=r["SMEM"][:2 * (SMEM_BYTES - saddr)])
        elif case["encode_result"] == 0:
            case["global_before_hex"] = ""   # the fault left nothing to compare
            case["smem_hex"] = ""
    return case


def main(out, *inputs):
    n = 0
    with gzip.open(out, "wt", encoding="utf-8") as f:
        for path in inputs:
            for line in open(path):
                f.write(json.dumps(convert(json.loads(line), n)) + "\n")
                n += 1
    print(f"{n} cases -> {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
