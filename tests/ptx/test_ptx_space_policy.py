"""isspacep, getctarank and createpolicy against an H200 (tools/device/record_space_policy.py;
tests/data/isa/isspacep.json, createpolicy.json), and the hints that leave the bytes alone."""
import importlib.util
import json
import os
import struct

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx
from testpaths import DATA, REPO

spec = importlib.util.spec_from_file_location("record_space_policy",
                                              os.path.join(REPO, "tools", "device", "record_space_policy.py"))
rsp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rsp)


def test_isspacep_and_getctarank_are_the_h200s():
    rec = json.load(open(os.path.join(DATA, "isa", "isspacep.json")))["space"]
    text, k = rsp.space_kernel()
    m = pa.Machine(ctas=2)
    out = np.zeros(2 * k, np.uint64)
    g = m.register(np.zeros(1 << 12, np.uint8))
    ptx.Kernel(text).launch(m, block=(32, 1, 1), cluster=(2, 1, 1), grid=(2, 1, 1),
                            params={"pg": g, "pout": m.register(out)})
    got = out.reshape(2, k)
    want = np.array(rec["values"], np.uint64)
    # the first 8 words are the addresses themselves (the GPU's and the model's differ); then
    # isspacep of each address in each space, then getctarank of the shared ones
    assert got[:, 8:].tolist() == want[:, 8:].tolist()


def fraction_bits(f):
    if f is None:
        return None
    return f if f.startswith("0f") else "0f%08X" % struct.unpack("<I", struct.pack("<f", float(f)))[0]


# The one recorded fraction the rule (the fraction as an f16, in sixteenths rounded up, less one)
# misses: 0.437744140625 (7 + 1/256 sixteenths) gives 6 where the rule says 7.
KNOWN = {"0f3EE02000"}


def test_createpolicy_fractional_values_are_the_h200s():
    forms = [f for f in json.load(open(os.path.join(DATA, "isa", "createpolicy.json")))["forms"]
             if not f.get("range") and fraction_bits(f.get("f")) not in KNOWN]
    assert len(forms) >= 600
    body = "\n".join(f"    {f['ptx']}\n    st.global.u64 [%rd11+{8 * i}], %rd1;" for i, f in enumerate(forms))
    text = rsp.policy_kernel([]).replace("    ret;", body + "\n    ret;")
    out = np.zeros(len(forms), np.uint64)
    m = pa.Machine()
    ptx.Kernel(text).launch(m, block=(1, 1, 1), params={"pg": m.register(np.zeros(64, np.uint8)),
                                                         "pout": m.register(out)})
    bad = [(f["ptx"], hex(int(o)), hex(f["value"])) for f, o in zip(forms, out) if int(o) != f["value"]]
    assert not bad, bad[:5]


def test_the_known_fraction_is_still_missed():
    f = [f for f in json.load(open(os.path.join(DATA, "isa", "createpolicy.json")))["forms"]
         if fraction_bits(f.get("f")) in KNOWN][0]
    text = rsp.policy_kernel([(f["ptx"], {})])
    out = np.zeros(1, np.uint64)
    m = pa.Machine()
    ptx.Kernel(text).launch(m, block=(1, 1, 1), params={"pg": m.register(np.zeros(64, np.uint8)),
                                                         "pout": m.register(out)})
    assert int(out[0]) != f["value"], "the rule now gives this fraction's bits: take it off KNOWN"


def test_range_policies_are_named_as_not_modelled():
    text = rsp.policy_kernel([("createpolicy.range.L2::evict_last.b64 %rd1, [%rd10+0], 4096, 8192;", {})])
    diags = ptx.check(text)
    assert [d.severity for d in diags] == ["warning"] and "not modelled yet" in diags[0].message
    with pytest.raises(ptx.PtxSyntaxError, match="not modelled yet: the range-based and .cvt policies' values"):
        ptx.Kernel(text)


HINTS = """.version 8.3
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    createpolicy.fractional.L2::evict_first.b64 %rd2, 0.5;
    ld.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;
    add.u32 %r1, %r1, 1;
    st.global.L2::cache_hint.u32 [%rd1+4], %r1, %rd2;
    applypriority.global.L2::evict_normal [%rd1], 128;
    discard.global.L2 [%rd1+128], 128;
    ret;
}
"""


def test_cache_hints_run_and_leave_the_bytes():
    buf = np.arange(64, dtype=np.uint32)
    m = pa.Machine()
    ptx.Kernel(HINTS).launch(m, block=(1, 1, 1), params={"p": m.register(buf)})
    want = np.arange(64, dtype=np.uint32)
    want[1] = 1                      # ld [0] (0) + 1, stored at [4]
    assert buf.tolist() == want.tolist()
