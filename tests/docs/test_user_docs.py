"""What a newcomer copies from README.md and docs/ works as written: the command
line examples, the install lines (in any shell), the code examples; and the
user documentation leaves benchmark figures to docs/performance.md."""
import contextlib
import glob
import io
import os
import re
import shlex

import pytest

from ptxasync.cli import main

from testpaths import REPO  # noqa: E402


def _read(*path):
    return open(os.path.join(REPO, *path), encoding="utf-8").read()


def _command_lines():
    block = re.search(r"## Command line\s.*?```sh\n(.*?)```", _read("README.md"), re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]


# the README's own words for each example: exit 1 is the point of the explain and reads examples
EXPECTED = {"layout": 0, "explain": 1, "golden": 0, "banks": 0, "reads": 1}


@pytest.mark.parametrize("cmd", [c for c in _command_lines() if shlex.split(c)[1] in EXPECTED
                                 and "map.json" not in c])
def test_readme_command_line_examples_run(cmd, tmp_path, monkeypatch, capsys):
    argv = []
    for word in shlex.split(cmd)[1:]:
        argv += sorted(glob.glob(os.path.join(REPO, word))) if "*" in word else [word]
    monkeypatch.chdir(tmp_path)          # -o layout.png lands here
    if argv[0] == "golden":
        argv.append("--no-progress")
    code = main(argv)
    err = capsys.readouterr().err
    assert code == EXPECTED[argv[0]], err
    assert all(line.startswith("ptxasync golden: note: skipped") for line in err.splitlines()), err


def test_install_lines_quote_their_extras_and_name_the_repository():
    """`pip install x[plot]` unquoted is a glob in zsh; ptxasync is installed from the repository."""
    for path in ["README.md"] + sorted(glob.glob(os.path.join(REPO, "docs", "*.md"))):
        text = _read(path)
        for line in text.splitlines():
            if "pip install" in line and "[" in line:
                assert re.search(r"""pip install ["']\S*\[""", line), (path, line)
        assert "ptxasync[" not in text, path


def test_user_docs_leave_benchmark_figures_to_performance():
    for name in ("ptx.md", "hazards.md"):
        text = _read("docs", name)
        for words in ("measured on the shared", "load average", "before, **", "callgrind"):
            assert words not in text, (name, words)
    perf = _read("docs", "performance.md")
    assert "## The PTX front end and interpreter" in perf and "## The checkers' cost" in perf


def test_trace_ptx_example_runs():
    text = _read("docs", "ptx.md")
    start = text.index("## A Machine's trace as PTX")
    code = re.search(r"```python\n(.*?)```", text[start:], re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/ptx.md", "exec"), {})
    assert ".visible .entry trace(" in out.getvalue()
    assert "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes" in out.getvalue()
