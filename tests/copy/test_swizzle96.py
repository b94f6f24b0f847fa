"""The 96B swizzle (PTX .swizzle_mode 4, CU_TENSOR_MAP_SWIZZLE_96B), docs/load-modes.md.

Each test cites the sentence it checks: the PTX 5.5.7 pattern table (spec/tensors.md), the
online cuTensorMapEncodeIm2colWide text (spec/driver-tensormap.md), and the seed's
"Restriction on Tensor Copy instructions" and tensormap.replace target notes
(spec/seeds/ptx-data-movement.md).
"""
import numpy as np
import pytest

import ptxasync as pa

import modes_reference as ref

DIMS = (96, 9, 7, 4)          # C, W, H, N (f16)


def wide96(address, mode="W", cpp=48, ppc=16, swizzle="96B", target="sm_103a", dtype="f16",
           dims=DIMS, es=2):
    strides = [dims[0] * es]
    for d in dims[1:-1]:
        strides.append(strides[-1] * d)
    return pa.TensorMap.im2col_wide(dtype, address, list(dims), strides, 0, 0, cpp, ppc, mode=mode,
                                    swizzle=swizzle, target=target)


def swizzle96(a):
    # spec/tensors.md pattern table: "96B (PTX swizzle_mode 4) | table identical to 32B:
    # a ^ ((L & 1) << 4) | 256 B", L = a >> 7. Written out here, not taken from the model.
    return a ^ (((a >> 7) & 1) << 4)


def test_value_is_the_models_own_and_cannot_collide():
    # driver-tensormap.md: CU_TENSOR_MAP_SWIZZLE_96B is "undocumented" ... "Do not guess a
    # number"; the documented enum is 0..6 and 7 is "the next free value but that is unverified".
    assert int(pa.Swizzle.B96) == 96
    assert int(pa.Swizzle.B96) not in range(0, 8)
    assert pa.Swizzle["B96"] is pa.Swizzle.B96


def test_pattern_is_the_ptx_table():
    # PTX 5.5.7 "96 byte swizzle mode": "0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 / 1 | 0 | 3 | 2 | 5 | 4 |
    # 7 | 6 / ... Pattern repeats ..." (16-byte cells, starting address 256-byte aligned).
    table = [[0, 1, 2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4, 7, 6]]
    for base in (0, 256, 4096):
        for line in range(4):
            for chunk in range(8):
                pos = table[line % 2][chunk]
                for b in (0, 7, 15):
                    a = base + line * 128 + chunk * 16 + b
                    assert pa.swizzle_address("96B", a) == base + line * 128 + pos * 16 + b
    # tensors.md: identical to 32B, repeats every 256 B
    for a in range(0, 2048, 8):
        assert pa.swizzle_address("96B", a) == pa.swizzle_address("32B", a) == swizzle96(a)
    info = pa.swizzle_info("96B") if hasattr(pa, "swizzle_info") else None
    if info is not None:
        assert info["repeat"] == 256 and info["span"] == 96


def test_encoder_allows_it_only_for_im2col_wide_mode_w():
    # driver (online cuTensorMapEncodeIm2colWide): "Additionally, CU_TENSOR_MAP_SWIZZLE_96B is
    # supported only when mode is CU_TENSOR_MAP_IM2COL_WIDE_MODE_W."
    tm = wide96(0x10000)
    assert tm.swizzle == pa.Swizzle.B96 and tm.kind == "im2col_w"
    assert pa.TensorMap.from_bytes(bytes(tm)) == tm
    with pytest.raises(pa.InvalidValue, match="only when mode is CU_TENSOR_MAP_IM2COL_WIDE_MODE_W"):
        wide96(0x10000, mode="W128")
    with pytest.raises(pa.InvalidValue, match="only by cuTensorMapEncodeIm2colWide"):
        pa.TensorMap.tiled("f16", 0x10000, [96, 8], [192], [48, 2], swizzle="96B", target="sm_103a")
    with pytest.raises(pa.InvalidValue, match="only by cuTensorMapEncodeIm2colWide"):
        pa.TensorMap.im2col("f16", 0x10000, [96, 9, 7, 4], [192, 1728, 12096], [0, 0], [0, 0], 48, 16,
                            swizzle="96B", target="sm_103a")


