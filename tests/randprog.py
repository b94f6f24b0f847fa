"""Random straight-line PTX programs over the instruction table's register operations.

From a seed, `program(seed)` builds one `.entry` (sm_90a): each of 32 threads loads its own
random 64-bit words from a global input array into registers of every width (.b64, .b32, .b16,
.pred from a comparison), runs 20-60 instructions drawn from the register-operation forms of
tools/ptx_rows/ (every family of ptx_tables.collect() but mma; the f32/f64 `.approx`
special functions are left out: their model is fitted, not exact, docs/sfu.md), and stores every
register it wrote to its slot of a global output array.

Each instruction writes fresh registers (single assignment), so the output holds every
intermediate value: where the model and a GPU differ, the first instruction whose result differs
while its sources agree is the one to blame (`first_difference`).

The programs' text depends only on the seed and GENERATOR_VERSION; the recordings
(tests/data/randprog/) keep a hash of each text so that a change of the generator shows.
"""
import functools
import gzip
import json
import hashlib
import itertools
import os
import random
import re
import sys

import numpy as np

_TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
if _TOOLS not in sys.path:
    sys.path.insert(0, _TOOLS)

import ptx_rows  # noqa: E402
import ptx_tables  # noqa: E402

GENERATOR_VERSION = 1
TARGET = "sm_90a"
PTX_VERSION = "8.7"
THREADS = 32
# input registers of each width a program starts from
N_IN = {64: 4, 32: 6, 16: 4, "p": 3}
WORD_ORDER = [64, 32, 16, "p"]
FAMILIES = ["intalu", "intops", "farith", "cvt", "sfu", "carry"]

# register width of each type qualifier (8-bit integers travel in 16-bit registers, fp8 pairs
# in 16 bits, the x2 pairs and tf32 in 32)
TYPE_WIDTH = {}
for _w, _ts in ((16, "b16 u16 s16 f16 bf16 u8 s8 e4m3x2 e5m2x2"),
                (32, "b32 u32 s32 f32 f16x2 bf16x2 tf32"), (64, "b64 u64 s64 f64")):
    for _t in _ts.split():
        TYPE_WIDTH["." + _t] = _w
TYPE_WIDTH[".pred"] = "p"

# the special functions whose model is exact: the 16-bit ones (docs/sfu.md, section 3)
_SFU_EXACT = {".f16", ".f16x2", ".bf16", ".bf16x2"}
_CARRY_CONSUMERS = {"addc", "subc", "madc"}


def _family_of():
    out = {}
    for fam in FAMILIES:
        mod = __import__("ptx_rows." + fam, fromlist=["ROWS"])
        for row in mod.ROWS:
            out[" ".join(row[0].split(";")[0].split()) + ";"] = fam
    return out


def _usable(f):
    """Whether the form runs on sm_90a under PTX_VERSION and is in scope."""
    if f["sm"] > 90 or f["version"] > int(PTX_VERSION.replace(".", "")):
        return False
    if f["arch"] and TARGET not in f["arch"].split():
        return False
    if f["root"] in ("lg2", "sin", "cos", "rsqrt"):
        return False        # only f32/f64 forms: fitted
    if any(s[0] in ("approx", "full") for s in f["slots"]) and f["root"] not in ("ex2", "tanh"):
        return False        # rcp/sqrt/div .approx/.full: fitted
    return True


# The forms the recording was made from (data/randprog/forms.json.gz, what forms_from_table()
# gave then): a program is a function of its seed and these, so the recorded programs stay the
# same when the table's rows are split or corrected. Written by `tools/random_programs.py forms`.
FORMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "randprog", "forms.json.gz")


@functools.lru_cache(maxsize=None)
def forms():
    """The usable register-operation forms the generator draws from (the recording's snapshot)."""
    with gzip.open(FORMS, "rt") as f:
        return json.load(f)


