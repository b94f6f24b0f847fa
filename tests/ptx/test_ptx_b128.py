"""128-bit registers (PTX ISA 5.2.2 / mov / ld / st: `.reg .b128`, PTX 8.3, sm_70): a .b128 register
holds 16 bytes; ld / st / ldu / ld.global.nc move them whole (one 16-byte aligned access); mov.b128
copies one, packs it from two 64-bit or four 32-bit values (the first the lowest), unpacks it (`_`
sinks a piece) or sets it from an immediate. ptxas zero-extends a 64-bit immediate into .b128
(`st.global.b128 [a], -1` is STG.E.128 of R12 = R13 = 0xFFFFFFFF, R14 = R15 = 0)."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

KERNEL = """.version 8.3
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout, .param .b128 pq)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<16>;
    .reg .b128 %q<8>;
    .shared .align 16 .b8 sm[32];
    ld.param.u64 %rd1, [pin];
    ld.param.u64 %rd2, [pout];
    ld.global.b128 %q1, [%rd1];
    st.global.b128 [%rd2], %q1;                 // out 0: in 0
    mov.b128 {%rd3, %rd4}, %q1;
    mov.b128 %q2, {%rd4, %rd3};
    st.global.b128 [%rd2+16], %q2;              // out 1: the halves swapped
    ld.global.nc.b128 %q3, [%rd1+16];
    mov.b128 {%r1, %r2, %r3, %r4}, %q3;
    mov.b128 %q4, {%r4, %r3, %r2, %r1};
    st.global.b128 [%rd2+32], %q4;              // out 2: in 1's words reversed
    mov.b128 %q5, -1;
    st.global.b128 [%rd2+48], %q5;              // out 3: -1 zero-extended
    st.global.b128 [%rd2+64], 0x123456789;      // out 4: an immediate
    mov.u32 %r5, sm;
    st.shared.b128 [%r5+16], %q3;
    ld.shared.b128 %q6, [%r5+16];
    mov.b128 {_, %rd5}, %q6;
    mov.b128 %q7, {%rd5, 7};
    st.global.b128 [%rd2+80], %q7;              // out 5: in 1's high half, then 7
    ld.param.b128 %q0, [pq];
    mov.b128 %q1, %q0;
    st.global.b128 [%rd2+96], %q1;              // out 6: the parameter
    ldu.global.b128 %q2, [%rd1+32];
    st.global.b128 [%rd2+112], %q2;             // out 7: in 2
    ret;
}
"""


def test_b128_registers_move_16_bytes_whole():
    rng = np.random.default_rng(7)
    src = rng.integers(0, 1 << 64, 6, dtype=np.uint64)
    out = np.zeros(16, np.uint64)
    q = rng.integers(0, 1 << 64, 2, dtype=np.uint64)
    m = pa.Machine()
    ptx.Kernel(KERNEL).launch(m, block=(1, 1, 1), params={"pin": m.register(src.copy()), "pout": m.register(out),
                                                          "pq": q.tobytes()})
    w = src.view(np.uint32)
    want = np.zeros(16, np.uint64)
    want[0:2] = src[0:2]
    want[2:4] = src[1], src[0]
    want[4:6] = np.array([w[7], w[6], w[5], w[4]], np.uint32).view(np.uint64)
    want[6:8] = 0xFFFFFFFFFFFFFFFF, 0
    want[8:10] = 0x123456789, 0
    want[10:12] = src[3], 7
    want[12:14] = q
    want[14:16] = src[4:6]
    assert out.tolist() == want.tolist()


@pytest.mark.parametrize("off", [8, 4])
def test_a_b128_access_is_16_byte_aligned(off):
    # PTX ISA, "Addresses as Operands": the address is a multiple of the access size
    text = KERNEL.replace("ld.global.b128 %q1, [%rd1];", f"ld.global.b128 %q1, [%rd1+{off}];")
    m = pa.Machine()
    with pytest.raises(pa.MisalignedAddress, match="16-byte aligned"):
        ptx.Kernel(text).launch(m, block=(1, 1, 1), params={"pin": m.register(np.zeros(8, np.uint64)),
                                                              "pout": m.register(np.zeros(16, np.uint64)),
                                                              "pq": bytes(16)})


@pytest.mark.parametrize("line,ok", [
    ("ld.global.b128 %q1, [%rd1];", True),
    ("ld.global.v2.b128 {%q1, %q2}, [%rd1];", False),          # "Vector type too large, exceeds 128 bit limit"
    ("ld.global.b128 %rd2, [%rd1];", False),                   # "Arguments mismatch"
    ("ld.global.b128 {%rd2, %rd3}, [%rd1];", False),
    ("mov.b64 {%rd1, %rd2}, %q1;", False),
    ("mov.b128 %q1, {%r1, %r2, %r3, %r4};", True),
    ("mov.b128 {%rd1, _}, %q1;", True),
    ("add.b128 %q1, %q2, %q3;", False),
    ("ld.global.acquire.sys.b128 %q1, [%rd1];", False),        # ".b128 with .sys" needs PTX 8.4
    ("mov.b128 %rd3, 1;", False),                              # "Arguments mismatch"
    ("mov.b128 %q1, %rd1;", False),
    ("mov.b128 %q1, 1.5;", False),
    ("mov.b128 %q1, {%r1, %r2};", False),
    ("mov.b128 {%r1, %r2}, %q1;", False),
    ("mov.b128 {_, _}, %q1;", False),                          # "Unable to infer type of vector elements"
    ("mov.b64 {%rs1, %rs2}, %rd1;", False),
    ("mov.b32 %r1, 1.5;", False),                              # a double literal: .b64 / .f32 / .f64 only
    ("mov.b32 %r1, 0f3FC00000;", True),
    ("mov.u64 %rd1, 1.5;", False),
    ("mov.b64 %rd1, 1.5;", True),
    ("atom.global.exch.b128 %q1, [%rd1], 1.5;", False),
    ("atom.global.exch.b128 %q1, [%rd1], 5;", True),
    ("atom.global.cas.b128 %q1, [%rd1], %rd2, %q3;", False),
])
def test_the_checker_takes_what_ptxas_13_0_takes(line, ok):
    text = """.version 8.3
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b16 %rs<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .reg .b128 %q<4>;
    ld.param.u64 %rd1, [p];
    LINE
    ret;
}
""".replace("LINE", line)
    assert ptx.accepts(text, ptxas="13.0") == ok, ptx.check(text)
    if ok:
        ptx.Kernel(text)          # runs: nothing is "not modelled yet"


ATOM = """.version 8.3
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pm, .param .u64 pout)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<16>;
    .reg .b128 %q<8>;
    .shared .align 16 .b8 sm[32];
    ld.param.u64 %rd1, [pm];
    ld.param.u64 %rd2, [pout];
    mov.b128 %q1, {%rd1, %rd2};
    ld.global.b128 %q2, [%rd1+48];            // the value cas compares with
    ld.global.b128 %q3, [%rd1+64];            // the value it writes
    atom.global.cas.b128 %q4, [%rd1], %q2, %q3;          // mem 0 == q2: swapped
    atom.global.cas.b128 %q5, [%rd1+16], %q2, %q3;       // mem 1 differs in its high half: kept
    atom.exch.b128 %q6, [%rd1+32], %q3;                  // generic address
    st.global.b128 [%rd2], %q4;
    st.global.b128 [%rd2+16], %q5;
    st.global.b128 [%rd2+32], %q6;
    mov.u32 %r1, sm;
    st.shared.b128 [%r1], %q2;
    atom.shared.cas.b128 %q7, [%r1], %q2, 0x55;          // an immediate: zero-extended
    ld.shared.b128 %q0, [%r1];
    st.global.b128 [%rd2+48], %q7;
    st.global.b128 [%rd2+64], %q0;
    ret;
}
"""


def test_atom_cas_and_exch_b128_swap_the_16_bytes_as_one_value():
    # PTX ISA atom: "cas ... if r == b then c else r" and "exch ... b", on the whole .b128
    rng = np.random.default_rng(9)
    mem = rng.integers(0, 1 << 64, 10, dtype=np.uint64)
    mem[0:2] = mem[6:8]                    # mem 0 equals the compare value
    mem[2] = mem[6]
    mem[3] = mem[7] ^ 1                    # mem 1 equals it in the low half only
    before = mem.copy()
    out = np.zeros(10, np.uint64)
    m = pa.Machine()
    ptx.Kernel(ATOM).launch(m, block=(1, 1, 1), params={"pm": m.register(mem), "pout": m.register(out)})
    assert out[0:6].tolist() == before[0:6].tolist()                 # the old values
    assert mem[0:2].tolist() == before[8:10].tolist()                # swapped
    assert mem[2:4].tolist() == before[2:4].tolist()                 # kept
    assert mem[4:6].tolist() == before[8:10].tolist()                # exchanged
    assert out[6:8].tolist() == before[6:8].tolist()
    assert out[8:10].tolist() == [0x55, 0]


CALL = """.version 8.3
.target sm_90a
.address_size 64
.func (.reg .b128 r) f(.reg .b128 a, .reg .b64 s)
{
    .reg .b64 %rd<4>;
    mov.b128 {%rd1, %rd2}, a;
    add.u64 %rd1, %rd1, s;
    mov.b128 r, {%rd2, %rd1};
    ret;
}
.visible .entry k(.param .u64 p)
{
    .reg .b64 %rd<8>;
    .reg .b128 %q<4>;
    ld.param.u64 %rd1, [p];
    ld.global.b128 %q1, [%rd1];
    call (%q2), f, (%q1, 5);
    st.global.b128 [%rd1+16], %q2;
    call (%q3), f, (7, 1);
    st.global.b128 [%rd1+32], %q3;
    ret;
}
"""


def test_a_b128_formal_and_return_value_carry_16_bytes():
    # .reg .b128 formals (ptxas 13.0 assembles the kernel): the argument's halves, an immediate
    # zero-extended; f returns {a.hi, a.lo + s}
    mem = np.array([11, 22, 0, 0, 0, 0], np.uint64)
    m = pa.Machine()
    ptx.Kernel(CALL).launch(m, block=(1, 1, 1), params={"p": m.register(mem)})
    assert mem.tolist() == [11, 22, 22, 16, 0, 8]
