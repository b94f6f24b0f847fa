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


spec = importlib.util.spec_from_file_location("record_policy_forms",
                                              os.path.join(REPO, "tools", "device", "record_policy_forms.py"))
rpf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rpf)
FORMS = os.path.join(DATA, "isa", "createpolicy_forms.npz")


def test_createpolicy_fractional_values_are_the_h200s():
    # every immediate form recorded (all four primaries x three secondaries x 14 fractions, and the
    # sweep of f32 fractions around each sixteenth), each in its own kernel on the H200
    forms = [f for f in json.load(open(os.path.join(DATA, "isa", "createpolicy.json")))["forms"]
             if not f.get("range")]
    assert len(forms) == 614
    body = "\n".join(f"    {f['ptx']}\n    st.global.u64 [%rd11+{8 * i}], %rd1;" for i, f in enumerate(forms))
    text = rsp.policy_kernel([]).replace("    ret;", body + "\n    ret;")
    out = np.zeros(len(forms), np.uint64)
    m = pa.Machine()
    ptx.Kernel(text).launch(m, block=(1, 1, 1), params={"pg": m.register(np.zeros(64, np.uint8)),
                                                         "pout": m.register(out)})
    bad = [(f["ptx"], hex(int(o)), hex(f["value"])) for f, o in zip(forms, out) if int(o) != f["value"]]
    assert not bad, bad[:5]


def run_forms(text, inputs, nout):
    """A record_policy_forms.py kernel on the model: 256 threads over the input rows."""
    out = np.zeros((len(inputs), nout), np.uint64)
    m = pa.Machine()
    ptx.Kernel(text).launch(m, block=(rpf.THREADS, 1, 1),
                            params={"pin": m.register(np.ascontiguousarray(inputs)), "pout": m.register(out),
                                    "n": len(inputs)})
    return out


def test_a_fraction_in_a_register_gives_the_h200s_value():
    # .f32 and .b32 registers under four priority pairs, the fractions the H200 took in (0, 1]
    rec = np.load(FORMS)
    fin, fout = rec["fraction_in"], rec["fraction_out"]
    x = fin.view(np.float32)
    keep = (x > 0) & (x <= 1)
    assert keep.sum() > 3800
    got = run_forms(rpf.fraction_kernel(), fin[keep], len(rpf.PAIRS) + 1)
    bad = np.nonzero((got != fout[keep]).any(axis=1))[0]
    assert not len(bad), [(hex(int(fin[keep][i])), hex(int(got[i, 0])), hex(int(fout[keep][i, 0]))) for i in bad[:5]]


def test_the_fraction_field_at_each_threshold_is_the_h200s():
    # bits 52-55 for 1024 f32 values about each recorded threshold and one in 16384 of [2^-20, 1]
    rec = np.load(FORMS)
    fin, field = rec["sweep_in"], rec["sweep_field"]
    assert len(fin) > 20000
    got = run_forms(rpf.fraction_kernel(), fin, len(rpf.PAIRS) + 1)[:, 0]
    got = ((got >> np.uint64(52)) & np.uint64(15)).astype(np.uint8)
    bad = np.nonzero(got != field)[0]
    assert not len(bad), [(hex(int(fin[i])), int(got[i]), int(field[i])) for i in bad[:5]]


@pytest.mark.parametrize("bits", [0x00000000, 0x80000000, 0xBF000000, 0x3F800001, 0x40000000, 0x7F800000,
                                  0x7FC00000])
def test_a_register_fraction_outside_the_isas_range_is_an_error(bits):
    # "The valid range of values for the operand fraction is (0.0,.., 1.0]" (PTX ISA, createpolicy)
    with pytest.raises(pa.InvalidValue, match=r"createpolicy.fractional: the fraction in a register.*"
                                               r"not in \(0.0, 1.0\]"):
        run_forms(rpf.fraction_kernel(), np.array([bits], np.uint32), len(rpf.PAIRS) + 1)


def test_cvt_returns_the_access_property_as_the_h200_does():
    # createpolicy.cvt.L2 of 6039 words (libcu++'s interleave constants, createpolicy values, single
    # bits, every top byte, random words): the H200 returned each unchanged
    rec = np.load(FORMS)
    cin, cout = rec["cvt_in"], rec["cvt_out"]
    assert len(cin) > 6000
    got = run_forms(rpf.cvt_kernel(), cin, 1)[:, 0]
    assert np.array_equal(got, cout)


def test_cvt_of_an_immediate_runs():
    text = rsp.policy_kernel([("createpolicy.cvt.L2.b64 %rd1, 0x12F0000000000000;", {})])
    out = np.zeros(1, np.uint64)
    m = pa.Machine()
    ptx.Kernel(text).launch(m, block=(1, 1, 1), params={"pg": m.register(np.zeros(64, np.uint8)),
                                                         "pout": m.register(out)})
    assert int(out[0]) == 0x12F0000000000000     # libcu++'s streaming property, unchanged on the H200


def test_range_policies_are_named_as_not_modelled():
    text = rsp.policy_kernel([("createpolicy.range.L2::evict_last.b64 %rd1, [%rd10+0], 4096, 8192;", {})])
    diags = ptx.check(text)
    assert [d.severity for d in diags] == ["warning"] and "not modelled yet" in diags[0].message
    with pytest.raises(ptx.PtxSyntaxError, match="not modelled yet: the range-based policy's value"):
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
