"""Extended-precision arithmetic through the carry flag (add.cc, addc, sub.cc, subc, mad.cc, madc):
chains as compilers write them for 64-, 96- and 128-bit integers, against Python's integers, and the
chains an H200 ran (tests/data/isa/carry_atom.*, tools/device/record_carry_atom.py), those that mix
a subtraction's flag with an addition's among them, bit for bit."""
import json
import os

import numpy as np
import pytest

import isa_golden
import ptxasync as pa
from ptxasync import ptx
from testpaths import DATA

_META = json.load(open(os.path.join(DATA, "isa", "carry_atom.json")))
_Z = np.load(os.path.join(DATA, "isa", "carry_atom.npz"))
CARRY = [(i, c) for i, c in enumerate(_META["cases"]) if ".cc" in c["name"] or "madc" in c["name"]]


@pytest.mark.parametrize("i", [i for i, _ in CARRY], ids=[c["name"] for _, c in CARRY])
def test_recorded_chain(i):
    c = _META["cases"][i]
    ins = [_Z["%d_in%d" % (i, j)] for j in range(4)]
    want = [_Z["%d_out%d" % (i, k)] for k in range(2)]
    got = isa_golden.run_module(c["ptx"], ins, [c["w"]] * 2, c["n"], 128)
    bad, first = isa_golden.compare(c["name"], got, want)
    assert not bad, "%s: %d differ; first %s" % (c["name"], bad, first)


