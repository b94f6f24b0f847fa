"""One test per form and per rejection of cp.async, cp.async.bulk, st.async and
st.bulk, each citing the rule (PTX ISA section / sentence, or the golden README
observation where the hardware decides). docs/async-copies.md lists them."""
import numpy as np
import pytest

import ptxasync as p
from ptxasync import mapa

SMEM = 16384


def _machine(ctas=1, policy="in_order", target="sm_90a"):
    m = p.Machine(ctas=ctas, smem_bytes=SMEM, policy=policy, target=target)
    g = m.alloc(4096)
    g.bytes[:] = np.arange(4096, dtype=np.uint32).astype(np.uint8) ^ 0x5A
    return m, g


# --- cp.async (PTX ISA 9.7.9.25.3.1) --------------------------------------------

@pytest.mark.parametrize("cache,size", [("ca", 4), ("ca", 8), ("ca", 16), ("cg", 16)])
def test_cp_async_copies_cp_size_bytes(cache, size):
    """cp.async.{ca,cg}.shared.global [dst], [src], cp-size: cp-size bytes from src to dst
    (cp-size 4, 8, 16; .cg only 16). Golden observation 13."""
    m, g = _machine()
    m.smem[:64] = 0xA5
    m.cp_async(16, g.address + 32, size, cache=cache)
    assert (m.smem[16:16 + size] == 0xA5).all()          # asynchronous: not yet
    m.cp_async_wait_all()
    assert (m.smem[16:16 + size] == g.bytes[32:32 + size]).all()
    assert (m.smem[16 + size:64] == 0xA5).all()


@pytest.mark.parametrize("src_size", [0, 1, 5, 8])
def test_cp_async_src_size_zero_fills(src_size):
    """PTX: src-size bytes are copied; "remaining bytes in destination dst are filled with zeros"."""
    m, g = _machine()
    m.smem[:16] = 0xA5
    m.cp_async(0, g.address, 8, src_size=src_size)
    m.cp_async_wait_all()
    assert list(m.smem[:8]) == list(g.bytes[:src_size]) + [0] * (8 - src_size)


def test_cp_async_ignore_src_writes_zeros():
    """PTX: ignore-src true: "zeros will be copied to destination dst"; false: a normal copy."""
    m, g = _machine()
    m.smem[:32] = 0xA5
    m.cp_async(0, g.address, 16, ignore_src=True)
    m.cp_async(16, g.address, 16, ignore_src=False)
    m.cp_async_wait_all()
    assert (m.smem[:16] == 0).all() and (m.smem[16:32] == g.bytes[:16]).all()


@pytest.mark.parametrize("prefetch", [64, 128, 256, ".L2::128B", "L2::64B"])
def test_cp_async_prefetch_and_cache_hint_are_hints(prefetch):
    """PTX: .level::prefetch_size and .L2::cache_hint are performance hints only."""
    m, g = _machine()
    m.cp_async(0, g.address, 16, cache="cg", prefetch=prefetch, cache_policy=0x12345)
    m.cp_async_wait_all()
    assert (m.smem[:16] == g.bytes[:16]).all()


@pytest.mark.parametrize("kw,exc,match", [
    (dict(cp_size=12), p.InvalidValue, "cp-size 12 is not 4, 8 or 16"),
    (dict(cp_size=8, cache="cg"), p.InvalidValue, "cp.async.cg needs cp-size 16"),
    (dict(cp_size=8, src_size=9), p.InvalidValue, "larger than cp-size"),
    (dict(cp_size=16, prefetch=32), ValueError, "prefetch size"),
    (dict(cp_size=16, cache="cs"), ValueError, "not .ca or .cg"),
    (dict(cp_size=16, src_size=4, ignore_src=True), ValueError, "not both"),
    (dict(cp_size=16, dst=8), p.MisalignedAddress, "dst 0x8 is not 16-byte aligned"),
    (dict(cp_size=8, src_off=4), p.MisalignedAddress, "is not 8-byte aligned"),
    (dict(cp_size=16, dst=SMEM), p.IllegalAddress, "outside"),
    (dict(cp_size=16, src_off=4096), p.IllegalAddress, "illegal global address"),
])
def test_cp_async_rejections(kw, exc, match):
    """PTX cp.async: cp-size in {4, 8, 16}; .cg takes 16; src-size <= cp-size (else undefined);
    prefetch_size in {64B, 128B, 256B}; src-size or ignore-src; operands aligned to the access
    size (Addresses as Operands); ranges inside shared / global memory. Nothing is queued."""
    m, g = _machine()
    dst, src_off = kw.pop("dst", 0), kw.pop("src_off", 0)
    with pytest.raises(exc, match=match):
        m.cp_async(dst, g.address + src_off, kw.pop("cp_size"), **kw)
    assert m.pending == 0


