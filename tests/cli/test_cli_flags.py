"""Flags a person gets wrong are one line on stderr and exit 2, and the text
pictures show what their flags ask for (and say what they leave out)."""
import pytest

from ptxasync.cli import main


def _main(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv, said", [
    (["layout", "--dst", "-16"], "--dst -16: a shared address is in [0, 2^32), not negative"),
    (["layout", "--dst", "0xFFFFFFFF0"], "--dst 0xffffffff0: a shared address is in [0, 2^32)"),
    (["layout", "--lines", "0"], "--lines 0: show between 1 and 2048 lines"),
    (["layout", "--lines", "-3"], "--lines -3: show between 1 and 2048 lines"),
    (["banks", "--dst", "-16"], "--dst -16: a shared address"),
    (["banks", "--dst", "0x8"], "the model refuses this load at --dst 0x8: shared-memory box address 0x8 is "
                                "not 16-byte aligned"),
    (["reads", "--dst", "-16"], "--dst -16: a shared address"),
    (["reads", "--dst", "0x8"], "the model refuses this load at --dst 0x8"),
    (["reads", "--lines", "0"], "--lines 0: show between 1 and 2048 lines"),
])
def test_bad_flag_is_one_line_and_exit_2(argv, said, capsys):
    code, out, err = _main(argv, capsys)
    assert code == 2 and not out
    assert err.count("\n") == 1 and said in err, err


def test_layout_text_follows_elements_bytes_and_compare(capsys):
    code, out, _ = _main(["layout", "--box", "8", "64", "--elements", "--bytes", "16", "32", "--compare",
                          "--lines", "2"], capsys)
    assert code == 0
    # unswizzled first, then the 128B swizzle: line 1's bytes [16, 32) hold row 1, columns 0..7
    assert out.index("unswizzled") < out.index("swizzle 128B")
    grids = [ln for ln in out.splitlines() if ln.startswith("0x00080 |")]
    assert grids[0].split()[2:] == [f"1,{c}" for c in range(8, 16)]
    assert grids[1].split()[2:] == [f"1,{c}" for c in range(0, 8)]
    assert "note: showing bytes 16..31 of each 128-byte line" in out
    assert "note: showing lines 0..1 of 8" in out


def test_layout_text_says_when_lines_are_left_out(capsys):
    code, out, _ = _main(["layout", "--box", "64", "64"], capsys)
    assert code == 0
    assert sum(ln.startswith("0x") for ln in out.splitlines()) == 40
    assert "note: showing lines 0..39 of 64" in out
    code, out, _ = _main(["layout", "--box", "64", "64", "--lines", "64"], capsys)
    assert "showing lines" not in out


def test_reads_names_the_producer_and_the_fix(capsys):
    code, out, _ = _main(["reads", "--box", "64", "64", "--dst", "0x1180", "--desc-swizzle", "64B",
                          "--lines", "1"], capsys)
    assert code == 1
    assert out.startswith("producer: a TMA tile load of a 64 x 64 (NumPy order) float16 box, swizzle 128B")
    assert "likely cause: wrong swizzle mode" in out
    assert "use swizzle 128B, start 0x1180" in out
    assert "lines 0..0 of" in out and "0..-1" not in out