HEAD = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pd)
{
    .reg .b32 %r<40>;
    .reg .b64 %rd<40>;
    .reg .u32 %t<4>;
    mov.u32 %t0, %tid.x;
    mul.wide.u32 %rd30, %t0, BYTES;
    ld.param.u64 %rd31, [pa]; add.u64 %rd31, %rd31, %rd30;
    ld.param.u64 %rd32, [pb]; add.u64 %rd32, %rd32, %rd30;
    ld.param.u64 %rd33, [pd]; add.u64 %rd33, %rd33, %rd30;
"""


def run(body, words, a, b, n_out_words=None, w=32):
    """Each thread t: limbs a[t], b[t] (little-endian words of w bits) in %r0.. / %r10.. (or %rd),
    the body, the result limbs %r20.. stored."""
    n = len(a)
    nout = n_out_words or words
    dt = np.uint32 if w == 32 else np.uint64
    r = "%r" if w == 32 else "%rd"
    t = "b32" if w == 32 else "b64"
    wb = w // 8
    text = HEAD.replace("BYTES", str(wb * max(words, nout)))
    for j in range(words):
        text += "    ld.global.%s %s%d, [%%rd31+%d];\n    ld.global.%s %s%d, [%%rd32+%d];\n" % (
            t, r, j, j * wb, t, r, 10 + j, j * wb)
    text += body + "\n"
    for j in range(nout):
        text += "    st.global.%s [%%rd33+%d], %s%d;\n" % (t, j * wb, r, 20 + j)
    text += "    ret;\n}\n"
    span = max(words, nout)
    A = np.zeros((n, span), dt)
    B = np.zeros((n, span), dt)
    mask = (1 << w) - 1
    for i in range(n):
        for j in range(words):
            A[i, j] = (a[i] >> (w * j)) & mask
            B[i, j] = (b[i] >> (w * j)) & mask
    D = np.zeros((n, span), dt)
    m = pa.Machine()
    ga, gb, gd = m.register(A), m.register(B), m.register(D)
    ptx.Kernel(text).launch(m, grid=1, block=n, params={"pa": ga, "pb": gb, "pd": gd})
    return [sum(int(D[i, j]) << (w * j) for j in range(nout)) for i in range(n)]


def operands(bits, n=64, seed=0):
    rng = np.random.default_rng(seed)
    top = (1 << bits) - 1
    edge = [0, 1, top, top - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, (1 << 32) - 1, 1 << 32]
    out = []
    for i in range(n):
        if i < len(edge) ** 2 and i % 3 == 0:
            out.append(edge[(i // 3) % len(edge)])
        else:
            out.append(int.from_bytes(rng.bytes(bits // 8), "little") & top)
    return out


def test_128_bit_add_of_four_32_bit_limbs():
    a, b = operands(128, seed=1), operands(128, seed=2)[::-1]
    body = ("add.cc.u32 %r20, %r0, %r10; addc.cc.u32 %r21, %r1, %r11; addc.cc.u32 %r22, %r2, %r12; "
            "addc.u32 %r23, %r3, %r13;")
    assert run(body, 4, a, b) == [(x + y) % (1 << 128) for x, y in zip(a, b)]


def test_128_bit_sub_of_four_32_bit_limbs_and_the_borrow_out():
    a, b = operands(128, seed=3), operands(128, seed=4)
    # d = a - b; limb 4 = 0 - 0 - borrow: all ones when a < b
    body = ("sub.cc.u32 %r20, %r0, %r10; subc.cc.u32 %r21, %r1, %r11; subc.cc.u32 %r22, %r2, %r12; "
            "subc.cc.u32 %r23, %r3, %r13; mov.u32 %r24, 0; subc.u32 %r24, %r24, 0;")
    got = run(body, 4, a, b, 5)
    want = [((x - y) % (1 << 128)) | ((0xFFFFFFFF if x < y else 0) << 128) for x, y in zip(a, b)]
    assert got == want


def test_64_bit_add_and_sub_of_32_bit_halves_signed():
    a, b = operands(64, seed=5), operands(64, seed=6)
    assert run("add.cc.s32 %r20, %r0, %r10; addc.s32 %r21, %r1, %r11;", 2, a, b) == \
        [(x + y) % (1 << 64) for x, y in zip(a, b)]
    assert run("sub.cc.s32 %r20, %r0, %r10; subc.s32 %r21, %r1, %r11;", 2, a, b) == \
        [(x - y) % (1 << 64) for x, y in zip(a, b)]


def test_64x64_to_128_bit_product_of_32_bit_limbs():
    """The schoolbook product as nvcc writes it for unsigned __int128: mad.lo.cc / madc.hi.cc
    columns, the carries summed with addc."""
    a, b = operands(64, seed=7), operands(64, seed=8)
    body = """
    mul.lo.u32 %r20, %r0, %r10;
    mul.hi.u32 %r21, %r0, %r10;
    mad.lo.cc.u32 %r21, %r0, %r11, %r21;
    madc.hi.u32 %r22, %r0, %r11, 0;
    mad.lo.cc.u32 %r21, %r1, %r10, %r21;
    madc.hi.cc.u32 %r22, %r1, %r10, %r22;
    addc.u32 %r23, 0, 0;
    mad.lo.cc.u32 %r22, %r1, %r11, %r22;
    madc.hi.u32 %r23, %r1, %r11, %r23;
    """
    assert run(body, 2, a, b, 4) == [x * y for x, y in zip(a, b)]


def test_128_bit_add_and_product_of_64_bit_limbs():
    a, b = operands(128, seed=9), operands(128, seed=10)
    assert run("add.cc.u64 %rd20, %rd0, %rd10; addc.u64 %rd21, %rd1, %rd11;", 2, a, b, w=64) == \
        [(x + y) % (1 << 128) for x, y in zip(a, b)]
    a64, b64 = operands(64, seed=11), operands(64, seed=12)
    body = "mul.lo.u64 %rd20, %rd0, %rd10; mul.hi.u64 %rd21, %rd0, %rd10;"
    assert run(body, 1, a64, b64, 2, w=64) == [x * y for x, y in zip(a64, b64)]
    # (a_lo + 2^64 a_hi) * b_lo mod 2^128 with mad.lo.cc / madc.hi
    body = ("mul.lo.u64 %rd20, %rd0, %rd10; mul.hi.u64 %rd21, %rd0, %rd10; "
            "mad.lo.cc.u64 %rd21, %rd1, %rd10, %rd21; madc.hi.u64 %rd22, %rd1, %rd10, 0;")
    got = run(body, 2, a, [x & ((1 << 64) - 1) for x in b], 3, w=64)
    assert got == [x * (y & ((1 << 64) - 1)) for x, y in zip(a, b)]


def test_signed_mad_hi_cc():
    """mad.hi.cc.s32: the high word of the signed product, plus c, the carry of that unsigned sum."""
    rng = np.random.default_rng(13)
    a = [int(v) for v in rng.integers(0, 1 << 32, 64, dtype=np.uint64)]
    b = [int(v) for v in rng.integers(0, 1 << 32, 64, dtype=np.uint64)]
    c = [(x * 7919) & 0xFFFFFFFF for x in a]

    def s(v):
        return v - (1 << 32) if v >> 31 else v
    body = "mad.hi.cc.s32 %r20, %r0, %r10, %r1; addc.u32 %r21, 0, 0;"
    got = run(body, 2, [x | y << 32 for x, y in zip(a, c)], b, 2)
    want = []
    for x, y, z in zip(a, b, c):
        hi = ((s(x) * s(y)) >> 32) & 0xFFFFFFFF
        want.append(((hi + z) & 0xFFFFFFFF) | ((hi + z) >> 32) << 32)
    assert got == want


def test_carry_is_per_thread_and_survives_other_instructions():
    """The flag belongs to each thread; instructions between the producer and the consumer that do
    not write it leave it."""
    a, b = operands(64, seed=14), operands(64, seed=15)
    body = ("add.cc.u32 %r20, %r0, %r10; mov.u32 %r30, %tid.x; add.u32 %r31, %r30, 5; mul.lo.u32 %r31, %r31, 3; "
            "addc.u32 %r21, %r1, %r11;")
    assert run(body, 2, a, b) == [(x + y) % (1 << 64) for x, y in zip(a, b)]


@pytest.mark.parametrize("line,msg", [
    ("add.cc.b32 %r20, %r0, %r10;", "add.cc.b32"),
    ("add.cc.u16 %r20, %r0, %r10;", "add.cc.u16"),
    ("mad.wide.cc.u32 %rd20, %r0, %r10, %rd1;", "mad.wide.cc.u32"),
])
def test_forms_ptxas_rejects_are_rejected(line, msg):
    text = HEAD.replace("BYTES", "4") + "    " + line + "\n    ret;\n}\n"
    assert not ptx.accepts(text), msg


def test_64_bit_types_need_ptx_4_3():
    text = HEAD.replace("BYTES", "4").replace(".version 8.7", ".version 4.2").replace("sm_90a", "sm_52") + \
        "    add.cc.u64 %rd20, %rd0, %rd10;\n    ret;\n}\n"
    assert not ptx.accepts(text)
    assert ptx.accepts(text.replace(".version 4.2", ".version 4.3"))