def forms_from_table():
    """The usable register-operation forms of today's table, each a dict of ptx_tables.collect()'s
    plus 'family' and 'key'."""
    fam = _family_of()
    out = []
    for f in ptx_tables.collect():
        key = " ".join(f["template"].split())
        if not f.get("sem") or key not in fam or not _usable(f):
            continue
        out.append(dict(f, family=fam[key], key=key))
    return out


def _tokens(f):
    """The qualifier part of a template as [(slot index, group)], in order; group 0 = required."""
    op = f["template"].split()[0]
    rest = op[len(f["root"]):]
    toks = re.findall(r"\{[^}]*\}|\.[\w:]+", rest)
    out, i = [], 0
    for g, t in enumerate(toks, 1):
        parts = re.findall(r"\.[\w:]+", t)
        for _ in parts:
            out.append((i, g if t.startswith("{") else 0))
            i += 1
    assert i == len(f["slots"]), (f["template"], toks, f["slots"])
    return out


def _allowed(f, q):
    """A qualifier value the target and version allow (the form's per-qualifier needs)."""
    for r in f["reqs"]:
        if r[0] == q and (r[2] > 90 or r[1] > int(PTX_VERSION.replace(".", ""))):
            return False
    return True


def all_qualifiers(f):
    """Every choice of qualifier values of a form (as `qualifiers` draws them), in order."""
    toks = _tokens(f)
    groups = sorted({g for _, g in toks if g})
    for mask in itertools.product([0, 1], repeat=len(groups)):
        on = {g for g, m in zip(groups, mask) if m}
        sets = [[v for v in f["slots"][i][1] if _allowed(f, v)] for i, g in toks if not g or g in on]
        yield from (list(c) for c in itertools.product(*sets))


def qualifiers(f, rnd):
    """Chosen qualifier values in template order (optional groups all or nothing)."""
    take = {}
    out = []
    for i, g in _tokens(f):
        name, vals, opt, _ = f["slots"][i]
        if g and g not in take:
            take[g] = rnd.random() < 0.5
        if g and not take[g]:
            continue
        vals = [v for v in vals if _allowed(f, v)]
        out.append(rnd.choice(vals))
    return out


def in_scope(f, qs):
    """Whether an instance is one to draw: the special functions only where the model is exact
    (tanh.approx.f32 and ex2.approx.f32 are fitted), and widths this generator has."""
    types = [q for q in qs if q in TYPE_WIDTH]
    if f["family"] == "sfu" and not (set(types) <= _SFU_EXACT):
        return False
    return all(w in (16, 32, 64, "p", "imm8") for w in operand_widths(f, qs))


def opcode(f, qs):
    return f["root"] + "".join(qs)


# The opcodes ptxas 13.0 assembles for sm_90a with the operand widths operand_widths gives,
# out of every qualifier choice of every form (tools/random_programs.py verdicts writes it): the
# templates allow more than ptxas takes (add.b32, setp.lo.s32, cvt.rn.bf16.u8, .ftz on f64
# compares, ...), and a program must assemble.
VERDICTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "randprog", "ptxas_opcodes.txt")


@functools.lru_cache(maxsize=None)
def accepted():
    """{form key: [qualifier lists ptxas takes]} over the usable forms."""
    ok = set(open(VERDICTS).read().split())
    out = {}
    for f in forms():
        qss = [qs for qs in all_qualifiers(f) if in_scope(f, qs) and opcode(f, qs) in ok]
        if qss:
            out[f["key"]] = qss
    return out


