"""Lanes of one converged warp instruction are one operation of the hardware: where several of
them store to one shared (or global) word, one lane's value wins and nothing races (Triton's
reductions store so: `@%p st.shared.b32 [%r], %r`; compute-sanitizer's racecheck is silent there).
Another instruction, another warp, or lanes that went apart and run the store one by one are
checked as ever (csrc/core/check/proxy.c, pa_hb_instance)."""
import numpy as np

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
  .shared .align 4 .b32 buf[4];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, buf;
{body}
  ret;
}}
"""


def run(body, block=32):
    m = pa.Machine(smem_bytes=64, hazards="report")
    out = np.zeros(4, np.uint32)
    g = m.register(out)
    ptx.Kernel(kernel(body)).launch(m, grid=(1, 1, 1), block=(block, 1, 1), params={"out": g.address})
    return m, out


def races(m):
    return [r for r in m.races if r.rule == "data-race"]


def test_lanes_of_one_store_to_one_word_do_not_race():
    # every lane stores its id to buf[0] in one instruction; then thread 0 reads it after bar.sync
    m, out = run("""
  st.shared.b32 [%r2], %r1;
  bar.sync 0;
  ld.shared.b32 %r3, [%r2];
  ld.param.u64 %rd1, [out];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 st.global.b32 [%rd1], %r3;""")
    assert races(m) == [] and m.hazards == []
    assert out[0] == 31                      # the interpreter's lanes run in order: the last lane's value


def test_guarded_lanes_of_one_store_and_one_global_store_do_not_race():
    m, out = run("""
  and.b32 %r4, %r1, 1;
  setp.eq.u32 %p1, %r4, 0;
  @%p1 st.shared.b32 [%r2], %r1;
  ld.param.u64 %rd1, [out];
  @%p1 st.global.b32 [%rd1], %r1;""")
    assert races(m) == [] and m.hazards == []
    assert out[0] == 30


def test_two_instructions_storing_one_word_race():
    m, _ = run("""
  setp.eq.u32 %p1, %r1, 0;
  setp.eq.u32 %p2, %r1, 1;
  @%p1 st.shared.b32 [%r2], %r1;
  @%p2 st.shared.b32 [%r2], %r1;""")
    r = races(m)
    assert r and {r[0].first["thread"], r[0].second["thread"]} == {0, 1}


def test_lanes_that_went_apart_race_at_one_store():
    # half the warp branches past an add: the lanes run on their own until they meet again at a
    # warp collective, so the store below is one instruction run by each lane separately
    m, _ = run("""
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra SKIP;
  add.u32 %r5, %r1, 1;
SKIP:
  st.shared.b32 [%r2], %r1;""")
    assert races(m)


def test_two_warps_storing_one_word_race():
    m, _ = run("""
  st.shared.b32 [%r2], %r1;""", block=64)
    r = races(m)
    assert r and r[0].first["thread"] // 32 != r[0].second["thread"] // 32


def test_a_read_after_the_converged_store_by_another_instruction_races_without_a_barrier():
    # the store's lanes are one operation; a later load of another lane is not ordered after them
    m, _ = run("""
  st.shared.b32 [%r2], %r1;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 ld.shared.b32 %r3, [%r2];""")
    assert races(m)
