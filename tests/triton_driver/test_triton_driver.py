"""ptxasync.triton as a Triton driver: what it tells Triton, its options, its records, and the
errors it raises (each naming the problem) for what it cannot run."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("triton.backends.compiler", reason="Triton is not installed (pip install '.[triton]')")
import triton  # noqa: E402

import ptxasync  # noqa: E402
import ptxasync.triton as pt  # noqa: E402
from triton.runtime import driver as triton_driver  # noqa: E402

import kernels  # noqa: E402


def test_import_ptxasync_does_not_import_triton():
    code = "import sys, ptxasync, ptxasync.ptx; assert 'triton' not in sys.modules, 'triton imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_import_makes_the_model_the_active_driver():
    assert triton_driver.active is pt.driver()
    t = triton_driver.active.get_current_target()
    assert (t.backend, t.arch, t.warp_size) == ("cuda", 90, 32)


@pytest.mark.parametrize("target,arch", [("sm_80", 80), ("sm_90a", 90), ("sm_100a", 100)])
def test_targets(target, arch):
    pt.configure(target=target)
    assert triton_driver.active.get_current_target().arch == arch
    props = triton_driver.active.utils.get_device_properties(triton_driver.active.get_current_device())
    assert props["max_shared_mem"] == {80: 166912, 90: 232448, 100: 232448}[arch]


@pytest.mark.parametrize("bad,match", [("sm_90", "sm_90a"), ("sm_80a", "sm_80"), ("sm_75", "knows"),
                                       ("hopper", "form"), (90, "str")])
def test_bad_target_is_refused_naming_it(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        pt.configure(target=bad)
    assert pt.options().target == "sm_90a"


def test_unknown_and_bad_options_are_refused():
    with pytest.raises(TypeError, match="racechecks"):
        pt.configure(racechecks=False)
    with pytest.raises(ValueError, match="hazards"):
        pt.configure(hazards="ignore")
    with pytest.raises(ValueError, match="policy"):
        pt.configure(policy="fast")


def test_switching_target_recompiles():
    x = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    for target in ("sm_90a", "sm_80", "sm_90a"):
        pt.configure(target=target)
        kernels.add[(1,)](x, x, out, 64, BLOCK=64)
        assert f".target {target}" in pt.last_launch().ptx
        np.testing.assert_array_equal(out, 2 * x)


def test_a_race_raises_at_its_ptx_line():
    x = np.zeros(4, np.int32)
    with pytest.raises(ptxasync.Hazard, match=r"data-race.*PTX line \d+: st\.global"):
        kernels.racy[(1,)](x, BLOCK=256)
    assert pt.last_launch().error is not None


def test_races_recorded_in_report_mode_and_warned_in_warn_mode():
    x = np.zeros(4, np.int32)
    pt.configure(hazards="report")
    kernels.racy[(1,)](x, BLOCK=256)
    rec = pt.last_launch()
    assert rec.races and all(r.rule == "data-race" for r in rec.races) and rec.stats is not None
    pt.configure(hazards="warn")
    with pytest.warns(pt.HazardWarning, match="kernel racy: .*race"):
        kernels.racy[(1,)](x, BLOCK=256)


def test_race_checks_off_finds_nothing():
    pt.configure(race_checks=False)
    kernels.racy[(1,)](np.zeros(4, np.int32), BLOCK=256)
    assert pt.last_launch().races == []


def test_the_record_keeps_the_machine_but_not_the_host_arrays():
    x = np.arange(128, dtype=np.float32)
    kernels.add[(1,)](x, x, x, 128, BLOCK=128)
    m = pt.last_launch().machine
    assert isinstance(m, ptxasync.Machine)
    with pytest.raises(ptxasync.IllegalAddress):
        m.read_global(x.ctypes.data, np.float32, 1)


class Pointer:
    """A tensor-like object Triton takes as a pointer: data_ptr() and dtype (and nbytes if given)."""

    def __init__(self, address, nbytes=None):
        self.address, self.dtype = address, np.dtype(np.float32)
        if nbytes is not None:
            self.nbytes = nbytes

    def data_ptr(self):
        return self.address


def test_a_pointer_to_memory_no_argument_covers_is_an_illegal_address():
    x = np.arange(128, dtype=np.float32)
    with pytest.raises(ptxasync.IllegalAddress, match=r"illegal global address 0x1[0-9a-f]{3}"):
        kernels.add[(1,)](x, x, Pointer(0x1000, nbytes=0), 128, BLOCK=128)


def test_a_pointer_object_of_unknown_size_is_refused():
    x = np.arange(128, dtype=np.float32)
    with pytest.raises(TypeError, match="Pointer has data_ptr.. but no nbytes"):
        kernels.add[(1,)](x, x, Pointer(0x1000), 128, BLOCK=128)


def test_an_empty_grid_launches_nothing():
    before = pt.last_launch()
    kernels.add[(0,)](np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(1, np.float32), 1, BLOCK=64)
    assert pt.last_launch() is before


def test_an_unsupported_argument_type_is_refused():
    with pytest.raises(TypeError):
        kernels.add[(1,)]([1.0, 2.0], np.zeros(2, np.float32), np.zeros(2, np.float32), 2, BLOCK=64)


def test_deactivate_and_activate():
    from triton import knobs
    pt.deactivate()
    try:
        assert triton_driver._active is not pt.driver()
        assert knobs.runtime.add_stages_inspection_hook is None
    finally:
        pt.activate()
    assert triton_driver.active is pt.driver()
    assert knobs.runtime.add_stages_inspection_hook is not None


def test_a_user_stage_hook_still_runs(tmp_path):
    from triton import knobs
    seen = []

    def hook(*args):
        if not args:
            return "user", "user"
        seen.append(sorted(args[1]))

    @triton.jit
    def mul3(x, BLOCK: triton.language.constexpr):
        o = triton.language.arange(0, BLOCK)
        triton.language.store(x + o, triton.language.load(x + o) * 3)

    pt.deactivate()
    knobs.runtime.add_stages_inspection_hook = hook
    pt.activate()
    try:
        with knobs.cache.scope():
            knobs.cache.dir = str(tmp_path)                # an empty cache: the kernel is compiled
            x = np.arange(128, dtype=np.int32)
            want = 3 * x
            mul3[(1,)](x, BLOCK=128)
        np.testing.assert_array_equal(x, want)
        assert seen and "cubin" in seen[0]
    finally:
        pt.deactivate()
        knobs.runtime.add_stages_inspection_hook = None
        pt.activate()


def test_benchmarker_times_the_model():
    x = np.arange(64, dtype=np.float32)
    ms = triton_driver.active.get_benchmarker()(lambda: kernels.add[(1,)](x, x, x.copy(), 64, BLOCK=64))
    assert ms > 0


def gather_args():
    rng = np.random.default_rng(1)
    src = rng.standard_normal(32).astype(np.float32)
    idx = rng.integers(0, 32, 64).astype(np.int32)
    return src, idx, np.zeros(64, np.float32)


def test_same_value_stores_are_recorded_not_raised_by_default():
    # the driver's default (configure(same_value_stores="record")): Triton's replicated stores of
    # equal values do not stop the launch; the record lists them as their own rule
    src, idx, out = gather_args()
    kernels.gather_1d[(1,)](src, idx, out, N=32, M=64)
    np.testing.assert_array_equal(out, src[idx])
    rules = {r.rule for r in pt.last_launch().races}
    assert rules == {"same-value-store"} and pt.last_launch().hazards == []


def test_same_value_stores_as_data_races_or_accepted():
    src, idx, out = gather_args()
    pt.configure(same_value_stores="race")
    with pytest.raises(ptxasync.Hazard, match=r"data-race.*st\.shared"):
        kernels.gather_1d[(1,)](src, idx, out, N=32, M=64)
    pt.configure(same_value_stores="accept")
    kernels.gather_1d[(1,)](src, idx, out, N=32, M=64)
    assert pt.last_launch().races == []
    with pytest.raises(ValueError, match="same_value_stores"):
        pt.configure(same_value_stores="ignore")


def test_stores_of_different_values_still_raise_under_every_mode():
    for mode in ("record", "accept"):
        pt.configure(same_value_stores=mode)
        with pytest.raises(ptxasync.Hazard, match=r"data-race.*PTX line \d+: st\.global"):
            kernels.racy[(1,)](np.zeros(4, np.int32), BLOCK=256)
