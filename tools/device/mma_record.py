#!/usr/bin/env python3
"""Tensor-core instructions on a GPU and on the model, with the same PTX modules and inputs.

    python tools/device/mma_record.py gpu OUTDIR [--warps W] [--ctas C]   (on a GPU machine)
    python tools/device/mma_record.py model OUTDIR [...]                   (through ptx.Kernel)

Forms: every mma.sync shape / type family of sm_80..sm_90 (FORMS), and wgmma.mma_async cases
(WG_CASES: each type, f16 / f32 accumulators, scale-d, imm-scale -1, the transposes, A from
registers). The inputs are not stored: `inputs()` draws them from a counter hash (splitmix64 in
NumPy, no library's random stream), so the GPU machine and this one make the same bits. OUTDIR
gets `mma_out.npz` (key `<i>_out<k>` per mma form) and `wgmma_out.npz` (key `<i>`), plus
`meta.json` (the forms, the modules, the GPU). Self-contained on the GPU side: NumPy and
cuda.bindings (or CuPy) only.

The modules: an mma form's is golden/isa's (thread t loads input register j from pi<j>[t], runs
the instruction, stores output register k to po<k>[t]); a wgmma case's is one warpgroup per CTA
that copies its A and B bytes (already in the shared-memory layout of the descriptors, no swizzle)
into shared memory, loads its accumulators (and A's registers) from pc / pr, runs one
wgmma.mma_async and stores the accumulators to po.
"""
import json
import os
import sys

import numpy as np

M64 = np.uint64((1 << 64) - 1)

# ---------------------------------------------------------------- counter hash ----


def hash64(seed, n):
    """n 64-bit words of splitmix64 over the counter 0..n-1 (seed chooses the stream)."""
    with np.errstate(over="ignore"):
        z = (np.arange(n, dtype=np.uint64) + np.uint64(seed & 0xFFFFFFFF) * np.uint64(0x100000001)) * \
            np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


FMT = {  # ebits, mbits, bias
    "f16": (5, 10, 15), "bf16": (8, 7, 127), "tf32": (8, 23, 127), "f32": (8, 23, 127), "f64": (11, 52, 1023),
    "e4m3": (4, 3, 7), "e5m2": (5, 2, 15),
}
BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8,
        "s4": 4, "u4": 4, "b1": 1, "s32": 32}


def elements(t, seed, n, spread):
    """n elements of type t (bit patterns, uint64): mostly normal numbers with exponents within
    `spread` of 0, some random bit patterns (specials, subnormals), some zeros and subnormals."""
    h = hash64(seed, n)
    bits = BITS[t]
    if t not in FMT:
        return h & np.uint64((1 << bits) - 1)
    eb, mb, bias = FMT[t]
    sel = (h >> np.uint64(58)) & np.uint64(63)
    sign = (h >> np.uint64(57)) & np.uint64(1)
    e = (h >> np.uint64(40)) % np.uint64(2 * spread + 1)
    e = (e.astype(np.int64) - spread + bias).clip(1, (1 << eb) - 2).astype(np.uint64)
    mant = h & np.uint64((1 << min(mb, 40)) - 1)
    if mb > 40:
        mant = (mant << np.uint64(mb - 40)) | (hash64(seed ^ 0x5555, n) >> np.uint64(64 - (mb - 40)))
    v = (sign << np.uint64(eb + mb)) | (e << np.uint64(mb)) | mant
    rnd = hash64(seed ^ 0xABCD, n) & np.uint64((1 << bits) - 1) if bits < 64 else hash64(seed ^ 0xABCD, n)
    v = np.where(sel < 3, rnd, v)                                   # 3/64 random bit patterns
    sub = (sign << np.uint64(eb + mb)) | (mant & np.uint64((1 << mb) - 1) >> np.uint64(2))
    v = np.where(sel == 3, sub, v)                                  # subnormal (or zero)
    v = np.where(sel == 4, sign << np.uint64(eb + mb), v)           # signed zero
    return v


def pack(els, bits, per):
    """Elements (n*per) into registers of per elements each (element j at bits j*bits)."""
    els = els.reshape(-1, per)
    out = np.zeros(els.shape[0], np.uint64)
    for j in range(per):
        out |= (els[:, j] & np.uint64((1 << bits) - 1)) << np.uint64(j * bits)
    return out


