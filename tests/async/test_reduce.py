"""Reductions: cp.reduce.async.bulk (to .global and .shared::cluster) and
cp.reduce.async.bulk.tensor.

Three layers:
  (a) the recorded hardware results (tests/data/{bulk_reduce,cluster_bulk_reduce,
      tensor_reduce}.jsonl.gz, tests/data/README.md) replayed through
      ptxasync.golden;
  (b) the C element arithmetic (ptxasync._core.reduce_apply) against the
      independent exact-rational reference tests/reduce_reference.py, on random
      data rich in special values;
  (c) the rules: valid (op, type) pairs, operand checks, bulk async-group
      completion, citing the PTX ISA text or the golden observation.
"""
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxasync
from ptxasync import _core, golden, mapa
from ptxasync.enums import DataType, RedOp, ReduceType

import reduce_reference as R  # noqa: E402

import testpaths  # noqa: E402
DATA = Path(testpaths.DATA)

OPS = [op.name.lower() for op in RedOp]
RTYPES = [t.name.lower() for t in ReduceType]
RT_BYTES = {"b32": 4, "b64": 8, "u32": 4, "s32": 4, "u64": 8, "s64": 8,
            "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
UT = {2: np.uint16, 4: np.uint32, 8: np.uint64}

# PTX ISA, cp.reduce.async.bulk, "valid combinations of .redOp and element type"
# (also exactly the forms ptxas 13.0 accepts: golden observation 18, C17).
GLOBAL_VALID = {op: set(ts) for op, ts in R.BULK_VALID.items()}
CLUSTER_VALID = {"add": {"u32", "s32", "u64"}, "min": {"u32", "s32"}, "max": {"u32", "s32"},
                 "inc": {"u32"}, "dec": {"u32"}, "and": {"b32"}, "or": {"b32"}, "xor": {"b32"}}
NOFTZ = {("add", "f16"), ("add", "bf16")}   # .add.f16 / .add.bf16 exist only as .add.noftz


# ============================================================== (a) golden set

@pytest.mark.parametrize("family", ["bulk_reduce", "cluster_bulk_reduce", "tensor_reduce"])
def test_golden_family(family):
    """Every recorded case of the family reproduces byte for byte (golden README
    observations 11, 12, 18, C1, C2, C6, C14; docs/reductions.md); cases the model
    cannot replay are 'unsupported', never silently passed."""
    path = DATA / f"{family}.jsonl.gz"
    results, failures = golden.check_file(path)
    r = results[family]
    shown = "\n".join(f"{cid}: {msg}" for cid, msg in failures[:20])
    assert r["failed"] == 0, f"{r['failed']} {family} case(s) failed:\n{shown}"
    assert r["passed"] > 0
    assert r["unsupported"] == 0, r


def _cases(family):
    with gzip.open(DATA / f"{family}.jsonl.gz", "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.mark.parametrize("family,field", [("bulk_reduce", None), ("cluster_bulk_reduce", "smem"),
                                          ("cluster_bulk_reduce", "tx")])
def test_golden_runner_detects_a_difference(family, field):
    """The runner really compares: a recorded case with one result changed fails."""
    case = next(c for c in _cases(family) if not c.get("error"))
    if field is None:
        after = bytearray.fromhex(case["global_after_hex"])
        after[case["params"]["global_dst_offset"]] ^= 1
        case["global_after_hex"] = after.hex()
    else:
        k = next(k for k in case["ctas"] if k["cluster_ctarank"] == case["params"]["dst_rank"])
        if field == "smem":
            after = bytearray.fromhex(k["smem_after_hex"])
            after[case["params"]["smem_dst_offset"]] ^= 1
            k["smem_after_hex"] = after.hex()
        else:
            k["tx_bytes_observed"] -= 16
    status, msg = golden.check_case(case)
    assert status == "failed" and msg


# ============================================================== (b) arithmetic

def _float_specials(e_bits, m_bits):
    w = 1 + e_bits + m_bits
    sign = 1 << (w - 1)
    exp_all = ((1 << e_bits) - 1) << m_bits
    bias = (1 << (e_bits - 1)) - 1
    one = bias << m_bits
    quiet = 1 << (m_bits - 1)
    pos = [0, 1, 2, 3, (1 << m_bits) - 1, (1 << m_bits) - 2, 1 << m_bits, (1 << m_bits) + 1,
           exp_all - 1, exp_all - 2, exp_all,                       # max, max-1ulp, inf
           exp_all | quiet, exp_all | quiet | 1, exp_all | ((1 << m_bits) - 1),  # qNaNs
           exp_all | 1, exp_all | (quiet - 1), exp_all | 0x5,       # signalling NaNs
           one, one + 1, one - 1, one + (1 << m_bits), one - (1 << m_bits),
           (bias + m_bits) << m_bits, ((bias + m_bits + 1) << m_bits) | 1]
    return sorted({v | s for v in pos for s in (0, sign)})


