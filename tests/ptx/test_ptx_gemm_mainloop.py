"""The hand-written warp-specialised GEMM mainloop (tests/data/ptx/gemm_mainloop.ptx) and its
variant without the consumers' full-barrier wait: both are PTX that ptxasync.ptx.check accepts
and the local ptxas assembles; the helper that says what a run must leave (gemm_mainloop.py)
agrees with a NumPy model of the 128B swizzle written here; run by ptx.Kernel, the kernel leaves
exactly the API's tiles and checksums in every policy, and the variant is reported."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

import gemm_mainloop as gm
import ptx_forms as pf

TEXTS = {"kernel": gm.kernel_text, "without_full_wait": gm.without_full_wait}


@pytest.mark.parametrize("name", TEXTS)
def test_the_kernels_have_no_diagnostic_and_print_to_themselves(name):
    text = TEXTS[name]()
    assert ptx.check(text) == []
    once = ptx.format(text)
    assert ptx.format(once) == once and ptx.check(once) == []


def test_the_variant_lacks_exactly_the_consumers_wait():
    full, broken = gm.kernel_text(), gm.without_full_wait()
    assert full.count("mbarrier.try_wait") == 2 and broken.count("mbarrier.try_wait") == 1
    assert "$L_wait_empty" in broken and "$L_wait_full" not in broken


def test_k_iters_is_a_param_and_the_ring_has_three_stages():
    text = gm.kernel_text()
    assert ".param .u32 k_iters" in text and "ld.param.u32 \t%r3, [k_iters];" in text
    assert ".b64 full_bar[3];" in text and ".b64 empty_bar[3];" in text
    assert f"smem_a[{gm.STAGES * gm.TILE_BYTES}]" in text


@pytest.mark.skipif(pf.ptxas_path() is None, reason="ptxas is not installed")
@pytest.mark.parametrize("name", TEXTS)
def test_ptxas_assembles_them(name):
    ok, message = pf.ptxas_accepts(TEXTS[name](), "sm_90a")
    assert ok, message


def _swizzled_chunk(x, k, row, phys_chunk):
    """The 16 bytes at physical chunk `phys_chunk` of `row` of tile k, 128B swizzle: logical chunk
    phys ^ (row % 8) of the row's 128 bytes (K innermost)."""
    q = phys_chunk ^ (row % 8)
    return x[row, 64 * k + 8 * q: 64 * k + 8 * q + 8].view(np.uint32)


@pytest.mark.parametrize("k_iters", [1, 3, 5])
def test_the_helper_agrees_with_numpy(k_iters):
    a, b = gm.operands(k_iters, seed=3)
    stages_a, stages_b, sums = gm.expected(a, b, k_iters)
    want = np.zeros(gm.CONSUMERS, dtype=np.uint32)
    for k in range(k_iters):
        for c in range(gm.CONSUMERS):
            for w in _swizzled_chunk(a, k, 2 * c, 0):
                want[c] ^= w
            for w in _swizzled_chunk(b, k, 2 * c, 1):
                want[c] ^= w
    assert np.array_equal(sums, want)
    last = k_iters - 1
    s = last % gm.STAGES
    tile = np.frombuffer(stages_a[s], dtype=np.uint8).reshape(gm.ROWS, 128)
    for row in (0, 5, 127):
        for chunk in range(8):
            assert tile[row, 16 * chunk:16 * chunk + 16].tobytes() == _swizzled_chunk(a, last, row, chunk).tobytes()


def test_setup_gives_what_a_launch_needs():
    s = gm.setup(k_iters=4)
    assert set(s["params"]) == {"tmap_a", "tmap_b", "k_iters", "out"}
    assert s["launch"]["block"] == (96, 1, 1)
    assert len(s["stages_a"]) == len(s["stages_b"]) == gm.STAGES
    assert s["out_buffer"].array.shape == (gm.CONSUMERS,)


POLICIES = ["immediate", "in_order", "reverse", "random", "adversarial"]


@pytest.mark.parametrize("policy", POLICIES)
def test_the_kernel_run_leaves_the_api_tiles_and_checksums(policy):
    for seed in range(3):
        s = gm.setup(k_iters=8, policy=policy, seed=seed)
        m = s["machine"]
        ptx.Kernel(gm.kernel_text()).launch(m, params=s["params"], seed=seed, **s["launch"])
        for st in range(gm.STAGES):
            a0, b0 = gm.SMEM_A + st * gm.TILE_BYTES, gm.SMEM_B + st * gm.TILE_BYTES
            assert bytes(m.smem[a0:a0 + gm.TILE_BYTES]) == s["stages_a"][st], (policy, seed, st)
            assert bytes(m.smem[b0:b0 + gm.TILE_BYTES]) == s["stages_b"][st], (policy, seed, st)
        np.testing.assert_array_equal(s["out_buffer"].array, s["out"])
        assert m.hazards == [] and m.races == [] and m.pending == 0


@pytest.mark.parametrize("policy", ["immediate", "in_order", "random", "adversarial"])
def test_the_deleted_wait_is_reported(policy):
    for seed in range(3):
        s = gm.setup(k_iters=8, policy=policy, seed=seed)
        with pytest.raises(pa.Hazard) as e:
            ptx.Kernel(gm.without_full_wait()).launch(s["machine"], params=s["params"], seed=seed, **s["launch"])
        assert e.value.rule in ("data-race", "destination-read"), e.value.rule
        assert "PTX line" in str(e.value)
