"""Cluster programs of every generated form (shared by the cluster tests)."""
import numpy as np

from ptxasync.cuda import Program

REGION, BAR = 0x800, 0x400


def at(rank, off):
    """CTA ``rank``'s shared byte at ``off`` (the Machine's cluster addresses)."""
    return rank << 24 | off


def cluster_setup(prog, expect):
    """Each CTA: its mbarrier at BAR, init(1), arrive.expect_tx(expect[r]); then a cluster barrier."""
    for r in range(prog.ctas):
        prog.mbarrier_init(at(r, BAR), 1)
        prog.mbarrier_arrive_expect_tx(at(r, BAR), expect[r])
    prog.barrier_cluster()


def st_async_program(type="u32", vec=1, weak=False, ctas=2, issuer=0, dst=1, seed=0):
    rng = np.random.default_rng(seed)
    esize = 8 if type.endswith("64") else 4
    prog = Program(smem_bytes=4096, ctas=ctas, smem_fill=[0xA5 + 17 * r for r in range(ctas)])
    cluster_setup(prog, [vec * esize * 2 if r == dst else 0 for r in range(ctas)])
    for k in range(2):
        raw = rng.integers(0, 256, vec * esize, dtype=np.uint8)
        prog.st_async(at(dst, REGION + 16 * k), raw, at(dst, BAR), type=type, cta=issuer, weak=weak)
    prog.mbarrier_wait(at(dst, BAR), 0)
    return prog


def multicast_tile_program(mask=0b1011, ctas=4, issuer=1, seed=0, swizzle="32B"):
    rng = np.random.default_rng(seed)
    prog = Program(smem_bytes=8192, ctas=ctas, smem_fill=[0x11 * (r + 1) for r in range(ctas)])
    g = prog.register(rng.integers(0, 256, (32, 64), dtype=np.uint8))
    tm = prog.tensor_map_tiled(g, dtype="u8", global_dim=(64, 32), global_strides=(64,), box_dim=(32, 4),
                               swizzle=swizzle)
    cluster_setup(prog, [128 if mask >> r & 1 else 0 for r in range(ctas)])
    prog.cp_async_bulk_tensor_load(tm, (32, 5), at(issuer, REGION), at(issuer, BAR), cta=issuer,
                                   dst_space="shared::cluster", cta_mask=mask)
    for r in range(ctas):
        if mask >> r & 1:
            prog.mbarrier_wait(at(r, BAR), 0)
    return prog


def multicast_bulk_program(mask=0b0110, ctas=4, issuer=0, size=96, seed=0):
    rng = np.random.default_rng(seed)
    prog = Program(smem_bytes=4096, ctas=ctas, smem_fill=[0x22 * (r + 1) for r in range(ctas)])
    g = prog.register(rng.integers(0, 256, 512, dtype=np.uint8))
    cluster_setup(prog, [size if mask >> r & 1 else 0 for r in range(ctas)])
    prog.cp_async_bulk(at(issuer, REGION + 32), g + 48, size, at(issuer, BAR), cta=issuer,
                       dst_space="shared::cluster", src_space="global", cta_mask=mask)
    for r in range(ctas):
        if mask >> r & 1:
            prog.mbarrier_wait(at(r, BAR), 0)
    return prog


def every_cluster_program():
    """(name, Program) of every cluster form the generator writes."""
    return [("st.async.u32", st_async_program()),
            ("st.async.weak.v2.f64", st_async_program("f64", 2, True, ctas=4, issuer=3, dst=1)),
            ("st.async.v4.s32 to self", st_async_program("s32", 4, ctas=2, issuer=1, dst=1)),
            ("multicast tensor load", multicast_tile_program()),
            ("multicast bulk copy", multicast_bulk_program()),
            ("CTA to CTA bulk copy", cta_to_cta_program(ctas=4, issuer=2, dst=0)),
            ("CTA to CTA bulk reduction", cta_to_cta_program(reduce=("add", "u32")))]


def cta_to_cta_program(ctas=2, issuer=0, dst=1, size=64, reduce=None, seed=0):
    rng = np.random.default_rng(seed)
    prog = Program(smem_bytes=4096, ctas=ctas)
    for r in range(ctas):
        prog.write_smem(at(r, REGION), rng.integers(0, 256, 256, dtype=np.uint8))
    cluster_setup(prog, [size if r == dst else 0 for r in range(ctas)])
    if reduce:
        prog.cp_reduce_async_bulk(reduce[0], reduce[1], at(dst, REGION + 64), at(issuer, REGION + 128), size,
                                  mbar=at(dst, BAR), cta=issuer, dst_space="shared::cluster")
    else:
        prog.cp_async_bulk(at(dst, REGION + 64), at(issuer, REGION + 128), size, at(dst, BAR), cta=issuer,
                           dst_space="shared::cluster", src_space="shared::cta")
    prog.mbarrier_wait(at(dst, BAR), 0)
    return prog
