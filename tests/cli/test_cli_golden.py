"""`ptxasync golden` over what a person points it at: a glob over tests/data/
(which holds other data beside the recorded sets), a family it does not know,
a case without an id."""
import glob
import json
import os

from ptxasync import golden
from ptxasync.cli import main

from testpaths import DATA  # noqa: E402


def _main(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_file_with_no_case_is_skipped_with_a_note(capsys):
    probe = os.path.join(DATA, "ptx_assembler_probe.jsonl.gz")
    assert probe in glob.glob(os.path.join(DATA, "*.jsonl.gz"))       # what README's glob takes in
    code, out, err = _main(["golden", "--json", probe, os.path.join(DATA, "mbarrier_semantics.jsonl.gz")], capsys)
    assert code == 0
    assert json.loads(out)["mbarrier_semantics"]["passed"] > 0
    assert err == f"ptxasync golden: note: skipped {probe}: holds no case (no JSON object with a 'family'): " \
                  "not a file of recorded results\n"
    # alone, it is not golden data at all: exit 2
    code, out, err = _main(["golden", probe], capsys)
    assert code == 2 and not out and "holds no case" in err and err.count("\n") == 1


def test_an_unknown_family_is_not_a_pass(tmp_path, capsys):
    p = tmp_path / "x.jsonl"
    p.write_text(json.dumps({"family": "tile_laod", "id": "x.0"}) + "\n")
    code, out, err = _main(["golden", str(p)], capsys)
    assert code == 2 and not out
    assert f"{p}:1: family 'tile_laod' is not one the runner knows (known: " in err and "tile_load" in err
    assert golden.main([str(p)]) == 2


def test_a_case_without_id_is_named_by_its_line(tmp_path, capsys):
    p = tmp_path / "x.jsonl"
    p.write_text("\n" + json.dumps({"family": "tile_load"}) + "\n")
    code, _, err = _main(["golden", str(p)], capsys)
    assert code == 2 and "None" not in err
    assert f"{p}:2: the case (it has no 'id') is not in the recorded format (missing key" in err
