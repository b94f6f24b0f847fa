"""The kernels the GPU runs (ptxgen) and a Machine's trace (ptxtrace) print each operation
through one printer (ptxasync.ptxops): the same program, run on the model with its trace on
and generated as a kernel, holds the same copy instructions, qualifier for qualifier, in the
same order. No GPU is needed."""
import pytest

import ptxasync.machine
from ptxasync.cuda import runner
from ptxasync.cuda.ptxgen import generate

import cluster_programs as cp
from test_cuda import every_kind_program

COPIES = ("cp.async.bulk.tensor", "cp.reduce.async.bulk", "cp.async.bulk.global", "cp.async.bulk.shared",
          "cp.async.ca", "cp.async.cg", "st.async")


def copies(text):
    heads = [line.split()[0] for line in text.splitlines() if line.startswith("\t")]
    return [h for h in heads if h.startswith(COPIES)]


def traced(prog, monkeypatch):
    """The trace of the model's run of prog, as PTX."""
    made = []

    class Traced(ptxasync.machine.Machine):
        def __init__(self, *a, **kw):
            super().__init__(*a, trace=True, **kw)
            made.append(self)
    monkeypatch.setattr(ptxasync.machine, "Machine", Traced)
    runner.run_model(prog)
    return made[0].trace_ptx()


def one_cta_program():
    """Every one-CTA form the generator writes, the tensor reduction through an f16 map (the
    u16 one of every_kind_program faults, on the GPU and in the model, before the rest)."""
    prog = every_kind_program()
    f16 = prog.tensor_map_tiled(prog.buffers[0], dtype="f16", global_dim=(64, 64), global_strides=(128,),
                                box_dim=(16, 8), swizzle="32B")
    op = next(op for op in prog.ops if op.name == "cp_reduce_async_bulk_tensor")
    op.args = ("add", f16) + op.args[2:]
    return prog


PROGRAMS = {
    "every one-CTA form": one_cta_program,
    "multicast tile": cp.multicast_tile_program,
    "multicast bulk": cp.multicast_bulk_program,
    "st.async v4 u32": lambda: cp.st_async_program(vec=4),
    "st.async v2 f64 weak": lambda: cp.st_async_program(type="f64", vec=2, weak=True),
    "CTA to CTA bulk copy": cp.cta_to_cta_program,
    "CTA to CTA bulk reduction": lambda: cp.cta_to_cta_program(reduce=("add", "u32")),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_kernel_and_trace_print_the_same_copies(name, monkeypatch):
    prog = PROGRAMS[name]()
    kernel = copies(generate(prog)[0])
    assert kernel, "the program issues copies"
    assert copies(traced(prog, monkeypatch)) == kernel
