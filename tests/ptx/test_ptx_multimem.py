"""multimem.ld_reduce / multimem.st / multimem.red (PTX ISA 9.7.9.14; csrc/core/ptx/exec/
multimem.c, lower_multimem.c; ptxasync.Multicast; docs/multimem.md).

No GPU here runs multimem (no NVLink multicast), so each test cites the ISA's text and checks
the model against a reference written here (tests/reduce_reference.py: exact rationals,
rounded to nearest even, the reductions' recorded NaN rules; ml_dtypes for e4m3 / e5m2):

- ld_reduce "loads from all of the multiple memory locations" and reduces them by .op; st
  "stores b to all the memory locations"; red "performs a reduction operation on all the
  memory locations": every op / type pair of the ISA's table, over 2 and 4 devices;
- the accumulation precision: the type's by default, f32 with .acc::f32, f16 with .acc::f16;
- the vector forms .v2 / .v4 / .v8 of packed types;
- the order across devices (left open by the ISA): device order, which matters for f16 add;
- an address that is not a multimem address (undefined in the ISA) is IllegalAddress naming
  the PTX line, and ld / st on a multimem address ("results in undefined behavior") too;
- the checker refuses what ptxas 13.0 refuses (verdicts recorded below, re-asked of ptxas
  when it is installed);
- an all-reduce kernel run end to end on 2 and 4 devices.
"""
import shutil
import subprocess

import ml_dtypes
import numpy as np
import pytest

import ptxasync as pa
import reduce_reference as R
from ptxasync import ptx

RNG = np.random.default_rng(7)
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _module(body, target="sm_90a", version="8.3"):
    return f""".version {version}
.target {target}
.address_size 64
.visible .entry k(.param .u64 mc, .param .u64 io)
{{
  .reg .b64 %rd<4>;
  .reg .b16 %h<9>;
  .reg .b32 %r<9>;
  .reg .b64 %x<9>;
  .reg .f32 %f<9>;
  .reg .f64 %fd<9>;
  ld.param.u64 %rd1, [mc];
  ld.param.u64 %rd2, [io];
{body}
  ret;
}}
"""


def _regs(w, n, kind="b"):
    base = {16: "%h", 32: "%r", 64: "%x"}[w] if kind == "b" else {32: "%f", 64: "%fd"}[w]
    names = [f"{base}{i + 1}" for i in range(n)]
    return names, (names[0] if n == 1 else "{" + ", ".join(names) + "}")


def _devices(copies, target="sm_90a"):
    """One Machine per device, each holding its copy; the Multicast over them; devs[0]'s io buffer."""
    devs = [pa.Machine(target=target) for _ in copies]
    bufs = [d.register(np.ascontiguousarray(c).copy()) for d, c in zip(devs, copies)]
    return devs, bufs, pa.Multicast(bufs)