def operand_widths(f, qs):
    """The register width ('p' for a predicate, 'imm8' for an 8-bit immediate) of each operand."""
    root = f["root"]
    ops = [o[0] for o in f["operands"]]
    types = [q for q in qs if q in TYPE_WIDTH]
    t0 = TYPE_WIDTH[types[0]] if types else 32
    w = {}
    if root in ("setp", "testp"):
        w = {o: ("p" if o in ("p|q", "p", "c") else t0) for o in ops}
    elif root == "set":
        w = {"d": TYPE_WIDTH[types[0]], "a": TYPE_WIDTH[types[1]], "b": TYPE_WIDTH[types[1]], "c": "p"}
    elif root == "selp":
        w = {"d": t0, "a": t0, "b": t0, "c": "p"}
    elif root == "slct":
        w = {"d": t0, "a": t0, "b": t0, "c": 32}
    elif root in ("mul", "mad") and ".wide" in qs:
        w = {"d": 2 * t0, "a": t0, "b": t0, "c": 2 * t0}
    elif root in ("shl", "shr"):
        w = {"d": t0, "a": t0, "b": 32}
    elif root in ("bfind", "popc", "clz"):
        w = {"d": 32, "a": t0}
    elif root == "bfe":
        w = {"d": t0, "a": t0, "b": 32, "c": 32}
    elif root == "bfi":
        w = {"d": t0, "a": t0, "b": t0, "c": 32, "e": 32}
    elif root == "lop3":
        w = {"d": 32, "a": 32, "b": 32, "c": 32, "immLut": "imm8"}
    elif root in ("cvt", "cvt.pack"):
        if root == "cvt.pack":
            w = {o: 32 for o in ops}
        else:
            da = TYPE_WIDTH[types[0]]
            sa = TYPE_WIDTH[types[1]]
            w = {"d": da, "a": sa, "b": sa}
    else:
        w = {o: t0 for o in ops}
    return [w[o] for o in ops]


# --- values ---------------------------------------------------------------------------------

_F16 = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7D01, 0xFE01, 0x7FFF, 0x0001, 0x8001, 0x03FF, 0x83FF,
        0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x3800, 0x3C01, 0x5BFF, 0x6400, 0x4900]
_BF16 = [0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0xFFC1, 0x0001, 0x8001, 0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x3F80,
         0xBF80, 0x3F81, 0x4B00, 0x4EFF, 0xCF00]
_I16 = [0x7FFF, 0x8000, 0xFFFF, 0x0001, 0x00FF, 0x0100, 0x0010]
_F32 = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FA00001, 0xFFFFFFFF,
        0x7FFFFFFF, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF,
        0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F000000, 0x3F801000, 0x3F808000, 0x33800000, 0x4B000000,
        0x4B7FFFFF, 0x4EFFFFFF, 0x4F000000, 0xCF000000, 0x4F800000, 0x5F000000, 0xDF000000, 0x477FE000,
        0x477FF000, 0x38800000, 0x387FC000, 0x33000000, 0x3F7FFFFF, 0x3EFFFFFF, 0x43FF8000, 0x47800000]
_I32 = [0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x00000001, 0xFFFF8000, 0x00007FFF, 0x0000FFFF, 0x00010000,
        0x00FFFFFF, 0xFF800000, 0x01000000]
_F64 = [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000,
        0x7FF4000000000001, 0xFFF0000000000001, 0x7FFFFFFFFFFFFFFF, 1, (1 << 63) | 1, 0x000FFFFFFFFFFFFF,
        0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x3FF0000000000000, 0xBFF0000000000000,
        0x3FF0000010000000, 0x3FF0000020000000, 0x3FF0020000000000, 0x3FF0010000000000, 0x3FE0000000000000,
        0x47EFFFFFE0000000, 0x47EFFFFFF0000000, 0x380FFFFFF0000000, 0x36A0000000000000, 0x43E0000000000000,
        0xC3E0000000000000, 0x43F0000000000000, 0x41E0000000000000, 0x41DFFFFFFFC00000, 0x40EFFFE000000000,
        0x40EFFFF000000000, 0x3E70000000000000, 0x3FEFFFFFFFFFFFFF]
_I64 = [0x7FFFFFFFFFFFFFFF, 1 << 63, (1 << 64) - 1, 1, 0xFFFFFFFF, 0x100000000, 0x80000000, 0xFFFFFFFF80000000,
        0x00000000FFFF8000]


