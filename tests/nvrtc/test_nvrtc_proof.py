"""The ptxasync.nvrtc proof (tests/data/nvrtc/): CUDA C++ kernels compiled by NVRTC (a cuda::ptx
TMA + mbarrier + wgmma GEMM tile; a CuTe TMA load / store through a Swizzle<3,4,3> layout), their
PTX vendored, run on an H200 by tools/census/run_gpu.py and on the model here: the model's
outputs are the H200's bits. No NVRTC is needed (tests/nvrtc/test_nvrtc_compile.py compiles
fresh)."""
import numpy as np
import pytest

from census import census_lib as cl
from nvrtc_cases import ARCH, encode, inputs, manifest, names, ptx_text, recorded, run_on_model

NAMES = names()


def test_both_proof_kernels_are_vendored():
    assert NAMES == ["nvrtc_cute_tma_sw128", "nvrtc_tma_wgmma"]
    for n in NAMES:
        assert recorded(n)["error"] is None, n


@pytest.mark.parametrize("name", NAMES)
def test_inputs_regenerate_from_the_manifest(name):
    rec = recorded(name)["in"]
    ins = inputs(name)
    assert sorted(rec) == sorted(ins)
    for b in ins:
        assert np.array_equal(ins[b], rec[b]), b


@pytest.mark.parametrize("name", NAMES)
def test_model_equals_the_h200_bit_for_bit(name):
    arrays, m = run_on_model(name)
    assert not m.races and not m.hazards, (m.races or m.hazards)[0]
    gpu = recorded(name)["out"]
    for b, d in manifest(name)["buffers"].items():
        if d["compare"] == "exact":
            got, want = arrays[b], gpu[b]
            diff = np.flatnonzero(got.reshape(-1).view(np.uint8) != want.reshape(-1).view(np.uint8))
            assert diff.size == 0, f"{b}: {diff.size} bytes differ from the H200's, first at byte {diff[0]}"
        else:                       # an input: the kernel leaves it as it was, on both
            assert np.array_equal(arrays[b], gpu[b]), b


@pytest.mark.parametrize("name", NAMES)
def test_model_encodes_the_maps_the_driver_encoded(name):
    """The maps the model's encoder makes from the manifest's arguments, at the GPU's addresses,
    are the 128 bytes cuTensorMapEncodeTiled made there."""
    man = manifest(name)
    maps = [v[1] for _, _, v in cl.param_values(man, ARCH, ptx_text(name)) if v[0] == "tmap"]
    rec = recorded(name)["tmap"]
    assert len(maps) == len(rec) == 2
    for t, (raw, base) in zip(maps, rec):
        assert bytes(encode(t, base)) == raw


def test_cute_maps_are_what_cute_make_tma_copy_encodes():
    """The manifest's map arguments are those CuTe's host make_tma_copy passed to
    cuTensorMapEncodeTiled for this kernel's types (tools/nvrtc/cute_tma_args.cu, recorded)."""
    name = "nvrtc_cute_tma_sw128"
    man = manifest(name)
    maps = [v[1] for _, _, v in cl.param_values(man, ARCH, ptx_text(name)) if v[0] == "tmap"]
    calls = man["cute_encode"]["calls"]
    assert len(calls) == len(maps)
    for t, c in zip(maps, calls):
        assert c["interleave"] == 0 and c["oob_fill"] == 0
        for key in ("dtype", "rank", "dims", "strides", "box", "element_strides", "swizzle", "l2"):
            assert t[key] == c[key], key


def test_gpu_outputs_are_what_the_kernels_compute():
    """The recordings themselves, against NumPy: the CuTe kernel's formula exactly; the GEMM
    within f32 summation error of the exact product (the bit-for-bit claim is the model's)."""
    rec = recorded("nvrtc_cute_tma_sw128")
    x = rec["in"]["x"].astype(np.int64)
    r, c = np.indices(x.shape)
    assert np.array_equal(rec["out"]["y"], ((x + 64 * (r % 64) + c % 64) % 65536).astype(np.uint16))
    rec = recorded("nvrtc_tma_wgmma")
    a = (rec["in"]["a"].astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    b = (rec["in"]["b"].astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    ref = a @ b.T
    assert np.abs(rec["out"]["d"] - ref).max() < 1e-4 * np.abs(ref).max()
    assert not np.array_equal(rec["out"]["d"], ref.astype(np.float32))   # the hardware's sum order shows
