#!/usr/bin/env python3
"""Record on the GPU the createpolicy forms whose value comes from a register, so that one launch
sweeps many inputs (record_space_policy.py records the immediate forms, one kernel each):

- createpolicy.fractional with the fraction in an .f32 (and a .b32) register: every f32 around each
  sixteenth, random fractions, and values outside (0, 1] (zero, negative, > 1, NaN, infinities);
- createpolicy.range with the address and both sizes in registers: offsets, sizes around each block
  size (4 KiB << k), a primary size of 0, more than 127 blocks, total sizes up to 2^32 - 1;
- createpolicy.cvt.L2 of 64-bit access properties: the four libcu++ interleave constants, the values
  the fractional and range forms return, single bits and random words.

    python tools/device/record_policy_forms.py OUT.npz"""
import importlib.util
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "_driver", os.path.join(HERE, "..", "..", "src", "ptxasync", "cuda", "_driver.py"))
drv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(drv)

THREADS = 256
HEAD = """.version 8.3
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout, .param .u32 n)
{
    .reg .pred %p<4>;
    .reg .b32 %r<20>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<40>;
    ld.param.u64 %rd10, [pin];
    ld.param.u64 %rd11, [pout];
    ld.param.u32 %r10, [n];
    mov.u32 %r1, %tid.x;
LOOP:
    setp.ge.u32 %p1, %r1, %r10;
    @%p1 bra DONE;
"""
TAIL = f"""    add.u32 %r1, %r1, {THREADS};
    bra LOOP;
DONE:
    ret;
}}
"""

# the qualifier pairs each input is recorded under
PAIRS = [".L2::evict_last", ".L2::evict_normal.L2::evict_first", ".L2::evict_first.L2::evict_unchanged",
         ".L2::evict_unchanged"]


def fraction_kernel():
    body = ["    mul.wide.u32 %rd1, %r1, 4;\n    add.u64 %rd2, %rd10, %rd1;\n    ld.global.f32 %f1, [%rd2];\n"
            "    ld.global.b32 %r2, [%rd2];\n"
            f"    mul.wide.u32 %rd3, %r1, {8 * (len(PAIRS) + 1)};\n    add.u64 %rd4, %rd11, %rd3;"]
    for k, q in enumerate(PAIRS):
        body.append(f"    createpolicy.fractional{q}.b64 %rd20, %f1;\n    st.global.u64 [%rd4+{8 * k}], %rd20;")
    body.append(f"    createpolicy.fractional.L2::evict_last.b64 %rd20, %r2;\n"
                f"    st.global.u64 [%rd4+{8 * len(PAIRS)}], %rd20;")
    return HEAD + "\n".join(body) + "\n" + TAIL


def range_kernel():
    # input rows: u64 address, u32 primary-size, u32 total-size
    body = ["    mul.wide.u32 %rd1, %r1, 16;\n    add.u64 %rd2, %rd10, %rd1;\n    ld.global.u64 %rd5, [%rd2];\n"
            "    ld.global.u32 %r2, [%rd2+8];\n    ld.global.u32 %r3, [%rd2+12];\n"
            f"    mul.wide.u32 %rd3, %r1, {8 * (len(PAIRS) + 1)};\n    add.u64 %rd4, %rd11, %rd3;"]
    for k, q in enumerate(PAIRS):
        body.append(f"    createpolicy.range{q}.b64 %rd20, [%rd5], %r2, %r3;\n    st.global.u64 [%rd4+{8 * k}], %rd20;")
    body.append(f"    createpolicy.range.global.L2::evict_last.b64 %rd20, [%rd5], %r2, %r3;\n"
                f"    st.global.u64 [%rd4+{8 * len(PAIRS)}], %rd20;")
    return HEAD + "\n".join(body) + "\n" + TAIL


