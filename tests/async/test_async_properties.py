"""Property tests: cp.async and cp.async.bulk programs through the model against
tests/async_reference.py (a separate, slow statement of the same rules), under
every completion policy. Expected bytes come from the reference only."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxasync as p

import async_reference as ref  # noqa: E402

SMEM = 8192
GBYTES = 4096
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
POLICIES = ["immediate", "in_order", "reverse", "random"]
KIND = {"value": p.InvalidValue, "align": p.MisalignedAddress, "address": p.IllegalAddress,
        "instruction": p.IllegalInstruction}


def _pattern(n, seed):
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


@st.composite
def cp_programs(draw):
    """A program of cp.async copies by up to 3 threads into distinct 16-byte
    slots, with commits and waits interleaved."""
    steps = []
    slots = draw(st.permutations(range(SMEM // 16)))
    for i in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(["copy", "copy", "copy", "commit", "wait"]))
        t = draw(st.integers(0, 2))
        if kind == "copy":
            size = draw(st.sampled_from([4, 8, 16]))
            operand = draw(st.sampled_from(["none", "srcsize", "ignore"]))
            src = draw(st.integers(0, GBYTES // size - 1)) * size
            steps.append(("copy", t, 16 * slots[i] + draw(st.integers(0, 16 // size - 1)) * size, src, size,
                          operand, draw(st.integers(0, size)), draw(st.booleans()) and size == 16))
        elif kind == "commit":
            steps.append(("commit", t))
        else:
            steps.append(("wait", t, draw(st.integers(0, 3))))
    return steps


@settings(max_examples=60, **SETTINGS)
@given(prog=cp_programs(), policy=st.sampled_from(POLICIES), seed=st.integers(0, 2**32))
def test_cp_async_programs_match_the_reference(prog, policy, seed):
    """PTX cp.async / commit_group / wait_group: after each wait_group N of a thread,
    exactly that thread's copies in all but its N newest groups have landed
    (src-size bytes, then zeros); nothing else changes what the thread may read.
    With every copy waited for, shared memory equals the reference's."""
    # random programs may wait before committing (a hazard): collected, not raised
    m = p.Machine(smem_bytes=SMEM, policy=policy, seed=seed, hazards="report")
    g = m.register(_pattern(GBYTES, seed), address=ref.GBASE)
    w = ref.World(1, SMEM, GBYTES)
    w.glob[:] = bytes(g.bytes)
    for s in prog:
        if s[0] == "copy":
            _, t, dst, src, size, operand, src_size, cg = s
            kw = {"src_size": src_size} if operand == "srcsize" else \
                {"ignore_src": True} if operand == "ignore" else {}
            w.cp_async(t, dst, ref.GBASE + src, size, cg=cg, **kw)
            m.cp_async(dst, ref.GBASE + src, size, thread=t, cache="cg" if cg else "ca", **kw)
        elif s[0] == "commit":
            w.commit(s[1])
            m.cp_async_commit_group(thread=s[1])
        else:
            _, t, n = s
            before = list(w.pending)
            w.wait_group(t, n)
            m.cp_async_wait_group(n, thread=t)
            for op in before:
                if op not in w.pending:   # done by this wait: its bytes are there
                    d, size = op["dst"], op["data_src"][2]
                    assert bytes(m.smem[d:d + size]) == bytes(w.smem[0][d:d + size])

    for t in range(3):
        w.commit(t)
        w.wait_group(t, 0)
        m.cp_async_wait_all(thread=t)
    assert m.pending == 0
    assert bytes(m.smem) == bytes(w.smem[0])


