"""Property: for forms generated from the instruction tables (valid ones, reordered, a qualifier
dropped or swapped, operands varied) on every target and several versions, ptxasync.ptx.check
gives the local ptxas's verdict. Skips where ptxas is not installed."""
import testpaths
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ptxasync import ptx

import ptx_forms as pf

pytestmark = pytest.mark.skipif(pf.ptxas_path() is None, reason="ptxas is not installed")

FORMS = pf.seed_forms()


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(form=st.sampled_from(FORMS), target=st.sampled_from(pf.TARGETS),
       version=st.sampled_from(pf.VERSIONS), seed=st.integers(0, 2**32 - 1), mutate=st.booleans())
def test_verdict_matches_ptxas(form, target, version, seed, mutate):
    text = pf.module(pf.instance(form, random.Random(seed), mutate=mutate), target, version)
    accepted, message = pf.ptxas_accepts(text, target)
    diags = ptx.check(text)
    ours = not any(d.severity == "error" for d in diags)
    assert ours == accepted, (text.splitlines()[pf.FORM_LINE - 1], target, version, message,
                              [str(d) for d in diags])


def test_tables_are_generated_from_the_spec():
    # the checked-in C tables are what tools/ptx_tables.py writes
    import subprocess
    import sys
    import os
    root = testpaths.REPO
    rc = subprocess.run([sys.executable, os.path.join(root, "tools", "ptx_tables.py"), "--check"]).returncode
    assert rc == 0
