"""Property: for forms generated from the instruction tables (valid ones, reordered, a qualifier
dropped or swapped, operands varied) on every target and several versions, ptxasync.ptx.check
gives the verdict of each installed ptxas it models (ptx.PTXAS_RELEASES: 13.0, 13.5), told which
one. A release that is not installed skips, saying so; a form that ptxas crashes on (a signal,
an internal error) has no verdict and skips with ptxas's words (docs/ptx.md lists the known
ones)."""
import testpaths
import os
import subprocess
import sys

import pytest

from ptxasync import ptx

import ptx_forms as pf

CASES = pf.cases(60, seed=20250)


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("release,path", pf.judges())
def test_verdict_matches_ptxas(release, path, case):
    form, target, version = CASES[case]
    text = pf.module(form, target, version)
    v = pf.ptxas_verdict(text, target, path)
    if v.crash:
        pytest.skip(f"{v.crash} on `{form}` for {target} at .version {version}: no verdict")
    diags = ptx.check(text, ptxas=release)
    ours = not any(d.severity == "error" for d in diags)
    assert ours == v.accepted, (f"ptxas {release} ({path})", form, target, version, v.message,
                                [str(d) for d in diags])


def test_tables_are_generated_from_the_spec():
    # the checked-in C tables are what tools/ptx_tables.py writes
    rc = subprocess.run([sys.executable, os.path.join(testpaths.REPO, "tools", "ptx_tables.py"), "--check"]).returncode
    assert rc == 0