def test_cp_async_dst_is_the_executing_ctas_shared_memory():
    """PTX: dst is .shared{::cta}: another CTA's window is an illegal address."""
    m, g = _machine(ctas=2)
    with pytest.raises(p.IllegalAddress, match="names CTA rank 1"):
        m.cp_async(mapa(0, 1), g.address, 16, cta=0)


def test_cp_async_wait_group_n_leaves_the_n_newest_groups():
    """PTX cp.async.wait_group N: waits "till only N or fewer of the most recent
    cp.async-groups are pending and all the prior cp.async-groups ... are complete"."""
    m, g = _machine()
    for k in range(3):
        m.cp_async(16 * k, g.address + 16 * k, 16)
        m.cp_async_commit_group()
    m.cp_async_wait_group(1)
    assert (m.smem[:32] == g.bytes[:32]).all()
    assert (m.smem[32:48] == 0).all() and m.pending == 1
    m.cp_async_wait_group(0)
    assert (m.smem[32:48] == g.bytes[32:48]).all()


def test_cp_async_groups_are_per_thread():
    """PTX cp.async.commit_group: "creates a new cp.async-group per thread"; a wait
    of one thread does not wait for another thread's copies."""
    m, g = _machine()
    m.cp_async(0, g.address, 16, thread=0)
    m.cp_async(16, g.address + 16, 16, thread=1)
    m.cp_async_wait_all(thread=1)
    assert (m.smem[16:32] == g.bytes[16:32]).all() and (m.smem[:16] == 0).all()
    assert m.pending == 1


def test_cp_async_uncommitted_copies_are_not_waited_for():
    """PTX: wait_group waits for committed groups; an empty group is trivially complete;
    wait_all commits first."""
    m, g = _machine()
    m.cp_async_commit_group()           # empty group
    m.cp_async(0, g.address, 16)
    with pytest.raises(p.Hazard, match=r"\[wait-uncommitted\]"):   # the wait covers no copy
        m.cp_async_wait_group(0)
    assert m.pending == 1
    m.cp_async_wait_all()
    assert m.pending == 0 and (m.smem[:16] == g.bytes[:16]).all()


# --- cp.async.mbarrier.arrive (spec/mbarrier.md; golden M1-M5) ---------------------

def test_cp_async_mbarrier_arrive_noinc_is_one_arrival_after_the_copies():
    """.noinc: the arrive-on counts as one arrival once every earlier cp.async of the
    thread has completed (golden M2); try_wait completes those copies first."""
    m, g = _machine()
    bar = m.mbarrier(4096).init(1)
    m.cp_async(0, g.address, 16)
    m.cp_async_mbarrier_arrive(bar, noinc=True)
    assert bar.test_wait(0) is False and m.pending == 2
    assert bar.try_wait(0) is True
    assert (m.smem[:16] == g.bytes[:16]).all()


def test_cp_async_mbarrier_arrive_without_noinc_has_no_net_arrival():
    """Without .noinc "the pending count ... is incremented by 1 prior to the asynchronous
    arrive-on": +1 while copies are pending, back when they complete (golden M3)."""
    m, g = _machine()
    bar = m.mbarrier(4096).init(1)
    m.cp_async(0, g.address, 16)
    m.cp_async_mbarrier_arrive(bar)
    assert bar.state["pending"] == 2
    m.run()
    assert bar.state["pending"] == 1 and bar.test_wait(0) is False
    bar.arrive()
    assert bar.test_wait(0) is True


def test_cp_async_mbarrier_arrive_waits_only_for_earlier_copies():
    """The arrive-on follows "all prior cp.async operations initiated by the executing
    thread": not later ones, not other threads'."""
    m, g = _machine()
    bar = m.mbarrier(4096).init(1)
    m.cp_async(0, g.address, 16, thread=0)
    m.cp_async(16, g.address + 16, 16, thread=1)
    m.cp_async_mbarrier_arrive(bar, thread=0, noinc=True)
    m.cp_async(32, g.address + 32, 16, thread=0)
    assert bar.try_wait(0) is True
    assert (m.smem[:16] == g.bytes[:16]).all()
    assert (m.smem[16:48] == 0).all() and m.pending == 2


