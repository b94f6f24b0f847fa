#!/usr/bin/env python3
"""Random straight-line programs (tests/randprog.py): generate, run on the model, record on a GPU.

    python tools/random_programs.py verdicts             ptxas 13.0's verdict on every qualifier choice
                                                  of every form -> tests/data/randprog/ptxas_opcodes.txt
                                                  (and where ptx.check says otherwise)
    python tools/random_programs.py model --seeds 0:100  generate, check (ptx.check, ptxas), run on the model
    python tools/random_programs.py gpu --seeds 0:4000 --dir DIR
                                                  assemble (ptxas -arch=sm_90a) into DIR/batch.npz with
                                                  DIR/randprog_run.py beside it: run that on the GPU
                                                  (python DIR/randprog_run.py DIR/batch.npz OUTDIR)
    python tools/random_programs.py ingest --dir DIR --result OUTDIR [--record REC.npz]
                                                  the GPU's outputs against the model's: figures,
                                                  differences by form; keeps the recording in REC.npz
    python tools/random_programs.py vendor --record REC.npz [--programs 250]
                                                  a part of a recording -> tests/data/randprog/
"""
import argparse
import collections
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, HERE)

import randprog as R  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "randprog")


def ptxas(text, out="/dev/null"):
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
    try:
        r = subprocess.run(["ptxas", "-arch=%s" % R.TARGET, f.name, "-o", out], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return r.returncode, r.stderr


def ptxas_version():
    return subprocess.run(["ptxas", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]


def _regs_for(widths):
    n = collections.Counter()
    names = []
    for w in widths:
        if w == "imm8":
            names.append("0x96")
            continue
        names.append("%s%d" % (R._PREFIX[w], n[w]))
        n[w] += 1
    return names


def cmd_forms(a):
    """Snapshot today's table forms for the generator (before recording programs again)."""
    fs = R.forms_from_table()
    with gzip.open(R.FORMS, "wt") as f:
        json.dump(fs, f, sort_keys=True)
    print("%d forms -> %s" % (len(fs), R.FORMS))


def cmd_verdicts(a):
    """One kernel per form: an instruction per qualifier choice, operands of operand_widths'
    registers; ptxas's errors name the lines it rejects."""
    from ptxasync import ptx
    accepted, rows = [], []
    for f in R.forms_from_table():
        lines = []
        for qs in R.all_qualifiers(f):
            ws = R.operand_widths(f, qs)
            if not all(w in (16, 32, 64, "p", "imm8") for w in ws):
                continue
            lines.append((R.opcode(f, qs), "%s %s;" % (R.opcode(f, qs), ", ".join(_regs_for(ws)))))
        if not lines:
            continue
        head = ".version %s\n.target %s\n.address_size 64\n.visible .entry k()\n{\n" % (R.PTX_VERSION, R.TARGET)
        head += "\t.reg .pred %p<8>;\n\t.reg .b16 %h<8>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n"
        first = head.count("\n") + 1
        text = head + "".join("\t%s\n" % t for _, t in lines) + "\tret;\n}\n"
        rc, err = ptxas(text)
        bad = {int(m.group(1)) - first for m in re.finditer(r"line (\d+); error", err)}
        if rc and not bad:
            sys.exit("ptxas failed without a line: %s" % err[:500])
        checker = {d.line - first for d in ptx.check(text, ptxas="13.0") if d.severity == "error"}
        for i, (op, t) in enumerate(lines):
            accepted += [op] if i not in bad else []
            if (i in bad) != (i in checker):
                rows.append("%s\t%s\tptxas %s, ptx.check %s" % (f["key"], t, "rejects" if i in bad else "accepts",
                                                                 "rejects" if i in checker else "accepts"))
    if a.write_opcodes:                   # the generator's list (record programs again after)
        os.makedirs(DATA, exist_ok=True)
        with open(os.path.join(DATA, "ptxas_opcodes.txt"), "w") as f:
            f.write("\n".join(sorted(set(accepted))) + "\n")
    print("%d opcodes accepted by %s" % (len(set(accepted)), ptxas_version()))
    print("%d where ptx.check (as ptxas 13.0) differs" % len(rows))
    if a.disagree:
        open(a.disagree, "w").write("\n".join(rows) + "\n")


def run_model(p, inputs=None):
    """The model's output bytes of a program (uint8 [THREADS * out_stride])."""
    import ptxasync as pa
    from ptxasync import ptx
    k = ptx.Kernel(p.text)
    m = pa.Machine()
    inp = np.ascontiguousarray(p.inputs if inputs is None else inputs, dtype=np.uint64).reshape(-1)
    out = np.zeros(R.THREADS * p.out_stride, np.uint8)
    k.launch(m, grid=1, block=R.THREADS, params={p.entry + "_in": m.register(inp), p.entry + "_out": m.register(out)})
    return out


def seeds(s):
    a, b = s.split(":")
    return range(int(a), int(b))


def cmd_model(a):
    from ptxasync import ptx
    progs = [R.program(s) for s in seeds(a.seeds)]
    bad = [(p.seed, d) for p in progs for d in ptx.check(p.text, ptxas="13.0")]
    for s, d in bad[:20]:
        print("ptx.check", s, d)
    rc, err = ptxas(R.module(progs))
    print("ptxas:", "accepts" if rc == 0 else err[:2000])
    t = time.time()
    for p in progs:
        run_model(p)
    print("%d programs, %d instructions on the model in %.1f s" % (
        len(progs), sum(len(p.instructions) for p in progs), time.time() - t))


def cmd_gpu(a):
    os.makedirs(a.dir, exist_ok=True)
    progs = [R.program(s) for s in seeds(a.seeds)]
    arrays = {}
    in_off, out_off, blobs = [], [], []
    pos_in = pos_out = 0
    for p in progs:
        in_off.append(pos_in)
        out_off.append(pos_out)
        b = p.inputs.astype("<u8").tobytes()
        blobs.append(b)
        pos_in += len(b)
        pos_out += R.THREADS * p.out_stride
    for k in range(0, len(progs), a.per_module):
        group = progs[k:k + a.per_module]
        cubin = os.path.join(a.dir, "m.cubin")
        rc, err = ptxas(R.module(group), cubin)
        if rc:
            sys.exit("ptxas rejects module %d: %s" % (k // a.per_module, err[:2000]))
        arrays["cubin%d" % (k // a.per_module)] = np.fromfile(cubin, np.uint8)
        arrays["entries%d" % (k // a.per_module)] = np.array(" ".join(p.entry for p in group))
        os.unlink(cubin)
        print("module", k // a.per_module, "assembled", flush=True)
    arrays.update(inputs=np.frombuffer(b"".join(blobs), np.uint8), in_off=np.array(in_off, np.int64),
                  out_off=np.array(out_off, np.int64), out_size=np.array(pos_out), threads=np.array(R.THREADS))
    np.savez_compressed(os.path.join(a.dir, "batch.npz"), **arrays)
    shutil.copy(os.path.join(HERE, "device", "randprog_run.py"), a.dir)
    meta = dict(seeds=[p.seed for p in progs], hashes=[p.hash for p in progs], out_off=out_off,
                generator=R.GENERATOR_VERSION, ptxas=ptxas_version())
    json.dump(meta, open(os.path.join(a.dir, "meta.json"), "w"))
    print("%d programs, %d instructions; outputs %d bytes" % (
        len(progs), sum(len(p.instructions) for p in progs), pos_out))


def compare(progs, outputs, offsets):
    """Figures and differences of the GPU's outputs against the model's."""
    fig = collections.Counter()
    by_form = collections.Counter()
    examples = {}
    forms_seen = set()
    ops_seen = set()
    for p, off in zip(progs, offsets):
        want = outputs[off:off + R.THREADS * p.out_stride]
        got = run_model(p)
        fig["programs"] += 1
        fig["instructions"] += len(p.instructions)
        fig["outputs"] += R.THREADS * len(p.outputs)
        forms_seen.update(i[0] for i in p.instructions)
        ops_seen.update(R.instance_key(i[1]) for i in p.instructions)
        if np.array_equal(got, want):
            continue
        g, w = R.registers(p, got), R.registers(p, want)
        fig["outputs differing"] += sum(int((g[r] != w[r]).sum()) for r in g)
        fig["programs differing"] += 1
        for i, t in R.first_difference(p, got, want):
            key, line, dests, srcs = p.instructions[i]
            op = R.instance_key(line)
            by_form[op] += 1
            if op not in examples:
                vals = {s: "0x%x" % int(g[s][t]) if s in g else "in" for s in srcs}
                ins = {s: "0x%x" % int(p_input(p, s, t)) for s in srcs if s not in g}
                vals.update(ins)
                examples[op] = dict(seed=p.seed, thread=t, line=line, sources=vals,
                                    model={d: "0x%x" % int(g[d][t]) for d, _ in dests},
                                    gpu={d: "0x%x" % int(w[d][t]) for d, _ in dests})
    fig["forms"] = len(forms_seen)
    fig["opcodes"] = len(ops_seen)
    return fig, by_form, examples


def p_input(p, reg, t):
    """An input register's value in thread t (what the load put there)."""
    k = 0
    for w in R.WORD_ORDER:
        for i in range(R.N_IN[w]):
            if "%s%d" % (R._PREFIX[w], i) == reg:
                v = int(p.inputs[t, k])
                return (v != 0 and 1 or 0) if w == "p" else v & ((1 << w) - 1) if w != 64 else v
            k += 1
    raise KeyError(reg)


def cmd_ingest(a):
    meta = json.load(open(os.path.join(a.dir, "meta.json")))
    parts = [np.load(os.path.join(a.result, "out%d.npz" % j)) for j in range(len(os.listdir(a.result)))
             if os.path.exists(os.path.join(a.result, "out%d.npz" % j))]
    outputs = np.concatenate([r["outputs"] for r in parts])
    res = parts[0]
    progs = [R.program(s) for s in meta["seeds"]]
    assert [p.hash for p in progs] == meta["hashes"], "the generator changed since the batch was made"
    fig, by_form, examples = compare(progs, outputs, meta["out_off"])
    print(json.dumps(dict(fig), indent=1))
    for op, n in by_form.most_common():
        print("%6d  %s  e.g. %s" % (n, op, json.dumps(examples[op])))
    if a.record:
        np.savez_compressed(a.record, outputs=outputs, out_off=np.array(meta["out_off"]),
                            seeds=np.array(meta["seeds"]), hashes=np.array(meta["hashes"]),
                            info=res["info"], ptxas=np.array(meta["ptxas"]),
                            generator=np.array(meta["generator"]))


def cmd_vendor(a):
    """A program showing each known difference, programs that cover every form the recording has
    (greedy), then more at random, up to --programs."""
    rec = dict(np.load(a.record))          # (an NpzFile would decompress an array at every access)
    seeds_, offs = [int(x) for x in rec["seeds"]], [int(x) for x in rec["out_off"]]
    progs = {s: R.program(s) for s in seeds_}
    assert [progs[s].hash for s in seeds_] == [str(h) for h in rec["hashes"]]
    known = KNOWN()
    chosen = []
    cover = {s: {i[0] for i in progs[s].instructions} for s in seeds_}     # every form (not every opcode)
    left = set().union(*cover.values())
    # each known difference shown by a program where it differs (the test fails when one no longer does)
    shows = {}
    for s, off in zip(seeds_, offs):
        p = progs[s]
        want = rec["outputs"][off:off + R.THREADS * p.out_stride]
        got = run_model(p)
        if not np.array_equal(got, want):
            bad, seen = R.differences(p, got, want, known)
            if bad:
                print("unexplained difference: seed %d %s" % (s, p.instructions[bad[0][0]][1]))
            shows[s] = set(seen)
    todo = set().union(*shows.values()) if shows else set()
    while todo:
        s = max(shows, key=lambda s: len(shows[s] & todo))
        chosen.append(s)
        todo -= shows[s]
        left -= cover[s]
    while left:
        s = max(seeds_, key=lambda s: len(cover[s] & left))
        chosen.append(s)
        left -= cover[s]
    rng = np.random.default_rng(0)
    rest = [s for s in seeds_ if s not in chosen]
    chosen += [int(s) for s in rng.permutation(rest)[:max(0, a.programs - len(chosen))]]
    chosen = sorted(set(chosen))
    at = dict(zip(seeds_, offs))
    ins, outs, in_off, out_off = [], [], [0], [0]
    for s in chosen:
        p = progs[s]
        ins.append(p.inputs.reshape(-1))
        outs.append(rec["outputs"][at[s]:at[s] + R.THREADS * p.out_stride])
        in_off.append(in_off[-1] + ins[-1].size)
        out_off.append(out_off[-1] + outs[-1].size)
    meta = dict(generator=int(rec["generator"]), ptxas=str(rec["ptxas"]), gpu=json.loads(str(rec["info"])),
                threads=R.THREADS, recorded_programs=len(seeds_), known=sorted(known))
    os.makedirs(DATA, exist_ok=True)
    out = os.path.join(DATA, "h200.npz")
    np.savez_compressed(out, seeds=np.array(chosen, np.int64), hashes=np.array([progs[s].hash for s in chosen]),
                        inputs=np.concatenate(ins), outputs=np.concatenate(outs), in_off=np.array(in_off),
                        out_off=np.array(out_off), meta=np.array(json.dumps(meta)))
    print("%d programs (%d differing), %d bytes" % (len(chosen), len([s for s in chosen if s in shows]),
                                                   os.path.getsize(out)))


def KNOWN():
    """The known differences the test lists (tests/randprog_known.py)."""
    import randprog_known
    return dict(randprog_known.KNOWN_DIFFERENCES)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("forms")
    v = sub.add_parser("verdicts")
    v.add_argument("--write-opcodes", action="store_true", help="rewrite data/randprog/ptxas_opcodes.txt")
    v.add_argument("--disagree", help="write where ptx.check and ptxas differ to this file")
    m = sub.add_parser("model")
    m.add_argument("--seeds", default="0:100")
    g = sub.add_parser("gpu")
    g.add_argument("--seeds", default="0:4000")
    g.add_argument("--dir", required=True)
    g.add_argument("--per-module", type=int, default=250)
    i = sub.add_parser("ingest")
    i.add_argument("--dir", required=True)
    i.add_argument("--result", required=True)
    i.add_argument("--record")
    vd = sub.add_parser("vendor")
    vd.add_argument("--record", required=True)
    vd.add_argument("--programs", type=int, default=250)
    a = ap.parse_args()
    {"forms": cmd_forms, "verdicts": cmd_verdicts, "model": cmd_model, "gpu": cmd_gpu, "ingest": cmd_ingest, "vendor": cmd_vendor}[a.cmd](a)


if __name__ == "__main__":
    main()
