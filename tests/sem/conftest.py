# The semantics library built alone (gcc, into a temporary folder) and loaded with ctypes:
# the `sem` fixture, shared by every test here. Skipped, with the reason, without gcc.
import shutil

import pytest

import isa_cvt_all


@pytest.fixture(scope="session")
def sem(tmp_path_factory):
    if not (shutil.which("gcc") or shutil.which("cc")):
        pytest.skip("no C compiler (gcc) on PATH to build csrc/core/sem/ alone")
    return isa_cvt_all.Sem(isa_cvt_all.build(str(tmp_path_factory.mktemp("sem"))))
