"""Same-value write/write races (Machine(same_value_stores=...), csrc/core/check/proxy.c).

Two plain stores to the same bytes by threads that nothing orders are a data race of the PTX
memory model (PTX ISA, "Memory Consistency Model": conflicting operations, neither morally
strong, not ordered by causality order), whatever they write. Triton stores a value replicated
across threads so: threads t and t + 128 both store element t when a tensor has fewer elements
than the CTA has threads. With the same bytes the location ends holding them whichever store
lands last, so the checker can report such a pair as its own, lower class ("record") or not at
all ("accept"); a pair whose bytes differ stays a data-race in every mode."""
import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx

HEAD = ".version 8.6\n.target sm_90a\n.address_size 64\n"


def kernel(body):
    return HEAD + f"""
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<4>;
  .shared .align 16 .b32 buf[8];
  mov.u32 %r1, %tid.x;
  shr.u32 %r5, %r1, 5;
  mov.u32 %r2, buf;
  ld.param.u64 %rd1, [out];
{body}
  ret;
}}
"""


def run(body, mode, hazards="report", block=64):
    m = pa.Machine(smem_bytes=64, hazards=hazards, same_value_stores=mode)
    out = np.zeros(8, np.uint32)
    g = m.register(out)
    ptx.Kernel(kernel(body)).launch(m, grid=(1, 1, 1), block=(block, 1, 1), params={"out": g.address})
    return m, out


def rules(m):
    return sorted(r.rule for r in m.races)


# warps 0 and 1 (threads 0..31 and 32..63: two instructions of the hardware) store to word 0
SAME_GLOBAL = "  mov.u32 %r3, 7;\n  st.global.b32 [%rd1], %r3;"
DIFF_GLOBAL = "  st.global.b32 [%rd1], %r5;"            # warp 0 stores 0, warp 1 stores 1
SAME_SHARED = "  mov.u32 %r3, 7;\n  st.shared.b32 [%r2], %r3;"
DIFF_SHARED = "  st.shared.b32 [%r2], %r5;"


@pytest.mark.parametrize("body", [SAME_GLOBAL, SAME_SHARED])
def test_same_value_stores_are_a_data_race_by_default(body):
    m, _ = run(body, "race")
    assert rules(m) == ["data-race"]
    with pytest.raises(pa.Hazard, match=r"\[data-race\]"):
        run(body, "race", hazards="raise")


@pytest.mark.parametrize("body", [SAME_GLOBAL, SAME_SHARED])
def test_same_value_stores_recorded_as_their_own_class(body):
    m, out = run(body, "record", hazards="raise")          # recorded, never raised
    assert rules(m) == ["same-value-store"] and m.hazards == []
    r = m.races[0]
    assert {r.first["thread"] // 32, r.second["thread"] // 32} == {0, 1} and r.first["write"] and r.second["write"]
    if "global" in body:
        assert out[0] == 7


@pytest.mark.parametrize("body", [SAME_GLOBAL, SAME_SHARED])
def test_same_value_stores_accepted(body):
    m, _ = run(body, "accept", hazards="raise")
    assert m.races == [] and m.hazards == []


@pytest.mark.parametrize("mode", ["race", "record", "accept"])
@pytest.mark.parametrize("body", [DIFF_GLOBAL, DIFF_SHARED])
def test_different_values_race_in_every_mode(body, mode):
    m, _ = run(body, mode)
    assert rules(m) == ["data-race"]
    with pytest.raises(pa.Hazard, match=r"\[data-race\]"):
        run(body, mode, hazards="raise")


@pytest.mark.parametrize("mode", ["record", "accept"])
def test_overlap_compared_byte_by_byte(mode):
    # warp 0 stores the word 0x07070707, warp 1 the byte 0x07 at offset 2 (the same byte value)
    # and then, in a second run, 0x08 there: only the bytes both write are compared
    same = "  mov.u32 %r3, 0x07070707;\n  mov.u16 %rs1, 7;\n" \
           "  setp.eq.u32 %p1, %r5, 0;\n  @%p1 st.global.b32 [%rd1], %r3;\n  @!%p1 st.global.b8 [%rd1+2], %rs1;"
    m, _ = run(same.replace("  mov.u32 %r3", "  .reg .b16 %rs<2>;\n  mov.u32 %r3"), mode)
    assert rules(m) == ([] if mode == "accept" else ["same-value-store"])
    m, _ = run(same.replace("mov.u16 %rs1, 7", "mov.u16 %rs1, 8")
               .replace("  mov.u32 %r3", "  .reg .b16 %rs<2>;\n  mov.u32 %r3"), mode)
    assert rules(m) == ["data-race"]


def test_a_differing_race_is_said_before_a_same_value_one():
    # one v2 store of warp 1 meets warp 0's same-value word 0 and its different word 1: the
    # access is reported once, as the data race
    body = """  mov.u32 %r3, 7;
  setp.eq.u32 %p1, %r5, 0;
  @%p1 st.global.v2.b32 [%rd1], {%r3, %r5};
  @!%p1 st.global.v2.b32 [%rd1], {%r3, %r5};"""
    m, _ = run(body, "record")
    assert rules(m) == ["data-race"]


def test_atomics_and_reads_are_judged_as_ever():
    # a plain store of 0 by warp 1 against warp 0's atom.add that left 0 + 0 = 0: not two plain
    # stores, so a data race whatever the bytes
    body = """  mov.u32 %r3, 0;
  setp.eq.u32 %p1, %r5, 0;
  @%p1 atom.global.add.u32 %r4, [%rd1], %r3;
  @!%p1 st.global.b32 [%rd1], %r3;"""
    m, _ = run(body, "accept")
    assert rules(m) == ["data-race"]
    # a read by warp 1 of what warp 0 stored: a read, not a store
    body = """  mov.u32 %r3, 7;
  setp.eq.u32 %p1, %r5, 0;
  @%p1 st.global.b32 [%rd1], %r3;
  @!%p1 ld.global.b32 %r4, [%rd1];"""
    m, _ = run(body, "accept")
    assert rules(m) == ["data-race"]


def test_the_mode_is_checked_and_survives_turning_the_checker_off_and_on():
    m = pa.Machine(same_value_stores="record")
    assert m.same_value_stores == "record"
    m.race_checks = False
    m.race_checks = True
    assert m.same_value_stores == "record"
    with pytest.raises(ValueError, match="same_value_stores must be one of"):
        pa.Machine(same_value_stores="ignore")
    assert pa.Machine().same_value_stores == "race"
