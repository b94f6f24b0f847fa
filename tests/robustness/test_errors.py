"""Bad inputs: each raises a specific exception whose message names the value.
Plus a child-interpreter fuzz run: random junk arguments must never crash the process."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ptxasync

import ptxasync as p
from ptxasync.enums import DataType, parse

import testpaths  # noqa: E402
ROOT = Path(testpaths.REPO)
ADDR = 0x7F0000100000


def _tiled(**kw):
    args = dict(dtype="f32", global_address=ADDR, global_dim=[64, 8], global_strides=[256],
                box_dim=[16, 4])
    args.update(kw)
    return p.TensorMap.tiled(**args)


ENCODE_CASES = [
    # (kwargs, exception, text the message must contain)  -- cuTensorMapEncodeTiled doc rules
    (dict(swizzle="bogus"), ValueError, "bogus"),
    (dict(swizzle=9), p.InvalidValue, "9"),
    (dict(dtype=99), p.InvalidValue, "99"),
    (dict(dtype="f31"), ValueError, "f31"),
    (dict(interleave=3), p.InvalidValue, "3"),
    (dict(oob_fill=2), p.InvalidValue, "2"),
    (dict(l2_promotion=4), p.InvalidValue, "4"),
    (dict(global_address=ADDR + 4), p.InvalidValue, hex(ADDR + 4)),
    (dict(global_strides=[250]), p.InvalidValue, "250"),
    (dict(global_strides=[2**40]), p.InvalidValue, "globalStrides"),
    (dict(box_dim=[300, 4]), p.InvalidValue, "300"),
    (dict(box_dim=[16, 0]), p.InvalidValue, "boxDim[1]"),
    (dict(box_dim=[3, 4]), p.InvalidValue, "boxDim[0]"),
    (dict(box_dim=[64, 4], swizzle="128B"), p.InvalidValue, "128"),
    (dict(box_dim=[16]), ValueError, "boxDim"),
    (dict(global_strides=[]), ValueError, "globalStrides"),
    (dict(element_strides=[1, 9]), p.InvalidValue, "9"),
    (dict(element_strides=[1]), ValueError, "elementStrides"),
    (dict(global_dim=[64, 0]), p.InvalidValue, "globalDim[1]"),
    (dict(global_dim=[64, 2**32 + 1]), p.InvalidValue, "globalDim[1]"),
    (dict(global_dim=[64, 2**70]), OverflowError, "globalDim[1]"),
    (dict(global_dim=[64] * 6, global_strides=[256] * 5, box_dim=[16] + [1] * 5), p.InvalidValue, "6"),
    (dict(global_dim=[64, 8, 4], global_strides=[256, 2048], box_dim=[16, 4, 1],
          interleave="32B", swizzle="NONE", global_address=ADDR + 16), p.InvalidValue, "32"),
    (dict(global_dim=[64, 8], global_strides=[256], box_dim=[4, 4], interleave="16B"),
     p.InvalidValue, "rank"),
    (dict(box_dim=[16, None]), TypeError, "None"),
    (dict(global_dim=None), TypeError, "None"),
    (dict(box_dim=[16, "x"]), (TypeError, ValueError), "x"),
    (dict(swizzle="SWIZZLE_96B"), ValueError, "SWIZZLE_96B"),
]


@pytest.mark.parametrize("kw,exc,text", ENCODE_CASES, ids=[str(i) for i in range(len(ENCODE_CASES))])
def test_encode_rejects(kw, exc, text):
    """cuTensorMapEncodeTiled (CUDA driver API doc) rules: bad enums, alignment, ranges,
    lengths and types are rejected and the message names the offending value."""
    with pytest.raises(exc) as ei:
        _tiled(**kw)
    assert text in str(ei.value), str(ei.value)


def test_encode_negative_dim_names_value():
    """A negative globalDim is rejected and the message shows the value the caller gave (-16),
    not its 64-bit wrap-around."""
    with pytest.raises((p.InvalidValue, ValueError, OverflowError)) as ei:
        _tiled(global_dim=[64, -16])
    assert "-16" in str(ei.value), str(ei.value)


@pytest.mark.parametrize("kw", [dict(box_dim=[16, 4.5]), dict(global_dim=[64.0, 8]),
                                dict(element_strides=[1, 2.7])])
def test_encode_rejects_floats(kw):
    """Integers are expected (cuuint32_t / cuuint64_t parameters): a float must not be
    silently truncated."""
    with pytest.raises(TypeError):
        _tiled(**kw)


@pytest.mark.parametrize("value", [-1, 2**32, 2**64])
def test_tf32_round_rejects_non_u32(value):
    """tf32_round takes f32 bits (a 32-bit unsigned pattern); out-of-range input is an error,
    not silently wrapped."""
    with pytest.raises((OverflowError, ValueError)) as ei:
        p.tf32_round(value)
    assert str(value) in str(ei.value)


def test_parse_bad_enum_values():
    """enums.parse: unknown numbers and names name the value and the valid choices."""
    with pytest.raises(ValueError, match="42"):
        parse(DataType, 42)
    with pytest.raises(ValueError, match="float128"):
        parse(DataType, "float128")
    with pytest.raises(ValueError, match="complex"):
        parse(DataType, np.complex64)
    with pytest.raises(ValueError):
        parse(DataType, True)


@pytest.fixture
def setup():
    m = p.Machine(ctas=1, smem_bytes=64 * 1024)
    buf = m.alloc(4096)
    tm = p.TensorMap.tiled("f32", buf.address, [64, 8], [256], [16, 4])
    bar = m.mbarrier(0).init(1)
    return m, buf, tm, bar


def test_load_wrong_coord_count(setup):
    """PTX cp.async.bulk.tensor.Nd: N coordinates for a rank-N map; one rule (the copy
    plan's, rule id "tensor-coords") for loads, stores, reductions and prefetches."""
    m, _, tm, bar = setup
    with pytest.raises(ValueError, match="3 coordinates given; .tile needs 2") as e:
        m.cp_async_bulk_tensor_load(tm, [0, 0, 0], 1024, bar)
    assert e.value.rule == "tensor-coords"
    with pytest.raises(ValueError, match="1 coordinates"):
        m.cp_async_bulk_tensor_load(tm, [0], 1024, bar)
    ops = p.OpList()
    ops.cp_async_bulk_tensor_load(tm, [0], 1024, bar.addr)
    for call in (lambda: m.cp_async_bulk_tensor_store(tm, [0], 1024),
                 lambda: m.cp_reduce_async_bulk_tensor("add", tm, [0], 1024),
                 lambda: m.cp_async_bulk_prefetch_tensor(tm, [0]),
                 lambda: m.cp_async_bulk_tensor_load_batch(tm, [[0]], 1024, bar),   # rows of 1, not padded to 2
                 lambda: m.replay(ops)):
        with pytest.raises(ValueError, match=r"\[tensor-coords\] 1 coordinates given; .tile needs 2"):
            call()
    assert m.pending == 0 and m.prefetches == []


def test_load_coord_overflow(setup):
    """PTX: tensor coordinates are .s32."""
    m, _, tm, bar = setup
    with pytest.raises(OverflowError, match="2147483648"):
        m.cp_async_bulk_tensor_load(tm, [2**31, 0], 1024, bar)
    with pytest.raises(OverflowError, match="-2147483652"):
        m.cp_async_bulk_tensor_load(tm, [0, -2**31 - 4], 1024, bar)


def test_load_bad_coord_types(setup):
    m, _, tm, bar = setup
    with pytest.raises(TypeError):
        m.cp_async_bulk_tensor_load(tm, None, 1024, bar)
    with pytest.raises(TypeError):
        m.cp_async_bulk_tensor_load(tm, ["a", 0], 1024, bar)
    with pytest.raises(TypeError):
        m.cp_async_bulk_tensor_load("not a map", [0, 0], 1024, bar)


def test_misaligned_shared_addresses(setup):
    """PTX cp.async.bulk.tensor: dstMem 128-byte aligned (16 minimum); mbarrier 8-byte aligned
    (PTX 9.7.13.15.1)."""
    m, _, tm, bar = setup
    with pytest.raises(p.MisalignedAddress, match="0x3e8"):
        m.cp_async_bulk_tensor_load(tm, [0, 0], 1000, bar)
    with pytest.raises(p.MisalignedAddress, match="0x3"):
        m.cp_async_bulk_tensor_load(tm, [0, 0], 1024, 3)
    with pytest.raises(p.MisalignedAddress, match="0x4"):
        m.mbarrier(4).init(1)
    with pytest.raises(p.MisalignedAddress):
        m.cp_async_bulk_tensor_store(tm, [0, 0], 1032)


def test_shared_out_of_range(setup):
    m, _, tm, bar = setup
    with pytest.raises(p.IllegalAddress, match="0x10000"):
        m.mbarrier(64 * 1024).init(1)
    with pytest.raises(p.IllegalAddress):
        m.cp_async_bulk_tensor_load(tm, [0, 0], 64 * 1024 - 128, bar)
        m.run()


def test_mbarrier_misuse(setup):
    """PTX 9.7.13.15: operations on an uninitialised mbarrier are undefined (Hazard); counts
    outside [1, 2^20-1] are invalid; arrivals beyond the pending count fault; tx-count range."""
    m, _, tm, bar = setup
    with pytest.raises(p.Hazard, match="0x40"):
        m.mbarrier(0x40).arrive()
    with pytest.raises(p.InvalidValue, match="1048576"):
        m.mbarrier(0x48).init(2**20)
    with pytest.raises(p.InvalidValue, match="0"):
        m.mbarrier(0x50).init(0)
    with pytest.raises(p.Hazard, match="2"):
        bar.arrive(2)
    with pytest.raises(p.InvalidValue, match="1048576"):
        bar.arrive(2**20)
    with pytest.raises(p.Hazard, match="1048576"):
        bar.expect_tx(2**20)
    with pytest.raises(p.Hazard):
        m.mbarrier(0).wait(0)
    with pytest.raises(p.Hazard, match="0x40"):
        m.mbarrier(0x40).test_wait(0)


def test_load_on_uninitialised_mbarrier_is_hazard(setup):
    """PTX 9.7.13.15: any mbarrier operation (the load's complete-tx included) on an
    uninitialised object is undefined behaviour, which the model reports as a Hazard."""
    m, _, tm, bar = setup
    with pytest.raises(p.Hazard):
        m.cp_async_bulk_tensor_load(tm, [0, 0], 1024, 0x80)
        m.run()


def test_wait_group_negative(setup):
    m, *_ = setup
    m.cp_async_bulk_wait_group(0)             # nothing pending: legal, returns at once
    with pytest.raises((ValueError, OverflowError)):
        m.cp_async_bulk_wait_group(-1)


def test_buffers(setup):
    """Global memory registration: overlap, non-contiguous, read-only, empty."""
    m, buf, *_ = setup
    with pytest.raises(p.InvalidValue, match=hex(buf.address + 16)):
        m.register(np.zeros(100, np.uint8), address=buf.address + 16)
    with pytest.raises(ValueError, match="contiguous"):
        m.register(np.zeros((10, 10), np.uint8)[:, ::2])
    ro = np.zeros(16, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writable"):
        m.register(ro)
    with pytest.raises(ValueError, match="1 byte"):
        m.register(np.zeros(0, np.uint8))
    with pytest.raises(ValueError, match="3"):
        m.alloc(64, align=3)


def test_views_out_of_range(setup):
    m, buf, *_ = setup
    with pytest.raises(ValueError, match="65536"):
        m.cta(0).view(np.float32, 10, 64 * 1024)
    with pytest.raises(ValueError, match="2"):
        m.cta(0).view(np.float32, 10, 2)
    with pytest.raises(ValueError, match="-8"):
        buf.view(np.uint8, 4, -8)


def test_cta_index_out_of_range(setup):
    m, *_ = setup
    with pytest.raises(IndexError, match="3"):
        m.cta(3)
    with pytest.raises(IndexError, match="5"):
        m.mbarrier(0, cta=5)


def test_policy_and_field_names(setup):
    m, _, tm, _ = setup
    with pytest.raises(ValueError, match="bogus"):
        m.set_policy("bogus")
    with pytest.raises(ValueError, match="nonsense"):
        tm.replace("nonsense", 1)
    with pytest.raises(ValueError, match="sharedx"):
        m.cp_async_bulk_tensor_load(tm, [0, 0], 1024, 0, dst_space="sharedx")
    with pytest.raises(ValueError, match="0x10000"):
        m.cp_async_bulk_tensor_load(tm, [0, 0], 1024, 0, cta_mask=0x10000)


FUZZ = textwrap.dedent(r"""
    import random, numpy as np, ptxasync as p
    rnd = random.Random(12345)
    JUNK = [None, -1, 0, 1, 3, 7, 16, 128, 255, 256, 2**31, -2**31, 2**32, 2**63, -2**63, 2**64, 2**100,
            1.5, float("nan"), "", "x", "128B", b"\x00", [], [0], [1, 2], [-1, 2**40], (3,), {}, object(),
            np.int64(5), np.uint64(2**64 - 1), np.float32(2), np.zeros(3), "f32", "NAN"]
    def junk():
        return rnd.choice(JUNK) if rnd.random() < 0.7 else rnd.randrange(-2**33, 2**33)
    def ints(n):
        return [junk() if rnd.random() < 0.2 else rnd.randrange(-4, 300) for _ in range(n)]
    ms = [p.Machine(ctas=c, smem_bytes=8192) for c in (1, 2)]
    bufs = [ms[0].alloc(4096), ms[1].alloc(4096)]
    good = p.TensorMap.tiled("f32", bufs[0].address, [64, 8], [256], [16, 4])
    maps = [good]
    calls = errors = 0
    for i in range(4000):
        m = rnd.choice(ms)
        k = rnd.randrange(14)
        try:
            calls += 1
            if k == 0:
                r = rnd.randrange(1, 6)
                maps.append(p.TensorMap.tiled(junk() if rnd.random() < .3 else rnd.randrange(13),
                    bufs[0].address if rnd.random() < .7 else junk(), ints(r), ints(r - 1), ints(r),
                    element_strides=ints(r) if rnd.random() < .5 else None,
                    interleave=junk() if rnd.random() < .2 else 0, swizzle=rnd.randrange(8),
                    oob_fill=rnd.randrange(3)))
            elif k == 1:
                m.cp_async_bulk_tensor_load(rnd.choice(maps), ints(rnd.randrange(0, 6)),
                    junk() if rnd.random() < .5 else 128 * rnd.randrange(64), junk() if rnd.random() < .3 else 0,
                    cta=rnd.randrange(-1, 3), cta_mask=junk() if rnd.random() < .2 else None)
            elif k == 2:
                m.cp_async_bulk_tensor_store(rnd.choice(maps), ints(rnd.randrange(0, 6)), junk())
            elif k == 3:
                m.mbarrier(junk() if rnd.random() < .5 else 8 * rnd.randrange(16), cta=rnd.randrange(2)).init(junk())
            elif k == 4:
                b = m.mbarrier(8 * rnd.randrange(16))
                getattr(b, rnd.choice(["arrive", "arrive_drop", "expect_tx", "complete_tx", "test_wait",
                                        "try_wait", "inval"]))(*([] if rnd.random() < .2 else [junk()])) \
                    if rnd.random() < .9 else b.arrive_expect_tx(junk())
            elif k == 5:
                m.run() if rnd.random() < .5 else m.step()
            elif k == 6:
                m.cp_async_bulk_commit_group(); m.cp_async_bulk_wait_group(junk())
            elif k == 7:
                p.swizzle_address(junk(), junk())
            elif k == 8:
                p.tf32_round(junk())
            elif k == 9:
                t = rnd.choice(maps).copy()
                t.replace(rnd.randrange(-1, 12), junk(), ord=rnd.choice([0, 1, 4, 5, -1, junk()]))
                maps.append(t)
            elif k == 10:
                t = rnd.choice(maps)
                t.smem_element(junk(), junk()) if rnd.random() < .5 else t.smem_addresses(junk())
                repr(t); t._repr_html_(); t.fields; t.box_layout
            elif k == 11:
                raw = bytearray(bytes(rnd.choice(maps)))
                for _ in range(rnd.randrange(1, 8)):
                    raw[rnd.randrange(128)] = rnd.randrange(256)
                t = p.TensorMap.from_bytes(bytes(raw)); maps.append(t); repr(t); t.box_layout
            elif k == 12:
                m.cp_reduce_async_bulk_tensor(junk(), rnd.choice(maps), ints(2), junk())
            else:
                m.cta(rnd.randrange(2)).view(rnd.choice([np.uint8, np.float32]), junk(), junk())
        except Exception:
            errors += 1
        if len(maps) > 50:
            maps = [good] + maps[-20:]
    print("FUZZ-OK", calls, errors)
""")


def test_fuzz_child_survives(tmp_path):
    """Random junk through the whole API in a child interpreter: every bad call raises a
    Python exception; the process never crashes (no segfault, no abort)."""
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ)
    env = dict(os.environ)
    # the package this test process imported (installed, or built in place)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(ptxasync.__file__)))
    env["PYTHONFAULTHANDLER"] = "1"
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120, cwd=str(tmp_path))
    assert proc.returncode == 0, f"child exited {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    assert "FUZZ-OK 4000" in proc.stdout
