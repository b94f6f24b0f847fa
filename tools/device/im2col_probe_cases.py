"""Generate im2col probe cases and run each through im2col_probe (one process
per case); one JSON line per case to stdout.

    python3 im2col_probe_cases.py ./probe SEED [PLAN]

PLAN `first` (default): strided N, .im2col_no_offs stores and reductions.
PLAN `pixel`: interleaved maps whose pixel (channelsPerPixel * elemsize) is
not one slice: 16-byte pixels of 32B-interleaved maps (loads with every
swizzle, stores, reductions, one load repeated), and wider pixels.
PLAN `pixel2`: more of these with start pixels anywhere (faults included).
"""
import json, random, subprocess, sys
ES = [1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4]
SPAN = [0, 32, 64, 128]
RED_ADD = [2, 3, 4, 6, 7, 9]
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 7)
exe = sys.argv[1]
PLAN = sys.argv[3] if len(sys.argv) > 3 else "first"

def mk(cat):
    rank = rng.choice([3, 4, 5])
    il = 0
    if cat in ("store_il", "load_il_nstride"):
        il = rng.choice([1, 2])
    mode = 0 if cat.startswith("load") else (2 if cat == "reduce" else 1)
    dtype = rng.choice(RED_ADD) if mode == 2 else rng.randrange(13)
    e = ES[dtype]
    sp = rank - 2
    if il:
        S = 16 if il == 1 else 32
        if e > S: dtype, e = 3, 4
        cpp = S // e
        sw = 1 if il == 2 else rng.choice([0, 1, 2, 3])
        gdim = [cpp] + [rng.randint(2, 6) for _ in range(sp)] + [rng.randint(1, 3)]
        # interleaved: dims W.. counted from 0 by the hardware; keep a plain dense layout
        gs = []                                   # dense: one slice per pixel
        acc = S
        for i in range(1, rank):
            gs.append(acc)
            acc *= gdim[i]
    else:
        sw = rng.choice([0, 1, 2, 3])
        maxk = (SPAN[sw] // 16) if sw else 8
        cpp = rng.randint(1, maxk) * 16 // e
        C = cpp * rng.choice([1, 1, 2, 3]) + rng.choice([0, 0, 16 // e])
        gdim = [C] + [rng.randint(2, 7) for _ in range(sp)] + [rng.randint(1, 3)]
        gs = []
        acc = (C * e + 15) // 16 * 16
        for i in range(1, rank):
            gs.append(acc)
            acc *= gdim[i]
    lim = {3: 4, 4: 3, 5: 2}[rank]
    if mode == 0:
        lo = [rng.randint(-lim, 1) for _ in range(sp)]
        up = [rng.randint(-1, lim) for _ in range(sp)]
    else:
        lo = [rng.randint(0, 1) for _ in range(sp)]
        up = [rng.randint(-2, 0) for _ in range(sp)]
    es = [1] + [rng.choice([1, 1, 2, 3]) for _ in range(sp)] + [1]
    if cat.endswith("nstride"):
        es[-1] = rng.choice([2, 3])
        gdim[-1] = rng.randint(3, 6)
    # pixels in the box per image
    per = 1
    for i in range(sp):
        d = gdim[i + 1] if not il else gdim[i]
        n = (d - 1 + up[i] - lo[i]) // es[i + (0 if il else 1)] + 1
        per *= max(n, 1)
    ppc = rng.randint(1, min(256, per * 3))
    oob = rng.choice([0, 1]) if dtype >= 6 else 0
    first = 0 if il else 1
    c = [0] * rank
    if not il:
        c[0] = rng.randrange(0, max(1, gdim[0]), max(1, 16 // e)) // max(1, 16 // e) * max(1, 16 // e)
    for i in range(sp):
        d = gdim[first + i]
        hi = d - 1 + up[i]
        if cat == "store_outside" and i == 0:
            c[first + i] = hi + rng.randint(1, 2)
        else:
            c[first + i] = rng.randint(max(lo[i], 0), max(hi, max(lo[i], 0)))
    if il:
        c[rank - 2] = 0
    c[rank - 1] = rng.randrange(gdim[-1])
    o = [rng.randint(0, 2) for _ in range(sp)] if mode == 0 else [0] * sp
    return dict(cat=cat, mode=mode, dtype=dtype, rank=rank, gdim=gdim, gs=gs, es=es, lo=lo, up=up,
                cpp=cpp, ppc=ppc, il=il, sw=sw, oob=oob, c=c, o=o, seed=rng.getrandbits(63))

def mk_pixel(cat, il, pixel):
    """An interleaved map in the hardware's dimension order (docs/im2col-mode.md
    section 3): W, H, D = dims 0..r-3 (dim 0 in slices), C/x = dim r-2, N."""
    rank = rng.choice([3, 4, 5])
    S = 16 if il == 1 else 32
    mode = 0 if cat.startswith("load") else (2 if cat.startswith("reduce") else 1)
    while True:
        dtype = rng.choice(RED_ADD) if mode == 2 else rng.randrange(13)
        if pixel % ES[dtype] == 0 and pixel // ES[dtype] <= 256:
            break
    e = ES[dtype]
    cpp = pixel // e
    sp = rank - 2
    sw = rng.choice([0, 1, 1, 2, 3]) if (il == 1 or "swz" in cat) else 1
    gdim = [rng.randint(2, 6) for _ in range(sp)] + [rng.randint(1, 3), rng.randint(1, 3)]
    if cat.endswith("anywhere") and rng.random() < 0.5:
        gdim[0] = S // e                         # dim 0 as the recorded sets size it
    gs, acc = [], S * gdim[0] + S * rng.choice([0, 0, 1])
    for i in range(1, rank):
        gs.append(acc)
        acc = acc * gdim[i] + 32 * rng.choice([0, 0, 1])
    lim = {3: 4, 4: 3, 5: 2}[rank]
    if mode == 0:
        lo = [rng.randint(-lim, 1) for _ in range(sp)]
        up = [rng.randint(-1, lim) for _ in range(sp)]
    else:
        lo = [rng.randint(0, 1) for _ in range(sp)]
        up = [rng.randint(-2, 0) for _ in range(sp)]
    for i in range(sp):                          # keep the box non-empty
        if gdim[i] + up[i] - lo[i] <= 0:
            up[i] = lo[i] - gdim[i] + 1
    es = [rng.choice([1, 1, 2, 3]) for _ in range(sp)] + [1, rng.choice([1, 1, 2])]
    per = 1
    for i in range(sp):
        per *= max((gdim[i] - 1 + up[i] - lo[i]) // es[i] + 1, 1)
    ppc = rng.randint(1, max(1, min(160, per * 2)))
    if cat.endswith("repeat"):
        ppc += ppc % 2                           # E a multiple of the slice
    oob = rng.choice([0, 1]) if dtype >= 6 else 0
    c = [0] * rank
    for i in range(sp):
        hi = gdim[i] - 1 + up[i]
        c[i] = rng.randint(lo[i] if mode == 0 else max(lo[i], 0), max(hi, lo[i]))
        if cat.endswith("anywhere") and rng.random() < 0.25:   # the start pixel may leave the box (faults)
            c[i] = rng.randint(lo[i] - 2, max(hi, lo[i]) + 2)
    c[rank - 2] = rng.choice([0, 0, 0, gdim[rank - 2] - 1, gdim[rank - 2]])
    c[rank - 1] = rng.choice([0, 0, gdim[-1] - 1, gdim[-1]])
    o = [rng.randint(0, 2) for _ in range(sp)] if mode == 0 else [0] * sp
    return dict(cat=cat, mode=mode, dtype=dtype, rank=rank, gdim=gdim, gs=gs, es=es, lo=lo, up=up,
                cpp=cpp, ppc=ppc, il=il, sw=sw, oob=oob, c=c, o=o, seed=rng.getrandbits(63))


def pad(v, n, x=0):
    return list(v) + [x] * (n - len(v))

plan = [("store", 45), ("reduce", 15), ("store_outside", 10), ("store_il", 14), ("load_nstride", 16),
        ("load_il_nstride", 8)]
# (category, cases, interleave, pixel bytes choices, times each case runs)
pixel_plan = [("load_px16", 24, 2, [16], 1), ("load_px16_swz", 16, 2, [16], 1),
              ("load_px16_repeat", 2, 2, [16], 8), ("load_wide", 16, 2, [48, 64, 96, 128], 1),
              ("load_il16_wide", 10, 1, [32, 48, 64], 1), ("store_px16", 14, 2, [16], 1),
              ("reduce_px16", 6, 2, [16], 1), ("store_wide", 6, 2, [48, 64, 96], 1),
              ("store_il16_wide", 4, 1, [32, 48], 1)]
# a second pass: 16-byte pixels anywhere (faults included), more wide pixels
pixel2_plan = [("load_px16_anywhere", 70, 2, [16], 1), ("load_px16_swz_anywhere", 20, 2, [16], 1),
               ("load_wide_anywhere", 14, 2, [48, 64, 96, 128], 1), ("load_il16_wide_anywhere", 8, 1, [32, 48, 64], 1),
               ("store_px16_anywhere", 8, 2, [16], 1)]
if PLAN == "pixel2":
    pixel_plan = pixel2_plan
if PLAN in ("pixel", "pixel2"):
    plan = [(cat, n) for cat, n, _, _, _ in pixel_plan]
for cat, n in plan:
    for _ in range(n):
        if PLAN in ("pixel", "pixel2"):
            _, _, il, pixels, times = next(x for x in pixel_plan if x[0] == cat)
            k0 = mk_pixel(cat, il, rng.choice(pixels))
        else:
            k0, times = mk(cat), 1
        for _ in range(times):
            k = json.loads(json.dumps(k0))
            inp = " ".join(map(str, [k["mode"], k["dtype"], k["rank"], *pad(k["gdim"], 5, 1), *pad(k["gs"], 4),
                                     *pad(k["es"], 5, 1), *pad(k["lo"], 3), *pad(k["up"], 3), k["cpp"], k["ppc"],
                                     k["il"], k["sw"], k["oob"], *pad(k["c"], 5), *pad(k["o"], 3), k["seed"]]))
            try:
                out = subprocess.run([exe], input=inp, capture_output=True, text=True, timeout=30).stdout
            except subprocess.TimeoutExpired:
                out = "TIMEOUT"
            res = {}
            for line in out.splitlines():
                key, _, val = line.partition(" ")
                res[key] = val
            k["result"] = res
            print(json.dumps(k), flush=True)
