"""mma.sp, mma.sp::ordered_metadata and wgmma.mma_async.sp through ptx.Kernel against an H200.

tests/data/isa/sparse_forms.npz (tools/device/sparse_record.py, README there) holds what an H200
(driver 580.159.04) gave for 13 mma.sp forms and 8 wgmma.mma_async.sp cases. PTX ISA 9.7.14.6
("Matrix multiply-accumulate operation using mma.sp instruction with sparse matrix A") and
9.7.15.6 (wgmma.mma_async.sp): A holds the K/2 non-zero elements of each row (2 of every 4; tf32
1 of 2; s4 / u4 two 2-wide pairs of 8), the metadata operand names their positions, the sparsity
selector names the threads of each group of four that hold it, and the product is the dense one
with zeros in the other positions. The metadata layout (the ISA's figures) is read off the
recorded probes here by a decoder that does not use the model; the outputs are compared bit for bit.
"""
import json
import os
import sys

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import ptx
from testpaths import DATA, REPO

sys.path.insert(0, os.path.join(REPO, "tools", "device"))
import mma_record as R  # noqa: E402
import sparse_record as S  # noqa: E402

Z = np.load(os.path.join(DATA, "isa", "sparse_forms.npz"))
META = json.loads(str(Z["meta"]))
CASES = [(i, v) for i in range(len(S.FORMS)) for v in S.variants(i)]


def test_recorder_forms_are_the_recorded_ones():
    assert [list(f) for f in META["forms"]] == [list(f) for f in S.FORMS]
    assert [list(c) for c in META["wg_cases"]] == [list(c) for c in S.WG_CASES]


@pytest.mark.parametrize("i,variant", CASES, ids=["%s-%d-%s" % (S.FORMS[i][0], S.FORMS[i][1], v) for i, v in CASES])
def test_mma_sp_recorded(i, variant):
    got = S.run_mma(R.Model(), i, variant)
    for k, o in enumerate(got):
        want = Z["mma%d_%s_out%d" % (i, variant, k)]
        assert (o == want).all(), "%s %s register %d: %d of %d lanes differ" % (
            S.FORMS[i][0], variant, k, int((o != want).sum()), o.size)


@pytest.mark.parametrize("ci", range(len(S.WG_CASES)), ids=[S.wg_instr(c) + str(c[3:]) for c in S.WG_CASES])
def test_wgmma_sp_recorded(ci):
    got = S.run_wgmma(R.Model(), ci)
    keep = META["kept_ctas"]
    assert (got[:keep] == Z["wg%d" % ci]).all()
    for c in range(len(got)):
        assert (S.digest(got[c]) == Z["wg%d_digest" % ci][c]).all(), "CTA %d differs" % c


# ---- the metadata layout, read off the recording alone --------------------------------------

