#!/usr/bin/env python3
"""Record, on the GPU, what the ISA leaves open for carry chains and atomics:

- carry chains that mix the flag's producers and consumers (sub.cc then addc, add.cc then subc),
  signed mad.hi.cc / madc.hi, 64-bit chains;
- float atomic add (atom / red, .global and .shared): rounding, subnormals (flushed or kept), NaN
  bits, for f32, f64, f16, bf16, f16x2, bf16x2 and the .v2 / .v4 f32 forms.

    python tools/device/record_carry_atom.py OUT.npz

Each case is one thread per element on its own word, so the order of the threads does not
matter. Writes OUT.npz (`<case>_in<j>`, `<case>_out<k>`) and OUT.json (the cases' PTX)."""
import importlib.util
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "_driver", os.path.join(HERE, "..", "..", "src", "ptxasync", "cuda", "_driver.py"))
drv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(drv)

N = 8192
rng = np.random.default_rng(7)


def edge32(n):
    e = np.array([0, 1, 2, 0xFFFFFFFF, 0xFFFFFFFE, 0x80000000, 0x7FFFFFFF, 0x80000001], np.uint32)
    r = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    pick = rng.random(n) < 0.4
    r[pick] = e[rng.integers(0, len(e), pick.sum())]
    return r


def edge64(n):
    e = np.array([0, 1, 2, (1 << 64) - 1, (1 << 64) - 2, 1 << 63, (1 << 63) - 1, 0xFFFFFFFF, 1 << 32], np.uint64)
    r = rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
    pick = rng.random(n) < 0.4
    r[pick] = e[rng.integers(0, len(e), pick.sum())]
    return r


def f32s(n):
    # specials, subnormals, and pairs that round at every magnitude
    sp = np.array([0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
                   0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00001, 0xFFC00001, 0x7F7FFFFF, 0xFF7FFFFF,
                   0x3F800000, 0xBF800000, 0x33800000, 0x34000000], np.uint32)
    r = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    sub = rng.random(n) < 0.25
    r[sub] = (r[sub] & 0x807FFFFF)                       # subnormals
    small = rng.random(n) < 0.2
    r[small] = (r[small] & 0x80FFFFFF) | 0x00000000      # around the subnormal boundary
    pick = rng.random(n) < 0.2
    r[pick] = sp[rng.integers(0, len(sp), pick.sum())]
    return r


def f16s(n):
    sp = np.array([0, 0x8000, 1, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x7C00, 0xFC00, 0x7E00, 0x7D01, 0xFE01,
                   0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x7F80, 0xFF80, 0x7FC0, 0x0080, 0x007F, 0x807F], np.uint16)
    r = rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
    sub = rng.random(n) < 0.25
    r[sub] = r[sub] & 0x83FF
    sub = rng.random(n) < 0.15
    r[sub] = r[sub] & 0x807F
    pick = rng.random(n) < 0.2
    r[pick] = sp[rng.integers(0, len(sp), pick.sum())]
    return r


def f64s(n):
    sp = np.array([0, 1 << 63, 1, (1 << 63) | 1, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FF0000000000000,
                   0xFFF0000000000000, 0x7FF8000000000000, 0x7FF4000000000001, 0xFFF8000000000001,
                   0x7FEFFFFFFFFFFFFF, 0x3FF0000000000000], np.uint64)
    r = rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
    sub = rng.random(n) < 0.25
    r[sub] = r[sub] & np.uint64(0x800FFFFFFFFFFFFF)
    pick = rng.random(n) < 0.2
    r[pick] = sp[rng.integers(0, len(sp), pick.sum())]
    return r


