"""ptxasync.nvrtc itself: CUDA C++ compiled fresh through NVRTC runs on the model and equals the
H200's recorded outputs; a kernel is picked by its C++ name; NVRTC's refusal is a CompileError
carrying its log; NVRTC is loaded on the first compile only. The tests that compile skip when
NVRTC (nvidia-cuda-nvrtc with cuda-bindings) or the headers they need are not installed."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import nvrtc, ptx
from nvrtc_cases import manifest, ptx_text, recorded, run_on_model, source
from testpaths import REPO

WHY_NOT = nvrtc.available()
needs_nvrtc = pytest.mark.skipif(WHY_NOT is not None, reason=f"NVRTC is not usable here: {WHY_NOT}")


def cccl_version(path):
    with open(os.path.join(path, "cuda", "std", "__cccl", "version.h")) as f:
        v = int(re.search(r"#define CCCL_VERSION (\d+)", f.read()).group(1))
    return v // 1000000, v // 1000 % 1000


def cute_includes():
    """Include folders for the CuTe kernel, or None: nvidia-cutlass 4.2 compiles under NVRTC with
    CCCL 3.0 (CUDA 13.0's) only, so the wheel's CCCL when it is 3.0, else the copy
    tools/nvrtc/vendor.py's docstring installs under build/cccl-13.0."""
    if nvrtc.cutlass_include() is None:
        return None
    for cccl in (nvrtc.cccl_include(), os.path.join(REPO, "build", "cccl-13.0", "nvidia", "cu13", "include", "cccl")):
        if cccl and os.path.isdir(cccl) and cccl_version(cccl) <= (3, 0):
            rest = [p for p in nvrtc.include_paths() if p != nvrtc.cccl_include()]
            return [cccl, os.path.dirname(cccl)] + rest
    return None


def test_import_ptxasync_loads_no_nvrtc():
    code = ("import sys, ptxasync, ptxasync.nvrtc; "
            "print([m for m in sys.modules if m.startswith('cuda.bindings.nvrtc') or m == 'cuda.bindings'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_without_cuda_bindings_compile_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    with pytest.raises(nvrtc.NvrtcUnavailable, match=r"pip install '\.\[nvrtc\]'") as e:
        nvrtc.compile("__global__ void k() {}")
    assert isinstance(e.value, pa.PtxAsyncError) and isinstance(e.value, ImportError)
    assert "pip install" in nvrtc.available()


@pytest.mark.parametrize("arch,option", [("sm_90a", "--gpu-architecture=compute_90a"),
                                         ("compute_80", "--gpu-architecture=compute_80")])
def test_arch_option(arch, option):
    from ptxasync.nvrtc._compile import arch_option
    assert arch_option(arch) == option
    with pytest.raises(ValueError, match="expected 'sm_XX'"):
        arch_option("hopper")


@needs_nvrtc
def test_compile_error_raises_with_nvrtc_log():
    src = "__global__ void k(int *p) {\n    *p = not_declared + 1;\n}\n"
    with pytest.raises(nvrtc.CompileError) as e:
        nvrtc.compile(src, name="broken.cu")
    err = e.value
    assert isinstance(err, pa.PtxAsyncError)
    assert 'broken.cu(2): error: identifier "not_declared" is undefined' in err.log
    assert 'identifier "not_declared" is undefined' in str(err).splitlines()[0]
    assert "--gpu-architecture=compute_90a" in err.options


@needs_nvrtc
def test_unknown_name_expression_raises():
    with pytest.raises(nvrtc.CompileError, match="no_such_kernel"):
        nvrtc.compile("__global__ void k(int *p) { *p = 1; }", entry="no_such_kernel")


KERNELS = r"""
namespace demo {
template <int Add> __global__ void add(int *p) { p[threadIdx.x] += Add; }
template __global__ void add<3>(int *);
}
extern "C" __global__ void twice(int *p) { p[threadIdx.x] *= 2; }
"""


@needs_nvrtc
@pytest.mark.parametrize("entry,expect", [("demo::add<3>", lambda x: x + 3), ("&demo::add<3>", lambda x: x + 3),
                                          ("twice", lambda x: 2 * x)])
def test_entry_by_cpp_name_or_extern_c(entry, expect):
    k = nvrtc.compile(KERNELS, entry=entry)
    assert isinstance(k, ptx.Kernel)
    lowered = k.program.lowered_names[entry]
    assert k.entry == lowered and f".entry {lowered}(" in k.ptx
    assert (lowered == "twice") == (entry == "twice")       # the C++ one is mangled
    m = pa.Machine(smem_bytes=16)
    x = np.arange(32, dtype=np.int32)
    want = expect(x.copy())
    g = m.register(x)
    k.launch(m, block=32, params={next(iter(k.params)): g.address})
    assert np.array_equal(x, want)


@needs_nvrtc
def test_two_kernels_need_an_entry():
    with pytest.raises(ptx.PtxSyntaxError):
        nvrtc.compile(KERNELS)


@needs_nvrtc
def test_wheels_headers_are_found():
    if nvrtc.cccl_include() is None:
        pytest.skip("nvidia-cuda-cccl is not installed")
    assert os.path.isfile(os.path.join(nvrtc.cccl_include(), "cuda", "ptx"))
    assert nvrtc.include_paths()[0] == nvrtc.cccl_include()


def assert_equals_gpu(name, text, entry):
    arrays, m = run_on_model(name, text=text, entry=entry)
    assert not m.races and not m.hazards
    gpu = recorded(name)["out"]
    for b, d in manifest(name)["buffers"].items():
        if d["compare"] == "exact":
            assert np.array_equal(arrays[b].view(np.uint8), gpu[b].view(np.uint8)), b


@needs_nvrtc
def test_cuda_ptx_wgmma_kernel_compiled_fresh_equals_the_h200():
    if nvrtc.cccl_include() is None:
        pytest.skip("nvidia-cuda-cccl (<cuda/ptx>) is not installed")
    k = nvrtc.compile(source("nvrtc_tma_wgmma"), entry="tma_wgmma", name="tma_wgmma.cu")
    man = manifest("nvrtc_tma_wgmma")
    if "%d.%d" % k.program.version == man["nvrtc"]:
        assert k.ptx == ptx_text("nvrtc_tma_wgmma")         # the vendored PTX is what this NVRTC writes
    assert_equals_gpu("nvrtc_tma_wgmma", k.ptx, k.entry)


@needs_nvrtc
def test_cute_kernel_compiled_fresh_equals_the_h200():
    inc = cute_includes()
    if inc is None:
        pytest.skip("needs nvidia-cutlass and CCCL 3.0 (nvidia-cutlass 4.2 does not compile under NVRTC "
                    "with CCCL 3.5: std::tuple_size is redeclared); see tools/nvrtc/vendor.py")
    man = manifest("nvrtc_cute_tma_sw128")
    k = nvrtc.compile(source("nvrtc_cute_tma_sw128"), entry="tma_copy_sw128", options=man["options"],
                      include_paths=inc, name="cute_tma_sw128.cu")
    assert_equals_gpu("nvrtc_cute_tma_sw128", k.ptx, k.entry)
