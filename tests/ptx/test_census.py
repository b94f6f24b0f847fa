"""The census (tools/census/, tests/data/census/): kernels as Triton users and CUDA C++ writers
write them, compiled by their own compilers for sm_90a and sm_80, run whole on the model with
the race checker on, and compared with what the H200 computed from the same inputs: bit for bit,
unless the manifest states a tolerance (tensor-core sums in the hardware's order, f32 atomics
in arrival order).

A kernel that does not run yet is named in BLOCKERS with the start of the first error it meets,
so this test fails when a blocker goes away (take the kernel off the list) or a new one appears.

    python tests/ptx/test_census.py          # every case's outcome, as BLOCKERS spells it
"""
import os
import re
import sys

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx
from testpaths import REPO

sys.path.insert(0, os.path.join(REPO, "tools", "census"))
import census_lib as cl  # noqa: E402

# the GPU runner could not encode these two maps (a binding's argument type, since fixed in
# tools/census/run_gpu.py); their outputs are checked against NumPy instead: the copy exactly,
# the matmul within the manifest's tolerance
REFERENCE = {
    ("nvrtc_tma_copy", "sm_90a"): lambda i: {"out": (2 * i["x"]).astype(np.float32)},
    ("matmul_tma_persistent", "sm_90a"):
        lambda i: {"c": (i["a"].astype(np.float64) @ i["b"].astype(np.float64).T).astype(np.float16)},
}

# (name, arch) -> the start of the first error the model meets, and why (none today: every case
# equals the GPU, softmax and the libdevice kernels included since the f32 SFU cores are exact)
BLOCKERS = {}


def model_inputs(name, arch):
    path = os.path.join(cl.DATA, f"{name}.{arch}.npz")
    with np.load(path) as z:
        ins = {k[3:]: z[k] for k in z.files if k.startswith("in/")}
        outs = {k[4:]: z[k] for k in z.files if k.startswith("out/")}
    if (name, arch) in REFERENCE:
        outs = REFERENCE[(name, arch)](ins)
    return ins, outs


def run_case(name, arch, target="sm_90a", edit=None):
    """Run one case on a Machine of `target` (the H200's by default; the sm_80 builds ran there
    too), its PTX changed by `edit` if given; return ("ok", None), ("error", text) or
    ("differs", text)."""
    man = cl.manifest(name)
    md = man["archs"][arch]
    text = cl.ptx_text(name, arch)
    if edit:
        text = edit(text)
    ins, gpu = model_inputs(name, arch)
    try:
        k = ptx.Kernel(text, entry=md["entry"])
        smem = cl.static_shared(text) + int(md.get("shared", 0))
        m = pa.Machine(smem_bytes=max(smem, 16), seed=1, target=target)
        arrays = {b: a.copy() for b, a in ins.items()}
        gbuf = {b: m.register(a) for b, a in arrays.items()}
        params = cl.model_params(man, arch, text, m, gbuf)
        k.launch(m, grid=tuple(man["grid"]), block=tuple(man["block"]), params=params)
        if m.races or m.hazards:
            return "error", f"race/hazard: {(m.races or m.hazards)[0]}"
    except Exception as e:                                    # noqa: BLE001 (the outcome)
        return "error", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    for b, want in gpu.items():
        cmp = man["buffers"][b]["compare"]
        got = arrays[b]
        if cmp is None:
            continue
        if cmp == "exact" or (name, arch) == ("nvrtc_tma_copy", "sm_90a"):
            if not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
                diff = np.flatnonzero((got.reshape(-1).view(np.uint8).reshape(got.size, -1) !=
                                       want.reshape(-1).view(np.uint8).reshape(want.size, -1)).any(1))
                i = diff[0]
                return "differs", (f"{b}: {diff.size} of {got.size} elements differ from the GPU's bits, first "
                                   f"[{i}]: {got.reshape(-1)[i]!r} != {want.reshape(-1)[i]!r}")
        else:
            g64, w64 = got.astype(np.float64), want.astype(np.float64)
            ok = np.isclose(g64, w64, rtol=cmp["rtol"], atol=cmp["atol"], equal_nan=True)
            if not ok.all():
                i = np.flatnonzero(~ok.reshape(-1))[0]
                return "differs", (f"{b}: {np.count_nonzero(~ok)} of {got.size} elements outside "
                                   f"atol {cmp['atol']} rtol {cmp['rtol']}, first [{i}]: "
                                   f"{g64.reshape(-1)[i]!r} vs the GPU's {w64.reshape(-1)[i]!r}")
    return "ok", None