def _int_specials(bits):
    mask = (1 << bits) - 1
    vals = [0, 1, 2, 3, 5, 7, 8, mask, mask - 1, (1 << (bits - 1)) - 1, 1 << (bits - 1),
            (1 << (bits - 1)) + 1, (1 << (bits - 1)) - 2, 0xFFFF, 0x10000,
            int("AA" * (bits // 8), 16), int("55" * (bits // 8), 16)]
    return sorted({v & mask for v in vals})


FLOAT_FMT = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}


def _specials(kind, bits):
    return _float_specials(*FLOAT_FMT[kind]) if kind in FLOAT_FMT else _int_specials(bits)


def _pairs(kind, bits):
    """(dst, src) element pairs: specials, random bits, and src derived from dst
    (negation -> exact cancellation, neighbours -> rounding and subnormal results)."""
    mask = (1 << bits) - 1
    sign = 1 << (bits - 1)
    spec = st.sampled_from(_specials(kind, bits))
    elem = st.one_of(spec, spec, st.integers(0, mask))

    def derive(d):
        return st.one_of(
            elem,
            st.just(d),
            st.just(d ^ sign),
            st.integers(-4, 4).map(lambda k: (d + k) & mask),
            st.integers(-4, 4).map(lambda k: ((d ^ sign) + k) & mask),
        )
    return elem.flatmap(lambda d: derive(d).map(lambda s: (d, s)))


BULK_PAIRS = [(op, t) for op in OPS for t in RTYPES if t in GLOBAL_VALID[op]]

# tensor map data type -> (kind for the special pool, bits)
TENSOR_KIND = {2: ("u32", 32), 3: ("s32", 32), 4: ("u64", 64), 5: ("s64", 64), 6: ("f16", 16),
               7: ("f32", 32), 8: ("f64", 64), 9: ("bf16", 16), 10: ("f32", 32),
               11: ("f32", 32), 12: ("f32", 32)}
TENSOR_PAIRS = sorted((op, dt) for op, dt in R.TENSOR_EXECUTES)

_SETTINGS = settings(max_examples=25, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _run(op, typ, pairs, tensor):
    bits = RT_BYTES[typ] * 8 if not tensor else TENSOR_KIND[typ][1]
    ut = UT[bits // 8]
    dst = np.array([p[0] for p in pairs], dtype=ut)
    src = np.array([p[1] for p in pairs], dtype=ut)
    if tensor:
        want = R.reduce_tensor_ref(op, typ, dst, src)
    else:
        want = R.reduce_ref(op, typ, dst, src)
    got = dst.copy()
    code = int(DataType(typ)) if tensor else int(ReduceType[typ.upper()])
    _core.reduce_apply(int(RedOp[op.upper()]), code, got, src.tobytes(), tensor)
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, "; ".join(
        f"d=0x{int(dst[i]):x} s=0x{int(src[i]):x}: C 0x{int(got[i]):x}, reference 0x{int(want[i]):x}"
        for i in bad[:5])


@pytest.mark.parametrize("op,typ", BULK_PAIRS, ids=[f"{o}.{t}" for o, t in BULK_PAIRS])
def test_bulk_arithmetic_matches_reference(op, typ):
    """reduce_apply (csrc/core/reduce.c) == tests/reduce_reference.py for every
    valid cp.reduce.async.bulk (op, type) pair (docs/reductions.md rules)."""
    bits = RT_BYTES[typ] * 8

    @_SETTINGS
    @given(st.lists(_pairs(typ, bits), min_size=1, max_size=48))
    def prop(pairs):
        _run(op, typ, pairs, tensor=False)
    prop()


@pytest.mark.parametrize("op,dt", TENSOR_PAIRS, ids=[f"{o}.{DataType(d).name}" for o, d in TENSOR_PAIRS])
def test_tensor_arithmetic_matches_reference(op, dt):
    """reduce_apply(tensor=True) == the reference for every (op, map data type)
    pair that executes on sm_90 (golden observation 11), FLOAT32_FTZ / TFLOAT32 /
    TFLOAT32_FTZ included (docs/reductions.md, FTZ and TF32 map types)."""
    kind, bits = TENSOR_KIND[dt]

    @_SETTINGS
    @given(st.lists(_pairs(kind, bits), min_size=1, max_size=48))
    def prop(pairs):
        _run(op, dt, pairs, tensor=True)
    prop()


def test_all_special_pairs_exhaustively():
    """Every (dst, src) pair of the special pools, for every float pair (the
    cases hypothesis might sample too rarely: NaN x NaN, inf x -inf, ...)."""
    for op, typ in BULK_PAIRS:
        if typ not in FLOAT_FMT:
            continue
        bits = RT_BYTES[typ] * 8
        sp = _specials(typ, bits)
        _run(op, typ, [(d, s) for d in sp for s in sp], tensor=False)
    for dt in (10, 11, 12):
        sp = _specials("f32", 32)
        _run("add", dt, [(d, s) for d in sp for s in sp], tensor=True)


def test_invalid_bulk_pair_leaves_destination_unchanged():
    """reduce.h: pa_reduce_bulk_apply leaves dst unchanged for a pair outside the table."""
    dst = np.arange(8, dtype=np.uint32)
    before = dst.copy()
    _core.reduce_apply(int(RedOp.MIN), int(ReduceType.F32), dst, np.ones(8, np.uint32).tobytes(), False)
    assert (dst == before).all()


def test_f32_add_keeps_subnormals_and_ftz_maps_flush():
    """PTX ISA: "the current implementation of cp.reduce.async.bulk.add.f32 flushes
    subnormal inputs and results to sign-preserving zero". The sm_90 hardware does
    not (docs/reductions.md, 193 subnormal-input / 44 subnormal-result golden pairs);
    FLOAT32_FTZ / TFLOAT32_FTZ maps do flush (measured on an H200)."""
    dst = np.array([0x00000001, 0x00800000, 0x80000003], dtype=np.uint32)
    src = np.array([0x00000001, 0x80000001, 0x00000001], dtype=np.uint32)
    want = np.array([0x00000002, 0x007FFFFF, 0x80000002], dtype=np.uint32)
    for code, tensor in ((int(ReduceType.F32), False), (int(DataType.FLOAT32), True),
                         (int(DataType.TFLOAT32), True)):
        got = dst.copy()
        _core.reduce_apply(int(RedOp.ADD), code, got, src.tobytes(), tensor)
        assert (got == want).all(), (code, tensor, [hex(x) for x in got])
    for dt in (DataType.FLOAT32_FTZ, DataType.TFLOAT32_FTZ):
        got = dst.copy()
        _core.reduce_apply(int(RedOp.ADD), int(dt), got, src.tobytes(), True)
        # -sub + +sub: flushed to -0 + +0 = +0 (docs/reductions.md)
        assert [int(x) for x in got] == [0, 0x00800000, 0], dt


# ============================================================== (c) rules

def _machine(ctas=1):
    m = ptxasync.Machine(ctas=ctas, smem_bytes=4096)
    return m, m.alloc(4096)


def _issue(m, g, op, typ, dst_space, noftz=False, size=16):
    if dst_space == "global":
        m.cp_reduce_async_bulk(op, typ, g.address, 0, size, noftz=noftz)
    else:
        bar = m.mbarrier(64)
        if not getattr(m, "_test_bar_ready", False):   # init once (re-init is a Hazard)
            bar.init(1)
            m._test_bar_ready = True
        m.cp_reduce_async_bulk(op, typ, 1024, 512, size, mbar=bar, noftz=noftz,
                               dst_space="shared::cluster")


@pytest.mark.parametrize("dst_space", ["global", "shared::cluster"])
def test_bulk_pair_table(dst_space):
    """PTX ISA table of valid (.redOp, .type) combinations per destination: every
    pair outside it raises InvalidValue naming the pair; every pair in it issues.
    .add.f16 / .add.bf16 exist only with .noftz; .noftz on anything else is invalid."""
    valid = GLOBAL_VALID if dst_space == "global" else CLUSTER_VALID
    dname = ".global" if dst_space == "global" else ".shared::cluster"
    for op in OPS:
        for typ in RTYPES:
            m, g = _machine()
            needs_noftz = (op, typ) in NOFTZ
            if typ in valid[op]:
                _issue(m, g, op, typ, dst_space, noftz=needs_noftz)
                if needs_noftz:
                    with pytest.raises(ptxasync.InvalidValue, match=rf"\.add\.{typ}.*noftz"):
                        _issue(m, g, op, typ, dst_space)
                else:
                    with pytest.raises(ptxasync.InvalidValue, match="noftz"):
                        _issue(m, g, op, typ, dst_space, noftz=True)
            else:
                with pytest.raises(ptxasync.InvalidValue) as ei:
                    _issue(m, g, op, typ, dst_space, noftz=needs_noftz)
                msg = str(ei.value)
                assert f".{op}." in msg and f".{typ}" in msg and dname in msg, msg


def test_type_and_op_spellings():
    """PTX spellings are accepted: 'add' / '.add', 'u32' / '.u32', '.noftz.f16'."""
    m, g = _machine()
    m.cp_reduce_async_bulk(".add", ".u32", g.address, 0, 16)
    m.cp_reduce_async_bulk("ADD", "U64", g.address, 0, 16)
    m.cp_reduce_async_bulk(RedOp.MAX, ReduceType.S64, g.address, 0, 16)
    m.cp_reduce_async_bulk("add", ".noftz.f16", g.address, 0, 16)
    m.cp_reduce_async_bulk("add", "bf16", g.address, 0, 16, noftz=True)
    with pytest.raises(ValueError, match="not a cp.reduce.async.bulk type"):
        m.cp_reduce_async_bulk("add", "f8", g.address, 0, 16)
    with pytest.raises(ValueError, match="RedOp"):
        m.cp_reduce_async_bulk("mul", "u32", g.address, 0, 16)


TENSOR_DTYPES = [DataType(v) for v in range(13)]


@pytest.mark.parametrize("dt", TENSOR_DTYPES, ids=[d.name for d in TENSOR_DTYPES])
def test_tensor_pairs_that_do_not_execute_fault(dt):
    """Golden observation 11: cp.reduce.async.bulk.tensor faults with
    cudaErrorIllegalInstruction on every (op, map type) pair outside the executing
    set (e.g. and/or/xor on INT64 although the ISA lists .b64; any op on UINT8 /
    UINT16); IllegalInstruction names the pair. The executing pairs complete."""
    esize = _core.dtype_info(int(dt))["bytes"]
    for op in OPS:
        m = ptxasync.Machine(smem_bytes=4096)
        g = m.alloc(4096)
        tm = ptxasync.TensorMap.tiled(dt, g.address, [64 // esize, 4], [64], [16 // esize, 2])
        if (op, int(dt)) in R.TENSOR_EXECUTES:
            m.cp_reduce_async_bulk_tensor(op, tm, [0, 0], 1024)
            m.cp_async_bulk_commit_group()
            m.cp_async_bulk_wait_group(0)
        else:
            with pytest.raises(ptxasync.IllegalInstruction) as ei:
                m.cp_reduce_async_bulk_tensor(op, tm, [0, 0], 1024)
            assert f".{op} " in str(ei.value) and dt.name in str(ei.value), str(ei.value)
            assert m.pending == 0


def test_bulk_operand_rules():
    """PTX ISA, cp.reduce.async.bulk: "size must be a multiple of 16" (the ISA calls
    anything else undefined; the model refuses it), "dstMem and srcMem must be
    aligned to 16 bytes", and the ranges must lie in memory."""
    m, g = _machine()
    with pytest.raises(ptxasync.InvalidValue, match="multiple of 16"):
        m.cp_reduce_async_bulk("add", "u32", g.address, 0, 24)
    with pytest.raises(ptxasync.MisalignedAddress, match="srcMem"):
        m.cp_reduce_async_bulk("add", "u32", g.address, 8, 16)
    with pytest.raises(ptxasync.MisalignedAddress, match="dstMem"):
        m.cp_reduce_async_bulk("add", "u32", g.address + 4, 0, 16)
    with pytest.raises(ptxasync.IllegalAddress):          # global range past the buffer
        m.cp_reduce_async_bulk("add", "u32", g.address + 4096 - 16, 0, 32)
    with pytest.raises(ptxasync.IllegalAddress):          # no global memory there
        m.cp_reduce_async_bulk("add", "u32", 0x10, 0, 16)
    with pytest.raises(ptxasync.IllegalAddress):          # shared source past the CTA's memory
        m.cp_reduce_async_bulk("add", "u32", g.address, 4096 - 16, 32)
    bar = m.mbarrier(64).init(1)
    with pytest.raises(ptxasync.IllegalAddress):          # shared::cluster rank outside the cluster
        m.cp_reduce_async_bulk("add", "u32", mapa(1024, 1), 512, 16, mbar=bar,
                               dst_space="shared::cluster")
    with pytest.raises(ptxasync.MisalignedAddress, match="dstMem"):
        m.cp_reduce_async_bulk("add", "u32", 1032, 512, 16, mbar=bar, dst_space="shared::cluster")
    with pytest.raises(ValueError, match="mbar"):
        m.cp_reduce_async_bulk("add", "u32", 1024, 512, 16, dst_space="shared::cluster")
    assert m.pending == 0


def test_cluster_source_must_be_own_cta():
    """Golden C1: in a cluster, CTA r's own shared::cta addresses are r<<24 | offset;
    a shared::cta source naming another CTA is an illegal address."""
    m = ptxasync.Machine(ctas=2, smem_bytes=4096)
    bar = m.cta(1).mbarrier(64).init(1)
    with pytest.raises(ptxasync.IllegalAddress, match="shared::cta"):
        m.cp_reduce_async_bulk("add", "u32", mapa(1024, 1), mapa(512, 1), 16, mbar=mapa(bar.addr, 1),
                               cta=0, dst_space="shared::cluster")


def _words(g, n=3):
    return [int(x) for x in g.view(np.uint32, 4 * n)[::4]]


@pytest.mark.parametrize("policy", ["in_order", "reverse", "random"])
def test_wait_group_n(policy):
    """PTX cp.async.bulk.wait_group N: waits until at most N of the most recent
    bulk async-groups are pending. Three groups; wait_group 1 completes the first
    two (whatever the completion order) and not the third; wait_group 0 the rest."""
    m = ptxasync.Machine(smem_bytes=4096, policy=policy, seed=7)
    g = m.alloc(256)
    m.smem.view(np.uint32)[:4] = 1
    for k in range(3):
        m.cp_reduce_async_bulk("add", "u32", g.address + 16 * k, 0, 16)
        m.cp_async_bulk_commit_group()
    assert _words(g) == [0, 0, 0] and m.pending == 3   # nothing completes before a wait
    m.cp_async_bulk_wait_group(2)
    assert _words(g) == [1, 0, 0]
    m.cp_async_bulk_wait_group(1)
    assert _words(g) == [1, 1, 0] and m.pending == 1
    m.cp_async_bulk_wait_group(0)
    assert _words(g) == [1, 1, 1] and m.pending == 0


def test_empty_commit_group_is_a_group():
    """PTX cp.async.bulk.commit_group: "If there are no bulk async operations, an
    empty bulk async-group is created". op; commit; commit (empty); wait_group 1
    must therefore complete the op's group."""
    m = ptxasync.Machine(smem_bytes=4096)
    g = m.alloc(64)
    m.smem.view(np.uint32)[:4] = 5
    m.cp_reduce_async_bulk("add", "u32", g.address, 0, 16)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(1)
    assert _words(g, 1) == [5] and m.pending == 0


def test_uncommitted_op_is_not_waited_for_and_completes_late():
    """wait_group waits for committed groups only; an uncommitted reduction stays
    pending (destination untouched) until committed and waited for."""
    m = ptxasync.Machine(smem_bytes=4096, hazards="report")   # the wait is a hazard: reported
    g = m.alloc(64)
    m.smem.view(np.uint32)[:4] = 3
    m.cp_reduce_async_bulk("add", "u32", g.address, 0, 16)
    m.cp_async_bulk_wait_group(0)
    assert _words(g, 1) == [0] and m.pending == 1
    assert [h.rule for h in m.hazards] == ["wait-uncommitted"]
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    assert _words(g, 1) == [3]


def test_reads_source_at_completion():
    """The op is asynchronous: it reads the source when it completes, so a write to
    the source before the wait is seen (the PTX ISA requires the source to stay
    untouched until wait_group.read; the model, its checks off, shows what a race would read)."""
    m = ptxasync.Machine(smem_bytes=4096, checks=False)
    g = m.alloc(64, fill=0)
    src = m.smem.view(np.uint32)
    src[:4] = 1
    m.cp_reduce_async_bulk("add", "u32", g.address, 0, 16)
    m.cp_async_bulk_commit_group()
    src[:4] = 2
    m.cp_async_bulk_wait_group(0)
    assert _words(g, 1) == [2]


def test_f32_add_keeps_subnormals_through_the_machine():
    """Same rule as above, end to end through cp.reduce.async.bulk .add.f32."""
    m = ptxasync.Machine(smem_bytes=4096)
    g = m.alloc(64)
    g.view(np.uint32, 4)[:] = [0x00000001, 0x00800000, 0x80000003, 0x3F800000]
    m.smem.view(np.uint32)[:4] = [0x00000001, 0x80000001, 0x00000001, 0x00000001]
    m.cp_reduce_async_bulk("add", "f32", g.address, 0, 16)
    m.cp_async_bulk_commit_group()
    m.cp_async_bulk_wait_group(0)
    assert [int(x) for x in g.view(np.uint32, 4)] == [2, 0x007FFFFF, 0x80000002, 0x3F800000]


def test_cluster_reduce_credits_destination_mbarrier():
    """Golden C6 / C15: a shared::cluster reduction changes only the destination
    CTA and credits tx = size to the mbarrier at mbar's offset in the destination
    CTA, even when the mbar operand names another CTA; the others see 0."""
    m = ptxasync.Machine(ctas=4, smem_bytes=4096)
    bars = []
    for r in range(4):
        m.cta(r).view(np.uint32, 8, 1024)[:] = 10
        b = m.cta(r).mbarrier(64).init(1)
        b.arrive_expect_tx(32)
        bars.append(b)
    m.barrier_cluster()      # the inits ordered before another CTA's operation signals them
    m.cta(0).view(np.uint32, 8, 512)[:] = np.arange(8, dtype=np.uint32)
    before = [m.cta(r).smem.copy() for r in range(4)]
    m.cp_reduce_async_bulk("min", "u32", mapa(1024, 2), m.cta(0).addr(512), 32,
                           mbar=mapa(bars[0].addr, 3), cta=0, dst_space="shared::cluster")
    assert (m.cta(2).smem == before[2]).all()                     # not before a wait
    assert bars[2].try_wait(0)
    assert [int(x) for x in m.cta(2).view(np.uint32, 8, 1024)] == list(range(8))
    for r in (0, 1, 3):
        assert not bars[r].try_wait(0)
        assert bars[r].state["tx"] == 32                          # nothing credited
        assert (m.cta(r).smem == before[r]).all()


def test_cluster_reduce_into_own_cta():
    """Golden C14: the issuing CTA as destination through mapa(.., own rank)
    behaves like a remote destination."""
    m = ptxasync.Machine(ctas=2, smem_bytes=4096)
    me = m.cta(1)
    me.view(np.uint64, 2, 1024)[:] = [2 ** 64 - 1, 5]
    me.view(np.uint64, 2, 512)[:] = [1, 6]
    bar = me.mbarrier(64).init(1)
    bar.arrive_expect_tx(16)
    m.cp_reduce_async_bulk("add", "u64", mapa(1024, 1), me.addr(512), 16, mbar=bar, cta=1,
                           dst_space="shared::cluster")
    assert bar.try_wait(0)
    assert [int(x) for x in me.view(np.uint64, 2, 1024)] == [0, 11]


def test_golden_runner_error_and_probe_cases():
    """The cluster runner replays what the model represents honestly: an mbar
    operand naming another CTA than the destination (golden C15: the destination
    CTA's barrier is credited), and a poisoned launch with a misaligned dstMem
    (C16: cudaErrorMisalignedAddress, no CTA records); other probes are unsupported."""
    base = next(c for c in _cases("cluster_bulk_reduce")
                if c["params"]["probe"] is None and c["params"]["cluster_size"] == 4)
    c = json.loads(json.dumps(base))
    c["params"]["probe"] = "mbar_other_cta"
    c["params"]["mbar_rank"] = (c["params"]["dst_rank"] + 1) % 4
    assert golden.check_case(c) == ("passed", None)
    c = json.loads(json.dumps(base))
    c["params"].update(probe="dst_unaligned", smem_dst_offset=c["params"]["smem_dst_offset"] + 8)
    c.update(error="cudaErrorMisalignedAddress", context_poisoned=True)
    del c["ctas"]
    assert golden.check_case(c) == ("passed", None)
    c["params"]["probe"] = "size_not16"
    assert golden.check_case(c)[0] == "unsupported"
