"""%globaltimer, %globaltimer_lo / _hi, %clock and %clock64 (PTX ISA, special registers: a
64-bit nanosecond timer and its halves, 32- and 64-bit cycle counters), read by mov as ptxas 13.0
takes it. A timer has no value to match bit for bit; the model's is the launch's instructions so
far plus the timer reads before it (docs/ptx.md), so each read is later than the last: Triton's
`tl.atomic_poll(..., timeout_ns=...)` loop (test_atomic_poll_timeout) ends."""
import numpy as np

import ptxasync as pa
from ptxasync import ptx

HEAD = ".version 8.6\n.target sm_90a\n.address_size 64\n"


def kernel(body):
    return HEAD + f""".visible .entry k(.param .u64 p)
{{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  ld.param.b64 %rd1, [p];
{body}
  ret;
}}
"""


def run(body, n=8, threads=1):
    m = pa.Machine()
    a = np.zeros(n, np.uint64)
    ptx.Kernel(kernel(body)).launch(m, grid=(1, 1, 1), block=(threads, 1, 1), params={"p": m.register(a).address})
    return a


READS = """  mov.u64 %rd2, %globaltimer;
  mov.u32 %r1, %globaltimer_lo;
  mov.u32 %r2, %globaltimer_hi;
  mov.u32 %r3, %clock;
  mov.u64 %rd3, %clock64;
  mov.u64 %rd4, %globaltimer;
  cvt.u64.u32 %rd5, %r1;
  cvt.u64.u32 %rd6, %r3;
  st.global.b64 [%rd1], %rd2;
  st.global.b64 [%rd1+8], %rd5;
  st.global.b64 [%rd1+16], %rd6;
  st.global.b64 [%rd1+24], %rd3;
  st.global.b64 [%rd1+32], %rd4;
  cvt.u64.u32 %rd7, %r2;
  st.global.b64 [%rd1+40], %rd7;"""


def test_ptxas_s_timer_reads_are_taken():
    assert ptx.check(kernel(READS)) == []


def test_each_read_is_later_than_the_last():
    a = run(READS)
    gt, lo, clk, clk64, gt2, hi = (int(v) for v in a[:6])
    assert gt < lo < clk < clk64 < gt2      # program order: strictly increasing
    assert hi == 0                          # a small launch: the high half of a count under 2^32


def test_a_poll_with_a_timeout_ends():
    # wait until 1000 ticks have passed since the first read, counting the polls
    a = run("""  mov.u64 %rd2, %globaltimer;
  mov.u64 %rd5, 0;
LOOP:
  add.u64 %rd5, %rd5, 1;
  mov.u64 %rd3, %globaltimer;
  sub.u64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p1, %rd4, 1000;
  @%p1 bra LOOP;
  st.global.b64 [%rd1], %rd5;
  st.global.b64 [%rd1+8], %rd4;""")
    assert a[0] > 1 and a[1] >= 1000