def _fp_moderate(rng, w):
    """A float of width w (or two halves' worth) with a smallish exponent, so sums and products
    of two of them round in every way (not only overflow / vanish)."""
    if w == 16:
        if rng.random() < 0.5:          # f16 exponent 10..20
            return (rng.randrange(2) << 15) | (rng.randrange(10, 21) << 10) | rng.randrange(1 << 10)
        return (rng.randrange(2) << 15) | (rng.randrange(120, 135) << 7) | rng.randrange(1 << 7)
    if w == 32:
        r = rng.random()
        if r < 0.4:
            return (rng.randrange(2) << 31) | (rng.randrange(110, 145) << 23) | rng.randrange(1 << 23)
        if r < 0.55:                    # an integer-valued float, or one just off it
            v = rng.randrange(-70000, 70000) + rng.choice([0, 0, 0.5, 0.25, 0.75])
            return int(np.array(v, np.float32).view(np.uint32))
        return _fp_moderate(rng, 16) << 16 | _fp_moderate(rng, 16)
    r = rng.random()
    if r < 0.4:
        return (rng.randrange(2) << 63) | (rng.randrange(1000, 1050) << 52) | rng.getrandbits(52)
    if r < 0.55:
        v = rng.randrange(-(1 << 40), 1 << 40) + rng.choice([0, 0, 0.5, 0.25])
        return int(np.array(v, np.float64).view(np.uint64))
    return _fp_moderate(rng, 32) << 32 | _fp_moderate(rng, 32)


def value(rng, w):
    """One input word for a register of width w: a special value of some type of that width,
    a small integer (shift amounts, bit positions), a moderate float, or random bits."""
    r = rng.random()
    if w == "p":
        return rng.randrange(2)
    bits = w
    if r < 0.3:
        pool = {16: _F16 + _BF16 + _I16, 32: _F32 + _I32, 64: _F64 + _I64}[bits]
        v = rng.choice(pool)
        if bits == 32 and rng.random() < 0.3:      # a pair of 16-bit specials
            v = rng.choice(_F16 + _BF16) << 16 | rng.choice(_F16 + _BF16 + [rng.getrandbits(16)])
        if bits == 64 and rng.random() < 0.3:      # a pair of 32-bit specials
            v = rng.choice(_F32 + _I32) << 32 | rng.choice(_F32 + _I32 + [rng.getrandbits(32)])
        return v
    if r < 0.45:
        v = rng.randrange(0, 72) if rng.random() < 0.7 else -rng.randrange(1, 72)
        return v & ((1 << bits) - 1)
    if r < 0.7:
        return _fp_moderate(rng, bits)
    if r < 0.8:                                    # a subnormal of the width's float (or halves)
        if bits == 16:
            return (rng.randrange(2) << 15) | rng.randrange(1 << 10)
        if bits == 32:
            return (rng.randrange(2) << 31) | rng.randrange(1 << 23)
        return (rng.randrange(2) << 63) | rng.getrandbits(52)
    return rng.getrandbits(bits)


# --- programs -------------------------------------------------------------------------------

_PREFIX = {64: "%rd", 32: "%r", 16: "%h", "p": "%p"}
_SIZE = {64: 8, 32: 4, 16: 2, "p": 1}


