#!/usr/bin/env python3
"""Write csrc/core/sem/sfu_tables.c: the f32 cores of the special-function unit (MUFU.RCP,
MUFU.EX2, MUFU.RSQ, MUFU.SQRT, and MUFU.LG2 to 2^-24) as an H200 gives them for every reduced
operand; and csrc/core/sem/sfu_tanh.c: MUFU.TANH at every quantised operand of [2^-8, 8), as
blocks of 256 results, each its first result and first difference and then the second differences
in a prefix code chosen by the two before (canonical Huffman codes of the whole stream's
statistics; sfu_tables.h says how to read it); and csrc/core/sem/sfu_sin.c: MUFU.SIN at every
25-bit fraction q of the first quarter period, a stream of the same kind in blocks of 128 (the
rest of the period and MUFU.COS follow by the unit's symmetries, checked here on every q an f32
operand reaches, from tools/device/sincos_record.cu's recording). --only picks one file.

Each core is a function of a reduced operand idx (rcp, ex2, lg2: the 23 mantissa / fraction
bits; rsqrt, sqrt: the exponent's parity and 23 mantissa bits, [1, 4)) to an integer R (the
result's 24 significant bits; rcp and rsqrt: R = 2^24 at idx 0; lg2: log2 of [1, 2) truncated
to 24 fraction bits). Per segment of 2^16 operands it is

    acc = A0 + u^2 (A2 + u A3) + sum of B_i over the set bits i of j,   u = j / 2^16
    R = floor((acc + 2^23) / 2^24) + (+1, -1 or 0)

(j: idx's low 16 bits; the bit terms carry the linear part; each product by u floored) with
integer coefficients (units 2^-24 of R's last place), and the +1 / -1 operands listed per
half segment (one sorted list of 2 h + 1 for one up and 2 h for one down, h = idx's low 15
bits, each three base-64 characters). The coefficients are a least-squares fit to the
unit's output (a cubic plus one term per low operand bit, nudged so that rounding it gives the
recorded value as often as it can); the lists are every operand where it still does not. The
evaluation is integer arithmetic only, the same here and in C, so the file is exact by
construction; --verify proves it against the dumps through the C code itself.

The dumps come from tools/device/sfu_record.py and, for sin and cos, sincos_record.cu with
sincos_pack.py (on an H200), default build/sfu/dumps.

    python tools/sfu_tables.py [--dumps DIR]   rewrite the file (coefficients kept from it)
    python tools/sfu_tables.py --refit         fit the coefficients anew (floating point: another
                                               LAPACK may choose others, equally exact)
    python tools/sfu_tables.py --check         exit 1 if the checked-in file differs
    python tools/sfu_tables.py --verify        build csrc/core/sem/sfu.c and compare every
                                               dumped operand of the .ftz forms with the H200
"""
import argparse
import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(REPO, "csrc", "core", "sem", "sfu_tables.c")
DUMPS = os.path.join(REPO, "build", "sfu", "dumps")
sys.path.insert(0, os.path.join(HERE, "device"))
import sfu_record  # noqa: E402  (the dumps' format)
import sincos_pack  # noqa: E402  (sin and cos by q)

SEG = 16                    # log2 of a segment's operands
F = 24                      # fraction bits of the coefficients
NB = 16                     # one term per low operand bit
NCOEF = 3 + NB
P, Q = 1 << 23, 1 << 24

# core: (dump file, base operand, operands, what the dump's result bits give)
CORES = [
    ("rcp", "rcpf", 0x3F800000, P, "1/x of [1, 2): R in units 2^-24, (2^23, 2^24]"),
    ("ex2", "ex2f", 0x3F800000, P, "2^f of a 23-bit fraction f: R in units 2^-23, [2^23, 2^24)"),
    ("rsq", "rsqf", 0x3F800000, Q, "1/sqrt(x) of [1, 4): R in units 2^-24 (of [0.5, 1)), (2^23, 2^24]"),
    ("sqrt", "sqrtf", 0x3F800000, Q, "sqrt(x) of [1, 4): R in units 2^-23, [2^23, 2^24)"),
    ("lg2", "lg2f", 0x3F800000, P, "log2(x) of [1, 2) truncated to units 2^-24, [0, 2^24)"),
]


