"""Instructions recorded on an H200 (golden/isa), replayed through ptx.Kernel bit for bit: the
recorded PTX module of each op and of each of the 852 cvt forms runs on the model with the recorded
inputs (vendored subsets: tests/data/isa/ops_subset.*, written by tools/isa_ops_subset.py, and
cvt_subset.npz; tools/isa_golden.py runs the whole recording).

An op the model does not run yet must be on NOT_MODELLED, which names each with its reason;
test_not_modelled_is_exact fails when one of them starts to run, or another stops."""
import json
import os

import numpy as np
import pytest

import isa_golden
from ptxasync import ptx
from testpaths import DATA

OPS = json.load(open(os.path.join(DATA, "isa", "ops_subset.json")))["ops"]
_Z = np.load(os.path.join(DATA, "isa", "ops_subset.npz"))

# the recorded ops Kernel() refuses today: what the model has not built yet
NOT_MODELLED = {}
NOT_MODELLED_PREFIX = {
}
# f32 special functions whose unit's arithmetic is partly fitted (docs/sfu.md): the share of
# recorded elements each gives bit for bit, at least. The others (rcp, ex2, rsqrt, sqrt, tanh,
# sin, cos, div.approx / div.full, rcp.approx.ftz.f64) are exact.
APPROX = {"lg2.approx.ftz.f32": 0.99, "lg2.approx.f32": 0.99}


def not_modelled(name):
    return name in NOT_MODELLED or any(name.startswith(p) for p in NOT_MODELLED_PREFIX)


def run_op(i):
    op = OPS[i]
    ins = [_Z["%d_in%d" % (i, j)] for j in range(len(op["ins"]))]
    want = [_Z["%d_out%d" % (i, k)] for k in range(len(op["outs"]))]
    return isa_golden.run_module(op["ptx"], ins, op["outs"], len(want[0])), want


@pytest.mark.parametrize("i", range(len(OPS)), ids=[o["name"] for o in OPS])
def test_op(i):
    name = OPS[i]["name"]
    if not_modelled(name):
        pytest.skip("not modelled yet: " + name)
    got, want = run_op(i)
    bad, first = isa_golden.compare(name, got, want)
    if name in APPROX:
        n = len(want[0]) * len(want)
        assert bad <= (1 - APPROX[name]) * n, "%s: %d of %d elements differ; first %s" % (name, bad, n, first)
        return
    assert not bad, "%s: %d elements differ; first %s" % (name, bad, first)


def test_not_modelled_is_exact():
    """Each op on the list is refused by Kernel() with a reason, and no other op is."""
    refused = set()
    for i, op in enumerate(OPS):
        try:
            ptx.Kernel(op["ptx"])
        except ptx.PtxSyntaxError as e:
            assert "does not run" in str(e), str(e)
            refused.add(op["name"])
    assert refused == {o["name"] for o in OPS if not_modelled(o["name"])}


_C = np.load(os.path.join(DATA, "isa", "cvt_subset.npz"))
CVT = json.loads(str(_C["forms"]))
_EX = ("f16", "bf16", "e4m3x2", "e5m2x2", "f16x2")


def test_every_cvt_form():
    """All 852 cvt / cvt.pack forms an H200 runs, each through its recorded module."""
    bad = []
    for i, form in enumerate(CVT):
        if form["at"] in _EX:
            srcs = [_C["exf16x2" if form["at"] == "f16x2" else "ex16"]]
        else:
            srcs = [_C["pub_s%d%s" % (w, ("", "_b", "_c")[j])] for j, w in enumerate(form["srcs"])]
        want = _C[str(i)]
        got = isa_golden.run_module(isa_golden.cvt_module(form), srcs, [form["d"]], len(want), 256,
                                    ["po"], ["pa", "pb", "pc"])
        n, first = isa_golden.compare(form["instr"], got, [want])
        if n:
            bad.append("%s: %d differ, %s" % (form["instr"], n, first))
    assert not bad, "\n".join(bad[:20])