def cvt_kernel():
    body = ["    mul.wide.u32 %rd1, %r1, 8;\n    add.u64 %rd2, %rd10, %rd1;\n    ld.global.u64 %rd5, [%rd2];\n"
            "    add.u64 %rd4, %rd11, %rd1;\n    createpolicy.cvt.L2.b64 %rd20, %rd5;\n    st.global.u64 [%rd4], %rd20;"]
    return HEAD + "\n".join(body) + "\n" + TAIL


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def fraction_inputs():
    v = set()
    for j in range(0, 17):
        b = f32(j / 16)
        v |= {(b + d) & 0xFFFFFFFF for d in range(-40, 41)}
        for k in range(1, 24):
            v |= {f32(j / 16 + 2.0 ** -k), f32(j / 16 - 2.0 ** -k)}
    rng = np.random.default_rng(11)
    v |= {f32(x) for x in rng.random(2000)}
    v |= {int(x) for x in rng.integers(0, 2 ** 32, 500)}
    v |= {f32(x) for x in (0.0, -0.0, -0.5, -1.0, 1.5, 2.0, 16.0, 1e30, 1e-30, 1e-40, 2.0 ** -24, 2.0 ** -25)}
    v |= {0x7F800000, 0xFF800000, 0x7FC00000, 0x7FFFFFFF, 0x00000001, 0x007FFFFF, 0x80000001}
    return np.array(sorted(b for b in v), np.uint32)


