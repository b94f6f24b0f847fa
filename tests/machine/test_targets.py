"""Machine(target=...): a machine for every target the PTX ISA names, with that target's shared
memory, cluster support and instruction set, and the ISA's rule for which module runs where."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

SM80S = ("sm_80", "sm_86", "sm_87", "sm_89")


# CUDA C++ programming guide, "Technical Specifications per Compute Capability", maximum
# amount of shared memory per thread block: 163 KB (8.0, 8.7), 99 KB (8.6, 8.9, 12.x),
# 227 KB (9.0, 10.x, 11.0).
@pytest.mark.parametrize("target,kib", [("sm_80", 163), ("sm_86", 99), ("sm_87", 163), ("sm_89", 99),
                                        ("sm_90a", 227), ("sm_100a", 227), ("sm_110a", 227), ("sm_120a", 99)])
def test_shared_memory_per_cta_is_the_targets(target, kib):
    pa.Machine(target=target, smem_bytes=kib * 1024)
    with pytest.raises(pa.InvalidValue, match=f"exceeds the .*limit of {kib * 1024} \\({kib} KiB"):
        pa.Machine(target=target, smem_bytes=kib * 1024 + 16)


def test_the_default_shared_memory_fits_the_target():
    # 200 KiB where the target has it, all of it where it has less
    assert pa.Machine().ctas[0].smem.size == 200 * 1024
    assert pa.Machine(target="sm_80").ctas[0].smem.size == 163 * 1024
    assert pa.Machine(target="sm_89").ctas[0].smem.size == 99 * 1024


@pytest.mark.parametrize("target", SM80S)
def test_no_clusters_before_sm90(target):
    # PTX ISA, cluster of cooperative thread arrays: "requires sm_90 or higher"
    pa.Machine(target=target, ctas=1)
    with pytest.raises(pa.InvalidValue, match=f"a cluster of 2 CTAs needs sm_90 or later; {target} has no clusters"):
        pa.Machine(target=target, ctas=2)
    pa.Machine(target="sm_90", ctas=2)


def test_no_tensor_maps_before_sm90():
    # driver-tensormap.md: "Tensor map objects are only supported on devices of compute capability 9.0"
    with pytest.raises(pa.InvalidValue, match="tensor maps need sm_90 or later"):
        pa.TensorMap.tiled("float32", 0x10000, [64, 64], [256], [16, 16], target="sm_80")
    pa.TensorMap.tiled("float32", 0x10000, [64, 64], [256], [16, 16], target="sm_90")


def test_no_bulk_copies_or_transaction_counts_before_sm90():
    # PTX ISA cp.async.bulk and mbarrier.expect_tx, Target ISA Notes: "Requires sm_90 or higher"
    m = pa.Machine(target="sm_80")
    g = m.register(np.zeros(256, np.uint8))
    bar = m.mbarrier(1024).init(1)
    with pytest.raises(pa.IllegalInstruction, match="needs sm_90 or later; this machine is sm_80"):
        bar.expect_tx(16)
    with pytest.raises(pa.IllegalInstruction, match="cp.async.bulk needs sm_90 or later; this machine is sm_80"):
        m.cp_async_bulk(0, g.address, 64, bar)
    bar.arrive()                                   # mbarrier itself is sm_80's


# PTX ISA, "Architecture-specific and family-specific features": code for a baseline target
# runs on that architecture and later ones; for sm_XYa only on sm_XY's 'a' target; for sm_XYf on
# the later 'a'/'f' targets of the family.
RUNS = [("sm_80", "sm_80", True), ("sm_80", "sm_86", True), ("sm_80", "sm_90a", True), ("sm_86", "sm_80", False),
        ("sm_90", "sm_89", False), ("sm_90", "sm_100a", True), ("sm_90a", "sm_90a", True),
        ("sm_90a", "sm_90", False), ("sm_90a", "sm_100a", False), ("sm_100f", "sm_103a", True),
        ("sm_100f", "sm_103f", True), ("sm_100f", "sm_100", False), ("sm_100f", "sm_120a", False),
        ("sm_103f", "sm_100a", False), ("sm_120f", "sm_121a", True)]

KERNEL = """.version 8.8
.target {t}
.address_size 64
.visible .entry k(.param .u64 p)
{{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, 7;
    st.global.u32 [%rd1], %r1;
    ret;
}}
"""


@pytest.mark.parametrize("module,machine,runs", RUNS, ids=[f"{a}-on-{b}" for a, b, _ in RUNS])
def test_which_module_runs_on_which_machine(module, machine, runs):
    k = ptx.Kernel(KERNEL.format(t=module))
    m = pa.Machine(target=machine)
    out = np.zeros(1, np.uint32)
    g = m.register(out)
    if runs:
        k.launch(m, block=(1, 1, 1), params={"p": g})
        assert out[0] == 7
    else:
        with pytest.raises(pa.IllegalInstruction, match=f"a module for {module} does not run on an {machine} machine"):
            k.launch(m, block=(1, 1, 1), params={"p": g})
        assert out[0] == 0