class Program:
    """One generated program: `text` (a module of one .entry named `entry`), `inputs`
    (uint64 [THREADS, n_words]), the output layout (`outputs`: [(register, width, byte offset)],
    `out_stride` bytes a thread) and `instructions` ([(form key, line, dests, sources)])."""

    def __init__(self, seed):
        self.seed = seed
        self.entry = "rp%d" % seed
        rnd = random.Random(seed)
        self.instructions = []
        regs = {w: ["%s%d" % (_PREFIX[w], i) for i in range(N_IN[w])] for w in WORD_ORDER}
        count = {w: N_IN[w] for w in WORD_ORDER}
        self.n_words = sum(N_IN.values())
        acc = accepted()
        fs = [f for f in forms() if f["key"] in acc]
        producers = [f for f in fs if f["family"] == "carry" and f["root"] not in _CARRY_CONSUMERS]
        consumers = [f for f in fs if f["family"] == "carry" and f["root"] in _CARRY_CONSUMERS]
        n = rnd.randint(20, 60)
        cc = False
        chain = 0
        while len(self.instructions) < n:
            if chain:
                f = rnd.choice(consumers)
                chain -= 1
            else:
                f = rnd.choice(fs)
                if f["root"] in _CARRY_CONSUMERS and not cc:
                    continue
                if f in producers and rnd.random() < 0.7:
                    chain = rnd.randint(1, 3)
            qs = qualifiers(f, rnd)
            if qs not in acc[f["key"]]:
                qs = rnd.choice(acc[f["key"]])
            if f["family"] == "carry":
                cc = cc or ".cc" in qs or f["root"] not in _CARRY_CONSUMERS
            widths = operand_widths(f, qs)
            dests, srcs, ops = [], [], []
            for (name, _), w in zip(f["operands"], widths):
                if name in ("d", "p", "p|q"):
                    d = "%s%d" % (_PREFIX[w], count[w])
                    count[w] += 1
                    dests.append((d, w))
                    txt = d
                    if name == "p|q" and rnd.random() < 0.4:
                        q = "%s%d" % (_PREFIX[w], count[w])
                        count[w] += 1
                        dests.append((q, w))
                        txt = d + "|" + q
                    ops.append(txt)
                elif w == "imm8":
                    ops.append("0x%02x" % rnd.randrange(256))
                else:
                    pool = regs[w]
                    s = rnd.choice(pool[-6:]) if rnd.random() < 0.5 else rnd.choice(pool)
                    srcs.append(s)
                    neg = name == "c" and w == "p" and f["root"] in ("setp", "set") and rnd.random() < 0.25
                    ops.append(("!" if neg else "") + s)
            for d, w in dests:
                regs[w].append(d)
            line = "%s%s %s;" % (f["root"], "".join(qs), ", ".join(ops))
            self.instructions.append((f["key"], line, dests, srcs))
        self.count = count
        self._layout()
        self.inputs = self._inputs()
        self.text = self._text()
        self.hash = hashlib.sha256(self.text.encode()).hexdigest()[:16]

    def _layout(self):
        self.outputs = []
        off = 0
        for w in WORD_ORDER:
            for _, dests, in [(i[0], i[2]) for i in self.instructions]:
                for d, dw in dests:
                    if dw == w:
                        self.outputs.append((d, w, off))
                        off += _SIZE[w]
        self.out_stride = (off + 7) // 8 * 8

    def _inputs(self):
        rng = random.Random(self.seed * 7919 + 1)
        words = []
        for _t in range(THREADS):
            row = []
            for w in WORD_ORDER:
                row += [value(rng, w) for _ in range(N_IN[w])]
            words.append(row)
        return np.array(words, dtype=np.uint64)

    def _text(self):
        return module([self])

    def body(self):
        e = self.entry
        L = [".visible .entry %s(.param .u64 %s_in, .param .u64 %s_out)" % (e, e, e), "{"]
        for w in WORD_ORDER:
            L.append("\t.reg .%s %s<%d>;" % ("pred" if w == "p" else "b%d" % w, _PREFIX[w], self.count[w]))
        L.append("\t.reg .b32 %t<3>;")
        L.append("\t.reg .b16 %ht;")
        L.append("\t.reg .b64 %a<4>;")
        L.append("\tmov.u32 %t0, %tid.x;")
        L.append("\tld.param.u64 %%a0, [%s_in];" % e)
        L.append("\tcvta.to.global.u64 %a0, %a0;")
        L.append("\tmul.wide.u32 %%a2, %%t0, %d;" % (8 * self.n_words))
        L.append("\tadd.s64 %a0, %a0, %a2;")
        L.append("\tld.param.u64 %%a1, [%s_out];" % e)
        L.append("\tcvta.to.global.u64 %a1, %a1;")
        L.append("\tmul.wide.u32 %%a3, %%t0, %d;" % self.out_stride)
        L.append("\tadd.s64 %a1, %a1, %a3;")
        k = 0
        for w in WORD_ORDER:
            for i in range(N_IN[w]):
                r = "%s%d" % (_PREFIX[w], i)
                if w == "p":
                    L.append("\tld.global.b32 %%t1, [%%a0+%d];" % (8 * k))
                    L.append("\tsetp.ne.b32 %s, %%t1, 0;" % r)
                else:
                    L.append("\tld.global.b%d %s, [%%a0+%d];" % (w, r, 8 * k))
                k += 1
        for _, line, _, _ in self.instructions:
            L.append("\t" + line)
        for r, w, off in self.outputs:
            if w == "p":
                L.append("\tselp.u16 %%ht, 1, 0, %s;" % r)
                L.append("\tst.global.u8 [%%a1+%d], %%ht;" % off)
            else:
                L.append("\tst.global.b%d [%%a1+%d], %s;" % (w, off, r))
        L.append("\tret;")
        L.append("}")
        return "\n".join(L) + "\n"