def test_cp_async_mbarrier_arrive_with_nothing_pending_arrives_at_once():
    """Golden M4: with no copy outstanding, the next mbarrier operation already sees .noinc's arrival."""
    m, _ = _machine()
    bar = m.mbarrier(4096).init(1)
    m.cp_async_mbarrier_arrive(bar, noinc=True)
    assert bar.test_wait(0) is True


@pytest.mark.parametrize("kw,match", [(dict(space="shared::cluster"), "no .shared::cluster form"),
                                      (dict(type="b32"), "not .b32")])
def test_cp_async_mbarrier_arrive_forms_ptxas_rejects(kw, match):
    """Golden M1: ptxas rejects .shared::cluster and .b32."""
    m, _ = _machine()
    with pytest.raises(ValueError, match=match):
        m.cp_async_mbarrier_arrive(m.mbarrier(4096).init(1), **kw)


def test_cp_async_mbarrier_arrive_on_uninitialised_barrier_is_a_hazard():
    """mbarrier operations on an object that is not initialised are undefined (PTX ISA)."""
    m, _ = _machine()
    with pytest.raises(p.Hazard, match="not initialised"):
        m.cp_async_mbarrier_arrive(4096)


# --- cp.async.bulk (PTX ISA 9.7.9.25.4.1) ----------------------------------------------

def test_bulk_global_to_shared_cta():
    """.shared::cta.global.mbarrier::complete_tx::bytes: the bytes, then complete-tx of size."""
    m, g = _machine()
    bar = m.mbarrier(8192).init(1)
    bar.arrive_expect_tx(64)
    m.cp_async_bulk(1024, g.address + 128, 64, bar)
    assert (m.smem[1024:1088] == 0).all()
    assert bar.try_wait(0) is True
    assert (m.smem[1024:1088] == g.bytes[128:192]).all()


def test_bulk_global_to_shared_cta_must_be_the_executing_cta():
    """PTX: "When the destination of the copy is .shared::cta the destination address has
    to be in the shared memory of the executing CTA"."""
    m, g = _machine(ctas=2)
    with pytest.raises(p.IllegalAddress, match="names CTA rank 1"):
        m.cp_async_bulk(mapa(1024, 1), g.address, 16, mapa(8192, 1))


def test_bulk_global_to_shared_cluster_multicast():
    """.multicast::cluster: each CTA in ctaMask gets the bytes at dst's CTA-relative offset
    and its mbarrier at mbar's offset gets complete-tx of size; the issuer need not be in
    the mask; unmasked CTAs are untouched (golden C4)."""
    m, g = _machine(ctas=4)
    bars = [m.cta(r).mbarrier(8192).init(1) for r in range(4)]
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    m.cp_async_bulk(mapa(1024, 0), g.address, 32, bars[0], cta=0, dst_space="shared::cluster",
                    cta_mask=0b1010)
    assert [b.test_wait(0) for b in bars] == [False, False, False, False]   # (a poll: no thread blocks)
    m.run()
    for r in range(4):
        got = m.cta(r).smem[1024:1056]
        assert (got == g.bytes[:32]).all() if r in (1, 3) else (got == 0).all()
        assert bars[r].state["tx"] == (-32 if r in (1, 3) else 0)


def test_bulk_multicast_mask_zero_reaches_nothing():
    """Golden C9: ctaMask 0: no error, no byte changed, no mbarrier credited."""
    m, g = _machine(ctas=2)
    m.cta(0).mbarrier(8192).init(1)
    m.cp_async_bulk(mapa(1024, 0), g.address, 16, mapa(8192, 0), dst_space="shared::cluster", cta_mask=0)
    assert m.pending == 0


def test_bulk_multicast_mask_beyond_the_cluster_faults():
    """Golden C10: a ctaMask bit at or above the cluster size failed the launch."""
    m, g = _machine(ctas=2)
    with pytest.raises(p.IllegalInstruction, match="ctaMask 0x4"):
        m.cp_async_bulk(mapa(1024, 0), g.address, 16, mapa(8192, 0), dst_space="shared::cluster", cta_mask=4)


