"""The README's Quick start commands are the ones CI runs, and the package
refuses to import from a source tree without its compiled core, saying what to do."""
import os
import re
import subprocess
import sys

from testpaths import REPO as ROOT  # noqa: E402


def _quick_start():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    block = re.search(r"## Quick start\s+```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]


def test_ci_runs_the_readme_quick_start():
    cmds = _quick_start()
    assert len(cmds) >= 2, cmds
    assert "tour" in cmds[0] and "pytest" in cmds[1]
    # pip falls back to a user install where site-packages is not writable, and its scripts
    # directory is often not on PATH: the commands name the interpreter, not console scripts
    for cmd in cmds[:2]:
        for step in cmd.split("&&"):
            assert step.split()[:2] == ["python3", "-m"], step
    ci = [line.strip() for line in open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8")]
    for cmd in cmds:
        assert cmd in ci, f"README command {cmd!r} is not run by .ci/run"


def test_source_tree_without_core_says_what_to_do(tmp_path):
    # a copy of the Python sources with no compiled _core next to them
    import shutil
    src = os.path.join(ROOT, "src", "ptxasync")
    dst = tmp_path / "ptxasync"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    r = subprocess.run([sys.executable, "-c", "import ptxasync"], cwd=tmp_path,
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError:"), r.stderr
    assert "pip install ." in last and "_core" in last


def test_readme_taste_runs():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    code = re.search(r"## A taste\s+```python\n(.*?)```", text, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
