#!/usr/bin/env python3
"""Record on the GPU what the ISA leaves to the hardware for isspacep, getctarank and createpolicy:

- isspacep.<space> for generic addresses of every kind (a global buffer, past it, null, this CTA's
  and the other CTA's shared memory, a .local variable, a kernel parameter, a .const variable),
  and getctarank of the shared ones, in a cluster of 2 CTAs;
- the 64-bit value createpolicy returns for every priority pair and a sweep of fractions, and the
  range-based form for a few addresses and sizes.

    python tools/device/record_space_policy.py OUT.json"""
import importlib.util
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "_driver", os.path.join(HERE, "..", "..", "src", "ptxasync", "cuda", "_driver.py"))
drv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(drv)

SPACES = ["global", "shared", "shared::cta", "shared::cluster", "local", "const", "param", "param::entry"]
ADDRS = ["global", "global+2^40", "null", "shared (own)", "shared (other CTA)", "local", "param", "const"]


def space_kernel():
    lines = []
    lines.append("    ld.param.u64 %rd10, [pg];\n    mov.u64 %rd11, %rd13;")
    lines.append("    mov.u64 %rd1, %rd10;")                                   # 0 global
    lines.append("    add.u64 %rd2, %rd10, 1099511627776;")                     # 1 global + 2^40
    lines.append("    mov.u64 %rd3, 0;")                                         # 2 null
    lines.append("    mov.u64 %rd20, sv;\n    cvta.shared.u64 %rd4, %rd20;")     # 3 own shared
    lines.append("    mov.u32 %r20, %cluster_ctarank;\n    xor.b32 %r21, %r20, 1;\n"
                 "    mapa.u64 %rd5, %rd4, %r21;")                               # 4 other CTA's shared
    lines.append("    mov.u64 %rd21, lv;\n    cvta.local.u64 %rd6, %rd21;")      # 5 local
    lines.append("    mov.u64 %rd22, pg;\n    cvta.param.u64 %rd7, %rd22;")      # 6 param
    lines.append("    mov.u64 %rd23, cv;\n    cvta.const.u64 %rd8, %rd23;")      # 7 const
    k = 0
    for a in range(8):
        lines.append(f"    st.global.u64 [%rd11+{8 * k}], %rd{a + 1};")
        k += 1
    for a in range(8):
        for s in SPACES:
            lines.append(f"    isspacep.{s} %p1, %rd{a + 1};\n    selp.u64 %rd30, 1, 0, %p1;\n"
                         f"    st.global.u64 [%rd11+{8 * k}], %rd30;")
            k += 1
    for a in (4, 5):          # getctarank of the shared addresses, generic and as shared::cluster
        lines.append(f"    getctarank.u64 %r30, %rd{a};\n    cvt.u64.u32 %rd30, %r30;\n"
                     f"    st.global.u64 [%rd11+{8 * k}], %rd30;")
        k += 1
        lines.append(f"    cvta.to.shared.u64 %rd31, %rd{a};\n    getctarank.shared::cluster.u64 %r30, %rd31;\n"
                     f"    cvt.u64.u32 %rd30, %r30;\n    st.global.u64 [%rd11+{8 * k}], %rd30;")
        k += 1
    body = "\n".join(lines)
    ptx = f""".version 8.3
.target sm_90a
.address_size 64
.const .align 8 .b64 cv[2] = {{1, 2}};
.visible .entry k(.param .u64 pg, .param .u64 pout)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<40>;
    .reg .b64 %rd<40>;
    .shared .align 8 .b64 sv[4];
    .local .align 8 .b64 lv[4];
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p2, %r1, 0;
    @%p2 bra DONE;
    mov.u32 %r2, %cluster_ctarank;
    mul.wide.u32 %rd12, %r2, {8 * k};
    ld.param.u64 %rd13, [pout];
    add.u64 %rd13, %rd13, %rd12;
{body}
DONE:
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
}}
"""
    return ptx, k


PRIMARY = ["evict_last", "evict_normal", "evict_first", "evict_unchanged"]
SECONDARY = [None, "evict_first", "evict_unchanged"]
FRACTIONS = [None, "1.0", "0.5", "0.25", "0.75", "0.125", "0.0625", "0.1", "0.9", "0.3", "0.001", "0.99",
             "0f3F000001", "0f3E800000"]
RANGES = [(0, 4096, 8192), (0, 0, 8192), (0, 8192, 8192), (256, 1 << 20, 1 << 21), (0, 1, 1), (128, 3000, 70000)]


def _f32(x):
    return "0f%08X" % struct.unpack("<I", struct.pack("<f", x))[0]


