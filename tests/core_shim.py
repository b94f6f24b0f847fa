"""A test's C shim built with the whole C core into a shared library (ctypes), for tests that
drive core paths the binding does not reach (a C machine without the checker's hooks)."""
import ctypes
import glob
import os
import shutil
import subprocess

import pytest

from testpaths import REPO


def build_shim(tmp_path_factory, shim_c, name):
    """gcc -O1 shim_c + csrc/core/**/*.c -> lib<name>.so, loaded; skips where gcc is absent."""
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    so = tmp_path_factory.mktemp(name) / f"lib{name}.so"
    core = sorted(glob.glob(os.path.join(REPO, "csrc", "core", "**", "*.c"), recursive=True))
    r = subprocess.run(["gcc", "-std=c11", "-O1", "-shared", "-fPIC", "-I", os.path.join(REPO, "csrc", "core"),
                        "-I", os.path.join(REPO, "csrc", "include"), shim_c, *core, "-o", str(so), "-lm",
                        "-pthread"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return ctypes.CDLL(str(so))