def range_inputs(base):
    rows = set()
    offs = [0, 1, 64, 4095, 4096, 4097, 65536, (1 << 20) - 1, 1 << 20, 3 << 20, (1 << 22) - 64]
    sizes = [0, 1, 4095, 4096, 4097, 8192, 12345, 1 << 19, (1 << 19) + 1]
    for k in range(12, 33):
        sizes += [(1 << k) - 1, 1 << k, (1 << k) + 1, 127 << (k - 12), 128 << (k - 12), (127 << (k - 12)) + 1]
    sizes = sorted({s for s in sizes if s < 1 << 32})
    for o in offs:
        for t in sizes:
            for p in {0, 1, t // 3, t // 2, t - 1, t, 4096, 4096 * 127, 4096 * 128}:
                if 0 <= p <= t:
                    rows.add((base + o, p, t))
    rng = np.random.default_rng(12)
    for _ in range(3000):
        t = int(rng.integers(0, 1 << 32))
        rows.add((base + int(rng.integers(0, 1 << 22)), int(rng.integers(0, t + 1)), t))
    # a primary size larger than the total (undefined by the ISA), recorded to be seen
    rows |= {(base, 8192, 4096), (base, 1 << 20, 0)}
    a = np.array(sorted(rows), dtype=[("a", "<u8"), ("p", "<u4"), ("t", "<u4")])
    return a


def far_inputs():
    """Addresses far from any buffer (the instruction reads no memory): every bit of the block start;
    launched last, in case an address outside the allocations faults."""
    rows = {((1 << sh) | 0x123, t // 2, t) for sh in range(12, 49) for t in (4096, 1 << 20, 1 << 31, (1 << 32) - 1)}
    return np.array(sorted(rows), dtype=[("a", "<u8"), ("p", "<u4"), ("t", "<u4")])


def cvt_inputs(extra):
    v = {0x10F0000000000000, 0x12F0000000000000, 0x14F0000000000000, 0x16F0000000000000, 0, ~0 & (2 ** 64 - 1)}
    v |= {1 << b for b in range(64)}
    v |= {int(x) for x in extra}
    rng = np.random.default_rng(13)
    v |= {int(x) for x in rng.integers(0, 2 ** 63, 2000, dtype=np.int64)}
    v |= {int(x) | 1 << 63 for x in rng.integers(0, 2 ** 63, 500, dtype=np.int64)}
    for top in range(256):     # every top byte over a few lower words
        for low in (0, 0x00F0000000000000, 0x0012345678ABCDEF, 0x00FFFFFFFFFFFFFF):
            v.add(top << 56 | low)
    return np.array(sorted(v), np.uint64)


def run(dev, ptx, inputs, nout):
    mod, fn = dev.load_ptx(ptx, "k")
    data = inputs.tobytes()
    pin = dev.alloc(len(data))
    dev.upload(pin, data)
    pout = dev.alloc(8 * nout * len(inputs))
    dev.upload(pout, bytes(8 * nout * len(inputs)))
    err = dev.launch(fn, [struct.pack("<Q", pin), struct.pack("<Q", pout), struct.pack("<I", len(inputs))],
                     THREADS, 0)
    out = np.frombuffer(dev.download(pout, 8 * nout * len(inputs)), np.uint64).reshape(len(inputs), nout)
    dev.unload(mod)
    return err, out.copy()


def main(out):
    dev = drv.Device()
    g = dev.alloc(1 << 22)
    fin = fraction_inputs()
    ferr, fout = run(dev, fraction_kernel(), fin, len(PAIRS) + 1)
    rin = range_inputs(g)
    rerr, rout = run(dev, range_kernel(), rin, len(PAIRS) + 1)
    cin = cvt_inputs(np.concatenate([fout.ravel(), rout.ravel()])[::7])
    cerr, cout = run(dev, cvt_kernel(), cin, 1)
    info = dev.info()
    np.savez_compressed(out, device=str(info), global_base=np.uint64(g), pairs=np.array(PAIRS),
                        fraction_in=fin, fraction_out=fout, range_in=rin, range_out=rout,
                        cvt_in=cin, cvt_out=cout[:, 0], errors=np.array([str(ferr), str(rerr), str(cerr)]))
    print(info, "errors", ferr, rerr, cerr, "rows", len(fin), len(rin), len(cin), flush=True)
    fa = far_inputs()
    try:
        aerr, aout = run(dev, range_kernel(), fa, len(PAIRS) + 1)
    except drv.CudaError as e:
        aerr, aout = str(e)[:200], np.zeros((len(fa), len(PAIRS) + 1), np.uint64)
    np.savez_compressed(out, device=str(info), global_base=np.uint64(g), pairs=np.array(PAIRS),
                        fraction_in=fin, fraction_out=fout, range_in=rin, range_out=rout,
                        cvt_in=cin, cvt_out=cout[:, 0], far_in=fa, far_out=aout,
                        errors=np.array([str(ferr), str(rerr), str(cerr), str(aerr)]),
                        fraction_ptx=fraction_kernel(), range_ptx=range_kernel(), cvt_ptx=cvt_kernel())
    print("far addresses:", aerr)


if __name__ == "__main__" and len(sys.argv) == 2:
    main(sys.argv[1])


def sweep(out):
    """Every f32 in [2^-20, 1] whose low 6 mantissa bits are 0, and every one around each sixteenth,
    through createpolicy.fractional.L2::evict_last with the fraction in a register: the 4-bit field
    (bits 52-55) of each, one byte a value."""
    dev = drv.Device()
    lo, hi = np.float32(2.0 ** -20).view(np.uint32), np.float32(1.0).view(np.uint32)
    grid = np.arange(int(lo), int(hi) + 1, 64, dtype=np.uint32)
    near = np.concatenate([np.arange(int(np.float32(j / 16).view(np.uint32)) - 0x8000,
                                     int(np.float32(j / 16).view(np.uint32)) + 0x8000, dtype=np.uint32)
                           for j in range(1, 17)])
    vals = np.unique(np.concatenate([grid, near]))
    vals = vals[(vals >= lo) & (vals <= hi)]
    ptx = fraction_kernel()
    err, o = run(dev, ptx, vals, len(PAIRS) + 1)
    field = ((o[:, 0] >> np.uint64(52)) & np.uint64(15)).astype(np.uint8)
    np.savez_compressed(out, fraction_in=vals, field=field, error=str(err))
    print("sweep", len(vals), err)


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[2] == "sweep":
    sweep(sys.argv[1])
