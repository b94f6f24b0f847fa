"""The census kernels (tests/data/census/) launched on the model with the race checker on and
off (bench keys race_census.<name>.<arch>): the same launch as tests/ptx/test_census.py, each
run on a fresh machine so that neither side starts from the other's state.
"""
import os
import sys

import numpy as np

import ptxasync as pa
from ptxasync import ptx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "census"))
import census_lib as cl  # noqa: E402


def cases():
    return cl.cases()


def launcher(name, arch, race_checks):
    """A function that launches the kernel once on a fresh machine (raises what the launch
    raises: a kernel the model does not run yet)."""
    man = cl.manifest(name)
    md = man["archs"][arch]
    text = cl.ptx_text(name, arch)
    with np.load(os.path.join(cl.DATA, f"{name}.{arch}.npz")) as z:
        ins = {k[3:]: z[k] for k in z.files if k.startswith("in/")}
    k = ptx.Kernel(text, entry=md["entry"])
    smem = max(cl.static_shared(text) + int(md.get("shared", 0)), 16)

    def run():
        m = pa.Machine(smem_bytes=smem, seed=1, race_checks=race_checks)
        gbuf = {b: m.register(a.copy()) for b, a in ins.items()}
        params = cl.model_params(man, arch, text, m, gbuf)
        k.launch(m, grid=tuple(man["grid"]), block=tuple(man["block"]), params=params)
    return run
