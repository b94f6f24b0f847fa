"""redux.sync, match.any / match.all.sync, vote.sync and activemask through ptx.Kernel: whole
warps (the H200's recordings are in test_isa_recordings.py), partial membermasks, lanes that have
exited, and the f32 redux of sm_100a, each against a reference written here."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

HEAD = """.version 8.7
.target %s
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout, .param .u32 pmask)
{
    .reg .pred %%p<4>;
    .reg .b32 %%r<16>;
    .reg .b64 %%rd<8>;
    .reg .f32 %%f<4>;
    mov.u32 %%r0, %%tid.x;
    mul.wide.u32 %%rd0, %%r0, 8;
    ld.param.u64 %%rd1, [pin];
    add.u64 %%rd1, %%rd1, %%rd0;
    ld.param.u64 %%rd2, [pout];
    add.u64 %%rd2, %%rd2, %%rd0;
    ld.param.u32 %%r9, [pmask];
    ld.global.u32 %%r1, [%%rd1];
    ld.global.u64 %%rd3, [%%rd1];
    mov.u32 %%r8, 1;
    shl.b32 %%r8, %%r8, %%r0;
    and.b32 %%r8, %%r8, %%r9;
    setp.eq.u32 %%p3, %%r8, 0;
    @%%p3 bra DONE;
%s
DONE:
    ret;
}
"""


def run(body, vals, mask=0xFFFFFFFF, target="sm_90a", threads=32, out_words=1):
    """Lanes in `mask` run `body` (value %r1 / %rd3, mask %r9), storing %r2 (and %r3) at out[t]."""
    vals = np.asarray(vals, dtype=np.uint64)
    m = pa.Machine(target=target)
    out = np.zeros((threads, 2), np.uint32)
    gi, go = m.register(vals.copy()), m.register(out)
    st = "    st.global.u32 [%rd2], %r2;\n" + ("    st.global.u32 [%rd2+4], %r3;\n" if out_words > 1 else "")
    ptx.Kernel(HEAD % (target, body + "\n" + st)).launch(m, grid=1, block=threads,
                                                            params={"pin": gi, "pout": go, "pmask": mask})
    return out


def members(mask, threads=32):
    return [i for i in range(threads) if mask >> i & 1]


MASKS = [0xFFFFFFFF, 0x0000FFFF, 0x80000001, 0x5A5A5A5A, 0x00000004]


def s32(v):
    v = int(v) & 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("op,typ", [("add", "u32"), ("add", "s32"), ("min", "u32"), ("min", "s32"),
                                    ("max", "u32"), ("max", "s32"), ("and", "b32"), ("or", "b32"),
                                    ("xor", "b32")])
def test_redux(op, typ, mask):
    rng = np.random.default_rng(hash((op, typ, mask)) & 0xFFFF)
    vals = rng.integers(0, 1 << 32, 32, dtype=np.uint64)
    vals[3] = 0x80000000
    out = run("    redux.sync.%s.%s %%r2, %%r1, %%r9;" % (op, typ), vals, mask)
    mem = [int(vals[i]) for i in members(mask)]
    if op == "add":
        want = sum(mem) & 0xFFFFFFFF
    elif op in ("min", "max"):
        f = min if op == "min" else max
        want = f(mem, key=s32 if typ == "s32" else None) & 0xFFFFFFFF
    else:
        want = mem[0]
        for v in mem[1:]:
            want = want & v if op == "and" else want | v if op == "or" else want ^ v
    for i in range(32):
        assert out[i, 0] == (want if mask >> i & 1 else 0), (i, hex(out[i, 0]), hex(want))


def _f32(bits):
    return np.array([bits], np.uint32).view(np.float32)[0]


@pytest.mark.parametrize("op", ["min", "max"])
@pytest.mark.parametrize("abs_", [False, True])
@pytest.mark.parametrize("nan", [False, True])
def test_redux_f32_sm100a(op, abs_, nan):
    vals = np.array([0x3F800000, 0xC0000000, 0x7FC00001, 0x80000000, 0x00000000, 0x41200000, 0xC1200000,
                     0x00000001] * 4, np.uint64)
    q = ".abs" * abs_ + ".NaN" * nan
    out = run("    mov.b32 %%f1, %%r1;\n    redux.sync.%s%s.f32 %%f2, %%f1, %%r9;\n    mov.b32 %%r2, %%f2;"
              % (op, q), vals, target="sm_100a")
    xs = [int(v) & (0x7FFFFFFF if abs_ else 0xFFFFFFFF) for v in vals]
    if nan:
        want = 0x7FFFFFFF
    else:
        fin = [x for x in xs if not np.isnan(_f32(x))]
        f = min if op == "min" else max
        # -0 < +0 for min / max
        want = f(fin, key=lambda x: (float(_f32(x)), 0 if x >> 31 else 1))
    assert all(int(o) == want for o in out[:, 0]), (hex(int(out[0, 0])), hex(want))


def test_redux_f32_needs_sm_100a():
    text = HEAD % ("sm_90a", "    mov.b32 %f1, %r1;\n    redux.sync.min.f32 %f2, %f1, %r9;")
    assert not ptx.accepts(text)


@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("w", [32, 64])
def test_match_any_and_all(mask, w):
    rng = np.random.default_rng(mask & 0xFFFF)
    vals = rng.integers(0, 4, 32, dtype=np.uint64) << np.uint64(33 if w == 64 else 0)
    src = "%r1" if w == 32 else "%rd3"
    out = run("    match.any.sync.b%d %%r2, %s, %%r9;" % (w, src), vals, mask)
    mem = members(mask)
    for i in mem:
        assert out[i, 0] == sum(1 << j for j in mem if vals[j] == vals[i])
    out = run("    match.all.sync.b%d %%r2|%%p1, %s, %%r9;\n    selp.u32 %%r3, 1, 0, %%p1;" % (w, src), vals, mask, out_words=2)
    same = len({int(vals[j]) for j in mem}) == 1
    for i in mem:
        assert out[i, 0] == (sum(1 << j for j in mem) if same else 0) and out[i, 1] == same
    eq = np.full(32, 7 << (33 if w == 64 else 0), np.uint64)
    out = run("    match.all.sync.b%d %%r2|%%p1, %s, %%r9;\n    selp.u32 %%r3, 1, 0, %%p1;" % (w, src), eq, mask, out_words=2)
    for i in mem:
        assert out[i, 0] == mask and out[i, 1] == 1


def test_match_all_without_predicate():
    out = run("    match.all.sync.b32 %r2, %r1, %r9;", np.full(32, 5, np.uint64))
    assert (out[:, 0] == 0xFFFFFFFF).all()


def test_match_any_takes_no_predicate():
    with pytest.raises(ptx.PtxSyntaxError, match="predicate"):
        ptx.Kernel(HEAD % ("sm_90a", "    match.any.sync.b32 %r2|%p1, %r1, %r9;"))


@pytest.mark.parametrize("mask", MASKS)
def test_vote_modes(mask):
    rng = np.random.default_rng(mask & 0xFFF)
    vals = rng.integers(0, 2, 32, dtype=np.uint64)
    mem = members(mask)
    body = ("    setp.ne.u32 %%p1, %%r1, 0;\n    vote.sync.%s.pred %%p2, %s%%p1, %%r9;\n"
            "    selp.u32 %%r2, 1, 0, %%p2;")
    for mode in ("all", "any", "uni"):
        for neg in ("", "!"):
            out = run(body % (mode, neg), vals, mask)
            bits = [bool(vals[i]) != (neg == "!") for i in mem]
            want = all(bits) if mode == "all" else any(bits) if mode == "any" else len(set(bits)) == 1
            assert all(out[i, 0] == want for i in mem), (mode, neg)
    out = run("    setp.ne.u32 %p1, %r1, 0;\n    vote.sync.ballot.b32 %r2, %p1, %r9;", vals, mask)
    assert all(out[i, 0] == sum(1 << j for j in mem if vals[j]) for i in mem)


def test_collectives_skip_exited_lanes():
    """Lanes 16-31 exit first; a full membermask then counts the live lanes only."""
    body = ("    setp.ge.u32 %p1, %r0, 16;\n    @%p1 exit;\n    redux.sync.add.u32 %r2, %r1, %r9;\n"
            "    match.any.sync.b32 %r3, %r1, %r9;")
    vals = np.arange(32, dtype=np.uint64) % 3
    out = run(body, vals, out_words=2)
    assert (out[:16, 0] == sum(int(v) for v in vals[:16])).all()
    for i in range(16):
        assert out[i, 1] == sum(1 << j for j in range(16) if vals[j] == vals[i])


def test_activemask_converged_and_diverged():
    out = run("    activemask.b32 %r2;", np.zeros(32, np.uint64))
    assert (out[:, 0] == 0xFFFFFFFF).all()
    out = run("    activemask.b32 %r2;", np.zeros(32, np.uint64), mask=0x0000FFFF)
    for i in range(16):
        assert out[i, 0] & (1 << i) and out[i, 0] & 0xFFFF0000 == 0


def test_a_lane_outside_its_own_membermask_is_an_error():
    body = "    mov.u32 %r10, 1;\n    redux.sync.add.u32 %r2, %r1, %r10;"
    with pytest.raises(Exception, match="membermask"):
        run(body, np.zeros(32, np.uint64))
