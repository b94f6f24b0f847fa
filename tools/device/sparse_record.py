#!/usr/bin/env python3
"""Sparse tensor-core instructions (mma.sp, mma.sp::ordered_metadata, wgmma.mma_async.sp) on a GPU
and on the model, with the same PTX modules and inputs.

    python tools/device/sparse_record.py gpu OUTDIR     (on a GPU machine: NumPy + cuda.bindings)
    python tools/device/sparse_record.py model OUTDIR   (through ptx.Kernel)
    python tools/device/sparse_record.py vendor OUTDIR/sparse_out.npz tests/data/isa/sparse_forms.npz

OUTDIR gets `sparse_out.npz` (key `mma<i>_<variant>_out<k>` per mma.sp form, `wg<i>` per
wgmma.mma_async.sp case) and `meta.json`. The inputs are drawn from mma_record's counter hash, so
both machines make the same bits; they are not stored.

Two input variants per mma.sp form (PTX ISA 9.7.14.6):
- `rand`: random A (the packed non-zero elements), B, C, and in EVERY lane random metadata nibbles
  from the values the ISA allows (2:4 and the 4-bit pairs: two different 2-bit indices, both orders
  for mma.sp, ascending for ::ordered_metadata; tf32 1:2: 0b0100 or 0b1110), so the lanes the
  selector does not name carry metadata that must not be used;
- `probe`: packed elements 1 and 2 in every chunk, C = 0, and B's column n holding 4^p at
  position p of chunk n (zero elsewhere): D[r][n] = 4^p0 + 2 * 4^p1 spells out the two positions
  the hardware took for chunk n of row r, which names the metadata bits it read.
The wgmma.mma_async.sp cases (9.7.15.6) do the same with one warpgroup a CTA, A packed (64 x K/2)
and B (N x K) in shared memory without swizzle, or A from registers.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mma_record as R  # noqa: E402

WARPS = 32
PROBE_WARPS = 16
WG_CTAS = 8

# (instr, sparsity selector)
FORMS = [
    ("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 0),
    ("mma.sp.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 3),
    ("mma.sp.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 2),
    ("mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32", 1),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", 0),
    ("mma.sp.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16", 1),
    ("mma.sp.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 1),
    ("mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32", 1),
    ("mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 0),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.satfinite.s32.u8.s8.s32", 0),
    ("mma.sp.sync.aligned.m16n8k64.row.col.s32.s4.u4.s32", 1),
    ("mma.sp.sync.aligned.m16n8k128.row.col.s32.u4.s4.s32", 0),
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32", 0),
]

ONE = {"f16": 0x3C00, "bf16": 0x3F80, "tf32": 0x3F800000, "e4m3": 0x38, "e5m2": 0x3C, "s8": 1, "u8": 1, "s4": 1,
       "u4": 1}


def value(t, v):
    """The bits of small integer v (a power of two times 1 or 2 for floats) in type t."""
    if t in ("s8", "u8", "s4", "u4", "s32"):
        return v
    eb, mb, bias = R.FMT[t]
    e = v.bit_length() - 1
    assert v == 1 << e
    return (e + bias) << mb


def shape(instr):
    return R.mma_shape(instr)


def types(instr):
    return R.mma_types(instr)


def chunk(t):
    """(elements of a chunk of A's row, non-zero ones in it) -- PTX ISA 9.7.14.6.1."""
    return (2, 1) if t == "tf32" else (8, 4) if t in ("s4", "u4") else (4, 2)


def regs(instr):
    m, n, k = shape(instr)
    d, a, b, c = types(instr)
    nd, na, nb, nc = R.mma_regs(instr)
    return nd, na // 2, nb, nc


def meta_values(a, ordered):
    if a == "tf32":
        return [0x4, 0xE]
    return [i0 | i1 << 2 for i0 in range(4) for i1 in range(4) if (i0 < i1 if ordered else i0 != i1)]


def metadata(a, ordered, seed, nlanes):
    vals = np.array(meta_values(a, ordered), np.uint64)
    h = R.hash64(seed, nlanes * 8)
    nib = vals[(h % np.uint64(len(vals))).astype(np.int64)].reshape(nlanes, 8)
    out = np.zeros(nlanes, np.uint64)
    for j in range(8):
        out |= nib[:, j] << np.uint64(4 * j)
    return out.astype(np.uint32)


def packed_probe_a(t, kc):
    """A packed row of kc elements for the probe: 1, 2 per pair (2:4), 1 (1:2), 1,1,2,2 (4:8)."""
    per, nz = chunk(t)
    if t == "tf32":
        return [value(t, 1)] * kc
    if nz == 4:
        return [value(t, 1 + (j % 4) // 2) for j in range(kc)]
    return [value(t, 1 + j % 2) for j in range(kc)]


def probe_b(t, k, c0):
    """B (8 columns x k): column n holds 4^p at position p of chunk c0 + n (of 2-wide sub-chunks
    for the 4:8 types), zero elsewhere."""
    per, nz = chunk(t)
    B = np.zeros((8, k), np.uint64)
    for n in range(8):
        for p in range(per):
            kk = (c0 + n) * per + p
            if kk < k and (nz != 4 or p % 2 == 0):
                B[n, kk] = value(t, 4 ** (p if nz != 4 else p // 2))
    return B


def frag_a(A, t, m16=True):
    """A's registers (nregs x 32 lanes) from packed A [16][kc]: the dense m16n8 A fragment layout
    over the packed columns (PTX ISA 9.7.14.6.2: row g (+8), columns 4 epr (r >> 1) + t epr + j)."""
    bits = R.BITS[t]
    epr = 1 if bits >= 32 else 32 // bits
    kc = A.shape[1]
    nr = 16 * kc * bits // 32 // 32
    out = np.zeros((nr, 32), np.uint64)
    for l in range(32):
        g, q = l >> 2, l & 3
        for r in range(nr):
            row, c0 = g + 8 * (r & 1), 4 * epr * (r >> 1) + q * epr
            for j in range(epr):
                out[r, l] |= (int(A[row, c0 + j]) & ((1 << bits) - 1)) << (j * bits)
    return out


def frag_b(B, t):
    """B's registers from B [8 columns][k]: register r, element j: k = 4 epr r + t epr + j, column g."""
    bits = R.BITS[t]
    epr = 1 if bits >= 32 else 32 // bits
    k = B.shape[1]
    nr = 8 * k * bits // 32 // 32
    out = np.zeros((nr, 32), np.uint64)
    for l in range(32):
        g, q = l >> 2, l & 3
        for r in range(nr):
            for j in range(epr):
                out[r, l] |= (int(B[g, 4 * epr * r + q * epr + j]) & ((1 << bits) - 1)) << (j * bits)
    return out


def mma_case(i, variant, c0=0):
    """(instr, sel, input registers [list of uint32 arrays over lanes], output count)."""
    instr, sel = FORMS[i]
    d, a, b, c = types(instr)
    nd, na, nb, nc = regs(instr)
    m, n, k = shape(instr)
    warps = WARPS if variant == "rand" else PROBE_WARPS
    nl = 32 * warps
    ins = []
    if variant == "rand":
        for role, t, cnt in (("ab", a, na), ("ab", b, nb), ("c", c, nc)):
            for j in range(cnt):
                ins.append(R.reg_values(t, 7000 + 100 * i + 10 * len(ins), nl, role).astype(np.uint32))
    else:
        A = np.array([packed_probe_a(a, k // 2)] * 16, np.uint64)
        B = probe_b(b, k, c0)
        fa, fb = frag_a(A, a), frag_b(B, b)
        ins += [np.tile(fa[r], warps).astype(np.uint32) for r in range(na)]
        ins += [np.tile(fb[r], warps).astype(np.uint32) for r in range(nb)]
        ins += [np.zeros(nl, np.uint32) for _ in range(nc)]
    ins.append(metadata(a, "ordered_metadata" in instr, 9000 + 100 * i + (0 if variant == "rand" else 50 + c0), nl))
    return instr, sel, ins, nd


def mma_module(instr, sel, nin, nd):
    nd_, na, nb, nc = regs(instr)
    params = ["po%d" % k for k in range(nd)] + ["pi%d" % j for j in range(nin)]
    L = [".version 8.7", ".target sm_90a", ".address_size 64",
         ".visible .entry k(%s, .param .u32 pn)" % ", ".join(".param .u64 " + p for p in params), "{",
         ".reg .pred %p<4>; .reg .b32 %t<4>; .reg .b64 %q<4>;",
         ".reg .b32 %%ri<%d>; .reg .b32 %%ro<%d>;" % (nin, nd),
         "mov.u32 %t0, %ctaid.x; mov.u32 %t1, %ntid.x; mov.u32 %t2, %tid.x; mad.lo.u32 %t0, %t0, %t1, %t2;",
         "ld.param.u32 %t1, [pn]; setp.ge.u32 %p0, %t0, %t1; @%p0 bra END;", "cvt.u64.u32 %q0, %t0;"]
    for j in range(nin):
        L.append("ld.param.u64 %%q1, [pi%d]; cvta.to.global.u64 %%q1, %%q1; mad.lo.u64 %%q2, %%q0, 4, %%q1; "
                 "ld.global.b32 %%ri%d, [%%q2];" % (j, j))
    vec = lambda p, s, n: "{" + ",".join("%%%s%d" % (p, s + x) for x in range(n)) + "}"
    L.append("%s %s, %s, %s, %s, %%ri%d, %d;" % (instr, vec("ro", 0, nd), vec("ri", 0, na), vec("ri", na, nb),
                                                 vec("ri", na + nb, nc), nin - 1, sel))
    for k in range(nd):
        L.append("ld.param.u64 %%q1, [po%d]; cvta.to.global.u64 %%q1, %%q1; mad.lo.u64 %%q2, %%q0, 4, %%q1; "
                 "st.global.b32 [%%q2], %%ro%d;" % (k, k))
    L += ["END: ret;", "}"]
    return "\n".join(L) + "\n"


def variants(i):
    """The input variants of form i: rand, and probes (two for the k64 8-bit / 16-chunk forms)."""
    instr = FORMS[i][0]
    a = types(instr)[1]
    m, n, k = shape(instr)
    per, nz = chunk(a)
    if nz == 4:             # 4:8 pairs: B's weights would not fit a 4-bit element
        return ["rand"]
    return ["rand"] + ["probe%d" % c0 for c0 in range(0, k // per, 8)]


def run_mma(eng, i, variant):
    c0 = int(variant[5:]) if variant.startswith("probe") else 0
    instr, sel, ins, nd = mma_case(i, "rand" if variant == "rand" else "probe", c0)
    nl = len(ins[0])
    outs = [np.zeros(nl, np.uint32) for _ in range(nd)]
    text = mma_module(instr, sel, len(ins), nd)
    names = ["po%d" % k for k in range(nd)] + ["pi%d" % j for j in range(len(ins))]
    if isinstance(eng, R.Model):
        return eng.run(text, outs + ins, [nl], nd, (nl + 255) // 256, 256, names, ["pn"])
    return eng.run(text, outs + ins, [nl], nd, (nl + 255) // 256, 256)

# ---------------------------------------------------------------- wgmma.mma_async.sp ----


# (dtype, atype, btype, A from registers, sel, imm-scale-a, imm-scale-b, variant)
WG_CASES = [
    ("f32", "f16", "f16", 0, 0, 1, 1, "rand"),
    ("f32", "bf16", "bf16", 0, 1, 1, -1, "rand"),
    ("f16", "f16", "f16", 1, 1, -1, 1, "rand"),
    ("f32", "tf32", "tf32", 0, 1, 1, 1, "rand"),
    ("f32", "e4m3", "e5m2", 0, 0, 1, 1, "rand"),
    ("s32", "s8", "u8", 0, 0, 1, 1, "rand"),
    ("f32", "f16", "f16", 0, 1, 1, 1, "probe"),
    ("f32", "tf32", "tf32", 1, 0, 1, 1, "probe"),
]
WG_N = 32


def wg_k(t):
    return {"f16": 32, "bf16": 32, "tf32": 16}.get(t, 64)


def wg_instr(case):
    d, a, b = case[:3]
    return "wgmma.mma_async.sp.sync.aligned.m64n%dk%d.%s.%s.%s" % (WG_N, wg_k(a), d, a, b)


def b_layout(rows, esize):
    """Byte offset of B (rows x 64 bytes of K), K-major without swizzle: LBO 128, SBO 512."""
    i = np.arange(rows)[:, None]
    b = np.arange(64 // esize)[None, :] * esize
    return (i % 8) * 16 + (i // 8) * 512 + b % 16 + (b // 16) * 128


def wg_inputs(ci):
    d, a, b, areg, sel, sa, sb, var = WG_CASES[ci]
    k = wg_k(a)
    seed = 80000 + 1000 * ci
    spread = {"f16": 6, "bf16": 10, "tf32": 10, "e5m2": 7, "e4m3": 4}
    nacc = WG_N // 4 if d == "f16" else WG_N // 2
    if var == "rand":
        A = R.elements(a, seed + 1, WG_CTAS * 64 * k // 2, spread.get(a, 0)).reshape(WG_CTAS, 64, k // 2)
        B = R.elements(b, seed + 2, WG_CTAS * WG_N * k, spread.get(b, 0)).reshape(WG_CTAS, WG_N, k)
        C = np.stack([R.reg_values(d, seed + 10 + j, WG_CTAS * 128, "c") for j in range(nacc)]).astype(np.uint32)
        C = C.reshape(nacc, WG_CTAS, 128).transpose(1, 0, 2).copy()
    else:
        A = np.array([packed_probe_a(a, k // 2)] * 64, np.uint64)[None].repeat(WG_CTAS, 0)
        per = chunk(a)[0]
        B = np.zeros((WG_CTAS, WG_N, k), np.uint64)
        for n in range(WG_N):
            for p in range(per):
                if (n % (k // per)) * per + p < k:
                    B[:, n, (n % (k // per)) * per + p] = value(b, 4 ** p)
        C = np.zeros((WG_CTAS, nacc, 128), np.uint32)
    E = metadata(a, True, seed + 3, WG_CTAS * 128).reshape(WG_CTAS, 128)
    return A, B, C, E


def wg_buffers(ci):
    d, a, b, areg, sel, sa, sb, var = WG_CASES[ci]
    A, B, C, E = wg_inputs(ci)
    es = R.BITS[a] // 8
    pa = np.zeros((WG_CTAS, 64 * 32), np.uint8)
    off = R.smem_layout(64, es, 0)
    for byte in range(es):
        pa[:, (off + byte).reshape(-1)] = ((A >> np.uint64(8 * byte)) & np.uint64(0xFF)).reshape(WG_CTAS, -1).astype(np.uint8)
    eb = R.BITS[b] // 8
    pb = np.zeros((WG_CTAS, WG_N * 64), np.uint8)
    offb = b_layout(WG_N, eb)
    for byte in range(eb):
        pb[:, (offb + byte).reshape(-1)] = ((B >> np.uint64(8 * byte)) & np.uint64(0xFF)).reshape(WG_CTAS, -1).astype(np.uint8)
    pr = R.a_registers(A, a) if areg else np.zeros((WG_CTAS, 4, 128), np.uint32)
    return A, B, C, E, pa, pb, pr


def wg_module(ci):
    d, a, b, areg, sel, sa, sb, var = WG_CASES[ci]
    nacc = WG_N // 4 if d == "f16" else WG_N // 2
    abytes, bbytes = 64 * 32, WG_N * 64
    da = ((128 >> 4) << 16) | ((256 >> 4) << 32)
    db = ((128 >> 4) << 16) | ((512 >> 4) << 32)
    L = [".version 8.7", ".target sm_90a", ".address_size 64",
         ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 po, .param .u64 pr, "
         ".param .u64 pe)", "{",
         ".reg .pred %p<4>; .reg .b32 %t<16>; .reg .b64 %q<16>;",
         ".reg .b32 %%d<%d>; .reg .b32 %%a<4>; .reg .b32 %%e;" % nacc,
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
    L += ["fence.proxy.async.shared::cta;", "bar.sync 0;"]
    for reg, sym, dv in (("%q4", "sA", da), ("%q5", "sB", db)):
        L += ["mov.u32 %%t6, %s; cvt.u64.u32 %s, %%t6; shr.u64 %s, %s, 4; and.b64 %s, %s, 16383;" %
              (sym, reg, reg, reg, reg, reg), "or.b64 %s, %s, %d;" % (reg, reg, dv)]
    L += ["cvt.u64.u32 %%q6, %%t0; mul.wide.u32 %%q7, %%t1, %d;" % (nacc * 128 * 4),
          "ld.param.u64 %q8, [pc]; cvta.to.global.u64 %q8, %q8; add.u64 %q8, %q8, %q7; mad.lo.u64 %q8, %q6, 4, %q8;",
          "ld.param.u64 %q9, [po]; cvta.to.global.u64 %q9, %q9; add.u64 %q9, %q9, %q7; mad.lo.u64 %q9, %q6, 4, %q9;",
          "mul.wide.u32 %q12, %t1, 512; ld.param.u64 %q13, [pe]; cvta.to.global.u64 %q13, %q13; "
          "add.u64 %q13, %q13, %q12; mad.lo.u64 %q13, %q6, 4, %q13; ld.global.b32 %e, [%q13];"]
    for j in range(nacc):
        L.append("ld.global.b32 %%d%d, [%%q8+%d];" % (j, 512 * j))
    if areg:
        L += ["mul.wide.u32 %q10, %t1, 2048;",
              "ld.param.u64 %q11, [pr]; cvta.to.global.u64 %q11, %q11; add.u64 %q11, %q11, %q10; "
              "mad.lo.u64 %q11, %q6, 4, %q11;"]
        for j in range(4):
            L.append("ld.global.b32 %%a%d, [%%q11+%d];" % (j, 512 * j))
    L.append("setp.ne.b32 %p1, 1, 0;")
    acc = "{" + ",".join("%%d%d" % j for j in range(nacc)) + "}"
    aop = "{%a0,%a1,%a2,%a3}" if areg else "%q4"
    imms = []
    if a in ("f16", "bf16"):
        imms = [sa, sb] + ([] if areg else [0]) + [0]
    elif d != "s32":
        imms = [sa, sb]
    L += ["wgmma.fence.sync.aligned;",
          "%s %s, %s, %%q5, %%e, %d, %%p1%s;" % (wg_instr(WG_CASES[ci]), acc, aop, sel,
                                                "".join(", %d" % v for v in imms)),
          "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;"]
    for j in range(nacc):
        L.append("st.global.b32 [%%q9+%d], %%d%d;" % (512 * j, j))
    L += ["ret;", "}"]
    return "\n".join(L) + "\n"


def run_wgmma(eng, ci):
    A, B, C, E, pa_, pb_, pr = wg_buffers(ci)
    po = np.zeros_like(C)
    text = wg_module(ci)
    names = ["po", "pa", "pb", "pc", "pr", "pe"]
    E = E.astype(np.uint32)
    if isinstance(eng, R.Model):
        for c in range(WG_CTAS):
            po[c] = eng.run(text, [po[c:c + 1], pa_[c:c + 1], pb_[c:c + 1], C[c:c + 1], pr[c:c + 1], E[c:c + 1]],
                            [], 1, 1, 128, names)[0][0]
        return po
    return eng.run(text, [pa_, pb_, C, po, pr, E], [], 4, WG_CTAS, 128)[3]


def run_all(eng):
    res = {}
    for i, (instr, sel) in enumerate(FORMS):
        for v in variants(i):
            try:
                for k, o in enumerate(run_mma(eng, i, v)):
                    res["mma%d_%s_out%d" % (i, v, k)] = o
                print("mma.sp", i, instr, sel, v, "ok", flush=True)
            except Exception as e:                      # noqa: BLE001 - a form the JIT refuses is reported
                print("mma.sp", i, instr, v, "FAILED", str(e)[:300], flush=True)
    for ci, case in enumerate(WG_CASES):
        try:
            res["wg%d" % ci] = run_wgmma(eng, ci)
            print("wgmma.sp", ci, wg_instr(case), case[3:], "ok", flush=True)
        except Exception as e:                          # noqa: BLE001
            print("wgmma.sp", ci, wg_instr(case), "FAILED", str(e)[:300], flush=True)
    return res


def digest(a):
    import hashlib
    return np.frombuffer(hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=8).digest(), np.uint8)


def vendor(src, dst, keep=2):
    """The recording for tests/data: every mma.sp output; of each wgmma case the first `keep` CTAs
    and a digest of every CTA's outputs."""
    Z = np.load(src)
    meta = json.loads(str(Z["meta"]))
    meta["kept_ctas"] = keep
    out = {"meta": json.dumps(meta)}
    for key in Z.files:
        if key.startswith("mma"):
            out[key] = Z[key]
        elif key.startswith("wg"):
            out[key] = Z[key][:keep]
            out[key + "_digest"] = np.stack([digest(c) for c in Z[key]])
    np.savez_compressed(dst, **out)


def main(argv):
    if argv[1] == "vendor":
        return vendor(argv[2], argv[3])
    mode, outdir = argv[1], argv[2]
    os.makedirs(outdir, exist_ok=True)
    eng = R.Gpu() if mode == "gpu" else R.Model()
    res = run_all(eng)
    meta = {"gpu": eng.name, "driver": eng.drv, "forms": FORMS, "wg_cases": WG_CASES, "wg_n": WG_N,
            "warps": WARPS, "probe_warps": PROBE_WARPS, "wg_ctas": WG_CTAS}
    np.savez_compressed(os.path.join(outdir, "sparse_out.npz"), meta=json.dumps(meta), **res)
    if mode == "gpu" and "--sass" in argv:
        import subprocess
        import tempfile
        tmp = tempfile.mkdtemp()
        lines = []
        mods = [(FORMS[i][0], mma_module(FORMS[i][0], FORMS[i][1], len(mma_case(i, "rand")[2]), regs(FORMS[i][0])[0]))
                for i in range(len(FORMS))] + [(wg_instr(c), wg_module(ci)) for ci, c in enumerate(WG_CASES)]
        for name, text in mods:
            src, cub = os.path.join(tmp, "m.ptx"), os.path.join(tmp, "m.cubin")
            open(src, "w").write(text)
            r = subprocess.run(["ptxas", "-arch=sm_90a", src, "-o", cub], capture_output=True, text=True)
            if r.returncode:
                lines.append("%s: ptxas failed %s" % (name, r.stderr[:300]))
                continue
            r = subprocess.run(["cuobjdump", "-sass", cub], capture_output=True, text=True)
            lines.append("== " + name)
            lines += ["   " + x.strip() for x in r.stdout.splitlines() if "MMA" in x or "GMMA" in x or "F2FP" in x
                      or "HADD2" in x or "FADD" in x][:24]
        open(os.path.join(outdir, "sass.txt"), "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
