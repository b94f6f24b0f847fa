"""Real kernels' PTX (Triton's TMA copy and TMA matmul for sm_90a, tests/data/ptx/): checked as
ptxas checks them, printed canonically, and the printed text assembles and is a fixed point."""
import testpaths
import glob
import os

import pytest

from ptxasync import ptx

import ptx_forms as pf

KERNELS = sorted(glob.glob(os.path.join(testpaths.DATA, "ptx", "*.ptx")))


@pytest.mark.parametrize("path", KERNELS, ids=os.path.basename)
def test_kernel_is_accepted(path):
    text = open(path).read()
    diags = ptx.check(text)
    assert not [d for d in diags if d.severity == "error"], diags
    # what the tables do not cover is said, never silently passed
    assert all("outside the checked subset" in d.message for d in diags)


@pytest.mark.parametrize("path", KERNELS, ids=os.path.basename)
def test_kernel_prints_to_a_fixed_point(path):
    once = ptx.format(open(path).read())
    assert ptx.format(once) == once
    assert "cp.async.bulk.tensor.2d" in once


@pytest.mark.skipif(pf.ptxas_path() is None, reason="ptxas is not installed")
@pytest.mark.parametrize("path", KERNELS, ids=os.path.basename)
def test_printed_kernel_assembles(path, tmp_path):
    assert pf.ptxas_accepts(open(path).read(), "sm_90a")[0]
    ok, msg = pf.ptxas_accepts(ptx.format(open(path).read()), "sm_90a")
    assert ok, msg


@pytest.mark.parametrize("path", KERNELS, ids=os.path.basename)
def test_kernel_for_an_older_target_is_rejected(path):
    text = open(path).read().replace(".target sm_90a", ".target sm_80")
    errors = [d for d in ptx.check(text) if d.severity == "error"]
    assert errors and any("sm_90" in d.message for d in errors), errors
