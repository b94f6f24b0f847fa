"""Functions of a Machine that both engines run (Machine() and Machine(backend="cuda"))."""
import numpy as np

from ptxasync import TensorMap, mapa

BAR, REGION = 0x400, 0x800


def tile_load(m, swizzle="32B", coords=(16, 8)):
    rng = np.random.default_rng(1)
    g = m.register(rng.integers(0, 1 << 16, (64, 64), dtype=np.uint16))
    tm = TensorMap.tiled("u16", g.address, (64, 64), (128,), (16, 8), swizzle=swizzle)
    bar = m.mbarrier(BAR).init(1)
    state = bar.arrive_expect_tx(256)
    m.cp_async_bulk_tensor_load(tm, coords, REGION, bar)
    bar.wait(0)
    return state >> 32, bar.test_wait(0)     # bits 32-63: the barrier's state (golden R9)


def store_and_reduce(m):
    rng = np.random.default_rng(2)
    out = m.register(rng.integers(0, 1000, (32, 32), dtype=np.uint32))
    m.smem[REGION:REGION + 512] = rng.integers(0, 256, 512, dtype=np.uint8)     # before any operation
    tm = TensorMap.tiled("u32", out.address, (32, 32), (128,), (8, 8))
    m.cp_async_bulk_tensor_store(tm, (8, 8), REGION)
    m.cp_reduce_async_bulk_tensor("add", tm, (16, 0), REGION + 256)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)


def bulk_and_cp_async(m):
    rng = np.random.default_rng(3)
    src = m.register(rng.integers(0, 256, 1024, dtype=np.uint8))
    dst = m.alloc(512)
    m.cp_async(REGION, src.address + 16, 16)
    m.cp_async(REGION + 16, src.address + 64, 8, src_size=5)
    m.cp_async_commit_group()
    m.cp_async_wait_group(0)
    bar = m.mbarrier(BAR).init(1)
    bar.arrive_expect_tx(96)
    m.cp_async_bulk(REGION + 128, src.address + 256, 96, bar)
    bar.wait(0)
    m.cta(0).write(REGION + 512, np.arange(64, dtype=np.uint8))
    m.fence_proxy_async()
    m.cp_async_bulk(dst.address + 64, REGION + 512, 64, dst_space="global", src_space="shared::cta")
    m.cp_reduce_async_bulk("add", "u32", dst.address + 256, REGION + 128, 64)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    return bar.try_wait(0)


def cluster(m):
    """4 CTAs: a multicast tensor load from CTA 1 to CTAs 0, 2, 3; st.async from CTA 3
    into CTA 1; a CTA-to-CTA bulk copy from CTA 2 into CTA 0."""
    rng = np.random.default_rng(4)
    g = m.register(rng.integers(0, 256, (16, 64), dtype=np.uint8))
    tm = TensorMap.tiled("u8", g.address, (64, 16), (64,), (32, 4))
    for r in range(4):
        m.cta(r).smem[REGION:REGION + 1024] = rng.integers(0, 256, 1024, dtype=np.uint8)
    bars = [m.cta(r).mbarrier(BAR).init(1) for r in range(4)]
    expect = [128 + 64, 16, 128, 128]
    for bar, e in zip(bars, expect):
        bar.arrive_expect_tx(e)
    m.barrier_cluster()
    me = m.cta(1)
    m.cp_async_bulk_tensor_load(tm, (32, 4), me.addr(REGION), bars[1].addr, cta=1, dst_space="shared::cluster",
                                cta_mask=0b1101)
    three = m.cta(3)
    for k in range(2):
        m.st_async(mapa(three.addr(REGION + 256 + 8 * k), 1), [k + 1, 1000 * k], mapa(three.addr(BAR), 1),
                   type="u32", cta=3)
    two = m.cta(2)
    m.cp_async_bulk(mapa(two.addr(REGION + 512), 0), two.addr(REGION + 128), 64, mapa(two.addr(BAR), 0), cta=2,
                    dst_space="shared::cluster", src_space="shared::cta")
    for bar in bars:
        bar.wait(0)
    m.barrier_cluster()