CASES = cl.cases()


def test_census_is_complete():
    assert len(CASES) >= 40
    for n, a in CASES:
        assert os.path.exists(os.path.join(cl.DATA, f"{n}.{a}.npz")), (n, a)
    assert set(BLOCKERS) <= set(CASES)


@pytest.mark.parametrize("name,arch", CASES, ids=[f"{n}.{a}" for n, a in CASES])
def test_census_kernel(name, arch):
    outcome, text = run_case(name, arch)
    if (name, arch) in BLOCKERS:
        start, why = BLOCKERS[(name, arch)]
        assert outcome != "ok", f"{name} {arch} runs and equals the GPU now: take it off BLOCKERS ({why})"
        assert text.startswith(start), f"{name} {arch}: the first blocker changed: {text}"
    else:
        assert outcome == "ok", f"{name} {arch}: {text}"


# The same kernels with their CTA barriers deleted: the race checker reports it (every case that
# has one; the others share no memory between threads).
BAR_SYNC = re.compile(r"^\s*(bar|barrier)(\.cta)?\.sync(\.aligned)?\s+0\s*;\s*$", re.M)
WITH_BARRIERS = [c for c in CASES if BAR_SYNC.search(cl.ptx_text(*c))]


@pytest.mark.parametrize("name,arch", WITH_BARRIERS, ids=[f"{n}.{a}" for n, a in WITH_BARRIERS])
def test_census_kernel_without_its_barriers_is_reported(name, arch):
    outcome, text = run_case(name, arch, edit=lambda t: BAR_SYNC.sub("", t))
    assert outcome == "error" and text.startswith("Hazard: "), f"{name} {arch}: {outcome} {text}"


def test_most_census_kernels_have_barriers_to_delete():
    assert len(WITH_BARRIERS) >= 28


# ... and with their wgmma.wait_group lines deleted: the accumulators are read (wgmma-pending) or
# the shared memory a pending wgmma reads is written (data-race) before any wait retires the group
# (PTX ISA, wgmma.wait_group; csrc/core/ptx/exec/wgpend.c). Unchanged, each runs silent above.
WGMMA_WAIT = re.compile(r"^\s*wgmma\.wait_group\.sync\.aligned\s+\d+\s*;\s*$", re.M)
WITH_WGMMA = [c for c in CASES if WGMMA_WAIT.search(cl.ptx_text(*c))]


@pytest.mark.parametrize("name,arch", WITH_WGMMA, ids=[f"{n}.{a}" for n, a in WITH_WGMMA])
def test_census_kernel_without_its_wgmma_waits_is_reported(name, arch):
    outcome, text = run_case(name, arch, edit=lambda t: WGMMA_WAIT.sub("", t))
    assert outcome == "error" and text.startswith("Hazard: ["), f"{name} {arch}: {outcome} {text}"
    assert "wgmma.mma_async at PTX line" in text, text


def test_the_census_has_wgmma_kernels():
    assert len(WITH_WGMMA) >= 7


# Machine(target="sm_80"): an sm_80 build runs on an Ampere machine (163 KiB of shared memory a
# CTA, no clusters, no tensor maps) as on the H200; cp.async + ldmatrix + mma.sync, atomics,
# dynamic shared memory. The arithmetic is the H200's (docs/ptx.md, "Targets").
ON_SM80 = [("vadd", "sm_80"), ("matmul_f16", "sm_80"), ("nvrtc_dyn_smem", "sm_80"), ("reduce_atomic", "sm_80")]


@pytest.mark.parametrize("name,arch", ON_SM80, ids=[n for n, _ in ON_SM80])
def test_census_sm80_build_on_an_sm80_machine(name, arch):
    assert run_case(name, arch, target="sm_80") == ("ok", None)


def test_census_sm90a_build_is_refused_on_an_sm80_machine():
    outcome, text = run_case("vadd", "sm_90a", target="sm_80")
    assert outcome == "error" and "a module for sm_90a does not run on an sm_80 machine" in text, text


if __name__ == "__main__":
    for n, a in CASES:
        outcome, text = run_case(n, a)
        print(f"    ({n!r}, {a!r}): ({(text or '')[:110]!r}, \"\"),  # {outcome}", flush=True)