def reg_values(t, seed, nlanes, role):
    """One register of every lane for an operand of type t (role 'ab' or 'c')."""
    bits = BITS[t]
    per = 1 if bits >= 32 else 32 // bits
    spread = {"f16": 6, "bf16": 10, "tf32": 10, "f32": 14, "f64": 30, "e5m2": 7, "e4m3": 4}.get(t, 0)
    if role == "c" and t == "f16":
        spread = 8
    els = elements(t, seed, nlanes * per, spread)
    return pack(els, bits, per) if per > 1 else els

# ---------------------------------------------------------------- mma.sync forms ----


def mma_shape(instr):
    sh = next(p for p in instr.split(".") if p.startswith("m") and "n" in p and "k" in p)
    m, rest = sh[1:].split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


def mma_types(instr):
    ts = [p for p in instr.split(".") if p in BITS]
    return ts[0], ts[1], ts[2], ts[3]        # d, a, b, c


def mma_regs(instr):
    m, n, k = mma_shape(instr)
    d, a, b, c = mma_types(instr)
    q = 4 if (m, n, k) == (8, 8, 4) and a == "f16" else 1

    def cnt(r, cc, t):
        tot = r * cc * BITS[t] * q // 32
        return tot // 64 if BITS[t] == 64 else tot // 32
    return cnt(m, n, d), cnt(m, k, a), cnt(n, k, b), cnt(m, n, c)


def _forms():
    out = []
    f16 = "mma.sync.aligned.{s}.row.col.{d}.f16.f16.{c}"
    for s in ("m16n8k16", "m16n8k8"):
        out += [f16.format(s=s, d="f32", c="f32"), f16.format(s=s, d="f16", c="f16")]
    out += ["mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32"]
    out += ["mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32",
            "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e5m2.f16", "mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32",
            "mma.sync.aligned.m16n8k16.row.col.f16.e5m2.e4m3.f16"]
    out += ["mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32",
            "mma.sync.aligned.m16n8k16.row.col.s32.s8.u8.s32", "mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32",
            "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", "mma.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.s4.s32",
            "mma.sync.aligned.m16n8k32.row.col.s32.u4.u4.s32", "mma.sync.aligned.m8n8k32.row.col.s32.s4.u4.s32",
            "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc",
            "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc",
            "mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.xor.popc",
            "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc"]
    out += ["mma.sync.aligned.%s.row.col.f64.f64.f64.f64" % s for s in ("m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16")]
    out += ["mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", "mma.sync.aligned.m8n8k4.col.row.f16.f16.f16.f16",
            "mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f16", "mma.sync.aligned.m8n8k4.col.col.f32.f16.f16.f32"]
    return out


FORMS = _forms()


