"""mov packs and unpacks (PTX ISA, mov: "d = {a, b}" and "{d, e} = a" for .b16 from two .b8,
.b32 from two .b16 or four .b8, .b64 from two .b32 or four .b16, the first element in the
lowest bits; a `_` sink drops an element). The expected words are built here with shifts."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

KERNEL = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{
    .reg .b8 %c<9>;
    .reg .b16 %h<9>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<9>;
    ld.param.u64 %rd1, [pin];
    ld.param.u64 %rd2, [pout];
    ld.global.b8 %c1, [%rd1+0];
    ld.global.b8 %c2, [%rd1+1];
    ld.global.b8 %c3, [%rd1+2];
    ld.global.b8 %c4, [%rd1+3];
    ld.global.b16 %h1, [%rd1+4];
    ld.global.b16 %h2, [%rd1+6];
    ld.global.b16 %h3, [%rd1+8];
    ld.global.b16 %h4, [%rd1+10];
    ld.global.b32 %r1, [%rd1+12];
    ld.global.b32 %r2, [%rd1+16];
    mov.b16 %h5, {%c1, %c2};
    st.global.b16 [%rd2+0], %h5;
    mov.b32 %r3, {%h1, %h2};
    st.global.b32 [%rd2+8], %r3;
    mov.b32 %r4, {%c1, %c2, %c3, %c4};
    st.global.b32 [%rd2+16], %r4;
    mov.b64 %rd3, {%h1, %h2, %h3, %h4};
    st.global.b64 [%rd2+24], %rd3;
    mov.b64 %rd4, {%r1, %r2};
    st.global.b64 [%rd2+32], %rd4;
    mov.b64 {%h5, _, %h7, %h8}, %rd3;
    st.global.b16 [%rd2+40], %h5;
    st.global.b16 [%rd2+42], %h7;
    st.global.b16 [%rd2+44], %h8;
    mov.b32 {%c5, %c6, _, %c8}, %r2;
    st.global.b8 [%rd2+48], %c5;
    st.global.b8 [%rd2+49], %c6;
    st.global.b8 [%rd2+50], %c8;
    mov.b16 {%c5, %c6}, %h4;
    st.global.b8 [%rd2+56], %c5;
    st.global.b8 [%rd2+57], %c6;
    mov.b32 {_, %h6}, %r1;
    st.global.b16 [%rd2+64], %h6;
    ret;
}
"""


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mov_packs_and_unpacks(seed):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 256, 20, dtype=np.uint8)
    out = np.zeros(72, np.uint8)
    m = pa.Machine()
    gi, go = m.register(src), m.register(out)
    ptx.Kernel(KERNEL).launch(m, block=(1, 1, 1), params={"pin": gi, "pout": go})

    c = [int(x) for x in src[:4]]
    h = [int(src[4 + 2 * i]) | int(src[5 + 2 * i]) << 8 for i in range(4)]
    r = [int.from_bytes(bytes(src[12:16]), "little"), int.from_bytes(bytes(src[16:20]), "little")]
    want = np.zeros(72, np.uint8)

    def put(at, value, nbytes):
        want[at:at + nbytes] = np.frombuffer(value.to_bytes(nbytes, "little"), np.uint8)

    put(0, c[0] | c[1] << 8, 2)
    put(8, h[0] | h[1] << 16, 4)
    put(16, c[0] | c[1] << 8 | c[2] << 16 | c[3] << 24, 4)
    d64 = h[0] | h[1] << 16 | h[2] << 32 | h[3] << 48
    put(24, d64, 8)
    put(32, r[0] | r[1] << 32, 8)
    put(40, d64 & 0xFFFF, 2)                    # {h5, _, h7, h8} = d64
    put(42, d64 >> 32 & 0xFFFF, 2)
    put(44, d64 >> 48, 2)
    put(48, r[1] & 0xFF, 1)                     # {c5, c6, _, c8} = r2
    put(49, r[1] >> 8 & 0xFF, 1)
    put(50, r[1] >> 24, 1)
    put(56, h[3] & 0xFF, 1)                     # {c5, c6} = h4
    put(57, h[3] >> 8, 1)
    put(64, r[0] >> 16, 2)                      # {_, h6} = r1
    assert out.tolist() == want.tolist()