def test_bulk_shared_cta_to_shared_cluster():
    """.shared::cluster.shared::cta: the destination CTA gets the bytes and its mbarrier
    complete-tx of size; the issuer's barrier sees nothing (golden C5)."""
    m, _ = _machine(ctas=2)
    bars = [m.cta(r).mbarrier(8192).init(1) for r in range(2)]
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    m.cta(0).smem[256:320] = np.arange(64, dtype=np.uint8)
    m.cp_async_bulk(mapa(2048, 1), mapa(256, 0), 64, mapa(8192, 1), cta=0,
                    dst_space="shared::cluster", src_space="shared::cta")
    m.run()
    assert (m.cta(1).smem[2048:2112] == np.arange(64)).all()
    assert bars[1].state["tx"] == -64 and bars[0].state["tx"] == 0


def test_bulk_shared_to_cluster_mbar_of_another_cta_credits_the_destination():
    """Golden C15: with mbar naming another CTA than dstMem, the destination CTA's barrier
    at that offset was credited (the ISA asks for the same CTA; the hardware decides)."""
    m, _ = _machine(ctas=2)
    bars = [m.cta(r).mbarrier(8192).init(1) for r in range(2)]
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    m.cp_async_bulk(mapa(2048, 1), mapa(256, 0), 16, mapa(8192, 0), cta=0,
                    dst_space="shared::cluster", src_space="shared::cta")
    m.run()
    assert bars[1].state["tx"] == -16 and bars[0].state["tx"] == 0


def test_bulk_shared_to_cluster_self_behaves_as_remote():
    """Golden C14: the issuing CTA as destination through mapa behaved as a remote one."""
    m, _ = _machine(ctas=2)
    bar = m.cta(0).mbarrier(8192).init(1)
    m.cta(0).smem[256:272] = 7
    m.cp_async_bulk(mapa(2048, 0), mapa(256, 0), 16, bar, dst_space="shared::cluster",
                    src_space="shared::cta")
    m.run()
    assert (m.cta(0).smem[2048:2064] == 7).all() and bar.state["tx"] == -16


def test_bulk_shared_to_global_bulk_group():
    """.global.shared::cta.bulk_group: completes through the thread's bulk async-group."""
    m, g = _machine()
    m.smem[512:560] = 9
    m.cp_async_bulk(g.address + 64, 512, 48, dst_space="global", src_space="shared::cta")
    m.cp_async_bulk_commit_group()
    assert (g.bytes[64:112] != 9).any()
    m.cp_async_bulk_wait_group(0)
    assert (g.bytes[64:112] == 9).all()


def test_bulk_wait_group_read_lets_the_source_be_reused():
    """PTX cp.async.bulk.wait_group.read: waits until the sources have been read; the
    writes may come later, with the bytes read (two-step store)."""
    m, g = _machine()
    m.smem[512:528] = 1
    m.cp_async_bulk(g.address, 512, 16, dst_space="global", src_space="shared::cta")
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0, read=True)
    assert m.pending == 1
    m.smem[512:528] = 2
    m.cp_async_bulk_wait_group(0)
    assert (g.bytes[:16] == 1).all()


def test_tensor_store_wait_group_read_lets_the_source_be_reused():
    """The same two steps for cp.async.bulk.tensor stores (PTX: a bulk async operation
    reads its source, then writes its destination)."""
    m, g = _machine()
    tm = p.TensorMap.tiled("u8", g.address, [64, 64], [64], [32, 4])
    m.smem[1024:1024 + 128] = 3
    m.cp_async_bulk_tensor_store(tm, [0, 0], 1024)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0, read=True)
    m.smem[1024:1024 + 128] = 4
    m.cp_async_bulk_wait_group(0)
    assert (g.bytes[:32] == 3).all() and (g.bytes[64:96] == 3).all()


def test_bulk_cp_mask_on_a_target_that_has_it():
    """.cp_mask: "The i-th bit in the 16-bit wide byteMask operand specifies whether the i-th
    byte of each 16-byte wide chunk of source data is copied"; needs sm_100 or higher."""
    m, g = _machine(target="sm_100a")
    before = g.bytes[:32].copy()
    m.smem[:32] = 0xEE
    m.cp_async_bulk(g.address, 0, 32, dst_space="global", src_space="shared::cta", byte_mask=0x8001)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    for c in (0, 16):
        for i in range(16):
            assert g.bytes[c + i] == (0xEE if i in (0, 15) else before[c + i])


def test_bulk_cp_mask_needs_sm_100():
    """PTX: "Support for .cp_mask qualifier requires sm_100 or higher"."""
    m, g = _machine()
    with pytest.raises(p.IllegalInstruction, match="cp_mask needs sm_100 or later; this machine is sm_90a"):
        m.cp_async_bulk(g.address, 0, 16, dst_space="global", src_space="shared::cta", byte_mask=1)


