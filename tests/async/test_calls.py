"""The thin call path of one load and its wait: Mbarrier's arrive / arrive_expect_tx /
test_wait / try_wait and the plain .tile form of Machine.cp_async_bulk_tensor_load run
in the binding. Every answer, byte and error must be the one of the general Python path
(the reference here), and bad arguments still name themselves."""
import inspect
import pydoc
import random

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import _core


def _setup(ctas=1):
    m = pa.Machine(ctas=ctas, smem_bytes=16384)
    a = np.arange(64 * 64, dtype=np.uint16).reshape(64, 64)
    g = m.register(a)
    tm = pa.TensorMap.from_array(a, (8, 64), g.address, swizzle="128B", dtype="bf16")
    return m, a, tm


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:   # the exception's class and message are the outcome
        return (type(e).__name__, str(e))


# --- the plain .tile load: C form against the Python form ---------------------------------

JUNK = [None, -1, 1.5, "x", 2**32, 2**40, np.int64(8), np.uint32(1024), True, [], (0,), object()]


def _load_pair(args, kw):
    """The same load through the C form and through the Python form (an explicit
    dst_space="shared::cta" takes the general path): outcome and shared memory of each."""
    out = []
    for general in (False, True):
        m, a, tm = _setup(ctas=2)
        bar = m.mbarrier(0).init(1)
        m.cta(1).mbarrier(0).init(1)
        call_kw = dict(kw, dst_space="shared::cta") if general else dict(kw)
        args_ = [tm if x == "TM" else bar if x == "BAR" else x for x in args]
        res = _outcome(lambda: m.cp_async_bulk_tensor_load(*args_, **call_kw))
        done = _outcome(m.run)
        out.append((res, done, m.cta(0).smem.tobytes(), m.cta(1).smem.tobytes(), m.pending))
    return out


@pytest.mark.parametrize("args,kw", [
    (("TM", (0, 8), 1024, "BAR"), {}),
    (("TM", [64 - 16, 56], 2048, 0), {}),
    (("TM", (0, 8), pa.mapa(1024, 1), pa.mapa(0, 1)), {"cta": 1}),
    (("TM", (0, 8), pa.mapa(1024, 1), pa.mapa(0, 1), 1, 3), {}),
    (("TM", (0, 8), 1024, "BAR"), {"thread": 7, "cta": 0}),
])
def test_plain_tile_load_is_the_general_path(args, kw):
    c, py = _load_pair(args, kw)
    assert c == py
    assert c[0] == ("ok", None)


def test_every_bad_operand_fails_as_in_the_general_path():
    rnd = random.Random(8)
    good = ["TM", (0, 8), 1024, "BAR"]
    cases = 0
    for i in range(120):
        args = list(good)
        kw = {}
        slot = rnd.randrange(7)
        bad = rnd.choice(JUNK + [5, (0,), (0, 8, 0), (2**31, 0), 1023, 16384, 8, 4])
        if slot < 4:
            args[slot] = bad
        else:
            kw[["cta", "thread", "cta"][slot - 4]] = bad
        c, py = _load_pair(args, kw)
        assert c == py, (args, kw)
        cases += c[0][0] != "ok"
    assert cases > 60   # most of them are errors


def test_bad_operands_name_themselves():
    m, a, tm = _setup()
    bar = m.mbarrier(0).init(1)
    with pytest.raises(TypeError, match="tmap must be ptxasync._core.TensorMap, not str"):
        m.cp_async_bulk_tensor_load("tm", (0, 0), 1024, bar)
    # an integer is the global address of a tensor map (read in the tensormap proxy)
    with pytest.raises(pa.IllegalAddress, match="tensor map at global address 0x5 is not 128 bytes"):
        m.cp_async_bulk_tensor_load(5, (0, 0), 1024, bar)
    with pytest.raises(OverflowError, match=r"dst must be in \[0, 2\^32\); got -16"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), -16, bar)
    with pytest.raises(TypeError, match="dst must be an integer, not float"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), 1024.0, bar)
    with pytest.raises(TypeError, match="mbar must be an integer, not str"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), 1024, "bar")
    with pytest.raises(OverflowError, match="thread must be in"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), 1024, bar, thread=-1)
    with pytest.raises(TypeError, match="cta must be an integer"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), 1024, bar, cta=None)
    with pytest.raises(ValueError, match=r"\[tensor-coords\] 3 coordinates given; .tile needs 2 \(the tensor map's rank\)"):
        m.cp_async_bulk_tensor_load(tm, (0, 0, 0), 1024, bar)
    with pytest.raises(TypeError, match="unexpected keyword argument 'ctas'"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), 1024, bar, ctas=0)
    assert m.pending == 0


def test_the_method_still_looks_like_itself():
    sig = inspect.signature(pa.Machine.cp_async_bulk_tensor_load)
    assert list(sig.parameters)[:7] == ["self", "tmap", "coords", "dst", "mbar", "cta", "thread"]
    assert "cp.async.bulk.tensor" in pa.Machine.cp_async_bulk_tensor_load.__doc__
    assert pydoc.getdoc(pa.Machine.cp_async_bulk_tensor_load).startswith("cp.async.bulk.tensor")   # help()
    m = pa.Machine()
    assert list(inspect.signature(m.cp_async_bulk_tensor_load).parameters)[0] == "tmap"
    assert m.cp_async_bulk_tensor_load.__name__ == "cp_async_bulk_tensor_load"
    # the machine is the binding's Machine: the load is that type's own method, no graft
    assert isinstance(m, _core.Machine) and "cp_async_bulk_tensor_load" not in vars(pa.Machine)


# --- the mbarrier's loop operations ----------------------------------------------------------

