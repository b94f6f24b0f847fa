"""The machine's mbarrier lookups go through eight hints by address (engine/queue.h:
a pipeline's stages take turns over barriers side by side). Barriers whose addresses
share a hint (bits 3..5 equal), in two CTAs, named from either CTA, arrived on, credited by tile loads, waited on, and
initialised again (refused while valid, which must leave no stale hint), must each
keep their own state: every phase, pending count and tx-count is checked against a
model of the barriers kept here, after every step."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxasync as pa

# offsets 0x40 apart share a hint; 0x48 is a neighbour with another
OFFSETS = [0x40, 0x80, 0xC0, 0x100, 0x48, 0x88]
TILE = 16 * 64 * 2   # a 16 x 64 bf16 box


def _machine():
    m = pa.Machine(ctas=2, smem_bytes=64 * 1024)
    a = np.arange(64 * 64, dtype=np.uint16).reshape(64, 64)
    g = m.register(a)
    tm = pa.TensorMap.from_array(a, (16, 64), g.address, swizzle="128B", dtype="bf16")
    return m, a, tm


def _bar(m, rank, off, via):
    """The barrier at off of CTA rank, named by its address in the cluster's window from
    CTA `via` (its own CTA or the other: the same address, another lookup key)."""
    return pa.Mbarrier(m, via, pa.mapa(off, rank))


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["arrive", "load", "wait", "reinit"]),
                                st.integers(0, 1), st.sampled_from(OFFSETS), st.integers(0, 1)),
                      min_size=1, max_size=40),
       counts=st.lists(st.integers(1, 3), min_size=2 * len(OFFSETS), max_size=2 * len(OFFSETS)))
def test_barriers_sharing_a_hint_keep_their_own_state(steps, counts):
    m, a, tm = _machine()
    model = {}
    for i, (rank, off) in enumerate((r, o) for r in (0, 1) for o in OFFSETS):
        m.mbarrier(off, cta=rank).init(counts[i])
        model[rank, off] = {"phase": 0, "pending": counts[i], "expected": counts[i], "tx": 0}
    dst = 4096
    for kind, rank, off, via in steps:
        b, s = _bar(m, rank, off, via), model[rank, off]
        if kind == "arrive":        # one arrival announcing one box
            if s["pending"] == 0:
                continue            # (no over-arrival: the phase waits for its bytes)
            b.arrive_expect_tx(TILE)
            s["tx"] += TILE
            s["pending"] -= 1
        elif kind == "load":        # a box crediting the barrier (its own CTA's, as .shared::cta requires)
            if via != rank or s["tx"] < TILE:
                continue            # (keeps the model free of over-delivery)
            m.cp_async_bulk_tensor_load(tm, (0, 16), m.cta(rank).addr(dst), m.cta(rank).addr(off), cta=rank)
            m.run()
            s["tx"] -= TILE
        elif kind == "wait":        # by the barrier's own CTA (a wait names a shared::cta barrier)
            own = _bar(m, rank, off, rank)
            assert own.test_wait(s["phase"] & 1) is False
            assert own.test_wait((s["phase"] - 1) & 1) is True
        else:                       # mbarrier.init on a valid barrier: refused, nothing changes
            try:
                b.init(1)
                raise AssertionError("init of a valid mbarrier was accepted")
            except pa.Hazard:
                pass
        if s["pending"] == 0 and s["tx"] == 0:
            s["phase"] += 1
            s["pending"] = s["expected"]
            assert _bar(m, rank, off, rank).try_wait((s["phase"] - 1) & 1)   # observed before the next arrive
        for (r, o), want in model.items():
            got = _bar(m, r, o, r).state
            assert (got["phase"], got["pending"], got["tx"]) == (want["phase"], want["pending"], want["tx"]), \
                (r, o, got, want)
