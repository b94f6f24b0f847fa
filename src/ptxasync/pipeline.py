"""A 3-stage producer/consumer TMA pipeline, the way a Hopper kernel writes it,
run on the model with its threads interleaved by a seeded scheduler.

    producer (thread 0)                     consumer (thread 128)
    for i: s = i % 3, k = i // 3            for i: s = i % 3, k = i // 3
      wait empty[s], parity (k & 1) ^ 1       wait full[s], parity k & 1
      full[s].arrive.expect_tx(tile bytes)    read the tile in stage s
      cp.async.bulk.tensor tile i -> s        empty[s].arrive
                                              (mbarrier count 1 each)

The producer's first pass over the stages waits on the phase before phase 0
(parity 1), which a fresh barrier reports complete. ``missing`` removes one
wait ("consumer": the wait on full; "producer": the wait on empty) or moves
the consumer's release ("release": it arrives on empty, then reads the
stage) to show what the checker reports. ``checked=True`` makes the
consumer's read an ld.shared through the model (``CTA.read`` by thread 128)
rather than a NumPy view: the memory model then reports each of these bugs
in every schedule, ``policy="immediate"`` included (docs/hazards.md). Each thread is a generator that yields after every
operation (True) or when a wait returned False (False: it is blocked); the
scheduler runs a thread chosen at random for a random number of operations,
and when every thread is blocked it lets the machine complete one pending
operation (``Machine.step``, which reports a deadlock when none can help).
"""
import random

import numpy as np

from .machine import Machine
from .tensormap import TensorMap

STAGES = 3
TILE_ROWS, TILE_COLS = 8, 16          # f32: 512 bytes a tile
TILE_BYTES = TILE_ROWS * TILE_COLS * 4
FULL, EMPTY, BUF = 0x10, 0x40, 1024   # shared offsets: barriers, stage buffers
PRODUCER, CONSUMER = 0, 128


def make(tiles=12, policy="adversarial", seed=0, **kw):
    """A machine with the global matrix (tiles x 8 rows x 16 f32), its tensor
    map and the barriers initialised; returns (machine, tmap, matrix)."""
    m = Machine(smem_bytes=BUF + STAGES * TILE_BYTES, policy=policy, seed=seed, **kw)
    a = np.arange(tiles * TILE_ROWS * TILE_COLS, dtype=np.float32).reshape(-1, TILE_COLS) + 1
    g = m.register(a)
    tmap = TensorMap.tiled("f32", g.address, [TILE_COLS, a.shape[0]], [TILE_COLS * 4],
                           [TILE_COLS, TILE_ROWS])
    for s in range(STAGES):
        m.mbarrier(FULL + 8 * s).init(1, thread=PRODUCER)
        m.mbarrier(EMPTY + 8 * s).init(1, thread=PRODUCER)
    return m, tmap, a


def producer(m, tmap, tiles, missing=None):
    for i in range(tiles):
        s, k = i % STAGES, i // STAGES
        empty, full = m.mbarrier(EMPTY + 8 * s), m.mbarrier(FULL + 8 * s)
        if missing != "producer":
            while not empty.try_wait((k & 1) ^ 1, thread=PRODUCER):
                yield False
        yield True
        full.arrive_expect_tx(TILE_BYTES, thread=PRODUCER)
        yield True
        m.cp_async_bulk_tensor_load(tmap, [0, i * TILE_ROWS], BUF + s * TILE_BYTES, full,
                                    thread=PRODUCER)
        yield True


def consumer(m, tiles, out, missing=None, checked=False):
    for i in range(tiles):
        s, k = i % STAGES, i // STAGES
        empty, full = m.mbarrier(EMPTY + 8 * s), m.mbarrier(FULL + 8 * s)
        if missing != "consumer":
            while not full.try_wait(k & 1, thread=CONSUMER):
                yield False
        yield True
        if missing == "release":   # the bug: the stage is given back before it is read
            empty.arrive(thread=CONSUMER)
            yield True
        # what a kernel does: ld.shared, through the model or a NumPy view (no copy)
        at = BUF + s * TILE_BYTES
        out.append(m.cta(0).read(at, np.float32, (TILE_ROWS, TILE_COLS), thread=CONSUMER) if checked
                   else m.cta(0).view(np.float32, (TILE_ROWS, TILE_COLS), at).copy())
        yield True
        if missing != "release":
            empty.arrive(thread=CONSUMER)
            yield True


def run(tiles=12, policy="adversarial", seed=0, missing=None, max_burst=8, checked=False, **kw):
    """Run the pipeline; returns (machine, matrix, tiles read by the consumer).
    Raises Hazard (or Deadlock) where the checker finds the bug."""
    m, tmap, a = make(tiles, policy, seed, **kw)
    out = []
    threads = [producer(m, tmap, tiles, missing), consumer(m, tiles, out, missing, checked)]
    ids = [PRODUCER, CONSUMER]
    rng = random.Random(seed)
    blocked = [False] * len(threads)
    while threads:
        i = rng.randrange(len(threads))
        for _ in range(rng.randint(1, max_burst)):
            try:
                ran = next(threads[i])
            except StopIteration:   # the thread exits (never-waited: what it leaves)
                m.exit(thread=ids[i])
                del threads[i], blocked[i], ids[i]
                break
            if not ran:
                blocked[i] = True
                break
            blocked = [False] * len(blocked)   # progress may release the others
        if threads and all(blocked):
            m.step()               # every thread waits: the hardware moves on
            blocked = [False] * len(threads)
    m.exit(cta=0)                  # the CTA exits: what it leaves pending was never waited for
    m.run()
    return m, a, out