@pytest.mark.parametrize("size,dst,src,exc,match", [
    (24, 1024, 0, p.InvalidValue, "not a multiple of 16"),
    (16, 1032, 0, p.MisalignedAddress, "dstMem 0x408 is not 16-byte aligned"),
    (16, 1024, 8, p.MisalignedAddress, "srcMem .* is not 16-byte aligned"),
    (32, SMEM - 16, 0, p.IllegalAddress, "outside"),
    (32, 1024, 4096 - 16, p.IllegalAddress, "runs past the end of the buffer"),
])
def test_bulk_rejections(size, dst, src, exc, match):
    """PTX cp.async.bulk: "size must be a multiple of 16" (an H200 copied size rounded down,
    golden C13: refused here); "dstMem and srcMem must be aligned to 16 bytes" (C16:
    cudaErrorMisalignedAddress); the ranges must not overflow their memory."""
    m, g = _machine()
    m.mbarrier(8192).init(1)
    with pytest.raises(exc, match=match):
        m.cp_async_bulk(dst, g.address + src, size, 8192)
    assert m.pending == 0 and (m.smem[:SMEM - 64] == 0).all()


def test_bulk_size_zero_at_the_end_of_the_buffer_is_an_empty_range():
    """PTX cp.async.bulk: "[srcMem, srcMem + size - 1] must not overflow the source memory
    space": with size 0 the range is empty, so a source at the buffer's end is inside it,
    on the global side as on the shared side. Nothing is written; the barrier gets 0 bytes."""
    m, g = _machine()
    bar = m.mbarrier(8192)
    bar.init(1)
    m.cp_async_bulk(SMEM - 32, g.address + 4096, 0, 8192)
    m.run()
    assert (m.smem[:SMEM - 64] == 0).all()
    with pytest.raises(p.IllegalAddress, match="no registered global buffer"):
        m.cp_async_bulk(1024, g.address + 4096 + 16, 0, 8192)


def test_bulk_size_rejection_names_what_the_hardware_did():
    """Golden C13: size 88 copied 80 bytes on the H200; the message says so."""
    m, g = _machine()
    m.mbarrier(8192).init(1)
    with pytest.raises(p.InvalidValue, match="first 80 bytes"):
        m.cp_async_bulk(1024, g.address, 88, 8192)


@pytest.mark.parametrize("kw,exc,match", [
    (dict(dst_space="global", src_space="global"), ValueError, "no .global.global direction"),
    (dict(dst_space="shared::cta", src_space="global", cta_mask=1), p.InvalidValue, "multicast"),
    (dict(dst_space="shared::cluster", src_space="shared::cta", cache_policy=1), p.InvalidValue,
     "cache_hint needs a .global"),
])
def test_bulk_forms_the_isa_lacks(kw, exc, match):
    """PTX cp.async.bulk syntax: four directions; .multicast::cluster only for
    .shared::cluster.global; .L2::cache_hint only with a .global side."""
    m, g = _machine()
    m.mbarrier(8192).init(1)
    with pytest.raises(exc, match=match):
        m.cp_async_bulk(1024, g.address if kw["src_space"] == "global" else 0, 16, 8192, **kw)


def test_bulk_mbarrier_or_group_operand():
    """PTX: the mbarrier forms need [mbar]; the .bulk_group form takes none."""
    m, g = _machine()
    with pytest.raises(ValueError, match="pass mbar"):
        m.cp_async_bulk(1024, g.address, 16)
    with pytest.raises(ValueError, match="takes no mbar"):
        m.cp_async_bulk(g.address, 0, 16, 8192, dst_space="global", src_space="shared::cta")


def test_bulk_prefetch_l2():
    """cp.async.bulk.prefetch.L2.global [srcMem], size: size a multiple of 16, srcMem
    16-byte aligned; a hint with no visible effect."""
    m, g = _machine()
    m.cp_async_bulk_prefetch_l2(g.address, 256, cache_policy=5)
    assert m.pending == 0 and (m.smem == 0).all()
    with pytest.raises(p.InvalidValue, match="multiple of 16"):
        m.cp_async_bulk_prefetch_l2(g.address, 20)
    with pytest.raises(p.MisalignedAddress, match="16-byte aligned"):
        m.cp_async_bulk_prefetch_l2(g.address + 8, 16)
    with pytest.raises(p.IllegalAddress):
        m.cp_async_bulk_prefetch_l2(g.address + 4096, 16)


# --- st.async (PTX ISA 9.7.9.12; golden C7, C15-C17) -----------------------------------

