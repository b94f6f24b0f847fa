"""cvt and cvt.pack against the H200: every one of the 852 forms ptxas 13.0 assembles for
sm_90a, on the vendored subset of the recordings (tests/data/isa/cvt_subset.npz, written by
tools/isa_cvt_subset.py; tools/isa_cvt_all.py runs the whole recording)."""
import json
import os

import numpy as np
import pytest

import isa_cvt_all
from testpaths import DATA

SUBSET = os.path.join(DATA, "isa", "cvt_subset.npz")
_Z = np.load(SUBSET)
FORMS = json.loads(str(_Z["forms"]))
EX = ("f16", "bf16", "e4m3x2", "e5m2x2", "f16x2")


def subset_inputs(form):
    """The sources as recorded: 16-bit float sources over every pattern (f16x2: each f16
    above a partner), the others over the public integers and floats."""
    if form["at"] in EX:
        return [_Z["exf16x2" if form["at"] == "f16x2" else "ex16"]]
    return [_Z["pub_s%d%s" % (w, ("", "_b", "_c")[j])] for j, w in enumerate(form["srcs"])]


@pytest.mark.parametrize("i", range(len(FORMS)), ids=[f["ptx"] for f in FORMS])
def test_form(sem, i):
    form = FORMS[i]
    want = _Z[str(i)]
    srcs = subset_inputs(form)
    good, n, first, got = isa_cvt_all.check_form(sem, form, srcs, want)
    if isinstance(got, str):
        pytest.fail("%s: %s" % (form["instr"], got))
    assert good == n, "%s: %d of %d differ; first: in %s want %#x got %#x" % (
        form["instr"], n - good, n, " ".join("%#x" % int(s[first]) for s in srcs),
        int(want[first]), int(got[first]))


def test_subset_covers_every_form():
    assert len(FORMS) == 852
    assert all(str(i) in _Z.files for i in range(len(FORMS)))
