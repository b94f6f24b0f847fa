"""tools/deps.py: the include graph among the C core's modules has no loop (DESIGN.md: one
direction of dependency), and the script finds a loop when there is one."""
import os
import subprocess
import sys

from testpaths import REPO as ROOT  # noqa: E402
DEPS = os.path.join(ROOT, "tools", "deps.py")


def run(*args):
    return subprocess.run([sys.executable, DEPS, *args], capture_output=True, text=True)


def test_the_core_has_no_loop():
    r = run("--root", os.path.join(ROOT, "csrc", "core"))
    assert r.returncode == 0, r.stdout
    assert " 0 loop(s)" in r.stdout
    # the graph is printed: the engine's queue sits below the checker, not beside it
    lines = dict(line.split(" -> ", 1) for line in r.stdout.splitlines() if " -> " in line)
    assert "check/watch" not in lines["engine/queue"] and "defer" not in lines["engine/queue"]
    assert "engine" in lines["check/watch"]


def test_a_loop_is_found_and_named(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.h").write_text('#include "sub/b.h"\n')
    (tmp_path / "a.c").write_text('#include "a.h"\n')
    (tmp_path / "sub" / "b.h").write_text("int b(void);\n")
    (tmp_path / "sub" / "b.c").write_text('#include "b.h"\n#include "../c.h"\n')
    (tmp_path / "c.h").write_text('#include "a.h"\n#include <stdio.h>\n')
    (tmp_path / "d.c").write_text('#include "c.h"\n')   # depends on the loop, is not in it
    r = run("--root", str(tmp_path))
    assert r.returncode == 1
    assert "loop: a <-> c <-> sub/b" in r.stdout
    assert "d -> c" in r.stdout


def test_no_loop_no_failure(tmp_path):
    (tmp_path / "a.h").write_text("int a(void);\n")
    (tmp_path / "b.c").write_text('#include "a.h"\n')
    r = run("--root", str(tmp_path))
    assert r.returncode == 0 and "0 loop(s)" in r.stdout


# Calls between the files of one folder (tools/deps.py --calls): no circle anywhere in the core.
# The race checker's files meet in check/attach.c (the one file that calls both the memory
# checks and the mbarrier state) and the PTX run loop's wake-up (pi_ready) is inline in
# exec/launch.h, so the launch, run loop, operations and collectives call one way only.
def test_no_circle_of_calls_inside_a_folder():
    r = run("--calls", "--quiet", "--root", os.path.join(ROOT, "csrc", "core"))
    assert r.returncode == 0 and " 0 loop(s)" in r.stdout, r.stdout + r.stderr


def test_a_circle_of_calls_is_found(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a.c").write_text("int b(void);\nint a(void) { return b(); }\n")
    (tmp_path / "x" / "b.c").write_text("int a(void);\nint b(void) { return a() + 1; }\n")
    (tmp_path / "x" / "c.c").write_text("int a(void);\nint c(void) { return a(); }\n")
    (tmp_path / "y.c").write_text("int a(void);\nint y(void) { return a(); }\n")   # another folder
    r = run("--calls", "--root", str(tmp_path))
    assert r.returncode == 1
    assert "loop: x/a <-> x/b" in r.stdout and "x/c" not in r.stdout.split("loop:")[1]
    r = run("--calls", "--root", str(tmp_path), "--allow", "x/b,x/a")
    assert r.returncode == 0 and "(known)" in r.stdout
