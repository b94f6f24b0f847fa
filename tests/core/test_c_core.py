"""The C core's own tests, built and run under AddressSanitizer and
UndefinedBehaviorSanitizer (also: `make -C csrc/tests`)."""
import glob
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from testpaths import REPO as ROOT  # noqa: E402
CORE = sorted(glob.glob(os.path.join(ROOT, "csrc", "core", "**", "*.c"), recursive=True))
TESTS = sorted(glob.glob(os.path.join(ROOT, "csrc", "tests", "test_*.c")))
FLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-O1",
         "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
         "-I", os.path.join(ROOT, "csrc", "core"), "-I", os.path.join(ROOT, "csrc", "include")]


@pytest.fixture(scope="module")
def core_objects(tmp_path_factory):
    """The core compiled once with FLAGS (each test program links these objects), its files
    compiled side by side."""
    out = tmp_path_factory.mktemp("core_objs")
    objs = [str(out / (os.path.relpath(c, ROOT).replace(os.sep, "_")[:-2] + ".o")) for c in CORE]

    def one(pair):
        src, obj = pair
        return subprocess.run(["gcc", *FLAGS, "-c", src, "-o", obj], capture_output=True, text=True)
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for (src, _), r in zip(zip(CORE, objs), pool.map(one, zip(CORE, objs))):
            assert r.returncode == 0, f"{src}: {r.stderr}"
    return objs


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("src", TESTS, ids=[os.path.basename(t) for t in TESTS])
def test_c_core_under_sanitizers(src, tmp_path, core_objects):
    exe = tmp_path / os.path.basename(src)[:-2]
    build = subprocess.run(["gcc", *FLAGS, "-o", str(exe), src, *core_objects, "-lm", "-pthread"],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="print_stacktrace=1")
    run = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def test_core_builds_clean_with_werror(tmp_path):
    """-Wall -Wextra -Werror, optimised, no sanitizers: the flags CI holds the core to."""
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc")
    for src in CORE:
        r = subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-c", src,
                            "-I", os.path.join(ROOT, "csrc", "core"), "-o", str(tmp_path / "x.o")],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{src}: {r.stderr}"
