"""A kernel around a few PTX lines, for tests of one instruction per thread: thread t loads
`words` 32-bit words from pin + 4 * words * t into %r2, %r3, ..., has its thread index in %r9
and %r1 preset to `init`, runs the lines, and stores %r1 to pout + 4 * t. Predicates %p0-%p3,
32-bit registers %r0-%r15 and 64-bit %rd0-%rd7 are declared (%rd1-%rd3 hold the addresses)."""
import numpy as np

import ptxasync as pa
from ptxasync import ptx

HEAD = """.version {version}
.target {target}
.address_size 64
"""
BODY = """.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    mov.u32 %r9, %tid.x;
    mul.wide.u32 %rd3, %r9, {stride};
    ld.param.u64 %rd1, [pin];
    add.s64 %rd1, %rd1, %rd3;
    ld.param.u64 %rd2, [pout];
    mul.wide.u32 %rd3, %r9, 4;
    add.s64 %rd2, %rd2, %rd3;
{loads}    mov.b32 %r1, {init};
LINES
    st.global.b32 [%rd2], %r1;
    ret;
}}
"""


def lane_kernel(lines, words=3, init=0, version="8.0", target="sm_90a", before=""):
    """The module's text; `before` goes between the header and the kernel (functions, variables)."""
    loads = "".join("    ld.global.b32 %%r%d, [%%rd1+%d];\n" % (2 + i, 4 * i) for i in range(words))
    body = BODY.format(stride=4 * words, loads=loads, init=init)
    return HEAD.format(version=version, target=target) + before + body.replace("LINES", lines)


def run_lanes(text, inputs, block, severities=("error",), **machine):
    """Check `text` (no diagnostic of those severities), run it on one CTA of `block` threads with
    `inputs` (block x words 32-bit values) on a Machine(**machine) and return %r1 of every thread
    as a list of ints."""
    bad = [d for d in ptx.check(text) if d.severity in severities]
    assert not bad, bad
    out = np.zeros(block, np.uint32)
    m = pa.Machine(**machine)
    ptx.Kernel(text).launch(m, grid=1, block=block,
                            params={"pin": m.register(np.asarray(inputs, np.uint32).reshape(-1).copy()),
                                    "pout": m.register(out)})
    return [int(v) for v in out]