HEAD = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 po0, .param .u64 po1, .param .u64 pi0, .param .u64 pi1, .param .u64 pi2,
                  .param .u64 pi3, .param .u32 pn)
{
    .reg .pred %%p<4>;
    .reg .b16 %%h<8>;
    .reg .b32 %%r<16>;
    .reg .b64 %%rd<24>;
    .reg .f32 %%f<8>;
    .reg .f64 %%fd<4>;
    .shared .align 16 .b8 sm[4096];
    mov.u32 %%r10, %%ctaid.x;
    mov.u32 %%r11, %%ntid.x;
    mov.u32 %%r12, %%tid.x;
    mad.lo.u32 %%r13, %%r10, %%r11, %%r12;
    ld.param.u32 %%r14, [pn];
    setp.ge.u32 %%p3, %%r13, %%r14;
    @%%p3 bra DONE;
    cvt.u64.u32 %%rd20, %%r13;
    mul.lo.u64 %%rd21, %%rd20, %(w)d;
    mul.lo.u64 %%rd22, %%rd20, %(wo)d;
    ld.param.u64 %%rd0, [pi0]; cvta.to.global.u64 %%rd0, %%rd0; add.u64 %%rd0, %%rd0, %%rd21;
    ld.param.u64 %%rd1, [pi1]; cvta.to.global.u64 %%rd1, %%rd1; add.u64 %%rd1, %%rd1, %%rd21;
    ld.param.u64 %%rd2, [pi2]; cvta.to.global.u64 %%rd2, %%rd2; add.u64 %%rd2, %%rd2, %%rd21;
    ld.param.u64 %%rd3, [pi3]; cvta.to.global.u64 %%rd3, %%rd3; add.u64 %%rd3, %%rd3, %%rd21;
    ld.param.u64 %%rd4, [po0]; cvta.to.global.u64 %%rd4, %%rd4; add.u64 %%rd4, %%rd4, %%rd22;
    ld.param.u64 %%rd5, [po1]; cvta.to.global.u64 %%rd5, %%rd5; add.u64 %%rd5, %%rd5, %%rd22;
    mov.u32 %%r15, sm;
    and.b32 %%r9, %%r12, 127;
    mul.lo.u32 %%r9, %%r9, %(wo)d;
    add.u32 %%r15, %%r15, %%r9;
%(body)s
DONE:
    ret;
}
"""

CASES = []


def carry(name, w, body):
    t = "u32" if w == 32 else "u64"
    r = "r" if w == 32 else "rd"
    regs = ["%r1", "%r2", "%r3", "%r4"] if w == 32 else ["%rd6", "%rd7", "%rd8", "%rd9"]
    o = ["%r5", "%r6"] if w == 32 else ["%rd10", "%rd11"]
    loads = "".join("    ld.global.%s %s, [%%rd%d];\n" % (t, regs[j], j) for j in range(4))
    b = body.format(a=regs[0], b=regs[1], c=regs[2], e=regs[3], d0=o[0], d1=o[1])
    stores = "    st.global.%s [%%rd4], %s;\n    st.global.%s [%%rd5], %s;\n" % (t, o[0], t, o[1])
    gen = edge32 if w == 32 else edge64
    CASES.append(dict(name=name, w=w, wo=w, body=loads + b + stores, ins=[gen(N) for _ in range(4)]))


carry("add.cc+addc.u32", 32, "add.cc.u32 {d0}, {a}, {b}; addc.u32 {d1}, {c}, {e};")
carry("sub.cc+subc.u32", 32, "sub.cc.u32 {d0}, {a}, {b}; subc.u32 {d1}, {c}, {e};")
carry("sub.cc+addc.u32", 32, "sub.cc.u32 {d0}, {a}, {b}; addc.u32 {d1}, {c}, {e};")
carry("add.cc+subc.u32", 32, "add.cc.u32 {d0}, {a}, {b}; subc.u32 {d1}, {c}, {e};")
carry("sub.cc+subc.cc+addc.u32", 32, "sub.cc.u32 {d0}, {a}, {b}; subc.cc.u32 {d1}, {c}, {e}; addc.u32 {d1}, {d1}, {a};")
carry("add.cc+addc.cc+subc.u32", 32, "add.cc.u32 {d0}, {a}, {b}; addc.cc.u32 {d1}, {c}, {e}; subc.u32 {d1}, {d1}, {a};")
carry("mad.hi.cc+madc.hi.s32", 32, "mad.hi.cc.s32 {d0}, {a}, {b}, {c}; madc.hi.s32 {d1}, {a}, {e}, {c};")
carry("mad.lo.cc+madc.hi.cc+addc.u32", 32, "mad.lo.cc.u32 {d0}, {a}, {b}, {c}; madc.hi.cc.u32 {d1}, {a}, {b}, {e}; addc.u32 {d1}, {d1}, {c};")
carry("madc.lo.cc.s32 after sub.cc", 32, "sub.cc.s32 {d0}, {a}, {b}; madc.lo.cc.s32 {d0}, {a}, {c}, {e}; addc.s32 {d1}, {b}, {c};")
carry("add.cc+addc.cc+addc.u64", 64, "add.cc.u64 {d0}, {a}, {b}; addc.cc.u64 {d1}, {c}, {e}; addc.u64 {d1}, {d1}, {a};")
carry("sub.cc+subc.s64", 64, "sub.cc.s64 {d0}, {a}, {b}; subc.s64 {d1}, {c}, {e};")
carry("mad.hi.cc+madc.hi.s64", 64, "mad.hi.cc.s64 {d0}, {a}, {b}, {c}; madc.hi.s64 {d1}, {a}, {e}, {c};")
carry("mad.lo.cc+madc.hi.cc.u64", 64, "mad.lo.cc.u64 {d0}, {a}, {b}, {c}; madc.hi.cc.u64 {d1}, {a}, {b}, {e}; addc.u64 {d1}, {d1}, {c};")

# float atomic add: memory starts as in0, the operand is in1; out0 = the old value, out1 = memory after
FT = {"f32": (32, "f", f32s), "f64": (64, "fd", f64s), "f16": (16, "h", f16s), "bf16": (16, "h", f16s),
      "f16x2": (32, "r", None), "bf16x2": (32, "r", None), "u32": (32, "r", edge32)}


def gen_of(t):
    w, _, g = FT[t]
    if g is None:
        return lambda n: (f16s(n).astype(np.uint32) << 16 | f16s(n).astype(np.uint32)).astype(np.uint32)
    return g


def fatom(t, space, kind, extra=""):
    w, _, _ = FT[t]
    bt = "b%d" % w
    reg = {16: ("%h1", "%h2", "%h3"), 32: ("%r1", "%r2", "%r3"), 64: ("%rd6", "%rd7", "%rd8")}[w]
    mem, opnd, old = reg
    nof = ".noftz" if t in ("f16", "bf16", "f16x2", "bf16x2") else ""
    body = "    ld.global.%s %s, [%%rd0];\n    ld.global.%s %s, [%%rd1];\n" % (bt, mem, bt, opnd)
    if space == "shared":
        body += "    st.shared.%s [%%r15], %s;\n" % (bt, mem)
        addr, sp = "[%r15]", ".shared"
    else:
        body += "    st.global.%s [%%rd4], %s;\n" % (bt, mem)
        addr, sp = "[%rd4]", ".global"
    # float operands in float registers where the type has them
    if t == "f32":
        body += "    mov.b32 %f1, %r2;\n"
        opnd_r, old_r = "%f1", "%f2"
    elif t == "f64":
        body += "    mov.b64 %fd1, %rd7;\n"
        opnd_r, old_r = "%fd1", "%fd2"
    else:
        opnd_r, old_r = opnd, old
    if kind == "atom":
        body += "    atom%s%s.add%s.%s %s, %s, %s;\n" % (extra, sp, nof, t, old_r, addr, opnd_r)
    else:
        body += "    red%s%s.add%s.%s %s, %s;\n" % (extra, sp, nof, t, addr, opnd_r)
        body += "    mov.b%d %s, 0;\n" % (w, old_r) if t in ("f32", "f64") else "    mov.b%d %s, 0;\n" % (w, old_r)
    if t == "f32":
        body += "    mov.b32 %r3, %f2;\n"
    elif t == "f64":
        body += "    mov.b64 %rd8, %fd2;\n"
    if space == "shared":
        body += "    ld.shared.%s %s, [%%r15];\n" % (bt, mem)
    else:
        body += "    ld.global.%s %s, [%%rd4];\n" % (bt, mem)
    body += "    st.global.%s [%%rd5], %s;\n" % (bt, mem)
    if kind == "atom":
        body += "    st.global.%s [%%rd4], %s;\n" % (bt, old)
    g = gen_of(t)
    CASES.append(dict(name="%s%s.%s.add.%s" % (kind, extra, space, t), w=w, wo=w, body=body,
                      ins=[g(N), g(N), g(N), g(N)], outs_note="out0: old (atom) / memory after (red, global); out1: memory after"))


for t in ("f32", "f64", "f16", "bf16", "f16x2", "bf16x2"):
    for space in ("global", "shared"):
        fatom(t, space, "atom")
    fatom(t, "global", "red")
fatom("f32", "global", "atom", ".acq_rel.gpu")
fatom("f32", "shared", "atom", ".relaxed.cta")


def vatom(n):
    regs_o = ", ".join("%%f%d" % j for j in range(n))
    body = "    ld.global.v%d.f32 {%s}, [%%rd0];\n    st.global.v%d.f32 [%%rd4], {%s};\n" % (n, regs_o, n, regs_o)
    body += "    ld.global.v%d.f32 {%s}, [%%rd1];\n" % (n, regs_o)
    body += "    atom.global.v%d.f32.add {%s}, [%%rd4], {%s};\n" % (n, regs_o, regs_o)
    body += "    ld.global.v%d.f32 {%s}, [%%rd4];\n    st.global.v%d.f32 [%%rd5], {%s};\n" % (n, regs_o, n, regs_o)
    CASES.append(dict(name="atom.global.v%d.f32.add" % n, w=32 * n, wo=32 * n, body=body,
                      ins=[f32s(N * n), f32s(N * n), f32s(N * n), f32s(N * n)]))


vatom(2)
vatom(4)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "carry_atom.npz"
    dev = drv.Device()
    info = dev.info()
    arrays = {}
    meta = []
    for i, c in enumerate(CASES):
        wb = c["w"] // 8
        ptx = HEAD % dict(w=wb, wo=wb, body=c["body"])
        ins = [np.ascontiguousarray(a) for a in c["ins"]]
        nbytes = N * wb
        bufs_in = []
        for a in ins:
            p = dev.alloc(a.nbytes)
            dev.upload(p, a.tobytes())
            bufs_in.append(p)
        bufs_out = [dev.alloc(nbytes), dev.alloc(nbytes)]
        for p in bufs_out:
            dev.upload(p, bytes(nbytes))
        try:
            mod, fn = dev.load_ptx(ptx, "k")
        except drv.CudaError as e:
            print("FAIL", c["name"], str(e)[:300])
            meta.append(dict(name=c["name"], ptx=ptx, error=str(e)[:2000]))
            continue
        import struct
        params = [struct.pack("<Q", p) for p in bufs_out + bufs_in] + [struct.pack("<I", N)]
        # the shared cases use 128 words a CTA: one CTA of 128 threads at a time
        threads = 128
        d = dev.d
        import ctypes
        bufs = [ctypes.create_string_buffer(p, len(p)) for p in params]
        ptrs = (ctypes.c_void_p * len(bufs))(*[ctypes.addressof(b) for b in bufs])
        (err,) = d.cuLaunchKernel(fn, N // threads, 1, 1, threads, 1, 1, 0, 0, ctypes.addressof(ptrs), 0)
        (err2,) = d.cuCtxSynchronize()
        dt = {16: np.uint16, 32: np.uint32, 64: np.uint64}.get(c["w"], np.uint32)
        for j, a in enumerate(ins):
            arrays["%d_in%d" % (i, j)] = a
        for k, p in enumerate(bufs_out):
            arrays["%d_out%d" % (i, k)] = np.frombuffer(dev.download(p, nbytes), dtype=ins[0].dtype).copy()
        meta.append(dict(name=c["name"], ptx=ptx, w=c["w"], n=N, launch=str(err), sync=str(err2)))
        print(c["name"], err, err2)
        dev.unload(mod)
        for p in bufs_in + bufs_out:
            dev.free(p)
    np.savez_compressed(out, **arrays)
    json.dump(dict(cases=meta, **info), open(os.path.splitext(out)[0] + ".json", "w"), indent=1)


if __name__ == "__main__":
    main()
