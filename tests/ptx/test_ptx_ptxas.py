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


FAKE_PTXAS = """#!/bin/sh
[ "$1" = --version ] && {{ echo "Cuda compilation tools, release 13.5, V13.5.37"; exit 0; }}
{body}
"""


@pytest.mark.skipif(os.name == "nt", reason="the stand-in ptxas is a shell script")
@pytest.mark.parametrize("body,accepted,crash", [
    ("exit 0", True, None),
    ("echo 'ptxas k.ptx, line 21; error   : Arguments mismatch'; exit 255", False, None),
    ("kill -SEGV $$", False, "ptxas 13.5 died of SIGSEGV"),
    ("echo 'ptxas fatal   : (C7907) Internal compiler error.'; exit 255", False,
     "ptxas 13.5 reported an internal error: ptxas fatal : (C7907) Internal compiler error."),
    ("echo 'AddressSanitizer: SEGV on unknown address'; exit 1", False,
     "ptxas 13.5 exited with status 1: AddressSanitizer: SEGV on unknown address"),
])
def test_a_crash_is_no_verdict(tmp_path, body, accepted, crash):
    # a stand-in for ptxas: what it says is a verdict, unless it died or failed inside
    fake = tmp_path / "ptxas"
    fake.write_text(FAKE_PTXAS.format(body=body))
    fake.chmod(0o755)
    v = pf.ptxas_verdict(pf.module("ret;"), "sm_90a", str(fake))
    assert (v.accepted, v.crash) == (accepted, crash)
    if crash:
        with pytest.raises(pytest.skip.Exception, match="no verdict"):
            pf.ptxas_accepts(pf.module("ret;"), "sm_90a", str(fake))


@pytest.mark.skipif(os.name == "nt", reason="the stand-in ptxas is a shell script")
def test_ptxas_is_found_in_the_wheel_and_on_path(tmp_path, monkeypatch):
    def fake(path, release):
        path.parent.mkdir(parents=True)
        path.write_text(f'#!/bin/sh\necho "Cuda compilation tools, release {release}, V{release}.1"\n')
        path.chmod(0o755)
        return str(path)

    wheel = fake(tmp_path / "site" / "nvidia" / "cu13" / "bin" / "ptxas", "13.9")
    on_path = fake(tmp_path / "bin" / "ptxas", "12.9")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    found = ptx.ptxas_installed()
    assert found["13.9"] == wheel and found["12.9"] == on_path
    assert ptx.ptxas_path() == wheel                  # the newest
    assert ptx.ptxas_path("12.9") == on_path and ptx.ptxas_path("11.0") is None
    assert ptx.ptxas_release(wheel) == "13.9" and ptx.ptxas_release(str(tmp_path / "none")) is None
    with pytest.raises(ValueError, match="13.0 and 13.5"):
        ptx.check(pf.module("ret;"), ptxas="13.9")
