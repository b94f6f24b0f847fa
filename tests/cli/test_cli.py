"""The ptxasync command: subcommands, exit codes (0 ok, 1 check failed, 2 usage)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ptxasync as pa
from ptxasync.cli import main

from testpaths import DATA  # noqa: E402


def _run(*argv, cwd=None):
    return subprocess.run([sys.executable, "-m", "ptxasync", *argv], capture_output=True, text=True,
                          cwd=cwd)


def test_unknown_flag_and_no_command_are_usage_errors(tmp_path):
    r = _run("--frobnicate", cwd=tmp_path)
    assert r.returncode == 2 and "unrecognized arguments: --frobnicate" in r.stderr
    assert not os.listdir(tmp_path)                 # the tour did not run
    r = _run(cwd=tmp_path)
    assert r.returncode == 2 and "tour" in r.stderr
    r = _run("--help")
    assert r.returncode == 0 and all(c in r.stdout for c in ("tour", "layout", "explain", "golden"))


@pytest.mark.parametrize("cmd", ["tour", "layout", "explain", "golden", "banks", "reads"])
def test_every_subcommand_has_help(cmd, capsys):
    with pytest.raises(SystemExit) as e:
        main([cmd, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "exit status" in out and "example" in out


def test_tour_writes_figures_and_summary(tmp_path, capsys):
    assert main(["tour", "--out", str(tmp_path / "t"), "--svg"]) == 0
    files = sorted(os.listdir(tmp_path / "t"))
    assert files == ["elements.svg", "im2col.svg", "layout.svg", "layout_dst.svg", "provenance.svg",
                     "summary.txt"]
    summary = (tmp_path / "t" / "summary.txt").read_text()
    assert "equals tensor[16:24, 64:128]: True" in summary
    assert "(0, 8)" in (tmp_path / "t" / "layout.svg").read_text()


def test_layout_to_terminal_and_files(tmp_path, capsys):
    assert main(["layout", "--dtype", "f32", "--box", "8", "16", "--swizzle", "64B", "--dst", "0x100"]) == 0
    out = capsys.readouterr().out
    assert "0x00100 | r0 c8  r0 c12 r0 c0  r0 c4 " in out   # line 2 of the 64B pattern
    assert "256 B (2 lines) into a 512-byte swizzle repeat" in out
    svg = tmp_path / "l.svg"
    assert main(["layout", "--box", "8", "64", "--compare", "-o", str(svg)]) == 0
    assert svg.read_text().count("(7, 56)") == 2
    assert main(["layout", "--box", "8", "72", "--swizzle", "128B"]) == 2      # 144 B > span
    assert "exceeds the 128 B swizzle span" in capsys.readouterr().err
    assert main(["layout", "-o", str(tmp_path / "x.txt")]) == 2


def test_explain_valid_map_flags_json_and_hex(capsys):
    args = ["--dtype", "bf16", "--global-dim", "256", "128", "--global-strides", "512",
            "--box-dim", "64", "8", "--swizzle", "128B"]
    assert main(["explain", *args]) == 0
    out = capsys.readouterr().out
    assert "CU_TENSOR_MAP_SWIZZLE_128B" in out and "credits 1024 B" in out and "rules broken: none" in out
    j = json.dumps({"tensorDataType": "bf16", "globalDim": [256, 128], "globalStrides": [512],
                    "boxDim": [64, 8], "swizzle": "128B"})
    assert main(["explain", "--json", j]) == 0
    assert "credits 1024 B" in capsys.readouterr().out
    tm = pa.TensorMap.tiled("bf16", 0, [256, 128], [512], [64, 8], swizzle="128B")
    assert main(["explain", "--hex", bytes(tm).hex()]) == 0
    assert "boxDim" in capsys.readouterr().out


def test_explain_lists_every_broken_rule(capsys):
    rc = main(["explain", "--dtype", "u8", "--global-dim", "100", "7", "--global-strides", "100",
               "--box-dim", "300", "8", "--swizzle", "64B", "--element-strides", "9", "1"])
    assert rc == 1
    out = capsys.readouterr().out
    assert "breaks 4 rules" in out
    for rule in ("globalStrides[0] = 100 is not a multiple of 16", "elementStrides[0] = 9 is outside 1..8",
                 "boxDim[0] = 300 is outside 1..256", "exceeds the 64 B swizzle span"):
        assert rule in out


def test_explain_bad_input_is_usage_error(capsys):
    assert main(["explain", "--hex", "zz"]) == 2
    assert main(["explain", "--hex", "00" * 12]) == 2
    assert main(["explain", "--json", "{nope"]) == 2
    assert main(["explain", "--json", '{"dtype": "f32", "frob": 1}']) == 2
    assert main(["explain", "--dtype", "f32"]) == 2
    assert "missing parameter(s): global_dim, box_dim" in capsys.readouterr().err


def test_golden_exit_codes(tmp_path, capsys):
    assert main(["golden", "--json", os.path.join(DATA, "encode_errors.jsonl.gz")]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert counts and all(v["failed"] == 0 for v in counts.values())
    assert main(["golden", str(tmp_path / "missing.jsonl")]) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["golden", str(bad)]) == 2


def test_console_script_is_declared():
    from importlib.metadata import entry_points
    eps = [e for e in entry_points(group="console_scripts") if e.name == "ptxasync"]
    assert eps and eps[0].value == "ptxasync.cli:main"


def test_golden_progress_bar_draws_files_and_cases(monkeypatch):
    import io
    from ptxasync.cli.golden import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    results = {"tile_load": {"passed": 7, "failed": 1, "unsupported": 0}}
    bar = Progress(4, results, True)
    bar.start_file("tile_load.jsonl.gz")
    bar.end_file()
    bar.draw()
    bar.close()
    out = err.getvalue()
    assert "[" + "#" * 7 + "." * 23 + "] file 2/4 tile_load.jsonl.gz" in out and "8 cases" in out
    on, off = Progress(1, {}, True), Progress(1, {}, False)
    on.close()
    off.close()
    assert on.enabled and not off.enabled


def test_explain_hex_checks_the_decoded_fields(capsys):
    tm = pa.TensorMap.tiled("bf16", 0x10000, [256, 128], [512], [64, 8], swizzle="128B")
    edited = tm.copy().replace("swizzle_mode", 1)        # 128-byte rows under a 32B swizzle
    assert main(["explain", "--hex", bytes(edited).hex()]) == 1
    assert "boxDim[0] * elementSize = 128 B exceeds the 32 B swizzle span" in capsys.readouterr().out
    raw = bytearray(bytes(tm))
    raw[100] = 1                                         # a bit no field holds
    assert main(["explain", "--hex", raw.hex()]) == 0
    assert "set bits the driver leaves clear (byte 100: 0x01 here, 0x00 from the driver)" in capsys.readouterr().out


def test_tour_without_matplotlib_writes_svg(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["tour", "--out", str(tmp_path)]) == 0
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".svg"] * 5 + [".txt"]
    assert "pip install matplotlib for PNG" in (tmp_path / "summary.txt").read_text()
    assert main(["layout", "-o", str(tmp_path / "x.png")]) == 2
    assert "pip install matplotlib" in capsys.readouterr().err


def _banks_rows(out):
    """{swizzle: (wavefronts, phases, conflicts)} from the banks table (None for an invalid map)."""
    rows = {}
    for line in out.splitlines()[2:]:
        f = line.split()
        rows[f[0]] = None if f[1] == "-" else tuple(int(x) for x in f[1:4])
    return rows


def test_banks_column_of_128_byte_rows(capsys):
    # docs/consumers.md section 5: a column of 128-byte rows read with 16-byte loads, 32 vs 4 wavefronts
    assert main(["banks", "--dtype", "bf16", "--box", "32", "64", "--pattern", "column"]) == 0
    out = capsys.readouterr().out
    rows = _banks_rows(out)
    assert rows["NONE"] == (32, 4, 28) and rows["128B"] == (4, 4, 0)
    assert rows["32B"] is None and rows["64B"] is None
    assert "128 B exceeds the 32 B swizzle span" in out
    # a box narrow enough for every swizzle: each row matches the consumers API on the same map
    assert main(["banks", "--box", "32", "16", "--pattern", "column", "--swizzle", "NONE,32B"]) == 0
    rows = _banks_rows(capsys.readouterr().out)
    assert set(rows) == {"NONE", "32B"}
    for sw, got in rows.items():
        tm = pa.TensorMap.tiled("bf16", 0, [16, 32], [32], [16, 32], swizzle=sw)
        rep = pa.bank_conflicts(pa.consumers.box_access_addresses(tm, 0, "column", 16), 16)
        assert got == (rep.wavefronts, rep.phases, rep.conflicts)


def test_banks_row_ldmatrix_and_store(capsys):
    assert main(["banks", "--pattern", "row", "--swizzle", "128B"]) == 0
    assert _banks_rows(capsys.readouterr().out) == {"128B": (4, 4, 0)}
    assert main(["banks", "--box", "16", "64", "--pattern", "ldmatrix"]) == 0
    rows = _banks_rows(capsys.readouterr().out)
    assert rows["NONE"] == (32, 4, 28) and rows["128B"] == (4, 4, 0)
    assert main(["banks", "--dtype", "f32", "--box", "32", "32", "--width", "8", "--op", "st",
                 "--swizzle", "NONE"]) == 0
    assert _banks_rows(capsys.readouterr().out) == {"NONE": (32, 2, 30)}     # 8-byte st: half-warps


def test_banks_usage_errors(capsys):
    assert main(["banks", "--box", "32", "200", "--swizzle", "128B"]) == 2       # no valid map
    assert "exceeds the 128 B swizzle span" in capsys.readouterr().err
    assert main(["banks", "--box", "8", "64"]) == 2                              # column of 32 rows
    assert "past the 8x64 box" in capsys.readouterr().err
    assert main(["banks", "--swizzle", "16B"]) == 2
    assert main(["banks", "--dtype", "f32", "--pattern", "ldmatrix"]) == 2       # 2-byte elements only
    with pytest.raises(SystemExit) as e:
        main(["banks", "--width", "3"])
    assert e.value.code == 2


def test_reads_matching_and_mismatched_descriptor(tmp_path, capsys):
    # a 128B tile at 0x1180 (line bits [7, 10) = 3): row n's k-chunk q sits at slot q ^ ((n + 3) & 7)
    assert main(["reads", "--box", "64", "64", "--dst", "0x1180", "--lines", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("producer: a TMA tile load of a 64 x 64 (NumPy order) float16 box, swizzle 128B "
                      "(CuTe Swizzle<3,4,3>), at dst 0x1180")
    assert out[2] == "1024 elements read from 128 chunks; every one is the intended element"
    row = next(ln for ln in out if ln.startswith("0x01200"))
    assert row.split()[1:] == [".", ".", ".", ".", "n1", "k0-7", "n1", "k8-15", ".", "."]
    out_png = tmp_path / "r.svg"
    assert main(["reads", "--box", "64", "64", "--dst", "0x1180", "--desc-swizzle", "64B", "--sbo", "512",
                 "-o", str(out_png)]) == 1
    out = capsys.readouterr().out
    assert "1008 not the intended ones" in out
    assert "n1 k0-7" in out_png.read_text()
    # the cause and a descriptor that works, as check_wgmma computes them
    assert "likely cause: wrong swizzle mode" in out and "likely cause: wrong SBO" in out
    assert "use swizzle 128B, start 0x1180, LBO 16, SBO 1024" in out


def test_reads_ldmatrix_rows_and_bad_flags(capsys):
    assert main(["reads", "--box", "16", "64", "--consumer", "ldmatrix"]) == 0
    assert main(["reads", "--box", "16", "64", "--consumer", "ldmatrix", "--rows", "plain"]) == 1
    out = capsys.readouterr().out
    assert "224 not the intended ones, in 28 chunks" in out       # only lines whose XOR is 0 (rows 0, 8) agree
    assert main(["reads", "--box", "64", "64", "--swizzle", "NONE"]) == 2
    assert "no K-major descriptor reads this tile" in capsys.readouterr().err
    assert main(["reads", "--box", "16", "32", "--dtype", "u32", "--swizzle", "128B"]) == 2


def _main(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_layout_applies_the_models_rules(capsys):
    """The picture is of a load the model executes: a destination the load refuses
    (PTX 5.5.3.1, 16-byte aligned box address) is the model's error, exit 2."""
    code, out, err = _main(["layout", "--dst", "0x481"], capsys)
    assert code == 2 and not out
    assert "the model refuses this load at --dst 0x481" in err and "not 16-byte aligned" in err
    with pytest.raises(pa.MisalignedAddress, match="0x481 is not 16-byte aligned"):
        m = pa.Machine()
        g = m.alloc(2048)
        tm = pa.TensorMap.tiled("bf16", g.address, [64, 8], [128], [64, 8], swizzle="128B")
        m.cp_async_bulk_tensor_load(tm, (0, 0), 0x481, m.mbarrier(8).init(1))
    assert _main(["layout", "--dst", "0x480"], capsys)[0] == 0
    # past the end of shared memory: the model's IllegalAddress, said the same way
    code, _, err = _main(["layout", "--dst", hex(pa.SMEM_MAX - 256)], capsys)
    assert code == 2 and "runs past the end of shared memory" in err