ST_TYPES = {"b32": np.uint32, "u32": np.uint32, "s32": np.int32, "f32": np.float32,
            "b64": np.uint64, "u64": np.uint64, "s64": np.int64, "f64": np.float64}


@pytest.mark.parametrize("type", sorted(ST_TYPES))
@pytest.mark.parametrize("vec", [1, 2, 4])
def test_st_async_every_type_and_vector(type, vec):
    """st.async.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type: the register
    bytes land unchanged in the destination CTA and its mbarrier gets complete-tx of the
    bytes stored (C7); .v4 only for 32-bit types (C17)."""
    dt = np.dtype(ST_TYPES[type])
    m, _ = _machine(ctas=2)
    bars = [m.cta(r).mbarrier(8192).init(1) for r in range(2)]
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    vals = np.arange(1, vec + 1).astype(dt)
    if vec * dt.itemsize > 16:
        with pytest.raises(ValueError, match="128-bit limit"):
            m.st_async(mapa(1024, 1), vals, mapa(8192, 1), type=type)
        return
    m.st_async(mapa(1024, 1), vals, mapa(8192, 1), type=type, weak=True)
    m.run()
    assert bytes(m.cta(1).smem[1024:1024 + vals.nbytes]) == vals.tobytes()
    assert bars[1].state["tx"] == -vals.nbytes and bars[0].state["tx"] == 0


def test_st_async_keeps_nan_payloads():
    """Golden C7: f32/f64 NaN payloads are stored unchanged (raw register bytes)."""
    m, _ = _machine(ctas=2)
    m.cta(1).mbarrier(8192).init(1)
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    raw = np.array([0x7FA00001], dtype="<u4").view(np.uint8)
    m.st_async(mapa(1024, 1), raw, mapa(8192, 1), type="f32")
    m.run()
    assert bytes(m.cta(1).smem[1024:1028]) == raw.tobytes()


def test_st_async_mbar_in_another_cta_credits_the_destination():
    """Golden C15: the destination CTA's barrier at mbar's offset is credited."""
    m, _ = _machine(ctas=2)
    bars = [m.cta(r).mbarrier(8192).init(1) for r in range(2)]
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    m.st_async(mapa(1024, 1), 5, mapa(8192, 0), type="u32")
    m.run()
    assert bars[1].state["tx"] == -4 and bars[0].state["tx"] == 0


@pytest.mark.parametrize("type", ["b16", "u8", "f16", "bf16", "s16"])
def test_st_async_types_ptxas_rejects(type):
    """Golden C17: 8/16-bit integer types and .f16/.bf16 are rejected by ptxas."""
    m, _ = _machine(ctas=2)
    with pytest.raises(ValueError, match=f"no .{type} form"):
        m.st_async(mapa(1024, 1), 1, mapa(8192, 1), type=type)


def test_st_async_misaligned_faults():
    """Golden C16: st.async.v2.s32 at an address 4 mod 8 raised cudaErrorMisalignedAddress."""
    m, _ = _machine(ctas=2)
    m.cta(1).mbarrier(8192).init(1)
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    with pytest.raises(p.MisalignedAddress, match="not 8-byte aligned"):
        m.st_async(mapa(1028, 1), [1, 2], mapa(8192, 1), type="s32")
    assert m.pending == 0


def test_st_async_needs_a_cluster():
    """PTX st.async: "The number of CTAs within the cluster is strictly greater than one"."""
    m, _ = _machine(ctas=1)
    m.mbarrier(8192).init(1)
    with pytest.raises(p.InvalidValue, match="more than one CTA"):
        m.st_async(1024, 1, 8192)


def test_st_async_vector_length():
    """PTX st.async .vec = {.v2, .v4}: one, two or four elements."""
    m, _ = _machine(ctas=2)
    with pytest.raises(ValueError, match="1, 2 .* or 4"):
        m.st_async(mapa(1024, 1), [1, 2, 3], mapa(8192, 1))


# --- st.async.release.global (PTX ISA 9.7.9.12, the .release form; sm_100, PTX ISA 8.7) ---------

