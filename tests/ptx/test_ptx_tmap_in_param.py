"""A tensor map inside a larger grid-constant parameter: CuTe passes its TMA TiledCopy (the
128-byte map, then its own fields) as one parameter of 192 bytes or more and names the map at
the parameter's address, or a struct holds two maps. The copy reads the 128 bytes at the
operand's (64-byte-aligned) offset; an operand that is misaligned or whose map does not fit in
the parameter is refused, naming the parameter."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

KERNEL = """.version 8.6
.target sm_90a
.address_size 64
.visible .entry load(.param .align 64 .b8 maps[{size}])
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<2>;
  .shared .align 1024 .b8 buf[2048];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, bar;
  mbarrier.init.shared::cta.b64 [%r1], 1;
  fence.mbarrier_init.release.cluster;
  mov.u32 %r4, buf;
  mov.b64 %rd1, maps;
  cvta.param.u64 %rd2, %rd1;
  add.s64 %rd3, %rd2, {offset};
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 2048;
  mov.u32 %r2, 16;
  mov.u32 %r3, 8;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd3, {{%r2, %r3}}], [%r1];
  mov.u32 %r5, 0;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r5;
  @!%p1 bra WAIT;
  ret;
}}
"""


def launch(size, offset, which):
    """Parameter of `size` bytes holding map A at 0 and, when it fits, map B at 128; the kernel
    loads through the map at `offset`. Returns the loaded box (NumPy order) and what was
    expected (the box of the array the map at `which` describes)."""
    rng = np.random.default_rng(size + offset)
    arrays = [rng.integers(0, 1 << 16, (64, 64)).astype(np.uint16) for _ in range(2)]
    m = pa.Machine(smem_bytes=4096)
    maps = [pa.TensorMap.tiled("u16", m.register(a).address, [64, 64], [128], [32, 32]) for a in arrays]
    block = bytearray(size)
    block[0:128] = bytes(maps[0])
    if size >= 256:
        block[128:256] = bytes(maps[1])
    ptx.Kernel(KERNEL.format(size=size, offset=offset)).launch(m, block=1, params={"maps": bytes(block)})
    return pa.read_box(m, maps[which], 0), arrays[which][8:40, 16:48]


def test_map_at_the_start_of_a_192_byte_parameter():     # CuTe's TiledCopy of a static layout
    got, want = launch(192, 0, 0)
    assert np.array_equal(got, want)


def test_second_map_of_a_two_map_parameter():
    got, want = launch(256, 128, 1)
    assert np.array_equal(got, want)


def test_misaligned_map_inside_a_parameter_is_refused():
    with pytest.raises(pa.MisalignedAddress, match="byte 32 of parameter 'maps': a tensor map is 64-byte aligned"):
        launch(256, 32, 0)


def test_map_that_does_not_fit_the_parameter_is_refused():
    with pytest.raises(pa.IllegalAddress, match="byte 128 of parameter 'maps', which is 192 bytes"):
        launch(192, 128, 0)