def module(programs):
    """A module holding the programs' entries (one for the model, many for a GPU load)."""
    head = ".version %s\n.target %s\n.address_size 64\n\n" % (PTX_VERSION, TARGET)
    return head + "\n".join(p.body() for p in programs)


def program(seed):
    return Program(seed)


def registers(p, out):
    """{register: uint64 array [THREADS]} of a program's output bytes (uint8 [THREADS * stride])."""
    b = np.asarray(out, dtype=np.uint8).reshape(THREADS, p.out_stride)
    res = {}
    for r, w, off in p.outputs:
        n = _SIZE[w]
        v = np.zeros(THREADS, dtype=np.uint64)
        for j in range(n):
            v |= b[:, off + j].astype(np.uint64) << np.uint64(8 * j)
        res[r] = v
    return res


def first_difference(p, got, want):
    """The instructions to blame where two output byte arrays differ: for each thread, the first
    instruction whose destination differs while every source register it read agrees (the input
    registers always do). [(instruction index, thread)]."""
    g, w = registers(p, got), registers(p, want)
    out = []
    for t in range(THREADS):
        for i, (_, _, dests, srcs) in enumerate(p.instructions):
            if any(g[d][t] != w[d][t] for d, _ in dests):
                if all(s not in g or g[s][t] == w[s][t] for s in srcs):
                    out.append((i, t))
                break
    return out


def differences(p, got, want, known=()):
    """Where two output byte arrays differ, apart from what instructions of the opcodes in `known`
    explain: ([(instruction index, thread)] of the first unexplained difference of each thread,
    {known opcode: threads where its own result differed}). A result is explained when a known
    opcode wrote it differing, or it was computed from one (a register, or the carry flag)."""
    g, w = registers(p, got), registers(p, want)
    bad, seen = [], {}
    for t in range(THREADS):
        tainted, cc = set(), False
        for i, (_, line, dests, srcs) in enumerate(p.instructions):
            op = instance_key(line)
            root = op.split(".")[0]
            differs = any(g[d][t] != w[d][t] for d, _ in dests)
            from_taint = any(s in tainted for s in srcs) or (cc and root in _CARRY_CONSUMERS)
            if op in known and not from_taint and differs:
                seen[op] = seen.get(op, 0) + 1
                from_taint = True
            if from_taint:
                tainted.update(d for d, _ in dests)
            elif differs:
                bad.append((i, t))
                break
            if ".cc" in op:
                cc = from_taint
        # (a carry consumer without .cc leaves the flag as it was)
    return bad, seen


def instance_key(line):
    """An instruction's opcode with its qualifiers (the operands dropped): `add.rn.f32`."""
    return line.split()[0]
