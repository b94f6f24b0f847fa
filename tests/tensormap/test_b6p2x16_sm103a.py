"""The sm_103a rules of .b6p2x16 stores (docs/load-modes.md section 5).

Seed (spec/seeds/ptx-data-movement.md, "Restriction on Tensor Copy instructions"): "Following
are the restrictions for sm_103a while using type .b6p2x16 on cp.async.bulk.tensor with the
direction .global.shared::cta: 1. Box-Size[0] must be exactly either of 48B or 96B. 2. The
global memory address must be 16B aligned. 3. Tensor Stride in every dimension must be 16B
aligned. 4. The first coordinate in the tensorCoords argument vector must be a multiple of 64.
5. Tensor-Size[0] must be a multiple of 48B. 6. The following swizzle modes are supported:
None, 128B (With all potential swizzle atomicity values except: 32B with 8B flip), 64B swizzle
with 16B swizzle atomicity."
"""
import numpy as np
import pytest

import ptxasync as pa

import modes_reference as ref

COLS, ROWS = 192, 3             # 192 values = 144 B a row (a multiple of 48 B, not of 96 B)
PITCH = 160                     # 16-byte aligned, not 32


def tensor(m, seed=1):
    rng = np.random.default_rng(seed)
    mem = rng.integers(0, 256, size=16 + ROWS * PITCH, dtype=np.uint8)
    g = m.register(mem)
    return g, g.address + 16    # 16-byte aligned, not 32 (registrations are 256-aligned)


def sm103_map(addr, box0=64, swizzle="64B", target="sm_103a", stride=PITCH, cols=COLS):
    return pa.TensorMap.tiled("16U6_ALIGN16B", addr, [cols, ROWS], [stride], [box0, 2],
                              swizzle=swizzle, target=target)


def test_encoder_takes_the_sm103a_shapes_only_on_sm103a():
    # rules 1, 2, 3, 5, 6: 48-byte box (64 values), 16-byte address and stride, Tensor-Size[0]
    # a multiple of 48B, the 64B swizzle
    sm103_map(0x1010)
    sm103_map(0x1010, box0=128, swizzle="128B")
    sm103_map(0x1010, swizzle="NONE")
    # elsewhere the general rules (5: 96B boxes; 8: 32B alignment; 9: None / 128B)
    with pytest.raises(pa.InvalidValue):
        sm103_map(0x1010, target="sm_100a")
    with pytest.raises(pa.InvalidValue, match="boxDim.0. = 64: 16U6_ALIGN16B needs 128"):
        sm103_map(0x1000, stride=192, cols=256, swizzle="NONE", target="sm_100a")
    # rule 1: 48B or 96B, nothing else
    with pytest.raises(pa.InvalidValue, match="boxDim.0. = 32"):
        sm103_map(0x1010, box0=32, swizzle="NONE")
    # the override is for stores: im2col-wide maps (loads only) keep channelsPerPixel 128
    with pytest.raises(pa.InvalidValue, match="channelsPerPixel = 64"):
        pa.TensorMap.im2col_wide("16U6_ALIGN16B", 0x1000, [256, 9, 7, 4], [192, 1728, 12096], 0, 0,
                                 64, 16, mode="W", swizzle="128B", target="sm_103a")
    # rule 5: "Tensor-Size[0] must be a multiple of 48B" (64 values)
    with pytest.raises(pa.InvalidValue, match="multiple of 64"):
        sm103_map(0x1010, cols=160)


def test_store_with_a_48_byte_box_and_64b_swizzle():
    m = pa.Machine(target="sm_103a")
    g, addr = tensor(m)
    before = g.bytes.copy()
    tm = sm103_map(addr)
    rng = np.random.default_rng(7)
    shared = rng.integers(0, 256, size=(2, 64), dtype=np.uint8)      # pad bits at random
    ref.place(shared, m.smem, 0, 64, 2)                              # 64-byte rows, 64B swizzle
    m.cp_async_bulk_tensor_store(tm, (64, 1), 0)                     # rule 4: 64, not 128
    m.run()
    after = g.bytes
    for j, r in enumerate((1, 2)):
        row = 16 + r * PITCH
        assert (ref.unpack(after[row + 48:row + 96], 6, 64) == shared[j] & 63).all()
        assert (after[row:row + 48] == before[row:row + 48]).all()
        assert (after[row + 96:row + PITCH] == before[row + 96:row + PITCH]).all()
    assert (after[:16 + PITCH] == before[:16 + PITCH]).all()


def test_first_coordinate_multiple_of_64():
    # rule 4: "The first coordinate ... must be a multiple of 64."
    m = pa.Machine(target="sm_103a")
    g, addr = tensor(m)
    tm = sm103_map(addr)
    with pytest.raises(pa.IllegalInstruction, match="not a multiple of 64"):
        m.cp_async_bulk_tensor_store(tm, (32, 0), 0)


def test_other_targets_and_loads_keep_the_general_rules():
    m100 = pa.Machine(target="sm_100a")
    g, addr = tensor(m100)
    tm = sm103_map(addr)
    # the override is sm_103a's: a store elsewhere is refused, naming it
    with pytest.raises(pa.IllegalInstruction, match="needs sm_103a; this machine is sm_100a"):
        m100.cp_async_bulk_tensor_store(tm, (64, 0), 0)
    # and it is for .b6p2x16 stores: a .b6x16_p32 load keeps Box-Size[0] 96B
    m = pa.Machine(target="sm_103a")
    g, addr = tensor(m)
    bar = m.mbarrier(8192).init(1)
    with pytest.raises(pa.InvalidValue, match="boxDim.0. = 128"):
        m.cp_async_bulk_tensor_load(sm103_map(addr), (0, 0), 0, bar)
    # restriction 8 for loads: 32B aligned address (a 128-value map made for sm_103a)
    with pytest.raises(pa.IllegalInstruction, match="32-byte aligned"):
        m.cp_async_bulk_tensor_load(sm103_map(addr, box0=128, swizzle="128B", cols=256, stride=208), (0, 0),
                                    0, bar)