@st.composite
def bulk_programs(draw):
    """Bulk copies in a cluster of 2-4 CTAs: sources in the low half of each
    memory, destinations in distinct 16-byte-aligned slots of the high half."""
    nctas = draw(st.integers(2, 4))
    ops = []
    nslots = (SMEM // 2) // 256
    gslots = (GBYTES // 2) // 256
    used = set()
    for _ in range(draw(st.integers(1, 12))):
        direction = draw(st.sampled_from(["g2s_cta", "g2s_cluster", "s2s", "s2g"]))
        issuer = draw(st.integers(0, nctas - 1))
        size = 16 * draw(st.integers(1, 16))
        slot = draw(st.integers(0, (gslots if direction == "s2g" else nslots) - 1))
        if (direction == "s2g", slot) in used:
            continue
        used.add((direction == "s2g", slot))
        if direction == "s2g":
            dst = ref.GBASE + GBYTES // 2 + 256 * slot
        else:
            dst = SMEM // 2 + 256 * slot
        src_off = 16 * draw(st.integers(0, (SMEM // 2 - size) // 16))
        src = (issuer << 24 | src_off) if direction in ("s2s", "s2g") else \
            ref.GBASE + 16 * draw(st.integers(0, (GBYTES // 2 - size) // 16))
        mask = None
        if direction == "g2s_cta":
            dst |= issuer << 24
        elif direction == "g2s_cluster":
            if draw(st.booleans()):
                mask = draw(st.integers(0, (1 << nctas) - 1))
                dst |= issuer << 24
            else:
                dst |= draw(st.integers(0, nctas - 1)) << 24
        elif direction == "s2s":
            dst |= draw(st.integers(0, nctas - 1)) << 24
        ops.append((direction, issuer, dst, src, size, mask))
    return nctas, ops


@settings(max_examples=60, **SETTINGS)
@given(prog=bulk_programs(), policy=st.sampled_from(POLICIES), seed=st.integers(0, 2**32))
def test_bulk_copies_match_the_reference(prog, policy, seed):
    """cp.async.bulk in every direction (PTX ISA; golden C4, C5, C9, C14, C15): every
    destination CTA gets the bytes at its offset, its mbarrier at mbar's offset is
    credited with size bytes, global destinations get the bytes after wait_group."""
    nctas, ops = prog
    m = p.Machine(ctas=nctas, smem_bytes=SMEM, policy=policy, seed=seed, hazards="report")
    g = m.register(_pattern(GBYTES, seed), address=ref.GBASE)
    w = ref.World(nctas, SMEM, GBYTES)
    w.glob[:] = bytes(g.bytes)
    for r in range(nctas):
        m.cta(r).smem[:SMEM // 2] = _pattern(SMEM // 2, seed + r + 1)
        w.smem[r][:] = bytes(m.cta(r).smem)
    bars = [m.cta(r).mbarrier(SMEM - 8).init(1) for r in range(nctas)]
    for direction, issuer, dst, src, size, mask in ops:
        space = {"g2s_cta": ("shared::cta", "global"), "g2s_cluster": ("shared::cluster", "global"),
                 "s2s": ("shared::cluster", "shared::cta"), "s2g": ("global", "shared::cta")}[direction]
        mbar = None if direction == "s2g" else (issuer << 24 | (SMEM - 8))
        w.bulk(issuer, direction, dst, src, size, mbar=mbar, cta_mask=mask)
        m.cp_async_bulk(dst, src, size, mbar, cta=issuer, thread=issuer, dst_space=space[0],
                        src_space=space[1], cta_mask=mask)
        # the reference copies at once: sources must not change in between, so the
        # model is drained after each copy under the policy's order
        m.run()
    for r in range(nctas):
        m.cp_async_bulk_commit_group(cta=r, thread=r)
        m.cp_async_bulk_wait_group(0, cta=r, thread=r)
    assert m.pending == 0
    assert bytes(g.bytes) == bytes(w.glob)
    for r in range(nctas):
        assert bytes(m.cta(r).smem[:SMEM - 8]) == bytes(w.smem[r][:SMEM - 8]), f"CTA {r}"
        assert -bars[r].state["tx"] == w.tx[r].get(SMEM - 8, 0), f"CTA {r} tx"


@settings(max_examples=150, **SETTINGS)
@given(direction=st.sampled_from(["g2s_cta", "g2s_cluster", "s2s", "s2g"]),
       size=st.integers(0, 600), dst_off=st.integers(0, SMEM + 64), src_off=st.integers(0, GBYTES + 64),
       rank=st.integers(0, 3), mask=st.one_of(st.none(), st.integers(0, 0xFFFF)))
def test_bulk_rejections_match_the_reference(direction, size, dst_off, src_off, rank, mask):
    """Every bad operand (size, alignment, range, ctaMask) is refused with the class
    the reference names, and a refused copy changes nothing."""
    nctas = 2
    if direction != "g2s_cluster":
        mask = None
    m = p.Machine(ctas=nctas, smem_bytes=SMEM, policy="in_order")
    g = m.register(_pattern(GBYTES, 3), address=ref.GBASE)
    w = ref.World(nctas, SMEM, GBYTES)
    w.glob[:] = bytes(g.bytes)
    for r in range(nctas):
        m.cta(r).mbarrier(SMEM - 8).init(1)
    if direction in ("g2s_cta", "g2s_cluster"):
        dst, src = rank << 24 | dst_off, ref.GBASE + src_off
    elif direction == "s2s":
        dst, src = rank << 24 | dst_off, src_off
    else:
        dst, src = ref.GBASE + src_off, dst_off
    mbar = None if direction == "s2g" else (SMEM - 8)
    want = None
    try:
        w.bulk(0, direction, dst, src, size, mbar=mbar, cta_mask=mask)
    except ref.Rejected as e:
        want = KIND[e.kind]
    space = {"g2s_cta": ("shared::cta", "global"), "g2s_cluster": ("shared::cluster", "global"),
             "s2s": ("shared::cluster", "shared::cta"), "s2g": ("global", "shared::cta")}[direction]
    before = [bytes(c.smem) for c in m.ctas], bytes(g.bytes)
    try:
        m.cp_async_bulk(dst, src, size, mbar, dst_space=space[0], src_space=space[1], cta_mask=mask)
        got = None
    except p.PtxAsyncError as e:
        got = type(e)
    assert got is want
    if want is not None:
        assert m.pending == 0 and ([bytes(c.smem) for c in m.ctas], bytes(g.bytes)) == before


# --- the checker watches exactly the global bytes a tensor load reads ----------------------

@settings(max_examples=60, **SETTINGS)
@given(c0=st.integers(-12, 36), r0=st.integers(-6, 26), es=st.sampled_from([1, 2, 3]),
       byte=st.integers(0, 24 * 64 - 1))
def test_tensor_source_watch_is_exactly_the_box(c0, r0, es, byte):
    """A 32 x 24 u16 tensor (rows 64 bytes apart), a box of 8 x 4 elements with traversal
    stride es in dim 1 (rows r0, r0 + es, ... inside the 4 the box spans), at any coordinates (out-of-bounds parts included): one byte written
    between issue and completion is tensor-source-changed exactly when the box reads it.
    Reference: the in-bounds box elements, listed by hand."""
    c0 -= c0 % 8                                   # a 16-byte aligned c0, as the hardware requires
    m = p.Machine(smem_bytes=4096, checks=True, policy="in_order")
    g = m.alloc(24 * 64)
    g.bytes[:] = np.arange(24 * 64) % 251
    tm = p.TensorMap.tiled("u16", g.address, [32, 24], [64], [8, 4], element_strides=[1, es])
    b = m.mbarrier(0x40).init(1)
    b.arrive_expect_tx(tm.box_bytes)
    m.cp_async_bulk_tensor_load(tm, [c0, r0], 1024, b)
    read = set()
    for k in range(-(-4 // es)):                   # the box spans 4 rows; every es-th is read
        r = r0 + k * es
        for c in range(c0, c0 + 8):
            if 0 <= r < 24 and 0 <= c < 32:
                read.update((r * 64 + 2 * c, r * 64 + 2 * c + 1))
    g.bytes[byte] ^= 0xFF
    if byte in read:
        with pytest.raises(p.Hazard, match=r"^\[tensor-source-changed\]"):
            b.try_wait(0)
    else:
        assert b.try_wait(0)


@settings(max_examples=60, **SETTINGS)
@given(c0=st.integers(0, 36), r0=st.integers(0, 26), byte=st.integers(0, 24 * 64 - 1),
       reduce=st.booleans())
def test_tensor_destination_watch_is_exactly_the_box(c0, r0, byte, reduce):
    """The same for a tensor store or reduction (16 x 24 u32 tensor, 4 x 4 box, rows a
    multiple of 16 bytes so no chunk tail is written past the tensor): a byte written by
    someone else before completion is tensor-destination-changed exactly when the box
    writes it."""
    c0 = (c0 - c0 % 8) // 2
    m = p.Machine(smem_bytes=4096, checks=True, policy="in_order")
    g = m.alloc(24 * 64)
    g.bytes[:] = np.arange(24 * 64) % 251
    tm = p.TensorMap.tiled("u32", g.address, [16, 24], [64], [4, 4])
    if reduce:
        m.cp_reduce_async_bulk_tensor("add", tm, [c0, r0], 1024)
    else:
        m.cp_async_bulk_tensor_store(tm, [c0, r0], 1024)
    m.cp_async_bulk_commit_group()
    written = {r * 64 + 4 * c + k for r in range(r0, min(r0 + 4, 24)) for c in range(c0, min(c0 + 4, 16))
               for k in range(4)}
    g.bytes[byte] ^= 0xFF
    if byte in written:
        with pytest.raises(p.Hazard, match=r"^\[tensor-destination-changed\]"):
            m.cp_async_bulk_wait_group(0)
    else:
        m.cp_async_bulk_wait_group(0)
