"""The golden runner on files that are not in the recorded format: a clear
message naming the file and line, exit status 2 (not 1, "a case failed"),
and never a pass."""
import gzip
import json
import pathlib
import subprocess
import sys

import pytest

from ptxasync import golden

import testpaths  # noqa: E402
DATA = pathlib.Path(testpaths.DATA)


def _first_case(family="tile_load"):
    with gzip.open(DATA / f"{family}.jsonl.gz", "rt") as f:
        for line in f:
            case = json.loads(line)
            if case.get("family") == family and case.get("encode_result", "0") in (0, "0") \
                    and not case.get("error") and case.get("loads"):
                return case
    raise AssertionError("no case")


def _write(tmp_path, lines, name="bad.jsonl"):
    p = tmp_path / name
    text = "".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines)
    if name.endswith(".gz"):
        p.write_bytes(gzip.compress(text.encode()))
    else:
        p.write_text(text)
    return p


def _run(capsys, path):
    rc = golden.main([str(path)])
    err = capsys.readouterr().err
    return rc, err


def _edited(**changes):
    case = _first_case()
    for k, v in changes.items():
        if v is KeyError:
            del case[k]
        else:
            case[k] = v
    return case


BAD_FILES = {
    "empty": ([], "holds no case"),
    "blank-lines": (["", "   "], "holds no case"),
    "header-only": ([{"format": "golden", "version": 1}], "holds no case"),
    "a-list": ([[1, 2, 3]], ":1: a line must be a JSON object, not list"),
    "a-number": (["3"], ":1: a line must be a JSON object, not int"),
    "a-string": (['"tile_load"'], ":1: a line must be a JSON object, not str"),
    "invalid-json": (["{\"family\": \"tile_load\",", ], ":1: invalid JSON"),
    "second-line-invalid": ([{"format": "golden"}, "{nope"], ":2: invalid JSON"),
    "family-not-a-string": ([{"family": ["tile_load"]}], ":1: a case is a JSON object"),
    "missing-params": ([_edited(params=KeyError)], ":1: case 'tile_load.pub.0000' is not in the recorded format (missing key 'params')"),
    "missing-loads": ([_edited(loads=KeyError)], "missing key 'loads'"),
    "params-wrong-type": ([_edited(params="x")], "TypeError"),
    "loads-wrong-type": ([_edited(loads=5)], "TypeError"),
    "address-not-hex": ([_edited(global_address="zz")], "ValueError"),
    "huge-address": ([_edited(global_address="0x" + "f" * 30)], "OverflowError"),
    "huge-window-offset": ([_edited(global_window_offset=-2**70)], "OverflowError"),
    "windows-2-33-apart": ([_edited(global_window2_hex="00", global_address2=hex(0x7fc9e4810000 + 2**33))],
                           "more than the 67108864-byte limit"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_golden_file_is_exit_2_naming_file_and_line(name, tmp_path, capsys):
    lines, msg = BAD_FILES[name]
    path = _write(tmp_path, lines)
    rc, err = _run(capsys, path)
    assert rc == 2, err
    assert str(path) in err and msg in err, err


def test_truncated_gzip_is_bad_input(tmp_path, capsys):
    raw = (DATA / "mbarrier_semantics.jsonl.gz").read_bytes()
    p = tmp_path / "cut.jsonl.gz"
    p.write_bytes(raw[: len(raw) // 2])
    rc, err = _run(capsys, p)
    assert rc == 2 and str(p) in err and "cannot be read" in err, err
    p.write_bytes(b"not gzip at all")
    rc, err = _run(capsys, p)
    assert rc == 2 and "cannot be read" in err, err


def test_directory_and_missing_path_are_bad_input(tmp_path, capsys):
    rc, err = _run(capsys, tmp_path)
    assert rc == 2 and "is a directory" in err
    rc, err = _run(capsys, tmp_path / "nope.jsonl.gz")
    assert rc == 2 and "no such file" in err


def test_not_utf8_is_bad_input(tmp_path, capsys):
    p = tmp_path / "bin.jsonl"
    p.write_bytes(b'{"family": "\xff\xfe"}\n')
    rc, err = _run(capsys, p)
    assert rc == 2 and str(p) in err


def test_good_file_still_passes_and_a_failure_is_still_exit_1(tmp_path, capsys):
    case = _first_case()
    assert golden.main([str(_write(tmp_path, [case], "good.jsonl.gz"))]) == 0
    load = case["loads"][0]
    want = bytearray.fromhex(load["smem_hex"])
    want[0] ^= 0xFF
    load["smem_hex"] = want.hex()
    assert golden.main([str(_write(tmp_path, [case], "wrong.jsonl"))]) == 1


def test_command_line_exit_status_2(tmp_path):
    p = _write(tmp_path, ["[]"])
    r = subprocess.run([sys.executable, "-m", "ptxasync.golden", str(p)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and f"{p}:1:" in r.stderr and "Traceback" not in r.stderr, r.stderr