def test_output_into_a_missing_folder_is_a_usage_error(tmp_path, capsys):
    target = tmp_path / "no" / "such" / "x.svg"
    code, _, err = _main(["layout", "-o", str(target)], capsys)
    assert code == 2 and "does not exist" in err and "Traceback" not in err
    assert not (tmp_path / "no").exists()


def test_explain_json_names_a_missing_file(tmp_path, capsys):
    code, _, err = _main(["explain", "--json", str(tmp_path / "missing.json")], capsys)
    assert code == 2 and "no such file" in err and "not JSON" not in err
    code, _, err = _main(["explain", "--json", "{not json"], capsys)
    assert code == 2 and "not JSON" in err


def test_explain_lists_each_rule_once(capsys):
    code, out, _ = _main(["explain", "--hex", "00" * 128], capsys)
    assert code == 1
    listed = [line for line in out.splitlines() if line.startswith("  - ")]
    assert listed and len(listed) == len(set(listed)), listed


def test_bad_dtype_is_said_once_in_the_help_spellings(capsys):
    code, out, err = _main(["banks", "--dtype", "bf17"], capsys)
    assert code == 2 and not out
    assert err.count("bf17") == 1 and "bf16" in err and "f32.ftz" in err
    assert "BFLOAT16" not in err                    # not the enum's member names
    code, _, err = _main(["layout", "--dtype", "bf17"], capsys)
    assert code == 2 and "valid: u8 u16" in err