def mma_warps(instr, scale=1):
    """Warps of a form: 131,072 outputs (m16n8: 128 a warp; m8n8: 64; m8n8k4 f16: 256)."""
    m, n, k = mma_shape(instr)
    per = 256 if (m, n, k) == (8, 8, 4) and "f16.f16" in instr else m * n
    return max(1, 131072 // per // scale)


def mma_case(i, warps=None):
    """(instr, ins widths, outs widths, inputs) of form i."""
    instr = FORMS[i]
    d, a, b, c = mma_types(instr)
    nd, na, nb, nc = mma_regs(instr)
    nl = 32 * (warps or mma_warps(instr))
    ins, widths = [], []
    for role, t, cnt in (("ab", a, na), ("ab", b, nb), ("c", c, nc)):
        for j in range(cnt):
            v = reg_values(t, 1000 * i + 10 * len(ins) + 7, nl, role)
            w = 64 if BITS[t] == 64 else 32
            ins.append(v.astype(np.uint64 if w == 64 else np.uint32))
            widths.append(w)
    outw = [64 if BITS[d] == 64 else 32] * nd
    return instr, widths, outw, ins


def mma_module(instr, inw, outw):
    nd = len(outw)
    na, nb, nc = mma_regs(instr)[1:]
    params = ["po%d" % k for k in range(len(outw))] + ["pi%d" % j for j in range(len(inw))]
    lines = [".version 8.7", ".target sm_90a", ".address_size 64",
             ".visible .entry k(%s, .param .u32 pn)" % ", ".join(".param .u64 " + p for p in params), "{",
             ".reg .pred %p<4>; .reg .b32 %t<4>; .reg .b64 %q<4>;"]
    lines += [".reg .b%d %%ri%d;" % (w, j) for j, w in enumerate(inw)]
    lines += [".reg .b%d %%ro%d;" % (w, k) for k, w in enumerate(outw)]
    lines += ["mov.u32 %t0, %ctaid.x; mov.u32 %t1, %ntid.x; mov.u32 %t2, %tid.x; mad.lo.u32 %t0, %t0, %t1, %t2;",
              "ld.param.u32 %t1, [pn]; setp.ge.u32 %p0, %t0, %t1; @%p0 bra END;", "cvt.u64.u32 %q0, %t0;"]
    for j, w in enumerate(inw):
        lines.append("ld.param.u64 %%q1, [pi%d]; cvta.to.global.u64 %%q1, %%q1; mad.lo.u64 %%q2, %%q0, %d, %%q1; "
                     "ld.global.b%d %%ri%d, [%%q2];" % (j, w // 8, w, j))
    vec = lambda p, a, n: "{" + ",".join("%%%s%d" % (p, a + x) for x in range(n)) + "}"
    lines.append("%s %s, %s, %s, %s;" % (instr, vec("ro", 0, nd), vec("ri", 0, na), vec("ri", na, nb),
                                         vec("ri", na + nb, nc)))
    for k, w in enumerate(outw):
        lines.append("ld.param.u64 %%q1, [po%d]; cvta.to.global.u64 %%q1, %%q1; mad.lo.u64 %%q2, %%q0, %d, %%q1; "
                     "st.global.b%d [%%q2], %%ro%d;" % (k, w // 8, w, k))
    lines += ["END: ret;", "}"]
    return "\n".join(lines) + "\n"

# ---------------------------------------------------------------- wgmma cases ----

# (dtype, atype, btype, extra qualifiers, a from registers, scale-d, imm-scale-a, imm-scale-b, trans-a, trans-b)
WG_CASES = [
    ("f32", "f16", "f16", "", 0, 1, 1, 1, 0, 0),
    ("f16", "f16", "f16", "", 0, 1, 1, 1, 0, 0),
    ("f32", "bf16", "bf16", "", 0, 1, 1, 1, 0, 0),
    ("f32", "tf32", "tf32", "", 0, 1, 1, 1, 0, 0),
    ("f32", "e4m3", "e4m3", "", 0, 1, 1, 1, 0, 0),
    ("f32", "e5m2", "e5m2", "", 0, 1, 1, 1, 0, 0),
    ("f32", "e4m3", "e5m2", "", 0, 1, 1, 1, 0, 0),
    ("f16", "e4m3", "e4m3", "", 0, 1, 1, 1, 0, 0),
    ("s32", "s8", "s8", "", 0, 1, 1, 1, 0, 0),
    ("s32", "u8", "s8", ".satfinite", 0, 1, 1, 1, 0, 0),
    ("f32", "f16", "f16", "", 1, 1, -1, 1, 0, 1),
    ("f32", "bf16", "bf16", "", 0, 0, 1, -1, 1, 1),
    ("s32", "b1", "b1", ".and.popc", 0, 1, 1, 1, 0, 0),
    ("f32", "e5m2", "e4m3", "", 1, 1, -1, -1, 0, 0),
]
WG_N = 32


def wg_k(t):
    return {"f16": 16, "bf16": 16, "tf32": 8, "b1": 256}.get(t, 32)


def wg_instr(case):
    d, a, b, q, areg, sd, sa, sb, ta, tb = case
    k = wg_k(a)
    sat = ".satfinite" if q == ".satfinite" else ""
    tail = ".and.popc" if q == ".and.popc" else ""
    return "wgmma.mma_async.sync.aligned.m64n%dk%d%s.%s.%s.%s%s" % (WG_N, k, sat, d, a, b, tail)


def smem_layout(rows, esize, trans):
    """Byte offset of element (i, k) of an operand (rows x 32 bytes of K) in the no-swizzle layout
    the case's descriptors name: K-major LBO 128, SBO 256; MN-major SBO 128, LBO rows*16."""
    i = np.arange(rows)[:, None]
    k = np.arange(32 // esize)[None, :]
    if not trans:
        b = k * esize
        return (i % 8) * 16 + (i // 8) * 256 + b % 16 + (b // 16) * 128
    per = 16 // esize
    return (i % per) * esize + (i // per) * 128 + (k % 8) * 16 + (k // 8) * (rows // per * 128)


def desc_fields(rows, trans):
    """(LBO, SBO) of the layout above."""
    return (128, 256) if not trans else (rows // 8 * 128, 128)


def wg_inputs(ci, ctas):
    """Per CTA: A (64 x K elements), B (N x K), the accumulators (128 threads x regs), A's registers."""
    d, a, b, q, areg, sd, sa, sb, ta, tb = WG_CASES[ci]
    k = wg_k(a)
    seed = 50000 + 1000 * ci
    abits, bbits = BITS[a], BITS[b]
    spread = {"f16": 6, "bf16": 10, "tf32": 10, "e5m2": 7, "e4m3": 4}
    A = elements(a, seed + 1, ctas * 64 * k, spread.get(a, 0))
    B = elements(b, seed + 2, ctas * WG_N * k, spread.get(b, 0))
    A = A.reshape(ctas, 64, k)
    B = B.reshape(ctas, WG_N, k)
    nacc = WG_N // 4 if d == "f16" else WG_N // 2
    C = np.stack([reg_values(d, seed + 10 + j, ctas * 128, "c") for j in range(nacc)]).astype(np.uint32)
    C = C.reshape(nacc, ctas, 128).transpose(1, 0, 2).copy()
    return A, B, C


def operand_bytes(X, t, trans):
    """Shared-memory bytes of an operand (ctas x rows x K elements) in the case's layout."""
    ctas, rows, k = X.shape
    out = np.zeros((ctas, rows * 32), np.uint8)
    if t == "b1":
        # 256 bits of a row = 32 bytes of K, element 8j + q in bit q of byte j; the byte laid as u8
        by = np.zeros((ctas, rows, 32), np.uint64)
        for q in range(8):
            by |= (X[:, :, q::8] & np.uint64(1)) << np.uint64(q)
        off = smem_layout(rows, 1, trans)
        out[:, off.reshape(-1)] = by.reshape(ctas, -1).astype(np.uint8)
        return out
    es = BITS[t] // 8
    off = smem_layout(rows, es, trans)
    for byte in range(es):
        out[:, (off + byte).reshape(-1)] = ((X >> np.uint64(8 * byte)) & np.uint64(0xFF)).reshape(ctas, -1).astype(np.uint8)
    return out


def a_registers(A, t):
    """A's fragment registers (ctas x 4 x 128 threads): thread T (warp w, lane l, g = l/4, q = l%4),
    register r, element j: row 16w + g + 8(r&1), column 4 epr (r>>1) + q epr + j."""
    ctas = A.shape[0]
    bits = BITS[t]
    epr = 1 if bits >= 32 else 32 // bits
    R = np.zeros((ctas, 4, 128), np.uint64)
    for T in range(128):
        w, l = T // 32, T % 32
        g, q = l >> 2, l & 3
        for r in range(4):
            row = 16 * w + g + 8 * (r & 1)
            c0 = 4 * epr * (r >> 1) + q * epr
            for j in range(epr):
                R[:, r, T] |= (A[:, row, c0 + j] & np.uint64((1 << bits) - 1)) << np.uint64(j * bits)
    return R.astype(np.uint32)


def wg_module(ci):
    d, a, b, q, areg, sd, sa, sb, ta, tb = WG_CASES[ci]
    nacc = WG_N // 4 if d == "f16" else WG_N // 2
    abytes, bbytes = 64 * 32, WG_N * 32
    la, sa_ = desc_fields(64, ta)
    lb, sb_ = desc_fields(WG_N, tb)
    da = ((la >> 4) << 16) | ((sa_ >> 4) << 32)
    db = ((lb >> 4) << 16) | ((sb_ >> 4) << 32)
    L = [".version 8.7", ".target sm_90a", ".address_size 64",
         ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 po, .param .u64 pr)", "{",
         ".reg .pred %p<4>; .reg .b32 %t<16>; .reg .b64 %q<16>;",
         ".reg .b32 %%d<%d>; .reg .b32 %%a<4>;" % nacc,
         ".shared .align 1024 .b8 sA[%d];" % abytes, ".shared .align 1024 .b8 sB[%d];" % bbytes,
         "mov.u32 %t0, %tid.x; mov.u32 %t1, %ctaid.x;"]
    for nm, sym, nbytes in (("pa", "sA", abytes), ("pb", "sB", bbytes)):
        lab = "L" + sym
        L += ["ld.param.u64 %%q0, [%s]; cvta.to.global.u64 %%q0, %%q0;" % nm,
              "mul.wide.u32 %%q1, %%t1, %d; add.u64 %%q0, %%q0, %%q1;" % nbytes,
              "mov.u32 %%t2, %s; mov.u32 %%t3, %%t0;" % sym,
              "%s: setp.ge.u32 %%p0, %%t3, %d; @%%p0 bra %sE;" % (lab, nbytes // 4, lab),
              "mul.wide.u32 %q2, %t3, 4; add.u64 %q3, %q0, %q2; ld.global.b32 %t4, [%q3];",
              "shl.b32 %t5, %t3, 2; add.u32 %t5, %t5, %t2; st.shared.b32 [%t5], %t4;",
              "add.u32 %%t3, %%t3, 128; bra %s;" % lab, "%sE:" % lab]
    L += ["bar.sync 0;", "fence.proxy.async.shared::cta;"]
    for reg, sym, dv in (("%q4", "sA", da), ("%q5", "sB", db)):
        L += ["mov.u32 %%t6, %s; cvt.u64.u32 %s, %%t6; shr.u64 %s, %s, 4; and.b64 %s, %s, 16383;" %
              (sym, reg, reg, reg, reg, reg),
              "or.b64 %s, %s, %d;" % (reg, reg, dv)]
    # accumulators [cta][reg][128]
    L += ["cvt.u64.u32 %%q6, %%t0; mul.wide.u32 %%q7, %%t1, %d;" % (nacc * 128 * 4),
          "ld.param.u64 %q8, [pc]; cvta.to.global.u64 %q8, %q8; add.u64 %q8, %q8, %q7; mad.lo.u64 %q8, %q6, 4, %q8;",
          "ld.param.u64 %q9, [po]; cvta.to.global.u64 %q9, %q9; add.u64 %q9, %q9, %q7; mad.lo.u64 %q9, %q6, 4, %q9;"]
    for j in range(nacc):
        L.append("ld.global.b32 %%d%d, [%%q8+%d];" % (j, 512 * j))
    if areg:
        L += ["mul.wide.u32 %q10, %t1, 2048;",
              "ld.param.u64 %q11, [pr]; cvta.to.global.u64 %q11, %q11; add.u64 %q11, %q11, %q10; "
              "mad.lo.u64 %q11, %q6, 4, %q11;"]
        for j in range(4):
            L.append("ld.global.b32 %%a%d, [%%q11+%d];" % (j, 512 * j))
    L.append("setp.ne.b32 %%p1, %d, 0;" % sd)
    acc = "{" + ",".join("%%d%d" % j for j in range(nacc)) + "}"
    aop = "{%a0,%a1,%a2,%a3}" if areg else "%q4"
    imms = []
    if a in ("f16", "bf16"):
        imms = [sa, sb] + ([] if areg else [ta]) + [tb]
    elif d != "s32":
        imms = [sa, sb]
    L += ["wgmma.fence.sync.aligned;",
          "%s %s, %s, %%q5, %%p1%s;" % (wg_instr(WG_CASES[ci]), acc, aop, "".join(", %d" % v for v in imms)),
          "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;"]
    for j in range(nacc):
        L.append("st.global.b32 [%%q9+%d], %%d%d;" % (512 * j, j))
    L += ["ret;", "}"]
    return "\n".join(L) + "\n"


def wg_buffers(ci, ctas):
    d, a, b, q, areg, sd, sa, sb, ta, tb = WG_CASES[ci]
    A, B, C = wg_inputs(ci, ctas)
    pa = operand_bytes(A, a, ta)
    pb = operand_bytes(B, b, tb)
    pr = a_registers(A, a) if areg else np.zeros((ctas, 4, 128), np.uint32)
    return A, B, C, pa, pb, pr

# ---------------------------------------------------------------- runners ----


class Gpu:
    def __init__(self):
        from cuda.bindings import driver as d
        self.d = d
        self._ck(d.cuInit(0))
        dev = self._ck(d.cuDeviceGet(0))
        self.ctx = self._ck(d.cuDevicePrimaryCtxRetain(dev))
        self._ck(d.cuCtxSetCurrent(self.ctx))
        self.name = bytes(self._ck(d.cuDeviceGetName(256, dev))).split(b"\0")[0].decode()
        self.drv = self._ck(d.cuDriverGetVersion())

    def _ck(self, out):
        err, rest = (out[0], out[1:]) if isinstance(out, tuple) else (out, ())
        if int(err) != 0:
            raise RuntimeError(str(err))
        return rest[0] if len(rest) == 1 else rest

    def run(self, ptx, arrays, scalars, nout, grid, block):
        """arrays: list of numpy arrays (uploaded; the first nout are read back)."""
        import ctypes
        d = self.d
        log = bytearray(1 << 16)
        opts = [d.CUjit_option.CU_JIT_ERROR_LOG_BUFFER, d.CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
        err, mod = d.cuModuleLoadDataEx(ptx.encode() + b"\0", 2, opts, [log, 1 << 16])
        if int(err):
            raise RuntimeError("JIT: %s %s" % (err, bytes(log).split(b"\0")[0].decode()))
        fn = self._ck(d.cuModuleGetFunction(mod, b"k"))
        ptrs = []
        for a in arrays:
            p = int(self._ck(d.cuMemAlloc(max(1, a.nbytes))))
            self._ck(d.cuMemcpyHtoD(p, np.ascontiguousarray(a).tobytes(), a.nbytes))
            ptrs.append(p)
        bufs = [ctypes.c_uint64(p) for p in ptrs] + [ctypes.c_uint32(s) for s in scalars]
        pp = (ctypes.c_void_p * len(bufs))(*[ctypes.addressof(b) for b in bufs])
        self._ck(d.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, ctypes.addressof(pp), 0))
        self._ck(d.cuCtxSynchronize())
        outs = []
        for a, p in zip(arrays[:nout], ptrs):
            buf = bytearray(a.nbytes)
            self._ck(d.cuMemcpyDtoH(buf, p, a.nbytes))
            outs.append(np.frombuffer(bytes(buf), a.dtype).reshape(a.shape))
        for p in ptrs:
            self._ck(d.cuMemFree(p))
        self._ck(d.cuModuleUnload(mod))
        return outs


class Model:
    name = "ptxasync model"
    drv = 0

    def run(self, ptx_text, arrays, scalars, nout, grid, block, names=None, scalar_names=None):
        import ptxasync as pa
        from ptxasync import ptx
        k = ptx.Kernel(ptx_text)
        m = pa.Machine(ctas=1, smem_bytes=8192)
        arrays = [np.ascontiguousarray(a).copy() for a in arrays]
        params = {nm: m.register(a) for nm, a in zip(names, arrays)}
        params.update(dict(zip(scalar_names or [], scalars)))
        k.launch(m, grid=grid, block=block, params=params)
        return arrays[:nout]


def run_mma(eng, i, warps=None):
    instr, inw, outw, ins = mma_case(i, warps)
    n = len(ins[0])
    outs = [np.zeros(n, np.uint64 if w == 64 else np.uint32) for w in outw]
    text = mma_module(instr, inw, outw)
    names = ["po%d" % k for k in range(len(outs))] + ["pi%d" % j for j in range(len(ins))]
    if isinstance(eng, Model):
        return eng.run(text, outs + ins, [n], len(outs), (n + 255) // 256, 256, names, ["pn"])
    return eng.run(text, outs + ins, [n], len(outs), (n + 255) // 256, 256)


def wg_nacc(ci):
    return WG_N // 4 if WG_CASES[ci][0] == "f16" else WG_N // 2


def run_wgmma(eng, ci, ctas):
    A, B, C, pa_, pb_, pr = wg_buffers(ci, ctas)
    po = np.zeros_like(C)
    text = wg_module(ci)
    arrays = [po, pa_, pb_, C, pr]
    names = ["po", "pa", "pb", "pc", "pr"]
    if isinstance(eng, Model):
        # one CTA a launch: the model's race checker keeps one CTA's shared-memory history
        # into the next CTA of the grid that runs on the same shared memory
        for c in range(ctas):
            po[c] = eng.run(text, [po[c:c + 1], pa_[c:c + 1], pb_[c:c + 1], C[c:c + 1], pr[c:c + 1]], [], 1, 1, 128,
                            names)[0][0]
        return po
    # the GPU launch's parameter order is the module's: pa, pb, pc, po, pr
    out = eng.run(text, [pa_, pb_, C, po, pr], [], 4, ctas, 128)
    return out[3]


def sass_summary(outdir):
    """ptxas + cuobjdump of each form's module (on the GPU machine): the tensor-core SASS lines."""
    import re
    import subprocess
    import tempfile
    lines = []
    tmp = tempfile.mkdtemp()
    mods = [(instr, mma_module(instr, *mma_case(i, 1)[1:3])) for i, instr in enumerate(FORMS)]
    mods += [(wg_instr(c) + " " + str(c[3:]), wg_module(ci)) for ci, c in enumerate(WG_CASES)]
    for name, text in mods:
        src, cub = os.path.join(tmp, "m.ptx"), os.path.join(tmp, "m.cubin")
        open(src, "w").write(text)
        r = subprocess.run(["ptxas", "-arch=sm_90a", src, "-o", cub], capture_output=True, text=True)
        if r.returncode:
            lines.append("%s: ptxas failed %s" % (name, r.stderr[:200]))
            continue
        r = subprocess.run(["cuobjdump", "-sass", cub], capture_output=True, text=True)
        ops = [re.sub(r"\s+", " ", x.split("*/")[1].strip()) if "*/" in x else x.strip()
               for x in r.stdout.splitlines()
               if re.search(r"MMA|GMMA|F2FP|HADD2|FADD|HFMA2|DFMA|POPC|F2F", x)]
        lines.append("== " + name)
        lines += ["   " + o for o in ops[:40]]
    open(os.path.join(outdir, "sass.txt"), "w").write("\n".join(lines) + "\n")


def main(argv):
    mode, outdir = argv[1], argv[2]
    warps = int(argv[argv.index("--warps") + 1]) if "--warps" in argv else None
    ctas = int(argv[argv.index("--ctas") + 1]) if "--ctas" in argv else 64
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    os.makedirs(outdir, exist_ok=True)
    if "--sass" in argv:
        try:
            sass_summary(outdir)
        except Exception as e:                      # noqa: BLE001
            print("sass summary failed:", e, flush=True)
    eng = Gpu() if mode == "gpu" else Model()
    res = {}
    for i, instr in enumerate(FORMS):
        if only and only not in instr:
            continue
        try:
            outs = run_mma(eng, i, warps)
            for k, o in enumerate(outs):
                res["%d_out%d" % (i, k)] = o
            print("mma", i, instr, "ok", flush=True)
        except Exception as e:                      # noqa: BLE001 - a form the JIT refuses is reported
            print("mma", i, instr, "FAILED", str(e)[:300], flush=True)
    # two files: each under 16 MB
    half = len(FORMS) // 2
    np.savez(os.path.join(outdir, "mma_out_a.npz"), **{k: v for k, v in res.items() if int(k.split("_")[0]) < half})
    np.savez(os.path.join(outdir, "mma_out_b.npz"), **{k: v for k, v in res.items() if int(k.split("_")[0]) >= half})
    if "--no-wgmma" in argv:
        return
    wres = {}
    for ci in range(len(WG_CASES)):
        if only and only not in wg_instr(WG_CASES[ci]):
            continue
        try:
            wres[str(ci)] = run_wgmma(eng, ci, ctas)
            print("wgmma", ci, wg_instr(WG_CASES[ci]), WG_CASES[ci][3:], "ok", flush=True)
        except Exception as e:                      # noqa: BLE001
            print("wgmma", ci, wg_instr(WG_CASES[ci]), "FAILED", str(e)[:300], flush=True)
    np.savez(os.path.join(outdir, "wgmma_out.npz"), **wres)
    json.dump({"gpu": eng.name, "driver": eng.drv, "forms": FORMS, "warps": warps, "ctas": ctas,
               "wg_cases": WG_CASES, "wg_n": WG_N}, open(os.path.join(outdir, "meta.json"), "w"))


if __name__ == "__main__":
    main(sys.argv)