def ld_reduce(opcode, w, n, copies, target="sm_90a", version="8.3", kind="b"):
    """Run `opcode {d..}, [mc]` on devs[0] over the copies (arrays of n registers of w bits): the
    registers it returns, as integers."""
    names, ops = _regs(w, n, kind)
    body = f"  {opcode} {ops}, [%rd1];\n" + "".join(
        f"  st.global.b{w} [%rd2+{i * w // 8}], {r};\n" for i, r in enumerate(names))
    devs, bufs, mc = _devices(copies, target)
    io = devs[0].alloc(n * w // 8)
    ptx.Kernel(_module(body, target, version)).launch(devs[0], 1, 1, params={"mc": mc.address, "io": io})
    return [int(v) for v in io.view(UINT[w], n)]


def st_red(opcode, w, n, copies, b, version="8.3", kind="b"):
    """Run `opcode [mc], {b..}` on devs[0]: each device's copy afterwards."""
    names, ops = _regs(w, n, kind)
    body = "".join(f"  ld.global.b{w} {r}, [%rd2+{i * w // 8}];\n" for i, r in enumerate(names))
    body += f"  {opcode} [%rd1], {ops};\n"
    devs, bufs, mc = _devices(copies)
    io = devs[0].register(np.array(b, dtype=UINT[w]))
    ptx.Kernel(_module(body, version=version)).launch(devs[0], 1, 1, params={"mc": mc.address, "io": io})
    return [[int(v) for v in buf.view(UINT[w], n)] for buf in bufs]


def _lanes(reg, eb, per):
    return [(reg >> (e * eb)) & ((1 << eb) - 1) for e in range(per)]


def _pack(vals, eb):
    return sum(v << (e * eb) for e, v in enumerate(vals))


def fold_regs(regs_per_copy, eb, step, w=32):
    """Each w-bit register's eb-bit elements reduced over the copies in device order (acc = copy 0,
    then acc = step(acc, copy k))."""
    out = []
    for i in range(len(regs_per_copy[0])):
        lanes = [_lanes(regs[i], eb, w // eb) for regs in regs_per_copy]
        res = []
        for e in range(w // eb):
            acc = lanes[0][e]
            for other in lanes[1:]:
                acc = step(acc, other[e])
            res.append(acc)
        out.append(_pack(res, eb))
    return out


def _rand_bits(w, n, ndev):
    return [RNG.integers(0, 1 << w, size=n, dtype=UINT[w] if w < 64 else np.uint64) for _ in range(ndev)]


# --- integers: the ISA's table of .op and type -----------------------------------------------

INT_CASES = [("add", "u32"), ("add", "s32"), ("add", "u64"), ("min", "u32"), ("min", "s32"), ("max", "u64"),
             ("max", "s64"), ("min", "s64"), ("and", "b32"), ("or", "b64"), ("xor", "b32"), ("xor", "b64")]


@pytest.mark.parametrize("ndev", [2, 4])
@pytest.mark.parametrize("op,t", INT_CASES)
def test_integer_ld_reduce(op, t, ndev):
    bits, signed = R.INT_TYPES[t]
    copies = _rand_bits(bits, 1, ndev)
    got = ld_reduce(f"multimem.ld_reduce.{op}.{t}", bits, 1, copies)
    acc = int(copies[0][0])
    for c in copies[1:]:
        acc = R.int_op(op, acc, int(c[0]), bits, signed)
    assert got == [acc]


@pytest.mark.parametrize("op,t", [("add", "u64"), ("max", "s32"), ("and", "b32"), ("min", "u32")])
def test_integer_red_every_copy(op, t):
    """red: copy = copy op b in each of the 4 copies."""
    bits, signed = R.INT_TYPES[t]
    copies = _rand_bits(bits, 1, 4)
    b = int(RNG.integers(0, 1 << bits, dtype=np.uint64 if bits == 64 else np.int64))
    got = st_red(f"multimem.red.relaxed.sys.global.{op}.{t}", bits, 1, copies, [b])
    assert got == [[R.int_op(op, int(c[0]), b, bits, signed)] for c in copies]


# --- floating point -------------------------------------------------------------------------

SPECIAL16 = [0x7C00, 0xFC00, 0x7E01, 0x0001, 0x8001, 0x0000, 0x8000, 0x3C00, 0x7BFF]


def _half_copies(ndev, n, eb=16):
    """n registers of 32 bits (two 16-bit halves) per copy, specials mixed in."""
    out = []
    for _ in range(ndev):
        h = RNG.integers(0, 1 << 16, size=2 * n).astype(np.uint64)
        for j in range(0, 2 * n, 3):
            h[j] = SPECIAL16[int(RNG.integers(len(SPECIAL16)))]
        out.append(np.array([int(h[2 * i]) | int(h[2 * i + 1]) << 16 for i in range(n)], dtype=np.uint32))
    return out


@pytest.mark.parametrize("ndev", [2, 4])
@pytest.mark.parametrize("op", ["add", "min", "max"])
@pytest.mark.parametrize("fmt,vec", [("f16", ".v4"), ("bf16", ".v2"), ("f16", ""), ("bf16", ".v4")])
def test_half_pairs(fmt, vec, op, ndev):
    """f16x2 / bf16x2 (alone, .v2, .v4): each half reduced over the copies by the model's f16 / bf16
    rules (round to nearest even, subnormals kept, NaN 0x7FFF; min / max of one NaN: the other)."""
    n = int(vec[2:]) if vec else 1
    copies = _half_copies(ndev, n)
    got = ld_reduce(f"multimem.ld_reduce.{op}{vec}.{fmt}x2", 32, n, copies)
    step = (lambda d, s: R.float_add(d, s, fmt)) if op == "add" else \
        (lambda d, s: R.float_minmax(d, s, fmt, op == "max"))
    want = fold_regs([[int(x) for x in c] for c in copies], 16, step)
    assert got == want


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_v8_scalar_halves(fmt):
    """.v8.f16 / .v8.bf16: eight 16-bit registers, one element each."""
    copies = [RNG.integers(0, 1 << 16, size=8).astype(np.uint16) for _ in range(3)]
    got = ld_reduce(f"multimem.ld_reduce.max.v8.{fmt}", 16, 8, copies)
    want = []
    for i in range(8):
        acc = int(copies[0][i])
        for c in copies[1:]:
            acc = R.float_minmax(acc, int(c[i]), fmt, True)
        want.append(acc)
    assert got == want


@pytest.mark.parametrize("ndev", [2, 4])
@pytest.mark.parametrize("vec", ["", ".v2", ".v4"])
def test_f32_add(vec, ndev):
    """f32 add: the model's rule for f32 reductions into .global (red.global.add.f32 as recorded on
    an H200): subnormal operands and results flushed, NaN 0x7FFFFFFF."""
    n = int(vec[2:]) if vec else 1
    copies = [RNG.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32) for _ in range(ndev)]
    copies[0][0] = 0x00000003                     # a subnormal: flushed
    got = ld_reduce(f"multimem.ld_reduce.add{vec}.f32", 32, n, copies, kind="f")
    want = []
    for i in range(n):
        acc = int(copies[0][i])
        for c in copies[1:]:
            acc = R.float_add(acc, int(c[i]), "f32", ftz=True)
        want.append(acc)
    assert got == want


def test_f64_add_nan_and_order():
    """f64 add: IEEE's, a NaN passed on (the later device's, as red.global's source NaN wins)."""
    one, nan_a, nan_b = 0x3FF0000000000000, 0x7FF0000000000123, 0xFFF8000000000456
    for copies, want in [([one, nan_a, one, nan_b], nan_b), ([one, nan_a, one, one], nan_a),
                         ([one, one, one, one], 0x4010000000000000)]:
        got = ld_reduce("multimem.ld_reduce.add.f64", 64, 1, [np.array([c], np.uint64) for c in copies], kind="f")
        acc = copies[0]
        for c in copies[1:]:
            acc = R.float_add(acc, c, "f64")
        assert got == [acc] == [want]


def test_device_order_matters_for_f16_add():
    """The ISA leaves the order of the copies open; the model reduces in device order:
    ((2048 + 1) + 1) rounds to 2048 twice in f16, ((1 + 1) + 2048) is 2050."""
    h2048, h1 = 0x6800, 0x3C00
    pair = lambda h: np.array([h | h << 16], np.uint32)   # noqa: E731
    big_first = ld_reduce("multimem.ld_reduce.add.f16x2", 32, 1, [pair(h2048), pair(h1), pair(h1)])
    small_first = ld_reduce("multimem.ld_reduce.add.f16x2", 32, 1, [pair(h1), pair(h1), pair(h2048)])
    assert big_first == [0x6800 | 0x6800 << 16]
    assert small_first == [0x6801 | 0x6801 << 16]          # 2050


@pytest.mark.parametrize("fmt,big,one,want_type,want_acc", [
    ("f16", 0x6800, 0x3C00, 0x6800, 0x6801),                # 2048 + 1 + 1 + 1: 2048 / 2051 -> 2052
    ("bf16", 0x4380, 0x3F80, 0x4380, 0x4381),               # 256 + 1 + 1 + 1 (bf16 ulp 2 at 256)
])
def test_acc_f32(fmt, big, one, want_type, want_acc):
    """.acc::f32 "changes precision to .f32" for f16 / bf16: the sum is accumulated in f32 and
    rounded once (nearest even) into the type; without it every step rounds in the type."""
    pair = lambda h: np.array([h | h << 16], np.uint32)    # noqa: E731
    copies = [pair(big), pair(one), pair(one), pair(one)]
    plain = ld_reduce(f"multimem.ld_reduce.add.{fmt}x2", 32, 1, copies)
    acc = ld_reduce(f"multimem.ld_reduce.add.acc::f32.{fmt}x2", 32, 1, copies)
    assert plain == [want_type | want_type << 16]
    # 2051 (259) in f32 exactly, then to the type: 2052 (260), to even
    exact = R._round_rne(R._decode(big, fmt).value + 3, fmt)
    assert acc == [exact | exact << 16] == [(want_acc + 1) | (want_acc + 1) << 16]


def _fp8(dtype, bits):
    return np.array(bits, np.uint8).view(dtype).astype(np.float64)


@pytest.mark.parametrize("name,dt", [("e4m3", ml_dtypes.float8_e4m3fn), ("e5m2", ml_dtypes.float8_e5m2)])
@pytest.mark.parametrize("acc", [False, True])
def test_fp8_add(name, dt, acc):
    """e4m3x4 / e5m2x4 add (sm_100a, PTX 8.6): each step in the type, or in f16 with .acc::f16 and
    rounded once into the type at the end; nearest even (ml_dtypes' conversion as the reference)."""
    copies = [RNG.integers(0, 256, size=4).astype(np.uint8) & 0x3F for _ in range(4)]   # finite, positive
    regs = [np.array([int(c.view(np.uint32)[0])], np.uint32) for c in copies]
    opc = f"multimem.ld_reduce.add{'.acc::f16' if acc else ''}.{name}x4"
    got = ld_reduce(opc, 32, 1, regs, target="sm_100a", version="8.6")
    vals = [_fp8(dt, c) for c in copies]
    want = []
    for e in range(4):
        a = vals[0][e]
        for v in vals[1:]:
            a = float(np.float16(a + v[e])) if acc else float(np.float64(a + v[e]).astype(dt))
        want.append(int(np.array([a]).astype(dt).view(np.uint8)[0]))
    assert got == [_pack(want, 8)]


def test_fp8_min_max_pairs():
    """.v2.e5m2x2 max and e4m3x2 min: the larger / smaller of the copies, element by element."""
    copies = [RNG.integers(0, 0x78, size=4).astype(np.uint8) | (RNG.integers(0, 2, size=4) * 0x80).astype(np.uint8)
              for _ in range(3)]
    regs = [c.view(np.uint16) for c in copies]
    got = ld_reduce("multimem.ld_reduce.max.v2.e5m2x2", 16, 2, regs, target="sm_100a", version="8.6")
    vals = [_fp8(ml_dtypes.float8_e5m2, c) for c in copies]
    idx = [int(np.argmax([v[e] for v in vals])) for e in range(4)]
    want = [int(copies[idx[e]][e]) for e in range(4)]
    assert got == [want[0] | want[1] << 8, want[2] | want[3] << 8]


def test_fp8_overflow():
    """e4m3 has no infinity: 448 + 448 is NaN (0x7F), as cvt to e4m3 without .satfinite; e5m2's
    57344 + 57344 is infinity (0x7C)."""
    e4 = [np.array([0x7E7E7E7E], np.uint32)] * 2
    e5 = [np.array([0x7B7B7B7B], np.uint32)] * 2
    assert ld_reduce("multimem.ld_reduce.add.e4m3x4", 32, 1, e4, "sm_100a", "8.6") == [0x7F7F7F7F]
    assert ld_reduce("multimem.ld_reduce.add.e5m2x4", 32, 1, e5, "sm_100a", "8.6") == [0x7C7C7C7C]


# --- st and red ------------------------------------------------------------------------------

@pytest.mark.parametrize("ndev", [2, 4])
def test_st_writes_every_copy(ndev):
    """multimem.st.v4.f32 (the ISA's example form): b in every copy, nothing else changed."""
    copies = [np.arange(4, dtype=np.uint32) + 100 * k for k in range(ndev)]
    b = [0x3F800000, 0x40000000, 0xFFFFFFFF, 7]
    got = st_red("multimem.st.release.cta.global.v4.f32", 32, 4, copies, b, kind="f")
    assert got == [b] * ndev


def test_red_v4_f32_every_copy():
    """multimem.red.release.cta.global.add.v4.f32 (the ISA's example): copy += b in every copy, by
    red.global.add.f32's rule (subnormals flushed)."""
    copies = [RNG.integers(0, 1 << 32, size=4, dtype=np.uint64).astype(np.uint32) for _ in range(4)]
    b = [0x3F800000, 0x00000001, 0x7F800000, 0xC0490FDB]
    got = st_red("multimem.red.release.cta.global.add.v4.f32", 32, 4, copies, b, kind="f")
    assert got == [[R.float_add(int(c[i]), b[i], "f32", ftz=True) for i in range(4)] for c in copies]


def test_red_ignores_acc_prec():
    """ptxas takes .acc::f32 on multimem.red and ignores it (it takes it on .u32 too); the model
    reduces each copy as without it: one rounding of copy + b in the type."""
    copies = _half_copies(2, 2)
    b = [0x3F804000, 0x7FC0FF80]
    plain = st_red("multimem.red.add.v2.bf16x2", 32, 2, copies, b)
    assert st_red("multimem.red.add.acc::f32.v2.bf16x2", 32, 2, copies, b) == plain


def test_red_bf16x2_v2():
    copies = _half_copies(2, 2)
    b = [0x3F804000, 0x7FC0FF80]
    got = st_red("multimem.red.add.v2.bf16x2", 32, 2, copies, b)
    want = [[_pack([R.float_add(x, y, "bf16") for x, y in zip(_lanes(int(c[i]), 16, 2), _lanes(b[i], 16, 2))], 16)
             for i in range(2)] for c in copies]
    assert got == want


# --- addresses -------------------------------------------------------------------------------

def _one(body, mc_addr, dev):
    io = dev.alloc(64)
    ptx.Kernel(_module(body)).launch(dev, 1, 1, params={"mc": mc_addr, "io": io})


def test_not_a_multimem_address():
    """ISA: "Address operand a must be a multimem address. Otherwise, the behavior is undefined":
    the model stops with IllegalAddress naming the line (as the GPU faults)."""
    devs, bufs, mc = _devices([np.zeros(16, np.uint32)] * 2)
    with pytest.raises(pa.IllegalAddress, match=r"not a multicast object's.*PTX line 14: multimem.ld_reduce"):
        _one("  multimem.ld_reduce.add.u32 %r1, [%rd1];", bufs[0].address, devs[0])
    with pytest.raises(pa.IllegalAddress, match="no multicast object is mapped there"):
        _one("  multimem.st.u32 [%rd1], %r1;", 0x1000, devs[0])
    with pytest.raises(pa.IllegalAddress, match="no multicast object is mapped there"):
        _one("  multimem.red.add.u64 [%rd1+64], %x1;", mc.address, devs[0])   # just past its 64 bytes
    short = pa.Multicast([devs[0].alloc(64), devs[1].alloc(64)], size=60)
    with pytest.raises(pa.IllegalAddress, match="runs past the end of the multicast window"):
        _one("  multimem.st.v4.f32 [%rd1+48], {%f1, %f2, %f3, %f4};", short.address, devs[0])
    with pytest.raises(pa.MisalignedAddress):
        _one("  multimem.st.u32 [%rd1+2], %r1;", mc.address, devs[0])


def test_ordinary_access_to_a_multimem_address():
    """ISA: "Accessing a multimem address with ld, st or any other memory operations results in
    undefined behavior": IllegalAddress in the model."""
    devs, bufs, mc = _devices([np.zeros(16, np.uint32)] * 2)
    for body in ("  ld.global.u32 %r1, [%rd1];", "  st.u32 [%rd1], %r1;", "  atom.global.add.u32 %r1, [%rd1], 1;"):
        with pytest.raises(pa.IllegalAddress, match="a multicast object's address, which only multimem"):
            _one(body, mc.address, devs[0])
    with pytest.raises(pa.IllegalAddress, match="a multicast object's address, which only multimem"):
        devs[1].read_global(mc.address, np.uint32, 4)


def test_multicast_object_lifetime():
    m = pa.Machine()
    a, b = m.alloc(256), m.alloc(256)
    mc = pa.Multicast([a, b])                       # two copies in one Machine
    with pytest.raises(ValueError, match="free the Multicast first"):
        a.free()
    with pytest.raises(pa.InvalidValue, match="overlaps the multicast window"):
        m.alloc(16, address=mc.address)
    with pytest.raises(ValueError, match="bound twice"):
        pa.Multicast([a, a])
    mc.free()
    a.free()
    with pytest.raises(ValueError, match="binds 1 to 16"):
        pa.Multicast([])


# --- the checker as ptxas --------------------------------------------------------------------

# (target, instruction, ptxas 13.0 assembles it); PTX 8.6 on sm_100a, 8.3 elsewhere
VERDICTS = [
    ("sm_90a", "multimem.ld_reduce.and.b32 %r1, [%rd1];", True),
    ("sm_90a", "multimem.ld_reduce.acquire.gpu.global.add.u32 %r1, [%rd1];", True),
    ("sm_90a", "multimem.st.relaxed.gpu.b32 [%rd1], %r1;", True),
    ("sm_90a", "multimem.st.release.cta.global.u32 [%rd1], %r1;", True),
    ("sm_90a", "multimem.red.relaxed.gpu.max.f64 [%rd1], %fd1;", False),   # an ISA example; .redop = {.add}
    ("sm_90a", "multimem.red.release.cta.global.add.v4.f32 [%rd1], {%f1, %f2, %f3, %f4};", True),
    ("sm_90a", "multimem.ld_reduce.add.acc::f32.v2.f16x2 {%r1, %r2}, [%rd1];", True),
    ("sm_100a", "multimem.ld_reduce.relaxed.cta.min.v2.e4m3x2 {%h1, %h2}, [%rd1];", True),
    ("sm_100a", "multimem.ld_reduce.relaxed.cta.add.v4.e4m3 {%h1, %h2, %h3, %h4}, [%rd1];", False),
    ("sm_100a", "multimem.ld_reduce.add.acc::f16.e4m3x4 %r1, [%rd1];", True),
    ("sm_100a", "multimem.ld_reduce.max.v2.e5m2x2 {%h1, %h2}, [%rd1];", True),
    ("sm_90a", "multimem.ld_reduce.add.e4m3x4 %r1, [%rd1];", False),
    ("sm_90a", "multimem.ld_reduce.add.s64 %x2, [%rd1];", False),
    ("sm_90a", "multimem.ld_reduce.min.f32 %f1, [%rd1];", False),
    ("sm_90a", "multimem.ld_reduce.add.acc::f32.f32 %f1, [%rd1];", False),
    ("sm_90a", "multimem.ld_reduce.add.v2.f64 {%fd1, %fd2}, [%rd1];", False),
    ("sm_90a", "multimem.ld_reduce.add.f16 %h1, [%rd1];", False),
    ("sm_90a", "multimem.ld_reduce.add.v8.bf16 {%h1, %h2, %h3, %h4, %h5, %h6, %h7, %h8}, [%rd1];", True),
    ("sm_90a", "multimem.ld_reduce.min.acc::f32.f16x2 %r1, [%rd1];", False),
    ("sm_90a", "multimem.red.weak.add.f32 [%rd1], %f1;", False),
    ("sm_90a", "multimem.red.min.f16x2 [%rd1], %r1;", False),
    ("sm_90a", "multimem.st.acquire.gpu.b32 [%rd1], %r1;", False),
    ("sm_90a", "multimem.ld_reduce.release.gpu.add.u32 %r1, [%rd1];", False),
    ("sm_90a", "multimem.ld_reduce.shared.add.u32 %r1, [%rd1];", False),
    ("sm_90a", "multimem.ld_reduce.add.acc::f16.v2.f16x2 {%r1, %r2}, [%rd1];", False),
    # red: ptxas takes .acc::f32 / .acc::f16 after the operation on every type (the ISA lists none)
    ("sm_90a", "multimem.red.relaxed.gpu.global.add.acc::f32.u32 [%rd1], %r1;", True),
    ("sm_90a", "multimem.red.relaxed.gpu.global.add.acc::f16.f16x2 [%rd1], %r1;", True),
    ("sm_90a", "multimem.red.relaxed.gpu.global.add.acc::f32.v2.f16x2 [%rd1], {%r1, %r2};", True),
    ("sm_90a", "multimem.red.relaxed.gpu.global.add.acc::f32.f64 [%rd1], %fd1;", True),
    ("sm_90a", "multimem.red.relaxed.gpu.global.min.acc::f32.f16x2 [%rd1], %r1;", False),
]


def _verdict_module(target, ins):
    return _module("  " + ins, target, "8.6" if target == "sm_100a" else "8.3")


@pytest.mark.parametrize("target,ins,ok", VERDICTS)
def test_checker_agrees_with_ptxas(target, ins, ok):
    errors = [d for d in ptx.check(_verdict_module(target, ins)) if d.severity == "error"]
    assert (not errors) == ok, errors


@pytest.mark.skipif(not shutil.which("ptxas"), reason="ptxas not installed")
@pytest.mark.parametrize("target,ins,ok", VERDICTS)
def test_recorded_verdicts_are_ptxas(tmp_path, target, ins, ok):
    f = tmp_path / "k.ptx"
    f.write_text(_verdict_module(target, ins))
    r = subprocess.run(["ptxas", "-arch", target, str(f), "-o", str(tmp_path / "k.cubin")], capture_output=True)
    assert (r.returncode == 0) == ok, r.stderr


# --- a kernel end to end: the one-shot all-reduce ---------------------------------------------

ALLREDUCE = """.version 8.3
.target sm_90a
.address_size 64
.visible .entry allreduce(.param .u64 mc, .param .u32 first)
{
  .reg .b64 %rd<4>;
  .reg .b32 %r<4>;
  .reg .f32 %f<5>;
  ld.param.u64 %rd1, [mc];
  ld.param.u32 %r1, [first];
  mov.u32 %r2, %tid.x;
  add.u32 %r3, %r1, %r2;
  mul.wide.u32 %rd2, %r3, 16;
  add.s64 %rd3, %rd1, %rd2;
  multimem.ld_reduce.relaxed.sys.global.add.v4.f32 {%f1, %f2, %f3, %f4}, [%rd3];
  multimem.st.relaxed.sys.global.v4.f32 [%rd3], {%f1, %f2, %f3, %f4};
  ret;
}
"""


@pytest.mark.parametrize("ndev", [2, 4])
def test_allreduce_kernel(ndev):
    """Each device sums its share of the vectors over every device (ld_reduce) and writes the sum
    to every device (st): afterwards every copy holds the sum, element by element in device order."""
    n = 64 * ndev                                          # float4 vectors
    data = [RNG.standard_normal(4 * n).astype(np.float32) for _ in range(ndev)]
    devs, bufs, mc = _devices(data)
    k = ptx.Kernel(ALLREDUCE)
    for d, dev in enumerate(devs):
        k.launch(dev, 1, n // ndev, params={"mc": mc.address, "first": d * (n // ndev)})
    bits = [c.view(np.uint32) for c in data]
    want = []
    for i in range(4 * n):
        acc = int(bits[0][i])
        for b in bits[1:]:
            acc = R.float_add(acc, int(b[i]), "f32", ftz=True)
        want.append(acc)
    for buf in bufs:
        assert buf.view(np.uint32, 4 * n).tolist() == want
