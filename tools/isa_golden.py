#!/usr/bin/env python3
"""Replay instruction recordings (golden/isa format) through ptxasync.ptx.Kernel, bit for bit.

    python tools/isa_golden.py [DIR] [--ops] [--cvt] [--only SUBSTR] [--limit N] [-v]

DIR holds ops.json + isa.npz and/or cvt_forms.json + cvt_inputs.npz + cvt_{ex,pub}_*.npz (the
format of golden/isa/README.md; default: ../shared/golden/isa). Each op's recorded PTX module runs
on the model with the recorded inputs; its outputs are compared with the GPU's. Prints one line per
op (exact, or how many elements differ and the first difference; or why it did not run) and a
total. Exit 0 when every op that ran is exact.
"""
import argparse
import glob
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(os.path.dirname(os.path.dirname(HERE)), "shared", "golden", "isa")

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def run_module(ptx_text, ins, out_widths, n, threads=256, out_names=None, in_names=None):
    """Run a recorded module (parameters po0.., pi0.., pn, or the names given) and return its
    output arrays."""
    import ptxasync as pa
    from ptxasync import ptx
    k = ptx.Kernel(ptx_text)
    m = pa.Machine(ctas=1, smem_bytes=1024 if "shared" not in ptx_text else 8192)
    params = {}
    outs = []
    for j, w in enumerate(out_widths):
        o = np.zeros(n, dtype=_UINT[w])
        outs.append(o)
        params[out_names[j] if out_names else "po%d" % j] = m.register(o)
    for j, a in enumerate(ins):
        params[in_names[j] if in_names else "pi%d" % j] = m.register(np.ascontiguousarray(a))
    for name in (in_names or [])[len(ins):]:
        params[name] = 0                   # a source the form does not have
    params["pn"] = n
    grid = (n + threads - 1) // threads
    k.launch(m, grid=grid, block=threads, params=params)
    return outs


def compare(name, got, want):
    bad = 0
    first = None
    for j, (g, w) in enumerate(zip(got, want)):
        diff = np.nonzero(g != w)[0]
        if len(diff):
            bad += len(diff)
            if first is None:
                i = int(diff[0])
                first = "out%d[%d] model 0x%x gpu 0x%x" % (j, i, int(g[i]), int(w[i]))
    return bad, first


def ops_cases(d, only=None, limit=None):
    meta = json.load(open(os.path.join(d, "ops.json")))
    data = np.load(os.path.join(d, "isa.npz"))
    for i, op in enumerate(meta["ops"]):
        if only and only not in op["name"]:
            continue
        ins = [data["%d_in%d" % (i, j)] for j in range(len(op["ins"]))]
        outs = [data["%d_out%d" % (i, k)] for k in range(len(op["outs"]))]
        n = len(outs[0])
        if limit and n > limit:
            n = (limit // 256) * 256 or 256
            ins = [a[:n] for a in ins]
            outs = [a[:n] for a in outs]
        yield op["name"], op["ptx"], ins, outs, op["outs"], None


CVT_MODULE = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 po, .param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u32 pn)
{{
.reg .pred %p<2>; .reg .b32 %t<4>; .reg .b64 %q<8>;
.reg .b16 %h<8>; .reg .b32 %r<8>; .reg .b64 %rd<8>;
mov.u32 %t0, %ctaid.x; mov.u32 %t1, %ntid.x; mov.u32 %t2, %tid.x; mad.lo.u32 %t0, %t0, %t1, %t2;
ld.param.u32 %t1, [pn]; setp.ge.u32 %p0, %t0, %t1; @%p0 bra END;
cvt.u64.u32 %q0, %t0;
{loads}
{instr}
ld.param.u64 %q1, [po]; cvta.to.global.u64 %q1, %q1; mad.lo.u64 %q2, %q0, {dbytes}, %q1; st.global.b{dw} [%q2], {dreg};
END: ret;
}}
"""
_REG = {16: "%h", 32: "%r", 64: "%rd"}


def cvt_module(form):
    loads = []
    for j, w in enumerate(form["srcs"]):
        p = "p" + "abc"[j]
        loads.append("ld.param.u64 %%q1, [%s]; cvta.to.global.u64 %%q1, %%q1; mad.lo.u64 %%q2, %%q0, %d, %%q1; "
                     "ld.global.b%d %s%d, [%%q2];" % (p, w // 8, w, _REG[w], j + 1))
    return CVT_MODULE.format(loads="\n".join(loads), instr=form["instr"], dbytes=form["d"] // 8,
                             dw=form["d"], dreg=_REG[form["d"]] + "0")


def cvt_cases(d, only=None, limit=None):
    meta = json.load(open(os.path.join(d, "cvt_forms.json")))
    forms = meta["forms"] if isinstance(meta, dict) else meta
    inputs = np.load(os.path.join(d, "cvt_inputs.npz"))
    results = {}
    for f in sorted(glob.glob(os.path.join(d, "cvt_ex_*.npz")) + glob.glob(os.path.join(d, "cvt_pub_*.npz"))):
        z = np.load(f)
        for key in z.files:
            results[key] = (os.path.basename(f), z, key)
    for i, form in enumerate(forms):
        if only and only not in form["instr"]:
            continue
        key = str(i)
        if key not in results:
            continue
        fname, z, _ = results[key]
        want = z[key]
        n = len(want)
        srcs = []
        for j, w in enumerate(form["srcs"]):
            if fname.startswith("cvt_ex"):
                base = inputs["ex16"] if w == 16 else inputs["exf16x2"]
            else:
                base = inputs["pub_s%d" % w]
                if j == 1:
                    base = base[inputs["pub_pb"]]
                elif j == 2:
                    base = base[inputs["pub_pc"]]
            srcs.append(np.ascontiguousarray(base[:n]).astype(_UINT[w]))
        if limit and n > limit:
            n = limit
            srcs = [s[:n] for s in srcs]
            want = want[:n]
        yield form["instr"], cvt_module(form), srcs, [want], [form["d"]], (["po"], ["pa", "pb", "pc"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", default=DEFAULT)
    ap.add_argument("--ops", action="store_true", help="the other instructions (ops.json)")
    ap.add_argument("--cvt", action="store_true", help="the cvt forms")
    ap.add_argument("--only", help="ops whose name contains this")
    ap.add_argument("--limit", type=int, help="at most this many elements an op")
    ap.add_argument("-v", action="store_true", help="print exact ops too")
    a = ap.parse_args(argv)
    if not a.ops and not a.cvt:
        a.ops = a.cvt = True
    totals = {"exact": 0, "differ": 0, "refused": 0}
    gens = []
    if a.ops:
        gens.append(ops_cases(a.dir, a.only, a.limit))
    if a.cvt:
        gens.append(cvt_cases(a.dir, a.only, a.limit))
    for gen in gens:
        for name, text, ins, want, ow, names in gen:
            try:
                got = run_module(text, ins, ow, len(want[0]), 256, *(names or (None, None)))
            except Exception as e:  # a form the model refuses: say why
                totals["refused"] += 1
                print("REFUSED %-50s %s" % (name, str(e).splitlines()[0][:150]))
                continue
            bad, first = compare(name, got, want)
            if bad:
                totals["differ"] += 1
                print("DIFFER  %-50s %d of %d: %s" % (name, bad, len(want[0]), first))
            else:
                totals["exact"] += 1
                if a.v:
                    print("EXACT   %s" % name)
    print("exact %(exact)d, differ %(differ)d, refused %(refused)d" % totals)
    return 0 if not totals["differ"] else 1


if __name__ == "__main__":
    sys.exit(main())