def test_target_gate_is_sm_103a():
    # seed tensormap.replace: ".swizzle_mode corresponding to new_val value 4 is supported on
    # following architectures: sm_103a"
    for t in ("sm_90a", "sm_100a", "sm_100f", "sm_103f", "sm_110a", "sm_120a"):
        with pytest.raises(pa.InvalidValue):
            wide96(0x10000, target=t)
    with pytest.raises(pa.InvalidValue, match="96B needs sm_103a; this target is sm_100a"):
        wide96(0x10000, target="sm_100a")
    # a copy on another machine is refused even with a map made for sm_103a
    tm = wide96(0x10000)
    m = pa.Machine(target="sm_100a")
    m.alloc(0x100)
    bar = m.mbarrier(190000).init(1)
    with pytest.raises(pa.IllegalInstruction, match=r"96B swizzle \(.swizzle_mode 4\) needs sm_103a"):
        m.cp_async_bulk_tensor_load(tm, (0, 0, 0, 0), 0, bar, load_mode="im2col::w")


def test_box_size_at_most_96_bytes():
    # seed, restrictions on the 96B swizzle mode: "Box-Size[0] must be less than or equal to 96B."
    wide96(0x10000, cpp=48)
    with pytest.raises(pa.InvalidValue, match="exceeds the 96 B swizzle span"):
        wide96(0x10000, cpp=56)


def test_no_padded_subbyte_types():
    # seed: "The type must not be among following: .b4x16_p64, .b6x16_p32 and .b6p2x16."
    for dt in ("16U4_ALIGN16B", "16U6_ALIGN16B"):
        with pytest.raises(pa.InvalidValue, match="swizzle = 96B is not supported"):
            pa.TensorMap.im2col_wide(dt, 0x10000, [256, 9, 7, 4], [192, 1728, 12096], 0, 0, 128, 16,
                                     mode="W", swizzle="96B", target="sm_103a")


def test_replace_swizzle_mode_4():
    # seed tensormap.replace table: .swizzle_mode new_val 4 = "96B swizzling", sm_103a only
    tm = pa.TensorMap.tiled("f16", 0x10000, [96, 8], [192], [32, 2], swizzle="64B", target="sm_103a")
    with pytest.raises(pa.InvalidValue, match="needs sm_103a; this target is sm_100a"):
        tm.replace("swizzle_mode", 4, target="sm_100a")
    tm.replace("swizzle_mode", 4, target="sm_103a")
    assert tm.swizzle == pa.Swizzle.B96
    tm.replace("swizzle_mode", 2, target="sm_103a")
    assert tm.swizzle == pa.Swizzle.B64
    # seed: "The .swizzle_atomicity must be 16B."
    tm.replace("swizzle_mode", 4, target="sm_103a")
    tm.replace("swizzle_atomicity", 1, target="sm_103a")
    assert not tm.decodes


def test_im2col_w_load_through_96b_map():
    # the column of .im2col::w (load-modes.md section 3) laid out at a 96-byte pitch and
    # swizzled with the 96B table; the model against the pattern written out above.
    m = pa.Machine(target="sm_103a")
    c, w, h, n = DIMS
    x = (np.arange(n * h * w * c, dtype=np.uint32) % 65521).astype(np.uint16).reshape(n, h, w, c)
    g = m.register(x)
    tm = wide96(g.address, cpp=48, ppc=8)
    m.smem[:] = 0xEE
    bar = m.mbarrier(190000).init(1)
    m.cp_async_bulk_tensor_load(tm, (0, 0, 3, 1), 0, bar, load_mode="im2col::w")
    m.run()
    want = ref.im2col_w(x, 1, 3, 0, 48, 0, 8, 0, 1, 0, w - 1).view(np.uint8).reshape(8, 96)
    got = np.zeros((8, 96), np.uint8)
    for r in range(8):
        for b in range(96):
            got[r, b] = m.smem[swizzle96(r * 96 + b)]
    assert (got == want).all()
    assert m.smem[8 * 96] == 0xEE


def test_im2col_w128_copy_refused():
    # seed: "The .load_mode must not be set to .im2col::w::128." A W128 map cannot be encoded
    # with 96B; one edited to it is refused at the copy.
    tm = wide96(0x10000, mode="W128", swizzle="64B", cpp=32)
    raw = bytearray(bytes(tm))
    word = int.from_bytes(raw[120:124], "little") | (1 << 10)   # the model's 96B bit
    raw[8 + 1] &= ~(3 << 5) & 0xFF                              # swizzle field (bits 14:13) = 0
    raw[120:124] = word.to_bytes(4, "little")
    edited = pa.TensorMap.from_bytes(bytes(raw))
    assert edited.swizzle == pa.Swizzle.B96
    m = pa.Machine(target="sm_103a")
    m.alloc(0x100)
    bar = m.mbarrier(190000).init(1)
    with pytest.raises(pa.IllegalInstruction, match="must not be set to .im2col::w::128"):
        m.cp_async_bulk_tensor_load(edited, (0, 0, 0, 0), 0, bar, load_mode="im2col::w::128")