def test_a_box_wider_than_the_swizzle_suggests_what_fits(capsys):
    code, _, err = _main(["layout", "--box", "8", "128"], capsys)
    assert code == 2 and "exceeds the 128 B swizzle span" in err
    assert "--swizzle NONE" in err and "--box 8 64" in err
    code, _, err = _main(["layout", "--dtype", "f32", "--box", "4", "16", "--swizzle", "32B"], capsys)
    assert code == 2 and "--box 4 8" in err
    # the suggestions work
    assert _main(["layout", "--box", "8", "128", "--swizzle", "NONE"], capsys)[0] == 0
    assert _main(["layout", "--box", "8", "64"], capsys)[0] == 0


def test_tour_names_its_folder_once(tmp_path, capsys):
    from ptxasync.cli.tour import tour
    lines = []
    tour(str(tmp_path / "t") + "/", svg=True, echo=lines.append)
    last = lines[-1]
    assert f"to {tmp_path / 't'}/:" in last and "//" not in last


def test_the_package_docstring_names_every_subcommand():
    from ptxasync.cli import COMMANDS
    doc = pa.__doc__
    for mod in COMMANDS:
        assert mod.NAME in doc.split("the ptxasync command")[1].split("\n\n")[0], mod.NAME


def test_ptx_check_exit_status(tmp_path):
    import subprocess
    import sys
    from ptx_forms import module
    good = tmp_path / "good.ptx"
    good.write_text(module("cp.async.bulk.commit_group;"))
    bad = tmp_path / "bad.ptx"
    bad.write_text(module("st.bulk.weak.shared::cta [%r1], %r8, 0;"))
    run = lambda *a: subprocess.run([sys.executable, "-m", "ptxasync", "ptx", *a], capture_output=True, text=True)
    r = run("check", str(good))
    assert r.returncode == 0 and r.stdout == f"{good}: accepted (as ptxas 13.5 -arch=sm_90a would)\n"
    r = run("check", str(bad))
    assert r.returncode == 1
    assert f"{bad}:21:2: error: st.bulk needs sm_100 or later; this module targets sm_90a" in r.stderr
    assert r.stdout == f"{bad}: rejected (1 error) (as ptxas 13.5 -arch=sm_90a would)\n"
    # a .version that ptxas 13.5 reads and 13.0 does not
    new = tmp_path / "new.ptx"
    new.write_text(module("cp.async.bulk.commit_group;", version="9.4"))
    assert run("check", str(new)).returncode == 0
    r = run("check", "--ptxas", "13.0", str(new))
    assert r.returncode == 1 and "unsupported .version 9.4; ptxas 13.0 reads up to 9.0" in r.stderr
    assert r.stdout.endswith("(as ptxas 13.0 -arch=sm_90a would)\n")
    assert run("check", "--ptxas", "12.8", str(new)).returncode == 2
    assert run("check", str(tmp_path / "missing.ptx")).returncode == 2
    r = run("format", str(good))
    assert r.returncode == 0 and "cp.async.bulk.commit_group;" in r.stdout
