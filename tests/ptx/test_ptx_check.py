"""ptxasync.ptx.check against ptxas: the public assembler probe (ptxas 13.0's verdict on 706
forms for sm_90 / sm_90a; ptxas 13.5 gives the same verdict on each, its messages differing in
wording on 8), and the same wrapper checked for its line numbers."""
import gzip
import json
import os

import pytest

from ptxasync import ptx

from ptx_forms import FORM_LINE, module

import testpaths  # noqa: E402
DATA = os.path.join(testpaths.DATA, "ptx_assembler_probe.jsonl.gz")


def probe_rows():
    with gzip.open(DATA, "rt") as fh:
        rows = [json.loads(line) for line in fh]
    assert rows[0]["n"] == len(rows) - 1
    return rows[1:]


@pytest.mark.parametrize("release", ptx.PTXAS_RELEASES)
def test_probe_agreement_is_total(release):
    rows = probe_rows()
    wrong = []
    for r in rows:
        diags = ptx.check(module(r["ptx"], r["target"], r["ptx_version"]), ptxas=release)
        accepted = not any(d.severity == "error" for d in diags)
        if accepted != r["assembles"]:
            wrong.append((r["target"], r["ptx"], [str(d) for d in diags], r["message"]))
    assert len(rows) == 706
    assert not wrong, wrong[:5]


def test_probe_rejections_name_the_line_ptxas_names():
    for r in probe_rows():
        if r["assembles"]:
            continue
        diags = [d for d in ptx.check(module(r["ptx"], r["target"], r["ptx_version"]), ptxas="13.0")
                 if d.severity == "error"]
        assert diags and diags[0].line == FORM_LINE, (r["ptx"], diags)
        assert f"line {FORM_LINE};" in r["message"]


def test_wrapper_alone_is_clean():
    assert ptx.check(module("ret;")) == []


@pytest.mark.parametrize("form,target,version,words", [
    ("st.bulk.weak.shared::cta [%r1], %r8, 0;", "sm_90a", "9.0", "st.bulk needs sm_100 or later; this module targets sm_90a"),
    ("cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4}], [%r2];",
     "sm_90a", "8.3", "needs PTX ISA version 8.6"),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4, %r5, %r6, %r7}], [%r2];",
     "sm_90a", "9.0", "sm_100a"),
    ("cp.async.cg.shared.global [%r1], [%rd2], 8;", "sm_90a", "9.0", "16"),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2], 2;", "sm_90a", "9.0", "0 or 1"),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4}], [%r2];",
     "sm_90a", "9.0", "more than one .load_mode"),
    ("cp.async.bulk.global.shared::cluster.mbarrier::complete_tx::bytes [%r1], [%rd2], %r8, [%r2];",
     "sm_90a", "9.0", "destination state space comes before the source"),
])
def test_rejections_say_the_rule(form, target, version, words):
    diags = ptx.check(module(form, target, version))
    assert any(d.severity == "error" and words in d.message for d in diags), diags


def test_header_rules():
    assert "needs PTX ISA version 8.0" in ptx.check(module("ret;", "sm_90a", "7.8"))[0].message
    assert "unsupported .version 9.1; ptxas 13.0 reads up to 9.0" in \
        ptx.check(module("ret;", "sm_90a", "9.1"), ptxas="13.0")[0].message
    assert "unsupported .version 9.6; ptxas 13.5 reads up to 9.5" in ptx.check(module("ret;", "sm_90a", "9.6"))[0].message
    assert ptx.check("ret;")[0].severity == "error"


def test_qualifiers_in_any_order():
    # ptxas takes these reordered (each assembled by ptxas 13.0 when written)
    for form in [
        "cp.async.bulk.mbarrier::complete_tx::bytes.shared::cluster.global [%r1], [%rd2], %r8, [%r2];",
        "cp.async.bulk.tensor.shared::cluster.2d.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4}], [%r2];",
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.tile [%r1], [%rd1, {%r3, %r4}], [%r2];",
    ]:
        assert ptx.check(module(form)) == [], form


def test_multicast_on_sm90_is_an_advisory_warning():
    form = ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
            "[%r1], [%rd2], %r8, [%r2], %rs1;")
    diags = ptx.check(module(form, "sm_90"))
    assert [d.severity for d in diags] == ["warning"]
    assert ptx.check(module(form, "sm_90a")) == []


def test_malformed_text_is_a_diagnostic():
    for text in ["", ".version", ".version 9.0\n.target sm_90a\n.entry k( {", "\x00\xff", "@",
                 module("cp.async.bulk [", "sm_90a"), module("add.u32 %r1, %r2", "sm_90a"),
                 "/* unterminated", module("mov.u32 %r99999999999999999999, 1;")]:
        diags = ptx.check(text)
        assert any(d.severity == "error" for d in diags), text


def test_check_takes_str_or_bytes():
    text = module("ret;")
    assert ptx.check(text) == ptx.check(text.encode())
    with pytest.raises(TypeError):
        ptx.check(5)


def test_a_valid_form_not_modelled_yet_is_a_warning_on_every_line_and_kernel_refuses_it():
    text = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{
.reg .f64 %fd<3>;
rsqrt.approx.ftz.f64 %fd1, %fd2;
rsqrt.approx.ftz.f64 %fd1, %fd2;
ret;
}
"""
    warns = [d for d in ptx.check(text) if "not modelled yet" in d.message]
    assert [d.line for d in warns] == [7, 8] and not any(d.severity == "error" for d in ptx.check(text))
    with pytest.raises(ptx.PtxSyntaxError, match="does not run 'rsqrt.approx.ftz.f64'"):
        ptx.Kernel(text)