def core_values(dumps, name, fname, base, count):
    y = sfu_record.load(os.path.join(dumps, fname + ".npz.xz"))[(base, count)].astype(np.int64)
    if name == "lg2":           # the result's bits down to 2^-24 (a float of [0, 1): exact)
        return np.floor(y.astype(np.uint32).view(np.float32).astype(np.float64) * 2.0 ** 24).astype(np.int64)
    r = (y & 0x7FFFFF) | (1 << 23)
    if name in ("rcp", "rsq"):
        r[0] = 1 << 24          # 1/1 is one binade up
    return r


def design():
    j = np.arange(1 << SEG)
    u = j / float(1 << SEG)
    return np.stack([np.ones(len(j)), u ** 2, u ** 3] + [((j >> i) & 1).astype(float) for i in range(NB)], 1)


def refit(R):
    V = design()
    pinv = np.linalg.pinv(V)
    Rs = R.reshape(-1, 1 << SEG).astype(float)
    tgt = Rs.copy()
    for _ in range(40):
        tgt = np.clip((tgt @ pinv.T) @ V.T, Rs - 0.45, Rs + 0.45)
    return np.round((tgt @ pinv.T) * 2.0 ** F).astype(np.int64)


def evaluate(A):
    """The integer evaluation, every segment's 2^16 operands (rows: segments)."""
    j = np.arange(1 << SEG, dtype=np.int64)[None, :]
    acc = A[:, 1:2] + ((A[:, 2:3] * j) >> SEG)          # numpy's >> floors, as sfu.c's mul_u
    acc = A[:, 0:1] + ((((acc * j) >> SEG) * j) >> SEG)
    for i in range(NB):
        acc = acc + A[:, 3 + i:4 + i] * ((j >> i) & 1)
    return (acc + (1 << (F - 1))) >> F


def lists(R, A):
    inner = np.abs(A[:, 1]) + np.abs(A[:, 2])
    if inner.max() >= 1 << 45:
        raise SystemExit("a coefficient too large for the int64 products by j")
    d = R.reshape(-1, 1 << SEG) - evaluate(A)
    if np.abs(d).max() > 1:
        raise SystemExit("a correction of %d units: refit" % np.abs(d).max())
    up = [np.nonzero(row == 1)[0] for row in d]
    down = [np.nonzero(row == -1)[0] for row in d]
    return up, down


# The lists: each entry (2 j + 1 or 2 j) as three digits of base 64 (most significant first), digits that
# rise with their characters' codes so that entries compare as their bytes do; one string
# literal per segment (under the 4,095 characters C asks compilers to take).
B64 = "+0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"
assert len(B64) == 64 and list(B64) == sorted(B64)
MAXLIST = 4095 // 3


def b64(v):
    return B64[v >> 12] + B64[(v >> 6) & 63] + B64[v & 63]


def c_ints(vals, per):
    vals = [str(int(v)) for v in vals]
    return "\n".join("    " + ",".join(vals[i:i + per]) + "," for i in range(0, len(vals), per))