@pytest.mark.parametrize("type,value,raw", [
    ("b8", 0xAB, b"\xab"), ("u8", 7, b"\x07"), ("s8", -2, b"\xfe"),
    ("b16", 0xBEEF, b"\xef\xbe"), ("u16", 1, b"\x01\x00"), ("s16", -1, b"\xff\xff"),
    ("b32", 0x01020304, b"\x04\x03\x02\x01"), ("u32", 5, b"\x05\0\0\0"), ("s32", -3, b"\xfd\xff\xff\xff"),
    ("f32", 1.0, b"\x00\x00\x80\x3f"), ("b64", 2**63, b"\0" * 7 + b"\x80"), ("u64", 9, b"\x09" + b"\0" * 7),
    ("s64", -1, b"\xff" * 8), ("f64", -2.0, b"\0" * 7 + b"\xc0"),
])
def test_st_async_release_global_every_type(type, value, raw):
    """PTX st.async{.mmio}.release.scope{.global}.type [a], b: .type = .b8 .b16 .b32 .b64 .u8 .u16
    .u32 .u64 .s8 .s16 .s32 .s64 .f32 .f64; "a release store to global memory"; with no
    completion mechanism "the completion of the store synchronizes with the end of the CTA":
    the bytes are there once the CTA exits, and nothing is reported as never waited for."""
    m, g = _machine(target="sm_100a")
    before = bytes(g.bytes[16:32])
    m.st_async_release(g.address + 16, value, type=type)
    assert bytes(g.bytes[16:32]) == before and m.pending == 1     # asynchronous: not yet
    (op,) = m.pending_ops()
    assert op.kind == "st.async.release.global" and op.tracked_by is None
    assert repr(op).endswith("tracked by nothing: done by the end of the CTA>")
    assert op.destination == {"space": "global", "address": g.address + 16, "nbytes": len(raw)}
    m.finish()                                                   # the CTA exits: done, no hazard
    assert bytes(g.bytes[16:16 + len(raw)]) == raw and bytes(g.bytes[16 + len(raw):32]) == before[len(raw):]


def test_st_async_release_global_is_not_waited_by_groups():
    """It has no completion mechanism: no mbarrier, no bulk or cp.async group covers it; run()
    (and so the CTA's end) completes it. .scope .sys and .mmio (which needs .sys) are accepted."""
    m, g = _machine(target="sm_100a")
    m.st_async_release(g.address, 0x11223344, scope="sys", mmio=True)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    m.cp_async_wait_all()
    assert m.pending == 1
    m.run()
    assert m.pending == 0 and bytes(g.bytes[:4]) == b"\x44\x33\x22\x11"


def test_st_async_release_global_needs_sm_100():
    """PTX st.async, Target ISA Notes: ".mmio qualifier, .release semantics, .global state space,
    and .scope qualifier require sm_100 or higher" (PTX ISA 8.7): sm_90a refuses the form,
    naming the targets that have it."""
    m, g = _machine(target="sm_90a")
    with pytest.raises(p.IllegalInstruction,
                       match=r"st.async.release.global .* needs sm_100 or later \(PTX ISA 8.7\); this machine is sm_90a"):
        m.st_async_release(g.address, 1)
    assert m.pending == 0


@pytest.mark.parametrize("kw,exc,match", [
    (dict(mmio=True), p.InvalidValue, r"mmio.release needs .scope .sys"),
    (dict(scope="cluster"), ValueError, r"\.gpu or \.sys, not \.cluster"),
    (dict(type="f16"), ValueError, "no .f16 form"),
    (dict(type="u32", value=[1, 2]), ValueError, "no vector form"),
    (dict(type="u8", value=256), ValueError, "out of range"),
    (dict(type="u32", off=2), p.MisalignedAddress, "not 4-byte aligned"),
    (dict(type="u64", off=4), p.MisalignedAddress, "not 8-byte aligned"),
    (dict(type="u32", off=4096), p.IllegalAddress, "no registered global buffer holds it"),
])
def test_st_async_release_global_rejections(kw, exc, match):
    """PTX st.async: "If .mmio is specified, .scope must be .sys"; .scope = {.gpu, .sys}; the
    .type list; no .vec in the release form; the register holds the value exactly; Addresses
    as Operands (aligned to the access size); .global: the address must be global memory
    (outside the .global window it is undefined: refused)."""
    m, g = _machine(target="sm_100a")
    before = bytes(g.bytes)
    off = kw.pop("off", 0)
    with pytest.raises(exc, match=match):
        m.st_async_release(g.address + off, kw.pop("value", 1), **kw)
    assert m.pending == 0 and bytes(g.bytes) == before


# --- st.bulk (PTX ISA 9.7.9.13) -----------------------------------------------------------