@pytest.mark.parametrize("argv, said", [
    (["explain", "--im2col", "--dtype", "bf16", "--global-dim", "64", "8", "8", "1", "--box-dim", "64", "8"],
     "--box-dim: an im2col map has no box dimensions"),
    (["explain", "--dtype", "bf16", "--global-dim", "64", "--box-dim", "8", "--channels-per-pixel", "8"],
     "--channels-per-pixel: parameters of an im2col map (add --im2col"),
    (["explain", "--dtype", "bf17", "--global-dim", "64", "--box-dim", "8"], "--dtype: 'bf17' is not a valid data type"),
    (["explain", "--dtype", "f32", "--global-dim", "64", "--box-dim", "8", "--swizzle", "129B"],
     "--swizzle: '129B' is not a valid Swizzle"),
    (["explain", "--json", '{"dtype": "bf17", "global_dim": [64], "box_dim": [8]}'],
     "--json 'dtype': 'bf17' is not a valid data type"),
    (["explain", "--json", '{"dtype": "bf16", "global_dim": [64], "box_dim": [8]}', "--swizzle", "64B"],
     "--json gives the whole map: drop --swizzle (or put them in the JSON)"),
    (["explain", "--hex", "00" * 128, "--dtype", "f32"], "--hex gives the whole map: drop --dtype"),
    (["explain", "--dtype", "bf16", "--global-dim", "64", "8", "--box-dim", "8"], "boxDim has 1 entries"),
    (["explain", "--dtype", "bf16", "--global-dim", "64", "--box-dim", "8", "--dst", "-16"], "--dst -16"),
])
def test_explain_usage_errors_are_not_driver_rules(argv, said, capsys):
    code, out, err = _main(argv, capsys)
    assert code == 2 and not out and "rule" not in err
    assert err.count("\n") == 1 and said in err, err


def test_explain_hex_says_which_bits_differ_and_how(capsys):
    """The bytes a map prints (all 128 of them) read back as the same map; a copy
    cut short says the driver's bits are missing, not that extra bits are set."""
    import ptxasync as pa
    tm = pa.TensorMap.tiled("bf16", 0, [256, 128], [512], [64, 8], swizzle="128B")
    shown = [ln.split()[-1] for ln in repr(tm).splitlines()[-4:]]
    assert [ln.split()[-2] for ln in repr(tm).splitlines()[-4:]] == ["+0", "+32", "+64", "+96"]
    assert bytes.fromhex("".join(shown)) == bytes(tm)
    code, out, _ = _main(["explain", "--hex", "".join(shown)], capsys)
    assert code == 0 and "note:" not in out
    code, out, _ = _main(["explain", "--hex", bytes(tm)[:64].hex() + "00" * 64], capsys)
    assert code == 0
    assert "clear bits the driver sets (byte 65: 0x00 here, 0x04 from the driver" in out
    assert "set bits" not in out


def test_tensormap_html_shows_all_128_bytes():
    import ptxasync as pa
    tm = pa.TensorMap.tiled("bf16", 0, [256, 128], [512], [64, 8], swizzle="128B")
    h = tm._repr_html_()
    for o in range(0, 128, 32):
        assert bytes(tm)[o:o + 32].hex() in h


def test_tour_without_figures_and_into_a_file(tmp_path, capsys):
    out = tmp_path / "t"
    code, text, _ = _main(["tour", "--no-figures", "--out", str(out)], capsys)
    assert code == 0 and sorted(p.name for p in out.iterdir()) == ["summary.txt"]
    assert "wrote 1 file to" in text
    # every coordinate the tour names says its order
    assert "coordinates (64, 16) in driver order (c0 = column 64, c1 = row 16" in text
    assert "driver coordinates (224, 124) (NumPy order: rows 124..131, columns 224..287)" in text
    f = tmp_path / "a-file"
    f.write_text("")
    code, text, err = _main(["tour", "--out", str(f)], capsys)
    assert code == 2 and not text and err.count("\n") == 1 and "is not a folder" in err


def test_ptx_check_arch_overrides_the_target(tmp_path, capsys):
    from ptx_forms import module
    bad = tmp_path / "bulk.ptx"
    bad.write_text(module("st.bulk.weak.shared::cta [%r1], 64, 0;"))       # sm_100 and later
    code, _, err = _main(["ptx", "check", str(bad)], capsys)
    assert code == 1 and "this module targets sm_90a" in err
    code, _, err = _main(["ptx", "check", "--arch", "sm_100a", str(bad)], capsys)
    assert code == 0 and not err
    code, _, err = _main(["ptx", "check", str(bad), "--arch", "sm90"], capsys)
    assert code == 2 and err.count("\n") == 1 and "'sm90' is not a target name" in err
