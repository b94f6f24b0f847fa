"""csrc/include/ptxasync.h is the C API a user needs and nothing else: it includes no header
of the project, and docs/example.c, built against it alone, runs."""
import glob
import os
import re
import shutil
import subprocess

import pytest

from testpaths import REPO as ROOT  # noqa: E402
HEADER = os.path.join(ROOT, "csrc", "include", "ptxasync.h")
CORE = sorted(glob.glob(os.path.join(ROOT, "csrc", "core", "**", "*.c"), recursive=True))
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def test_public_header_includes_only_system_headers():
    text = open(HEADER, encoding="utf-8").read()
    includes = re.findall(r'^\s*#\s*include\s+(\S+)', text, re.M)
    assert includes and all(i.startswith("<") for i in includes), includes


@needs_gcc
def test_public_header_compiles_alone(tmp_path):
    src = tmp_path / "alone.c"
    src.write_text('#include "ptxasync.h"\nint main(void) { pa_error e; e.code = PA_OK; return (int)e.code; }\n')
    r = subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I",
                        os.path.dirname(HEADER), str(src), "-o", str(tmp_path / "alone")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@needs_gcc
def test_example_builds_against_the_public_header_and_runs(tmp_path):
    # the core is compiled with its own include path; the example with csrc/include alone
    core = ["-std=c11", "-O0", "-I", os.path.join(ROOT, "csrc", "core")]
    r = subprocess.run(["gcc", *core, "-c", *CORE], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["gcc", "-std=c11", "-O0", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I",
                        os.path.dirname(HEADER), "-c", os.path.join(ROOT, "docs", "example.c"), "-o",
                        str(tmp_path / "example.o")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    exe = tmp_path / "example"
    objs = sorted(str(p) for p in tmp_path.glob("*.o"))
    r = subprocess.run(["gcc", *objs, "-o", str(exe), "-lm", "-pthread"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "box of 2048 bytes loaded, 0 element(s) differ" in run.stdout
    assert "misaligned load: refused (innermost start offset c0 * elemsize = 3 * 2 = 6 B" in run.stdout
