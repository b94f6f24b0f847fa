"""The printer: parse -> print -> parse is the identity (the second print equals the first), and
ptxas assembles what it prints."""
import random

import pytest
from hypothesis import given, settings, strategies as st

from ptxasync import ptx

import ptx_forms as pf

FORMS = pf.seed_forms()


@settings(max_examples=200, deadline=None, derandomize=True)
@given(form=st.sampled_from(FORMS), seed=st.integers(0, 2**32 - 1), mutate=st.booleans())
def test_print_parse_print_is_identity(form, seed, mutate):
    text = pf.module(pf.instance(form, random.Random(seed), mutate=mutate))
    once = ptx.format(text)
    assert ptx.format(once) == once
    assert [d.severity for d in ptx.check(once)] == [d.severity for d in ptx.check(text)]


@pytest.mark.skipif(pf.ptxas_path() is None, reason="ptxas is not installed")
def test_ptxas_assembles_the_printed_text():
    rnd = random.Random(5)
    for form in FORMS[::4]:
        text = pf.module(pf.instance(form, rnd), "sm_100a", "9.0")
        if not pf.ptxas_accepts(text, "sm_100a")[0]:
            continue
        ok, msg = pf.ptxas_accepts(ptx.format(text), "sm_100a")
        assert ok, msg


def test_format_rejects_what_does_not_parse():
    with pytest.raises(ptx.PtxSyntaxError):
        ptx.format(".version 9.0\n.target sm_90a\n.entry k() { add.u32 %r1 }")
