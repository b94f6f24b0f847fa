"""discard.global.L2 [a], 128 (PTX ISA, discard): "Semantically, this behaves like a weak write of an
unstable indeterminate value: reads of memory locations with unstable indeterminate values may
return different bit patterns each time until the memory is overwritten", and "a must be aligned to
128 bytes". With the memory checks on (checks=True, the adversarial policy) a read of a discarded
byte before a write is the hazard discard-read, naming the discard's line; under the adversarial
policy the line holds poison (0xEFBEADDE words, as a pending destination does)."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

HEAD = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [p];
"""


def run(body, policy="in_order", checks=False, hazards="raise", data=None):
    buf = np.arange(64, dtype=np.uint32) if data is None else data
    m = pa.Machine(policy=policy, checks=checks, hazards=hazards)
    ptx.Kernel(HEAD + body + "    ret;\n}\n").launch(m, block=(1, 1, 1), params={"p": m.register(buf)})
    return m, buf


def test_a_read_of_a_discarded_byte_is_a_hazard_naming_the_discard():
    body = """    discard.global.L2 [%rd1], 128;
    ld.global.u32 %r1, [%rd1+4];
"""
    with pytest.raises(pa.Hazard, match=r"\[discard-read\].*discard.global.L2 at PTX line 9") as e:
        run(body, checks=True)
    assert "PTX line 10" in str(e.value)          # the read's line, from the launch


def test_a_write_defines_the_bytes_it_writes():
    body = """    discard.global.L2 [%rd1+128], 128;
    st.global.u32 [%rd1+132], 7;
    ld.global.u32 %r1, [%rd1+132];
    st.global.u32 [%rd1], %r1;
    ld.global.u32 %r2, [%rd1+136];
"""
    with pytest.raises(pa.Hazard, match=r"discard-read.*byte 0x[0-9a-f]*88,"):   # +136: never written
        run(body, checks=True)
    m, buf = run(body.replace("    ld.global.u32 %r2, [%rd1+136];\n", ""), checks=True)
    assert buf[0] == 7 and buf[33] == 7


def test_the_adversarial_policy_fills_the_line_with_poison():
    m, buf = run("    discard.global.L2 [%rd1+128], 128;\n", policy="adversarial")
    assert buf[:32].tolist() == list(range(32))                  # the line before it kept
    assert buf[32:].tolist() == [0xEFBEADDE] * 32


def test_without_the_memory_checks_the_bytes_stay():
    # keeping the old bytes is one outcome the hardware may give
    m, buf = run("    discard.global.L2 [%rd1], 128;\n    ld.global.u32 %r1, [%rd1+4];\n"
                 "    st.global.u32 [%rd1+128], %r1;\n")
    assert buf[32] == 1 and buf[:32].tolist() == list(range(32))


def test_report_mode_records_the_read_and_goes_on():
    m, _ = run("    discard.global.L2 [%rd1], 128;\n    ld.global.u32 %r1, [%rd1];\n", checks=True,
               hazards="report")
    assert [h.rule for h in m.hazards] == ["discard-read"]


def test_an_atomic_reads_the_discarded_bytes_too():
    with pytest.raises(pa.Hazard, match="discard-read.*atom"):
        run("    discard.global.L2 [%rd1], 128;\n    atom.global.add.u32 %r1, [%rd1], 1;\n", checks=True)


def test_the_address_is_128_byte_aligned():
    with pytest.raises(pa.MisalignedAddress, match="aligned to 128 bytes"):
        run("    discard.global.L2 [%rd1+64], 128;\n")


@pytest.mark.parametrize("line,ok", [
    ("discard.global.L2 [%rd1], 128;", True),
    ("discard.L2 [%rd1], 128;", True),
    ("discard.global.L2 [%rd1], 64;", False),      # "The only supported value for the size operand is 128"
])
def test_the_checker_takes_what_ptxas_takes(line, ok):
    text = HEAD + "    " + line + "\n    ret;\n}\n"
    assert ptx.accepts(text, ptxas="13.0") == ok, ptx.check(text)
