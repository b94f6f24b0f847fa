# The semantics library built alone (gcc, into a temporary folder) and loaded with ctypes:
# the `sem` fixture, shared by every test here. Skipped, with the reason, without gcc; a
# build that fails is reported once and fails every test that needs it.
import shutil
import subprocess

import pytest

import isa_cvt_all

_BUILT = {}


@pytest.fixture(scope="session")
def sem(tmp_path_factory):
    if not (shutil.which("gcc") or shutil.which("cc")):
        pytest.skip("no C compiler (gcc) on PATH to build csrc/core/sem/ alone")
    if "lib" not in _BUILT:
        try:
            _BUILT["lib"] = isa_cvt_all.Sem(isa_cvt_all.build(str(tmp_path_factory.mktemp("sem"))))
        except subprocess.CalledProcessError as e:
            _BUILT["lib"] = e
    if isinstance(_BUILT["lib"], Exception):
        pytest.fail("csrc/core/sem/ does not build: %s" % _BUILT["lib"])
    return _BUILT["lib"]