def test_st_bulk_zeroes_on_sm_100():
    """st.bulk.weak.shared::cta [a], size, 0: initialises size bytes to zero (sm_100+)."""
    m, _ = _machine(target="sm_100a")
    m.smem[:] = 0xFF
    m.st_bulk(64, 128)
    assert (m.smem[64:192] == 0).all() and (m.smem[:64] == 0xFF).all() and (m.smem[192:] == 0xFF).all()


@pytest.mark.parametrize("kw,exc,match", [
    (dict(target="sm_90a", size=64), p.IllegalInstruction, "st.bulk needs sm_100 or later; this machine is sm_90a"),
    (dict(size=12), p.InvalidValue, "not a multiple of 8"),
    (dict(size=16777224), p.InvalidValue, "larger than 16777216"),
    (dict(size=64, initval=1), p.InvalidValue, "the only value allowed is 0"),
    (dict(size=SMEM), p.IllegalAddress, "outside"),
])
def test_st_bulk_rejections(kw, exc, match):
    """PTX st.bulk: "Requires sm_100 or higher"; "size must be a multiple of 8"; "The maximum
    value of size operand can be 16777216"; initval "The only numeric value allowed ... is 0";
    the range inside the CTA's shared memory."""
    m, _ = _machine(target=kw.pop("target", "sm_100a"))
    m.smem[:] = 0xFF
    with pytest.raises(exc, match=match):
        m.st_bulk(64, **kw)
    assert (m.smem == 0xFF).all()


@pytest.mark.parametrize("value,type", [(-1, "u32"), (2**32, "b32"), (2**31, "s32"), (1.5, "u64"), ("x", "u32")])
def test_st_async_values_the_register_cannot_hold(value, type):
    """st.async stores the .type register b: a value it cannot hold exactly is refused,
    never truncated (.b types take either sign)."""
    m, _ = _machine(ctas=2)
    m.cta(1).mbarrier(8192).init(1)
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    with pytest.raises(ValueError, match="st.async"):
        m.st_async(mapa(1024, 1), value, mapa(8192, 1), type=type)
    assert m.pending == 0


@pytest.mark.parametrize("swizzle,offset", [("128B", 1024), ("128B", 3072), ("64B", 5120), ("32B", 512)])
def test_swizzled_tensor_store_after_read_matches_a_direct_store(swizzle, offset):
    """The source read of a tensor store keeps the swizzle of the absolute shared address
    (golden observation 2): wait_group.read then wait_group writes what a direct store writes."""
    out = []
    for read_first in (False, True):
        m, g = _machine()
        g.bytes[:] = 0
        tm = p.TensorMap.tiled("u8", g.address, [256, 8], [256], [64 if swizzle == "64B" else 32, 8],
                               swizzle=swizzle)
        m.smem[:] = np.arange(SMEM, dtype=np.uint32).astype(np.uint8)
        m.cp_async_bulk_tensor_store(tm, [32, 0], offset)
        m.cp_async_bulk_commit_group()
        if read_first:
            m.cp_async_bulk_wait_group(0, read=True)
            m.smem[:] = 0xEE
        m.cp_async_bulk_wait_group(0)
        out.append(bytes(g.bytes))
    assert out[0] == out[1] and out[0] != bytes(4096)


@pytest.mark.parametrize("call", [
    lambda m, g: m.cp_async(0, g.address, 16, cta=2),
    lambda m, g: m.cp_async_commit_group(cta=2),
    lambda m, g: m.cp_async_wait_group(0, cta=2),
    lambda m, g: m.cp_async_wait_all(cta=2),
    lambda m, g: m.cp_async_mbarrier_arrive(8192, cta=2),
    lambda m, g: m.cp_async_bulk(mapa(1024, 2), g.address, 16, mapa(8192, 2), cta=2),
    lambda m, g: m.cp_async_bulk(mapa(1024, 2), g.address, 16, mapa(8192, 0), dst_space="shared::cluster"),
    lambda m, g: m.cp_async_bulk_prefetch_l2(g.address, 16, cta=2),
    lambda m, g: m.st_async(mapa(1024, 2), 1, mapa(8192, 2)),
    lambda m, g: m.st_bulk(0, 16, cta=2),
])
def test_ranks_outside_the_cluster_are_refused(call):
    """A CTA rank (issuer or address) outside the cluster is an error naming it, never a crash."""
    m, g = _machine(ctas=2, target="sm_100a")
    for r in range(2):
        m.cta(r).mbarrier(8192).init(1)
    with pytest.raises((p.InvalidValue, p.IllegalAddress), match="outside the cluster"):
        call(m, g)
    assert m.pending == 0