def _probe_d(i, variant):
    """D[warp][16][8] of a probe (small integers, exact in every accumulator type)."""
    instr = S.FORMS[i][0]
    d = S.types(instr)[0]
    regs = [Z["mma%d_%s_out%d" % (i, variant, k)].astype(np.uint64) for k in range(S.regs(instr)[0])]
    D = np.zeros((len(regs[0]) // 32, 16, 8), np.int64)
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        for e in range(4):
            r = regs[e // 2] >> np.uint64(16 * (e & 1)) & np.uint64(0xFFFF) if d == "f16" else regs[e]
            x = r[lane::32]
            v = (x.astype(np.uint16).view(np.float16) if d == "f16" else
                 x.astype(np.uint32).view(np.float32) if d == "f32" else x.astype(np.uint32).view(np.int32))
            D[:, g + 8 * (e >> 1), 2 * t + (e & 1)] = v.astype(np.int64)
    return D


def _isa_lane_nibble(a, k, sel, row, ch):
    """The lane of the group and the 4-bit field holding chunk ch of row `row` (PTX ISA 9.7.14.6.2,
    Figures 119-139 as the recording reads them)."""
    per = S.chunk(a)[0]
    nch = k // per
    if a in ("f16", "bf16", "tf32"):
        return sel * (nch // 4) + ch // 4, 4 * (row >= 8) + ch % 4
    return 2 * sel + 2 * (ch // 8) + (row >= 8), ch % 8


PROBES = [(i, v) for i, v in CASES if v != "rand"]


@pytest.mark.parametrize("i,variant", PROBES, ids=["%s-%s" % (S.FORMS[i][0], v) for i, v in PROBES])
def test_probe_reads_the_metadata_where_the_isa_puts_it(i, variant):
    # D[r][n] = 4^p0 + 2 * 4^p1: the positions the H200 took for chunk c0 + n of row r; the
    # metadata field that names them must be the one the layout rule points at
    instr, sel = S.FORMS[i]
    a = S.types(instr)[1]
    m, n, k = S.shape(instr)
    c0 = int(variant[5:])
    E = S.mma_case(i, "probe", c0)[2][-1].astype(np.int64).reshape(-1, 32)
    D = _probe_d(i, variant)
    per = S.chunk(a)[0]
    for row in range(16):
        for col in range(8):
            ch = c0 + col
            if ch >= k // per:
                continue
            j, nib = _isa_lane_nibble(a, k, sel, row, ch)
            v = E[:, 4 * (row % 8) + j] >> (4 * nib) & 15
            want = np.where(v == 0xE, 4, 1) if a == "tf32" else 4 ** (v & 3) + 2 * 4 ** (v >> 2)
            assert (D[:, row, col] == want).all(), (instr, row, ch)


# ---- what the ISA leaves undefined ------------------------------------------------------------

def _one_warp(instr, sel, meta, lane=None):
    """A one-warp kernel running instr with every lane's metadata `meta` (or only `lane`'s)."""
    nd, na, nb, nc = S.regs(instr)
    vec = lambda s, c: "{" + ",".join("%%r%d" % (s + x) for x in range(c)) + "}"
    pick = "" if lane is None else "setp.eq.u32 %%p0, %%r99, %d; @!%%p0 mov.b32 %%r98, 0x44444444;" % lane
    body = ["mov.u32 %r99, %tid.x;"] + ["mov.b32 %%r%d, 0;" % j for j in range(40)] + \
           ["mov.b32 %%r98, %d;" % meta, pick,
            "%s %s, %s, %s, %s, %%r98, %d;" % (instr, vec(0, nd), vec(10, na), vec(20, nb), vec(30, nc), sel)]
    lines = [".version 8.7", ".target sm_90a", ".address_size 64", ".visible .entry k()", "{",
             ".reg .pred %p<2>; .reg .b32 %r<100>;"] + body + ["ret;", "}"]
    return "\n".join(lines) + "\n", len(lines) - 2


def test_equal_indices_are_an_error_naming_the_line():
    # "Values 0b0000, 0b0101, 0b1010, 0b1111 are invalid values for metadata and will result in
    # undefined behavior" (PTX ISA 9.7.14.6.1)
    text, line = _one_warp("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 0, 0x44444445)
    with pytest.raises(pa.IllegalInstruction, match=r"equal.*PTX line %d" % line):
        ptx.Kernel(text).launch(pa.Machine(), grid=1, block=32)


def test_ordered_metadata_takes_increasing_indices():
    # ::ordered_metadata: 0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110 are the meaningful values
    instr = "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    ptx.Kernel(_one_warp(instr, 0, 0xEDC98E44)[0]).launch(pa.Machine(), grid=1, block=32)
    text, line = _one_warp(instr, 0, 0x44444441)
    with pytest.raises(pa.IllegalInstruction, match=r"increasing order.*PTX line %d" % line):
        ptx.Kernel(text).launch(pa.Machine(), grid=1, block=32)
    # plain mma.sp takes either order (only equal indices are invalid)
    ptx.Kernel(_one_warp(instr.replace("::ordered_metadata", ""), 0, 0x44444441)[0]).launch(
        pa.Machine(), grid=1, block=32)


def test_tf32_indices():
    # tf32: "0b1110 and 0b0100 are the only meaningful index values"
    instr = "mma.sp.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    ptx.Kernel(_one_warp(instr, 1, 0xE4E4E4E4)[0]).launch(pa.Machine(), grid=1, block=32)
    with pytest.raises(pa.IllegalInstruction, match="tf32 index"):
        ptx.Kernel(_one_warp(instr, 1, 0x44444448)[0]).launch(pa.Machine(), grid=1, block=32)


def test_only_the_selected_lanes_metadata_is_read():
    # selector 2: lane 2 of each group holds it; invalid bits in the other lanes are not read
    instr = "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    ptx.Kernel(_one_warp(instr, 2, 0, lane=1)[0]).launch(pa.Machine(), grid=1, block=32)
    with pytest.raises(pa.IllegalInstruction, match="lane 2's metadata"):
        ptx.Kernel(_one_warp(instr, 2, 0, lane=2)[0]).launch(pa.Machine(), grid=1, block=32)


@pytest.mark.parametrize("instr,sel", [("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", 2),
                                       ("mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32", 1),
                                       ("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4)])
def test_a_selector_out_of_range_is_refused_naming_the_line(instr, sel):
    # m16n8k32 16-bit: "the sparsity selector must be either 0 (threads T0, T1) or 1 (threads T2,
    # T3)"; m16n8k64 8-bit: "must be 0"; m16n8k16: a value in {0, 1, 2, 3}
    text, line = _one_warp(instr, sel, 0x44444444)
    with pytest.raises(ptx.PtxSyntaxError, match=r"%d:.*sparsity selector %d" % (line, sel)):
        ptx.Kernel(text)


def test_sparse_forms_are_no_longer_named_not_modelled():
    text, _ = _one_warp("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 0, 0x44444444)
    assert not [d for d in ptx.check(text) if "not modelled" in d.message]


# ---- the checker against ptxas 13.0 on the sparse operands ------------------------------------

_V4 = "{%r0,%r1,%r2,%r3}"
_V2 = "{%r0,%r1}"
_SP16 = "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 %s, %s, %s, %s, " % (_V4, _V2, _V2, _V4)
VERDICTS = [   # (instruction, ptxas 13.0 assembles it); the refusals' messages in the comments
    (_SP16 + "%r8, 1;", True),
    (_SP16 + "0x44444444, 1;", False),      # "Arguments mismatch for instruction 'mma'"
    (_SP16 + "%r8, %r9;", False),           # the same
    ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 %s, %%rd3, %%rd3, %%r8, 1, %%p1, 1, 1, 0, 0;" % _V4, True),
    # "Argument 4 of instruction 'Sparse wgmma.mma_async with floating point types': unexpected value '2',
    # expected to be 0 or 1"
    ("wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 %s, %%rd3, %%rd3, %%r8, 2, %%p1, 1, 1, 0, 0;" % _V4, False),
    # "... with FP8 types': unexpected value '1', expected to be 0"
    ("wgmma.mma_async.sp.sync.aligned.m64n8k64.f32.e4m3.e4m3 %s, %%rd3, %%rd3, %%r8, 1, %%p1, 1, 1;" % _V4, False),
    ("wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.u8.s8 %s, %%rd3, %%rd3, 0x44444444, 0, %%p1;" % _V4, False),
    ("wgmma.mma_async.sp.sync.m64n80k64.satfinite.s32.u8.s8 %r8, %rd3, %rd3, %r8, 0, %p1;", False),  # "Vector expected"
]


def _module(ins):
    return "\n".join([".version 8.7", ".target sm_90a", ".address_size 64", ".visible .entry k()", "{",
                      ".reg .b32 %r<10>; .reg .b64 %rd<4>; .reg .pred %p<2>;", ins, "ret;", "}"]) + "\n"


@pytest.mark.parametrize("ins,ok", VERDICTS, ids=[v[0].split()[0] + str(i) for i, v in enumerate(VERDICTS)])
def test_check_agrees_with_ptxas_on_the_sparse_operands(ins, ok):
    import ptx_forms as pf
    text = _module(ins)
    assert (not any(d.severity == "error" for d in ptx.check(text))) == ok
    if pf.ptxas_path() is not None:
        assert pf.ptxas_accepts(text, "sm_90a")[0] == ok
