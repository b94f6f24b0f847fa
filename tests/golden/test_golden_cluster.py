"""Multicast tile loads in a cluster (.multicast::cluster): the recorded
cluster_tile_load cases replayed by the golden runner, and one test per rule of
tests/data/README.md "Cluster families" (C3, C9, C10, C12). Expected bytes come
from plain NumPy slicing of the global array, never from the model."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxasync as p

import testpaths  # noqa: E402
DATA = Path(testpaths.DATA)
REGION, BAR = 0x800, 0x400      # CTA-relative offsets, as in the recorded launches


def test_runner_cluster_tile_load():
    """All 37 public cases pass, none unsupported: the probes too (C9 mask 0,
    C10 bits beyond the cluster, C11 two clusters, C12 mapa'd operands)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(p.__file__)))
    proc = subprocess.run(
        [sys.executable, "-m", "ptxasync.golden", "--json", str(DATA / "cluster_tile_load.jsonl.gz")],
        capture_output=True, text=True, env=env, timeout=120,
        cwd=testpaths.TESTS)   # not the source root
    assert proc.returncode == 0, proc.stdout + proc.stderr
    counts = json.loads(proc.stdout)
    assert counts == {"cluster_tile_load": {"passed": 37, "failed": 0, "unsupported": 0}}


def _cluster(ctas=4, expect_tx=0):
    """ctas CTAs; CTA r's shared memory filled with 0xA0 + r, its mbarrier at BAR
    initialised with count 1 and arrive.expect_tx(expect_tx) (README launch).
    Returns it with a copy of every CTA's shared memory as set up (the barrier's
    8 bytes read 0, observation 14)."""
    m = p.Machine(ctas=ctas, smem_bytes=8 * 1024)
    for c in m.ctas:
        c.smem[:] = 0xA0 + c.rank
        c.mbarrier(BAR).init(1).arrive_expect_tx(expect_tx)
    m.barrier_cluster()        # the inits ordered before another CTA's copy signals them
    return m, [c.smem.copy() for c in m.ctas]


def _tensor(m, rows, cols):
    """A rows x cols uint32 tensor of distinct values in global memory."""
    host = (np.arange(rows * cols, dtype=np.uint32) * 0x01010101 + 0x1234).reshape(rows, cols)
    g = m.alloc(host.nbytes)
    g.view(np.uint32, host.shape)[:] = host
    return g, host


def _untouched(m, before, r):
    return bool((m.cta(r).smem == before[r]).all())


def test_c3_masked_ctas_get_the_box_and_its_tx():
    """C3: every CTA in ctaMask gets the whole box at dstMem's CTA-relative offset
    (out-of-bounds elements zero) and its barrier is credited with the whole box;
    the others, the issuer included when its bit is clear, get nothing and tx 0."""
    box_bytes = 8 * 4 * 4
    m, before = _cluster(expect_tx=2 * box_bytes)       # the phase stays open: tx is visible
    g, host = _tensor(m, 6, 12)
    tm = p.TensorMap.tiled("u32", g.address, [12, 6], [48], [8, 4])
    c0, c1 = 8, 4                               # the box sticks out in both dims
    want = np.zeros((4, 8), dtype=np.uint32)
    want[:6 - c1, :12 - c0] = host[c1:, c0:]
    issuer, mask = 1, 0b1101
    m.cp_async_bulk_tensor_load(tm, [c0, c1], m.cta(issuer).addr(REGION + 256),
                                m.cta(issuer).addr(BAR), cta=issuer, cta_mask=mask)
    m.run()
    for c in m.ctas:
        tx = c.mbarrier(BAR).state["tx"]
        if mask >> c.rank & 1:
            got = c.smem[REGION + 256:REGION + 256 + box_bytes].view(np.uint32).reshape(4, 8)
            assert (got == want).all(), c.rank
            assert tx == box_bytes, c.rank      # 2 * box expected, one box credited
            outside = np.ones(c.smem.size, dtype=bool)
            outside[REGION + 256:REGION + 256 + box_bytes] = False
            assert (c.smem[outside] == before[c.rank][outside]).all(), c.rank
        else:
            assert _untouched(m, before, c.rank) and tx == 2 * box_bytes, c.rank


def test_c3_swizzled_box_is_the_same_in_every_ctas():
    """C3 with observation 2: each masked CTA holds the single-CTA layout, 128B
    swizzle included (byte at a goes to a ^ (((a >> 7) & 7) << 4)), and its phase
    completes with expect_tx = the box bytes."""
    m, _ = _cluster(ctas=2, expect_tx=4 * 128)
    g = m.alloc(8 * 128)
    host = (np.arange(8 * 128) * 7 % 256).astype(np.uint8).reshape(8, 128)
    g.bytes[:] = host.reshape(-1)
    tm = p.TensorMap.tiled("u8", g.address, [128, 8], [128], [128, 4], swizzle="128B")
    a = np.arange(4 * 128)
    want = np.empty(4 * 128, dtype=np.uint8)
    want[a ^ (((a >> 7) & 7) << 4)] = host[2:6].reshape(-1)     # REGION is 1024-aligned
    m.cp_async_bulk_tensor_load(tm, [0, 2], REGION, BAR, cta=0, cta_mask=0b11)
    for c in m.ctas:
        assert c.mbarrier(BAR).try_wait(0), c.rank
        assert bytes(c.smem[REGION:REGION + 512]) == want.tobytes(), c.rank


def test_c9_mask_zero_changes_nothing():
    """C9: ctaMask 0 is no error; no byte changes anywhere and no barrier is
    credited (not even the one of the CTA that dstMem names)."""
    m, before = _cluster(ctas=2, expect_tx=128)
    g, _ = _tensor(m, 4, 8)
    tm = p.TensorMap.tiled("u32", g.address, [8, 4], [32], [8, 4])
    m.cp_async_bulk_tensor_load(tm, [0, 0], m.cta(1).addr(REGION), m.cta(1).addr(BAR),
                                cta=1, cta_mask=0)
    m.run()
    for c in m.ctas:
        assert _untouched(m, before, c.rank) and c.mbarrier(BAR).state["tx"] == 128, c.rank
        assert not c.mbarrier(BAR).try_wait(0)


@pytest.mark.parametrize("ctas,mask", [(2, 0x2000), (2, 0x403), (2, 0x203), (4, 0x1F)])
def test_c10_mask_beyond_the_cluster_is_rejected(ctas, mask):
    """C10: a ctaMask bit at or above the cluster size failed the launch on the
    hardware; the model rejects the instruction at issue, naming the mask."""
    m, before = _cluster(ctas=ctas, expect_tx=128)
    g, _ = _tensor(m, 4, 8)
    tm = p.TensorMap.tiled("u32", g.address, [8, 4], [32], [8, 4])
    with pytest.raises(p.IllegalInstruction, match=f"ctaMask 0x{mask:x}"):
        m.cp_async_bulk_tensor_load(tm, [0, 0], REGION, BAR, cta=0, cta_mask=mask)
    assert m.pending == 0 and all(_untouched(m, before, r) for r in range(ctas))


def test_c12_mapa_operands_do_not_choose_the_destination():
    """C12: dstMem and mbar given as mapa(.., 3) with only bit 2 set: CTA 2 gets
    the box at the same offset with tx credited; CTA 3 gets nothing."""
    m, before = _cluster(expect_tx=128)
    g, host = _tensor(m, 4, 8)
    tm = p.TensorMap.tiled("u32", g.address, [8, 4], [32], [8, 4])
    m.cp_async_bulk_tensor_load(tm, [0, 0], p.mapa(REGION, 3), p.mapa(BAR, 3), cta=0,
                                cta_mask=0b0100)
    m.run()
    assert bytes(m.cta(2).smem[REGION:REGION + 128]) == host.tobytes()
    assert m.cta(2).mbarrier(BAR).try_wait(0)
    for r in (0, 1, 3):
        assert _untouched(m, before, r) and m.cta(r).mbarrier(BAR).state["tx"] == 128, r
