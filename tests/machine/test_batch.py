"""The batch API (csrc/core/batch.h): a tile-load batch and an OpList replay give
the same bytes, barrier states and errors as the same operations issued one by one
through the Machine methods; a failing batch issues nothing."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptxasync as pa

ROWS, COLS = 96, 256            # bf16 elements


def _setup(seed=0, policy="in_order"):
    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024, policy=policy, checks=False)   # slots repeat
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 1 << 16, size=(ROWS, COLS), dtype=np.uint16)
    g = gpu.register(t)
    tm = pa.TensorMap.from_array(t, (32, 64), g.address, swizzle="128B", dtype="bf16", oob_fill="nan")
    bar = gpu.mbarrier(8).init(1)
    gpu.smem[16:] = 0xA5
    return gpu, g, tm, bar


def _state(gpu, g, bar):
    return bytes(gpu.smem[8:]), bytes(g.bytes), bar.state, gpu.pending


coord = st.tuples(st.integers(-80, COLS + 40).map(lambda c: c // 8 * 8), st.integers(-40, ROWS + 10))


def _arrays(coords, dst):
    """The batch as int32 / uint32 arrays: the form the binding takes as it is."""
    return np.asarray(coords, dtype=np.int32).reshape(len(coords), -1), np.asarray(dst, dtype=np.uint32)


FORMS = ["lists", "arrays"]


@settings(max_examples=40, deadline=None)
@given(coords=st.lists(coord, min_size=1, max_size=8), slots=st.lists(st.integers(0, 11), min_size=8, max_size=8),
       arrays=st.booleans())
def test_batch_equals_one_by_one(coords, slots, arrays):
    """Shared bytes, mbarrier state and queue after a batch == after the same loads
    issued one by one (then completed by the same try_wait)."""
    dst = [1024 + 4096 * slots[i] for i in range(len(coords))]
    a = _setup()
    b = _setup()
    for gpu, g, tm, bar in (a, b):
        bar.arrive_expect_tx(4096 * len(coords))
    a[0].cp_async_bulk_tensor_load_batch(a[2], *(_arrays(coords, dst) if arrays else (coords, dst)), a[3])
    for c, d in zip(coords, dst):
        b[0].cp_async_bulk_tensor_load(b[2], c, d, b[3])
    assert a[0].pending == b[0].pending == len(coords)
    assert a[3].try_wait(0) and b[3].try_wait(0)
    assert _state(a[0], a[1], a[3]) == _state(b[0], b[1], b[3])


BAD = [
    ("misaligned c0", lambda c, d: ((3, 0), d)),                    # IllegalInstruction (observation 1)
    ("box past smem", lambda c, d: (c, 64 * 1024 - 1024)),          # IllegalAddress
    ("misaligned dst", lambda c, d: (c, d + 8)),                    # MisalignedAddress
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name,spoil", BAD, ids=[b[0] for b in BAD])
@pytest.mark.parametrize("k", [0, 2, 4])
def test_failing_batch_issues_nothing_and_names_the_load(name, spoil, k, form):
    """The error is the one a one-by-one issue of load k raises, prefixed
    'operation k', with .index == k; no load of the batch is issued."""
    coords = [(64 * (i % 3), 32 * (i % 2)) for i in range(5)]
    dst = [1024 + 4096 * i for i in range(5)]
    coords[k], dst[k] = spoil(coords[k], dst[k])
    gpu, g, tm, bar = _setup()
    before = _state(gpu, g, bar)
    with pytest.raises(pa.PtxAsyncError) as batch_err:
        gpu.cp_async_bulk_tensor_load_batch(tm, *(_arrays(coords, dst) if form == "arrays" else (coords, dst)), bar)
    assert _state(gpu, g, bar) == before
    assert batch_err.value.index == k
    with pytest.raises(pa.PtxAsyncError) as one_err:
        gpu.cp_async_bulk_tensor_load(tm, coords[k], dst[k], bar)
    assert type(batch_err.value) is type(one_err.value)
    assert str(batch_err.value) == f"operation {k} (cp.async.bulk.tensor load): {one_err.value}"


@pytest.mark.parametrize("form", FORMS)
def test_batch_mbarrier_operand_checked(form):
    gpu, g, tm, bar = _setup()
    batch = _arrays([(0, 0)], [1024]) if form == "arrays" else ([(0, 0)], [1024])
    with pytest.raises(pa.MisalignedAddress, match="operation 0 .*not 8-byte aligned"):
        gpu.cp_async_bulk_tensor_load_batch(tm, *batch, 12)
    assert gpu.pending == 0


def test_batch_arrays_are_taken_as_they_are():
    """int32 (n, rank) coordinates and uint32 (n,) destinations go to the core
    without conversion (True); any other form is left to the method's
    conversions and checks (False, nothing issued)."""
    gpu, g, tm, bar = _setup()
    c, d = _arrays([(0, 0), (64, 32)], [1024, 8192])
    assert gpu._tile_load_batch_fast(0, 0, tm, c, d, bar) is True and gpu.pending == 2
    others = [(0, 0, tm, c.tolist(), d, bar), (0, 0, tm, c, d.tolist(), bar), (0, 0, tm, c.astype(np.int64), d, bar),
              (0, 0, tm, c, d.astype(np.int32), bar), (0, 0, tm, np.zeros((2, 2), np.int32).T, d, bar),
              (0, 0, tm, c, d, 8.0), (0, 0, tm, c, d[:1], bar), (0, 0.0, tm, c, d, bar), (0, 0, object(), c, d, bar),
              (0, 0, tm, np.zeros((2, 6), np.int32), d, bar), (0, 0, tm, c.reshape(-1), d, bar)]
    for args in others:
        assert gpu._tile_load_batch_fast(*args) is False
    assert gpu.pending == 2
    # one column: the rank rule of the map (2 coordinates) is the core's, as for lists
    with pytest.raises(pa.PtxAsyncError) as fast:
        gpu.cp_async_bulk_tensor_load_batch(tm, *_arrays([(0,)], [1024]), bar)
    with pytest.raises(pa.PtxAsyncError) as slow:
        gpu.cp_async_bulk_tensor_load_batch(tm, [(0,)], [1024], bar)
    assert str(fast.value) == str(slow.value) and type(fast.value) is type(slow.value)
    assert gpu.pending == 2


def test_batch_argument_shapes():
    gpu, g, tm, bar = _setup()
    with pytest.raises(ValueError, match="2 destinations for 3"):
        gpu.cp_async_bulk_tensor_load_batch(tm, [(0, 0)] * 3, [1024, 2048], bar)
    with pytest.raises(OverflowError, match=r"coords\[1\]"):
        gpu.cp_async_bulk_tensor_load_batch(tm, [(0, 0), (2**31, 0)], 1024, bar)
    with pytest.raises(TypeError):
        gpu.cp_async_bulk_tensor_load_batch(tm, [(0.5, 0)], 1024, bar)


def test_batch_with_immediate_policy_completes_at_issue():
    gpu, g, tm, bar = _setup(policy="immediate")
    bar.arrive_expect_tx(2 * 4096)
    gpu.cp_async_bulk_tensor_load_batch(tm, [(0, 0), (64, 32)], [1024, 8192], bar)
    assert gpu.pending == 0 and bar.test_wait(0)


# ------------------------------------------------------------------ replay

def _kernel(api, tm, bar, k_steps, store_map=None):
    """A small kernel: per step arrive.expect_tx, two loads, wait; then a store,
    a tensor reduction and a bulk reduction, committed and waited for. `api` is
    (machine-like issue functions) so that the same code records or issues."""
    for k in range(k_steps):
        api["arrive_expect_tx"](bar, 2 * 4096)
        api["load"](tm, (64 * (k % 4), 32 * (k % 3)), 1024, bar)
        api["load"](tm, (64 * ((k + 1) % 4), 32 * ((k + 2) % 3) - 8), 1024 + 4096, bar)
        api["wait"](bar, k & 1)
    api["store"](tm, (64, 32), 1024)
    api["reduce"]("add", tm, (128, 0), 1024 + 4096)
    api["commit"]()
    api["wait_group"](0)


def _machine_api(gpu):
    return {
        "arrive_expect_tx": lambda bar, tx: gpu.mbarrier(bar).arrive_expect_tx(tx),
        "load": lambda tm, c, d, bar: gpu.cp_async_bulk_tensor_load(tm, c, d, bar),
        "wait": lambda bar, p: gpu.mbarrier(bar).wait(p),
        "store": lambda tm, c, s: gpu.cp_async_bulk_tensor_store(tm, c, s),
        "reduce": lambda op, tm, c, s: gpu.cp_reduce_async_bulk_tensor(op, tm, c, s),
        "commit": gpu.cp_async_bulk_commit_group,
        "wait_group": gpu.cp_async_bulk_wait_group,
    }


def _oplist_api(ops):
    return {
        "arrive_expect_tx": ops.mbarrier_arrive_expect_tx,
        "load": ops.cp_async_bulk_tensor_load,
        "wait": ops.mbarrier_wait,
        "store": ops.cp_async_bulk_tensor_store,
        "reduce": ops.cp_reduce_async_bulk_tensor,
        "commit": ops.cp_async_bulk_commit_group,
        "wait_group": ops.cp_async_bulk_wait_group,
    }


@pytest.mark.parametrize("policy", ["in_order", "reverse", "random", "immediate"])
def test_replay_equals_one_by_one(policy):
    a = _setup(1, policy)
    b = _setup(1, policy)
    _kernel(_machine_api(a[0]), a[2], 8, 6)
    ops = pa.OpList()
    _kernel(_oplist_api(ops), b[2], 8, 6)
    assert len(ops) == 6 * 4 + 4
    b[0].replay(ops)
    assert _state(a[0], a[1], a[3]) == _state(b[0], b[1], b[3])


def test_replay_bulk_reduce_and_mbarrier_records():
    a = _setup(2)
    b = _setup(2)
    gpu, g = a[0], a[1]
    gpu.smem[2048:2048 + 64] = 7
    b[0].smem[2048:2048 + 64] = 7
    gpu.cp_reduce_async_bulk("add", "u32", g.address + 128, 2048, 64)
    gpu.cp_async_bulk_commit_group()
    gpu.cp_async_bulk_wait_group(0)
    m2 = gpu.mbarrier(16).init(2)
    m2.arrive()
    m2.expect_tx(16)
    ops = pa.OpList()
    ops.cp_reduce_async_bulk("add", "u32", b[1].address + 128, 2048, 64)
    ops.cp_async_bulk_commit_group()
    ops.cp_async_bulk_wait_group(0)
    ops.mbarrier_init(16, 2)
    ops.mbarrier_arrive(16)
    ops.mbarrier_expect_tx(16, 16)
    ops.run()
    b[0].replay(ops)
    assert _state(gpu, g, a[3]) == _state(b[0], b[1], b[3])
    assert m2.state == b[0].mbarrier(16).state


def test_replay_stops_at_the_first_failing_operation():
    """Operations before the failing one have taken effect; its error is the
    one-by-one error, prefixed with its index and kind."""
    gpu, g, tm, bar = _setup(3)
    ops = pa.OpList()
    ops.mbarrier_arrive_expect_tx(bar, 4096)
    ops.cp_async_bulk_tensor_load(tm, (0, 0), 1024, bar)
    ops.mbarrier_wait(bar, 0)
    ops.cp_async_bulk_tensor_load(tm, (4, 0), 1024, bar)        # misaligned c0
    ops.mbarrier_arrive_expect_tx(bar, 4096)
    with pytest.raises(pa.IllegalInstruction) as e:
        gpu.replay(ops)
    assert e.value.index == 3
    assert str(e.value).startswith("operation 3 (cp.async.bulk.tensor load): innermost start offset")
    assert bar.state["phase"] == 1 and gpu.pending == 0          # the first three ran
    with pytest.raises(pa.IllegalInstruction) as one:
        gpu.cp_async_bulk_tensor_load(tm, (4, 0), 1024, bar)
    assert str(e.value).endswith(str(one.value))


def test_replay_wait_that_cannot_complete_is_a_hazard():
    gpu, g, tm, bar = _setup()
    ops = pa.OpList()
    ops.mbarrier_wait(bar, 0)
    with pytest.raises(pa.Hazard, match="operation 0 .*cannot complete phase parity 0"):
        gpu.replay(ops)


def test_replay_rejects_fields_that_do_not_fit():
    # (OpList refuses such operands when recorded: raw records reach the core's check)
    gpu, g, tm, bar = _setup()
    ops = pa.OpList()
    ops.cp_async_bulk_tensor_load(tm, (0, 0), 1024, bar)
    rec = ops.records.copy()
    rec[0, 1] = -1
    with pytest.raises(pa.InvalidValue, match="field cta = -1 does not fit"):
        gpu._replay(rec, ops.maps)
    rec = ops.records.copy()
    rec[0, 5] = 2**31
    with pytest.raises(pa.InvalidValue, match="c1 = 2147483648 does not fit in .s32"):
        gpu._replay(rec, ops.maps)
    with pytest.raises(pa.InvalidValue, match="map index 0 is not one of the 0 maps"):
        gpu._replay(ops.records, ())
    with pytest.raises(pa.InvalidValue, match="kind 99"):
        rec = ops.records.copy()
        rec[0, 0] = 99
        gpu._replay(rec, ops.maps)
    assert gpu.pending == 0


def test_replay_names_the_first_field_that_does_not_fit():
    # fields in record order (kind, cta, thread, map, c0..c4, smem, mbar, a, b, gaddr, flags, cta_mask):
    # the first bad one is named, whatever its neighbours hold
    gpu, g, tm, bar = _setup()
    ops = pa.OpList()
    ops.cp_async_bulk_tensor_load(tm, (0, 0), 1024, bar)
    cases = [({15: 2**32}, "field cta_mask = 4294967296 does not fit in .u32"),
             ({15: -1, 11: 2**40}, "field a = 1099511627776 does not fit in .u32"),
             ({13: -5}, "field gaddr = -5 does not fit in .u64"),
             ({13: -5, 14: 2**33}, "field flags = 8589934592 does not fit in .u32"),
             ({2: 2**32, 1: 2**63 - 1}, "field cta = 9223372036854775807 does not fit"),
             ({10: -2**63}, "field mbar = -9223372036854775808 does not fit")]
    for fields, msg in cases:
        rec = ops.records.copy()
        for i, v in fields.items():
            rec[0, i] = v
        with pytest.raises(pa.InvalidValue, match=msg):
            gpu._replay(rec, ops.maps)
    assert gpu.pending == 0
    # 2^32 - 1 fits .u32: the record decodes and fails later, at the CTA rank
    rec = ops.records.copy()
    rec[0, 1] = 2**32 - 1
    with pytest.raises(pa.InvalidValue, match="CTA rank 4294967295"):
        gpu._replay(rec, ops.maps)