def test_loop_of_loads_and_waits():
    m, a, tm = _setup()
    bar = m.mbarrier(8).init(1)
    parity = 0
    for r in range(0, 64, 8):
        state = bar.arrive_expect_tx(tm.box_bytes)
        assert isinstance(state, int)
        m.cp_async_bulk_tensor_load(tm, (0, r), 1024, bar)
        assert bar.test_wait(parity) is False
        assert bar.try_wait(parity) is True
        parity ^= 1
    assert m.pending == 0 and bar.phase == 8


@pytest.mark.parametrize("p,exc,msg", [
    (2, ValueError, "phase parity 2 must be 0 or 1"),
    (-1, ValueError, "phase parity -1 must be 0 or 1"),
    ("x", ValueError, "phase parity 'x' must be 0 or 1"),
    (None, ValueError, "phase parity None must be 0 or 1"),
    (2**70, ValueError, "must be 0 or 1"),
    (0.0, TypeError, "parity must be an integer, not float"),
])
def test_bad_parity(p, exc, msg):
    m, a, tm = _setup()
    bar = m.mbarrier(0).init(1)
    for wait in (bar.test_wait, bar.try_wait):
        with pytest.raises(exc, match=msg):
            wait(p)


def test_parity_of_other_integer_types_and_by_keyword():
    m, a, tm = _setup()
    bar = m.mbarrier(0).init(1)
    bar.arrive()
    assert bar.try_wait(np.int64(0)) is True
    assert bar.test_wait(parity=False) is True
    assert bar.test_wait(True) is False
    assert bar.try_wait(1, thread=np.uint8(0)) is False


@pytest.mark.parametrize("tx,exc,msg", [
    (-1, ValueError, "tx count -1 does not fit the .u32 operand"),
    (2**32, ValueError, "tx count 4294967296 does not fit"),
    (1.5, TypeError, "tx must be an integer, not float"),
    ("8", TypeError, "tx must be an integer, not str"),
])
def test_bad_tx_leaves_the_barrier_alone(tx, exc, msg):
    m, a, tm = _setup()
    bar = m.mbarrier(0).init(1)
    before = bar.state
    with pytest.raises(exc, match=msg):
        bar.arrive_expect_tx(tx)
    assert bar.state == before


def test_arity_and_keywords_are_checked():
    m, a, tm = _setup()
    bar = m.mbarrier(0).init(1)
    with pytest.raises(TypeError, match=r"try_wait\(\) missing required argument 'parity'"):
        bar.try_wait()
    with pytest.raises(TypeError, match="takes at most 1 positional"):
        bar.try_wait(0, 0)   # thread is keyword-only
    with pytest.raises(TypeError, match="unexpected keyword argument 'threads'"):
        bar.arrive(threads=1)
    with pytest.raises(TypeError, match="multiple values for argument 'count'"):
        bar.arrive(1, count=1)
    with pytest.raises(OverflowError, match=r"thread must be in \[0, 2\^32\); got -2"):
        bar.arrive(thread=-2)
    with pytest.raises(OverflowError, match="count must be in"):
        bar.arrive(-1)
    # the binding's own methods take keywords by name too
    assert m._mbar_test_wait(0, addr=0, parity=1) is True
    with pytest.raises(TypeError, match=r"mbar_test_wait\(\) got an unexpected keyword argument 'p'"):
        m._mbar_test_wait(0, 0, 1, p=1)


def test_an_mbarrier_can_be_pointed_elsewhere():
    m, a, tm = _setup()
    bar = m.mbarrier(0).init(1)
    other = m.mbarrier(64).init(1)
    bar.addr = 64
    bar.arrive()
    assert other.phase == 1 and m.mbarrier(0).phase == 0
    bar.addr = "here"
    with pytest.raises(TypeError, match="addr must be an integer, not str"):
        bar.arrive()
    with pytest.raises(TypeError, match="mbar must be an integer, not str"):
        m.cp_async_bulk_tensor_load(tm, (0, 0), 1024, bar)
    assert m.pending == 0
    bar.addr = np.uint32(0)   # not an int: converted at each use, as a str is refused at each use
    bar.arrive()
    assert m.mbarrier(0).phase == 1 and other.phase == 1
    bar.addr = 64             # an int again: the operand follows it
    bar.arrive()
    assert other.phase == 2 and bar.addr == 64
    del bar.addr
    with pytest.raises(AttributeError):
        bar.addr
    with pytest.raises(AttributeError):
        del bar.addr
    with pytest.raises(RuntimeError, match="not initialised"):
        bar.arrive()


def test_an_mbarrier_of_another_cta():
    m = pa.Machine(ctas=2, smem_bytes=4096)
    bar = m.cta(1).mbarrier(16).init(2)
    assert (bar.cta, bar.addr) == (1, pa.mapa(16, 1))
    bar.arrive(2)
    assert bar.try_wait(0) and bar.phase == 1


def test_an_index_that_repoints_the_mbarrier_mid_call_is_harmless():
    m, a, tm = _setup()
    bar = m.mbarrier(0).init(1)
    m.mbarrier(8).init(1)

    class Repoint:
        def __index__(self):
            bar.addr = 8   # drops the last reference to this object while it is converted
            return 0

    bar.addr = Repoint()
    bar.arrive()
    assert m.mbarrier(0).phase == 1 and bar.addr == 8
    bar.addr = Repoint()
    m.cp_async_bulk_tensor_load(tm, (0, 0), 1024, bar)   # signals the barrier at 0
    m.run()
    assert m.mbarrier(0).state["tx"] == -tm.box_bytes and m.mbarrier(8).state["tx"] == 0