def emit(cores):
    o = ["/* sfu_tables.c - the special-function unit's f32 cores as an H200 gives them for every",
         " * reduced operand. Generated by tools/sfu_tables.py from the unit's output",
         " * (tools/device/sfu_record.py); do not edit. sfu_tables.h says how to read it. */",
         "#include \"sem/sfu_tables.h\"", "",
         "/* the lists' digits, 0 to 63 */",
         "const char sfu_digits[65] = \"%s\";" % B64, ""]
    for name, what, A, up, down in cores:
        n = len(A)
        o.append("/* %s: %s; %d segments, %d operands one up, %d one down */"
                 % (name, what, n, sum(map(len, up)), sum(map(len, down))))
        o.append("static const int64_t %s_coef[%d][SFU_NCOEF] = {" % (name, n))
        o += ["    {%s}," % ",".join(str(int(v)) for v in row) for row in A]
        o.append("};")
        half = 1 << (SEG - 1)           # the lists go by halves of a segment (literals' length)
        ls = []
        for u, d in zip(up, down):
            v = np.sort(np.concatenate([u * 2 + 1, d * 2]))
            ls += [v[v < 2 * half], v[v >= 2 * half] - 2 * half]
        if max(map(len, ls)) > MAXLIST:
            raise SystemExit("%s: a segment lists more than %d operands" % (name, MAXLIST))
        o.append("static const uint16_t %s_n[%d] = {" % (name, 2 * n))
        o.append(c_ints([len(x) for x in ls], 24))
        o.append("};")
        o.append("static const char *const %s_fix[%d] = {" % (name, 2 * n))
        o += ['    "%s",' % "".join(b64(int(v)) for v in x) for x in ls]
        o.append("};")
        o.append("const sfu_core sfu_core_%s = {%d, %s_coef, %s_n, %s_fix};" % (name, n, name, name, name))
        o.append("")
    return "\n".join(o)


def read_coef(text, name):
    m = re.search(r"static const int64_t %s_coef\[(\d+)\]\[SFU_NCOEF\] = \{\n(.*?)\n\};" % name, text, re.S)
    if not m:
        return None
    rows = [[int(v) for v in line.strip().strip("{},").split(",")] for line in m.group(2).split("\n")]
    return np.array(rows, np.int64)


def build(dumps, fit):
    old = open(OUT).read() if os.path.exists(OUT) else ""
    cores = []
    for name, fname, base, count, what in CORES:
        R = core_values(dumps, name, fname, base, count)
        A = None if fit else read_coef(old, name)
        if A is None:
            A = refit(R)
        up, down = lists(R, A)
        cores.append((name, what, A, up, down))
    return emit(cores)


# ---- MUFU.TANH: every quantised operand of [2^-8, 8), as a stream of second differences ----

OUT_TANH = os.path.join(REPO, "csrc", "core", "sem", "sfu_tanh.c")
# The unit reads x of [2^e, 2^(e+1)) as its mantissa's top 23 - TANH_SHIFT[e] bits (runs of equal
# results 2^shift long in the dump, every run aligned), so binade e holds 2^(23 - shift) points.
TANH_SHIFT = {119: 6, 120: 6, 121: 6, 122: 5, 123: 5, 124: 4, 125: 4, 126: 4, 127: 3, 128: 2, 129: 3}
TBLOCK = 256                # points a block (one string literal)


def tanh_points(dumps):
    """The unit's result bits at every point, binade by binade (checked to be constant over each
    run), and x >= 8 (biased exponent 130 and up) saturated to 1.0."""
    y = sfu_record.load(os.path.join(dumps, "tanh.npz.xz"))
    pts = []
    for e, sh in TANH_SHIFT.items():
        v = y[(e << 23, P)].reshape(-1, 1 << sh)
        if (v != v[:, :1]).any():
            raise SystemExit("tanh: binade %d is not constant over runs of 2^%d" % (e, sh))
        pts.append(v[:, 0].astype(np.int64))
    for e in (130, 131):
        if (y[(e << 23, P)] != 0x3F800000).any():
            raise SystemExit("tanh: binade %d does not saturate" % e)
    return np.concatenate(pts)


TNSYM = 16                  # symbols: u = 0 .. 14 itself, 15 an escape (then u in 16 bits)
TNCTX = 16                  # contexts: 4 min(u', 3) + min(u'', 3) of the two u before
TMAXLEN = 15


def stream_symbols(pts, block, esc_bits, name):
    """Per block, the zigzagged second differences u (rows: blocks)."""
    d2 = np.diff(pts.reshape(-1, block), 2, axis=1)
    u = np.where(d2 >= 0, 2 * d2, -2 * d2 - 1)
    if u.max() >= 1 << esc_bits:
        raise SystemExit("%s: a second difference past the code" % name)
    return u


