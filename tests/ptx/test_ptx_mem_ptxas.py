"""Property: for the loads, stores, cache hints and address queries of the data-movement chapter
(ld, ld.global.nc, ldu, st, multimem.*, prefetch{u}, applypriority, discard, createpolicy,
isspacep, cvta, mapa, getctarank), forms generated from the instruction table (valid ones, a
qualifier dropped, swapped or reordered, an operand of the wrong width or kind, on sm_80 to
sm_100a at PTX 7.4 to 9.0) get each installed ptxas's verdict (13.0, 13.5) from
ptxasync.ptx.check. Skips where that ptxas is not installed; a ptxas crash (a signal, an internal
error) is no verdict and is passed over."""
import random

import pytest

from ptxasync import ptx

import ptx_forms as pf

FORMS = pf.mem_forms()
N = 240          # cases a run; docs/loads-stores.md gives the agreement over larger runs


def cases(seed=2024, n=N):
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        f = rnd.choice(FORMS)
        out.append((pf.mem_instance(f, rnd, mutate=rnd.random() < 0.5), rnd.choice(pf.MEM_TARGETS),
                    rnd.choice(pf.MEM_VERSIONS)))
    return out


@pytest.mark.parametrize("release,path", pf.judges())
def test_verdicts_match_ptxas(release, path):
    wrong = []
    for form, target, version in cases():
        text = pf.mem_module(form, target, version)
        v = pf.ptxas_verdict(text, target, path)
        if v.crash:
            continue
        ours = not any(d.severity == "error" for d in ptx.check(text, ptxas=release))
        if ours != v.accepted:
            wrong.append((form, target, version, v.message.strip()[:160]))
    assert not wrong, "ptxas %s: %d of %d disagree:\n%s" % (release, len(wrong), N, "\n".join(map(str, wrong[:12])))


@pytest.mark.parametrize("line,ok", [
    ("ld.global.nc.u32 %r3, [%rd1];", True),
    ("ld.global.u32 %rd3, [%rd1];", True),            # a wider destination register
    ("ld.global.u32 %rs3, [%rd1];", False),           # a narrower one
    ("ld.global.u32 %f3, [%rd1];", False),            # a float register for .u32
    ("ld.global.f32 %rd3, [%rd1];", True),            # a wider bit register for .f32
    ("ld.global.u32 %r3, [%rd1+-8];", True),
    ("ld.global.u32 %r3, gbuf[4];", True),
    ("ld.global.u32 %r3, [16];", False),              # immediate addresses: .local only
    ("ld.local.u32 %r3, [16];", True),
    ("ld.global.u32 %r3, [%r1];", False),             # 32-bit address under .address_size 64
    ("ld.u32 %r3, [cbuf];", False),                   # generic address of a .const variable
    ("st.global.u32 [%rd1], 2.5;", False),
    ("st.global.f32 [%rd1], -2.5;", True),
    ("ldu.global.v4.u32 {%r3, %r4, %r5, %r6}, [%rd1];", True),
    ("ld.global.L1::evict_last.L2::evict_last.u32 %r3, [%rd1];", False),
    ("ld.volatile.const.u32 %r3, [cbuf];", False),
    ("multimem.ld_reduce.add.s64 %rd3, [%rd1];", False),
    ("multimem.st.relaxed.b32 [%rd1], %r3;", False),   # .relaxed needs a scope
    ("createpolicy.fractional.L2::evict_last.b64 %rd3, 1.5;", False),
    ("createpolicy.fractional.L2::evict_last.b64 %rd3, %f1;", True),
    ("createpolicy.fractional.L2::evict_last.b64 %rd3, %r3;", True),
    ("createpolicy.fractional.L2::evict_last.b64 %rd3, %rd1;", False),   # a 64-bit fraction register
    ("createpolicy.fractional.L2::evict_last.b64 %rd3, %rs1;", False),
    ("createpolicy.cvt.L2.b64 %rd3, 5;", True),
    ("createpolicy.cvt.L2.b64 %rd3, %r3;", False),                      # a 32-bit access property
    ("applypriority.global.L2::evict_normal [%rd1], 64;", False),
    ("cvta.shared.u32 %r3, smem;", False),
    ("mapa.u64 %rd3, gbuf, %r8;", False),
    ("getctarank.u64 %r3, %rd1;", True),
    ("isspacep.shared::cluster %p1, %rd1;", True),
])
def test_recorded_verdicts(line, ok):
    # ptxas 13.0's verdicts on sm_90a, PTX 9.0 (docs/loads-stores.md): held without ptxas too
    text = pf.mem_module(line, "sm_90a", "9.0")
    assert (not any(d.severity == "error" for d in ptx.check(text, ptxas="13.0"))) == ok, line