# fractions at and around every sixteenth (and a few magnitudes below one sixteenth), as f32 literals
SWEEP = sorted({_f32(j / 16 + d) for j in range(0, 17) for d in
                [0.0] + [s * 2.0 ** -k for k in (5, 6, 7, 8, 9, 10, 12, 14, 16, 20, 23, 24) for s in (1, -1)]
                if 0 < j / 16 + d <= 1} | {_f32(x) for x in np.random.default_rng(5).random(64)})
# range-based: where the window starts (an offset from a 4 MiB-aligned buffer) and its two sizes
RANGE_SWEEP = [(o, p, t) for o in (0, 64, 256, 4096, 65536, 1 << 20) for p, t in
               [(0, 1), (1, 1), (4096, 4096), (4096, 8192), (8191, 8192), (8193, 16384), (1 << 16, 1 << 20),
                (1 << 20, 1 << 20), (1 << 20, 1 << 21), (3 << 20, 1 << 22), (1 << 24, 1 << 30), (12345, 54321),
                (1 << 31, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF)]]


def policy_forms():
    forms = []
    for f in SWEEP:
        forms.append((f"createpolicy.fractional.L2::evict_last.b64 %rd1, {f};", dict(p="evict_last", s=None, f=f)))
    for off, prim, tot in RANGE_SWEEP:
        forms.append((f"createpolicy.range.L2::evict_last.b64 %rd1, [%rd10+{off}], {prim}, {tot};",
                      dict(p="evict_last", s=None, range=[off, prim, tot])))
    for p in PRIMARY:
        for s in SECONDARY:
            for f in FRACTIONS:
                q = f".L2::{p}" + (f".L2::{s}" if s else "")
                forms.append((f"createpolicy.fractional{q}.b64 %rd1" + (f", {f};" if f else ";"), dict(p=p, s=s, f=f)))
    for p in PRIMARY:
        for s in SECONDARY:
            for off, prim, tot in RANGES:
                q = f".L2::{p}" + (f".L2::{s}" if s else "")
                forms.append((f"createpolicy.range{q}.b64 %rd1, [%rd10+{off}], {prim}, {tot};",
                              dict(p=p, s=s, range=[off, prim, tot])))
    return forms


def policy_kernel(forms):
    lines = []
    for i, (f, _) in enumerate(forms):
        lines.append(f"    {f}\n    st.global.u64 [%rd11+{8 * i}], %rd1;")
    body = "\n".join(lines)
    return f""".version 8.3
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pg, .param .u64 pout)
{{
    .reg .b64 %rd<20>;
    ld.param.u64 %rd10, [pg];
    ld.param.u64 %rd11, [pout];
{body}
    ret;
}}
"""


def main(out):
    dev = drv.Device()
    res = {"device": dev.info()}
    g = dev.alloc(1 << 22)
    # isspacep / getctarank: a cluster of 2 CTAs, each writes its own slots
    ptx, k = space_kernel()
    o = dev.alloc(2 * 8 * k)
    dev.upload(o, bytes(2 * 8 * k))
    mod, fn = dev.load_ptx(ptx, "k")
    err = dev.launch(fn, [struct.pack("<Q", g), struct.pack("<Q", o)], 32, 0, ctas=2)
    vals = np.frombuffer(dev.download(o, 2 * 8 * k), np.uint64).reshape(2, k)
    res["space"] = dict(ptx=ptx, error=err, spaces=SPACES, addrs=ADDRS, global_base=g,
                        values=[[int(v) for v in row] for row in vals])
    dev.unload(mod)
    # createpolicy: one kernel per form, so that a form ptxas refuses is told apart
    pol = []
    forms = policy_forms()
    good = []
    for f, meta in forms:
        try:
            m, fn1 = dev.load_ptx(policy_kernel([(f, meta)]), "k")
            dev.unload(m)
            good.append((f, meta))
        except drv.CudaError as e:
            pol.append(dict(ptx=f, **meta, error=str(e).splitlines()[-1][:200]))
    o2 = dev.alloc(8 * len(good))
    mod, fn = dev.load_ptx(policy_kernel(good), "k")
    err = dev.launch(fn, [struct.pack("<Q", g), struct.pack("<Q", o2)], 1, 0)
    vals = np.frombuffer(dev.download(o2, 8 * len(good)), np.uint64)
    for (f, meta), v in zip(good, vals):
        pol.append(dict(ptx=f, **meta, value=int(v)))
    res["createpolicy"] = dict(error=err, global_base=g, forms=pol)
    with open(out, "w") as fh:
        json.dump(res, fh, indent=1)
    print("space launch:", res["space"]["error"], "policies:", len(good), "of", len(forms), "err", err)


if __name__ == "__main__":
    main(sys.argv[1])