def tanh_contexts(u):
    m = np.minimum(u, 3)
    c = np.zeros_like(u)
    c[:, 1:] = 4 * m[:, :-1]
    c[:, 2:] += m[:, :-2]
    return c


def huffman_lengths(counts):
    """Code lengths of a Huffman code for counts (every symbol gets one; ties broken by symbol
    number, so the lengths are deterministic), at most TMAXLEN bits."""
    import heapq
    w = [int(c) + 1 for c in counts]
    while True:
        heap = [(w[i], i, (i,)) for i in range(len(w))]
        heapq.heapify(heap)
        depth = [0] * len(w)
        order = len(w)
        while len(heap) > 1:
            a, ia, sa = heapq.heappop(heap)
            b, ib, sb = heapq.heappop(heap)
            for i in sa + sb:
                depth[i] += 1
            heapq.heappush(heap, (a + b, order, sa + sb))
            order += 1
        if max(depth) <= TMAXLEN:
            return depth
        w = [(v + 1) // 2 for v in w]     # flatten and try again


def canonical(lengths):
    """Canonical codes (the C decoder's order: by length, then symbol)."""
    codes, code, prev = {}, 0, 0
    for ln, sym in sorted((ln, sym) for sym, ln in enumerate(lengths)):
        code <<= ln - prev
        codes[sym] = format(code, "0%db" % ln)
        code += 1
        prev = ln
    return codes


def tanh_tables(u):
    c = tanh_contexts(u)
    sym = np.minimum(u, TNSYM - 1)
    return [huffman_lengths(np.bincount(sym[c == k], minlength=TNSYM)) for k in range(TNCTX)]


def stream_emit(name, pts, block, d1_bits, esc_bits, head, extra=()):
    """The C text of one stream (sfu_tables.h, sfu_stream): head (the file's opening lines),
    its code tables, extra lines, its blocks and the sfu_stream that names them."""
    blocks = pts.reshape(-1, block)
    u = stream_symbols(pts, block, esc_bits, name)
    ctx = tanh_contexts(u)
    lens = tanh_tables(u)
    codes = [canonical(ln) for ln in lens]
    o = list(head) + [
         "/* each context's canonical code: how many codes of each length (1 to 15), and the",
         " * symbols in code order (by length, then symbol) */",
         "static const uint8_t sfu_%s_count[SFU_STREAM_NCTX][16] = {" % name]
    o += ["    {%s}," % ",".join(str(ln.count(k)) for k in range(16)) for ln in lens]
    o += ["};", "/* the first code of each length, and the place in sfu_%s_sym of its symbol */" % name,
          "static const uint16_t sfu_%s_first[SFU_STREAM_NCTX][16] = {" % name]
    for ln in lens:
        first, code = [], 0
        for k in range(16):
            first.append(code)
            code = (code + (ln.count(k) if k else 0)) << 1
        o.append("    {%s}," % ",".join(str(v) for v in first))
    o += ["};", "static const uint8_t sfu_%s_at[SFU_STREAM_NCTX][16] = {" % name]
    for ln in lens:
        idx, at = [], 0
        for k in range(16):
            idx.append(at)
            at += ln.count(k) if k else 0
        o.append("    {%s}," % ",".join(str(v) for v in idx))
    o += ["};", "/* by a code's first 8 bits: its length << 4 | its symbol (0: longer than 8 bits) */",
          "static const uint8_t sfu_%s_fast[SFU_STREAM_NCTX][256] = {" % name]
    for cd in codes:
        fast = [0] * 256
        for sym, c in cd.items():
            if len(c) <= 8:
                lo = int(c, 2) << (8 - len(c))
                for j in range(lo, lo + (1 << (8 - len(c)))):
                    fast[j] = len(c) << 4 | sym
        o.append("    {%s}," % ",".join(str(v) for v in fast))
    o += ["};"] + list(extra) + [
          "static const uint8_t sfu_%s_sym[SFU_STREAM_NCTX][SFU_STREAM_NSYM] = {" % name]
    o += ["    {%s}," % ",".join(str(sym) for _, sym in sorted((l, sym) for sym, l in enumerate(ln))) for ln in lens]
    o += ["};", "", "/* %d points, %d blocks */" % (len(pts), len(blocks)),
          "static const char *const sfu_%s_block[%d] = {" % (name, len(blocks))]
    for b, ub, cb in zip(blocks, u, ctx):
        d1 = int(b[1] - b[0])
        if not (0 <= b[0] < 1 << 32) or abs(d1) >= 1 << (d1_bits - 1):
            raise SystemExit("%s: a block's start past its fields" % name)
        bits = [format(int(b[0]), "036b"), format(d1 + (1 << (d1_bits - 1)), "0%db" % d1_bits)]
        for v, k in zip(ub.tolist(), cb.tolist()):
            bits.append(codes[k][min(v, TNSYM - 1)])
            if v >= TNSYM - 1:
                bits.append(format(v, "0%db" % esc_bits))
        bits = "".join(bits)
        bits += "0" * (-len(bits) % 6)
        o.append('    "%s",' % "".join(B64[int(bits[i:i + 6], 2)] for i in range(0, len(bits), 6)))
    o += ["};", "",
          "const sfu_stream sfu_stream_%s = {%d, %d, %d, sfu_%s_count, sfu_%s_first, sfu_%s_at, sfu_%s_sym,"
          % (name, block, d1_bits, esc_bits, name, name, name, name),
          "                                  sfu_%s_fast, sfu_%s_block};" % (name, name)]
    return "\n".join(o) + "\n"


def tanh_emit(pts):
    head = ["/* sfu_tanh.c - MUFU.TANH as an H200 gives it at every quantised operand of [2^-8, 8)",
            " * (sfu_tables.h says how to read it). Generated by tools/sfu_tables.py from the unit's",
            " * output (tools/device/sfu_record.py); do not edit. */",
            "#include \"sem/sfu_tables.h\"", "",
            "const uint8_t sfu_tanh_shift[SFU_TANH_BINADES] = {%s};" % ",".join(str(v) for v in TANH_SHIFT.values())]
    extra = ["/* the value of each base-64 digit, by character code */",
             "const uint8_t sfu_digit_value[128] = {%s};" % ",".join(
                 str(B64.index(chr(c))) if chr(c) in B64 else "0" for c in range(128))]
    return stream_emit("tanh", pts, TBLOCK, 18, 16, head, extra)


# ---- MUFU.SIN / MUFU.COS: one quarter period, as a stream like tanh's ----

OUT_SIN = os.path.join(REPO, "csrc", "core", "sem", "sfu_sin.c")
SQ = 1 << 23                # points a quarter period (q's low 23 bits)


def sin_points(dumps):
    """MUFU.SIN at every q of the first quarter (tools/device/sincos_record.cu, which checked on
    the H200 that every f32 operand's result is its q's), after checking on every q that some
    operand reaches the rest of the period that the model's symmetries give: sin(q + 1/2) is
    -sin(q); sin(1/4 + t) is sin(1/4 - 1 - t) (t's one's complement in the quarter), cos(q) is
    sin(q + 1/4)."""
    seen, y = sincos_pack.load(os.path.join(dumps, "sincos_q.npz.xz"))
    v = y["sin"][:SQ]
    if not seen[:SQ].all():
        raise SystemExit("sin: a q of the first quarter was not reached")
    q = np.arange(1 << 25, dtype=np.uint32)
    for f in ("sin", "cos"):
        got = sincos_model(v, q + (SQ if f == "cos" else 0))
        bad = np.nonzero(seen & (got != y[f]))[0]
        if len(bad):
            raise SystemExit("%s: %d reached q off the symmetries, the first %d" % (f, len(bad), bad[0]))
    if v[0] != 0 or v[-1] != 0x3F800000:
        raise SystemExit("sin: the quarter does not run from 0 to 1.0 (sfu.c reads its last point as 1.0)")
    return v.astype(np.int64)


def sincos_model(v, q):
    """sin at the 25-bit fraction q from the quarter table v (sfu.c's mufu_sincos)."""
    q = q & ((1 << 25) - 1)
    k, t = q >> 23, q & (SQ - 1)
    r = v[np.where(k & 1, SQ - 1 - t, t)]
    return np.where(k >= 2, r ^ 0x80000000, r).astype(np.uint32)


def sin_emit(v):
    head = ["/* sfu_sin.c - MUFU.SIN as an H200 gives it at every 25-bit fraction q of a period",
            " * in the first quarter (the rest, and MUFU.COS, follow by symmetry; sfu_tables.h says",
            " * how to read it). Generated by tools/sfu_tables.py from the unit's output",
            " * (tools/device/sincos_record.cu); do not edit. */",
            "#include \"sem/sfu_tables.h\"", ""]
    return stream_emit("sin", v, SBLOCK, 31, 32, head)


SBLOCK = 128               # points a block: a look-up decodes up to 127 codes

# ---- --verify: the C code against every dumped operand ----

SHIM = os.path.join(REPO, "tests", "sem", "sfu_shim.c")
SEMDIR = os.path.join(REPO, "csrc", "core", "sem")
FORMS = {"rcpf": ("rcp", "f32", 3), "ex2f": ("ex2", "f32", 3), "rsqf": ("rsqrt", "f32", 3),
         "sqrtf": ("sqrt", "f32", 3), "lg2f": ("lg2", "f32", 3)}


def verify(dumps):
    cc = shutil.which("gcc") or shutil.which("cc")
    with tempfile.TemporaryDirectory() as tmp:
        so = os.path.join(tmp, "libsfu.so")
        subprocess.run([cc, "-std=c11", "-O2", "-fPIC", "-shared", "-I", os.path.join(REPO, "csrc", "core"),
                        "-o", so, os.path.join(SEMDIR, "sfu.c"), os.path.join(SEMDIR, "sfu_tables.c"),
                        SHIM, "-lm"], check=True)
        lib = ctypes.CDLL(so)
        p = ctypes.POINTER(ctypes.c_uint64)
        lib.sfu_shim_run.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint, p, p, p, ctypes.c_size_t]
        exact = True
        for fname, (op, ty, flags) in FORMS.items():
            for (base, count), y in sorted(sfu_record.load(os.path.join(dumps, fname + ".npz.xz")).items()):
                a = (np.uint64(base) + np.arange(count, dtype=np.uint64)).astype(np.uint64)
                d = np.zeros(count, np.uint64)
                rc = lib.sfu_shim_run(op.encode(), ty.encode(), flags, d.ctypes.data_as(p),
                                      a.ctypes.data_as(p), a.ctypes.data_as(p), count)
                assert rc == 0
                ok = int((d == y.astype(np.uint64)).sum())
                print("%s.approx.ftz.%s [%08x, +%d): %d / %d" % (op, ty, base, count, ok, count))
                exact &= ok == count or op == "lg2"
    return exact


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dumps", default=DUMPS)
    ap.add_argument("--refit", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--verify", action="store_true")
    ap.add_argument("--only", choices=("cores", "tanh", "sin"), help="one generated file (default: all)")
    a = ap.parse_args()
    if a.verify:
        sys.exit(0 if verify(a.dumps) else 1)
    outs = []
    if a.only in (None, "cores"):
        outs.append((OUT, build(a.dumps, a.refit)))
    if a.only in (None, "tanh"):
        outs.append((OUT_TANH, tanh_emit(tanh_points(a.dumps))))
    if a.only in (None, "sin"):
        outs.append((OUT_SIN, sin_emit(sin_points(a.dumps))))
    stale = False
    for path, text in outs:
        if a.check:
            same = os.path.exists(path) and open(path).read() == text
            stale |= not same
            print("%s is %s" % (os.path.relpath(path, REPO), "up to date" if same else "out of date"))
        else:
            with open(path, "w") as f:
                f.write(text)
            print("wrote %s (%d bytes)" % (os.path.relpath(path, REPO), len(text)))
    sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
