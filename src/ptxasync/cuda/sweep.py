"""Random sweeps on a GPU: new cases, each run by the driver / GPU and the model.

- ``encode(n, seed)``: random cuTensorMapEncodeTiled / Im2col parameters (valid
  and invalid alike: every field is drawn around its limits), both encoders.
- ``pipeline(n, seed)``: random programs of tile loads through 2 or 3
  mbarrier-tracked stages (swizzles, data types, out-of-bounds boxes, fill
  modes), with a tile store, a tensor reduction, bulk copies and cp.async copies
  of the loaded bytes, run on both engines and diffed byte for byte.
"""
import random

import numpy as np

from .encode import encode_driver, encode_model
from .program import Program
from .runner import diff

__all__ = ["encode", "pipeline", "random_encode_args", "random_pipeline"]

_ESIZE = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}
_SPAN = {0: 0, 1: 32, 2: 64, 3: 128}


def _pick(rng, good, bad, p_bad=0.12):
    return rng.choice(bad) if rng.random() < p_bad else good()


def random_encode_args(rng):
    """(kind, args): parameters near the driver's limits, valid most of the time."""
    kind = "tiled" if rng.random() < 0.75 else "im2col"
    dtype = rng.randrange(13)
    es = _ESIZE[dtype]
    interleave = _pick(rng, lambda: 0, [1, 2], 0.15)
    lo_rank = 3 if (interleave or kind == "im2col") else 1
    rank = _pick(rng, lambda: rng.randint(lo_rank, 5), [1, 2] if lo_rank == 3 else [5], 0.05)
    dims = [rng.choice([1, 2, 3, 7, 8, 16, 31, 64, 100, 128, 255, 256, 1000]) for _ in range(rank)]
    strides, s = [], dims[0] * es
    for d in range(1, rank):
        s = (s + 15) // 16 * 16 if rng.random() < 0.9 else s + rng.choice([1, 4, 8])
        strides.append(s)
        s *= dims[d]
    swizzle = rng.choice([0, 0, 1, 2, 3])
    estr = [rng.choice([1, 1, 1, 2, 3, 8]) if rng.random() < 0.95 else 9 for _ in range(rank)]
    addr = 0x7F0000000000 + rng.randrange(1 << 20) * 256 + (0 if rng.random() < 0.93 else rng.choice([1, 8, 16, 32]))
    args = dict(dtype=dtype, rank=rank, global_address=addr, global_dim=dims, global_strides=strides,
                element_strides=estr, interleave=interleave, swizzle=swizzle, l2_promotion=rng.randrange(4),
                oob_fill=rng.randrange(2))
    if kind == "tiled":
        inner = rng.choice([8, 16, 32, 64, 128, 256]) // es or 1
        if swizzle and rng.random() < 0.8:
            inner = max(1, _SPAN[swizzle] // es // rng.choice([1, 1, 2]))
        args["box_dim"] = [inner] + [rng.choice([1, 2, 4, 8, 16, 64, 256]) if rng.random() < 0.97 else 257
                                     for _ in range(rank - 1)]
    else:
        n = rank - 2
        lower = [rng.randint(-4, 1) for _ in range(n)]
        upper = [rng.randint(-2, 3) for _ in range(n)]
        args.update(pixel_box_lower=lower, pixel_box_upper=upper,
                    channels_per_pixel=rng.choice([1, 4, 8, 16, 32, 64, 128, 256, 257]),
                    pixels_per_column=rng.choice([1, 8, 16, 32, 64, 128, 256, 1024, 1025]))
    return kind, args


def encode(n, seed=0, tally=None):
    """``n`` random encodes through both; returns (agree, differ, skipped, notes)."""
    from ._driver import NotExpressible
    rng = random.Random(seed)
    agree = differ = skipped = 0
    notes = []
    for _ in range(n):
        kind, args = random_encode_args(rng)
        try:
            drv = encode_driver(kind, args)
        except NotExpressible:
            skipped += 1
            continue
        ok, raw, msg = encode_model(kind, args)
        if (drv[1] is not None) == ok and (not ok or raw == drv[1]):
            agree += 1
        else:
            differ += 1
            notes.append(f"encode {kind} {args}: driver {drv[0]}, model {'accepted' if ok else msg}"
                         + (", bytes differ" if ok and drv[1] is not None else ""))
    return agree, differ, skipped, notes


def random_pipeline(rng):
    """A Program: a 2D tensor loaded tile by tile through 2-3 stages, the stages
    stored, reduced, copied back with bulk copies and cp.async."""
    dtype = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 9])
    es = _ESIZE[dtype]
    swizzle = rng.choice([0, 1, 2, 3])
    span = _SPAN[swizzle] or 64
    bx = max(1, (span if swizzle else rng.choice([16, 32, 64])) // es)
    by = rng.choice([1, 2, 4, 8, 16])
    W = rng.randint(1, 6) * bx + rng.choice([0, 0, 1, 3])
    H = rng.randint(1, 5) * by + rng.choice([0, 0, 1])
    row = (W * es + 15) // 16 * 16
    prog = Program(smem_bytes=96 * 1024, smem_fill=rng.randrange(256))
    data = np.frombuffer(rng.randbytes(row * H), dtype=np.uint8)
    g = prog.register(data)
    out = prog.register(np.frombuffer(rng.randbytes(row * H), dtype=np.uint8))
    oob = rng.randrange(2) if dtype in (6, 7, 9) else 0
    tm = prog.tensor_map_tiled(g, dtype=dtype, global_dim=(W, H), global_strides=(row,), box_dim=(bx, by),
                               swizzle=swizzle, oob_fill=oob)
    to = prog.tensor_map_tiled(out, dtype=dtype, global_dim=(W, H), global_strides=(row,), box_dim=(bx, by),
                               swizzle=swizzle)
    stages = rng.choice([2, 3])
    pitch = max(bx * es, _SPAN[swizzle])
    tile = (pitch * by + 1023) // 1024 * 1024
    base = 4096 + rng.choice([0, 0, 128, 256, 512])       # not always aligned to the swizzle repeat
    bars = [1024 + 8 * s for s in range(stages)]
    for b in bars:
        prog.mbarrier_init(b, 1)
    phase = [0] * stages
    steps = rng.randint(2, 6)
    for k in range(steps):
        s = k % stages
        cx = rng.randint(-1, (W + bx - 1) // bx) * bx
        cy = rng.randint(-1, (H + by - 1) // by) * by
        if (cx * es) % 16:
            cx -= cx % max(1, 16 // es)
        dst = base + s * tile
        prog.mbarrier_arrive_expect_tx(bars[s], bx * es * by)
        prog.cp_async_bulk_tensor_load(tm, (cx, cy), dst, bars[s])
        prog.mbarrier_wait(bars[s], phase[s])
        phase[s] ^= 1
        r = rng.random()
        if r < 0.3:
            sx, sy = rng.randrange(0, max(1, W), bx), rng.randrange(0, max(1, H), by)
            prog.cp_async_bulk_tensor_store(to, (sx - sx % max(1, 16 // es), sy), dst)
        elif r < 0.45 and dtype in (2, 3, 4, 5):
            op = rng.choice(["add", "min", "max", "and", "or", "xor"] if dtype != 3 else ["add"])
            prog.cp_reduce_async_bulk_tensor(op, to, (0, 0), dst)
        elif r < 0.6 and row * H >= 16:
            n = rng.choice([x for x in (16, 32, 64, 128) if x <= row * H])
            prog.cp_async_bulk(out + rng.randrange(0, row * H - n + 1, 16), dst, n,
                               dst_space="global", src_space="shared::cta")
        elif r < 0.75:
            slots = rng.sample(range(64), rng.randint(1, 4))      # distinct 16-byte slots: no two copies
            for slot in slots:                                     # write the same bytes (undefined)
                size = rng.choice([4, 8, 16])
                prog.cp_async(base + stages * tile + 16 * slot, g + rng.randrange(0, row * H - 16, size),
                              size, cache="cg" if size == 16 and rng.random() < 0.5 else "ca",
                              **({"src_size": rng.randint(0, size)} if rng.random() < 0.3 else {}))
            prog.cp_async_commit_group()
            prog.cp_async_wait_group(0)
        prog.cp_async_bulk_commit_group()
        prog.cp_async_bulk_wait_group(0, read=rng.random() < 0.3)
    return prog


def pipeline(n, seed=0):
    """``n`` random pipelines on both engines; returns (agree, differ, notes, programs that differ).
    A program the model finds undefined behaviour in is counted apart (``notes`` names it)."""
    rng = random.Random(seed)
    agree = differ = 0
    notes, bad = [], []
    for i in range(n):
        prog = random_pipeline(rng)
        d = diff(prog)
        if d.same:
            agree += 1
        else:
            differ += 1
            ub = f" (the model reports undefined behaviour: {d.undefined[0]})" if d.undefined else ""
            notes.append(f"pipeline {seed}/{i}: {'; '.join(d.problems)}{ub}")
            bad.append(prog)
    return agree, differ, notes, bad
